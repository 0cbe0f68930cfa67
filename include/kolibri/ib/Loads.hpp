// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the solver reports about immersed bodies (no Kokkos).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kolibri {

/// \brief Force and torque on a body during the last step (lattice units), and where it was
/// and how it moved.
struct BodyLoad {
  std::string name;
  std::array<double, 3> force{0, 0, 0}, torque{0, 0, 0}, centre{0, 0, 0};
  std::array<double, 3> velocity{0, 0, 0}, angular_velocity{0, 0, 0};
};

/// \brief Sizes and costs of the immersed boundaries of a run.
struct IbStats {
  std::int64_t samples = 0;
  std::int64_t steps = 0;
  /// What the bodies' surfaces enclose, summed (cells^3 of level 0, before the retraction; 2D:
  /// the area times one cell): a porous case's solid volume when every body stands still.
  double enclosed_volume = 0.0;
  bool moving = false;   ///< a body moves (prescribed, oscillating or free)
  double seconds = 0.0;  ///< time in the immersed-boundary kernels (fenced; ib.timing only)
  bool timed = false;    ///< ib.timing: `seconds` was measured
  int loops_min = 0, loops_max = 0;  ///< per-thread spreading loop counts (gather: samples per node)
  std::int64_t shared_samples =
      0;  ///< several ranks: the most samples a step whose stencils cross a rank border
  /// Several ranks: every rank runs the kernels on the whole box around the bodies (a refined
  /// grid's finest level), so no sample is shared between ranks.
  bool whole_box_on_every_rank = false;
  // The implicit forcing (ib.forcing = "implicit"): its solves over the run.
  std::int64_t solver_iterations = 0;  ///< conjugate-gradient iterations, summed over the steps
  int solver_iterations_max = 0;       ///< ... the most in a step
  double solver_residual_max = 0.0;    ///< the worst relative residual a solve left
  double slip_max = 0.0;  ///< the largest slip of a component left at a sample (lattice units)
  std::int64_t unconverged_steps = 0;  ///< steps whose solve ended above ib.tolerance
  std::int64_t coupling_nonzeros = 0;  ///< entries of the coupling matrix, the most in a step
};

}  // namespace kolibri
