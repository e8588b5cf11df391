#!/bin/sh
# ooc-kill.sh [BUILD]: an out-of-core run killed with kill -9 leaves
# nothing in its directory.  deso-cg runs at P = 2 on a dense matrix of
# n = $N (default 2000) with a budget of 1 MiB per rank, so the matrix
# lives in the ranks' local array files in a fresh directory and every CG
# iteration streams it; once both ranks hold a file there (read through
# /proc/PID/fd) and have streamed for a second, one rank gets SIGKILL.
# Checks: while the run streams, the directory lists nothing (the files
# have no name); after the kill, the run ends (the launcher takes the other
# rank down) and the directory is still empty, with no process holding a
# file in it.  Prints "ooc-kill: ok" or what failed; exits non-zero on
# failure.  In make check-long.  Environment: MPIEXEC (default
# mpiexec.mpich), N, TMPDIR.
set -u
B=${1:-build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
N=${N:-2000}
export OPENBLAS_NUM_THREADS=1
make --no-print-directory BUILD="$B" "$B/bin/deso-cg" >/dev/null || exit 1
dir=$(mktemp -d "${TMPDIR:-/tmp}/deso-ooc-kill.XXXXXX") || exit 1
log=$(mktemp)
launcher=
fail() {
    echo "ooc-kill: FAILED: $*"
    [ -n "$launcher" ] && kill -9 "$launcher" 2>/dev/null
    cat "$log" | tail -5
    rm -f "$log"
    rmdir "$dir" 2>/dev/null
    exit 1
}

# The ids of the processes holding a file in $dir, one per line.
holders() {
    for fd in /proc/[0-9]*/fd/*; do
        case $(readlink "$fd" 2>/dev/null) in
        "$dir"/*) p=${fd#/proc/}; echo "${p%%/*}" ;;
        esac
    done | sort -u
}

"$MPIEXEC" -n 2 "$B/bin/deso-cg" --n "$N" --iters 1000000 --tol 1e-300 \
    --mem-limit 1M --ooc-dir "$dir" >"$log" 2>&1 &
launcher=$!
ranks=
for t in $(seq 1 120); do
    ranks=$(holders)
    [ "$(echo "$ranks" | grep -c .)" -ge 2 ] && break
    kill -0 "$launcher" 2>/dev/null || fail "the run ended before streaming"
    sleep 0.5
done
[ "$(echo "$ranks" | grep -c .)" -ge 2 ] ||
    fail "no two ranks holding local array files in $dir after 60 s"
sleep 1
[ -z "$(ls -A "$dir")" ] || fail "$dir lists files while the run streams"
victim=$(echo "$ranks" | head -1)
kill -9 "$victim" || fail "cannot kill rank $victim"
for t in $(seq 1 60); do
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.5
done
if kill -0 "$launcher" 2>/dev/null; then
    for p in $ranks; do kill -9 "$p" 2>/dev/null; done
    fail "the run did not end within 30 s of the kill"
fi
wait "$launcher" 2>/dev/null
sleep 0.5
[ -z "$(ls -A "$dir")" ] || fail "$dir is not empty after the kill: $(ls -A "$dir")"
[ -z "$(holders)" ] || fail "processes still hold files in $dir"
rm -f "$log"
rmdir "$dir"
echo "ooc-kill: ok (P = 2, n = $N, rank $victim killed mid-stream, directory empty)"
