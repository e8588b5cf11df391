"""Writing a section into the README between its suite's markers."""
import os

MARKERS = {"cg": ("<!-- bench:begin -->", "<!-- bench:end -->", "Benchmark results"),
           "remap": ("<!-- bench-remap:begin -->", "<!-- bench-remap:end -->",
                     "Remap benchmark (`make bench-remap`)"),
           "sweep": ("<!-- sweep:begin -->", "<!-- sweep:end -->",
                     "Small and mid sizes (`make bench-sweep`)"),
           "counts": ("<!-- counts:begin -->", "<!-- counts:end -->",
                      "MPI calls per iteration (`make bench-counts`)"),
           "overhead": ("<!-- overhead:begin -->", "<!-- overhead:end -->",
                        "Instructions per iteration (`make bench-overhead`)"),
           "ooc": ("<!-- bench-ooc:begin -->", "<!-- bench-ooc:end -->",
                   "Out-of-core benchmark (`make bench-ooc`)"),
           "sparse": ("<!-- bench-sparse:begin -->", "<!-- bench-sparse:end -->",
                      "Sparse CG (`make bench-sparse`)"),
           "sparse-counts": ("<!-- bench-sparse-counts:begin -->",
                             "<!-- bench-sparse-counts:end -->",
                             "Sparse CG's halo, counted (`make bench-sparse-counts`)")}


def write_readme(path, suite, body):
    begin, end, heading = MARKERS[suite]
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    b, e = text.find(begin), text.find(end)
    if b >= 0 and e > b:
        text = text[:b + len(begin)] + "\n" + body + text[e:]
    else:
        if text and not text.endswith("\n"):
            text += "\n"
        text += f"\n## {heading}\n\n{begin}\n{body}{end}\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
