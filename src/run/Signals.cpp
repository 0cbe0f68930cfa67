// SPDX-License-Identifier: Apache-2.0
#include <kolibri/run/Signals.hpp>

#include <csignal>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace kolibri {
namespace {
volatile std::sig_atomic_t g_signal = 0;
bool g_installed = false;
struct sigaction g_old[3];
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
  g_installed = true;
}

void restore_stop_signals() {
  if (!g_installed) return;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
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
    return std::invalid_argument("walltime '" + s + "': expected seconds (5400), MM:SS, HH:MM:SS or D-HH:MM:SS");
  };
  if (s.empty()) throw bad();
  long days = 0;
  std::string rest = s;
  if (const auto dash = s.find('-'); dash != std::string::npos) {
    try {
      std::size_t used = 0;
      days = std::stol(s.substr(0, dash), &used);
      if (used != dash || days < 0) throw bad();
    } catch (const std::logic_error&) {
      throw bad();
    }
    rest = s.substr(dash + 1);
  }
  std::istringstream is(rest);
  std::string part;
  double fields[3];
  int n = 0;
  while (std::getline(is, part, ':')) {
    if (n == 3 || part.empty() || part.find_first_not_of("0123456789.") != std::string::npos) throw bad();
    fields[n++] = std::stod(part);
  }
  double t = 0;
  if (n == 1 && days == 0) t = fields[0];
  else if (n == 2 && days == 0) t = fields[0] * 60 + fields[1];
  else if (n == 3) t = fields[0] * 3600 + fields[1] * 60 + fields[2];
  else throw bad();
  t += days * 86400.0;
  if (!(t > 0)) throw bad();
  return t;
}

}  // namespace kolibri
