// SPDX-License-Identifier: Apache-2.0
#include <kolibri/core/Backend.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/run/Probes.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/run/Signals.hpp>
#include <kolibri/run/Tune.hpp>
#include <kolibri/solver/Halted.hpp>
#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <unistd.h>

namespace kolibri {
namespace {

/// The implicit forcing's conjugate-gradient iterations a step, on average over the run.
double mean_solver_iterations(const IbStats& ib) {
  return ib.steps > 0 ? double(ib.solver_iterations) / double(ib.steps) : 0.0;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--:--";
  const long t = std::lround(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// Live bar on a terminal, periodic lines in a batch log.
class Progress {
 public:
  Progress(const RunConfig& rc, std::ostream& log) : m_log(log), m_total(rc.steps) {
    m_mode = rc.progress;
    if (m_mode == "auto") m_mode = isatty(STDOUT_FILENO) ? "bar" : "lines";
    m_period = m_mode == "bar" ? 0.2 : rc.log_seconds;
    m_log_every = rc.log_every;
  }
  /// Whether a progress report is due (by step cadence or by time).
  bool due(std::int64_t step) const {
    if (m_mode == "none") return false;
    if (m_log_every > 0) return step % m_log_every == 0 || step == m_total;
    return seconds_since(m_last) >= m_period || step == m_total;
  }
  void report(std::int64_t step, double mlups, double eta, const Diagnostics& d, double drift) {
    m_last = Clock::now();
    char buf[256];
    const double pct = m_total > 0 ? 100.0 * double(step) / double(m_total) : 100.0;
    if (m_mode == "bar") {
      const int width = 24, filled = int(pct / 100.0 * width);
      std::string bar(std::size_t(filled), '#');
      bar.resize(width, '.');
      std::snprintf(buf, sizeof buf, "\r[%s] %5.1f%% step %lld/%lld | %8.1f MLUPS | ETA %s | max|u| %.4g | mass drift %.2e ",
                    bar.c_str(), pct, (long long)step, (long long)m_total, mlups, hms(eta).c_str(), d.max_speed, drift);
      m_log << buf << std::flush;
      m_open_bar = true;
    } else if (m_mode == "lines") {
      std::snprintf(buf, sizeof buf, "step %lld/%lld (%5.1f%%)  %.1f MLUPS  ETA %s  max|u| %.6g  mass drift %.3e",
                    (long long)step, (long long)m_total, pct, mlups, hms(eta).c_str(), d.max_speed, drift);
      m_log << buf << std::endl;
    }
  }
  void close() {
    if (m_open_bar) m_log << '\n';
    m_open_bar = false;
  }

 private:
  std::ostream& m_log;
  std::string m_mode;
  std::int64_t m_total, m_log_every = 0;
  double m_period = 10.0;
  Clock::time_point m_last = Clock::now();
  bool m_open_bar = false;
};

/// A CSV time series as a restart continues it: `header`, then the complete rows of the file at
/// `path` (when `restart`) whose step is below `limit`. A row is complete with `fields` fields; a
/// torn last row is dropped.
std::string kept_rows(const std::string& path, const std::string& header, bool restart, long long limit, long fields) {
  std::string kept = header;
  if (!restart) return kept;
  std::ifstream in(path);
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if (first || line.empty()) continue;
    char* end = nullptr;
    const long long s = std::strtoll(line.c_str(), &end, 10);
    if (end != line.c_str() && *end == ',' && s < limit && std::count(line.begin(), line.end(), ',') == fields - 1)
      kept += line + "\n";
  }
  return kept;
}

std::string csv_row(std::int64_t step, double rho, const std::array<double, 3>& u) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld,%.12g,%.12g,%.12g,%.12g\n", (long long)step, rho, u[0], u[1], u[2]);
  return buf;
}

/// The log line of a timeline (--timeline) of `rank`: each point marked, in the order of a step,
/// and the exposed exchange as a share of the step.
std::string timeline_line(const Timeline& t, int rank) {
  std::string s = "kolibri: timeline of " + std::to_string(t.steps) +
                  " more steps (ms after a step's start, mean; rank " + std::to_string(rank) +
                  ", the slowest):";
  char buf[96];
  const char* sep = " ";
  for (const StepPointName& p : kStepPointNames) {
    if (!t.marked(p.point)) continue;
    std::snprintf(buf, sizeof buf, "%s%s %.4f", sep, std::string(p.name).c_str(),
                  t.mean_ms[std::size_t(p.point)]);
    s += buf, sep = ", ";
  }
  if (t.exposed_ms >= 0.0 && t.marked(StepPoint::End)) {
    const double step = t.mean_ms[std::size_t(StepPoint::End)];
    std::snprintf(buf, sizeof buf, "; the step goes on %.4f ms after its interior (%.1f%%)",
                  t.exposed_ms, step > 0.0 ? 100.0 * t.exposed_ms / step : 0.0);
    s += buf;
  }
  return s;
}

/// summary.json's "timeline": {"steps", "mean_ms": {point: ms}, "max_ms": {...}, "exposed_ms"}
/// (null without --timeline).
std::string timeline_json(const Timeline& t) {
  if (t.steps == 0) return "null";
  auto points = [&](const std::array<double, kStepPoints>& v) {
    JsonObject js;
    for (const StepPointName& p : kStepPointNames)
      if (t.marked(p.point)) js.add(std::string(p.name), v[std::size_t(p.point)]);
    return js.str(4);
  };
  JsonObject js;
  js.add("steps", t.steps)
      .add_raw("mean_ms", points(t.mean_ms))
      .add_raw("max_ms", points(t.max_ms));
  if (t.exposed_ms >= 0.0)
    js.add("exposed_ms", t.exposed_ms);
  else
    js.add_raw("exposed_ms", "null");
  return js.str(4);
}

/// The timeline of the slowest rank (the latest end of a step) on every rank, so that the points
/// reported belong together (collective); `rank` gets which one it is.
Timeline slowest_rank_timeline(const Comm& comm, const Timeline& mine, std::int64_t& rank) {
  const double end = mine.mean_ms[std::size_t(StepPoint::End)];
  rank = comm.min(std::int64_t(end == comm.max(end) ? comm.rank() : comm.size()));
  std::vector<double> shared(2 * kStepPoints + 1, 0.0);  // mean_ms, max_ms, exposed_ms
  if (comm.rank() == rank) {
    std::copy(mine.mean_ms.begin(), mine.mean_ms.end(), shared.begin());
    std::copy(mine.max_ms.begin(), mine.max_ms.end(), shared.begin() + kStepPoints);
    shared.back() = mine.exposed_ms;
  }
  comm.sum(shared);  // the other ranks add zeros
  Timeline t = mine;
  std::copy(shared.begin(), shared.begin() + kStepPoints, t.mean_ms.begin());
  std::copy(shared.begin() + kStepPoints, shared.end() - 1, t.max_ms.begin());
  t.exposed_ms = shared.back();
  return t;
}

}  // namespace

namespace {
/// Run `fn` on rank 0; an exception there becomes an OutputError on every rank.
template <class F>
void on_root(const Comm& comm, F&& fn) {
  std::string err;
  if (comm.root()) {
    try {
      fn();
    } catch (const std::exception& e) {
      err = e.what();
      if (err.empty()) err = "unknown error";
    }
  }
  if (comm.size() > 1) comm.bcast(err);
  if (!err.empty()) throw OutputError(err);
}

/// The first "key=value" of signature a that differs from b.
std::string first_difference(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    std::map<std::string, std::string> m;
    std::istringstream is(s);
    std::string kv;
    while (std::getline(is, kv, ';'))
      if (auto eq = kv.find('='); eq != std::string::npos) m[kv.substr(0, eq)] = kv.substr(eq + 1);
    return m;
  };
  const auto ma = split(a), mb = split(b);
  for (const auto& [k, v] : ma) {
    auto it = mb.find(k);
    if (it == mb.end()) return k + " (checkpoint: " + v + ", deck: absent)";
    if (it->second != v) return k + " (checkpoint: " + v + ", deck: " + it->second + ")";
  }
  for (const auto& [k, v] : mb)
    if (!ma.count(k)) return k + " (checkpoint: absent, deck: " + v + ")";
  return "";
}
}  // namespace

std::string divergence_advice(const SolverConfig& c) {
  std::string out = "Lower the lattice velocity or raise the resolution";
  int named = 0;
  for (const CollisionKind k :
       {CollisionKind::Trt, CollisionKind::Regularized, CollisionKind::RecursiveRegularized,
        CollisionKind::AdaptiveCentralMoment}) {
    if (k == c.collision || !supports(c.lattice, k) || named == 2) continue;
    out += std::string(named == 0 ? ", or use collision = \"" : " / \"") + to_string(k) + "\"";
    ++named;
  }
  return out + ".";
}

RunResult run_case(const Case& deck_case, std::ostream& log_all, const RunOptions& opts) {
  Case c = deck_case;  // the tuner sets the options it searches
  namespace fs = std::filesystem;
  const auto t_start = Clock::now();  // --walltime counts the set-up too
  install_stop_signals();             // a stop request during set-up is honoured at the first check
  struct Restore {
    ~Restore() { restore_stop_signals(); }
  } restore;
  const Comm& comm = Comm::world();
  std::ostream null_stream(nullptr);
  std::ostream& log = comm.root() ? log_all : null_stream;
  const SolverConfig& sc = c.solver;
  const RunConfig& rc = c.run;
  RunResult res;
  const std::string dir = rc.output_dir;
  const BackendInfo bi = backend_info();
  log << "kolibri: " << c.source << ": " << to_string(sc.lattice) << " " << to_string(sc.collision) << " "
      << to_string(sc.precision) << ", " << sc.nx << "x" << sc.ny << "x" << sc.nz << " cells, tau "
      << sc.tau << ", nu " << sc.viscosity();
  if (c.reynolds > 0) log << ", Re " << c.reynolds;
  log << "\nkolibri: backend " << bi.execution_space << " (" << bi.device << "), Kokkos " << bi.kokkos_version
      << ", output in " << dir << "/" << std::endl;

  for (std::size_t k = 0; k < sc.obstacles.size(); ++k)  // meshes: what was read
    if (const std::string m = describe_mesh_obstacle(sc.obstacles, k); !m.empty())
      log << "kolibri: " << m << "\n";
  GeometryReport sparse;  // porous samples: tiles and the tile model (docs/theory.md, "Tiles")
  if (sc.geometry.given()) {
    sparse = geometry_report(sc);
    // layout auto (not under the tuner, which searches the dense box's layouts)
    if (sparse.auto_tile_edge > 0 && !c.tune.enabled) c.solver.tile_edge = sparse.auto_tile_edge;
    std::istringstream lines(sparse.text);
    for (std::string line; std::getline(lines, line);) log << "kolibri: " << line << "\n";
    if (sparse.auto_tile_edge > 0 && c.tune.enabled)
      log << "kolibri: tiles: the tuner is on: it searches the dense box's layouts, so the run "
             "stays on the dense box\n";
    log << std::flush;
  }
  for (std::size_t f = 0; f < 6; ++f) {  // each pressure face's rule, as make_solver resolves it
    const FaceBC& face = c.solver.faces[f];
    if (!face.is_pressure()) continue;
    log << "kolibri: boundary." << kFaceNames[f] << ": " << to_string(face.type)
        << ", pressure_rule \"" << to_string(resolved_pressure_rule(face)) << "\""
        << (face.pressure_rule == PressureRule::Auto ? " (auto)" : "");
    if (face.is_characteristic()) {
      log << ", relaxation " << std::setprecision(3) << characteristic_relaxation(c.solver, f)
          << std::setprecision(6) << " a step";
      if (face.relaxation < 0.0)
        log << " (" << kCharacteristicSigma << " c_s / L, L = " << c.solver.global_n(int(f / 2))
            << " cells)";
    }
    log << "\n";
  }

  TuneReport tuned;
  if (c.tune.enabled) {
    if (comm.size() > 1)
      throw DeckError(c.source + ": tune.enabled: the tuner times one GPU; tune on one rank (kolibri tune) and set "
                                 "the chosen [model] and [ib] keys for the multi-rank run");
    try {
      tuned = autotune(c, log);
    } catch (const std::invalid_argument& e) {
      throw DeckError(c.source + ": " + e.what());
    }
  }
  const int alpha = sc.tile_edge > 0 ? 0 : csoa_alpha_for(sc);  // tiles: their own layout
  const std::string layout = sc.tile_edge > 0 ? "tiles" : alpha ? "csoa" : "soa";
  if (sc.csoa_alpha >= 0 || sc.tile_edge > 0 || sc.face_kernels || sc.collision_kernels != 1)
    log << "kolibri: kernels: layout "
        << (sc.tile_edge > 0 ? "tiles of " + std::to_string(sc.tile_edge) + " cells a side"
            : alpha          ? "csoa " + std::to_string(alpha)
                             : std::string("soa"))
        << ", boundary kernels " << (sc.face_kernels ? "faces" : "list") << ", collision in "
        << sc.collision_kernels << (sc.collision_kernels == 1 ? " launch" : " launches")
        << std::endl;

  // Ranks: a Cartesian process grid. Halo transport: NCCL/RCCL between GPUs where built, else
  // MPI, handed device buffers only when it says it can take them.
  Distribution dist;
  std::unique_ptr<NcclComm> nccl;
  if (comm.size() > 1) {
    if (sc.refinement.active()) {
      // A refined grid is cut among the ranks along its last axis between level-0 blocks, by
      // the cell updates (refine/LevelRanks.hpp); the solver makes the cut.
      std::array<int, 3> along{1, 1, 1};
      along[std::size_t(dimensions(sc.lattice) - 1)] = comm.size();
      if (rc.grid != std::array<int, 3>{0, 0, 0} && rc.grid != along)
        throw DeckError(c.source + ": --grid " + std::to_string(rc.grid[0]) + "x" +
                        std::to_string(rc.grid[1]) + "x" + std::to_string(rc.grid[2]) +
                        ": a refined grid is cut along " +
                        (dimensions(sc.lattice) == 3 ? "z" : "y") + " only (--grid " +
                        std::to_string(along[0]) + "x" + std::to_string(along[1]) + "x" +
                        std::to_string(along[2]) + ", or leave --grid out)");
      dist.dc.dims = along;
      dist.comm = &comm;
    } else {
      try {
        dist = distribute(sc, comm, rc.grid, balance_for(sc, rc.balance));
      } catch (const std::invalid_argument& e) {
        throw DeckError(c.source + ": " + e.what());
      }
    }
    const bool gpu = !kHostMemory;
    if (rc.halo_transport == "nccl" && !(gpu && NcclComm::built()))
      throw DeckError(c.source + ": parallel.transport = \"nccl\": " +
                      (gpu ? "this kolibri was built without NCCL (-DKOLIBRI_ENABLE_NCCL=ON)" : "NCCL needs a GPU backend"));
    // NCCL takes one rank per GPU: with ranks sharing a device, auto falls back to MPI.
    const auto uids = comm.allgather(bi.device_uid);
    const bool distinct = std::set<std::string>(uids.begin(), uids.end()).size() == uids.size();
    if (rc.halo_transport == "nccl" && !distinct)
      throw DeckError(c.source + ": parallel.transport = \"nccl\": some ranks share a GPU (NCCL needs one rank per GPU)");
    std::string how;
    if (gpu && rc.halo_transport != "mpi" && NcclComm::built() && distinct) {
      nccl = std::make_unique<NcclComm>(comm);
      dist.nccl = nccl.get();
      how = "through NCCL (device to device)";
    } else {
      dist.device_buffers =
          gpu && (rc.gpu_aware_mpi == "on" || (rc.gpu_aware_mpi == "auto" && Comm::mpi_reports_gpu_support()));
      how = !gpu ? "through MPI from host memory"
            : dist.device_buffers ? "through GPU-aware MPI (device buffers)"
                                  : (KOKKOS_VERSION >= 40000 ? "through MPI, staged in page-locked host buffers"
                                                             : "through MPI, staged in host buffers");
    }
    log << "kolibri: " << comm.size() << " ranks as a " << dist.dc.dims[0] << "x" << dist.dc.dims[1] << "x"
        << dist.dc.dims[2] << " grid, halo exchange " << how << std::endl;
    // (a refined grid cuts its levels' blocks instead and says where: RefinedGrid::ranks_report)
    if (sc.geometry.given() && sc.refinement.levels <= 1)
      log << "kolibri: " << slab_report(sc, dist.dc) << std::endl;
  }

  std::unique_ptr<Solver> solver;
  try {
    solver = comm.size() > 1 ? make_solver(sc, dist) : make_solver(sc);  // allocates first
  } catch (const std::invalid_argument& e) {
    // A refined grid's levels are built here, not in the deck's checks: what they refuse (an
    // obstacle cut by an interface, levels too large for the device) is the deck's error too,
    // and like it leaves nothing behind: the solver is made before the output directory is.
    if (!sc.refinement.active()) throw;
    throw DeckError(c.source + ": " + e.what());
  }

  // One run at a time in an output directory (summary.json and the field files are shared).
  OutputLock lock;
  on_root(comm, [&] { lock = OutputLock(dir); });

  // A restart reads its checkpoint before anything is written or removed. `latest` tries the
  // newest checkpoint and, when it is damaged, the older ones (unless told not to fall back).
  std::vector<std::string> candidates;
  if (!opts.restart.empty()) {
    std::string listed, err;
    if (comm.root()) {
      if (opts.restart == "latest") {
        const auto all = list_checkpoints(dir, rc.name);
        if (all.empty())
          err = dir + ": no complete checkpoint of '" + rc.name +
                "' to restart from (--restart latest)";
        for (auto it = all.rbegin(); it != all.rend(); ++it) listed += *it + "\n";
      } else {
        listed = opts.restart + "\n";
      }
    }
    comm.bcast(err);
    if (!err.empty()) throw CheckpointError(err);
    comm.bcast(listed);
    for (std::size_t at = 0, nl; (nl = listed.find('\n', at)) != std::string::npos; at = nl + 1)
      candidates.push_back(listed.substr(at, nl - at));
    if (!opts.restart_fallback) candidates.resize(1);
  }

  // A refined grid (refine/): its levels in the log, its level fields beside the level-0 ones.
  const auto* refined = dynamic_cast<const RefinedGrid*>(solver.get());
  if (refined) {
    for (const std::string& line : octree_report(refined->octree(), solver->bytes_per_cell()))
      log << "kolibri: refinement: " << line << "\n";
    log << "kolibri: refinement: " << solver->fluid_cells()
        << " cell updates a step of level 0 (every level's fluid cells times its steps)"
        << std::endl;
    if (const std::string cut = refined->ranks_report(); !cut.empty())
      log << "kolibri: refinement: " << cut << std::endl;
  }
  CheckpointInfo restart_info;
  std::string restart_path;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& cand = candidates[i];
    // Every rank reads the manifest and its own pieces; all agree on the outcome (a lagging file
    // system must not split them). A checkpoint of another set-up is the user's error, not damage.
    std::string err;
    StatePiece mine;
    std::vector<double> ib_forces;  // the implicit forcing's last solution (empty: none)
    std::vector<std::byte> levels;  // a refined grid's levels (empty: none)
    std::vector<double> outlets;    // the characteristic outlets' state (empty: none)
    mine.box = solver->state_box();
    try {
      restart_info = read_checkpoint_info(cand);
      const std::string diff = first_difference(restart_info.signature, solver_signature(sc));
      if (!diff.empty())
        throw std::invalid_argument(
            cand + ": written for another set-up; the deck differs in " + diff +
            ". A restart continues the same case (only [run] keys may change).");
      if (restart_info.step > rc.steps)
        throw std::invalid_argument(cand + ": at step " + std::to_string(restart_info.step) +
                                    ", beyond run.steps = " + std::to_string(rc.steps) +
                                    ": raise run.steps to continue");
      if (restart_info.value_type != solver->value_type() ||
          restart_info.q != solver->populations_per_cell())
        throw std::invalid_argument(cand + ": holds " + restart_info.value_type +
                                    " values, this set-up stores " + solver->value_type());
      read_checkpoint_state(cand, restart_info, mine);
      ib_forces = read_checkpoint_ib_forces(cand, restart_info);
      // A refined grid's levels: each rank its part; rank 0 reads the whole file once to check it.
      levels = read_checkpoint_levels(cand, restart_info, solver->level_slice(), comm.root());
      outlets = read_checkpoint_outlet_state(cand, restart_info);
    } catch (const std::invalid_argument& e) {
      err = std::string("M") + e.what();
    } catch (const std::exception& e) {
      err = std::string("D") + e.what();
    }
    std::string first;
    for (const auto& e : comm.allgather(err))
      if (!e.empty() && (first.empty() || (first[0] == 'D' && e[0] == 'M'))) first = e;
    if (first.empty()) {
      restart_path = cand;
      solver->load_state(mine, restart_info.phase);
      solver->set_level_state(levels);  // a refined grid: its levels replace the pieces' average
      solver->set_outlet_state(outlets);
      solver->set_body_motion(restart_info.body_motion);
      // The implicit forcing's last forces, the next solve's first guess, when they fit this
      // deck's samples ([ib] keys such as retraction may change on a restart; then the first
      // solve starts cold, and the run continues, though not bit for bit).
      const std::string aside = solver->set_ib_coupling_forces(ib_forces);
      if (!aside.empty())
        log << "kolibri: note: " << cand << " holds the implicit forcing's forces of "
            << ib_forces.size() / 3 << " samples; " << aside << ", so the first solve starts cold"
            << std::endl;
      solver->set_steps_done(restart_info.step);
      break;
    }
    if (first[0] == 'M' || i + 1 == candidates.size()) throw CheckpointError(first.substr(1));
    log << "kolibri: warning: skipped the damaged checkpoint " << cand << " (" << first.substr(1)
        << "); trying the next older one (--no-restart-fallback refuses instead)" << std::endl;
  }
  if (!restart_path.empty())
    log << "kolibri: restarted from " << restart_path << " at step " << restart_info.step
        << " (written by " << restart_info.ranks << (restart_info.ranks == 1 ? " rank" : " ranks")
        << ", " << restart_info.created << ")" << std::endl;
  const std::int64_t first_step = restart_path.empty() ? 0 : restart_info.step;
  if (refined)  // a body on a prescribed path: inside the finest level to the run's last step
    if (const auto why = refined->travel_ahead(first_step, rc.steps))
      throw DeckError(c.source + ": run.steps = " + std::to_string(rc.steps) + ": " + *why);

  if (restart_path.empty()) {  // never delete an earlier run's checkpoints without being asked
    std::vector<std::string> old;
    if (comm.root()) old = list_checkpoints(dir, rc.name);
    if (comm.any(!old.empty()))
      throw OutputError(dir + ": holds checkpoints of an earlier run of '" + rc.name + "' (newest: " +
                      (old.empty() ? std::string("?") : old.back()) +
                      "). Continue it with --restart latest, or remove them (or use another run.name or output "
                      "directory) to start afresh.");
  }
  on_root(comm, [&] {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw OutputError(dir + ": cannot create the output directory (" + ec.message() + ")");
    if (!restart_path.empty()) return;  // a restart continues the files of its run
    // files of an earlier run of this case would mix with this one's (and its plots)
    int removed = 0;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      bool ours = f == "summary.json" || f == rc.name + ".xdmf" || f == rc.name + "_levels.xdmf" ||
                  (f.rfind(rc.name + "_", 0) == 0 && e.path().extension() == ".h5");
      for (const auto& p : c.probes)
        ours = ours || f == "probe_" + p.name + ".csv" || f.rfind("line_" + p.name, 0) == 0;
      ours = ours || (f == "statistics.csv" && rc.statistics_every > 0) ||
             (f == "bodies.csv" && !sc.bodies.empty()) ||
             (f == "obstacles.csv" && !sc.obstacles.empty());
      if (ours && fs::remove(e.path(), ec)) ++removed;
    }
    if (removed > 0) log << "kolibri: removed " << removed << " files of an earlier run of '" << rc.name << "' in " << dir << "\n";
  });
  const Diagnostics d0 = solver->diagnostics();
  const double mass0 = d0.mass;
  const double fluid = double(solver->fluid_cells());

  // Probes: point probes append to CSV time series, line probes are written at output times.
  // A point probe samples its cell, or the cells around its point (interpolated). On a refined
  // grid a point between cells reads the cells around it on the finest level there
  // (RefinedGrid::level_at; Sampled::level > 0), a cell probe its deck cell (level 0's).
  struct Sampled {
    PointStencil stencil;
    int level = 0;
  };
  const std::int64_t default_every = std::max<std::int64_t>(1, rc.steps / 200);
  const DenseGrid domain = DenseGrid::whole(sc.nx, sc.ny, sc.nz);
  const std::array<bool, 3> periodic = sc.periodic_axes();
  auto point_at = [&](const std::array<double, 3>& at) {
    const int level = refined ? refined->level_at(at) : 0;
    if (level == 0) return Sampled{point_stencil(at, {sc.nx, sc.ny, sc.nz}, periodic), 0};
    const RefinedLevel& h = refined->octree().levels[std::size_t(level)];
    std::array<double, 3> x = at;
    for (std::size_t d = 0; d < 3; ++d)
      if (h.n[d] > 1) x[d] = std::ldexp(x[d], level);
    return Sampled{point_stencil(x, h.n, periodic), level};
  };
  // The values at `points` (collective): level by level, one sample of each level's cells.
  auto values_at = [&](const std::vector<const Sampled*>& points) {
    std::vector<PointValue> out(points.size());
    int levels = 1;
    for (const Sampled* p : points) levels = std::max(levels, p->level + 1);
    for (int level = 0; level < levels; ++level) {
      std::vector<std::int64_t> cells;
      std::vector<std::size_t> which, offsets;  // the points of this level, their cells' start
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (points[i]->level != level) continue;
        which.push_back(i), offsets.push_back(cells.size());
        cells.insert(cells.end(), points[i]->stencil.cells.begin(), points[i]->stencil.cells.end());
      }
      if (cells.empty()) continue;
      const MacroFields m = level == 0 ? solver->sample(cells) : refined->level_cells(level, cells);
      for (std::size_t k = 0; k < which.size(); ++k)
        out[which[k]] = interpolate(points[which[k]]->stencil, m, offsets[k]);
    }
    return out;
  };
  std::vector<Sampled> point_samples;
  std::vector<CsvFile> point_files;
  for (const auto& p : c.probes) {
    if (p.kind != Probe::Kind::Point) continue;
    if (p.interpolated)
      point_samples.push_back(point_at(p.at));
    else
      point_samples.push_back(
          {{{domain.global_index(p.position[0], p.position[1], p.position[2])}, {1.0}}, 0});
  }
  on_root(comm, [&] {
    for (const auto& p : c.probes) {
      if (p.kind != Probe::Kind::Point) continue;
      const std::string path = dir + "/probe_" + p.name + ".csv";
      // The rows before the restart step: the restart samples its own step again.
      const std::string kept = kept_rows(path, "step,rho,ux,uy,uz\n", !restart_path.empty(), first_step, 5);
      point_files.emplace_back(path, kept);
    }
  });
  // Immersed bodies: force and torque of every body, one row per body every loads_every steps.
  CsvFile loads_file;
  on_root(comm, [&] {
    if (sc.bodies.empty()) return;
    const std::string path = dir + "/bodies.csv";
    // The rows up to the restart step, its own included (a restart writes no loads before it steps).
    const std::string kept =
        kept_rows(path, "step,body,fx,fy,fz,tx,ty,tz,cx,cy,cz,vx,vy,vz,wx,wy,wz\n",
                  !restart_path.empty(), first_step + 1, 17);
    loads_file = CsvFile(path, kept);
  });
  // Bounce-back obstacles: momentum-exchange force and torque, one row per obstacle.
  const std::int64_t obstacle_every =
      rc.obstacle_loads_every > 0 ? rc.obstacle_loads_every : default_every;
  CsvFile obstacles_file;
  on_root(comm, [&] {
    if (sc.obstacles.empty()) return;
    const std::string path = dir + "/obstacles.csv";
    const std::string kept = kept_rows(path, "step,obstacle,fx,fy,fz,tx,ty,tz\n",
                                       !restart_path.empty(), first_step + 1, 8);
    obstacles_file = CsvFile(path, kept);
  });
  auto write_obstacle_loads = [&](std::int64_t step) {
    if (sc.obstacles.empty() || step % obstacle_every != 0 || step == first_step) return;
    const auto loads = solver->obstacle_loads();  // collective
    on_root(comm, [&] {
      std::string rows;
      for (const auto& l : loads) {
        char buf[400];
        std::snprintf(buf, sizeof buf, "%lld,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n",
                      (long long)step, l.name.c_str(), l.force[0], l.force[1], l.force[2],
                      l.torque[0], l.torque[1], l.torque[2]);
        rows += buf;
      }
      obstacles_file.append(rows);  // all obstacles of the step or none
    });
  };
  auto write_loads = [&](std::int64_t step) {
    write_obstacle_loads(step);
    if (sc.bodies.empty() || step % sc.ib.loads_every != 0 || step == first_step) return;
    const auto loads = solver->body_loads();
    on_root(comm, [&] {
      std::string rows;
      for (const auto& l : loads) {
        char buf[600];
        std::snprintf(buf, sizeof buf,
                      "%lld,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.8g,%.8g,%."
                      "8g,%.8g,%.8g,%.8g\n",
                      (long long)step, l.name.c_str(), l.force[0], l.force[1], l.force[2],
                      l.torque[0], l.torque[1], l.torque[2], l.centre[0], l.centre[1], l.centre[2],
                      l.velocity[0], l.velocity[1], l.velocity[2], l.angular_velocity[0],
                      l.angular_velocity[1], l.angular_velocity[2]);
        rows += buf;
      }
      loads_file.append(rows);  // all bodies of the step or none
    });
  };
  // The point probes due at `step` (collective).
  auto sample_points = [&](std::int64_t step, bool force) {
    std::vector<std::size_t> due;
    std::vector<const Sampled*> points;
    std::size_t k = 0;
    for (const auto& p : c.probes) {
      if (p.kind != Probe::Kind::Point) continue;
      const std::int64_t every = p.every > 0 ? p.every : default_every;
      if (force || step % every == 0) due.push_back(k), points.push_back(&point_samples[k]);
      ++k;
    }
    if (points.empty()) return;
    const std::vector<PointValue> values = values_at(points);
    on_root(comm, [&] {
      for (std::size_t i = 0; i < due.size(); ++i)
        point_files[due[i]].append(csv_row(step, values[i].rho, values[i].u));
    });
  };
  // Line probes: the cells of each line, from the gathered fields at output times or sampled
  // alone on their own cadence (`every`).
  const int extent[3] = {sc.nx, sc.ny, sc.nz};  // the deck's cells along each axis
  auto line_cells = [&](const Probe& p) {
    const int n = extent[p.axis];
    std::vector<std::array<int, 3>> cells(std::size_t(n), p.position);
    for (int i = 0; i < n; ++i) cells[std::size_t(i)][std::size_t(p.axis)] = i;
    return cells;
  };
  auto line_csv = [&](const Probe& p, const MacroFields& f, bool sampled) {
    const auto cells = line_cells(p);
    std::string csv = "x,y,z,s,rho,ux,uy,uz,p\n";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto& cell = cells[i];
      const auto k = sampled ? i : f.index(cell[0], cell[1], cell[2]);
      char buf[300];
      std::snprintf(buf, sizeof buf, "%d,%d,%d,%.8g,%.12g,%.12g,%.12g,%.12g,%.12g\n", cell[0],
                    cell[1], cell[2], (double(i) + 0.5) / double(cells.size()), f.rho[k], f.u[k][0],
                    f.u[k][1], f.u[k][2], lattice_pressure(f.rho[k]));
      csv += buf;
    }
    return csv;
  };
  // A line between cells (`at`): a point at each cell it passes along its axis (on a refined
  // grid each leaf cell, of whichever level holds it), interpolated across the line as a point
  // between cells is; its rows give the points' coordinates and levels.
  struct LinePoints {
    std::vector<std::array<double, 3>> at;
    std::vector<Sampled> sampled;
  };
  auto line_points = [&](const Probe& p) {
    LinePoints out;
    const std::size_t a = std::size_t(p.axis);
    const int n = extent[p.axis];
    const int finest = refined ? int(refined->octree().levels.size()) - 1 : 0;
    for (double x = 0.0; x < n;) {  // x: where the next cell begins (a level's cell edge)
      std::array<double, 3> at = p.at;
      at[a] = x + std::ldexp(0.5, -finest);  // inside that cell
      const int level = refined ? refined->level_at(at) : 0;
      const double lo = std::ldexp(std::floor(std::ldexp(x, level)), -level);
      at[a] = lo + std::ldexp(0.5, -level);  // its centre
      out.at.push_back(at);
      out.sampled.push_back(point_at(at));
      x = lo + std::ldexp(1.0, -level);
    }
    return out;
  };
  std::vector<LinePoints> lines_between(c.probes.size());  // by probe; lines between cells only
  for (std::size_t i = 0; i < c.probes.size(); ++i)
    if (c.probes[i].kind == Probe::Kind::Line && c.probes[i].interpolated)
      lines_between[i] = line_points(c.probes[i]);
  auto between_csv = [&](std::size_t i) {  // collective
    const LinePoints& line = lines_between[i];
    std::vector<const Sampled*> points;
    for (const Sampled& p : line.sampled) points.push_back(&p);
    const std::vector<PointValue> v = values_at(points);
    const std::size_t a = std::size_t(c.probes[i].axis);
    const double n = extent[a];
    std::string csv = "x,y,z,s,rho,ux,uy,uz,p,level\n";
    for (std::size_t k = 0; k < v.size(); ++k) {
      const auto& x = line.at[k];
      char buf[320];
      std::snprintf(buf, sizeof buf, "%.10g,%.10g,%.10g,%.8g,%.12g,%.12g,%.12g,%.12g,%.12g,%d\n",
                    x[0], x[1], x[2], x[a] / n, v[k].rho, v[k].u[0], v[k].u[1], v[k].u[2],
                    lattice_pressure(v[k].rho), line.sampled[k].level);
      csv += buf;
    }
    return csv;
  };
  auto write_line = [&](const Probe& p, const std::string& csv, std::int64_t step, bool final) {
    write_file_atomic(dir + "/line_" + p.name + "_" + std::to_string(step) + ".csv", csv);
    if (final) write_file_atomic(dir + "/line_" + p.name + ".csv", csv);
  };
  // The lines written at field output: those along cells from the gathered fields (on rank 0),
  // those between cells from `between` (their rows, sampled by every rank before).
  auto write_lines = [&](const MacroFields& f, std::int64_t step, bool final,
                         const std::vector<std::pair<std::size_t, std::string>>& between) {
    for (const auto& p : c.probes)
      if (p.kind == Probe::Kind::Line && p.every == 0 && !p.interpolated)
        write_line(p, line_csv(p, f, false), step, final);
    for (const auto& [i, csv] : between) write_line(c.probes[i], csv, step, final);
  };
  // The lines with their own cadence: their cells only, every `every` steps and at the end.
  auto sample_lines = [&](std::int64_t step, bool final) {
    for (std::size_t i = 0; i < c.probes.size(); ++i) {
      const Probe& p = c.probes[i];
      if (p.kind != Probe::Kind::Line || p.every == 0) continue;
      if (!final && (step % p.every != 0 || step >= rc.steps)) continue;
      if (p.interpolated) {
        const std::string csv = between_csv(i);  // collective
        on_root(comm, [&] { write_line(p, csv, step, final); });
        continue;
      }
      std::vector<std::int64_t> cells;
      for (const auto& cell : line_cells(p))
        cells.push_back(domain.global_index(cell[0], cell[1], cell[2]));
      const MacroFields m = solver->sample(cells);  // collective
      on_root(comm, [&] { write_line(p, line_csv(p, m, true), step, final); });
    }
  };
  // Flow statistics (statistics.csv): kinetic energy and enstrophy (reduced on the device on one
  // rank, from the gathered fields on several), the dissipation rate as -dE/dt between rows and
  // as 2 nu times the enstrophy.
  CsvFile statistics_file;
  const char* statistics_head =
      "step,kinetic_energy,enstrophy,dissipation_from_energy,dissipation_from_enstrophy\n";
  double last_energy = std::numeric_limits<double>::quiet_NaN();
  std::int64_t last_energy_step = 0;
  on_root(comm, [&] {
    if (rc.statistics_every == 0) return;
    const std::string path = dir + "/statistics.csv";
    const std::string kept = kept_rows(path, statistics_head, !restart_path.empty(), first_step, 5);
    statistics_file = CsvFile(path, kept);
    // A restart goes on from the last row kept (its energy gives the next rate).
    const auto row = kept.rfind('\n', kept.size() - 2);
    if (row != std::string::npos && row + 1 < kept.size() &&
        kept.compare(row + 1, 4, "step") != 0) {
      long long at = 0;
      double energy = 0.0;
      if (std::sscanf(kept.c_str() + row + 1, "%lld,%lf", &at, &energy) == 2)
        last_energy = energy, last_energy_step = at;
    }
  });
  auto write_statistics = [&](std::int64_t step) {
    if (rc.statistics_every == 0 || step % rc.statistics_every != 0) return;
    const FlowStatistics st = solver->flow_statistics();  // collective
    on_root(comm, [&] {
      const double rate = step > last_energy_step
                              ? -(st.kinetic_energy - last_energy) / double(step - last_energy_step)
                              : std::numeric_limits<double>::quiet_NaN();
      char buf[200];
      std::snprintf(buf, sizeof buf, "%lld,%.17g,%.12g,%.12g,%.12g\n", (long long)step,
                    st.kinetic_energy, st.enstrophy, rate, 2.0 * sc.viscosity() * st.enstrophy);
      statistics_file.append(buf);
      last_energy = st.kinetic_energy, last_energy_step = step;
    });
  };
  std::vector<std::pair<std::int64_t, std::string>> outputs;
  auto field_file = [&](std::int64_t step) {
    char name[64];
    std::snprintf(name, sizeof name, "_%08lld", (long long)step);
    return rc.name + name;
  };
  if (!restart_path.empty() && rc.output_every > 0)  // the series so far, for the XDMF
    for (std::int64_t s = 0; s <= first_step; s += rc.output_every)
      if (fs::exists(dir + "/" + field_file(s) + ".h5")) outputs.emplace_back(s, field_file(s) + ".h5");
  bool gathered_lines = false;  // line probes written from the gathered fields
  for (const auto& p : c.probes)
    gathered_lines = gathered_lines || (p.kind == Probe::Kind::Line && p.every == 0);
  std::vector<std::pair<std::int64_t, std::string>> level_outputs;  // refined grids
  auto write_output = [&](std::int64_t step, bool final, const std::string& tag = "") {
    if (!rc.write_fields && !gathered_lines) return;
    std::vector<LevelFields> levels;  // refined grids: every level's cells as they are, on rank 0
    if (refined && rc.write_fields)
      for (std::size_t l = 0; l < refined->octree().levels.size(); ++l)
        levels.push_back(refined->level_fields(int(l)));  // collective
    // The level-0 fields, gathered on rank 0 (collective); a refined grid's from its levels.
    const MacroFields f = levels.empty() ? solver->macroscopic() : refined->deck_average(levels);
    std::vector<std::pair<std::size_t, std::string>> between;  // lines between cells (collective)
    for (std::size_t i = 0; i < c.probes.size(); ++i)
      if (c.probes[i].kind == Probe::Kind::Line && c.probes[i].every == 0 &&
          c.probes[i].interpolated)
        between.emplace_back(i, between_csv(i));
    if (!levels.empty()) {
      on_root(comm, [&] {
        char num[32];
        std::snprintf(num, sizeof num, "_levels_%08lld", static_cast<long long>(step));
        const std::string file = rc.name + num + tag + ".h5";
        const auto cells =
            write_levels_hdf5(dir + "/" + file, levels, step, dimensions(sc.lattice));
        if (tag.empty()) {
          if (!level_outputs.empty() && level_outputs.back().first == step)
            level_outputs.pop_back();
          level_outputs.emplace_back(step, file);
        }
        write_file_atomic(dir + "/" + rc.name + "_levels.xdmf",
                          xdmf_levels_series(level_outputs, cells, dimensions(sc.lattice)));
      });
    }
    on_root(comm, [&] {
      if (rc.write_fields) {
        const std::string file = field_file(step) + tag + ".h5";
        write_fields_hdf5(dir + "/" + file, f, step, c.units);
        if (tag.empty()) {
          if (!outputs.empty() && outputs.back().first == step) outputs.pop_back();  // e.g. a restart at the end
          outputs.emplace_back(step, file);
        }
        write_file_atomic(dir + "/" + rc.name + ".xdmf",
                          xdmf_series(outputs, sc.nx, sc.ny, sc.nz, c.units));
      }
      write_lines(f, step, final, between);
    });
  };

  // Checkpoints: the full state, every checkpoint_every steps and when stopped early.
  double ckpt_seconds = -1.0;  // duration of the last checkpoint write
  auto write_ckpt = [&](std::int64_t step) {
    const auto t0 = Clock::now();
    const std::string path = checkpoint_path(dir, rc.name, step);
    // Something at `path` already: an intact checkpoint of this set-up at this step (a restart
    // from an older one reaching it again: a deterministic run writes the same state) counts;
    // anything else (damaged, incomplete, another set-up) is moved aside, never deleted.
    bool there = false;
    if (comm.root()) {
      std::error_code ec;
      there = fs::exists(path, ec);
    }
    there = comm.any(there);
    if (there) {
      std::string why;
      try {
        const CheckpointInfo found = verify_checkpoint(comm, path);
        if (found.signature != solver_signature(sc)) why = "written for another set-up";
      } catch (const CheckpointError& e) {
        why = e.what();
      }
      if (why.empty()) {
        res.checkpoint = path;
        log << "kolibri: checkpoint at step " << step << ": " << path
            << " (there already, verified)" << std::endl;
        return;
      }
      on_root(comm, [&] {
        const std::string aside = move_aside(path, "damaged");
        log << "kolibri: warning: moved " << path << " aside to " << aside << " (" << why << ")"
            << std::endl;
      });
    }
    CheckpointInfo info;
    info.step = step;
    info.kolibri_version = bi.version;
    info.created = now_iso();
    info.deck = opts.deck_text;
    info.signature = solver_signature(sc);
    info.value_type = solver->value_type();
    info.q = solver->populations_per_cell();
    info.global = {sc.nx, sc.ny, sc.nz};
    info.ranks = comm.size();
    info.body_motion = solver->body_motion();
    info.ib_forces = solver->ib_coupling_forces();
    info.outlet_state = solver->outlet_state();
    {
      CheckpointState state = solver->checkpoint_state();  // collective
      info.phase = state.phase;
      info.level_state = std::move(state.levels);  // a refined grid's levels, on rank 0
      write_checkpoint(comm, path, info, state.piece);
      std::vector<std::byte>().swap(info.level_state);  // written: not held while it is verified
    }
    // It counts, and older ones may go, only once it reads back intact.
    try {
      (void)verify_checkpoint(comm, path);
    } catch (const CheckpointError& e) {
      std::string aside;
      on_root(comm, [&] { aside = move_aside(path, "damaged"); });
      throw OutputError(std::string(e.what()) +
                        ": the checkpoint just written does not read back intact (moved aside to " +
                        aside + "; the older checkpoints are kept)");
    }
    on_root(comm, [&] {  // keep this one and the newest older ones; never one of a later step
      for (const auto& old : prune_checkpoints(dir, rc.name, rc.checkpoint_keep, step))
        log << "kolibri: removed the older checkpoint " << old << "\n";
    });
    ckpt_seconds = comm.max(seconds_since(t0));
    res.checkpoint = path;
    char buf[96];
    std::snprintf(buf, sizeof buf, " (%.2f s, verified)", ckpt_seconds);
    log << "kolibri: checkpoint at step " << step << ": " << path << buf << std::endl;
  };

  Progress progress(rc, log);
  sample_points(first_step, restart_path.empty());  // a restart samples only the probes due now
  if (restart_path.empty()) sample_lines(first_step, false);
  write_statistics(first_step);
  if (rc.output_every > 0 && restart_path.empty()) write_output(0, false);

  double t_step = 0.0;
  std::int64_t step = first_step, chunk = 1;
  Diagnostics d = d0;
  std::string stop_reason;
  auto next_multiple = [](std::int64_t s, std::int64_t every) { return every > 0 ? (s / every + 1) * every : INT64_MAX; };
  while (step < rc.steps) {
    std::int64_t target = std::min(rc.steps, step + chunk);
    target = std::min(target, next_multiple(step, rc.output_every));
    target = std::min(target, next_multiple(step, rc.log_every));
    target = std::min(target, next_multiple(step, rc.checkpoint_every));
    for (const auto& p : c.probes)
      if (p.kind == Probe::Kind::Point || p.every > 0)
        target = std::min(target, next_multiple(step, p.every > 0 ? p.every : default_every));
    target = std::min(target, next_multiple(step, rc.statistics_every));
    if (!sc.bodies.empty()) target = std::min(target, next_multiple(step, sc.ib.loads_every));
    if (!sc.obstacles.empty()) target = std::min(target, next_multiple(step, obstacle_every));
    const auto t0 = Clock::now();
    try {
      solver->step(target - step);
    } catch (const RunHalted& e) {  // the steps before it were taken: their fields are written
      progress.close();
      t_step += comm.max(seconds_since(t0));
      step = solver->steps_done();
      res.exit_code = kExitHalted;
      res.message = "the run stopped at step " + std::to_string(step) + ": " + e.what();
      try {
        write_output(step, false, "_halted");
      } catch (const OutputError&) {
      }
      break;
    }
    const double dt = comm.max(seconds_since(t0));  // every rank takes the same next chunk
    t_step += dt;
    // Aim at about 0.2 s of stepping between checks: blow-ups are caught early, cost stays low.
    chunk = std::clamp<std::int64_t>(dt > 0 ? std::int64_t(double(target - step) * 0.2 / dt) : chunk * 2, 1, 100000);
    step = target;

    d = solver->diagnostics();
    if (d.first_bad >= 0) {
      progress.close();
      const Coord bad = DenseGrid::whole(sc.nx, sc.ny, sc.nz).global_coords_of(d.first_bad);
      std::ostringstream os;
      os << "the solution diverged by step " << step << ": cell (" << bad.x << ", " << bad.y << ", "
         << bad.z << ") holds a non-finite density or velocity (max |u| before was "
         << res.max_speed << "). " << divergence_advice(sc);
      res.exit_code = kExitDiverged;
      res.message = os.str();
      try {
        write_output(step, false, "_diverged");
      } catch (const OutputError&) {
      }
      break;
    }
    res.max_speed = d.max_speed;
    sample_points(step, false);
    sample_lines(step, false);
    write_statistics(step);
    write_loads(step);
    if (rc.output_every > 0 && step % rc.output_every == 0 && step < rc.steps) write_output(step, false);
    if (rc.checkpoint_every > 0 && step % rc.checkpoint_every == 0 && step < rc.steps) write_ckpt(step);
    if (progress.due(step)) {
      const double mlups = t_step > 0 ? fluid * double(step - first_step) / t_step * 1e-6 : 0.0;
      const double eta = step > first_step ? t_step / double(step - first_step) * double(rc.steps - step) : 0.0;
      progress.report(step, mlups, eta, d, mass0 > 0 ? (d.mass - mass0) / mass0 : 0.0);
    }
    // Stop requests: a signal on any rank, or too little wall time left for another chunk and a
    // checkpoint (estimated from the state size at 200 MB/s until one has been timed).
    if (step < rc.steps) {
      const int sig = int(comm.max(std::int64_t(stop_signal())));
      if (sig != 0) {
        stop_reason = std::string("received ") + signal_name(sig);
      } else if (opts.walltime > 0) {
        const double stored = double(solver->state_box().cells()) * solver->populations_per_cell() *
                              value_bytes(solver->value_type());  // this rank's checkpoint bytes
        const double ckpt = ckpt_seconds >= 0 ? ckpt_seconds : comm.max(stored) / 2e8 + 1.0;
        const double elapsed = comm.max(seconds_since(t_start));
        if (elapsed + 2.0 * dt + 1.5 * ckpt >= opts.walltime) {
          char buf[128];
          std::snprintf(buf, sizeof buf, "wall-time limit near (%.1f of %.1f s used)", elapsed,
                        opts.walltime);
          stop_reason = buf;
        }
      }
      if (!stop_reason.empty()) break;
    }
  }
  progress.close();
  res.steps = step;
  res.wall_seconds = seconds_since(t_start);
  res.mlups = t_step > 0 ? fluid * double(step - first_step) / t_step * 1e-6 : 0.0;
  res.mass_drift = mass0 > 0 ? (d.mass - mass0) / mass0 : 0.0;
  if (res.exit_code == kExitOk && !stop_reason.empty()) {
    write_ckpt(step);
    res.exit_code = kExitStopped;
    res.message = "stopped at step " + std::to_string(step) + " of " + std::to_string(rc.steps) +
                  " (" + stop_reason +
                  (res.checkpoint.empty() ? "); no checkpoint was written"
                                          : "); continue with the same command and --restart " +
                                                res.checkpoint + " (or --restart latest)");
    log << "kolibri: " << res.message << std::endl;
  } else if (res.exit_code == kExitOk) {
    write_output(step, true);
    sample_lines(step, true);
    if (rc.checkpoint_every > 0) write_ckpt(step);  // a finished run can be continued to more steps
  }

  std::vector<BodyLoad> final_loads;  // the obstacles', last step (summary.json)
  if (!sc.obstacles.empty() && res.exit_code != kExitDiverged)
    final_loads = solver->obstacle_loads();
  for (const auto& l : final_loads) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "kolibri: obstacle '%s': force (%.6g, %.6g, %.6g), torque (%.6g, %.6g, %.6g) in "
                  "the last step "
                  "(history: obstacles.csv)",
                  l.name.c_str(), l.force[0], l.force[1], l.force[2], l.torque[0], l.torque[1],
                  l.torque[2]);
    log << buf << std::endl;
  }

  // The fluid's share of the box (a refined grid's fluid_cells() counts the updates of a step).
  // Immersed bodies that stand still are solids too: the fluid inside their surfaces is not
  // pore space (it rests, and adds nothing to the momentum).
  const IbStats ib_run = solver->ib_stats();  // the run's, before the timeline's steps
  const bool still_bodies = !sc.bodies.empty() && !ib_run.moving;
  const double fluid_volume =
      (refined ? refined->octree().fluid_volume() : double(solver->fluid_cells())) -
      (still_bodies ? ib_run.enclosed_volume : 0.0);
  const double porosity = fluid_volume / double(sc.cells());
  // Porous cases (solids, a body force, periodic along it): Darcy's permeability k = nu <u> / f,
  // with <u> the superficial velocity along the force (momentum / all cells, reference density 1).
  double permeability = 0.0;
  const double f2 =
      sc.force[0] * sc.force[0] + sc.force[1] * sc.force[1] + sc.force[2] * sc.force[2];
  bool porous = f2 > 0.0 && (sc.geometry.given() || !sc.obstacles.empty() || still_bodies);
  for (std::size_t axis = 0; axis < 3; ++axis)  // Darcy's k needs the flow periodic along the force
    if (sc.force[axis] != 0.0 && !periodic[axis]) porous = false;
  if (porous && res.exit_code != kExitDiverged) {
    const auto j = solver->momentum();
    const double along = j[0] * sc.force[0] + j[1] * sc.force[1] + j[2] * sc.force[2];
    permeability = sc.viscosity() * along / (double(sc.cells()) * f2);
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "kolibri: permeability %.6g cells^2 (Darcy, along the body force; porosity %.4f)",
                  permeability, porosity);
    log << buf;
    if (c.units.given) log << ", " << permeability * c.units.dx * c.units.dx << " m^2";
    log << std::endl;
  }

  double exchange = 0.0;  // seconds per step, measured alone on the final state
  if (comm.size() > 1 && res.exit_code != kExitDiverged && res.exit_code != kExitHalted) {
    exchange = comm.max(solver->exchange_time_per_step(20));
    const double per_step = step > first_step ? t_step / double(step - first_step) : 0.0;
    char buf[200];
    std::snprintf(buf, sizeof buf, "kolibri: halo exchange alone: %.3f ms per step (%.1f%% of a step of %.3f ms; the slowest rank)",
                  1e3 * exchange, per_step > 0 ? 100.0 * exchange / per_step : 0.0, 1e3 * per_step);
    log << buf << std::endl;
  }
  // --timeline: more steps, each point timed on the device (the slowest rank's times)
  Timeline timeline;
  if (opts.timeline_steps > 0 && res.exit_code == kExitOk) {
    std::int64_t slowest = 0;
    try {
      timeline = slowest_rank_timeline(comm, solver->step_timeline(opts.timeline_steps), slowest);
      if (timeline.steps > 0)
        log << timeline_line(timeline, int(slowest)) << std::endl;
      else
        log << "kolibri: --timeline: this solver (a refined grid) times no points; "
            << opts.timeline_steps << " more steps ran untimed" << std::endl;
    } catch (const RunHalted& e) {  // the steps past run.steps took a body out of its level
      log << "kolibri: --timeline: no timeline, its steps stopped: " << e.what() << std::endl;
    }
  }
  const char* status = res.exit_code == kExitOk        ? "completed"
                       : res.exit_code == kExitStopped ? "stopped"
                       : res.exit_code == kExitHalted  ? "halted"
                                                       : "diverged";
  on_root(comm, [&] {
    JsonObject js;
    js.add("kolibri_version", bi.version)
        .add("date", now_iso())
        .add("deck", c.source)
        .add("name", rc.name)
        .add("status", status)
        .add("lattice", to_string(sc.lattice))
        .add("collision", to_string(sc.collision))
        .add("precision", to_string(sc.precision))
        .add("storage", to_string(sc.storage))
        .add("streaming", to_string(sc.streaming))
        .add("nx", sc.nx)
        .add("ny", sc.ny)
        .add("nz", sc.nz)
        .add("fluid_cells", solver->fluid_cells())
        .add("tau", sc.tau)
        .add("viscosity", sc.viscosity())
        .add("reynolds", c.reynolds)
        .add("velocity_scale", c.u_char)
        .add("length_scale", c.l_char)
        .add("steps", res.steps)
        .add("first_step", first_step)
        .add("wall_time_s", res.wall_seconds)
        .add("step_time_s", t_step)
        .add("mlups", res.mlups)
        .add("mass_drift", res.mass_drift)
        .add("max_speed", res.max_speed)
        .add("ranks", comm.size())
        .add("exchange_ms_per_step", 1e3 * exchange)
        .add_raw("timeline", timeline_json(timeline))
        .add("process_grid", std::to_string(dist.dc.dims[0]) + "x" +
                                 std::to_string(dist.dc.dims[1]) + "x" +
                                 std::to_string(dist.dc.dims[2]))
        .add("layout", layout)
        .add("csoa_alpha", alpha)
        .add("layout_tile_edge", sc.tile_edge)
        .add("boundary_kernels", sc.face_kernels ? "faces" : "list")
        .add("collision_kernels", sc.collision_kernels);
    add_backend(js, bi);
    if (refined) {  // the level-0 box's MLUPS above count every level's updates (mahmoud2024)
      std::string cells = "[";
      for (const RefinedLevel& l : refined->octree().levels)
        cells += (l.level ? ", " : "") + std::to_string(l.fluid_cells);
      js.add("refinement_levels", int(refined->octree().levels.size()))
          .add_raw("refinement_fluid_cells", cells + "]");
    }
    if (c.tune.enabled)
      js.add("tune_cached", tuned.cached).add("tune_trials", tuned.trials).add("tune_key", tuned.key)
          .add("tune_ms_per_step", tuned.choice.ms_per_step);
    if (!sc.bodies.empty()) {
      std::string retractions = "[";  // each body's, its own or [ib]'s
      for (std::size_t b = 0; b < sc.bodies.size(); ++b)
        retractions += (b ? ", " : "") + json_number(retraction_of(sc.bodies[b], sc.ib));
      js.add("ib_block", sc.ib.block)
          .add("ib_retraction", sc.ib.retraction)
          .add_raw("ib_body_retractions", retractions + "]");
      if (sc.ib.forcing == ImmersedSettings::Forcing::Direct)
        js.add("ib_iterations", sc.ib.iterations);
      const IbStats& ib = ib_run;
      js.add("ib_bodies", std::int64_t(sc.bodies.size()))
          .add("ib_samples", ib.samples)
          .add("ib_spreading", to_string(sc.ib.spreading))
          .add("ib_timed", ib.timed);
      if (ib.timed)
        js.add("ib_ms_per_step", ib.steps > 0 ? 1e3 * ib.seconds / double(ib.steps) : 0.0);
      if (comm.size() > 1) js.add("ib_shared_samples", ib.shared_samples);
      js.add("ib_forcing", to_string(sc.ib.forcing));
      if (sc.ib.forcing == ImmersedSettings::Forcing::Implicit)
        js.add("ib_tolerance", sc.ib.tolerance)
            .add("ib_check_every", sc.ib.check_every)
            .add("ib_solver_iterations_mean", mean_solver_iterations(ib))
            .add("ib_solver_iterations_max", ib.solver_iterations_max)
            .add("ib_solver_residual_max", ib.solver_residual_max)
            .add("ib_slip_max", ib.slip_max)
            .add("ib_unconverged_steps", ib.unconverged_steps)
            .add("ib_coupling_nonzeros", ib.coupling_nonzeros);
    }
    if (!final_loads.empty()) {
      auto vec = [](const std::array<double, 3>& v) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "[%.10g, %.10g, %.10g]", v[0], v[1], v[2]);
        return std::string(buf);
      };
      std::string a = "[";
      for (std::size_t k = 0; k < final_loads.size(); ++k)
        a += std::string(k ? ", " : "") + "{\"name\": " + json_escape(final_loads[k].name) +
             ", \"force\": " + vec(final_loads[k].force) +
             ", \"torque\": " + vec(final_loads[k].torque) +
             ", \"centre\": " + vec(final_loads[k].centre) + "}";
      js.add_raw("obstacle_loads", a + "]");
    }
    if (porous) js.add("porosity", porosity).add("permeability", permeability);
    if (porous && c.units.given) js.add("permeability_m2", permeability * c.units.dx * c.units.dx);
    if (sc.geometry.given())
      js.add("tile_edge", sparse.tiles.edge)
          .add("tiles", sparse.tiles.tiles)
          .add("fluid_tiles", sparse.tiles.fluid_tiles)
          .add("tile_porosity", sparse.tiles.tile_porosity)
          .add("ghost_buffer_share", sparse.tiles.ghost_share)
          .add("model_memory_overhead_t2c", sparse.model.memory_two_copies)
          .add("model_memory_overhead_tgb", sparse.model.memory_ghost_buffers)
          .add("model_bandwidth_overhead_t2c", sparse.model.bandwidth_two_copies)
          .add("model_bandwidth_overhead_tgb", sparse.model.bandwidth_ghost_buffers);
    if (c.units.given)
      js.add("units_dx_m", c.units.dx)
          .add("units_dt_s", c.units.dt)
          .add("units_density_kg_m3", c.units.density)
          .add("velocity_scale_m_s", c.units.velocity(c.u_char))
          .add("viscosity_m2_s", c.units.viscosity(sc.viscosity()))
          .add("length_scale_m", c.l_char * c.units.dx)
          .add("time_s", double(res.steps) * c.units.dt);
    if (!res.checkpoint.empty()) js.add("checkpoint", res.checkpoint);
    if (!restart_path.empty()) js.add("restarted_from", restart_path);
    if (!res.message.empty()) js.add("message", res.message);
    write_file_atomic(dir + "/summary.json", js.str() + "\n");
    for (auto& f : point_files) f.close();
    statistics_file.close();
    loads_file.close();
    obstacles_file.close();
  });
  if (!sc.bodies.empty()) {
    const IbStats& ib = ib_run;
    const double per_step = step > first_step ? t_step / double(step - first_step) : 0.0;
    const double ib_step = ib.steps > 0 ? ib.seconds / double(ib.steps) : 0.0;
    char cost[160] =
        "time not measured (ib.timing = true measures it, at two host synchronisations a step)";
    if (ib.timed)
      std::snprintf(cost, sizeof cost, "%.3f ms per step (%.1f%% of a step of %.3f ms)",
                    1e3 * ib_step, per_step > 0 ? 100.0 * ib_step / per_step : 0.0, 1e3 * per_step);
    char forcing[300];
    if (sc.ib.forcing == ImmersedSettings::Forcing::Implicit)
      std::snprintf(forcing, sizeof forcing,
                    "implicit forcing (to %.2g: %.1f conjugate-gradient iterations a step, at "
                    "most %d; worst residual %.2g, slip at most %.2g; %lld step%s unconverged)",
                    sc.ib.tolerance, mean_solver_iterations(ib), ib.solver_iterations_max,
                    ib.solver_residual_max, ib.slip_max, (long long)ib.unconverged_steps,
                    ib.unconverged_steps == 1 ? "" : "s");
    else
      std::snprintf(forcing, sizeof forcing, "%d forcing pass%s a step", sc.ib.iterations,
                    sc.ib.iterations == 1 ? "" : "es");
    double nearest = kMaxRetraction, deepest = 0.0;  // the bodies' retractions
    for (const Body& b : sc.bodies) {
      nearest = std::min(nearest, retraction_of(b, sc.ib));
      deepest = std::max(deepest, retraction_of(b, sc.ib));
    }
    char depth[80];
    if (nearest == deepest)
      std::snprintf(depth, sizeof depth, "%.3g", nearest);
    else
      std::snprintf(depth, sizeof depth, "%.3g to %.3g", nearest, deepest);
    char buf[800];
    std::snprintf(buf, sizeof buf,
                  "kolibri: immersed boundaries: %lld samples %s cells inside the surfaces, %s, "
                  "%s spreading, %s, loops per thread %d to %d",
                  (long long)ib.samples, depth, forcing, to_string(sc.ib.spreading), cost,
                  ib.loops_min, ib.loops_max);
    log << buf;
    if (ib.whole_box_on_every_rank)
      log << "; every rank runs them on the whole box of the finest level around the bodies";
    else if (comm.size() > 1)
      log << "; " << ib.shared_samples
          << " samples (at most, a step) with stencils across rank borders, their nodes summed "
             "over the ranks each pass";
    log << std::endl;
  }

  if (res.exit_code == kExitOk) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "kolibri: done: %lld steps in %.2f s (%.1f MLUPS), mass drift %.2e, max|u| %.4g",
                  (long long)(res.steps - first_step), res.wall_seconds, res.mlups, res.mass_drift, res.max_speed);
    log << buf << std::endl;
  }
  return res;
}

}  // namespace kolibri
