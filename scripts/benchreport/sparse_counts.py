"""The README's counted sparse section (scripts/bench-sparse-counts.sh): deso's
point-to-point bytes and messages per CG iteration on the sparse matrices,
with contiguous row blocks, the trace graph's partition and auto, and the
ratio of the partition's to the blocks'."""
from .counts import per_iteration
from .fmt import count_str, provenance, table

FIELDS = ("bytes_p2p", "msgs_p2p", "bytes_collective", "msgs_collective")


def calibrated(rec):
    """The run's plans were made under the calibration asked (deso-cg
    prints the alpha and beta it ran with)."""
    for k in ("alpha", "beta"):
        a, o = rec.asked.get(k), rec.num(k)
        if not isinstance(a, (int, float)) or o is None or float(a) != o:
            return False
    return True


def cases(res):
    """{(problem, p, grid, partition): [(iters, totals, placed, rec)]} of
    the usable runs: the iterations asked, on the grid asked, under the
    calibration asked."""
    got = {}
    for r in res.recs:
        if r.tag != "count" or not r.ok or not r.iters_checked() or not r.grid_checked():
            continue
        if not calibrated(r) or any(r.num(k) is None for k in FIELDS):
            continue
        t = {k: r.num(k) for k in FIELDS}
        key = (r.key("problem"), r.key("p"), r.key("grid"), r.key("partition"))
        got.setdefault(key, []).append((r.key("iters"), t, r.out.get("placed", "?"), r))
    return got


def cell(v, exact):
    return count_str(v) if exact else "≈" + count_str(v)


def measured(got):
    """{key: (per-iteration figures, exact, placed, one record)} of the
    cases with at least two iteration counts.  placed: where the products
    ran, when every run of the case agrees, else "mixed"."""
    out = {}
    for key, runs in got.items():
        if len({i for i, _, _, _ in runs}) < 2:
            continue
        per, exact = per_iteration([(i, t) for i, t, _, _ in runs])
        placed = {p for _, _, p, _ in runs}
        out[key] = (per, exact, placed.pop() if len(placed) == 1 else "mixed", runs[0][3])
    return out


def ratio_cell(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.3g}"


def rows_of(res, m):
    s = res.settings
    rows, verdicts = [], []
    for p in s.get("nps", []):
        for prob in s.get("problems", []):
            keys = [k for k in m if k[0] == prob and k[1] == p]
            block = next((m[k][0] for k in keys if k[3] == "block"), None)
            for part in s.get("partitions", []):
                key = next((k for k in keys if k[3] == part), None)
                if key is None:
                    continue
                per, exact, placed, rec = m[key]
                vs = ratio_cell(per["bytes_p2p"], block["bytes_p2p"]) if block else "—"
                vm = ratio_cell(per["msgs_p2p"], block["msgs_p2p"]) if block else "—"
                rows.append([prob, rec.out.get("n", "?"), rec.out.get("nnz", "?"), p, key[2],
                             part, placed, f"**{cell(per['bytes_p2p'], exact)}**",
                             cell(per["msgs_p2p"], exact), vs, vm,
                             cell(per["msgs_collective"], exact)])
                if part == "ntg" and block and block["bytes_p2p"]:
                    verdicts.append((prob, p, per["bytes_p2p"] / block["bytes_p2p"]))
    return rows, verdicts


def sparse_counts_section(res, link):
    s = res.settings
    m = measured(cases(res))
    rows, verdicts = rows_of(res, m)
    head = ["problem", "n", "nnz", "P", "grid", "--partition", "placed",
            "p2p bytes / iteration", "p2p messages / iteration", "bytes / block's",
            "messages / block's", "collectives / iteration"]
    said = "; ".join(f"{prob} at P = {p}: {r:.3g}" for prob, p, r in verdicts)
    iters = ", ".join(str(i) for i in s.get("iters", []))
    out = [provenance(res, "scripts/bench-sparse-counts.sh", "make bench-sparse-counts", link,
                      quick="lap2d:60 and lap2d-perm:60 at P = 4, 3 and 6 iterations",
                      timed=False),
           "",
           "What one settled CG iteration moves between ranks on the sparse matrices"
           f" (`deso-cg --gen`, mode full, tol 0, runs of {iters} iterations; MPICH, ranks"
           " oversubscribing the cores, which changes no count), with the matrix's rows and"
           " its products' vectors on contiguous row blocks (`--partition block`), on paper"
           " 004's trace-graph partition (`ntg`), or where the cost model finds it cheaper"
           " (`auto`; *placed* says which it kept). deso's own statistics (doc/DESIGN.md,"
           " *Counting bytes and messages*), summed over the ranks; a figure is the"
           " difference between the longest and the shortest run over their iterations, so"
           " that set-up, the vectors' first moves into place and the final flush cancel:"
           " the product's halo plus any vector moved every iteration. `≈` marks a figure"
           " whose runs did not all grow by the same whole number per iteration. Every plan"
           f" was made under a fixed calibration, alpha = {s.get('alpha', '?')} s a message and"
           f" beta = {s.get('beta', '?')} s a byte (a probe on oversubscribed cores measures"
           " the scheduler), and collectives by the model's formula; a run made under any"
           " other is left out. The ratios are to the same matrix's row blocks at the same P.",
           "", table(head, rows), ""]
    if verdicts:
        out += [f"Point-to-point bytes per iteration, trace-graph partition over row blocks: {said}.",
                ""]
    return "\n".join(out)
