// SPDX-License-Identifier: Apache-2.0
#include <kolibri/run/Signals.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {
namespace {
volatile std::sig_atomic_t g_signal = 0;
bool g_installed = false;
struct sigaction g_old[3];
struct sigaction g_old_xfsz;
constexpr int kSignals[3] = {SIGTERM, SIGUSR1, SIGINT};

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0 && sig == SIGINT) {  // a second Ctrl-C: stop at once
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
  g_signal = sig;
}
}  // namespace

void install_stop_signals() {
  if (g_installed) return;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
  // A file size limit (ulimit -f, a batch system's) makes writes fail with EFBIG, which the
  // writers report with the file; the default action would kill the run without a word.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, &g_old_xfsz);
  g_installed = true;
}

void restore_stop_signals() {
  if (!g_installed) return;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
  sigaction(SIGXFSZ, &g_old_xfsz, nullptr);
  g_installed = false;
}

int stop_signal() { return g_signal; }
void clear_stop_signal() { g_signal = 0; }

const char* signal_name(int sig) {
  static char buf[32];
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGINT: return "SIGINT";
    default: std::snprintf(buf, sizeof buf, "signal %d", sig); return buf;
  }
}

double parse_walltime(const std::string& s) {
  const auto bad = [&] {
    return std::invalid_argument("walltime '" + s +
                                 "': expected seconds (5400), MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  };
  // Fields are non-negative numbers; only the last may have a fraction.
  auto number = [&](const std::string& f, bool last) {
    if (f.empty() || f.find_first_not_of("0123456789.") != std::string::npos ||
        std::count(f.begin(), f.end(), '.') > (last ? 1 : 0) || f == ".")
      throw bad();
    return std::stod(f);
  };
  std::string rest = s;
  double days = -1;
  if (const auto dash = s.find('-'); dash != std::string::npos) {
    days = number(s.substr(0, dash), false);
    rest = s.substr(dash + 1);
  }
  std::vector<std::string> f;
  std::size_t from = 0;
  for (std::size_t colon; (colon = rest.find(':', from)) != std::string::npos; from = colon + 1)
    f.push_back(rest.substr(from, colon - from));
  f.push_back(rest.substr(from));
  if (f.size() > 3) throw bad();
  std::vector<double> v;
  for (std::size_t i = 0; i < f.size(); ++i) v.push_back(number(f[i], i + 1 == f.size()));
  // Seconds and minutes below 60 (the first field of a form is unbounded, as Slurm writes
  // 90:30 or 120:00:00), hours below 24 after a day count.
  auto below = [&](double value, double limit, const char* what) {
    if (value >= limit)
      throw std::invalid_argument("walltime '" + s + "': " + what + " must be below " +
                                  std::to_string(int(limit)));
  };
  const std::size_t k = v.size();
  if (days >= 0) {
    below(v[0], 24, "hours after a day count");
    if (k > 1) below(v[1], 60, "minutes");
    if (k > 2) below(v[2], 60, "seconds");
  } else if (k >= 2) {
    below(v[k - 1], 60, "seconds");
    if (k == 3) below(v[1], 60, "minutes");
  }
  double t = 0;
  if (days >= 0) {  // D-HH, D-HH:MM, D-HH:MM:SS
    t = days * 86400.0 + v[0] * 3600.0 + (v.size() > 1 ? v[1] * 60.0 : 0.0) + (v.size() > 2 ? v[2] : 0.0);
  } else if (v.size() == 1) {
    t = v[0];
  } else if (v.size() == 2) {
    t = v[0] * 60.0 + v[1];
  } else {
    t = v[0] * 3600.0 + v[1] * 60.0 + v[2];
  }
  if (!(t > 0)) throw bad();
  if (t < 1.0)  // no run can set up, step and checkpoint in less
    throw std::invalid_argument("walltime '" + s + "': expected at least 1 second");
  return t;
}

}  // namespace kolibri
