// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Stokes flow through a simple cubic array of spheres, the permeability benchmark of
/// porous-media codes: Zick & Homsy's (1982) drag and a kolibri run of one periodic cell.
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <array>
#include <cmath>
#include <cstdint>

#include "Helpers.hpp"

namespace kolibri::test {

/// Zick & Homsy (1982), Table 2, simple cubic array: the solid fraction c and the dimensionless
/// drag K = F / (6 pi mu a U) (four significant digits; the series of Sangani & Acrivos 1982
/// agrees within 0.03% at these fractions).
struct DragReference {
  double c, K;
};
inline constexpr std::array<DragReference, 3> kZickHomsy{
    DragReference{0.064, 2.810}, DragReference{0.125, 4.292}, DragReference{0.216, 7.442}};

/// K of the steady creeping flow through a periodic cube of L cells around a sphere of solid
/// fraction c at its centre (D3Q19 TRT, magic 3/16, FP64), driven by a body force along x: run
/// until the superficial velocity changes by less than 1e-7 of itself over 100 steps (NaN when
/// that takes more than 100,000 steps).
inline double simple_cubic_drag(double c, int L, Obstacle::Wall wall) {
  SolverConfig cfg = periodic_box(LatticeKind::D3Q19, L, L, L, 0.9);
  cfg.collision = CollisionKind::Trt;
  const double a = L * std::cbrt(3.0 * c / (4.0 * M_PI));
  Obstacle sphere;
  sphere.shape = Obstacle::Shape::Sphere;
  sphere.center = {0.5 * L, 0.5 * L, 0.5 * L};
  sphere.radius = a;
  sphere.wall = wall;
  cfg.obstacles = {sphere};
  // Creeping flow: U about 1e-5 (Re = 2 a U / nu below 1e-2 at L = 64).
  const double f = 1e-5 * 6.0 * M_PI * cfg.viscosity() * a / (double(L) * L * L);
  cfg.force = {f, 0.0, 0.0};
  auto s = make_solver(cfg);
  const double cells = double(L) * L * L;
  double U = 0.0;
  for (int chunk = 0; chunk < 1000; ++chunk) {
    s->step(100);
    const double now = s->momentum()[0] / cells;
    const bool steady = std::fabs(now - U) < 1e-7 * std::fabs(now);
    U = now;
    if (steady) return f * cells / (6.0 * M_PI * cfg.viscosity() * a * U);
  }
  return std::nan("not steady after 100000 steps");  // fails every comparison
}

}  // namespace kolibri::test
