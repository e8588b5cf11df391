#!/bin/sh
# bench.sh: the deso benchmark (make bench), one run, everything side by side.
#
#   scripts/bench.sh [BUILD]          BUILD defaults to build
#   BENCH_QUICK=1 scripts/bench.sh    ~2-minute smoke version (small n, few iterations)
#
# Runs, in this order, with OPENBLAS_NUM_THREADS=1 and every MPI run under
# mpiexec.mpich inside `timeout`:
#   1. calibration: pingpong at P = 2 (alpha, beta of the cost model) and
#      read_bw at P = 1, 2 for each n (read bandwidth, one dgemv's bandwidth);
#   2. timed runs at P = 1, 2 (wall clock only at P <= 2: doc/DESIGN.md,
#      "Measuring on this kind of machine"): cg_seq, cg_pblas, deso-cg
#      --mode none|affine|full, ITERS iterations, tol 0 so every
#      implementation does the same work;
#   3. counted runs of deso-cg at P = 2, 4, 9, 16 (bytes and messages are exact
#      at any P; the time is not), each at two small iteration counts, so the
#      per-iteration counts are the exact difference quotient (set-up and the
#      final residual check cancel);
#   4. paired runs for the headline ratios: BENCH_PAIRS times per n, deso
#      full and its anchor back to back (PBLAS at P = 2, sequential OpenBLAS
#      at P = 1), the order alternating, 4 x ITERS iterations for n <= 4000
#      (runs of a few ms per iteration); the median of the pair ratios is
#      quoted (the machine is shared and drifts between rounds);
#   5. BENCH_REPEAT - 1 more rounds of the timed runs while the budget allows
#      (the best of the rounds is reported in the tables).
# Then scripts/bench_report.py writes the Markdown tables into README.md
# (between <!-- bench:begin --> and <!-- bench:end -->), doc/bench-time.png,
# doc/bench-bytes.png and doc/bench-results.jsonl (every program's JSON line,
# verbatim after an added leading "bench" tag; failed or skipped runs as
# records with "failed" or "skipped").
#
# A failed run prints a line and shows as "failed" in the table; nothing aborts
# the rest. Without build/bin/deso-cg the deso rows are skipped.
#
# Environment (defaults: full / quick):
#   BENCH_NS          matrix sizes                    "3600 8000" / "500 1000"
#   BENCH_ITERS       timed iterations                50 / 20
#   BENCH_TIMED_PS    timed process counts            "1 2"
#   BENCH_COUNT_PS    counted process counts          "2 4 9 16"
#   BENCH_COUNT_NS    matrix sizes counted at         "3600 8000" / "500"
#   BENCH_COUNT_ITERS two iteration counts to diff    "2 6" / "1 3"
#   BENCH_MODES       deso modes                      "none affine full"
#   BENCH_REPEAT      timed repetitions (best kept)   3 / 1
#   BENCH_PAIRS       paired runs per n and P         15 / 1
#   BENCH_BUDGET      seconds: no run starts after it, none runs more than
#                     60 s (quick: 20 s) beyond it
#                                                     1020 / 100
#   BENCH_TIMEOUT     seconds per run                 300 / 60
#   BENCH_MB          read_bw array size per rank     1024 (MB: beyond the last-level cache)
#   MPIEXEC           the launcher                    mpiexec.mpich
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
cd "$root"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    d_ns="500 1000" d_count_ns=500 d_iters=20 d_citers="1 3" d_budget=100 d_timeout=60 d_reps=2
    d_repeat=1 grace=20 d_pairs=1
    d_ppreps=50
else
    d_ns="3600 8000" d_count_ns="3600 8000" d_iters=50 d_citers="2 6" d_budget=1020 d_timeout=300 d_reps=3
    d_repeat=3 grace=60 d_pairs=15
    d_ppreps=200
fi
ns=${BENCH_NS:-$d_ns}
iters=${BENCH_ITERS:-$d_iters}
timed_ps=${BENCH_TIMED_PS:-"1 2"}
count_ps=${BENCH_COUNT_PS:-"2 4 9 16"}
count_ns=${BENCH_COUNT_NS:-$d_count_ns}
count_iters=${BENCH_COUNT_ITERS:-$d_citers}
modes=${BENCH_MODES:-"none affine full"}
repeat=${BENCH_REPEAT:-$d_repeat}
pairs=${BENCH_PAIRS:-$d_pairs}
budget=${BENCH_BUDGET:-$d_budget}
run_timeout=${BENCH_TIMEOUT:-$d_timeout}
mb=${BENCH_MB:-1024}
launch=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1

say() { echo "bench: $*" >&2; }

start=$(date +%s) # reset after the builds: the budget is for running
elapsed() { echo $(($(date +%s) - start)); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deso-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
results=$tmp/results.jsonl
: >"$results"

# ---- binaries ----------------------------------------------------------
# (re)made when out of date; if make fails an existing binary is used as it is
deso_cg=$build/bin/deso-cg
targets="$build/bench/pingpong $build/bench/read_bw $build/bench/cg_seq $build/bench/cg_pblas"
[ -f examples/cg.c ] && targets="$targets $deso_cg"
for t in $targets; do
    if ! make -s BUILD="$build" "$t" >"$tmp/make.log" 2>&1; then
        if [ -x "$t" ]; then
            say "make $t failed; using the existing binary"
        else
            say "cannot build $t (last lines of make:)"
            tail -n 5 "$tmp/make.log" >&2
        fi
    fi
done
have_deso=1
if [ ! -x "$deso_cg" ]; then
    have_deso=0
    say "deso-cg not built: skipping deso rows"
fi

start=$(date +%s)

# ---- meta record ---------------------------------------------------------
json_list() { # "a b c" -> [a,b,c] (numbers) or ["a","b","c"] with $2 = q
    out="" sep=""
    for v in $1; do
        if [ "${2:-}" = q ]; then v="\"$v\""; fi
        out="$out$sep$v" sep=","
    done
    echo "[$out]"
}
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
llc=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo "?")
printf '{"bench":"meta","date":"%s","host":"%s","cores":%s,"llc":"%s","loadavg":"%s","quick":%s,"ns":%s,"iters":%s,"timed_ps":%s,"count_ps":%s,"count_ns":%s,"count_iters":%s,"modes":%s,"repeat":%s,"pairs":%s,"mb":%s,"deso":%s,"build":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname 2>/dev/null || echo '?')" \
    "$(nproc 2>/dev/null || echo 0)" "$llc" "$load" "$([ "$quick" = 1 ] && echo true || echo false)" \
    "$(json_list "$ns")" "$iters" "$(json_list "$timed_ps")" "$(json_list "$count_ps")" \
    "$(json_list "$count_ns")" "$(json_list "$count_iters")" "$(json_list "$modes" q)" "$repeat" \
    "$pairs" "$mb" \
    "$([ $have_deso = 1 ] && echo true || echo false)" "$build" >>"$results"
say "start: n = $ns; timed P = $timed_ps ($iters iterations); counted P = $count_ps" \
    "at n = $count_ns (iterations $count_iters); load average $load; budget ${budget}s"

# ---- running one program -------------------------------------------------
# run TAG FAILREC LABEL TIMEOUT cmd...: runs cmd under timeout; its last stdout
# line that looks like a JSON object goes to the results with "bench":"TAG"
# put in front; on failure a record {"bench":TAG,"failed":REASON,FAILREC} does.
# The time budget is a hard limit: no run starts after it, and no run's
# timeout reaches more than $grace seconds beyond it.
nfailed=0
extra=""  # set by pair_run: fields added to a successful run's record
run() {
    tag=$1 failrec=$2 label=$3 to=$4
    shift 4
    left=$((budget - $(elapsed)))
    if [ "$left" -le 0 ]; then
        skip "$tag" "$failrec" "$label" "time budget (${budget}s) used up"
        return 0
    fi
    [ "$to" -gt $((left + grace)) ] && to=$((left + grace))
    printf 'bench: %s ... ' "$label" >&2
    t0=$(date +%s)
    rc=0
    timeout --kill-after=10 "$to" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
    dt=$(($(date +%s) - t0))
    line=$(grep '^{.*}[[:space:]]*$' "$tmp/out" | tail -n 1 || true)
    if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
        echo "{\"bench\":\"$tag\",$extra${line#\{}" >>"$results"
        echo "ok (${dt}s)" >&2
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        reason="timeout after ${to}s"
    elif [ "$rc" -ne 0 ]; then
        reason="exit status $rc"
    else
        reason="no JSON line"
    fi
    last=$(grep -v '^[[:space:]]*$' "$tmp/err" | tail -n 1 | tr -d '\042\134' | cut -c1-160 || true)
    echo "FAILED: $reason${last:+ ($last)}" >&2
    echo "{\"bench\":\"$tag\",\"failed\":\"$reason\",$failrec}" >>"$results"
    nfailed=$((nfailed + 1))
    return 0
}
skip() { # skip TAG FAILREC LABEL REASON
    say "$3 skipped: $4"
    echo "{\"bench\":\"$1\",\"skipped\":\"$4\",$2}" >>"$results"
}

# ---- 1. calibration --------------------------------------------------------
run pingpong '"impl":"pingpong","p":2' "pingpong P=2" "$run_timeout" \
    "$launch" -n 2 "$build/bench/pingpong" --reps "$d_ppreps" --json
for n in $ns; do
    for p in $timed_ps; do
        run read_bw "\"impl\":\"read_bw\",\"n\":$n,\"p\":$p" "read_bw n=$n P=$p" \
            "$run_timeout" "$launch" -n "$p" "$build/bench/read_bw" --n "$n" --mb "$mb" \
            --reps "$d_reps" --json
    done
done

# ---- 2. timed runs ---------------------------------------------------------
# timed_round R: every timed run once (label suffix R when repeating)
timed_round() {
    rep=""
    [ "$repeat" -gt 1 ] && rep=" (round $1 of $repeat)"
    for n in $ns; do
        for p in $timed_ps; do
            rec="\"n\":$n,\"p\":$p,\"iters\":$iters"
            if [ "$p" -eq 1 ]; then
                run timed "\"impl\":\"seq\",$rec" "n=$n P=1 impl=seq iters=$iters$rep" \
                    "$run_timeout" "$build/bench/cg_seq" --n "$n" --iters "$iters" --tol 0 \
                    --json
            fi
            run timed "\"impl\":\"pblas\",$rec" "n=$n P=$p impl=pblas iters=$iters$rep" \
                "$run_timeout" "$launch" -n "$p" "$build/bench/cg_pblas" --n "$n" \
                --iters "$iters" --tol 0 --json
            if [ $have_deso = 1 ]; then
                for m in $modes; do
                    run timed "\"impl\":\"deso\",\"mode\":\"$m\",$rec" \
                        "n=$n P=$p mode=$m iters=$iters$rep" "$run_timeout" \
                        "$launch" -n "$p" "$deso_cg" --n "$n" --iters "$iters" --tol 0 \
                        --mode "$m" --json
                done
            fi
        done
    done
}
t_round=$(elapsed)
timed_round 1
t_round=$(($(elapsed) - t_round))

# ---- 3. counted runs -------------------------------------------------------
mem_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ $have_deso = 1 ]; then
    for n in $count_ns; do
        # the matrix once, plus generous room for replicated copies (mode none)
        need_kb=$((n * n * 8 * 4 / 1024))
        for p in $count_ps; do
            for m in $modes; do
                for k in $count_iters; do
                    rec="\"impl\":\"deso\",\"mode\":\"$m\",\"n\":$n,\"p\":$p,\"iters\":$k"
                    label="n=$n P=$p mode=$m iters=$k (counting)"
                    if [ "$mem_kb" -gt 0 ] && [ "$need_kb" -gt "$mem_kb" ]; then
                        skip count "$rec" "$label" "memory (needs ~$((need_kb / 1024)) MB)"
                    else
                        run count "$rec" "$label" "$run_timeout" \
                            "$launch" -n "$p" "$deso_cg" --n "$n" --iters "$k" --tol 0 \
                            --mode "$m" --json
                    fi
                done
            done
        done
    done
fi

# ---- 4. paired runs for the headline ratios ---------------------------------
# deso full beside its anchor, back to back, PAIRS times per n, the order
# alternating (A B, B A, ...): the machine's drift between two runs a few
# seconds apart is small, between rounds minutes apart it is not.  The
# report quotes the median of the per-pair ratios with their range.
pair_run() { # pair_run K N P ANCHOR: one anchor run and one deso full run
    pk=$1 pn=$2 pp=$3 anchor=$4
    # a run of a few milliseconds per iteration needs more of them to
    # outlast the machine's bursts
    pi=$iters
    [ "$pn" -le 4000 ] && pi=$((iters * 4))
    rec="\"n\":$pn,\"p\":$pp,\"iters\":$pi,\"pair\":$pk"
    if [ "$anchor" = seq ]; then
        set -- "$build/bench/cg_seq" --n "$pn" --iters "$pi" --tol 0 --json
    else
        set -- "$launch" -n "$pp" "$build/bench/cg_pblas" --n "$pn" \
            --iters "$pi" --tol 0 --json
    fi
    extra="\"pair\":$pk,"
    for side in $(if [ $((pk % 2)) = 1 ]; then echo a d; else echo d a; fi); do
        if [ "$side" = a ]; then
            run pair "\"impl\":\"$anchor\",$rec" \
                "n=$pn P=$pp impl=$anchor (pair $pk of $pairs)" "$run_timeout" "$@"
        else
            run pair "\"impl\":\"deso\",\"mode\":\"full\",$rec" \
                "n=$pn P=$pp mode=full (pair $pk of $pairs)" "$run_timeout" \
                "$launch" -n "$pp" "$deso_cg" --n "$pn" --iters "$pi" --tol 0 \
                --mode full --json
        fi
    done
    extra=""
}
if [ $have_deso = 1 ]; then
    for n in $ns; do
        k=1
        while [ "$k" -le "$pairs" ]; do
            for p in $timed_ps; do
                if [ $(($(elapsed) + 2 * t_round / 5)) -gt "$budget" ]; then
                    say "pair $k skipped: budget ${budget}s"
                    break 3
                fi
                if [ "$p" -eq 1 ]; then pair_run "$k" "$n" 1 seq; fi
                if [ "$p" -eq 2 ]; then pair_run "$k" "$n" 2 pblas; fi
            done
            k=$((k + 1))
        done
    done
fi

# ---- 5. more timed rounds, while the budget allows (the best one is kept) ----
r=2
while [ "$r" -le "$repeat" ]; do
    if [ $(($(elapsed) + t_round)) -gt "$budget" ]; then
        say "timed round $r of $repeat skipped: a round takes ~${t_round}s, budget ${budget}s"
        break
    fi
    timed_round "$r"
    r=$((r + 1))
done
printf '{"bench":"end","seconds":%s,"loadavg":"%s","failed":%s}\n' "$(elapsed)" \
    "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")" "$nfailed" >>"$results"

# ---- report ----------------------------------------------------------------
mkdir -p doc
cp "$results" doc/bench-results.jsonl
say "all runs done in $(elapsed)s ($nfailed failed); writing README.md, doc/"
python3 scripts/bench_report.py --results doc/bench-results.jsonl --readme README.md \
    --doc doc
say "done in $(elapsed)s: README.md (Benchmark results), doc/bench-time.png," \
    "doc/bench-bytes.png, doc/bench-results.jsonl"
