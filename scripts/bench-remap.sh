#!/bin/bash
# bench-remap.sh [BUILD]: deso's remap beside ScaLAPACK's pdgemr2d at P = 2
# (make bench-remap; a benchmark, not a test).
#
# Cases: a vector of VEC doubles (1 x 2 ranks) and an MAT x MAT matrix (2 x 1
# grid), each for cyclic(3) -> cyclic(5), cyclic(64) -> cyclic(1),
# block -> cyclic(1) and identical layouts (cyclic(64) both sides; deso also
# in place, where nothing moves), and the matrix's grid change 2x1 with
# 64 x 64 blocks -> 1x2 with 1 x 1.  The real remaps run three times: source
# arrays from malloc (messages through the shared-memory rings), from
# deso_redist_array_alloc (receivers read the sources in place: one copy),
# and from malloc over MPI (DESO_REMAP_SHM=0); pdgemr2d runs on the same
# arrays.  Each run also reports its plan time (time_plan) and its first
# execution (time_first): (plan + first) / pdgemr2d is the one-shot ratio.  Every case runs RUNS times, in rounds
# (every case once, then again), so that the machine's drift spreads over
# all cases alike.
#
# One run is one process (deso-remap --run --compare-scalapack --memcpy):
# it verifies the first remap, then times REPS remaps by deso and REPS by
# pdgemr2d, each from a barrier, the mean of the slowest rank's time, and
# REPS memcpy/remap pairs (every rank copies its source array with memcpy
# at once, then one remap; the median of the REPS ratios, so the drift
# cancels).  The report (scripts/bench_report.py) takes the median over the
# runs of each figure, and the range of the per-run ratio deso / pdgemr2d;
# bandwidth, one definition for both sides: array bytes (m * n * 8, the
# global array, counted once) / time.
#
# Raw results: DOC/bench-remap.jsonl (format: scripts/bench_lib.sh); the
# README's section between <!-- bench-remap:begin --> and
# <!-- bench-remap:end --> is generated from that file alone, again without
# running anything by
#   python3 scripts/bench_report.py --results doc/bench-remap.jsonl
#
# Environment (defaults: full / quick):
#   BENCH_QUICK   1: the smoke version                  0
#   REPS          timed executions per run              15 / 3
#   RUNS          runs per case                         3 / 1
#   VEC           vector length                         16777216 (2^24) / 65536
#   MAT           matrix order                          4000 / 256
#   BENCH_BUDGET  seconds: no run starts after it       900 / 120
#   BENCH_TIMEOUT seconds per run                       300 / 60
#   BENCH_README, BENCH_DOC   where to write            README.md, doc
#   MPIEXEC       the launcher                          mpiexec.mpich
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

# shellcheck source=scripts/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
bl_enter "${1:-build}"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    d_reps=3 d_runs=1 d_vec=65536 d_mat=256 d_budget=120 d_timeout=60 d_grace=20
else
    d_reps=15 d_runs=3 d_vec=16777216 d_mat=4000 d_budget=900 d_timeout=300 d_grace=60
fi
reps=${REPS:-$d_reps}
runs=${RUNS:-$d_runs}
vec=${VEC:-$d_vec}
mat=${MAT:-$d_mat}
BL_BUDGET=${BENCH_BUDGET:-$d_budget}
BL_GRACE=$d_grace
BL_TIMEOUT=${BENCH_TIMEOUT:-$d_timeout}
readme=${BENCH_README:-README.md}
docdir=${BENCH_DOC:-doc}
launch=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1

bl_init bench-remap
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
bl_need make "deso-remap is built with it"
remap=$build/bin/deso-remap
if ! make --no-print-directory -s BUILD="$build" "$remap" >"$BL_TMP/make.log" 2>&1; then
    tail -n 5 "$BL_TMP/make.log" >&2
    [ -x "$remap" ] || bl_die "cannot build $remap"
    bl_say "make $remap failed; using the existing binary"
fi

# The cases: "SHAPE:LAYOUT:ARRAYS" words (ARRAYS "mpi": malloc arrays with
# the shared-memory transport off, DESO_REMAP_SHM=0); case_run turns one
# into options.
cases=""
for shape in vector matrix; do
    for arrays in malloc shared mpi; do
        for layout in c3-c5 c64-c1 block-c1; do
            cases="$cases $shape:$layout:$arrays"
        done
    done
    [ "$shape" = matrix ] && cases="$cases matrix:grid:malloc matrix:grid:mpi"
    cases="$cases $shape:same:malloc $shape:inplace:malloc"
done

# case_run ASKED_VAR ARGS_VAR LABEL_VAR ENV_VAR CASE (namerefs: the caller's
# variables; ENV_VAR gets the run's environment, an env command)
# shellcheck disable=SC2034
case_run() {
    local -n c_asked=$1 c_args=$2 c_label=$3 c_env=$4
    local shape layout arrays len name change via # len: a block's length
    IFS=: read -r shape layout arrays <<<"$5"
    via=shm c_env=(env)
    if [ "$arrays" = mpi ]; then
        arrays=malloc via=mpi c_env=(env DESO_REMAP_SHM=0)
    fi
    if [ "$shape" = vector ]; then
        len=$(((vec + 1) / 2)) name="vector of $vec"
        c_args=(--P 2 --Q 2 --n "$vec")
    else
        len=$(((mat + 1) / 2)) name="matrix $mat x $mat"
        c_args=(--m "$mat" --n "$mat" --grid 2x1 --grid2 2x1 --nb "$mat" --nb2 "$mat")
    fi
    case $layout in
    c3-c5) change="cyclic(3) -> cyclic(5)" c_args+=(--r 3 --s 5) ;;
    c64-c1) change="cyclic(64) -> cyclic(1)" c_args+=(--r 64 --s 1) ;;
    block-c1) change="block -> cyclic(1)" c_args+=(--r "$len" --s 1) ;;
    same) change="identical cyclic(64)" c_args+=(--r 64 --s 64) ;;
    inplace) change="identical, deso in place" c_args+=(--r 64 --s 64 --in-place) ;;
    grid)
        change="2x1 grid, 64 x 64 blocks -> 1x2 grid, 1 x 1"
        c_args=(--m "$mat" --n "$mat" --grid 2x1 --grid2 1x2 --mb 64 --nb 64 --mb2 1 --nb2 1)
        ;;
    esac
    [ "$arrays" = shared ] && c_args+=(--shared-arrays)
    c_asked=$(printf '"shape":"%s","layout":"%s","arrays":"%s","via":"%s","case":%s,"change":%s,"reps":%s,"ranks":2' \
        "$shape" "$layout" "$arrays" "$via" "$(bl_json_str "$name")" "$(bl_json_str "$change")" "$reps")
    c_label="$name, $change, $arrays arrays, $via"
}

bl_clock_start
bl_meta remap "$(printf '"quick":%s,"reps":%s,"runs":%s,"vec":%s,"mat":%s,"ranks":2,"budget":%s,"timeout":%s,"build":%s,"launcher":%s' \
    "$([ "$quick" = 1 ] && echo true || echo false)" "$reps" "$runs" "$vec" "$mat" \
    "$BL_BUDGET" "$BL_TIMEOUT" "$(bl_json_str "$build")" "$(bl_json_str "$launch")")"
bl_say "start: vector $vec, matrix $mat^2, $runs runs of $reps reps per case;" \
    "load average $(bl_loadavg); budget ${BL_BUDGET}s"

asked="" args=() label="" envs=()
for ((round = 1; round <= runs; round++)); do
    for c in $cases; do
        case_run asked args label envs "$c"
        bl_run remap "$asked,\"round\":$round" "$label (run $round of $runs)" "$BL_TIMEOUT" \
            "${envs[@]}" "$launch" -n 2 "$remap" "${args[@]}" --run --json --compare-scalapack \
            --memcpy --reps "$reps"
    done
done
bl_end

bl_publish "$docdir/bench-remap.jsonl"
bl_say "all runs done in $(bl_elapsed)s ($BL_FAILED failed, $BL_SKIPPED skipped); writing $readme"
python3 scripts/bench_report.py --results "$docdir/bench-remap.jsonl" --readme "$readme" \
    --doc "$docdir"
bl_say "done: $readme (Remap benchmark), $docdir/bench-remap.jsonl"
