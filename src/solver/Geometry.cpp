// SPDX-License-Identifier: Apache-2.0
#include <kolibri/grid/Flags.hpp>

namespace kolibri {

// Cell (x, y, z) has its centre at (x + 1/2, y + 1/2, z + 1/2) in deck coordinates, so a box
// from min to max (in cells) covers cells whose centre lies inside [min, max].
bool covers(const Obstacle& o, int x, int y, int z) {
  const double p[3] = {x + 0.5, y + 0.5, z + 0.5};
  switch (o.shape) {
    case Obstacle::Shape::Box:
      for (int d = 0; d < 3; ++d)
        if (p[d] < o.min[d] || p[d] > o.max[d]) return false;
      return true;
    case Obstacle::Shape::Sphere: {
      double r2 = 0.0;
      for (int d = 0; d < 3; ++d) r2 += (p[d] - o.center[d]) * (p[d] - o.center[d]);
      return r2 <= o.radius * o.radius;
    }
    case Obstacle::Shape::Cylinder: {
      double r2 = 0.0;
      for (int d = 0; d < 3; ++d)
        if (d != o.axis) r2 += (p[d] - o.center[d]) * (p[d] - o.center[d]);
      return r2 <= o.radius * o.radius;
    }
  }
  return false;
}

}  // namespace kolibri
