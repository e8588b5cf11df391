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

build=${1:-build}
pkg=libpetsc-real3.18-dev
if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO="sudo"
        else
            echo "petsc-anchor: $pkg is missing; run as root or install it" >&2
            exit 1
        fi
    fi
    echo "petsc-anchor: installing $pkg (Open MPI comes with it)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
fi
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
