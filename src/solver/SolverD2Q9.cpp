// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D2Q9
#define KOLIBRI_FACTORY make_solver_d2q9
#include "SolverLattice.inc"
