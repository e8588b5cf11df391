#!/bin/sh
# openmpi-latency.sh: builds tests/bench/mpi_latency.c for Open MPI into
# BUILD/bench/mpi_latency_openmpi, installing Open MPI first when it is
# missing.  For benchmarks only: make builds the same source for MPICH
# (BUILD/bench/mpi_latency); this build, against the other MPI, is never
# part of make all or make check.  Run it with mpiexec.openmpi (as root
# with OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
#
#   scripts/openmpi-latency.sh [BUILD]      BUILD defaults to build
# Prints the program's path on success.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
cd "$root"
sh scripts/setup.sh openmpi-bin libopenmpi-dev
for tool in mpicc.openmpi mpiexec.openmpi; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "openmpi-latency: $tool not found" >&2; exit 1; }
done
mkdir -p "$build/bench"
out=$build/bench/mpi_latency_openmpi
# the Makefile's language and warning flags, none of its MPICH paths
mpicc.openmpi -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -Wshadow \
    -Wstrict-prototypes tests/bench/mpi_latency.c -o "$out"
echo "$out"
