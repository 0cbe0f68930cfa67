// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Memory.hpp>
#include <kolibri/core/Backend.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/run/Bench.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <ostream>

namespace kolibri {
namespace {

using Clock = std::chrono::steady_clock;

/// Memory a cell, for sizing `--size max` (device_bytes_per_cell of a case with walls).
double bytes_per_cell(LatticeKind l, PrecisionChoice p, Streaming s, int moment_arrays) {
  SolverConfig c;
  c.lattice = l, c.precision = p.arithmetic, c.storage = p.storage, c.streaming = s;
  c.moment_arrays = moment_arrays > 0 ? moment_arrays : 2;
  c.faces[0].type = FaceType::Wall;
  return device_bytes_per_cell(c);
}

std::string name(PrecisionChoice p) {
  return p.storage == StorageKind::FP16 ? "fp32/16" : to_string(p.arithmetic);
}

std::string slug(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace

void set_bench_case(SolverConfig& c, BenchCase domain, int n, double porosity) {
  const bool two_d = c.lattice == LatticeKind::D2Q9;
  const int top = two_d ? 3 : 5;
  if (two_d) c.faces[4].type = c.faces[5].type = FaceType::Periodic;
  switch (domain) {
    case BenchCase::Periodic:
      return;
    case BenchCase::Porous: {
      c.geometry.kind = SolidGeometry::Kind::RandomSpheres;
      c.geometry.diameter = porous_sphere_diameter(n);
      c.geometry.porosity = porosity;
      c.geometry.seed = 1;
      resolve_geometry(c.geometry, {c.nx, c.ny, c.nz}, c.periodic_axes(), two_d ? 2 : 3);
      c.force = {1e-6, 0.0, 0.0};
      return;
    }
    case BenchCase::Vessel: {
      auto solid =
          std::make_shared<const std::vector<std::uint8_t>>(vessel_geometry({c.nx, c.ny, c.nz}));
      c.geometry.kind = SolidGeometry::Kind::Voxels;
      c.geometry.file = "(the bench's vessel)";
      c.geometry.solid = std::move(solid);
      c.initial.velocity = {0.0, 0.05, 0.0};
      c.force = {0.0, 1e-6, 0.0};
      return;
    }
    case BenchCase::RefinedSphere: {
      // n: the finest level's length (level 2, four cells a level-0 cell).
      c.nx = c.nz = std::max(8, n / 4);
      c.ny = std::max(8, int(std::lround(n * (192.0 / 272.0) / 4.0)));
      if (two_d) c.nz = 1;
      for (int f = 2; f < (two_d ? 4 : 6); ++f) c.faces[std::size_t(f)].type = FaceType::Wall;
      c.faces[0].type = FaceType::VelocityInlet;
      c.faces[0].velocity = {0.05, 0.0, 0.0};
      c.faces[1].type = FaceType::PressureOutlet;
      c.initial.velocity = {0.05, 0.0, 0.0};
      Obstacle o;
      o.name = "sphere";
      o.shape = two_d ? Obstacle::Shape::Cylinder : Obstacle::Shape::Sphere;
      const double r = std::max(1.0, n / 68.0);
      o.center = {0.3 * c.nx, 0.5 * c.ny, two_d ? 0.5 : 0.5 * c.nz};
      o.radius = r;
      c.obstacles.push_back(o);
      c.refinement.levels = 3;
      RefinementRegion wake, near;
      wake.level = 1;
      wake.min = {o.center[0] - 4 * r, o.center[1] - 4 * r, two_d ? 0.0 : o.center[2] - 4 * r};
      wake.max = {o.center[0] + 8 * r, o.center[1] + 4 * r, two_d ? 1.0 : o.center[2] + 4 * r};
      near.level = 2;
      for (int d = 0; d < 3; ++d) {
        near.min[std::size_t(d)] = o.center[std::size_t(d)] - 2.5 * r;
        near.max[std::size_t(d)] = o.center[std::size_t(d)] + 2.5 * r;
      }
      if (two_d) near.min[2] = 0.0, near.max[2] = 1.0;
      c.refinement.regions = {wake, near};
      return;
    }
    case BenchCase::Closed:
      for (int f = 0; f < (two_d ? 4 : 6); ++f) c.faces[std::size_t(f)].type = FaceType::Wall;
      c.faces[std::size_t(top)].type = FaceType::MovingWall;
      c.faces[std::size_t(top)].velocity = {0.05, 0.0, 0.0};
      return;
    case BenchCase::Channel:
    case BenchCase::ChannelOutflow:
    case BenchCase::Sphere:
    case BenchCase::SphereInterpolated:
      for (int f = 2; f < (two_d ? 4 : 6); ++f) c.faces[std::size_t(f)].type = FaceType::Wall;
      c.faces[0].type = FaceType::VelocityInlet;
      c.faces[0].velocity = {0.05, 0.0, 0.0};
      c.faces[1].type =
          domain == BenchCase::ChannelOutflow ? FaceType::Outflow : FaceType::PressureOutlet;
      c.initial.velocity = {0.05, 0.0, 0.0};
      if (domain != BenchCase::Channel && domain != BenchCase::ChannelOutflow) {
        Obstacle o;
        o.name = "sphere";
        o.shape = two_d ? Obstacle::Shape::Cylinder : Obstacle::Shape::Sphere;
        const double mid_y = 0.5 * c.ny, mid_z = two_d ? 0.5 : 0.5 * c.nz;
        o.center = {0.25 * c.nx, mid_y, mid_z};
        o.radius = std::max(1.0, n / 8.0);
        if (domain == BenchCase::SphereInterpolated) o.wall = Obstacle::Wall::Interpolated;
        c.obstacles.push_back(o);
      }
      return;
  }
}

double measure_copy_bandwidth(std::size_t bytes) {
  const std::size_t n = bytes / sizeof(float);
  Kokkos::View<float*, MemSpace> a(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kolibri::bench_copy_a"), n);
  Kokkos::View<float*, MemSpace> b(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kolibri::bench_copy_b"), n);
  Kokkos::deep_copy(a, 1.0f);
  Kokkos::deep_copy(b, a);  // warm-up
  Kokkos::fence();
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    const int k = 10;
    const auto t0 = Clock::now();
    for (int i = 0; i < k; ++i) Kokkos::deep_copy(i % 2 ? a : b, i % 2 ? b : a);
    Kokkos::fence();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * double(n * sizeof(float)) * k / s * 1e-9);
  }
  return best;
}

RateEstimate estimate_rate(const SolverConfig& deck, std::int64_t max_cells, double seconds) {
  SolverConfig c = deck;
  c.obstacles.clear(), c.bodies.clear();
  c.geometry = SolidGeometry{};  // its solid cells belong to the deck's box, not the timed one
  c.part = {};
  c.initial = {};
  c.initial.velocity = {0.02, 0.01, c.nz > 1 ? 0.01 : 0.0};  // never time zeros
  const int long_axes = int(c.nx > 1) + int(c.ny > 1) + int(c.nz > 1);
  const double cells = double(c.cells());
  if (cells > double(max_cells) && long_axes > 0) {  // the deck's proportions, fewer cells
    const double shrink = std::pow(double(max_cells) / cells, 1.0 / long_axes);
    for (int* n : {&c.nx, &c.ny, &c.nz})
      if (*n > 1) *n = std::max(std::min(*n, 4), int(std::lround(*n * shrink)));
  }
  auto s = make_solver(c);
  s->step(2);  // warm-up
  RateEstimate r;
  r.box = {c.nx, c.ny, c.nz};
  double secs = 0.0;
  for (std::int64_t batch = 2; secs < seconds; batch = std::min<std::int64_t>(2 * batch, 500)) {
    const auto t0 = Clock::now();
    s->step(batch);
    secs += std::chrono::duration<double>(Clock::now() - t0).count();
    r.steps += batch;
  }
  r.mlups = double(c.cells()) * double(r.steps) / secs * 1e-6;
  return r;
}

int run_bench(const BenchOptions& o, std::ostream& out) {
  const BackendInfo bi = backend_info();
  const std::size_t free0 = device_free_memory();
  const std::size_t copy_bytes = std::min<std::size_t>(std::size_t(1) << 30, free0 / 8);
  const double copy_gbs = measure_copy_bandwidth(copy_bytes);
  char line[256];
  out << "kolibri bench: " << bi.device << " (" << bi.vendor << ", " << bi.execution_space
      << "), Kokkos " << bi.kokkos_version << "\n";
  std::snprintf(
      line, sizeof line,
      "device copy bandwidth (read + write): %.1f GB/s over 2 x %.0f MiB; free memory %.1f GiB\n",
      copy_gbs, double(copy_bytes) / (1 << 20), double(free0) / (1 << 30));
  out << line;
  std::snprintf(line, sizeof line, "%-6s %-12s %-5s %-10s %-16s %6s %12s %10s %9s %8s %8s\n", "lattice",
                "collision", "prec", "streaming", "kernels", "n", "MLUPS", "B/update", "GB/s", "of copy",
                "B/cell");
  out << line << std::flush;

  std::vector<BenchResult> results;
  struct Spec {
    BenchCase domain;
    LatticeKind lat;
    PrecisionChoice prec;
    CollisionKind col;
    Streaming str;
    int size, alpha, split;
    bool per_face;
    int tile;    // the tiled grid's edge; 0: the dense box
    int arrays;  // moments: 1 or 2; 0 for populations
    double porosity;             // porous: the geometry's target; 0 otherwise
    LevelKernels level_kernels;  // refined: fused or the unfused baseline
  };
  std::vector<Spec> specs;  // the cases, in table order
  for (const auto domain : o.cases)
    for (const auto lat : o.lattices)
      for (const auto prec : o.precisions)
        for (const auto col : o.collisions)
          for (const auto str : o.streamings)
            for (const int size : o.sizes)
              for (const int alpha : o.layouts)
                for (const int split : o.collision_kernels)
                  for (const bool per_face : o.face_kernels)
                    for (const int arrays : o.moment_arrays)
                      for (const int tile : o.tile_edges) {
                        if ((split != 1 || per_face) && str != Streaming::TwoArray)
                          continue;  // two-array kernel options
                        if (tile > 0 && (alpha > 0 || split != 1 || str == Streaming::Moments))
                          continue;      // tiles: their own layout, one launch, populations
                        if (tile > 0) {  // the tile kernel's compiled edges for this lattice
                          const auto& edges = tile_edges(dimensions(lat));
                          if (std::find(edges.begin(), edges.end(), tile) == edges.end()) continue;
                        }
                        if (alpha > 0 && str == Streaming::Moments)
                          continue;  // population layouts only
                        if (per_face && domain == BenchCase::Periodic)
                          continue;  // no faces in a periodic box
                        // the moment representation exists for the regularized operators, in native
                        // storage
                        if (str == Streaming::Moments && !supports_moments(col, prec.storage))
                          continue;
                        if (!supports(lat, col)) continue;
                        if (domain == BenchCase::SphereInterpolated && str == Streaming::Moments)
                          continue;  // link rules: populations only
                        if (domain == BenchCase::RefinedSphere &&
                            (str != Streaming::TwoArray || prec.storage != StorageKind::Same ||
                             col == CollisionKind::RecursiveRegularized ||
                             col == CollisionKind::Mrt || alpha > 0 || split != 1 || per_face ||
                             tile > 0 || size <= 0))
                          continue;  // what refined grids run (config/Rules.hpp), given sizes

                        if (str != Streaming::Moments && arrays != o.moment_arrays.front())
                          continue;  // once
                        for (const double porosity :
                             domain == BenchCase::Porous ? o.porosities : std::vector<double>{0.0})
                          for (const LevelKernels kernels :
                               domain == BenchCase::RefinedSphere
                                   ? o.level_kernels
                                   : std::vector<LevelKernels>{LevelKernels::Fused})
                            specs.push_back({domain, lat, prec, col, str, size, alpha, split,
                                             per_face, tile, str == Streaming::Moments ? arrays : 0,
                                             porosity, kernels});
                      }
  for (const auto& [domain, lat, prec, col, str, size, alpha, split, per_face, tile, arrays,
                    porosity, level_kernels] : specs) {
    int n = size;
    const bool refined = domain == BenchCase::RefinedSphere;
    if (n <= 0) {
      const double cells =
          o.memory_fraction * double(device_free_memory()) / bytes_per_cell(lat, prec, str, arrays);
      n = int(std::floor(std::cbrt(cells)));
      n -= n % 8;
    }
    if (!refined && double(n) * n * n * bytes_per_cell(lat, prec, str, arrays) >
                        0.95 * double(device_free_memory())) {
      out << "skip " << to_string(lat) << " " << name(prec).c_str() << " n=" << n
          << ": does not fit\n";
      continue;
    }
    SolverConfig c;
    c.lattice = lat, c.collision = col, c.precision = prec.arithmetic, c.storage = prec.storage;
    c.streaming = str;
    c.moment_tile = o.moment_tile;
    c.moment_segment = o.moment_segment;
    if (arrays > 0) c.moment_arrays = arrays;
    c.nx = c.ny = c.nz = n;
    if (lat == LatticeKind::D2Q9) c.nx = c.ny = int(std::sqrt(double(n) * n * n)), c.nz = 1;
    c.tau = 0.6;
    c.initial.velocity = {0.05, 0.02, lat == LatticeKind::D2Q9 ? 0.0 : 0.01};  // never time zeros
    c.acm_velocity = 0.1;  // acm: the adaptive rate's reference speed
    c.csoa_alpha = alpha;
    c.collision_kernels = split;
    c.face_kernels = per_face;
    c.tile_edge = tile;
    set_bench_case(c, domain, n, porosity);
    if (c.refinement.active()) c.refinement.kernels = level_kernels;
    auto s = make_solver(c);
    s->step(5);  // warm-up
    std::int64_t steps = 0;
    double secs = 0.0;
    std::int64_t batch = 5;
    while (secs < o.min_seconds) {
      const auto t0 = Clock::now();
      s->step(batch);  // fences at the end
      secs += std::chrono::duration<double>(Clock::now() - t0).count();
      steps += batch;
      batch = std::min<std::int64_t>(batch * 2, 1000);
    }
    const auto d = s->diagnostics();
    if (d.first_bad >= 0) {
      out << "error: " << to_string(lat) << " " << to_string(col) << " " << name(prec).c_str()
          << " n=" << n << " produced non-finite values\n";
      return kExitDiverged;
    }
    BenchResult r{lat, col, prec, str, n, csoa_alpha_for(c), split, per_face, arrays, steps, secs};
    r.domain = domain;
    r.tile_edge = tile;
    r.level_kernels = level_kernels;
    if (tile > 0 || refined) r.alpha = 0;  // the tiles and the levels have layouts of their own
    r.mlups = double(c.cells()) * double(steps) / secs * 1e-6;
    if (const auto* grid = dynamic_cast<const RefinedGrid*>(s.get())) {
      // mahmoud2024's count: every level's fluid cells times its steps.
      r.mlups = double(s->fluid_cells()) * double(steps) / secs * 1e-6;
      const auto& levels = grid->octree().levels;
      for (const RefinedLevel& l : levels) r.level_cells.push_back(l.fluid_cells);
      const int finest = int(levels.size()) - 1;
      r.effective_mlups = double(c.cells()) * std::ldexp(1.0, (dimensions(lat) + 1) * finest) *
                          double(steps) / secs * 1e-6;
    }
    r.bytes_per_update = s->bytes_per_update();
    r.bytes_per_cell = s->bytes_per_cell();
    r.fluid_cells = s->fluid_cells();
    r.porosity = double(r.fluid_cells) / double(c.cells());
    r.fluid_mlups = double(r.fluid_cells) * double(steps) / secs * 1e-6;
    // The bytes of an update move for the fluid cells only (solid cells load nothing).
    r.gbs = r.fluid_mlups * 1e6 * r.bytes_per_update * 1e-9;
    r.fraction = r.gbs / copy_gbs;
    if (domain == BenchCase::Porous || domain == BenchCase::Vessel) {
      const GeometryReport g = geometry_report(c);
      r.tile_porosity = g.tiles.tile_porosity;
      r.model_bandwidth_t2c = g.model.bandwidth_two_copies;
      r.model_bandwidth_tgb = g.model.bandwidth_ghost_buffers;
      r.model_memory_t2c = g.model.memory_two_copies;
      r.model_memory_tgb = g.model.memory_ghost_buffers;
    }
    results.push_back(r);
    const std::string kernels =
        (arrays    ? std::to_string(arrays) + (arrays == 1 ? " array" : " arrays")
         : tile    ? "tiles" + std::to_string(tile)
         : refined ? "levels" + std::to_string(1 << refine_block_shift(dimensions(lat)))
         : r.alpha ? "csoa" + std::to_string(r.alpha)
                   : std::string("soa")) +
        (split == 2 ? "/split" : "") + (per_face ? "/faces" : "") +
        (level_kernels == LevelKernels::Unfused ? "/unfused" : "") +
        (domain != BenchCase::Periodic ? std::string("/") + name_of(domain) : "");
    std::snprintf(
        line, sizeof line, "%-6s %-12s %-5s %-10s %-16s %6d %12.1f %10.0f %9.1f %7.1f%% %8.0f\n",
        to_string(lat), to_string(col), name(prec).c_str(), to_string(str), kernels.c_str(), n,
        r.mlups, r.bytes_per_update, r.gbs, 100.0 * r.fraction, r.bytes_per_cell);
    out << line << std::flush;
    if (!r.level_cells.empty()) {
      std::string cells;
      for (const std::int64_t k : r.level_cells)
        cells += (cells.empty() ? "" : ", ") + std::to_string(k);
      std::snprintf(line, sizeof line,
                    "       levels' fluid cells %s; a uniform grid at the finest spacing would "
                    "need %.1f MLUPS for the same time\n",
                    cells.c_str(), r.effective_mlups);
      out << line << std::flush;
    }
    if (c.geometry.given()) {
      std::snprintf(line, sizeof line,
                    "       porosity %.3f: %.1f fluid MLUPS (%s); %d^%d tiles: tile porosity "
                    "%.3f, tomczak2018's bandwidth overhead +%.2f%% (T2C) +%.2f%% (TGB), memory "
                    "+%.0f%% (T2C) +%.0f%% (TGB) over the fluid cells' minimum\n",
                    r.porosity, r.fluid_mlups, tile ? "tiles" : "dense box",
                    tile                       ? tile
                    : lat == LatticeKind::D2Q9 ? 16
                                               : 4,
                    lat == LatticeKind::D2Q9 ? 2 : 3, r.tile_porosity,
                    100.0 * r.model_bandwidth_t2c, 100.0 * r.model_bandwidth_tgb,
                    100.0 * r.model_memory_t2c, 100.0 * r.model_memory_tgb);
      out << line << std::flush;
    }
  }

  // JSON: metadata + one object per case.
  const std::time_t now = std::time(nullptr);
  char date[32], stamp[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
  std::string path = o.json;
  if (path.empty()) {
    std::filesystem::create_directories("perf/results");
    path = "perf/results/bench_" + slug(bi.device) + "_" + stamp + ".json";
  }
  std::string cases = "[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    JsonObject j;
    j.add("lattice", to_string(r.lattice))
        .add("collision", to_string(r.collision))
        .add("precision", to_string(r.precision.arithmetic))
        .add("storage", name_of(r.precision))
        .add("n", r.n)
        .add("layout", r.tile_edge                            ? "tiles"
                       : r.domain == BenchCase::RefinedSphere ? "levels"
                       : r.alpha                              ? "csoa"
                                                              : "soa")
        .add("tile_edge", r.tile_edge)
        .add("csoa_alpha", r.alpha)
        .add("collision_kernels", r.collision_kernels)
        .add("boundary_kernels", r.face_kernels ? "faces" : "list")
        .add("moment_arrays", r.moment_arrays)
        .add("case", name_of(r.domain))
        .add("walls", r.domain == BenchCase::Closed)
        .add("cells", std::int64_t(r.n) * r.n * r.n)
        .add("steps", r.steps)
        .add("seconds", r.seconds)
        .add("mlups", r.mlups)
        .add("bytes_per_update", r.bytes_per_update)
        .add("achieved_gbs", r.gbs)
        .add("fraction_of_copy", r.fraction)
        .add("bytes_per_cell", r.bytes_per_cell)
        .add("fluid_cells", r.fluid_cells)
        .add("porosity", r.porosity)
        .add("fluid_mlups", r.fluid_mlups)
        .add("streaming", r.streaming == Streaming::InPlace   ? "in-place (AA)"
                          : r.streaming == Streaming::Moments ? "moments (MR)"
                                                              : "two-array pull");
    if (r.domain == BenchCase::Porous)
      j.add("sphere_diameter", porous_sphere_diameter(r.n)).add("seed", 1);
    if (!r.level_cells.empty()) {
      std::string cells = "[";
      for (std::size_t k = 0; k < r.level_cells.size(); ++k)
        cells += (k ? ", " : "") + std::to_string(r.level_cells[k]);
      j.add("levels", int(r.level_cells.size()))
          .add_raw("level_fluid_cells", cells + "]")
          .add("effective_mlups", r.effective_mlups)
          .add("level_kernels", name_of(r.level_kernels))
          .add("mlups_counts", "every level's fluid cells times its steps (mahmoud2024)");
    }
    if (r.domain == BenchCase::Porous || r.domain == BenchCase::Vessel)
      j.add("tile_porosity", r.tile_porosity)
          .add("model_bandwidth_overhead_t2c", r.model_bandwidth_t2c)
          .add("model_bandwidth_overhead_tgb", r.model_bandwidth_tgb)
          .add("model_memory_overhead_t2c", r.model_memory_t2c)
          .add("model_memory_overhead_tgb", r.model_memory_tgb);
    std::string js = j.str(0);
    for (char& ch : js)
      if (ch == '\n') ch = ' ';
    cases += (i ? ",\n    " : "\n    ") + js;
  }
  cases += "\n  ]";
  JsonObject top;
  top.add("tool", "kolibri bench")
      .add("kolibri_version", bi.version)
      .add("date", date)
      .add("label", o.label);
  add_backend(top, bi)
      .add("copy_bandwidth_gbs", copy_gbs)
      .add("free_memory_bytes", std::int64_t(free0))
      .add_raw("cases", cases);
  write_file_atomic(path, top.str() + "\n");
  out << "wrote " << path << "\n";
  return kExitOk;
}

}  // namespace kolibri
