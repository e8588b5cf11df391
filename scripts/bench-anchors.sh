#!/bin/bash
# bench-anchors.sh: runs the anchors deso's CG is compared against and prints
# their records on stdout, one JSON line each, in the format of
# scripts/bench_lib.sh (a meta record, one record per run with the program's
# own line under "out", an end record):
#   read_bw   memory read bandwidth and one dgemv's bandwidth, P = 1 and 2
#   cg_seq    sequential CBLAS CG, P = 1
#   cg_pblas  hand-written ScaLAPACK/PBLAS CG, P = 1 and 2, on GRID_P (below)
# All with OPENBLAS_NUM_THREADS=1 (doc/DESIGN.md, "Measuring on this kind of
# machine"), every run under a timeout.  scripts/bench.sh runs the same
# programs, beside deso, for the README.
#
#   scripts/bench-anchors.sh [BUILD]      BUILD defaults to build
# Environment: NS (matrix sizes, default "3600 8000"), ITERS (default 50),
#   TOL (default 0: run all iterations), NPS (default "1 2"), GRID_2 (the grid
#   of cg_pblas at P = 2, default 2x1; other P: its own most square grid),
#   TIMEOUT (seconds per run, default 900), BUDGET (seconds, default 3600),
#   MPIEXEC.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD:-build}}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
cd "$root"
# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

ns=${NS:-"3600 8000"}
iters=${ITERS:-50}
tol=${TOL:-0}
nps=${NPS:-"1 2"}
grid2=${GRID_2:-2x1}
launch=${MPIEXEC:-mpiexec.mpich}
BL_TIMEOUT=${TIMEOUT:-900}
BL_BUDGET=${BUDGET:-3600}
BL_GRACE=60
export OPENBLAS_NUM_THREADS=1

bl_init bench-anchors
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
for b in read_bw cg_seq cg_pblas; do
    if [ ! -x "$build/bench/$b" ]; then
        make -s BUILD="$build" "$build/bench/$b" >&2 || bl_die "cannot build $build/bench/$b"
    fi
done

bl_clock_start
bl_meta anchors "$(printf '"ns":%s,"iters":%s,"tol":%s,"nps":%s,"grid_2":%s' \
    "$(bl_json_list "$ns")" "$iters" "$tol" "$(bl_json_list "$nps")" "$(bl_json_str "$grid2")")"
for n in $ns; do
    for np in $nps; do
        bl_run read_bw "\"impl\":\"read_bw\",\"n\":$n,\"p\":$np" "read_bw n=$n P=$np" \
            "$BL_TIMEOUT" "$launch" -n "$np" "$build/bench/read_bw" --n "$n" --reps 3 --json
    done
    bl_run anchor "\"impl\":\"seq\",\"n\":$n,\"p\":1,\"iters\":$iters,\"grid\":\"1x1\"" \
        "cg_seq n=$n" "$BL_TIMEOUT" "$build/bench/cg_seq" --n "$n" --iters "$iters" \
        --tol "$tol" --json
    for np in $nps; do
        grid=()
        asked="\"impl\":\"pblas\",\"n\":$n,\"p\":$np,\"iters\":$iters"
        if [ "$np" -eq 2 ]; then
            grid=(--grid "$grid2")
            asked="$asked,\"grid\":\"$grid2\""
        fi
        bl_run anchor "$asked" "cg_pblas n=$n P=$np" "$BL_TIMEOUT" "$launch" -n "$np" \
            "$build/bench/cg_pblas" --n "$n" --iters "$iters" --tol "$tol" "${grid[@]}" --json
    done
done
bl_end
cat "$BL_RESULTS"
