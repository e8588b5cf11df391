#!/usr/bin/env python3
"""bench_report.py: the README's benchmark sections, generated from raw results.

    python3 scripts/bench_report.py          # both sections, from doc/*.jsonl
                                             # (paths from the repository root)
    python3 scripts/bench_report.py --results doc/bench-results.jsonl \\
        [--results doc/bench-remap.jsonl] [--readme README.md] [--doc doc] \\
        [--no-plots] [--print]

Reads only the JSON-lines files written by scripts/bench.sh (suite "cg") and
scripts/bench-remap.sh (suite "remap") through scripts/bench_lib.sh: a meta
record, one record per run {"bench", "asked", "label", "out" | "failed" |
"skipped"}, an end record.  Writes, per file, the README's section between
its markers (cg: <!-- bench:begin --> / <!-- bench:end -->; remap:
<!-- bench-remap:begin --> / <!-- bench-remap:end -->) and, for cg, two
gnuplot PNGs in --doc.  Every figure in a section comes from the file; a
figure that compares two programs uses only their time_loop (each program's
solver loop, barrier to barrier, the slowest rank's), and only when both ran
the iterations asked on the same grid.  Only the standard library is used.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

COUNT_FIELDS = ("bytes_p2p", "msgs_p2p", "bytes_collective", "msgs_collective")
MARKERS = {"cg": ("<!-- bench:begin -->", "<!-- bench:end -->", "Benchmark results"),
           "remap": ("<!-- bench-remap:begin -->", "<!-- bench-remap:end -->",
                     "Remap benchmark (`make bench-remap`)")}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RESULTS = {"cg": os.path.join(ROOT, "doc", "bench-results.jsonl"),
                   "remap": os.path.join(ROOT, "doc", "bench-remap.jsonl")}


# ---- records ------------------------------------------------------------------

class Rec:
    """One run: what the driver asked for, and what the program printed."""

    def __init__(self, r):
        self.tag = r.get("bench", "?")
        self.label = r.get("label", "")
        self.failed = r.get("failed")
        self.skipped = r.get("skipped")
        if "asked" in r or "out" in r:
            self.asked = r.get("asked") or {}
            self.out = r.get("out") if self.failed is None and self.skipped is None else None
        else:  # the flat lines of older drivers: what was asked was not kept
            rest = {k: v for k, v in r.items() if k not in ("bench", "failed", "skipped")}
            bad = self.failed is not None or self.skipped is not None
            self.asked = rest if bad else {}
            self.out = None if bad else rest
        if not isinstance(self.out, dict):
            self.out = None

    @property
    def ok(self):
        return self.out is not None

    def key(self, k, default=None):
        """A field that identifies the run: asked, else printed."""
        if k in self.asked:
            return self.asked[k]
        return self.out.get(k, default) if self.out else default

    def num(self, k):
        return num(self.out, k)

    def state(self):
        """The word a table shows for a run without figures."""
        if self.skipped is not None:
            return "skipped"
        if self.failed is not None:
            return "failed"
        return "?"

    def iters_checked(self):
        """The program ran exactly the iterations asked (both known)."""
        a, o = self.asked.get("iters"), self.out.get("iters") if self.out else None
        return isinstance(a, int) and isinstance(o, int) and a == o

    def grid_checked(self):
        a, o = self.asked.get("grid"), self.out.get("grid") if self.out else None
        return a is not None and a == o


def num(d, key):
    """d[key] as a float, or None when absent or not a number."""
    v = d.get(key) if d else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


class Results:
    def __init__(self, path):
        self.path = path
        self.meta, self.end, self.recs = {}, {}, []
        with open(path, encoding="utf-8") as f:
            for k, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    print(f"bench_report: {path}:{k}: not JSON, ignored", file=sys.stderr)
                    continue
                if not isinstance(r, dict):
                    continue
                if r.get("bench") == "meta":
                    self.meta = r
                elif r.get("bench") == "end":
                    self.end = r
                else:
                    self.recs.append(Rec(r))
        # older drivers kept the settings beside the meta fields
        self.settings = self.meta.get("settings") or self.meta
        self.suite = self.meta.get("suite") or "cg"


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2


# ---- formatting -----------------------------------------------------------------

def ms(v):
    return "—" if v is None else f"{1e3 * v:.3f}"


def sig(v, digits=3):
    return "—" if v is None else f"{v:.{digits}g}"


def ratio(a, b, digits=3):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.{digits}g}"


def pct(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{100.0 * a / b:.1f}%"


def gbs(v):
    return "—" if v is None else f"{v:.2f}"


def count_str(v):
    if v is None:
        return "—"
    if abs(v - round(v)) < 1e-9:
        return f"{int(round(v)):,}"
    return f"{v:,.2f}"


def g2(v):
    """Two significant figures, without an exponent from 100 to 10^6."""
    return f"{v:.0f}" if 100 <= abs(v) < 1e6 else f"{v:.2g}"


def pct_num(v):
    """A percentage without its sign: whole numbers from 10 up."""
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.2g}"


def span(vals, fmt):
    """'a–b' in fmt, or one value when they are all the same."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    lo, hi = fmt(min(vals)), fmt(max(vals))
    return lo if lo == hi else f"{lo}–{hi}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def llc_bytes(s):
    """'307200K' -> bytes, or None."""
    s = str(s).strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    try:
        return int(s.rstrip("KkMmGg")) * mult
    except ValueError:
        return None


def provenance(res, script, target, link):
    """The first line of a section: where and when its figures were made."""
    m, e, s = res.meta, res.end, res.settings
    failed, skipped = e.get("failed"), e.get("skipped")
    runs = ""
    if failed is not None:
        runs = f"; {failed} runs failed" + (f", {skipped} skipped" if skipped is not None else "")
    cpu = m.get("cpu")
    return ("_Generated by `scripts/bench_report.py` from the raw results of `" + script
            + "` (`" + target + "`)"
            + (" in its quick mode (BENCH_QUICK=1: a smoke run, small sizes)"
               if s.get("quick") else "")
            + f", run on {m.get('date', '?')}, host {m.get('host', '?')}"
            + (f" ({cpu})" if cpu and cpu != "?" else "")
            + f", {m.get('cores', '?')} cores, load average {m.get('loadavg', '?')} at start,"
            f" {e.get('loadavg', '?')} at end, {e.get('seconds', '?')} s in all{runs}."
            f" OPENBLAS_NUM_THREADS={m.get('openblas_threads', '?')}. The machine is shared:"
            " read the timings as ratios within this run, not as absolute figures."
            f" Raw JSON lines: [{link}]({link}); `python3 scripts/bench_report.py --results"
            f" {link}` regenerates this section from them._")


def write_readme(path, suite, body):
    begin, end, heading = MARKERS[suite]
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    b, e = text.find(begin), text.find(end)
    if b >= 0 and e > b:
        text = text[:b + len(begin)] + "\n" + body + text[e:]
    else:
        if text and not text.endswith("\n"):
            text += "\n"
        text += f"\n## {heading}\n\n{begin}\n{body}{end}\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---- the CG suite (scripts/bench.sh) --------------------------------------------

def per_iter(r, key="time_loop"):
    """r's field per iteration it ran, or None."""
    if r is None or not r.ok:
        return None
    v, k = r.num(key), r.num("iters")
    return v / k if v is not None and k else None


def why_none(recs):
    """The word for a row whose runs gave nothing usable."""
    if not recs:
        return "—"
    if any(r.ok and not r.iters_checked() for r in recs):
        return "iterations unchecked" if any(r.ok and "iters" not in r.asked for r in recs) \
            else "iterations differ"
    if any(r.ok and r.num("time_loop") is None for r in recs):
        return "no time_loop"
    if any(r.ok and r.asked.get("grid") and not r.grid_checked() for r in recs):
        return "grid differs"
    return recs[0].state() if not recs[0].ok else "—"


class Counts:
    """Per-iteration counts of (mode, n, P) from runs at several iteration counts.

    exact: every run ran the iterations asked, on the grid asked, and the counts
    grew by the same whole number per iteration between every two of them
    (set-up and the final residual check cancel in the differences).
    mean: the same runs, but the growth was not the same whole number per
    iteration (the iterations differ from one another): the mean over the
    iterations between the first run and the last.
    single: one usable run only: its totals over its iterations (set-up included).
    """

    def __init__(self, recs):
        self.values, self.status, self.word, self.grid, self.ks = None, None, "—", None, []
        good = {}
        for r in recs:
            if (r.ok and r.iters_checked() and (r.grid_checked() or "grid" not in r.asked)
                    and all(r.num(f) is not None for f in COUNT_FIELDS)):
                good[int(r.asked["iters"])] = r
        grids = {r.out.get("grid") for r in good.values()}
        if len(grids) > 1:
            self.word = "grids differ"
            return
        if not good:
            self.word = why_none(recs)
            return
        self.grid = grids.pop()
        ks = sorted(good)
        self.ks = ks
        if len(ks) == 1:
            k = ks[0]
            if k > 0:
                self.values = {f: good[k].num(f) / k for f in COUNT_FIELDS}
                self.status = "single"
            return
        steady = True
        rates = None
        for k1, k2 in zip(ks, ks[1:]):
            dk = k2 - k1
            step = {}
            for f in COUNT_FIELDS:
                d = good[k2].num(f) - good[k1].num(f)
                if d != round(d) or round(d) % dk != 0:
                    steady = False
                step[f] = d / dk
            if rates is not None and step != rates:
                steady = False
            rates = step
        k1, k2 = ks[0], ks[-1]
        self.values = {f: (good[k2].num(f) - good[k1].num(f)) / (k2 - k1) for f in COUNT_FIELDS}
        self.status = "exact" if steady else "mean"

    def cell(self, f):
        v = count_str(self.values[f])
        return {"exact": v, "mean": f"≈{v}", "single": f"{v} ~"}[self.status]


class CgData:
    def __init__(self, res):
        self.res = res
        s = res.settings
        self.pingpong = None
        self.read_bw = {}  # (n, p) -> rec
        self.timed = {}    # (impl, mode, n, p) -> [rec]
        self.count = {}    # (mode, n, p) -> [rec]
        self.pairs = {}    # (anchor, n, p) -> {pair: {"a": rec, "b": rec}}
        for r in res.recs:
            impl = r.key("impl", "?")
            mode = r.key("mode", "") if impl == "deso" else ""
            n, p = int(r.key("n", 0) or 0), int(r.key("p", 0) or 0)
            if r.tag == "pingpong":
                self.pingpong = r
            elif r.tag == "read_bw":
                self.read_bw[(n, p)] = r
            elif r.tag == "timed":
                self.timed.setdefault((impl, mode, n, p), []).append(r)
            elif r.tag == "count":
                self.count.setdefault((mode, n, p), []).append(r)
            elif r.tag == "pair" and r.key("pair") is not None:
                side = r.asked.get("side") or ("b" if impl == "deso" else "a")
                anchor = impl if side == "a" else None
                key = (n, p)
                slot = self.pairs.setdefault(key, {}).setdefault(int(r.key("pair")), {})
                slot[side] = r
                if anchor:
                    slot["anchor"] = anchor
        self.ns = [int(x) for x in s.get("ns", sorted({k[2] for k in self.timed}))]
        self.timed_ps = [int(x) for x in s.get("timed_ps", [1, 2])]
        self.count_ps = [int(x) for x in s.get("count_ps", [])]
        self.count_ns = [int(x) for x in s.get("count_ns", [])]
        self.modes = list(s.get("modes", ["none", "affine", "full"]))
        self.have_deso = bool(s.get("deso", True))
        pp = self.pingpong if self.pingpong is not None and self.pingpong.ok else None
        self.alpha = pp.num("alpha") if pp else None
        self.beta = pp.num("beta") if pp else None

    def runs(self, impl, mode, n, p):
        return self.timed.get((impl, mode, n, p), [])

    def usable(self, impl, mode, n, p):
        """Timed runs that ran the iterations asked on the grid asked."""
        return [r for r in self.runs(impl, mode, n, p)
                if r.ok and r.iters_checked() and r.grid_checked()
                and (per_iter(r) or 0) > 0]

    def best(self, impl, mode, n, p):
        """The usable run with the least time_loop per iteration, or None."""
        good = self.usable(impl, mode, n, p)
        return min(good, key=per_iter) if good else None

    def counts(self, mode, n, p):
        return Counts(self.count.get((mode, n, p), []))

    def paired(self, n, p):
        """(ratios deso / anchor per valid pair, grids, iterations, incomplete
        pairs (a side failed, skipped or missing), invalid pairs (a side did
        not run the iterations or grid asked, or the sides differ))."""
        ratios, grids, iters, incomplete, invalid = [], set(), set(), 0, 0
        for _, slot in sorted(self.pairs.get((n, p), {}).items()):
            a, b = slot.get("a"), slot.get("b")
            if not (a and b and a.ok and b.ok):
                incomplete += 1
                continue
            if not (a.iters_checked() and b.iters_checked() and a.grid_checked()
                    and b.grid_checked() and a.out.get("grid") == b.out.get("grid")
                    and a.out.get("iters") == b.out.get("iters")
                    and (per_iter(a) or 0) > 0 and (per_iter(b) or 0) > 0):
                invalid += 1
                continue
            ratios.append(per_iter(b) / per_iter(a))
            grids.add(a.out.get("grid"))
            iters.add(a.out.get("iters"))
        return ratios, grids, iters, incomplete, invalid

    def model(self, mode, n, p):
        """(comm, compute, total) seconds per iteration of the cost model, or None."""
        c = self.counts(mode, n, p)
        if c.values is None or c.status == "single" or self.alpha is None or self.beta is None:
            return None
        comp1 = per_iter(self.best("deso", mode, n, 1), "time_compute")
        v = c.values
        comm = ((v["msgs_p2p"] + v["msgs_collective"]) * self.alpha
                + (v["bytes_p2p"] + v["bytes_collective"]) * self.beta)
        comp = comp1 / p if comp1 is not None else None
        return comm, comp, (comm + comp if comp is not None else None)

    def measured(self, mode, n, p, grid):
        """deso's measured time per iteration at P in `mode` on `grid`, or a word."""
        r = self.best("deso", mode, n, p)
        if r is None:
            return None, "—"
        if r.out.get("grid") != grid:
            return None, f"other grid ({r.out.get('grid')})"
        return per_iter(r), None


def matrix_bw(n, t):
    """Aggregate matrix bandwidth, GB/s: 8 n^2 bytes read once per time t."""
    return None if not t else 8.0 * n * n / t * 1e-9


def read_gbs(d, n, p):
    r = d.read_bw.get((n, p))
    return r.num("read_gbs") if r is not None and r.ok else None


def headline(d):
    rows = []

    def row(label, f):
        rows.append([label] + [f(n) for n in d.ns])

    def paired_cell(p):
        def f(n):
            ratios, grids, iters, incomplete, invalid = d.paired(n, p)
            left = "; ".join(w for w in (
                f"{incomplete} incomplete" if incomplete else "",
                f"{invalid} not run as asked" if invalid else "") if w)
            if not ratios:
                return "no pair" + (f" ({left})" if left else "")
            g = ", ".join(sorted(grids))
            it = ", ".join(str(i) for i in sorted(iters))
            how = ("one pair" if len(ratios) == 1 else
                   f"median of {len(ratios)} pairs, range {min(ratios):.3f}–{max(ratios):.3f}")
            return (f"**{median(ratios):.3f}** ({how}; grid {g}, {it} iterations"
                    + (f"; left out: {left}" if left else "") + ")")
        return f

    for p in d.timed_ps:
        anchor = "sequential OpenBLAS (cg_seq)" if p == 1 else "PBLAS (cg_pblas)"
        row(f"P={p} time/iter, deso full / {anchor}, paired runs", paired_cell(p))
    for p in d.timed_ps:
        def share(n, p=p):
            r = d.best("deso", "full", n, p)
            return why_none(d.runs("deso", "full", n, p)) if r is None else \
                pct(r.num("time_optimise"), r.num("time_total"))
        row(f"P={p} optimisation share, deso full: time_optimise / time_total"
            " (deso's statistics, rank 0)", share)
    if d.count_ps:
        pmax = max(d.count_ps)

        def bytes_ratio(n):
            if n not in d.count_ns:
                return "not counted"
            cf, cn = d.counts("full", n, pmax), d.counts("none", n, pmax)
            for c in (cf, cn):
                if c.values is None:
                    return c.word
            if cf.status != "exact" or cn.status != "exact":
                return "not exact (see the counts)"
            return ratio(cf.values["bytes_p2p"], cn.values["bytes_p2p"])
        row(f"P={pmax} p2p bytes/iter: full / none (exact counts only)", bytes_ratio)
    for p in d.timed_ps:
        def dgemv(n, p=p):
            r = d.read_bw.get((n, p))
            if r is None or not r.ok:
                return r.state() if r is not None else "—"
            return ratio(r.num("dgemv_gbs"), r.num("read_gbs"))
        row(f"P={p} dgemv bandwidth / read bandwidth (read_bw, one dgemv)", dgemv)
    for p in d.timed_ps:
        def kern(n, p=p):
            r = d.best("deso", "full", n, p)
            if r is None:
                return why_none(d.runs("deso", "full", n, p))
            return ratio(matrix_bw(n, per_iter(r, "time_compute")), read_gbs(d, n, p))
        row(f"P={p} deso full dgemv bandwidth (8n² / time_compute per iteration) / read"
            " bandwidth", kern)
    if 1 in d.timed_ps:
        def seq(n):
            r = d.best("seq", "", n, 1)
            if r is None:
                return why_none(d.runs("seq", "", n, 1))
            return ratio(matrix_bw(n, per_iter(r)), read_gbs(d, n, 1))
        row("P=1 sequential CG, whole iteration (8n² / time_loop per iteration) / read"
            " bandwidth", seq)
    for p in [q for q in d.timed_ps if q in d.count_ps]:
        def check(n, p=p):
            if n not in d.count_ns:
                return "not counted"
            c = d.counts("full", n, p)
            if c.values is None:
                return c.word
            m = d.model("full", n, p)
            meas, word = d.measured("full", n, p, c.grid)
            if word:
                return word
            if m is None or m[2] is None:
                return "—"
            return ratio(m[2], meas) + ("" if c.status == "exact" else " (mean counts)")
        row(f"P={p} cost model / measured time_loop per iteration, deso full", check)
    return table(["ratio"] + [f"n = {n}" for n in d.ns], rows)


def timed_table(d):
    head = ["n", "impl", "mode", "P", "grid", "iters", "runs", "ms/iter", "compute ms",
            "overhead ms", "p2p ms", "coll. ms", "optimise share", "matrix GB/s",
            "/ read bw", "residual"]
    rows = []
    for n in d.ns:
        for p in d.timed_ps:
            entries = [("seq", "")] if p == 1 else []
            entries.append(("pblas", ""))
            if d.have_deso:
                entries += [("deso", m) for m in d.modes]
            for impl, mode in entries:
                recs = d.runs(impl, mode, n, p)
                r = d.best(impl, mode, n, p)
                lead = [n, impl, mode or "—", p]
                if r is None:
                    rows.append(lead + ["—", "—", f"0 of {len(recs)}", why_none(recs)]
                                + ["—"] * (len(head) - 8))
                    continue
                good = len(d.usable(impl, mode, n, p))
                t = per_iter(r)

                def g(k):
                    return per_iter(r, k) if impl == "deso" else None
                tc = g("time_compute")
                # deso: the local kernels' time; anchors: the whole iteration
                bw = matrix_bw(n, tc if impl == "deso" else t)
                res = r.num("residual")
                rows.append(lead + [
                    r.out.get("grid", "?"), int(r.num("iters")),
                    f"best of {good}" + (f" ({len(recs) - good} not usable)"
                                         if len(recs) > good else ""),
                    ms(t), ms(tc), ms(g("time_overhead")), ms(g("time_p2p")),
                    ms(g("time_collective")),
                    pct(r.num("time_optimise"), r.num("time_total")) if impl == "deso" else "—",
                    gbs(bw) + ("" if impl == "deso" else "*"),
                    ratio(bw, read_gbs(d, n, p)),
                    "—" if res is None else f"{res:.1e}"])
    return table(head, rows)


def count_table(d):
    head = ["n", "mode", "P", "grid", "iterations", "p2p bytes", "p2p msgs", "coll. bytes",
            "coll. msgs", "model comm ms", "model compute ms", "model ms/iter",
            "measured ms/iter"]
    rows = []
    for n in d.count_ns:
        for p in d.count_ps:
            for mode in d.modes:
                c = d.counts(mode, n, p)
                lead = [n, mode, p]
                if c.values is None:
                    rows.append(lead + ["—", "—", c.word] + ["—"] * (len(head) - 6))
                    continue
                m = d.model(mode, n, p) or (None, None, None)
                mark = "≈" if c.status == "mean" else ""
                meas, word = (d.measured(mode, n, p, c.grid) if p in d.timed_ps
                              else (None, "not timed"))
                rows.append(lead + [c.grid, " → ".join(str(k) for k in c.ks)]
                            + [c.cell(f) for f in COUNT_FIELDS]
                            + [mark + ms(v) if v is not None else "—" for v in m]
                            + [word or ms(meas)])
    return table(head, rows)


def machine_table(d):
    llc = llc_bytes(d.res.meta.get("llc", ""))
    rows = []
    for n in d.ns:
        for p in d.timed_ps:
            r = d.read_bw.get((n, p))
            mat = f"{8e-6 * n * n:.0f}" + ("" if llc is None else
                                           (" (fits)" if 8 * n * n <= llc else " (exceeds)"))
            if r is None or not r.ok:
                rows.append([n, mat, p, r.state() if r is not None else "—", "—", "—", "—"])
                continue
            rows.append([n, mat, p, gbs(r.num("read_gbs")), gbs(r.num("dgemv_gbs")),
                         ms(r.num("dgemv_time")),
                         ratio(r.num("dgemv_gbs"), r.num("read_gbs"))])
    return table(["n", "matrix MB (vs last-level cache)", "P", "read GB/s", "dgemv GB/s",
                  "dgemv ms", "dgemv / read"], rows)


def cg_section(res, link, plot_files):
    """plot_files: [(path relative to the README, alt text)]."""
    d = CgData(res)
    s = res.settings
    lines = [provenance(res, "scripts/bench.sh", "make bench", link), "",
             "Every time compared between programs is their `time_loop`: the solver loop"
             " (set-up of r, p and the first dot products included; generation and the"
             " final residual check excluded) from a barrier before it to a barrier after"
             " deso's final flush, the slowest rank's (cg_seq, one process, needs no"
             " barrier); per iteration it is divided by the"
             " iterations the program reports having run, and a run is used only when that"
             " is the number asked and its grid the one asked (the `grid` and `iters`"
             f" columns are the programs' own). tol {s.get('tol', 0)}: every program runs"
             " every iteration asked.", ""]
    if not d.have_deso:
        lines += ["**deso-cg not built: deso rows skipped** (anchors only).", ""]
    lines += ["### Headline ratios", "", headline(d), "",
              "Paired runs: deso full and its anchor as two processes back to back, the"
              " anchor first in odd pairs and second in even ones, both on the same grid"
              " for the same iterations; the figure is the median of the per-pair ratios of"
              " time_loop per iteration, with their range, because the shared machine"
              " drifts between rounds more than between two neighbouring runs. deso's"
              " large arrays ask for transparent huge pages (placement/alloc.c); the anchors"
              " allocate with plain malloc, as code written directly on PBLAS or CBLAS does.",
              "",
              "### Time per iteration, measured (P = "
              + ", ".join(str(p) for p in d.timed_ps) + ")", "",
              timed_table(d), "",
              "ms/iter: time_loop / iters of the best usable run (`runs`: how many there"
              " were). compute, overhead, p2p, coll. and the optimise share are deso's own"
              " statistics on rank 0 (per iteration), not comparable with other programs."
              " matrix GB/s: 8n² bytes over deso's time_compute per iteration (all its local"
              " kernels, so an underestimate of the dgemv's own bandwidth), or, marked *,"
              " over the anchor's whole iteration; `/ read bw` divides by read_bw's read"
              " bandwidth at the same P (aggregate over the P ranks).", ""]
    if d.have_deso and d.count_ps:
        a = "—" if d.alpha is None else f"{1e6 * d.alpha:.3f} µs"
        b = "—" if d.beta is None else (f"{1e9 * d.beta:.4f} ns/byte"
                                        + (f" ({1e-9 / d.beta:.2f} GB/s)" if d.beta > 0 else ""))
        lines += [
            "### Communication per iteration (counted) and the cost model", "",
            f"Counted at n = {', '.join(str(n) for n in d.count_ns)}, with deso-cg run at"
            " the iteration counts in the `iterations` column. A count is the difference"
            " between runs divided by the difference of their iterations (set-up and the"
            " final residual check cancel), shown plain only when it is exact: every run ran"
            " the iterations asked, on the grid asked, and every count grew by the same whole"
            " number per iteration between each two runs. `≈` marks a mean: the runs"
            " are valid but the iterations between them did not all move the same, so no"
            " single per-iteration figure exists; `~` a figure from one run only (its totals over"
            " its iterations, set-up included). Bytes and messages are the doc/DESIGN.md"
            " totals over all ranks.", "",
            "Cost model, per iteration: **time_model(P) = (msgs_p2p + msgs_collective) · α"
            " + (bytes_p2p + bytes_collective) · β + t_compute(P=1) / P**, with"
            f" α = {a} and β = {b} fitted in this run by least squares to an MPI ping-pong"
            " at P = 2 (tests/bench/pingpong.c), and t_compute(P=1) deso's time_compute per"
            " iteration at P = 1 in the same mode (perfect scaling of the local kernels)."
            " The counts are summed over ranks, so the communication term charges every"
            " message one after another: an upper bound where messages travel concurrently."
            " measured ms/iter: the timed run's time_loop per iteration, shown only where it"
            " ran on the counted runs' grid.", "",
            count_table(d), ""]
    elif not d.have_deso:
        lines += ["### Communication per iteration (counted) and the cost model", "",
                  "No counts: deso-cg not built.", ""]
    a = "—" if d.alpha is None else f"{1e6 * d.alpha:.3f} µs"
    b = "—" if d.beta is None else f"{1e9 * d.beta:.4f} ns/byte"
    llc = llc_bytes(res.meta.get("llc", ""))
    mb = s.get("mb")
    stream = ""
    if llc is not None and isinstance(mb, (int, float)):
        where = "beyond" if mb * 1e6 > llc else "within"
        stream = (f" Last-level cache {llc / (1 << 20):.0f} MiB: read_bw streams {mb} MB per"
                  f" rank, {where} it; a matrix that fits in the cache can be read faster"
                  " than that stream.")
    pp = d.pingpong
    lines += ["### Machine", "",
              f"Ping-pong at P = 2: α = {a}, β = {b}"
              + ("" if pp is not None and pp.ok else
                 f" ({pp.state() if pp is not None else 'not run'})") + "." + stream, "",
              machine_table(d), ""]
    if plot_files:
        for name, alt in plot_files:
            lines.append(f"![{alt}]({name})")
    else:
        lines.append("_No plots in this report (made without gnuplot, or with --no-plots)._")
    return "\n".join(lines).rstrip() + "\n"


# ---- plots (cg) -------------------------------------------------------------------

def gp_terminal():
    try:
        r = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True,
                           timeout=30)
        if r.returncode == 0 and not r.stderr.strip():
            return "pngcairo size 1280,640 font ',10'"
    except (OSError, subprocess.SubprocessError):
        pass
    return "png size 1280,640"


def dat(v):
    return "?" if v is None or not v > 0 else f"{v:.6g}"


def plots(res, docdir):
    """Draws docdir/bench-time.png and bench-bytes.png; returns [(file, alt)].
    Raises RuntimeError when gnuplot is missing or fails."""
    if shutil.which("gnuplot") is None:
        raise RuntimeError("gnuplot not found: install it (scripts/setup.sh installs"
                           " gnuplot-nox) or pass --no-plots")
    d = CgData(res)
    tmpdir = tempfile.mkdtemp(prefix="deso-plot.")
    modes = d.modes if d.have_deso else []
    gp = [f"set terminal {gp_terminal()}", "set datafile missing '?'",
          "set style data histogram", "set style histogram clustered gap 1",
          "set style fill solid 0.85 border -1", "set logscale y", "set grid ytics",
          "set key outside below center horizontal", "set boxwidth 0.9"]
    colours = {"seq": "#555555", "pblas": "#999999", "none": "#d95f02",
               "affine": "#7570b3", "full": "#1b9e77"}

    def empty(msg):
        return ["set xrange [0:1]", "set yrange [1:10]", "unset xtics",
                f"set label 1 '{msg}' at graph 0.5, 0.5 center", "plot NaN notitle",
                "unset label 1", "set xtics", "set autoscale x", "set autoscale y"]

    mp_margins = "margins 0.07, 0.98, 0.19, 0.9 spacing 0.07"
    # time per iteration: measured at the timed P, modelled at the counted P beyond
    out = os.path.join(docdir, "bench-time.png")
    gp += [f"set output '{out}'", "set ylabel 'time per iteration (ms)'",
           "set xlabel 'P  (* = cost model)'",
           f"set multiplot layout 1,{max(1, len(d.ns))} {mp_margins} title 'deso CG, time"
           " per iteration (time\\_loop; log scale; P marked * from the cost model)'"]
    series = [("seq", ""), ("pblas", "")] + [("deso", m) for m in modes]
    for n in d.ns:
        fn = os.path.join(tmpdir, f"time_{n}.dat")
        have = False
        with open(fn, "w") as f:
            ps = list(d.timed_ps)
            if modes and n in d.count_ns:
                ps += [p for p in d.count_ps if p not in d.timed_ps]
            for p in ps:
                row = [f'"{p}"' if p in d.timed_ps else f'"{p}*"']
                for impl, mode in series:
                    if p in d.timed_ps:
                        v = per_iter(d.best(impl, mode, n, p))
                    elif impl == "deso":
                        mm = d.model(mode, n, p)
                        v = mm[2] if mm else None
                    else:
                        v = None
                    v = None if v is None else 1e3 * v
                    have = have or (v is not None and v > 0)
                    row.append(dat(v))
                f.write(" ".join(row) + "\n")
        gp.append(f"set title 'n = {n}'")
        if not have:
            gp += empty("no data")
            continue
        cols = []
        for k, (impl, mode) in enumerate(series):
            src = f"'{fn}'" if k == 0 else "''"
            xt = ":xtic(1)" if k == 0 else ""
            title = f"deso {mode}" if impl == "deso" else impl
            cols.append(f"{src} using {k + 2}{xt} title '{title}' lc rgb "
                        f"'{colours[mode or impl]}'")
        gp.append("plot " + ", ".join(cols))
    gp.append("unset multiplot")

    # bytes per iteration, p2p (solid) and collective (hatched) by mode and P
    out = os.path.join(docdir, "bench-bytes.png")
    gp += [f"set output '{out}'", "set ylabel 'bytes per iteration (all ranks)'",
           "set xlabel 'P  (no bar: zero, not counted or not exact)'",
           f"set multiplot layout 1,{max(1, len(d.count_ns))} {mp_margins} title 'deso CG,"
           " bytes per iteration (exact counts; log scale): p2p solid, collective hatched'"]
    for n in d.count_ns:
        fn = os.path.join(tmpdir, f"bytes_{n}.dat")
        have = False
        with open(fn, "w") as f:
            for p in d.count_ps:
                row = [f'"{p}"']
                for mode in modes:
                    c = d.counts(mode, n, p)
                    for fld in ("bytes_p2p", "bytes_collective"):
                        v = c.values[fld] if c.status == "exact" else None
                        have = have or (v is not None and v > 0)
                        row.append(dat(v))
                f.write(" ".join(row) + "\n")
        gp.append(f"set title 'n = {n}'")
        if not have:
            gp += empty("deso-cg not built: no counts" if not d.have_deso else "no data")
            continue
        cols = []
        for k, mode in enumerate(modes):
            for j, (fld, fs) in enumerate((("p2p", "fs solid 0.85"),
                                           ("collective", "fs pattern 4"))):
                col = 2 + 2 * k + j
                src = f"'{fn}'" if col == 2 else "''"
                xt = ":xtic(1)" if col == 2 else ""
                cols.append(f"{src} using {col}{xt} title '{mode} {fld}' {fs} lc rgb "
                            f"'{colours.get(mode, '#000000')}'")
        gp.append("plot " + ", ".join(cols))
    gp.append("unset multiplot")

    script = os.path.join(tmpdir, "bench.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        r = subprocess.run(["gnuplot", script], capture_output=True, text=True, timeout=120)
        noise = [ln for ln in r.stderr.splitlines()
                 if ln.strip() and "warning" not in ln.lower()]
        if r.returncode != 0:
            raise RuntimeError("gnuplot failed:\n" + "\n".join(noise[-10:]))
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"gnuplot failed: {e}") from e
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return [("bench-time.png", "time per iteration by implementation, mode and P"),
            ("bench-bytes.png", "p2p and collective bytes per iteration by mode and P")]


# ---- the remap suite (scripts/bench-remap.sh) -------------------------------------

class RemapCase:
    """The runs of one case; figures are medians over its usable runs."""

    def __init__(self, first):
        a = first.asked
        self.shape, self.layout, self.arrays = a.get("shape"), a.get("layout"), a.get("arrays")
        self.name, self.change = a.get("case", "?"), a.get("change", "?")
        self.recs = []

    def add(self, r):
        self.recs.append(r)

    def measured(self):
        """Runs that printed a line with the repetitions asked and the timings."""
        return [r for r in self.recs if r.ok and r.asked.get("reps") == r.out.get("reps")
                and (r.num("time_deso") or 0) > 0 and (r.num("time_scalapack") or 0) > 0]

    def usable(self):
        """Measured runs whose result was right and equal to pdgemr2d's: the
        figures come from these alone (a wrong remap's speed means nothing)."""
        return [r for r in self.measured() if r.out.get("verified") is True
                and r.out.get("scalapack_equal") is True]

    def wrong(self):
        return len(self.measured()) - len(self.usable())

    def med(self, key):
        return median([r.num(key) for r in self.usable() if r.num(key) is not None])

    def ratios(self):
        return sorted(r.num("time_deso") / r.num("time_scalapack") for r in self.usable())

    def bytes(self):
        u = self.usable()
        if not u:
            return None
        return num(u[0].out, "m") * num(u[0].out, "n") * 8.0

    @property
    def in_place(self):
        return self.layout == "inplace"

    @property
    def real(self):
        return self.layout not in ("same", "inplace")

    def transport(self):
        ts = sorted({r.out.get("transport", "?") for r in self.usable()})
        return ", ".join(ts) if ts else "—"

    def pct_memcpy(self):
        return self.med("pct_memcpy") if not self.in_place else None

    def memcpy_time(self):
        g, b = self.med("memcpy_gbs"), self.bytes()
        return b / (g * 1e9) if g and b else None


def remap_cases(res):
    cases, order = {}, []
    for r in res.recs:
        if r.tag != "remap":
            continue
        key = (r.asked.get("shape"), r.asked.get("layout"), r.asked.get("arrays"))
        if key not in cases:
            cases[key] = RemapCase(r)
            order.append(key)
        cases[key].add(r)
    return [cases[k] for k in order]


def remap_table(cases):
    head = ["case", "layout change", "transport", "source arrays", "runs", "deso s",
            "pdgemr2d s", "deso / pdgemr2d", "deso GB/s", "memcpy GB/s", "% memcpy",
            "verified"]
    rows = []
    for c in cases:
        u = c.usable()
        lead = [c.name, c.change]
        wrong = f"**NO** ({c.wrong()} of {len(c.measured())} runs wrong)" if c.wrong() else "yes"
        if not u:
            words = sorted({r.state() if not r.ok else "reps differ" for r in c.recs
                            if r not in c.measured()})
            rows.append(lead + ["—", c.arrays, f"0 of {len(c.recs)}", ", ".join(words) or "—"]
                        + ["—"] * (len(head) - 7) + [wrong if c.measured() else "—"])
            continue
        rs = c.ratios()
        td = c.med("time_deso")
        bw = c.bytes() / td * 1e-9 if td and c.bytes() and not c.in_place else None
        pm = [r.num("pct_memcpy") for r in u]
        rows.append(lead + [
            c.transport(), c.arrays,
            f"{len(u)}" + (f" of {len(c.recs)}" if len(c.recs) > len(u) else ""),
            sig(td), sig(c.med("time_scalapack")),
            sig(median(rs)) + (f" ({sig(rs[0])}–{sig(rs[-1])})" if len(rs) > 1 else ""),
            "—" if bw is None else gbs(bw),
            gbs(c.med("memcpy_gbs")),
            "—" if c.in_place else (f"{pct_num(median(pm))}%"
                                    + (f" ({pct_num(min(pm))}–{pct_num(max(pm))}%)"
                                       if len(pm) > 1 else "")),
            wrong])
    return table(head, rows)


def remap_prose(cases):
    """The paragraphs after the table; every figure in them is computed here."""
    def pick(f):
        return [c for c in cases if c.usable() and f(c)]

    def pct_span(cs):
        return span([c.pct_memcpy() for c in cs], pct_num)

    real = pick(lambda c: c.real)
    transports = sorted({c.transport() for c in real})
    out = []
    if transports == ["shared memory"]:
        out.append("Both ranks are on one node, so the real remaps took the shared-memory"
                   " transport (`deso_redist_transport`; `DESO_REMAP_SHM=0` keeps them on"
                   " MPI).")
    elif transports:
        out.append("The real remaps took the transport(s) " + ", ".join(
            f"`{t}`" for t in transports) + " (`deso_redist_transport`).")
    short = pct_span(pick(lambda c: c.real and c.arrays == "malloc"
                          and c.layout in ("c3-c5", "c64-c1")))
    long_ = pct_span(pick(lambda c: c.real and c.arrays == "malloc" and c.layout == "block-c1"))
    if short or long_:
        out[-1:] = [(out[-1] + " " if out else "")
                    + "With ordinary (`malloc`) arrays each sender packs its message chunk by"
                    " chunk into a ring of slots in an MPI-3 shared window and the receiver"
                    " unpacks each chunk as it lands, while both copy their own part in pieces"
                    " paced with the packing: every moved element is copied twice, through"
                    " offset tables, so short runs (cyclic(3) -> cyclic(5)) and strided ones"
                    " (cyclic(64) -> cyclic(1))"
                    + (f" reached {short}% of memcpy here" if short else "")
                    + (f", long runs (block -> cyclic(1)) {long_}%" if long_ else "") + "."]
    shared = pct_span(pick(lambda c: c.real and c.arrays == "shared"))
    out.append("When the source arrays come from `deso_redist_array_alloc(comm, count,"
               " &a)` (this rank's local array, in a shared window every rank of comm has"
               " mapped; collective; `deso_redist_array_free(a)`), nothing is packed: each"
               " sender says where its source is, each receiver copies its elements straight"
               " from there and writes its whole target once, front to back, from its own"
               " source and its senders' (one program over all of them, built with the"
               " plan), whole cache lines written around the cache, 8 elements at a time"
               " with AVX-512 gathers where the processor has them (scalar loads otherwise)."
               " That is one copy per element"
               + (f": {shared}% of memcpy here (memcpy itself reads each target line before"
                  " writing it; the streamed target does not)" if shared else "") + "."
               " It is decided per execution and per pair of ranks: a sender whose array is"
               " not shared (or whose leading dimension is not its local row count) is served"
               " by the rings, in the same remap. The arrays are ordinary memory to"
               " everything else (ScaLAPACK, deso's wrappers); on several nodes they are"
               " plain memory and remaps go over MPI.")
    last = []
    rr = span([median(c.ratios()) for c in real], g2)
    if rr:
        last.append(f"Real remaps took {rr}x pdgemr2d's time here (medians per case; a plan"
                    " is built once and reused, pdgemr2d renegotiates on every call).")
    same = pick(lambda c: c.layout == "same")
    if same:
        sr = span([median(c.ratios()) for c in same], g2)
        pm = span([c.med("time_scalapack") / c.memcpy_time() for c in same
                   if c.memcpy_time()], g2)
        last.append(f"An identical layout out of place is one memcpy: {sr}x pdgemr2d's time"
                    + (f", pdgemr2d itself taking {pm} times a memcpy of the array" if pm
                       else "") + ".")
    inplace = pick(lambda c: c.in_place)
    if inplace:
        t = span([c.med("time_deso") for c in inplace], g2)
        last.append(f"In place deso moves nothing: {t} s per call.")
    if last:
        out.append(" ".join(last))
    return "\n\n".join(out)


def remap_section(res, link):
    s = res.settings
    cases = remap_cases(res)
    reps, runs = s.get("reps", "?"), s.get("runs", "?")
    lines = [provenance(res, "scripts/bench-remap.sh", "make bench-remap", link), "",
             "deso's remap engine against ScaLAPACK's `pdgemr2d` on the same data and"
             f" layouts at P = {s.get('ranks', 2)}, {runs} run{'s' if runs != 1 else ''} of"
             " each case" + (" (in rounds: every case once, then again)" if runs != 1 else "")
             + ", each run one process:"
             f" deso's first remap verified, then {reps} remaps by deso and {reps} by pdgemr2d"
             " timed from a barrier (the mean per remap of the slowest rank's time), every"
             " result checked against the expected values and against pdgemr2d's (`verified`)."
             " The table shows medians over the runs and, in brackets, the range of the"
             " per-run ratios. GB/s is the array's bytes over"
             " the time of one remap. The memcpy yardstick is measured in the same process,"
             f" paired with the remaps (`deso-remap --memcpy`): each of {reps} times, both"
             " ranks copy their source arrays with memcpy at once, then one remap runs;"
             f" a run's \"% memcpy\" is the median of its {reps} ratios, so the shared"
             " machine's drift cancels. \"in place\" is the identical-layout remap with"
             " source and target the same array: deso notices and moves nothing. \"source"
             " arrays\": `malloc`, or `deso_redist_array_alloc` (shared; `deso-remap"
             " --shared-arrays`), the same arrays for pdgemr2d.", "",
             remap_table(cases), "", remap_prose(cases)]
    return "\n".join(lines).rstrip() + "\n"


# ---- main -----------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", action="append",
                    help="a results file (repeatable); default: doc/bench-results.jsonl"
                    " and doc/bench-remap.jsonl, those that exist")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "doc"), help="where the plots go")
    ap.add_argument("--no-plots", action="store_true", help="no gnuplot, no PNGs")
    ap.add_argument("--print", action="store_true", help="print the sections on stdout too")
    a = ap.parse_args()
    paths = a.results or [p for p in DEFAULT_RESULTS.values() if os.path.exists(p)]
    if not paths:
        print("bench_report: no results: run scripts/bench.sh or scripts/bench-remap.sh"
              " first, or pass --results FILE", file=sys.stderr)
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
        if res.suite == "cg":
            made = []
            if not a.no_plots:
                os.makedirs(a.doc, exist_ok=True)
                try:
                    made = [(os.path.relpath(os.path.join(a.doc, f), here), alt)
                            for f, alt in plots(res, a.doc)]
                except RuntimeError as e:
                    print(f"bench_report: {e}", file=sys.stderr)
                    return 1
            body = cg_section(res, link, made)
        else:
            body = remap_section(res, link)
        write_readme(a.readme, res.suite, body)
        print(f"bench_report: {path} -> {a.readme} ({res.suite} section)", file=sys.stderr)
        if a.print:
            sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
