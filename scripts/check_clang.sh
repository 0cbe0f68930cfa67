#!/usr/bin/env bash
# Compile every translation unit of kolibri (library, kolibri command, tests, perf tools) with
# clang, the project's warning set and -Werror, front end only (-fsyntax-only: templates are
# instantiated and constant expressions evaluated, no code is generated). This is what the HIP
# build's clang (hipcc) sees, short of a HIP Kokkos: it catches what GCC and nvcc accept and clang
# rejects (constexpr step limits, -Wdangling-gsl, ...). CI runs it after the tests.
#   bash scripts/check_clang.sh [build-dir]        # KOLIBRI_CLANG=clang++-15 by default
set -euo pipefail
cd "$(dirname "$0")/.."
clang=${KOLIBRI_CLANG:-clang++-15}
build=${1:-build-clang}
if ! command -v "$clang" >/dev/null && [ "$clang" = clang++-15 ]; then
  SUDO=""; if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "== installing clang-15 (the clang of ROCm 5.2's hipcc)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-15
fi
command -v "$clang" >/dev/null || { echo "check_clang.sh: $clang not found (Debian: apt-get install clang-15)"; exit 1; }

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$clang" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DKOLIBRI_WARNINGS_AS_ERRORS=ON -DKOLIBRI_BUILD_PERF_TOOLS=ON >/dev/null
/usr/bin/python3 scripts/syntax_check.py "$build/compile_commands.json" --jobs "$(nproc)"
