// SPDX-License-Identifier: Apache-2.0
#include <kolibri/io/Output.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/solver/Solver.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace kolibri {
namespace {

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

std::string csv_row(std::int64_t step, double rho, const std::array<double, 3>& u) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld,%.12g,%.12g,%.12g,%.12g\n", (long long)step, rho, u[0], u[1], u[2]);
  return buf;
}

}  // namespace

RunResult run_case(const Case& c, std::ostream& log) {
  namespace fs = std::filesystem;
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

  auto solver = make_solver(sc);  // allocates first: nothing is written if the case does not fit
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir + ": cannot create the output directory (" + ec.message() + ")");
  {  // files of an earlier run of this case would mix with this one's (and its plots)
    int removed = 0;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      bool ours = f == "summary.json" || f == rc.name + ".xdmf" ||
                  (f.rfind(rc.name + "_", 0) == 0 && e.path().extension() == ".h5");
      for (const auto& p : c.probes)
        ours = ours || f == "probe_" + p.name + ".csv" || f.rfind("line_" + p.name, 0) == 0;
      if (ours && fs::remove(e.path(), ec)) ++removed;
    }
    if (removed > 0) log << "kolibri: removed " << removed << " files of an earlier run of '" << rc.name << "' in " << dir << "\n";
  }
  const Diagnostics d0 = solver->diagnostics();
  const double mass0 = d0.mass;
  const double fluid = double(solver->fluid_cells());

  // Probes: point probes append to CSV time series, line probes are written at output times.
  std::vector<std::int64_t> point_cells;
  std::vector<std::ofstream> point_files;
  const std::int64_t default_every = std::max<std::int64_t>(1, rc.steps / 200);
  auto lin = [&](int x, int y, int z) { return x + std::int64_t(sc.nx) * (y + std::int64_t(sc.ny) * z); };
  for (const auto& p : c.probes) {
    if (p.kind != Probe::Kind::Point) continue;
    point_cells.push_back(lin(p.position[0], p.position[1], p.position[2]));
    const std::string path = dir + "/probe_" + p.name + ".csv";
    point_files.emplace_back(path, std::ios::trunc);
    if (!point_files.back()) throw OutputError(path + ": cannot write the probe file");
    point_files.back() << "step,rho,ux,uy,uz\n";
  }
  auto sample_points = [&](std::int64_t step, bool force) {
    std::vector<std::int64_t> cells;
    std::vector<std::size_t> which;
    std::size_t k = 0;
    for (const auto& p : c.probes) {
      if (p.kind != Probe::Kind::Point) continue;
      const std::int64_t every = p.every > 0 ? p.every : default_every;
      if (force || step % every == 0) cells.push_back(point_cells[k]), which.push_back(k);
      ++k;
    }
    if (cells.empty()) return;
    const MacroFields m = solver->sample(cells);
    for (std::size_t i = 0; i < which.size(); ++i) {
      point_files[which[i]] << csv_row(step, m.rho[i], m.u[i]) << std::flush;
      if (!point_files[which[i]]) throw OutputError(dir + "/probe_*.csv: write failed (disk full?)");
    }
  };
  auto write_lines = [&](const MacroFields& f, std::int64_t step, bool final) {
    for (const auto& p : c.probes) {
      if (p.kind != Probe::Kind::Line) continue;
      const int n = p.axis == 0 ? sc.nx : p.axis == 1 ? sc.ny : sc.nz;
      std::string csv = "x,y,z,s,rho,ux,uy,uz\n";
      for (int i = 0; i < n; ++i) {
        std::array<int, 3> cell = p.position;
        cell[std::size_t(p.axis)] = i;
        const auto k = f.index(cell[0], cell[1], cell[2]);
        char buf[256];
        std::snprintf(buf, sizeof buf, "%d,%d,%d,%.8g,%.12g,%.12g,%.12g,%.12g\n", cell[0], cell[1], cell[2],
                      (i + 0.5) / n, f.rho[k], f.u[k][0], f.u[k][1], f.u[k][2]);
        csv += buf;
      }
      write_file_atomic(dir + "/line_" + p.name + "_" + std::to_string(step) + ".csv", csv);
      if (final) write_file_atomic(dir + "/line_" + p.name + ".csv", csv);
    }
  };
  std::vector<std::pair<std::int64_t, std::string>> outputs;
  auto write_output = [&](std::int64_t step, bool final, const std::string& tag = "") {
    const MacroFields f = solver->macroscopic();
    if (rc.write_fields) {
      char name[64];
      std::snprintf(name, sizeof name, "_%08lld", (long long)step);
      const std::string file = rc.name + name + tag + ".h5";
      write_fields_hdf5(dir + "/" + file, f, step);
      if (tag.empty()) outputs.emplace_back(step, file);
      write_file_atomic(dir + "/" + rc.name + ".xdmf", xdmf_series(outputs, sc.nx, sc.ny, sc.nz));
    }
    write_lines(f, step, final);
  };

  Progress progress(rc, log);
  sample_points(0, true);
  if (rc.output_every > 0) write_output(0, false);

  const auto t_start = Clock::now();
  double t_step = 0.0;
  std::int64_t step = 0, chunk = 1;
  Diagnostics d = d0;
  auto next_multiple = [](std::int64_t s, std::int64_t every) { return every > 0 ? (s / every + 1) * every : INT64_MAX; };
  while (step < rc.steps) {
    std::int64_t target = std::min(rc.steps, step + chunk);
    target = std::min(target, next_multiple(step, rc.output_every));
    target = std::min(target, next_multiple(step, rc.log_every));
    for (const auto& p : c.probes)
      if (p.kind == Probe::Kind::Point) target = std::min(target, next_multiple(step, p.every > 0 ? p.every : default_every));
    const auto t0 = Clock::now();
    solver->step(target - step);
    const double dt = seconds_since(t0);
    t_step += dt;
    // Aim at about 0.2 s of stepping between checks: blow-ups are caught early, cost stays low.
    chunk = std::clamp<std::int64_t>(dt > 0 ? std::int64_t(double(target - step) * 0.2 / dt) : chunk * 2, 1, 100000);
    step = target;

    d = solver->diagnostics();
    if (d.first_bad >= 0) {
      progress.close();
      const std::int64_t n = d.first_bad;
      const int x = int(n % sc.nx), y = int(n / sc.nx % sc.ny), z = int(n / (std::int64_t(sc.nx) * sc.ny));
      std::ostringstream os;
      os << "the solution diverged by step " << step << ": cell (" << x << ", " << y << ", " << z
         << ") holds a non-finite density or velocity (max |u| before was " << res.max_speed
         << "). Lower the lattice velocity, raise the resolution, or use collision = \"trt\" / \"regularized\".";
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
    if (rc.output_every > 0 && step % rc.output_every == 0 && step < rc.steps) write_output(step, false);
    if (progress.due(step)) {
      const double mlups = t_step > 0 ? fluid * double(step) / t_step * 1e-6 : 0.0;
      const double eta = step > 0 ? t_step / double(step) * double(rc.steps - step) : 0.0;
      progress.report(step, mlups, eta, d, mass0 > 0 ? (d.mass - mass0) / mass0 : 0.0);
    }
  }
  progress.close();
  res.steps = step;
  res.wall_seconds = seconds_since(t_start);
  res.mlups = t_step > 0 ? fluid * double(step) / t_step * 1e-6 : 0.0;
  res.mass_drift = mass0 > 0 ? (d.mass - mass0) / mass0 : 0.0;
  if (res.exit_code == kExitOk) write_output(step, true);

  JsonObject js;
  js.add("kolibri_version", bi.version).add("date", now_iso()).add("deck", c.source).add("name", rc.name)
      .add("status", res.exit_code == kExitOk ? "completed" : "diverged")
      .add("lattice", to_string(sc.lattice)).add("collision", to_string(sc.collision))
      .add("precision", to_string(sc.precision)).add("storage", to_string(sc.storage))
      .add("streaming", to_string(sc.streaming)).add("nx", sc.nx).add("ny", sc.ny).add("nz", sc.nz)
      .add("fluid_cells", solver->fluid_cells()).add("tau", sc.tau).add("viscosity", sc.viscosity())
      .add("reynolds", c.reynolds).add("velocity_scale", c.u_char).add("length_scale", c.l_char).add("steps", res.steps).add("wall_time_s", res.wall_seconds)
      .add("step_time_s", t_step).add("mlups", res.mlups).add("mass_drift", res.mass_drift)
      .add("max_speed", res.max_speed).add("backend", bi.execution_space).add("device", bi.device)
      .add("vendor", bi.vendor).add("kokkos_version", bi.kokkos_version).add("compiler", bi.compiler);
  if (!res.message.empty()) js.add("message", res.message);
  write_file_atomic(dir + "/summary.json", js.str() + "\n");
  for (auto& f : point_files) f.close();

  if (res.exit_code == kExitOk) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "kolibri: done: %lld steps in %.2f s (%.1f MLUPS), mass drift %.2e, max|u| %.4g",
                  (long long)res.steps, res.wall_seconds, res.mlups, res.mass_drift, res.max_speed);
    log << buf << std::endl;
  }
  return res;
}

}  // namespace kolibri
