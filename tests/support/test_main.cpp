// SPDX-License-Identifier: Apache-2.0
// GoogleTest main: Kokkos is initialised only when tests run, not when they are listed, so test
// discovery never touches a GPU.
#include <kolibri/core/Kokkos.hpp>

#include <gtest/gtest.h>

#include <cstring>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) return RUN_ALL_TESTS();
  Kokkos::ScopeGuard guard(argc, argv);
  return RUN_ALL_TESTS();
}
