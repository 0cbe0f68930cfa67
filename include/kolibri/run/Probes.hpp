// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Point probes between cells: the cells around a point and their interpolation weights
/// (whole-field statistics: solver/FlowStatistics.hpp).
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace kolibri {

/// \brief The cells around a point and their weights: trilinear (bilinear in 2D) between the
/// cell centres (cell i's centre at i + 1/2). Across a periodic face the stencil wraps; at a
/// bounded face it takes the nearest cell.
struct PointStencil {
  std::vector<std::int64_t> cells;  ///< global linear indices, x fastest
  std::vector<double> weights;      ///< summing to 1
};

/// The stencil of the point `at` (cell widths, the domain spans [0, n] on each axis) in a domain
/// of n cells whose axes are periodic where `periodic` says so. Where the point lies on a centre
/// (or next to a bounded face) along every axis, one cell.
PointStencil point_stencil(const std::array<double, 3>& at, const std::array<int, 3>& n,
                           const std::array<bool, 3>& periodic);

/// \brief Interpolated density and velocity at a point from the sampled stencil cells (in
/// stencil order, from `first`; `solid` cells are left out and the weights of the rest
/// renormalised; all solid: NaN). A stencil of one cell gives that cell's values, solid or not.
struct PointValue {
  double rho = 0.0;
  std::array<double, 3> u{0.0, 0.0, 0.0};
};
PointValue interpolate(const PointStencil& stencil, const MacroFields& sampled,
                       std::size_t first = 0);

}  // namespace kolibri
