// SPDX-License-Identifier: Apache-2.0
// The `kolibri` command: run a deck, check a deck, print the backend.
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/run/Runner.hpp>

#include <CLI/CLI.hpp>
#if defined(KOLIBRI_HAVE_MPI)
#include <mpi.h>
#endif

#include <iostream>

namespace {

int with_runtime(int& argc, char**& argv, int (*body)(void*), void* arg) {
#if defined(KOLIBRI_HAVE_MPI)
  MPI_Init(&argc, &argv);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1) {
    std::cerr << "kolibri: error: started on " << ranks
              << " MPI ranks; this version runs on one rank (multi-rank halo exchange is not built yet)\n";
    MPI_Finalize();
    return kolibri::kExitUsage;
  }
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
  std::string progress, output_dir;
  bool check_only = false;
};

int do_info(void*) {
  const auto b = kolibri::backend_info();
  std::cout << "kolibri 0.1.0\n"
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
  try {
    auto overrides = a.overrides;
    if (!a.progress.empty()) overrides.push_back("run.progress=" + a.progress);
    if (!a.output_dir.empty()) overrides.push_back("run.output_dir=\"" + a.output_dir + "\"");
    const kolibri::Case c = kolibri::load_deck(a.deck, overrides);
    for (const auto& w : kolibri::deck_warnings(c)) std::cerr << "kolibri: warning: " << a.deck << ": " << w << "\n";
    if (a.check_only) {
      std::cout << a.deck << ": ok (" << kolibri::to_string(c.solver.lattice) << ", "
                << c.solver.nx << "x" << c.solver.ny << "x" << c.solver.nz << ", tau " << c.solver.tau
                << ", " << c.run.steps << " steps)\n";
      return 0;
    }
    const kolibri::RunResult r = kolibri::run_case(c, std::cout);
    if (r.exit_code != 0) std::cerr << "kolibri: error: " << r.message << "\n";
    return r.exit_code;
  } catch (const kolibri::DeckError& e) {
    std::cerr << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitDeck;
  } catch (const kolibri::OutputError& e) {
    std::cerr << "kolibri: error: " << e.what() << "\n";
    return kolibri::kExitIo;
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
  run->add_option("--progress", ra.progress, "Progress display: auto, bar, lines or none");
  run->add_option("--output-dir,-o", ra.output_dir, "Directory for fields, probes and summary.json");
  auto* check = app.add_subcommand("check", "Validate an input deck without running it");
  check->add_option("deck", ra.deck, "Input deck")->required();
  check->add_option("--set,-s", ra.overrides, "Override a deck key: section.key=value (repeatable)");
  app.add_subcommand("info", "Print the Kokkos backend and device");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kolibri::kExitUsage;
  }
  if (app.got_subcommand("info")) return with_runtime(argc, argv, do_info, nullptr);
  ra.check_only = app.got_subcommand("check");
  return with_runtime(argc, argv, do_run, &ra);
}
