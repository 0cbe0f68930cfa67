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
#include <stdexcept>
#include <string>

namespace kolibri::Impl {
/// Whether this build compiles the solver (lattice L, storage S, operator Op), and its refined
/// form: true for the units that src/CMakeLists.txt generates (KOLIBRI_LATTICES,
/// KOLIBRI_STORAGES, KOLIBRI_OPERATORS), specialised in the generated CompiledUnits.hpp.
template <class L, class S, template <class, class> class Op>
inline constexpr bool kSolverCompiled = false;
template <class L, class S, template <class, class> class Op>
inline constexpr bool kRefinedCompiled = false;
/// The refusal of a solver this build leaves out.
inline std::invalid_argument not_compiled(const std::string& what) {
  return std::invalid_argument("make_solver: this build does not compile " + what +
                               " (its configure lists KOLIBRI_LATTICES, KOLIBRI_STORAGES and "
                               "KOLIBRI_OPERATORS leave it out)");
}
template <class L, class S, class C>
std::unique_ptr<Solver> make_solver_of(const SolverConfig& cfg, const Distribution* dist);
/// The refined-grid solver of cfg (cfg.refinement.active()), src/refine/: on the ranks of `dist`
/// (the whole box, cut by refine/LevelRanks.hpp; its Decomposition unused), or one rank.
std::unique_ptr<Solver> make_refined_solver(const SolverConfig& cfg,
                                            const Distribution* dist = nullptr);
template <class L, class S, class C>
std::unique_ptr<Solver> make_refined_of(const SolverConfig& cfg, const Distribution* dist);
}  // namespace kolibri::Impl
