#!/bin/sh
# Install test: scripts/test-install.sh [BUILD]
#   1. make install PREFIX=<temporary directory> (BUILD=$1, default build);
#   2. the installed files are there (headers, libraries, deso.pc, programs);
#   3. a user's copy of examples/cg.c (with its headers), outside the
#      source tree, builds with pkg-config alone:
#        PKG_CONFIG_PATH=$tmp/lib/pkgconfig \
#            mpicc.mpich cg.c $(pkg-config --cflags --libs deso)
#      and runs at P = 2 with a small n: exit 0 and a true residual below
#      1e-12 (30 iterations take this well-conditioned CG solve down to
#      rounding, about 1e-16);
#   4. README.md's "first program" builds the same way and prints
#      "x.Ax = 2 (success)" at P = 1, 2 and 3 (README: any number of ranks);
#   5. the installed deso-solve-pdgesv runs at P = 2: exit 0 (it exits 1
#      when its own check of the solution fails) and a residual and
#      solution error below 1e-10;
#   6. libdeso.so exports the API only (deso_*, no deso__) under a SONAME,
#      and libdeso.a defines no other global name;
#   7. the first program links statically (pkg-config --static) and runs;
#   8. the installed deso_cblas.h compiles with <cblas.h> included before
#      it and after it (pkg-config's flags only).
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
             include/deso/deso_cblas.h \
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

# below VALUE LIMIT: VALUE is a number (C's %e) and at most LIMIT; a
# missing or malformed VALUE, nan or inf fails.
below() {
    awk -v v="$1" -v lim="$2" 'BEGIN {
        ok = v ~ /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ && v + 0 <= lim + 0
        exit !ok }'
}

# field NAME TEXT: the value of NAME=VALUE in TEXT (the first)
field() {
    echo "$2" | awk -v k="$1=" '{
        for (i = 1; i <= NF; i++)
            if (index($i, k) == 1) { print substr($i, length(k) + 1); exit }
    }'
}

run_cg() {
    out=$(LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
          OPENBLAS_NUM_THREADS=1 timeout 120 \
          mpiexec.mpich -n 2 "$tmp/src/cg" --n 60 --iters 30) || return 1
    echo "$out"
    res=$(field residual "$(echo "$out" | grep '^deso-cg: n=60 ')")
    below "$res" 1e-12 || { echo "residual '$res' is not below 1e-12"; return 1; }
}

# first NP: README's first program at P = NP prints exactly its line
run_first() {
    out=$(LD_LIBRARY_PATH=$prefix/lib timeout 60 \
          mpiexec.mpich -n "$1" "$tmp/src/first") || return 1
    echo "$out"
    [ "$out" = "x.Ax = 2 (success)" ]
}

run_firsts() {
    for np in 1 2 3; do
        echo "P = $np:"
        run_first "$np" || return 1
    done
}

run_solve() {
    out=$(LD_LIBRARY_PATH=$prefix/lib OPENBLAS_NUM_THREADS=1 timeout 60 \
          mpiexec.mpich -n 2 "$prefix/bin/deso-solve-pdgesv" 37 4)
    rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || { echo "exit code $rc"; return 1; }
    line=$(echo "$out" | grep '^deso-solve-pdgesv: n=37 nb=4 P=2 ')
    res=$(field residual "$line")
    err=$(field 'max|x-1|' "$line")
    below "$res" 1e-10 || { echo "residual '$res' is not below 1e-10"; return 1; }
    below "$err" 1e-10 || { echo "max|x-1| '$err' is not below 1e-10"; return 1; }
}

step "make install PREFIX=$prefix" \
    make -C "$root" --no-print-directory BUILD="$build" PREFIX="$prefix" install
step "installed files" has_files

mkdir -p "$tmp/src"
cp "$root/examples/cg.c" "$root/examples/cg_problem.h" \
    "$root/examples/cg_sparse.h" "$root/examples/sparse_problem.h" "$tmp/src/"
step "user build of cg.c (pkg-config only)" user_build "$tmp/src/cg.c" cg
step "cg at P = 2 converges (residual below 1e-12)" run_cg

# README.md's first program, verbatim between its markers
sed -n '/<!-- first:begin -->/,/<!-- first:end -->/p' "$root/README.md" |
    sed -e '1,/^```c/d' -e '/^```/,$d' >"$tmp/src/first.c"
step "user build of README's first program" user_build "$tmp/src/first.c" first
step "first program at P = 1, 2, 3 prints x.Ax = 2 (success)" run_firsts
step "installed deso-solve-pdgesv at P = 2 solves (exit 0, residual below 1e-10)" \
    run_solve

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
step "statically linked first program at P = 2" run_first 2

# deso_cblas.h beside the system's <cblas.h>, in either order.
cblas_order() {
    for order in before after; do
        if [ $order = before ]; then
            printf '#include <cblas.h>\n#include <deso_cblas.h>\n'
        else
            printf '#include <deso_cblas.h>\n#include <cblas.h>\n'
        fi >"$tmp/src/cblas_$order.c"
        cat >>"$tmp/src/cblas_$order.c" <<'EOC'
int call(deso_mat *a, deso_vec *x, deso_vec *y);
int call(deso_mat *a, deso_vec *x, deso_vec *y)
{
    enum CBLAS_TRANSPOSE t = CblasTrans;
    return deso_cblas_dgemv(CblasColMajor, t, 2, 2, 1.0, a, 2, x, 1, 0.0,
                            y, 1);
}
EOC
        (cd "$tmp/src" &&
         PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} &&
         export PKG_CONFIG_PATH &&
         mpicc.mpich -std=c11 -Wall -Wextra -Werror -c "cblas_$order.c" \
             $(pkg-config --cflags deso)) || return 1
    done
}
step "deso_cblas.h compiles with <cblas.h> before and after it" cblas_order

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
