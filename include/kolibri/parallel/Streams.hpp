// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Execution-space instances of the overlapped steps: the exchange's own high-priority
/// instance, and the ordering of work between two instances on the device alone (no host wait).
#pragma once

#include <kolibri/core/Kokkos.hpp>

#include <memory>
#include <type_traits>

namespace kolibri {

#if defined(KOKKOS_ENABLE_CUDA)
#define KOLIBRI_GPU_API(name) cuda##name  // the runtime call or type of this build's GPU backend
inline constexpr bool kNativeStreams = std::is_same_v<ExecSpace, Kokkos::Cuda>;
#elif defined(KOKKOS_ENABLE_HIP)
#define KOLIBRI_GPU_API(name) hip##name
inline constexpr bool kNativeStreams = std::is_same_v<ExecSpace, Kokkos::HIP>;
#else
inline constexpr bool kNativeStreams = false;
#endif

/// The native stream of an instance (CUDA or HIP), null on host backends.
inline void* native_stream([[maybe_unused]] const ExecSpace& e) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (kNativeStreams) return e.cuda_stream();
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (kNativeStreams) return e.hip_stream();
#endif
  return nullptr;
}

/// A new instance for the halo exchange: on GPUs a stream of the highest priority the device
/// offers, so the pack, NCCL's transfer kernels and the unpack get each multiprocessor that frees
/// up before the next blocks of the interior update they overlap (on the default priority they
/// waited for it: docs/performance.md); a stream of its own elsewhere.
inline ExecSpace priority_instance() {
#if defined(KOLIBRI_GPU_API) && KOKKOS_VERSION >= 40400  // Impl::ManageStream: owns the stream
  if constexpr (kNativeStreams) {
    int least = 0, greatest = 0;
    KOLIBRI_GPU_API(Stream_t) s = nullptr;
    if (KOLIBRI_GPU_API(DeviceGetStreamPriorityRange)(&least, &greatest) ==
            KOLIBRI_GPU_API(Success) &&
        KOLIBRI_GPU_API(StreamCreateWithPriority)(&s, KOLIBRI_GPU_API(StreamDefault), greatest) ==
            KOLIBRI_GPU_API(Success))
      return ExecSpace(s, Kokkos::Impl::ManageStream::yes);
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
  void join(const ExecSpace& from, [[maybe_unused]] const ExecSpace& to) {
#if defined(KOLIBRI_GPU_API)
    if constexpr (kNativeStreams) {
      if (!m_event) m_event = make_event();
      auto ev = static_cast<KOLIBRI_GPU_API(Event_t)>(m_event.get());
      auto* a = static_cast<KOLIBRI_GPU_API(Stream_t)>(native_stream(from));
      auto* b = static_cast<KOLIBRI_GPU_API(Stream_t)>(native_stream(to));
      if (ev && KOLIBRI_GPU_API(EventRecord)(ev, a) == KOLIBRI_GPU_API(Success) &&
          KOLIBRI_GPU_API(StreamWaitEvent)(b, ev, 0) == KOLIBRI_GPU_API(Success))
        return;
    }
#endif
    fence(from, "kolibri::stream_join");
  }

 private:
  static std::shared_ptr<void> make_event() {
#if defined(KOLIBRI_GPU_API)
    KOLIBRI_GPU_API(Event_t) ev = nullptr;
    if (KOLIBRI_GPU_API(EventCreateWithFlags)(&ev, KOLIBRI_GPU_API(EventDisableTiming)) !=
        KOLIBRI_GPU_API(Success))
      return {};
    return {ev, [](void* e) {
              (void)KOLIBRI_GPU_API(EventDestroy)(static_cast<KOLIBRI_GPU_API(Event_t)>(e));
            }};
#else
    return {};
#endif
  }
  std::shared_ptr<void> m_event;  ///< the native event, made on first use
};

}  // namespace kolibri

#undef KOLIBRI_GPU_API
