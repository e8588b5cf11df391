"""The sweep suite's runs (scripts/bench-sweep.sh) sorted by what they measured.

Which runs count, per-iteration times, the paired ratios, the PBLAS grid
pre-round, the MPI latencies and the load records: everything the sweep's
section and its plot compute from.
"""
from .records import median, num

# (P, anchor) of the paired cases, in the order the tables show them
CASES = ((1, "seq"), (2, "pblas"), (2, "petsc"))
ANCHOR_NAME = {"seq": "cg_seq", "pblas": "PBLAS", "petsc": "PETSc"}
LATENCY_FIELDS = ("pingpong_8", "pingpong_400", "allreduce_8")
# A run shared the machine when other processes used this many CPU seconds
# during it (the driver waits for idle cores after such a run)
SHARED_CPU = 0.2


def shared(r):
    """The run's record says other processes computed beside it."""
    return r is not None and r.cpu_others is not None and r.cpu_others >= SHARED_CPU
MPI_NAME = {"mpich": "MPICH", "openmpi": "Open MPI"}


def per_iter(r):
    """time_loop per iteration of a run that did what it was asked, or None:
    it printed a line, ran the iterations asked and, when a grid was asked,
    ran on it."""
    if r is None or not r.ok or not r.iters_checked():
        return None
    if "grid" in r.asked and not r.grid_checked():
        return None
    t, k = r.num("time_loop"), r.num("iters")
    return t / k if t and t > 0 and k else None


class Spread:
    """A list of figures: its median, minimum and maximum (None when empty)."""

    def __init__(self, vals):
        self.vals = sorted(v for v in vals if v is not None)
        self.med = median(self.vals)
        self.lo = self.vals[0] if self.vals else None
        self.hi = self.vals[-1] if self.vals else None

    def __len__(self):
        return len(self.vals)


class Pairs:
    """The paired runs of one (n, P, anchor): per-pair ratios deso / anchor."""

    def __init__(self, recs, anchor):
        by = {}
        for r in recs:
            by.setdefault(r.asked.get("pair"), {})[r.asked.get("impl")] = r
        self.asked = len(by)
        ratios, self.deso, self.anchor = [], [], []
        for sides in by.values():
            d = per_iter(sides.get("deso"))
            a = per_iter(sides.get(anchor))
            if d is not None:
                self.deso.append(d)
            if a is not None:
                self.anchor.append(a)
            if d is not None and a is not None:
                ratios.append(d / a)
        self.ratio = Spread(ratios)
        # pairs with a run that shared the machine with other processes' work
        self.shared = sum(1 for sides in by.values()
                          if any(shared(r) for r in sides.values()))
        self.failed = sum(1 for r in recs if not r.ok)
        self.unusable = sum(1 for r in recs if r.ok and per_iter(r) is None)
        self.deso_grids = sorted({placed(r.out) for r in recs
                                  if r.ok and r.asked.get("impl") == "deso"})
        self.anchor_grids = sorted({r.out.get("grid", "?") for r in recs
                                    if r.ok and r.asked.get("impl") != "deso"})


def placed(out):
    """deso's grid, and where its matrix went when the run says (folded over
    the grid, or replicated: whole on every rank)."""
    m = out.get("matrix")
    return out.get("grid", "?") + (f", A {m}" if m else "")


class SweepData:
    def __init__(self, res):
        self.res = res
        s = res.settings
        self.ns = [int(n) for n in s.get("ns", [])]
        self.iters = {int(k): v for k, v in (s.get("iters") or {}).items()}
        self.solve = s.get("solve")
        recs = res.recs
        self.pairs = {}
        for n in self.ns:
            for p, anchor in CASES:
                self.pairs[(n, p, anchor)] = Pairs(
                    [r for r in recs if r.tag == "pair" and r.asked.get("n") == n
                     and r.asked.get("p") == p and r.asked.get("anchor") == anchor], anchor)
        self.pre = {n: [r for r in recs if r.tag == "grid" and r.asked.get("n") == n]
                    for n in self.ns}
        self.latency = [r for r in recs if r.tag == "latency"]
        self.loads = [r for r in recs if r.tag == "load" and r.ok
                      and "waited" not in r.asked]

    def times(self, n, p, code):
        """Spread of the per-iteration times of a code at (n, P) over its
        paired runs (deso at P = 2: its runs against both anchors)."""
        vals = []
        for p_, anchor in CASES:
            if p_ == p and code in ("deso", anchor):
                pr = self.pairs.get((n, p, anchor))
                vals += (pr.deso if code == "deso" else pr.anchor) if pr else []
        return Spread(vals)

    def deso_grids(self, n, p):
        return sorted({g for (n_, p_, _), pr in self.pairs.items() if n_ == n and p_ == p
                       for g in pr.deso_grids})

    def pre_round(self, n):
        """The PBLAS grid pre-round at n: (median time per grid, Spread of the
        per-pair ratios 1x2 / 2x1, the grid they pick)."""
        by, t = {}, {"1x2": [], "2x1": []}
        for r in self.pre[n]:
            v = per_iter(r)
            g = r.asked.get("grid")
            if v is not None and g in t:
                t[g].append(v)
                by.setdefault(r.asked.get("pair"), {})[g] = v
        ratios = Spread([p["1x2"] / p["2x1"] for p in by.values() if len(p) == 2])
        pick = None
        if ratios.med is not None:
            pick = "1x2" if ratios.med < 1 else "2x1"
        return {g: median(v) for g, v in t.items()}, ratios, pick

    def latencies(self):
        """Per MPI (in the order MPICH, Open MPI): its library name as printed,
        the runs asked and usable, and per field the Spread over its runs of
        their medians."""
        out = []
        for mpi in ("mpich", "openmpi"):
            recs = [r for r in self.latency if r.asked.get("mpi") == mpi]
            ok = [r for r in recs if r.ok]
            names = sorted({r.out.get("mpi", "?") for r in ok})
            out.append((mpi, ", ".join(names) or MPI_NAME[mpi], len(recs), len(ok),
                        {f: Spread([r.num(f) for r in ok]) for f in LATENCY_FIELDS}))
        return out

    def allreduce(self, mpi):
        for m, _, _, _, f in self.latencies():
            if m == mpi:
                return f["allreduce_8"].med
        return None

    def shared_runs(self):
        """(runs that shared the machine, runs whose share is known)."""
        known = [r for r in self.res.recs if r.cpu_others is not None]
        return sum(1 for r in known if shared(r)), len(known)

    def waited(self):
        """Seconds the driver waited for idle cores, over the whole sweep."""
        return sum(num(r.asked, "waited") or 0 for r in self.res.recs if r.tag == "load")

    def load_spread(self):
        """Spread of the 1-minute load average over the load records."""
        vals = []
        for r in self.loads:
            try:
                vals.append(float(str(r.out.get("loadavg", "")).split()[0]))
            except (ValueError, IndexError):
                pass
        return Spread(vals)
