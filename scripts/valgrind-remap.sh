#!/bin/sh
# valgrind-remap.sh [BUILD]: one remap plan executed 10^4 times at P = 2
# under valgrind (memcheck, full leak check); fails on any memory error or
# definite leak in deso.  Leaks that MPICH, UCX and hwloc make inside
# MPI_Init/MPI_Finalize are suppressed (not ours to fix), and so is the
# msync MPICH's MPI_Win_allocate_shared uses to probe its address space.
# Environment: MPIEXEC (default mpiexec.mpich), REPS (default 10000).
# Takes a few minutes: MPI busy-polls and valgrind serialises each rank.
set -eu
B=${1:-build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
REPS=${REPS:-10000}
make --no-print-directory BUILD="$B" "$B/bin/deso-remap" >/dev/null

supp=$(mktemp)
trap 'rm -f "$supp"' EXIT
cat >"$supp" <<'EOF'
{
   mpi_init_leaks
   Memcheck:Leak
   ...
   fun:PMPI_Init
}
{
   mpi_init_thread_leaks
   Memcheck:Leak
   ...
   fun:PMPI_Init_thread
}
{
   mpich_shared_window_msync_probe
   Memcheck:Param
   msync(start)
   ...
   fun:PMPI_Win_allocate_shared
}
{
   mpi_finalize_leaks
   Memcheck:Leak
   ...
   fun:PMPI_Finalize
}
{
   mpi_init_cond
   Memcheck:Cond
   ...
   fun:PMPI_Init
}
{
   mpi_init_value8
   Memcheck:Value8
   ...
   fun:PMPI_Init
}
EOF

# A 2-D remap with a shape change (2x1 -> 1x2), short runs on both sides,
# messages and a self copy on each rank.
# Every transport: shared memory (the default on one node) through the
# rings, shared memory with the sources read in place (single copy), MPI.
for mode in rings single mpi; do
    shm=1; arrays=
    [ "$mode" = mpi ] && shm=0
    [ "$mode" = single ] && arrays=--shared-arrays
    DESO_REMAP_SHM=$shm "$MPIEXEC" -n 2 valgrind -q --leak-check=full \
        --errors-for-leak-kinds=definite --error-exitcode=1 \
        --suppressions="$supp" \
        "$B/bin/deso-remap" --m 37 --n 29 --grid 2x1 --grid2 1x2 \
        --mb 3 --nb 2 --mb2 5 --nb2 3 --run --reps "$REPS" $arrays
done
echo "valgrind-remap: clean ($REPS executions of one plan at P = 2, each transport)"
