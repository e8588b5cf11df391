#!/usr/bin/env bash
# callgrind-run.sh NP PROGRAM ARGS...: runs PROGRAM on NP MPICH ranks (NP = 0:
# one process, no launcher) under valgrind's callgrind, then prints one JSON
# line: the program's own last JSON line with an "instr" member added, the
# instructions its ranks executed, summed over the ranks, by category
# (scripts/callgrind_categories.py).
# For the overhead benchmark (scripts/bench-overhead.sh), which takes
# differences between runs of different iteration counts, so that start-up,
# set-up and the first plans cancel.  Instructions, not times: the count of
# a run does not depend on what else the machine runs, except where a rank
# spins waiting for a message (MPI's progress engine: its own category).
set -euo pipefail
np=$1
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/deso-callgrind.XXXXXX")
trap 'rm -rf "$work"' EXIT
vg=(valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p.out")
launch=()
[ "$np" -gt 0 ] && launch=("${MPIEXEC:-mpiexec.mpich}" -n "$np")
if ! "${launch[@]}" "${vg[@]}" "$@" >"$work/out" 2>"$work/err"; then
    tail -n 5 "$work/err" >&2
    exit 1
fi
python3 "$(dirname "${BASH_SOURCE[0]}")/callgrind_categories.py" "$work/out" \
    "$work"/cg.*.out
