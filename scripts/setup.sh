#!/bin/sh
# Installs the Debian packages deso builds and tests with, only when one is
# missing. Used by `make demo` and `make check`; needs root (or sudo) the
# first time on a fresh machine, and nothing at all afterwards.
#   scripts/setup.sh [PACKAGE...]   the given packages instead (a benchmark
#                                   anchor's, scripts/petsc-anchor.sh)
set -eu

PKGS="mpich libmpich-dev libopenblas-dev libscalapack-mpich-dev libcmocka-dev
      pkg-config make gcc clang libclang-rt-14-dev valgrind gnuplot-nox python3
      libmetis-dev"
if [ $# -gt 0 ]; then
    PKGS="$*"
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "deso setup: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "deso setup: missing packages:$missing; run as root or install them" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deso setup: done"
