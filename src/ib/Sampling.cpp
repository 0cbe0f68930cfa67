// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/MeshMath.hpp>
#include <kolibri/geometry/Surface.hpp>
#include <kolibri/ib/Sampling.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace kolibri {

std::array<double, 9> axis_rotation(const std::array<double, 3>& axis, double angle) {
  const double n = std::hypot(axis[0], axis[1], axis[2]);
  if (n == 0.0 || angle == 0.0) return {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double x = axis[0] / n, y = axis[1] / n, z = axis[2] / n, c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  return {t * x * x + c,     t * x * y - s * z, t * x * z + s * y,  //
          t * x * y + s * z, t * y * y + c,     t * y * z - s * x,  //
          t * x * z - s * y, t * y * z + s * x, t * z * z + c};
}

BodyState body_state(const Body& b, double t) {
  constexpr double two_pi = 6.283185307179586;
  BodyState s;
  const double w = two_pi * b.frequency, arg = w * t + b.phase;
  const double sn = b.frequency > 0 ? std::sin(arg) : 0.0,
               cs = b.frequency > 0 ? std::cos(arg) : 0.0;
  for (std::size_t d = 0; d < 3; ++d) {
    s.centre[d] = b.position[d] + b.velocity[d] * t + b.amplitude[d] * sn;
    s.velocity[d] = b.velocity[d] + b.amplitude[d] * w * cs;
    s.acceleration[d] = -b.amplitude[d] * w * w * sn;
  }
  const double theta =
      std::hypot(b.angular_amplitude[0], b.angular_amplitude[1], b.angular_amplitude[2]);
  if (theta > 0) {  // the rules refuse it beside a steady rotation
    s.rotation = axis_rotation(b.angular_amplitude, theta * sn);
    for (std::size_t d = 0; d < 3; ++d) s.angular_velocity[d] = b.angular_amplitude[d] * w * cs;
  } else {
    const double spin =
        std::hypot(b.angular_velocity[0], b.angular_velocity[1], b.angular_velocity[2]);
    s.rotation = axis_rotation(b.angular_velocity, spin * t);
    s.angular_velocity = b.angular_velocity;
  }
  return s;
}

namespace {
void require(bool ok, const Body& b, const std::string& what) {
  if (!ok) throw std::invalid_argument("body \"" + b.name + "\": " + what);
}

/// Move every vertex of a closed mesh with outward normals `r` inwards along its area-weighted
/// normal (the sum of its triangles' cross products).
void retract(TriangleMesh& m, double r) {
  std::vector<Vec3> normal(m.vertices.size(), Vec3{0, 0, 0});
  for (const auto& t : m.triangles) {
    const Vec3& a = m.vertices[std::size_t(t[0])];
    const Vec3& b = m.vertices[std::size_t(t[1])];
    const Vec3& c = m.vertices[std::size_t(t[2])];
    const Vec3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const Vec3 n{u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    for (const int k : t)
      for (std::size_t d = 0; d < 3; ++d) normal[std::size_t(k)][d] += n[d];
  }
  for (std::size_t i = 0; i < m.vertices.size(); ++i) {
    const double len = std::hypot(normal[i][0], normal[i][1], normal[i][2]);
    if (len == 0.0) continue;
    for (std::size_t d = 0; d < 3; ++d) m.vertices[i][d] -= r * normal[i][d] / len;
  }
}

/// The body `b` shrunk by the retraction `r`: what its samples lie on (meshes: see retract; in
/// 2D a cylinder is its circle).
Body retracted(Body b, int dims, double r) {
  if (r == 0.0) return b;
  const std::string key = b.retraction ? "retraction" : "ib.retraction";  // the body's, or [ib]'s
  const auto keep = [&](double size, const char* what) {
    if (!(size > 0.0))
      throw std::invalid_argument(key + " = " + std::to_string(r) + " cells leaves no " + what +
                                  ": it must be less than the radius, or half the edge or length");
    return size;
  };
  switch (b.shape) {
    case Body::Shape::Sphere:
    case Body::Shape::Cylinder:
      b.radius = keep(b.radius - r, "radius");
      if (b.shape == Body::Shape::Cylinder && dims == 3 && b.caps)
        b.length = keep(b.length - 2 * r, "length");
      break;
    case Body::Shape::Box:
      for (int d = 0; d < dims; ++d)
        b.size[std::size_t(d)] = keep(b.size[std::size_t(d)] - 2 * r, "box edge");
      break;
    case Body::Shape::Torus:
      b.minor_radius = keep(b.minor_radius - r, "minor_radius");
      break;
    case Body::Shape::Mesh:
      break;  // moved vertex by vertex after placement
  }
  return b;
}

/// Signed volume of a closed mesh with outward normals (divergence theorem).
double enclosed(const TriangleMesh& m) {
  double v = 0;
  for (const auto& t : m.triangles) {
    const Vec3 &a = m.vertices[std::size_t(t[0])], &b = m.vertices[std::size_t(t[1])],
               &c = m.vertices[std::size_t(t[2])];
    v += a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
         a[2] * (b[0] * c[1] - b[1] * c[0]);
  }
  return std::fabs(v) / 6.0;
}

/// The body's samples in its own frame (the shape builders check the sizes), `retraction` cells
/// inside; `volume`: what the body encloses before the retraction (BodySamples::volume).
SurfaceSamples surface_of(const Body& original, int dims, double retraction, double& volume) {
  constexpr double pi = 3.141592653589793;
  const Body& o = original;
  switch (o.shape) {
    case Body::Shape::Sphere:
      volume = 4.0 / 3.0 * pi * o.radius * o.radius * o.radius;
      break;
    case Body::Shape::Cylinder:
      volume = dims == 2 ? pi * o.radius * o.radius
               : o.caps  ? pi * o.radius * o.radius * o.length
                         : 0.0;
      break;
    case Body::Shape::Box:
      volume = o.size[0] * o.size[1] * (dims == 2 ? 1.0 : o.size[2]);
      break;
    case Body::Shape::Torus:
      volume = 2.0 * pi * pi * o.radius * o.minor_radius * o.minor_radius;
      break;
    case Body::Shape::Mesh:
      volume = 0.0;  // below, from the placed mesh
      break;
  }
  const Body b = retracted(original, dims, retraction);
  SurfaceSamples s;
  if (dims == 2) {
    switch (b.shape) {
      case Body::Shape::Cylinder:
        s = circle_samples(0.0, 0.0, b.radius, b.spacing);
        break;
      case Body::Shape::Box:
        s = rectangle_samples(-b.size[0] / 2, -b.size[1] / 2, b.size[0] / 2, b.size[1] / 2, b.spacing);
        break;
      default:
        throw std::invalid_argument("in 2D (D2Q9) a body is a cylinder (circle) or a box (rectangle)");
    }
    const auto r = rotation_matrix({0.0, 0.0, b.rotation[2]});
    for (auto& p : s.position) {
      const Vec3 q = p;
      for (int i = 0; i < 3; ++i) p[std::size_t(i)] = r[3 * std::size_t(i)] * q[0] + r[3 * std::size_t(i) + 1] * q[1];
      p[2] = 0.0;
    }
  } else {
    const double edge = std::min(0.5, b.spacing);  // flat triangles: chord error ~ edge^2 / (8 r)
    TriangleMesh m;
    switch (b.shape) {
      case Body::Shape::Sphere:
        m = sphere_mesh(b.radius, edge);
        break;
      case Body::Shape::Cylinder:
        m = cylinder_mesh(b.radius, b.length, b.axis, edge, b.caps);
        break;
      case Body::Shape::Box:
        m = box_mesh({b.size[0], b.size[1], b.size[2]}, edge);
        break;
      case Body::Shape::Torus:
        m = torus_mesh(b.radius, b.minor_radius, b.axis, edge);
        break;
      case Body::Shape::Mesh: {
        m = read_mesh(b.mesh);
        centre_on_bounds(m);  // `position` places the bounding box's centre
        break;
      }
    }
    Placement pl;
    pl.scale = b.shape == Body::Shape::Mesh ? b.scale : 1.0;
    pl.rotation_deg = {b.rotation[0], b.rotation[1], b.rotation[2]};
    place(m, pl);
    if (b.shape == Body::Shape::Mesh) volume = enclosed(m);  // before the retraction
    if (b.shape == Body::Shape::Mesh && retraction != 0.0) retract(m, retraction);
    s = poisson_disk_samples(m, b.spacing, 1);
  }
  return s;
}
}  // namespace

BodySamples sample_body(const Body& b, int dims, const ImmersedSettings& ib) {
  require(b.spacing > 0, b, "spacing must be positive (cells), got " + std::to_string(b.spacing));
  const int block = ib.block;
  SurfaceSamples s;
  double volume = 0.0;
  try {
    s = surface_of(b, dims, retraction_of(b, ib), volume);
  } catch (const std::invalid_argument& e) {
    require(false, b, e.what());
  }
  if (block > 0) {
    std::vector<Vec3> at(s.position.size());
    for (std::size_t i = 0; i < at.size(); ++i)
      for (std::size_t d = 0; d < 3; ++d) at[i][d] = s.position[i][d] + b.position[d];
    apply_order(s, block_morton_order(at, block));
  }
  BodySamples out;
  out.weight = s.weight();
  out.volume = volume;
  out.box = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
  for (const auto& p : s.position) {
    out.extent = std::max(out.extent, std::hypot(p[0], p[1], p[2]));
    for (std::size_t d = 0; d < 3; ++d) out.box[d] = std::min(out.box[d], p[d]), out.box[3 + d] = std::max(out.box[3 + d], p[d]);
  }
  out.offsets = std::move(s.position);
  return out;
}

}  // namespace kolibri
