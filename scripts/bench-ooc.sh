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
# Both end with the disk's sequential read rate on the out-of-core run's
# own local array files, in the same run (deso-cg --read-rate, after the
# solve: deso_mat_read_rate, every rank reading its file at once around
# the page cache in requests of one slab).  The streamed rate is the bytes
# all ranks read from their files over the CG loop's time (the vector
# operations included), so it is a lower bound of dgemv's.  The streamed
# slabs are read around the page cache too (O_DIRECT) where the file
# system allows it, so even the small case, whose matrix fits in memory,
# measures the disk.
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
    --ooc-dir "$dir" --read-rate

# the disk's rate on the same files, from the out-of-core run's own line
tail -n 1 "$out" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
cg = d["cg"]
out = {"case": d["case"], "run": "odirect-read", "dir": d["dir"],
       "date": d["date"], "readers": cg["p"], "files": "same",
       "bytes": cg["n"] * cg["n"] * 8, "gbs": round(cg["read_rate"] / 1e9, 3)}
print(json.dumps(out, separators=(",", ":")))
' >>"$out"
echo "the same files read at once by the $P ranks: $(tail -n 1 "$out")"
python3 scripts/bench_report.py --ooc "$out"
