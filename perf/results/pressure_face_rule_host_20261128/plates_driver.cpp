#include <kolibri/core/Kokkos.hpp>
#include <kolibri/solver/Solver.hpp>

#include <cstdio>
using namespace kolibri;
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    for (int nx : {32, 64})
      for (int H : {8, 16, 32})
        for (double tau : {0.8, 1.2}) {
          SolverConfig c;
          c.lattice = LatticeKind::D2Q9;
          c.nx = nx;
          c.ny = H;
          c.nz = 1;
          c.tau = tau;
          c.collision = CollisionKind::Trt;
          c.faces[0].type = FaceType::PressureInlet;
          c.faces[0].density = 1.0003;
          c.faces[1].type = FaceType::PressureOutlet;
          c.faces[2].type = c.faces[3].type = FaceType::Wall;
          auto s = make_solver(c);
          s->step(long(20.0 * H * H / c.viscosity()));
          const MacroFields m = s->macroscopic();
          const double G =
              (m.rho[m.index(nx / 2 - 1, H / 2, 0)] - m.rho[m.index(nx / 2 + 1, H / 2, 0)]) / 6.0;
          const double mean = 0.0003 / (3.0 * nx);
          std::printf("nx %d H %d tau %.1f gradient/mean %.5f first cell rho %.8f\n", nx, H, tau,
                      G / mean, m.rho[m.index(0, H / 2, 0)]);
        }
  }
  Kokkos::finalize();
}
