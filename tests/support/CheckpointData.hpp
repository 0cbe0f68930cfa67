// SPDX-License-Identifier: Apache-2.0
// Checkpoint test data: a state whose every stored value names its global cell and population,
// so a value copied to the wrong place cannot go unnoticed.
#pragma once

#include <kolibri/io/Checkpoint.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kolibri::test {

/// The raw stored value of population qi at global cell (x, y, z) of a global box g: distinct for
/// every (cell, population) of boxes up to 65536 values (float16 stores raw bits).
inline void checkpoint_value(const std::string& vt, const std::array<int, 3>& g, int qi, int x, int y, int z,
                             std::byte* out) {
  const std::int64_t index = ((std::int64_t(qi) * g[2] + z) * g[1] + y) * g[0] + x;
  if (vt == "float64") {
    const double v = double(index) + 1.0 / 3.0;
    std::memcpy(out, &v, 8);
  } else if (vt == "float32") {
    const float v = float(index) + 0.25f;
    std::memcpy(out, &v, 4);
  } else {
    const std::uint16_t v = std::uint16_t((index * 31 + 7) & 0xffff);
    std::memcpy(out, &v, 2);
  }
}

/// The state of `box` (population-major, x fastest, as StatePiece holds it).
inline std::vector<std::byte> checkpoint_state(const std::string& vt, const std::array<int, 3>& g, int q,
                                               const Box& box) {
  const int vb = value_bytes(vt);
  std::vector<std::byte> d(std::size_t(q) * std::size_t(box.cells()) * std::size_t(vb));
  std::size_t i = 0;
  for (int qi = 0; qi < q; ++qi)
    for (int z = box.lo[2]; z < box.lo[2] + box.n[2]; ++z)
      for (int y = box.lo[1]; y < box.lo[1] + box.n[1]; ++y)
        for (int x = box.lo[0]; x < box.lo[0] + box.n[0]; ++x, i += std::size_t(vb))
          checkpoint_value(vt, g, qi, x, y, z, d.data() + i);
  return d;
}

}  // namespace kolibri::test
