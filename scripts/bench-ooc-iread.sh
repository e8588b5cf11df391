#!/usr/bin/env bash
# make bench-ooc-iread: how a streamed out-of-core product should overlap
# its reads with its dgemvs: a reader thread (what deso does) against
# MPI-IO's non-blocking reads (MPI_File_iread_at), with a read-then-compute
# pass as the reference, on the same local files (tests/bench/ooc_iread.c).
#
#   bash scripts/bench-ooc-iread.sh BUILD [P] [MB] [SLAB_MB] [ROUNDS]
#
# Defaults: P = 2 ranks, 512 MB per rank, 16 MB slabs, 5 rounds; each
# round runs the three methods in a rotated order with the files' pages
# dropped from the page cache before each run, so each run reads the disk.
# The machine may be shared: the load average before and after is kept
# with the result, and the methods alternate so that a busy spell hits all.
# Result: one JSON line appended to doc/bench-ooc-iread.jsonl.
set -euo pipefail
build=${1:-build}
P=${2:-2} mb=${3:-512} slab=${4:-16} rounds=${5:-5}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${DESO_OOC_DIR:-${TMPDIR:-/tmp}}
out=doc/bench-ooc-iread.jsonl
make --no-print-directory BUILD="$build" "$build/bench/ooc_iread" >/dev/null
export OPENBLAS_NUM_THREADS=1
load() { cut -d' ' -f1-3 /proc/loadavg | tr ' ' ','; }
before=$(load)
line=$(DESO_OOC_DIR=$dir mpiexec.mpich -n "$P" "$build/bench/ooc_iread" \
    --mb "$mb" --slab-mb "$slab" --pairs "$rounds" --json | tail -n 1)
after=$(load)
printf '{"date":"%s","dir":"%s","load_before":[%s],"load_after":[%s],"ooc_iread":%s}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$dir" "$before" "$after" "$line" >>"$out"
echo "$line (load average before $before, after $after)"
