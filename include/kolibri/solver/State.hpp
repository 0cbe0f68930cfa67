// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A rank's saved state, as the solver hands it to checkpoints and takes it back.
#pragma once

#include <kolibri/grid/Box.hpp>

#include <cstddef>
#include <vector>

namespace kolibri {

/// \brief One rank's share of the state: the raw stored populations of the cells of `box`,
/// population-major (population q of local cell x + n0 (y + n1 z) at q * box.cells() + that).
struct StatePiece {
  Box box;
  std::vector<std::byte> data;
};

}  // namespace kolibri
