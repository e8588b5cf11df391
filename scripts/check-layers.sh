#!/bin/sh
# Includes point only down the layers: placement <- blas <- optimizer <- deso.
# placement/, blas/ and optimizer/ never include mpi.h.
set -u
bad=0
check() { # folder, forbidden folders...
    dir=$1; shift
    for f in "$@"; do
        if grep -n -E "#include *\"($f)/" "$dir"/*.[ch] 2>/dev/null; then
            echo "layer violation: $dir/ includes $f/"; bad=1
        fi
    done
}
check placement blas optimizer deso
check blas optimizer deso
check optimizer deso
for dir in placement blas optimizer; do
    if grep -n -E '#include *[<"]mpi\.h[>"]' "$dir"/*.[ch] 2>/dev/null; then
        echo "layer violation: $dir/ talks MPI"; bad=1
    fi
done
[ "$bad" -eq 0 ] && echo "layers: ok"
exit "$bad"
