// SPDX-License-Identifier: Apache-2.0
// Immersed boundaries: stencil, sampling, momentum balance, scatter = gather, the implicit
// forcing, moving bodies, deck.
#include <kolibri/config/Rules.hpp>
#include <kolibri/geometry/Surface.hpp>
#include <kolibri/ib/Bins.hpp>
#include <kolibri/ib/Coupling.hpp>
#include <kolibri/ib/Immersed.hpp>
#include <kolibri/ib/Motion.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

TEST(Immersed, StencilWeightsInterpolateLinearFieldsExactly) {
  const double x[3] = {3.27, 5.81, 7.5};
  const Stencil<3, double> st(x);
  double sum = 0, lin = 0;
  for (int k = 0; k < 8; ++k) {
    int p[3];
    const double w = st.node(k, p);
    EXPECT_GE(w, 0.0);
    sum += w;
    // A linear field of the node centres (i + 1/2, ...).
    lin += w * (2.0 * (p[0] + 0.5) - 3.0 * (p[1] + 0.5) + 0.5 * (p[2] + 0.5));
  }
  EXPECT_NEAR(sum, 1.0, 1e-14);
  EXPECT_NEAR(lin, 2.0 * x[0] - 3.0 * x[1] + 0.5 * x[2], 1e-13);
  const Stencil<2, double> s2(x);
  double w2 = 0;
  for (int k = 0; k < 4; ++k) {
    int p[3];
    w2 += s2.node(k, p);
    EXPECT_EQ(p[2], 0);
  }
  EXPECT_NEAR(w2, 1.0, 1e-14);
}

/// Samples on the surface itself (no retraction), blocked 4 x 4 x 4 or as sampled.
ImmersedSettings on_surface(int block) {
  ImmersedSettings ib;
  ib.block = block, ib.retraction = 0.0;
  return ib;
}

// The counting sort behind the gathering and the implicit forcing's assembly (ib/Bins.hpp): every
// item with a bin lands in its bin's range of the list, an item without one (key < 0) nowhere;
// an empty bin has an empty range, and no items leave every range empty.
TEST(Bins, CountingSortPutsEveryItemInItsBin) {
  const std::vector<int> keys = {2, -1, 0, 2, 1, -1, 2};
  const Index n = Index(keys.size()), bins = 4;  // bin 3 stays empty
  Kokkos::View<int*, MemSpace> key("key", std::size_t(n)), slot("slot", std::size_t(n));
  Kokkos::View<Index*, MemSpace> list("list", std::size_t(n)),
      start("start", std::size_t(bins + 1));
  auto hk = Kokkos::create_mirror_view(key);
  for (Index i = 0; i < n; ++i) hk(i) = keys[std::size_t(i)];
  Kokkos::deep_copy(key, hk);
  counting_sort(ExecSpace(), n, bins, key, start, slot, list);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), start);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list);
  const std::vector<std::vector<Index>> want = {{2}, {4}, {0, 3, 6}, {}};
  ASSERT_EQ(hs(bins), 5);
  for (Index b = 0; b < bins; ++b) {
    std::vector<Index> got(hl.data() + hs(b), hl.data() + hs(b + 1));
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want[std::size_t(b)]) << "bin " << b;
  }
  counting_sort(ExecSpace(), 0, bins, key, start, slot, list);
  Kokkos::deep_copy(hs, start);
  for (Index b = 0; b <= bins; ++b) EXPECT_EQ(hs(b), 0) << b;
}

TEST(Immersed, SamplesCoverTheSurfaceWithTheirWeights) {
  Body s;
  s.shape = Body::Shape::Sphere, s.radius = 6.0, s.spacing = 0.4, s.position = {10, 10, 10};
  const auto a = sample_body(s, 3, on_surface(4));
  const double area = 4 * std::numbers::pi * 36.0;
  EXPECT_NEAR(a.weight * double(a.offsets.size()), area, 0.01 * area);
  EXPECT_NEAR(a.extent, 6.0, 0.01);
  Body c;
  c.shape = Body::Shape::Cylinder, c.radius = 5.0, c.spacing = 0.25;
  const auto b = sample_body(c, 2, on_surface(0));
  EXPECT_NEAR(b.weight * double(b.offsets.size()), 2 * std::numbers::pi * 5.0, 1e-9);
  for (const auto& p : b.offsets) EXPECT_NEAR(std::hypot(p[0], p[1]), 5.0, 1e-12);
  Body t = s;
  t.shape = Body::Shape::Torus, t.radius = 4.0, t.minor_radius = 5.0;
  EXPECT_THROW(sample_body(t, 3, on_surface(4)), std::invalid_argument);
  EXPECT_THROW(sample_body(s, 2, on_surface(4)), std::invalid_argument);  // no spheres in 2D
}

TEST(Immersed, RetractionMovesTheSamplesInsideEveryShape) {
  ImmersedSettings ib = on_surface(0);
  ib.retraction = 0.4;
  Body c;
  c.shape = Body::Shape::Cylinder, c.radius = 5.0, c.spacing = 0.25;
  const auto circle = sample_body(c, 2, ib);
  for (const auto& p : circle.offsets) EXPECT_NEAR(std::hypot(p[0], p[1]), 4.6, 1e-12);
  EXPECT_NEAR(circle.weight * double(circle.offsets.size()), 2 * std::numbers::pi * 4.6, 1e-9);
  Body s;
  s.shape = Body::Shape::Sphere, s.radius = 6.0, s.spacing = 0.4;
  const auto sphere = sample_body(s, 3, ib);
  for (const auto& p : sphere.offsets) EXPECT_LE(std::hypot(p[0], p[1], p[2]), 5.6 + 1e-9);
  EXPECT_NEAR(sphere.extent, 5.6, 0.01);
  Body box;
  box.shape = Body::Shape::Box, box.size = {6, 8, 10}, box.spacing = 0.4;
  const auto b = sample_body(box, 3, ib);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(b.box[std::size_t(d)], -0.5 * box.size[std::size_t(d)] + 0.4, 1e-9);
    EXPECT_NEAR(b.box[3 + std::size_t(d)], 0.5 * box.size[std::size_t(d)] - 0.4, 1e-9);
  }
  Body rectangle = box;  // in 2D a box is its rectangle: its z edge is not shrunk
  rectangle.size = {6, 8, 0};
  const auto r = sample_body(rectangle, 2, ib);
  EXPECT_NEAR(r.box[0], -2.6, 1e-9);
  EXPECT_NEAR(r.box[4], 3.6, 1e-9);
  // A mesh moves along its vertex normals: the sphere's mesh read back as a file.
  const test::ScratchDir dir;
  std::ostringstream obj;
  obj.precision(17);
  const TriangleMesh ball = sphere_mesh(6.0, 0.5);
  for (const auto& v : ball.vertices) obj << "v " << v[0] << ' ' << v[1] << ' ' << v[2] << '\n';
  for (const auto& t : ball.triangles)
    obj << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << '\n';
  const std::string stl = dir.write("ball.obj", obj.str());
  Body mesh;
  mesh.shape = Body::Shape::Mesh, mesh.mesh = stl, mesh.spacing = 0.4;
  const auto from_file = sample_body(mesh, 3, ib);
  for (const auto& p : from_file.offsets) EXPECT_LE(std::hypot(p[0], p[1], p[2]), 5.6 + 1e-4);
  EXPECT_NEAR(from_file.extent, 5.6, 0.01);
  // The volumes the bodies enclose, before the retraction (the fluid they carry along).
  constexpr double pi = std::numbers::pi;
  EXPECT_NEAR(circle.volume, pi * 25, 1e-9);
  EXPECT_NEAR(sphere.volume, 4.0 / 3.0 * pi * 216, 1e-9);
  EXPECT_NEAR(b.volume, 480, 1e-9);
  EXPECT_NEAR(r.volume, 48, 1e-9);
  EXPECT_NEAR(from_file.volume, 4.0 / 3.0 * pi * 216, 0.02 * 4.0 / 3.0 * pi * 216)
      << "the tessellated sphere";
  EXPECT_LT(from_file.volume, 4.0 / 3.0 * pi * 216) << "its flat triangles lie inside the sphere";
  Body tube;
  tube.shape = Body::Shape::Cylinder, tube.radius = 3, tube.length = 8, tube.caps = false,
  tube.spacing = 0.4;
  EXPECT_EQ(sample_body(tube, 3, ib).volume, 0.0) << "an open cylinder encloses no fluid";
  tube.caps = true;
  EXPECT_NEAR(sample_body(tube, 3, ib).volume, pi * 9 * 8, 1e-9);
  // A retraction that leaves nothing: refused, naming the key.
  ib.retraction = 5.0;
  try {
    sample_body(c, 2, ib);
    ADD_FAILURE() << "a retraction of the whole radius was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ib.retraction"), std::string::npos) << e.what();
  }
  // A body's own retraction takes the place of [ib]'s, and is the key its refusal names.
  ib.retraction = 0.4;
  Body own = c;
  own.name = "disc", own.retraction = 0.1;
  for (const auto& p : sample_body(own, 2, ib).offsets)
    EXPECT_NEAR(std::hypot(p[0], p[1]), 4.9, 1e-12);
  own.retraction = 5.0;
  try {
    sample_body(own, 2, ib);
    ADD_FAILURE() << "a body's retraction of its whole radius was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("body \"disc\": retraction = 5"), std::string::npos)
        << e.what();
  }
}

/// What parse_deck says of `deck` with `from` replaced by `to` ("no error" if it takes it).
std::string deck_error(std::string deck, const std::string& from, const std::string& to,
                       const std::string& file) {
  deck.replace(deck.find(from), from.size(), to);
  return test::deck_error(deck, file);
}

SolverConfig stream_past(LatticeKind lat, double U) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = test::periodic_box(lat, 32, 24, two_d ? 1 : 20, 0.8);
  c.initial.velocity = {U, 0, 0};
  Body b;
  b.name = "obstacle";
  b.shape = two_d ? Body::Shape::Cylinder : Body::Shape::Sphere;
  b.radius = 4.0, b.length = 8.0, b.spacing = 0.35;
  b.position = {12.3, 12.1, two_d ? 0.5 : 10.2};
  c.bodies.push_back(b);
  return c;
}

/// The fluid's momentum gain over one step of `s` (the populations before and after it).
std::array<double, 3> momentum_gain_over_a_step(Solver& s, LatticeKind lat) {
  const auto p0 = s.populations();
  s.step(1);
  const auto p1 = s.populations();
  const int Q = s.populations_per_cell();
  const std::size_t n = p0.size() / std::size_t(Q);
  std::array<double, 3> dm{0, 0, 0};
  for (int q = 0; q < Q; ++q)
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) {
        const int cq = lat == LatticeKind::D2Q9    ? D2Q9::c(q, d)
                       : lat == LatticeKind::D3Q19 ? D3Q19::c(q, d)
                                                   : D3Q27::c(q, d);
        dm[std::size_t(d)] += cq * (p1[std::size_t(q) * n + i] - p0[std::size_t(q) * n + i]);
      }
  return dm;
}

class ImmersedLattice : public ::testing::TestWithParam<LatticeKind> {};

TEST_P(ImmersedLattice, FluidGainsMinusTheForceOnTheBody) {
  // Periodic box, a body at rest in a stream: over one step the fluid's momentum changes by the
  // immersed force, which is minus the force reported on the body (Guo: sum c f* - sum c f = F).
  auto c = stream_past(GetParam(), 0.04);
  for (auto col : {CollisionKind::Bgk, CollisionKind::RecursiveRegularized}) {
    if (col == CollisionKind::RecursiveRegularized && GetParam() == LatticeKind::D3Q27) c.collision = CollisionKind::CentralMoment;
    else c.collision = col;
    auto s = make_solver(c);
    s->step(20);
    const auto dm = momentum_gain_over_a_step(*s, GetParam());
    const auto loads = s->body_loads();
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_GT(loads[0].force[0], 1e-4) << "the stream drags the body along +x";
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(dm[std::size_t(d)], -loads[0].force[std::size_t(d)], 1e-10 + 1e-9 * std::fabs(loads[0].force[0])) << d;
  }
}

TEST_P(ImmersedLattice, GatherSpreadsTheSameForcesAsScatter) {
  auto c = stream_past(GetParam(), 0.04);
  c.ib.iterations = 2;
  auto a = make_solver(c);
  c.ib.spreading = ImmersedSettings::Spreading::Gather;
  auto b = make_solver(c);
  a->step(30);
  b->step(30);
  const auto la = a->body_loads(), lb = b->body_loads();
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(la[0].force[std::size_t(d)], lb[0].force[std::size_t(d)], 1e-10) << d;
  const auto pa = a->populations(), pb = b->populations();
  double diff = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) diff = std::max(diff, std::fabs(pa[i] - pb[i]));
  EXPECT_LT(diff, 1e-12);
  EXPECT_GT(b->ib_stats().loops_max, b->ib_stats().loops_min);  // gathering: uneven work per node
}

TEST_P(ImmersedLattice, TimedOnlyOnRequestWithTheSameResults) {
  auto c = stream_past(GetParam(), 0.04);
  auto a = make_solver(c);
  c.ib.timing = true;
  auto b = make_solver(c);
  a->step(8);
  b->step(8);
  EXPECT_FALSE(a->ib_stats().timed);
  EXPECT_EQ(a->ib_stats().seconds, 0.0) << "no fences, no time";
  EXPECT_EQ(a->ib_stats().steps, 8);
  EXPECT_TRUE(b->ib_stats().timed);
  EXPECT_GT(b->ib_stats().seconds, 0.0);
  EXPECT_EQ(a->populations(), b->populations());
}

TEST_P(ImmersedLattice, BodyMovingWithTheStreamFeelsNoForce) {
  // Galilean check of the moving-body path: fluid and body translate together.
  auto c = stream_past(GetParam(), 0.03);
  c.bodies[0].velocity = {0.03, 0, 0};
  auto s = make_solver(c);
  s->step(50);
  // Named: a range-for over a member of an element of the returned (temporary) vector dangles.
  const auto loads = s->body_loads();
  for (double f : loads[0].force) EXPECT_NEAR(f, 0.0, 1e-12);
  EXPECT_NEAR(loads[0].centre[0], 12.3 + 0.03 * 49, 1e-5);  // the pose of the last step (t = 49)
}

/// Steps `a` and `b` together `steps` times; after each step every body's force and torque agree
/// within the tolerances, and `each(step)` may check more.
template <class Each>
void step_with_equal_loads(Solver& a, Solver& b, int steps, double force_tol, double torque_tol,
                           const Each& each) {
  for (int step = 1; step <= steps; ++step) {
    a.step(1);
    b.step(1);
    const auto la = a.body_loads(), lb = b.body_loads();
    ASSERT_EQ(lb.size(), la.size());
    for (std::size_t k = 0; k < la.size(); ++k)
      for (std::size_t d = 0; d < 3; ++d) {
        EXPECT_NEAR(lb[k].force[d], la[k].force[d], force_tol) << la[k].name << " step " << step;
        EXPECT_NEAR(lb[k].torque[d], la[k].torque[d], torque_tol) << la[k].name << " step " << step;
      }
    each(step);
  }
}

TEST_P(ImmersedLattice, InPlaceMatchesTwoArrays) {
  // In-place streaming (the AA pattern) with a body at rest and one that translates and turns:
  // the nodes read the populations the coming collision reads (the cell's own slots before a
  // local step, the upwind departing slots before a streaming step), so forces, collisions and
  // loads are the two-array ones: the same populations after every even number of steps and
  // the same loads after every step. Bit for bit on the host; the tolerances leave the few ulps
  // a GPU compiler may contract differently in the two kernels.
  auto c = stream_past(GetParam(), 0.04);
  Body moving = c.bodies[0];
  moving.name = "moving", moving.radius = 2.5;
  moving.position = {24.2, 8.3, c.nz > 1 ? 9.6 : 0.5};
  moving.velocity = {-0.01, 0.004, 0}, moving.angular_velocity = {0, 0, 0.01};
  c.bodies.push_back(moving);
  auto two = make_solver(c);
  c.streaming = Streaming::InPlace;
  auto one = make_solver(c);
  ASSERT_EQ(one->body_loads().size(), 2u);
  step_with_equal_loads(*two, *one, 12, 1e-13, 1e-12, [&](int step) {
    if (step % 2 == 1) return;
    const auto pa = two->populations(), pb = one->populations();
    ASSERT_EQ(pa.size(), pb.size());
    for (std::size_t i = 0; i < pa.size(); ++i)
      ASSERT_NEAR(pb[i], pa[i], 1e-15) << "population " << i << " step " << step;
  });
  EXPECT_GT(two->body_loads()[0].force[0], 1e-4) << "the stream drags the body at rest";
}

TEST_P(ImmersedLattice, MomentRepresentationMatchesTheRegularizedPopulations) {
  // The moment representation (streaming = "moments") with the projective regularized operator
  // against the same operator on two population arrays: the nodes take their density and velocity
  // from the populations the coming step streams, rebuilt from the neighbours' moments (through
  // the walls' rules where a node is a boundary cell), and the moment kernel collides with the
  // bodies' force per cell, so forces and loads are the population form's to round-off (the two
  // forms sum the same terms in another order). A body at rest next to a wall (its stencils reach
  // boundary cells) and one that translates and turns.
  auto c = stream_past(GetParam(), 0.04);
  c.collision = CollisionKind::Regularized;
  c.faces[2].type = FaceType::Wall, c.faces[3].type = FaceType::MovingWall;
  c.faces[3].velocity = {0.04, 0, 0};
  c.bodies[0].position[1] = 5.6;  // 1.6 cells between its surface and the wall at y = -0.5
  Body moving = c.bodies[0];
  moving.name = "moving", moving.radius = 2.5;
  moving.position = {24.2, 14.3, c.nz > 1 ? 9.6 : 0.5};
  moving.velocity = {-0.01, 0.004, 0}, moving.angular_velocity = {0, 0, 0.01};
  c.bodies.push_back(moving);
  auto two = make_solver(c);
  c.streaming = Streaming::Moments;
  auto mr = make_solver(c);
  ASSERT_EQ(mr->body_loads().size(), 2u);
  step_with_equal_loads(*two, *mr, 12, 1e-12, 1e-11, [](int) {});
  const auto pa = two->populations(), pb = mr->populations();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i)
    ASSERT_NEAR(pb[i], pa[i], 1e-13) << "population " << i;
  const auto fa = two->macroscopic(), fb = mr->macroscopic();
  for (std::size_t i = 0; i < fa.u.size(); ++i)
    for (std::size_t d = 0; d < 3; ++d)
      ASSERT_NEAR(fb.u[i][d], fa.u[i][d], 1e-13) << "velocity " << i;
  EXPECT_GT(two->body_loads()[0].force[0], 1e-4) << "the stream drags the body at rest";
}

INSTANTIATE_TEST_SUITE_P(Lattices, ImmersedLattice, ::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q27),
                         [](const auto& i) { return std::string(to_string(i.param)); });

TEST(Immersed, MultiDirectForcingBringsTheSurfaceVelocityToTheBody) {
  // A cylinder at rest in a 2D stream: the velocity interpolated at the samples (what the
  // collision sees) approaches zero with more forcing passes.
  double slip[2];
  for (int k = 0; k < 2; ++k) {
    auto c = stream_past(LatticeKind::D2Q9, 0.04);
    c.ib.iterations = k == 0 ? 1 : 5;
    c.ib.retraction = 0.0;  // the samples on the circle the slip is measured on
    auto s = make_solver(c);
    s->step(200);
    // Fluid speed interpolated at points of the circle, as the samples see it.
    const auto f = s->macroscopic();
    double sum = 0;
    int n = 0;
    for (int i = 0; i < 64; ++i, ++n) {
      const double a = 2 * std::numbers::pi * i / 64;
      const double x[3] = {12.3 + 4 * std::cos(a), 12.1 + 4 * std::sin(a), 0.5};
      const Stencil<2, double> st(x);
      double u[2] = {0, 0};
      for (int j = 0; j < 4; ++j) {
        int p[3];
        const double w = st.node(j, p);
        for (int d = 0; d < 2; ++d) u[d] += w * f.u[f.index(p[0], p[1], 0)][std::size_t(d)];
      }
      sum += std::hypot(u[0], u[1]);
    }
    slip[k] = sum / n;
  }
  RecordProperty("slip_1_pass", std::to_string(slip[0]));
  RecordProperty("slip_5_passes", std::to_string(slip[1]));
  EXPECT_LT(slip[0], 0.1 * 0.04);       // one pass already holds the surface well below the stream
  EXPECT_LT(slip[1], 0.5 * slip[0]);    // more passes reduce the slip further
}

/// The implicit forcing's system for a handful of 2D samples, assembled densely here from the
/// stencil weights (M_ij = sum_n w_in w_jn d_n) as a reference for CouplingSystem.
TEST(ImplicitForcingSystem, SolvesTheSampleSystemAgainstADenseReference) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  // Samples on an arc (stencils overlapping, some sharing all four nodes), one whose stencil
  // misses the node box, one whose nodes are all solid.
  const std::vector<std::array<double, 2>> at = {{3.2, 3.1}, {3.9, 3.3},  {4.5, 3.8},   {4.9, 4.6},
                                                 {5.1, 5.4}, {5.15, 5.5}, {30.0, 30.0}, {1.2, 6.6}};
  const int ns = int(at.size());
  const int lo[3] = {1, 1, 0}, n[3] = {7, 7, 1};
  auto factor = [&](int x, int y) {
    if (x < lo[0] || y < lo[1] || x >= lo[0] + n[0] || y >= lo[1] + n[1]) return 0.0;
    if (x <= 1 && y >= 6) return 0.0;          // solid nodes: the last sample's whole stencil
    return 0.5 / (1.0 + 0.01 * x - 0.02 * y);  // 1 / (2 rho), rho varying
  };
  Kokkos::View<int* [3], MemSpace> base("base", ns);
  Kokkos::View<double*[3], MemSpace> frac("frac", ns), rhs("rhs", ns), force("force", ns);
  Kokkos::View<double*, MemSpace> wsum("wsum", ns), node("node", n[0] * n[1]);
  auto hb = Kokkos::create_mirror_view(base);
  auto hf = Kokkos::create_mirror_view(frac);
  auto hr = Kokkos::create_mirror_view(rhs);
  auto hw = Kokkos::create_mirror_view(wsum);
  auto hn = Kokkos::create_mirror_view(node);
  for (int y = 0; y < n[1]; ++y)
    for (int x = 0; x < n[0]; ++x) hn(y * n[0] + x) = factor(lo[0] + x, lo[1] + y);
  std::vector<Stencil<2, double>> st;
  for (int i = 0; i < ns; ++i) {
    const double x[3] = {at[std::size_t(i)][0], at[std::size_t(i)][1], 0.5};
    st.emplace_back(x);
    for (int d = 0; d < 3; ++d) hb(i, d) = st.back().base[d], hf(i, d) = st.back().frac[d];
    hw(i) = i == 6 ? 0.0 : 1.0;  // the sample off the box: no weights in it
    hr(i, 0) = 0.01 * (i + 1), hr(i, 1) = -0.003 * i * i, hr(i, 2) = 0.0;
  }
  // The dense reference.
  std::vector<double> m(std::size_t(ns * ns), 0.0);
  for (int i = 0; i < ns; ++i)
    for (int j = 0; j < ns; ++j)
      for (int k = 0; k < 4; ++k) {
        int c[3];
        const double wi = st[std::size_t(i)].node(k, c);
        for (int l = 0; l < 4; ++l) {
          int e[3];
          const double wj = st[std::size_t(j)].node(l, e);
          if (c[0] == e[0] && c[1] == e[1])
            m[std::size_t(i * ns + j)] += wi * wj * factor(c[0], c[1]);
        }
      }
  EXPECT_EQ(m[6 * ns + 6], 0.0) << "the sample off the box";
  EXPECT_EQ(m[7 * ns + 7], 0.0) << "the sample on solid nodes";
  hw(7) = 1.0;
  Kokkos::deep_copy(base, hb);
  Kokkos::deep_copy(frac, hf);
  Kokkos::deep_copy(rhs, hr);
  Kokkos::deep_copy(wsum, hw);
  Kokkos::deep_copy(node, hn);
  CouplingProblem p;
  p.dims = 2;
  for (int d = 0; d < 3; ++d) p.lo[d] = lo[d], p.n[d] = n[d];
  p.base = base, p.frac = frac, p.node_factor = node, p.rhs = rhs, p.weight_sum = wsum;
  p.force = force;
  // Samples 4 and 5 share their four nodes: M is singular, the system consistent only if b
  // gives them velocities a trilinear field can take. Make it so: b = M v for some v.
  std::vector<double> v = {0.3, -0.1, 0.2, 0.05, -0.4, 0.1, 0.0, 0.0};
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < ns; ++i) {
      double sum = 0;
      for (int j = 0; j < ns; ++j) sum += m[std::size_t(i * ns + j)] * v[std::size_t(j)] * (d + 1);
      hr(i, d) = sum;
    }
  hr(7, 0) = 1.0;  // ignored: the solid sample's row is the identity with b = 0
  Kokkos::deep_copy(rhs, hr);
  CouplingSystem sys;
  const CouplingReport rep = sys.solve(p, 1e-12, 100, 4);
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), force);
  EXPECT_TRUE(rep.converged);
  EXPECT_LE(rep.residual, 1e-12);
  EXPECT_LE(rep.iterations, ns) << "conjugate gradients end within the rank of M";
  // The pattern's entries: the pairs whose stencils share a node of the box (those of the
  // sample on solid nodes stored as zeros), plus the identity row of the sample off the box.
  std::int64_t pairs = 1;
  for (int i = 0; i < ns; ++i)
    for (int j = 0; j < ns; ++j) {
      bool share = false;
      for (int k = 0; k < 4; ++k) {
        int c[3], e[3];
        const double wi = st[std::size_t(i)].node(k, c);
        const bool in_box =
            c[0] >= lo[0] && c[1] >= lo[1] && c[0] < lo[0] + n[0] && c[1] < lo[1] + n[1];
        for (int l = 0; l < 4; ++l) {
          const double wj = st[std::size_t(j)].node(l, e);
          share = share || (in_box && c[0] == e[0] && c[1] == e[1] && wi * wj != 0.0);
        }
      }
      pairs += share ? 1 : 0;
    }
  EXPECT_EQ(rep.nonzeros, pairs);
  EXPECT_TRUE(rep.pattern_built);
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < ns; ++i) {
      double mg = 0;
      for (int j = 0; j < ns; ++j) mg += m[std::size_t(i * ns + j)] * g(j, d);
      const double want = i == 7 ? 0.0 : hr(i, d);
      EXPECT_NEAR(mg, want, 1e-12) << "row " << i << " component " << d;
    }
  EXPECT_EQ(g(6, 0), 0.0) << "a sample off the box takes no force";
  EXPECT_EQ(g(7, 0), 0.0) << "a sample on solid nodes takes no force";
  EXPECT_EQ(g(3, 2), 0.0) << "2D: the third component untouched (its first guess, 0)";
  // The host's looks at the residuals (ib.check_every) only decide when the loop ends: a
  // component that met its tolerance stands still, so every interval gives the same bits.
  std::vector<double> first;  // g may share force's memory (host builds): copy it
  for (int i = 0; i < ns; ++i)
    for (int d = 0; d < 3; ++d) first.push_back(g(i, d));
  for (const int every : {1, 3, 64}) {
    Kokkos::deep_copy(force, 0.0);  // the same first guess
    CouplingSystem fresh;
    const CouplingReport again = fresh.solve(p, 1e-12, 100, every);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), force);
    EXPECT_EQ(again.iterations, rep.iterations) << "check_every " << every;
    for (int d = 0; d < 3; ++d)
      for (int i = 0; i < ns; ++i)
        EXPECT_EQ(h(i, d), first[std::size_t(3 * i + d)])
            << "check_every " << every << ", row " << i << ", component " << d;
  }
  // Started at its answer (a warm start that is already converged), the solve runs its first
  // block standing still: no iteration counted, the forces unchanged.
  const CouplingReport settled = sys.solve(p, 1e-9, 100, 4);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), force);
  EXPECT_EQ(settled.iterations, 0);
  EXPECT_TRUE(settled.converged);
  for (int d = 0; d < 3; ++d)
    for (int i = 0; i < ns; ++i) EXPECT_EQ(h(i, d), first[std::size_t(3 * i + d)]);
}

/// The coupling matrix's pattern is kept while the stencils and the box stay (fixed bodies),
/// and built again when a sample moves: either way the solve gives the bits of a new system's.
TEST(ImplicitForcingSystem, KeepsItsPatternWhileTheStencilsStay) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  const int ns = 12, lo[3] = {1, 1, 1}, n[3] = {8, 8, 8};
  Kokkos::View<int* [3], MemSpace> base("base", ns);
  Kokkos::View<double*[3], MemSpace> frac("frac", ns), rhs("rhs", ns);
  Kokkos::View<double*, MemSpace> wsum("wsum", ns), node("node", n[0] * n[1] * n[2]);
  auto place = [&](const double shift) {  // samples on a ring; the last moved by `shift`
    auto hb = Kokkos::create_mirror_view(base);
    auto hf = Kokkos::create_mirror_view(frac);
    for (int i = 0; i < ns; ++i) {
      const double a = 2.0 * std::numbers::pi * i / ns,
                   x[3] = {5.0 + 1.9 * std::cos(a), 5.0 + 1.9 * std::sin(a),
                           4.6 + (i == ns - 1 ? shift : 0.0)};
      const Stencil<3, double> st(x);
      for (int d = 0; d < 3; ++d) hb(i, d) = st.base[d], hf(i, d) = st.frac[d];
    }
    Kokkos::deep_copy(base, hb);
    Kokkos::deep_copy(frac, hf);
  };
  auto step = [&](const double rho_wave) {  // this step's d_n = 1 / (2 rho_n) and b
    auto hn = Kokkos::create_mirror_view(node);
    for (int c = 0; c < n[0] * n[1] * n[2]; ++c)
      hn(c) = c % 7 == 3 ? 0.0 : 0.5 / (1.0 + rho_wave * std::sin(0.37 * c));  // some solid
    Kokkos::deep_copy(node, hn);
    auto hr = Kokkos::create_mirror_view(rhs);
    auto hw = Kokkos::create_mirror_view(wsum);
    for (int i = 0; i < ns; ++i) {
      hw(i) = 1.0;
      for (int d = 0; d < 3; ++d) hr(i, d) = 0.01 * std::cos(1.3 * i + d + rho_wave);
    }
    Kokkos::deep_copy(rhs, hr);
    Kokkos::deep_copy(wsum, hw);
  };
  auto solve = [&](CouplingSystem& sys, std::vector<double>& out, bool stencils_static = false) {
    Kokkos::View<double* [3], MemSpace> force("force", ns);
    CouplingProblem p;
    for (int d = 0; d < 3; ++d) p.lo[d] = lo[d], p.n[d] = n[d];
    p.base = base, p.frac = frac, p.node_factor = node, p.rhs = rhs, p.weight_sum = wsum;
    p.force = force;
    p.stencils_static = stencils_static;
    const CouplingReport rep = sys.solve(p, 1e-10, 200, 4);
    const auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), force);
    out.assign(g.data(), g.data() + 3 * ns);
    return rep;
  };
  CouplingSystem kept;
  std::vector<double> mine, fresh;
  place(0.0);
  step(0.01);
  EXPECT_TRUE(solve(kept, mine).pattern_built);
  step(0.02);  // the density changed, the samples did not
  const CouplingReport again = solve(kept, mine);
  EXPECT_FALSE(again.pattern_built);
  EXPECT_TRUE(again.converged);
  {
    CouplingSystem other;
    const CouplingReport rep = solve(other, fresh);
    EXPECT_TRUE(rep.pattern_built);
    EXPECT_EQ(rep.nonzeros, again.nonzeros);
    EXPECT_EQ(mine, fresh) << "a kept pattern gives the bits of a new one";
  }
  {  // static stencils (bodies that do not move): the pattern kept without comparing them
    std::vector<double> told;
    const CouplingReport rep = solve(kept, told, true);
    EXPECT_FALSE(rep.pattern_built);
    EXPECT_EQ(told, fresh);
  }
  place(0.3);  // one sample moves (its stencil's fraction)
  step(0.03);
  const CouplingReport moved = solve(kept, mine);
  EXPECT_TRUE(moved.pattern_built);
  {
    CouplingSystem other;
    solve(other, fresh);
    EXPECT_EQ(mine, fresh);
  }
  place(1.3);  // and across a node (its base): the pattern gains or loses pairs
  step(0.03);
  EXPECT_TRUE(solve(kept, mine).pattern_built);
  {
    CouplingSystem other;
    solve(other, fresh);
    EXPECT_EQ(mine, fresh);
  }
}

class ImplicitForcing : public ::testing::TestWithParam<LatticeKind> {};

TEST_P(ImplicitForcing, HoldsNoSlipAtEverySampleAndBalancesMomentum) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  // A body at rest in a stream: every step's solve meets its tolerance, the velocity the
  // collision sees at the samples equals the body's to a millionth of the stream, and the
  // fluid gains minus the force on the body (the solution is what is spread).
  const double U = 0.04;
  auto c = stream_past(GetParam(), U);
  c.collision = CollisionKind::Bgk;
  c.ib.forcing = ImmersedSettings::Forcing::Implicit;
  c.ib.tolerance = 1e-8;
  c.bodies[0].spacing = kImplicitSampleSpacing;
  auto s = make_solver(c);
  s->step(30);
  const auto dm = momentum_gain_over_a_step(*s, GetParam());
  const auto loads = s->body_loads();
  const IbStats st = s->ib_stats();
  RecordProperty("iterations_max", std::to_string(st.solver_iterations_max));
  RecordProperty("slip_max", std::to_string(st.slip_max));
  RecordProperty("nonzeros", std::to_string(st.coupling_nonzeros));
  EXPECT_EQ(st.unconverged_steps, 0);
  EXPECT_LE(st.solver_residual_max, 1e-8);
  EXPECT_LT(st.slip_max, 1e-6 * U);
  EXPECT_GT(st.coupling_nonzeros, st.samples);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_GT(loads[0].force[0], 1e-4) << "the stream drags the body along +x";
  for (int d = 0; d < 3; ++d)
    EXPECT_NEAR(dm[std::size_t(d)], -loads[0].force[std::size_t(d)],
                1e-10 + 1e-9 * std::fabs(loads[0].force[0]))
        << d;
}

// The warm start (issue 21): each solve starts from the last step's forces, so the solves take
// fewer iterations to the same tolerance and give the same drag to within it. This periodic box
// rings with the sound of the body's impulsive start, the worst case for a warm start (measured:
// 0.80 of the cold iterations in 2D, 0.62 in 3D); a smoother flow gains more (the 2D cylinder of
// inputs/ib_cylinder2d.toml: 4.0 against 11.4 a step over 2000 steps, docs/performance.md).
TEST_P(ImplicitForcing, AWarmStartTakesFewerIterations) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  constexpr int kSteps = 200;
  auto c = stream_past(GetParam(), 0.04);
  c.collision = CollisionKind::Bgk;
  c.ib.forcing = ImmersedSettings::Forcing::Implicit;
  c.bodies[0].spacing = kImplicitSampleSpacing;
  auto run = [&](bool warm) {
    c.ib.warm_start = warm;
    auto s = make_solver(c);
    s->step(kSteps);
    return std::make_pair(s->ib_stats(), s->body_loads()[0].force[0]);
  };
  const auto [cold, cold_drag] = run(false);
  const auto [warm, warm_drag] = run(true);
  RecordProperty("iterations_cold", std::to_string(cold.solver_iterations));
  RecordProperty("iterations_warm", std::to_string(warm.solver_iterations));
  EXPECT_EQ(cold.unconverged_steps, 0);
  EXPECT_EQ(warm.unconverged_steps, 0);
  EXPECT_LT(warm.solver_iterations, cold.solver_iterations)
      << "cold " << cold.solver_iterations << ", warm " << warm.solver_iterations;
  EXPECT_NEAR(warm_drag, cold_drag, 10 * c.ib.tolerance * std::fabs(cold_drag));
}

TEST_P(ImplicitForcing, DirectForcingPassesApproachTheImplicitDrag) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  // On the same samples, the passes of the direct forcing are a Richardson iteration on the
  // implicit forcing's system: their drag comes closer to the implicit drag with every pass.
  auto c = stream_past(GetParam(), 0.04);
  c.collision = CollisionKind::Bgk;
  c.bodies[0].spacing = kImplicitSampleSpacing;
  auto drag = [&c](ImmersedSettings::Forcing forcing, int passes) {
    c.ib.forcing = forcing, c.ib.iterations = passes;
    auto s = make_solver(c);
    s->step(60);
    return s->body_loads()[0].force[0];
  };
  const double implicit = drag(ImmersedSettings::Forcing::Implicit, 1);
  double gap[3];
  const int passes[3] = {1, 3, 10};
  for (int k = 0; k < 3; ++k) {
    const double direct = drag(ImmersedSettings::Forcing::Direct, passes[k]);
    gap[k] = std::fabs(direct / implicit - 1.0);
    RecordProperty("drag_gap_" + std::to_string(passes[k]) + "_passes", std::to_string(gap[k]));
  }
  EXPECT_LT(gap[1], gap[0]);
  EXPECT_LT(gap[2], gap[1]);
}

INSTANTIATE_TEST_SUITE_P(Lattices, ImplicitForcing,
                         ::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q27),
                         [](const auto& i) { return std::string(to_string(i.param)); });

TEST(ImplicitForcingDeck, KeysDefaultsAndRules) {
  const std::string deck = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 40
ny = 30
[physics]
tau = 0.6
velocity = 0.05
[[body]]
type = "cylinder"
radius = 5.0
position = [10.0, 15.0]
[ib]
forcing = "implicit"
tolerance = 1e-7
max_iterations = 50
)";
  if (!CouplingSystem::built()) {
    try {
      parse_deck(deck, "implicit.toml");
      ADD_FAILURE() << "the implicit forcing was accepted without Kokkos Kernels";
    } catch (const DeckError& e) {
      EXPECT_NE(std::string(e.what()).find("ib.forcing"), std::string::npos) << e.what();
    }
    return;
  }
  const Case c = parse_deck(deck, "implicit.toml");
  EXPECT_EQ(c.solver.ib.forcing, ImmersedSettings::Forcing::Implicit);
  EXPECT_DOUBLE_EQ(c.solver.ib.tolerance, 1e-7);
  EXPECT_EQ(c.solver.ib.max_iterations, 50);
  EXPECT_EQ(c.solver.ib.check_every, 4) << "the host looks every 4 iterations by default";
  EXPECT_EQ(parse_deck(deck + "check_every = 8\n", "implicit.toml").solver.ib.check_every, 8);
  EXPECT_DOUBLE_EQ(c.solver.bodies[0].spacing, kImplicitSampleSpacing)
      << "samples about a node apart by default under the implicit forcing";
  auto message = [&](const std::string& from, const std::string& to) {
    return deck_error(deck, from, to, "implicit.toml");
  };
  EXPECT_NE(message("forcing = \"implicit\"", "forcing = \"explicit\"").find("ib.forcing"),
            std::string::npos);
  EXPECT_NE(message("tolerance = 1e-7", "tolerance = 0.5").find("ib.tolerance"), std::string::npos);
  EXPECT_NE(message("max_iterations = 50", "max_iterations = 0").find("ib.max_iterations"),
            std::string::npos);
  EXPECT_NE(message("max_iterations = 50", "iterations = 3").find("ib.iterations"),
            std::string::npos)
      << "passes belong to the direct forcing";
  EXPECT_NE(message("forcing = \"implicit\"", "forcing = \"direct\"").find("ib.tolerance"),
            std::string::npos)
      << "a tolerance belongs to the implicit forcing";
  EXPECT_TRUE(c.solver.ib.warm_start) << "the implicit forcing starts warm by default";
  EXPECT_FALSE(parse_deck(deck + "warm_start = false\n", "implicit.toml").solver.ib.warm_start);
  EXPECT_NE(message("max_iterations = 50", "warm_start = 3").find("ib.warm_start"),
            std::string::npos);
  EXPECT_NE(message("max_iterations = 50", "check_every = 0").find("ib.check_every"),
            std::string::npos);
  EXPECT_NE(
      message("forcing = \"implicit\"\ntolerance = 1e-7\nmax_iterations = 50", "warm_start = false")
          .find("belongs to ib.forcing = \"implicit\""),
      std::string::npos)
      << "a warm start belongs to the implicit forcing";
  SolverConfig sc = c.solver;
  sc.ib.spreading = ImmersedSettings::Spreading::Gather;
  const auto breach = broken_rule(sc);
  ASSERT_TRUE(breach.has_value());
  EXPECT_EQ(breach->section + "." + breach->key, "ib.spreading");
}

TEST(Immersed, OscillatingBodyFollowsItsPath) {
  Body b;
  b.position = {10, 12, 14}, b.velocity = {0.01, 0, 0};
  b.amplitude = {2, 0, 1}, b.frequency = 0.01, b.phase = 0.3;
  const double w = 2 * std::numbers::pi * b.frequency;
  for (double t : {0.0, 17.0, 40.0}) {
    const BodyState s = body_state(b, t);
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(s.centre[d],
                  b.position[d] + b.velocity[d] * t + b.amplitude[d] * std::sin(w * t + b.phase),
                  1e-12);
      const double h = 1e-3;  // the velocity and acceleration are the path's derivatives
      const double up = body_state(b, t + h).centre[d], down = body_state(b, t - h).centre[d];
      EXPECT_NEAR(s.velocity[d], (up - down) / (2 * h), 1e-8) << d;
      EXPECT_NEAR(s.acceleration[d], (up - 2 * s.centre[d] + down) / (h * h), 1e-6) << d;
    }
  }
  // Turning back and forth about z by 0.2 sin(w t + phase) radians.
  b.angular_amplitude = {0, 0, 0.2};
  const BodyState s = body_state(b, 17.0);
  const double angle = 0.2 * std::sin(w * 17.0 + b.phase);
  EXPECT_NEAR(s.rotation[0], std::cos(angle), 1e-12);
  EXPECT_NEAR(s.rotation[3], std::sin(angle), 1e-12);
  EXPECT_NEAR(s.angular_velocity[2], 0.2 * w * std::cos(w * 17.0 + b.phase), 1e-12);
  // A body without oscillation: the steady motion, as before.
  Body steady;
  steady.position = {5, 6, 7}, steady.velocity = {0.02, 0.01, 0},
  steady.angular_velocity = {0, 0.01, 0};
  const BodyState q = body_state(steady, 30.0);
  EXPECT_EQ(q.centre[0], 5 + 0.02 * 30.0);
  EXPECT_EQ(q.acceleration, (std::array<double, 3>{0, 0, 0}));
  EXPECT_EQ(q.rotation, axis_rotation({0, 0.01, 0}, 0.01 * 30.0));
}

TEST(Immersed, OscillatingBodyLoadsCountTheFluidItCarries) {
  // A cylinder oscillating in fluid at rest: over one step the fluid gains the forcing's
  // momentum, sum g = -(F_body - rho V a); the load adds rho V a, the rate of change of the
  // momentum of the fluid the body encloses, which the forcing accelerates too.
  auto c = test::periodic_box(LatticeKind::D2Q9, 32, 24, 1, 0.8);
  Body b;
  b.name = "shaker", b.shape = Body::Shape::Cylinder, b.radius = 4.0, b.spacing = 0.35;
  b.position = {16.0, 12.0, 0.5}, b.amplitude = {2.0, 0, 0}, b.frequency = 1.0 / 200, b.phase = 0.5;
  c.bodies = {b};
  auto s = make_solver(c);
  s->step(30);
  const double dm = momentum_gain_over_a_step(*s, LatticeKind::D2Q9)[0];
  const auto loads = s->body_loads();
  // rho V (u_b(30) - u_b(29)): the carried fluid's momentum change over the step at t = 30.
  const double carried =
      std::numbers::pi * 16.0 * (body_state(b, 30.0).velocity[0] - body_state(b, 29.0).velocity[0]);
  EXPECT_GT(std::fabs(carried), 1e-3) << "the check means something";
  EXPECT_NEAR(loads[0].force[0], -dm + carried, 1e-10 + 1e-9 * std::fabs(carried));
  const auto again = s->body_loads();  // asking twice changes nothing
  EXPECT_EQ(again[0].force, loads[0].force);
}

/// A free disk in a periodic box (D2Q9, FP64): density `rho`, moving at `u0` at the start.
SolverConfig free_disk(double rho, std::array<double, 3> u0) {
  auto c = test::periodic_box(LatticeKind::D2Q9, 40, 32, 1, 0.8);
  Body b;
  b.name = "disk", b.shape = Body::Shape::Cylinder, b.radius = 5.0, b.spacing = 0.35;
  b.position = {17.3, 15.8, 0.5}, b.velocity = u0, b.free = true, b.density = rho;
  b.angular_velocity = {0, 0, 0.002};
  c.bodies = {b};
  return c;
}

/// The fluid's momentum: sum over cells and directions of c f.
std::array<double, 3> fluid_momentum(const Solver& s) {
  const auto p = s.populations();
  const std::size_t n = p.size() / 9;
  std::array<double, 3> m{0, 0, 0};
  for (int q = 0; q < 9; ++q)
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 2; ++d) m[std::size_t(d)] += D2Q9::c(q, d) * p[std::size_t(q) * n + i];
  return m;
}

TEST(FreeBodies, MomentumOfFluidAndBodyIsConserved) {
  // Periodic box, no gravity: the body gains the forcing's load plus the change of the fluid's
  // momentum inside it, so the fluid outside and the body together keep their momentum (to
  // round-off; the virtual mass c adds its lagged term c a, which telescopes),
  // heavy or light (light bodies stay stable: the inner fluid is measured, not taken to move
  // rigidly with the body, and the virtual mass damps the explicit coupling).
  for (const double rho : {1.5, 1.0, 0.3}) {
    auto c = free_disk(rho, {0.02, -0.01, 0});
    auto s = make_solver(c);
    const double mass = rho * std::numbers::pi * 25.0;
    std::array<double, 3> first{};
    double moved = 0;
    for (int t = 0; t < 150; ++t) {
      const auto fluid = fluid_momentum(*s);  // before the step
      s->step(1);
      const FreeMotion m = FreeMotion::unpack(s->body_motion().data());
      std::array<double, 3> total{};
      // C = 1, rho_f = 1: the disk's area and a 2-cell layer on its samples' circumference.
      const BodySamples bs = sample_body(c.bodies[0], 2, c.ib);
      const double virtual_mass = bs.volume + kDraggedLayer * bs.weight * double(bs.offsets.size());
      for (std::size_t d = 0; d < 2; ++d)
        total[d] = fluid[d] - m.inner[d] + mass * m.velocity[d] + virtual_mass * m.acceleration[d];
      if (t == 0) first = total;
      for (std::size_t d = 0; d < 2; ++d)
        EXPECT_NEAR(total[d], first[d], 1e-11) << "rho " << rho << " t " << t;
      moved = std::hypot(m.centre[0] - 17.3, m.centre[1] - 15.8);
    }
    const auto loads = s->body_loads();
    EXPECT_GT(moved, 0.1) << rho;  // it moved, and slowed down in the fluid
    EXPECT_LT(std::hypot(loads[0].velocity[0], loads[0].velocity[1]), std::hypot(0.02, 0.01))
        << rho;
    EXPECT_EQ(loads[0].centre[0], FreeMotion::unpack(s->body_motion().data()).centre[0]);
  }
}

TEST(FreeBodies, StopsAtPeriodicFaces) {
  // The bodies' node box does not wrap across periodic faces: a free body that reaches them
  // stops the run with an error naming it instead of losing its samples there.
  auto c = free_disk(1.5, {0.04, 0, 0});
  c.bodies[0].position = {34.6, 15.8, 0.5};
  c.bodies[0].angular_velocity = {0, 0, 0};
  auto s = make_solver(c);
  try {
    s->step(300);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"disk\" reached the periodic faces across x"),
              std::string::npos)
        << e.what();
  }
}

TEST(FreeBodies, NeutralBodyAtRestStaysAtRest) {
  auto c = free_disk(1.0, {0, 0, 0});
  c.bodies[0].angular_velocity = {0, 0, 0};
  c.ib.gravity = {0, -1e-4, 0};  // no buoyant weight: rho_body = rho_fluid
  auto s = make_solver(c);
  s->step(100);
  const FreeMotion m = FreeMotion::unpack(s->body_motion().data());
  EXPECT_LT(std::hypot(m.velocity[0], m.velocity[1]), 1e-12);
  EXPECT_NEAR(m.centre[0], 17.3, 1e-10);
}

TEST(FreeBodies, SettlesOntoTheWallWhereContactHoldsItsWeight) {
  // A heavy disk falls onto the bottom wall of a closed box and comes to rest where the contact
  // force (stiffness x buoyant weight x (1 - h / range)^2) equals its buoyant weight:
  // h = range (1 - 1 / sqrt(stiffness)) = 0.9 cells by default.
  auto c = free_disk(2.0, {0, 0, 0});
  c.bodies[0].angular_velocity = {0, 0, 0};
  c.bodies[0].position = {20.0, 12.0, 0.5};
  for (std::size_t f = 0; f < 4; ++f) c.faces[f].type = FaceType::Wall;
  c.ib.gravity = {0, -2e-4, 0};
  auto s = make_solver(c);
  s->step(5000);
  const FreeMotion m = FreeMotion::unpack(s->body_motion().data());
  const double gap = m.centre[1] - 5.0;
  EXPECT_NEAR(gap, 0.9, 0.02);
  EXPECT_LT(std::fabs(m.velocity[1]), 1e-5);
  EXPECT_NEAR(m.centre[0], 20.0, 1e-3);  // straight down (the samples are not quite symmetric)
  RecordProperty("gap", std::to_string(gap));
}

TEST(FreeBodies, ContactForceAndReach) {
  Body b;
  b.shape = Body::Shape::Box, b.size = {4, 2, 6}, b.free = true, b.density = 2.0;
  const std::array<double, 9> id{1, 0, 0, 0, 1, 0, 0, 0, 1};
  EXPECT_DOUBLE_EQ(reach(b, 3, id, {0, -1, 0}), 1.0);
  EXPECT_NEAR(reach(b, 3, axis_rotation({0, 0, 1}, std::numbers::pi / 2), {0, 1, 0}), 2.0, 1e-12);
  b.shape = Body::Shape::Cylinder, b.radius = 2, b.length = 10, b.axis = 2;
  EXPECT_NEAR(reach(b, 3, id, {0, 0, 1}), 5.0, 1e-12);
  EXPECT_NEAR(reach(b, 3, id, {1, 0, 0}), 2.0, 1e-12);
  MotionSetting s;
  s.gravity = {0, 0, -1e-3}, s.domain = {20, 20, 40},
  s.walls = {false, false, false, false, true, true};
  FreeMotion m;
  m.centre = {10, 10, 5.5};  // 0.5 cells above the bottom wall: (1 - 0.5)^2 = 1/4
  const double volume = std::numbers::pi * 4 * 10;
  const auto f = contact_force(b, m, volume, s);
  EXPECT_NEAR(f[2], 100.0 * (2.0 - 1.0) * volume * 1e-3 * 0.25, 1e-12);
  EXPECT_EQ(f[0], 0.0);
  m.centre[2] = 6.5;  // out of range
  EXPECT_EQ(contact_force(b, m, volume, s)[2], 0.0);
  // One wall face on the axis (a refined grid's bodies' box at one wall): contact there only.
  s.walls = {false, false, false, false, false, true};
  m.centre[2] = 5.5;  // near the bottom face, which is no wall now
  EXPECT_EQ(contact_force(b, m, volume, s)[2], 0.0);
  m.centre[2] = 40.0 - 5.5;  // as near the top wall: pushed down
  EXPECT_NEAR(contact_force(b, m, volume, s)[2], -100.0 * (2.0 - 1.0) * volume * 1e-3 * 0.25,
              1e-12);
  // A rank's piece: the walls are the whole domain's faces, not its own (a cut side is open).
  SolverConfig piece;
  piece.lattice = LatticeKind::D3Q19;
  for (FaceBC& face : piece.faces) face.type = FaceType::Outflow;
  piece.part.global = {20, 20, 40};
  piece.part.faces = {FaceType::Periodic, FaceType::Periodic, FaceType::Periodic,
                      FaceType::Periodic, FaceType::Wall,     FaceType::MovingWall};
  EXPECT_EQ(MotionSetting::of(piece, 3).walls,
            (std::array<bool, 6>{false, false, false, false, true, true}));
}

TEST(FreeBodies, InnerFractionCoversTheBodyVolume) {
  // The covered fractions of the cells add up to the body's volume (Kempe & Froehlich).
  for (const auto kind : {ShapeDistance::Sphere, ShapeDistance::Box, ShapeDistance::Torus}) {
    InnerMomentum<3, double> k{};
    k.shape.kind = kind, k.shape.a = 6.3, k.shape.b = 2.2, k.shape.c = 3.1, k.shape.axis = 1;
    for (int i = 0; i < 9; ++i) k.turn[i] = i % 4 == 0 ? 1.0 : 0.0;
    for (int d = 0; d < 3; ++d) k.centre[d] = 12.27 + 0.1 * d;
    double v = 0;
    for (int z = 0; z < 26; ++z)
      for (int y = 0; y < 26; ++y)
        for (int x = 0; x < 26; ++x) v += k.covered({x + 0.5, y + 0.5, z + 0.5});
    const double pi = std::numbers::pi;
    const double exact = kind == ShapeDistance::Sphere ? 4.0 / 3.0 * pi * 6.3 * 6.3 * 6.3
                         : kind == ShapeDistance::Box  ? 8.0 * 6.3 * 2.2 * 3.1
                                                       : 2.0 * pi * pi * 6.3 * 2.2 * 2.2;
    EXPECT_NEAR(v, exact, 0.002 * exact) << int(kind);
  }
}

TEST(FreeBodies, DeckRulesAndCheckpointPacking) {
  const std::string base = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 32
ny = 32
[physics]
tau = 0.8
[[body]]
type = "cylinder"
radius = 4
position = [16, 16]
)";
  EXPECT_NE(test::deck_error(base + "free = true\n", "f.toml", {}).find("density"),
            std::string::npos);
  EXPECT_NE(test::deck_error(base + "density = 1.2\n", "f.toml", {}).find("free = true"),
            std::string::npos);
  EXPECT_NE(
      test::deck_error(base + "free = true\ndensity = 1.2\namplitude = [1, 0]\nfrequency = 0.01\n",
                       "f.toml", {})
          .find("no prescribed oscillation"),
      std::string::npos);
  EXPECT_NE(test::deck_error(base + "[ib]\ngravity = [0, -1e-5]\n", "f.toml", {})
                .find("free bodies only"),
            std::string::npos);
  EXPECT_EQ(test::deck_error(base + "free = true\ndensity = 1.2\n[ib]\ngravity = [0, -1e-5]\n",
                             "f.toml", {}),
            "no error");
  EXPECT_NE(test::deck_error(base + "free = true\ndensity = 1.2\n[ib]\ncontact_stiffness = 0.5\n",
                             "f.toml", {})
                .find("sink into the wall"),
            std::string::npos);
  FreeMotion m;
  m.centre = {1.5, 2.25, 0.1}, m.velocity = {1e-3, -2e-17, 3}, m.rotation[1] = 0.1;
  m.inner = {1, 2, 3, 4, 5, 6}, m.forcing = {-1, -2, -3, std::numbers::pi, 0, 1e-300},
  m.started = true;
  std::vector<double> packed;
  m.pack(packed);
  ASSERT_EQ(packed.size(), FreeMotion::kValues);
  const FreeMotion back = FreeMotion::unpack(packed.data());
  EXPECT_EQ(back.centre, m.centre);
  EXPECT_EQ(back.velocity, m.velocity);
  EXPECT_EQ(back.rotation, m.rotation);
  EXPECT_EQ(back.inner, m.inner);
  EXPECT_EQ(back.forcing, m.forcing);
  EXPECT_TRUE(back.started);
}

/// Runs `deck` (run.name `name`) into a fresh directory, then again from its checkpoint at
/// `step`; expects both to succeed and the restart to say so. Returns bodies.csv of the first
/// run and of the restarted one; `dir` and `opts` stay set for further runs.
struct RestartedRun {
  test::ScratchDir scratch;
  std::string dir = scratch.dir().string();
  RunOptions opts;
  std::string whole, again;
  Case c;
  RestartedRun(const std::string& deck, const std::string& name, std::int64_t step) {
    c = parse_deck(deck, name + ".toml", {"run.output_dir=\"" + dir + "\""});
    std::ostringstream log;
    opts.deck_text = deck;
    EXPECT_EQ(run_case(c, log, opts).exit_code, 0) << log.str();
    whole = test::slurp(dir + "/bodies.csv");
    opts.restart = checkpoint_path(dir, name, step);
    EXPECT_EQ(run_case(c, log, opts).exit_code, 0) << log.str();
    EXPECT_NE(log.str().find("restarted from"), std::string::npos) << log.str();
    again = test::slurp(dir + "/bodies.csv");
  }
};

TEST(FreeBodies, RestartContinuesTheMotion) {
  // A disk falling in a channel, run to step 60 with a checkpoint at 30, then again from that
  // checkpoint: the same loads, centres and velocities in bodies.csv.
  const std::string deck = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 40
ny = 48
[physics]
tau = 0.8
[boundary]
y_min = "wall"
y_max = "wall"
[[body]]
name = "disk"
type = "cylinder"
radius = 4
position = [20.3, 30.1]
free = true
density = 1.5
[ib]
gravity = [0, -1e-5]
[run]
name = "fall"
steps = 60
output_every = 0
checkpoint_every = 30
)";
  const RestartedRun r(deck, "fall", 30);
  EXPECT_EQ(r.again, r.whole);
  EXPECT_NE(r.whole.find("vx,vy,vz,wx,wy,wz"), std::string::npos);
}

// A restart of the implicit forcing's run continues its warm start from the checkpoint's forces:
// the same loads in bodies.csv as the run that went through.
TEST(ImplicitForcing, RestartContinuesTheWarmStart) {
  if (!CouplingSystem::built()) GTEST_SKIP() << "this build has no Kokkos Kernels";
  const std::string deck = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 40
ny = 30
[physics]
tau = 0.7
[boundary]
x_min = { type = "velocity_inlet", velocity = [0.03, 0.0] }
x_max = "pressure_outlet"
[[body]]
name = "disk"
type = "cylinder"
radius = 4
position = [14.3, 15.1]
[ib]
forcing = "implicit"
[run]
name = "warm"
steps = 40
output_every = 0
checkpoint_every = 20
)";
  RestartedRun r(deck, "warm", 20);
  EXPECT_TRUE(std::filesystem::exists(r.opts.restart + "/ib_forces.h5"));
  EXPECT_EQ(r.again, r.whole);

  // [ib] keys may change on a restart: forces that no longer fit start the first solve cold
  // (a note in the log), and a run that does not start warm writes none.
  Case cold = r.c;
  cold.solver.ib.warm_start = false;
  std::ostringstream note;
  ASSERT_EQ(run_case(cold, note, r.opts).exit_code, 0) << note.str();
  EXPECT_NE(note.str().find("so the first solve starts cold"), std::string::npos) << note.str();
  const test::ScratchDir other;
  cold.run.output_dir = other.dir().string();
  RunOptions fresh;
  fresh.deck_text = deck;
  ASSERT_EQ(run_case(cold, note, fresh).exit_code, 0) << note.str();
  const std::string written = checkpoint_path(other.dir().string(), "warm", 20);
  EXPECT_TRUE(std::filesystem::exists(written + "/manifest.toml"));
  EXPECT_FALSE(std::filesystem::exists(written + "/ib_forces.h5"));
}

TEST(Immersed, RefusesTheRecursiveOperatorInTheMomentRepresentation) {
  auto c = stream_past(LatticeKind::D2Q9, 0.04);
  c.streaming = Streaming::Moments;
  c.collision = CollisionKind::RecursiveRegularized;
  try {
    make_solver(c);
    ADD_FAILURE() << "bodies with the recursive operator's moment representation were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("collision = \"regularized\""), std::string::npos)
        << e.what();
  }
  c.collision = CollisionKind::Regularized;
  EXPECT_NO_THROW(make_solver(c));
}

TEST(Immersed, DeckReadsBodiesAndReportsBadKeys) {
  const std::string deck = R"(
[model]
lattice = "D3Q27"
collision = "acm"
[domain]
nx = 40
ny = 30
nz = 30
[physics]
tau = 0.6
velocity = 0.05
[[body]]
name = "ball"
type = "sphere"
radius = 5.0
position = [10.0, 15.0, 15.0]
velocity = [0.01, 0.0, 0.0]
spacing = 0.25
retraction = 0.45
[[body]]
type = "torus"
radius = 6.0
minor_radius = 2.0
position = [25.0, 15.0, 15.0]
angular_velocity = [0.0, 0.0, 0.002]
[ib]
spreading = "gather"
iterations = 2
loads_every = 10
retraction = 0.25
)";
  const Case c = parse_deck(deck, "ib.toml");
  ASSERT_EQ(c.solver.bodies.size(), 2u);
  EXPECT_EQ(c.solver.bodies[0].name, "ball");
  EXPECT_EQ(c.solver.bodies[1].name, "body1");
  EXPECT_EQ(c.solver.bodies[1].shape, Body::Shape::Torus);
  EXPECT_DOUBLE_EQ(c.solver.bodies[0].spacing, 0.25);
  EXPECT_EQ(c.solver.ib.spreading, ImmersedSettings::Spreading::Gather);
  EXPECT_EQ(c.solver.ib.iterations, 2);
  EXPECT_EQ(c.solver.ib.loads_every, 10);
  EXPECT_DOUBLE_EQ(c.solver.ib.retraction, 0.25);
  EXPECT_EQ(c.solver.bodies[0].retraction, 0.45) << "the body's own";
  EXPECT_FALSE(c.solver.bodies[1].retraction.has_value());
  EXPECT_DOUBLE_EQ(retraction_of(c.solver.bodies[0], c.solver.ib), 0.45);
  EXPECT_DOUBLE_EQ(retraction_of(c.solver.bodies[1], c.solver.ib), 0.25) << "[ib]'s";
  EXPECT_FALSE(c.solver.ib.timing) << "timed only on request";
  EXPECT_DOUBLE_EQ(c.solver.acm_velocity, 0.05);
  auto message = [&](const std::string& from, const std::string& to) {
    return deck_error(deck, from, to, "ib.toml");
  };
  EXPECT_NE(message("radius = 5.0", "radius = -5.0").find("body[0].radius"), std::string::npos);
  EXPECT_NE(message("type = \"sphere\"", "type = \"cone\"").find("body[0].type"), std::string::npos);
  EXPECT_NE(message("minor_radius = 2.0", "minor_radius = 7.0").find("minor_radius"), std::string::npos);
  EXPECT_NE(message("spacing = 0.25", "spacing = 3.0").find("spacing"), std::string::npos);
  EXPECT_NE(message("iterations = 2", "iterations = 0").find("ib.iterations"), std::string::npos);
  EXPECT_NE(message("retraction = 0.25", "retraction = -0.1").find("ib.retraction"),
            std::string::npos);
  EXPECT_NE(message("retraction = 0.25", "retraction = nan").find("ib.retraction"),
            std::string::npos);
  EXPECT_NE(message("retraction = 0.45", "retraction = 2.5").find("body[0].retraction"),
            std::string::npos);
  EXPECT_NE(message("retraction = 0.45", "retraction = -1").find("body[0].retraction"),
            std::string::npos);
  EXPECT_NE(message("[ib]", "[ib]\nblcok = 3").find("unknown key"), std::string::npos);
  EXPECT_NE(message("[ib]", "[ib]\ntiming = 1").find("ib.timing"), std::string::npos)
      << "a boolean";
  {
    std::string d = deck;
    d.replace(d.find("[ib]"), 4, "[ib]\ntiming = true");
    EXPECT_TRUE(parse_deck(d, "ib.toml").solver.ib.timing);
  }
  EXPECT_NE(message("type = \"sphere\"", "type = \"mesh\"\nfile = \"missing.stl\"").find("cannot open"), std::string::npos);
  // Prescribed oscillation: degrees in the deck, radians in the body; a frequency it needs.
  {
    std::string d = deck;
    d.replace(d.find("velocity = [0.01, 0.0, 0.0]"), 27,
              "amplitude = [2.0, 0.0, 1.0]\nangular_amplitude = [0.0, 90.0, 0.0]\nfrequency = "
              "0.005\nphase = 180.0");
    const Body b = parse_deck(d, "ib.toml").solver.bodies[0];
    EXPECT_EQ(b.amplitude, (std::array<double, 3>{2.0, 0.0, 1.0}));
    EXPECT_NEAR(b.angular_amplitude[1], std::numbers::pi / 2, 1e-15);
    EXPECT_DOUBLE_EQ(b.frequency, 0.005);
    EXPECT_NEAR(b.phase, std::numbers::pi, 1e-15);
  }
  EXPECT_NE(message("velocity = [0.01, 0.0, 0.0]", "amplitude = [2.0, 0.0, 0.0]")
                .find("body[0].frequency"),
            std::string::npos);
  EXPECT_NE(message("velocity = [0.01, 0.0, 0.0]", "amplitude = [2.0, 0.0, 0.0]\nfrequency = 0.7")
                .find("body[0].frequency"),
            std::string::npos);
  EXPECT_NE(message("angular_velocity = [0.0, 0.0, 0.002]",
                    "angular_velocity = [0.0, 0.0, 0.002]\nangular_amplitude = [0.0, 0.0, "
                    "10.0]\nfrequency = 0.01")
                .find("body[1].angular_amplitude"),
            std::string::npos);
}

}  // namespace
