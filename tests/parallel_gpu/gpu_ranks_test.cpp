// Decomposed runs on the GPU: `mpirun -np 2` and `-np 3` on one machine's GPU (ranks share it),
// each CUDA-core backend and temporal-blocking one step per pass, and fused and blocked passes
// (register-tiling k = 3, temporal-blocking k = 2 and 3, convstencil k = 2), against the same
// backend in one
// process: every output file, checkpoint and probe row bit for bit. The cases: materials with
// a source on a schedule and every face kind (convective with a scheduled ambient, Dirichlet,
// a heat flux, insulated) in 2D; a constant-weight 3D case with a source and Neumann faces;
// sub-grid geometry with a void whose surface convects, in 3D; and temperature-dependent
// materials with a periodic axis, a radiating face and one convecting and radiating, in 3D. A
// restart on another rank count continues the same run; a rank that fails ends all of them.
// Implicit and steady runs with a GPU backend on 2 ranks (whose multigrid goes whole to rank 0's
// GPU) against one process solving on the GPU: bit for bit. Skipped without a GPU (failing with
// HEATSIM_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/gpu/gpu_test_support.hpp"
#include "tests/parallel/decomposed_support.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace heatsim_tests::decomposed;

struct RankCase {
  const char* name;
  std::string yaml;  // without output
};

const std::vector<RankCase>& rank_cases() {
  static const std::vector<RankCase> list = {
      {"materials_faces_2d",
       "grid: {dims: 2, n: [61, 45], length: [0.22, 0.16]}\n"
       "materials:\n  copper: {conductivity: 400, density: 8960, specific_heat: 385}\n"
       "  epoxy: {conductivity: 0.3, density: 1200, specific_heat: 1100}\n"
       "regions:\n  - {material: epoxy}\n  - {material: copper, box: {lower: [0.05, 0.0], upper: "
       "[0.12, 0.1]}}\n"
       "sources:\n  - {ball: {center: [0.08, 0.05], radius: 0.03}, power_density: 2.0e6, "
       "schedule: [[0, 0], [5, 1], [20, 0.5]]}\n"
       "boundary:\n  all: {type: neumann, flux: 0.0}\n"
       "  x-: {type: convective, h: 50, ambient: {value: 290, amplitude: 5, frequency: 0.05}}\n"
       "  y+: {type: dirichlet, value: 300}\n  x+: {type: neumann, heat_flux: 1000}\n"
       "initial: {type: constant, value: 295}\ntime: {dt: auto, steps: 60}\n"
       "probes:\n  every: 5\n  points:\n    hot: [0.08, 0.05]\n    edge: [0.0, 0.101]\n"},
      {"constant_3d",
       "grid: {dims: 3, n: [45, 37, 29], length: 1.0}\nphysics: {alpha: 1.0, source: 1.0}\n"
       "boundary:\n  all: {type: neumann, flux: 0.0}\n  z+: {type: neumann, flux: -0.5}\n"
       "  x-: {type: dirichlet, value: 0.5}\n"
       "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}\n"
       "time: {dt: auto, steps: 60}\n"},
      {"subgrid_void_3d",
       "grid: {dims: 3, n: [41, 29, 23], length: [0.04, 0.028, 0.022]}\n"
       "materials:\n  aluminium: {conductivity: 237, density: 2700, specific_heat: 900}\n"
       "  fr4: {conductivity: 0.3, density: 1850, specific_heat: 1100}\n"
       "regions:\n  - {material: aluminium}\n"
       "  - {material: fr4, box: {lower: [-1, -1, -1], upper: [1, 1, 0.00337]}}\n"
       "  - {void: true, name: slot, box: {lower: [0.0113, 0.0051, 0.0121], upper: [0.0287, "
       "0.0229, 0.03]},\n     surface: {type: convective, h: 40, ambient: 300}}\n"
       "sources:\n  - {box: {lower: [0.015, 0.01, 0], upper: [0.025, 0.018, 0.001]}, power: 5}\n"
       "boundary:\n  all: {type: convective, h: 15, ambient: 300}\n"
       "  z-: {type: neumann, flux: 0}\n"
       "initial: {type: constant, value: 300}\ntime: {dt: auto, steps: 60}\n"},
      {"laws_periodic_radiative_3d",
       "grid: {dims: 3, n: [33, 27, 21], length: [0.033, 0.026, 0.02]}\n"
       "materials:\n  steel: {conductivity: [[300, 16.2], [900, 23.0]], density: 7900, "
       "specific_heat: [[300, 500], [900, 650]]}\n"
       "  copper: {conductivity: 400, density: 8960, specific_heat: 385}\n"
       "regions:\n  - {material: steel}\n"
       "  - {material: copper, ball: {center: [0.016, 0.013, 0.01], radius: 0.006}}\n"
       "sources:\n  - {ball: {center: [0.016, 0.013, 0.01], radius: 0.004}, power: 40}\n"
       "boundary:\n  x-: {type: periodic}\n  x+: {type: periodic}\n"
       "  y-: {type: radiative, emissivity: 0.8, ambient: 280}\n"
       "  y+: {type: convective, h: 30, ambient: 290, emissivity: 0.5}\n"
       "  z-: {type: dirichlet, value: 300}\n  z+: {type: neumann, heat_flux: 500}\n"
       "initial: {type: constant, value: 300}\ntime: {dt: auto, steps: 60}\n"
       "probes:\n  every: 5\n  points:\n    centre: [0.016, 0.013, 0.01]\n"},
  };
  return list;
}

struct Variant {
  const char* backend;
  int fusion;  // 0: the case's default
};

// The CUDA-core backends, and temporal-blocking one step per pass.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> list = {
      {"cuda-naive", 0}, {"shared-tiling", 0}, {"register-tiling", 0}, {"temporal-blocking", 1}};
  return list;
}

class GpuRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    heatsim::test::skip_without_gpu();
    dir_ = heatsim_tests::make_scratch_dir("gpu_ranks");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string write_case(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  // The case at `path` on register-tiling, stopped by 3 ranks at step 30 and continued from
  // that checkpoint on 2 ranks and on one process: each gives the uninterrupted one-process
  // run's files. The case outputs every 10 steps and checkpoints every 30, so the first run's
  // last output (at its last step, 30) is one the whole run writes too.
  void expect_restarts_across_rank_counts(const std::string& path, const std::string& tag) {
    const fs::path whole = dir_ / (tag + "_whole");
    const auto s =
        heatsim_tests::run_heatsim("run " + path + " -q -b register-tiling -o " + whole.string());
    ASSERT_EQ(s.code, 0) << s.output;
    for (int ranks : {2, 1}) {
      const fs::path split = dir_ / (tag + "_split_to_" + std::to_string(ranks));
      const auto first =
          run_ranks(3, "run " + path + " -q -b register-tiling -n 30 -o " + split.string());
      ASSERT_EQ(first.code, 0) << first.output;
      const std::string rest = "run " + path + " -q -b register-tiling -o " + split.string() +
                               " --restart " + (split / "checkpoint_00000030.h5").string();
      const auto r = ranks == 1 ? heatsim_tests::run_heatsim(rest) : run_ranks(ranks, rest);
      ASSERT_EQ(r.code, 0) << r.output;
      expect_same_run(whole, split,
                      tag + ": 3 GPU ranks to step 30, then " + std::to_string(ranks));
    }
  }
  fs::path dir_;
};

// The run summary's count of exchanges that ran while the interior stepped (match 1).
std::smatch exchanges_beside_interior(const std::string& output) {
  static const std::regex count(R"(halo exchanges .*, (\d+) of them while the interior stepped)");
  std::smatch m;
  std::regex_search(output, m, count);
  return m;
}

TEST_F(GpuRanks, EveryBackendEqualsOneProcessBitForBit) {
  int compared = 0;
  for (const RankCase& c : rank_cases())
    for (const Variant& v : variants()) {
      // temporal-blocking does not re-evaluate temperature-dependent materials each step; it
      // refuses them in one process as on ranks.
      if (std::string(v.backend) == "temporal-blocking" &&
          std::string(c.name) == "laws_periodic_radiative_3d")
        continue;
      const std::string tag = std::string(c.name) + "_" + v.backend +
                              (v.fusion ? "_k" + std::to_string(v.fusion) : std::string());
      const std::string fusion = v.fusion ? "fusion: " + std::to_string(v.fusion) + "\n" : "";
      SCOPED_TRACE(tag);
      const std::string path = write_case(
          tag + ".yaml", c.yaml + fusion + "output: {every: 20}\ncheckpoint: {every: 30}\n");
      const fs::path serial = dir_ / (tag + "_serial");
      const auto s = heatsim_tests::run_heatsim("run " + path + " -q -b " + v.backend + " -o " +
                                                serial.string());
      ASSERT_EQ(s.code, 0) << tag << "\n" << s.output;
      for (int ranks : {2, 3}) {
        const fs::path split = dir_ / (tag + "_np" + std::to_string(ranks));
        const auto p = run_ranks(
            ranks, "run " + path + " -q -b " + std::string(v.backend) + " -o " + split.string());
        ASSERT_EQ(p.code, 0) << tag << " on " << ranks << " ranks\n" << p.output;
        // Every step splits around the interior (the halo travels meanwhile).
        const std::smatch beside = exchanges_beside_interior(p.output);
        ASSERT_FALSE(beside.empty()) << p.output;
        EXPECT_GT(std::stol(beside[1].str()), 0) << p.output;
        expect_same_run(serial, split, tag + " on " + std::to_string(ranks) + " ranks");
        ++compared;
      }
    }
  EXPECT_EQ(compared, (4 * 4 - 1) * 2);
}

// Fused and blocked passes on 2 and 3 ranks against one process: every file bit for bit. The
// constant 3D case twice, its Dirichlet nodes first off g (the first step a single one) and
// holding g (none): each rank takes the serial run's choice, not its placeholders'. The
// materials and the sub-grid void through temporal-blocking's blocked coefficient passes.
// Outputs every 20 steps and checkpoints every 30 cut the run at steps that are not multiples
// of the depth. Then a fused 3-rank checkpoint continues on 2 ranks and on one process.
TEST_F(GpuRanks, FusedAndBlockedPassesEqualOneProcessBitForBit) {
  std::string held = rank_cases()[1].yaml;
  const std::string gaussian =
      "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}\n";
  ASSERT_NE(held.find(gaussian), std::string::npos);
  held.replace(held.find(gaussian), gaussian.size(), "initial: {type: constant, value: 0.5}\n");
  struct Fused {
    std::string name, yaml, backend;
    int fusion;
  };
  std::vector<Fused> runs;
  for (const auto& [name, yaml] :
       {std::pair<std::string, std::string>{"off_g", rank_cases()[1].yaml}, {"holds_g", held}})
    for (const auto& [backend, k] : {std::pair<std::string, int>{"register-tiling", 3},
                                     {"temporal-blocking", 2},
                                     {"temporal-blocking", 3},
                                     {"convstencil", 2}})
      runs.push_back({name, yaml, backend, k});
  runs.push_back({"materials", rank_cases()[0].yaml, "temporal-blocking", 2});
  runs.push_back({"subgrid", rank_cases()[2].yaml, "temporal-blocking", 2});
  int compared = 0;
  for (const Fused& f : runs) {
    const std::string tag = f.name + "_" + f.backend + "_k" + std::to_string(f.fusion);
    SCOPED_TRACE(tag);
    const std::string path =
        write_case(tag + ".yaml", f.yaml + "fusion: " + std::to_string(f.fusion) +
                                      "\noutput: {every: 20}\ncheckpoint: {every: 30}\n");
    const fs::path serial = dir_ / (tag + "_serial");
    const std::string args = "run " + path + " -b " + f.backend + " --progress-seconds 0 -o ";
    const auto s = heatsim_tests::run_heatsim(args + serial.string());
    ASSERT_EQ(s.code, 0) << s.output;
    const std::string depth = "fusion: " + std::to_string(f.fusion) + " steps per pass";
    ASSERT_NE(s.output.find(depth), std::string::npos) << "not fused:\n" << s.output;
    for (int ranks : {2, 3}) {
      const fs::path split = dir_ / (tag + "_np" + std::to_string(ranks));
      const auto p = run_ranks(ranks, args + split.string());
      ASSERT_EQ(p.code, 0) << ranks << " ranks\n" << p.output;
      EXPECT_NE(p.output.find(depth), std::string::npos) << p.output;
      // Fused and blocked passes split around the interior (the halo travels meanwhile).
      const std::smatch beside = exchanges_beside_interior(p.output);
      ASSERT_FALSE(beside.empty()) << p.output;
      EXPECT_GT(std::stol(beside[1].str()), 0) << p.output;
      expect_same_run(serial, split, tag + " on " + std::to_string(ranks) + " ranks");
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2 * static_cast<int>(runs.size()));

  expect_restarts_across_rank_counts(
      write_case("restart.yaml",
                 held + "fusion: 3\noutput: {every: 10}\ncheckpoint: {every: 30}\n"),
      "fused");
}

// A checkpoint of 3 ranks continues on 2 ranks and on one process, on the GPU, as the
// uninterrupted one-process run.
TEST_F(GpuRanks, RestartsAcrossRankCounts) {
  expect_restarts_across_rank_counts(
      write_case("c.yaml", rank_cases()[0].yaml + "output: {every: 10}\ncheckpoint: {every: 30}\n"),
      "materials");
}

// Rank 0 alone finds the output directory unusable; the ranks already stepping on the GPU end
// too, with the reason and without hanging.
TEST_F(GpuRanks, OneFailingRankEndsAllOfThem) {
  std::ofstream(dir_ / "file") << "not a directory";
  const std::string path = write_case("c.yaml", rank_cases()[1].yaml + "output: {directory: " +
                                                    (dir_ / "file" / "out").string() + "}\n");
  const auto r = run_ranks(3, "run " + path + " -b shared-tiling");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_NE(r.output.find("file/out"), std::string::npos) << r.output;
}

// Implicit solves on 2 ranks against one GPU process: the multigrid goes whole to rank 0's
// GPU, on the same level operations as one process's, so every file and every solve's
// iterations are one process's, bit for bit, and the log says where the solve ran.
TEST_F(GpuRanks, ImplicitAndSteadySolvesMatchOneGpuProcess) {
  const std::vector<RankCase> cases = {
      {"steady_ball_3d", steady_ball_yaml("[41, 37, 33]")},
      {"backward_euler_2d", rank_cases()[0].yaml},
  };
  for (const RankCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::string yaml = c.yaml;
    if (std::string(c.name) == "backward_euler_2d")
      yaml.replace(yaml.find("time: {dt: auto, steps: 60}"), 27,
                   "time: {method: backward-euler, dt: 2.0, steps: 12}");
    const std::string path = write_case(std::string(c.name) + ".yaml", yaml);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const fs::path split = dir_ / (std::string(c.name) + "_np2");
    const std::string args = "run " + path + " -b cuda-naive --progress-seconds 0 -o ";
    const auto s = heatsim_tests::run_heatsim(args + serial.string());
    ASSERT_EQ(s.code, 0) << s.output;
    const auto p = run_ranks(2, args + split.string());
    ASSERT_EQ(p.code, 0) << p.output;
    EXPECT_NE(p.output.find("the multigrid whole on rank 0, on cuda-naive's level operations"),
              std::string::npos)
        << p.output;
    const std::vector<int> want = iterations(s.output);
    ASSERT_FALSE(want.empty()) << s.output;
    EXPECT_EQ(want, iterations(p.output)) << p.output;
    expect_same_run(serial, split, std::string(c.name) + " on 2 GPU ranks");
  }
}

}  // namespace
