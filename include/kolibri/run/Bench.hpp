// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief `kolibri bench`: standard periodic-box cases, the device copy bandwidth measured in the
/// same run, and for each case MLUPS, bytes per update, achieved GB/s, the fraction of the copy
/// bandwidth and device bytes per cell. Prints a table and writes JSON.
#pragma once

#include <kolibri/config/Case.hpp>

#include <array>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace kolibri {

/// Arithmetic and storage precision of a case: fp64, fp32, or fp16 (FP32 arithmetic, FP16 storage).
struct PrecisionChoice {
  Precision arithmetic = Precision::FP32;
  StorageKind storage = StorageKind::Same;
  constexpr bool operator==(const PrecisionChoice&) const = default;
};
/// `--precision` and the JSON's "storage": fp16 is FP32 arithmetic with FP16 storage.
template <>
struct NameTable<PrecisionChoice> {
  using P = PrecisionChoice;
  static constexpr std::array entries{Named<P>{P{Precision::FP32, StorageKind::Same}, "fp32"},
                                      Named<P>{P{Precision::FP32, StorageKind::FP16}, "fp16"},
                                      Named<P>{P{Precision::FP64, StorageKind::Same}, "fp64"}};
};

/// \brief The domain a benchmark case runs on (`--case`), n cells along each axis:
/// - periodic: a periodic box;
/// - closed: walls on every face, the top one (y_max in 2D, z_max in 3D) moving (FluidX3D's
///   closed benchmark box: ../shared/design/TOOLCHAIN.md);
/// - channel: a velocity inlet at x_min (u = 0.05), a pressure outlet at x_max, walls elsewhere;
/// - sphere: the channel with a bounce-back sphere (a disc in 2D) of diameter n/4 at x = n/4 on
///   the axis;
/// - sphere_interpolated: the same sphere with interpolated walls (Obstacle::Wall::Interpolated).
/// - refined_sphere: mahmoud2024's wind tunnel, refined around a sphere (three levels): n is the
///   finest level's length, the box n x 0.706 n x n of finest cells (its three sizes: 272, 544,
///   816), level 0 a quarter of that; a velocity inlet at x_min (u = 0.05), a pressure outlet at
///   x_max, walls elsewhere; a bounce-back sphere of radius n/68 level-0 cells at 0.3 of the
///   length; level 2 within 2.5 radii of its centre, level 1 from 4 radii upstream to 8 downstream
///   and 4 across. MLUPS count every level's fluid cells times its steps (mahmoud2024).
/// MLUPS count every cell of the box, solid ones included (as FluidX3D counts).
enum class BenchCase {
  Periodic,
  Closed,
  Channel,
  ChannelOutflow,
  Sphere,
  SphereInterpolated,
  Porous,
  Vessel,
  RefinedSphere
};
template <>
struct NameTable<BenchCase> {
  static constexpr std::array entries{
      Named<BenchCase>{BenchCase::Periodic, "periodic"},
      Named<BenchCase>{BenchCase::Closed, "closed"},
      Named<BenchCase>{BenchCase::Channel, "channel"},
      Named<BenchCase>{BenchCase::ChannelOutflow, "channel_outflow"},
      Named<BenchCase>{BenchCase::Sphere, "sphere"},
      Named<BenchCase>{BenchCase::SphereInterpolated, "sphere_interpolated"},
      Named<BenchCase>{BenchCase::Porous, "porous"},
      Named<BenchCase>{BenchCase::Vessel, "vessel"},
      Named<BenchCase>{BenchCase::RefinedSphere, "refined_sphere"}};
};

/// \brief The configuration of `domain` for lattice `lat` and edge n (faces, obstacle, initial
/// flow). Porous: a periodic box of random spheres of diameter max(4, n/6) (about tomczak2018's
/// 40 cells at n = 256) at `porosity`, seed 1, driven by a body force along x. Vessel:
/// vessel_geometry (geometry/SolidImage.hpp) in a periodic box, the flow along its legs.
void set_bench_case(SolverConfig& c, BenchCase domain, int n, double porosity = 0.0);
/// The porous case's sphere diameter for edge n (cells).
inline int porous_sphere_diameter(int n) { return n / 6 > 4 ? n / 6 : 4; }

struct BenchOptions {
  std::vector<LatticeKind> lattices{LatticeKind::D3Q19, LatticeKind::D3Q27};
  std::vector<CollisionKind> collisions{CollisionKind::Bgk, CollisionKind::Trt, CollisionKind::Regularized};
  std::vector<PrecisionChoice> precisions{{Precision::FP32, StorageKind::Same},
                                          {Precision::FP32, StorageKind::FP16},
                                          {Precision::FP64, StorageKind::Same}};
  std::vector<Streaming> streamings{Streaming::InPlace, Streaming::TwoArray};
  std::vector<int> sizes{128, 256, 0};  ///< cube edge; 0 = the largest that fits
  std::array<int, 2> moment_tile{0, 0}; ///< moment kernel tile (0: default)
  int moment_segment = 0;               ///< moment kernel column segment (0: default)
  std::vector<int> moment_arrays{2};    ///< moment representation: 2 or 1 arrays (SolverConfig)
  std::vector<int> layouts{-1};         ///< population layouts: -1 automatic, 0 SoA, else CSoA(alpha)
  std::vector<int> collision_kernels{1};///< interior collision in 1 or 2 launches (two arrays)
  std::vector<int> tile_edges{0};       ///< the tiled grid's tile edges (populations); 0: dense box
  std::vector<bool> face_kernels{false};///< per-face boundary kernels (two arrays, with --walls)
  std::vector<LevelKernels> level_kernels{LevelKernels::Fused};  ///< refined cases' level kernels
  std::vector<BenchCase> cases{BenchCase::Periodic};  ///< the domains (--case; --walls: closed)
  std::vector<double> porosities{0.9, 0.7, 0.5, 0.3, 0.1};  ///< the porous case's (--porosity)
  double min_seconds = 1.0;             ///< time each case for at least this long
  double memory_fraction = 0.85;        ///< of the free device memory, for size 0
  std::string json;                     ///< output file ("" = perf/results/bench_<device>_<date>.json)
  std::string label;                    ///< free text stored in the JSON (e.g. the git revision)
};

/// \brief One measured case.
struct BenchResult {
  LatticeKind lattice;
  CollisionKind collision;
  PrecisionChoice precision;
  Streaming streaming;
  int n = 0;
  int alpha = 0;             ///< layout: 0 SoA, else CSoA(alpha)
  int collision_kernels = 1;
  bool face_kernels = false;
  int moment_arrays = 0;     ///< moments: 1 or 2 arrays; 0 for populations
  std::int64_t steps = 0;
  double seconds = 0, mlups = 0, bytes_per_update = 0, gbs = 0, fraction = 0, bytes_per_cell = 0;
  BenchCase domain = BenchCase::Periodic;
  int tile_edge = 0;  ///< the tiled grid's tile edge; 0: the dense box
  /// Porous: the geometry's porosity, fluid cells, their update rate (fluid cells x steps / s)
  /// and its tiles with the overhead model (grid/TileModel.hpp).
  double porosity = 1.0;
  std::int64_t fluid_cells = 0;
  double fluid_mlups = 0;
  double tile_porosity = 0, model_bandwidth_t2c = 0, model_bandwidth_tgb = 0;
  double model_memory_t2c = 0, model_memory_tgb = 0;
  /// Refined cases: fluid cells per level, and the rate of the uniform grid at the finest
  /// level's spacing that these steps stand for (its cells x 2^(levels - 1) steps a step).
  std::vector<std::int64_t> level_cells{};
  double effective_mlups = 0;
  LevelKernels level_kernels = LevelKernels::Fused;
};

/// \brief Device-to-device copy bandwidth (bytes read + written per second, GB/s) over `bytes`.
double measure_copy_bandwidth(std::size_t bytes);

/// \brief A deck's update rate measured on the present device (`kolibri check`): its model,
/// operator, precision, scheme and faces on a box of at most `max_cells` cells with the deck's
/// proportions, without obstacles and bodies, stepped for about `seconds`.
struct RateEstimate {
  std::array<int, 3> box{0, 0, 0};
  std::int64_t steps = 0;
  double mlups = 0.0;
};
RateEstimate estimate_rate(const SolverConfig& deck, std::int64_t max_cells, double seconds);

/// \brief Run the benchmark; returns the exit code.
int run_bench(const BenchOptions& o, std::ostream& out);

}  // namespace kolibri
