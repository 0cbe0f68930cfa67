// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/Surface.hpp>
#include <kolibri/ib/Motion.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kolibri {

namespace {
using M3 = std::array<double, 9>;
using V3 = std::array<double, 3>;

M3 multiply(const M3& a, const M3& b) {
  M3 c{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 3; ++k) c[3 * i + j] += a[3 * i + k] * b[3 * k + j];
  return c;
}
M3 transpose(const M3& a) { return {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]}; }
V3 times(const M3& a, const V3& v) {
  return {a[0] * v[0] + a[1] * v[1] + a[2] * v[2], a[3] * v[0] + a[4] * v[1] + a[5] * v[2],
          a[6] * v[0] + a[7] * v[1] + a[8] * v[2]};
}
V3 cross(const V3& a, const V3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
/// x with a x = b (Cramer's rule; a is an inertia tensor: symmetric positive definite).
V3 solve(const M3& a, const V3& b) {
  const double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                     a[2] * (a[3] * a[7] - a[4] * a[6]);
  V3 x{};
  for (std::size_t c = 0; c < 3; ++c) {
    M3 m = a;
    for (std::size_t r = 0; r < 3; ++r) m[3 * r + c] = b[r];
    x[c] = (m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
            m[2] * (m[3] * m[7] - m[4] * m[6])) /
           det;
  }
  return x;
}
/// The body's initial rotation (the deck's `rotation`, degrees; 2D: about z).
M3 initial_rotation(const Body& b, int dims) {
  return rotation_matrix(dims == 2 ? Vec3{0.0, 0.0, b.rotation[2]}
                                   : Vec3{b.rotation[0], b.rotation[1], b.rotation[2]});
}
}  // namespace

MotionSetting MotionSetting::of(const SolverConfig& cfg, int dims) {
  MotionSetting s;
  s.fluid_density = cfg.initial.density;
  s.gravity = cfg.ib.gravity;
  s.dims = dims;
  const auto faces = cfg.domain_faces();  // the whole domain's (a rank's piece has its own)
  for (std::size_t f = 0; f < 6; ++f) s.walls[f] = faces[f] != FaceType::Periodic;
  for (int d = 0; d < 3; ++d) s.domain[std::size_t(d)] = cfg.global_n(d);
  s.contact_range = cfg.ib.contact_range;
  s.contact_stiffness = cfg.ib.contact_stiffness;
  return s;
}

BodyState FreeMotion::pose() const {
  BodyState s;
  s.centre = centre, s.velocity = velocity, s.angular_velocity = angular_velocity;
  s.rotation = rotation;
  return s;
}

std::array<double, 9> body_frame(const Body& b, int dims, const std::array<double, 9>& rotation) {
  return multiply(rotation, initial_rotation(b, dims));
}

void FreeMotion::pack(std::vector<double>& out) const {
  for (const double v : centre) out.push_back(v);
  for (const double v : velocity) out.push_back(v);
  for (const double v : angular_velocity) out.push_back(v);
  for (const double v : rotation) out.push_back(v);
  for (const double v : acceleration) out.push_back(v);
  for (const double v : inner) out.push_back(v);
  for (const double v : forcing) out.push_back(v);
  out.push_back(started ? 1.0 : 0.0);
}

FreeMotion FreeMotion::unpack(const double* v) {
  FreeMotion m;
  for (auto* part : {&m.centre, &m.velocity, &m.angular_velocity})
    for (double& x : *part) x = *v++;
  for (double& x : m.rotation) x = *v++;
  for (double& x : m.acceleration) x = *v++;
  for (double& x : m.inner) x = *v++;
  for (double& x : m.forcing) x = *v++;
  m.started = *v != 0.0;
  return m;
}

RigidInertia inertia_of(const Body& b, int dims, double volume) {
  RigidInertia out;
  const double m = b.density * volume, r2 = b.radius * b.radius;
  out.mass = m;
  V3 principal{};  // about the body's own axes
  const auto axial = [&](double along, double across) {
    principal = {across, across, across};
    principal[std::size_t(dims == 2 ? 2 : b.axis)] = along;
  };
  switch (b.shape) {
    case Body::Shape::Sphere:
      principal = {0.4 * m * r2, 0.4 * m * r2, 0.4 * m * r2};
      break;
    case Body::Shape::Cylinder:
      axial(0.5 * m * r2, dims == 2 ? 0.5 * m * r2 : m * (3 * r2 + b.length * b.length) / 12);
      break;
    case Body::Shape::Box: {
      const double x = b.size[0] * b.size[0], y = b.size[1] * b.size[1],
                   z = dims == 2 ? 0.0 : b.size[2] * b.size[2];
      principal = {m * (y + z) / 12, m * (x + z) / 12, m * (x + y) / 12};
      if (dims == 2) principal[0] = principal[1] = principal[2];  // only z turns in 2D
      break;
    }
    case Body::Shape::Torus: {
      const double s2 = b.minor_radius * b.minor_radius;
      axial(m * (r2 + 0.75 * s2), m * (0.5 * r2 + 0.625 * s2));
      break;
    }
    case Body::Shape::Mesh:
      throw std::invalid_argument("body \"" + b.name +
                                  "\": a mesh body cannot move freely (config/Rules.cpp)");
  }
  const M3 r = initial_rotation(b, dims);
  const M3 d{principal[0], 0, 0, 0, principal[1], 0, 0, 0, principal[2]};
  out.tensor = multiply(multiply(r, d), transpose(r));
  return out;
}

void add_virtual_mass(RigidInertia& in, const Body& b, const BodySamples& samples,
                      double fluid_density, double coefficient) {
  const double layer = kDraggedLayer * samples.weight;  // the layer's volume a sample
  const double share = fluid_density / b.density;       // of the inertia, filled with fluid
  in.virtual_mass =
      coefficient * fluid_density * (samples.volume + layer * double(samples.offsets.size()));
  M3 shell{};
  for (const auto& r : samples.offsets) {
    const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j)
        shell[3 * i + j] += layer * ((i == j ? r2 : 0.0) - r[i] * r[j]);
  }
  for (std::size_t k = 0; k < 9; ++k)
    in.virtual_tensor[k] = coefficient * (share * in.tensor[k] + fluid_density * shell[k]);
}

double reach(const Body& b, int dims, const std::array<double, 9>& rotation,
             const std::array<double, 3>& n) {
  const V3 nb = times(transpose(body_frame(b, dims, rotation)), n);
  const auto across = [&] {
    const double a = dims == 2 ? 0.0 : nb[std::size_t(b.axis)];
    return std::sqrt(std::max(0.0, 1.0 - a * a));
  };
  switch (b.shape) {
    case Body::Shape::Sphere:
      return b.radius;
    case Body::Shape::Cylinder:
      return dims == 2 ? b.radius
                       : b.radius * across() + 0.5 * b.length * std::fabs(nb[std::size_t(b.axis)]);
    case Body::Shape::Box:
      return 0.5 * (b.size[0] * std::fabs(nb[0]) + b.size[1] * std::fabs(nb[1]) +
                    (dims == 2 ? 0.0 : b.size[2] * std::fabs(nb[2])));
    case Body::Shape::Torus:
      return b.radius * across() + b.minor_radius;
    case Body::Shape::Mesh:
      break;
  }
  throw std::invalid_argument("body \"" + b.name + "\": a mesh body cannot move freely");
}

std::array<double, 3> contact_force(const Body& b, const FreeMotion& m, double volume,
                                    const MotionSetting& s) {
  V3 f{0, 0, 0};
  const double g = std::hypot(s.gravity[0], s.gravity[1], s.gravity[2]);
  const double weight = s.contact_stiffness * std::fabs(b.density - s.fluid_density) * volume * g;
  if (!(weight > 0.0)) return f;
  for (int d = 0; d < s.dims; ++d) {
    V3 n{0, 0, 0};
    for (const double side : {-1.0, 1.0}) {  // the low face's wall at 0, the high face's at size
      if (!s.walls[std::size_t(2 * d + (side > 0 ? 1 : 0))]) continue;
      n[std::size_t(d)] = side;
      const double c = m.centre[std::size_t(d)];
      const double gap =
          (side < 0 ? c : s.domain[std::size_t(d)] - c) - reach(b, s.dims, m.rotation, n);
      if (gap >= s.contact_range) continue;
      const double push = 1.0 - gap / s.contact_range;
      f[std::size_t(d)] -= side * weight * push * push;
    }
  }
  return f;
}

void advance(FreeMotion& m, const Body& b, const RigidInertia& inertia, double volume,
             const std::array<double, 6>& inner_now, const MotionSetting& s) {
  const V3 push = contact_force(b, m, volume, s);
  V3 force{}, torque{};
  for (std::size_t d = 0; d < 3; ++d) {
    force[d] = m.forcing[d] + (inner_now[d] - m.inner[d]) +
               (inertia.mass - s.fluid_density * volume) * s.gravity[d] + push[d];
    torque[d] = m.forcing[3 + d] + (inner_now[3 + d] - m.inner[3 + d]);
  }
  if (s.dims == 2) force[2] = torque[0] = torque[1] = 0.0;
  const V3 u = m.velocity, w = m.angular_velocity, c = m.centre;
  // The virtual mass and inertia on both sides, the last step's change on the right.
  const M3 turned = multiply(multiply(m.rotation, inertia.tensor), transpose(m.rotation));
  const M3 virtual_tensor =
      multiply(multiply(m.rotation, inertia.virtual_tensor), transpose(m.rotation));
  const V3 spin = cross(w, times(turned, w));  // Euler's equations: I dw/dt = T - w x (I w)
  const V3 lag = times(virtual_tensor, {m.acceleration[3], m.acceleration[4], m.acceleration[5]});
  V3 rhs{}, w_new{};
  M3 tensor{};
  for (std::size_t d = 0; d < 3; ++d) rhs[d] = torque[d] - spin[d] + lag[d];
  for (std::size_t k = 0; k < 9; ++k) tensor[k] = turned[k] + virtual_tensor[k];
  if (s.dims == 2) {
    w_new = {0, 0, w[2] + rhs[2] / tensor[8]};
  } else {
    const V3 a = solve(tensor, rhs);
    for (std::size_t d = 0; d < 3; ++d) w_new[d] = w[d] + a[d];
  }
  const double virtual_mass = inertia.virtual_mass;
  V3 w_mean{};
  for (std::size_t d = 0; d < 3; ++d) {
    m.velocity[d] =
        u[d] + (force[d] + virtual_mass * m.acceleration[d]) / (inertia.mass + virtual_mass);
    m.centre[d] = c[d] + 0.5 * (u[d] + m.velocity[d]);
    w_mean[d] = 0.5 * (w[d] + w_new[d]);
    m.acceleration[d] = m.velocity[d] - u[d];
    m.acceleration[3 + d] = w_new[d] - w[d];
  }
  m.angular_velocity = w_new;
  m.rotation =
      multiply(axis_rotation(w_mean, std::hypot(w_mean[0], w_mean[1], w_mean[2])), m.rotation);
  // The next step measures the inner angular momentum about the new centre: this one moves
  // there too, L' = L - (c_t - c_{t-1}) x P, so that their difference holds no centre shift.
  m.inner = inner_now;
  const V3 shift = cross({m.centre[0] - c[0], m.centre[1] - c[1], m.centre[2] - c[2]},
                         {inner_now[0], inner_now[1], inner_now[2]});
  for (std::size_t d = 0; d < 3; ++d) m.inner[3 + d] -= shift[d];
  const double moved = std::hypot(m.centre[0] - c[0], m.centre[1] - c[1], m.centre[2] - c[2]);
  if (!(moved <= 0.5))
    throw std::runtime_error("free body \"" + b.name + "\" moved " + std::to_string(moved) +
                             " cells in one step (at most 0.5: lower the lattice velocities, "
                             "i.e. gravity, or refine the time step)");
  for (int d = 0; d < s.dims; ++d) {  // the bodies' node box does not wrap across periodic faces
    V3 n{0, 0, 0};
    n[std::size_t(d)] = 1.0;
    const double up = reach(b, s.dims, m.rotation, n);
    n[std::size_t(d)] = -1.0;
    const double down = reach(b, s.dims, m.rotation, n);
    const double x = m.centre[std::size_t(d)];
    if ((!s.walls[std::size_t(2 * d)] && x - down < 0.0) ||
        (!s.walls[std::size_t(2 * d + 1)] && x + up > s.domain[std::size_t(d)]))
      throw std::runtime_error(
          "free body \"" + b.name + "\" reached the periodic faces across " +
          std::string(1, char('x' + d)) +
          " (immersed bodies do not cross them yet: a larger domain, or walls)");
  }
  for (int d = 0; d < s.dims; ++d)
    if (!(m.centre[std::size_t(d)] >= 0.0 && m.centre[std::size_t(d)] <= s.domain[std::size_t(d)]))
      throw std::runtime_error("free body \"" + b.name + "\" left the domain along " +
                               std::string(1, char('x' + d)) + " (centre at " +
                               std::to_string(m.centre[std::size_t(d)]) + ")");
}

}  // namespace kolibri
