"""The sweep suite's PNG: time per iteration against n, log-log, every code,
drawn by gnuplot from the same figures as its section."""
import os
import shutil
import subprocess
import tempfile

from .plots import gp_terminal
from .sweepdata import SweepData

# (code, P, title, colour, dash type, point type): P = 2 solid, P = 1 dashed
SERIES = (("deso", 2, "deso full, P=2 (MPICH, the grid it picked)", "#1b9e77", 1, 7),
          ("pblas", 2, "PBLAS, P=2 (MPICH, its faster grid)", "#7570b3", 1, 5),
          ("petsc", 2, "PETSc KSPCG, P=2 (Open MPI)", "#d95f02", 1, 9),
          ("deso", 1, "deso full, P=1", "#1b9e77", 2, 6),
          ("seq", 1, "cg\\_seq (CBLAS), P=1", "#555555", 2, 4))


def dat(v):
    return "?" if v is None or not v > 0 else f"{1e6 * v:.6g}"


def sweep_plot(res, docdir):
    """Draws docdir/bench-sweep.png; returns [(file, alt)].  Raises
    RuntimeError when gnuplot is missing or fails."""
    if shutil.which("gnuplot") is None:
        raise RuntimeError("gnuplot not found: install it (scripts/setup.sh installs"
                           " gnuplot-nox) or pass --no-plots")
    d = SweepData(res)
    tmpdir = tempfile.mkdtemp(prefix="deso-plot.")
    try:
        fn = os.path.join(tmpdir, "sweep.dat")
        have = False
        with open(fn, "w") as f:
            for n in d.ns:
                row = [str(n)]
                for code, p, *_ in SERIES:
                    sp = d.times(n, p, code)
                    have = have or sp.med is not None
                    row += [dat(sp.med), dat(sp.lo), dat(sp.hi)]
                f.write(" ".join(row) + "\n")
        out = os.path.join(docdir, "bench-sweep.png")
        term = gp_terminal().replace("1280,640", "1000,700")
        gp = [f"set terminal {term}", f"set output '{out}'", "set datafile missing '?'",
              "set logscale xy", "set grid xtics ytics mxtics mytics",
              "set xlabel 'n (matrix order)'",
              "set ylabel 'time per iteration (µs; time\\_loop / iterations)'",
              "set key top left box opaque",
              "set title 'CG time per iteration against n (log-log): median of the paired"
              " runs, bars min–max'",
              "set xtics (" + ", ".join(f"'{n}' {n}" for n in d.ns) + ")" if d.ns else "",
              # a margin of a quarter of a decade either side of the sizes
              f"set xrange [{min(d.ns) / 1.8:g}:{max(d.ns) * 1.8:g}]" if d.ns else ""]
        lines = []
        for mpi, name, _, _, f in d.latencies():
            a = f["allreduce_8"].med
            if a:
                lines.append((2e6 * a, f"2 x 8-byte all-reduce, {name}",
                              "#1b9e77" if mpi == "mpich" else "#d95f02"))
        if not have:
            gp += ["set xrange [1:10]", "set yrange [1:10]",
                   "set label 1 'no data' at graph 0.5, 0.5 center", "plot NaN notitle"]
        else:
            cols = []
            for k, (_, _, title, colour, dt, pt) in enumerate(SERIES):
                c = 2 + 3 * k
                cols.append(f"'{fn}' using 1:{c}:{c + 1}:{c + 2} with yerrorlines"
                            f" title '{title}' lc rgb '{colour}' dt {dt} pt {pt} ps 1.3 lw 2")
            for v, title, colour in lines:
                cols.append(f"{v:.6g} title '{title}' lc rgb '{colour}' dt 3 lw 2")
            gp.append("plot " + ", ".join(cols))
        script = os.path.join(tmpdir, "sweep.gp")
        with open(script, "w") as f:
            f.write("\n".join(x for x in gp if x) + "\n")
        try:
            r = subprocess.run(["gnuplot", script], capture_output=True, text=True,
                               timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            raise RuntimeError(f"gnuplot failed: {e}") from e
        if r.returncode != 0:
            noise = [ln for ln in r.stderr.splitlines()
                     if ln.strip() and "warning" not in ln.lower()]
            raise RuntimeError("gnuplot failed:\n" + "\n".join(noise[-10:]))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return [("bench-sweep.png", "CG time per iteration against n, log-log: deso, PBLAS and"
             " PETSc at P = 2, deso and cg_seq at P = 1")]
