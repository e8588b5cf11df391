"""The README's CG section (scripts/bench.sh): headline ratios and tables."""
from .cgdata import COUNT_FIELDS, CgData, matrix_bw, per_iter, read_gbs, why_none
from .fmt import gbs, llc_bytes, ms, pct, provenance, ratio, table
from .records import median


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
