// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Free motion of rigid immersed bodies (host, no Kokkos): their state, mass and inertia,
/// the wall contact force and one step of the equations of motion (docs/theory.md, free bodies).
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/ib/Sampling.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace kolibri {

/// \brief A free body's state between two steps: where it is and how it moves, the momentum of
/// the fluid inside it as last measured, and the forcing's load on it over the last step. Host
/// doubles, the same on every rank; checkpoints keep it (pack / unpack), so a restart continues
/// the motion bit for bit.
struct FreeMotion {
  std::array<double, 3> centre{}, velocity{}, angular_velocity{};
  std::array<double, 9> rotation{1, 0, 0, 0, 1, 0, 0, 0, 1};  ///< since t = 0 (row-major)
  /// The velocity and angular velocity change of the last step (the virtual mass's lag).
  std::array<double, 6> acceleration{};
  /// Momentum and angular momentum (about the centre) of the fluid inside the body, measured
  /// before the last step's forcing.
  std::array<double, 6> inner{};
  /// Force and torque of the samples on the body over the last step (minus their force on the
  /// fluid, torque about the centre).
  std::array<double, 6> forcing{};
  bool started = false;  ///< false until the first step has measured `inner` and `forcing`

  /// Where the body is and how it moves, as the samples take it (no acceleration).
  BodyState pose() const;

  static constexpr std::size_t kValues = 37;  ///< doubles a body packs into
  void pack(std::vector<double>& out) const;
  /// The state packed at v[0, kValues).
  static FreeMotion unpack(const double* v);
};

/// \brief Mass and inertia of a uniform solid body of density b.density enclosing `volume`
/// (cells^3; 2D: the area times one cell): the inertia tensor about the centre in the deck's
/// frame, the body's initial rotation applied (row-major).
struct RigidInertia {
  double mass = 0.0;
  std::array<double, 9> tensor{};
  /// The virtual mass and inertia (tensor at t = 0) that keep the explicit coupling stable
  /// (add_virtual_mass); zero without.
  double virtual_mass = 0.0;
  std::array<double, 9> virtual_tensor{};
};
RigidInertia inertia_of(const Body& b, int dims, double volume);

/// \brief The fluid the forcing drags along in one step: a layer kDraggedLayer cells thick on
/// the surface (the interpolation stencil's band) besides the fluid inside.
inline constexpr double kDraggedLayer = 2.0;

/// \brief Set the virtual mass (Schwarz, Kempe & Fröhlich 2015) of a body with inertia `in`:
/// `coefficient` times the mass and inertia of the fluid the forcing drags along: the body's
/// volume filled with fluid of `fluid_density` plus the dragged layer on its samples' surface
/// (`samples`: offsets from the centre at t = 0, each standing for `samples.weight` of area).
void add_virtual_mass(RigidInertia& in, const Body& b, const BodySamples& samples,
                      double fluid_density, double coefficient);

/// \brief What one step of free motion needs besides the body: the fluid's density, gravity, the
/// lattice's dimensions and the walls a body may touch (the domain's bounded faces).
struct MotionSetting {
  double fluid_density = 1.0;
  std::array<double, 3> gravity{0, 0, 0};
  int dims = 3;
  std::array<int, 3> domain{0, 0, 0};  ///< the whole domain's cells per axis
  /// The faces (x_min, x_max, y_min, ...) that bound the domain: a body touches them (contact)
  /// and does not cross them (the others are periodic, which it must not reach either).
  std::array<bool, 6> walls{};
  double contact_range = 1.0;        ///< ib.contact_range (cells)
  double contact_stiffness = 100.0;  ///< ib.contact_stiffness

  /// The setting of a case on a lattice of `dims` dimensions (the whole domain's, on any rank).
  static MotionSetting of(const SolverConfig& cfg, int dims);
};

/// \brief The rotation from body `b`'s own frame to the domain's after it turned by `rotation`
/// since t = 0: `rotation` times the body's initial rotation (row-major).
std::array<double, 9> body_frame(const Body& b, int dims, const std::array<double, 9>& rotation);

/// \brief How far body `b` reaches from its centre along the unit vector `n` (the support
/// function of its unretracted surface) when turned by `rotation` since t = 0.
double reach(const Body& b, int dims, const std::array<double, 9>& rotation,
             const std::array<double, 3>& n);

/// \brief The walls' push on a free body (Glowinski et al. 2001's repulsive force): for each
/// wall closer to the surface than ib.contact_range (gap h), stiffness x the body's buoyant
/// weight x (1 - h / range)^2, along the wall's normal. No gravity: no contact force.
std::array<double, 3> contact_force(const Body& b, const FreeMotion& m, double volume,
                                    const MotionSetting& s);

/// \brief One step of a free body (docs/theory.md): the hydrodynamic force is the forcing's plus
/// the change of the inner fluid's momentum (`inner_now` against m.inner), buoyant weight and
/// contact are added; velocity and angular velocity step explicitly with the virtual mass and
/// inertia of `inertia` on both sides, times the last step's change on the right (keeps light
/// bodies stable, changes nothing in steady motion), the centre and rotation by the mean of the
/// old and new ones. Sets m.inner = inner_now. Throws std::runtime_error naming
/// the body when it moves more than half a cell in a step or its centre leaves the domain.
void advance(FreeMotion& m, const Body& b, const RigidInertia& inertia, double volume,
             const std::array<double, 6>& inner_now, const MotionSetting& s);

}  // namespace kolibri
