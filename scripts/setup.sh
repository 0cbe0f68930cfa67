#!/usr/bin/env bash
# kolibri set-up on a fresh Debian bookworm machine: install the packages, configure and build
# (host build: Debian's Kokkos 3.4, Serial backend), then run the default case, a 2D lid-driven
# cavity at Re = 100, and draw its picture.
#   bash scripts/setup.sh            # everything
#   KOLIBRI_SKIP_DEMO=1 bash scripts/setup.sh   # packages and build only
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
packages=(build-essential cmake ninja-build pkg-config
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libcli11-dev libtomlplusplus-dev
  libhdf5-openmpi-dev libopenmpi-dev openmpi-bin hdf5-tools
  libgtest-dev
  python3 python3-numpy python3-matplotlib python3-h5py)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

echo "== configure and build (preset 'host')"
cmake --preset host
cmake --build --preset host

if [ "${KOLIBRI_SKIP_DEMO:-0}" = 1 ]; then exit 0; fi
# Debian's python3 has numpy, h5py and matplotlib; a python3 earlier on PATH may not.
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
echo "== run the default case: inputs/cavity2d.toml"
./build/bin/kolibri run inputs/cavity2d.toml --output-dir output/cavity2d
"$PY" scripts/plot_cavity.py output/cavity2d --out output/cavity2d/cavity2d.png
echo "== done: fields in output/cavity2d/ (open cavity2d.xdmf in ParaView), picture output/cavity2d/cavity2d.png"
