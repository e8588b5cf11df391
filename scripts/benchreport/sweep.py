"""The README's sweep section (scripts/bench-sweep.sh): deso against every
anchor at small and mid n, paired, beside the MPIs' own latencies."""
from .fmt import bind_words, provenance, sig, table, us
from .sweepdata import ANCHOR_NAME, CASES, LATENCY_FIELDS, SHARED_CPU, SweepData


def ratio_cell(pr):
    """The median per-pair ratio in bold, its range, and what was left out."""
    r = pr.ratio
    left = "; ".join(w for w in (f"{pr.failed} failed" if pr.failed else "",
                                 f"{pr.unusable} not run as asked" if pr.unusable else "")
                     if w)
    busy = f"; {pr.shared} shared" if pr.shared else ""
    if not len(r):
        return "no pair" + (f" ({left})" if left else "")
    cell = f"**{sig(r.med)}**" + (f" ({sig(r.lo)}–{sig(r.hi)})" if len(r) > 1 else "")
    if len(r) < pr.asked or left:
        cell += f", {len(r)} of {pr.asked} pairs" + (f" ({left})" if left else "")
    return cell + busy


def time_cell(sp, grids=None):
    if not len(sp):
        return "—"
    g = f" ({', '.join(grids)})" if grids else ""
    return us(sp.med) + g


def main_table(d):
    head = (["n", "iterations per run"]
            + [f"P={p}: deso / {ANCHOR_NAME[a]}" for p, a in CASES]
            + ["cg_seq µs", "deso P=1 µs", "PBLAS µs (grid)", "PETSc µs",
               "deso P=2 µs (grid and matrix it picked)"])
    rows = []
    for n in d.ns:
        it = d.iters.get(n)
        k = min(d.solve or it or 1, it or 1)
        how = "—" if it is None else (f"{it:,}" + (f" ({it // k} solves of {k})"
                                                   if it // k > 1 else ""))
        rows.append([n, how] + [ratio_cell(d.pairs[(n, p, a)]) for p, a in CASES] + [
            time_cell(d.times(n, 1, "seq")),
            time_cell(d.times(n, 1, "deso")),
            time_cell(d.times(n, 2, "pblas"), d.pairs[(n, 2, "pblas")].anchor_grids),
            time_cell(d.times(n, 2, "petsc")),
            time_cell(d.times(n, 2, "deso"), d.deso_grids(n, 2))])
    return table(head, rows)


def grid_table(d):
    rows = []
    for n in d.ns:
        t, ratios, pick = d.pre_round(n)
        used = d.pairs[(n, 2, "pblas")].anchor_grids
        rows.append([n, us(t.get("1x2")), us(t.get("2x1")),
                     "—" if not len(ratios) else sig(ratios.med)
                     + (f" ({sig(ratios.lo)}–{sig(ratios.hi)})" if len(ratios) > 1 else ""),
                     pick or "none (no usable pair)", ", ".join(used) or "—"])
    return table(["n", "1x2 µs", "2x1 µs", "1x2 / 2x1 per pair", "faster", "PBLAS ran on"],
                 rows)


def latency_table(d):
    rows = []
    for _, name, asked, ok, f in d.latencies():
        def cell(sp):
            if not len(sp):
                return "—"
            return us(sp.med) + (f" ({us(sp.lo)}–{us(sp.hi)})" if len(sp) > 1 else "")
        rows.append([name, f"{ok} of {asked}"] + [cell(f[k]) for k in LATENCY_FIELDS])
    return table(["MPI", "runs", "ping-pong 8 B, one way, µs", "ping-pong 400 B, one way, µs",
                  "all-reduce 8 B, µs"], rows)


def mpi_share_table(d):
    """Time per iteration at P = 2 in units of its own MPI's all-reduce."""
    am, ao = d.allreduce("mpich"), d.allreduce("openmpi")

    def units(t, a):
        if t is None or not a:
            return "—"
        return f"{t / a:.0f}" if t / a >= 100 else f"{t / a:.1f}"
    rows = [[n, units(d.times(n, 2, "deso").med, am), units(d.times(n, 2, "pblas").med, am),
             units(d.times(n, 2, "petsc").med, ao)] for n in d.ns]
    return table(["n", "deso (MPICH)", "PBLAS (MPICH)", "PETSc (Open MPI)"], rows)


def grid_words(d):
    picked = {n: d.deso_grids(n, 2) for n in d.ns}
    flat = sorted({g for gs in picked.values() for g in gs})
    if not flat:
        return "deso's grid at P = 2: no usable run."
    if len(flat) == 1 and all(picked.values()):
        return f"deso, given no grid, picked **{flat[0]}** at P = 2 at every n."
    # the placement words: A folded over the grid, or replicated (whole on
    # every rank, each computing the product by itself)
    return "deso, given no grid, picked at P = 2: " + "; ".join(
        f"n = {n}: {', '.join(g) or '—'}" for n, g in picked.items()) + "."


def load_words(d):
    sp = d.load_spread()
    m, e = d.res.meta, d.res.end
    w = (f"The machine is shared ({m.get('cores', '?')} cores; the runs here use up to 2)."
         f" Load average at the start {m.get('loadavg', '?')}, at the end"
         f" {e.get('loadavg', '?')}")
    if len(sp):
        w += (f"; its 1-minute figure before each round of pairs ranged"
              f" {sp.lo:.2f}–{sp.hi:.2f} over {len(sp)} rounds (a P = 2 run alone makes"
              " it about 2)")
    w += "."
    busy, known = d.shared_runs()
    if known:
        w += (f" {busy} of {known} runs shared the machine with other processes' work"
              f" (they used {SHARED_CPU:g} CPU seconds or more during the run: the"
              " records' `cpu_others`); \"shared\" in the ratio columns counts the pairs"
              " with such a run.")
        waited = d.waited()
        if waited:
            w += f" The driver waited {waited:.0f} s in all for idle cores after such runs."
    return w


def sweep_section(res, link, plot_files):
    """plot_files: [(path relative to the README, alt text)]."""
    d = SweepData(res)
    s = res.settings
    pairs, pre = s.get("pairs", "?"), s.get("pre", "?")
    lines = [provenance(res, "scripts/bench-sweep.sh", "make bench-sweep", link,
                        "a smoke run, few pairs of short runs"), "",
             "deso-cg `--mode full` against the sequential CBLAS CG (cg_seq) at P = 1 and"
             " against the hand-written PBLAS CG (cg_pblas, MPICH) and PETSc's KSPCG"
             " (cg_petsc, Open MPI) at P = 2, with tol 0 and the same number of iterations"
             " for every code at a given n (below; split into solves from x0 = 0,"
             " `--repeat`, because one long solve would reach an exactly zero residual at"
             " small n). Only `time_loop` per iteration is compared: each program's solver"
             " loop from a barrier to a barrier, the slowest rank's. For each n and each"
             f" anchor, {pairs} pairs of runs, deso and the anchor back to back, the anchor"
             " first in odd pairs and second in even ones: the ratio column is the median"
             " of the per-pair ratios deso / anchor (below 1: deso faster) with their"
             " range in brackets; the µs columns are medians over each code's paired runs"
             " (deso at P = 2 over its runs against both anchors). A run is used only when"
             " it printed the iterations asked, and cg_pblas only on the grid asked."
             + bind_words(s)
             + (" cg_seq is started through MPICH's launcher as well, so it is bound"
                " likewise." if s.get("seq_bind") == "core" else ""), "",
             main_table(d), "",
             grid_words(d) + " cg_pblas ran on whichever of 1x2 and 2x1 was faster in a"
             f" pre-round of this run ({pre} pair{'' if pre == 1 else 's'} per n, order"
             " alternating; median of"
             " the per-pair ratios); PETSc's dense matrix is split by rows (Px1).", "",
             grid_table(d), "",
             "### The MPIs' own latencies (P = 2)", "",
             "Measured in the same run by `tests/bench/mpi_latency.c`, built from one"
             " source for each MPI, at the start and again at the end: medians over the"
             " runs of each run's median, with the range over the runs.", "",
             latency_table(d), "",
             "Time per iteration at P = 2 in units of its own MPI's 8-byte all-reduce:"
             " every rank needs the two scalars of each CG iteration (p·q and r·r), each"
             " at least one small collective or exchange, so about 2 is what MPI alone"
             " costs an iteration; what lies above it is the code's (its kernels, its"
             " other messages, its own overhead).", "",
             mpi_share_table(d), "", load_words(d)]
    if plot_files:
        lines += [""] + [f"![{alt}]({f})" for f, alt in plot_files]
    return "\n".join(lines).rstrip() + "\n"
