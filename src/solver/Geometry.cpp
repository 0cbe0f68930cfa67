// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/grid/Flags.hpp>

#include <algorithm>
#include <cmath>

namespace kolibri {

namespace {
/// True where point p lies inside the obstacle's shape (its surface included).
bool inside_shape(const Obstacle& o, const double (&p)[3]) {
  switch (o.shape) {
    case Obstacle::Shape::Box:
      for (int d = 0; d < 3; ++d)
        if (p[d] < o.min[std::size_t(d)] || p[d] > o.max[std::size_t(d)]) return false;
      return true;
    case Obstacle::Shape::Sphere:
    case Obstacle::Shape::Cylinder: {
      double r2 = 0.0;
      for (int d = 0; d < 3; ++d)
        if (o.shape == Obstacle::Shape::Sphere || d != o.axis)
          r2 += (p[d] - o.center[std::size_t(d)]) * (p[d] - o.center[std::size_t(d)]);
      return r2 <= o.radius * o.radius;
    }
    case Obstacle::Shape::Mesh:
      return o.mesh && o.mesh->inside({p[0], p[1], p[2]});
  }
  return false;
}
}  // namespace

// Cell (x, y, z) has its centre at (x + 1/2, y + 1/2, z + 1/2) in deck coordinates, so a box
// from min to max (in cells) covers cells whose centre lies inside [min, max].
bool covers(const Obstacle& o, int x, int y, int z) {
  return covers_point(o, {x + 0.5, y + 0.5, z + 0.5});
}

bool covers_point(const Obstacle& o, const std::array<double, 3>& x) {
  const double p[3] = {x[0], x[1], x[2]};
  return inside_shape(o, p) != o.solid_outside;
}

// The segment a + t (b - a) enters the shape at the smaller root of |a + t d - c|^2 = r^2 (or
// the box's last entering slab) and leaves it at the larger root (the first leaving slab); a
// solid outside the shape is entered where the segment leaves the shape. A mesh's solid side,
// either, begins at the segment's first crossing of a triangle (a starts on the fluid side).
double wall_crossing(const Obstacle& o, const std::array<double, 3>& a,
                     const std::array<double, 3>& b) {
  if (o.shape == Obstacle::Shape::Mesh) {
    const auto t = o.mesh ? o.mesh->first_crossing(a, b) : std::nullopt;
    return t ? *t : 1.0;
  }
  double d[3];
  for (int k = 0; k < 3; ++k) d[k] = b[std::size_t(k)] - a[std::size_t(k)];
  double enter = -1.0, leave = 2.0;
  if (o.shape == Obstacle::Shape::Box) {
    enter = -1e300, leave = 1e300;
    for (int k = 0; k < 3; ++k) {
      if (d[k] == 0.0) continue;
      const double t1 = (o.min[std::size_t(k)] - a[std::size_t(k)]) / d[k];
      const double t2 = (o.max[std::size_t(k)] - a[std::size_t(k)]) / d[k];
      enter = std::max(enter, std::min(t1, t2));
      leave = std::min(leave, std::max(t1, t2));
    }
  } else {
    double A = 0.0, B = 0.0, C = -o.radius * o.radius;
    for (int k = 0; k < 3; ++k) {
      if (o.shape == Obstacle::Shape::Cylinder && k == o.axis) continue;
      const double m = a[std::size_t(k)] - o.center[std::size_t(k)];
      A += d[k] * d[k], B += 2.0 * m * d[k], C += m * m;
    }
    const double disc = B * B - 4.0 * A * C;
    if (A > 0.0 && disc >= 0.0) {
      const double s = std::sqrt(disc);
      enter = (-B - s) / (2.0 * A), leave = (-B + s) / (2.0 * A);
    }
  }
  const double t = o.solid_outside ? leave : enter;
  return t > 0.0 && t <= 1.0 ? t : 1.0;
}

std::array<double, 3> wall_velocity(const Obstacle& o, const std::array<double, 3>& x) {
  const auto& w = o.angular_velocity;
  const double r[3] = {x[0] - o.center[0], x[1] - o.center[1], x[2] - o.center[2]};
  return {w[1] * r[2] - w[2] * r[1], w[2] * r[0] - w[0] * r[2], w[0] * r[1] - w[1] * r[0]};
}

bool solid_cell(const SolverConfig& c, int x, int y, int z) {
  for (const Obstacle& o : c.obstacles)
    if (covers(o, x, y, z)) return true;
  return c.geometry.solid_at({c.global_n(0), c.global_n(1), c.global_n(2)}, x, y, z);
}

}  // namespace kolibri
