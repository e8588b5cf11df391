#!/bin/bash
# bench.sh: the deso CG benchmark (make bench), one run, everything side by side.
#
#   scripts/bench.sh [BUILD]          BUILD defaults to build
#   BENCH_QUICK=1 scripts/bench.sh    a few-minute smoke version (small n, few iterations)
#
# Runs, in this order, with OPENBLAS_NUM_THREADS=1 and every program under
# `timeout` (scripts/bench_lib.sh):
#   1. calibration: pingpong at P = 2 (alpha, beta of the cost model) and
#      read_bw at each timed P for each n (read bandwidth, one dgemv's);
#   2. timed runs at the timed P (wall clock only at P <= cores: doc/DESIGN.md,
#      "Measuring on this kind of machine"): cg_seq (P = 1), cg_pblas and
#      deso-cg --mode none|affine|full, ITERS iterations, tol 0 so every
#      implementation does the same work;
#   3. counted runs of deso-cg at the counted P (bytes and messages are exact
#      at any P; the time is not), each at the COUNT_ITERS iteration counts:
#      the report derives per-iteration counts from their differences, and
#      calls them exact only when every run ran the iterations asked and the
#      differences are whole numbers per iteration;
#   4. paired runs for the headline ratios: PAIRS pairs per n and timed P,
#      deso full and its anchor (cg_seq at P = 1, cg_pblas beyond) back to
#      back, the order alternating, 4 x ITERS iterations for n <= 4000 (runs
#      of a few ms per iteration); the report quotes the median of the
#      per-pair ratios and their range;
#   5. REPEAT - 1 more rounds of the timed runs while the budget allows (the
#      report keeps each row's best).
# Every CG program, at every P, runs on the same process grid (BENCH_GRIDS),
# passed as --grid to deso-cg and cg_pblas alike; the report checks the grid
# each program printed.  Times compared across programs are always their
# time_loop: the solver loop from a barrier to a barrier, the slowest rank's.
#
# Then the raw results go to DOC/bench-results.jsonl (format: scripts/bench_lib.sh)
# and scripts/bench_report.py writes, from that file alone, the README's section
# between <!-- bench:begin --> and <!-- bench:end -->, DOC/bench-time.png and
# DOC/bench-bytes.png.  The same report again, without running anything:
#   python3 scripts/bench_report.py --results doc/bench-results.jsonl
#
# A failed run prints a line and shows as "failed" in the tables; nothing
# aborts the rest.  Without BUILD/bin/deso-cg the deso rows are skipped.
#
# Environment (defaults: full / quick):
#   BENCH_NS          matrix sizes                    "3600 8000" / "500 1000"
#   BENCH_ITERS       timed iterations                50 / 20
#   BENCH_TIMED_PS    timed process counts            "1 2"
#   BENCH_COUNT_PS    counted process counts          "2 4 9 16"
#   BENCH_COUNT_NS    matrix sizes counted at         "3600 8000" / "500"
#   BENCH_COUNT_ITERS iteration counts to difference  "2 6" / "1 3"
#   BENCH_MODES       deso modes                      "none affine full"
#   BENCH_GRIDS       P:RxC, the grid of every run at P
#                     (others: the most square, R >= C) "1:1x1 2:2x1"
#   BENCH_REPEAT      timed rounds (best kept)        3 / 1
#   BENCH_PAIRS       paired runs per n and P         15 / 2
#   BENCH_BUDGET      seconds: no run starts after it, none runs more than
#                     60 s (quick: 20 s) beyond it    1020 / 120
#   BENCH_TIMEOUT     seconds per run                 300 / 60
#   BENCH_MB          read_bw array size per rank     1024 (MB: beyond the last-level cache)
#   BENCH_PLOTS       1: gnuplot PNGs (gnuplot required); 0: none   1
#   BENCH_README      the README to write             README.md
#   BENCH_DOC         where the results and plots go  doc
#   MPIEXEC           the launcher                    mpiexec.mpich
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

# shellcheck source=scripts/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
bl_enter "${1:-build}"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    d_ns="500 1000" d_count_ns=500 d_iters=20 d_citers="1 3" d_budget=120 d_timeout=60
    d_reps=2 d_repeat=1 d_grace=20 d_pairs=2 d_ppreps=50
else
    d_ns="3600 8000" d_count_ns="3600 8000" d_iters=50 d_citers="2 6" d_budget=1020
    d_timeout=300 d_reps=3 d_repeat=3 d_grace=60 d_pairs=15 d_ppreps=200
fi
ns=${BENCH_NS:-$d_ns}
iters=${BENCH_ITERS:-$d_iters}
timed_ps=${BENCH_TIMED_PS:-"1 2"}
count_ps=${BENCH_COUNT_PS:-"2 4 9 16"}
count_ns=${BENCH_COUNT_NS:-$d_count_ns}
count_iters=${BENCH_COUNT_ITERS:-$d_citers}
modes=${BENCH_MODES:-"none affine full"}
grids=${BENCH_GRIDS:-"1:1x1 2:2x1"}
repeat=${BENCH_REPEAT:-$d_repeat}
pairs=${BENCH_PAIRS:-$d_pairs}
BL_BUDGET=${BENCH_BUDGET:-$d_budget}
BL_GRACE=$d_grace
BL_TIMEOUT=${BENCH_TIMEOUT:-$d_timeout}
mb=${BENCH_MB:-1024}
plots=${BENCH_PLOTS:-1}
readme=${BENCH_README:-README.md}
docdir=${BENCH_DOC:-doc}
launch=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1

bl_init bench
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
bl_need make "the benchmark programs are built with it"
if [ "$plots" = 1 ]; then
    bl_need gnuplot "it draws $docdir/bench-*.png (scripts/setup.sh installs gnuplot-nox;" \
        "BENCH_PLOTS=0 runs without plots)"
fi

# grid_for P: the RxC every program runs on at P (BENCH_GRIDS, else the most
# square with R >= C, cg_pblas's own default)
grid_for() {
    local p=$1 e c best=1
    for e in $grids; do
        if [ "${e%%:*}" = "$p" ]; then
            echo "${e#*:}"
            return
        fi
    done
    for ((c = 1; c * c <= p; c++)); do
        [ $((p % c)) -eq 0 ] && best=$c
    done
    echo "$((p / best))x$best"
}

# ---- binaries ----------------------------------------------------------
# (re)made when out of date; if make fails an existing binary is used as it is
deso_cg=$build/bin/deso-cg
targets="$build/bench/pingpong $build/bench/read_bw $build/bench/cg_seq $build/bench/cg_pblas"
[ -f examples/cg.c ] && targets="$targets $deso_cg"
for t in $targets; do
    if ! make -s BUILD="$build" "$t" >"$BL_TMP/make.log" 2>&1; then
        if [ -x "$t" ]; then
            bl_say "make $t failed; using the existing binary"
        else
            bl_say "cannot build $t (last lines of make:)"
            tail -n 5 "$BL_TMP/make.log" >&2
        fi
    fi
done
have_deso=1
if [ ! -x "$deso_cg" ]; then
    have_deso=0
    bl_say "deso-cg not built: skipping deso rows"
fi

bl_clock_start # the budget is for running, not for building

# ---- meta record ---------------------------------------------------------
grid_list="" seen=" "
for p in $timed_ps $count_ps; do
    case $seen in *" $p "*) continue ;; esac
    seen="$seen$p "
    grid_list="$grid_list${grid_list:+,}\"$p\":\"$(grid_for "$p")\""
done
bl_meta cg "$(printf '"quick":%s,"ns":%s,"iters":%s,"tol":0,"timed_ps":%s,"count_ps":%s,"count_ns":%s,"count_iters":%s,"modes":%s,"grids":{%s},"repeat":%s,"pairs":%s,"budget":%s,"timeout":%s,"mb":%s,"deso":%s,"build":%s,"launcher":%s' \
    "$([ "$quick" = 1 ] && echo true || echo false)" "$(bl_json_list "$ns")" "$iters" \
    "$(bl_json_list "$timed_ps")" "$(bl_json_list "$count_ps")" "$(bl_json_list "$count_ns")" \
    "$(bl_json_list "$count_iters")" "$(bl_json_list "$modes" q)" "$grid_list" "$repeat" \
    "$pairs" "$BL_BUDGET" "$BL_TIMEOUT" "$mb" \
    "$([ $have_deso = 1 ] && echo true || echo false)" "$(bl_json_str "$build")" \
    "$(bl_json_str "$launch")")"
bl_say "start: n = $ns; timed P = $timed_ps ($iters iterations); counted P = $count_ps" \
    "at n = $count_ns (iterations $count_iters); grids $grids; load average $(bl_loadavg);" \
    "budget ${BL_BUDGET}s"

# ---- 1. calibration --------------------------------------------------------
bl_run pingpong '"impl":"pingpong","p":2' "pingpong P=2" "$BL_TIMEOUT" \
    "$launch" -n 2 "$build/bench/pingpong" --reps "$d_ppreps" --json
for n in $ns; do
    for p in $timed_ps; do
        bl_run read_bw "\"impl\":\"read_bw\",\"n\":$n,\"p\":$p,\"mb\":$mb" "read_bw n=$n P=$p" \
            "$BL_TIMEOUT" "$launch" -n "$p" "$build/bench/read_bw" --n "$n" --mb "$mb" \
            --reps "$d_reps" --json
    done
done

# ---- the CG runs -----------------------------------------------------------
# cg_cmd ARRAY IMPL MODE N P K: the command line of one CG run into ARRAY
# shellcheck disable=SC2034 # cg_into is the caller's array
cg_cmd() {
    local -n cg_into=$1
    local impl=$2 mode=$3 n=$4 p=$5 k=$6 g
    g=$(grid_for "$p")
    case $impl in
    seq) cg_into=("$build/bench/cg_seq" --n "$n" --iters "$k" --tol 0 --json) ;;
    pblas) cg_into=("$launch" -n "$p" "$build/bench/cg_pblas" --n "$n" --iters "$k" --tol 0
        --grid "$g" --json) ;;
    deso) cg_into=("$launch" -n "$p" "$deso_cg" --n "$n" --iters "$k" --tol 0 --mode "$mode"
        --grid "$g" --json) ;;
    esac
}
# cg_label IMPL MODE N P K: how the progress lines name one CG run
cg_label() {
    printf 'n=%s P=%s %s%s iters=%s' "$3" "$4" "$1" "$([ "$1" = deso ] && echo " $2")" "$5"
}
# cg_asked IMPL MODE N P K: the "asked" members of one CG run
cg_asked() {
    printf '"impl":"%s",%s"n":%s,"p":%s,"iters":%s,"grid":"%s"' "$1" \
        "$([ "$1" = deso ] && printf '"mode":"%s",' "$2")" "$3" "$4" "$5" "$(grid_for "$4")"
}

# ---- 2. timed runs ---------------------------------------------------------
timed_round() { # timed_round R: every timed run once
    local r=$1 rep="" n p impl m
    local -a cmd
    [ "$repeat" -gt 1 ] && rep=" (round $r of $repeat)"
    for n in $ns; do
        for p in $timed_ps; do
            for impl in seq pblas deso; do
                [ "$impl" = seq ] && [ "$p" -ne 1 ] && continue
                [ "$impl" = deso ] && [ $have_deso = 0 ] && continue
                for m in $([ "$impl" = deso ] && echo "$modes" || echo -); do
                    cg_cmd cmd "$impl" "$m" "$n" "$p" "$iters"
                    bl_run timed "$(cg_asked "$impl" "$m" "$n" "$p" "$iters"),\"round\":$r" \
                        "$(cg_label "$impl" "$m" "$n" "$p" "$iters")$rep" "$BL_TIMEOUT" \
                        "${cmd[@]}"
                done
            done
        done
    done
}
t_round=$(bl_elapsed)
timed_round 1
t_round=$(($(bl_elapsed) - t_round))

# ---- 3. counted runs -------------------------------------------------------
cmd=()
mem_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ $have_deso = 1 ]; then
    for n in $count_ns; do
        # the matrix once, plus generous room for replicated copies (mode none)
        need_kb=$((n * n * 8 * 4 / 1024))
        for p in $count_ps; do
            for m in $modes; do
                for k in $count_iters; do
                    asked=$(cg_asked deso "$m" "$n" "$p" "$k")
                    label="$(cg_label deso "$m" "$n" "$p" "$k") (counting)"
                    if [ "$mem_kb" -gt 0 ] && [ "$need_kb" -gt "$mem_kb" ]; then
                        bl_skip count "$asked" "$label" "memory (needs ~$((need_kb / 1024)) MB)"
                    else
                        cg_cmd cmd deso "$m" "$n" "$p" "$k"
                        bl_run count "$asked" "$label" "$BL_TIMEOUT" "${cmd[@]}"
                    fi
                done
            done
        done
    done
fi

# ---- 4. paired runs for the headline ratios ---------------------------------
# Pair k of every (n, P) before pair k + 1 of any, so that a budget cut leaves
# the same number of pairs everywhere.  A run of a few milliseconds per
# iteration needs more iterations to outlast the machine's bursts.
# shellcheck disable=SC2034 # filled by cg_cmd, read by bl_pair
cmd_a=() cmd_b=()
if [ $have_deso = 1 ]; then
    k=1
    while [ "$k" -le "$pairs" ]; do
        for n in $ns; do
            pi=$iters
            [ "$n" -le 4000 ] && pi=$((iters * 4))
            for p in $timed_ps; do
                anchor=pblas
                [ "$p" -eq 1 ] && anchor=seq
                cg_cmd cmd_a "$anchor" - "$n" "$p" "$pi"
                cg_cmd cmd_b deso full "$n" "$p" "$pi"
                if ! bl_pair "$k" pair "$(cg_asked "$anchor" - "$n" "$p" "$pi")" \
                    "$(cg_label "$anchor" - "$n" "$p" "$pi") (pair $k of $pairs)" cmd_a \
                    "$(cg_asked deso full "$n" "$p" "$pi")" \
                    "$(cg_label deso full "$n" "$p" "$pi") (pair $k of $pairs)" cmd_b \
                    "$n:$p"; then
                    bl_say "pairs from $k on skipped: budget ${BL_BUDGET}s"
                    break 3
                fi
            done
        done
        k=$((k + 1))
    done
fi

# ---- 5. more timed rounds, while the budget allows (the best one is kept) ----
r=2
while [ "$r" -le "$repeat" ]; do
    if [ $(($(bl_elapsed) + t_round)) -gt "$BL_BUDGET" ]; then
        bl_say "timed round $r of $repeat skipped: a round takes ~${t_round}s, budget ${BL_BUDGET}s"
        break
    fi
    timed_round "$r"
    r=$((r + 1))
done
bl_end

# ---- report ----------------------------------------------------------------
bl_publish "$docdir/bench-results.jsonl"
bl_say "all runs done in $(bl_elapsed)s ($BL_FAILED failed, $BL_SKIPPED skipped);" \
    "writing $readme, $docdir/"
report=(python3 scripts/bench_report.py --results "$docdir/bench-results.jsonl"
    --readme "$readme" --doc "$docdir")
[ "$plots" = 1 ] || report+=(--no-plots)
"${report[@]}"
bl_say "done in $(bl_elapsed)s: $readme (Benchmark results), $docdir/bench-results.jsonl" \
    "$([ "$plots" = 1 ] && echo ", $docdir/bench-time.png, $docdir/bench-bytes.png")"
