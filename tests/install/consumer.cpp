// SPDX-License-Identifier: Apache-2.0
#include <kolibri/solver/Solver.hpp>
#include <kolibri/core/Kokkos.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  kolibri::SolverConfig c;
  c.nx = c.ny = 8;
  auto s = kolibri::make_solver(c);
  s->step(10);
  std::printf("mass %.6f\n", s->diagnostics().mass);
  return s->diagnostics().first_bad < 0 ? 0 : 1;
}
