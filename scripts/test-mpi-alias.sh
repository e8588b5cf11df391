#!/bin/sh
# MPI alias test: scripts/test-mpi-alias.sh [BUILD]
# deso must build, install and link against MPICH even where pkg-config's
# `mpi` alias names Open MPI (Debian points it there as soon as
# libopenmpi-dev is installed, and scalapack-mpich.pc requires `mpi`).
#   1. a scratch pkg-config directory whose mpi.pc is Open MPI's ompi.pc
#      when that is installed, or else a fake one whose mpi.h is not MPICH's
#      and whose -lmpi does not exist; the trap is confirmed armed from
#      the .pc files (scalapack-mpich.pc requires `mpi`, and that
#      directory comes first on PKG_CONFIG_PATH), never by asking
#      pkg-config to resolve the alias;
#   2. with that directory first on PKG_CONFIG_PATH: the library and the
#      programs build from scratch, and scripts/test-install.sh passes
#      (a user's pkg-config build links and runs at P = 2), and the
#      installed deso.pc carries none of the other MPI's flags;
#   3. deso.h refuses a foreign mpi.h at compile time with a clear message.
# Prints "mpi-alias: N passed, N failed"; exits non-zero on any failure.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0

. "$root/scripts/step.sh"

# A stand-in for Open MPI: its mpi.h defines Open MPI's version macro and
# no MPICH_VERSION; its library does not exist, so linking it fails.
fake_ompi() {
    mkdir -p "$tmp/fake-ompi/include"
    cat >"$tmp/fake-ompi/include/mpi.h" <<'EOF'
#define OMPI_MAJOR_VERSION 4
typedef struct ompi_communicator_t *MPI_Comm;
EOF
    cat >"$tmp/pc/mpi.pc" <<EOF
Name: Open MPI (stand-in)
Description: fake Open MPI for deso's MPI alias test
Version: 4.1.4
Cflags: -I$tmp/fake-ompi/include
Libs: -L$tmp/fake-ompi/lib -lmpi
EOF
}

mkdir -p "$tmp/pc"
ompi_pc=$(ls /usr/lib/*/pkgconfig/ompi.pc 2>/dev/null | head -n 1)
if [ -n "$ompi_pc" ]; then
    ln -s "$ompi_pc" "$tmp/pc/mpi.pc"
    foreign_inc=$(pkg-config --cflags-only-I "$ompi_pc" | sed 's/^-I\([^ ]*\).*/\1/')
    echo "mpi.pc -> $ompi_pc"
else
    fake_ompi
    foreign_inc=$tmp/fake-ompi/include
    echo "mpi.pc -> a fake Open MPI (libopenmpi-dev is not installed)"
fi
PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH

armed() { # scalapack-mpich requires `mpi`, and `mpi` is now the scratch one
    # (read from the .pc files themselves: pkg-config is never asked to
    # resolve the alias, which would hand out the other MPI's flags)
    sc=$(ls /usr/lib/*/pkgconfig/scalapack-mpich.pc 2>/dev/null | head -n 1)
    [ -n "$sc" ] || { echo "scalapack-mpich.pc not found"; return 1; }
    requires=$(sed -n 's/^Requires[^:]*:[[:space:]]*//p' "$sc" | tr ',\n' '  ')
    echo "$sc requires: $requires"
    case " $requires " in *" mpi "*) ;; *) return 1 ;; esac
    # pkg-config searches PKG_CONFIG_PATH, in order, before its own
    # directories: the scratch directory first, holding mpi.pc, wins
    echo "PKG_CONFIG_PATH starts with: ${PKG_CONFIG_PATH%%:*}"
    [ "${PKG_CONFIG_PATH%%:*}" = "$tmp/pc" ] && [ -e "$tmp/pc/mpi.pc" ]
}

step "the alias names the other MPI (trap armed)" armed
step "build from scratch with the alias on PKG_CONFIG_PATH" \
    make -C "$root" --no-print-directory -j"${JOBS:-1}" BUILD="$tmp/build" lib programs
step "install test with the alias on PKG_CONFIG_PATH" \
    sh "$root/scripts/test-install.sh" "$tmp/build"

# deso.pc must not drag the alias in: no foreign include directory and
# no -lmpi in what a user's build gets from pkg-config.
clean_pc() {
    make -C "$root" --no-print-directory BUILD="$tmp/build" \
        PREFIX="$tmp/prefix" install >/dev/null || return 1
    flags=$(PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig:$PKG_CONFIG_PATH \
            pkg-config --cflags --libs deso) || return 1
    echo "deso: $flags"
    case " $flags " in
        *" -I$foreign_inc "* | *" -lmpi "*) return 1 ;;
    esac
}
step "deso.pc names MPICH only" clean_pc

refused() { # deso.h with the foreign mpi.h first must not compile
    printf '#include "deso.h"\nint main(void) { return 0; }\n' >"$tmp/foreign.c"
    if mpicc.mpich -I"$foreign_inc" -I"$root/deso" -I"$root/placement" \
           -c "$tmp/foreign.c" -o "$tmp/foreign.o" 2>"$tmp/err"; then
        echo "compiled against $foreign_inc"; return 1
    fi
    cat "$tmp/err"
    grep -q "deso needs MPICH's mpi.h" "$tmp/err"
}
step "deso.h refuses a foreign mpi.h" refused

echo "mpi-alias: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
