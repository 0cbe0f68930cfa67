// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The fused pull stream + boundary + collide kernel on a dense box (two population
/// arrays, SoA through an index policy) and the small kernels beside it (initialisation,
/// macroscopic fields, diagnostics).
#pragma once

#include <kolibri/collision/Collision.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/solver/Case.hpp>

namespace kolibri {

/// \brief Structure-of-arrays index policy: population q of cell n at q * cells + n, so a warp
/// reading one direction of consecutive cells reads consecutive addresses.
struct SoA {
  Index cells;
  KOKKOS_INLINE_FUNCTION Index operator()(Index n, int q) const { return Index(q) * cells + n; }
};

/// \brief Face boundary conditions in a form kernels can copy: type, velocity and density per
/// face (x_min, x_max, y_min, y_max, z_min, z_max).
template <class R>
struct DeviceFaces {
  int type[6];
  R velocity[6][3];
  R density[6];

  static DeviceFaces from(const FaceSet& faces) {
    DeviceFaces d{};
    for (int f = 0; f < 6; ++f) {
      d.type[f] = static_cast<int>(faces[f].type);
      for (int k = 0; k < 3; ++k) d.velocity[f][k] = R(faces[f].velocity[k]);
      d.density[f] = R(faces[f].density);
    }
    return d;
  }
  KOKKOS_INLINE_FUNCTION bool periodic(int axis) const {
    return type[2 * axis] == static_cast<int>(FaceType::Periodic);
  }
};

/// \brief Which face a population crossing several faces (edges, corners) takes its condition
/// from: walls first, so a lid or an inlet never leaks through a corner.
KOKKOS_INLINE_FUNCTION int face_priority(int type) {
  switch (static_cast<FaceType>(type)) {
    case FaceType::Wall: return 0;
    case FaceType::MovingWall: return 1;
    case FaceType::VelocityInlet: return 2;
    case FaceType::PressureOutlet: return 3;
    default: return 4;
  }
}

/// Interior cells: every upwind neighbour is fluid (periodic wrap resolved by index arithmetic).
struct InteriorTag {
  static constexpr const char* label = "kolibri::stream_collide_interior";
};
/// Cells next to a solid or a non-periodic face, from a compact list.
struct BoundaryTag {
  static constexpr const char* label = "kolibri::stream_collide_boundary";
};

/// \brief One time step: pull populations from the upwind neighbours of `src` (post-collision
/// values of the previous step), resolve boundaries, collide, write to `dst`.
///
/// Two launches per step over disjoint cells: InteriorTag over all cells (fluid cells with only
/// fluid neighbours; everything else returns at once) and BoundaryTag over the list of boundary
/// cells. Kept apart, the interior kernel holds its populations in registers; fused with the
/// boundary logic (which indexes them at run time) they went to a local-memory stack frame and
/// the kernel ran at 65% of the copy bandwidth on an H100 (docs/performance.md).
/// \tparam L lattice, R real type, C collision operator (Bgk<L,R>, Trt<L,R>, ...)
template <class L, class R, class C>
struct StreamCollide {
  Kokkos::View<const R*, MemSpace> src;
  Kokkos::View<R*, MemSpace> dst;
  Kokkos::View<const Flag*, MemSpace> flags;
  Kokkos::View<const std::uint32_t*, MemSpace> boundary_cells;
  SoA idx;
  int nx, ny, nz;
  C collide;
  DeviceFaces<R> faces;
  R force[3];

  KOKKOS_INLINE_FUNCTION void operator()(InteriorTag, const Index n) const {
    if (flags(n) != kFluid) return;
    // 32-bit coordinates (cells < 2^32) and wrapped neighbour rows: x -/0/+, y and z offsets.
    using U = std::uint32_t;
    const U ux = U(nx), uy = U(ny), uz = U(nz), c = U(n);
    const U x = c % ux, t = c / ux, y = t % uy, z = t / uy;
    const U xs[3] = {x == ux - 1 ? 0u : x + 1, x, x == 0 ? ux - 1 : x - 1};  // x - c_x for c_x = -1, 0, +1
    const U ys[3] = {(y == uy - 1 ? 0u : y + 1) * ux, y * ux, (y == 0 ? uy - 1 : y - 1) * ux};
    const U zs[3] = {(z == uz - 1 ? 0u : z + 1) * ux * uy, z * ux * uy, (z == 0 ? uz - 1 : z - 1) * ux * uy};
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      f[q] = src(idx(Index(xs[L::c(q, 0) + 1] + ys[L::c(q, 1) + 1] + zs[L::c(q, 2) + 1]), q));
    collide(f, force);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) dst(idx(n, q)) = f[q];
  }

  KOKKOS_INLINE_FUNCTION void operator()(BoundaryTag, const Index i) const {
    const Index n = Index(boundary_cells(i));
    R f[L::Q];
    pull_boundary(n, f);
    collide(f, force);
    for (int q = 0; q < L::Q; ++q) dst(idx(n, q)) = f[q];
  }

  /// Pull with boundaries: periodic wrap, halfway bounce-back (resting or moving walls,
  /// velocity inlets as moving walls), anti-bounce-back at pressure outlets.
  KOKKOS_INLINE_FUNCTION void pull_boundary(const Index n, R (&f)[L::Q]) const {
    const int x = int(n % nx), y = int((n / nx) % ny), z = int(n / (Index(nx) * ny));
    const int size[3] = {nx, ny, nz};
    bool have_u = false;
    R u_here[3] = {R(0), R(0), R(0)};
    for (int q = 0; q < L::Q; ++q) {
      int s[3] = {x - L::c(q, 0), y - L::c(q, 1), z - L::c(q, 2)};
      int face = -1;
      for (int d = 0; d < 3; ++d) {
        int crossed = -1;
        if (s[d] < 0) crossed = 2 * d;
        else if (s[d] >= size[d]) crossed = 2 * d + 1;
        if (crossed < 0) continue;
        if (faces.periodic(d)) {
          s[d] = crossed == 2 * d ? s[d] + size[d] : s[d] - size[d];
        } else if (face < 0 || face_priority(faces.type[crossed]) < face_priority(faces.type[face])) {
          face = crossed;
        }
      }
      const int qb = L::opposite(q);
      if (face < 0) {
        const Index m = s[0] + Index(nx) * (s[1] + Index(ny) * s[2]);
        f[q] = flags(m) == kSolid ? src(idx(n, qb)) : src(idx(m, q));
        continue;
      }
      const R w = R(L::w(q));
      const R* uw = faces.velocity[face];
      switch (static_cast<FaceType>(faces.type[face])) {
        case FaceType::MovingWall:
        case FaceType::VelocityInlet: {
          const R cu = R(L::c(q, 0)) * uw[0] + R(L::c(q, 1)) * uw[1] + R(L::c(q, 2)) * uw[2];
          f[q] = src(idx(n, qb)) + R(6) * w * faces.density[face] * cu;
          break;
        }
        case FaceType::PressureOutlet: {
          if (!have_u) {  // velocity of this cell from its post-collision populations
            local_velocity(n, u_here);
            have_u = true;
          }
          const R cu = R(L::c(q, 0)) * u_here[0] + R(L::c(q, 1)) * u_here[1] + R(L::c(q, 2)) * u_here[2];
          const R usq = u_here[0] * u_here[0] + u_here[1] * u_here[1] + u_here[2] * u_here[2];
          f[q] = -src(idx(n, qb)) +
                 R(2) * w * faces.density[face] * (R(1) + R(4.5) * cu * cu - R(1.5) * usq);
          break;
        }
        default: f[q] = src(idx(n, qb));  // resting wall
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void local_velocity(const Index n, R (&u)[3]) const {
    R rho = R(0), j[3] = {R(0), R(0), R(0)};
    for (int q = 0; q < L::Q; ++q) {
      const R v = src(idx(n, q));
      rho += v;
      for (int d = 0; d < 3; ++d) j[d] += R(L::c(q, d)) * v;
    }
    for (int d = 0; d < 3; ++d) u[d] = (j[d] - R(0.5) * force[d]) / rho;
  }
};

/// \brief Density and velocity of cell n from its stored post-collision populations:
/// rho = sum f, u = (sum c f - F/2) / rho, the velocity the collision used.
template <class L, class R>
KOKKOS_INLINE_FUNCTION void cell_moments(const Kokkos::View<const R*, MemSpace>& f, const SoA& idx,
                                         Index n, const R (&force)[3], double& rho, double (&u)[3]) {
  R r = R(0), j[3] = {R(0), R(0), R(0)};
  for (int q = 0; q < L::Q; ++q) {
    const R v = f(idx(n, q));
    r += v;
    for (int d = 0; d < 3; ++d) j[d] += R(L::c(q, d)) * v;
  }
  rho = double(r);
  for (int d = 0; d < 3; ++d) u[d] = double((j[d] - R(0.5) * force[d]) / r);
}

/// \brief Macroscopic fields of the listed cells (all cells when `cells` is empty); solids get
/// rho0 and zero velocity.
template <class L, class R>
struct Macroscopic {
  Kokkos::View<const R*, MemSpace> f;
  Kokkos::View<const Flag*, MemSpace> flags;
  Kokkos::View<const Index*, MemSpace> cells;
  Kokkos::View<double*, MemSpace> rho;
  Kokkos::View<double* [3], MemSpace> u;
  SoA idx;
  R force[3];
  double rho0;

  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    const Index n = cells.extent(0) > 0 ? cells(i) : i;
    if (flags(n) == kSolid) {
      rho(i) = rho0;
      u(i, 0) = u(i, 1) = u(i, 2) = 0.0;
      return;
    }
    double r, v[3];
    cell_moments<L, R>(f, idx, n, force, r, v);
    rho(i) = r;
    for (int d = 0; d < 3; ++d) u(i, d) = v[d];
  }
};

/// \brief Equilibrium initialisation from rho and u; the stored momentum is rho u + F/2, the
/// post-collision value that Macroscopic maps back to u.
template <class L, class R>
struct InitEquilibrium {
  Kokkos::View<R*, MemSpace> f;
  Kokkos::View<const double*, MemSpace> rho;
  Kokkos::View<const double* [3], MemSpace> u;
  SoA idx;
  R force[3];

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const R r = R(rho(n));
    R v[3];
    for (int d = 0; d < 3; ++d) v[d] = R(u(n, d)) + R(0.5) * force[d] / r;
    const R usq = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    for (int q = 0; q < L::Q; ++q) f(idx(n, q)) = equilibrium<L>(q, r, v, usq);
  }
};

}  // namespace kolibri
