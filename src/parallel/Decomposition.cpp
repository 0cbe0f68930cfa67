// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/OutflowLayers.hpp>
#include <kolibri/config/Slabs.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Distribution.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
        " box (at most one rank per cell layer, two next to an outflow face or a developed "
        "pressure face)");
  return best;
}

Balance balance_for(const SolverConfig& cfg, const std::string& balance) {
  if (balance == "fluid") return Balance::Fluid;
  if (balance == "volume") return Balance::Volume;
  return cfg.geometry.given() ? Balance::Fluid : Balance::Volume;
}

AxisCuts Decomposition::even_cuts(const SolverConfig& cfg, const std::array<int, 3>& grid) {
  const int n[3] = {cfg.nx, cfg.ny, cfg.nz};
  AxisCuts cuts;
  for (std::size_t d = 0; d < 3; ++d) {
    for (int c = 0; c < grid[d]; ++c) cuts[d].push_back(slab_start(n[d], grid[d], c));
    cuts[d].push_back(n[d]);
  }
  return cuts;
}

AxisCuts Decomposition::fluid_cuts(const SolverConfig& cfg, const std::array<int, 3>& grid) {
  AxisCuts cuts = even_cuts(cfg, grid);
  if (!cfg.geometry.given() || !cfg.geometry.solid) return cuts;
  const std::array<int, 3> n{cfg.nx, cfg.ny, cfg.nz};
  // The fluid cells of each layer along each axis, in one pass over the solid cells. (The cells
  // of the kept tiles instead, on the tiled grid, cut no better: docs/performance.md.)
  std::array<std::vector<std::int64_t>, 3> layer;
  for (std::size_t d = 0; d < 3; ++d) layer[d].assign(std::size_t(n[d]), 0);
  const std::vector<std::uint8_t>& solid = *cfg.geometry.solid;
  std::size_t i = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x, ++i)
        if (solid[i] == 0)
          ++layer[0][std::size_t(x)], ++layer[1][std::size_t(y)], ++layer[2][std::size_t(z)];
  for (std::size_t d = 0; d < 3; ++d) {
    const int p = grid[d];
    if (p == 1 || p > n[d]) continue;  // make() refuses a grid with more ranks than layers
    std::vector<std::int64_t> cum(std::size_t(n[d]) + 1, 0);  // fluid cells before layer l
    for (int l = 0; l < n[d]; ++l)
      cum[std::size_t(l) + 1] = cum[std::size_t(l)] + layer[d][std::size_t(l)];
    const std::int64_t total = cum.back();
    if (total == 0) continue;
    // The fewest layers a slab may hold: kOutflowLayers beside a face that reads its layer,
    // else one.
    std::vector<int> least(std::size_t(p), 1);
    if (from_layer(cfg, 2 * d)) least.front() = kOutflowLayers;
    if (from_layer(cfg, 2 * d + 1)) least.back() = std::max(least.back(), kOutflowLayers);
    int after = 0;  // the fewest layers the slabs from k on need
    for (const int m : least) after += m;
    if (after > n[d]) continue;  // make() refuses it (the slab beside the face)
    for (int k = 1; k < p; ++k) {
      after -= least[std::size_t(k) - 1];
      const int lo = cuts[d][std::size_t(k) - 1] + least[std::size_t(k) - 1], hi = n[d] - after;
      const double target = double(total) * k / p;
      int at = int(std::lower_bound(cum.begin() + lo, cum.begin() + hi + 1,
                                    std::int64_t(std::ceil(target))) -
                   cum.begin());
      at = std::min(at, hi);
      if (at > lo &&
          target - double(cum[std::size_t(at) - 1]) < double(cum[std::size_t(at)]) - target)
        --at;
      cuts[d][std::size_t(k)] = at;
    }
  }
  return cuts;
}

AxisCuts Decomposition::cuts_for(const SolverConfig& cfg, const std::array<int, 3>& grid,
                                 Balance balance) {
  return balance == Balance::Fluid ? fluid_cuts(cfg, grid) : even_cuts(cfg, grid);
}

Decomposition Decomposition::make(const SolverConfig& cfg, int size, int rank,
                                  std::array<int, 3> grid, const AxisCuts* cuts) {
  Decomposition dc;
  dc.size = size, dc.rank = rank;
  dc.global.n = {cfg.nx, cfg.ny, cfg.nz};
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) grid = choose_grid(cfg, size);
  if (grid[0] * grid[1] * grid[2] != size)
    throw std::invalid_argument("process grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                                std::to_string(grid[2]) + " does not match " + std::to_string(size) + " ranks");
  for (int d = 0; d < 3; ++d)
    if (grid[std::size_t(d)] > dc.global.n[std::size_t(d)])
      throw std::invalid_argument("process grid: " + std::to_string(grid[std::size_t(d)]) +
                                  " ranks along " + "xyz"[d] + " but only " +
                                  std::to_string(dc.global.n[std::size_t(d)]) + " cells");
  dc.dims = grid;
  dc.coords = {rank % grid[0], rank / grid[0] % grid[1], rank / (grid[0] * grid[1])};
  dc.cuts = cuts ? *cuts : even_cuts(cfg, grid);
  for (std::size_t d = 0; d < 3; ++d) {
    const int p = grid[d], c = dc.coords[d];
    const std::vector<int>& at = dc.cuts[d];
    if (int(at.size()) != p + 1 || at.front() != 0 || at.back() != dc.global.n[d] ||
        !std::is_sorted(at.begin(), at.end()) ||
        std::adjacent_find(at.begin(), at.end()) != at.end())
      throw std::logic_error("Decomposition::make: the cuts along " + std::string(1, "xyz"[d]) +
                             " do not cut the axis into the grid's slabs");
    dc.mine.lo[d] = at[std::size_t(c)];
    dc.mine.n[d] = at[std::size_t(c) + 1] - at[std::size_t(c)];
    const bool split = p > 1;
    dc.ghost[2 * d] = split && (c > 0 || periodic(cfg, int(d)));
    dc.ghost[2 * d + 1] = split && (c < p - 1 || periodic(cfg, int(d)));
  }
  for (int f = 0; f < 6; ++f) {  // OutflowLayers.hpp's rule, on the slabs as cut
    const std::vector<int>& at = dc.cuts[std::size_t(f / 2)];
    const std::size_t last = at.size() - 1;
    const int layers = f % 2 == 0 ? at[1] - at[0] : at[last] - at[last - 1];
    if (from_layer(cfg, std::size_t(f)) && layers < kOutflowLayers)
      throw std::invalid_argument(
          std::string("boundary.") + kFaceNames[std::size_t(f)] + " = " +
          layer_face_name(cfg.faces[std::size_t(f)]) + ": with the process grid " +
          std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
          " the rank next to it holds " + std::to_string(layers) + " cell layer along " +
          "xyz"[f / 2] + "; the face's rule reads " + std::to_string(kOutflowLayers) +
          ": use fewer ranks along " + "xyz"[f / 2]);
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

std::vector<std::int64_t> fluid_per_rank(const SolverConfig& cfg, const std::array<int, 3>& dims,
                                         const AxisCuts& cuts) {
  const std::array<int, 3> n{cfg.nx, cfg.ny, cfg.nz};
  std::vector<std::int64_t> fluid(std::size_t(dims[0] * dims[1] * dims[2]), 0);
  if (!cfg.geometry.solid) return fluid;
  std::array<std::vector<int>, 3> slab;  // each layer's slab along each axis
  for (std::size_t d = 0; d < 3; ++d)
    for (int c = 0; c < dims[d]; ++c)
      slab[d].insert(slab[d].end(),
                     std::size_t(cuts[d][std::size_t(c) + 1] - cuts[d][std::size_t(c)]), c);
  const std::vector<std::uint8_t>& solid = *cfg.geometry.solid;
  std::size_t i = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y) {
      const int row = dims[0] * (slab[1][std::size_t(y)] + dims[1] * slab[2][std::size_t(z)]);
      for (int x = 0; x < n[0]; ++x, ++i)
        if (solid[i] == 0) ++fluid[std::size_t(row + slab[0][std::size_t(x)])];
    }
  return fluid;
}

std::string slab_report(const SolverConfig& cfg, const Decomposition& dc) {
  auto spread = [&](const AxisCuts& cuts) {  // the most fluid cells a rank holds over the mean
    const auto fluid = fluid_per_rank(cfg, dc.dims, cuts);
    std::int64_t total = 0, most = 0;
    for (const auto f : fluid) total += f, most = std::max(most, f);
    return total > 0 ? double(most) * double(fluid.size()) / double(total) : 1.0;
  };
  const AxisCuts even = Decomposition::even_cuts(cfg, dc.dims);
  std::ostringstream os;
  os << (dc.cuts == even ? "slabs of near-equal volume" : "slabs of near-equal fluid cells") << ":";
  for (std::size_t d = 0; d < 3; ++d) {
    if (dc.dims[d] == 1) continue;
    os << ' ' << "xyz"[d] << " cut at";
    for (std::size_t k = 1; k + 1 < dc.cuts[d].size(); ++k)
      os << (k > 1 ? ", " : " ") << dc.cuts[d][k];
    os << ';';
  }
  char line[160];
  std::snprintf(line, sizeof line, " the most fluid cells a rank holds: %.3f of the mean",
                spread(dc.cuts));
  os << line;
  if (dc.cuts != even) {
    std::snprintf(line, sizeof line, " (even slabs: %.3f)", spread(even));
    os << line;
  }
  return os.str();
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

std::vector<Decomposition> Decomposition::every_rank(const SolverConfig& cfg, int size,
                                                     std::array<int, 3> grid, Balance balance) {
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) grid = choose_grid(cfg, size);
  const AxisCuts cuts = cuts_for(cfg, grid, balance);
  std::vector<Decomposition> all;
  for (int r = 0; r < size; ++r) all.push_back(make(cfg, size, r, grid, &cuts));
  return all;
}

Distribution distribute(const SolverConfig& cfg, const Comm& comm, std::array<int, 3> grid,
                        Balance balance) {
  Distribution d;
  const std::vector<Decomposition> all = Decomposition::every_rank(cfg, comm.size(), grid, balance);
  d.dc = all[std::size_t(comm.rank())];
  for (const Decomposition& r : all) d.boxes.push_back(r.mine);
  d.comm = &comm;
  return d;
}

}  // namespace kolibri
