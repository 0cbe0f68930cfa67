// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the run loop samples besides fields: points between cells (interpolated from the
/// cell centres around them) and whole-field flow statistics (kinetic energy, enstrophy), the
/// standard diagnostics of decaying and transitional flows such as the 3D Taylor-Green vortex.
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
/// of n cells whose axes are periodic where `periodic` says so.
PointStencil point_stencil(const std::array<double, 3>& at, const std::array<int, 3>& n,
                           const std::array<bool, 3>& periodic);

/// \brief Interpolated density and velocity at a point from the sampled stencil cells (in
/// stencil order; `solid` cells are left out and the weights of the rest renormalised). All
/// solid: NaN.
struct PointValue {
  double rho = 0.0;
  std::array<double, 3> u{0.0, 0.0, 0.0};
};
PointValue interpolate(const PointStencil& stencil, const MacroFields& sampled,
                       std::size_t first = 0);

/// \brief Averages over the fluid cells of the whole domain, per unit volume and reference
/// density 1 (lattice units): kinetic energy <rho |u|^2 / 2> and enstrophy <|omega|^2 / 2>,
/// the vorticity from second-order central differences (wrapping across periodic faces, one-sided
/// at bounded faces; a solid neighbour counts as at rest). For a periodic incompressible flow the
/// viscous dissipation rate is 2 nu times the enstrophy.
struct FlowStatistics {
  double kinetic_energy = 0.0;
  double enstrophy = 0.0;
};
FlowStatistics flow_statistics(const MacroFields& f, const std::array<bool, 3>& periodic);

}  // namespace kolibri
