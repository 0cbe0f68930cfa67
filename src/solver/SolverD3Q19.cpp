// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D3Q19
#define KOLIBRI_FACTORY make_solver_d3q19
#include "SolverLattice.inc"
