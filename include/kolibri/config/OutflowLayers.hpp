// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The one rule of how many cell layers a face that reads its layer needs (an outflow
/// face, a developed pressure face: FaceBC::from_layer): its rule reads the populations of the
/// layer next to it (GridCells::outflow_source), so the rank beside it holds at least 2 layers
/// along its axis. The deck's check (one rank: the domain) and choose_grid's
/// (every process grid, cut evenly) ask this function; Decomposition::make checks the slabs as
/// cut, and fluid_cuts keeps them this thick.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/config/Slabs.hpp>

#include <array>
#include <string>

namespace kolibri {

/// Layers the rank next to a face that reads its layer must hold along the face's axis.
inline constexpr int kOutflowLayers = 2;

/// The face in messages: "\"outflow\"" or "\"pressure_outlet\" (pressure_rule = \"auto\": the
/// developed rule, which reads its layer; \"anti_bounce_back\" does not)".
inline std::string layer_face_name(const FaceBC& face) {
  return std::string("\"") + to_string(face.type) + "\"" +
         (face.is_pressure() ? std::string(" (pressure_rule = \"") + to_string(face.pressure_rule) +
                                   "\": the developed rule, which reads its layer; "
                                   "\"anti_bounce_back\" does not)"
                             : "");
}

/// The first face that reads its layer (FaceBC::from_layer) whose rank would hold fewer than
/// kOutflowLayers cell layers along its axis, with `grid` ranks per axis (cut as
/// Decomposition::make cuts them, slab_cells); -1 where there is none.
inline int thin_outflow_face(const SolverConfig& cfg, const std::array<int, 3>& grid) {
  const int n[3] = {cfg.nx, cfg.ny, cfg.nz};
  for (int f = 0; f < 6; ++f) {
    const int d = f / 2, p = grid[std::size_t(d)];
    const int layers = slab_cells(n[d], p, f % 2 == 0 ? 0 : p - 1);  // the rank beside the face
    if (from_layer(cfg, std::size_t(f)) && layers < kOutflowLayers) return f;
  }
  return -1;
}

}  // namespace kolibri
