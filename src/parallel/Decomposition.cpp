// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/OutflowLayers.hpp>
#include <kolibri/config/Slabs.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Distribution.hpp>

#include <limits>
#include <sstream>
#include <stdexcept>

namespace kolibri {

namespace {
bool periodic(const SolverConfig& cfg, int d) {
  return cfg.faces[std::size_t(2 * d)].type == FaceType::Periodic;
}
}  // namespace

std::array<int, 3> Decomposition::choose_grid(const SolverConfig& cfg, int size) {
  const double n[3] = {double(cfg.nx), double(cfg.ny), double(cfg.nz)};
  const bool two_d = cfg.lattice == LatticeKind::D2Q9;
  std::array<int, 3> best{0, 0, 0};
  double best_cost = std::numeric_limits<double>::infinity();
  for (int pz = 1; pz <= size; ++pz) {
    if (size % pz || (two_d && pz > 1) || pz > cfg.nz) continue;
    for (int py = 1; py <= size / pz; ++py) {
      if ((size / pz) % py || py > cfg.ny) continue;
      const int px = size / pz / py;
      if (px > cfg.nx) continue;
      const int p[3] = {px, py, pz};
      if (thin_outflow_face(cfg, {px, py, pz}) >= 0) continue;
      // Cells on the cut planes of an inner rank: two planes per split axis (one when a
      // non-periodic axis has two ranks); ties go to fewer split axes, then to z, then y.
      double cost = 0.0;
      int split = 0;
      for (int d = 0; d < 3; ++d) {
        if (p[d] == 1) continue;
        const double planes = (p[d] == 2 && !periodic(cfg, d)) ? 1.0 : 2.0;
        cost += planes * n[(d + 1) % 3] * n[(d + 2) % 3] / (p[(d + 1) % 3] * p[(d + 2) % 3]);
        ++split;
      }
      cost *= 1.0 + 1e-3 * split;
      for (int d = 0; d < 3; ++d) cost *= 1.0 + 1e-6 * (2 - d) * (p[d] > 1);
      if (cost < best_cost) best_cost = cost, best = {px, py, pz};
    }
  }
  if (best[0] == 0)
    throw std::invalid_argument(
        std::to_string(size) + " ranks cannot split a " + std::to_string(cfg.nx) + "x" +
        std::to_string(cfg.ny) + "x" + std::to_string(cfg.nz) +
        " box (at most one rank per cell layer, two next to an outflow face)");
  return best;
}

Decomposition Decomposition::make(const SolverConfig& cfg, int size, int rank, std::array<int, 3> grid) {
  Decomposition dc;
  dc.size = size, dc.rank = rank;
  dc.global.n = {cfg.nx, cfg.ny, cfg.nz};
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) grid = choose_grid(cfg, size);
  if (grid[0] * grid[1] * grid[2] != size)
    throw std::invalid_argument("process grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                                std::to_string(grid[2]) + " does not match " + std::to_string(size) + " ranks");
  for (int d = 0; d < 3; ++d)
    if (grid[std::size_t(d)] > dc.global.n[std::size_t(d)])
      throw std::invalid_argument("process grid: " + std::to_string(grid[std::size_t(d)]) + " ranks along " +
                                  "xyz"[d] + " but only " + std::to_string(dc.global.n[std::size_t(d)]) + " cells");
  if (const int f = thin_outflow_face(cfg, grid); f >= 0)
    throw std::invalid_argument(std::string("boundary.") + kFaceNames[std::size_t(f)] +
                                " = \"outflow\": with the process grid " + std::to_string(grid[0]) +
                                "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
                                " the rank next to it holds 1 cell layer along " + "xyz"[f / 2] +
                                "; the face's rule reads " + std::to_string(kOutflowLayers) +
                                ": use fewer ranks along " + "xyz"[f / 2]);
  dc.dims = grid;
  dc.coords = {rank % grid[0], rank / grid[0] % grid[1], rank / (grid[0] * grid[1])};
  for (std::size_t d = 0; d < 3; ++d) {  // near-equal slabs, the first ones one cell larger
    const int n = dc.global.n[d], p = grid[d], c = dc.coords[d];
    dc.mine.n[d] = slab_cells(n, p, c);
    dc.mine.lo[d] = slab_start(n, p, c);
    const bool split = p > 1;
    dc.ghost[2 * d] = split && (c > 0 || periodic(cfg, int(d)));
    dc.ghost[2 * d + 1] = split && (c < p - 1 || periodic(cfg, int(d)));
  }
  for (int k = 0; k < 27; ++k) {
    const auto dir = direction(k);
    std::array<int, 3> c = dc.coords;
    bool ok = k != 13;
    for (std::size_t d = 0; d < 3 && ok; ++d) {
      if (dir[d] == 0) continue;
      if (!dc.ghost[2 * d + (dir[d] > 0 ? 1 : 0)]) ok = false;  // no ghost layer on that side
      c[d] = (c[d] + dir[d] + grid[d]) % grid[d];
    }
    dc.neighbour[std::size_t(k)] = ok ? dc.rank_of(c) : -1;
  }
  return dc;
}

SolverConfig Decomposition::local_config(const SolverConfig& cfg) const {
  SolverConfig l = cfg;
  const auto ext = local_extent();
  l.nx = ext[0], l.ny = ext[1], l.nz = ext[2];
  l.part.global = global.n;
  l.part.ghost = ghost;
  for (std::size_t d = 0; d < 3; ++d) l.part.origin[d] = mine.lo[d] - ghost[2 * d];
  l.part.faces = cfg.domain_faces();
  for (std::size_t f = 0; f < 6; ++f)
    if (ghost[f]) l.faces[f] = FaceBC{};  // an open connection to the neighbour's cells
  return l;
}

std::array<int, 3> parse_grid(const std::string& s) {
  if (s.empty() || s == "auto") return {0, 0, 0};
  std::array<int, 3> g{0, 0, 0};
  std::istringstream is(s);
  char x1 = 0, x2 = 0;
  if (!(is >> g[0] >> x1 >> g[1] >> x2 >> g[2]) || x1 != 'x' || x2 != 'x' || !is.eof() || g[0] < 1 || g[1] < 1 || g[2] < 1)
    throw std::invalid_argument("process grid '" + s + "': expected PXxPYxPZ with positive integers (e.g. 2x2x1) or auto");
  return g;
}

Distribution distribute(const SolverConfig& cfg, const Comm& comm, std::array<int, 3> grid) {
  Distribution d;
  d.dc = Decomposition::make(cfg, comm.size(), comm.rank(), grid);
  for (int r = 0; r < comm.size(); ++r)
    d.boxes.push_back(Decomposition::make(cfg, comm.size(), r, d.dc.dims).mine);
  d.comm = &comm;
  return d;
}

}  // namespace kolibri
