#!/usr/bin/env python3
"""callgrind_categories.py OUT CALLGRIND_FILE...: one JSON line, the program's
last JSON line (in OUT) with "instr" added: the instructions the callgrind
files (one per rank) executed, summed, by category of the code that
executed them (self cost, so every instruction counts once):

  kernels   OpenBLAS and deso's kernel wrappers (blas/kernels*.c)
  mpi       MPICH and the transports under it (UCX, hwloc): the messages'
            cost and a rank's spinning while it waits for one
  pblas     ScaLAPACK's PBLAS and BLACS (the PBLAS anchor's library)
  record    deso recording calls: the public entry points, argument
            checks, DAG nodes, the SPMD hash, loop detection
  plan      deso finding the plan of a force: compiled-force match,
            preparation, the optimiser, the agreement's bookkeeping
  execute   deso running a plan's nodes: operand views, exchanges, the
            kernels' dispatch, reductions' calls, the performance log
  memory    deso making and freeing values, views and nodes (its recycling
            pools, runtime/handles.c, placement/alloc.c)
  stats     deso's statistics counters and clock readings
  program   the benchmark program's own code (its loop, its set-up)
  other     everything else: the C library (malloc, memcpy, memset,
            whoever calls them: MPICH allocates per message), the dynamic
            loader (start-up, which cancels in a difference)

A function inlined from a header is charged to the category of the file
that defines the function it was inlined into, when the same output shows
that function elsewhere; else to "other".  Used by scripts/callgrind-run.sh.
"""
import json
import re
import subprocess
import sys

LINE = re.compile(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?):(\S+)(?:\s+\[(.*)\])?\s*$")

DESO_FILES = {
    "record": ["api_record.c", "api_more.c", "api_op.c", "api_sparse.c", "api_data.c",
               "dag.c", "views.c", "period.c", "errh.c", "record_"],
    "plan": ["force.c", "compiled.c", "prepare.c", "agree.c", "optimizer/"],
    "memory": ["recycle.c", "placement/alloc.c", "handles.c"],
    "stats": ["deso/core/stats.c"],
}


# Functions of a file whose other functions are of another category.
DESO_FUNCTIONS = {"deso__value_find": "execute", "deso__handle_check_full": "record",
                  # a replayed call's compare against the expected one is
                  # what recording that call costs
                  "deso__replay_quick": "record", "deso__replay_call": "record"}


def by_object(obj):
    if "libopenblas" in obj:
        return "kernels"
    if any(k in obj for k in ("libmpich", "libuc", "libhwloc", "libpmi", "libfabric")):
        return "mpi"
    if "libscalapack" in obj:
        return "pblas"
    return None


def by_file(path):
    if re.search(r"(^|/)blas/kernels[^/]*\.c$", path):
        return "kernels"
    if re.search(r"(^|/)(examples|tests/bench)/", path):
        return "program"
    for cat, keys in DESO_FILES.items():
        if any(k in path for k in keys):
            return cat
    if re.search(r"(^|/)(deso|blas|placement)/.*\.c$", path):
        return "execute"
    return None


def counts(path):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            rows.append((int(m.group(1).replace(",", "")), m.group(2), m.group(3),
                         m.group(4) or ""))
    return rows


def categorise(rows):
    home = {}
    for _, path, fn, _ in rows:
        if path.endswith(".c") and by_file(path) is not None:
            home.setdefault(fn, DESO_FUNCTIONS.get(fn, by_file(path)))
    total = {}
    for n, path, fn, obj in rows:
        cat = by_object(obj)
        if cat is None and path.endswith(".c") and by_file(path) is not None:
            cat = DESO_FUNCTIONS.get(fn, by_file(path))
        if cat is None and path.endswith(".h"):
            cat = home.get(fn)
        cat = cat or "other"
        total[cat] = total.get(cat, 0) + n
    return total


def main():
    prog = None
    for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
        line = line.strip()
        if line.startswith("{"):
            try:
                prog = json.loads(line)
            except ValueError:
                pass
    if not isinstance(prog, dict):
        sys.exit("callgrind_categories: the program printed no JSON line")
    total = {}
    for path in sys.argv[2:]:
        for k, v in categorise(counts(path)).items():
            total[k] = total.get(k, 0) + v
    prog["instr"] = total
    prog["instr_ranks"] = len(sys.argv) - 2
    print(json.dumps(prog, separators=(",", ":")))


if __name__ == "__main__":
    main()
