#!/bin/sh
# DESO_ERRORS_ABORT ends the job: scripts/test-abort.sh [BUILD]
#   runs BUILD/tests/deso/test_error_handler --abort at P = 1, 2 and 3: it
#   sets the abort handler and makes one collective call that is bad on
#   rank 0 only, so every rank returns the agreed error.  Each run must
#     - exit non-zero, by MPI_Abort (not a timeout, not a crash signal);
#     - print "deso: deso_vec_from_array: rank 0: data is NULL ..." (the
#       function, the agreed message and the code's name) on stderr;
#     - never reach the line after the failing call ("not aborted").
# Prints "ok: ..." or "FAILED: ..." per run, then "abort: N passed, N
# failed"; exits non-zero on any failure.
set -u
build=${1:-build}
bin=$build/tests/deso/test_error_handler
launch=${MPIEXEC:-mpiexec.mpich}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/step.sh"

aborts() {
    OPENBLAS_NUM_THREADS=1 timeout --kill-after=5 60 \
        "$launch" -n "$1" "$bin" --abort >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    if [ "$rc" -eq 0 ]; then echo "exit code 0"; return 1; fi
    if [ "$rc" -ge 124 ]; then echo "exit code $rc (timeout or signal)"; return 1; fi
    if grep -q 'not aborted' "$tmp/out"; then echo "went on after the error"; return 1; fi
    want="deso: deso_vec_from_array: "
    [ "$1" -gt 1 ] && want="${want}rank 0: "
    grep -q "^${want}data is NULL (arg 3) (DESO_ENULL)\$" "$tmp/out" ||
        { echo "no line '${want}data is NULL (arg 3) (DESO_ENULL)'"; return 1; }
}

if [ ! -x "$bin" ]; then
    echo "test-abort: $bin not found (make BUILD=$build tests)"
    echo "abort: 0 passed, 1 failed"
    exit 1
fi
for np in 1 2 3; do
    step "DESO_ERRORS_ABORT at P = $np: message, then MPI_Abort" aborts "$np"
done
echo "abort: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
