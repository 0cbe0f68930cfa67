// SPDX-License-Identifier: Apache-2.0
#include <kolibri/core/Backend.hpp>
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/run/Tune.hpp>
#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kolibri {

namespace {

using Spreading = ImmersedSettings::Spreading;

/// `key=value` tokens of a cache line; values may be double-quoted (no escapes inside).
std::map<std::string, std::string> tokens(const std::string& line) {
  std::map<std::string, std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t eq = line.find('=', i);
    if (eq == std::string::npos) break;
    const std::string k = line.substr(i, eq - i);
    std::size_t j = eq + 1;
    std::string v;
    if (j < line.size() && line[j] == '"') {
      const std::size_t close = line.find('"', j + 1);
      if (close == std::string::npos) break;
      v = line.substr(j + 1, close - j - 1);
      j = close + 1;
    } else {
      const std::size_t sp = line.find(' ', j);
      v = line.substr(j, sp == std::string::npos ? std::string::npos : sp - j);
      j = sp == std::string::npos ? line.size() : sp;
    }
    out[k] = v;
    i = j;
  }
  return out;
}

std::string quoted(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\n') c = '\'';
  return "\"" + s + "\"";
}

/// Seconds a step of `sc` takes: `warmup` steps, then three batches of `steps` timed ones (the
/// solver fences at the end of step()), the fastest batch counting (a batch that met a clock
/// change or another process is discarded). Infinity when the state goes non-finite.
double time_steps(const SolverConfig& sc, int warmup, int steps) {
  auto s = make_solver(sc);
  if (warmup > 0) s->step(warmup);
  double best = std::numeric_limits<double>::infinity();
  for (int batch = 0; batch < 3; ++batch) {
    const auto t0 = std::chrono::steady_clock::now();
    s->step(steps);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (s->diagnostics().first_bad >= 0) return std::numeric_limits<double>::infinity();
  return best / steps;
}

TuneChoice choice_of(const SolverConfig& sc) {
  return {csoa_alpha_for(sc), sc.ib.block, sc.ib.spreading, sc.face_kernels, 0.0};
}
void apply(const TuneChoice& c, SolverConfig& sc) {
  sc.csoa_alpha = c.alpha;
  sc.face_kernels = c.face_kernels;
  if (!sc.bodies.empty()) sc.ib.block = c.block, sc.ib.spreading = c.spreading;
}

}  // namespace

std::string tune_cache_path(const TuneConfig& tc) {
  if (!tc.cache.empty()) return tc.cache;
  if (const char* e = std::getenv("KOLIBRI_TUNE_CACHE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kolibri/tune.txt";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kolibri/tune.txt";
  return "kolibri-tune.txt";
}

std::string tune_key(const SolverConfig& sc, const std::string& device, const TuneConfig& tc) {
  std::ostringstream s;  // solver_signature leaves out the searched options
  s << solver_signature(sc) << "|ib_iterations=" << sc.ib.iterations << "|collision_kernels=" << sc.collision_kernels
    << "|device=" << device << "|kolibri=" << KOLIBRI_VERSION_MAJOR << "." << KOLIBRI_VERSION_MINOR << "."
    << KOLIBRI_VERSION_PATCH << "|alpha";  // the candidate lists too: another list searches again
  for (const int a : tc.alpha) s << ',' << a;
  s << "|block";
  for (const int b : tc.block) s << ',' << b;
  const std::string text = s.str();
  return hex64(checksum64(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::string describe(const TuneChoice& c, const SolverConfig& sc) {
  std::ostringstream s;  // (string concatenation trips GCC 12's -Wrestrict false positive)
  s << "layout " << (c.alpha == 0 ? "soa" : "csoa ");
  if (c.alpha != 0) s << c.alpha;
  if (!sc.bodies.empty())
    s << ", block " << c.block << ", spreading " << to_string(c.spreading);
  s << ", boundary kernels " << (c.face_kernels ? "faces" : "list");
  return s.str();
}

bool read_tune_cache(const std::string& path, const std::string& key, TuneChoice& out) {
  std::ifstream in(path);
  bool found = false;
  for (std::string line; std::getline(in, line);) {  // the last entry of a key wins
    if (line.empty() || line[0] == '#') continue;
    auto t = tokens(line);
    if (t["key"] != key) continue;
    try {
      TuneChoice c;
      c.alpha = std::stoi(t.at("alpha"));
      c.block = std::stoi(t.at("block"));
      c.spreading = t.at("spreading") == "gather" ? Spreading::Gather : Spreading::Scatter;
      c.face_kernels = t.at("boundary_kernels") == "faces";
      c.ms_per_step = std::stod(t.at("ms_per_step"));
      if ((c.alpha != 0 && !valid_csoa_alpha(c.alpha)) || c.block < 0) continue;
      out = c;
      found = true;
    } catch (const std::exception&) {
      // a damaged line: ignored (the case is timed again and the line replaced)
    }
  }
  return found;
}

void write_tune_cache(const std::string& path, const std::string& key, const TuneChoice& c, const std::string& device,
                      const std::string& deck) {
  namespace fs = std::filesystem;
  std::string kept = "# kolibri tune cache: one line per case and device (kolibri tune, [tune] in a deck)\n";
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#' && tokens(line)["key"] != key) kept += line + "\n";
  }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.6g", c.ms_per_step);
  kept += "key=" + key + " alpha=" + std::to_string(c.alpha) + " block=" + std::to_string(c.block) +
          " spreading=" + to_string(c.spreading) +
          " boundary_kernels=" + (c.face_kernels ? "faces" : "list") + " ms_per_step=" + ms + " date=" + date +
          " device=" + quoted(device) + " deck=" + quoted(deck) + "\n";
  const fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir.string() + ": cannot create the tune cache directory (" + ec.message() + ")");
  write_file_atomic(path, kept);
}

TuneReport autotune(Case& c, std::ostream& log) {
  SolverConfig& sc = c.solver;
  const TuneConfig& tc = c.tune;
  const BackendInfo bi = backend_info();
  TuneReport rep;
  const std::string device = bi.device + " (" + bi.execution_space + ")";
  rep.key = tune_key(sc, device, tc);
  rep.cache = tune_cache_path(tc);
  if (!tc.retune && read_tune_cache(rep.cache, rep.key, rep.choice)) {
    apply(rep.choice, sc);
    rep.cached = true;
    log << "kolibri: tune: " << describe(rep.choice, sc) << " (cached for this case on " << bi.device << ", "
        << rep.cache << ", key " << rep.key << ")" << std::endl;
    return rep;
  }

  const bool bodies = !sc.bodies.empty();
  bool faces = false;
  for (const auto& f : sc.faces) faces = faces || f.type != FaceType::Periodic;
  faces = faces && sc.streaming == Streaming::TwoArray;  // per-face kernels: two arrays only
  log << "kolibri: tune: timing " << tc.steps << " steps (after " << tc.warmup << ") of each candidate on "
      << bi.device << std::endl;
  TuneChoice best = choice_of(sc);
  double best_s = std::numeric_limits<double>::infinity();
  std::map<std::string, double> timed;  // a setting met again in a later stage is not re-timed
  auto trial = [&](const TuneChoice& cand) {
    SolverConfig t = sc;
    apply(cand, t);
    const std::string what = describe(cand, t);
    double s;
    if (auto it = timed.find(what); it != timed.end()) {
      s = it->second;
    } else {
      try {
        s = time_steps(t, tc.warmup, tc.steps);
      } catch (const std::exception& e) {  // e.g. out of device memory: not a candidate
        log << "kolibri: tune:   " << what << ": not usable (" << e.what() << ")" << std::endl;
        s = std::numeric_limits<double>::infinity();
      }
      timed[what] = s;
      ++rep.trials;
      char line[64];
      std::snprintf(line, sizeof line, "%.4f ms/step", 1e3 * s);
      log << "kolibri: tune:   " << what << ": " << (std::isfinite(s) ? line : "failed") << std::endl;
    }
    if (s < best_s) best_s = s, best = cand;
  };
  trial(best);  // the deck's own setting first
  for (const int a : tc.alpha) {
    TuneChoice cand = best;
    cand.alpha = a;
    trial(cand);
  }
  if (bodies) {
    for (const int b : tc.block) {
      TuneChoice cand = best;
      cand.block = b;
      trial(cand);
    }
    for (const Spreading s : {Spreading::Scatter, Spreading::Gather}) {
      TuneChoice cand = best;
      cand.spreading = s;
      trial(cand);
    }
  }
  if (faces)
    for (const bool f : {false, true}) {
      TuneChoice cand = best;
      cand.face_kernels = f;
      trial(cand);
    }
  if (!std::isfinite(best_s)) throw std::runtime_error("tune: no candidate setting ran (see the lines above)");
  best.ms_per_step = 1e3 * best_s;
  apply(best, sc);
  rep.choice = best;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.4f", best.ms_per_step);
  log << "kolibri: tune: chose " << describe(best, sc) << ": " << ms << " ms/step, " << rep.trials
      << " settings timed; cached in " << rep.cache << " (key " << rep.key << ")" << std::endl;
  try {
    write_tune_cache(rep.cache, rep.key, best, device, c.source);
  } catch (const std::exception& e) {
    log << "kolibri: tune: warning: the choice was not cached: " << e.what() << std::endl;
  }
  return rep;
}

}  // namespace kolibri
