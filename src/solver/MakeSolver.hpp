// SPDX-License-Identifier: Apache-2.0
// Internal: the solver of one (lattice, storage, operator). Defined in SolverUnit.inc and
// compiled in the units that src/CMakeLists.txt generates (KOLIBRI_SOLVER_UNITS): one per
// (lattice, storage) on host backends, one per (lattice, storage, operator) on GPU backends,
// where a parallel build compiles them side by side.
#pragma once

#include <kolibri/collision/Kbc.hpp>
#include <kolibri/collision/Mrt.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/storage/Storage.hpp>

#include <memory>

namespace kolibri::Impl {
template <class L, class S, class C>
std::unique_ptr<Solver> make_solver_of(const SolverConfig& cfg, const Distribution* dist);
/// The refined-grid solver of cfg (cfg.refinement.active(); one rank), src/refine/.
std::unique_ptr<Solver> make_refined_solver(const SolverConfig& cfg);
template <class L, class S, class C>
std::unique_ptr<Solver> make_refined_of(const SolverConfig& cfg);
}  // namespace kolibri::Impl
