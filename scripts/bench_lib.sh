# bench_lib.sh: what the benchmark drivers (scripts/bench.sh,
# scripts/bench-remap.sh, scripts/bench-anchors.sh) share.  Sourced by bash.
#
# Every run of a benchmark program becomes one line of a JSON-lines results
# file, written by this file alone:
#   {"bench":TAG,"asked":{...},"label":"...","seconds":S,"out":{...}}
# "asked" is what the driver asked for (the report checks the program's own
# line, "out", against it: iterations, grid), "out" is the program's last
# stdout line that is a JSON object, verbatim; "seconds" the run's wall time
# as the driver saw it, start-up included (informative only); "cpu_others"
# the CPU seconds that processes other than the run's own used meanwhile
# (all cores; null where /proc/stat cannot tell), because the machine is
# shared and a timing taken while someone else computed is not the code's.  A run that
# produced nothing has "failed" (the reason, and "stderr": its last stderr
# line) or "skipped" in place of "out".  The first line is the meta record
# (bl_meta), the last the end record (bl_end).
#
# The time budget is a hard limit: no run starts after BL_BUDGET seconds
# (counted from bl_clock_start), and no run's timeout reaches more than
# BL_GRACE seconds beyond it.
#
# Functions (the caller sets BL_BUDGET, BL_GRACE before running):
#   bl_init NAME              scratch directory, results file, traps
#   bl_need TOOL WHY          exit with a clear message when TOOL is missing
#   bl_clock_start            the budget counts from here
#   bl_elapsed                seconds since bl_clock_start
#   bl_left                   seconds of budget left (may be negative)
#   bl_meta SUITE SETTINGS    the meta record; SETTINGS: JSON object members
#   bl_run TAG ASKED LABEL TIMEOUT CMD...   one run, one record
#   bl_skip TAG ASKED LABEL REASON          a record for a run not made
#   bl_pair K TAG ASKED_A LABEL_A CMD_A ASKED_B LABEL_B CMD_B KEY
#                             one pair of paired runs (names of arrays)
#   bl_load ASKED LABEL       a record of the load average now (the machine
#                             is shared: a reader can see when it was busy)
#   bl_wait_quiet MAX         wait up to MAX seconds for other processes to
#                             leave the cores idle; prints the seconds waited
#   BL_LAST_OTHERS            the last run's cpu_others ("" when unknown)
#   bl_end                    the end record
#   bl_publish DEST           copy the results to DEST (atomically)
#   bl_json_list "a b" [q]    [a,b] (numbers) or ["a","b"] with q
#   bl_json_str S             S as a JSON string (quotes, backslashes and
#                             control characters dropped)
# ASKED is a list of JSON object members, e.g. '"n":500,"p":2'.

# shellcheck shell=bash

BL_NAME=bench
BL_BUDGET=${BL_BUDGET:-600}
BL_GRACE=${BL_GRACE:-60}
BL_FAILED=0
BL_SKIPPED=0
BL_TIMEOUT=${BL_TIMEOUT:-300} # seconds per run of a pair (bl_pair)
BL_LAST_OTHERS=""
BL_HZ=100
declare -A BL_PAIR_SECONDS     # KEY -> the last complete pair's wall time

# bl_enter BUILD: sets root (the repository) and build (BUILD, made absolute
# from the caller's directory), then goes to root, where the benchmark
# scripts run.
bl_enter() {
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    build=$1
    case $build in
    /*) ;;
    *) build=$(pwd)/$build ;;
    esac
    cd "$root"
}

bl_say() { echo "$BL_NAME: $*" >&2; }
bl_die() {
    echo "$BL_NAME: $*" >&2
    exit 1
}

bl_need() { # bl_need TOOL WHY
    command -v "$1" >/dev/null 2>&1 || bl_die "$1 not found: $2"
}

bl_init() { # bl_init NAME
    BL_NAME=$1
    bl_need timeout "every run is limited in time (coreutils)"
    bl_need python3 "it checks each program's JSON line and writes the report (scripts/setup.sh installs it)"
    # the interpreter itself, once: a wrapper (pyenv's shim) costs a good
    # fraction of a second per call, and there is a call per run
    BL_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
    BL_HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
    BL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/deso-$BL_NAME.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$BL_TMP'" EXIT
    trap 'exit 130' INT TERM
    BL_RESULTS=$BL_TMP/results.jsonl
    : >"$BL_RESULTS"
    bl_clock_start
}

bl_clock_start() { BL_START=$(date +%s); }

# bl_cpu_mark VAR: into VAR "BUSY CHILDREN": the machine's busy CPU seconds
# since boot (all cores, from /proc/stat) and the CPU seconds of this shell's
# finished children (bash's `times`, which must run in this shell, not in a
# command substitution's subshell, where it would count nothing).  Between
# two marks, busy minus children is what other processes used.
bl_cpu_mark() {
    times >"$BL_TMP/times"
    printf -v "$1" '%s' "$(awk -v hz="$BL_HZ" 'FNR == 2 && FILENAME != "/proc/stat" {
            for (i = 1; i <= 2; i++) { split($i, m, "m"); ch += m[1] * 60 + m[2] } }
        FILENAME == "/proc/stat" && $1 == "cpu" {
            busy = ($2 + $3 + $4 + $7 + $8 + $9) / hz }
        END { if (busy > 0) printf("%.3f %.3f\n", busy, ch) }' "$BL_TMP/times" /proc/stat \
        2>/dev/null || true)"
}

# bl_cpu_others MARK0 MARK1: others' CPU seconds between two marks, or null
bl_cpu_others() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (split(a, x, " ") < 2 || split(b, y, " ") < 2) { print "null"; exit }
        d = (y[1] - x[1]) - (y[2] - x[2])
        if (d < 0) d = 0
        printf("%.2f\n", d) }'
}

bl_wait_quiet() { # bl_wait_quiet MAX
    local max=$1 waited=0 m0 m1 o
    while [ "$waited" -lt "$max" ]; do
        bl_cpu_mark m0
        sleep 1
        bl_cpu_mark m1
        o=$(bl_cpu_others "$m0" "$m1")
        # quiet: others used under a tenth of one core over the second
        if [ "$o" = null ] || awk -v o="$o" 'BEGIN { exit !(o < 0.1) }'; then
            break
        fi
        waited=$((waited + 1))
    done
    echo "$waited"
}
bl_elapsed() { echo $(($(date +%s) - BL_START)); }
bl_left() { echo $((BL_BUDGET - $(bl_elapsed))); }

bl_json_str() {
    printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037\042\134')"
}

bl_json_list() {
    local out="" sep="" v
    for v in $1; do
        if [ "${2:-}" = q ]; then v=$(bl_json_str "$v"); fi
        out="$out$sep$v" sep=","
    done
    echo "[$out]"
}

bl_loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }

bl_meta() { # bl_meta SUITE SETTINGS
    local llc cpu mem
    llc=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null) ||
        # some virtual machines give no cache directory in sysfs; the C
        # library's figure (bytes) then, in sysfs's unit
        llc=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null | awk '$1 > 0 {printf "%dK", $1 / 1024}')
    [ -n "$llc" ] || llc="?"
    cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    mem=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
    printf '{"bench":"meta","suite":%s,"date":"%s","host":%s,"cores":%s,"cpu":%s,"llc":%s,"mem_kb":%s,"loadavg":%s,"openblas_threads":%s,"settings":{%s}}\n' \
        "$(bl_json_str "$1")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(bl_json_str "$(hostname 2>/dev/null || echo '?')")" "$(nproc 2>/dev/null || echo 0)" \
        "$(bl_json_str "${cpu:-?}")" "$(bl_json_str "$llc")" "${mem:-0}" \
        "$(bl_json_str "$(bl_loadavg)")" "$(bl_json_str "${OPENBLAS_NUM_THREADS:-unset}")" \
        "$2" >>"$BL_RESULTS"
}

# The last stdout line that parses as a JSON object, or nothing.
bl_json_line() { # bl_json_line FILE
    "$BL_PYTHON" - "$1" <<'PY'
import json, sys
last = ""
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        line = line.strip()
        if line.startswith("{"):
            try:
                if isinstance(json.loads(line), dict):
                    last = line
            except ValueError:
                pass
print(last)
PY
}

bl_skip() { # bl_skip TAG ASKED LABEL REASON
    bl_say "$3 skipped: $4"
    printf '{"bench":%s,"asked":{%s},"label":%s,"skipped":%s}\n' "$(bl_json_str "$1")" \
        "$2" "$(bl_json_str "$3")" "$(bl_json_str "$4")" >>"$BL_RESULTS"
    BL_SKIPPED=$((BL_SKIPPED + 1))
}

bl_run() { # bl_run TAG ASKED LABEL TIMEOUT CMD...
    local tag=$1 asked=$2 label=$3 to=$4 left rc t0 dt line reason last m0 m1
    shift 4
    left=$(bl_left)
    if [ "$left" -le 0 ]; then
        bl_skip "$tag" "$asked" "$label" "time budget (${BL_BUDGET}s) used up"
        return 0
    fi
    [ "$to" -gt $((left + BL_GRACE)) ] && to=$((left + BL_GRACE))
    printf '%s: %s ... ' "$BL_NAME" "$label" >&2
    t0=$(date +%s)
    bl_cpu_mark m0
    rc=0
    timeout --kill-after=10 "$to" "$@" >"$BL_TMP/out" 2>"$BL_TMP/err" </dev/null || rc=$?
    bl_cpu_mark m1
    dt=$(($(date +%s) - t0))
    BL_LAST_OTHERS=$(bl_cpu_others "$m0" "$m1")
    line=$(bl_json_line "$BL_TMP/out")
    if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
        printf '{"bench":%s,"asked":{%s},"label":%s,"seconds":%s,"cpu_others":%s,"out":%s}\n' \
            "$(bl_json_str "$tag")" "$asked" "$(bl_json_str "$label")" "$dt" \
            "$BL_LAST_OTHERS" "$line" >>"$BL_RESULTS"
        echo "ok (${dt}s)" >&2
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        reason="timeout after ${to}s"
    elif [ "$rc" -ne 0 ]; then
        reason="exit status $rc"
    else
        reason="no JSON line on stdout"
    fi
    last=$(grep -v '^[[:space:]]*$' "$BL_TMP/err" | tail -n 1 | cut -c1-200 || true)
    echo "FAILED: $reason${last:+ ($last)}" >&2
    printf '{"bench":%s,"asked":{%s},"label":%s,"seconds":%s,"cpu_others":%s,"failed":%s,"stderr":%s}\n' \
        "$(bl_json_str "$tag")" "$asked" "$(bl_json_str "$label")" "$dt" \
        "$BL_LAST_OTHERS" "$(bl_json_str "$reason")" "$(bl_json_str "$last")" >>"$BL_RESULTS"
    BL_FAILED=$((BL_FAILED + 1))
    return 0
}

# One pair of paired runs: A then B when K is odd, B then A when K is even,
# back to back, so that the machine's drift (it is shared) is nearly the same
# for both and cancels from the ratio of the pair; the order alternates so
# that neither side always runs first.  Each record's "asked" gains "pair":K,
# "side":"a"|"b" and "order":1|2.  CMD_A, CMD_B name arrays holding the
# commands.  A pair that would not end within the budget (judged by the
# time of the previous pair with the same KEY) is not started: returns 1.
bl_pair() { # bl_pair K TAG ASKED_A LABEL_A CMD_A ASKED_B LABEL_B CMD_B KEY
    local k=$1 tag=$2 key=$9 t0 order=1 side
    local -n bl_cmd_a=$5 bl_cmd_b=$8
    if [ $(($(bl_elapsed) + ${BL_PAIR_SECONDS[$key]:-0})) -gt "$BL_BUDGET" ]; then
        return 1
    fi
    t0=$(date +%s)
    for side in $(if [ $((k % 2)) -eq 1 ]; then echo a b; else echo b a; fi); do
        if [ "$side" = a ]; then
            bl_run "$tag" "$3,\"pair\":$k,\"side\":\"a\",\"order\":$order" "$4" \
                "$BL_TIMEOUT" "${bl_cmd_a[@]}"
        else
            bl_run "$tag" "$6,\"pair\":$k,\"side\":\"b\",\"order\":$order" "$7" \
                "$BL_TIMEOUT" "${bl_cmd_b[@]}"
        fi
        order=$((order + 1))
    done
    BL_PAIR_SECONDS[$key]=$(($(date +%s) - t0))
    return 0
}

# Its "out" is {"loadavg":"1 5 15"}, the three figures of /proc/loadavg.
bl_load() { # bl_load ASKED LABEL
    printf '{"bench":"load","asked":{%s},"label":%s,"out":{"loadavg":%s}}\n' "$1" \
        "$(bl_json_str "$2")" "$(bl_json_str "$(bl_loadavg)")" >>"$BL_RESULTS"
}

bl_end() {
    printf '{"bench":"end","seconds":%s,"loadavg":%s,"failed":%s,"skipped":%s}\n' \
        "$(bl_elapsed)" "$(bl_json_str "$(bl_loadavg)")" "$BL_FAILED" "$BL_SKIPPED" \
        >>"$BL_RESULTS"
}

bl_publish() { # bl_publish DEST
    mkdir -p "$(dirname "$1")"
    cp "$BL_RESULTS" "$1.tmp" && mv "$1.tmp" "$1"
}
