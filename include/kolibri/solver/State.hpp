// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A rank's saved state, as the solver hands it to checkpoints and takes it back.
#pragma once

#include <kolibri/grid/Box.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kolibri {

/// \brief One rank's share of the state: the raw stored populations of the cells of `box`,
/// population-major (population q of local cell x + n0 (y + n1 z) at q * box.cells() + that).
struct StatePiece {
  Box box;
  std::vector<std::byte> data;
};

/// \brief What a checkpoint holds of the state (Solver::checkpoint_state): this rank's piece
/// and its phase, and a refined grid's levels (on rank 0; empty elsewhere and without levels).
struct CheckpointState {
  int phase = 0;
  StatePiece piece;
  std::vector<std::byte> levels;
};

/// \brief The part of a refined grid's levels (Solver::level_state, `total` values in all) that
/// one rank takes back on a restart: value ranges [first, end), in order, not overlapping.
struct LevelSlice {
  std::int64_t total = 0;
  std::vector<std::array<std::int64_t, 2>> ranges;
  std::int64_t values() const {
    std::int64_t n = 0;
    for (const auto& r : ranges) n += r[1] - r[0];
    return n;
  }
};

}  // namespace kolibri
