// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The timeline of a time step: when each point of an (overlapped) step was reached on
/// the device, in milliseconds after the step's start, averaged over steps (StepClock in
/// parallel/Streams.hpp records it; `kolibri run --timeline N`). Plain data: host-only units
/// include it.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace kolibri {

/// \brief The points a scheme marks in its step, each on the instance whose work it closes.
enum class StepPoint {
  Border,           ///< exchange's instance: the cells next to the ghost layers updated
  Packed,           ///< exchange's instance: the send buffer gathered
  Transferred,      ///< exchange's instance: the transfer done (NCCL; staged MPI: posted)
  Received,         ///< exchange's instance: the neighbours' values unpacked into the ghosts
  ForwardPacked,    ///< in place, streaming step: the forward exchange's send buffer gathered
  ForwardReceived,  ///< in place, streaming step: the forward exchange unpacked
  Interior,         ///< level's instance: the cells away from the rank borders updated
  End,              ///< level's instance: the whole step done (the exchange joined in)
  LocalEnd,         ///< level's instance: an in-place local step done (no exchange)
};
inline constexpr int kStepPoints = 9;
/// The most steps a timeline times (`kolibri run --timeline N`; its events are made beforehand).
inline constexpr int kMaxTimelineSteps = 10000;

/// One name for each StepPoint, in its order (the log line's and summary.json's keys).
struct StepPointName {
  StepPoint point;
  std::string_view name;
};
inline constexpr std::array<StepPointName, kStepPoints> kStepPointNames{{
    {StepPoint::Border, "border"},
    {StepPoint::Packed, "packed"},
    {StepPoint::Transferred, "transferred"},
    {StepPoint::Received, "received"},
    {StepPoint::ForwardPacked, "forward_packed"},
    {StepPoint::ForwardReceived, "forward_received"},
    {StepPoint::Interior, "interior"},
    {StepPoint::End, "end"},
    {StepPoint::LocalEnd, "local_end"},
}};

/// \brief Per point, the mean and largest time after the step's start over the recorded steps
/// (ms; -1 where the point was never marked), and the exposed exchange: the mean time a step
/// went on after its interior was done (End - Interior, 0 where the exchange finished first).
struct Timeline {
  Timeline() {
    mean_ms.fill(-1.0);
    max_ms.fill(-1.0);
  }
  int steps = 0;  ///< steps recorded
  std::array<double, kStepPoints> mean_ms{}, max_ms{};
  double exposed_ms = -1.0;  ///< -1: no step marked both Interior and End
  bool marked(StepPoint p) const { return mean_ms[std::size_t(p)] >= 0.0; }
};

}  // namespace kolibri
