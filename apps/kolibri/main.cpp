// SPDX-License-Identifier: Apache-2.0
// The `kolibri` command: run a deck, check a deck, print the backend.
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/run/Signals.hpp>
#include <kolibri/run/Bench.hpp>
#include <kolibri/run/Runner.hpp>

#include <CLI/CLI.hpp>
#if defined(KOLIBRI_HAVE_MPI)
#include <mpi.h>
#endif

#include <cstdlib>
#include <fstream>
#include <iostream>
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
  std::string progress, output_dir, restart, walltime, grid, gpu_aware_mpi, halo_transport;
  bool check_only = false;
};

/// An error on some ranks only would leave the others waiting in a collective: stop them all.
[[noreturn]] [[maybe_unused]] void abort_all(int code) {
#if defined(KOLIBRI_HAVE_MPI)
  MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

struct BenchArgs {
  std::vector<std::string> lattices, collisions, precisions, streamings, sizes;
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
      for (const auto& l : a.lattices)
        o.lattices.push_back(l == "D2Q9" ? LatticeKind::D2Q9 : l == "D3Q19" ? LatticeKind::D3Q19 : LatticeKind::D3Q27);
    }
    if (!a.collisions.empty()) {
      o.collisions.clear();
      for (const auto& c : a.collisions)
        for (auto k : {CollisionKind::Bgk, CollisionKind::Trt, CollisionKind::Regularized, CollisionKind::RecursiveRegularized,
                       CollisionKind::Mrt, CollisionKind::CentralMoment, CollisionKind::AdaptiveCentralMoment})
          if (c == to_string(k)) o.collisions.push_back(k);
    }
    if (!a.precisions.empty()) {
      o.precisions.clear();
      for (const auto& q : a.precisions)
        o.precisions.push_back(q == "fp64"   ? PrecisionChoice{Precision::FP64, StorageKind::Same}
                               : q == "fp16" ? PrecisionChoice{Precision::FP32, StorageKind::FP16}
                                             : PrecisionChoice{Precision::FP32, StorageKind::Same});
    }
    if (!a.streamings.empty()) {
      o.streamings.clear();
      for (const auto& q : a.streamings)
        o.streamings.push_back(q == "in_place" ? Streaming::InPlace : q == "moments" ? Streaming::Moments : Streaming::TwoArray);
    }
    if (a.tile.size() == 2) {
      if (a.tile[0] < 1 || a.tile[1] < 1) {
        std::cerr << "kolibri: error: --tile " << a.tile[0] << " " << a.tile[1] << ": expected two positive sizes\n";
        return kExitUsage;
      }
      o.moment_tile = {a.tile[0], a.tile[1]};
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
    kolibri::RunOptions opts;
    try {
      if (!a.grid.empty()) c.run.grid = kolibri::parse_grid(a.grid);
      if (!a.walltime.empty()) opts.walltime = kolibri::parse_walltime(a.walltime);
    } catch (const std::invalid_argument& e) {
      err << "kolibri: error: " << e.what() << "\n";
      return kolibri::kExitUsage;
    }
    for (const auto& w : kolibri::deck_warnings(c)) err << "kolibri: warning: " << a.deck << ": " << w << "\n";
    if (a.check_only) {
      if (comm.root())
        std::cout << a.deck << ": ok (" << kolibri::to_string(c.solver.lattice) << ", "
                  << c.solver.nx << "x" << c.solver.ny << "x" << c.solver.nz << ", tau " << c.solver.tau
                  << ", " << c.run.steps << " steps)\n";
      return 0;
    }
    {
      std::ifstream in(a.deck);
      std::ostringstream text;
      text << in.rdbuf();
      opts.deck_text = text.str();
      for (const auto& o : a.overrides) opts.deck_text += "\n# --set " + o;
    }
    opts.restart = a.restart;
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
  run->add_option("--walltime", ra.walltime,
                  "Wall-clock limit (seconds, MM:SS, HH:MM:SS or D-HH:MM:SS): checkpoint and stop (exit 6) before it");
  run->add_option("--grid", ra.grid, "MPI process grid PXxPYxPZ (e.g. 2x2x1) or auto (default: deck, else auto)");
  run->add_option("--gpu-aware-mpi", ra.gpu_aware_mpi, "Hand device buffers to MPI: auto (ask MPI), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  run->add_option("--halo-transport", ra.halo_transport,
                  "Halo exchange between GPUs: auto (NCCL where built), mpi, nccl")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}));
  auto* check = app.add_subcommand("check", "Validate an input deck without running it");
  check->add_option("deck", ra.deck, "Input deck")->required();
  check->add_option("--set,-s", ra.overrides, "Override a deck key: section.key=value (repeatable)");
  app.add_subcommand("info", "Print the Kokkos backend and device");
  BenchArgs ba;
  auto* bench = app.add_subcommand("bench", "Measure MLUPS and bandwidth on standard periodic boxes");
  bench->add_option("--lattice", ba.lattices, "Lattices (default D3Q19,D3Q27)")
      ->delimiter(',')->check(CLI::IsMember({"D2Q9", "D3Q19", "D3Q27"}));
  bench->add_option("--collision", ba.collisions,
                    "Operators: bgk, trt, regularized, recursive, mrt, cm, acm (default bgk,trt,regularized; mrt on D3Q27 "
                    "only, cm and acm on D2Q9 and D3Q27)")
      ->delimiter(',')->check(CLI::IsMember({"bgk", "trt", "regularized", "recursive", "mrt", "cm", "acm"}));
  bench->add_option("--precision", ba.precisions,
                    "Precisions (default fp32,fp16,fp64; fp16 = FP32 arithmetic with FP16 storage)")
      ->delimiter(',')->check(CLI::IsMember({"fp32", "fp16", "fp64"}));
  bench->add_option("--streaming", ba.streamings,
                    "Storage schemes: in_place, two_array, moments (default in_place,two_array; moments runs "
                    "with the regularized operators only)")
      ->delimiter(',')->check(CLI::IsMember({"in_place", "two_array", "moments"}));
  bench->add_option("--tile", ba.tile, "Moment kernel tile across columns, TX TY (GPU; default 30 6 in 3D)")
      ->expected(2);
  bench->add_option("--segment", ba.options.moment_segment, "Moment kernel column segment in layers (default 64)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--size", ba.sizes, "Cube edges, or max for the largest that fits (default 128,256,max)")
      ->delimiter(',');
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
  return with_runtime(argc, argv, do_run, &ra);
}
