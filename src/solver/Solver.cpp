// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Checksum.hpp>
#include <kolibri/config/Rules.hpp>
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/solver/Solver.hpp>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

#include "CompiledUnits.hpp"

namespace kolibri {

void initial_fields(const SolverConfig& cfg, std::vector<double>& rho,
                    std::vector<std::array<double, 3>>& u) {
  const auto n = static_cast<std::size_t>(cfg.cells());
  rho.assign(n, cfg.initial.density);
  u.assign(n, cfg.initial.velocity);
  const DenseGrid grid = DenseGrid::of(cfg);
  const double pi2 = 2.0 * std::numbers::pi, amp = cfg.initial.velocity[0];
  switch (cfg.initial.kind) {
    case InitialCondition::Kind::Uniform:
      return;
    case InitialCondition::Kind::TaylorGreen: {
      // Taylor-Green vortex in the x-y plane, one period over the box, cell centres at i + 1/2:
      // u = U sin(kx x) cos(ky y), v = -U (kx/ky) cos(kx x) sin(ky y), p = rho cs^2 + pressure
      // wave.
      const double kx = pi2 / cfg.global_n(0), ky = pi2 / cfg.global_n(1);
      grid.for_each([&](const Coord& c, Index cell) {
        const double X = c.x + grid.origin[0] + 0.5, Y = c.y + grid.origin[1] + 0.5;
        const auto i = static_cast<std::size_t>(cell);
        u[i] = {amp * std::sin(kx * X) * std::cos(ky * Y),
                -amp * (kx / ky) * std::cos(kx * X) * std::sin(ky * Y), 0.0};
        const double p = -0.25 * cfg.initial.density * amp * amp *
                         (std::cos(2 * kx * X) + (kx * kx) / (ky * ky) * std::cos(2 * ky * Y));
        rho[i] = cfg.initial.density + 3.0 * p;  // p' = cs^2 rho'
      });
      return;
    }
    case InitialCondition::Kind::TaylorGreen3D: {
      // The 3D Taylor-Green vortex of Brachet et al. (1983) in a cubic periodic box of side L
      // (k = 2 pi / L): u = U sin(kx) cos(ky) cos(kz), v = -U cos(kx) sin(ky) cos(kz), w = 0,
      // p = rho U^2 / 16 (cos 2kx + cos 2ky) (cos 2kz + 2).
      const double k = pi2 / cfg.global_n(0);
      grid.for_each([&](const Coord& c, Index cell) {
        const double X = k * (c.x + grid.origin[0] + 0.5), Y = k * (c.y + grid.origin[1] + 0.5),
                     Z = k * (c.z + grid.origin[2] + 0.5);
        const auto i = static_cast<std::size_t>(cell);
        u[i] = {amp * std::sin(X) * std::cos(Y) * std::cos(Z),
                -amp * std::cos(X) * std::sin(Y) * std::cos(Z), 0.0};
        const double p = cfg.initial.density * amp * amp / 16.0 *
                         (std::cos(2 * X) + std::cos(2 * Y)) * (std::cos(2 * Z) + 2.0);
        rho[i] = cfg.initial.density + 3.0 * p;
      });
      return;
    }
    case InitialCondition::Kind::DoubleShearLayer: {
      // Minion & Brown (1997), the stability test of Coreixas et al. (2017) and Karlin et al.
      // (2014): u = U tanh(kappa (y - 1/4)) below the middle, U tanh(kappa (3/4 - y)) above,
      // v = delta U sin(2 pi (x + 1/4)), in box units, kappa = 80, delta = 0.05.
      const double kappa = 80.0, delta = 0.05;
      grid.for_each([&](const Coord& c, Index cell) {
        const double X = (c.x + grid.origin[0] + 0.5) / cfg.global_n(0),
                     Y = (c.y + grid.origin[1] + 0.5) / cfg.global_n(1);
        const double ux =
            Y <= 0.5 ? amp * std::tanh(kappa * (Y - 0.25)) : amp * std::tanh(kappa * (0.75 - Y));
        u[static_cast<std::size_t>(cell)] = {ux, delta * amp * std::sin(pi2 * (X + 0.25)), 0.0};
      });
      return;
    }
    case InitialCondition::Kind::File: {
      // This rank's box only, ghost layers wrapped.
      const std::array<int, 3> extent = fields_hdf5_extent(cfg.initial.file);
      if (extent != std::array<int, 3>{cfg.global_n(0), cfg.global_n(1), cfg.global_n(2)})
        throw std::invalid_argument(
            cfg.initial.file + ": fields of " + std::to_string(extent[0]) + " x " +
            std::to_string(extent[1]) + " x " + std::to_string(extent[2]) +
            " cells; the domain is " + std::to_string(cfg.global_n(0)) + " x " +
            std::to_string(cfg.global_n(1)) + " x " + std::to_string(cfg.global_n(2)));
      const MacroFields f =
          read_fields_hdf5(cfg.initial.file, {grid.origin[0], grid.origin[1], grid.origin[2]},
                           {grid.n[0], grid.n[1], grid.n[2]});
      rho = f.rho;
      u = f.u;
      return;
    }
  }
}

FlowStatistics Solver::flow_statistics() const {
  const MacroFields f = macroscopic();  // collective: the whole domain on rank 0
  if (f.rho.empty()) return {};
  return kolibri::flow_statistics(f, m_cfg.periodic_axes());
}

std::string solver_signature(const SolverConfig& c) {
  char buf[128];
  std::string s;
  auto add = [&](const std::string& k, const std::string& v) { s += k + "=" + v + ";"; };
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  auto vec = [&](const std::array<double, 3>& v) { return num(v[0]) + "," + num(v[1]) + "," + num(v[2]); };
  add("lattice", to_string(c.lattice));
  add("collision", to_string(c.collision));
  add("precision", to_string(c.precision));
  add("storage", to_string(c.storage));
  add("streaming", to_string(c.streaming));
  add("cells", std::to_string(c.nx) + "x" + std::to_string(c.ny) + "x" + std::to_string(c.nz));
  add("tau", num(c.tau));
  if (c.collision == CollisionKind::Trt) add("trt_magic", num(c.trt_magic));
  if (c.collision == CollisionKind::Kbc) add("kbc_shear", to_string(c.kbc_shear));
  add("force", vec(c.force));
  for (std::size_t f = 0; f < 6; ++f) {
    const FaceBC& face = c.faces[f];
    std::string v =
        std::string(to_string(face.type)) + "/" + vec(face.velocity) + "/" + num(face.density);
    if (face.profile != InletProfile::Uniform ||
        face.time_dependent())  // (older checkpoints: neither)
      v += std::string("/") + to_string(face.profile) + "/" + std::to_string(face.ramp_steps) +
           "/" + num(face.period) + "/" + num(face.amplitude) + "/" + num(face.offset);
    if (face.profile == InletProfile::File && face.profile_values) {  // the values, not the path
      v += '/';
      v += hex64(checksum64(*face.profile_values));
    }
    if (face.is_characteristic())
      v += "/characteristic/" + num(characteristic_relaxation(c, f));
    else if (face.is_pressure() && from_layer(c, f))  // (older checkpoints: anti-bounce-back)
      v += "/developed";
    add(std::string("face.") + kFaceNames[f], v);
  }
  for (std::size_t i = 0; i < c.obstacles.size(); ++i) {
    const auto& o = c.obstacles[i];
    std::string v = std::to_string(int(o.shape)) + "/" + vec(o.min) + "/" + vec(o.max) + "/" +
                    vec(o.center) + "/" + num(o.radius) + "/" + std::to_string(o.axis);
    if (o.link_rules() || o.solid_outside)  // (older checkpoints: none of these)
      v += std::string("/") + to_string(o.wall) + "/" + (o.solid_outside ? "outside" : "inside") +
           "/" + vec(o.angular_velocity);
    if (o.shape == Obstacle::Shape::Mesh && o.mesh)  // the placed surface, not the file's name
      v += "/mesh/" + hex64(o.mesh->checksum());
    add("obstacle" + std::to_string(i), v);
  }
  if (c.refinement.active()) {  // (older checkpoints: no refinement)
    std::string v = std::to_string(c.refinement.levels);
    for (const RefinementRegion& g : c.refinement.regions)  // (+= by parts: GCC 12's -Wrestrict)
      for (const std::string& part : {std::to_string(g.level), std::string(to_string(g.kind)),
                                      vec(g.min), vec(g.max), g.around, num(g.width)}) {
        v += '/';
        v += part;
      }
    add("refinement", v);
  }
  if (c.geometry.given())  // the cells it made solid (older checkpoints: none)
    add("geometry", hex64(checksum64(*c.geometry.solid)));
  if (c.collision == CollisionKind::Mrt || c.collision == CollisionKind::CentralMoment ||
      c.collision == CollisionKind::AdaptiveCentralMoment)
    add("mrt", num(c.bulk_rate) + "/" + num(c.high_order_rate) + "/" + std::to_string(int(c.cm_hermite)) + "/" +
                   num(c.acm_viscosity) + "/" + num(c.acm_velocity));
  for (std::size_t i = 0; i < c.bodies.size(); ++i) {  // the samples follow from these
    const auto& b = c.bodies[i];
    add("body" + std::to_string(i), b.name + "/" + std::to_string(int(b.shape)) + "/" + b.mesh + "/" + vec(b.position) + "/" +
                                        vec(b.rotation) + "/" + vec(b.velocity) + "/" + vec(b.angular_velocity) + "/" +
                                        num(b.spacing) + "/" + num(b.radius) + "/" + vec(b.size));
    if (b.free)  // (older checkpoints: no free bodies)
      add("body" + std::to_string(i) + ".free",
          num(b.density) + "/" + vec(c.ib.gravity) + "/" + num(c.ib.contact_range) + "/" +
              num(c.ib.contact_stiffness) + "/" + num(c.ib.virtual_mass));
  }
  return s;
}

namespace {
void check(const SolverConfig& cfg) {
  if (const auto breach = broken_rule(cfg))
    throw std::invalid_argument("make_solver: " + breach->what());
}

/// The solver of lattice L, storage S and operator Op, where this build compiles it.
template <class L, class S, template <class, class> class Op>
std::unique_ptr<Solver> make_compiled(const SolverConfig& cfg, const Distribution* dist) {
  if constexpr (Impl::kSolverCompiled<L, S, Op>)
    return Impl::make_solver_of<L, S, Op<L, typename S::real>>(cfg, dist);
  else
    throw Impl::not_compiled(std::string("model.collision = \"") + to_string(cfg.collision) +
                             "\" on " + to_string(cfg.lattice) + " in " + to_string(cfg.precision) +
                             (cfg.storage == StorageKind::FP16 ? " with FP16 storage" : ""));
}

/// The solver of the configured operator on lattice L with storage S.
template <class L, class S>
std::unique_ptr<Solver> make_with(const SolverConfig& cfg, const Distribution* dist) {
  switch (cfg.collision) {
    case CollisionKind::Bgk:
      return make_compiled<L, S, Bgk>(cfg, dist);
    case CollisionKind::Trt:
      return make_compiled<L, S, Trt>(cfg, dist);
    case CollisionKind::Regularized:
      return make_compiled<L, S, RegularizedBgk>(cfg, dist);
    case CollisionKind::RecursiveRegularized:
      return make_compiled<L, S, RecursiveRegularizedBgk>(cfg, dist);
    case CollisionKind::Mrt:
      return make_compiled<L, S, RawMomentMrt>(cfg, dist);
    case CollisionKind::CentralMoment:
    case CollisionKind::AdaptiveCentralMoment:
      return make_compiled<L, S, CentralMomentMrt>(cfg, dist);
    case CollisionKind::Kbc:
      return make_compiled<L, S, Kbc>(cfg, dist);
  }
  throw std::invalid_argument("make_solver: unknown collision operator");
}

template <class L>
std::unique_ptr<Solver> make_on(const SolverConfig& cfg, const Distribution* dist) {
  if (cfg.precision == Precision::FP64) return make_with<L, NativeStorage<double>>(cfg, dist);
  if (cfg.storage == StorageKind::FP16) return make_with<L, Fp16Storage>(cfg, dist);
  return make_with<L, NativeStorage<float>>(cfg, dist);
}

std::unique_ptr<Solver> make_local(const SolverConfig& cfg, const Distribution* dist) {
  switch (cfg.lattice) {
    case LatticeKind::D2Q9:
      return make_on<D2Q9>(cfg, dist);
    case LatticeKind::D3Q19:
      return make_on<D3Q19>(cfg, dist);
    case LatticeKind::D3Q27:
      return make_on<D3Q27>(cfg, dist);
  }
  throw std::invalid_argument("make_solver: unknown lattice");
}
}  // namespace

std::unique_ptr<Solver> make_solver(const SolverConfig& deck) {
  SolverConfig cfg = deck;
  resolve_pressure_rules(cfg);
  check(cfg);
  if (cfg.refinement.active()) return Impl::make_refined_solver(cfg);
  return make_local(cfg, nullptr);
}

std::unique_ptr<Solver> make_solver(const SolverConfig& deck, const Distribution& dist) {
  if (!dist.comm || dist.comm->size() == 1) return make_solver(deck);
  SolverConfig cfg = deck;
  resolve_pressure_rules(cfg);
  check(cfg);
  if (cfg.refinement.active()) return Impl::make_refined_solver(cfg, &dist);  // the whole box
  return make_local(dist.dc.local_config(cfg), &dist);
}

}  // namespace kolibri
