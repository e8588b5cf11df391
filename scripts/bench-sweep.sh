#!/bin/bash
# bench-sweep.sh: deso's CG at small and mid sizes against every anchor, in
# paired runs, beside the two MPIs' own small-message latencies (make
# bench-sweep; make bench runs it after scripts/bench.sh).
#
#   scripts/bench-sweep.sh [BUILD]          BUILD defaults to build
#   BENCH_QUICK=1 scripts/bench-sweep.sh    a smoke version (under a minute)
#
# The codes, all on the problem of examples/cg_problem.h with tol 0 and
# OPENBLAS_NUM_THREADS=1, every run under `timeout` (scripts/bench_lib.sh):
#   deso     BUILD/bin/deso-cg --mode full (MPICH) at P = 1 and 2, never
#            given a grid: it picks its own and prints it;
#   seq      BUILD/bench/cg_seq, sequential CBLAS (the P = 1 anchor);
#   pblas    BUILD/bench/cg_pblas (MPICH) at P = 2, on whichever of 1x2 and
#            2x1 was faster in a short paired pre-round of this same run;
#   petsc    BUILD/bench/cg_petsc, PETSc's KSPCG on Open MPI at P = 2
#            (built by scripts/petsc-anchor.sh).
# At a given n every code runs the same number of iterations: ITERS(n)
# split into solves of SOLVE iterations each (--repeat), because with tol 0
# one long solve would reach an exactly zero residual after a few hundred
# iterations at small n (examples/cg_problem.h); the counts are chosen so
# that a run's loop lasts a few tenths of a second or more.  Only time_loop
# (each program's solver loop, barrier to barrier) per iteration is compared.
#
# In this order:
#   1. MPI latencies, MPICH and Open MPI alternating (BUILD/bench/mpi_latency
#      and mpi_latency_openmpi, built from one source by make and by
#      scripts/openmpi-latency.sh): one-way ping-pong of 8 and 400 bytes and
#      an 8-byte MPI_Allreduce at P = 2;
#   2. the PBLAS grid pre-round: per n, PRE pairs of cg_pblas on 1x2 and 2x1
#      back to back, order alternating; the grid with the lower median
#      per-pair ratio is the one its paired runs use;
#   3. paired runs: per n and per (P, anchor) = (1, seq), (2, pblas),
#      (2, petsc), PAIRS pairs of deso and the anchor back to back, the
#      anchor first in odd pairs and second in even ones (pair k of every
#      case before pair k + 1 of any, so a budget cut leaves the same number
#      everywhere), with a load-average record before each round of pairs;
#   4. the MPI latencies again, so that drift over the run shows.
# Then the raw results go to DOC/bench-sweep.jsonl (format:
# scripts/bench_lib.sh) and scripts/bench_report.py writes, from that file
# alone, the README's section between <!-- sweep:begin --> and
# <!-- sweep:end --> and DOC/bench-sweep.png.  The report again, without
# running anything:
#   python3 scripts/bench_report.py --results doc/bench-sweep.jsonl
#
# The machine is shared, and a P = 2 run on 2 cores is slowed several times
# over by anyone else's compile or test, so every run's record says how much
# CPU other processes used meanwhile (cpu_others, scripts/bench_lib.sh), and
# after a run that shared the machine the next pair first waits, within
# BENCH_SWEEP_WAIT, for the cores to be left idle; the report counts the
# pairs that still shared it.  A failed run prints a line and is left out of
# the figures; nothing aborts the rest.
#
# Environment (defaults: full / quick):
#   BENCH_SWEEP_ITERS   n:iterations per run      "100:150000 300:20000
#                                                  1000:4000 3000:150" /
#                                                  "100:2000 300:1000
#                                                  1000:200 3000:50"
#   BENCH_SWEEP_SOLVE   iterations per solve      50
#   BENCH_SWEEP_PAIRS   pairs per n, P and anchor 15 / 2
#   BENCH_SWEEP_PRE     pre-round pairs per n     3 / 1
#   BENCH_SWEEP_LAT     latency runs per MPI, at the start and again at the
#                       end                       2 / 1
#   BENCH_SWEEP_WAIT    seconds a pair may wait for idle cores (above)
#                                                 120 / 10
#   BENCH_SWEEP_WAIT_TOTAL  the same, over the whole sweep   600 / 30
#   BENCH_SWEEP_BUDGET  seconds: no run starts after it   1500 / 240
#   BENCH_SWEEP_TIMEOUT seconds per run           180 / 60
#   BENCH_PLOTS         1: gnuplot PNG; 0: none   1
#   BENCH_README        the README to write       README.md
#   BENCH_DOC           where results and plot go doc
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

# shellcheck source=scripts/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
bl_enter "${1:-build}"

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    d_iters="100:2000 300:1000 1000:200 3000:50" d_pairs=2 d_pre=1 d_lat=1 d_budget=240
    d_timeout=60 lat_reps=1000 d_wait=10 d_wait_total=30
else
    d_iters="100:150000 300:20000 1000:4000 3000:150" d_pairs=15 d_pre=3 d_lat=2
    d_budget=1500 d_timeout=180 lat_reps=5000 d_wait=120 d_wait_total=600
fi
iters_by_n=${BENCH_SWEEP_ITERS:-$d_iters}
solve=${BENCH_SWEEP_SOLVE:-50}
pairs=${BENCH_SWEEP_PAIRS:-$d_pairs}
pre=${BENCH_SWEEP_PRE:-$d_pre}
lat_runs=${BENCH_SWEEP_LAT:-$d_lat}
wait_max=${BENCH_SWEEP_WAIT:-$d_wait}
wait_total=${BENCH_SWEEP_WAIT_TOTAL:-$d_wait_total}
waited_total=0
BL_BUDGET=${BENCH_SWEEP_BUDGET:-$d_budget}
BL_GRACE=60
BL_TIMEOUT=${BENCH_SWEEP_TIMEOUT:-$d_timeout}
plots=${BENCH_PLOTS:-1}
readme=${BENCH_README:-README.md}
docdir=${BENCH_DOC:-doc}
mpich=mpiexec.mpich
# MPICH's launcher leaves ranks unbound where Open MPI's binds each to a
# core; two unbound ranks that spin in MPI's waits can share one core for a
# while, which made single runs here several times slower than the rest.
# Every MPICH run is bound, so both MPIs run as Open MPI does by default.
mpich_bind=(-bind-to core)
ompi=mpiexec.openmpi
export OPENBLAS_NUM_THREADS=1
# Open MPI refuses to start as root without both of these; harmless otherwise
ompi_env=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

bl_init bench-sweep
bl_need "$mpich" "deso and the PBLAS anchor run on MPICH (scripts/setup.sh installs it)"
bl_need make "the benchmark programs are built with it"
if [ "$plots" = 1 ]; then
    bl_need gnuplot "it draws $docdir/bench-sweep.png (scripts/setup.sh installs" \
        "gnuplot-nox; BENCH_PLOTS=0 runs without the plot)"
fi

ns="" total=()
for e in $iters_by_n; do
    n=${e%%:*} it=${e#*:}
    case "$n:$it" in
    *[!0-9:]* | :* | *:) bl_die "BENCH_SWEEP_ITERS: '$e' is not n:iterations" ;;
    esac
    ns="$ns${ns:+ }$n"
    total[n]=$it
done
[ -n "$ns" ] || bl_die "BENCH_SWEEP_ITERS names no size"
case $solve in '' | *[!0-9]* | 0) bl_die "BENCH_SWEEP_SOLVE must be a positive integer" ;; esac

# ---- binaries ----------------------------------------------------------
# MPICH programs (re)made when out of date; the Open MPI ones by their own
# scripts, which install what they need.  A program that cannot be built
# leaves failure lines in the results, not an abort.
deso_cg=$build/bin/deso-cg
for t in "$deso_cg" "$build/bench/cg_seq" "$build/bench/cg_pblas" "$build/bench/mpi_latency"; do
    if ! make -s BUILD="$build" "$t" >"$BL_TMP/make.log" 2>&1; then
        if [ -x "$t" ]; then
            bl_say "make $t failed; using the existing binary"
        else
            bl_say "cannot build $t (last lines of make:)"
            tail -n 5 "$BL_TMP/make.log" >&2
        fi
    fi
done
for s in petsc-anchor openmpi-latency; do
    if ! sh "scripts/$s.sh" "$build" >"$BL_TMP/$s.log" 2>&1; then
        bl_say "scripts/$s.sh failed (last lines:)"
        tail -n 5 "$BL_TMP/$s.log" >&2
    fi
done

bl_clock_start # the budget is for running, not for building

# ---- meta record ---------------------------------------------------------
iters_json=""
for n in $ns; do
    iters_json="$iters_json${iters_json:+,}\"$n\":${total[n]}"
done
bl_meta sweep "$(printf '"quick":%s,"ns":%s,"iters":{%s},"solve":%s,"tol":0,"pairs":%s,"pre":%s,"lat_runs":%s,"wait":%s,"wait_total":%s,"budget":%s,"timeout":%s,"build":%s,"mode":"full","mpich_bind":"core","seq_bind":"core"' \
    "$([ "$quick" = 1 ] && echo true || echo false)" "$(bl_json_list "$ns")" "$iters_json" \
    "$solve" "$pairs" "$pre" "$lat_runs" "$wait_max" "$wait_total" "$BL_BUDGET" \
    "$BL_TIMEOUT" "$(bl_json_str "$build")")"
bl_say "start: n = $ns; $pairs pairs per case; load average $(bl_loadavg); budget ${BL_BUDGET}s"

# ---- the command line of one run ---------------------------------------------
# run_cmd ARRAY CODE N P [GRID]: into ARRAY; the iterations are N's, as
# REPEAT solves of K iterations (K = SOLVE, or all of them when fewer)
# shellcheck disable=SC2034 # run_into is the caller's array
run_cmd() {
    local -n run_into=$1
    local code=$2 n=$3 p=$4 grid=${5:-} k r
    k=$solve
    [ "${total[n]}" -lt "$k" ] && k=${total[n]}
    r=$((total[n] / k))
    local common=(--n "$n" --iters "$k" --repeat "$r" --tol 0 --json)
    case $code in
    # the sequential code through the same launcher, so that it is bound
    # to a core as deso's P = 1 run is
    seq) run_into=("$mpich" "${mpich_bind[@]}" -n 1 "$build/bench/cg_seq" "${common[@]}") ;;
    deso) run_into=("$mpich" "${mpich_bind[@]}" -n "$p" "$deso_cg" --mode full "${common[@]}") ;;
    pblas) run_into=("$mpich" "${mpich_bind[@]}" -n "$p" "$build/bench/cg_pblas" --grid "$grid" "${common[@]}") ;;
    petsc) run_into=("${ompi_env[@]}" "$ompi" -n "$p" "$build/bench/cg_petsc" "${common[@]}") ;;
    esac
}
# run_iters N: the iterations a run at N does in all (what its "iters" must say)
run_iters() {
    local n=$1 k=$solve
    [ "${total[n]}" -lt "$k" ] && k=${total[n]}
    echo $((total[n] / k * k))
}
# asked CODE N P [GRID] [EXTRA]: the "asked" members of one run
asked() {
    printf '"impl":"%s","n":%s,"p":%s,"iters":%s%s%s' "$1" "$2" "$3" "$(run_iters "$2")" \
        "$([ -n "${4:-}" ] && printf ',"grid":"%s"' "$4")" "${5:+,$5}"
}

# quiet_first LABEL [always]: when the last run shared the machine (others
# used 0.2 CPU seconds or more meanwhile), or always, wait for idle cores
# before the next run, within the per-pair and whole-sweep allowances, and
# record the wait
quiet_first() {
    local w max=$wait_max left=$((wait_total - waited_total))
    if [ "${2:-}" != always ]; then
        case ${BL_LAST_OTHERS:-} in "" | null) return 0 ;; esac
        awk -v o="$BL_LAST_OTHERS" 'BEGIN { exit !(o >= 0.2) }' || return 0
    fi
    [ "$left" -lt "$max" ] && max=$left
    [ "$max" -gt 0 ] || return 0
    w=$(bl_wait_quiet "$max")
    waited_total=$((waited_total + w))
    bl_load "\"waited\":$w" "waited ${w}s for idle cores before $1"
    [ "$w" -gt 0 ] && bl_say "waited ${w}s for idle cores before $1"
    return 0
}

# ---- MPI latencies ---------------------------------------------------------
lat_round() { # lat_round PHASE: LAT runs per MPI, the order alternating
    local phase=$1 k mpi
    for ((k = 1; k <= lat_runs; k++)); do
        quiet_first "the latencies" "$([ "$phase$k" = start1 ] && echo always)"
        for mpi in $(if [ $((k % 2)) -eq 1 ]; then echo mpich openmpi; else echo openmpi mpich; fi); do
            if [ "$mpi" = mpich ]; then
                bl_run latency "\"impl\":\"mpi_latency\",\"mpi\":\"mpich\",\"p\":2,\"phase\":\"$phase\",\"run\":$k" \
                    "MPICH latencies ($phase, run $k)" "$BL_TIMEOUT" \
                    "$mpich" "${mpich_bind[@]}" -n 2 "$build/bench/mpi_latency" --reps "$lat_reps" --json
            else
                bl_run latency "\"impl\":\"mpi_latency\",\"mpi\":\"openmpi\",\"p\":2,\"phase\":\"$phase\",\"run\":$k" \
                    "Open MPI latencies ($phase, run $k)" "$BL_TIMEOUT" \
                    "${ompi_env[@]}" "$ompi" -n 2 "$build/bench/mpi_latency_openmpi" \
                    --reps "$lat_reps" --json
            fi
        done
    done
}
lat_round start

# ---- the PBLAS grid pre-round ---------------------------------------------------
# pblas_faster N: 1x2 or 2x1, whichever the pre-round's pairs at N found
# faster (median of the per-pair ratios); 2x1, cg_pblas's own default, when
# no pair gave two usable runs
pblas_faster() {
    "$BL_PYTHON" - "$BL_RESULTS" "$1" "$(run_iters "$1")" <<'PY'
import json, statistics, sys
path, n, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = {}
for line in open(path, encoding="utf-8"):
    r = json.loads(line)
    a, o = r.get("asked", {}), r.get("out")
    if r.get("bench") != "grid" or a.get("n") != n or not isinstance(o, dict):
        continue
    if o.get("iters") != iters or o.get("grid") != a.get("grid") or not o.get("time_loop"):
        continue
    per.setdefault(a["pair"], {})[a["grid"]] = o["time_loop"] / o["iters"]
ratios = [p["1x2"] / p["2x1"] for p in per.values() if "1x2" in p and "2x1" in p]
print("1x2" if ratios and statistics.median(ratios) < 1 else "2x1")
PY
}
# shellcheck disable=SC2034 # filled by run_cmd, read by bl_pair
cmd_a=() cmd_b=()
declare -A pgrid
for n in $ns; do
    for ((k = 1; k <= pre; k++)); do
        quiet_first "pre-round $k at n=$n"
        run_cmd cmd_a pblas "$n" 2 1x2
        run_cmd cmd_b pblas "$n" 2 2x1
        bl_pair "$k" grid "$(asked pblas "$n" 2 1x2 "\"pre\":true")" \
            "n=$n P=2 pblas 1x2 (pre-round $k of $pre)" cmd_a \
            "$(asked pblas "$n" 2 2x1 "\"pre\":true")" \
            "n=$n P=2 pblas 2x1 (pre-round $k of $pre)" cmd_b "grid:$n" || break
    done
    pgrid[$n]=$(pblas_faster "$n")
    bl_say "n=$n: cg_pblas at P = 2 runs on ${pgrid[$n]}"
done

# ---- paired runs ---------------------------------------------------------------
label() { printf 'n=%s P=%s %s (pair %s of %s)' "$2" "$3" "$1" "$4" "$pairs"; }
stop=0
for ((k = 1; k <= pairs && !stop; k++)); do
    bl_load "\"pair\":$k" "before pair $k"
    for n in $ns; do
        for case_ in 1:seq 2:pblas 2:petsc; do
            p=${case_%%:*} anchor=${case_#*:} g=""
            [ "$anchor" = pblas ] && g=${pgrid[$n]}
            quiet_first "$(label "$anchor" "$n" "$p" "$k")"
            run_cmd cmd_a "$anchor" "$n" "$p" "$g"
            run_cmd cmd_b deso "$n" "$p"
            if ! bl_pair "$k" pair "$(asked "$anchor" "$n" "$p" "$g" "\"anchor\":\"$anchor\"")" \
                "$(label "$anchor" "$n" "$p" "$k")" cmd_a \
                "$(asked deso "$n" "$p" "" "\"anchor\":\"$anchor\"")" \
                "$(label deso "$n" "$p" "$k")" cmd_b "$n:$p:$anchor"; then
                bl_say "pairs from $k on skipped: budget ${BL_BUDGET}s"
                stop=1
                break 2
            fi
        done
    done
done

# ---- MPI latencies again, then the end -----------------------------------------
lat_round end
bl_end

# ---- report ----------------------------------------------------------------------
bl_publish "$docdir/bench-sweep.jsonl"
bl_say "all runs done in $(bl_elapsed)s ($BL_FAILED failed, $BL_SKIPPED skipped);" \
    "writing $readme, $docdir/"
report=(python3 scripts/bench_report.py --results "$docdir/bench-sweep.jsonl"
    --readme "$readme" --doc "$docdir")
[ "$plots" = 1 ] || report+=(--no-plots)
"${report[@]}"
bl_say "done in $(bl_elapsed)s: $readme (sweep section), $docdir/bench-sweep.jsonl" \
    "$([ "$plots" = 1 ] && echo ", $docdir/bench-sweep.png")"
