// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/OutflowLayers.hpp>
#include <kolibri/config/Rules.hpp>

#include <algorithm>

namespace kolibri {

namespace {
std::string quoted(const char* name) { return std::string("\"") + name + "\""; }

/// What a refined grid (refine/) takes for now, and its regions.
std::optional<RuleBreach> refinement_rule(const SolverConfig& c) {
  const Refinement& r = c.refinement;
  if (r.levels < 1 || r.levels > Refinement::kMaxLevels)
    return RuleBreach{"refinement", "levels",
                      "expected 1 to " + std::to_string(Refinement::kMaxLevels) +
                          " levels (1: no refinement), got " + std::to_string(r.levels)};
  if (!r.active()) {
    if (!r.regions.empty())
      return RuleBreach{"refinement", "levels",
                        "[[refinement.region]] tables need refinement.levels > 1"};
    if (r.kernels != LevelKernels::Fused)
      return RuleBreach{"refinement", "kernels",
                        "the level kernels apply to a refined grid: refinement.levels > 1"};
    return std::nullopt;
  }
  const std::string need = "a refined grid runs ";
  if (c.streaming != Streaming::TwoArray)
    return RuleBreach{"model", "streaming",
                      need +
                          "streaming = \"two_array\" for now (in place and the moment "
                          "representation on levels are not built yet), got " +
                          quoted(to_string(c.streaming))};
  if (c.storage != StorageKind::Same)
    return RuleBreach{
        "model", "storage",
        need + "FP32 or FP64 storage (storage = \"same\"), got " + quoted(to_string(c.storage))};
  switch (c.collision) {
    case CollisionKind::RecursiveRegularized:
    case CollisionKind::Mrt:
      return RuleBreach{"model", "collision",
                        need +
                            "bgk, trt, regularized, cm, acm or kbc (the levels are compiled "
                            "for these), got " +
                            quoted(to_string(c.collision))};
    default:
      break;
  }
  if (c.tile_edge != 0)
    return RuleBreach{
        "model", "layout",
        need + "its own blocks: layout = \"auto\" (or \"soa\", \"csoa\"), not \"tiles\""};
  if (c.face_kernels)
    return RuleBreach{"model", "boundary_kernels",
                      need + "one kernel a level: boundary_kernels = \"list\""};
  if (c.collision_kernels != 1)
    return RuleBreach{"model", "collision_kernels", need + "one collision launch a level"};
  const int dims = dimensions(c.lattice), edge = 1 << refine_block_shift(dims);
  const char* axis[3] = {"nx", "ny", "nz"};
  const int n[3] = {c.nx, c.ny, c.nz};
  const auto periodic = c.periodic_axes();
  for (int d = 0; d < dims; ++d)
    if (periodic[std::size_t(d)] && n[d] % edge != 0)
      return RuleBreach{"domain", axis[d],
                        std::string("a refined grid's blocks are ") + std::to_string(edge) +
                            " cells a side: a periodic axis needs a multiple of " +
                            std::to_string(edge) + " cells, got " + std::to_string(n[d])};
  if (r.regions.empty())
    return RuleBreach{"refinement", "levels",
                      "levels = " + std::to_string(r.levels) +
                          " needs [[refinement.region]] tables saying where the finer levels go"};
  for (std::size_t i = 0; i < r.regions.size(); ++i) {
    const RefinementRegion& g = r.regions[i];
    const std::string section = "refinement.region[" + std::to_string(i) + "]";
    if (g.level < 1 || g.level >= r.levels)
      return RuleBreach{section, "level",
                        "expected a level from 1 to refinement.levels - 1 = " +
                            std::to_string(r.levels - 1) + ", got " + std::to_string(g.level)};
    if (g.kind == RefinementRegion::Kind::Box) {
      for (int d = 0; d < dims; ++d)
        if (!(g.max[std::size_t(d)] > g.min[std::size_t(d)]) || g.max[std::size_t(d)] <= 0 ||
            g.min[std::size_t(d)] >= n[d])
          return RuleBreach{section, "max",
                            "expected max > min on every axis, overlapping the box (cells of "
                            "level 0)"};
      continue;
    }
    if (!(g.width > 0))
      return RuleBreach{section, "width", "expected a band width > 0 (cells of its level)"};
    bool known = g.around == "obstacles" || g.around == "walls" || g.around == "bodies" ||
                 g.around == "geometry";
    for (std::size_t k = 0; k < c.obstacles.size() && !known; ++k)
      known = obstacle_name(c.obstacles, k) == g.around;
    for (std::size_t k = 0; k < c.bodies.size() && !known; ++k)
      known = c.bodies[k].name == g.around;
    if (!known)
      return RuleBreach{section, "around",
                        "expected \"obstacles\", \"walls\", \"bodies\", \"geometry\", an "
                        "obstacle's or a body's name, got " +
                            quoted(g.around.c_str())};
    if (g.around == "obstacles" && c.obstacles.empty())
      return RuleBreach{section, "around", "around = \"obstacles\", but the deck has none"};
    if (g.around == "bodies" && c.bodies.empty())
      return RuleBreach{section, "around", "around = \"bodies\", but the deck has no [[body]]"};
    if (g.around == "geometry" && !c.geometry.given())
      return RuleBreach{section, "around", "around = \"geometry\", but the deck has no [geometry]"};
  }
  return std::nullopt;
}
/// What the faces that read the layer next to them (outflow faces, developed and characteristic
/// pressure faces: GridCells::outflow_source) take.
std::optional<RuleBreach> outflow_rule(const SolverConfig& c) {
  const char* axis[3] = {"nx", "ny", "nz"};
  const int n[3] = {c.nx, c.ny, c.nz};
  for (std::size_t f = 0; f < 6; ++f) {
    const FaceBC& face = c.faces[f];
    const std::string section = "boundary." + std::string(kFaceNames[f]);
    const bool characteristic = face.pressure_rule == PressureRule::Characteristic;
    if (characteristic && face.type != FaceType::PressureOutlet)
      return RuleBreach{section, "pressure_rule",
                        "only pressure_outlet faces take the characteristic rule, got " +
                            quoted(to_string(face.type))};
    if (face.relaxation >= 0.0 && !face.is_characteristic())
      return RuleBreach{section, "relaxation",
                        "only a pressure_outlet with pressure_rule = \"characteristic\" takes a "
                        "relaxation"};
    if (characteristic && !(face.relaxation <= 1.0))  // < 0: the default (NaN fails here)
      return RuleBreach{section, "relaxation",
                        "expected a rate a time step from 0 to 1 (0: the density never returns "
                        "to the face's), got " +
                            std::to_string(face.relaxation)};
  }
  if (const int f = thin_outflow_face(c, {1, 1, 1}); f >= 0)  // one rank: the whole domain
    return RuleBreach{
        "domain", axis[f / 2],
        std::string(c.faces[std::size_t(f)].is_pressure() ? "a developed pressure face (boundary."
                                                          : "an outflow face (boundary.") +
            kFaceNames[std::size_t(f)] +
            ") takes the populations of the layer next to it: at least " +
            std::to_string(kOutflowLayers) + " cells along its axis, got " +
            std::to_string(n[f / 2])};
  return std::nullopt;
}
}  // namespace

std::optional<RuleBreach> broken_rule(const SolverConfig& c) {
  const std::string streaming = quoted(to_string(c.streaming));
  if (!supports(c.lattice, c.collision))
    return RuleBreach{"model", "collision",
                      std::string(kMrtNeed) + ", got lattice = " + quoted(to_string(c.lattice))};
  if (c.storage == StorageKind::FP16 && c.precision != Precision::FP32)
    return RuleBreach{
        "model", "storage",
        "fp16 storage needs precision = \"fp32\" (FP32 arithmetic), got precision = " +
            quoted(to_string(c.precision))};
  if (c.streaming == Streaming::Moments && !supports_moments(c.collision, c.storage))
    return RuleBreach{"model", "streaming",
                      std::string(kMomentsNeed) +
                          ", got collision = " + quoted(to_string(c.collision)) +
                          ", storage = " + quoted(to_string(c.storage))};
  if (c.streaming == Streaming::Moments && c.csoa_alpha > 0)
    return RuleBreach{
        "model", "layout",
        "the moment representation stores moments, not populations: the CSoA layout needs "
        "streaming = \"two_array\" or \"in_place\""};
  for (int f = 0; f < 6; ++f) {
    const FaceBC& b = c.faces[std::size_t(f)];
    const auto [t1, t2] = face_plane_axes(f);
    const std::size_t cells = std::size_t(c.global_n(t1)) * std::size_t(c.global_n(t2));
    if (b.profile == InletProfile::File && (!b.profile_values || b.profile_values->size() != cells))
      return RuleBreach{"boundary", std::string(kFaceNames[std::size_t(f)]) + ".profile_file",
                        "profile = \"file\" needs one value a cell of the face (" +
                            std::to_string(cells) + "), got " +
                            std::to_string(b.profile_values ? b.profile_values->size() : 0)};
  }
  if (c.csoa_alpha != -1 && c.csoa_alpha != 0 && !valid_csoa_alpha(c.csoa_alpha))
    return RuleBreach{"model", "csoa_alpha",
                      "expected a power of two (cells a group) from 2 to 2^20, got " +
                          std::to_string(c.csoa_alpha)};
  if (c.collision_kernels != 1 && c.collision_kernels != 2)
    return RuleBreach{"model", "collision_kernels",
                      "expected 1 or 2, got " + std::to_string(c.collision_kernels)};
  if (c.streaming != Streaming::TwoArray && c.face_kernels)
    return RuleBreach{"model", "boundary_kernels",
                      "per-face kernels need streaming = \"two_array\", got " + streaming};
  if (c.streaming != Streaming::TwoArray && c.collision_kernels != 1)
    return RuleBreach{"model", "collision_kernels",
                      "a split collision needs streaming = \"two_array\", got " + streaming};
  if (c.tile_edge != 0) {
    const int dims = dimensions(c.lattice);
    const auto& edges = tile_edges(dims);
    if (std::find(edges.begin(), edges.end(), c.tile_edge) == edges.end())
      return RuleBreach{"model", "tile_edge",
                        "the tiled grid is compiled for tiles of " + std::to_string(edges[0]) +
                            " or " + std::to_string(edges[1]) + " cells a side in " +
                            std::to_string(dims) + "D, got " + std::to_string(c.tile_edge)};
  }
  if (c.tile_edge != 0 && c.streaming == Streaming::Moments)
    return RuleBreach{"model", "layout",
                      "the tiled grid runs streaming = \"two_array\" or \"in_place\" (the moment "
                      "representation on tiles is not built yet), got " +
                          streaming};
  if (c.tile_edge != 0 && c.csoa_alpha > 0)
    return RuleBreach{"model", "layout",
                      "the tiled grid has its own layout (tile-blocked): no CSoA group"};
  if (c.tile_edge != 0 && c.collision_kernels != 1)
    return RuleBreach{
        "model", "collision_kernels",
        "the tiled grid collides in one launch, got " + std::to_string(c.collision_kernels)};
  if (c.tile_edge != 0 && !c.bodies.empty())
    return RuleBreach{"model", "layout",
                      "immersed bodies run on the dense box for now: layout = \"tiles\" takes "
                      "walls, obstacles and [geometry] solids"};
  if (c.moment_arrays != 1 && c.moment_arrays != 2)
    return RuleBreach{"model", "moment_arrays",
                      "expected 1 or 2, got " + std::to_string(c.moment_arrays)};
  if (!c.bodies.empty() && c.streaming == Streaming::Moments &&
      c.collision != CollisionKind::Regularized)
    return RuleBreach{"model", "collision",
                      "immersed bodies in the moment representation (streaming = \"moments\") "
                      "need collision = \"regularized\" (the recursive operator rebuilds a "
                      "cell's populations with the force of its last collision, which the "
                      "bodies' next force replaces), got " +
                          quoted(to_string(c.collision))};
  for (std::size_t i = 0; i < c.bodies.size(); ++i) {
    const Body& b = c.bodies[i];
    const std::string section = "body[" + std::to_string(i) + "]";
    if (!(b.frequency >= 0 && b.frequency <= 0.05))
      return RuleBreach{section, "frequency",
                        "expected oscillations per step in [0, 0.05] (0: none; at higher "
                        "frequencies a step no longer resolves the motion), got " +
                            std::to_string(b.frequency)};
    if (b.oscillates() && b.frequency <= 0)
      return RuleBreach{
          section, "frequency",
          "an oscillating body (amplitude or angular_amplitude) needs a frequency > 0 "
          "(oscillations per step)"};
    if (b.free && (b.oscillates() || b.frequency > 0))
      return RuleBreach{section, "free",
                        "a free body moves under its loads: it takes no prescribed oscillation "
                        "(amplitude, angular_amplitude, frequency)"};
    if (b.free && (b.shape == Body::Shape::Mesh ||
                   (b.shape == Body::Shape::Cylinder && c.lattice != LatticeKind::D2Q9 && !b.caps)))
      return RuleBreach{section, "free",
                        "free motion needs the fluid inside the body: a sphere, capped cylinder, "
                        "box or torus (not a mesh or an open cylinder)"};
    if (b.angular_amplitude != std::array<double, 3>{0, 0, 0} &&
        b.angular_velocity != std::array<double, 3>{0, 0, 0})
      return RuleBreach{
          section, "angular_amplitude",
          "a body either turns steadily (angular_velocity) or oscillates about an axis "
          "(angular_amplitude), not both"};
  }
  if (c.ib.gravity != std::array<double, 3>{0, 0, 0} &&
      std::none_of(c.bodies.begin(), c.bodies.end(), [](const Body& b) { return b.free; }))
    return RuleBreach{"ib", "gravity",
                      "gravity acts on free bodies only (free = true in a [[body]]); a force on "
                      "the fluid is physics.force"};
  if (!c.bodies.empty() && c.ib.forcing == ImmersedSettings::Forcing::Implicit) {
#ifndef KOLIBRI_HAVE_KOKKOS_KERNELS
    return RuleBreach{"ib", "forcing",
                      "\"implicit\" needs Kokkos Kernels, which this build has none of "
                      "(docs/building.md); \"direct\" needs nothing"};
#endif
    if (c.ib.spreading == ImmersedSettings::Spreading::Gather)
      return RuleBreach{"ib", "spreading",
                        "the implicit forcing spreads its solution by scattering: \"gather\" "
                        "belongs to ib.forcing = \"direct\""};
  }
  for (std::size_t i = 0; i < c.obstacles.size(); ++i) {
    const Obstacle& o = c.obstacles[i];
    const std::string section = "obstacle[" + std::to_string(i) + "]";
    if (o.shape == Obstacle::Shape::Mesh && !o.mesh)
      return RuleBreach{section, "file",
                        "a mesh obstacle needs its surface, read and placed (load_mesh_shape)"};
    if (o.link_rules() && c.streaming == Streaming::Moments)
      return RuleBreach{"model", "streaming",
                        "interpolated or rotating obstacle walls (" + section +
                            ") need populations: streaming = \"two_array\" or \"in_place\", got " +
                            streaming};
    if (!o.rotating()) continue;
    if (o.shape == Obstacle::Shape::Box || o.shape == Obstacle::Shape::Mesh)
      return RuleBreach{section, "angular_velocity",
                        std::string(o.shape == Obstacle::Shape::Box ? "a box" : "a mesh") +
                            " cannot rotate in place: only spheres and cylinders rotate (the "
                            "shape stays, its wall moves)"};
    if (o.shape == Obstacle::Shape::Cylinder)
      for (int d = 0; d < 3; ++d)
        if (d != o.axis && o.angular_velocity[std::size_t(d)] != 0)
          return RuleBreach{section, "angular_velocity",
                            "a cylinder rotates about its own axis only (axis " +
                                std::string(1, char('x' + o.axis)) + ")"};
  }
  if (c.collision == CollisionKind::AdaptiveCentralMoment && !(c.acm_velocity > 0))
    return RuleBreach{"model", "acm_velocity",
                      "collision = \"acm\" needs a reference speed > 0: no wall, inlet, initial or "
                      "physics velocity "
                      "is given, so set model.acm_velocity (lattice units)"};
  const char* axis[3] = {"nx", "ny", "nz"};
  const int n[3] = {c.nx, c.ny, c.nz};
  for (int d = 0; d < 3; ++d)
    if (n[d] < 1)
      return RuleBreach{"domain", axis[d], "expected at least 1 cell, got " + std::to_string(n[d])};
  if (c.lattice == LatticeKind::D2Q9 && c.nz != 1)
    return RuleBreach{"domain", "nz",
                      "must be 1 for the 2D lattice D2Q9 (got " + std::to_string(c.nz) + ")"};
  for (int a = 0; a < 3; ++a) {
    const FaceType lo = c.faces[std::size_t(2 * a)].type, hi = c.faces[std::size_t(2 * a + 1)].type;
    if ((lo == FaceType::Periodic) != (hi == FaceType::Periodic))
      return RuleBreach{"boundary",
                        kFaceNames[std::size_t(lo == FaceType::Periodic ? 2 * a + 1 : 2 * a)],
                        std::string("periodic faces come in pairs: ") +
                            kFaceNames[std::size_t(2 * a)] + " is " + to_string(lo) + " but " +
                            kFaceNames[std::size_t(2 * a + 1)] + " is " + to_string(hi)};
  }
  if (const auto breach = outflow_rule(c)) return breach;
  if (const auto breach = refinement_rule(c)) return breach;
  if (!(c.tau > 0.5))
    return RuleBreach{
        "physics", "tau",
        "tau = " + std::to_string(c.tau) + ": tau must be > 0.5 (positive viscosity)"};
  return std::nullopt;
}

}  // namespace kolibri
