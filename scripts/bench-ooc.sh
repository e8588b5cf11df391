#!/usr/bin/env bash
# make bench-ooc: CG on an out-of-core matrix against the same CG in core
# and against the disk.
#
#   bash scripts/bench-ooc.sh BUILD [small|large]
#
# small (the default): n = 4000 at P = 2 (a 128 MB matrix), 5 iterations,
#   in core and then out of core with a 16 MiB budget per rank: the
#   streaming overhead on a matrix that fits.
# large: n = 67000 at P = 2 (about 36 GB, 1.5 times this machine's 24 GiB),
#   3 iterations with a 2 GiB budget; refused unless the directory has the
#   room (checked with df first).
# Both end with the O_DIRECT sequential read bandwidth of the disk as the
# CG streams it: P files, each of one rank's local part, in the same
# directory, read at the same time by P readers (dd iflag=direct), measured
# in the same run; the rate is their bytes over the time the last reader
# took.  The local array files themselves have no name, so the disk is
# measured on files of their size beside them.  The streamed rate is the
# bytes all ranks read from their files over the CG loop's time (the
# vector operations included), so it is a lower bound of dgemv's, and it
# is set against the P readers' rate, like with like (one reader alone
# would leave the disk's queue half as full as the P ranks do).  A file
# just written may still be in the page cache, which the CG's reads can
# hit and O_DIRECT cannot: the small case's matrix fits in memory, so its
# share may pass 100%; only a matrix larger than memory (the large case)
# measures the disk itself.
# Each deso-cg line carries every rank's peak resident memory (ru_maxrss,
# taken by the rank itself: GNU time around mpiexec would see the launcher,
# not each rank) and the bound it must stay within, budget + vectors +
# 64 MiB.
# Results: one JSON line per run appended to doc/bench-ooc.jsonl (the runs
# of one invocation share its "date"); then scripts/bench_report.py --ooc
# writes README's out-of-core table from that file alone.
set -euo pipefail
# shellcheck source=scripts/bench_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bl_enter "${1:-build}"
which=${2:-small}
dir=${DESO_OOC_DIR:-${TMPDIR:-/tmp}}
out=doc/bench-ooc.jsonl
P=2
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
case $which in
small) n=4000 iters=5 limit=16M ;;
large) n=67000 iters=3 limit=2G ;;
*) echo "bench-ooc: the case is small or large, not '$which'" >&2; exit 2 ;;
esac

need=$((n * n * 8))
free=$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')
if [ "$free" -lt $((need + need / 10)) ]; then
    echo "bench-ooc: $dir has $free bytes free, the $which case needs" \
         "$need plus 10%: not run" >&2
    exit 1
fi

export OPENBLAS_NUM_THREADS=1
cg=("$build/bin/deso-cg" --n "$n" --iters "$iters" --tol 0 --grid 1x2 --json)

# one run: its JSON line with the case and the run's name in front
record() {
    local name=$1 line
    shift
    line=$("$@" | tail -n 1)
    printf '{"case":"%s","run":"%s","dir":"%s","date":"%s","cg":%s}\n' \
        "$which" "$name" "$dir" "$stamp" "$line" >>"$out"
    echo "$name: $line"
}

# in core only when it fits: the large case is larger than the machine
if [ "$which" = small ]; then
    record in-core mpiexec.mpich -n $P "${cg[@]}"
fi
record out-of-core mpiexec.mpich -n $P "${cg[@]}" --mem-limit "$limit" \
    --ooc-dir "$dir"

# the disk: one file of one rank's part per rank, written, then read back
# by P readers at once around the page cache
part=$((need / P))
count=$(((part + 8388607) / 8388608))
files=()
trap 'rm -f "${files[@]}"' EXIT
for ((r = 0; r < P; r++)); do
    files+=("$(mktemp "$dir/bench-ooc-XXXXXX")")
    dd if=/dev/zero of="${files[r]}" bs=8M count=$count oflag=direct \
        status=none
done
t0=$(date +%s.%N)
for f in "${files[@]}"; do
    dd if="$f" of=/dev/null bs=8M iflag=direct status=none &
done
wait
t1=$(date +%s.%N)
bytes=$((P * count * 8388608))
gbs=$(awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.3f", b / (z - a) / 1e9 }')
printf '{"case":"%s","run":"odirect-read","dir":"%s","date":"%s","readers":%d,"bytes":%s,"gbs":%s}\n' \
    "$which" "$dir" "$stamp" "$P" "$bytes" "$gbs" >>"$out"
echo "O_DIRECT read of $bytes bytes by $P readers at once: $gbs GB/s"
python3 scripts/bench_report.py --ooc "$out"
