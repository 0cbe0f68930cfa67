// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D3Q27
#define KOLIBRI_STORAGE kolibri::Fp16Storage
#define KOLIBRI_FACTORY make_solver_d3q27_fp16
#include "SolverLattice.inc"
