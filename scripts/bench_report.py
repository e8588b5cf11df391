#!/usr/bin/env python3
"""bench_report.py: turns the JSON lines of scripts/bench.sh into the README's
benchmark section (Markdown tables between <!-- bench:begin --> and
<!-- bench:end -->) and two gnuplot PNGs.

    python3 scripts/bench_report.py --results doc/bench-results.jsonl \
        --readme README.md --doc doc

Each input line is one object with a "bench" tag added by bench.sh:
  meta      the run's settings
  pingpong  {"alpha": s, "beta": s/byte}                    (tests/bench/pingpong.c)
  read_bw   {"read_gbs", "dgemv_gbs", "n", "p"}            (tests/bench/read_bw.c)
  timed     a CG run at P <= 2: impl seq | pblas | deso (+ "mode")
  count     a deso-cg run at a small iteration count, for bytes and messages
A record with "failed" or "skipped" stands for a run that produced nothing.
Only the standard library is used.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
IMPLS = ("seq", "pblas")
COUNT_FIELDS = ("bytes_p2p", "msgs_p2p", "bytes_collective", "msgs_collective")


def load(path):
    recs = []
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
            if isinstance(r, dict):
                recs.append(r)
    return recs


def num(r, key):
    """r[key] as a float, or None when absent or not a number."""
    v = r.get(key) if r else None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def ok(r):
    return r is not None and "failed" not in r and "skipped" not in r


def state(r):
    """The word a table shows for a run that has no figures."""
    if r is None:
        return "—"
    if "skipped" in r:
        return "skipped"
    return "failed"


class Data:
    def __init__(self, recs):
        self.meta = {}
        self.end = {}
        self.pingpong = None
        self.read_bw = {}  # (n, p) -> rec
        self.timed = {}  # (impl, mode, n, p) -> [rec]
        self.count = {}  # (mode, n, p, iters) -> rec
        self.pairs = {}  # (impl, n, p) -> {pair number: rec}
        for r in recs:
            tag = r.get("bench")
            if tag == "meta":
                self.meta = r
            elif tag == "end":
                self.end = r
            elif tag == "pingpong":
                self.pingpong = r
            elif tag == "read_bw":
                self.read_bw[(int(r.get("n", 0)), int(r.get("p", 0)))] = r
            elif tag == "timed":
                impl = r.get("impl", "?")
                mode = r.get("mode", "") if impl == "deso" else ""
                key = (impl, mode, int(r.get("n", 0)), int(r.get("p", 0)))
                self.timed.setdefault(key, []).append(r)
            elif tag == "pair" and "pair" in r:
                impl = r.get("impl", "?")
                key = (impl, int(r.get("n", 0)), int(r.get("p", 0)))
                self.pairs.setdefault(key, {})[int(r["pair"])] = r
            elif tag == "count":
                key = (r.get("mode", "?"), int(r.get("n", 0)), int(r.get("p", 0)),
                       int(r.get("iters", 0)))
                self.count[key] = r
        m = self.meta
        self.ns = [int(x) for x in m.get("ns", sorted({k[2] for k in self.timed}))]
        self.timed_ps = [int(x) for x in m.get("timed_ps", [1, 2])]
        self.count_ps = [int(x) for x in m.get("count_ps", [2, 4, 9, 16])]
        self.count_ns = [int(x) for x in m.get("count_ns", self.ns)]
        self.count_iters = sorted(int(x) for x in m.get("count_iters", [2, 6]))
        self.modes = list(m.get("modes", ["none", "affine", "full"]))
        self.have_deso = bool(m.get("deso", True))
        self.alpha = num(self.pingpong, "alpha") if ok(self.pingpong) else None
        self.beta = num(self.pingpong, "beta") if ok(self.pingpong) else None

    def run(self, impl, mode, n, p):
        """The best (least time_total) successful timed run, else a failure record."""
        rs = self.timed.get((impl, mode, n, p), [])
        good = [r for r in rs if ok(r) and num(r, "time_total") is not None]
        if good:
            return min(good, key=lambda r: num(r, "time_total"))
        return rs[0] if rs else None

    def per_iter(self, impl, mode, n, p, key="time_total"):
        r = self.run(impl, mode, n, p)
        if not ok(r):
            return None
        v, k = num(r, key), num(r, "iters")
        if v is None or not k:
            return None
        return v / k

    def paired(self, anchor, n, p):
        """Per-pair ratios deso full / anchor (both runs of the pair
        successful), sorted; [] when there are none."""
        d, a = self.pairs.get(("deso", n, p), {}), self.pairs.get((anchor, n, p), {})
        out = []
        for k in sorted(set(d) & set(a)):
            x, y = d[k], a[k]
            if ok(x) and ok(y) and num(x, "time_total") and num(y, "time_total"):
                out.append(num(x, "time_total") / num(y, "time_total"))
        return sorted(out)

    def counts(self, mode, n, p):
        """Per-iteration counts: ({field: value}, exact?) or (state word, None)."""
        ks = self.count_iters
        rs = {k: self.count.get((mode, n, p, k)) for k in ks}
        good = {k: r for k, r in rs.items()
                if ok(r) and all(num(r, f) is not None for f in COUNT_FIELDS)}
        if len(good) >= 2:
            k1, k2 = min(good), max(good)
            return {f: (num(good[k2], f) - num(good[k1], f)) / (k2 - k1)
                    for f in COUNT_FIELDS}, True
        if len(good) == 1:
            k, r = next(iter(good.items()))
            return {f: num(r, f) / k for f in COUNT_FIELDS}, False
        bad = [r for r in rs.values() if r is not None]
        return (state(bad[0]) if bad else "—"), None

    def model(self, mode, n, p):
        """(comm, compute, total) seconds per iteration of the cost model, or None."""
        c, exact = self.counts(mode, n, p)
        if exact is None or self.alpha is None or self.beta is None:
            return None
        comp1 = self.per_iter("deso", mode, n, 1, "time_compute")
        comm = ((c["msgs_p2p"] + c["msgs_collective"]) * self.alpha
                + (c["bytes_p2p"] + c["bytes_collective"]) * self.beta)
        comp = comp1 / p if comp1 is not None else None
        return comm, comp, (comm + comp if comp is not None else None)


# ---- formatting ---------------------------------------------------------------

def ms(v):
    return "—" if v is None else f"{1e3 * v:.3f}"


def ratio(a, b, digits=3):
    """a / b to `digits` significant figures."""
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.{digits}g}"


def pct(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{100.0 * a / b:.1f}%"


def count_str(v):
    if v is None:
        return "—"
    if abs(v - round(v)) < 1e-6:
        return f"{int(round(v)):,}"
    return f"{v:,.1f}"


def gbs(v):
    return "—" if v is None else f"{v:.2f}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# ---- the Markdown section -----------------------------------------------------

def matrix_bw(n, t):
    """Aggregate matrix bandwidth, GB/s: 8 n^2 bytes read once per time t."""
    return None if not t else 8.0 * n * n / t * 1e-9


def read_gbs(d, n, p):
    r = d.read_bw.get((n, p))
    return num(r, "read_gbs") if ok(r) else None


def headline(d):
    ns, nd = d.ns, "— (no deso-cg)" if not d.have_deso else None
    rows = []

    def row(label, f, deps=(), deso=True):
        """deps: (impl, mode, p) timed runs, or ("read_bw", p); a failed or
        skipped one shows as such instead of the ratio."""
        cells = [label]
        for n in ns:
            if deso and nd:
                cells.append(nd)
                continue
            bad = None
            for dep in deps:
                r = d.read_bw.get((n, dep[1])) if dep[0] == "read_bw" \
                    else d.run(dep[0], dep[1], n, dep[2])
                if r is not None and not ok(r):
                    bad = state(r)
                    break
            cells.append(bad or f(n))
        rows.append(cells)

    def paired(anchor, p):
        def f(n):
            rs = d.paired(anchor, n, p)
            if not rs:                  # no pairs: the best runs' ratio
                return ratio(d.per_iter("deso", "full", n, p),
                             d.per_iter(anchor, "", n, p))
            med = (rs[(len(rs) - 1) // 2] + rs[len(rs) // 2]) / 2
            return (f"**{med:.3f}** (median of {len(rs)} pairs, "
                    f"{rs[0]:.3f}–{rs[-1]:.3f})")
        return f
    row("P=2 time/iter: deso full / PBLAS (paired runs)", paired("pblas", 2),
        [("deso", "full", 2), ("pblas", "", 2)])
    row("P=1 time/iter: deso full / sequential OpenBLAS (paired runs)",
        paired("seq", 1), [("deso", "full", 1), ("seq", "", 1)])
    for p in d.timed_ps:
        row(f"P={p} optimisation share, deso full: time_optimise / time_total",
            lambda n, p=p: pct(d.per_iter("deso", "full", n, p, "time_optimise"),
                               d.per_iter("deso", "full", n, p)),
            [("deso", "full", p)])
    pmax = max(d.count_ps) if d.count_ps else 16

    def bytes_ratio(n):
        if n not in d.count_ns:
            return "not counted"
        cf, ef = d.counts("full", n, pmax)
        cn, en = d.counts("none", n, pmax)
        if ef is None:
            return cf
        if en is None:
            return cn
        return ratio(cf["bytes_p2p"], cn["bytes_p2p"], 3) + ("" if ef and en else " ~")
    row(f"P={pmax} p2p bytes/iter: full / none", bytes_ratio)
    for p in d.timed_ps:
        row(f"P={p} dgemv bandwidth / read bandwidth (read_bw, one dgemv)",
            lambda n, p=p: ratio(num(d.read_bw.get((n, p)), "dgemv_gbs"), read_gbs(d, n, p)),
            [("read_bw", p)], deso=False)
    for p in d.timed_ps:
        row(f"P={p} deso full dgemv bandwidth (8n²/time_compute) / read bandwidth",
            lambda n, p=p: ratio(
                matrix_bw(n, d.per_iter("deso", "full", n, p, "time_compute")),
                read_gbs(d, n, p)),
            [("deso", "full", p), ("read_bw", p)])
    if 1 in d.timed_ps:
        row("P=1 sequential CG, whole iteration (8n²/time) / read bandwidth",
            lambda n: ratio(matrix_bw(n, d.per_iter("seq", "", n, 1)), read_gbs(d, n, 1)),
            [("seq", "", 1), ("read_bw", 1)], deso=False)
    if 2 in d.count_ps and 2 in d.timed_ps:
        def check(n):
            if n not in d.count_ns:
                return "not counted"
            m = d.model("full", n, 2)
            if m is None:
                c, exact = d.counts("full", n, 2)
                return c if exact is None else "—"
            return ratio(m[2], d.per_iter("deso", "full", n, 2))
        row("P=2 cost model / measured time, deso full", check, [("deso", "full", 2)])
    return table(["ratio"] + [f"n = {n}" for n in ns], rows)


def timed_table(d):
    head = ["n", "impl", "mode", "P", "ms/iter", "compute ms", "overhead ms", "p2p ms",
            "coll. ms", "optimise share", "matrix GB/s", "/ read bw", "residual"]
    rows = []
    for n in d.ns:
        for p in d.timed_ps:
            entries = [("seq", "")] if p == 1 else []
            entries.append(("pblas", ""))
            if d.have_deso:
                entries += [("deso", m) for m in d.modes]
            for impl, mode in entries:
                r = d.run(impl, mode, n, p)
                lead = [n, impl, mode or "—", p]
                if not ok(r):
                    rows.append(lead + [state(r)] + ["—"] * (len(head) - 5))
                    continue
                t = d.per_iter(impl, mode, n, p)
                g = (lambda k: d.per_iter(impl, mode, n, p, k)) if impl == "deso" \
                    else (lambda k: None)
                tc = g("time_compute")
                # deso: the local kernels' time; anchors: the whole iteration
                bw = matrix_bw(n, tc if impl == "deso" else t)
                res = num(r, "residual")
                rows.append(lead + [
                    ms(t), ms(tc), ms(g("time_overhead")), ms(g("time_p2p")),
                    ms(g("time_collective")),
                    pct(g("time_optimise"), t) if impl == "deso" else "—",
                    gbs(bw) + ("" if impl == "deso" else "*"),
                    ratio(bw, read_gbs(d, n, p)),
                    "—" if res is None else f"{res:.1e}"])
    return table(head, rows)


def count_table(d):
    head = ["n", "mode", "P", "p2p bytes", "p2p msgs", "coll. bytes", "coll. msgs",
            "model comm ms", "model compute ms", "model ms/iter", "measured ms/iter"]
    rows = []
    for n in d.count_ns:
        for p in d.count_ps:
            for mode in d.modes:
                c, exact = d.counts(mode, n, p)
                lead = [n, mode, p]
                if exact is None:
                    rows.append(lead + [c] + ["—"] * (len(head) - 4))
                    continue
                mark = "" if exact else " ~"
                m = d.model(mode, n, p)
                meas = d.per_iter("deso", mode, n, p) if p in d.timed_ps else None
                rows.append(lead + [count_str(c[f]) + mark for f in COUNT_FIELDS] + [
                    ms(m[0]) if m else "—", ms(m[1]) if m else "—",
                    ms(m[2]) if m else "—", ms(meas)])
    return table(head, rows)


def machine_table(d):
    llc = llc_bytes(d.meta.get("llc", ""))
    rows = []
    for n in d.ns:
        for p in d.timed_ps:
            r = d.read_bw.get((n, p))
            mat = f"{8e-6 * n * n:.0f}" + ("" if llc is None else
                                           (" (fits)" if 8 * n * n <= llc else " (exceeds)"))
            if not ok(r):
                rows.append([n, mat, p, state(r), "—", "—", "—"])
                continue
            rows.append([n, mat, p, gbs(num(r, "read_gbs")), gbs(num(r, "dgemv_gbs")),
                         ms(num(r, "dgemv_time")),
                         ratio(num(r, "dgemv_gbs"), num(r, "read_gbs"))])
    return table(["n", "matrix MB (vs last-level cache)", "P", "read GB/s", "dgemv GB/s",
                  "dgemv ms", "dgemv / read"], rows)


def llc_bytes(s):
    """'307200K' -> bytes, or None."""
    s = str(s).strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    try:
        return int(s.rstrip("KkMmGg")) * mult
    except ValueError:
        return None


def section(d, plots):
    m = d.meta
    ci = d.count_iters
    if len(ci) >= 2:
        how = (f"the difference of runs at {ci[0]} and {ci[-1]} iterations divided by "
               f"{ci[-1] - ci[0]} (exact; set-up and the final residual check cancel)")
    else:
        how = f"a run at {ci[0] if ci else '?'} iterations divided by its iterations"
    lines = [
        "_Generated by `scripts/bench.sh` (`make bench`)"
        + (" with BENCH_QUICK=1 (smoke run, small n)" if m.get("quick") else "")
        + f" on {m.get('date', '?')}, host {m.get('host', '?')}, {m.get('cores', '?')} cores,"
        f" load average {m.get('loadavg', '?')} at start, {d.end.get('loadavg', '?')} at end,"
        f" {d.end.get('seconds', '?')} s in all (the machine is shared: timings"
        " are ratios within this run, not absolute figures). OPENBLAS_NUM_THREADS=1,"
        f" tol 0, {m.get('iters', '?')} timed iterations"
        + (f", best of {m.get('repeat')}" if int(m.get("repeat", 1)) > 1 else "")
        + f"; time per iteration = time_total / iters. Raw JSON lines:"
        " [doc/bench-results.jsonl](doc/bench-results.jsonl)._",
        "",
    ]
    if not d.have_deso:
        lines += ["**deso-cg not built: deso rows skipped** (anchors only).", ""]
    lines += ["### Headline ratios", "", headline(d), "",
              "Paired runs: deso full and its anchor back to back, the order alternating,"
              f" {m.get('pairs', '?')} pairs per n; the median of the pair ratios (and their"
              " range) is quoted because the shared machine drifts by several percent"
              " between rounds. deso's large arrays ask for transparent huge pages"
              " (placement/alloc.c), which made a 256 MiB dgemv 3-5% faster here; the anchors"
              " allocate with plain malloc, as code written directly on PBLAS or CBLAS does.",
              "",
              "### Time per iteration, measured (P = "
              + ", ".join(str(p) for p in d.timed_ps) + ")", "",
              timed_table(d), "",
              "matrix GB/s: 8n² bytes over deso's time_compute per iteration (all its local"
              " kernels, so a slight underestimate of the dgemv's own bandwidth), or, marked *,"
              " over the anchor's whole iteration; `/ read bw` divides by read_bw's read"
              " bandwidth at the same P (aggregate over the P ranks).", ""]
    if d.have_deso:
        a = "—" if d.alpha is None else f"{1e6 * d.alpha:.3f} µs"
        b = "—" if d.beta is None else (f"{1e9 * d.beta:.4f} ns/byte"
                                        + (f" ({1e-9 / d.beta:.2f} GB/s)" if d.beta > 0 else ""))
        lines += [
            "### Communication per iteration (counted, exact) and the cost model", "",
            f"Counted at n = {', '.join(str(n) for n in d.count_ns)}"
            + ("" if set(d.count_ns) >= set(d.ns) else " only") + "."
            f" Counts per iteration are {how}; `~` marks a figure from one run only"
            " (whole run / iterations). Bytes and messages are the doc/DESIGN.md totals over all"
            " ranks.", "",
            "Cost model, per iteration: **time_model(P) = (msgs_p2p + msgs_collective) · α"
            " + (bytes_p2p + bytes_collective) · β + t_compute(P=1) / P**, with"
            f" α = {a} and β = {b} fitted in this run by least squares to an MPI ping-pong"
            " at P = 2 (tests/bench/pingpong.c, 8 B to 4 MiB), and t_compute(P=1) deso's"
            " time_compute per iteration at P = 1 in the same mode (perfect scaling of the"
            " local kernels). The counts are summed over ranks, so the communication term"
            " charges every message one after another: an upper bound where messages travel"
            " concurrently.", "",
            count_table(d), ""]
    else:
        lines += ["### Communication per iteration (counted) and the cost model", "",
                  "No counts: deso-cg not built.", ""]
    a = "—" if d.alpha is None else f"{1e6 * d.alpha:.3f} µs"
    b = "—" if d.beta is None else f"{1e9 * d.beta:.4f} ns/byte"
    llc = llc_bytes(d.meta.get("llc", ""))
    lines += ["### Machine", "",
              f"Ping-pong at P = 2: α = {a}, β = {b}"
              + ("" if ok(d.pingpong) else f" ({state(d.pingpong)})") + "."
              + ("" if llc is None else
                 f" Last-level cache {llc / (1 << 20):.0f} MiB: read_bw streams"
                 f" {d.meta.get('mb', 1024)} MB per rank, beyond it; a matrix that fits in"
                 " the cache gives a dgemv faster than the read bandwidth (ratios above 1)."),
              "",
              machine_table(d), ""]
    for name, alt in plots:
        lines.append(f"![{alt}](doc/{name})")
    return "\n".join(lines).rstrip() + "\n"


def write_readme(path, body):
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    b, e = text.find(BEGIN), text.find(END)
    if b >= 0 and e > b:
        text = text[:b + len(BEGIN)] + "\n" + body + text[e:]
    else:
        if text and not text.endswith("\n"):
            text += "\n"
        text += f"\n## Benchmark results\n\n{BEGIN}\n{body}{END}\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---- plots ----------------------------------------------------------------------

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


def plots(d, docdir):
    if shutil.which("gnuplot") is None:
        print("bench_report: gnuplot not found: no plots (scripts/setup.sh installs"
              " gnuplot-nox)", file=sys.stderr)
        return []
    tmpdir = tempfile.mkdtemp(prefix="deso-plot.")
    term = gp_terminal()
    modes = d.modes if d.have_deso else []
    gp = [f"set terminal {term}", "set datafile missing '?'", "set style data histogram",
          "set style histogram clustered gap 1", "set style fill solid 0.85 border -1",
          "set logscale y", "set grid ytics", "set key outside below center horizontal",
          "set boxwidth 0.9"]
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
           " per iteration (log scale; P marked * from the cost model)'"]
    series = [("seq", "")] + [("pblas", "")] + [("deso", m) for m in modes]
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
                        v = d.per_iter(impl, mode, n, p)
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
            title = mode if impl == "deso" else impl
            title = f"deso {title}" if impl == "deso" else title
            cols.append(f"{src} using {k + 2}{xt} title '{title}' lc rgb "
                        f"'{colours[mode or impl]}'")
        gp.append("plot " + ", ".join(cols))
    gp.append("unset multiplot")

    # bytes per iteration, p2p (solid) and collective (hatched) by mode and P
    out = os.path.join(docdir, "bench-bytes.png")
    gp += [f"set output '{out}'", "set ylabel 'bytes per iteration (all ranks)'",
           "set xlabel 'P  (no bar: zero or not counted)'",
           f"set multiplot layout 1,{max(1, len(d.count_ns))} {mp_margins} title 'deso CG,"
           " bytes per iteration (log scale): p2p solid, collective hatched'"]
    for n in d.count_ns:
        fn = os.path.join(tmpdir, f"bytes_{n}.dat")
        have = False
        with open(fn, "w") as f:
            for p in d.count_ps:
                row = [f'"{p}"']
                for mode in modes:
                    c, exact = d.counts(mode, n, p)
                    for fld in ("bytes_p2p", "bytes_collective"):
                        v = c[fld] if exact is not None else None
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
        noise = [l for l in r.stderr.splitlines() if l.strip() and "warning" not in l.lower()]
        if r.returncode != 0:
            print("bench_report: gnuplot failed:\n" + "\n".join(noise[-10:]), file=sys.stderr)
            return []
    except (OSError, subprocess.SubprocessError) as e:
        print(f"bench_report: gnuplot failed: {e}", file=sys.stderr)
        return []
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return [("bench-time.png", "time per iteration by implementation, mode and P"),
            ("bench-bytes.png", "p2p and collective bytes per iteration by mode and P")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--doc", default="doc")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--print", action="store_true", help="print the section on stdout too")
    a = ap.parse_args()
    d = Data(load(a.results))
    os.makedirs(a.doc, exist_ok=True)
    made = [] if a.no_plots else plots(d, a.doc)
    body = section(d, made)
    write_readme(a.readme, body)
    if a.print:
        sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
