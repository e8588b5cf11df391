"""The README's remap section (scripts/bench-remap.sh): deso against pdgemr2d."""
from .fmt import g2, gbs, pct_num, provenance, sig, span, table
from .records import median, num


class RemapCase:
    """The runs of one case; figures are medians over its usable runs."""

    def __init__(self, first):
        a = first.asked
        self.shape, self.layout, self.arrays = a.get("shape"), a.get("layout"), a.get("arrays")
        self.name, self.change = a.get("case", "?"), a.get("change", "?")
        self.recs = []

    def add(self, r):
        self.recs.append(r)

    def measured(self):
        """Runs that printed a line with the repetitions asked and the timings."""
        return [r for r in self.recs if r.ok and r.asked.get("reps") == r.out.get("reps")
                and (r.num("time_deso") or 0) > 0 and (r.num("time_scalapack") or 0) > 0]

    def usable(self):
        """Measured runs whose result was right and equal to pdgemr2d's: the
        figures come from these alone (a wrong remap's speed means nothing)."""
        return [r for r in self.measured() if r.out.get("verified") is True
                and r.out.get("scalapack_equal") is True]

    def wrong(self):
        return len(self.measured()) - len(self.usable())

    def med(self, key):
        return median([r.num(key) for r in self.usable() if r.num(key) is not None])

    def ratios(self):
        return sorted(r.num("time_deso") / r.num("time_scalapack") for r in self.usable())

    @staticmethod
    def cached(r):
        """Whether run r set up its communicator with an earlier remap (it
        reports that one's set-up as time_setup_first): its time_setup is
        then the cached set-up's."""
        return r.num("time_setup_first") is not None and r.num("time_setup") is not None

    def oneshot(self):
        """Per run, (set-up when cached + plan + the first execution) /
        pdgemr2d: a remap made and used once on a communicator that has
        seen one, as pdgemr2d's users do (runs that did not report the
        times are left out; older runs without a cached set-up count plan
        + first execution)."""
        return sorted((r.num("time_plan") + r.num("time_first")
                       + (r.num("time_setup") if self.cached(r) else 0.0))
                      / r.num("time_scalapack")
                      for r in self.usable()
                      if r.num("time_first") is not None and r.num("time_plan") is not None)

    def setup_first(self):
        return self.med("time_setup_first")

    def bytes(self):
        u = self.usable()
        if not u:
            return None
        return num(u[0].out, "m") * num(u[0].out, "n") * 8.0

    @property
    def in_place(self):
        return self.layout == "inplace"

    @property
    def real(self):
        return self.layout not in ("same", "inplace")

    def transport(self):
        # a name may hold a comma ("shared memory, single copy"): runs
        # that chose differently are set apart by a slash
        ts = sorted({r.out.get("transport", "?") for r in self.usable()})
        return " / ".join(ts) if ts else "—"

    def pct_memcpy(self):
        return self.med("pct_memcpy") if not self.in_place else None

    def memcpy_time(self):
        g, b = self.med("memcpy_gbs"), self.bytes()
        return b / (g * 1e9) if g and b else None


def remap_cases(res):
    cases, order = {}, []
    for r in res.recs:
        if r.tag != "remap":
            continue
        key = (r.asked.get("shape"), r.asked.get("layout"), r.asked.get("arrays"),
               r.asked.get("via", "shm"))
        if key not in cases:
            cases[key] = RemapCase(r)
            order.append(key)
        cases[key].add(r)
    return [cases[k] for k in order]


def remap_table(cases):
    head = ["case", "layout change", "transport", "source arrays", "runs", "deso s",
            "pdgemr2d s", "deso / pdgemr2d", "plan s", "set-up s", "one-shot / pdgemr2d",
            "deso GB/s",
            "memcpy GB/s", "% memcpy", "verified"]
    rows = []
    for c in cases:
        u = c.usable()
        lead = [c.name, c.change]
        wrong = f"**NO** ({c.wrong()} of {len(c.measured())} runs wrong)" if c.wrong() else "yes"
        if not u:
            words = sorted({r.state() if not r.ok else "reps differ" for r in c.recs
                            if r not in c.measured()})
            rows.append(lead + ["—", c.arrays, f"0 of {len(c.recs)}", ", ".join(words) or "—"]
                        + ["—"] * (len(head) - 7) + [wrong if c.measured() else "—"])
            continue
        rs, os_ = c.ratios(), c.oneshot()
        td = c.med("time_deso")
        bw = c.bytes() / td * 1e-9 if td and c.bytes() and not c.in_place else None
        pm = [r.num("pct_memcpy") for r in u]
        rows.append(lead + [
            c.transport(), c.arrays,
            f"{len(u)}" + (f" of {len(c.recs)}" if len(c.recs) > len(u) else ""),
            sig(td), sig(c.med("time_scalapack")),
            sig(median(rs)) + (f" ({sig(rs[0])}–{sig(rs[-1])})" if len(rs) > 1 else ""),
            sig(c.med("time_plan")) if c.oneshot() else "—",
            sig(median([r.num("time_setup") for r in u if c.cached(r)])
                if any(c.cached(r) for r in u) else None) or "—",
            (sig(median(os_)) + (f" ({sig(os_[0])}–{sig(os_[-1])})" if len(os_) > 1 else ""))
            if os_ else "—",
            "—" if bw is None else gbs(bw),
            gbs(c.med("memcpy_gbs")),
            "—" if c.in_place else (f"{pct_num(median(pm))}%"
                                    + (f" ({pct_num(min(pm))}–{pct_num(max(pm))}%)"
                                       if len(pm) > 1 else "")),
            wrong])
    return table(head, rows)


def choice_prose(cs):
    """Which way the shared-array remaps kept (deso_redist_transport)."""
    single = [c for c in cs if "single copy" in c.transport()]
    if not cs:
        return ""
    # results from before the choice existed name no choice at all
    kept = (f": {len(single)} of the {len(cs)} shared-array cases here kept single copy"
            " (`shared memory, single copy` in the transport column), the others the rings"
            if single else "")
    return (" Single copy is not always the faster (it takes fewer instructions, but where a"
            " source's cache lines hold elements for both ranks, as in every case here, each"
            " rank reads every line of both sources, while the rings read each line once and"
            " pass half of it on through a ring that stays in cache), so each remap times one"
            " execution each way and keeps the faster" + kept + ".")


def remap_prose(cases):
    """The paragraphs after the table; every figure in them is computed here."""
    def pick(f):
        return [c for c in cases if c.usable() and f(c)]

    def pct_span(cs):
        return span([c.pct_memcpy() for c in cs], pct_num)

    real = pick(lambda c: c.real)
    # "shared memory, single copy" is the shared-memory transport too,
    # having chosen to read the sources in place
    transports = sorted({t.split(",")[0] for c in real for t in c.transport().split(", ")
                         if t != "single copy"})
    out = []
    if transports == ["shared memory"]:
        out.append("Both ranks are on one node, so the real remaps took the shared-memory"
                   " transport (`deso_redist_transport`; `DESO_REMAP_SHM=0` keeps them on"
                   " MPI).")
    elif transports:
        out.append("The real remaps took the transport(s) " + ", ".join(
            f"`{t}`" for t in transports) + " (`deso_redist_transport`).")
    short = pct_span(pick(lambda c: c.real and c.arrays == "malloc"
                          and c.layout in ("c3-c5", "c64-c1")))
    long_ = pct_span(pick(lambda c: c.real and c.arrays == "malloc" and c.layout == "block-c1"))
    if short or long_:
        out[-1:] = [(out[-1] + " " if out else "")
                    + "With ordinary (`malloc`) arrays each sender packs its message chunk by"
                    " chunk into a ring of slots in an MPI-3 shared window and the receiver"
                    " unpacks each chunk as it lands, while both copy their own part in pieces"
                    " paced with the packing: every moved element is copied twice, through"
                    " offset tables, so short runs (cyclic(3) -> cyclic(5)) and strided ones"
                    " (cyclic(64) -> cyclic(1))"
                    + (f" reached {short}% of memcpy here" if short else "")
                    + (f", long runs (block -> cyclic(1)) {long_}%" if long_ else "") + "."]
    shared = pct_span(pick(lambda c: c.real and c.arrays == "shared"))
    out.append("When the source arrays come from `deso_redist_array_alloc(comm, count,"
               " &a)` (this rank's local array, in a shared window every rank of comm has"
               " mapped; collective; `deso_redist_array_free(a)`), nothing is packed: each"
               " sender says where its source is, each receiver copies its elements straight"
               " from there; for a vector it writes its whole target once, front to back,"
               " from its own source and its senders' (one program over all of them, one"
               " period of them repeated, built with the plan), whole cache lines written"
               " around the cache, 8 elements at a time with AVX-512 gathers where the"
               " processor has them (scalar loads otherwise); for a matrix it copies from"
               " each sender in turn."
               " That is one copy per element"
               + (f": {shared}% of memcpy here (memcpy itself reads each target line before"
                  " writing it; the streamed target does not)" if shared else "") + "."
               + choice_prose(pick(lambda c: c.real and c.arrays == "shared")) +
               " It is decided per execution and per pair of ranks: a sender whose array is"
               " not shared (or whose leading dimension is not its local row count) is served"
               " by the rings, in the same remap. The arrays are ordinary memory to"
               " everything else (ScaLAPACK, deso's wrappers); on several nodes they are"
               " plain memory and remaps go over MPI.")
    last = []
    rr = span([median(c.ratios()) for c in real], g2)
    if rr:
        last.append(f"Real remaps took {rr}x pdgemr2d's time here (medians per case; a plan"
                    " is built once and reused, pdgemr2d renegotiates on every call).")
    osr = span([median(c.oneshot()) for c in real if c.oneshot()], g2)
    cached = any(c.cached(r) for c in real for r in c.usable())
    if osr and cached:
        first = span([c.setup_first() for c in real if c.setup_first() is not None], g2)
        last.append(f"Made and used once (\"one-shot\": the set-up, `time_setup`, the plan,"
                    f" `time_plan`, and the first execution), they took {osr}x pdgemr2d's"
                    " time. The set-up counted there is the agreements alone: the"
                    " communicator's duplicate, its shared-memory rings and the MPI"
                    " transport's message buffers (mapped page by page when made) are"
                    " made by the first remap on a communicator and kept on it for the"
                    " next ones (each run makes and destroys one remap of the same layouts"
                    " first" + (f"; that first set-up took {first} s" if first else "")
                    + ").")
    elif osr:
        last.append(f"Made and used once (\"one-shot\": the plan, `time_plan`, plus the first"
                    f" execution), they took {osr}x pdgemr2d's time; setting up the"
                    " communicator and the shared window (`time_setup`) is not counted.")
    same = pick(lambda c: c.layout == "same")
    if same:
        sr = span([median(c.ratios()) for c in same], g2)
        pm = span([c.med("time_scalapack") / c.memcpy_time() for c in same
                   if c.memcpy_time()], g2)
        last.append(f"An identical layout out of place is one memcpy: {sr}x pdgemr2d's time"
                    + (f", pdgemr2d itself taking {pm} times a memcpy of the array" if pm
                       else "") + ".")
    inplace = pick(lambda c: c.in_place)
    if inplace:
        t = span([c.med("time_deso") for c in inplace], g2)
        last.append(f"In place deso moves nothing: {t} s per call.")
    if last:
        out.append(" ".join(last))
    return "\n\n".join(out)


def remap_section(res, link):
    s = res.settings
    cases = remap_cases(res)
    reps, runs = s.get("reps", "?"), s.get("runs", "?")
    lines = [provenance(res, "scripts/bench-remap.sh", "make bench-remap", link), "",
             "deso's remap engine against ScaLAPACK's `pdgemr2d` on the same data and"
             f" layouts at P = {s.get('ranks', 2)}, {runs} run{'s' if runs != 1 else ''} of"
             " each case" + (" (in rounds: every case once, then again)" if runs != 1 else "")
             + ", each run one process:"
             f" deso's first remap verified, then {reps} remaps by deso and {reps} by pdgemr2d"
             " timed from a barrier (the mean per remap of the slowest rank's time), every"
             " result checked against the expected values and against pdgemr2d's (`verified`)."
             " The table shows medians over the runs and, in brackets, the range of the"
             " per-run ratios. GB/s is the array's bytes over"
             " the time of one remap. The memcpy yardstick is measured in the same process,"
             f" paired with the remaps (`deso-remap --memcpy`): each of {reps} times, both"
             " ranks copy their source arrays with memcpy at once, then one remap runs;"
             f" a run's \"% memcpy\" is the median of its {reps} ratios, so the shared"
             " machine's drift cancels. \"in place\" is the identical-layout remap with"
             " source and target the same array: deso notices and moves nothing. \"source"
             " arrays\": `malloc`, or `deso_redist_array_alloc` (shared; `deso-remap"
             " --shared-arrays`), the same arrays for pdgemr2d.", "",
             remap_table(cases), "", remap_prose(cases)]
    return "\n".join(lines).rstrip() + "\n"
