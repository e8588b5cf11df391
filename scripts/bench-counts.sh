#!/usr/bin/env bash
# bench-counts.sh: MPI calls per CG iteration, deso against the PBLAS CG,
# counted by the PMPI interposer (tests/pmpi), which sees every call each
# process hands to MPI whoever made it (make bench-counts).
#
#   scripts/bench-counts.sh [BUILD]     BUILD defaults to build
#   NS="1200" NPS="4 9 16" ITERS="6 12 18" scripts/bench-counts.sh
#
# Per n and P, on the most square grid (2x2, 3x3, 4x4; both codes on the
# same one, given with --grid): deso-cg in each optimiser mode and
# BUILD/bench/cg_pblas, tol 0, at each iteration count of ITERS.  A count
# per iteration is a difference between two of those runs over the
# difference of their iterations (start-up, set-up, the first plans and the
# final residual cancel); scripts/benchreport/counts.py says which figures
# are exact (the same increment between every two runs).  Counts, not
# times: the ranks oversubscribe the cores, which changes no count.  deso's
# plans depend on the alpha and beta it measures at start-up, so that runs
# measured otherwise could run other plans and their difference would mean
# nothing: per n, P and mode, a first run (not counted) writes a wisdom
# file (DESO_WISDOM: the calibration and the plans), and the counted runs
# start from it.  Collectives are priced by the cost model's formula
# (DESO_MEASURE_COLLECTIVES=0): on cores this oversubscribed, timing a
# collective measures the scheduler, and plans made from that would say
# nothing about the counts a machine with a core per rank gets.
# Results: doc/bench-counts.jsonl (format: scripts/bench_lib.sh), then
# scripts/bench_report.py writes README's section between
# <!-- counts:begin --> and <!-- counts:end -->.
set -euo pipefail
# the caller's budget, taken before bench_lib.sh sets its own default
budget=${BL_BUDGET:-1800}
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bl_enter "${1:-build}"
ns=${NS:-1200}
nps=${NPS:-4 9 16}
iters=${ITERS:-6 12 18}
modes=${MODES:-none affine full}
launch=${MPIEXEC:-mpiexec.mpich}
BL_BUDGET=$budget
BL_GRACE=60
export OPENBLAS_NUM_THREADS=1
export DESO_MEASURE_COLLECTIVES=0

bl_init bench-counts
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
lib=$build/tests/pmpi/libpmpi_count.so
for t in "$lib" "$build/bench/cg_pblas" "$build/bin/deso-cg"; do
    [ -e "$t" ] || make -s BUILD="$build" "$t" >&2 || bl_die "cannot build $t"
done

square() { # the most square grid R x C with R <= C
    local p=$1 r=1 k
    for ((k = 1; k * k <= p; k++)); do
        [ $((p % k)) -eq 0 ] && r=$k
    done
    echo "${r}x$((p / r))"
}

bl_clock_start
bl_meta counts "$(printf '"ns":%s,"nps":%s,"iters":%s,"modes":%s' "$(bl_json_list "$ns")" \
    "$(bl_json_list "$nps")" "$(bl_json_list "$iters")" "$(bl_json_list "$modes" q)")"
run() { # run WISDOM ASKED LABEL NP PROGRAM ARGS...  (WISDOM: a file or "")
    local wisdom=$1 asked=$2 label=$3 np=$4
    shift 4
    # each run starts from the same file (a run rewrites it at its end, and
    # rank 0 broadcasts it at start-up: its length would differ otherwise)
    if [ -n "$wisdom" ] && [ -e "$wisdom" ]; then
        cp "$wisdom" "$wisdom.run"
        wisdom=$wisdom.run
    fi
    bl_run count "$asked" "$label" "$BL_TIMEOUT" env MPIEXEC="$launch" \
        DESO_WISDOM="$wisdom" bash scripts/pmpi-count-run.sh "$lib" "$np" "$@"
}
first=${iters%% *}
for n in $ns; do
    for np in $nps; do
        grid=$(square "$np")
        bl_load "\"n\":$n,\"p\":$np" "load n=$n P=$np"
        for m in $modes; do
            bl_run warmup "\"impl\":\"deso\",\"mode\":\"$m\",\"n\":$n,\"p\":$np" \
                "deso-cg $m n=$n P=$np: the wisdom file" "$BL_TIMEOUT" \
                env DESO_WISDOM="$BL_TMP/wisdom-$n-$np-$m" "$launch" -n "$np" \
                "$build/bin/deso-cg" --n "$n" --iters "$first" --tol 0 --mode "$m" \
                --grid "$grid" --json
        done
        for it in $iters; do
            run "" "\"impl\":\"pblas\",\"n\":$n,\"p\":$np,\"grid\":\"$grid\",\"iters\":$it" \
                "cg_pblas n=$n P=$np iters=$it" "$np" "$build/bench/cg_pblas" --n "$n" \
                --iters "$it" --tol 0 --grid "$grid" --json
            for m in $modes; do
                run "$BL_TMP/wisdom-$n-$np-$m" "\"impl\":\"deso\",\"mode\":\"$m\",\"n\":$n,\"p\":$np,\"grid\":\"$grid\",\"iters\":$it" \
                    "deso-cg $m n=$n P=$np iters=$it" "$np" "$build/bin/deso-cg" --n "$n" \
                    --iters "$it" --tol 0 --mode "$m" --grid "$grid" --json
            done
        done
    done
done
bl_end
bl_publish doc/bench-counts.jsonl
python3 scripts/bench_report.py --results doc/bench-counts.jsonl --no-plots
