// SPDX-License-Identifier: Apache-2.0
// Input decks: good decks parse to the expected case; every class of mistake gives an error that
// names the file, the key and what was expected.
#include <kolibri/io/Deck.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include "TestFiles.hpp"

namespace {
using namespace kolibri;

const std::string base = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 32
ny = 16
[physics]
reynolds = 100.0
[boundary]
x_min = "wall"
x_max = "wall"
y_min = "wall"
y_max = { type = "moving_wall", velocity = [0.1, 0.0] }
[run]
steps = 10
)";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return test::deck_error(text, "case.toml", overrides);
}

TEST(Deck, ParsesAndDerivesTau) {
  const Case c = parse_deck(base, "case.toml");
  EXPECT_EQ(c.solver.lattice, LatticeKind::D2Q9);
  EXPECT_EQ(c.solver.nx, 32);
  EXPECT_EQ(c.solver.faces[3].type, FaceType::MovingWall);
  EXPECT_DOUBLE_EQ(c.solver.faces[3].velocity[0], 0.1);
  // Re = U L / nu with L = ny = 16 by default: nu = 0.016, tau = 3 nu + 1/2
  EXPECT_NEAR(c.solver.tau, 0.5 + 3 * 0.1 * 16 / 100.0, 1e-15);
  EXPECT_EQ(c.run.name, "case");
  EXPECT_EQ(c.run.output_dir, "output/case");
}

// Issue 18: a pressure face's rule, `auto` resolved by the scheme (resolve_pressure_rules).
TEST(Deck, PressureRuleAutoTakesTheDevelopedRuleInEveryScheme) {
  const std::vector<std::string> open = {"boundary.x_min=\"pressure_inlet\"",
                                         "boundary.x_max=\"pressure_outlet\""};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), open.begin(), open.end());
    SolverConfig c = parse_deck(base, "case.toml", more).solver;
    resolve_pressure_rules(c);  // as make_solver does (after layout = "auto" chose the grid)
    return c.faces;
  };
  EXPECT_EQ(parse_deck(base, "case.toml", open).solver.faces[1].pressure_rule, PressureRule::Auto);
  EXPECT_EQ(with({})[0].pressure_rule, PressureRule::Developed);
  EXPECT_EQ(with({"model.streaming=\"in_place\""})[1].pressure_rule, PressureRule::Developed);
  EXPECT_EQ(
      with({"model.streaming=\"moments\"", "model.collision=\"regularized\""})[1].pressure_rule,
      PressureRule::Developed);
  EXPECT_EQ(
      with({"refinement.levels=2", "refinement.region=[{level=1, min=[8,4], max=[16,12]}]"})[1]
          .pressure_rule,
      PressureRule::Developed);  // refined grids too (the anti-bounce-back before 2026-12-04)
  const auto kept =
      with({"boundary.x_max={type=\"pressure_outlet\", "
            "pressure_rule=\"anti_bounce_back\"}"});
  EXPECT_EQ(kept[1].pressure_rule, PressureRule::AntiBounceBack);
  EXPECT_TRUE(kept[0].from_layer());
  EXPECT_FALSE(kept[1].from_layer());
  EXPECT_FALSE(with({})[2].from_layer());  // a wall
}

TEST(Deck, OverridesReplaceAndAddKeys) {
  const Case c = parse_deck(base, "case.toml",
                            {"run.steps=42", "model.precision=fp32", "domain.nx=64", "physics.length=32",
                             "model.streaming=in_place"});
  EXPECT_EQ(c.solver.streaming, Streaming::InPlace);
  EXPECT_EQ(c.run.steps, 42);
  EXPECT_EQ(c.solver.precision, Precision::FP32);
  EXPECT_EQ(c.solver.nx, 64);
  EXPECT_NEAR(c.solver.tau, 0.5 + 3 * 0.1 * 32 / 100.0, 1e-15);
}

struct BadCase {
  const char* what;
  std::vector<std::string> overrides;
  std::vector<std::string> expect;  // substrings of the message
};

void PrintTo(const BadCase& b, std::ostream* os) { *os << b.what; }

class BadDeck : public ::testing::TestWithParam<BadCase> {};
TEST_P(BadDeck, GivesAClearError) {
  const auto& b = GetParam();
  const std::string msg = error_of(base, b.overrides);
  EXPECT_NE(msg.find("case.toml"), std::string::npos) << msg;
  for (const auto& e : b.expect) EXPECT_NE(msg.find(e), std::string::npos) << "want '" << e << "' in: " << msg;
}
INSTANTIATE_TEST_SUITE_P(
    Mistakes, BadDeck,
    ::testing::Values(
        BadCase{
            "unknown_key", {"physics.reynols=5"}, {"physics.reynols", "unknown key", "reynolds"}},
        BadCase{"unknown_section", {"solver.x=1"}, {"'solver'", "unknown key"}},
        BadCase{"wrong_type",
                {"domain.nx=\"128\""},
                {"domain.nx", "expected an integer, got a string"}},
        BadCase{"float_for_int", {"domain.nx=12.5"}, {"domain.nx", "expected an integer"}},
        BadCase{"out_of_range", {"domain.ny=0"}, {"domain.ny", "out of range"}},
        BadCase{"bad_choice",
                {"model.lattice=D3Q15"},
                {"model.lattice", "'D3Q15' is not one of", "D3Q19"}},
        BadCase{
            "tau_near_half", {"physics.reynolds=100000"}, {"physics.reynolds", "too close to 1/2"}},
        BadCase{"tau_below_half", {"physics.reynolds=-1"}, {"physics.reynolds", "positive"}},
        BadCase{
            "two_viscosities", {"physics.tau=0.6"}, {"exactly one of tau, viscosity or reynolds"}},
        BadCase{"mach",
                {"boundary.y_max={type=\"moving_wall\", velocity=[0.4, 0.0]}"},
                {"Mach", "0.5"}},
        BadCase{"wall_without_velocity",
                {"boundary.y_max=\"moving_wall\""},
                {"boundary.y_max", "needs a velocity"}},
        BadCase{
            "unpaired_periodic", {"boundary.x_min=\"periodic\""}, {"periodic faces come in pairs"}},
        BadCase{"bad_face_type",
                {"boundary.x_min=\"slip\""},
                {"boundary.x_min", "'slip' is not one of"}},
        BadCase{"nz_in_2d", {"domain.nz=4"}, {"domain.nz", "must be 1"}},
        BadCase{"vector_length",
                {"physics.force=[1.0]"},
                {"physics.force", "expected an array of 2 numbers"}},
        BadCase{"bad_override", {"nonsense"}, {"expected key=value"}},
        BadCase{"z_component_in_2d",
                {"physics.force=[1e-5, 0.0, 1e-4]"},
                {"physics.force", "third component must be 0"}},
        BadCase{"nz_missing_in_3d", {"model.lattice=D3Q19"}, {"domain.nz", "missing"}},
        BadCase{"too_many_cells",
                {"model.lattice=D3Q19", "domain.nx=2048", "domain.ny=2048", "domain.nz=2048"},
                {"domain.nx", "at most 2^32"}},
        BadCase{"fp16_density",
                {"model.precision=fp32", "model.storage=fp16", "initial.density=2.0"},
                {"initial.density", "within 1 +- 0.2"}},
        BadCase{"fp16_needs_fp32", {"model.storage=fp16"}, {"model.storage", "fp32"}},
        BadCase{"name_with_slash", {"run.name=\"a/b\""}, {"run.name", "file name"}},
        BadCase{
            "magic_without_trt", {"model.trt_magic=0.25"}, {"model.trt_magic", "only collision"}},
        // Issue 20: the KBC operator is defined on the tensor lattices; its one key is its own.
        BadCase{"kbc_shear_without_kbc",
                {"model.kbc_shear=\"with_trace\""},
                {"model.kbc_shear", "only collision = \"kbc\""}},
        BadCase{"kbc_unknown_shear",
                {"model.collision=\"kbc\"", "model.kbc_shear=\"full\""},
                {"model.kbc_shear", "'full' is not one of", "deviatoric", "with_trace"}},
        BadCase{"kbc_on_d3q19",
                {"model.collision=\"kbc\"", "model.lattice=D3Q19", "domain.nz=8",
                 "boundary.y_max={type=\"moving_wall\", velocity=[0.1, 0.0, 0.0]}"},
                {"model.collision", "\"kbc\" (entropic) need", "D3Q19"}},
        BadCase{"density_on_wall",
                {"boundary.x_min={type=\"wall\", density=1.0}"},
                {"boundary.x_min.density", "only"}},
        BadCase{"mach_names_source",
                {"physics.reynolds=1000",
                 "boundary.y_max={type=\"moving_wall\", velocity=[0.35, 0.0]}"},
                {"boundary.y_max.velocity", "Mach"}},
        // Issue 22: NaN in a vector passes no longer; --set values are blamed on the --set
        // argument; a negative velocity scale is blamed on physics.velocity.
        BadCase{"nan_force",
                {"physics.force=[nan, 0.0]"},
                {"--set 'physics.force=[nan, 0.0]'", "physics.force", "not a finite number"}},
        BadCase{"nan_initial_velocity",
                {"initial.velocity=[0.0, nan]"},
                {"initial.velocity", "element 1 is not a finite"}},
        BadCase{"inf_wall_velocity",
                {"boundary.y_max={type=\"moving_wall\", velocity=[inf, 0.0]}"},
                {"boundary.y_max.velocity", "not a finite number (inf)"}},
        BadCase{"negative_velocity_scale",
                {"physics.velocity=-0.05"},
                {"--set 'physics.velocity=-0.05'", "physics.velocity", "positive velocity scale",
                 "-0.05"}},
        // Issue 18: inlet profiles and velocities in time.
        BadCase{"profile_on_a_wall",
                {"boundary.y_min={type=\"wall\", profile=\"parabolic\"}"},
                {"boundary.y_min.profile", "only velocity_inlet"}},
        BadCase{"parabolic_without_walls_across",
                {"boundary.x_min={type=\"velocity_inlet\", velocity=[0.05, 0.0], "
                 "profile=\"parabolic\"}",
                 "boundary.x_max=\"pressure_outlet\"", "boundary.y_min=\"periodic\"",
                 "boundary.y_max=\"periodic\""},
                {"boundary.x_min", "parabolic profile needs walls", "y faces are periodic"}},
        BadCase{
            "pipe_in_2d",
            {"boundary.x_min={type=\"velocity_inlet\", velocity=[0.05, 0.0], profile=\"pipe\"}"},
            {"boundary.x_min", "pipe profile needs a 3D deck"}},
        BadCase{
            "unknown_profile",
            {"boundary.x_min={type=\"velocity_inlet\", velocity=[0.05, 0.0], profile=\"plug\"}"},
            {"boundary.x_min.profile", "'plug' is not one of", "parabolic"}},
        BadCase{"amplitude_without_period",
                {"boundary.y_max={type=\"moving_wall\", velocity=[0.1, 0.0], amplitude=0.5}"},
                {"boundary.y_max.amplitude", "needs period"}},
        BadCase{"non_positive_period",
                {"boundary.y_max={type=\"moving_wall\", velocity=[0.1, 0.0], period=0}"},
                {"boundary.y_max.period", "positive period"}},
        BadCase{"negative_ramp",
                {"boundary.y_max={type=\"moving_wall\", velocity=[0.1, 0.0], ramp_steps=-5}"},
                {"boundary.y_max.ramp_steps", "out of range"}},
        BadCase{"ramp_on_a_wall",
                {"boundary.y_min={type=\"wall\", ramp_steps=100}"},
                {"boundary.y_min.ramp_steps", "only moving_wall and velocity_inlet"}},
        BadCase{"mach_counts_the_peak_factor",
                {"physics.reynolds=1000",
                 "boundary.y_max={type=\"moving_wall\", velocity=[0.2, 0.0], period=100, offset=1, "
                 "amplitude=0.5}"},
                {"boundary.y_max.velocity times offset + amplitude", "Mach"}},
        // Issue 18: the pressure faces' rule.
        BadCase{"pressure_rule_on_a_wall",
                {"boundary.y_min={type=\"wall\", pressure_rule=\"developed\"}"},
                {"boundary.y_min.pressure_rule", "only pressure_outlet and pressure_inlet"}},
        BadCase{"unknown_pressure_rule",
                {"boundary.x_max={type=\"pressure_outlet\", pressure_rule=\"extrapolated\"}"},
                {"boundary.x_max.pressure_rule", "'extrapolated' is not one of", "developed",
                 "anti_bounce_back"}},
        BadCase{"negative_relaxation",
                {"boundary.x_max={type=\"pressure_outlet\", pressure_rule=\"characteristic\", "
                 "relaxation=-0.1}"},
                {"boundary.x_max.relaxation", "expected a rate a time step from 0 to 1"}},
        BadCase{"relaxation_without_the_characteristic_rule",
                {"boundary.x_max={type=\"pressure_outlet\", relaxation=0.01}"},
                {"boundary.x_max.relaxation",
                 "only a pressure_outlet with pressure_rule = "
                 "\"characteristic\""}},
        BadCase{"huge_number_shown_short",
                {"physics.velocity=1e308"},
                {"physics.velocity", "1e+308", "Mach"}}),
    [](const auto& i) { return std::string(i.param.what); });

TEST(Deck, LongValuesAreCutInMessages) {
  const std::string big(100000, 'x');
  const std::string msg = error_of(base, {"model.lattice=" + big});
  EXPECT_NE(msg.find("(100000 characters)"), std::string::npos) << msg.substr(0, 300);
  EXPECT_NE(msg.find("model.lattice"), std::string::npos) << msg.substr(0, 300);
  EXPECT_LT(msg.size(), 600u);
  const std::string num = error_of(base, {"physics.velocity=-1e308"});
  EXPECT_LT(num.size(), 400u) << num;
}

TEST(Deck, ErrorsInTheDeckStillNameTheLine) {  // (and not --set)
  const std::string msg = error_of(base +
                                   "[[body]]\nname = \"b\"\ntype = \"cylinder\"\nradius = 3.0\n"
                                   "position = [nan, 8.0]\n");
  EXPECT_NE(msg.find("case.toml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("position"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a finite number"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("--set"), std::string::npos) << msg;
}

TEST(Deck, SyntaxErrorNamesLineAndColumn) {
  const std::string msg = error_of("[domain]\nnx = 32\nny = = 4\n");
  EXPECT_NE(msg.find("case.toml:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TOML syntax error"), std::string::npos) << msg;
}

TEST(Deck, MissingFile) {
  try {
    load_deck("/nonexistent/deck.toml");
    FAIL() << "no error";
  } catch (const DeckError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/deck.toml: cannot open"), std::string::npos);
  }
}

TEST(Deck, ErrorsCarryTheLineOfTheKey) {
  const std::string msg = error_of(base + "[[probe]]\nname = \"p\"\nposition = [40, 3]\n");
  EXPECT_NE(msg.find("case.toml:18"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside the domain"), std::string::npos) << msg;
}

TEST(Deck, ShippedDecksAreValid) {
  for (const auto& e : std::filesystem::directory_iterator(KOLIBRI_SOURCE_DIR "/inputs")) {
    if (e.path().extension() != ".toml") continue;
    EXPECT_NO_THROW(load_deck(e.path().string())) << e.path();
  }
}
}  // namespace

namespace {
bool has_warning(const Case& c, const std::string& needle) {
  for (const auto& w : deck_warnings(c))
    if (w.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(Deck, WarnsAboutMovingWallsThatMoveThroughThemselves) {
  EXPECT_FALSE(has_warning(parse_deck(base, "case.toml"), "normal to the wall"));
  const Case c = parse_deck(base, "case.toml", {"boundary.y_max={type=\"moving_wall\",velocity=[0.1,0.01]}"});
  EXPECT_TRUE(has_warning(c, "boundary.y_max: the moving wall's velocity has a component normal to the wall"));
}

TEST(Deck, WarnsAboutObstaclesThatCoverNoCell) {
  const std::string inside = base + "[[obstacle]]\ntype = \"sphere\"\ncenter = [16.0, 8.0]\nradius = 3.0\n";
  EXPECT_FALSE(has_warning(parse_deck(inside, "case.toml"), "covers no cell"));
  const std::string tiny = base + "[[obstacle]]\ntype = \"sphere\"\ncenter = [16.0, 8.0]\nradius = 0.2\n";
  EXPECT_TRUE(has_warning(parse_deck(tiny, "case.toml"), "obstacle[0] covers no cell centre"));
  const std::string outside = base + "[[obstacle]]\ntype = \"box\"\nmin = [40.0, 2.0]\nmax = [50.0, 6.0]\n";
  EXPECT_TRUE(has_warning(parse_deck(outside, "case.toml"), "obstacle[0] covers no cell centre"));
}

TEST(Deck, KernelOptionsAndTheTuner) {
  const Case d = parse_deck(base, "case.toml");
  EXPECT_EQ(d.solver.csoa_alpha, -1) << "automatic: csoa_alpha_for()";
  EXPECT_EQ(csoa_alpha_for(d.solver), 32);
  EXPECT_EQ(parse_deck(base, "case.toml", {"model.layout=\"soa\""}).solver.csoa_alpha, 0);
  EXPECT_EQ(csoa_alpha_for(parse_deck(base, "case.toml", {"model.precision=\"fp32\"", "model.storage=\"fp16\""}).solver), 0)
      << "FP16 storage: SoA";
  EXPECT_FALSE(d.solver.face_kernels);
  EXPECT_EQ(d.solver.collision_kernels, 1);
  EXPECT_FALSE(d.tune.enabled);
  const Case c = parse_deck(base, "case.toml",
                            {"model.layout=\"csoa\"", "model.csoa_alpha=64", "model.boundary_kernels=\"faces\"",
                             "model.collision_kernels=2", "tune.enabled=true", "tune.steps=7", "tune.alpha=[0, 32]",
                             "tune.block=[3]", "tune.cache=\"/tmp/t.txt\""});
  EXPECT_EQ(c.solver.csoa_alpha, 64);
  EXPECT_TRUE(c.solver.face_kernels);
  EXPECT_EQ(c.solver.collision_kernels, 2);
  EXPECT_TRUE(c.tune.enabled);
  EXPECT_EQ(c.tune.steps, 7);
  EXPECT_EQ(c.tune.alpha, (std::vector<int>{0, 32}));
  EXPECT_EQ(c.tune.block, (std::vector<int>{3}));
  EXPECT_EQ(c.tune.cache, "/tmp/t.txt");
  EXPECT_EQ(parse_deck(base, "case.toml", {"model.layout=\"csoa\""}).solver.csoa_alpha, 32);  // the default group

  EXPECT_NE(error_of(base, {"model.layout=\"csoa\"", "model.csoa_alpha=48"}).find("key 'model.csoa_alpha': expected a power of two"),
            std::string::npos);
  EXPECT_NE(error_of(base, {"model.csoa_alpha=64"}).find("only layout = \"csoa\" takes this key"), std::string::npos);
  EXPECT_NE(error_of(base, {"model.layout=\"aos\""}).find("'aos' is not one of auto, soa, csoa"), std::string::npos);
  EXPECT_NE(error_of(base, {"model.collision_kernels=3"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(base, {"model.streaming=\"in_place\"", "model.boundary_kernels=\"faces\""})
                .find("key 'model.boundary_kernels': needs streaming = \"two_array\""),
            std::string::npos);
  EXPECT_NE(error_of(base, {"tune.alpha=[0, 3]"}).find("key 'tune.alpha': expected 0 (SoA) or powers of two"), std::string::npos);
  EXPECT_NE(error_of(base, {"tune.alpha=[]"}).find("expected a non-empty array"), std::string::npos);
  EXPECT_NE(error_of(base, {"tune.steps=0"}).find("key 'tune.steps'"), std::string::npos);
  const std::vector<std::string> moments = {"model.streaming=\"moments\"", "model.collision=\"regularized\""};
  auto with = [&](std::vector<std::string> v, const std::string& o) {
    v.push_back(o);
    return v;
  };
  EXPECT_NE(error_of(base, with(moments, "tune.enabled=true")).find("needs streaming = \"two_array\" or \"in_place\""),
            std::string::npos);
  EXPECT_NE(error_of(base, with(moments, "model.layout=\"csoa\"")).find("key 'model.layout': the moment representation"),
            std::string::npos);
  EXPECT_EQ(parse_deck(base, "case.toml", moments).solver.moment_arrays, 2);
  EXPECT_EQ(parse_deck(base, "case.toml", with(moments, "model.moment_arrays=1")).solver.moment_arrays, 1);
  EXPECT_NE(error_of(base, with(moments, "model.moment_arrays=3")).find("key 'model.moment_arrays'"), std::string::npos);
  EXPECT_NE(error_of(base, {"model.moment_arrays=2"}).find("key 'model.moment_arrays': needs streaming = \"moments\""),
            std::string::npos);
  EXPECT_EQ(parse_deck(base, "case.toml", moments).solver.moment_segment, 0);
  EXPECT_EQ(
      parse_deck(base, "case.toml", with(moments, "model.moment_segment=32")).solver.moment_segment,
      32);
  EXPECT_NE(
      error_of(base, with(moments, "model.moment_segment=0")).find("key 'model.moment_segment'"),
      std::string::npos);
  EXPECT_NE(error_of(base, {"model.moment_segment=64"})
                .find("key 'model.moment_segment': needs streaming = \"moments\""),
            std::string::npos);
  EXPECT_EQ(parse_deck(base, "case.toml", {"model.streaming=\"in_place\"", "model.layout=\"csoa\"", "tune.enabled=true"})
                .solver.csoa_alpha,
            32);
  EXPECT_NE(error_of(base, {"tune.speed=1"}).find("unknown key"), std::string::npos);
}

namespace {
// Obstacle names appear in obstacles.csv and summary.json: unique, default "obstacle<k>", no
// commas; the loads' cadence is a [run] key.
TEST(Deck, ObstacleNamesAndLoadsCadence) {
  const std::string two = base + R"(obstacle_loads_every = 25
[[obstacle]]
type = "cylinder"
center = [10.0, 8.0]
radius = 3.0
[[obstacle]]
name = "plate"
type = "box"
min = [20.0, 4.0]
max = [22.0, 12.0]
)";
  const Case c = parse_deck(two, "case.toml");
  EXPECT_EQ(c.run.obstacle_loads_every, 25);
  ASSERT_EQ(c.solver.obstacles.size(), 2u);
  EXPECT_EQ(obstacle_name(c.solver.obstacles, 0), "obstacle1");
  EXPECT_EQ(obstacle_name(c.solver.obstacles, 1), "plate");

  std::string dup = two;
  dup.replace(dup.find("name = \"plate\""), 14, "name = \"obstacle1\"");
  std::string msg = error_of(dup);
  EXPECT_NE(msg.find("obstacle[1].name"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'obstacle1' is taken by another obstacle"), std::string::npos) << msg;

  std::string comma = two;
  comma.replace(comma.find("name = \"plate\""), 14, "name = \"a,b\"");
  msg = error_of(comma);
  EXPECT_NE(msg.find("without commas"), std::string::npos) << msg;
  std::string longer = two;
  longer.replace(longer.find("name = \"plate\""), 14, "name = \"" + std::string(65, 'p') + "\"");
  msg = error_of(longer);
  EXPECT_NE(msg.find("1 to 64 characters"), std::string::npos) << msg;

  msg = error_of(base + "obstacle_loads_every = -1\n");
  EXPECT_NE(msg.find("run.obstacle_loads_every"), std::string::npos) << msg;
}

// Curved walls: an obstacle's wall rule, its solid side and its rotation; rotations a shape
// cannot make in place, a fast wall and the schemes without link rules are refused.
TEST(Deck, ObstacleWallsSidesAndRotation) {
  const std::string annulus = base + R"([[obstacle]]
type = "cylinder"
center = [16.0, 8.0]
radius = 3.0
wall = "interpolated"
angular_velocity = 0.01
[[obstacle]]
type = "cylinder"
center = [16.0, 8.0]
radius = 7.5
solid = "outside"
wall = "interpolated"
)";
  const Case c = parse_deck(annulus, "case.toml");
  ASSERT_EQ(c.solver.obstacles.size(), 2u);
  const Obstacle& in = c.solver.obstacles[0];
  EXPECT_EQ(in.wall, Obstacle::Wall::Interpolated);
  EXPECT_EQ(in.angular_velocity, (std::array<double, 3>{0, 0, 0.01}));
  EXPECT_FALSE(in.solid_outside);
  EXPECT_TRUE(c.solver.obstacles[1].solid_outside);
  EXPECT_TRUE(covers(c.solver.obstacles[1], 0, 0, 0));  // a corner: outside the outer cylinder
  EXPECT_FALSE(covers(c.solver.obstacles[1], 16, 8, 0));
  EXPECT_TRUE(deck_warnings(c).empty());

  std::string msg = error_of(annulus, {"obstacle[0].wall=\"curved\""});
  EXPECT_NE(msg.find("obstacle[0].wall"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bounce_back"), std::string::npos) << msg;
  msg = error_of(annulus, {"obstacle[1].solid=\"both\""});
  EXPECT_NE(msg.find("obstacle[1].solid"), std::string::npos) << msg;
  msg = error_of(annulus, {"obstacle[0].angular_velocity=0.2"});  // wall speed 0.6
  EXPECT_NE(msg.find("below 0.3"), std::string::npos) << msg;
  EXPECT_NO_THROW(parse_deck(annulus, "case.toml", {"model.streaming=\"in_place\""}));
  msg = error_of(annulus, {"model.streaming=\"moments\"", "model.collision=\"regularized\""});
  EXPECT_NE(msg.find("model.streaming"), std::string::npos) << msg;
  EXPECT_NE(msg.find("interpolated or rotating obstacle walls (obstacle[0])"), std::string::npos)
      << msg;
  const std::string box = base + R"([[obstacle]]
type = "box"
min = [10.0, 4.0]
max = [12.0, 6.0]
angular_velocity = [0.0, 0.0, 0.01]
)";
  msg = error_of(box);
  EXPECT_NE(msg.find("obstacle[0].angular_velocity"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a box cannot rotate"), std::string::npos) << msg;
}

// Issue 22: array-of-table keys can be overridden (name[i].key), and a new table appended.
TEST(Deck, SetReachesArraysOfTables) {
  const std::string deck = base + "[[probe]]\nname = \"a\"\nposition = [3, 4]\n";
  Case c = parse_deck(deck, "case.toml",
                      {"probe[0].position=[5,6]", "probe[1].name=b", "probe[1].at=[10.25,8.5]"});
  ASSERT_EQ(c.probes.size(), 2u);
  EXPECT_EQ(c.probes[0].position[0], 5);
  EXPECT_EQ(c.probes[0].position[1], 6);
  EXPECT_EQ(c.probes[1].name, "b");
  EXPECT_TRUE(c.probes[1].interpolated);
  EXPECT_DOUBLE_EQ(c.probes[1].at[0], 10.25);
  c = parse_deck(base, "case.toml", {"probe[0].position=[1,2]"});  // the first of none
  ASSERT_EQ(c.probes.size(), 1u);
  std::string msg = error_of(deck, {"probe[3].name=x"});
  EXPECT_NE(msg.find("--set 'probe[3].name=x': the deck has 1 [[probe]] tables: index 3"),
            std::string::npos)
      << msg;
  msg = error_of(deck, {"run[0].steps=3"});
  EXPECT_NE(msg.find("'run' is not an array of tables"), std::string::npos) << msg;
  msg = error_of(deck, {"probe[x].name=x"});
  EXPECT_NE(msg.find("expected name[index]"), std::string::npos) << msg;
  msg = error_of(base, {"probe[2].name=x"});  // no [[probe]] at all
  EXPECT_NE(msg.find("the deck has 0 [[probe]] tables: index 2"), std::string::npos) << msg;
  msg = error_of(deck, {"probe[0]={name=\"y\"}"});
  EXPECT_NE(msg.find("a whole table cannot be set"), std::string::npos) << msg;
  msg = error_of(deck, {"probe.name=x"});
  EXPECT_NE(msg.find("an array of tables takes an index"), std::string::npos) << msg;
  msg = error_of(deck, {"probe[1].at=[40.5,3]"});  // blamed on the --set argument
  EXPECT_NE(msg.find("--set 'probe[1].at=[40.5,3]': key 'probe[1].at': point 40.5"),
            std::string::npos)
      << msg;
}

TEST(Deck, ProbesAtPointsAndTheirCadence) {
  std::string msg = error_of(base + "[[probe]]\nat = [32.5, 3]\n");
  EXPECT_NE(msg.find("point 32.5 on axis x is outside the domain [0, 32]"), std::string::npos)
      << msg;
  msg = error_of(base + "[[probe]]\nat = [3, 3]\nposition = [3, 3]\n");
  EXPECT_NE(msg.find("give one of position"), std::string::npos) << msg;
  msg = error_of(base + "[[probe]]\nat_m = [0.1, 0.1]\n");
  EXPECT_NE(msg.find("positions in metres need a [units] section"), std::string::npos) << msg;
  msg = error_of(base + "[[probe]]\ntype = \"line\"\nat = [3, 3]\nstart = [3, 3]\n");
  EXPECT_NE(msg.find("give one of start (a row of cells), at (a point on the line"),
            std::string::npos)
      << msg;
  const Case between = parse_deck(base + "[[probe]]\ntype = \"line\"\nat = [3, 3.25]\n", "c.toml");
  EXPECT_TRUE(between.probes[0].interpolated);
  EXPECT_EQ(between.probes[0].at[1], 3.25);
  // Line probes take their own cadence (they were tied to the field output before).
  const Case c = parse_deck(
      base + "[[probe]]\ntype = \"line\"\nstart = [3, 0]\naxis = \"y\"\nevery = 5\n", "case.toml");
  EXPECT_EQ(c.probes[0].every, 5);
}

// [units]: SI length, velocity, viscosity and density give dx, dt and tau.
TEST(Deck, SiUnitsDeriveTheLatticeValues) {
  std::string deck = base;
  deck.replace(deck.find("reynolds = 100.0"), 16, "velocity = 0.1\nlength = 16");
  deck +=
      "[units]\nlength = 0.5\nvelocity = 2.0\nviscosity = 1e-2\ndensity = 1000\n"
      "[[probe]]\nat_m = [0.25, 0.125]\n";
  const Case c = parse_deck(deck, "case.toml");
  ASSERT_TRUE(c.units.given);
  EXPECT_DOUBLE_EQ(c.units.dx, 0.5 / 16);
  EXPECT_DOUBLE_EQ(c.units.dt, 0.1 * (0.5 / 16) / 2.0);
  // Re = U L / nu = 100 in SI and in lattice units alike
  EXPECT_NEAR(c.reynolds, 100.0, 1e-9);
  EXPECT_NEAR(c.units.velocity(0.1), 2.0, 1e-15);
  EXPECT_NEAR(c.units.pressure(1.0), 1000 * 20.0 * 20.0, 1e-6);  // rho (dx/dt)^2, dx/dt = 2 / 0.1
  EXPECT_DOUBLE_EQ(c.probes[0].at[0], 8.0);
  EXPECT_DOUBLE_EQ(c.probes[0].at[1], 4.0);
  std::string msg =
      error_of(base + "[units]\nlength = 1\nvelocity = 1\nviscosity = 1\ndensity = 1\n");
  EXPECT_NE(msg.find("physics.reynolds': the deck has [units]"), std::string::npos) << msg;
  std::string no_scale = deck;
  no_scale.replace(no_scale.find("velocity = 0.1\n"), 15, "");
  msg = error_of(no_scale);
  EXPECT_NE(msg.find("physics.velocity': missing: [units] maps units.velocity"), std::string::npos)
      << msg;
  msg = error_of(deck, {"units.viscosity=-1"});
  EXPECT_NE(msg.find("units.viscosity"), std::string::npos) << msg;
  msg = error_of(deck, {"units.density=\"x\""});
  EXPECT_NE(msg.find("units.density"), std::string::npos) << msg;
}

TEST(Deck, TaylorGreen3DAndFileStarts) {
  const std::string cube = R"(
[model]
lattice = "D3Q19"
[domain]
nx = 16
ny = 16
nz = 16
[physics]
tau = 0.6
[initial]
type = "taylor_green_3d"
amplitude = 0.02
)";
  const Case c = parse_deck(cube, "tg.toml");
  EXPECT_EQ(c.solver.initial.kind, InitialCondition::Kind::TaylorGreen3D);
  std::string msg = error_of(cube, {"domain.nz=8"});
  EXPECT_NE(msg.find("taylor_green_3d needs a cubic box"), std::string::npos) << msg;
  msg = error_of(cube, {"boundary.z_min=wall", "boundary.z_max=wall"});
  EXPECT_NE(msg.find("needs periodic faces"), std::string::npos) << msg;
  msg = error_of(cube, {"initial.type=file"});
  EXPECT_NE(msg.find("initial.amplitude"), std::string::npos) << msg;
  std::string file_deck = cube;
  const std::string vortex = "type = \"taylor_green_3d\"\namplitude = 0.02";
  file_deck.replace(file_deck.find(vortex), vortex.size(),
                    "type = \"file\"\nfile = \"no_such_fields.h5\"");
  msg = error_of(file_deck);
  EXPECT_NE(msg.find("key 'initial.file': no_such_fields.h5: no such file"), std::string::npos)
      << msg;
}

TEST(Deck, WarnsAboutCadencesLongerThanTheRun) {
  const Case c = parse_deck(
      base + "output_every = 20\nstatistics_every = 11\n[[probe]]\nposition = [3, 3]\nevery = 30\n",
      "case.toml");
  std::string all;
  for (const auto& w : deck_warnings(c)) all += w + "\n";
  EXPECT_NE(all.find("run.output_every = 20 is longer than the run (run.steps = 10)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("run.statistics_every = 11"), std::string::npos) << all;
  EXPECT_NE(all.find("probe 'probe0' every = 30"), std::string::npos) << all;
  EXPECT_EQ(deck_warnings(parse_deck(base, "case.toml")).size(), 0u);
}
}  // namespace
