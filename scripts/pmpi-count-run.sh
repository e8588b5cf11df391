#!/usr/bin/env bash
# pmpi-count-run.sh LIB NP PROGRAM ARGS...: runs PROGRAM on NP MPICH ranks
# with the PMPI interposer LIB (tests/pmpi) preloaded, then prints one JSON
# line: the program's own last JSON line with a "pmpi" member added, the
# interposer's totals summed over the ranks (every MPI call the processes
# made, start-up and set-up included; see tests/pmpi/pmpi_count.h).  For
# the communication benchmark (scripts/bench-counts.sh), which takes
# differences between runs of different iteration counts.
set -euo pipefail
lib=$1 np=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/deso-pmpi.XXXXXX")
trap 'rm -rf "$work"' EXIT
PMPI_COUNT_OUT=$work/ranks.jsonl "${MPIEXEC:-mpiexec.mpich}" -n "$np" \
    -env LD_PRELOAD "$lib" -env PMPI_COUNT_OUT "$work/ranks.jsonl" "$@" >"$work/out"
python3 - "$work/out" "$work/ranks.jsonl" "$np" <<'PY'
import json, sys
out, ranks, np = sys.argv[1], sys.argv[2], int(sys.argv[3])
prog = None
for line in open(out, encoding="utf-8", errors="replace"):
    line = line.strip()
    if line.startswith("{"):
        try:
            prog = json.loads(line)
        except ValueError:
            pass
if not isinstance(prog, dict):
    sys.exit("pmpi-count-run: the program printed no JSON line")
total, seen = {}, set()
for line in open(ranks, encoding="utf-8"):
    d = json.loads(line)
    seen.add(d.pop("rank"))
    for k, v in d.items():
        total[k] = total.get(k, 0) + v
if len(seen) != np:
    sys.exit(f"pmpi-count-run: totals from {len(seen)} ranks of {np}")
prog["pmpi"] = total
print(json.dumps(prog, separators=(",", ":")))
PY
