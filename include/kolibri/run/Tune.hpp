// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The auto-tuner (`[tune]`, `kolibri tune`): before a run, time a few steps of each
/// candidate setting of the options that change speed but not results (population layout
/// SoA/CSoA(alpha), IB sample block edge l and spreading, boundary kernels), minimising the mean
/// step cost as in chen2022 Eq. 11, and cache the choice per case and device.
#pragma once

#include <kolibri/config/Case.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The tuned options of a case.
struct TuneChoice {
  int alpha = 0;  ///< 0: SoA
  int block = 4;
  ImmersedSettings::Spreading spreading = ImmersedSettings::Spreading::Scatter;
  bool face_kernels = false;
  double ms_per_step = 0.0;
};

/// \brief What the tuner did.
struct TuneReport {
  TuneChoice choice;
  bool cached = false;  ///< read from the cache, nothing timed
  int trials = 0;       ///< settings timed
  std::string key;      ///< the case-and-device key
  std::string cache;    ///< the cache file
};

/// The cache file: `tc.cache`, else $KOLIBRI_TUNE_CACHE, else $XDG_CACHE_HOME/kolibri/tune.txt,
/// else ~/.cache/kolibri/tune.txt.
std::string tune_cache_path(const TuneConfig& tc);

/// The key of a case on a device: a hash of the solver signature, the IB passes, the split
/// setting, the device, the kolibri version (a new version times again) and the candidate lists
/// of `tc` (other candidates search again).
std::string tune_key(const SolverConfig& sc, const std::string& device, const TuneConfig& tc = {});

/// The searched option values of `sc`, as the summary and log name them.
std::string describe(const TuneChoice& c, const SolverConfig& sc);

/// \brief Tune `c.solver` in place (one rank): a cached choice for this case and device, unless
/// `c.tune.retune`; else time every candidate of each option in turn (layout, block, spreading,
/// boundary kernels), keeping the fastest of each, and store the result in the cache. Each trial
/// line goes to `log`. Throws std::runtime_error when no candidate runs.
TuneReport autotune(Case& c, std::ostream& log);

/// Cache entries, for tests: read the file (missing: empty) and look a key up.
bool read_tune_cache(const std::string& path, const std::string& key, TuneChoice& out);
/// Replace or add the entry of `key` (atomically rewritten file; the directory is created).
void write_tune_cache(const std::string& path, const std::string& key, const TuneChoice& c, const std::string& device,
                      const std::string& deck);

}  // namespace kolibri
