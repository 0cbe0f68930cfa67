// SPDX-License-Identifier: Apache-2.0
// The refined-grid solver of a configuration: one dispatch to the compiled (lattice, storage,
// operator) of src/refine/RefinedUnit.inc (the units src/CMakeLists.txt generates).
#include <kolibri/collision/Kbc.hpp>
#include <kolibri/collision/Mrt.hpp>
#include <kolibri/refine/RefinedSolver.hpp>

#include <stdexcept>
#include <string>

#include "CompiledUnits.hpp"

namespace kolibri::Impl {

namespace {
/// The refined solver of lattice L, storage S and operator Op, where this build compiles it.
template <class L, class S, template <class, class> class Op>
std::unique_ptr<Solver> refined_compiled(const SolverConfig& cfg, const Distribution* dist) {
  if constexpr (kRefinedCompiled<L, S, Op>)
    return make_refined_of<L, S, Op<L, typename S::real>>(cfg, dist);
  else
    throw not_compiled(std::string("refined grids with model.collision = \"") +
                       to_string(cfg.collision) + "\" on " + to_string(cfg.lattice) + " in " +
                       to_string(cfg.precision));
}

template <class L, class S>
std::unique_ptr<Solver> refined_with(const SolverConfig& cfg, const Distribution* dist) {
  switch (cfg.collision) {
    case CollisionKind::Bgk:
      return refined_compiled<L, S, Bgk>(cfg, dist);
    case CollisionKind::Trt:
      return refined_compiled<L, S, Trt>(cfg, dist);
    case CollisionKind::Regularized:
      return refined_compiled<L, S, RegularizedBgk>(cfg, dist);
    case CollisionKind::CentralMoment:
    case CollisionKind::AdaptiveCentralMoment:
      return refined_compiled<L, S, CentralMomentMrt>(cfg, dist);
    case CollisionKind::Kbc:
      return refined_compiled<L, S, Kbc>(cfg, dist);
    default:  // broken_rule refuses the others
      throw std::invalid_argument("make_solver: this operator is not compiled for refined grids");
  }
}

template <class L>
std::unique_ptr<Solver> refined_on(const SolverConfig& cfg, const Distribution* dist) {
  if (cfg.precision == Precision::FP64) return refined_with<L, NativeStorage<double>>(cfg, dist);
  return refined_with<L, NativeStorage<float>>(cfg, dist);
}
}  // namespace

std::unique_ptr<Solver> make_refined_solver(const SolverConfig& cfg, const Distribution* dist) {
  switch (cfg.lattice) {
    case LatticeKind::D2Q9:
      return refined_on<D2Q9>(cfg, dist);
    case LatticeKind::D3Q19:
      return refined_on<D3Q19>(cfg, dist);
    case LatticeKind::D3Q27:
      return refined_on<D3Q27>(cfg, dist);
  }
  throw std::invalid_argument("make_solver: unknown lattice");
}

}  // namespace kolibri::Impl
