// SPDX-License-Identifier: Apache-2.0
// Circular Couette flow between a turning inner cylinder and a resting outer one on a grid
// refined around the inner one (refine/): the annulus of test_curved_walls.cpp, shared by the
// refined validation tests (test_refine_flows.cpp) and their long convergence study
// (test_refine_long.cpp).
#pragma once

#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "Helpers.hpp"

namespace kolibri::test {

/// Circular Couette flow between a cylinder of radius r1 turning at omega and one of radius r2 at
/// rest: u_theta = A r + B / r, and the torque on the inner cylinder a unit of length, -4 pi mu B.
struct CouetteProfile {
  double A, B;
  CouetteProfile(double r1, double r2, double omega)
      : A(-omega * r1 * r1 / (r2 * r2 - r1 * r1)),
        B(omega * r1 * r1 * r2 * r2 / (r2 * r2 - r1 * r1)) {}
  double at(double r) const { return A * r + B / r; }
  double torque(double mu) const { return -4.0 * M_PI * mu * B; }
};

/// The annulus's cylinders about `centre` (their axis along z): the inner one of radius r1
/// turning at omega, the outer one of radius r2 at rest with the solid outside it, both with
/// `wall`.
inline std::vector<Obstacle> annulus_cylinders(double r1, double r2, double omega,
                                               const std::array<double, 2>& centre,
                                               Obstacle::Wall wall) {
  Obstacle inner, outer;
  inner.name = "inner", outer.name = "outer";
  inner.shape = outer.shape = Obstacle::Shape::Cylinder;
  inner.center = outer.center = {centre[0], centre[1], 0.5};
  inner.radius = r1, outer.radius = r2;
  inner.angular_velocity = {0, 0, omega};
  outer.solid_outside = true;
  inner.wall = outer.wall = wall;
  return {inner, outer};
}

/// The steady annulus: the azimuthal velocity's relative L2 error over every level's fluid cells
/// (each weighted by its area), and each cylinder's torque over the analytic one, -4 pi mu B.
struct RefinedAnnulus {
  double error, inner_torque, outer_torque;
};

/// Inner radius r1 level-0 cells, turning at a wall speed of 0.002 (the dense test's: Ma^2 below
/// the walls' error), outer radius 2 r1 at rest (the solid outside it), both walls interpolated,
/// D2Q9 BGK tau 0.8, centred at 2.25 r1 (+0.13, -0.21: off the lattice's symmetry). With `levels`
/// = 2 level 1 is the square [r1, 3.5 r1]^2 around the inner cylinder: the interface crosses the
/// gap, and for r1 a multiple of 16 the square is whole blocks of level 0 (8 cells in 2D), so the
/// region has the same shape at every such r1 (a band would not: its blocks do not scale).
inline RefinedAnnulus refined_annulus(double r1, int levels = 2) {
  constexpr double kWallSpeed = 0.002;
  const int n = 8 * int(std::ceil((4.25 * r1 + 1) / 8));  // a periodic axis takes whole blocks
  const std::array<double, 2> centre{2.25 * r1 + 0.13, 2.25 * r1 - 0.21};
  const double r2 = 2 * r1, omega = kWallSpeed / r1;
  SolverConfig c = periodic_box(LatticeKind::D2Q9, n, n, 1, 0.8);
  c.obstacles = annulus_cylinders(r1, r2, omega, centre, Obstacle::Wall::Interpolated);
  if (levels > 1) {
    c.refinement.levels = 2;
    RefinementRegion square;
    square.level = 1;
    square.min = {r1, r1, 0.0};
    square.max = {3.5 * r1, 3.5 * r1, 1.0};
    c.refinement.regions = {square};
  }
  auto s = make_solver(c);
  const double gap = r2 - r1;
  s->step(std::int64_t(2.5 * gap * gap / c.viscosity()));  // slowest mode decays by about e^-25
  const CouetteProfile exact(r1, r2, omega);
  double err = 0.0, norm = 0.0;
  const auto add = [&](const std::array<double, 3>& x, const std::array<double, 3>& u,
                       double area) {
    const double dx = x[0] - centre[0], dy = x[1] - centre[1], r = std::hypot(dx, dy);
    const double ut = (-dy * u[0] + dx * u[1]) / r, want = exact.at(r);
    err += area * (ut - want) * (ut - want), norm += area * want * want;
  };
  if (levels > 1) {
    const auto& grid = dynamic_cast<const RefinedGrid&>(*s);
    EXPECT_GT(grid.octree().levels[1].link_cell.size(), 0u);  // the inner wall on level 1
    EXPECT_GT(grid.octree().levels[0].link_cell.size(), 0u);  // the outer on level 0
    for (int l = 0; l < 2; ++l) {
      const LevelFields f = grid.level_fields(l);
      for (std::size_t t = 0; t < f.rho.size(); ++t)
        if (f.flag[t] == kLevelFluid) add(f.centre[t], f.u[t], std::ldexp(1.0, -2 * l));
    }
  } else {
    const MacroFields f = s->macroscopic();
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        if (!f.solid[f.index(x, y, 0)]) add({x + 0.5, y + 0.5, 0.5}, f.u[f.index(x, y, 0)], 1.0);
  }
  const auto loads = s->obstacle_loads();
  const double torque = exact.torque(c.viscosity());  // per cell of length (nz = 1)
  return {std::sqrt(err / norm), loads[0].torque[2] / torque, -loads[1].torque[2] / torque};
}

}  // namespace kolibri::test
