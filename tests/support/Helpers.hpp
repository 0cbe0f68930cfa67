// SPDX-License-Identifier: Apache-2.0
// Small builders shared by the tests.
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace kolibri::test {

/// A fully periodic box.
inline SolverConfig periodic_box(LatticeKind lat, int nx, int ny, int nz, double tau = 0.8) {
  SolverConfig c;
  c.lattice = lat;
  c.nx = nx, c.ny = ny, c.nz = nz;
  c.tau = tau;
  return c;
}

/// Channel between walls at y_min and y_max, periodic in x (and z).
inline SolverConfig plates(LatticeKind lat, int ny, double tau, CollisionKind col) {
  SolverConfig c = periodic_box(lat, 2, ny, lat == LatticeKind::D2Q9 ? 1 : 2, tau);
  c.collision = col;
  c.faces[2].type = FaceType::Wall;
  c.faces[3].type = FaceType::Wall;
  return c;
}

/// The observed order of convergence between errors e1 and e2 at resolutions n1 < n2 (cells).
inline double order(double e1, double e2, double n1, double n2) {
  return std::log(e1 / e2) / std::log(n2 / n1);
}

}  // namespace kolibri::test
