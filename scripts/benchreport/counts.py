"""The README's communication-count section (scripts/bench-counts.sh): MPI
calls per CG iteration of deso and of the PBLAS CG, both seen by the PMPI
interposer, summed over the ranks."""
from .fmt import count_str, provenance, table

# The interposer's collective kinds a CG iteration can use; "setup"
# (communicator and window creation) is left out: neither code makes one
# inside its loop.
KINDS = ("bcast", "reduce", "allreduce", "gather", "allgather", "scatter",
         "alltoall", "barrier", "other")
FIELDS = ("coll_calls", "coll_bytes", "sends", "send_bytes")


def totals(rec):
    """The run's counts (FIELDS and per-kind calls), or None."""
    p = rec.out.get("pmpi") if rec.out else None
    if not isinstance(p, dict):
        return None
    t = {k + "_calls": p.get(k + "_calls", 0) for k in KINDS}
    t["coll_calls"] = sum(t.values())
    t["coll_bytes"] = sum(p.get(k + "_bytes", 0) for k in KINDS)
    t["sends"], t["send_bytes"] = p.get("sends", 0), p.get("send_bytes", 0)
    return t


def per_iteration(runs):
    """runs: [(iters, totals)], at least two iteration counts.  Returns
    ({field: count per iteration}, exact): the difference between the
    longest and the shortest run over their iterations; exact when every
    consecutive pair of runs grew by the same whole number per iteration
    in every field."""
    runs = sorted(runs, key=lambda r: r[0])
    (i0, a), (i1, b) = runs[0], runs[-1]
    per = {k: (b[k] - a[k]) / (i1 - i0) for k in a}
    exact = all(v == int(v) for v in per.values())
    for (ia, x), (ib, y) in zip(runs, runs[1:]):
        exact = exact and ib > ia and all((y[k] - x[k]) == per[k] * (ib - ia) for k in x)
    return per, exact


def cases(res):
    """{(n, p, grid, code): [(iters, totals)]} of the usable runs: the
    iterations asked were run, on the grid asked."""
    got = {}
    for r in res.recs:
        if r.tag != "count" or not r.ok or not r.iters_checked() or not r.grid_checked():
            continue
        t = totals(r)
        if t is None:
            continue
        impl = r.key("impl")
        code = "PBLAS" if impl == "pblas" else f"deso {r.key('mode')}"
        key = (r.key("n"), r.key("p"), r.key("grid"), code)
        got.setdefault(key, []).append((r.key("iters"), t))
    return got


def cell(v, exact):
    return count_str(v) if exact else "≈" + count_str(v)


def counts_section(res, link):
    got = cases(res)
    rows = []
    pblas = {}
    keys = sorted(got, key=lambda k: (k[0], k[1], k[3] != "PBLAS", k[3]))
    for key in keys:
        runs = got[key]
        if len({i for i, _ in runs}) < 2:
            continue
        per, exact = per_iteration(runs)
        n, p, grid, code = key
        if code == "PBLAS":
            pblas[(n, p)] = per["coll_calls"]
        base = pblas.get((n, p))
        vs = (f"{per['coll_calls'] / base:.2f}" if base and code != "PBLAS" else "—")
        kinds = ", ".join(f"{k} {cell(per[k + '_calls'], exact)}" for k in KINDS
                          if per[k + "_calls"])
        rows.append([n, p, grid, code, ", ".join(str(i) for i, _ in sorted(runs, key=lambda r: r[0])),
                     f"**{cell(per['coll_calls'], exact)}**", kinds or "—", vs,
                     cell(per["coll_bytes"], exact), cell(per["sends"], exact),
                     cell(per["send_bytes"], exact)])
    head = ["n", "P", "grid", "code", "iterations of the runs", "collective calls",
            "by kind", "calls / PBLAS", "collective payload bytes", "sends", "send bytes"]
    out = [provenance(res, "scripts/bench-counts.sh", "make bench-counts", link, timed=False), "",
           "Per CG iteration, summed over the ranks, as the PMPI interposer (tests/pmpi) saw"
           " them: a collective call is one process's call (a broadcast among 4 ranks is 4"
           " calls), its payload bytes what that process passed to MPI (not deso's counting"
           " convention, which the tests hold deso's own statistics to); a send is one"
           " point-to-point message. A figure is the difference between the longest and the"
           " shortest run over their iterations; `≈` marks one whose runs did not all grow by"
           " the same whole number per iteration (the plan changed between them). Both codes"
           " on the same grid, tol 0.", "", table(head, rows), ""]
    return "\n".join(out)
