// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D3Q27
#define KOLIBRI_FACTORY make_solver_d3q27
#include "SolverLattice.inc"
