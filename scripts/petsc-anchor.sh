#!/bin/sh
# petsc-anchor.sh: builds the PETSc benchmark anchor (tests/bench/cg_petsc.c)
# into BUILD/bench/cg_petsc, installing Debian's PETSc first when it is
# missing.  For benchmarks only: deso never links PETSc and make check never
# needs it.  Debian builds PETSc on Open MPI, so the anchor is compiled with
# mpicc.openmpi and must be run with mpiexec.openmpi (as root with
# OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
#
#   scripts/petsc-anchor.sh [BUILD]      BUILD defaults to build
# Prints the anchor's path on success.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
cd "$root"
# Debian's PETSc (Open MPI comes with it), installed when missing
sh scripts/setup.sh libpetsc-real3.18-dev
for tool in mpicc.openmpi mpiexec.openmpi pkg-config; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "petsc-anchor: $tool not found" >&2; exit 1; }
done
# PETSc's own .pc (its Cflags name no MPI; mpicc.openmpi supplies it)
pkg-config --exists petsc ||
    { echo "petsc-anchor: pkg-config does not know petsc" >&2; exit 1; }
mkdir -p "$build/bench"
out=$build/bench/cg_petsc
# shellcheck disable=SC2046
mpicc.openmpi -O2 -Wall -Wextra -Werror -I tests/bench \
    $(pkg-config --cflags petsc) tests/bench/cg_petsc.c -o "$out" \
    $(pkg-config --libs petsc) -lm
echo "$out"
