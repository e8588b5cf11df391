#!/bin/bash
# bench-sparse-counts.sh: the sparse CG's halo, counted (the counted part of
# scripts/bench-sparse.sh, which runs it after its timed part; also alone,
# make bench-sparse-counts).  deso-cg --gen in mode full, tol 0, at P = 4,
# 9 and 16 on lap2d:G and lap2d-perm:G, with each --partition (block:
# contiguous row blocks; ntg: paper 004's trace-graph partition; auto: the
# cheaper of the two by the cost model, and the record says which it
# kept), each at every iteration count of ITERS.  deso's point-to-point
# bytes and messages per iteration are a difference between two of those
# runs over the difference of their iterations (set-up, the first
# iterations' moves of the vectors into place and the final flush cancel):
# what one settled iteration moves, its product's halo and any vector
# moved each iteration.  scripts/benchreport/sparse_counts.py says which
# figures are exact (the same increment between every two runs).  Counts,
# not times: the ranks oversubscribe the cores, which changes no count.
#
# The plans, and auto's choice, depend on the cost model's alpha and beta,
# which deso_init measures; on cores this oversubscribed the probe
# measures the scheduler (16 ranks on 2 cores gave alpha = 10 ms), and a
# count made under such a plan would say nothing about a machine with a
# core per rank.  So every counted run starts from a wisdom file holding a
# fixed calibration (ALPHA seconds a message, BETA a byte: by default the
# cost model's own defaults, opt_params_default) and no plans, made per P
# from the file a one-iteration run writes (its version and grid), with
# its alpha and beta replaced; collectives are priced by the model's
# formula (DESO_MEASURE_COLLECTIVES=0).  Each run checks that it ran under
# that calibration (deso-cg --json prints alpha and beta).
#
#   scripts/bench-sparse-counts.sh [BUILD]      BUILD defaults to build
# Environment: PROBLEMS (default "lap2d:500 lap2d-perm:500", n = 250,000,
#   the same as scripts/bench-sparse.sh's), COUNT_NPS (default "4 9 16"),
#   PARTITIONS (default "block ntg auto"), COUNT_ITERS (default "5 10 15"),
#   ALPHA (default 2e-6), BETA (default 1e-9), BL_BUDGET (seconds, default
#   3600), MPIEXEC; BENCH_QUICK=1: a smoke run (lap2d:60 and lap2d-perm:60
#   at P = 4, 3 and 6 iterations).  COUNT_NPS and COUNT_ITERS are not
#   scripts/bench-sparse.sh's NPS and ITERS, which its timed part reads.
# Results: doc/bench-sparse-counts.jsonl (format: scripts/bench_lib.sh),
# then scripts/bench_report.py writes README's section between
# <!-- bench-sparse-counts:begin --> and <!-- bench-sparse-counts:end -->.
set -euo pipefail
budget=${BL_BUDGET:-3600}     # before bench_lib.sh sets its own default
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bl_enter "${1:-build}"
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    problems=${PROBLEMS:-lap2d:60 lap2d-perm:60}
    nps=${COUNT_NPS:-4}
    iters=${COUNT_ITERS:-3 6}
else
    problems=${PROBLEMS:-lap2d:500 lap2d-perm:500}
    nps=${COUNT_NPS:-4 9 16}
    iters=${COUNT_ITERS:-5 10 15}
fi
partitions=${PARTITIONS:-block ntg auto}
alpha=${ALPHA:-2e-6}
beta=${BETA:-1e-9}
launch=${MPIEXEC:-mpiexec.mpich}
BL_BUDGET=$budget
BL_GRACE=60
BL_TIMEOUT=${BL_TIMEOUT:-900}
export OPENBLAS_NUM_THREADS=1
export DESO_MEASURE_COLLECTIVES=0

bl_init bench-sparse-counts
bl_need "$launch" "the MPI launcher (MPICH's; set MPIEXEC to use another)"
t="$build/bin/deso-cg"
[ -e "$t" ] || make -s BUILD="$build" "$t" >&2 || bl_die "cannot build $t"

square() { # the most square grid R x C with R >= C (deso's default)
    local p=$1 c=1 k
    for ((k = 1; k * k <= p; k++)); do
        [ $((p % k)) -eq 0 ] && c=$k
    done
    echo "$((p / c))x$c"
}

# calibrate FILE: FILE's config line with alpha and beta replaced by the
# fixed ones, its plans dropped, its checksum made again (optimizer/
# wisdom.h: hexadecimal floats as glibc's "%a" prints them, CRC-32 of
# every byte before the end line).
calibrate() {
    "$BL_PYTHON" - "$1" "$alpha" "$beta" <<'PY'
import sys, zlib
path, alpha, beta = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def hexf(v):  # glibc's %a: no trailing zeros in the fraction
    m, e = v.hex().split("p")
    m = m.rstrip("0").rstrip(".")
    return f"{m}p{e}"
lines = open(path).read().split("\n")
cfg = lines[1].split(" ")
if lines[0] != "deso-wisdom 3" or cfg[0] != "config" or len(cfg) != 8:
    sys.exit(f"{path}: not a version 3 wisdom file")
cfg[4], cfg[5], cfg[6] = "1", hexf(alpha), hexf(beta)
body = lines[0] + "\n" + " ".join(cfg) + "\n" + lines[2] + "\n"
crc = zlib.crc32(body.encode()) & 0xffffffff
open(path, "w").write(body + f"end 0 {crc:08x}\n")
PY
}

bl_clock_start
bl_meta sparse-counts "$(printf '"problems":%s,"nps":%s,"partitions":%s,"iters":%s,"alpha":%s,"beta":%s,"quick":%s' \
    "$(bl_json_list "$problems" q)" "$(bl_json_list "$nps")" \
    "$(bl_json_list "$partitions" q)" "$(bl_json_list "$iters")" "$alpha" "$beta" \
    "$([ "$quick" = 1 ] && echo true || echo false)")"
for np in $nps; do
    grid=$(square "$np")
    wisdom=$BL_TMP/wisdom-$np
    bl_run warmup "\"p\":$np,\"grid\":\"$grid\",\"iters\":1" \
        "deso-cg P=$np: the wisdom file's version and grid" "$BL_TIMEOUT" \
        env DESO_WISDOM="$wisdom" "$launch" -n "$np" "$build/bin/deso-cg" \
        --gen lap2d:8 --iters 1 --tol 0 --mode full --grid "$grid" --json
    if [ ! -s "$wisdom" ] || ! calibrate "$wisdom" >&2; then
        bl_say "P=$np: no wisdom file to calibrate; its runs are skipped"
        continue
    fi
    bl_load "\"p\":$np" "load P=$np"
    for prob in $problems; do
        for part in $partitions; do
            for it in $iters; do
                # each run from the same file (a run rewrites it at its end)
                cp "$wisdom" "$wisdom.run"
                bl_run count "\"impl\":\"deso\",\"problem\":\"$prob\",\"p\":$np,\"grid\":\"$grid\",\"partition\":\"$part\",\"iters\":$it,\"alpha\":$alpha,\"beta\":$beta" \
                    "deso-cg $prob $part P=$np iters=$it" "$BL_TIMEOUT" \
                    env DESO_WISDOM="$wisdom.run" "$launch" -n "$np" "$build/bin/deso-cg" \
                    --gen "$prob" --partition "$part" --mode full --grid "$grid" \
                    --iters "$it" --tol 0 --json
            done
        done
    done
done
bl_end
bl_publish doc/bench-sparse-counts.jsonl
python3 scripts/bench_report.py --results doc/bench-sparse-counts.jsonl --no-plots
