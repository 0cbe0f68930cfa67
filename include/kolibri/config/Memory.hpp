// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The device memory a configuration needs, estimated before anything is allocated (for
/// `kolibri check` and `kolibri bench --size max`).
#pragma once

#include <kolibri/config/Case.hpp>

namespace kolibri {

/// \brief Bytes of the arithmetic type: 4 in FP32, 8 in FP64.
inline int real_bytes(const SolverConfig& c) { return c.precision == Precision::FP32 ? 4 : 8; }

/// \brief Bytes of one stored value (a population or a moment): 2 with FP16 storage, else the
/// arithmetic precision's (real_bytes).
inline int stored_value_bytes(const SolverConfig& c) {
  return c.storage == StorageKind::FP16 ? 2 : real_bytes(c);
}

/// \brief Bytes a cell of the moment representation's boundary data (MomentWallCells and
/// MomentWallSums: kMomentWallCellBytes and kMomentWallValues a boundary cell, kMomentSegmentBytes
/// a column segment and one more: the last segment's end), counting the
/// cells next to the non-periodic faces (an obstacle's or a [geometry]'s surface cells are not
/// known before the flags are built: not counted).
inline double moment_wall_bytes_per_cell(const SolverConfig& c) {
  const int dims = c.lattice == LatticeKind::D2Q9 ? 2 : 3;
  const int n[3] = {c.nx, c.ny, dims == 3 ? c.nz : 1};
  double cells = 1.0, inner = 1.0;
  for (int d = 0; d < dims; ++d) {
    const int open = int(c.faces[std::size_t(2 * d)].type != FaceType::Periodic) +
                     int(c.faces[std::size_t(2 * d + 1)].type != FaceType::Periodic);
    cells *= n[d];
    inner *= n[d] > open ? n[d] - open : 0;
  }
  const double boundary = cells - inner;
  if (boundary == 0) return 0.0;
  // the whole box's columns (one rank); a rank's ghost layers add at most a segment a column
  const int layers = n[dims - 1], segment = moment_segment_for(dims, layers, c.moment_segment);
  const int segments = (layers + segment - 1) / segment;
  const double columns = cells / layers;
  const int real = real_bytes(c);
  return (boundary * (kMomentWallCellBytes + kMomentWallValues * real) +
          (columns * segments + 1) * kMomentSegmentBytes) /
         cells;
}

/// \brief Device bytes a cell while stepping: the stored state (populations in one or two
/// arrays, or the moments: about 1.5 arrays with moment_arrays = 1, and their boundary data), the
/// flag byte, the wall-link masks where there are walls, obstacles or a [geometry], and the
/// immersed bodies' force field.
inline double device_bytes_per_cell(const SolverConfig& c) {
  const bool moments = c.streaming == Streaming::Moments;
  const int q = c.lattice == LatticeKind::D2Q9    ? (moments ? 6 : 9)
                : c.lattice == LatticeKind::D3Q19 ? (moments ? 10 : 19)
                                                  : (moments ? 10 : 27);
  const int real = real_bytes(c);
  const int value = stored_value_bytes(c);
  const double arrays = c.streaming == Streaming::InPlace ? 1.0
                        : moments && c.moment_arrays == 1 ? 1.5
                                                          : 2.0;
  bool walls = !c.obstacles.empty() || c.geometry.given();
  for (const auto& f : c.faces) walls = walls || f.type != FaceType::Periodic;
  return arrays * q * value + (moments ? moment_wall_bytes_per_cell(c) : 0.0) + 1.0 +
         (walls ? 4.0 : 0.0) + (c.bodies.empty() ? 0.0 : 3.0 * real);
}

/// \brief Device bytes a cell of a refined grid's level (RefinedSolver::bytes_per_cell): both
/// arrays of Q stored values, the flag and the links word, and each block's tables (27 neighbours
/// and coarse slots, 3 coordinates) spread over its cells.
inline double level_bytes_per_cell(const SolverConfig& c) {
  const int q = c.lattice == LatticeKind::D2Q9 ? 9 : c.lattice == LatticeKind::D3Q19 ? 19 : 27;
  const int dims = dimensions(c.lattice);
  const double block_cells = double(1 << (refine_block_shift(dims) * dims));
  return 2.0 * q * stored_value_bytes(c) + 5.0 + (27.0 * 2 + 3) * 4.0 / block_cells;
}

/// \brief Device bytes a cell more while fields are written (density and velocity in FP64).
inline constexpr double kFieldOutputBytesPerCell = 32.0;

}  // namespace kolibri
