// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What lies inside a body, as kernels see it: the signed distance to its surface and the
/// fraction of a cell it covers (Kempe & Fröhlich 2012), and the momentum of the fluid inside a
/// free body summed in fixed point, so that the sum is the same on any number of ranks.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>

#include <cmath>
#include <cstdint>

namespace kolibri {

/// \brief Signed distance to a body's unretracted surface (negative inside) at a point of the
/// body's own frame (centre at the origin, before its initial rotation). Spheres, capped
/// cylinders (2D: circles), boxes and tori; exact inside and on the surface, a lower bound
/// outside (boxes' and cylinders' edges).
struct ShapeDistance {
  enum Kind { Sphere, Circle, Cylinder, Rectangle, Box, Torus } kind = Sphere;
  int axis = 2;
  double a = 0, b = 0, c = 0;  ///< radius / half sizes / (major radius, tube radius)

  static ShapeDistance of(const Body& body, int dims) {
    ShapeDistance s;
    s.axis = body.axis;
    switch (body.shape) {
      case Body::Shape::Sphere:
        s.kind = Sphere, s.a = body.radius;
        break;
      case Body::Shape::Cylinder:
        s.kind = dims == 2 ? Circle : Cylinder, s.a = body.radius, s.b = 0.5 * body.length;
        break;
      case Body::Shape::Box:
        s.kind = dims == 2 ? Rectangle : Box;
        s.a = 0.5 * body.size[0], s.b = 0.5 * body.size[1], s.c = 0.5 * body.size[2];
        break;
      case Body::Shape::Torus:
        s.kind = Torus, s.a = body.radius, s.b = body.minor_radius;
        break;
      case Body::Shape::Mesh:
        break;  // the rules refuse free meshes
    }
    return s;
  }

  KOKKOS_INLINE_FUNCTION double operator()(const double (&p)[3]) const {
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;  // the directions across the axis
    switch (kind) {
      case Sphere:
        return math::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) - a;
      case Circle:
        return math::sqrt(p[0] * p[0] + p[1] * p[1]) - a;
      case Cylinder:
        return edge(math::sqrt(p[u] * p[u] + p[v] * p[v]) - a, math::fabs(p[axis]) - b, -1e300);
      case Rectangle:
        return edge(math::fabs(p[0]) - a, math::fabs(p[1]) - b, -1e300);
      case Box:
        return edge(math::fabs(p[0]) - a, math::fabs(p[1]) - b, math::fabs(p[2]) - c);
      case Torus: {
        const double r = math::sqrt(p[u] * p[u] + p[v] * p[v]) - a;
        return math::sqrt(r * r + p[axis] * p[axis]) - b;
      }
    }
    return 1.0;
  }

 private:
  /// Distance to the intersection of slabs |p_i| <= h_i given q_i = |p_i| - h_i (unused: -1e300).
  KOKKOS_INLINE_FUNCTION static double edge(double x, double y, double z) {
    const double ox = x > 0 ? x : 0, oy = y > 0 ? y : 0, oz = z > 0 ? z : 0;
    const double inside = x > y ? (x > z ? x : z) : (y > z ? y : z);
    return math::sqrt(ox * ox + oy * oy + oz * oz) + (inside < 0 ? inside : 0);
  }
};

/// \brief Six 64-bit integers summed exactly (fixed point): the same total in any order.
struct FixedSums {
  std::int64_t v[6];
  KOKKOS_INLINE_FUNCTION FixedSums() : v{0, 0, 0, 0, 0, 0} {}
};

/// \brief Momentum and angular momentum (about its centre) of the fluid inside one free body:
/// over the cells of the node box, the cell's covered fraction (Kempe & Fröhlich 2012: the
/// distances phi at the corners, sum of -phi over the corners inside / sum of |phi|, on 4^D
/// sub-cells of the cells the surface crosses) times rho u* from the node kernel, in fixed
/// point of 2^-bits (linear) and 2^-arm_bits (angular).
template <int D, class R>
struct InnerMomentum {
  Kokkos::View<const R*, MemSpace> node;  ///< rho, then u* (value-major over the box)
  int lo[3], n[3];                        ///< the node box (domain cells)
  double centre[3];
  double turn[9];  ///< body frame to domain (the rotation since t = 0 times the initial one)
  ShapeDistance shape;
  double scale, arm_scale;

  /// Signed distance at domain point x (the body's frame through `turn`).
  KOKKOS_INLINE_FUNCTION double distance(const double (&x)[3]) const {
    double r[3], p[3];
    for (int d = 0; d < 3; ++d) r[d] = x[d] - centre[d];
    for (int d = 0; d < 3; ++d) p[d] = turn[d] * r[0] + turn[3 + d] * r[1] + turn[6 + d] * r[2];
    return shape(p);
  }
  /// The fraction of the cell centred at x inside the body: 0 or 1 away from the surface; else
  /// Kempe & Fröhlich's corner formula on each of its 4^D sub-cells (their average).
  KOKKOS_INLINE_FUNCTION double covered(const double (&x)[3]) const {
    constexpr int m = 4;  // sub-cells a side
    const double c = distance(x), half = D == 3 ? 0.8660254037844386 : 0.7071067811865476;
    if (c >= half) return 0.0;
    if (c <= -half) return 1.0;
    double phi[m + 1][m + 1][m + 1];
    const int nz = D == 3 ? m : 0;
    for (int k = 0; k <= nz; ++k)
      for (int j = 0; j <= m; ++j)
        for (int i = 0; i <= m; ++i) {
          const double p[3] = {x[0] - 0.5 + double(i) / m, x[1] - 0.5 + double(j) / m,
                               D == 3 ? x[2] - 0.5 + double(k) / m : x[2]};
          phi[k][j][i] = distance(p);
        }
    double sum = 0;
    for (int k = 0; k < (D == 3 ? m : 1); ++k)
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
          double inside = 0, all = 0;
          for (int corner = 0; corner < (1 << D); ++corner) {
            const double f = phi[k + (D == 3 ? (corner >> 2) & 1 : 0)][j + ((corner >> 1) & 1)]
                                [i + (corner & 1)];
            inside += f < 0 ? -f : 0.0;
            all += math::fabs(f);
          }
          sum += all > 0 ? inside / all : 0.5;
        }
    return sum / (D == 3 ? m * m * m : m * m);
  }
  KOKKOS_INLINE_FUNCTION static std::int64_t fixed(double x) {
    return std::int64_t(math::floor(x + 0.5));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, FixedSums& sum) const {
    const Index cells = Index(n[0]) * n[1] * n[2];
    const Index x0 = i % n[0], y0 = (i / n[0]) % n[1], z0 = i / (Index(n[0]) * n[1]);
    const double x[3] = {lo[0] + double(x0) + 0.5, lo[1] + double(y0) + 0.5,
                         lo[2] + double(z0) + 0.5};
    const double phi = covered(x);
    if (phi <= 0) return;
    const double rho = double(node(i));
    double p[3], r[3];
    for (int d = 0; d < 3; ++d) {
      p[d] = phi * rho * double(node((1 + d) * cells + i));
      r[d] = x[d] - centre[d];
    }
    const double l[3] = {r[1] * p[2] - r[2] * p[1], r[2] * p[0] - r[0] * p[2],
                         r[0] * p[1] - r[1] * p[0]};
    for (int d = 0; d < 3; ++d) {
      sum.v[d] += fixed(p[d] * scale);
      sum.v[3 + d] += fixed(l[d] * arm_scale);
    }
  }
  KOKKOS_INLINE_FUNCTION void init(FixedSums& a) const { a = FixedSums(); }
  KOKKOS_INLINE_FUNCTION void join(FixedSums& a, const FixedSums& b) const {
    for (int k = 0; k < 6; ++k) a.v[k] += b.v[k];
  }
  KOKKOS_INLINE_FUNCTION void join(volatile FixedSums& a,
                                   const volatile FixedSums& b) const {  // Kokkos 3
    for (int k = 0; k < 6; ++k) a.v[k] = a.v[k] + b.v[k];
  }
};

}  // namespace kolibri
