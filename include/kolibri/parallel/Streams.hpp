// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Execution-space instances of the overlapped steps: the exchange's own high-priority
/// instance, and the ordering of work between two instances on the device alone (no host wait).
#pragma once

#include <kolibri/core/Kokkos.hpp>

#include <memory>
#include <type_traits>

namespace kolibri {

/// The native stream of an instance (CUDA or HIP), null on host backends.
inline void* native_stream([[maybe_unused]] const ExecSpace& e) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) return e.cuda_stream();
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) return e.hip_stream();
#endif
  return nullptr;
}

/// A new instance for the halo exchange: on GPUs a stream of the highest priority the device
/// offers, so the pack, NCCL's transfer kernels and the unpack get each multiprocessor that frees
/// up before the next blocks of the interior update they overlap (on the default priority they
/// waited for it: docs/performance.md); a stream of its own elsewhere.
inline ExecSpace priority_instance() {
#if KOKKOS_VERSION < 40400  // Impl::ManageStream: an instance that owns a stream made here
#elif defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    int least = 0, greatest = 0;
    cudaStream_t s = nullptr;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess &&
        cudaStreamCreateWithPriority(&s, cudaStreamDefault, greatest) == cudaSuccess)
      return Kokkos::Cuda(s, Kokkos::Impl::ManageStream::yes);
  }
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
    int least = 0, greatest = 0;
    hipStream_t s = nullptr;
    if (hipDeviceGetStreamPriorityRange(&least, &greatest) == hipSuccess &&
        hipStreamCreateWithPriority(&s, hipStreamDefault, greatest) == hipSuccess)
      return Kokkos::HIP(s, Kokkos::Impl::ManageStream::yes);
  }
#endif
#if KOKKOS_VERSION >= 40000
  return Kokkos::Experimental::partition_space(ExecSpace(), 1)[0];
#else
  return ExecSpace();
#endif
}

/// \brief Orders the work of two instances on the device: after `join(from, to)`, work launched on
/// `to` starts once the work launched on `from` so far is done, and the host goes on at once
/// (a native event on CUDA and HIP; on host backends, where launches return complete, a fence of
/// `from`). One object serves any number of joins, one after another.
class StreamJoin {
 public:
  void join(const ExecSpace& from, const ExecSpace& to) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (!m_event) m_event = make_event();
      auto* ev = static_cast<cudaEvent_t>(m_event.get());
      if (cudaEventRecord(ev, from.cuda_stream()) == cudaSuccess &&
          cudaStreamWaitEvent(to.cuda_stream(), ev, 0) == cudaSuccess)
        return;
    }
#elif defined(KOKKOS_ENABLE_HIP)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
      if (!m_event) m_event = make_event();
      auto* ev = static_cast<hipEvent_t>(m_event.get());
      if (hipEventRecord(ev, from.hip_stream()) == hipSuccess &&
          hipStreamWaitEvent(to.hip_stream(), ev, 0) == hipSuccess)
        return;
    }
#endif
    (void)to;
    fence(from, "kolibri::stream_join");
  }

 private:
  static std::shared_ptr<void> make_event() {
#if defined(KOKKOS_ENABLE_CUDA)
    cudaEvent_t ev = nullptr;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) return {};
    return {ev, [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }};
#elif defined(KOKKOS_ENABLE_HIP)
    hipEvent_t ev = nullptr;
    if (hipEventCreateWithFlags(&ev, hipEventDisableTiming) != hipSuccess) return {};
    return {ev, [](void* e) { (void)hipEventDestroy(static_cast<hipEvent_t>(e)); }};
#else
    return {};
#endif
  }
  std::shared_ptr<void> m_event;  ///< the native event, made on first use
};

}  // namespace kolibri
