// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The one place that hides Kokkos version differences (3.4 vs 4.x/5.x).
#pragma once

// FIXME_CUDA: the deck and checkpoint readers are compiled host-only (nvcc_wrapper --host-only,
// src/CMakeLists.txt: cudafe breaks toml++), where Kokkos' CUDA headers do not compile. Every
// build marks those units, so a header that pulls Kokkos into them fails on the host too.
#ifdef KOLIBRI_HOST_ONLY_UNIT
#error \
    "a host-only unit (io/Deck.cpp, io/Checkpoint.cpp) must not include Kokkos: keep its headers Kokkos-free"
#endif

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

/// Full unrolling of the short loops over lattice directions: device passes of nvcc and hipcc,
/// clang, and GCC on the host. nvcc's host pass gets nothing (it would hand the pragma to g++).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || \
    (defined(__clang__) && !defined(__CUDACC__))
#define KOLIBRI_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__CUDACC__)
#define KOLIBRI_UNROLL _Pragma("GCC unroll 32")
#else
#define KOLIBRI_UNROLL
#endif
/// The loops over a boundary cell's links (Boundary::pull and push), whose bodies branch on each
/// link's rule (faces, interpolated walls, outflow): fully unrolled in the device passes, where
/// the cell's populations must stay in registers; left to the compiler on the host, where
/// unrolling them doubled GCC's code and nearly tripled its compile time (docs/building.md).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KOLIBRI_UNROLL_LINKS KOLIBRI_UNROLL
#else
#define KOLIBRI_UNROLL_LINKS
#endif

/// A function kept out of line in the AMD device pass only: LLVM 15's AMDGPU back end (SI Fold
/// Operands) ran for hours on kernels where such a function's arithmetic was inlined among
/// branches (docs/portability.md); elsewhere it inlines as usual.
#if defined(__HIP_DEVICE_COMPILE__)
#define KOLIBRI_OUT_OF_LINE_ON_AMD __attribute__((noinline))
#else
#define KOLIBRI_OUT_OF_LINE_ON_AMD
#endif

namespace kolibri {

/// \brief Math functions that moved from Kokkos::Experimental (3.x) to Kokkos (4.x).
namespace math {
#if KOKKOS_VERSION >= 40000
using Kokkos::fabs;
using Kokkos::floor;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::floor;
using Kokkos::Experimental::sqrt;
#endif

/// \brief True for finite values; NaN and +-inf give false.
#if KOKKOS_VERSION >= 40000
using Kokkos::isfinite;
#else
using Kokkos::Experimental::isfinite;
#endif
template <class T>
KOKKOS_INLINE_FUNCTION bool is_finite(T x) {
  return isfinite(x);
}
}  // namespace math

/// The number of set bits of x (device and host).
KOKKOS_INLINE_FUNCTION int bit_count(const std::uint32_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

/// Default execution and memory space of this build (CUDA, HIP, OpenMP or Serial).
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
/// True on host backends (Serial, OpenMP, Threads): device memory is host memory.
inline constexpr bool kHostMemory = std::is_same_v<MemSpace, Kokkos::HostSpace>;

/// A host vector copied into a new device View named `label` (index and cell lists).
template <class T>
Kokkos::View<T*, MemSpace> to_device(const std::vector<T>& v, const char* label) {
  Kokkos::View<T*, MemSpace> d(std::string(label), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

/// A device View copied into a new host vector (to_device's inverse).
template <class T>
std::vector<std::remove_const_t<T>> to_host(const Kokkos::View<T*, MemSpace>& d) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d);
  return std::vector<std::remove_const_t<T>>(h.data(), h.data() + h.extent(0));
}

/// Wait for the work of one execution-space instance (a label where Kokkos takes one).
inline void fence(const ExecSpace& e, [[maybe_unused]] const char* label) {
#if KOKKOS_VERSION >= 40000
  e.fence(label);
#else
  e.fence();
#endif
}

/// \brief `policy` launched with its functor as a kernel argument (in device memory above 4 KB)
/// rather than through Kokkos' constant-memory buffer, the CUDA and HIP backends' default for
/// functors of 512 B to 32 KB. That buffer is one per device, and a launch through it makes the
/// host wait until the last kernel that used it has finished, on any stream: the host falls one
/// kernel behind the device, and the two streams of an overlapped exchange run one after the
/// other. Used where it measured faster (the moment kernel: D3Q27 FP64 +15% on one H200, weak
/// efficiency 0.90 -> 0.96 on 4); the population kernels lost up to 7% with it
/// (docs/performance.md). Host backends ignore it.
template <class Policy>
auto async_launch(const Policy& policy) {
  return Kokkos::Experimental::require(policy,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

/// Cell index type: 64-bit, since Q * cells exceeds 2^31 on large GPUs.
using Index = std::int64_t;

/// Cell flags, one byte per cell.
using Flag = std::uint8_t;

}  // namespace kolibri
