// SPDX-License-Identifier: Apache-2.0
#define KOLIBRI_LATTICE kolibri::D3Q19
#define KOLIBRI_STORAGE kolibri::NativeStorage<double>
#define KOLIBRI_FACTORY make_solver_d3q19_fp64
#include "SolverLattice.inc"
