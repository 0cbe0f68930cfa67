// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D3Q19
#define KOLIBRI_STORAGE kolibri::Fp16Storage
#define KOLIBRI_FACTORY make_solver_d3q19_fp16
#include "SolverLattice.inc"
