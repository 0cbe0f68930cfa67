// SPDX-License-Identifier: Apache-2.0
// GoogleTest main for tests run under mpirun: every rank runs every test (the tests are
// collective), rank 0 prints, and the exit status fails if any rank failed.
#include <kolibri/core/Kokkos.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) return RUN_ALL_TESTS();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    rc = RUN_ALL_TESTS();
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != rc) std::fprintf(stderr, "another rank failed a test\n");
  MPI_Finalize();
  return worst;
}
