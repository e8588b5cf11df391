#!/bin/sh
# The library's layers, lowest first; a file includes only from its own
# layer and the ones below it:
#   placement < blas < optimizer            pure computation, no MPI
#   < deso/core                             MPI helpers: agreement, node
#                                           facts, statistics counting
#   < deso/remap                            the remap engine
#   < deso/runtime                          context, handles, DAG, force,
#                                           executor, exchanges
#   < deso/io                               Matrix Market, wisdom files,
#                                           ScaLAPACK, the log's table
#   < deso (its own files)                  public headers, deso_init and
#                                           deso_finalize
# Rules checked for every .c and .h of the library:
#   1. quoted includes name their folder ("deso/runtime/runtime.h"), so
#      that no include search path can let a file reach past its layer;
#      only the public headers include each other by bare name (they are
#      installed side by side);
#   2. no include points up the layers (the public headers deso/deso.h,
#      deso/deso_redist.h, deso/deso_stats.h, deso/deso_cblas.h and
#      placement/deso_errors.h are the API and may be used from deso/core
#      up);
#   3. placement/, blas/ and optimizer/ never include mpi.h;
#   4. the copy programs (deso/remap/copyprog.*) and the Matrix Market
#      parsers (deso/io/mtx.*, deso/io/mtx_coo.*, deso/io/mtx_stream.*) stay
#      MPI-free, through whatever they include.
# Prints the violations, then "layers: N passed, N failed" (one per file).
set -u
cd "$(dirname "$0")/.."
order="placement blas optimizer deso/core deso/remap deso/runtime deso/io deso"
public="deso/deso.h deso/deso_redist.h deso/deso_stats.h deso/deso_cblas.h placement/deso_errors.h"
passed=0
failed=0

rank_of() { # folder -> its position in $order (0 when not a layer)
    i=0
    for l in $order; do
        i=$((i + 1))
        [ "$l" = "$1" ] && { echo "$i"; return; }
    done
    echo 0
}

is_public() {
    for p in $public; do [ "$p" = "$1" ] && return 0; done
    return 1
}

# the quoted includes of a file, one per line
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

# whether a file reaches mpi.h, directly or through its quoted includes
reaches_mpi() { # file, files seen so far
    f=$1
    case " $2 " in *" $f "*) return 1 ;; esac
    grep -q -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]mpi\.h[>"]' "$f" && return 0
    seen="$2 $f"
    for inc in $(includes "$f"); do
        for cand in "$inc" "$(dirname "$f")/$inc" "placement/$inc"; do
            if [ -f "$cand" ]; then
                reaches_mpi "$cand" "$seen" && { echo "  via $cand"; return 0; }
                break
            fi
        done
    done
    return 1
}

check_file() { # file: prints violations, returns non-zero on any
    f=$1
    dir=$(dirname "$f")
    mine=$(rank_of "$dir")
    bad=0
    for inc in $(includes "$f"); do
        case "$inc" in
        */*)
            idir=$(dirname "$inc")
            theirs=$(rank_of "$idir")
            if [ "$theirs" -eq 0 ]; then
                echo "$f: includes \"$inc\", which is in no layer"; bad=1
            elif [ "$theirs" -gt "$mine" ]; then
                if ! is_public "$inc" || [ "$mine" -lt "$(rank_of deso/core)" ]; then
                    echo "$f: includes \"$inc\", a layer above $dir/"; bad=1
                fi
            fi ;;
        *)
            if ! is_public "$f"; then
                echo "$f: includes \"$inc\" without its folder"; bad=1
            fi ;;
        esac
    done
    case "$dir" in
    placement | blas | optimizer)
        if grep -q -E '#[[:space:]]*include[[:space:]]*[<"]mpi\.h[>"]' "$f"; then
            echo "$f: talks MPI below deso/"; bad=1
        fi ;;
    esac
    case "$f" in
    deso/remap/copyprog.* | deso/io/mtx.[ch] | deso/io/mtx_coo.[ch] | deso/io/mtx_stream.[ch])
        if reaches_mpi "$f" ""; then
            echo "$f: must stay MPI-free"; bad=1
        fi ;;
    esac
    return "$bad"
}

for dir in $order; do
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        if check_file "$f"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done
done
echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
