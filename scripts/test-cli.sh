#!/bin/sh
# Command-line hardening: runs BUILD/bin/deso-cg and BUILD/bin/deso-remap
# with bad input for every option (missing value, non-number, zero and
# negative sizes, a grid that does not match P, an unknown mode or
# schedule, a missing or malformed --matrix file, unknown options) at
# P = 1 and 2, each under `timeout`, and checks that every run
#   - exits non-zero, and not by a signal or a timeout (code < 124),
#   - prints exactly one line (stdout and stderr together), i.e. one
#     reason from rank 0 rather than one per rank,
#   - shows no crash ("Segmentation", "ASAN", "AddressSanitizer",
#     "runtime error", MPICH's "BAD TERMINATION").
# Then, with MPMD launch lines, a DESO_* variable that differs on the last
# rank: a valid value gives every rank rank 0's (one warning, the same run
# as with rank 0's value everywhere), an invalid one one reason line that
# names the rank and the variable, and exit code 2.
# Prints the failures, then a closing line "cli: N passed, N failed", and
# exits non-zero when anything failed.
#   scripts/test-cli.sh [BUILD]        (default build)
# Environment: MPIEXEC (default mpiexec.mpich), CLI_TIMEOUT (seconds per
# run, default 60), CLI_NP (default "1 2").
set -u
build=${1:-build}
launch=${MPIEXEC:-mpiexec.mpich}
tmo=${CLI_TIMEOUT:-60}
nps=${CLI_NP:-"1 2"}
cg=$build/bin/deso-cg
remap=$build/bin/deso-remap
for b in "$cg" "$remap"; do
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

passed=0
failed=0
export OPENBLAS_NUM_THREADS=1

# bad NP PROGRAM ARGS...: one bad command line (NP "mpmd": ARGS are a
# whole launch line).
bad() {
    np=$1
    shift
    out="$tmp/out"
    if [ "$np" = mpmd ]; then            # "$@" is a whole MPMD launch line
        timeout --kill-after=5 "$tmo" "$launch" "$@" > "$out" 2>&1
    else
        timeout --kill-after=5 "$tmo" "$launch" -n "$np" "$@" > "$out" 2>&1
    fi
    rc=$?
    lines=$(grep -c '' "$out")
    why=""
    if [ "$rc" -eq 0 ]; then
        why="exit code 0"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        why="timeout after ${tmo}s (hang?)"
    elif [ "$rc" -ge 124 ]; then
        why="exit code $rc (signal or launcher failure)"
    elif grep -q -E 'Segmentation|ASAN|AddressSanitizer|runtime error|BAD TERMINATION|Aborted' "$out"; then
        why="crash output"
    elif [ "$lines" -ne 1 ]; then
        why="$lines output lines (expected one reason line)"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL (P=$np): $*"
        echo "      $why; rc=$rc; output:"
        sed -e 's/^/      | /' "$out" | head -8
    fi
}

for np in $nps; do
    np1=$((np + 1))
    # ---- deso-cg --------------------------------------------------------
    c="$cg --iters 2"
    for opt in --n --iters --tol --nb --grid --mode --matrix --precond; do
        bad "$np" $c $opt                       # missing value
    done
    for v in abc 0 -5 1.5 '' 99999999999999999999 1000001 2x; do
        bad "$np" $c --n "$v"
    done
    for v in x -1 1e3 99999999999999999999; do
        bad "$np" $c --iters "$v"
    done
    for v in abc -1 nan inf 1e999 ''; do
        bad "$np" $c --tol "$v"
    done
    for v in 0 -1 x 99999999999; do
        bad "$np" $c --nb "$v"
    done
    for v in "${np1}x1" "1x${np1}" 0x1 1x0 -1x-1 x 2 2x2x2 axb 99999999x1; do
        bad "$np" $c --grid "$v"
    done
    bad "$np" $c --n=0
    bad "$np" $c --grid=0x0
    for v in fast NONE ''; do
        bad "$np" $c --mode "$v"
    done
    bad "$np" $c --mode=bogus
    for f in /nonexistent/a.mtx "$tmp/bad.mtx" "$tmp/empty.mtx" \
             "$tmp/short.mtx" "$tmp/text.mtx" "$tmp"; do
        bad "$np" $c --matrix "$f"
    done
    bad "$np" $c --precond bogus
    bad "$np" $c --bogus
    bad "$np" $c -x
    bad "$np" $c stray
    bad "$np" $c --json=1
    bad "$np" "$cg" --n 1000000 --iters 1       # a matrix no rank can hold

    # ---- deso-remap ------------------------------------------------------
    p="$remap --plan-only --P 2 --Q 3 --r 2 --s 3"
    bad "$np" "$remap"                          # neither --plan-only nor --run
    bad "$np" "$remap" --plan-only --run --P 2 --Q 3 --r 2 --s 3
    for opt in --P --Q --r --s --m --n --mb --nb --mb2 --nb2 --reps --grid \
               --grid2 --src-ranks --dst-ranks --schedule; do
        bad "$np" $p $opt                       # missing value (last)
    done
    for opt in --P --Q --r --s; do
        for v in x 0 -1 1.5 99999999999999999999; do
            bad "$np" $p $opt "$v"
        done
    done
    bad "$np" "$remap" --plan-only --P 2 --Q 3 --r 2     # --s missing
    bad "$np" "$remap" --plan-only --P 3 --Q 5 --r 4611686018427387903 \
        --s 3074457345618258602                          # slice overflows
    bad "$np" "$remap" --plan-only --P 1000000 --Q 1000000 --r 1 --s 1
    bad "$np" $p --schedule bogus
    bad "$np" $p --schedule ''
    bad "$np" $p --bogus
    r="$remap --run --P 1 --Q $np --r 2 --s 3 --n 64"
    for opt in --m --n --mb --nb --mb2 --nb2 --reps; do
        for v in 0 -3 x; do
            bad "$np" $r $opt "$v"
        done
    done
    for v in 0x1 x 2x 1x-1; do
        bad "$np" $r --grid "$v"
        bad "$np" $r --grid2 "$v"
    done
    bad "$np" $r --src-ranks -1
    bad "$np" $r --dst-ranks "$np"               # target beyond the ranks
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
        bad mpmd -n $((k - 1)) "$cg" --n 50 --iters 2 : -n 1 -env "$1" "$2" \
            "$cg" --n 50 --iters 2
        if [ "$rc" -ne 2 ] || ! grep -q "rank $((k - 1)): $1" "$out"; then
            failed=$((failed + 1))
            echo "FAIL (P=$k): $1=$2 on the last rank: rc=$rc, expected 2" \
                 "and a reason naming rank $((k - 1)) and $1"
        fi
    done
done

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
