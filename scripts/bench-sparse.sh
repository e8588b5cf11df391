#!/bin/bash
# bench-sparse.sh: the sparse CG (deso-cg --gen, mode full) against PETSc's
# KSPCG on MATMPIAIJ (BUILD/bench/cg_petsc --gen, Open MPI, built by
# scripts/petsc-anchor.sh) at P = 1 and 2, and against its sequential twin
# deso-cg-csr at P = 1, on the same generated matrices (lap2d:G and
# lap2d-perm:G by default), tol 0 and the same iterations for every code.
# ROUNDS rounds: in each, every case once, the codes of a case back to
# back, in an order that alternates between rounds (so drift on the shared
# machine falls on each code alike).  Results into doc/bench-sparse.jsonl
# (scripts/bench_lib.sh's records), then README's section from them
# (scripts/bench_report.py: time per iteration, the ratios, and deso's
# point-to-point bytes and messages per iteration, which are counts and
# do not depend on the machine's load).  Then, unless COUNTED=0, its
# counted part, scripts/bench-sparse-counts.sh (halo bytes and messages
# per iteration at P = 4, 9, 16 with row blocks and the trace graph's
# partition, into doc/bench-sparse-counts.jsonl and README's section after
# this one), in quick mode too when this one is.
# In each round also the effective bandwidth of deso's sparse product at
# P = 1 (BUILD/bench/spmv_bw on SPMV_PROBLEM, default lap3d:250, about
# 1.4 GB of CSR: several times the last-level cache), which sets each of
# its passes against the streaming read bandwidth measured in the same
# process, and read_bw beside it (its own process, before or after
# spmv_bw as the round alternates), so that every ratio is paired.
#
#   scripts/bench-sparse.sh [BUILD]      BUILD defaults to build
# Environment: PROBLEMS (default "lap2d:500 lap2d-perm:500", n = 250,000),
#   NPS (default "1 2"), ITERS (default 200), PRECOND (default none),
#   ROUNDS (default 15), SPMV_PROBLEM (default lap3d:250), SPMV_PASSES
#   (default 3), BASELINE (default lap2d:10), BL_BUDGET (seconds, default
#   3600), MPIEXEC;
#   BENCH_QUICK=1: a smoke run (lap2d:60 and lap2d-perm:60, 20
#   iterations, 2 rounds; the product on lap3d:40 against a 64 MB read).
set -euo pipefail
# the caller's budget, taken before bench_lib.sh sets its own default
budget=${BL_BUDGET:-3600}
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bl_enter "${1:-build}"
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    problems=${PROBLEMS:-lap2d:60 lap2d-perm:60}
    iters=${ITERS:-20}
    rounds=${ROUNDS:-2}
    spmv_problem=${SPMV_PROBLEM:-lap3d:40}
    spmv_mb=64
else
    problems=${PROBLEMS:-lap2d:500 lap2d-perm:500}
    iters=${ITERS:-200}
    rounds=${ROUNDS:-15}
    spmv_problem=${SPMV_PROBLEM:-lap3d:250}
    spmv_mb=1024
fi
spmv_passes=${SPMV_PASSES:-3}
baseline=${BASELINE:-lap2d:10}
nps=${NPS:-1 2}
precond=${PRECOND:-none}
launch=${MPIEXEC:-mpiexec.mpich}
# Open MPI's launcher binds each rank to a core and MPICH's does not: two
# unbound ranks can share a core for a while.  MPICH's runs are bound too,
# so that both codes run alike (another launcher is run as it is given).
bind=() seq_launch=()
# the sequential twin through the same launcher, bound as deso's P = 1 run is
[ "$launch" = mpiexec.mpich ] && bind=(-bind-to core) seq_launch=("$launch" -bind-to core -n 1)
ompi=mpiexec.openmpi
ompi_env=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
BL_BUDGET=$budget
BL_GRACE=60
export OPENBLAS_NUM_THREADS=1

bl_init bench-sparse
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
for t in "$build/bin/deso-cg" "$build/bin/deso-cg-csr" "$build/bench/spmv_bw" \
    "$build/bench/read_bw"; do
    [ -e "$t" ] || make -s BUILD="$build" "$t" >&2 || bl_die "cannot build $t"
done
bash scripts/petsc-anchor.sh "$build" >&2 || bl_die "cannot build the PETSc anchor"
bl_need "$ompi" "PETSc's anchor runs on Open MPI"

bl_clock_start
bl_meta sparse "$(printf '"problems":%s,"nps":%s,"iters":%s,"precond":%s,"rounds":%s,"quick":%s,"spmv_problem":%s,"spmv_passes":%s,"spmv_mb":%s,"baseline":%s,"mpich_bind":"%s","seq_bind":"%s"' \
    "$(bl_json_list "$problems" q)" "$(bl_json_list "$nps")" "$iters" \
    "$(bl_json_str "$precond")" "$rounds" "$([ "$quick" = 1 ] && echo true || echo false)" \
    "$(bl_json_str "$spmv_problem")" "$spmv_passes" "$spmv_mb" \
    "$(bl_json_str "$baseline")" "$([ ${#bind[@]} -gt 0 ] && echo core || echo none)" \
    "$([ ${#seq_launch[@]} -gt 0 ] && echo core || echo none)")"
common=(--iters "$iters" --tol 0 --precond "$precond" --json)
one() { # one CODE PROBLEM NP ROUND
    local code=$1 prob=$2 np=$3 k=$4
    local asked="\"impl\":\"$code\",\"problem\":\"$prob\",\"p\":$np,\"iters\":$iters,\"precond\":\"$precond\",\"round\":$k"
    case $code in
    deso)
        bl_run run "$asked" "deso-cg $prob P=$np round $k" "$BL_TIMEOUT" \
            "$launch" "${bind[@]}" -n "$np" "$build/bin/deso-cg" --gen "$prob" --mode full "${common[@]}" ;;
    petsc)
        bl_run run "$asked" "cg_petsc $prob P=$np round $k" "$BL_TIMEOUT" \
            "${ompi_env[@]}" "$ompi" -n "$np" "$build/bench/cg_petsc" --gen "$prob" \
            "${common[@]}" ;;
    base)
        bl_run baseline "\"impl\":\"deso\",\"problem\":\"$prob\",\"p\":$np,\"round\":$k" \
            "deso-cg baseline $prob P=$np round $k" "$BL_TIMEOUT" \
            "$launch" "${bind[@]}" -n "$np" "$build/bin/deso-cg" --gen "$prob" --mode full "${common[@]}" ;;
    csr)
        bl_run run "$asked" "deso-cg-csr $prob round $k" "$BL_TIMEOUT" \
            "${seq_launch[@]}" "$build/bin/deso-cg-csr" --gen "$prob" "${common[@]}" ;;
    esac
}
# spmv_bw and read_bw, in an order that alternates between rounds
spmv_round() { # spmv_round ROUND
    local k=$1 which
    local asked="\"problem\":\"$spmv_problem\",\"p\":1,\"round\":$k"
    bl_load "$asked" "load spmv round $k"
    for which in spmv read; do
        [ $((k % 2)) -eq 0 ] && which=$([ "$which" = spmv ] && echo read || echo spmv)
        if [ "$which" = spmv ]; then
            bl_run spmv "\"impl\":\"spmv\",$asked,\"passes\":$spmv_passes" \
                "spmv_bw $spmv_problem round $k" "$((BL_TIMEOUT * 3))" \
                "$build/bench/spmv_bw" --gen "$spmv_problem" --passes "$spmv_passes" \
                --reps 5 --mb "$spmv_mb" --json
        else
            bl_run read_bw "\"impl\":\"read_bw\",\"p\":1,\"round\":$k,\"mb\":$spmv_mb" \
                "read_bw round $k" "$BL_TIMEOUT" \
                "$build/bench/read_bw" --mb "$spmv_mb" --n 2000 --reps 3 --json
        fi
    done
}
for ((k = 1; k <= rounds; k++)); do
    spmv_round "$k"
    for np in $nps; do
        one base "$baseline" "$np" "$k"
    done
    for prob in $problems; do
        bl_load "\"problem\":\"$prob\",\"round\":$k" "load $prob round $k"
        for np in $nps; do
            codes="deso petsc"
            [ "$np" -eq 1 ] && codes="deso petsc csr"
            # odd rounds in this order, even rounds reversed
            if [ $((k % 2)) -eq 0 ]; then
                codes=$(echo "$codes" | tr ' ' '\n' | tac | tr '\n' ' ')
            fi
            for code in $codes; do
                one "$code" "$prob" "$np" "$k"
            done
        done
    done
done
bl_end
bl_publish doc/bench-sparse.jsonl
python3 scripts/bench_report.py --results doc/bench-sparse.jsonl --no-plots
if [ "${COUNTED:-1}" != 0 ]; then
    # its own default budget, unless the caller's environment gave one
    bash scripts/bench-sparse-counts.sh "$build"
fi
