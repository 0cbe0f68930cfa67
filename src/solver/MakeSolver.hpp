// SPDX-License-Identifier: Apache-2.0
// Internal: one factory per lattice, each in its own translation unit (parallel builds).
#pragma once

#include <kolibri/solver/Solver.hpp>

namespace kolibri::Impl {
std::unique_ptr<Solver> make_solver_d2q9(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q19(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q27(const SolverConfig& cfg, const Distribution* dist);
}  // namespace kolibri::Impl
