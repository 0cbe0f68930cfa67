// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief How a process grid cuts an axis: near-equal slabs, the first ones one cell larger.
/// The decomposition places the ranks with it; the rules that depend on a rank's share of an axis
/// (OutflowLayers.hpp) ask it too.
#pragma once

namespace kolibri {

/// Cells of slab c when n cells are cut into p slabs.
inline constexpr int slab_cells(int n, int p, int c) { return n / p + (c < n % p ? 1 : 0); }
/// First cell of slab c when n cells are cut into p slabs.
inline constexpr int slab_start(int n, int p, int c) {
  return c * (n / p) + (c < n % p ? c : n % p);
}

}  // namespace kolibri
