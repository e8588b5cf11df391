#!/usr/bin/env bash
# bench-overhead.sh: where a CG iteration's instructions go, deso against
# the code it replaces, counted by callgrind (make bench-overhead).
#
#   scripts/bench-overhead.sh [BUILD]     BUILD defaults to build
#   NS="100 300" REPEATS="20 60" scripts/bench-overhead.sh
#
# Per n: deso-cg (mode full) and the sequential CBLAS CG (cg_seq) on one
# process; deso-cg and the PBLAS CG (cg_pblas) on two ranks, both on the
# 2x1 grid.  Each is run under callgrind at the two solve counts of
# REPEATS (50 iterations each, tol 0) by scripts/callgrind-run.sh, which
# sorts every executed instruction into a category (kernels, MPI, deso's
# recording, planning, execution, memory, ...: see
# scripts/callgrind_categories.py).  The report takes per category the
# difference between the two runs over their difference in iterations:
# set-up, start-up and the first plans cancel, what is left is one
# iteration of the steady loop.  Counts, not times: they do not depend on
# the load, except MPI's category, where a rank waiting for a message
# spins (so a loaded machine inflates it).
# Results: doc/bench-overhead.jsonl (format: scripts/bench_lib.sh), then
# scripts/bench_report.py writes README's section between
# <!-- overhead:begin --> and <!-- overhead:end -->.
set -euo pipefail
# the caller's budget, taken before bench_lib.sh sets its own default
budget=${BL_BUDGET:-1800}
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bl_enter "${1:-build}"
ns=${NS:-100 300}
repeats=${REPEATS:-20 60}
iters=50
BL_BUDGET=$budget
BL_GRACE=60
export OPENBLAS_NUM_THREADS=1

bl_init bench-overhead
bl_need valgrind "callgrind counts the instructions (scripts/setup.sh installs it)"
bl_need callgrind_annotate "it reads callgrind's files (valgrind's package)"
for t in "$build/bench/cg_seq" "$build/bench/cg_pblas" "$build/bin/deso-cg"; do
    [ -e "$t" ] || make -s BUILD="$build" "$t" >&2 || bl_die "cannot build $t"
done

bl_clock_start
bl_meta overhead "$(printf '"ns":%s,"repeats":%s,"iters":%s' "$(bl_json_list "$ns")" \
    "$(bl_json_list "$repeats")" "$iters")"
run() { # run IMPL P REPEAT N PROGRAM ARGS...
    local impl=$1 p=$2 rep=$3 n=$4 np=0
    shift 4
    [ "$p" -gt 1 ] && np=$p
    local grid=1x1
    [ "$p" -gt 1 ] && grid=2x1
    bl_run instr "\"impl\":\"$impl\",\"n\":$n,\"p\":$p,\"grid\":\"$grid\",\"iters\":$((iters * rep))" \
        "$impl n=$n P=$p repeat=$rep" "$BL_TIMEOUT" \
        bash scripts/callgrind-run.sh "$np" "$@" --n "$n" --iters "$iters" \
        --repeat "$rep" --tol 0 --json
}
for n in $ns; do
    for rep in $repeats; do
        run deso 1 "$rep" "$n" "$build/bin/deso-cg" --mode full
        run seq 1 "$rep" "$n" "$build/bench/cg_seq"
        run deso 2 "$rep" "$n" "$build/bin/deso-cg" --mode full --grid 2x1
        run pblas 2 "$rep" "$n" "$build/bench/cg_pblas" --grid 2x1
    done
done
bl_end
bl_publish doc/bench-overhead.jsonl
python3 scripts/bench_report.py --results doc/bench-overhead.jsonl --no-plots
