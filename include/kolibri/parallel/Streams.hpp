// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Execution-space instances of the overlapped steps: the exchange's own high-priority
/// instance, the ordering of work between two instances on the device alone (no host wait), and
/// the clock that times the points of a step on the device (StepClock).
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/parallel/Timeline.hpp>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

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

/// A native event (CUDA or HIP; `timed`: it records a time), owned; null where none can be made
/// or on host backends.
inline std::shared_ptr<void> make_native_event([[maybe_unused]] bool timed) {
#if defined(KOLIBRI_GPU_API)
  KOLIBRI_GPU_API(Event_t) ev = nullptr;
  if (KOLIBRI_GPU_API(EventCreateWithFlags)(
          &ev, timed ? KOLIBRI_GPU_API(EventDefault) : KOLIBRI_GPU_API(EventDisableTiming)) !=
      KOLIBRI_GPU_API(Success))
    return {};
  return {ev, [](void* e) {
            (void)KOLIBRI_GPU_API(EventDestroy)(static_cast<KOLIBRI_GPU_API(Event_t)>(e));
          }};
#else
  return {};
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
      if (!m_event) m_event = make_native_event(false);
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
  std::shared_ptr<void> m_event;  ///< the native event, made on first use
};

/// \brief Times the points of the first `steps` steps it sees on the device (a timeline without
/// a profiler): start() marks a step's origin on the level's instance, mark() a StepPoint on the
/// instance whose work it closes, each a timed native event recorded behind the work launched so
/// far (the host goes on at once; on host backends, where launches return complete, the time of
/// the call). The events are made before the steps, one for the origin and each point of each
/// step. timeline() waits for the device and averages over the recorded steps.
class StepClock {
 public:
  explicit StepClock(int steps) : m_capacity(std::max(steps, 0)) {
    if constexpr (kNativeStreams)
      for (std::size_t i = 0; i < std::size_t(m_capacity) * (kStepPoints + 1); ++i)
        if (auto ev = make_native_event(true)) m_pool.push_back(std::move(ev));
  }

  /// A new step: its origin when the work launched on `level` so far is done; marks go to it
  /// until the next start() (none once `steps` steps are recorded).
  void start(const ExecSpace& level) {
    if (int(m_origins.size()) >= m_capacity) {
      m_current = -1;
      return;
    }
    m_current = int(m_origins.size());
    m_origins.push_back(record(level));
  }
  /// Point `p` of the current step, when the work launched on `e` so far is done.
  void mark(const ExecSpace& e, StepPoint p) {
    if (m_current >= 0) m_marks.push_back({m_current, p, record(e)});
  }

  /// Waits for the device; per point the mean and largest time after its step's origin.
  Timeline timeline() const {
    Kokkos::fence();
    Timeline t;
    t.steps = int(m_origins.size());
    std::array<double, kStepPoints> sum{};
    std::array<int, kStepPoints> count{};
    std::vector<double> interior(m_origins.size(), -1.0), end(m_origins.size(), -1.0);
    for (const Mark& m : m_marks) {
      const double ms = elapsed_ms(m_origins[std::size_t(m.step)], m.at);
      if (ms < 0.0) continue;
      const auto k = std::size_t(m.point);
      sum[k] += ms, ++count[k];
      t.max_ms[k] = count[k] == 1 ? ms : std::max(t.max_ms[k], ms);
      if (m.point == StepPoint::Interior) interior[std::size_t(m.step)] = ms;
      if (m.point == StepPoint::End) end[std::size_t(m.step)] = ms;
    }
    for (std::size_t k = 0; k < std::size_t(kStepPoints); ++k) {
      t.mean_ms[k] = count[k] ? sum[k] / count[k] : -1.0;
      if (!count[k]) t.max_ms[k] = -1.0;
    }
    double exposed = 0.0;
    int both = 0;
    for (std::size_t s = 0; s < m_origins.size(); ++s) {
      if (interior[s] < 0.0 || end[s] < 0.0) continue;
      exposed += std::max(0.0, end[s] - interior[s]);
      ++both;
    }
    t.exposed_ms = both ? exposed / both : -1.0;
    return t;
  }

 private:
  /// A point in time: a native timed event on GPUs, else the host clock's seconds.
  struct Stamp {
    std::shared_ptr<void> event;
    double seconds = 0.0;
  };
  struct Mark {
    int step;
    StepPoint point;
    Stamp at;
  };
  Stamp record(const ExecSpace& e) {
#if defined(KOLIBRI_GPU_API)
    if constexpr (kNativeStreams) {
      if (m_used < m_pool.size()) {
        std::shared_ptr<void> ev = m_pool[m_used++];
        if (KOLIBRI_GPU_API(EventRecord)(static_cast<KOLIBRI_GPU_API(Event_t)>(ev.get()),
                                         static_cast<KOLIBRI_GPU_API(Stream_t)>(
                                             native_stream(e))) == KOLIBRI_GPU_API(Success))
          return {ev, 0.0};
      }
    }
#endif
    fence(e, "kolibri::step_clock_mark");
    return {nullptr, m_timer.seconds()};
  }
  /// Milliseconds from one stamp to another; -1 where they cannot be compared (an event that
  /// could not be made, beside one that was).
  static double elapsed_ms(const Stamp& from, const Stamp& to) {
    if (bool(from.event) != bool(to.event)) return -1.0;
#if defined(KOLIBRI_GPU_API)
    if (from.event) {
      float ms = 0.0f;
      if (KOLIBRI_GPU_API(EventElapsedTime)(
              &ms, static_cast<KOLIBRI_GPU_API(Event_t)>(from.event.get()),
              static_cast<KOLIBRI_GPU_API(Event_t)>(to.event.get())) == KOLIBRI_GPU_API(Success))
        return double(ms);
      return -1.0;
    }
#endif
    return 1e3 * (to.seconds - from.seconds);
  }

  int m_capacity = 0;
  int m_current = -1;            ///< the step marks go to (-1: none)
  std::vector<Stamp> m_origins;  ///< one a recorded step
  std::vector<Mark> m_marks;
  std::vector<std::shared_ptr<void>> m_pool;  ///< GPUs: the events, made before the steps
  [[maybe_unused]] std::size_t m_used = 0;    ///< of m_pool (GPUs)
  Kokkos::Timer m_timer;                      ///< host backends: the clock of the stamps
};

}  // namespace kolibri

#undef KOLIBRI_GPU_API
