#!/bin/sh
# bench-remap.sh [BUILD]: deso's remap beside ScaLAPACK's pdgemr2d at P = 2
# (a benchmark, not a test).  Cases: a vector of 2^24 doubles and a
# 4000 x 4000 matrix (2 x 1 grid), each for cyclic(3) -> cyclic(5),
# cyclic(64) -> cyclic(1), block -> cyclic(1) and identical layouts
# (cyclic(64) both sides; deso also in place, where nothing moves).  The
# real remaps run twice: source arrays from malloc (messages through the
# shared-memory rings) and from deso_redist_array_alloc (receivers read
# the sources in place: one copy); pdgemr2d runs on the same arrays.
#
# Bandwidth, one definition for both sides of the comparison:
#   GB/s = array bytes (m * n * 8, the global array, counted once) / time,
# where a remap's time is deso-remap's: the mean over REPS executions of the
# slowest rank's time (after a verified warm-up).  The memcpy yardstick is
# measured in the same process, paired (deso-remap --memcpy): REPS times,
# every rank copies its source array at once with memcpy (the slowest
# rank's time), then one remap; "% memcpy" is the median of the REPS
# ratios memcpy time / remap time, so the machine's drift (it is shared)
# cancels; 100% would mean the remap costs one copy of the array by all
# ranks at once.  memcpy GB/s is array bytes / the median memcpy time.
# Environment: MPIEXEC (default mpiexec.mpich), REPS (default 15).
# Targets (shared brief): deso <= 0.5 x pdgemr2d for real remaps, <= 0.05 x
# for identical layouts, >= 50% of memcpy bandwidth for large remaps.
set -eu
B=${1:-build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
REPS=${REPS:-15}
export OPENBLAS_NUM_THREADS=1
make --no-print-directory BUILD="$B" "$B/bin/deso-remap" >/dev/null
N=16777216                       # 2^24 doubles = 128 MiB
M=4000

echo "P = 2, $REPS reps each; GB/s = array bytes / time (see the header);"
echo "% memcpy: median over $REPS pairs of (2 ranks memcpy their source"
echo "arrays at once) / (one remap), measured in the same process"
echo
echo "| case | layout change | transport | source arrays | deso s | pdgemr2d s | deso/pdgemr2d | deso GB/s | memcpy GB/s | % memcpy | verified |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"

row() { # label change args...
    label=$1; change=$2; shift 2
    line=$("$MPIEXEC" -n 2 "$B/bin/deso-remap" "$@" --run --json \
        --compare-scalapack --memcpy --reps "$REPS")
    echo "$line" | jq -r '[.time_deso, .time_scalapack, .ratio, .gbs,
        (.verified and .scalapack_equal), .in_place, .transport,
        .memcpy_gbs, .pct_memcpy, .shared_arrays] | @tsv' |
    awk -F '\t' -v l="$label" -v c="$change" '{
        gbs = ($6 == "true") ? "-" : sprintf("%.2f", $4)
        pct = ($6 == "true") ? "-" : sprintf("%.0f%%", $9)
        arr = ($10 == "true") ? "shared" : "malloc"
        printf "| %s | %s | %s | %s | %.3g | %.3g | %.3g | %s | %.2f | %s | %s |\n",
               l, c, $7, arr, $1, $2, $3, gbs, $8, pct, $5 }'
}

V="--P 2 --Q 2 --n $N"
for S in "" --shared-arrays; do
    row "vector 2^24" "cyclic(3) -> cyclic(5)" $V --r 3 --s 5 $S
    row "vector 2^24" "cyclic(64) -> cyclic(1)" $V --r 64 --s 1 $S
    row "vector 2^24" "block -> cyclic(1)" $V --r $((N / 2)) --s 1 $S
done
row "vector 2^24" "identical cyclic(64)" $V --r 64 --s 64
row "vector 2^24" "identical, deso in place" $V --r 64 --s 64 --in-place

G="--m $M --n $M --grid 2x1 --grid2 2x1 --nb $M --nb2 $M"
for S in "" --shared-arrays; do
    row "matrix 4000^2" "cyclic(3) -> cyclic(5)" $G --r 3 --s 5 $S
    row "matrix 4000^2" "cyclic(64) -> cyclic(1)" $G --r 64 --s 1 $S
    row "matrix 4000^2" "block -> cyclic(1)" $G --r $((M / 2)) --s 1 $S
done
row "matrix 4000^2" "identical cyclic(64)" $G --r 64 --s 64
row "matrix 4000^2" "identical, deso in place" $G --r 64 --s 64 --in-place
