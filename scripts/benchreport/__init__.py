"""benchreport: the modules behind scripts/bench_report.py.

records: the JSON-lines results files; fmt: figures and Markdown tables;
cgdata and cg: the CG suite's figures and its README section; plots: its
gnuplot PNGs; remap: the remap suite's section; sweepdata, sweep and
sweep_plot: the small/mid sweep's figures, section and PNG; readme: the
markers the sections are written between.
"""
