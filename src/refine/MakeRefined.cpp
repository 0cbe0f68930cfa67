// SPDX-License-Identifier: Apache-2.0
// The refined-grid solver of a configuration: one dispatch to the compiled (lattice, storage,
// operator) of src/refine/RefinedUnit.inc (the units src/CMakeLists.txt generates).
#include <kolibri/collision/Kbc.hpp>
#include <kolibri/collision/Mrt.hpp>
#include <kolibri/refine/RefinedSolver.hpp>

#include <stdexcept>

#include "../solver/MakeSolver.hpp"

namespace kolibri::Impl {

namespace {
template <class L, class S>
std::unique_ptr<Solver> refined_with(const SolverConfig& cfg) {
  using R = typename S::real;
  switch (cfg.collision) {
    case CollisionKind::Bgk:
      return make_refined_of<L, S, Bgk<L, R>>(cfg);
    case CollisionKind::Trt:
      return make_refined_of<L, S, Trt<L, R>>(cfg);
    case CollisionKind::Regularized:
      return make_refined_of<L, S, RegularizedBgk<L, R>>(cfg);
    case CollisionKind::CentralMoment:
    case CollisionKind::AdaptiveCentralMoment:
      return make_refined_of<L, S, CentralMomentMrt<L, R>>(cfg);
    case CollisionKind::Kbc:
      return make_refined_of<L, S, Kbc<L, R>>(cfg);
    default:  // broken_rule refuses the others
      throw std::invalid_argument("make_solver: this operator is not compiled for refined grids");
  }
}

template <class L>
std::unique_ptr<Solver> refined_on(const SolverConfig& cfg) {
  if (cfg.precision == Precision::FP64) return refined_with<L, NativeStorage<double>>(cfg);
  return refined_with<L, NativeStorage<float>>(cfg);
}
}  // namespace

std::unique_ptr<Solver> make_refined_solver(const SolverConfig& cfg) {
  switch (cfg.lattice) {
    case LatticeKind::D2Q9:
      return refined_on<D2Q9>(cfg);
    case LatticeKind::D3Q19:
      return refined_on<D3Q19>(cfg);
    case LatticeKind::D3Q27:
      return refined_on<D3Q27>(cfg);
  }
  throw std::invalid_argument("make_solver: unknown lattice");
}

}  // namespace kolibri::Impl
