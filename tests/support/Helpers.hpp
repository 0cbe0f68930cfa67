// SPDX-License-Identifier: Apache-2.0
// Small builders shared by the tests.
#pragma once

#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/solver/Solver.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

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

/// Scene with every wall kind: walls, a moving lid (with a tangential z component in 3D), a
/// sphere and a body force.
inline SolverConfig closed_box(LatticeKind lat) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = periodic_box(lat, 14, 12, two_d ? 1 : 10, 0.7);
  for (std::size_t f = 0; f < (two_d ? 4u : 6u); ++f) c.faces[f].type = FaceType::Wall;
  c.faces[3].type = FaceType::MovingWall;
  c.faces[3].velocity = {0.05, 0, two_d ? 0.0 : 0.01};
  Obstacle o;
  o.shape = Obstacle::Shape::Sphere;
  o.center = {7, 6, two_d ? 0.5 : 5};
  o.radius = 2.5;
  c.obstacles.push_back(o);
  c.force = {1e-5, -2e-5, 0};
  return c;
}

/// The closed box with curved walls: its sphere interpolated and rotating, and an interpolated
/// cylinder around it whose solid is outside (obstacle link rules, grid/LinkRules.hpp).
inline SolverConfig curved_walls(LatticeKind lat) {
  SolverConfig c = closed_box(lat);
  c.obstacles[0].wall = Obstacle::Wall::Interpolated;
  c.obstacles[0].angular_velocity = {0, 0, 0.02};
  Obstacle outer;
  outer.shape = Obstacle::Shape::Cylinder;
  outer.center = {7.1, 5.9, 0.5};
  outer.radius = 5.7;
  outer.solid_outside = true;
  outer.wall = Obstacle::Wall::Interpolated;
  c.obstacles.push_back(outer);
  return c;
}

/// The curved walls with the outer cylinder a closed triangle mesh (its solid outside,
/// interpolated): the wall distances from triangles (geometry/MeshShape.hpp).
inline SolverConfig mesh_walls(LatticeKind lat) {
  SolverConfig c = curved_walls(lat);
  Obstacle& outer = c.obstacles[1];
  TriangleMesh m = cylinder_mesh(outer.radius, 40.0, 2, 0.5, true);
  Placement p;
  p.position = outer.center;
  place(m, p);
  outer.shape = Obstacle::Shape::Mesh;
  outer.mesh = std::make_shared<const MeshShape>(std::move(m));
  return c;
}

/// Open scene: velocity inlet, pressure outlet, walls in y, periodic z (3D), a box obstacle
/// from x = 6 to `obstacle_x_max`.
inline SolverConfig channel(LatticeKind lat, double obstacle_x_max = 9) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = periodic_box(lat, 20, 10, two_d ? 1 : 6, 0.8);
  c.faces[0].type = FaceType::VelocityInlet;
  c.faces[0].velocity = {0.04, 0, 0};
  c.faces[1].type = FaceType::PressureOutlet;
  c.faces[1].density = 1.0;
  c.faces[2].type = c.faces[3].type = FaceType::Wall;
  Obstacle o;
  o.shape = Obstacle::Shape::Box;
  o.min = {6, 3, 0};
  o.max = {obstacle_x_max, 6, 100};
  c.obstacles.push_back(o);
  return c;
}

/// `c` with its pressure faces on the anti-bounce-back, the one rule of refined grids
/// (PressureRule): for comparisons with them, and for the rule itself where the default (the
/// developed rule) is not wanted.
inline SolverConfig anti_bounce_back(SolverConfig c) {
  for (FaceBC& f : c.faces)
    if (f.is_pressure()) f.pressure_rule = PressureRule::AntiBounceBack;
  return c;
}

/// A channel along x: a velocity inlet (u_x = 0.03) at x_min, a pressure outlet (density 1) at
/// x_max, walls on y (and z in 3D: a duct), no obstacle; the moment representation with the
/// regularized operator.
inline SolverConfig open_channel(LatticeKind lat, Streaming streaming, int nx, int ny, int nz) {
  SolverConfig c = periodic_box(lat, nx, ny, nz, 0.8);
  c.streaming = streaming;
  if (streaming == Streaming::Moments) c.collision = CollisionKind::Regularized;
  c.faces[0].type = FaceType::VelocityInlet;
  c.faces[0].velocity = {0.03, 0, 0};
  c.faces[1].type = FaceType::PressureOutlet;
  c.faces[2].type = c.faces[3].type = FaceType::Wall;
  if (lat != LatticeKind::D2Q9) c.faces[4].type = c.faces[5].type = FaceType::Wall;
  return c;
}

/// Mass flux through the plane of cells x, the sum of rho u_x.
inline double mass_flux(const MacroFields& m, int x) {
  double sum = 0;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y) sum += m.rho[m.index(x, y, z)] * m.u[m.index(x, y, z)][0];
  return sum;
}

/// The observed order of convergence between errors e1 and e2 at resolutions n1 < n2 (cells).
inline double order(double e1, double e2, double n1, double n2) {
  return std::log(e1 / e2) / std::log(n2 / n1);
}

}  // namespace kolibri::test
