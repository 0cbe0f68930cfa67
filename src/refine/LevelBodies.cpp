// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Memory.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/refine/LevelBodies.hpp>

#include <climits>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
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

bool travels(const Body& b) { return b.free || b.velocity != std::array<double, 3>{0, 0, 0}; }

double travel_reach(const Body& b, const int dims, const ImmersedSettings& ib) {
  return sample_body(b, dims, ib).extent + 2.0 * std::sqrt(double(dims)) + 1.0;
}

double travel_radius(const double reach, const std::array<double, 3>& velocity, const int level) {
  return reach + std::hypot(velocity[0], velocity[1], velocity[2]) * std::ldexp(1.0, level);
}

bool past_wall(const LevelBodyBox& box, const int dims, const int (&p)[3]) {
  bool past = false;
  for (int d = 0; d < dims; ++d) {
    const std::size_t low = std::size_t(2 * d);
    if (p[d] < 0 && !box.wall[low]) return false;
    if (p[d] >= box.n[std::size_t(d)] && !box.wall[low + 1]) return false;
    past = past || p[d] < 0 || p[d] >= box.n[std::size_t(d)];
  }
  return past;
}

std::optional<std::array<int, 3>> cell_outside_level(const LevelBodyBox& box, const int dims,
                                                     const std::array<double, 3>& centre,
                                                     const double radius) {
  int a[3] = {0, 0, 0}, z[3] = {0, 0, 0}, edge[3] = {1, 1, 1};  // the cells' range, inclusive
  const int nb[3] = {box.blocks[0], box.blocks[1], box.blocks[2]};
  const int nc[3] = {box.n[0], box.n[1], box.n[2]};
  for (int d = 0; d < dims; ++d) {
    const double c = centre[std::size_t(d)];
    a[d] = int(std::floor(c - radius - 0.5));
    z[d] = int(std::ceil(c + radius - 0.5));
    edge[d] = box.edge;
  }
  const auto within = [&](const int(&p)[3]) {
    double r2 = 0.0;
    for (int d = 0; d < dims; ++d) {
      const double g = p[d] + 0.5 - centre[std::size_t(d)];
      r2 += g * g;
    }
    return r2 <= radius * radius;
  };
  // Block by block: a block of the box whose cells are all fluid cells of the level holds.
  for (int bz = floor_div(a[2], edge[2]); bz <= floor_div(z[2], edge[2]); ++bz)
    for (int by = floor_div(a[1], edge[1]); by <= floor_div(z[1], edge[1]); ++by)
      for (int bx = floor_div(a[0], edge[0]); bx <= floor_div(z[0], edge[0]); ++bx) {
        const bool inside = bx >= 0 && bx < nb[0] && by >= 0 && by < nb[1] && bz >= 0 && bz < nb[2];
        if (inside && box.whole[std::size_t(cell_in(nb, bx, by, bz))]) continue;
        const int b[3] = {bx, by, bz};
        int from[3], to[3];
        for (int d = 0; d < 3; ++d)
          from[d] = std::max(a[d], b[d] * edge[d]),
          to[d] = std::min(z[d], b[d] * edge[d] + edge[d] - 1);
        for (int w = from[2]; w <= to[2]; ++w)
          for (int y = from[1]; y <= to[1]; ++y)
            for (int x = from[0]; x <= to[0]; ++x) {
              const int p[3] = {x, y, w};
              if (!within(p)) continue;
              const bool in = inside && x < nc[0] && y < nc[1] && w < nc[2];
              if (in ? !box.fluid[std::size_t(cell_in(nc, x, y, w))] : !past_wall(box, dims, p))
                return std::array<int, 3>{x, y, w};
            }
      }
  return std::nullopt;
}

std::optional<std::array<int, 3>> travel_outside(const LevelBodyBox& box, const int dims,
                                                 const BodyState& s, const double reach) {
  return cell_outside_level(box, dims, s.centre, travel_radius(reach, s.velocity, box.level));
}

std::optional<std::string> prescribed_travel_leaves(const LevelBodyBox& box,
                                                    const SolverConfig& cfg,
                                                    const std::int64_t from,
                                                    const std::int64_t to) {
  const int dims = dimensions(cfg.lattice), l = box.level;
  const double k = std::ldexp(1.0, l);  // the level's steps a step of level 0
  std::optional<std::string> first;
  std::int64_t first_step = to;
  for (std::size_t i = 0; i < cfg.bodies.size(); ++i) {
    const Body& deck = cfg.bodies[i];
    if (!travels(deck) || deck.free) continue;
    const Body b = body_at_level(deck, l, box.lo);
    const double reach = travel_reach(b, dims, cfg.ib);
    // Its fastest speed (the level's cells a step of level 0) and the widest radius it checks.
    double a = 0.0;
    for (const double v : b.amplitude) a += v * v;
    const double fastest = (std::hypot(b.velocity[0], b.velocity[1], b.velocity[2]) +
                            2.0 * 3.141592653589793 * std::abs(b.frequency) * std::sqrt(a)) *
                           k;
    const double widest = reach + fastest, margin = 8.0;
    for (std::int64_t step = from; step < std::min(to, first_step);) {
      const BodyState s = body_state(b, double(step << l));
      // Clear of every cell within the widest radius and a margin: the steps in which it moves
      // less than the margin pass (skipped); else this step's own check.
      if (fastest > 0.0 && !cell_outside_level(box, dims, s.centre, widest + margin)) {
        step += std::max<std::int64_t>(1, std::int64_t(std::floor(margin / fastest)));
        continue;
      }
      if (const auto cell = travel_outside(box, dims, s, reach)) {
        std::array<double, 3> centre = s.centre;
        std::array<int, 3> at = *cell;
        for (std::size_t d = 0; d < 3; ++d) centre[d] += box.lo[d], at[d] += box.lo[d];
        first = left_finest_level(i, deck, l, step, centre, at, travel_radius(reach, s.velocity, l),
                                  dims);
        first_step = step;
        break;
      }
      ++step;
    }
  }
  return first;
}

std::string left_finest_level(std::size_t i, const Body& b, const int level,
                              const std::int64_t step, const std::array<double, 3>& centre,
                              const std::array<int, 3>& cell, const double reach, const int dims) {
  const double k = std::ldexp(1.0, -level);
  std::ostringstream os;
  os << "body[" << i << "] (\"" << b.name
     << "\"): a travelling body on a refined grid stays inside the finest level (level " << level
     << "): every cell of that level within " << reach
     << " of its cells of the body's centre must be a fluid cell of the level, but at step " << step
     << " (centre at (" << centre[0] * k << ", " << centre[1] * k;
  if (dims == 3) os << ", " << centre[2] * k;
  os << ") in level-0 cells) level-0 cell (" << int(std::floor(cell[0] * k)) << ", "
     << int(std::floor(cell[1] * k));
  if (dims == 3) os << ", " << int(std::floor(cell[2] * k));
  os << ") is not (an interface, a wall, an obstacle or the box's edge): refine its whole path "
        "([[refinement.region]] type = \"box\", level = "
     << level << ")";
  return os.str();
}

namespace {
bool turns(const Body& b) {
  return b.angular_velocity != std::array<double, 3>{0, 0, 0} ||
         b.angular_amplitude != std::array<double, 3>{0, 0, 0};
}
}  // namespace

namespace {
/// A body's node box [a, z] (inclusive, the level's cells) and the cells of it that must be fluid
/// cells of the level (`needed`, x fastest over m = z - a + 1).
struct BodyNeeds {
  int a[3] = {0, 0, 0}, z[3] = {0, 0, 0}, m[3] = {1, 1, 1};
  std::vector<std::uint8_t> needed;
};

/// The centres a body passes through: its position and, where it oscillates along a line
/// (Body::amplitude), points of that segment at most a quarter cell apart.
std::vector<std::array<double, 3>> swept_centres(const Body& b) {
  double reach = 0.0;
  for (const double a : b.amplitude) reach = std::max(reach, std::abs(a));
  const int steps = int(std::ceil(4.0 * reach));
  std::vector<std::array<double, 3>> centres;
  for (int k = -steps; k <= steps; ++k) {
    std::array<double, 3> c = b.position;
    for (std::size_t d = 0; d < 3 && steps > 0; ++d) c[d] += b.amplitude[d] * double(k) / steps;
    centres.push_back(c);
  }
  return centres;
}

BodyNeeds body_needs(const Body& b, const int dims, const ImmersedSettings& ib) {
  const BodySamples s = sample_body(b, dims, ib);
  BodyNeeds n;
  // The node box of its kernels (ImmersedBoundary::set_poses): the stencils' nodes and the
  // cells they stream from, around the samples' box (a turning body: its bounding sphere),
  // widened by an oscillation's amplitude.
  for (int d = 0; d < dims; ++d) {
    const double c = b.position[std::size_t(d)], a = std::abs(b.amplitude[std::size_t(d)]);
    const double from = turns(b) ? c - s.extent : c + s.box[std::size_t(d)];
    const double to = turns(b) ? c + s.extent : c + s.box[3 + std::size_t(d)];
    const std::array<int, 2> span = node_span(from - a, to + a);
    n.a[d] = span[0];
    n.z[d] = span[1];
    n.m[d] = n.z[d] - n.a[d] + 1;
  }
  // Of those, each sample's stencil nodes and their neighbours (the cells they stream from) at
  // every centre the body passes through (swept_centres); for a turning body every cell within
  // that reach (two cells a direction) of its bounding sphere anywhere on its path.
  n.needed.assign(std::size_t(n.m[0]) * std::size_t(n.m[1]) * std::size_t(n.m[2]), 0);
  const auto mark = [&](const int(&p)[3]) {
    n.needed[std::size_t(cell_in(n.m, p[0] - n.a[0], p[1] - n.a[1], p[2] - n.a[2]))] = 1;
  };
  if (turns(b)) {  // one pass: each cell's distance to the segment its centre runs along
    const double reach = s.extent + 2.0 * std::sqrt(double(dims));
    double a2 = 0.0;
    for (int d = 0; d < dims; ++d) a2 += b.amplitude[std::size_t(d)] * b.amplitude[std::size_t(d)];
    for (int w = n.a[2]; w <= n.z[2]; ++w)
      for (int y = n.a[1]; y <= n.z[1]; ++y)
        for (int x = n.a[0]; x <= n.z[0]; ++x) {
          const int p[3] = {x, y, w};
          double g[3] = {0, 0, 0}, along = 0.0;  // from the position; its part along the path
          for (int d = 0; d < dims; ++d) {
            g[d] = p[d] + 0.5 - b.position[std::size_t(d)];
            along += g[d] * b.amplitude[std::size_t(d)];
          }
          const double k = a2 > 0.0 ? std::clamp(along / a2, -1.0, 1.0) : 0.0;
          double r2 = 0.0;
          for (int d = 0; d < dims; ++d) {
            const double e = g[d] - k * b.amplitude[std::size_t(d)];
            r2 += e * e;
          }
          if (r2 <= reach * reach) mark(p);
        }
    return n;
  }
  for (const std::array<double, 3>& centre : swept_centres(b)) {
    for (const auto& o : s.offsets) {
      int base[3] = {0, 0, 0};
      for (int d = 0; d < dims; ++d)
        base[d] = int(std::floor(centre[std::size_t(d)] + o[std::size_t(d)] - 0.5));
      for (int w = dims == 3 ? -1 : 0; w <= (dims == 3 ? 2 : 0); ++w)
        for (int y = -1; y <= 2; ++y)
          for (int x = -1; x <= 2; ++x) {
            const int p[3] = {base[0] + x, base[1] + y, base[2] + w};
            mark(p);
          }
    }
  }
  return n;
}

/// The refusal of body i (the level's cells: `level`) at cell p of that level.
[[noreturn]] void outside_finest(std::size_t i, const Body& b, int level, int dims,
                                 const int (&p)[3]) {
  const double k = std::ldexp(1.0, -level);
  std::ostringstream os;
  os << "body[" << i << "] (\"" << b.name
     << "\"): an immersed body on a refined grid lies inside the finest level (level " << level
     << "), two of its cells around the samples; level-0 cell (" << int(std::floor(p[0] * k))
     << ", " << int(std::floor(p[1] * k));
  if (dims == 3) os << ", " << int(std::floor(p[2] * k));
  os << ") near it is not a fluid cell of that level: refine around the body "
        "([[refinement.region]] type = \"band\", around = \""
     << b.name << "\", level = " << level << ")";
  throw std::invalid_argument(os.str());
}
/// The refusal where body i's stencils reach a solid cell of the finest level whose level has
/// obstacles' link rules (interpolated or rotating walls): the bodies' kernels on the level's box
/// take the solids with halfway bounce-back only.
[[noreturn]] void beside_link_rules(std::size_t i, const Body& b, int level, int dims,
                                    const int (&p)[3]) {
  const double k = std::ldexp(1.0, -level);
  std::ostringstream os;
  os << "body[" << i << "] (\"" << b.name << "\"): an immersed body on a refined grid comes within "
     << "two cells of its samples of level-0 cell (" << int(std::floor(p[0] * k)) << ", "
     << int(std::floor(p[1] * k));
  if (dims == 3) os << ", " << int(std::floor(p[2] * k));
  os << "), a solid cell of the finest level (level " << level
     << "), whose obstacles have their own link rules (interpolated or rotating walls); the "
        "bodies' kernels there take halfway bounce-back only: keep the body two cells of that "
        "level farther from the obstacles, or give them halfway walls";
  throw std::invalid_argument(os.str());
}
}  // namespace

LevelBodyBox level_body_box(const Octree& tree, const SolverConfig& cfg) {
  LevelBodyBox out;
  if (cfg.bodies.empty() || tree.levels.empty()) return out;
  const RefinedLevel& h = tree.levels.back();
  const int dims = tree.dims, sh = tree.shift, e = tree.edge();
  out.level = h.level;
  std::vector<Body> bodies;
  std::vector<BodyNeeds> needs;  // a travelling body's: none (its reach is checked below)
  int lo[3] = {INT_MAX, INT_MAX, INT_MAX}, hi[3] = {INT_MIN, INT_MIN, INT_MIN};  // inclusive
  bool travelling = false;
  for (std::size_t i = 0; i < cfg.bodies.size(); ++i) {
    bodies.push_back(body_at_level(cfg.bodies[i], h.level, {0, 0, 0}));
    if (travels(cfg.bodies[i])) {
      travelling = true;
      needs.emplace_back();
      continue;
    }
    needs.push_back(body_needs(bodies.back(), dims, cfg.ib));
    for (int d = 0; d < 3; ++d) {  // the node boxes' union
      lo[d] = std::min(lo[d], needs.back().a[d]);
      hi[d] = std::max(hi[d], needs.back().z[d]);
    }
  }
  if (travelling)  // the level's blocks' bounding box
    for (const auto& b : h.leaf)
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], b[std::size_t(d)] << sh);
        hi[d] = std::max(hi[d], ((b[std::size_t(d)] + 1) << sh) - 1);
      }
  for (int d = 0; d < 3; ++d) {
    if (d >= dims) continue;  // lo 0, n 1, one block
    // Whole blocks, inside the level's blocks (the node box's corners may reach past them).
    const int first = std::max(0, (lo[d] >> sh) << sh),
              end = std::min(h.blocks[std::size_t(d)] << sh, ((hi[d] >> sh) + 1) << sh);
    out.lo[std::size_t(d)] = first, out.n[std::size_t(d)] = end - first;
    out.blocks[std::size_t(d)] = (end - first) >> sh;
  }
  // Sides on a wall face of the domain, the box clipped to the domain there: the wall's cells
  // lie past them (a moving wall's velocity the same in every step: the box's faces are fixed).
  out.edge = e;
  const auto wall_face = [](const FaceBC& f) {
    return f.type == FaceType::Wall || (f.type == FaceType::MovingWall && !f.time_dependent());
  };
  for (int d = 0; d < dims; ++d) {
    const std::size_t low = std::size_t(2 * d), axis = std::size_t(d);
    out.wall[low] = out.lo[axis] == 0 && wall_face(cfg.faces[low]);
    if (out.lo[axis] + out.n[axis] >= h.n[axis] && wall_face(cfg.faces[low + 1])) {
      out.wall[low + 1] = true;
      out.n[axis] = h.n[axis] - out.lo[axis];
    }
  }
  // The box's tables: each block's leaf slot, each cell's fluid mark.
  const int nb[3] = {out.blocks[0], out.blocks[1], out.blocks[2]};
  const int nc[3] = {out.n[0], out.n[1], out.n[2]};
  out.slot.assign(std::size_t(nb[0]) * std::size_t(nb[1]) * std::size_t(nb[2]), -1);
  for (std::size_t s = 0; s < h.leaf.size(); ++s) {
    int b[3] = {0, 0, 0};
    bool inside = true;
    for (int d = 0; d < dims; ++d) {
      b[d] = h.leaf[s][std::size_t(d)] - (out.lo[std::size_t(d)] >> sh);
      inside = inside && b[d] >= 0 && b[d] < nb[d];
    }
    if (inside) out.slot[std::size_t(cell_in(nb, b[0], b[1], b[2]))] = std::int32_t(s);
  }
  out.fluid.assign(std::size_t(out.cells()), 0);
  out.whole.assign(out.slot.size(), 1);
  // Solid leaf cells of the level (obstacles, [geometry]): a body may come near them as on a
  // uniform grid, their fluid neighbours bouncing back (body_box_flags), where the level has no
  // obstacles' link rules.
  std::vector<std::uint8_t> solid(out.fluid.size(), 0);
  const bool link_rules = has_wall_rules(h);
  for (int z = 0; z < nc[2]; ++z)
    for (int y = 0; y < nc[1]; ++y)
      for (int x = 0; x < nc[0]; ++x) {
        const std::size_t block = std::size_t(cell_in(nb, x >> sh, y >> sh, z >> sh));
        const std::int32_t s = out.slot[block];
        const int place = (x & (e - 1)) + e * ((y & (e - 1)) + e * (z & (e - 1)));
        const std::uint8_t flag =
            s >= 0 ? h.flags[(std::size_t(s) << (sh * dims)) + std::size_t(place)] : kLevelOutside;
        const bool fluid = flag == kLevelFluid;
        out.fluid[std::size_t(cell_in(nc, x, y, z))] = fluid;
        solid[std::size_t(cell_in(nc, x, y, z))] = flag == kLevelSolid;
        if (!fluid) out.whole[block] = 0;
      }
  // Every needed cell a fluid cell of the box (a cell past the level's blocks is not).
  for (std::size_t i = 0; i < needs.size(); ++i) {
    if (travels(cfg.bodies[i])) {  // its reach at the start (the solver checks every step's)
      const double reach = travel_radius(travel_reach(bodies[i], dims, cfg.ib),
                                         body_state(bodies[i], 0.0).velocity, h.level);
      std::array<double, 3> c = bodies[i].position;
      for (int d = 0; d < 3; ++d) c[std::size_t(d)] -= out.lo[std::size_t(d)];
      if (const auto cell = cell_outside_level(out, dims, c, reach)) {
        const std::array<int, 3> p = {(*cell)[0] + out.lo[0], (*cell)[1] + out.lo[1],
                                      (*cell)[2] + out.lo[2]};
        throw std::invalid_argument(
            left_finest_level(i, cfg.bodies[i], h.level, 0, bodies[i].position, p, reach, dims));
      }
      continue;
    }
    const BodyNeeds& n = needs[i];
    for (int w = n.a[2]; w <= n.z[2]; ++w)
      for (int y = n.a[1]; y <= n.z[1]; ++y)
        for (int x = n.a[0]; x <= n.z[0]; ++x) {
          if (!n.needed[std::size_t(cell_in(n.m, x - n.a[0], y - n.a[1], w - n.a[2]))]) continue;
          const int p[3] = {x, y, w};
          const int q[3] = {x - out.lo[0], y - out.lo[1], w - out.lo[2]};  // the box's cells
          bool in = true;
          for (int d = 0; d < 3; ++d) in = in && q[d] >= 0 && q[d] < nc[d];
          const std::size_t at = in ? std::size_t(cell_in(nc, q[0], q[1], q[2])) : 0;
          if (in && solid[at] && link_rules) beside_link_rules(i, bodies[i], h.level, dims, p);
          const bool held = in ? out.fluid[at] != 0 || solid[at] != 0 : past_wall(out, dims, q);
          if (!held) outside_finest(i, bodies[i], h.level, dims, p);
        }
  }
  return out;
}

std::vector<std::vector<std::int32_t>> rank_held(const Octree& tree, const LevelRanks& cuts,
                                                 const int rank, const LevelBodyBox* box) {
  std::vector<std::vector<std::int32_t>> held = level_held(tree, cuts, rank);
  if (box) hold_slots(held[std::size_t(box->level)], box->slot);
  return held;
}

double level_body_bytes(const LevelBodyBox& box, const SolverConfig& cfg) {
  const double real = real_bytes(cfg);
  const double per_cell = 3.0 * real + 1.25 * (4.0 * real + 4.0 + 8.0) + 1.0;
  return double(box.cells()) * per_cell + double(box.slot.size()) * double(sizeof(std::int32_t));
}

SolverConfig level_body_config(const SolverConfig& cfg, const LevelBodyBox& box) {
  SolverConfig c = cfg;
  c.nx = box.n[0], c.ny = box.n[1], c.nz = box.n[2];
  for (std::size_t f = 0; f < 6; ++f)  // periodic where no body reaches: the box's inside
    c.faces[f] = box.wall[f] ? cfg.faces[f] : FaceBC{};
  c.obstacles.clear();
  c.geometry = SolidGeometry{};
  c.refinement = Refinement{};
  c.part = Subdomain{};
  for (std::size_t d = 0; d < 3; ++d) {  // accelerations: dt^2 / dx
    c.force[d] = cfg.force[d] * std::ldexp(1.0, -box.level);
    c.ib.gravity[d] = cfg.ib.gravity[d] * std::ldexp(1.0, -box.level);
  }
  for (Body& b : c.bodies) b = body_at_level(b, box.level, box.lo);
  return c;
}

}  // namespace kolibri
