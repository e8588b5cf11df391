#!/usr/bin/env python3
"""bench_report.py: the README's benchmark sections, generated from raw results.

    python3 scripts/bench_report.py          # every section, from doc/*.jsonl
                                             # (paths from the repository root)
    python3 scripts/bench_report.py --results doc/bench-results.jsonl \\
        [--results doc/bench-remap.jsonl] [--results doc/bench-sweep.jsonl] \\
        [--results doc/bench-counts.jsonl] [--results doc/bench-overhead.jsonl] \\
        [--results doc/bench-sparse.jsonl] [--results doc/bench-sparse-counts.jsonl] \\
        [--readme README.md] [--doc doc] [--no-plots] [--print]
    python3 scripts/bench_report.py --ooc doc/bench-ooc.jsonl

Reads only the JSON-lines files written by scripts/bench.sh (suite "cg"),
scripts/bench-remap.sh (suite "remap"), scripts/bench-sweep.sh (suite
"sweep"), scripts/bench-counts.sh (suite "counts"),
scripts/bench-overhead.sh (suite "overhead"), scripts/bench-sparse.sh
(suite "sparse") and scripts/bench-sparse-counts.sh (suite "sparse-counts")
through
scripts/bench_lib.sh: a meta record, one record per run {"bench", "asked",
"label", "out" | "failed" | "skipped"}, an end record.
Writes, per file, the README's section between its markers (cg:
<!-- bench:begin --> / <!-- bench:end -->; remap: <!-- bench-remap:begin -->
/ <!-- bench-remap:end -->; sweep: <!-- sweep:begin --> / <!-- sweep:end -->;
counts: <!-- counts:begin --> / <!-- counts:end -->; overhead:
<!-- overhead:begin --> / <!-- overhead:end -->; sparse:
<!-- bench-sparse:begin --> / <!-- bench-sparse:end -->; sparse-counts:
<!-- bench-sparse-counts:begin --> / <!-- bench-sparse-counts:end -->)
and gnuplot PNGs in --doc (cg: two, sweep: one).  --ooc reads
scripts/bench-ooc.sh's lines instead (one per run, no meta record) and
writes <!-- bench-ooc:begin --> / <!-- bench-ooc:end -->.  Every figure in
a section comes from the file; a figure that compares two programs uses only their
time_loop (each program's solver loop, barrier to barrier, the slowest
rank's), and only when both ran the iterations asked (cg: on the same grid;
sweep: each on the grid asked, where one was).  Only the standard library is used;
the work is done by the modules in scripts/benchreport/.
"""
import argparse
import os
import sys

# The modules live in scripts/benchreport/, beside this script: make them
# importable whatever the working directory, and leave no __pycache__ behind
# in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from benchreport.cg import cg_section
from benchreport.counts import counts_section
from benchreport.ooc import ooc_section
from benchreport.overhead import overhead_section
from benchreport.plots import plots
from benchreport.readme import MARKERS, write_readme
from benchreport.records import Results
from benchreport.remap import remap_section
from benchreport.sparse import sparse_section
from benchreport.sparse_counts import sparse_counts_section
from benchreport.sweep import sweep_section
from benchreport.sweep_plot import sweep_plot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RESULTS = {"cg": os.path.join(ROOT, "doc", "bench-results.jsonl"),
                   "remap": os.path.join(ROOT, "doc", "bench-remap.jsonl"),
                   "sweep": os.path.join(ROOT, "doc", "bench-sweep.jsonl"),
                   "counts": os.path.join(ROOT, "doc", "bench-counts.jsonl"),
                   "overhead": os.path.join(ROOT, "doc", "bench-overhead.jsonl"),
                   "sparse": os.path.join(ROOT, "doc", "bench-sparse.jsonl"),
                   "sparse-counts": os.path.join(ROOT, "doc", "bench-sparse-counts.jsonl")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", action="append",
                    help="a results file (repeatable); default: doc/bench-results.jsonl,"
                    " doc/bench-remap.jsonl, doc/bench-sweep.jsonl, doc/bench-counts.jsonl,"
                    " doc/bench-overhead.jsonl, doc/bench-sparse.jsonl and"
                    " doc/bench-sparse-counts.jsonl, those"
                    " that exist")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "doc"), help="where the plots go")
    ap.add_argument("--no-plots", action="store_true", help="no gnuplot, no PNGs")
    ap.add_argument("--print", action="store_true", help="print the sections on stdout too")
    ap.add_argument("--ooc", help="scripts/bench-ooc.sh's results: only that section")
    a = ap.parse_args()
    if a.ooc:
        here = os.path.dirname(os.path.abspath(a.readme))
        body = ooc_section(a.ooc, os.path.relpath(a.ooc, here))
        write_readme(a.readme, "ooc", body)
        print(f"bench_report: {a.ooc} -> {a.readme} (ooc section)", file=sys.stderr)
        if a.print:
            sys.stdout.write(body)
        return 0
    paths = a.results or [p for p in DEFAULT_RESULTS.values() if os.path.exists(p)]
    if not paths:
        print("bench_report: no results: run scripts/bench.sh, scripts/bench-remap.sh or"
              " scripts/bench-sweep.sh first, or pass --results FILE", file=sys.stderr)
        return 1
    for path in paths:
        try:
            res = Results(path)
        except OSError as e:
            print(f"bench_report: {path}: {e.strerror}", file=sys.stderr)
            return 1
        if res.suite not in MARKERS:
            print(f"bench_report: {path}: unknown suite '{res.suite}'", file=sys.stderr)
            return 1
        here = os.path.dirname(os.path.abspath(a.readme))
        link = os.path.relpath(path, here)
        made = []
        draw = {"cg": plots, "sweep": sweep_plot}.get(res.suite)
        if draw is not None and not a.no_plots:
            os.makedirs(a.doc, exist_ok=True)
            try:
                made = [(os.path.relpath(os.path.join(a.doc, f), here), alt)
                        for f, alt in draw(res, a.doc)]
            except RuntimeError as e:
                print(f"bench_report: {e}", file=sys.stderr)
                return 1
        if res.suite == "cg":
            body = cg_section(res, link, made)
        elif res.suite == "sweep":
            body = sweep_section(res, link, made)
        elif res.suite == "counts":
            body = counts_section(res, link)
        elif res.suite == "overhead":
            body = overhead_section(res, link)
        elif res.suite == "sparse":
            body = sparse_section(res, link)
        elif res.suite == "sparse-counts":
            body = sparse_counts_section(res, link)
        else:
            body = remap_section(res, link)
        write_readme(a.readme, res.suite, body)
        print(f"bench_report: {path} -> {a.readme} ({res.suite} section)", file=sys.stderr)
        if a.print:
            sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
