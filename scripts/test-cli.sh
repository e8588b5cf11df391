#!/bin/sh
# The programs' command lines, bad and good.
#
# Bad input: BUILD/bin/deso-cg, deso-remap, deso-solve-pdgesv,
# deso-mtx2bin, deso-bicgstab, deso-pcg, deso-gmres, deso-lanczos and
# (without a launcher: they are one process) deso-cg-cblas, deso-cg-csr
# and the Krylov twins, with bad input for
# every option (missing value, non-number, zero and negative sizes, a grid
# that does not match P, an unknown mode or schedule, a missing or
# malformed --matrix file, a bad --gen generator, options that contradict
# each other or the matrix's kind (--gen with --matrix, ssor on a sparse
# matrix, bjacobi on a dense one, --dense without --matrix), a
# rectangular matrix, unknown options) at P = 1 and 2, each under
# `timeout`, and checks that every run
#   - exits with code 2, which README promises for deso-cg's bad options
#     (the other programs keep the same convention), and not by a signal
#     or a timeout; the one run whose options are valid but whose matrix
#     no rank can hold exits 1 (deso-cg's exit on a library error), as
#     do deso-mtx2bin's runs on missing or malformed Matrix Market files;
#   - prints exactly one line (stdout and stderr together): one reason
#     from rank 0 rather than one per rank, "PROGRAM: ...", naming the
#     option (or the rank and variable) at fault where there is one;
#   - shows no crash ("Segmentation", "ASAN", "AddressSanitizer",
#     "runtime error", MPICH's "BAD TERMINATION").
# Then, with MPMD launch lines, a DESO_* variable that differs on the last
# rank: a valid value gives every rank rank 0's (one warning, the same run
# as with rank 0's value everywhere), an invalid one one reason line that
# names the rank and the variable, and exit code 2.
#
# Good input, each run checked by what it prints (JSON read with python3):
#   - deso-cg --tol T converges to a true residual below T, and its --json
#     line has every field doc/DESIGN.md lists, with the n, P, grid, mode
#     and precond asked for; a T it cannot reach in --iters: exit 0,
#     "converged": false, one line on stderr saying so;
#   - deso-cg's sparse path (--gen, a coordinate --matrix) against its
#     sequential twin deso-cg-csr at P = 1..4 in every mode, every
#     preconditioner, the residual of every iteration (cg_sparse below);
#   - --precond jacobi and ssor converge: on the default problem (unit
#     diagonal) jacobi in as many iterations as none and ssor in fewer; on
#     a badly scaled SPD Matrix Market file written here (--matrix) jacobi
#     in far fewer;
#   - deso-cg-cblas and deso-cg agree: the same iterations to a tolerance
#     (with and without ssor), and the same residual and error to 1e-3
#     after a fixed number of iterations;
#   - --repeat R (both programs): the iterations of R solves, the residual
#     and error of one;
#   - --mem-limit: each rank's peak resident memory (ru_maxrss) of a CG
#     on a 100 MB-per-rank matrix within budget + vectors + 64 MiB, the
#     same CG in core above it;
#   - the text output (summary line and Table 1), --verbose and
#     --verbose-every (the recurrence residual every K iterations);
#   - --dot writes a DOT graph of the plan on the grid and block size
#     asked for (--grid, --nb);
#   - DESO_LOG=1: the performance log's table on stdout, its rows counting
#     exactly the calls deso-cg makes; DESO_VERBOSE=1: rank 0 explains
#     each plan made, once, on stderr;
#   - deso-remap --plan-only (--json and text) for every schedule: the
#     message grid equals a brute-force count over one slice, the steps
#     are matchings that carry every message once at the costs stated;
#     --run --json (vector with --shared-arrays --memcpy, matrix with
#     --compare-scalapack, DESO_REMAP_SHM=0, --in-place): "verified" true,
#     and the layouts, transport and fields asked for.
# Prints the failures (and "ok: ..." per good-input check), then a closing
# line "cli: N passed, N failed", and exits non-zero when anything failed.
#   scripts/test-cli.sh [BUILD]        (default build)
# Environment: MPIEXEC (default mpiexec.mpich), CLI_TIMEOUT (seconds per
# run, default 60), CLI_NP (default "1 2").
set -u
build=${1:-build}
launch=${MPIEXEC:-mpiexec.mpich}
tmo=${CLI_TIMEOUT:-60}
nps=${CLI_NP:-"1 2"}
root=$(cd "$(dirname "$0")/.." && pwd)
cg=$build/bin/deso-cg
remap=$build/bin/deso-remap
cblas=$build/bin/deso-cg-cblas
csr=$build/bin/deso-cg-csr
solve=$build/bin/deso-solve-pdgesv
m2b=$build/bin/deso-mtx2bin
bicg=$build/bin/deso-bicgstab
lanc=$build/bin/deso-lanczos
gmres=$build/bin/deso-gmres
pcg=$build/bin/deso-pcg
for b in "$cg" "$remap" "$cblas" "$csr" "$solve" "$m2b" "$bicg" "$lanc" "$gmres" "$pcg"; do
    if [ ! -x "$b" ]; then
        echo "test-cli: $b not found (make BUILD=$build programs)"
        echo "cli: 0 passed, 1 failed"
        exit 1
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# a malformed Matrix Market file, an empty one, a directory
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 x\n' \
    > "$tmp/bad.mtx"
: > "$tmp/empty.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 9\n1 1 1\n' \
    > "$tmp/short.mtx"
printf 'not a matrix\n' > "$tmp/text.mtx"
# a good coordinate file, and a rectangular one (CG needs square)
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 3\n' \
    > "$tmp/coo.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 2\n' \
    > "$tmp/rect.mtx"

passed=0
failed=0
export OPENBLAS_NUM_THREADS=1

# What the next bad run must show: its exit code, and a text its reason
# line contains after "PROGRAM: " (bad resets both).
code=2
says=""

# bad NP PROGRAM ARGS...: one bad command line (NP "mpmd": ARGS are a
# whole launch line; NP "serial": no launcher).
bad() {
    np=$1
    shift
    out="$tmp/out"
    if [ "$np" = mpmd ]; then            # "$@" is a whole MPMD launch line
        timeout --kill-after=5 "$tmo" "$launch" "$@" > "$out" 2>&1
    elif [ "$np" = serial ]; then
        timeout --kill-after=5 "$tmo" "$@" > "$out" 2>&1
    else
        timeout --kill-after=5 "$tmo" "$launch" -n "$np" "$@" > "$out" 2>&1
    fi
    rc=$?
    lines=$(grep -c '' "$out")
    prog=""
    for a in "$@"; do
        case $a in */deso-*) prog=$(basename "$a"); break ;; esac
    done
    why=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        why="timeout after ${tmo}s (hang?)"
    elif [ "$rc" -ge 124 ]; then
        why="exit code $rc (signal or launcher failure)"
    elif grep -q -E 'Segmentation|ASAN|AddressSanitizer|runtime error|BAD TERMINATION|Aborted' "$out"; then
        why="crash output"
    elif [ "$rc" -ne "$code" ]; then
        why="exit code $rc, expected $code"
    elif [ "$lines" -ne 1 ]; then
        why="$lines output lines (expected one reason line)"
    elif ! grep -q "^$prog: " "$out"; then
        why="the reason does not start with '$prog: '"
    elif [ -n "$says" ] && ! grep -q -F -e "$says" "$out"; then
        why="the reason does not mention '$says'"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL (P=$np): $*"
        echo "      $why; rc=$rc; output:"
        sed -e 's/^/      | /' "$out" | head -8
    fi
    code=2
    says=""
}

for np in $nps; do
    np1=$((np + 1))
    # ---- deso-cg --------------------------------------------------------
    c="$cg --iters 2"
    for opt in --n --iters --tol --nb --grid --mode --matrix --precond \
               --verbose-every --dot --repeat --gen; do
        says=$opt; bad "$np" $c $opt            # missing value
    done
    for v in abc 0 -5 1.5 '' 99999999999999999999 1000001 2x; do
        says=--n; bad "$np" $c --n "$v"
    done
    for v in x -1 1e3 99999999999999999999; do
        says=--iters; bad "$np" $c --iters "$v"
    done
    for v in abc -1 nan inf 1e999 ''; do
        says=--tol; bad "$np" $c --tol "$v"
    done
    for v in 0 -1 x 99999999999; do
        says=--nb; bad "$np" $c --nb "$v"
    done
    for v in "${np1}x1" "1x${np1}" 0x1 1x0 -1x-1 x 2 2x2x2 axb 99999999x1; do
        says=grid; bad "$np" $c --grid "$v"
    done
    for v in 0 x; do
        says=--verbose-every; bad "$np" $c --verbose-every "$v"
    done
    for v in 0 -1 x 1000001; do
        says=--repeat; bad "$np" $c --repeat "$v"
    done
    says=--n; bad "$np" $c --n=0
    says=--grid; bad "$np" $c --grid=0x0
    for v in fast NONE ''; do
        says=--mode; bad "$np" $c --mode "$v"
    done
    says=bogus; bad "$np" $c --mode=bogus
    for f in /nonexistent/a.mtx "$tmp/bad.mtx" "$tmp/empty.mtx" \
             "$tmp/short.mtx" "$tmp/text.mtx" "$tmp"; do
        bad "$np" $c --matrix "$f"
    done
    says=--precond; bad "$np" $c --precond bogus
    # the sparse path: a bad generator (the library's reason), options
    # that contradict each other or the matrix's kind
    for v in bogus:3 lap2d lap2d:x lap2d-perm:0; do
        says=generator; bad "$np" $c --gen "$v"
    done
    says="--gen and --matrix"; bad "$np" $c --gen lap2d:4 --matrix "$tmp/coo.mtx"
    says=--dense; bad "$np" $c --dense
    says=--dense; bad "$np" $c --gen lap2d:4 --dense
    says=ssor; bad "$np" $c --gen lap2d:4 --precond ssor
    says=ssor; bad "$np" $c --matrix "$tmp/coo.mtx" --precond ssor
    says=bjacobi; bad "$np" $c --precond bjacobi
    says=bjacobi; bad "$np" $c --matrix "$tmp/coo.mtx" --dense --precond bjacobi
    says="square"; bad "$np" $c --matrix "$tmp/rect.mtx"
    says=--bogus; bad "$np" $c --bogus
    says=-x; bad "$np" $c -x
    says=stray; bad "$np" $c stray
    says=--json=1; bad "$np" $c --json=1
    # valid options, but a matrix no rank can hold: a library error, 1
    code=1; says="out of memory"; bad "$np" "$cg" --n 1000000 --iters 1

    # ---- deso-solve-pdgesv ------------------------------------------------
    for a in 0 5x 1000001; do
        says="N must be"; bad "$np" "$solve" "$a"
    done
    says="NB must be"; bad "$np" "$solve" 10 0
    says=arguments; bad "$np" "$solve" 10 2 3

    # ---- deso-bicgstab, deso-pcg, deso-gmres, deso-lanczos ---------------
    for kp in "$bicg" "$pcg" "$gmres" "$lanc"; do
        says=--n; bad "$np" "$kp" --n 0
        says=--iters; bad "$np" "$kp" --iters x
        says=--mode; bad "$np" "$kp" --mode fast
        says=--grid; bad "$np" "$kp" --grid 0x2
        says=grid; bad "$np" "$kp" --grid 3x5
        says=--bogus; bad "$np" "$kp" --bogus
        says=needs; bad "$np" "$kp" --n
    done
    says=--breakdown; bad "$np" "$bicg" --breakdown 3   # GMRES's only
    says=--breakdown; bad "$np" "$gmres" --breakdown 0
    says=exceeds; bad "$np" "$gmres" --n 4 --breakdown 5

    # ---- deso-mtx2bin ----------------------------------------------------
    says=usage; bad "$np" "$m2b"
    says=usage; bad "$np" "$m2b" "$tmp/bad.mtx"
    says=usage; bad "$np" "$m2b" a b c
    for f in /nonexistent/a.mtx "$tmp/bad.mtx" "$tmp/empty.mtx" \
             "$tmp/short.mtx" "$tmp/text.mtx" "$tmp"; do
        code=1; says="$f"; bad "$np" "$m2b" "$f" "$tmp/out.bin"
    done

    # ---- deso-remap ------------------------------------------------------
    p="$remap --plan-only --P 2 --Q 3 --r 2 --s 3"
    bad "$np" "$remap"                          # neither --plan-only nor --run
    bad "$np" "$remap" --plan-only --run --P 2 --Q 3 --r 2 --s 3
    for opt in --P --Q --r --s --m --n --mb --nb --mb2 --nb2 --reps --grid \
               --grid2 --src-ranks --dst-ranks --schedule; do
        says=$opt; bad "$np" $p $opt            # missing value (last)
    done
    for opt in --P --Q --r --s; do
        for v in x 0 -1 1.5 99999999999999999999; do
            says=$opt; bad "$np" $p $opt "$v"
        done
    done
    bad "$np" "$remap" --plan-only --P 2 --Q 3 --r 2     # --s missing
    bad "$np" "$remap" --plan-only --P 3 --Q 5 --r 4611686018427387903 \
        --s 3074457345618258602                          # slice overflows
    bad "$np" "$remap" --plan-only --P 1000000 --Q 1000000 --r 1 --s 1
    says=bogus; bad "$np" $p --schedule bogus
    says=--schedule; bad "$np" $p --schedule ''
    says=--bogus; bad "$np" $p --bogus
    r="$remap --run --P 1 --Q $np --r 2 --s 3 --n 64"
    for opt in --m --n --mb --nb --mb2 --nb2 --reps; do
        for v in 0 -3 x; do
            says="$opt:"; bad "$np" $r $opt "$v"
        done
    done
    for v in 0x1 x 2x 1x-1; do
        says="--grid:"; bad "$np" $r --grid "$v"
        says="--grid2:"; bad "$np" $r --grid2 "$v"
    done
    says=--src-ranks; bad "$np" $r --src-ranks -1
    says=target; bad "$np" $r --dst-ranks "$np"  # target beyond the ranks
    bad "$np" "$remap" --run --P "$np1" --Q 1 --r 1 --s 1 --n 10
    bad "$np" "$remap" --run --P 1 --Q "$np1" --r 1 --s 1 --n 10
    bad "$np" "$remap" --run --grid "${np1}x1" --Q 1 --r 1 --s 1 --n 10
    bad "$np" "$remap" --run --P 1 --grid 2x2 --Q 1 --r 1 --s 1 --n 10
    bad "$np" "$remap" --run --P 1 --Q 1 --grid 1x1 --grid2 1x1 --r 1 --s 1 \
        --n 10 --grid 1x2                        # a vector on a 1x2 grid
    bad "$np" "$remap" --run --P 1 --Q 1 --r 1 --s 1      # no --n
    bad "$np" "$remap" --run --P 1 --Q 1 --n 10           # no --r, --s
    bad "$np" "$remap" --run --P 1 --Q "$np" --r 1 --s 2 --n 10 --in-place
    bad "$np" "$remap" --run --P 1 --Q 1 --r 1 --s 1 --n 3000000000 \
        --m 1 --compare-scalapack
    # an array no rank can allocate: an error, not a crash
    bad "$np" "$remap" --run --P 1 --Q 1 --r 1 --s 1 --n 100000000000000000
    bad "$np" "$remap" --run --P 1 --Q 1 --r 1 --s 1 --n 100000000000000000 \
        --shared-arrays
    bad "$np" "$remap" --run --P 1 --Q 1 --r 1 --s 1 --m 4000000000 \
        --n 4000000000
done

# ---- per-rank environments (MPMD launch lines) ----------------------------
# agreed VAR A B: rank 0 (and the middle ranks) with VAR=A, the last rank
# with VAR=B, at P = 2 and 3 (an N in A or B stands for P): deso-cg exits
# 0, prints one warning naming VAR, and reports what a run with VAR=A
# everywhere reports (grid, mode, residual and error to the last digit).
agreed() {
    for k in 2 3; do
        var=$1
        a=$(echo "$2" | sed "s/N/$k/")
        b=$(echo "$3" | sed "s/N/$k/")
        c="$cg --n 200 --iters 5 --tol 0"
        timeout --kill-after=5 "$tmo" "$launch" -n $((k - 1)) -env "$var" "$a" \
            $c : -n 1 -env "$var" "$b" $c > "$tmp/mixed" 2>&1
        rc=$?
        timeout --kill-after=5 "$tmo" "$launch" -n "$k" -genv "$var" "$a" \
            $c > "$tmp/uniform" 2>&1
        rcu=$?
        warns=$(grep -c "warning: $var " "$tmp/mixed")
        got=$(grep '^deso-cg:' "$tmp/mixed" | sed 's/.*grid=/grid=/')
        want=$(grep '^deso-cg:' "$tmp/uniform" | sed 's/.*grid=/grid=/')
        if [ "$rc" -eq 0 ] && [ "$rcu" -eq 0 ] && [ "$warns" -eq 1 ] &&
           [ -n "$want" ] && [ "$got" = "$want" ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "FAIL (P=$k): $var=$a on rank 0, $var=$b on the last rank"
            echo "      rc=$rc (uniform $rcu), $warns warnings; got '$got'," \
                 "want '$want'; output:"
            sed -e 's/^/      | /' "$tmp/mixed" | head -8
        fi
    done
}
# (deso-cg sets the block size itself: DESO_NB is covered by test_config)
agreed DESO_OPT full none
agreed DESO_OPT none affine
agreed DESO_GRID Nx1 1xN
agreed DESO_MAX_NODES 3 4096
# invalid on the last rank only: one reason line naming that rank and the
# variable, exit code 2, at P = 2 and 3
for k in 2 3; do
    for v in "DESO_OPT fast" "DESO_GRID 9x9" "DESO_MAX_NODES x"; do
        set -- $v
        says="rank $((k - 1)): $1"
        bad mpmd -n $((k - 1)) "$cg" --n 50 --iters 2 : -n 1 -env "$1" "$2" \
            "$cg" --n 50 --iters 2
    done
done

# ---- deso-cg-cblas: one process, no launcher -------------------------------
for opt in --n --iters --tol --precond --repeat; do
    says=$opt; bad serial "$cblas" $opt
done
says=--repeat; bad serial "$cblas" --repeat 0
for v in 0 x 1000001; do
    says=--n; bad serial "$cblas" --n "$v"
done
says=--tol; bad serial "$cblas" --tol -1
says=--precond; bad serial "$cblas" --precond bogus
# ---- deso-cg-csr, the sparse twin ------------------------------------------
for opt in --gen --matrix --precond --blocks --iters; do
    says=$opt; bad serial "$csr" $opt
done
for v in bogus:3 lap2d lap2d:x lap3d:0; do
    says=--gen; bad serial "$csr" --gen "$v"
done
for v in 0 x -2; do
    says=--blocks; bad serial "$csr" --blocks "$v"
done
says=--precond; bad serial "$csr" --precond ssor
says="--gen and --matrix"; bad serial "$csr" --gen lap2d:3 --matrix "$tmp/coo.mtx"
for f in /nonexistent/a.mtx "$tmp/bad.mtx" "$tmp/empty.mtx" "$tmp/short.mtx" \
         "$tmp/text.mtx" "$tmp/rect.mtx" "$tmp"; do
    says="$f"; bad serial "$csr" --matrix "$f"
done
says=--grid; bad serial "$csr" --grid 1x1
says=--grid; bad serial "$cblas" --grid 1x1      # deso-cg's, not its own
says=--mode; bad serial "$cblas" --mode full
for kp in "$bicg-cblas" "$pcg-cblas" "$gmres-cblas" "$lanc-cblas"; do
    says=--n; bad serial "$kp" --n -3
    says=--grid; bad serial "$kp" --grid 1x1        # the deso versions' only
    says=--history=1; bad serial "$kp" --history=1
done


# ---- good input --------------------------------------------------------------
# Each check below is one step (scripts/step.sh): "ok: NAME", or "FAILED:
# NAME" with what went wrong.  The runs are at P = 2, the smallest P at
# which data is distributed.
. "$root/scripts/step.sh"

# run TAG ARGS...: ARGS (a launch line after "mpiexec -n 2", or with TAG
# "serial:..." a whole command) with stdout in $tmp/TAG.out and stderr in
# $tmp/TAG.err; fails, saying why, unless the exit code is 0.
run() {
    tag=$1
    shift
    case $tag in
    serial:*)
        tag=${tag#serial:}
        timeout --kill-after=5 "$tmo" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err" ;;
    *)
        timeout --kill-after=5 "$tmo" "$launch" -n 2 "$@" \
            >"$tmp/$tag.out" 2>"$tmp/$tag.err" ;;
    esac
    rc=$?
    [ "$rc" -eq 0 ] && return 0
    echo "exit code $rc: $*"
    sed -e 's/^/  | /' "$tmp/$tag.err" | head -n 5
    return 1
}

# py CODE ARGS...: Python CODE with sys.argv[1:] = ARGS and the helpers
# below; it fails by an assert, whose message the step prints.
py_helpers='
import json, math, re, sys
CG_FIELDS = ("impl n p grid mode precond iters repeat converged residual error "
             "time_total time_compute time_overhead time_p2p time_collective "
             "time_optimise bytes_p2p msgs_p2p bytes_collective "
             "msgs_collective plans_optimised plans_replayed nodes_overlapped "
             "io_beta mem_limit placed alpha beta "
             "vector_bytes rss_bound peak_rss").split()
def lines(path):
    return [l.rstrip("\n") for l in open(path) if l.strip()]
def one_json(path):
    ls = lines(path)
    assert len(ls) == 1, "%s: %d lines, expected one JSON line: %r" % (
        path, len(ls), ls[:3])
    return json.loads(ls[0])
def cg_json(path, **want):
    """deso-cg --json: every field, the values asked for, and counts that
    agree with each other."""
    d = one_json(path)
    missing = [f for f in CG_FIELDS if f not in d]
    assert not missing, "%s: no field %s" % (path, missing)
    for k, v in want.items():
        assert d[k] == v, "%s: %s = %r, asked for %r" % (path, k, d[k], v)
    assert d["impl"] == "deso", d
    for f in CG_FIELDS:
        if f.startswith(("time_", "bytes_", "msgs_", "plans_")):
            assert d[f] >= 0, "%s: %s = %r" % (path, f, d[f])
    for kind in ("p2p", "collective"):
        assert (d["bytes_" + kind] > 0) == (d["msgs_" + kind] > 0), d
    # one plan per force with work: per solve (--repeat) the first read of
    # a residual, then one per iteration
    assert d["plans_optimised"] >= 1, d
    assert d["plans_optimised"] + d["plans_replayed"] == d["iters"] + d["repeat"], d
    return d
def converged(d, tol, path):
    assert d["converged"] is True, "%s: not converged: %r" % (path, d)
    assert d["residual"] < tol, "%s: residual %g >= tol %g" % (
        path, d["residual"], tol)
'
py() {
    code=$1
    shift
    python3 -c "$py_helpers
$code" "$@"
}

cgt="$cg --n 200 --iters 300 --tol 1e-10 --mode affine --grid 2x1 --json"

# --tol: converged below it; the fields asked for; quiet on stderr
cg_tol() {
    run tol $cgt || return 1
    py '
d = cg_json(sys.argv[1], n=200, p=2, grid="2x1", mode="affine",
            precond="none")
converged(d, 1e-10, sys.argv[1])
assert 0 < d["iters"] < 300, d
assert d["error"] < 1e-8, d
assert d["msgs_collective"] > 0, d           # every ddot is a reduction
assert open(sys.argv[2]).read() == "", "stderr: " + open(sys.argv[2]).read()
' "$tmp/tol.out" "$tmp/tol.err"
}

# a tolerance out of reach: exit 0, "converged": false, one line on stderr
cg_stalls() {
    run stall "$cg" --n 200 --iters 3 --tol 1e-14 --json || return 1
    py '
d = cg_json(sys.argv[1], n=200, iters=3, converged=False)
err = lines(sys.argv[2])
assert len(err) == 1 and err[0].startswith(
    "deso-cg: did not reach tol 1e-14 in 3 iterations (residual "), err
' "$tmp/stall.out" "$tmp/stall.err"
}

# jacobi and ssor on the default problem, whose diagonal is all ones:
# jacobi is then CG itself (the same iterations), ssor needs fewer
cg_precond() {
    run jacobi $cgt --precond jacobi || return 1
    run ssor $cgt --precond ssor || return 1
    py '
none = cg_json(sys.argv[1], precond="none")
jac = cg_json(sys.argv[2], precond="jacobi", grid="2x1", mode="affine")
ssor = cg_json(sys.argv[3], precond="ssor", grid="2x1", mode="affine")
for d, p in ((jac, sys.argv[2]), (ssor, sys.argv[3])):
    converged(d, 1e-10, p)
assert jac["iters"] == none["iters"], (jac["iters"], none["iters"])
assert ssor["iters"] < none["iters"], (ssor["iters"], none["iters"])
' "$tmp/tol.out" "$tmp/jacobi.out" "$tmp/ssor.out"
}

# deso-cg-cblas, the sequential original, against deso-cg: the same
# iterations to a tolerance (plain and ssor), and after 15 iterations
# (a residual far above rounding) the same residual and error to 1e-3
cg_cblas() {
    run serial:cbt "$cblas" --n 200 --iters 300 --tol 1e-10 --json || return 1
    run serial:cbs "$cblas" --n 200 --iters 300 --tol 1e-10 --precond ssor \
        --json || return 1
    run serial:cb15 "$cblas" --n 200 --iters 15 --json || return 1
    run fixed15 "$cg" --n 200 --iters 15 --json || return 1
    py '
a = [one_json(p) for p in sys.argv[1:4]]
d = [cg_json(sys.argv[k]) for k in (4, 5, 6)]
for c in a:
    assert c["impl"] == "cblas" and c["n"] == 200 and c["p"] == 1, c
for c, e in zip(a, d):
    assert c["iters"] == e["iters"], ("iterations differ", c, e)
converged(a[0], 1e-10, sys.argv[1])
converged(a[1], 1e-10, sys.argv[2])
c, e = a[2], d[2]
assert c["iters"] == 15 and 1e-9 < c["residual"] < 1e-3, c
for f in ("residual", "error"):
    rel = abs(c[f] - e[f]) / c[f]
    assert rel < 1e-3, ("%s differs: %g against %g" % (f, c[f], e[f]))
' "$tmp/cbt.out" "$tmp/cbs.out" "$tmp/cb15.out" "$tmp/tol.out" \
      "$tmp/ssor.out" "$tmp/fixed15.out"
}

# --repeat R: R solves from x0 = 0, the iterations summed over them, the
# residual and error those of one solve (deso-cg and deso-cg-cblas)
cg_repeat() {
    run rep1 "$cg" --n 200 --iters 15 --json || return 1
    run rep3 "$cg" --n 200 --iters 15 --repeat 3 --json || return 1
    run serial:cbrep3 "$cblas" --n 200 --iters 15 --repeat 3 --json || return 1
    py '
one = cg_json(sys.argv[1], n=200, p=2, iters=15, repeat=1)
three = cg_json(sys.argv[2], n=200, p=2, iters=45, repeat=3)
cb = one_json(sys.argv[3])
assert cb["impl"] == "cblas" and cb["iters"] == 45 and cb["repeat"] == 3, cb
for d in (three, cb):
    for f in ("residual", "error"):
        rel = abs(d[f] - one[f]) / one[f]
        assert rel < 1e-3, ("%s differs: %g against %g" % (f, d[f], one[f]))
' "$tmp/rep1.out" "$tmp/rep3.out" "$tmp/cbrep3.out"
}

# --matrix: a 40 x 40 SPD matrix, symmetric coordinate format (lower
# triangle only), badly scaled: A = D^1/2 T D^1/2 with D = diag(1.25^i)
# and T = tridiag(-0.25, 1, -0.25), so cond(A) is in the thousands but
# jacobi sees T (cond < 3) and converges in a fraction of the iterations
cg_matrix() {
    awk 'BEGIN {
        n = 40
        print "%%MatrixMarket matrix coordinate real symmetric"
        print "% D^1/2 T D^1/2, D = diag(1.25^i), T = tridiag(-0.25, 1, -0.25)"
        print n, n, 2 * n - 1
        for (i = 1; i <= n; i++) {
            d = 1.25 ^ (i - 1)
            printf "%d %d %.17g\n", i, i, d
            if (i < n) printf "%d %d %.17g\n", i + 1, i, -0.25 * sqrt(d * 1.25 ^ i)
        }
    }' >"$tmp/spd.mtx"
    m="$cg --matrix $tmp/spd.mtx --iters 500 --tol 1e-8 --json"
    run mtx $m || return 1
    run mtxjac $m --precond jacobi || return 1
    py '
none = cg_json(sys.argv[1], n=40, p=2, precond="none")
jac = cg_json(sys.argv[2], n=40, p=2, precond="jacobi")
for d, p in ((none, sys.argv[1]), (jac, sys.argv[2])):
    converged(d, 1e-8, p)
    assert d["error"] < 1e-6, d                # the solution is ones
assert 3 * jac["iters"] < none["iters"], (jac["iters"], none["iters"])
' "$tmp/mtx.out" "$tmp/mtxjac.out"
}

# the text output: --verbose-every 2 prints the recurrence residual at
# iterations 0, 2, 4, 6, then the summary line and Table 1
# --mem-limit: the matrix streamed from its local array files gives the
# in-core run's residual to the bit; a bad size is one clear error, exit 2
cg_ooc() {
    run ic "$cg" --n 300 --iters 8 --tol 0 --grid 1x2 --nb 16 --json \
        || return 1
    run oc "$cg" --n 300 --iters 8 --tol 0 --grid 1x2 --nb 16 --json \
        --mem-limit 64K --ooc-dir "$tmp" || return 1
    timeout --kill-after=5 "$tmo" "$launch" -n 2 "$cg" --n 300 \
        --mem-limit 2GB >"$tmp/ocbad.out" 2>"$tmp/ocbad.err"
    [ $? -eq 2 ] || { echo "--mem-limit 2GB: exit status not 2"; return 1; }
    py '
a, b = cg_json(sys.argv[1]), cg_json(sys.argv[2])
assert a["residual"] == b["residual"] and a["error"] == b["error"], (a, b)
assert a["bytes_io_read"] == 0 and b["bytes_io_read"] >= 8 * 300 * 300 * 8, b
err = lines(sys.argv[3])
assert len(err) == 1 and "DESO_MEM_LIMIT" in err[0], err
' "$tmp/ic.out" "$tmp/oc.out" "$tmp/ocbad.err"
}

# peak resident memory: a CG on a matrix of 100 MB per rank, streamed with a
# 16 MiB budget, stays within budget + vectors + 64 MiB on every rank
# (ru_maxrss, deso-cg --json); the same CG in core exceeds that bound, so
# the figure does see a rank that holds its piece
cg_ooc_rss() {
    big="$cg --n 5000 --iters 2 --tol 0 --grid 1x2 --json"
    run rssic $big || return 1
    run rssoc $big --mem-limit 16M --ooc-dir "$tmp" || return 1
    py '
ic, oc = cg_json(sys.argv[1]), cg_json(sys.argv[2])
assert len(oc["peak_rss"]) == 2 and oc["bytes_io_read"] > 0, oc
assert oc["rss_bound"] == 16 * 2**20 + oc["vector_bytes"] + 64 * 2**20, oc
assert all(0 < r <= oc["rss_bound"] for r in oc["peak_rss"]), oc
assert all(r > oc["rss_bound"] for r in ic["peak_rss"]), (ic, oc)
assert ic["residual"] == oc["residual"], (ic, oc)
' "$tmp/rssic.out" "$tmp/rssoc.out"
}

cg_text() {
    run text "$cg" --n 120 --iters 6 --mode full --verbose --verbose-every 2 \
        || return 1
    py '
out = lines(sys.argv[1])
its = [l for l in out if l.startswith("deso-cg: iteration ")]
got = [int(l.split()[2]) for l in its]
assert got == [0, 2, 4, 6], its
res = [float(l.split()[4]) for l in its]
assert res[0] == 1.0 and 0 < res[-1] < 1e-2, its
summ = [l for l in out if l.startswith("deso-cg: n=")]
assert len(summ) == 1 and re.fullmatch(
    r"deso-cg: n=120 P=2 grid=2x1 mode=full precond=none iters=6 "
    r"residual=\S+ error=\S+", summ[0]), summ
rows = ("computation", "runtime overhead", "point-to-point", "collective",
        "optimisation", "total")
for r in rows:
    assert sum(1 for l in out if re.match(r + r" +[0-9.]", l)) == 1, r
m = [re.match(r"plans optimised (\d+), replayed (\d+)", l) for l in out]
m = [x for x in m if x]
assert len(m) == 1 and int(m[0][1]) + int(m[0][2]) == 7, out[-1]
' "$tmp/text.out"
}

# --dot: a DOT graph of the iteration's plan, on the grid and with the
# block size asked for (A's layout: 7-row blocks over 2 grid rows)
cg_dot() {
    rm -f "$tmp/plan.dot"
    run dot "$cg" --n 100 --iters 3 --mode full --grid 2x1 --nb 7 \
        --dot "$tmp/plan.dot" --json || return 1
    [ ! -e "$tmp/plan.dot.partial" ] || { echo "plan.dot.partial left"; return 1; }
    py '
cg_json(sys.argv[1], grid="2x1", mode="full")
g = lines(sys.argv[2])
assert g[0] == "digraph deso_plan {" and g[-1] == "}", (g[:1], g[-1:])
assert g[1].startswith("  label=\"mode full, 2x1: "), g[1]
text = "\n".join(g)
assert "mat 100x100 cyclic(7,100)" in text, "A not in 7 x 100 blocks"
assert re.search(r"n\d+ dgemv", text), "no dgemv node"
assert sum(" -> " in l for l in g) >= 5, "too few edges"
' "$tmp/dot.out" "$tmp/plan.dot"
}

# DESO_LOG=1 and DESO_VERBOSE=1, one run.  The log: its table on stdout
# after the JSON line.  With --iters K and no preconditioner deso-cg runs
# dgemv K + 1 times (one per iteration and the true residual), ddot 2K + 1,
# daxpy 3K + 1 (the last for the error), dscal K, dnrm2 3 (||b||, ||b -
# Ax||, ||x - 1||), 2K divisions, K negations and 3 copies, in K + 3
# executions, each with its plan.  The explanations: rank 0 explains every
# new plan on stderr, none on stdout; the log's plan line says how many
# plans were made after set-up (all of them here: mode none never improves
# a plan), and there are exactly as many explanations.
cg_log() {
    run log -genv DESO_LOG 1 -genv DESO_VERBOSE 1 "$cg" --n 100 --iters 4 \
        --grid 1x2 --json || return 1
    py '
out = lines(sys.argv[1])
d = json.loads(out[0])
K = 4
assert d["iters"] == K and d["plans_optimised"] >= 1, d
assert out[1] == ("deso log_view: 2 ranks, grid 1x2, mode none, %d "
                  "executions" % (K + 3)), out[1]
def row(name):
    r = [l for l in out if re.match(re.escape(name) + r" {2,}\d", l)]
    assert len(r) == 1, "row %s: %r" % (name, r)
    return [float(x) for x in r[0][22:].split()]
want = {"dgemv": K + 1, "ddot": 2 * K + 1, "daxpy": 3 * K + 1, "dscal": K,
        "dnrm2": 3, "scalar_div": 2 * K, "scalar_neg": K, "dcopy": 3}
for name, calls in want.items():
    assert row(name)[0] == calls, (name, row(name), calls)
assert not any(l.startswith("dtrsv ") for l in out), "dtrsv without ssor"
for name in ("broadcast", "exchange (p2p)", "remap", "reduce", "allreduce",
             "check (SPMD, errors)"):
    row(name)
a = row("allreduce")
assert a[0] > 0 and a[2] > 0, a                # ddot at P = 2
m = [re.match(r"plans \(rank 0, since the last deso_stats_reset\): "
              r"optimised (\d+), replayed (\d+)", l) for l in out]
m = [x for x in m if x]
assert len(m) == 1 and int(m[0][1]) + int(m[0][2]) == K + 3, m
made = int(m[0][1])
assert not any(l.startswith("plan (") for l in out), "explained on stdout"
err = open(sys.argv[2]).read()
heads = re.findall(r"(?m)^plan \(mode none, 1x2 grid, \d+ nodes, ", err)
assert len(heads) == made >= d["plans_optimised"], (len(heads), made, d)
assert err.count("\nvalues:\n") == len(heads), "an explanation without values"
assert err.count("\nnodes:\n") == len(heads), "an explanation without nodes"
assert re.search(r"(?m)^  n\d+ dgemv -> v\d+  reduction: .*\(all-reduce\)"
                 r"  work: \S+ s$",
                 err), "no dgemv all-reduce explained"
' "$tmp/log.out" "$tmp/log.err"
}

# deso-remap --plan-only for each schedule (no launcher): the JSON's grid
# is a brute-force count over one slice, the text's steps are matchings
# that carry every message once at the costs stated
remap_plan() {
    for s in caterpillar stepwise greedy; do
        a="--P 5 --Q 3 --r 4 --s 7 --schedule $s --plan-only"
        run serial:plan-$s "$remap" $a --json || return 1
        run serial:steps-$s "$remap" $a || return 1
    done
    py '
P, Q, r, s = 5, 3, 4, 7
L = math.lcm(P * r, Q * s)
g = [[0] * Q for _ in range(P)]
for i in range(L):
    g[(i // r) % P][(i // s) % Q] += 1
edges = {(p, q) for p in range(P) for q in range(Q) if g[p][q]}
deg = max([sum(1 for q in range(Q) if g[p][q]) for p in range(P)] +
          [sum(1 for p in range(P) if g[p][q]) for q in range(Q)])
cost = {}
for k, sched in enumerate(("caterpillar", "stepwise", "greedy")):
    d = one_json(sys.argv[1 + 2 * k])
    assert (d["P"], d["Q"], d["r"], d["s"], d["schedule"]) == (
        P, Q, r, s, sched), d
    assert d["slice"] == L and d["grid"] == g, (d["slice"], d["grid"], g)
    assert d["messages"] == len(edges), d
    text = lines(sys.argv[2 + 2 * k])
    steps = [l for l in text if l.startswith("step ")]
    assert len(steps) == d["steps"], (len(steps), d["steps"])
    seen, total = [], 0
    for l in steps:
        m = re.fullmatch(r"step \d+ \(cost (\d+)\):(.*)", l)
        msgs = [tuple(map(int, x)) for x in
                re.findall(r" (\d+)->(\d+)\((\d+)\)", m[2])]
        assert len({p for p, q, n in msgs}) == len(msgs), "sender twice: " + l
        assert len({q for p, q, n in msgs}) == len(msgs), "receiver twice: " + l
        assert all(n == g[p][q] for p, q, n in msgs), "wrong length: " + l
        assert int(m[1]) == max([n for p, q, n in msgs], default=0), l
        seen += [(p, q) for p, q, n in msgs]
        total += int(m[1])
    assert sorted(seen) == sorted(edges), "messages not each sent once"
    assert total == d["total_cost"], (total, d["total_cost"])
    cost[sched] = d["total_cost"]
    if sched == "caterpillar":
        assert d["steps"] == max(P, Q), d["steps"]
    if sched == "stepwise":
        assert d["steps"] == deg, (d["steps"], deg)
assert cost["greedy"] <= min(cost["stepwise"], cost["caterpillar"]), cost
' "$tmp/plan-caterpillar.out" "$tmp/steps-caterpillar.out" \
  "$tmp/plan-stepwise.out" "$tmp/steps-stepwise.out" \
  "$tmp/plan-greedy.out" "$tmp/steps-greedy.out"
}

# deso-remap --run --json: verified remaps with the layouts asked for
remap_run() {
    run rvec "$remap" --run --P 2 --Q 2 --r 3 --s 5 --n 5000 --reps 3 \
        --shared-arrays --memcpy --json || return 1
    run rmat "$remap" --run --m 50 --n 40 --grid 1x2 --grid2 2x1 --mb 3 \
        --nb 4 --mb2 5 --nb2 2 --reps 2 --compare-scalapack --json || return 1
    run rmpi -genv DESO_REMAP_SHM 0 "$remap" --run --P 2 --Q 1 --r 3 --s 5 \
        --n 100 --reps 2 --dst-ranks 1 --schedule greedy --json || return 1
    run rin "$remap" --run --P 2 --Q 2 --r 4 --s 4 --n 300 --reps 2 \
        --in-place --json || return 1
    py '
def check(path, **want):
    d = one_json(path)
    for f in ("transport", "time", "gbs", "time_plan", "verified"):
        assert f in d, "%s: no field %s" % (path, f)
    for k, v in want.items():
        assert d[k] == v, "%s: %s = %r, asked for %r" % (path, k, d[k], v)
    assert d["verified"] is True, d
    assert d["transport"] in ("shared memory", "shared memory, single copy",
                              "mpi", "none"), d
    assert d["time"] > 0 and d["gbs"] >= 0 and d["time_plan"] >= 0, d
    return d
d = check(sys.argv[1], P=2, Q=2, m=5000, n=1, grid="2x1", grid2="2x1",
          ranks=2, schedule="stepwise", in_place=False, reps=3,
          shared_arrays=True)
assert d["transport"] != "none", d          # cyclic(3) -> cyclic(5) moves
assert d["memcpy_gbs"] > 0 and d["pct_memcpy"] >= 0, d
d = check(sys.argv[2], m=50, n=40, mb=3, nb=4, mb2=5, nb2=2, grid="1x2",
          grid2="2x1", scalapack_equal=True)
assert d["time_deso"] > 0 and d["time_scalapack"] > 0 and d["ratio"] > 0, d
check(sys.argv[3], Q=1, grid2="1x1", schedule="greedy", transport="mpi")
check(sys.argv[4], in_place=True, transport="none")     # moves nothing
' "$tmp/rvec.out" "$tmp/rmat.out" "$tmp/rmpi.out" "$tmp/rin.out"
}

# deso-mtx2bin: a symmetric coordinate file with a duplicate entry becomes
# the documented global matrix file (header, column-major values, the
# checksum recomputed here); a missing input: exit 1, one line
mtx2bin() {
    printf '%%%%MatrixMarket matrix coordinate real symmetric\n5 5 4\n1 1 2.5\n3 1 -1.25\n3 1 0.5\n5 4 7\n' >"$tmp/s.mtx"
    run m2b "$build/bin/deso-mtx2bin" "$tmp/s.mtx" "$tmp/s.bin" || return 1
    timeout --kill-after=5 "$tmo" "$launch" -n 2 "$build/bin/deso-mtx2bin" \
        "$tmp/none.mtx" "$tmp/x.bin" >"$tmp/m2bbad.out" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] || { echo "missing input: exit $rc, expected 1"; return 1; }
    py '
import struct
M = 2**64
def mix(k, x):
    z = struct.unpack("<Q", struct.pack("<d", x))[0]
    z = ((z ^ (k * 0x9E3779B97F4A7C15 % M)) + 0x9E3779B97F4A7C15) % M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
    return z ^ (z >> 31)
a = [[0.0] * 5 for _ in range(5)]
for i, j, v in ((0, 0, 2.5), (2, 0, -0.75), (4, 3, 7.0)):
    a[i][j] = v
    a[j][i] = v
b = open(sys.argv[1], "rb").read()
magic, ver, hb, m, n, cs = struct.unpack("<8sIIqqQ", b[:40])
assert magic == b"DESOMAT\0" and ver == 1 and hb == 64, b[:16]
assert (m, n) == (5, 5) and b[40:64] == bytes(24) and len(b) == 64 + 200
vals = struct.unpack("<25d", b[64:])
want = [a[i][j] for j in range(5) for i in range(5)]
assert list(vals) == want, (vals, want)
assert cs == sum(mix(k, v) for k, v in enumerate(want)) % M, cs
assert lines(sys.argv[2]) == ["deso-mtx2bin: %s: 5 x 5" % sys.argv[1]]
bad = lines(sys.argv[3])
assert len(bad) == 1 and bad[0].startswith("deso-mtx2bin: "), bad
' "$tmp/s.bin" "$tmp/m2b.out" "$tmp/m2bbad.out"
}

# deso-cg's sparse path against deso-cg-csr, its sequential twin (the same
# generators and preconditioners, sparse_problem.h): thirteen runs, each at
# its own P (1..4), mode and grid (P = 4 on 2x2, 4x1 and 1x4), that
# together give every P every mode and every problem (lap2d, lap2d-perm,
# lap3d, a symmetric coordinate file with duplicate entries, n = 1 and
# n = 3 < P) several preconditioners; the twin with --blocks P, so that
# bjacobi has deso-cg's blocks; and the block sweep on one block (the
# twin's) against deso-cg --dense --precond ssor (two deso_dtrsv: the same
# preconditioner, computed otherwise).  Each to tol 1e-10 or 8
# iterations (the small problems converge, the others stop: the time of a
# run is in its iterations).  The products placed by --partition block,
# ntg or auto (deso's choice of the trace-graph partition or the blocks):
# the same iterates up to rounding, since bjacobi's blocks are the
# matrix's own rows, contiguous, wherever the products run.  Each pair:
# the JSON's sparse, nnz,
# precond and partition; the same iterations and outcome; the recurrence
# residual of every iteration (--history) whose twin residual is above
# 1e-8 within 1e-8 relative of the twin's (rounding differs: a parallel
# dot product sums in another order); the true residual and the error
# within 1e-6 relative (1e-12 absolute), and below 1e-9 and 1e-7 when
# converged.
cg_sparse() {
    printf '%%%%MatrixMarket matrix coordinate real symmetric\n' >"$tmp/sp.mtx"
    awk 'BEGIN {
        n = 30
        print n, n, 3 * n - 1
        for (i = 1; i <= n; i++) {          # each diagonal given twice
            printf "%d %d %.17g\n", i, i, 1.5 + i / 20
            printf "%d %d %.17g\n", i, i, 1.0
            if (i < n) printf "%d %d %.17g\n", i + 1, i, -1.0 + 1 / (i + 2)
        }
    }' >>"$tmp/sp.mtx"
    printf '%%%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 4\n2 2 5\n3 3 6\n1 2 -1\n2 1 -1\n' \
        >"$tmp/tiny.mtx"
    k=0
    pairs=""
    while read -r np mode prob pc grid part; do
        case $prob in
        *.mtx) src="--matrix $tmp/$prob" ;;
        *) src="--gen $prob" ;;
        esac
        g=""
        [ "$grid" = - ] || g="--grid $grid"
        a="$src --precond $pc --iters 8 --tol 1e-10 --history --json"
        # (stdin: the launcher would read the list below)
        timeout --kill-after=5 "$tmo" "$launch" -n "$np" "$cg" $a \
            --mode "$mode" --partition "$part" $g </dev/null >"$tmp/sp$k.out" \
            2>"$tmp/sp$k.err" ||
            { echo "exit code $?: deso-cg -n $np $a"; return 1; }
        timeout --kill-after=5 "$tmo" "$csr" $a --blocks "$np" </dev/null \
            >"$tmp/tw$k.out" 2>"$tmp/tw$k.err" ||
            { echo "exit code $?: deso-cg-csr $a"; return 1; }
        grep '^{' "$tmp/sp$k.out" >"$tmp/sp$k.json"
        pairs="$pairs $np:$mode:$pc:$grid:$part:$tmp/sp$k.out:$tmp/tw$k.out"
        k=$((k + 1))
    done <<EOF
1 none lap2d:12 bjacobi - block
1 affine lap2d-perm:9 jacobi - auto
1 full sp.mtx none - block
2 none lap3d:5 jacobi - ntg
2 affine sp.mtx bjacobi - block
2 full lap2d-perm:9 bjacobi - ntg
3 none lap2d-perm:9 bjacobi - block
3 affine lap2d:12 none - auto
3 full lap2d:1 jacobi - ntg
4 none tiny.mtx bjacobi 2x2 block
4 affine lap3d:5 bjacobi 4x1 block
4 full lap2d:12 jacobi 1x4 block
4 full lap2d-perm:9 jacobi 2x2 ntg
EOF
    # one block's sweep against the dense SSOR's two triangular solves
    s="--matrix $tmp/sp.mtx --iters 8 --tol 1e-10 --history --json"
    timeout --kill-after=5 "$tmo" "$launch" -n 1 "$cg" $s --dense \
        --precond ssor >"$tmp/spssor.out" 2>&1 || { echo "--dense: $?"; return 1; }
    timeout --kill-after=5 "$tmo" "$csr" $s --precond bjacobi --blocks 1 \
        >"$tmp/sptwssor.out" 2>&1 || { echo "--blocks 1: $?"; return 1; }
    grep '^{' "$tmp/spssor.out" >"$tmp/spssor.json"
    pairs="$pairs 1:none:ssor:-:none:$tmp/spssor.out:$tmp/sptwssor.out"
    py '
ran = []
for pair in sys.argv[1:]:
    np, mode, pc, grid, part, mine, twin = pair.split(":")
    def parse(path):
        ls = lines(path)
        hist = [float(l.split()[2]) for l in ls if l.startswith("iter ")]
        js = [json.loads(l) for l in ls if l.startswith("{")]
        assert len(js) == 1 and len(hist) == len(ls) - 1, (path, ls[-2:])
        return hist, js[0]
    hd, d = parse(mine)
    ht, t = parse(twin)
    dense = pc == "ssor"
    want = dict(p=int(np), mode=mode, precond=pc, sparse=not dense,
                partition=part,
                nnz=d["n"] ** 2 if dense else t["nnz"])
    if grid != "-":
        want["grid"] = grid
    cg_json(mine[:-4] + ".json", **want)
    # where the products ran: the blocks when asked for or on one rank
    placed = "none" if dense else "block" if part == "block" or np == "1" else None
    assert d["placed"] == placed if placed else d["placed"] in ("block", "ntg"), (
        mine, d["placed"])
    assert t["impl"] == "csr" and t["n"] == d["n"], t
    assert t["blocks"] == int(np) and t["precond"] in (pc, "bjacobi"), t
    assert d["iters"] == t["iters"] and d["converged"] == t["converged"], (
        mine, d, t)
    for f in ("residual", "error"):
        assert abs(d[f] - t[f]) <= 1e-6 * t[f] + 1e-12, (mine, f, d[f], t[f])
    if d["converged"]:
        assert d["residual"] < 1e-9 and d["error"] < 1e-7, (mine, d)
    assert len(hd) == d["iters"] + 1 and len(ht) == t["iters"] + 1, mine
    ran.append(mine)
    for k, (a, b) in enumerate(zip(hd, ht)):
        if b > 1e-8:
            assert abs(a - b) <= 1e-8 * b, (mine, k, a, b)
assert len(ran) == 14, "%d runs compared, expected 14" % len(ran)
' $pairs
}

step "deso-mtx2bin: the documented file, checksum; a missing input" mtx2bin
step "deso-cg --tol converges below it, --json as asked" cg_tol
step "deso-cg --tol out of reach: exit 0, converged false" cg_stalls
step "deso-cg --precond jacobi, ssor" cg_precond
step "deso-cg sparse (--gen, coordinate --matrix) against deso-cg-csr" cg_sparse
step "deso-cg-cblas agrees with deso-cg" cg_cblas
step "deso-cg and deso-cg-cblas --repeat" cg_repeat
step "deso-cg --matrix (badly scaled SPD), jacobi" cg_matrix
step "deso-cg text output, --verbose --verbose-every" cg_text
step "deso-cg --dot, --grid, --nb" cg_dot
step "deso-cg --mem-limit, --ooc-dir: the same residual, streamed" cg_ooc
step "deso-cg --mem-limit: peak RSS within budget + vectors + 64 MiB" cg_ooc_rss
step "DESO_LOG=1 DESO_VERBOSE=1 deso-cg: the log, the plans explained" cg_log
step "deso-remap --plan-only, every schedule" remap_plan
step "deso-remap --run --json: verified" remap_run

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
