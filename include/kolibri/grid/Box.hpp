// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief An axis-aligned box of cells: ranks' pieces, saved state, checkpoint pieces.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace kolibri {

/// \brief An axis-aligned box of cells in global coordinates: cells lo .. lo + n - 1.
struct Box {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> n{0, 0, 0};
  std::int64_t cells() const { return std::int64_t(n[0]) * n[1] * n[2]; }
  bool contains(int x, int y, int z) const {
    return x >= lo[0] && x < lo[0] + n[0] && y >= lo[1] && y < lo[1] + n[1] && z >= lo[2] &&
           z < lo[2] + n[2];
  }
  /// The overlap with another box (n = 0 in some axis when they do not overlap).
  Box intersect(const Box& o) const {
    Box r;
    for (int d = 0; d < 3; ++d) {
      r.lo[std::size_t(d)] =
          lo[std::size_t(d)] > o.lo[std::size_t(d)] ? lo[std::size_t(d)] : o.lo[std::size_t(d)];
      const int a = lo[std::size_t(d)] + n[std::size_t(d)],
                b = o.lo[std::size_t(d)] + o.n[std::size_t(d)];
      const int hi = a < b ? a : b;
      r.n[std::size_t(d)] = hi > r.lo[std::size_t(d)] ? hi - r.lo[std::size_t(d)] : 0;
    }
    return r;
  }
  bool operator==(const Box&) const = default;
};

}  // namespace kolibri
