#!/usr/bin/env bash
# Configure and build kolibri (library, kolibri command, tests) for AMD GPUs against a HIP-enabled
# Kokkos given by Kokkos_ROOT, with every warning an error. Compile only where no AMD GPU exists.
#   Kokkos_ROOT=/path/to/kokkos-hip bash scripts/build_hip.sh [build-dir]
# The Kokkos must be built with hipcc and the same KOLIBRI_HIP_CXXFLAGS (see docs/portability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${Kokkos_ROOT:?set Kokkos_ROOT to a Kokkos installed with -DKokkos_ENABLE_HIP=ON}"
build=${1:-build-hip}
command -v hipcc >/dev/null || { echo "build_hip.sh: hipcc not found (Debian: apt-get install hipcc libamdhip64-dev rocm-device-libs libhsa-runtime-dev)"; exit 1; }

# ROCm <= 5.x ships clang 15, which crashes compiling HIP as C++20 against GCC 12's C++ headers
# (kokkos/kokkos#5737, llvm/llvm-project#62017). Use GCC 11's headers then, with clang's CUDA/HIP
# wrappers first so device placement-new still resolves.
flags=${KOLIBRI_HIP_CXXFLAGS:-}
clang_major=$(hipcc --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
if [ -z "$flags" ] && [ -n "$clang_major" ] && [ "$clang_major" -le 15 ] && [ -d /usr/include/c++/11 ]; then
  rd=$(clang++-"$clang_major" -print-resource-dir 2>/dev/null || true)
  flags="-isystem $rd/include/cuda_wrappers -nostdinc++ -isystem /usr/include/c++/11 -isystem /usr/include/x86_64-linux-gnu/c++/11 -isystem /usr/include/c++/11/backward -Wno-unused-command-line-argument"
  echo "build_hip.sh: clang $clang_major: building against GCC 11's C++ headers ($flags)"
fi
export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-gfx90a}  # hipcc asks the (absent) GPU otherwise

# Every compile under a time limit (KOLIBRI_HIP_UNIT_TIMEOUT seconds, default 1800): LLVM 15's AMDGPU
# back end has run for hours on single kernels (docs/portability.md); such a unit then fails with
# exit status 124 and its name, instead of the build never ending.
unit_timeout=${KOLIBRI_HIP_UNIT_TIMEOUT:-1800}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=hipcc \
  -DKokkos_ROOT="$Kokkos_ROOT" -DCMAKE_CXX_FLAGS="$flags" -DKOLIBRI_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER="timeout;$unit_timeout"
# -k 0: report every failing file, not just the first
cmake --build "$build" -- -k 0
echo "build_hip.sh: built $build/bin/kolibri and the tests (warnings are errors)"
