"""The README's instruction-count section (scripts/bench-overhead.sh): where
one steady CG iteration's instructions go, deso against the sequential CBLAS
CG at P = 1 and the PBLAS CG at P = 2, by callgrind."""
from .fmt import provenance, table

# In the order of the table; deso's own categories first.
CATEGORIES = (("record", "recording the calls"),
              ("plan", "finding the plan (compiled match, preparation, agreement)"),
              ("execute", "running the plan's nodes (views, dispatch, exchanges)"),
              ("memory", "making and freeing values, views, nodes"),
              ("stats", "statistics and clock readings"),
              ("kernels", "kernels (OpenBLAS and deso's kernel wrappers)"),
              ("pblas", "PBLAS and BLACS"),
              ("mpi", "MPI (messages, and spinning while waiting)"),
              ("program", "the program's own loop"),
              ("other", "the C library (malloc, memcpy, ...; whoever calls it) and the rest"))
DESO_OWN = ("record", "plan", "execute", "memory", "stats")


def cases(res):
    """{(n, p, impl): [(iters, {category: instructions per rank})]} of the
    runs that ran the iterations asked, on the grid asked."""
    got = {}
    for r in res.recs:
        if r.tag != "instr" or not r.ok or not r.iters_checked() or not r.grid_checked():
            continue
        ins = r.out.get("instr")
        ranks = r.out.get("instr_ranks")
        if not isinstance(ins, dict) or not isinstance(ranks, int) or ranks < 1:
            continue
        per_rank = {k: v / ranks for k, v in ins.items()}
        got.setdefault((r.key("n"), r.key("p"), r.key("impl")), []).append(
            (r.key("iters"), per_rank))
    return got


def per_iteration(runs):
    """The longest run less the shortest, over their iterations."""
    runs = sorted(runs, key=lambda x: x[0])
    (i0, a), (i1, b) = runs[0], runs[-1]
    if i1 == i0:
        return None
    return {k: (b.get(k, 0) - a.get(k, 0)) / (i1 - i0) for k in set(a) | set(b)}


def fmt(v):
    return f"{v:,.0f}"


def overhead_section(res, link):
    got = cases(res)
    per = {k: per_iteration(v) for k, v in got.items()}
    out = [provenance(res, "scripts/bench-overhead.sh", "make bench-overhead", link, timed=False),
           "",
           "Instructions per steady CG iteration (tol 0, 50-iteration solves), per rank"
           " (summed over the ranks, divided by their number), as callgrind counted them:"
           " the difference between two runs of different lengths over their difference"
           " in iterations, so that start-up, set-up and the first plans cancel. deso in"
           " mode full; at P = 2 every code on the 2x1 grid. An instruction is charged to the"
           " code that executed it (scripts/callgrind_categories.py). Counts, not times;"
           " but a rank waiting for a message spins inside MPI, so MPI's row depends on"
           " how long the other rank took (and on the load) and is left out of the totals,"
           " which compare the work each code does outside MPI. deso's own rows are what"
           " delayed evaluation costs per iteration; the kernels row differs from the"
           " anchor's by deso's kernel wrappers and, at P = 2, by the vector operations"
           " each rank repeats on replicated vectors when the plan replicates them.", ""]
    for n, p, anchor in sorted({(k[0], k[1], "seq" if k[1] == 1 else "pblas") for k in per}):
        d, a = per.get((n, p, "deso")), per.get((n, p, anchor))
        if d is None or a is None:
            continue
        name = "cg_seq" if anchor == "seq" else "cg_pblas"
        rows = []
        for cat, what in CATEGORIES:
            dv, av = d.get(cat, 0.0), a.get(cat, 0.0)
            if abs(dv) < 0.5 and abs(av) < 0.5:
                continue
            rows.append([what, fmt(dv), fmt(av)])
        own = sum(d.get(c, 0.0) for c in DESO_OWN)
        rows.append(["**deso's own (the first five rows)**", f"**{fmt(own)}**", "—"])
        td = sum(v for k, v in d.items() if k != "mpi")
        ta = sum(v for k, v in a.items() if k != "mpi")
        rows.append(["**total outside MPI**", f"**{fmt(td)}**", f"**{fmt(ta)}**"])
        rows.append(["total outside MPI / anchor's", f"{td / ta:.2f}" if ta > 0 else "—", "1"])
        out += [f"**n = {n}, P = {p}** (against {name})", "",
                table(["where", "deso", name], rows), ""]
    return "\n".join(out)
