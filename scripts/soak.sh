#!/bin/sh
# soak.sh [BUILD]: long CG runs through deso (tests/bench/soak_cg.c) with
# the plan cache on (mode full: one plan optimised, then replayed at every
# iteration's force point), at P = 2:
#   1. under valgrind (memcheck, --leak-check=full, --error-exitcode=1):
#      n = $VG_N (default 50), $ITERS iterations (default 10^4); MPICH's
#      own MPI_Init/MPI_Finalize leaks are suppressed (tests/valgrind.supp);
#   2. without valgrind: n = $RSS_N (default 2000), $ITERS iterations, the
#      resident set (VmRSS) sampled every 1000 iterations; it must stay
#      flat after the first sample: growth from iteration 1000 to the end
#      at most $RSS_TOL_KB (default 1024) kB on every rank.
# Prints the figures and a closing line "soak: valgrind clean|FAILED, rss
# flat|GROWS (A kB at 1000, B kB at 5000, C kB at ITERS)"; exits non-zero
# on failure.  Not part of make check: it takes several minutes.
# Environment: MPIEXEC (default mpiexec.mpich), ITERS, VG_N, RSS_N,
# RSS_TOL_KB, SOAK_SKIP_VALGRIND=1.
set -u
B=${1:-build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
ITERS=${ITERS:-10000}
VG_N=${VG_N:-50}
RSS_N=${RSS_N:-2000}
RSS_TOL_KB=${RSS_TOL_KB:-1024}
here=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_NUM_THREADS=1
make --no-print-directory BUILD="$B" "$B/bench/soak_cg" >/dev/null || exit 1
bin=$B/bench/soak_cg
log=$(mktemp)
trap 'rm -f "$log"' EXIT

vg=skipped
if [ "${SOAK_SKIP_VALGRIND:-0}" != 1 ]; then
    echo "== valgrind: P = 2, n = $VG_N, $ITERS iterations (mode full)"
    t0=$(date +%s)
    if "$MPIEXEC" -n 2 valgrind -q --leak-check=full --error-exitcode=1 \
        --suppressions="$here/tests/valgrind.supp" \
        "$bin" --n "$VG_N" --iters "$ITERS" --every 1000 --mode full \
        > "$log" 2>&1; then
        vg=clean
    else
        vg=FAILED
    fi
    grep -v -E '^hwloc|^May be reenabled|^and reloading|SHM_HUGETLB' "$log"
    echo "valgrind: $vg ($(( $(date +%s) - t0 )) s)"
fi

echo "== RSS: P = 2, n = $RSS_N, $ITERS iterations (mode full)"
if ! "$MPIEXEC" -n 2 "$bin" --n "$RSS_N" --iters "$ITERS" --every 1000 \
    --mode full > "$log" 2>&1; then
    cat "$log"
    echo "soak: valgrind $vg, RSS run FAILED"
    exit 1
fi
cat "$log"
# max_rss_kb (the largest over ranks) at iteration 1000, 5000 and the end
at() { awk -v k="$1" '$1 == "iter" && $2 == k { print $6 }' "$log"; }
r1=$(at 1000)
r5=$(at 5000)
rn=$(at "$ITERS")
r1=${r1:-0}
rn=${rn:-0}
grow=$((rn - r1))
if [ "$r1" -gt 0 ] && [ "$grow" -le "$RSS_TOL_KB" ]; then
    rss=flat
else
    rss=GROWS
fi
echo "soak: valgrind $vg, rss $rss ($r1 kB at 1000, ${r5:-?} kB at 5000," \
     "$rn kB at $ITERS; growth $grow kB, tolerance $RSS_TOL_KB kB)"
[ "$vg" != FAILED ] && [ "$rss" = flat ]
