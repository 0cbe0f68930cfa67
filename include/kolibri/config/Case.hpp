// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Plain data describing a run: what the input deck holds after validation. No TOML and
/// no Kokkos here, so tests and other codes can build a case in C++ directly.
#pragma once

#include <kolibri/config/Names.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kolibri {

class MeshShape;  // geometry/MeshShape.hpp: a closed mesh placed in the domain

enum class LatticeKind { D2Q9, D3Q19, D3Q27 };
/// Spatial dimensions of a lattice.
constexpr int dimensions(LatticeKind l) { return l == LatticeKind::D2Q9 ? 2 : 3; }
template <>
struct NameTable<LatticeKind> {
  static constexpr std::array entries{Named<LatticeKind>{LatticeKind::D2Q9, "D2Q9"},
                                      Named<LatticeKind>{LatticeKind::D3Q19, "D3Q19"},
                                      Named<LatticeKind>{LatticeKind::D3Q27, "D3Q27"}};
};
/// Collision operators. Mrt: raw-moment MRT (Suga 2015, D3Q27 only); CentralMoment: central-moment
/// MRT with a constant high-order rate; AdaptiveCentralMoment: ACM-MRT; Kbc: KBC entropic
/// collision (the last three on D2Q9 and D3Q27).
enum class CollisionKind {
  Bgk,
  Trt,
  Regularized,
  RecursiveRegularized,
  Mrt,
  CentralMoment,
  AdaptiveCentralMoment,
  Kbc
};
template <>
struct NameTable<CollisionKind> {
  using C = CollisionKind;
  static constexpr std::array entries{Named<C>{C::Bgk, "bgk"},
                                      Named<C>{C::Trt, "trt"},
                                      Named<C>{C::Regularized, "regularized"},
                                      Named<C>{C::RecursiveRegularized, "recursive"},
                                      Named<C>{C::Mrt, "mrt"},
                                      Named<C>{C::CentralMoment, "cm"},
                                      Named<C>{C::AdaptiveCentralMoment, "acm"},
                                      Named<C>{C::Kbc, "kbc"}};
};
/// KBC: which second-order moments the shear part carries (THEORY.md 3.2): the deviatoric
/// stress only, or the full stress with its trace (the bulk mode then relaxes as with BGK).
enum class KbcShear { Deviatoric, WithTrace };
template <>
struct NameTable<KbcShear> {
  static constexpr std::array entries{Named<KbcShear>{KbcShear::Deviatoric, "deviatoric"},
                                      Named<KbcShear>{KbcShear::WithTrace, "with_trace"}};
};
enum class Precision { FP64, FP32 };
template <>
struct NameTable<Precision> {
  static constexpr std::array entries{Named<Precision>{Precision::FP64, "fp64"},
                                      Named<Precision>{Precision::FP32, "fp32"}};
};
/// Population storage: two arrays (pull from one, write the other), one array streamed in
/// place (AA pattern: half the memory, identical results), or the moment representation (two
/// arrays of 6 or 10 moments a cell, streamed through team scratch; regularized operators only).
enum class Streaming { TwoArray, InPlace, Moments };
template <>
struct NameTable<Streaming> {
  static constexpr std::array entries{Named<Streaming>{Streaming::TwoArray, "two_array"},
                                      Named<Streaming>{Streaming::InPlace, "in_place"},
                                      Named<Streaming>{Streaming::Moments, "moments"}};
};
/// Population storage precision: the arithmetic type itself, or FP16 (with FP32 arithmetic).
enum class StorageKind { Same, FP16 };
template <>
struct NameTable<StorageKind> {
  static constexpr std::array entries{Named<StorageKind>{StorageKind::Same, "same"},
                                      Named<StorageKind>{StorageKind::FP16, "fp16"}};
};

/// Boundary condition of one face of the box. A pressure inlet and a pressure outlet follow the
/// same rule (anti-bounce-back at the face's density, grid/DenseGrid.hpp's is_pressure); the name
/// says which way the flow is meant to go. An outflow face holds nothing: the populations that
/// enter across it are those the layer next to it receives (zero normal gradient,
/// GridCells::outflow_source), so waves and vortices leave with little reflection.
enum class FaceType {
  Periodic,
  Wall,
  MovingWall,
  VelocityInlet,
  PressureOutlet,
  PressureInlet,
  Outflow
};
template <>
struct NameTable<FaceType> {
  using F = FaceType;
  static constexpr std::array entries{Named<F>{F::Periodic, "periodic"},
                                      Named<F>{F::Wall, "wall"},
                                      Named<F>{F::MovingWall, "moving_wall"},
                                      Named<F>{F::VelocityInlet, "velocity_inlet"},
                                      Named<F>{F::PressureOutlet, "pressure_outlet"},
                                      Named<F>{F::PressureInlet, "pressure_inlet"},
                                      Named<F>{F::Outflow, "outflow"}};
};

/// Shape of a velocity inlet's velocity across its face (the face's `velocity` is the peak).
enum class InletProfile {
  Uniform,    ///< the same velocity on every cell
  Parabolic,  ///< 4 s (1 - s) along each tangential axis that has walls (plates; a duct's product)
  Pipe,       ///< 1 - r^2 / R^2 in the largest circle of the face (circular pipe), 0 outside
  File,       ///< a value a cell read from FaceBC::profile_file (io/InletPlane.hpp)
};
template <>
struct NameTable<InletProfile> {
  using P = InletProfile;
  static constexpr std::array entries{Named<P>{P::Uniform, "uniform"},
                                      Named<P>{P::Parabolic, "parabolic"},
                                      Named<P>{P::Pipe, "pipe"}, Named<P>{P::File, "file"}};
};

/// How a pressure face (pressure_outlet, pressure_inlet) holds its density (docs/theory.md,
/// "Pressure faces").
enum class PressureRule {
  /// Developed where the run's scheme has it (populations on the dense box, one level), the
  /// anti-bounce-back elsewhere: resolved by make_solver (resolve_pressure_rules), after layout
  /// "auto" has chosen the grid.
  Auto,
  /// The population entering the layer next to the face (the outflow face's rule,
  /// GridCells::outflow_source) plus the density step to the face: exact for a flow developed
  /// along the normal, the face's density at the face.
  Developed,
  /// -f*_opposite + 2 w rho_face (1 + 4.5 (c.u)^2 - 1.5 u^2): the face's density half a cell in
  /// from the face, minus a shear error that grows with the channel's width.
  AntiBounceBack,
  /// The developed rule with the face's density stepped each step from the mean velocity
  /// leaving across it (pressure outlets only): the incoming acoustic wave held at zero and the
  /// density relaxed towards the set one at FaceBC::relaxation a step (a non-reflecting outlet,
  /// stepping/CharacteristicOutlets.hpp, docs/theory.md "Characteristic outlets"). Never chosen
  /// by Auto.
  Characteristic,
};
template <>
struct NameTable<PressureRule> {
  using P = PressureRule;
  static constexpr std::array entries{Named<P>{P::Auto, "auto"},
                                      Named<P>{P::Developed, "developed"},
                                      Named<P>{P::AntiBounceBack, "anti_bounce_back"},
                                      Named<P>{P::Characteristic, "characteristic"}};
};

/// \brief One face: type, wall or inlet velocity (lattice units), outlet density, and for moving
/// walls and inlets the velocity's change in time: the set velocity times time_factor(step).
struct FaceBC {
  FaceType type = FaceType::Periodic;
  std::array<double, 3> velocity{0.0, 0.0, 0.0};
  double density = 1.0;
  InletProfile profile = InletProfile::Uniform;     ///< velocity inlets only
  PressureRule pressure_rule = PressureRule::Auto;  ///< pressure faces only
  /// PressureRule::Characteristic: the rate a step at which the face's density returns to
  /// `density` (0: never, a perfectly non-reflecting face that holds no mean pressure); < 0:
  /// kCharacteristicSigma c_s / L, L the domain's cells along the face's axis
  /// (characteristic_relaxation).
  double relaxation = -1.0;
  std::string profile_file;     ///< InletProfile::File: the file (relative to the deck: resolved)
  std::string profile_dataset;  ///< InletProfile::File, HDF5: the dataset ("profile")
  /// InletProfile::File: the values over the whole domain's face, first tangential axis fastest
  /// (read_inlet_plane; shared by copies of the case).
  std::shared_ptr<const std::vector<double>> profile_values;
  std::int64_t ramp_steps =
      0;                ///< > 0: the velocity grows from 0 as (1 - cos(pi t / ramp_steps)) / 2
  double period = 0.0;  ///< > 0: times offset + amplitude sin(2 pi t / period) (steps)
  double amplitude = 0.0;
  double offset = 1.0;

  bool time_dependent() const { return ramp_steps > 0 || period > 0.0; }
  bool is_pressure() const {
    return type == FaceType::PressureOutlet || type == FaceType::PressureInlet;
  }
  /// A pressure outlet with the characteristic rule (its density changes in time).
  bool is_characteristic() const {
    return type == FaceType::PressureOutlet && pressure_rule == PressureRule::Characteristic;
  }
  /// True where the populations entering across the face come from the layer next to it
  /// (GridCells::outflow_source): outflow faces, and pressure faces with the developed or the
  /// characteristic rule.
  bool from_layer() const {
    return type == FaceType::Outflow ||
           (is_pressure() && (pressure_rule == PressureRule::Developed ||
                              pressure_rule == PressureRule::Characteristic));
  }
  /// The largest time_factor (the ramp never exceeds 1).
  double peak_factor() const { return period > 0.0 ? std::abs(offset) + std::abs(amplitude) : 1.0; }
  /// The largest |profile factor| over the face (1 for the built-in profiles, whose peak is 1).
  double profile_peak() const {
    double peak = profile == InletProfile::File && profile_values ? 0.0 : 1.0;
    if (profile == InletProfile::File && profile_values)
      for (double v : *profile_values) peak = std::max(peak, std::abs(v));
    return peak;
  }
  /// The factor of the set velocity in time step `step` (0 for the first step of a run).
  double time_factor(std::int64_t step) const { return time_factor_at(double(step)); }
  /// The factor at time t in steps (of level 0: a refined grid's finer levels step between).
  double time_factor_at(double t) const {
    constexpr double pi = 3.14159265358979323846;
    double factor = 1.0;
    if (ramp_steps > 0 && t < double(ramp_steps))
      factor = 0.5 * (1.0 - std::cos(pi * t / double(ramp_steps)));
    if (period > 0.0) factor *= offset + amplitude * std::sin(2.0 * pi * t / period);
    return factor;
  }
};

/// Faces in the order x_min, x_max, y_min, y_max, z_min, z_max.
using FaceSet = std::array<FaceBC, 6>;
/// The faces at time t in steps: the moving walls' and inlets' velocities times their time factor
/// (FaceBC::time_factor_at).
inline FaceSet faces_at_time(FaceSet faces, double t) {
  for (FaceBC& f : faces)
    if (f.time_dependent()) {
      const double factor = f.time_factor_at(t);
      for (double& v : f.velocity) v *= factor;
    }
  return faces;
}
/// \brief The six faces' types as the integers the grid's neighbour rule takes
/// (DenseGrid::neighbour, GridCells::outflow_source) and kernels copy: the one conversion from
/// a FaceSet (or SolverConfig::domain_faces) for every caller.
struct FaceTypes {
  int type[6];
  int from_layer[6];  ///< FaceBC::from_layer (from types alone: outflow faces)
  explicit FaceTypes(const std::array<FaceType, 6>& types) {
    for (std::size_t f = 0; f < 6; ++f)
      type[f] = static_cast<int>(types[f]), from_layer[f] = types[f] == FaceType::Outflow;
  }
  explicit FaceTypes(const FaceSet& faces) {
    for (std::size_t f = 0; f < 6; ++f)
      type[f] = static_cast<int>(faces[f].type), from_layer[f] = faces[f].from_layer();
  }
};
/// The faces' names in decks and messages, in FaceSet's order.
inline constexpr std::array<const char*, 6> kFaceNames{"x_min", "x_max", "y_min",
                                                       "y_max", "z_min", "z_max"};
/// The two axes across face `face` in the order x, y, z: a profile file's values run along the
/// first, its rows along the second (InletProfile::File).
inline constexpr std::array<int, 2> face_plane_axes(int face) {
  return {face / 2 == 0 ? 1 : 0, face / 2 == 2 ? 1 : 2};
}
/// True where the faces across `axis` are walls, inlets or outlets (periodic faces come in pairs,
/// so one side tells).
inline bool bounded_axis(const std::array<FaceType, 6>& types, int axis) {
  return types[std::size_t(2 * axis)] != FaceType::Periodic;
}

/// \brief A solid primitive in cell coordinates (cell centres at integer + 0.5... see
/// Geometry.cpp).
struct Obstacle {
  std::string name;  ///< in the loads output; empty: obstacle_name's default
  enum class Shape { Box, Sphere, Cylinder, Mesh } shape = Shape::Box;
  std::array<double, 3> min{0, 0, 0}, max{0, 0, 0};  ///< box corners (cells, inclusive range)
  /// Sphere / cylinder centre; a mesh's bounding-box centre (cells). The torques' point.
  std::array<double, 3> center{0, 0, 0};
  double radius = 0.0;  ///< sphere / cylinder radius (cells)
  int axis = 2;         ///< cylinder axis: 0 x, 1 y, 2 z
  /// A mesh: its file (STL or OBJ), cells per file unit, degrees about x, then y, then z, and
  /// the placed, closed surface (load_mesh_shape; shared by copies of the case).
  std::string file;
  double scale = 1.0;
  std::array<double, 3> rotation{0, 0, 0};
  std::shared_ptr<const MeshShape> mesh;
  /// How its links reflect: halfway bounce-back (the wall midway along every link: a
  /// staircase), or interpolated bounce-back (Bouzidi, Firdaouss & Lallemand 2001, linear: the
  /// wall where the shape crosses the link, second order; docs/theory.md).
  enum class Wall { BounceBack, Interpolated } wall = Wall::BounceBack;
  bool solid_outside = false;  ///< the solid is outside the shape (a pipe, an outer cylinder)
  /// Rotation about `center` (radians per step; a cylinder about its axis, a sphere about any):
  /// the wall moves, the shape stays. Zero: at rest.
  std::array<double, 3> angular_velocity{0, 0, 0};

  bool rotating() const {
    return angular_velocity[0] != 0 || angular_velocity[1] != 0 || angular_velocity[2] != 0;
  }
  /// Its links need a rule of their own (LinkRules): interpolated, or a wall that moves.
  bool link_rules() const { return wall == Wall::Interpolated || rotating(); }
};
/// True where one of the obstacles needs link rules (the same answer on every rank).
inline bool any_link_rules(const std::vector<Obstacle>& obstacles) {
  for (const Obstacle& o : obstacles)
    if (o.link_rules()) return true;
  return false;
}
template <>
struct NameTable<Obstacle::Wall> {
  using W = Obstacle::Wall;
  static constexpr std::array entries{Named<W>{W::BounceBack, "bounce_back"},
                                      Named<W>{W::Interpolated, "interpolated"}};
};

/// \brief Obstacle k's name (0-based k): its own, else "obstacle<k + 1>".
inline std::string obstacle_name(const Obstacle& o, std::size_t k) {
  return o.name.empty() ? "obstacle" + std::to_string(k + 1) : o.name;
}
inline std::string obstacle_name(const std::vector<Obstacle>& all, std::size_t k) {
  return obstacle_name(all[k], k);
}

/// \brief True where the obstacle covers the centre of cell (x, y, z) (src/solver/Geometry.cpp).
bool covers(const Obstacle& o, int x, int y, int z);
/// \brief True where the obstacle's solid holds point x (deck coordinates, cells): `covers` at
/// any point, as the levels of a refined grid ask it at their own cell centres.
bool covers_point(const Obstacle& o, const std::array<double, 3>& x);
/// \brief Where the segment from `a` (not covered) to `b` (covered) first enters the obstacle's
/// solid side, as the fraction t of the way (0 < t <= 1; deck coordinates, cells); 1 where no
/// crossing is found in floating point (b on the surface).
double wall_crossing(const Obstacle& o, const std::array<double, 3>& a,
                     const std::array<double, 3>& b);
/// \brief The velocity of the obstacle's wall at point x (lattice units): angular_velocity x
/// (x - center).
std::array<double, 3> wall_velocity(const Obstacle& o, const std::array<double, 3>& x);

/// \brief Solid cells of a porous sample or any voxel geometry ([geometry] in decks): a raw voxel
/// image, a closed triangle mesh (STL, OBJ) or a random array of (overlapping) spheres generated
/// from a seed. The deck reader resolves each into `solid`, one byte a cell of the whole domain
/// (src/geometry/); the flags mark those cells solid (halfway bounce-back), besides obstacles.
struct SolidGeometry {
  enum class Kind { None, Voxels, Mesh, RandomSpheres } kind = Kind::None;
  std::string file;    ///< voxels: one uint8 a voxel, x fastest, no header; mesh: STL or OBJ
  double scale = 1.0;  ///< mesh: cells per unit of the file
  std::array<double, 3> rotation{0, 0, 0};  ///< mesh: degrees about x, then y, then z
  std::array<double, 3> position{0, 0, 0};  ///< mesh: where the file's origin goes (cells)
  bool solid_outside = false;               ///< mesh: the solid is outside it (a vessel)
  std::array<int, 3> size{0, 0, 0};         ///< voxels: the image's extents
  std::array<int, 3> offset{0, 0, 0};       ///< voxels: the domain cell of the image's first voxel
  std::vector<int> solid_values;  ///< voxels: the solid values (empty: every nonzero value)
  double diameter = 0.0;          ///< random spheres: diameter in cells
  double porosity = 0.0;          ///< random spheres: the porosity to reach (0 < p < 1)
  std::uint64_t seed = 1;         ///< random spheres: the generator's seed
  std::int64_t spheres = 0;       ///< random spheres: how many were placed
  /// Resolved: 1 where solid, x fastest over the whole domain (shared by copies of the case).
  std::shared_ptr<const std::vector<std::uint8_t>> solid;

  bool given() const { return kind != Kind::None; }
  /// True where the domain cell (x, y, z) is solid (cells outside the domain are not).
  bool solid_at(const std::array<int, 3>& n, int x, int y, int z) const {
    if (!solid || x < 0 || y < 0 || z < 0 || x >= n[0] || y >= n[1] || z >= n[2]) return false;
    return (*solid)[std::size_t(x + std::int64_t(n[0]) * (y + std::int64_t(n[1]) * z))] != 0;
  }
};

struct SolverConfig;
/// \brief The one rule for a solid cell of the whole domain (global coordinates): an obstacle
/// covers its centre or [geometry] makes it solid (src/solver/Geometry.cpp). The flags and the
/// tile statistics both ask it.
bool solid_cell(const SolverConfig& c, int x, int y, int z);

/// \brief A body's sample spacing (cells) when its deck gives none: 0.3 for the direct forcing
/// (10 to 20 samples a boundary cell, chen2022's 10 to 100); about a cell for the implicit one,
/// whose coupling system becomes singular and slow to solve with samples much closer than the
/// nodes (docs/theory.md, "Implicit forcing").
inline constexpr double kDirectSampleSpacing = 0.3, kImplicitSampleSpacing = 1.0;

/// \brief A rigid solid immersed in the fluid (immersed boundary): a surface from a primitive or a
/// triangle mesh, sampled with Poisson-disk samples, placed in cell coordinates, optionally moving
/// with a prescribed translation and rotation. In 2D (D2Q9) a body is a closed curve in the x-y
/// plane: a circle (cylinder) or a rectangle outline (box).
struct Body {
  std::string name = "body";
  enum class Shape { Sphere, Cylinder, Box, Torus, Mesh } shape = Shape::Sphere;
  double radius = 0.0;                  ///< sphere, cylinder; torus: major radius (cells)
  double minor_radius = 0.0;            ///< torus tube radius (cells)
  double length = 0.0;                  ///< cylinder length (3D, cells)
  bool caps = true;                     ///< cylinder end caps (3D)
  int axis = 2;                         ///< cylinder and torus axis before rotation: 0 x, 1 y, 2 z
  std::array<double, 3> size{0, 0, 0};  ///< box edge lengths (cells)
  std::string mesh;                     ///< STL or OBJ file (Shape::Mesh)
  double scale = 1.0;                   ///< mesh scale (file units to cells)
  std::array<double, 3> position{
      0, 0, 0};  ///< centre (cells; cell (i, j, k) has its centre at i + 1/2 ...)
  std::array<double, 3> rotation{0, 0, 0};  ///< initial rotation about x, then y, then z (degrees)
  std::array<double, 3> velocity{0, 0, 0};  ///< translation (lattice units)
  std::array<double, 3> angular_velocity{0, 0, 0};  ///< about the centre (radians per step)
  double spacing = kDirectSampleSpacing;            ///< Poisson-disk sample spacing (cells)
  /// How far this body's samples sit inside its surface (cells); unset: the [ib] retraction
  /// (ImmersedSettings::retraction, retraction_of).
  std::optional<double> retraction;
  /// Prescribed oscillation, on top of the steady motion: the centre moves by
  /// amplitude sin(2 pi frequency t + phase); the body turns by |angular_amplitude|
  /// sin(2 pi frequency t + phase) radians about angular_amplitude's direction.
  std::array<double, 3> amplitude{0, 0, 0};          ///< translation amplitude (cells)
  std::array<double, 3> angular_amplitude{0, 0, 0};  ///< rotation amplitude (radians; the axis)
  double frequency = 0.0;                            ///< oscillations per step
  double phase = 0.0;                                ///< radians
  /// Free motion (ib/Motion.hpp): the body moves under the fluid's forces, gravity (ib.gravity)
  /// and wall contact; `velocity` and `angular_velocity` are its initial ones.
  bool free = false;
  double density = 0.0;  ///< a free body's density (lattice units; the fluid's: initial.density)
  bool oscillates() const {
    return amplitude != std::array<double, 3>{0, 0, 0} ||
           angular_amplitude != std::array<double, 3>{0, 0, 0};
  }
};

/// \brief The moment kernel's column segment when moment_segment is 0: 64 layers in 3D, 32 in
/// 2D (the fastest on an H100 at 256^3 and 4096^2: docs/performance.md).
constexpr int default_moment_segment(int dims) { return dims == 3 ? 64 : 32; }
/// \brief The segment length for columns of `layers` layers: `want` (moment_segment) where it is
/// given, else the default, at most the column. On several ranks a column holds two ghost layers
/// too (258 layers: 4 segments of 64 and one of 2); segments shared out evenly (4 of 65) make the
/// interior 3% faster but the border teams half the cells, and lost 4% on 4 H200
/// (docs/performance.md, "NCCL's resources and the moment kernel's segments").
constexpr int moment_segment_for(int dims, int layers, int want) {
  const int length = want > 0 ? want : default_moment_segment(dims);
  return length < layers ? length : layers;
}
/// \brief Values the moment representation keeps a boundary cell for the populations it
/// reflects into itself (MomentWallSums: rho, j and Pi, 1 + 3 + 6).
inline constexpr int kMomentWallValues = 10;
/// \brief Bytes a boundary cell of the moment representation besides those values: its cell
/// index (8) and its slot (4) in MomentWallCells; and a column segment's start (4).
inline constexpr int kMomentWallCellBytes = 12, kMomentSegmentBytes = 4;

/// \brief How immersed boundaries act on the fluid (docs/theory.md, immersed boundaries).
struct ImmersedSettings {
  enum class Spreading { Scatter, Gather } spreading = Spreading::Scatter;
  /// How the samples' forces are found: direct forcing in `iterations` passes, or the implicit
  /// solve of their coupling system (ib/Coupling.hpp; needs Kokkos Kernels), no slip at every
  /// sample at once to `tolerance` within `max_iterations` conjugate-gradient iterations.
  enum class Forcing { Direct, Implicit } forcing = Forcing::Direct;
  /// Multi-direct forcing passes a step (3: the DFG 2D-1 lift enters its band, docs/validation.md)
  int iterations = 3;
  double tolerance = 1e-4;   ///< implicit: |b - M G| <= tolerance |b| (relative residual)
  int max_iterations = 200;  ///< implicit: conjugate-gradient iterations a component at most
  /// implicit: iterations between two looks at the residuals from the host (each look waits for
  /// the device); the forces do not depend on it (a converged component stands still)
  int check_every = 4;
  /// implicit: each solve starts from the last step's forces (else from the first direct-forcing
  /// pass's); a checkpoint keeps them, so a restart continues bit for bit
  bool warm_start = true;
  int block = 4;  ///< sample ordering: l x l x l blocks, Morton order inside (0: as sampled)
  std::int64_t loads_every = 1;  ///< body force and torque CSV cadence (steps)
  bool timing = false;  ///< time the bodies' part of each step (two host synchronisations a step)
  /// Samples moved this far into each body (cells; Breugem 2012): the diffuse interface of the
  /// forcing makes a body act larger than its surface. 0.3 cancels the drag's first-order error
  /// on the DFG 2D-1 cylinder (docs/theory.md, docs/validation.md).
  double retraction = 0.3;
  /// Acceleration of gravity on free bodies (lattice units): their buoyant weight
  /// (density - initial.density) V g. The fluid takes none (its hydrostatic pressure is left out).
  std::array<double, 3> gravity{0, 0, 0};
  double contact_range = 1.0;        ///< walls push free bodies closer than this (cells)
  double contact_stiffness = 100.0;  ///< ... with this many buoyant weights at contact
  /// Free bodies' virtual mass coefficient C (Schwarz et al. 2015; docs/theory.md): C times the
  /// fluid the forcing drags along (inside the body and a 2-cell layer on its surface) joins
  /// the mass and inertia, lagged a step: keeps light and small bodies stable.
  double virtual_mass = 1.0;
};
/// \brief The largest retraction a deck may give (cells), in [ib] or a [[body]].
inline constexpr double kMaxRetraction = 2.0;
/// \brief How far body b's samples sit inside its surface: its own retraction, else [ib]'s.
inline double retraction_of(const Body& b, const ImmersedSettings& ib) {
  return b.retraction.value_or(ib.retraction);
}
template <>
struct NameTable<ImmersedSettings::Spreading> {
  using S = ImmersedSettings::Spreading;
  static constexpr std::array entries{Named<S>{S::Scatter, "scatter"},
                                      Named<S>{S::Gather, "gather"}};
};
template <>
struct NameTable<ImmersedSettings::Forcing> {
  using F = ImmersedSettings::Forcing;
  static constexpr std::array entries{Named<F>{F::Direct, "direct"},
                                      Named<F>{F::Implicit, "implicit"}};
};

/// \brief Initial condition.
struct InitialCondition {
  /// Uniform; the Taylor-Green vortex in the x-y plane; the 3D Taylor-Green vortex (cubic
  /// periodic box); the double shear layer (Minion & Brown 1997: two tanh layers at y = 1/4 and
  /// 3/4 of the box, kappa = 80, a 5% sine perturbation of v); density and velocity read from an
  /// HDF5 field file (`file`).
  enum class Kind {
    Uniform,
    TaylorGreen,
    TaylorGreen3D,
    DoubleShearLayer,
    File
  } kind = Kind::Uniform;
  double density = 1.0;
  std::array<double, 3> velocity{0.0, 0.0, 0.0};  ///< uniform velocity, or the amplitude in [0]
  std::string file;  ///< Kind::File: /density (nz, ny, nx) and /velocity (nz, ny, nx, 3)
};
template <>
struct NameTable<InitialCondition::Kind> {
  using K = InitialCondition::Kind;
  static constexpr std::array entries{
      Named<K>{K::Uniform, "uniform"}, Named<K>{K::TaylorGreen, "taylor_green"},
      Named<K>{K::TaylorGreen3D, "taylor_green_3d"},
      Named<K>{K::DoubleShearLayer, "double_shear_layer"}, Named<K>{K::File, "file"}};
};

/// \brief A region of a refined grid (mahmoud2024; refine/Octree.hpp): the blocks it touches
/// reach at least `level`. A box in the deck's cells (level 0), or a band of `width` cells of
/// that level around the obstacles' surfaces (all, or one by name) or the non-periodic faces.
struct RefinementRegion {
  int level = 1;
  enum class Kind { Box, Band } kind = Kind::Box;
  std::array<double, 3> min{0, 0, 0}, max{0, 0, 0};  ///< Box: corners (cells of level 0)
  std::string around;  ///< Band: "obstacles", "walls", "bodies", "geometry" or a name
  double width = 0.0;  ///< Band: cells of `level`
};
template <>
struct NameTable<RefinementRegion::Kind> {
  using K = RefinementRegion::Kind;
  static constexpr std::array entries{Named<K>{K::Box, "box"}, Named<K>{K::Band, "band"}};
};
/// \brief How a refined grid's level step is launched (`refinement.kernels`): `fused`, each
/// cell gathered (streaming, explosion, coalescence) and collided in one kernel (mahmoud2024's
/// Fig. 4f), or `unfused`, the baseline the fusion is measured against: the same-level
/// streaming, the transfers between levels and the collision in launches of their own, the
/// gathered populations stored and read back between them. The same results, bit for bit.
enum class LevelKernels { Fused, Unfused };
template <>
struct NameTable<LevelKernels> {
  using K = LevelKernels;
  static constexpr std::array entries{Named<K>{K::Fused, "fused"}, Named<K>{K::Unfused, "unfused"}};
};
/// \brief Grid refinement ([refinement]): `levels` levels of cells, each half the width of the
/// one above and stepped twice as often; level 0 is the deck's box. 1: no refinement.
struct Refinement {
  static constexpr int kMaxLevels = 8;
  int levels = 1;
  std::vector<RefinementRegion> regions;
  LevelKernels kernels = LevelKernels::Fused;
  bool active() const { return levels > 1; }
};
/// log2 of a refined grid's block edge in cells: 4^3 in 3D, 8^2 in 2D (64 cells a block).
inline constexpr int refine_block_shift(int dims) { return dims == 3 ? 2 : 3; }

/// \brief Where a solver's box sits in the whole domain (multi-rank runs). The box of nx x ny x
/// nz cells includes the ghost layers; local cell (0, 0, 0) is global cell `origin`. A side with
/// `ghost` = 1 is a one-cell layer of a neighbour rank's cells (filled by the halo exchange,
/// never updated here); its face behaves as an open connection. Default: the whole domain.
struct Subdomain {
  std::array<int, 3> origin{0, 0, 0};
  std::array<int, 3> global{0, 0, 0};  ///< global box; 0 = this box
  std::array<int, 6> ghost{0, 0, 0, 0, 0, 0};
  std::array<FaceType, 6> faces{};  ///< the whole domain's face types (a cut side's own is open)
  bool whole() const { return global == std::array<int, 3>{0, 0, 0}; }
};

/// \brief What the solver needs: lattice, operator, precision, box, viscosity, forcing, faces.
struct SolverConfig {
  LatticeKind lattice = LatticeKind::D2Q9;
  CollisionKind collision = CollisionKind::Bgk;
  Precision precision = Precision::FP64;
  Streaming streaming = Streaming::TwoArray;
  StorageKind storage = StorageKind::Same;
  std::array<int, 2> moment_tile{0, 0};  ///< moment kernel tile across columns (0: default)
  int moment_segment = 0;                ///< moment kernel column segment in layers (0: default)
  int moment_arrays = 2;  ///< moment representation: 2 (two arrays, the fastest) or 1 (one
                          ///< array and the shadow of the tile edges: 29% less memory)
  int csoa_alpha = -1;    ///< population layout: 0 SoA, CSoA(alpha), -1 automatic (csoa_alpha_for)
  bool face_kernels = false;  ///< two arrays: cells next to one face in per-face launches
  int collision_kernels = 1;  ///< two arrays: the interior collision in 1 or 2 launches
  /// The tiled grid (tomczak2018, grid/TiledGrid.hpp): tiles of tile_edge cells a side (one of
  /// kTileEdges; 4 in 3D, 16 in 2D by default in a deck), the all-solid ones dropped; 0: the
  /// dense box.
  int tile_edge = 0;
  int nx = 1, ny = 1, nz = 1;
  double tau = 0.6;               ///< shear relaxation time, nu = (tau - 1/2)/3
  double trt_magic = 3.0 / 16.0;  ///< TRT Lambda
  double bulk_rate = 0.0;  ///< MRT/CM bulk (trace) rate; 0: default (mrt 1.54; cm, acm: 1, monomial
                           ///< basis: the high-order rate)
  bool cm_hermite = true;  ///< cm, acm: central Hermite moments (true) or De Rosis's monomials
  double high_order_rate = 1.0;  ///< CM: rate of the moments of order >= 3
  double acm_viscosity = 5e-4;   ///< ACM: artificial viscosity scale nu_a (lattice units)
  double acm_velocity = 0.0;     ///< ACM: reference speed u_ref (lattice units; must be > 0)
  KbcShear kbc_shear = KbcShear::Deviatoric;  ///< KBC: the moments of the shear part
  std::array<double, 3> force{0, 0, 0};       ///< body force per unit volume (lattice units)
  FaceSet faces{};
  std::vector<Obstacle> obstacles;
  SolidGeometry geometry;    ///< voxel image or random spheres ([geometry])
  std::vector<Body> bodies;  ///< immersed-boundary solids
  ImmersedSettings ib;
  InitialCondition initial;
  Refinement refinement;  ///< levels of a refined grid ([refinement])
  Subdomain part;         ///< multi-rank runs: this rank's piece (local_config() sets it)
  /// Per axis: true where its faces are periodic (of the whole domain).
  std::array<bool, 3> periodic_axes() const {
    const auto types = domain_faces();
    return {!bounded_axis(types, 0), !bounded_axis(types, 1), !bounded_axis(types, 2)};
  }
  /// The face types of the whole domain (of `faces` on one rank, of `part` on several).
  std::array<FaceType, 6> domain_faces() const {
    if (!part.whole()) return part.faces;
    std::array<FaceType, 6> t{};
    for (std::size_t f = 0; f < 6; ++f) t[f] = faces[f].type;
    return t;
  }

  std::int64_t cells() const { return std::int64_t(nx) * ny * nz; }
  double viscosity() const { return (tau - 0.5) / 3.0; }
  /// Extent of the whole domain along axis d.
  int global_n(int d) const {
    return part.whole() ? (d == 0 ? nx : d == 1 ? ny : nz) : part.global[std::size_t(d)];
  }
};

/// \brief A point probe (time series) or an axis-aligned line probe (profiles).
struct Probe {
  std::string name;
  enum class Kind { Point, Line } kind = Kind::Point;
  std::array<int, 3> position{0, 0, 0};  ///< point cell, or the line's start cell
  /// A point between cells (deck `at`, or `at_m` in metres): interpolated from the cell centres
  /// around it (cell i's centre at i + 1/2; the domain spans [0, n] on each axis).
  bool interpolated = false;
  std::array<double, 3> at{0.0, 0.0, 0.0};
  int axis = 0;   ///< line direction
  int every = 0;  ///< points: 0 the run's sampling cadence (steps / 200); lines: 0 at field output
};

/// The rule `face` takes: its own, or for PressureRule::Auto the developed rule, which every
/// scheme has (refined grids since 2026-12-04; their faces took the anti-bounce-back before).
inline PressureRule resolved_pressure_rule(const FaceBC& face) {
  return face.pressure_rule != PressureRule::Auto ? face.pressure_rule : PressureRule::Developed;
}
/// Every face's rule resolved (resolved_pressure_rule): make_solver calls it, so every layer
/// below sees one of the two.
inline void resolve_pressure_rules(SolverConfig& c) {
  for (FaceBC& f : c.faces) f.pressure_rule = resolved_pressure_rule(f);
}

/// Poinsot & Lele's (1992) sigma of the characteristic outlets' default relaxation, sigma c_s / L
/// (Rudy & Strikwerda 1980 found 0.27-0.3 optimal; Poinsot & Lele take 0.25-0.58).
inline constexpr double kCharacteristicSigma = 0.25;
/// The relaxation rate a step of characteristic face `f` (FaceBC::relaxation): its own, or
/// kCharacteristicSigma c_s / L with L the whole domain's cells along its axis.
inline double characteristic_relaxation(const SolverConfig& c, std::size_t f) {
  const FaceBC& face = c.faces[f];
  if (face.relaxation >= 0.0) return face.relaxation;
  return kCharacteristicSigma / std::sqrt(3.0) / double(c.global_n(int(f / 2)));
}

/// FaceBC::from_layer of face `f` with its rule resolved (resolved_pressure_rule), for what is
/// decided before make_solver resolves: the layers a rank must hold, the checkpoint signature.
inline bool from_layer(const SolverConfig& c, std::size_t f) {
  FaceBC face = c.faces[f];
  face.pressure_rule = resolved_pressure_rule(face);
  return face.from_layer();
}

/// \brief SI units of a deck ([units]): the cell width and time step that map the characteristic
/// length and velocity onto their lattice values, and the reference density.
struct Units {
  bool given = false;
  double dx = 1.0;       ///< metres per cell
  double dt = 1.0;       ///< seconds per time step
  double density = 1.0;  ///< kg/m^3 at lattice density 1
  double velocity(double lattice) const { return lattice * dx / dt; }
  /// Pressure in Pa relative to the reference of a lattice pressure (rho - 1)/3.
  double pressure(double lattice) const { return lattice * density * (dx / dt) * (dx / dt); }
  double viscosity(double lattice) const { return lattice * dx * dx / dt; }
};
/// The lattice pressure c_s^2 (rho - 1): relative to the reference density's.
inline double lattice_pressure(double rho) { return (rho - 1.0) / 3.0; }

/// \brief Run control and output.
struct RunConfig {
  std::string name = "kolibri";
  std::string output_dir = "output";
  std::int64_t steps = 1000;
  std::int64_t output_every = 0;          ///< fields every N steps (0: only at the end)
  std::int64_t log_every = 0;             ///< progress lines every N steps (0: automatic, by time)
  std::int64_t obstacle_loads_every = 0;  ///< obstacles.csv rows every N steps (0: steps / 200)
  std::int64_t statistics_every = 0;  ///< statistics.csv rows (kinetic energy, enstrophy); 0: none
  double log_seconds = 10.0;          ///< batch progress cadence when log_every is 0
  std::string progress = "auto";      ///< auto | bar | lines | none
  bool write_fields = true;
  std::int64_t checkpoint_every = 0;    ///< checkpoint every N steps (0: only when stopped early)
  int checkpoint_keep = 2;              ///< complete checkpoints kept (the newest ones)
  std::array<int, 3> grid{0, 0, 0};     ///< MPI process grid; zeros: chosen automatically
  std::string gpu_aware_mpi = "auto";   ///< auto | on | off
  std::string halo_transport = "auto";  ///< auto (NCCL on GPUs where built) | mpi | nccl
  std::string balance = "auto";  ///< auto (fluid with a [geometry], else volume) | volume | fluid
};

/// \brief The auto-tuner (`[tune]`): before the run it times `steps` steps (after `warmup`) of
/// each candidate, one option at a time: the layout (alpha: 0 SoA, else CSoA groups), the IB
/// sample block edge and spreading (with bodies), the boundary kernels (with non-periodic faces).
/// The choice is cached per case and device.
struct TuneConfig {
  bool enabled = false;
  int steps = 20;
  int warmup = 5;
  std::string cache;    ///< cache file; "" = $KOLIBRI_TUNE_CACHE, else $XDG_CACHE_HOME or ~/.cache:
                        ///< kolibri/tune.txt
  bool retune = false;  ///< time again even when the cache has the case
  std::vector<int> alpha{0, 16, 32, 64, 128, 256, 1024};
  std::vector<int> block{2, 4, 8};
};

/// \brief The whole case: solver set-up, derived physics and run control.
struct Case {
  std::string source;  ///< deck path (for messages and the summary)
  SolverConfig solver;
  RunConfig run;
  TuneConfig tune;
  std::vector<Probe> probes;
  Units units;
  double reynolds = 0.0;  ///< derived or given; 0 when not defined
  double u_char = 0.0;    ///< characteristic lattice velocity
  double u_max = 0.0;     ///< fastest wall, inlet, initial or characteristic velocity
  double l_char = 0.0;    ///< characteristic length in cells
};

/// True for a CSoA group size: a power of two from 2 to 2^20 (0, SoA, is not a group).
/// \brief The tile edges the tiled grid's kernel is compiled for (cells a side), per dimension
/// count: 4 and 8 in 3D (64 and 512 cells a tile), 16 and 32 in 2D.
inline constexpr std::array<int, 2> kTileEdges3D{4, 8};
inline constexpr std::array<int, 2> kTileEdges2D{16, 32};
inline constexpr const std::array<int, 2>& tile_edges(int dims) {
  return dims == 3 ? kTileEdges3D : kTileEdges2D;
}

inline bool valid_csoa_alpha(int alpha) {
  return alpha >= 2 && alpha <= (1 << 20) && (alpha & (alpha - 1)) == 0;
}

/// The population layout a configuration runs with: its csoa_alpha, or when automatic (-1)
/// CSoA(32) for populations stored in FP32 or FP64 (5 to 6% faster than SoA on an H100, 94 to 99%
/// of the copy bandwidth) and SoA for FP16 storage and the moment representation (CSoA measured
/// 7 to 12% slower with FP16; docs/performance.md).
inline int csoa_alpha_for(const SolverConfig& c) {
  if (c.csoa_alpha >= 0) return c.csoa_alpha;
  return c.storage == StorageKind::FP16 || c.streaming == Streaming::Moments ? 0 : 32;
}

/// True where the moment representation exists: the regularized operators, native storage.
inline bool supports_moments(CollisionKind c, StorageKind s) {
  return s == StorageKind::Same &&
         (c == CollisionKind::Regularized || c == CollisionKind::RecursiveRegularized);
}
/// True where the lattice supports the operator: raw-moment MRT on D3Q27, central moments on the
/// tensor-product lattices D2Q9 and D3Q27, everything else everywhere.
inline bool supports(LatticeKind l, CollisionKind c) {
  if (c == CollisionKind::Mrt) return l == LatticeKind::D3Q27;
  if (c == CollisionKind::CentralMoment || c == CollisionKind::AdaptiveCentralMoment ||
      c == CollisionKind::Kbc)
    return l != LatticeKind::D3Q19;
  return true;
}
inline constexpr const char* kMrtNeed =
    "collision = \"mrt\" (Suga's raw-moment MRT) is defined on D3Q27; \"cm\", \"acm\" (central "
    "moments) and \"kbc\" (entropic) need "
    "D2Q9 or D3Q27, whose velocities are all combinations of -1, 0, 1";
inline constexpr const char* kMomentsNeed =
    "the moment representation (streaming = \"moments\") stores the moments of a regularized "
    "operator: it needs "
    "collision = \"regularized\" or \"recursive\" and storage = \"same\"";

/// The name of an enum value (its NameTable entry), as decks and output spell it.
inline const char* to_string(LatticeKind e) { return name_of(e); }
inline const char* to_string(CollisionKind e) { return name_of(e); }
inline const char* to_string(Precision e) { return name_of(e); }
inline const char* to_string(Streaming e) { return name_of(e); }
inline const char* to_string(StorageKind e) { return name_of(e); }
inline const char* to_string(KbcShear e) { return name_of(e); }
inline const char* to_string(FaceType e) { return name_of(e); }
inline const char* to_string(InletProfile e) { return name_of(e); }
inline const char* to_string(PressureRule e) { return name_of(e); }
inline const char* to_string(Obstacle::Wall e) { return name_of(e); }
inline const char* to_string(ImmersedSettings::Spreading e) { return name_of(e); }
inline const char* to_string(ImmersedSettings::Forcing e) { return name_of(e); }
inline const char* to_string(RefinementRegion::Kind e) { return name_of(e); }

}  // namespace kolibri
