"""The sparse CG section's memory table (scripts/bench-sparse.sh): each
rank's peak resident memory less the same rank's in a baseline run of the
same round at the same P (deso-cg on a tiny generated problem: MPI, the
transport and OpenBLAS), against the rank's share of the problem."""
from .fmt import ratio, table
from .records import median

MB = 1e6


def shares(n, nnz, p, nvec):
    """Each rank's share in bytes: its balanced block of rows (the first
    n % p ranks one row longer), their part of the CSR arrays (nnz in
    proportion to the rows; 8-byte values and 4-byte columns an entry,
    8-byte row pointers) and nvec vectors of their doubles."""
    out = []
    for r in range(p):
        rows = n // p + (1 if r < n % p else 0)
        entries = nnz * rows / n
        out.append(entries * 12 + (rows + 1) * 8 + nvec * rows * 8)
    return out


def vector_count(out):
    """The vectors deso-cg counts (b, x, r, p, q, t, ones and a
    preconditioner's): vector_bytes is twice their n doubles."""
    vb, n = out.get("vector_bytes"), out.get("n")
    if not isinstance(vb, int) or not isinstance(n, int) or n <= 0:
        return None
    return vb // (2 * 8 * n)


def baselines(res):
    """{(p, round): [peak_rss per rank]} of the baseline runs."""
    got = {}
    for r in res.recs:
        if r.tag == "baseline" and r.ok and isinstance(r.out.get("peak_rss"), list):
            got[(r.key("p"), r.key("round"))] = r.out["peak_rss"]
    return got


def above_baseline(runs, base, p):
    """Per rank, the median over rounds of peak_rss less the same round's
    baseline at p (rounds without both left out), or None."""
    per_rank = [[] for _ in range(p)]
    for k, rec in runs.items():
        peak, b = rec.out.get("peak_rss"), base.get((p, k))
        if not isinstance(peak, list) or b is None or len(peak) != p or len(b) != p:
            continue
        for q in range(p):
            per_rank[q].append(peak[q] - b[q])
    return [median(xs) for xs in per_rank] if all(per_rank) else None


def mb_list(vals):
    return " / ".join(f"{v / MB:.1f}" for v in vals)


def memory_rows(got, settings, base):
    rows = []
    for prob in settings.get("problems", []):
        for p in settings.get("nps", []):
            runs = got.get((prob, p, "deso"))
            if not runs:
                continue
            one = next(iter(runs.values())).out
            nvec = vector_count(one)
            above = above_baseline(runs, base, p)
            if nvec is None or not isinstance(one.get("nnz"), int):
                continue
            share = shares(one["n"], one["nnz"], p, nvec)
            ratios = "—" if above is None else " / ".join(
                ratio(a, s, 2) for a, s in zip(above, share))
            rows.append([prob, p, one.get("placed", "?"), nvec, mb_list(share),
                         "—" if above is None else mb_list(above), ratios])
    return rows


def memory_table(res, got):
    """The table's lines (none without baseline runs in the results)."""
    base = baselines(res)
    rows = memory_rows(got, res.settings, base)
    if not base or not rows:
        return []
    head = ["problem", "P", "placed", "vectors", "share per rank (MB)",
            "peak RSS − baseline per rank (MB)", "ratio per rank"]
    return [f"Peak resident memory per rank (`ru_maxrss`, deso-cg's `peak_rss`) less the same"
            f" rank's in a baseline run of the same round at the same P (deso-cg on"
            f" `{res.settings.get('baseline', '?')}`: MPI, its transport and OpenBLAS), the"
            " median over rounds, against the rank's share: its balanced block of rows' part of"
            " the CSR arrays (8-byte values and 4-byte columns an entry, 8-byte row pointers;"
            " entries in proportion to the rows) and of deso-cg's vectors (`vector_bytes` / 2n"
            " doubles). Ranks in order, separated by a slash. At P > 1 deso-cg's partition is"
            " `auto`: rank 0 builds paper 004's trace graph and partitions it before the cost"
            " model keeps the row blocks or the partition (`placed`), so rank 0 also held the"
            " whole pattern, the trace graph and METIS's work space, whichever it kept.", "", table(head, rows), ""]
