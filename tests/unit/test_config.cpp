// SPDX-License-Identifier: Apache-2.0
// The configuration layer: every enum's names come from one table (each value named once, names
// parse back), and every rule on combinations of values is reported through broken_rule, by the
// deck at its key's line and by make_solver with the same message.
#include <kolibri/config/Memory.hpp>
#include <kolibri/config/Rules.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/run/Bench.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

template <class E>
void expect_one_name_per_value() {
  std::set<std::string> seen;
  for (const auto& n : NameTable<E>::entries) {
    EXPECT_TRUE(seen.insert(n.name).second) << "name '" << n.name << "' twice";
    const auto back = parse_name<E>(n.name);
    ASSERT_TRUE(back.has_value()) << n.name;
    EXPECT_TRUE(*back == n.value) << n.name;
    EXPECT_STREQ(name_of(n.value), n.name);
  }
  EXPECT_EQ(names_of<E>().size(), NameTable<E>::entries.size());
  EXPECT_FALSE(parse_name<E>("no-such-name").has_value());
}

TEST(Names, EveryTableNamesEachValueOnceAndParsesBack) {
  expect_one_name_per_value<LatticeKind>();
  expect_one_name_per_value<CollisionKind>();
  expect_one_name_per_value<Precision>();
  expect_one_name_per_value<Streaming>();
  expect_one_name_per_value<StorageKind>();
  expect_one_name_per_value<FaceType>();
  expect_one_name_per_value<ImmersedSettings::Spreading>();
  expect_one_name_per_value<PrecisionChoice>();
  expect_one_name_per_value<KbcShear>();
  expect_one_name_per_value<InitialCondition::Kind>();
  // Every enumerator is in its table (the enums are dense from 0).
  EXPECT_EQ(NameTable<CollisionKind>::entries.size(), std::size_t(CollisionKind::Kbc) + 1);
  EXPECT_EQ(NameTable<InitialCondition::Kind>::entries.size(),
            std::size_t(InitialCondition::Kind::File) + 1);
  EXPECT_EQ(NameTable<FaceType>::entries.size(), std::size_t(FaceType::Outflow) + 1);
  EXPECT_EQ(NameTable<Streaming>::entries.size(), std::size_t(Streaming::Moments) + 1);
}

SolverConfig valid() {
  SolverConfig c;
  c.lattice = LatticeKind::D3Q19;
  c.nx = c.ny = c.nz = 4;
  return c;
}

std::string make_solver_error(const SolverConfig& c) {
  try {
    make_solver(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Rules, EachBreachNamesItsKeyAndMakeSolverReportsTheSame) {
  EXPECT_FALSE(broken_rule(valid()).has_value());
  struct Case {
    const char* key;
    void (*breach)(SolverConfig&);
  };
  const Case cases[] = {
      {"model.collision", [](SolverConfig& c) { c.collision = CollisionKind::Mrt; }},
      {"model.storage", [](SolverConfig& c) { c.storage = StorageKind::FP16; }},
      {"model.streaming", [](SolverConfig& c) { c.streaming = Streaming::Moments; }},
      {"model.layout",
       [](SolverConfig& c) {
         c.streaming = Streaming::Moments, c.collision = CollisionKind::Regularized,
         c.csoa_alpha = 32;
       }},
      {"model.csoa_alpha", [](SolverConfig& c) { c.csoa_alpha = 48; }},
      {"model.collision_kernels", [](SolverConfig& c) { c.collision_kernels = 3; }},
      {"model.boundary_kernels",
       [](SolverConfig& c) { c.streaming = Streaming::InPlace, c.face_kernels = true; }},
      {"model.moment_arrays", [](SolverConfig& c) { c.moment_arrays = 0; }},
      {"model.collision",
       [](SolverConfig& c) {
         c.streaming = Streaming::Moments, c.collision = CollisionKind::RecursiveRegularized;
         c.bodies.resize(1);  // bodies in the moment representation need the projective operator
       }},
      {"model.acm_velocity",
       [](SolverConfig& c) {
         c.lattice = LatticeKind::D3Q27, c.collision = CollisionKind::AdaptiveCentralMoment;
       }},
      {"domain.ny", [](SolverConfig& c) { c.ny = 0; }},
      {"domain.nz", [](SolverConfig& c) { c.lattice = LatticeKind::D2Q9; }},
      {"boundary.x_max", [](SolverConfig& c) { c.faces[1].type = FaceType::Wall; }},
      {"physics.tau", [](SolverConfig& c) { c.tau = 0.5; }},
  };
  for (const auto& k : cases) {
    SolverConfig c = valid();
    k.breach(c);
    const auto b = broken_rule(c);
    ASSERT_TRUE(b.has_value()) << k.key;
    EXPECT_EQ(b->section + "." + b->key, k.key);
    EXPECT_EQ(make_solver_error(c), "make_solver: " + b->what()) << k.key;
  }
}

/// The deck's error message, or "no error".
std::string deck_error(const std::string& text) { return test::deck_error(text, "case.toml"); }

TEST(Rules, TheDeckReportsABreachAtTheLineOfItsKey) {
  const std::string msg = deck_error(
      "[model]\nlattice = \"D3Q19\"\nstorage = \"fp16\"\n[domain]\nnx = 4\nny = 4\nnz = 4\n"
      "[physics]\nviscosity = 0.1\n");
  EXPECT_NE(msg.find("case.toml:3: key 'model.storage': fp16 storage needs precision = \"fp32\""),
            std::string::npos)
      << msg;
}

TEST(Rules, ATauOfOneHalfOrLessIsRefusedAsSuchNotAsTooCloseToOneHalf) {
  const std::string msg =
      deck_error("[model]\nlattice = \"D2Q9\"\n[domain]\nnx = 4\nny = 4\n[physics]\ntau = 0.4\n");
  EXPECT_NE(msg.find("case.toml:7: key 'physics.tau'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tau must be > 0.5"), std::string::npos) << msg;
}

}  // namespace

namespace {
// kolibri check's memory estimate is what the solver allocates for its state (two arrays, in
// place, two moment arrays; with and without walls).
TEST(Memory, TheEstimateIsWhatTheSolverHolds) {
  using namespace kolibri;
  for (const auto s : {Streaming::TwoArray, Streaming::InPlace, Streaming::Moments})
    for (const bool walls : {false, true}) {
      SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 12, 10, 8, 0.8);
      c.collision = CollisionKind::Regularized;
      c.precision = Precision::FP32;
      c.streaming = s;
      if (walls) c.faces[2].type = c.faces[3].type = FaceType::Wall;
      EXPECT_DOUBLE_EQ(device_bytes_per_cell(c), make_solver(c)->bytes_per_cell())
          << to_string(s) << (walls ? " with walls" : "");
    }
}
}  // namespace
