#!/bin/sh
# Install test: scripts/test-install.sh [BUILD]
#   1. make install PREFIX=<temporary directory> (BUILD=$1, default build);
#   2. the installed files are there (headers, libraries, deso.pc, programs);
#   3. a user's copy of examples/cg.c (with its cg_problem.h), outside the
#      source tree, builds with pkg-config alone:
#        PKG_CONFIG_PATH=$tmp/lib/pkgconfig \
#            mpicc.mpich cg.c $(pkg-config --cflags --libs deso)
#      and runs at P = 2 with a small n, printing a residual;
#   4. README.md's "first program" builds the same way and prints x.Ax = 2;
#   5. the installed deso-solve-pdgesv runs at P = 2;
#   6. libdeso.so exports the API only (deso_*, no deso__) under a SONAME,
#      and libdeso.a defines no other global name;
#   7. the first program links statically (pkg-config --static) and runs.
# Prints "install: N passed, N failed"; exits non-zero on any failure.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
passed=0
failed=0

. "$root/scripts/step.sh"

has_files() {
    for f in include/deso/deso.h include/deso/deso_redist.h \
             include/deso/deso_stats.h include/deso/deso_errors.h \
             lib/libdeso.a lib/libdeso.so lib/pkgconfig/deso.pc \
             bin/deso-cg bin/deso-solve-pdgesv; do
        [ -e "$prefix/$f" ] || { echo "missing: $prefix/$f"; return 1; }
    done
}

# compiles $1 in its own directory with pkg-config only, output $2
user_build() {
    (cd "$(dirname "$1")" &&
     PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} &&
     export PKG_CONFIG_PATH &&
     flags=$(pkg-config --cflags --libs deso) &&
     echo "mpicc.mpich $(basename "$1") $flags -o $2" &&
     mpicc.mpich "$(basename "$1")" $flags -o "$2")
}

run_cg() {
    out=$(LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
          OPENBLAS_NUM_THREADS=1 timeout 120 \
          mpiexec.mpich -n 2 "$tmp/src/cg" --n 60 --iters 30) || return 1
    echo "$out"
    echo "$out" | grep -q 'residual=[0-9]'
}

run_first() {
    out=$(LD_LIBRARY_PATH=$prefix/lib timeout 60 \
          mpiexec.mpich -n 2 "$tmp/src/first") || return 1
    echo "$out"
    echo "$out" | grep -q '^x.Ax = 2 '
}

run_solve() {
    out=$(LD_LIBRARY_PATH=$prefix/lib OPENBLAS_NUM_THREADS=1 timeout 60 \
          mpiexec.mpich -n 2 "$prefix/bin/deso-solve-pdgesv" 37 4) || return 1
    echo "$out"
    echo "$out" | grep -q 'residual=[0-9]'
}

step "make install PREFIX=$prefix" \
    make -C "$root" --no-print-directory BUILD="$build" PREFIX="$prefix" install
step "installed files" has_files

mkdir -p "$tmp/src"
cp "$root/examples/cg.c" "$root/examples/cg_problem.h" "$tmp/src/"
step "user build of cg.c (pkg-config only)" user_build "$tmp/src/cg.c" cg
step "cg at P = 2 prints a residual" run_cg

# README.md's first program, verbatim between its markers
sed -n '/<!-- first:begin -->/,/<!-- first:end -->/p' "$root/README.md" |
    sed -e '1,/^```c/d' -e '/^```/,$d' >"$tmp/src/first.c"
step "user build of README's first program" user_build "$tmp/src/first.c" first
step "first program at P = 2 prints x.Ax = 2" run_first
step "installed deso-solve-pdgesv at P = 2" run_solve

# Only the API is visible: the shared library exports deso_* names and no
# deso__ (internal) one, and the static library defines no other global.
exports_api_only() {
    names=$(nm -D --defined-only "$prefix/lib/libdeso.so" | awk '{print $3}')
    [ -n "$names" ] || return 1
    other=$(echo "$names" | grep -v '^deso_[a-z]') && {
        echo "libdeso.so exports: $other"; return 1; }
    n=$(nm -g --defined-only "$prefix/lib/libdeso.a" | awk 'NF == 3 {print $3}' |
        grep -c -v '^deso_[a-z]')
    [ "$n" -eq 0 ] || { echo "libdeso.a defines $n other globals"; return 1; }
    readelf -d "$prefix/lib/libdeso.so" | grep -q 'SONAME.*libdeso\.so\.[0-9]'
}
step "libraries expose the API only, with a SONAME" exports_api_only

# A static link of the first program with pkg-config --static.
static_build() {
    (cd "$tmp/src" &&
     PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} &&
     export PKG_CONFIG_PATH &&
     flags=$(pkg-config --static --cflags --libs deso |
             sed "s|-ldeso|$prefix/lib/libdeso.a|") &&
     echo "mpicc.mpich first.c $flags -o first" &&
     mpicc.mpich first.c $flags -o first)
}
step "static build of README's first program" static_build
step "statically linked first program at P = 2" run_first

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
