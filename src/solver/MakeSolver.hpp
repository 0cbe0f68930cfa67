// SPDX-License-Identifier: Apache-2.0
// Internal: one factory per (lattice, storage), each in its own translation unit: nine files that
// a parallel build compiles side by side (the GPU build of one lattice in one file took over ten
// minutes).
#pragma once

#include <kolibri/solver/Solver.hpp>

namespace kolibri::Impl {
std::unique_ptr<Solver> make_solver_d2q9_fp64(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d2q9_fp32(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d2q9_fp16(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q19_fp64(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q19_fp32(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q19_fp16(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q27_fp64(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q27_fp32(const SolverConfig& cfg, const Distribution* dist);
std::unique_ptr<Solver> make_solver_d3q27_fp16(const SolverConfig& cfg, const Distribution* dist);
}  // namespace kolibri::Impl
