// SPDX-License-Identifier: Apache-2.0
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/refine/LevelBodies.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace kolibri {

Body body_at_level(const Body& b, const int level, const std::array<int, 3>& lo) {
  const double k = std::ldexp(1.0, level);
  Body s = b;
  for (std::size_t d = 0; d < 3; ++d) {
    s.position[d] = b.position[d] * k - lo[d];
    s.size[d] = b.size[d] * k;
    s.amplitude[d] = b.amplitude[d] * k;
    s.angular_velocity[d] = b.angular_velocity[d] / k;  // radians per step of the level
  }
  s.radius = b.radius * k, s.minor_radius = b.minor_radius * k, s.length = b.length * k;
  s.scale = b.scale * k;
  s.frequency = b.frequency / k;
  return s;
}

namespace {
bool turns(const Body& b) {
  return b.angular_velocity != std::array<double, 3>{0, 0, 0} ||
         b.angular_amplitude != std::array<double, 3>{0, 0, 0};
}
}  // namespace

LevelBodyBox level_body_box(const Octree& tree, const SolverConfig& cfg) {
  LevelBodyBox out;
  if (cfg.bodies.empty() || tree.levels.empty()) return out;
  const RefinedLevel& h = tree.levels.back();
  const int dims = tree.dims, sh = tree.shift, e = tree.edge();
  out.level = h.level;
  std::unordered_map<std::int64_t, std::size_t> slot;  // block position -> leaf slot
  const auto key = [&](const int(&b)[3]) {
    return std::int64_t(b[0]) +
           std::int64_t(h.blocks[0]) * (std::int64_t(b[1]) + std::int64_t(h.blocks[1]) * b[2]);
  };
  for (std::size_t s = 0; s < h.leaf.size(); ++s) {
    const int b[3] = {h.leaf[s][0], h.leaf[s][1], h.leaf[s][2]};
    slot[key(b)] = s;
  }
  // A fluid leaf cell of the finest level at p (that level's cells)?
  const auto fluid = [&](const int(&p)[3]) {
    for (int d = 0; d < dims; ++d)
      if (p[d] < 0 || p[d] >= h.n[std::size_t(d)]) return false;
    const int b[3] = {p[0] >> sh, p[1] >> sh, dims == 3 ? p[2] >> sh : 0};
    const auto it = slot.find(key(b));
    if (it == slot.end()) return false;
    const int place =
        (p[0] & (e - 1)) + e * ((p[1] & (e - 1)) + (dims == 3 ? e * (p[2] & (e - 1)) : 0));
    return h.flags[(it->second << (sh * dims)) + std::size_t(place)] == kLevelFluid;
  };
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // the union, inclusive
  const std::array<int, 3> origin{0, 0, 0};
  for (std::size_t i = 0; i < cfg.bodies.size(); ++i) {
    const Body b = body_at_level(cfg.bodies[i], h.level, origin);
    const BodySamples s = sample_body(b, dims, cfg.ib);
    // The node box of its kernels (ImmersedBoundary::set_poses): the stencils' nodes and the
    // cells they stream from, around the samples' box (a turning body: its bounding sphere).
    int a[3] = {0, 0, 0}, z[3] = {0, 0, 0}, m[3] = {1, 1, 1};
    for (int d = 0; d < dims; ++d) {
      const double c = b.position[std::size_t(d)];
      const double from = turns(b) ? c - s.extent : c + s.box[std::size_t(d)];
      const double to = turns(b) ? c + s.extent : c + s.box[3 + std::size_t(d)];
      a[d] = int(std::floor(from - 0.5)) - 1;
      z[d] = int(std::floor(to - 0.5)) + 2;
      m[d] = z[d] - a[d] + 1;
    }
    // Of those, the cells that must be fluid cells of the level: each sample's stencil nodes and
    // their neighbours (the cells they stream from); for a turning body every cell within that
    // reach of its bounding sphere (two cells a direction: 2 sqrt(D)).
    const std::size_t box_cells = std::size_t(m[0]) * std::size_t(m[1]) * std::size_t(m[2]);
    std::vector<std::uint8_t> needed(box_cells, 0);
    const auto mark = [&](const int(&p)[3]) {
      needed[std::size_t(cell_in(m, p[0] - a[0], p[1] - a[1], p[2] - a[2]))] = 1;
    };
    if (turns(b)) {
      const double reach = s.extent + 2.0 * std::sqrt(double(dims));
      for (int w = a[2]; w <= z[2]; ++w)
        for (int y = a[1]; y <= z[1]; ++y)
          for (int x = a[0]; x <= z[0]; ++x) {
            const int p[3] = {x, y, w};
            double r2 = 0.0;
            for (int d = 0; d < dims; ++d) {
              const double g = p[d] + 0.5 - b.position[std::size_t(d)];
              r2 += g * g;
            }
            if (r2 <= reach * reach) mark(p);
          }
    } else {
      for (const auto& o : s.offsets) {
        int base[3] = {0, 0, 0};
        for (int d = 0; d < dims; ++d)
          base[d] = int(std::floor(b.position[std::size_t(d)] + o[std::size_t(d)] - 0.5));
        for (int w = dims == 3 ? -1 : 0; w <= (dims == 3 ? 2 : 0); ++w)
          for (int y = -1; y <= 2; ++y)
            for (int x = -1; x <= 2; ++x) {
              const int p[3] = {base[0] + x, base[1] + y, base[2] + w};
              mark(p);
            }
      }
    }
    for (int w = a[2]; w <= z[2]; ++w)
      for (int y = a[1]; y <= z[1]; ++y)
        for (int x = a[0]; x <= z[0]; ++x) {
          const int p[3] = {x, y, w};
          if (!needed[std::size_t(cell_in(m, x - a[0], y - a[1], w - a[2]))] || fluid(p)) continue;
          const double k = std::ldexp(1.0, -h.level);
          std::ostringstream os;
          os << "body[" << i << "] (\"" << b.name
             << "\"): an immersed body on a refined grid lies inside the finest level (level "
             << h.level << "), two of its cells around the samples; level-0 cell ("
             << int(std::floor(x * k)) << ", " << int(std::floor(y * k));
          if (dims == 3) os << ", " << int(std::floor(w * k));
          os << ") near it is not a fluid cell of that level: refine around the body "
                "([[refinement.region]] type = \"band\", around = \""
             << b.name << "\", level = " << h.level << ")";
          throw std::invalid_argument(os.str());
        }
    for (int d = 0; d < 3; ++d) {
      lo[d] = i == 0 ? a[d] : std::min(lo[d], a[d]);
      hi[d] = i == 0 ? z[d] : std::max(hi[d], z[d]);
    }
  }
  for (int d = 0; d < 3; ++d) {
    if (d >= dims) {
      out.lo[std::size_t(d)] = 0, out.n[std::size_t(d)] = 1;
      continue;
    }
    // Whole blocks, inside the level's blocks (the node box's corners may reach past them).
    const int first = std::max(0, (lo[d] >> sh) << sh),
              end = std::min(h.blocks[std::size_t(d)] << sh, ((hi[d] >> sh) + 1) << sh);
    out.lo[std::size_t(d)] = first, out.n[std::size_t(d)] = end - first;
    out.blocks[std::size_t(d)] = (end - first) >> sh;
  }
  // The box's tables: each block's leaf slot, each cell's fluid mark.
  const int nb[3] = {out.blocks[0], out.blocks[1], out.blocks[2]};
  const int nc[3] = {out.n[0], out.n[1], out.n[2]};
  out.slot.assign(std::size_t(nb[0]) * std::size_t(nb[1]) * std::size_t(nb[2]), -1);
  for (int z = 0; z < nb[2]; ++z)
    for (int y = 0; y < nb[1]; ++y)
      for (int x = 0; x < nb[0]; ++x) {
        const int b[3] = {(out.lo[0] >> sh) + x, (out.lo[1] >> sh) + y, (out.lo[2] >> sh) + z};
        const auto it = slot.find(key(b));
        if (it != slot.end())
          out.slot[std::size_t(cell_in(nb, x, y, z))] = std::int32_t(it->second);
      }
  out.fluid.assign(std::size_t(out.cells()), 0);
  for (int z = 0; z < nc[2]; ++z)
    for (int y = 0; y < nc[1]; ++y)
      for (int x = 0; x < nc[0]; ++x) {
        const int p[3] = {out.lo[0] + x, out.lo[1] + y, out.lo[2] + z};
        out.fluid[std::size_t(cell_in(nc, x, y, z))] = fluid(p) ? 1 : 0;
      }
  return out;
}

SolverConfig level_body_config(const SolverConfig& cfg, const LevelBodyBox& box) {
  SolverConfig c = cfg;
  c.nx = box.n[0], c.ny = box.n[1], c.nz = box.n[2];
  for (FaceBC& f : c.faces) f = FaceBC{};  // periodic: the box's cells are all interior
  c.obstacles.clear();
  c.geometry = SolidGeometry{};
  c.refinement = Refinement{};
  c.part = Subdomain{};
  for (std::size_t d = 0; d < 3; ++d) c.force[d] = cfg.force[d] * std::ldexp(1.0, -box.level);
  for (Body& b : c.bodies) b = body_at_level(b, box.level, box.lo);
  return c;
}

}  // namespace kolibri
