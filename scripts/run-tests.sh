#!/bin/sh
# Runs test binaries and prints one closing line "KIND: N passed, N failed".
#   run-tests.sh unit "bin1 bin2 ..."   each binary once, as one process
#   run-tests.sh mpi  "bin1 bin2 ..."   each binary under $MPIEXEC at every
#       P in $NP, or at the counts listed in its source on a line
#       "deso-np: 1 2 4" (that line replaces the default list).  NP_ONLY="2"
#       runs every MPI test at exactly those counts (the sanitizer pass).
#   run-tests.sh mpi-long "bin ..."  the long group: each binary at the
#       counts on its "deso-np-long: 6" line, if it has one.
#   run-tests.sh counts "bin ..."  as mpi, each rank with $PRELOAD (a
#       library path) in LD_PRELOAD; the launcher itself runs without it;
#       counts-long likewise at the deso-np-long counts.
# With STOP_AT_FIRST=1 the first failure ends the run (the mutation check
# only needs to know that something fails).
# Every run has a timeout ($DESO_TEST_TIMEOUT seconds, default 300), so a
# deadlock fails the test instead of hanging CI.
set -u
kind=$1
bins=$2
timeout_s=${DESO_TEST_TIMEOUT:-300}
passed=0
failed=0
failures=""

run_one() {
    label=$1; shift
    t0=$(date +%s)
    if timeout --kill-after=10 "$timeout_s" "$@"; then
        passed=$((passed + 1))
        echo "-- $label ok ($(( $(date +%s) - t0 ))s)"
    else
        rc=$?
        failed=$((failed + 1))
        failures="$failures $label(rc=$rc)"
        [ "$rc" -eq 124 ] && echo "TIMEOUT after ${timeout_s}s: $label"
        echo "-- $label FAILED rc=$rc ($(( $(date +%s) - t0 ))s)"
        if [ "${STOP_AT_FIRST:-0}" = 1 ]; then
            echo "$kind: stopped at the first failure: $label"
            exit 1
        fi
    fi
}

for bin in $bins; do
    name=$(basename "$bin")
    if [ "$kind" != unit ]; then
        src=$(echo "$bin" | sed -e 's|.*/tests/|tests/|').c
        if [ "${kind%-long}" != "$kind" ]; then
            nps=$(sed -n 's/.*deso-np-long:\([0-9 ]*\).*/\1/p' "$src" 2>/dev/null | head -1)
            [ -n "$nps" ] || continue
        else
            nps=$(sed -n 's/.*deso-np:\([0-9 ]*\).*/\1/p' "$src" 2>/dev/null | head -1)
            [ -n "$nps" ] || nps=${NP:-"1 2 3 4"}
        fi
        [ -n "${NP_ONLY:-}" ] && nps=$NP_ONLY
        for np in $nps; do
            echo "== $name at P=$np"
            if [ "${kind#counts}" != "$kind" ]; then
                CMOCKA_TEST_ABORT=1 run_one "$name@P$np" "${MPIEXEC:-mpiexec.mpich}" -n "$np" -genv LD_PRELOAD "$PRELOAD" "$bin"
            elif [ "$np" -gt 1 ]; then
                # one rank must never longjmp out of a collective alone
                CMOCKA_TEST_ABORT=1 run_one "$name@P$np" "${MPIEXEC:-mpiexec.mpich}" -n "$np" "$bin"
            else
                run_one "$name@P$np" "${MPIEXEC:-mpiexec.mpich}" -n 1 "$bin"
            fi
        done
    else
        echo "== $name"
        run_one "$name" "$bin"
    fi
done

[ -n "$failures" ] && echo "failed:$failures"
echo "$kind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
