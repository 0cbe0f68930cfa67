// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Host side of immersed boundaries: a body's surface samples in its own frame.
#pragma once

#include <kolibri/config/Case.hpp>

#include <array>
#include <cmath>
#include <vector>

namespace kolibri {

/// \brief Surface samples of one body, relative to its centre (initial rotation applied), with
/// the surface area (3D) or curve length (2D) each sample stands for, the largest distance of a
/// sample from the centre, and the samples' box (lo x, y, z, hi x, y, z).
struct BodySamples {
  std::vector<std::array<double, 3>> offsets;
  double weight = 0.0;
  double extent = 0.0;
  std::array<double, 6> box{};
  /// The volume the surface encloses before the retraction (cells^3; 2D: the area times one
  /// cell), the fluid the body carries along: its momentum's rate of change joins the loads.
  /// An open cylinder (caps = false) encloses none.
  double volume = 0.0;
};

/// \brief Where a body is at time t (steps) and how it moves: the steady motion plus the
/// prescribed oscillation (Body::amplitude, angular_amplitude, frequency, phase).
struct BodyState {
  std::array<double, 3> centre{}, velocity{}, acceleration{}, angular_velocity{};
  std::array<double, 9> rotation{};  ///< of the sample offsets since t = 0 (row-major)
};
BodyState body_state(const Body& b, double t);

/// \brief Sample body `b` for a lattice of `dims` dimensions (2: closed curves in the x-y plane;
/// 3: surfaces). Poisson-disk samples at least b.spacing apart on the surface retracted by
/// `ib.retraction` cells (analytic shapes shrink: radii by r, box edges by 2r; a mesh's vertices
/// move r inwards along their area-weighted normals), ordered by `ib.block` x `ib.block` x
/// `ib.block` cell blocks and Morton code inside a block (chen2022 4.2.2; block 0: as sampled).
/// Throws std::invalid_argument (shape not available in 2D, bad sizes, a retraction that leaves
/// no body) or std::runtime_error (mesh file errors, with the file and line).
BodySamples sample_body(const Body& b, int dims, const ImmersedSettings& ib);

/// \brief The cells the bodies' kernels touch along one axis, first and last (inclusive), for
/// samples from `from` to `to` (cell (i) has its centre at i + 1/2): the trilinear stencils'
/// nodes, floor(x - 1/2) and the next, and one cell on each side, which they stream from.
inline std::array<int, 2> node_span(const double from, const double to) {
  return {int(std::floor(from - 0.5)) - 1, int(std::floor(to - 0.5)) + 2};
}

/// \brief The rotation by `angle` radians about the unit axis `axis` (row-major 3 x 3).
std::array<double, 9> axis_rotation(const std::array<double, 3>& axis, double angle);

}  // namespace kolibri
