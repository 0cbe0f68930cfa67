// SPDX-License-Identifier: Apache-2.0
// The `kolibri` command: run a deck, check a deck, print the backend.
#include <kolibri/config/Memory.hpp>
#include <kolibri/core/Backend.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Timeline.hpp>
#include <kolibri/refine/LevelBodies.hpp>
#include <kolibri/refine/LevelRanks.hpp>
#include <kolibri/refine/Octree.hpp>
#include <kolibri/run/Bench.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/run/Signals.hpp>
#include <kolibri/run/Tune.hpp>

#include <CLI/CLI.hpp>
#if defined(KOLIBRI_HAVE_MPI)
#include <mpi.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace {

int with_runtime(int& argc, char**& argv, int (*body)(void*), void* arg) {
#if defined(KOLIBRI_HAVE_MPI)
  MPI_Init(&argc, &argv);
#endif
  int rc;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    rc = body(arg);
  }
#if defined(KOLIBRI_HAVE_MPI)
  MPI_Finalize();
#endif
  return rc;
}

struct RunArgs {
  std::string deck;
  std::vector<std::string> overrides;
  std::string progress, output_dir, restart, walltime, grid, gpu_aware_mpi, halo_transport, balance;
  bool check_only = false;
  int check_ranks = 0;       ///< kolibri check --ranks (0: the ranks it runs on)
  bool no_estimate = false;  ///< kolibri check --no-estimate
  bool no_restart_fallback = false;
  bool tune_only = false;  ///< kolibri tune
  bool use_cache = false;  ///< kolibri tune --cached: a cached choice is enough
  std::int64_t timeline = 0;  ///< kolibri run --timeline N
};

/// An error on some ranks only would leave the others waiting in a collective: stop them all.
[[noreturn]] [[maybe_unused]] void abort_all(int code) {
#if defined(KOLIBRI_HAVE_MPI)
  MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

struct BenchArgs {
  std::vector<std::string> lattices, collisions, precisions, streamings, sizes, layouts,
      boundary_kernels, level_kernels, cases;
  bool walls = false;
  std::vector<int> collision_kernels;
  std::vector<int> tile;
  kolibri::BenchOptions options;
};

int do_bench(void* p) {
  auto& a = *static_cast<BenchArgs*>(p);
  auto& o = a.options;
  using namespace kolibri;
  if (Comm::world().size() > 1) {
    if (Comm::world().root())
      std::cerr << "kolibri: error: bench measures one device; for several ranks time `kolibri run` on a periodic deck "
                   "(perf/decks/scaling.toml)\n";
    return kExitUsage;
  }
  try {
    if (!a.lattices.empty()) {
      o.lattices.clear();
      for (const auto& l : a.lattices) o.lattices.push_back(*parse_name<LatticeKind>(l));
    }
    if (!a.collisions.empty()) {
      o.collisions.clear();
      for (const auto& c : a.collisions) o.collisions.push_back(*parse_name<CollisionKind>(c));
    }
    if (!a.precisions.empty()) {
      o.precisions.clear();
      for (const auto& q : a.precisions) o.precisions.push_back(*parse_name<PrecisionChoice>(q));
    }
    if (!a.cases.empty()) {
      o.cases.clear();
      for (const auto& k : a.cases) o.cases.push_back(*parse_name<BenchCase>(k));
    }
    if (a.walls && !a.cases.empty()) {
      std::cerr << "kolibri: error: --walls is --case closed; give one of them\n";
      return kExitUsage;
    }
    if (a.walls) o.cases = {BenchCase::Closed};
    if (!a.streamings.empty()) {
      o.streamings.clear();
      for (const auto& q : a.streamings) o.streamings.push_back(*parse_name<Streaming>(q));
    }
    if (a.tile.size() == 2) {
      if (a.tile[0] < 1 || a.tile[1] < 1) {
        std::cerr << "kolibri: error: --tile " << a.tile[0] << " " << a.tile[1] << ": expected two positive sizes\n";
        return kExitUsage;
      }
      o.moment_tile = {a.tile[0], a.tile[1]};
    }
    if (!a.layouts.empty()) {
      o.layouts.clear();
      for (const auto& l : a.layouts) {
        const int alpha = l == "auto" ? -2 : l == "soa" ? 0 : l.rfind("csoa", 0) == 0 && l.size() > 4 && l.find_first_not_of("0123456789", 4) == std::string::npos
                                                ? std::stoi(l.substr(4)) : -1;
        if (alpha == -1 || (alpha > 0 && !kolibri::valid_csoa_alpha(alpha))) {
          std::cerr << "kolibri: error: --layout '" << l << "': expected auto, soa or csoa<alpha>, alpha a power of two (csoa32)\n";
          return kExitUsage;
        }
        o.layouts.push_back(alpha == -2 ? -1 : alpha);
      }
    }
    if (!a.collision_kernels.empty()) o.collision_kernels = a.collision_kernels;
    if (!a.boundary_kernels.empty()) {
      o.face_kernels.clear();
      for (const auto& b : a.boundary_kernels) o.face_kernels.push_back(b == "faces");
    }
    if (!a.level_kernels.empty()) {
      o.level_kernels.clear();
      for (const auto& k : a.level_kernels) o.level_kernels.push_back(*parse_name<LevelKernels>(k));
    }
    if (!a.sizes.empty()) {
      o.sizes.clear();
      for (const auto& n : a.sizes) o.sizes.push_back(n == "max" ? 0 : std::stoi(n));
    }
    return run_bench(o, std::cout);
  } catch (const OutputError& e) {
    std::cerr << "kolibri: error: " << e.what() << "\n";
    return kExitIo;
  } catch (const std::exception& e) {
    std::cerr << "kolibri: error: " << e.what() << "\n";
    return kExitResource;
  }
}

int do_info(void*) {
  const auto b = kolibri::backend_info();
  std::cout << "kolibri " << b.version << "\n"
            << "  Kokkos          " << b.kokkos_version << "\n"
            << "  execution space " << b.execution_space << "\n"
            << "  device          " << b.device << " (" << b.vendor << ")\n"
            << "  concurrency     " << b.concurrency << "\n"
            << "  compiler        " << b.compiler << "\n"
#if defined(KOLIBRI_HAVE_MPI)
            << "  MPI             yes\n";
#else
            << "  MPI             no\n";
#endif
  return 0;
}

/// What `kolibri check` says of a refined grid after the physics: each level's box, blocks,
/// cells and memory (on several ranks the most any rank holds: the leaves it steps and those
/// its cells read, level_held), how the ranks cut the levels, and the run time from the uniform
/// grid's rate on this device.
int check_levels(const kolibri::Case& c, const RunArgs& a, const kolibri::Octree& tree,
                 const kolibri::LevelRanks& cuts, int ranks, const kolibri::LevelBodyBox* bodies) {
  const auto& sc = c.solver;
  const double gib = 1.0 / double(1 << 30), per_cell = kolibri::level_bytes_per_cell(sc);
  for (const std::string& l : kolibri::octree_report(tree, per_cell))
    std::cout << "  refinement: " << l << "\n";
  double bytes = kolibri::octree_bytes(tree, per_cell);
  char line[400];
  if (bodies) {
    const double body_bytes = kolibri::level_body_bytes(*bodies, sc);
    const bool travelling = std::any_of(sc.bodies.begin(), sc.bodies.end(), kolibri::travels);
    std::snprintf(line, sizeof line,
                  "  refinement: the bodies' box on level %d: %d x %d x %d cells from (%d, %d, "
                  "%d) of that level%s, %.1f MiB (force field, node table, flags)\n",
                  bodies->level, bodies->n[0], bodies->n[1], bodies->n[2], bodies->lo[0],
                  bodies->lo[1], bodies->lo[2],
                  travelling ? " (the level's whole extent: a body travels)" : "",
                  body_bytes / double(1 << 20));
    std::cout << line;
    bytes += body_bytes;
  }
  std::snprintf(line, sizeof line,
                "  device memory about %.3g GiB (the levels: %.0f bytes a cell, 12 a general "
                "rule%s)%s\n",
                bytes * gib, per_cell, bodies ? "; the bodies' box" : "",
                ranks > 1 ? " on one rank" : "");
  std::cout << line;
  if (ranks > 1) {  // the leaves each rank holds (RefinedSolver::hold_levels)
    double most_bytes = 0.0;
    int most_rank = 0;
    for (int r = 0; r < ranks; ++r) {
      const double b =
          kolibri::held_bytes(tree, kolibri::rank_held(tree, cuts, r, bodies), per_cell);
      if (b > most_bytes) most_bytes = b, most_rank = r;
    }
    if (bodies) most_bytes += kolibri::level_body_bytes(*bodies, sc);
    std::snprintf(line, sizeof line,
                  "  device memory on %d ranks: at most %.3g GiB a rank (rank %d: the leaves it "
                  "steps and those they read%s)\n",
                  ranks, most_bytes * gib, most_rank, bodies ? "; the bodies' box" : "");
    std::cout << line;
  }
  const std::int64_t updates = tree.updates_per_step();
  const std::int64_t most = *std::max_element(cuts.updates.begin(), cuts.updates.end());
  std::cout << "  refinement: " << updates
            << " cell updates a step of level 0 (every level's fluid cells times its steps)\n";
  if (ranks > 1) std::cout << "  refinement: " << kolibri::level_ranks_report(tree, cuts) << "\n";
  if (a.no_estimate) return 0;
  // The levels' kernels are not timed here: the uniform grid's rate on the level-0 box, with
  // the levels' measured share of it (docs/performance.md) as the caveat.
  try {
    kolibri::SolverConfig uniform = sc;
    uniform.refinement = {};
    const bool gpu = kolibri::backend_info().vendor != "host";
    const kolibri::RateEstimate r = kolibri::estimate_rate(
        uniform, gpu ? (std::int64_t(1) << 22) : (std::int64_t(1) << 16), 0.3);
    const double seconds = double(most) * double(c.run.steps) / (r.mlups * 1e6);
    std::snprintf(line, sizeof line,
                  "  run time about %.3g s on %d rank%s, each with a device like this one (%s), at "
                  "the uniform grid's %.4g MLUPS a rank (timed over %lld steps of %dx%dx%d); the "
                  "level kernels ran at 0.48-0.75 of the uniform rate on an H200: expect up to "
                  "twice as long\n",
                  seconds, ranks, ranks > 1 ? "s" : "", kolibri::backend_info().device.c_str(),
                  r.mlups, static_cast<long long>(r.steps), r.box[0], r.box[1], r.box[2]);
    std::cout << line;
  } catch (const std::exception& e) {
    std::cout << "  run time not estimated (" << e.what() << ")\n";
  }
  return 0;
}

/// `kolibri check`: everything that needs no run (the bodies sampled, meshes read and checked),
/// then what a user checks a deck for: the derived physics in lattice and SI units, cells and
/// device memory per rank, and the run time estimated from a short timing on this device.
int check_deck(const kolibri::Case& c, const RunArgs& a, const kolibri::Comm& comm,
               std::ostream& err) {
  std::int64_t samples = 0;
  const int dims = kolibri::dimensions(c.solver.lattice);
  const bool refined = c.solver.refinement.active();
  for (const auto& b : c.solver.bodies) {
    try {
      // On a refined grid a body is sampled in cells of the finest level (LevelBodies.hpp).
      const kolibri::Body at =
          refined ? kolibri::body_at_level(b, c.solver.refinement.levels - 1, {0, 0, 0}) : b;
      samples += std::int64_t(kolibri::sample_body(at, dims, c.solver.ib).offsets.size());
    } catch (const std::exception& e) {
      err << "kolibri: error: " << a.deck << ": body '" << b.name << "': " << e.what() << "\n";
      return kolibri::kExitDeck;
    }
  }
  const int ranks = a.check_ranks > 0 ? a.check_ranks : comm.size();
  std::int64_t largest = 0;  // the most cells a rank holds, ghost layers included
  std::string slabs;         // how the ranks cut a [geometry]'s box
  kolibri::Octree tree;      // a refined grid's levels, and
  kolibri::LevelRanks cuts;  // the leaves each rank steps (LevelRanks.hpp)
  std::optional<kolibri::LevelBodyBox> bodies;  // a refined grid's bodies' box (LevelBodies.hpp)
  try {
    if (refined) {
      tree = kolibri::build_octree(c.solver);
      cuts = kolibri::cut_levels(tree, ranks);
      if (!c.solver.bodies.empty()) {  // as RefinedSolver refuses them (any number of ranks)
        bodies = kolibri::level_body_box(tree, c.solver);
        if (const auto why = kolibri::prescribed_travel_leaves(*bodies, c.solver, 0, c.run.steps))
          throw std::invalid_argument("run.steps = " + std::to_string(c.run.steps) + ": " + *why);
      }
    } else {
      const auto all = kolibri::Decomposition::every_rank(
          c.solver, ranks, c.run.grid, kolibri::balance_for(c.solver, c.run.balance));
      for (const auto& dc : all) {
        const auto ext = dc.local_extent();
        largest = std::max<std::int64_t>(largest, std::int64_t(ext[0]) * ext[1] * ext[2]);
      }
      if (ranks > 1 && c.solver.geometry.given()) slabs = kolibri::slab_report(c.solver, all[0]);
    }
  } catch (const std::invalid_argument& e) {
    err << "kolibri: error: " << a.deck << ": " << ranks << " ranks: " << e.what() << "\n";
    return kolibri::kExitDeck;
  }
  if (!comm.root()) return 0;
  const auto& sc = c.solver;
  std::cout << a.deck << ": ok (" << kolibri::to_string(sc.lattice) << ", " << sc.nx << "x" << sc.ny
            << "x" << sc.nz << ", tau " << sc.tau << ", " << c.run.steps << " steps";
  if (!sc.bodies.empty())
    std::cout << ", " << sc.bodies.size() << " bodies, " << samples << " IB samples";
  std::cout << ")\n";
  const double nu = sc.viscosity();
  char line[400];
  std::snprintf(line, sizeof line,
                "  viscosity %.6g, Re %.6g (velocity %.6g x length %.6g / viscosity), Mach %.4g "
                "(fastest velocity %.6g), %lld cells\n",
                nu, c.reynolds, c.u_char, c.l_char, c.u_max * std::sqrt(3.0), c.u_max,
                static_cast<long long>(sc.cells()));
  std::cout << line;
  if (c.units.given) {
    const auto& u = c.units;
    std::snprintf(
        line, sizeof line,
        "  SI: cell %.6g m, time step %.6g s, velocity %.6g m/s, length %.6g m, viscosity "
        "%.6g m^2/s, density %.6g kg/m^3; the run covers %.6g s\n",
        u.dx, u.dt, u.velocity(c.u_char), c.l_char * u.dx, u.viscosity(nu), u.density,
        double(c.run.steps) * u.dt);
    std::cout << line;
  }
  for (std::size_t k = 0; k < sc.obstacles.size(); ++k)  // meshes: what was read
    if (const std::string m = kolibri::describe_mesh_obstacle(sc.obstacles, k); !m.empty())
      std::cout << "  " << m << "\n";
  if (sc.geometry.given()) {  // the sparse geometry and its tiles
    std::istringstream lines(kolibri::geometry_report(sc).text);
    for (std::string l; std::getline(lines, l);) std::cout << "  " << l << "\n";
    if (!slabs.empty()) std::cout << "  " << ranks << " ranks, " << slabs << "\n";
  }
  const double gib = 1.0 / double(1 << 30);
  if (refined) return check_levels(c, a, tree, cuts, ranks, bodies ? &*bodies : nullptr);
  // Device memory, before anything is allocated.
  const double per_cell = kolibri::device_bytes_per_cell(sc);
  std::snprintf(
      line, sizeof line,
      "  device memory about %.3g GiB (%.0f bytes a cell), %.3g GiB more while fields are "
      "written\n",
      double(sc.cells()) * gib * per_cell, per_cell,
      c.run.write_fields ? double(sc.cells()) * gib * kolibri::kFieldOutputBytesPerCell : 0.0);
  std::cout << line;
  if (c.run.statistics_every > 0 && ranks == 1) {  // the fields a field output also holds
    std::snprintf(line, sizeof line, "  %.3g GiB more while statistics rows are reduced\n",
                  double(sc.cells()) * gib * kolibri::kFieldOutputBytesPerCell);
    std::cout << line;
  }
  if (ranks > 1) {
    std::snprintf(line, sizeof line,
                  "  on %d ranks: at most %lld cells and about %.3g GiB a rank (ghost layers "
                  "included)\n",
                  ranks, static_cast<long long>(largest), double(largest) * gib * per_cell);
    std::cout << line;
  }
  if (a.no_estimate) return 0;
  // The run time: the deck's model timed briefly on this device, on a smaller box where the
  // deck's is large (GPUs run small boxes slower: the estimate errs long).
  try {
    const bool gpu = kolibri::backend_info().vendor != "host";
    const kolibri::RateEstimate r =
        kolibri::estimate_rate(sc, gpu ? (std::int64_t(1) << 22) : (std::int64_t(1) << 16), 0.3);
    const double seconds = double(largest) * double(c.run.steps) / (r.mlups * 1e6);
    std::snprintf(
        line, sizeof line,
        "  run time about %.3g s on %d rank%s, each with a device like this one (%s): %.4g "
        "MLUPS a rank, timed over %lld steps of %dx%dx%d%s\n",
        seconds, ranks, ranks > 1 ? "s" : "", kolibri::backend_info().device.c_str(), r.mlups,
        static_cast<long long>(r.steps), r.box[0], r.box[1], r.box[2],
        sc.obstacles.empty() && sc.bodies.empty() && !sc.geometry.given()
            ? ""
            : ", without obstacles, bodies or [geometry]");
    std::cout << line;
  } catch (const std::exception& e) {
    std::cout << "  run time not estimated (" << e.what() << ")\n";
  }
  return 0;
}

int do_run(void* p) {
  auto& a = *static_cast<RunArgs*>(p);
  const auto& comm = kolibri::Comm::world();
  std::ostringstream null_os;
  std::ostream& err = comm.root() ? std::cerr : null_os;  // the same message on every rank: say it once
  try {
    kolibri::Case c = kolibri::load_deck(a.deck, a.overrides);
    if (!a.progress.empty()) c.run.progress = a.progress;       // checked by CLI11
    if (!a.output_dir.empty()) c.run.output_dir = a.output_dir;  // taken as given, not as TOML
    if (!a.gpu_aware_mpi.empty()) c.run.gpu_aware_mpi = a.gpu_aware_mpi;
    if (!a.halo_transport.empty()) c.run.halo_transport = a.halo_transport;
    if (!a.balance.empty()) c.run.balance = a.balance;
    kolibri::RunOptions opts;
    opts.timeline_steps = a.timeline;
    try {
      if (!a.grid.empty()) c.run.grid = kolibri::parse_grid(a.grid);
      if (!a.walltime.empty()) opts.walltime = kolibri::parse_walltime(a.walltime);
    } catch (const std::invalid_argument& e) {
      err << "kolibri: error: " << e.what() << "\n";
      return kolibri::kExitUsage;
    }
    for (const auto& w : kolibri::deck_warnings(c)) err << "kolibri: warning: " << a.deck << ": " << w << "\n";
    if (a.check_only) return check_deck(c, a, comm, err);
    {
      std::ifstream in(a.deck);
      std::ostringstream text;
      text << in.rdbuf();
      opts.deck_text = text.str();
      for (const auto& o : a.overrides) opts.deck_text += "\n# --set " + o;
    }
    if (a.tune_only) {
      if (comm.size() > 1) {
        err << "kolibri: error: tune times one GPU: run it on one rank\n";
        return kolibri::kExitUsage;
      }
      c.tune.retune = c.tune.retune || !a.use_cache;
      const kolibri::TuneReport t = kolibri::autotune(c, std::cout);
      const auto& sc = c.solver;
      std::cout << "kolibri: tune: the deck keys of this choice:\n  [model] layout = \""
                << (sc.csoa_alpha > 0 ? "csoa" : "soa") << "\"";
      if (sc.csoa_alpha > 0) std::cout << ", csoa_alpha = " << sc.csoa_alpha;
      std::cout << ", boundary_kernels = \"" << (sc.face_kernels ? "faces" : "list") << "\"\n";
      if (!sc.bodies.empty())
        std::cout << "  [ib] block = " << sc.ib.block << ", spreading = \""
                  << kolibri::to_string(sc.ib.spreading) << "\"\n";
      std::cout << "  (or keep [tune] enabled = true: runs on this device read the cache " << t.cache << ")\n";
      return 0;
    }
    opts.restart = a.restart;
    opts.restart_fallback = !a.no_restart_fallback;
    const kolibri::RunResult r = kolibri::run_case(c, std::cout, opts);
    if (r.exit_code != 0 && r.exit_code != kolibri::kExitStopped) err << "kolibri: error: " << r.message << "\n";
    return r.exit_code;
  } catch (const kolibri::DeckError& e) {
    err << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitDeck;
  } catch (const kolibri::CheckpointError& e) {
    err << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitRestart;
  } catch (const kolibri::OutputError& e) {
    err << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitIo;
  } catch (const std::exception& e) {  // e.g. device memory exhausted, possibly on some ranks only
    if (comm.size() > 1) {
      std::cerr << "kolibri: error on rank " << comm.rank() << ": " << e.what() << "\n";
      abort_all(kolibri::kExitResource);
    }
    std::cerr << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitResource;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kolibri: a performance-portable lattice Boltzmann solver"};
  app.require_subcommand(1);
  RunArgs ra;
  auto* run = app.add_subcommand("run", "Run an input deck (TOML)");
  run->add_option("deck", ra.deck, "Input deck, e.g. inputs/cavity2d.toml")->required();
  run->add_option("--set,-s", ra.overrides, "Override a deck key: section.key=value (repeatable)");
  run->add_option("--progress", ra.progress, "Progress display: auto, bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  run->add_option("--output-dir,-o", ra.output_dir, "Directory for fields, probes and summary.json");
  run->add_option("--restart", ra.restart, "Continue from a checkpoint directory (or 'latest' in the output directory)");
  run->add_flag("--no-restart-fallback", ra.no_restart_fallback,
                "With --restart latest: refuse (exit 7) when the newest checkpoint is damaged, "
                "instead of warning and "
                "continuing from the newest intact one");
  run->add_option("--walltime", ra.walltime,
                  "Wall-clock limit (seconds, MM:SS, HH:MM:SS or D-HH:MM:SS): checkpoint and stop (exit 6) before it");
  run->add_option("--grid", ra.grid, "MPI process grid PXxPYxPZ (e.g. 2x2x1) or auto (default: deck, else auto)");
  run->add_option("--gpu-aware-mpi", ra.gpu_aware_mpi, "Hand device buffers to MPI: auto (ask MPI), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  run->add_option("--halo-transport", ra.halo_transport,
                  "Halo exchange between GPUs: auto (NCCL where built), mpi, nccl")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}));
  run->add_option(
         "--balance", ra.balance,
         "How the ranks' slabs share the box: auto (fluid with a [geometry]), volume, fluid")
      ->check(CLI::IsMember({"auto", "volume", "fluid"}));
  run->add_option("--timeline", ra.timeline,
                  "After the run, N more steps with each point of a step (border, pack, transfer, "
                  "unpack, interior, end) timed on the device: log line and summary.json")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(kolibri::kMaxTimelineSteps)));
  auto* check = app.add_subcommand("check", "Validate an input deck without running it");
  check->add_option("deck", ra.deck, "Input deck")->required();
  check->add_option("--set,-s", ra.overrides, "Override a deck key: section.key=value (repeatable)");
  check
      ->add_option("--ranks", ra.check_ranks,
                   "Print the cells and memory a rank holds on this many ranks")
      ->check(CLI::PositiveNumber);
  check->add_flag("--no-estimate", ra.no_estimate,
                  "Do not time the deck's model briefly on this device to estimate the run time");
  auto* tune = app.add_subcommand("tune", "Time the layout and kernel options of a deck on this device, cache the fastest");
  tune->add_option("deck", ra.deck, "Input deck")->required();
  tune->add_option("--set,-s", ra.overrides, "Override a deck key: section.key=value (repeatable)");
  tune->add_flag("--cached", ra.use_cache, "Use a cached choice for this case and device if there is one");
  app.add_subcommand("info", "Print the Kokkos backend and device");
  BenchArgs ba;
  auto* bench = app.add_subcommand("bench", "Measure MLUPS and bandwidth on standard periodic boxes");
  bench->add_option("--lattice", ba.lattices, "Lattices (default D3Q19,D3Q27)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::LatticeKind>()));
  bench
      ->add_option("--collision", ba.collisions,
                   "Operators (default bgk,trt,regularized; mrt on D3Q27 only, cm and acm on D2Q9 "
                   "and D3Q27)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::CollisionKind>()));
  bench
      ->add_option("--precision", ba.precisions,
                   "Precisions (default fp32,fp16,fp64; fp16 = FP32 arithmetic with FP16 storage)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::PrecisionChoice>()));
  bench
      ->add_option("--streaming", ba.streamings,
                   "Storage schemes (default in_place,two_array; moments runs with the regularized "
                   "operators "
                   "only)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::Streaming>()));
  bench->add_option("--tile", ba.tile, "Moment kernel tile across columns, TX TY (GPU: 30 6 (default) or 14 6 in 3D, 254 1 (default) or 126 1 in 2D)")
      ->expected(2);
  bench->add_option("--segment", ba.options.moment_segment, "Moment kernel column segment in layers (default 64 in 3D, 32 in 2D)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--moment-arrays", ba.options.moment_arrays,
                    "Moment representation: 2 (two arrays, the default and the fastest) or 1 (one array and "
                    "the shadow of the tile edges: 29% less memory); a list runs both")
      ->delimiter(',')->check(CLI::IsMember({1, 2}));
  bench->add_option("--size", ba.sizes, "Cube edges, or max for the largest that fits (default 128,256,max)")
      ->delimiter(',');
  bench->add_option("--layout", ba.layouts, "Population layouts: auto, soa, csoa<alpha> (default auto: csoa32, soa with fp16)")
      ->delimiter(',');
  bench
      ->add_option("--tiles", ba.options.tile_edges,
                   "The tiled grid's tile edges, two arrays and in place: 0 (the dense box), 4, 8 "
                   "(3D), 16, 32 (2D) (default 0; a list runs each, an edge a lattice has no "
                   "kernel for is skipped)")
      ->delimiter(',')
      ->check(CLI::IsMember({0, 4, 8, 16, 32}));
  bench->add_option("--collision-kernels", ba.collision_kernels, "Interior collision launches, two arrays: 1, 2 (default 1)")
      ->delimiter(',')
      ->check(CLI::IsMember({1, 2}));
  bench
      ->add_option("--boundary-kernels", ba.boundary_kernels,
                   "Boundary kernels of the bounded cases: list, faces (default list)")
      ->delimiter(',')
      ->check(CLI::IsMember({"list", "faces"}));
  bench
      ->add_option(
          "--level-kernels", ba.level_kernels,
          "Level kernels of the refined case: fused, unfused (the baseline; default fused)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::LevelKernels>()));
  bench
      ->add_option(
          "--case", ba.cases,
          "Domains (default periodic): periodic, closed (walls, the top moving), channel (velocity "
          "inlet, "
          "pressure outlet, walls), channel_outflow (the channel with an outflow face), sphere "
          "(the channel with a bounce-back sphere of diameter "
          "n/4), "
          "sphere_interpolated (the sphere with interpolated walls; not with moments), porous "
          "(random spheres of diameter n/6 at each --porosity, periodic, a body force), vessel (a "
          "bent "
          "tube with a bulge)")
      ->delimiter(',')
      ->check(CLI::IsMember(kolibri::names_of<kolibri::BenchCase>()));
  bench
      ->add_option("--porosity", ba.options.porosities,
                   "Porosities of the porous case (default 0.9,0.7,0.5,0.3,0.1)")
      ->delimiter(',')
      ->check(CLI::Range(0.01, 0.99));
  bench->add_flag("--walls", ba.walls, "The closed box only (as --case closed)");
  bench->add_option("--seconds", ba.options.min_seconds, "Minimum timed seconds per case (default 1)");
  bench->add_option("--memory-fraction", ba.options.memory_fraction, "Share of free memory for size max (0.85)");
  bench->add_option("--json", ba.options.json, "JSON output file (default perf/results/bench_<device>_<date>.json)");
  bench->add_option("--label", ba.options.label, "Free text stored in the JSON (e.g. a git revision)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kolibri::kExitUsage;
  }
  if (app.got_subcommand("info")) return with_runtime(argc, argv, do_info, nullptr);
  if (app.got_subcommand("bench")) {
    for (const auto& n : ba.sizes)
      if (n != "max" && (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 4)) {
        std::cerr << "kolibri: error: --size '" << n << "': expected a cube edge >= 4 or 'max'\n";
        return kolibri::kExitUsage;
      }
    return with_runtime(argc, argv, do_bench, &ba);
  }
  ra.check_only = app.got_subcommand("check");
  ra.tune_only = app.got_subcommand("tune");
  return with_runtime(argc, argv, do_run, &ra);
}
