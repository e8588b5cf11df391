"""The CG suite's runs (scripts/bench.sh) sorted by what they measured.

Which runs count, per-iteration figures, exact communication counts and the
cost model: everything the CG section and its plots compute from.
"""
from .fmt import count_str

COUNT_FIELDS = ("bytes_p2p", "msgs_p2p", "bytes_collective", "msgs_collective")


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
