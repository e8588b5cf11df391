#!/bin/sh
# mutate.sh: the mutation check.  Applies deliberate bugs, one at a time, to
# a scratch copy of the tree, and requires make check's fast tests (unit
# tests, then the MPI tests at their deso-np counts, then the counter
# check) to fail for each.  A bug no test notices "survives": the script
# then exits 1 and names it.
#   scripts/mutate.sh [NAME...]     all mutations, or only those named
# One bug per layer: each line below is NAME | FILE | TEXT | REPLACEMENT,
# and TEXT must occur exactly once in FILE (so a mutation cannot silently
# stop applying when the code changes).  Takes a few minutes per mutation
# at most (the first failing test ends it); part of make check-long.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
MUTATIONS='
local-index|placement/fold.c|*local = (blk / p) * b + i % b;|*local = (blk / p) * b + (i + 1) % b;
reduction-term|blas/kernels.c|red[0] = ops[0].rows > 0 ? cblas_ddot(ilen(ops[0].rows),|red[0] = ops[0].rows > 0 ? cblas_ddot(ilen(ops[0].rows) - 1,
remap-run|deso/remap/copyprog_run.c|    default: memcpy(d, s, (size_t)len * sizeof *d);|    default: memcpy(d, s, (size_t)(len - 1) * sizeof *d);
skipped-broadcast|deso/runtime/comm.c|    int rc = MPI_Bcast(buf, n, MPI_DOUBLE, root, comm);|    int rc = MPI_SUCCESS; (void)buf; (void)root;
wisdom-crc|optimizer/wisdom.c|    return crc ^ 0xFFFFFFFFu;|    return crc ^ 0xFFFFFFFEu;
mtx-index|deso/io/mtx_stream.c|    x->i = i - 1;|    x->i = j - 1;
'
scratch=$(mktemp -d "${TMPDIR:-/tmp}/deso-mutate.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
src=$scratch/src
mkdir -p "$src"
(cd "$root" && tar --exclude=./build --exclude=./.git -cf - .) | tar -xf - -C "$src"
build=$scratch/build
cd "$src"
make -s BUILD="$build" -j2 tests >"$scratch/make.log" 2>&1 || {
    echo "mutate: the unmutated tree does not build:"
    tail -n 20 "$scratch/make.log"
    exit 1
}

# replace FILE TEXT NEW: exactly one occurrence, else an error
replace() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
n = s.count(old)
if n != 1:
    sys.exit(f"mutate: {path}: the text to mutate occurs {n} times: {old}")
open(path, "w").write(s.replace(old, new))
PY
}

caught=0
survived=0
names=""
echo "$MUTATIONS" | while IFS='|' read -r name file old new; do
    [ -n "$name" ] || continue
    echo "$name|$file|$old|$new"
done >"$scratch/list"
# The list is read on descriptor 3: mpiexec forwards standard input to
# rank 0 and would swallow the rest of it.
while IFS='|' read -r name file old new <&3; do
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    cp "$file" "$scratch/orig"
    replace "$file" "$old" "$new"
    echo "== mutation $name ($file)"
    verdict=""
    if ! make -s BUILD="$build" -j2 tests >"$scratch/make.log" 2>&1; then
        verdict="caught by the build"
    else
        units=$(ls "$build"/tests/placement/test_* "$build"/tests/blas/test_* \
                   "$build"/tests/optimizer/test_* "$build"/tests/remap/test_* \
                   "$build"/tests/io/test_* 2>/dev/null | grep -v '\.d$' || true)
        mpis=$(ls "$build"/tests/deso/test_* | grep -v '\.d$')
        export STOP_AT_FIRST=1 DESO_TEST_TIMEOUT=${DESO_TEST_TIMEOUT:-120}
        if ! sh scripts/run-tests.sh unit "$units" >"$scratch/run.log" 2>&1 </dev/null ||
           ! sh scripts/run-tests.sh mpi "$mpis" >>"$scratch/run.log" 2>&1 </dev/null ||
           ! PRELOAD="$build/tests/pmpi/libpmpi_count.so" \
             sh scripts/run-tests.sh counts "$build/tests/pmpi/test_counts" \
             >>"$scratch/run.log" 2>&1 </dev/null; then
            verdict="caught by $(sed -n 's/.*stopped at the first failure: //p' "$scratch/run.log" | tail -n 1)"
        fi
    fi
    cp "$scratch/orig" "$file"
    if [ -n "$verdict" ]; then
        caught=$((caught + 1))
        echo "ok: $name $verdict"
    else
        survived=$((survived + 1))
        names="$names $name"
        echo "SURVIVED: $name (no fast test fails)"
    fi
done 3<"$scratch/list"

[ -n "$names" ] && echo "survived:$names"
echo "mutations: $caught caught, $survived survived"
[ "$survived" -eq 0 ]
