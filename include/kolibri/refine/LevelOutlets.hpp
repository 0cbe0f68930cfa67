// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Characteristic outlets on a refined grid (PressureRule::Characteristic): each such
/// face's density is stepped once a step of level 0 by the dense box's formula
/// (outlet_density_step) from the mean velocity leaving across the face over every level's fluid
/// cells of its layer, each cell weighing its share of the face (2^(-(D-1) l) of a level-0
/// cell's); every level's steps within that step read the density (docs/theory.md, "Grid
/// refinement", rule 3).
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/refine/Octree.hpp>
#include <kolibri/stepping/CharacteristicOutlets.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The fluid cells (slot V + place) of level h that lie in face `face`'s layer (the first
/// or last cell of the level's box along the face's axis), among leaf slots [first, end): a
/// rank's own cells. `shift` is the block edge's log2, `dims` the lattice's dimensions,
/// `position(h, t)` cell t's position in the level's cells (RefinedSolver::position).
template <class Position>
std::vector<std::int32_t> level_face_layer(const RefinedLevel& h, int shift, int dims, int face,
                                           std::int64_t first, std::int64_t end,
                                           Position position) {
  const auto axis = std::size_t(face / 2);
  const int at = face % 2 == 0 ? 0 : h.n[axis] - 1;
  std::vector<std::int32_t> out;
  for (std::int64_t s = first; s < end; ++s) {
    if (h.leaf[std::size_t(s)][axis] != at >> shift) continue;  // the blocks at the face only
    for (std::int64_t t = s << (shift * dims); t < (s + 1) << (shift * dims); ++t)
      if (position(h, t)[axis] == at && h.flags[std::size_t(t)] == kLevelFluid)
        out.push_back(std::int32_t(t));
  }
  return out;
}

/// \brief The sum of outgoing_fixed over a level's cells of a face's layer, each cell's velocity
/// from the level's reader `Cells` (LevelCells: the current state, as the developed rule reads
/// it).
template <class Cells>
struct LevelOutletFlux {
  Cells cells;
  Kokkos::View<const std::int32_t*, MemSpace> layer;
  int face = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, std::int64_t& sum) const {
    double rho, u[3];
    if (cells(Index(layer(i)), rho, u)) sum += outgoing_fixed(face, u);
  }
};

/// \brief A refined grid's characteristic outlets: per such face its rule (OutletRule: K a step
/// of level 0, rho_w), each level's cells of its layer on this rank, the kept invariant s and
/// last mean (the dense box's state, two values a face), and the density of the current step of
/// level 0. Every rank keeps every face's state; the sums are integers (fixed point), so the
/// densities are the same on any rank count.
class LevelOutlets {
 public:
  LevelOutlets() = default;
  /// `slots` this rank's leaf slots [first, end) of each level, `position` as level_face_layer
  /// reads it; collective over `comm` (null: one rank).
  template <class Position>
  LevelOutlets(const SolverConfig& cfg, const Octree& tree,
               const std::vector<std::array<std::int64_t, 2>>& slots, const Comm* comm,
               Position position)
      : m_comm(comm), m_dims(tree.dims) {
    for (int f = 0; f < 6; ++f) {
      const FaceBC& bc = cfg.faces[std::size_t(f)];
      m_density[f] = bc.density;
      if (!bc.is_characteristic()) continue;
      Face face;
      face.rule.face = f;
      face.rule.rate = characteristic_relaxation(cfg, std::size_t(f));
      face.rule.density = bc.density;
      double area = 0.0;  // the layer's fluid cells in level-0 cells' shares of the face
      for (const RefinedLevel& h : tree.levels) {
        const auto& range = slots[std::size_t(h.level)];
        const std::vector<std::int32_t> layer =
            level_face_layer(h, tree.shift, tree.dims, f, range[0], range[1], position);
        const std::int64_t count = sum(std::int64_t(layer.size()));
        area += std::ldexp(double(count), -(tree.dims - 1) * h.level);
        face.layer.push_back(to_device(layer, "kolibri::refine_outlet_layer"));
        face.count.push_back(count);
      }
      face.area = area;
      m_faces.push_back(face);
    }
    reset();
  }

  bool active() const { return !m_faces.empty(); }

  /// The faces' densities for the next step of level 0 from each level's current state
  /// (`cells[l]`, LevelCells); collective: one all-reduce of every face's and level's sums.
  template <class Cells>
  void step(const std::vector<Cells>& cells) {
    std::vector<std::int64_t> sums;  // face by face, level by level (levels at the face only)
    for (const Face& face : m_faces)
      for (std::size_t l = 0; l < face.layer.size(); ++l) {
        if (face.count[l] == 0) continue;  // no rank holds a cell of the level at the face
        std::int64_t s = 0;
        const auto& layer = face.layer[l];
        if (layer.extent(0) > 0)
          Kokkos::parallel_reduce(
              "kolibri::refine_outlet_flux",
              Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, Index(layer.extent(0))),
              LevelOutletFlux<Cells>{cells[l], layer, face.rule.face}, s);
        sums.push_back(s);
      }
    if (m_comm) m_comm->sum(sums);
    std::size_t at = 0;
    for (Face& face : m_faces) {
      double mean = 0.0;
      for (std::size_t l = 0; l < face.layer.size(); ++l)
        if (face.count[l] != 0)
          mean += std::ldexp(double(sums[at++]) / kOutletFixedPoint, -(m_dims - 1) * int(l));
      mean = face.area > 0.0 ? mean / face.area : 0.0;
      m_density[face.rule.face] = outlet_density_step(face.rule, mean, face.s, face.last);
    }
  }

  /// The current step's densities on the faces' device form (the others' as set).
  template <class R>
  void apply(DeviceFaces<R>& faces) const {
    for (const Face& face : m_faces) faces.density[face.rule.face] = R(m_density[face.rule.face]);
  }

  /// Each face's kept invariant s and last mean outgoing velocity, in face order (NaN before its
  /// first step): for checkpoints (the dense box's form, CharacteristicOutlets::state).
  std::vector<double> state() const {
    std::vector<double> out;
    for (const Face& face : m_faces) out.push_back(face.s), out.push_back(face.last);
    return out;
  }
  /// Take back state() (restarts); throws std::invalid_argument when it does not fit.
  void set_state(const std::vector<double>& s) {
    if (s.size() != 2 * m_faces.size())
      throw std::invalid_argument("the checkpoint holds " + std::to_string(s.size()) +
                                  " values of characteristic outlets; this run's " +
                                  std::to_string(m_faces.size()) + " faces take " +
                                  std::to_string(2 * m_faces.size()));
    for (std::size_t k = 0; k < m_faces.size(); ++k)
      m_faces[k].s = s[2 * k], m_faces[k].last = s[2 * k + 1];
  }
  /// Forget the state (a new initial state): the next step takes the faces' set densities.
  void reset() {
    for (Face& face : m_faces) face.s = face.last = std::numeric_limits<double>::quiet_NaN();
  }

 private:
  struct Face {
    OutletRule rule;
    std::vector<Kokkos::View<std::int32_t*, MemSpace>> layer;  ///< a level's cells, this rank's
    std::vector<std::int64_t> count;  ///< a level's cells of the layer over all ranks
    double area = 0.0;  ///< the layer's fluid cells over all ranks, in level-0 cells' shares
    double s = 0.0, last = 0.0;
  };
  std::int64_t sum(std::int64_t v) const { return m_comm ? m_comm->sum(v) : v; }
  const Comm* m_comm = nullptr;
  int m_dims = 3;
  std::vector<Face> m_faces;
  double m_density[6] = {1, 1, 1, 1, 1, 1};
};

}  // namespace kolibri
