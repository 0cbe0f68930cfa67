// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Memory.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/lattice/Lattice.hpp>

#include <cmath>
#include <cstdio>

namespace kolibri {

TileStatistics tile_statistics(const std::vector<std::uint8_t>& solid, const std::array<int, 3>& n,
                               int dims, int edge, const std::array<bool, 3>& periodic) {
  TileStatistics t;
  t.edge = edge, t.dims = dims;
  int m[3] = {1, 1, 1};  // tiles along each axis
  for (int d = 0; d < dims; ++d) m[d] = (n[std::size_t(d)] + edge - 1) / edge;
  t.tiles = std::int64_t(m[0]) * m[1] * m[2];
  std::vector<std::int32_t> fluid(std::size_t(t.tiles), 0);  // fluid cells per tile
  auto tile_of = [&](int tx, int ty, int tz) {
    return std::size_t(tx + std::int64_t(m[0]) * (ty + std::int64_t(m[1]) * tz));
  };
  std::size_t c = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x, ++c)
        if (!solid[c]) {
          ++t.fluid_cells;
          ++fluid[tile_of(x / edge, y / edge, dims == 3 ? z / edge : 0)];
        }
  t.cells = std::int64_t(n[0]) * n[1] * n[2];
  std::int64_t faces = 0, kept_faces = 0;
  for (int tz = 0; tz < m[2]; ++tz)
    for (int ty = 0; ty < m[1]; ++ty)
      for (int tx = 0; tx < m[0]; ++tx) {
        if (fluid[tile_of(tx, ty, tz)] == 0) continue;
        ++t.fluid_tiles;
        for (int d = 0; d < dims; ++d)
          for (int sign : {-1, 1}) {
            int p[3] = {tx, ty, tz};
            p[d] += sign;
            ++faces;
            if (p[d] < 0 || p[d] >= m[d]) {
              if (!periodic[std::size_t(d)]) continue;
              p[d] = (p[d] + m[d]) % m[d];
            }
            if (fluid[tile_of(p[0], p[1], p[2])] > 0) ++kept_faces;
          }
      }
  const double tile_cells = std::pow(double(edge), dims);
  t.porosity = t.cells > 0 ? double(t.fluid_cells) / double(t.cells) : 0.0;
  t.tile_porosity =
      t.fluid_tiles > 0 ? double(t.fluid_cells) / (double(t.fluid_tiles) * tile_cells) : 0.0;
  t.ghost_share = faces > 0 ? double(kept_faces) / double(faces) : 0.0;
  return t;
}

namespace {
/// A velocity set's directions by how many nonzero components they have (0 to 3).
struct DirectionClasses {
  int count[4] = {0, 0, 0, 0};
};
template <class L>
DirectionClasses direction_classes() {
  DirectionClasses k;
  for (int q = 0; q < L::Q; ++q)
    ++k.count[(L::c(q, 0) != 0) + (L::c(q, 1) != 0) + (L::c(q, 2) != 0)];
  return k;
}
}  // namespace

TileOverheads tile_overheads(LatticeKind lattice, const TileStatistics& t, const TileSizes& s) {
  // Propagated directions by how many faces of a tile they cross: q_s one, q_d two, q_t three.
  const DirectionClasses k = lattice == LatticeKind::D2Q9    ? direction_classes<D2Q9>()
                             : lattice == LatticeKind::D3Q19 ? direction_classes<D3Q19>()
                                                             : direction_classes<D3Q27>();
  const int q = k.count[0] + k.count[1] + k.count[2] + k.count[3];
  const int qs = k.count[1], qd = k.count[2], qt = k.count[3];
  const double a = t.edge, phi_t = t.tile_porosity;
  const double n_tn = std::pow(a, t.dims);            // nodes a tile
  const double m_node = q * s.value;                  // eq. 9
  const double b_tile = n_tn * phi_t * 2.0 * m_node;  // eqs. 10, 19
  const double c_gb = double(qs + 2 * qd + 3 * qt) / q;
  const double c_gbi = 2.0 * qs + 5.0 * qd + 10.0 * qt;
  const double tiles_per_kept = t.fluid_tiles > 0 ? double(t.tiles) / double(t.fluid_tiles) : 0.0;
  const double halo_types = std::pow(a + 2.0, t.dims) * s.node_type;
  TileOverheads o;
  if (phi_t <= 0.0) return o;
  o.memory_two_copies =
      (2.0 - phi_t + (s.node_type + tiles_per_kept * s.tile_index / n_tn) / m_node) / phi_t;
  o.memory_ghost_buffers = (1.0 - phi_t + (s.node_type + c_gbi * s.ghost_index / n_tn) / m_node +
                            2.0 * t.ghost_share * c_gb / a) /
                           phi_t;
  o.bandwidth_two_copies = (halo_types + (q - 1) * s.tile_index) / b_tile;
  o.bandwidth_ghost_buffers = (halo_types + c_gbi * s.ghost_index) / b_tile;
  o.memory_dense_two_arrays = t.porosity > 0.0 ? 2.0 / t.porosity - 1.0 : 0.0;
  return o;
}

std::vector<std::uint8_t> domain_solids(const SolverConfig& whole) {
  std::vector<std::uint8_t> solid(std::size_t(whole.cells()), 0);
  std::size_t c = 0;
  for (int z = 0; z < whole.nz; ++z)
    for (int y = 0; y < whole.ny; ++y)
      for (int x = 0; x < whole.nx; ++x, ++c) solid[c] = solid_cell(whole, x, y, z) ? 1 : 0;
  return solid;
}

namespace {
/// 12,345,678: thousands apart (the counts of large boxes).
std::string grouped(std::int64_t v) {
  std::string d = std::to_string(v), out;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}
}  // namespace

GeometryReport geometry_report(const SolverConfig& whole) {
  GeometryReport r;
  const int dims = dimensions(whole.lattice);
  r.tiles = tile_statistics(domain_solids(whole), {whole.nx, whole.ny, whole.nz}, dims,
                            whole.tile_edge > 0 ? whole.tile_edge
                            : dims == 3         ? 4
                                                : 16,
                            whole.periodic_axes());
  TileSizes sizes;
  sizes.value = stored_value_bytes(whole);
  r.model = tile_overheads(whole.lattice, r.tiles, sizes);
  const auto& g = whole.geometry;
  const auto& t = r.tiles;
  char buf[640];
  std::string source;
  if (g.kind == SolidGeometry::Kind::Voxels)
    source = "voxel image " + g.file;
  else if (g.kind == SolidGeometry::Kind::RandomSpheres) {
    std::snprintf(buf, sizeof buf, "%s random spheres of diameter %g, seed %llu",
                  grouped(g.spheres).c_str(), g.diameter, (unsigned long long)g.seed);
    source = buf;
  } else {
    source = "obstacles";
  }
  std::snprintf(buf, sizeof buf, "geometry: %s: porosity %.4f (%s fluid of %s cells)\n",
                source.c_str(), t.porosity, grouped(t.fluid_cells).c_str(),
                grouped(t.cells).c_str());
  r.text = buf;
  const auto& m = r.model;
  std::snprintf(buf, sizeof buf,
                "tiles: %d^%d tiles: %s of %s hold fluid, tile porosity %.4f, ghost-buffer share "
                "%.3f; tomczak2018's overheads over the fluid nodes' minimum (%g-byte values): "
                "memory +%.1f%% two copies, +%.1f%% ghost buffers (dense box, two arrays: "
                "+%.1f%%); bandwidth +%.2f%% two copies, +%.2f%% ghost buffers\n",
                t.edge, t.dims, grouped(t.fluid_tiles).c_str(), grouped(t.tiles).c_str(),
                t.tile_porosity, t.ghost_share, sizes.value, 100.0 * m.memory_two_copies,
                100.0 * m.memory_ghost_buffers, 100.0 * m.memory_dense_two_arrays,
                100.0 * m.bandwidth_two_copies, 100.0 * m.bandwidth_ghost_buffers);
  r.text += buf;
  // layout = "auto": the tiled grid where its kept tiles hold few enough of the box's cells and
  // the run is one the tiles take (the rules: two arrays or in place, one collision launch, no
  // bodies, no refinement). In place follows the two-array threshold: on the bench's samples its
  // tile kernels run at the two-array tile kernel's rate (docs/performance.md).
  const double kept_share = t.porosity / t.tile_porosity;
  const bool automatic = whole.tile_edge == 0 && whole.csoa_alpha == -1;
  // (3D only: the threshold was measured with D3Q19; 2D tiles are not measured yet)
  const bool populations =
      whole.streaming == Streaming::TwoArray || whole.streaming == Streaming::InPlace;
  const bool takes_tiles = populations && whole.bodies.empty() && whole.collision_kernels == 1 &&
                           dims == 3 && whole.refinement.levels <= 1;
  if (automatic && takes_tiles && kept_share <= kAutoTilesKeptShare) r.auto_tile_edge = t.edge;
  const char* copies =
      whole.streaming == Streaming::InPlace ? "one copy, in place" : "two copies, T2C";
  if (whole.refinement.levels > 1) {
    r.text += "tiles: this run steps on the refined grid's blocks (refinement.levels > 1)\n";
  } else if (whole.tile_edge > 0) {
    r.text += std::string("tiles: this run steps on the tiled grid (") + copies + ")\n";
  } else if (r.auto_tile_edge > 0) {
    std::snprintf(buf, sizeof buf,
                  "tiles: layout auto: the kept tiles hold %.1f%% of the box's cells (at most "
                  "%.0f%%): this run steps on the tiled grid (%s)\n",
                  100.0 * kept_share, 100.0 * kAutoTilesKeptShare, copies);
    r.text += buf;
  } else {
    std::snprintf(buf, sizeof buf,
                  "tiles: this run steps on the dense box (the kept tiles hold %.1f%% of the "
                  "box's cells; layout = \"auto\" takes the tiles at %.0f%% or less, layout = "
                  "\"tiles\" always)\n",
                  100.0 * kept_share, 100.0 * kAutoTilesKeptShare);
    r.text += buf;
  }
  return r;
}

}  // namespace kolibri
