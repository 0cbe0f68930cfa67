// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A solver's place in a multi-rank run: its piece of the box, the ranks, the transport.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Nccl.hpp>

#include <array>
#include <vector>

namespace kolibri {

/// \brief A solver's place in a multi-rank run.
struct Distribution {
  Decomposition dc;
  const Comm* comm = nullptr;      ///< null: a single-rank solver (no collective calls)
  bool device_buffers = false;     ///< hand device buffers to MPI (GPU-aware MPI)
  const NcclComm* nccl = nullptr;  ///< halo exchange through NCCL/RCCL instead of MPI
  std::vector<Box> boxes;          ///< every rank's cells, by rank
};

/// \brief This rank's piece of `cfg` over the ranks of `comm`, with every rank's box (grid zeros:
/// chosen automatically), its slabs cut by `balance`. Throws std::invalid_argument when the grid
/// does not fit.
Distribution distribute(const SolverConfig& cfg, const Comm& comm,
                        std::array<int, 3> grid = {0, 0, 0}, Balance balance = Balance::Volume);

}  // namespace kolibri
