"""The results files: one Results per JSON-lines file, one Rec per run.

The files are written by scripts/bench_lib.sh for scripts/bench.sh and
scripts/bench-remap.sh: a meta record, one record per run, an end record.
"""
import json
import math
import sys


class Rec:
    """One run: what the driver asked for, and what the program printed."""

    def __init__(self, r):
        self.tag = r.get("bench", "?")
        self.label = r.get("label", "")
        self.failed = r.get("failed")
        self.skipped = r.get("skipped")
        # CPU seconds other processes used during the run (None: not known)
        self.cpu_others = num(r, "cpu_others")
        if "asked" in r or "out" in r:
            self.asked = r.get("asked") or {}
            self.out = r.get("out") if self.failed is None and self.skipped is None else None
        else:  # the flat lines of older drivers: what was asked was not kept
            rest = {k: v for k, v in r.items() if k not in ("bench", "failed", "skipped")}
            bad = self.failed is not None or self.skipped is not None
            self.asked = rest if bad else {}
            self.out = None if bad else rest
        if not isinstance(self.out, dict):
            self.out = None

    @property
    def ok(self):
        return self.out is not None

    def key(self, k, default=None):
        """A field that identifies the run: asked, else printed."""
        if k in self.asked:
            return self.asked[k]
        return self.out.get(k, default) if self.out else default

    def num(self, k):
        return num(self.out, k)

    def state(self):
        """The word a table shows for a run without figures."""
        if self.skipped is not None:
            return "skipped"
        if self.failed is not None:
            return "failed"
        return "?"

    def iters_checked(self):
        """The program ran exactly the iterations asked (both known)."""
        a, o = self.asked.get("iters"), self.out.get("iters") if self.out else None
        return isinstance(a, int) and isinstance(o, int) and a == o

    def grid_checked(self):
        a, o = self.asked.get("grid"), self.out.get("grid") if self.out else None
        return a is not None and a == o


def num(d, key):
    """d[key] as a float, or None when absent or not a number."""
    v = d.get(key) if d else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


class Results:
    def __init__(self, path):
        self.path = path
        self.meta, self.end, self.recs = {}, {}, []
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
                if not isinstance(r, dict):
                    continue
                if r.get("bench") == "meta":
                    self.meta = r
                elif r.get("bench") == "end":
                    self.end = r
                else:
                    self.recs.append(Rec(r))
        # older drivers kept the settings beside the meta fields
        self.settings = self.meta.get("settings") or self.meta
        self.suite = self.meta.get("suite") or "cg"


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2
