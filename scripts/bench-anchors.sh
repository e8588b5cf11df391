#!/bin/sh
# bench-anchors.sh: runs the anchors deso's CG is compared against and prints
# their JSON lines (one per run) on stdout:
#   read_bw   memory read bandwidth and one dgemv's bandwidth, P = 1 and 2
#   cg_seq    sequential CBLAS CG, P = 1
#   cg_pblas  hand-written ScaLAPACK/PBLAS CG, P = 1 and 2
# All with OPENBLAS_NUM_THREADS=1 (doc/DESIGN.md, "Measuring on this kind of
# machine").
#
#   scripts/bench-anchors.sh [BUILD]      BUILD defaults to build
# Environment: NS (matrix sizes, default "3600 8000"), ITERS (default 50),
#   TOL (default 0: run all iterations), NPS (default "1 2"), MPIEXEC.
set -eu
build=${1:-${BUILD:-build}}
ns=${NS:-"3600 8000"}
iters=${ITERS:-50}
tol=${TOL:-0}
nps=${NPS:-"1 2"}
launch=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1

for b in read_bw cg_seq cg_pblas; do
    if [ ! -x "$build/bench/$b" ]; then
        make -s BUILD="$build" "$build/bench/$b" >&2 || {
            echo "bench-anchors: cannot build $build/bench/$b" >&2
            exit 1
        }
    fi
done

run() { timeout --kill-after=10 900 "$@"; }

for n in $ns; do
    for np in $nps; do
        run "$launch" -n "$np" "$build/bench/read_bw" --n "$n" --reps 3 --json
    done
    run "$build/bench/cg_seq" --n "$n" --iters "$iters" --tol "$tol" --json
    for np in $nps; do
        run "$launch" -n "$np" "$build/bench/cg_pblas" --n "$n" --iters "$iters" \
            --tol "$tol" --json
    done
done
