#!/bin/sh
# The Krylov examples against their plain-CBLAS twins (make check).
#
# deso-bicgstab, deso-pcg, deso-gmres and deso-lanczos run with --history
# at P = 1, 2, 3 and 4 in each optimiser mode on the default grid, and in
# mode full on 1x4; with --long (make check-long) instead at P = 6 on 3x2
# and 2x3 (mode full alone at 6 ranks: they are slow on 2 cores); each run
# is compared with its -cblas twin on the same problem
# (examples/krylov_problem.h):
#   - BiCGSTAB and PCG (a matrix-free operator and a Jacobi
#     preconditioner as user operators): the recurrence residual of every
#     iteration whose residual in the twin is still above 1e-7 within 1e-9
#     relative of the twin's (at least the first 8), and the true residual
#     after all iterations below 1e-12 in both.  Further iterations are
#     not compared: BiCGSTAB's residual history amplifies rounding
#     differences about tenfold per step once it nears convergence (the
#     twin itself, with one entry of b changed by one part in 1e15, drifts
#     by 1e-8 relative within a dozen steps), and a parallel dot product
#     rounds differently from a sequential one;
#   - GMRES(m): the least-squares residual of every iteration whose
#     residual in the twin is still above 1e-7 within 1e-9 relative of the
#     twin's (at least the first 2 m + 2, so restarts are compared), and
#     the true residual after all iterations below 1e-10 in both (each
#     restart recomputes b - A x, which bounds how far it goes);
#   - Lanczos: both extreme Ritz values of every step within 1e-8 relative
#     of the twin's;
#   - GMRES's exact breakdown (--breakdown 5: ||w|| = 0 at the fifth
#     iteration, every quantity 0 or 1 exactly): the same five residuals
#     as the twin's, bit for bit, the last 0, and a true residual of 0, at
#     P = 1..4 in each mode.
# Prints "ok: ..." or "FAILED: ..." per run and a closing line
# "krylov: N passed, N failed"; exits non-zero when anything failed.
#   scripts/test-krylov.sh [--long] [BUILD]
# Environment: MPIEXEC (default mpiexec.mpich), KRYLOV_TIMEOUT (seconds per
# run, default 120).
set -u
long=0
if [ "${1:-}" = --long ]; then
    long=1
    shift
fi
build=${1:-build}
launch=${MPIEXEC:-mpiexec.mpich}
tmo=${KRYLOV_TIMEOUT:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0
args="--n 200 --iters 50 --history"

for prog in bicgstab pcg gmres lanczos; do
    if ! timeout --kill-after=5 "$tmo" "$build/bin/deso-$prog-cblas" $args >"$tmp/$prog.twin"; then
        echo "FAILED: deso-$prog-cblas $args"
        failed=$((failed + 1))
    fi
done

compare() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
prog, twin, mine = sys.argv[1:]
def hist(path):
    rows = [l.split() for l in open(path) if l.startswith("iter ")]
    return [[float(v) for v in r[2:]] for r in rows]
def final(path):
    last = open(path).read().split()[-1]
    return float(last.split("=")[1])
t, m = hist(twin), hist(mine)
assert len(t) == len(m) == 50, (len(t), len(m))
if prog in ("bicgstab", "pcg", "gmres"):
    k = 0
    while k < len(t) and t[k][0] >= 1e-7:
        rel = abs(m[k][0] - t[k][0]) / t[k][0]
        assert rel <= 1e-9, "iteration %d: %r against %r" % (k + 1, m[k][0], t[k][0])
        k += 1
    least, floor = (18, 1e-10) if prog == "gmres" else (8, 1e-12)
    assert k >= least, "only %d iterations above 1e-7" % k
    for p in (twin, mine):
        assert final(p) < floor, "%s: true residual %g" % (p, final(p))
else:
    for k, (a, b) in enumerate(zip(m, t)):
        for x, y in zip(a, b):
            assert abs(x - y) <= 1e-8 * abs(y), "step %d: %r against %r" % (k + 1, x, y)
PY
}

run() {
    np=$1
    shift
    for prog in bicgstab pcg gmres lanczos; do
        label="deso-$prog at P=$np $*"
        if timeout --kill-after=5 "$tmo" "$launch" -n "$np" "$build/bin/deso-$prog" \
                $args "$@" >"$tmp/out" 2>"$tmp/err" &&
           why=$(compare "$prog" "$tmp/$prog.twin" "$tmp/out" 2>&1); then
            echo "ok: $label"
            passed=$((passed + 1))
        else
            echo "FAILED: $label"
            echo "${why:-}" | tail -n 2 | sed -e 's/^/  | /'
            sed -e 's/^/  | /' "$tmp/err" | head -n 5
            failed=$((failed + 1))
        fi
        why=""
    done
}

if [ "$long" = 1 ]; then
    # 6 ranks on 2 cores are slow: mode full alone there, on both 2-D grids
    run 6 --mode full
    run 6 --mode full --grid 2x3
    echo "krylov-long: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi
for np in 1 2 3 4; do
    for mode in none affine full; do
        run "$np" --mode "$mode"
    done
done
# GMRES's exact breakdown: identical output to the twin's
bargs="--n 40 --iters 50 --history --breakdown 5"
timeout --kill-after=5 "$tmo" "$build/bin/deso-gmres-cblas" $bargs |
    sed -e 's/-cblas//' >"$tmp/breakdown.twin"
for np in 1 2 3 4; do
    for mode in none affine full; do
        label="deso-gmres --breakdown 5 at P=$np --mode $mode"
        if timeout --kill-after=5 "$tmo" "$launch" -n "$np" "$build/bin/deso-gmres" \
                $bargs --mode "$mode" >"$tmp/out" 2>"$tmp/err" &&
           grep -q "^iter 5 0.0*e+00$" "$tmp/out" &&
           grep -q "iters=5 residual=0.0*e+00$" "$tmp/out" &&
           cmp -s "$tmp/breakdown.twin" "$tmp/out"; then
            echo "ok: $label"
            passed=$((passed + 1))
        else
            echo "FAILED: $label"
            diff "$tmp/breakdown.twin" "$tmp/out" | head -n 5 | sed -e 's/^/  | /'
            sed -e 's/^/  | /' "$tmp/err" | head -n 5
            failed=$((failed + 1))
        fi
    done
done
run 4 --mode full --grid 1x4

echo "krylov: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
