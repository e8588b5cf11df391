"""The CG suite's two PNGs, drawn by gnuplot from the same figures as its section."""
import os
import shutil
import subprocess
import tempfile

from .cgdata import CgData, per_iter


def gp_terminal():
    try:
        r = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True,
                           timeout=30)
        if r.returncode == 0 and not r.stderr.strip():
            return "pngcairo size 1280,640 font ',10'"
    except (OSError, subprocess.SubprocessError):
        pass
    return "png size 1280,640"


def dat(v):
    return "?" if v is None or not v > 0 else f"{v:.6g}"


def plots(res, docdir):
    """Draws docdir/bench-time.png and bench-bytes.png; returns [(file, alt)].
    Raises RuntimeError when gnuplot is missing or fails."""
    if shutil.which("gnuplot") is None:
        raise RuntimeError("gnuplot not found: install it (scripts/setup.sh installs"
                           " gnuplot-nox) or pass --no-plots")
    d = CgData(res)
    tmpdir = tempfile.mkdtemp(prefix="deso-plot.")
    modes = d.modes if d.have_deso else []
    gp = [f"set terminal {gp_terminal()}", "set datafile missing '?'",
          "set style data histogram", "set style histogram clustered gap 1",
          "set style fill solid 0.85 border -1", "set logscale y", "set grid ytics",
          "set key outside below center horizontal", "set boxwidth 0.9"]
    colours = {"seq": "#555555", "pblas": "#999999", "none": "#d95f02",
               "affine": "#7570b3", "full": "#1b9e77"}

    def empty(msg):
        return ["set xrange [0:1]", "set yrange [1:10]", "unset xtics",
                f"set label 1 '{msg}' at graph 0.5, 0.5 center", "plot NaN notitle",
                "unset label 1", "set xtics", "set autoscale x", "set autoscale y"]

    mp_margins = "margins 0.07, 0.98, 0.19, 0.9 spacing 0.07"
    # time per iteration: measured at the timed P, modelled at the counted P beyond
    out = os.path.join(docdir, "bench-time.png")
    gp += [f"set output '{out}'", "set ylabel 'time per iteration (ms)'",
           "set xlabel 'P  (* = cost model)'",
           f"set multiplot layout 1,{max(1, len(d.ns))} {mp_margins} title 'deso CG, time"
           " per iteration (time\\_loop; log scale; P marked * from the cost model)'"]
    series = [("seq", ""), ("pblas", "")] + [("deso", m) for m in modes]
    for n in d.ns:
        fn = os.path.join(tmpdir, f"time_{n}.dat")
        have = False
        with open(fn, "w") as f:
            ps = list(d.timed_ps)
            if modes and n in d.count_ns:
                ps += [p for p in d.count_ps if p not in d.timed_ps]
            for p in ps:
                row = [f'"{p}"' if p in d.timed_ps else f'"{p}*"']
                for impl, mode in series:
                    if p in d.timed_ps:
                        v = per_iter(d.best(impl, mode, n, p))
                    elif impl == "deso":
                        mm = d.model(mode, n, p)
                        v = mm[2] if mm else None
                    else:
                        v = None
                    v = None if v is None else 1e3 * v
                    have = have or (v is not None and v > 0)
                    row.append(dat(v))
                f.write(" ".join(row) + "\n")
        gp.append(f"set title 'n = {n}'")
        if not have:
            gp += empty("no data")
            continue
        cols = []
        for k, (impl, mode) in enumerate(series):
            src = f"'{fn}'" if k == 0 else "''"
            xt = ":xtic(1)" if k == 0 else ""
            title = f"deso {mode}" if impl == "deso" else impl
            cols.append(f"{src} using {k + 2}{xt} title '{title}' lc rgb "
                        f"'{colours[mode or impl]}'")
        gp.append("plot " + ", ".join(cols))
    gp.append("unset multiplot")

    # bytes per iteration, p2p (solid) and collective (hatched) by mode and P
    out = os.path.join(docdir, "bench-bytes.png")
    gp += [f"set output '{out}'", "set ylabel 'bytes per iteration (all ranks)'",
           "set xlabel 'P  (no bar: zero, not counted or not exact)'",
           f"set multiplot layout 1,{max(1, len(d.count_ns))} {mp_margins} title 'deso CG,"
           " bytes per iteration (exact counts; log scale): p2p solid, collective hatched'"]
    for n in d.count_ns:
        fn = os.path.join(tmpdir, f"bytes_{n}.dat")
        have = False
        with open(fn, "w") as f:
            for p in d.count_ps:
                row = [f'"{p}"']
                for mode in modes:
                    c = d.counts(mode, n, p)
                    for fld in ("bytes_p2p", "bytes_collective"):
                        v = c.values[fld] if c.status == "exact" else None
                        have = have or (v is not None and v > 0)
                        row.append(dat(v))
                f.write(" ".join(row) + "\n")
        gp.append(f"set title 'n = {n}'")
        if not have:
            gp += empty("deso-cg not built: no counts" if not d.have_deso else "no data")
            continue
        cols = []
        for k, mode in enumerate(modes):
            for j, (fld, fs) in enumerate((("p2p", "fs solid 0.85"),
                                           ("collective", "fs pattern 4"))):
                col = 2 + 2 * k + j
                src = f"'{fn}'" if col == 2 else "''"
                xt = ":xtic(1)" if col == 2 else ""
                cols.append(f"{src} using {col}{xt} title '{mode} {fld}' {fs} lc rgb "
                            f"'{colours.get(mode, '#000000')}'")
        gp.append("plot " + ", ".join(cols))
    gp.append("unset multiplot")

    script = os.path.join(tmpdir, "bench.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        r = subprocess.run(["gnuplot", script], capture_output=True, text=True, timeout=120)
        noise = [ln for ln in r.stderr.splitlines()
                 if ln.strip() and "warning" not in ln.lower()]
        if r.returncode != 0:
            raise RuntimeError("gnuplot failed:\n" + "\n".join(noise[-10:]))
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"gnuplot failed: {e}") from e
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return [("bench-time.png", "time per iteration by implementation, mode and P"),
            ("bench-bytes.png", "p2p and collective bytes per iteration by mode and P")]
