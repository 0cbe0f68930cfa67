// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D2Q9
#define KOLIBRI_STORAGE kolibri::NativeStorage<double>
#define KOLIBRI_FACTORY make_solver_d2q9_fp64
#include "SolverLattice.inc"
