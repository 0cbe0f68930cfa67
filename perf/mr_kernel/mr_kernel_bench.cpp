// SPDX-License-Identifier: Apache-2.0
// Micro-benchmark of the moment-representation kernel alone (docs/performance.md, "moment kernel
// v4"): a periodic N^3 box, MLUPS for each tile / launch-bound / segment variant, one launch
// policy per variant so register caps can be compared without rebuilding kolibri.
//   kolibri_mr_kernel_bench [N=256] [steps=100]      ONLY=i runs variant i alone (for ncu)
#include <kolibri/collision/Collision.hpp>
#include <kolibri/stepping/MomentStream.hpp>

#include <cstdio>
#include <cstdlib>

using namespace kolibri;

namespace {
int counter = 0;

template <class L, class R, class C, int TX, int TY, class Policy, bool Two = false>
void time_kernel(const char* name, int N, int steps, int seg) {
  const int id = counter++;
  const char* only = std::getenv("ONLY");
  if (only && std::atoi(only) != id) return;
  constexpr int M = MomentSlots<L>::M;
  const int nx = L::D == 3 ? N : N * 16, ny = nx, nz = L::D == 3 ? N : 1;  // 2D: 4096^2 for N = 256
  const Index cells = Index(nx) * ny * nz;
  const MomentPlacement placement(L::D, nx, ny, nz, TX, TY, seg, Two);
  const Index stride = placement.stride();
  const Slots idx = moment_slots(L::D, stride, M);
  Kokkos::View<R*, MemSpace> a("a", idx.size());
  Kokkos::View<Flag*, MemSpace> flags("flags", cells);
  Kokkos::deep_copy(flags, kFluid);
  Kokkos::View<double*, MemSpace> rho("rho", 1);
  Kokkos::View<double* [3], MemSpace> u("u", 1);
  Kokkos::deep_copy(rho, 1.0);
  Kokkos::deep_copy(u, 0.02);
  const R omega = R(1.0 / 0.56);
  Kokkos::parallel_for(Kokkos::RangePolicy<ExecSpace>(0, cells),
                       InitMoments<L, R>{a, rho, u, idx, {R(0), R(0), R(0)}, omega});
  Boundary<L, R> bc{};
  bc.flags = flags;
  bc.grid = DenseGrid::whole(nx, ny, nz);
  for (int f = 0; f < 6; ++f) bc.faces.type[f] = int(FaceType::Periodic);
  C op{};
  op.omega = omega;
  using K = MomentKernel<L, R, C, TX, TY, Two>;
  const int planes = K::scratch_bytes(2) <= std::size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0)) ? 2 : 1;
  K k{a.data(), placement.device(), 0, op, bc, planes, false};
  auto launch = [&](int s) {
    k.parity = s % 2;
    Policy policy(ExecSpace(), k.league(), K::T);
    Kokkos::parallel_for("mr", policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes(planes))), k);
  };
  for (int s = 0; s < 4; ++s) launch(s);  // even: the state is back at parity 0
  Kokkos::fence();
  Kokkos::Timer t;
  for (int s = 0; s < steps; ++s) launch(s);
  Kokkos::fence();
  const double sec = t.seconds();
  if (steps % 2) launch(steps);  // back at parity 0, where the mass below is read
  double mass = 0;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecSpace>(0, cells), KOKKOS_LAMBDA(Index n, double& m) { m += double(a(idx(n, 0))); }, mass);
  std::printf("%-40s N=%d seg=%d  %.3f ms/step  %9.0f MLUPS  mass/cell %.9f  %.1f B/cell\n", name, N, seg,
              1e3 * sec / steps, double(cells) * steps / sec / 1e6, mass / double(cells),
              double(idx.size() * sizeof(R)) / double(cells) + 1.0);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int N = argc > 1 ? std::atoi(argv[1]) : 256;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
    using L = D3Q19;
    using R = float;
    using C = RegularizedBgk<L, R>;
    using P2 = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, 2>>;
    using P0 = Kokkos::TeamPolicy<ExecSpace>;
    for (int seg : {16, 32}) time_kernel<L, R, C, 30, 6, P2>("D3Q19 fp32 P 30x6 lb(256,2)", N, steps, seg);
    time_kernel<L, R, C, 30, 6, P2, true>("D3Q19 fp32 P 30x6 lb(256,2) two arrays", N, steps, 32);
    // teams with less ring a cell: 16 x 16 and 32 x 16 threads (the ring: 23% and 18% of them,
    // against 30% at 30 x 6), 32 x 12
    time_kernel<L, R, C, 14, 14, P2>("D3Q19 fp32 P 14x14 lb(256,2)", N, steps, 32);
    time_kernel<L, R, C, 30, 14, Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<512, 1>>>("D3Q19 fp32 P 30x14 lb(512,1)", N, steps, 32);
    time_kernel<L, R, C, 30, 10, Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<384, 1>>>("D3Q19 fp32 P 30x10 lb(384,1)", N, steps, 32);
    time_kernel<L, R, C, 14, 6, P0>("D3Q19 fp32 P 14x6", N, steps, 32);
    time_kernel<D3Q27, R, RegularizedBgk<D3Q27, R>, 30, 6, P2>("D3Q27 fp32 P 30x6 lb(256,2)", N, steps, 32);
    time_kernel<L, R, RecursiveRegularizedBgk<L, R>, 30, 6, P2>("D3Q19 fp32 R 30x6 lb(256,2)", N, steps, 32);
    time_kernel<L, double, RegularizedBgk<L, double>, 30, 6, P0>("D3Q19 fp64 P 30x6", N, steps / 2, 32);
    time_kernel<D3Q27, R, RegularizedBgk<D3Q27, R>, 30, 6, P2, true>("D3Q27 fp32 P 30x6 lb(256,2) two arrays", N, steps, 32);
    time_kernel<L, double, RegularizedBgk<L, double>, 30, 6, P0, true>("D3Q19 fp64 P 30x6 two arrays", N, steps / 2, 32);
    using D2 = RegularizedBgk<D2Q9, double>;
    time_kernel<D2Q9, double, D2, 254, 1, P0>("D2Q9 fp64 P 254x1", N, steps / 2, 32);
    time_kernel<D2Q9, double, D2, 254, 1, P0, true>("D2Q9 fp64 P 254x1 two arrays", N, steps / 2, 32);
    time_kernel<D2Q9, double, D2, 254, 1, P2>("D2Q9 fp64 P 254x1 lb(256,2)", N, steps / 2, 32);
    time_kernel<D2Q9, double, D2, 254, 1, P2, true>("D2Q9 fp64 P 254x1 lb(256,2) two arrays", N, steps / 2, 32);
  }
  Kokkos::finalize();
}
