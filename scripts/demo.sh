#!/bin/sh
# make demo: the CG demo at P = 2 on the default problem, mode full.
set -eu
build=${1:-build}
if [ -x "$build/bin/deso-cg" ]; then
    OPENBLAS_NUM_THREADS=1 mpiexec.mpich -n 2 "$build/bin/deso-cg" --n 2000 --iters 50 --mode full
else
    echo "deso: built into $build/; nothing to demo yet (deso-cg is not written yet)"
fi
