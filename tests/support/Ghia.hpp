// SPDX-License-Identifier: Apache-2.0
// Ghia, Ghia & Shin, J. Comput. Phys. 48 (1982) 387-411: lid-driven cavity centreline velocities
// (Table I: u on the vertical centreline; Table II: v on the horizontal centreline), lid speed 1.
// Read from scripts/data/ghia1982_centrelines.csv, the one copy the plots use as well.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri::test {

struct Ghia {
  std::vector<double> y, u_re100, u_re1000, x, v_re100, v_re1000;

  static const Ghia& get() {
    static const Ghia g = load(KOLIBRI_SOURCE_DIR "/scripts/data/ghia1982_centrelines.csv");
    return g;
  }
  static Ghia load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open the Ghia reference data");
    Ghia g;
    std::vector<double>* cols[6] = {&g.y, &g.u_re100, &g.u_re1000, &g.x, &g.v_re100, &g.v_re1000};
    std::string line;
    bool header = false;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (!header) {
        header = true;
        continue;
      }
      std::istringstream ss(line);
      std::string cell;
      for (auto* c : cols) {
        std::getline(ss, cell, ',');
        c->push_back(std::stod(cell));
      }
    }
    if (g.y.size() != 17) throw std::runtime_error(path + ": expected 17 rows");
    return g;
  }
};

}  // namespace kolibri::test
