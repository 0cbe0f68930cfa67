// SPDX-License-Identifier: Apache-2.0
// Command-line values of `kolibri run` for batch jobs and ranks: wall-time limits, process grids,
// stop signals.
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/run/Signals.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>
#include <string>

namespace {
using namespace kolibri;

TEST(RunOptions, WalltimeForms) {
  EXPECT_DOUBLE_EQ(parse_walltime("5400"), 5400.0);
  EXPECT_DOUBLE_EQ(parse_walltime("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(parse_walltime("90:30"), 90 * 60 + 30.0);
  EXPECT_DOUBLE_EQ(parse_walltime("01:30:00"), 5400.0);
  EXPECT_DOUBLE_EQ(parse_walltime("1-00:00:10"), 86410.0);
  EXPECT_DOUBLE_EQ(parse_walltime("2-12"), 2 * 86400.0 + 12 * 3600.0);
  EXPECT_DOUBLE_EQ(parse_walltime("0-01:30"), 5400.0);
  for (const char* bad : {"", "abc", "1.2.3", "1:2:3:4", "-5", "0", "1:", ":30", "1-", "1.5-02", "00:00:00", "1:2.5:3"})
    EXPECT_THROW(parse_walltime(bad), std::invalid_argument) << "'" << bad << "'";
}

TEST(RunOptions, WalltimeFieldsInRangeAndAtLeastOneSecond) {
  // Fields past their range and limits under a second were accepted (issue 22).
  for (const char* bad : {"1:99", "1-25:00:00", "0.5", "01:60:00", "00:10:60", "1-00:60", "0-24"})
    EXPECT_THROW(parse_walltime(bad), std::invalid_argument) << "'" << bad << "'";
  EXPECT_DOUBLE_EQ(parse_walltime("1"), 1.0);
  EXPECT_DOUBLE_EQ(parse_walltime("120:00:00"), 120 * 3600.0);  // hours unbounded without days
  EXPECT_DOUBLE_EQ(parse_walltime("1-23:59:59"), 86400.0 + 23 * 3600 + 59 * 60 + 59);
  try {
    parse_walltime("1:99");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("seconds must be below 60"), std::string::npos)
        << e.what();
  }
}

TEST(RunOptions, ProcessGrid) {
  EXPECT_EQ(parse_grid("2x2x1"), (std::array<int, 3>{2, 2, 1}));
  EXPECT_EQ(parse_grid("auto"), (std::array<int, 3>{0, 0, 0}));
  for (const char* bad : {"2x2", "2x2x0", "axbxc", "2x2x1x1", "-1x2x2", "2x2x1 "})
    EXPECT_THROW(parse_grid(bad), std::invalid_argument) << "'" << bad << "'";
}

TEST(RunOptions, StopSignalsAreRecordedNotFatal) {
  install_stop_signals();
  clear_stop_signal();
  EXPECT_EQ(stop_signal(), 0);
  std::raise(SIGUSR1);
  EXPECT_EQ(stop_signal(), SIGUSR1);
  EXPECT_STREQ(signal_name(stop_signal()), "SIGUSR1");
  std::raise(SIGTERM);
  EXPECT_EQ(stop_signal(), SIGTERM);
  clear_stop_signal();
  restore_stop_signals();
}

}  // namespace
