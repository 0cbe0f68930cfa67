// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Whole-field flow statistics: kinetic energy and enstrophy, the standard diagnostics of
/// decaying and transitional flows such as the 3D Taylor-Green vortex. The solver reduces them on
/// the device (Solver::flow_statistics); this host form serves gathered fields and tests.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace kolibri {

struct MacroFields;

/// \brief Averages over the fluid cells of the whole domain, per unit volume and reference
/// density 1 (lattice units): kinetic energy <rho |u|^2 / 2> and enstrophy <|omega|^2 / 2>,
/// the vorticity from second-order central differences (wrapping across periodic faces, one-sided
/// at bounded faces; a solid neighbour counts as at rest). For a periodic incompressible flow the
/// viscous dissipation rate is 2 nu times the enstrophy.
struct FlowStatistics {
  double kinetic_energy = 0.0;
  double enstrophy = 0.0;
};
/// From host fields (x fastest) of the whole domain.
FlowStatistics flow_statistics(const MacroFields& f, const std::array<bool, 3>& periodic);

}  // namespace kolibri
