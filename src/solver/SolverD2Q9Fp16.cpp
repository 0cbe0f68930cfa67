// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D2Q9
#define KOLIBRI_STORAGE kolibri::Fp16Storage
#define KOLIBRI_FACTORY make_solver_d2q9_fp16
#include "SolverLattice.inc"
