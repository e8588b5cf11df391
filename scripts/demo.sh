#!/bin/sh
# make demo: the CG demo at P = 2, mode full, to ||r||/||b|| < 1e-10: the
# table of paper 003's Table 1 categories with the residual and the solution
# error ||x - 1||/sqrt(n), then the same solve with the SSOR preconditioner;
# the sparse CG on a 2-D Laplacian with block Jacobi beside its sequential
# CSR twin; then BiCGSTAB, PCG on user operators, GMRES and Lanczos, each beside
# its plain-CBLAS twin.
set -eu
build=${1:-build}
if [ -x "$build/bin/deso-cg" ]; then
    run() { OPENBLAS_NUM_THREADS=1 mpiexec.mpich -n 2 "$build/bin/deso-cg" \
                --n 2000 --iters 100 --tol 1e-10 --mode full "$@"; }
    run
    echo
    run --precond ssor
    echo
    # the sparse CG (a 2-D Laplacian, block Jacobi) beside its CSR twin
    OPENBLAS_NUM_THREADS=1 mpiexec.mpich -n 2 "$build/bin/deso-cg" \
        --gen lap2d:100 --iters 1000 --tol 1e-10 --mode full --precond bjacobi
    OPENBLAS_NUM_THREADS=1 "$build/bin/deso-cg-csr" --gen lap2d:100 \
        --iters 1000 --tol 1e-10 --precond bjacobi --blocks 2
    echo
    # the Krylov examples beside their plain-CBLAS twins (final lines)
    for prog in bicgstab pcg gmres lanczos; do
        OPENBLAS_NUM_THREADS=1 mpiexec.mpich -n 2 "$build/bin/deso-$prog" --mode full
        OPENBLAS_NUM_THREADS=1 "$build/bin/deso-$prog-cblas"
    done
else
    echo "deso: built into $build/; nothing to demo yet (deso-cg is not written yet)"
fi
