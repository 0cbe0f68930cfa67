// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/SolidImage.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace kolibri {

namespace {
std::string extents(const std::array<int, 3>& s) {
  return std::to_string(s[0]) + " x " + std::to_string(s[1]) + " x " + std::to_string(s[2]);
}
std::int64_t volume(const std::array<int, 3>& s) { return std::int64_t(s[0]) * s[1] * s[2]; }

/// SplitMix64 (Steele, Lea & Flood 2014): a fixed sequence for a seed on every platform (the
/// standard library's distributions are not).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};
}  // namespace

std::vector<std::uint8_t> read_voxel_image(const SolidGeometry& g, const std::array<int, 3>& n) {
  for (int d = 0; d < 3; ++d)
    if (g.offset[std::size_t(d)] < 0 ||
        g.offset[std::size_t(d)] + g.size[std::size_t(d)] > n[std::size_t(d)])
      throw GeometryError(g.offset == std::array<int, 3>{0, 0, 0} ? "size" : "offset",
                          "the image (" + extents(g.size) + " voxels at offset " +
                              extents(g.offset) + ") does not fit in the domain of " + extents(n) +
                              " cells");
  std::ifstream in(g.file, std::ios::binary | std::ios::ate);
  if (!in)
    throw GeometryError("file",
                        g.file + ": cannot open the voxel image (no such file or no permission)");
  const std::int64_t bytes = std::int64_t(in.tellg()), want = volume(g.size);
  if (bytes != want)
    throw GeometryError("file", g.file + " holds " + std::to_string(bytes) + " bytes; size = [" +
                                    std::to_string(g.size[0]) + ", " + std::to_string(g.size[1]) +
                                    ", " + std::to_string(g.size[2]) + "] needs " +
                                    std::to_string(want) +
                                    " (one uint8 a voxel, x fastest, no header)");
  in.seekg(0);
  std::vector<std::uint8_t> image(std::size_t(want), 0);
  in.read(reinterpret_cast<char*>(image.data()), std::streamsize(want));
  if (!in)
    throw GeometryError("file",
                        g.file + ": read failed after " + std::to_string(in.gcount()) + " bytes");
  bool solid_value[256] = {};
  for (int v = 1; v < 256; ++v) solid_value[v] = g.solid_values.empty();
  for (int v : g.solid_values) {
    if (v < 0 || v > 255)
      throw GeometryError("solid_values",
                          "solid value " + std::to_string(v) + " is no uint8 (expected 0 to 255)");
    solid_value[v] = true;
  }
  std::vector<std::uint8_t> solid(std::size_t(volume(n)), 0);
  std::size_t k = 0;
  for (int z = 0; z < g.size[2]; ++z)
    for (int y = 0; y < g.size[1]; ++y)
      for (int x = 0; x < g.size[0]; ++x, ++k) {
        const std::int64_t c =
            (x + g.offset[0]) +
            std::int64_t(n[0]) * ((y + g.offset[1]) + std::int64_t(n[1]) * (z + g.offset[2]));
        solid[std::size_t(c)] = solid_value[image[k]] ? 1 : 0;
      }
  return solid;
}

std::vector<std::uint8_t> random_spheres(const SolidGeometry& g, const std::array<int, 3>& n,
                                         const std::array<bool, 3>& periodic, int dims,
                                         std::int64_t& spheres) {
  const std::int64_t cells = volume(n);
  std::vector<std::uint8_t> solid(std::size_t(cells), 0);
  std::int64_t fluid = cells;
  const double r = 0.5 * g.diameter;
  const std::int64_t target = std::int64_t(std::floor(g.porosity * double(cells)));
  SplitMix64 rng{g.seed};
  spheres = 0;
  int idle = 0;  // spheres in a row that covered no new cell centre
  while (fluid > target) {
    double c[3] = {0.5, 0.5, 0.5};
    for (int d = 0; d < dims; ++d) c[d] = rng.uniform() * n[std::size_t(d)];
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int d = 0; d < dims; ++d)
      lo[d] = int(std::floor(c[d] - r - 0.5)), hi[d] = int(std::ceil(c[d] + r - 0.5));
    std::int64_t added = 0;
    for (int z = lo[2]; z <= hi[2]; ++z)
      for (int y = lo[1]; y <= hi[1]; ++y)
        for (int x = lo[0]; x <= hi[0]; ++x) {
          const int p[3] = {x, y, z};
          double r2 = 0.0;
          int w[3];
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            const double delta = d < dims ? p[d] + 0.5 - c[d] : 0.0;
            r2 += delta * delta;
            w[d] = p[d];
            const int size = n[std::size_t(d)];
            if (w[d] < 0 || w[d] >= size) {
              if (!periodic[std::size_t(d)]) inside = false;
              w[d] = ((w[d] % size) + size) % size;
            }
          }
          if (!inside || r2 > r * r) continue;
          std::uint8_t& s =
              solid[std::size_t(w[0] + std::int64_t(n[0]) * (w[1] + std::int64_t(n[1]) * w[2]))];
          if (!s) s = 1, ++added;
        }
    ++spheres;
    fluid -= added;
    idle = added ? 0 : idle + 1;
    if (idle == 100000)
      throw GeometryError("diameter", "100000 spheres in a row of diameter " +
                                          std::to_string(g.diameter) +
                                          " covered no new cell centre (a diameter below a cell)");
  }
  return solid;
}

void resolve_geometry(SolidGeometry& g, const std::array<int, 3>& n,
                      const std::array<bool, 3>& periodic, int dims) {
  if (!g.given()) return;
  std::vector<std::uint8_t> solid;
  if (g.kind == SolidGeometry::Kind::Voxels) {
    solid = read_voxel_image(g, n);
  } else if (g.kind == SolidGeometry::Kind::Mesh) {
    TriangleMesh mesh;
    try {
      mesh = read_mesh(g.file);
    } catch (const std::exception& e) {
      throw GeometryError("file", e.what());
    }
    check_closed(mesh, g.file);
    Placement where;
    where.scale = g.scale, where.rotation_deg = g.rotation, where.position = g.position;
    place(mesh, where);
    solid = voxelize(mesh, n);
    if (g.solid_outside)
      for (auto& s : solid) s = s ? 0 : 1;
  } else {
    solid = random_spheres(g, n, periodic, dims, g.spheres);
  }
  if (std::find(solid.begin(), solid.end(), std::uint8_t(0)) == solid.end())
    throw GeometryError(g.kind == SolidGeometry::Kind::RandomSpheres ? "porosity" : "file",
                        "the geometry leaves no fluid cell in the domain of " + extents(n) +
                            " cells (every cell is solid)");
  g.solid = std::make_shared<const std::vector<std::uint8_t>>(std::move(solid));
}

std::vector<std::uint8_t> vessel_geometry(const std::array<int, 3>& n) {
  const double e = std::min({n[0], n[1], n[2]}), tube = e / 8, bend = e / 4, bulge = e / 7;
  const double cx = 0.5 * n[0], cy = 0.5 * n[1], cz = 0.5 * n[2];  // the bend's centre
  std::vector<std::uint8_t> solid(std::size_t(volume(n)), 1);
  std::size_t c = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x, ++c) {
        const double px = x + 0.5 - cx, py = y + 0.5 - cy, pz = z + 0.5 - cz;
        // distance from the centre line: the two straight legs (x = -+bend, y < 0), the half
        // circle (y >= 0)
        const double line =
            py < 0 ? std::fabs(std::fabs(px) - bend) : std::fabs(std::hypot(px, py) - bend);
        const bool in_tube = std::hypot(line, pz) < tube;
        const bool in_bulge = std::hypot(px, py - bend - 0.5 * bulge, pz) < bulge;
        if (in_tube || in_bulge) solid[c] = 0;
      }
  return solid;
}

}  // namespace kolibri
