// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the code around a refined solver (refine/RefinedSolver.hpp) asks of it beyond
/// Solver: its levels, their cells' fields and the conserved mass. No Kokkos here: the runner,
/// output and tests include it.
#pragma once

#include <kolibri/refine/Octree.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The density and velocity of every leaf cell of a level, with the cells' centres in
/// level-0 cells and their flags (kLevelFluid ...), in the level's cell order.
struct LevelFields {
  int level = 0;
  std::vector<std::array<double, 3>> centre;
  std::vector<double> rho;
  std::vector<std::array<double, 3>> u;
  std::vector<std::uint8_t> flag;
};

/// \brief What the code around a refined solver asks of it beyond Solver (tests, output).
class RefinedGrid {
 public:
  virtual ~RefinedGrid() = default;
  virtual const Octree& octree() const = 0;
  /// Level l's leaf cells, on every rank (collective).
  virtual LevelFields level_fields(int l) const = 0;
  /// Sum over every level of the fluid cells' mass, rho times the cell's volume in level-0
  /// cells, in double: the quantity the transfers between levels conserve (collective).
  virtual double total_mass() const = 0;
  /// Where the levels are cut among the ranks, one line (empty on one rank).
  virtual std::string ranks_report() const = 0;
};

}  // namespace kolibri
