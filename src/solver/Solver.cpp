// SPDX-License-Identifier: Apache-2.0
#include <kolibri/solver/Solver.hpp>

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "MakeSolver.hpp"

namespace kolibri {

const char* to_string(LatticeKind k) {
  switch (k) {
    case LatticeKind::D2Q9: return "D2Q9";
    case LatticeKind::D3Q19: return "D3Q19";
    case LatticeKind::D3Q27: return "D3Q27";
  }
  return "?";
}
const char* to_string(CollisionKind k) {
  switch (k) {
    case CollisionKind::Bgk: return "bgk";
    case CollisionKind::Trt: return "trt";
    case CollisionKind::Regularized: return "regularized";
  }
  return "?";
}
const char* to_string(Precision p) { return p == Precision::FP32 ? "fp32" : "fp64"; }
const char* to_string(Streaming s) { return s == Streaming::InPlace ? "in_place" : "two_array"; }
const char* to_string(StorageKind s) { return s == StorageKind::FP16 ? "fp16" : "same"; }
const char* to_string(FaceType t) {
  switch (t) {
    case FaceType::Periodic: return "periodic";
    case FaceType::Wall: return "wall";
    case FaceType::MovingWall: return "moving_wall";
    case FaceType::VelocityInlet: return "velocity_inlet";
    case FaceType::PressureOutlet: return "pressure_outlet";
  }
  return "?";
}

void initial_fields(const SolverConfig& cfg, std::vector<double>& rho,
                    std::vector<std::array<double, 3>>& u) {
  const auto n = static_cast<std::size_t>(cfg.cells());
  rho.assign(n, cfg.initial.density);
  u.assign(n, cfg.initial.velocity);
  if (cfg.initial.kind != InitialCondition::Kind::TaylorGreen) return;
  // Taylor-Green vortex in the x-y plane, one period over the box, cell centres at i + 1/2:
  // u = U sin(kx x) cos(ky y), v = -U (kx/ky) cos(kx x) sin(ky y), p = rho cs^2 + pressure wave.
  const double pi2 = 2.0 * std::numbers::pi;
  const double kx = pi2 / cfg.nx, ky = pi2 / cfg.ny, amp = cfg.initial.velocity[0];
  for (int z = 0; z < cfg.nz; ++z)
    for (int y = 0; y < cfg.ny; ++y)
      for (int x = 0; x < cfg.nx; ++x) {
        const double X = x + 0.5, Y = y + 0.5;
        const auto i = static_cast<std::size_t>(x + std::int64_t(cfg.nx) * (y + std::int64_t(cfg.ny) * z));
        u[i] = {amp * std::sin(kx * X) * std::cos(ky * Y),
                -amp * (kx / ky) * std::cos(kx * X) * std::sin(ky * Y), 0.0};
        const double p = -0.25 * cfg.initial.density * amp * amp *
                         (std::cos(2 * kx * X) + (kx * kx) / (ky * ky) * std::cos(2 * ky * Y));
        rho[i] = cfg.initial.density + 3.0 * p;  // p' = cs^2 rho'
      }
}

std::unique_ptr<Solver> make_solver(const SolverConfig& cfg) {
  if (cfg.storage == StorageKind::FP16 && cfg.precision != Precision::FP32)
    throw std::invalid_argument("make_solver: FP16 storage needs FP32 arithmetic");
  if (cfg.nx < 1 || cfg.ny < 1 || cfg.nz < 1 || (cfg.lattice == LatticeKind::D2Q9 && cfg.nz != 1))
    throw std::invalid_argument("make_solver: bad box size (D2Q9 needs nz = 1)");
  for (int a = 0; a < 3; ++a)
    if ((cfg.faces[2 * a].type == FaceType::Periodic) != (cfg.faces[2 * a + 1].type == FaceType::Periodic))
      throw std::invalid_argument("make_solver: periodic faces come in pairs");
  if (!(cfg.tau > 0.5)) throw std::invalid_argument("make_solver: tau must be > 0.5");
  switch (cfg.lattice) {
    case LatticeKind::D2Q9: return Impl::make_solver_d2q9(cfg);
    case LatticeKind::D3Q19: return Impl::make_solver_d3q19(cfg);
    case LatticeKind::D3Q27: return Impl::make_solver_d3q27(cfg);
  }
  throw std::invalid_argument("make_solver: unknown lattice");
}

}  // namespace kolibri
