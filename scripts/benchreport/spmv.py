"""The sparse section's product bandwidth table (scripts/bench-sparse.sh's
spmv_bw and read_bw runs): deso's y = A x at P = 1 against the streaming
read bandwidth measured in the same process, pass by pass, and against
read_bw's own process in the same round."""
from .fmt import gbs, llc_bytes, table
from .records import median

TARGET = 0.70  # of the read bandwidth


def _rounds(res, tag):
    """{round: rec} of the runs of tag that printed their line."""
    return {r.key("round"): r for r in res.recs if r.tag == tag and r.ok}


def _list(rec, key):
    v = rec.out.get(key)
    return [float(x) for x in v if isinstance(x, (int, float))] if isinstance(v, list) else []


def _med_range(vals, fmt):
    """'median (min–max)' of vals in fmt, or '—'."""
    if not vals:
        return "—"
    return f"{fmt(median(vals))} ({fmt(min(vals))}–{fmt(max(vals))})"


def _pct(v):
    return f"{100 * v:.0f}%"


def _loads(res):
    """The 1-minute load averages recorded before each spmv round."""
    out = []
    for r in res.recs:
        if r.tag == "load" and str(r.label).startswith("load spmv") and r.ok:
            first = str(r.out.get("loadavg", "")).split()
            try:
                out.append(float(first[0]))
            except (IndexError, ValueError):
                pass
    return out


def _pooled(spmv, key):
    return [v for rec in spmv.values() for v in _list(rec, key)]


def _beside(spmv, reads):
    """Per round: deso's median GB/s over read_bw's GB/s, by wall time."""
    out = []
    for k, rec in spmv.items():
        rd = reads.get(k)
        d = _list(rec, "deso_gbs_wall")
        if rd is not None and d and rd.num("read_gbs"):
            out.append(median(d) / rd.num("read_gbs"))
    return out


def spmv_table(res):
    """The table and its notes, or [] when the file has no spmv runs."""
    spmv, reads = _rounds(res, "spmv"), _rounds(res, "read_bw")
    if not spmv:
        return []
    one = next(iter(spmv.values())).out
    rows = []
    for clock, suffix in (("CPU time", ""), ("wall time", "_wall")):
        rows.append([clock, _med_range(_pooled(spmv, "read_gbs" + suffix), gbs),
                     _med_range(_pooled(spmv, "deso_gbs" + suffix), gbs),
                     _med_range(_pooled(spmv, "deso_ratio" + suffix), _pct),
                     _med_range(_pooled(spmv, "plain_ratio" + suffix), _pct)])
    ratios = _pooled(spmv, "deso_ratio")
    beside = _beside(spmv, reads)
    loads = _loads(res)
    llc = llc_bytes(res.meta.get("llc", "")) if res.meta else None
    size = f"{one.get('bytes', 0) / 1e9:.2f} GB moved per product"
    if llc:
        size += f", {one.get('bytes', 0) / llc:.1f}x the last-level cache ({res.meta.get('llc')})"
    mb = res.settings.get("spmv_mb", "?")
    big = llc is not None and one.get("bytes", 0) >= 4 * llc
    if not big:
        verdict = "not judged: the matrix is not 4x the last-level cache (a smoke run)"
    elif median(ratios) is not None and median(ratios) >= TARGET:
        verdict = "met in this run"
    else:
        verdict = "not met in this run"
    head = ["clock", "read GB/s", "deso GB/s", "deso / read", "plain C loop / read"]
    return [f"Effective bandwidth of deso's sparse product y = A x at P = 1 on"
            f" {one.get('problem', '?')} (n = {one.get('n', '?')}, {one.get('nnz', '?')}"
            f" entries; {size}): `tests/bench/spmv_bw.c` forces one `deso_dusmv`"
            " at a time, best of 5 per pass, and counts the bytes a product must move:"
            " values (8 B) and 32-bit column indices (4 B) per entry, row pointers,"
            " x read once and y written once. Each pass sets it against the streaming read"
            f" of `read_bw` over {mb} MB timed in the same process just before (best of 3),"
            " and against the sequential twin's plain C loop on the same arrays;"
            f" {len(spmv)} rounds of {one.get('passes', '?')} passes, median (range) over"
            " all passes. CPU time is the process's own (what the code gets while it"
            " runs, on cores that other processes share); wall time includes what the"
            " scheduler gave to others.", "", table(head, rows), "",
            f"deso / read by CPU time, median over passes: {_pct(median(ratios))}"
            f" (target {_pct(TARGET)}: {verdict});"
            f" deso's median GB/s over `read_bw`'s own process in the same round"
            f" (wall time, as read_bw times): {_med_range(beside, _pct)}."
            f" Load average (1 min) before the rounds: {_med_range(loads, lambda v: f'{v:.1f}')}"
            f" on {res.meta.get('cores', '?')} cores: above 2, others shared the cores"
            " (and their memory bandwidth) and the ratios move with them.", ""]
