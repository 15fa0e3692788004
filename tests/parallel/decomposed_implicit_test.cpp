// Implicit and steady runs under mpirun against the serial run: the multigrid's finest level
// and the levels below it that are large enough split over the ranks, the rest on rank 0
// (solver/parallel/decomposed_level_ops.hpp).
// Every output, checkpoint and probe row is the serial run's bit for bit, and so are the
// iteration counts, with x whole on every rank (the default decomposition) and with x split;
// restarts across rank counts, bdf2's too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/parallel/decomposed_support.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
namespace io = heatsim::io;

namespace {

using namespace heatsim_tests::decomposed;

std::string checkerboard_yaml() {
  return "grid: {dims: 3, n: [22, 19, 17], length: 1.0}\n"
         "materials:\n  weak: {conductivity: 1, density: 1000, specific_heat: 1000}\n"
         "  strong: {conductivity: 1.0e4, density: 1000, specific_heat: 1000}\n"
         "regions:\n  - {material: weak}\n"
         "  - {material: strong, where: \"(floor(x / 0.25) + floor(y / 0.25) + floor(z / 0.25)) - "
         "2 * floor((floor(x / 0.25) + floor(y / 0.25) + floor(z / 0.25)) / 2) > 0.5\"}\n"
         "sources:\n  - {ball: {center: [0.5, 0.5, 0.5], radius: 0.3}, power_density: 1.0e3}\n"
         "boundary:\n  all: {type: convective, h: 25, ambient: 300}\n"
         "initial: {type: constant, value: 300}\ntime: {method: steady}\n";
}

// The run's "done:" line without its times and the backend it names ("on cpu", "on 2 x cpu").
std::string done_words(const std::string& text) {
  const auto at = text.find("done: ");
  if (at == std::string::npos) return "";
  std::string line = text.substr(at, text.find('\n', at) - at);
  line = std::regex_replace(line, std::regex(R"((in )?[0-9][0-9.hm]* ?(ms|us|s)( wall)?\b)"), "T");
  return std::regex_replace(line, std::regex(R"( on ([0-9]+ x )?[a-z-]+)"), "");
}

// A 2D finned sink (voids with convective surfaces), a 3D copper ball in epoxy, a 2D
// transient with materials, a scheduled source, probes and every face kind, Crank-Nicolson in
// 3D, a periodic axis, and a conductivity that varies with temperature beside a radiating face.
const std::vector<Case>& cases() {
  static const std::vector<Case> list = {
      {"steady_heat_sink_2d",
       "grid: {dims: 2, n: [61, 31], length: [0.1, 0.05]}\n"
       "materials:\n  aluminium: {conductivity: 237, density: 2700, specific_heat: 900}\n"
       "regions:\n  - {material: aluminium}\n"
       "  - {void: true, box: {lower: [0.02, 0.01], upper: [0.045, 0.05]},\n"
       "     surface: {type: convective, h: 25, ambient: 298.15}}\n"
       "  - {void: true, box: {lower: [0.055, 0.01], upper: [0.08, 0.05]},\n"
       "     surface: {type: convective, h: 25, ambient: 298.15}}\n"
       "sources:\n  - {box: {lower: [0.045, 0.0], upper: [0.055, 0.002]}, power: 100.0}\n"
       "boundary:\n  all: {type: convective, h: 25, ambient: 298.15}\n"
       "  y-: {type: neumann, flux: 0}\n"
       "initial: {type: constant, value: 298.15}\ntime: {method: steady}\n"},
      {"steady_ball_3d", steady_ball_yaml("[23, 21, 19]")},
      {"backward_euler_2d",
       "grid: {dims: 2, n: [23, 17], length: [0.22, 0.16]}\n"
       "materials:\n  copper: {conductivity: 400, density: 8960, specific_heat: 385}\n"
       "  epoxy: {conductivity: 0.3, density: 1200, specific_heat: 1100}\n"
       "regions:\n  - {material: epoxy}\n  - {material: copper, box: {lower: [0.05, 0.0], upper: "
       "[0.12, 0.1]}}\n"
       "sources:\n  - {ball: {center: [0.08, 0.05], radius: 0.03}, power_density: 2.0e6, "
       "schedule: [[0, 0], [50, 1], [200, 0.5]]}\n"
       "boundary:\n  all: {type: neumann, flux: 0.0}\n"
       "  x-: {type: convective, h: 50, ambient: {value: 290, amplitude: 5, frequency: 0.005}}\n"
       "  y+: {type: dirichlet, value: 300}\n  x+: {type: neumann, heat_flux: 1000}\n"
       "initial: {type: constant, value: 295}\n"
       "time: {method: backward-euler, dt: 10, steps: 30}\n"
       "probes:\n  every: 5\n  points:\n    hot: [0.08, 0.05]\n    edge: [0.0, 0.101]\n"},
      {"crank_nicolson_3d",
       "grid: {dims: 3, n: [13, 11, 9], length: 1.0}\nphysics: {alpha: 1.0, source: 1.0}\n"
       "boundary:\n  all: {type: dirichlet, value: 0.0}\n  z+: {type: neumann, flux: -0.5}\n"
       "  y-: {type: convective, h: 3.0, ambient: 1.0}\n"
       "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}\n"
       "time: {method: crank-nicolson, dt: 0.002, steps: 30}\n"},
      {"periodic_2d",
       "grid: {dims: 2, n: [24, 18], length: 1.0}\nphysics: {alpha: 1.0}\n"
       "boundary:\n  x-: {type: periodic}\n  x+: {type: periodic}\n"
       "  y-: {type: dirichlet, value: 0.0}\n  y+: {type: convective, h: 2.0, ambient: 0.5}\n"
       "initial: {type: expression, value: \"sin(2*pi*x) * cos(2*pi*y) + x\"}\n"
       "time: {method: backward-euler, dt: 0.01, steps: 30}\n"},
      // A checkerboard of k = 1 and 1e4 cubes with convective faces: 33 strong pieces, which
      // the solve deflates after its third iteration (solver/multigrid/deflation.hpp), their
      // sums formed row by row on every rank count as on one process.
      {"steady_checkerboard_3d", checkerboard_yaml()},
      {"temperature_dependent_steady_2d",
       "grid: {dims: 2, n: [31, 21], length: [0.03, 0.02]}\n"
       "materials:\n  steel: {conductivity: [[300, 16.2], [900, 23.0]], density: 7900, "
       "specific_heat: 500}\n"
       "regions:\n  - {material: steel}\n"
       "sources:\n  - {box: {lower: [0.01, 0.0], upper: [0.02, 0.004]}, power_density: 4.0e7}\n"
       "boundary:\n  all: {type: neumann, flux: 0}\n"
       "  y+: {type: radiative, emissivity: 0.8, ambient: 300}\n"
       "  x-: {type: convective, h: 20, ambient: 300}\n"
       "initial: {type: constant, value: 400}\ntime: {method: steady}\n"},
  };
  return list;
}

// Every level of 64 nodes per rank or more is split (the default, 16384, would leave the
// small grids here to rank 0 below the finest): the Galerkin levels' parts, their 2^dims
// colours and the transfers between split levels are tested too.
class DecomposedImplicitTest : public DecomposedFixture {
 protected:
  void SetUp() override {
    DecomposedFixture::SetUp();
    setenv("HEATSIM_MULTIGRID_SPLIT_POINTS", "64", 1);
  }
  void TearDown() override {
    unsetenv("HEATSIM_MULTIGRID_SPLIT_POINTS");
    DecomposedFixture::TearDown();
  }
};

TEST_P(DecomposedImplicitTest, EqualsTheSerialRunBitForBit) {
  const int ranks = GetParam();
  for (const Case& c : cases()) {
    const bool steady = c.yaml.find("method: steady") != std::string::npos;
    const std::string out = steady ? "" : "output: {every: 10}\ncheckpoint: {every: 20}\n";
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + out);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const fs::path split = dir_ / (std::string(c.name) + "_np" + std::to_string(ranks));
    // Every solve logged (progress every 0 s), so that the iteration counts can be compared;
    // on the CPU's level operations on every machine (a GPU machine's default backend gathers
    // the multigrid whole on rank 0's GPU: tests/gpu's parallel tests).
    const auto s = heatsim_tests::run_heatsim("run " + path + " -b cpu --progress-seconds 0 -o " +
                                              serial.string());
    ASSERT_EQ(s.code, 0) << c.name << "\n" << s.output;
    const auto p =
        run_ranks(ranks, "run " + path + " -b cpu --progress-seconds 0 -o " + split.string());
    ASSERT_EQ(p.code, 0) << c.name << " on " << ranks << " ranks\n" << p.output;
    expect_same_run(serial, split, std::string(c.name) + " on " + std::to_string(ranks) + " ranks");
    const std::vector<int> want = iterations(s.output);
    EXPECT_FALSE(want.empty()) << c.name << "\n" << s.output;
    EXPECT_EQ(want, iterations(p.output)) << c.name << " on " << ranks << " ranks\n" << p.output;
    // The summary's first line: a steady state's iterations and residual, an implicit run's
    // steps and multigrid iterations, as one process's (times and the backend's name apart),
    // not an explicit run's "0 steps ..., 0.000 GStencil/s".
    EXPECT_NE(done_words(s.output).find(steady ? "done: steady state in" : "multigrid iterations"),
              std::string::npos)
        << c.name << "\n"
        << s.output;
    EXPECT_EQ(done_words(s.output), done_words(p.output)) << c.name << " on " << ranks << " ranks\n"
                                                          << p.output;
    // A steady state's summary: where the heat goes, the same lines as one process's (the
    // whole field on rank 0, the same operator).
    if (steady && c.yaml.find("materials:") != std::string::npos) {
      const auto flows = [](const std::string& text) {
        const auto at = text.find("heat flows into the body at the steady state");
        return at == std::string::npos ? std::string()
                                       : text.substr(at, text.find("imbalance", at) - at);
      };
      EXPECT_FALSE(flows(s.output).empty()) << c.name << "\n" << s.output;
      EXPECT_EQ(flows(s.output), flows(p.output)) << c.name << " on " << ranks << " ranks\n"
                                                  << p.output;
    }
    if (std::string(c.name) == "steady_checkerboard_3d") {
      EXPECT_NE(s.output.find("the strong pieces deflated"), std::string::npos) << s.output;
      EXPECT_NE(p.output.find("the strong pieces deflated"), std::string::npos) << p.output;
    }
    if (ranks > 1) {
      EXPECT_NE(p.output.find(" split (one layer exchanged)"), std::string::npos) << p.output;
      if (std::string(c.name) == "steady_ball_3d") {
        EXPECT_NE(p.output.find("finest levels split"), std::string::npos) << p.output;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DecomposedImplicitTest, ::testing::Values(1, 2, 3, 4));

// The multigrid gathered whole to rank 0 (what a GPU run does, on rank 0's GPU; here on the
// CPU through HEATSIM_MULTIGRID_GATHER=1): every case on 2 and 3 ranks gives one process's
// files and iterations, bit for bit, and the log says where the solve ran.
class DecomposedGatheredTest : public DecomposedFixture {};

TEST_F(DecomposedGatheredTest, MultigridGatheredToRankZeroEqualsTheSerialRunBitForBit) {
  for (const Case& c : cases()) {
    const bool steady = c.yaml.find("method: steady") != std::string::npos;
    const std::string out = steady ? "" : "output: {every: 10}\ncheckpoint: {every: 20}\n";
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + out);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const auto s = heatsim_tests::run_heatsim("run " + path + " -b cpu --progress-seconds 0 -o " +
                                              serial.string());
    ASSERT_EQ(s.code, 0) << c.name << "\n" << s.output;
    for (int ranks : {2, 3}) {
      const fs::path whole = dir_ / (std::string(c.name) + "_gathered_np" + std::to_string(ranks));
      const auto p =
          run_ranks(ranks, "run " + path + " -b cpu --progress-seconds 0 -o " + whole.string(),
                    "HEATSIM_MULTIGRID_GATHER=1");
      ASSERT_EQ(p.code, 0) << c.name << " on " << ranks << " ranks\n" << p.output;
      EXPECT_NE(p.output.find("the multigrid whole on rank 0, on cpu's level operations"),
                std::string::npos)
          << p.output;
      expect_same_run(serial, whole,
                      std::string(c.name) + " gathered from " + std::to_string(ranks) + " ranks");
      EXPECT_EQ(iterations(s.output), iterations(p.output))
          << c.name << " on " << ranks << " ranks\n"
          << p.output;
    }
  }
}

class DecomposedImplicitSplitTest : public DecomposedImplicitTest {};

// Rows split along x (and a 1D grid, which can only split x): each rank carries on the row
// sums (the dot products' and the deflated checkerboard's piece sums) of the rank before it
// along x, so the solve is still one process's, bit for bit. The
// 1D case is a melting store (the enthalpy's outer iterations) on backward Euler; the tiny 2D
// one a hierarchy of one level, split and factored.
TEST_F(DecomposedImplicitSplitTest, RowsSplitAlongXEqualTheSerialRunBitForBit) {
  const Case wax = {
      "wax_1d",
      "grid: {dims: 1, n: [151], length: [0.048]}\n"
      "materials:\n  aluminium: {conductivity: 205, density: 2700, specific_heat: 900}\n"
      "  wax: {conductivity: [[310, 0.24], [320, 0.15]], density: 800, specific_heat: 2000,\n"
      "        phase_change: {solidus: 318, liquidus: 320, latent_heat: 2.0e5}}\n"
      "regions:\n  - {material: wax}\n  - {material: aluminium, box: {lower: [0], upper: "
      "[0.005]}}\n"
      "boundary:\n  x-: {type: neumann, heat_flux: 4000}\n"
      "  x+: {type: convective, h: 8, ambient: 293, emissivity: 0.9}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: backward-euler, dt: 10, steps: 10}\n"
      "probes:\n  every: 5\n  points: {plate: [0.0], middle: [0.025]}\n"};
  // 64 nodes: a one-level hierarchy, its only level split and factored (every rank solves it
  // whole, as one process does).
  const Case tiny = {
      "tiny_2d",
      "grid: {dims: 2, n: [8, 8], length: [0.08, 0.08]}\n"
      "materials:\n  copper: {conductivity: 400, density: 8960, specific_heat: 385}\n"
      "  epoxy: {conductivity: 0.3, density: 1200, specific_heat: 1100}\n"
      "regions:\n  - {material: epoxy}\n  - {material: copper, box: {lower: [0.02, 0.0], upper: "
      "[0.05, 0.05]}}\n"
      "boundary:\n  all: {type: convective, h: 40, ambient: 290}\n"
      "  y+: {type: dirichlet, value: 330}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: backward-euler, dt: 20, steps: 10}\n"};
  const Case checkerboard = {"steady_checkerboard_3d", checkerboard_yaml()};
  for (const Case& c : {cases()[0], cases()[1], checkerboard, wax, tiny}) {
    const bool steady = c.yaml.find("method: steady") != std::string::npos;
    const std::string out = steady ? "" : "output: {every: 10}\ncheckpoint: {every: 10}\n";
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + out);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const auto s =
        heatsim_tests::run_heatsim("run " + path + " --progress-seconds 0 -o " + serial.string());
    ASSERT_EQ(s.code, 0) << s.output;
    const int dims = c.yaml.find("dims: 3") != std::string::npos   ? 3
                     : c.yaml.find("dims: 2") != std::string::npos ? 2
                                                                   : 1;
    for (int ranks : {2, 4}) {
      if (dims == 1 && ranks == 4) continue;
      std::string split = ranks == 2 ? "[2" : "[2, 2";
      if (dims > 1 && ranks == 2) split += ", 1";
      if (dims == 3) split += ", 1";
      split += "]";
      const std::string split_path =
          write_case(std::string(c.name) + "_x.yaml",
                     c.yaml + out + "parallel: {decomposition: " + split + "}\n");
      const fs::path got = dir_ / (std::string(c.name) + "_x" + std::to_string(ranks));
      const auto p =
          run_ranks(ranks, "run " + split_path + " --progress-seconds 0 -o " + got.string());
      ASSERT_EQ(p.code, 0) << c.name << " " << split << "\n" << p.output;
      // The case text (its parallel section) differs; the fields and the iterations do not.
      for (const std::string& name : h5_files(serial)) {
        const io::FieldFile a = io::read_field_file((serial / name).string());
        const io::FieldFile b = io::read_field_file((got / name).string());
        EXPECT_TRUE(same_bits(a.field, b.field))
            << c.name << " " << split << ": " << name << ": " << describe_difference(a, b.field);
      }
      if (fs::exists(serial / "probes.csv")) {
        EXPECT_EQ(read_text(serial / "probes.csv"), read_text(got / "probes.csv"))
            << c.name << " " << split;
      }
      EXPECT_EQ(iterations(s.output), iterations(p.output)) << c.name << " " << split;
    }
  }
}

// A checkpoint written by 3 ranks continues on 2 and on one process exactly as the
// uninterrupted serial run goes.
TEST_F(DecomposedImplicitSplitTest, ThreeRankCheckpointRestartsOnTwoAndOnOne) {
  const Case& c = cases()[2];  // backward Euler, materials, sources, probes
  const std::string out = "output: {every: 10}\ncheckpoint: {every: 10}\n";
  const std::string path = write_case("c.yaml", c.yaml + out);
  const fs::path whole = dir_ / "whole";
  const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
  ASSERT_EQ(s.code, 0) << s.output;
  for (int again : {2, 1}) {
    const fs::path split = dir_ / ("split" + std::to_string(again));
    const auto first = run_ranks(3, "run " + path + " -q -n 10 -o " + split.string());
    ASSERT_EQ(first.code, 0) << first.output;
    const std::string rest_args = "run " + path + " -q -o " + split.string() + " --restart " +
                                  (split / "checkpoint_00000010.h5").string();
    const auto rest =
        again == 1 ? heatsim_tests::run_heatsim(rest_args) : run_ranks(again, rest_args);
    ASSERT_EQ(rest.code, 0) << rest.output;
    expect_same_run(whole, split, "3 ranks to step 10, then " + std::to_string(again));
  }
}

// bdf2 over ranks: its checkpoints carry the field of the step before, written whole by rank
// 0; a 3-rank run to step 10 continued on 2 ranks equals the serial run, every file bit for
// bit, the checkpoints' step before included.
TEST_F(DecomposedImplicitSplitTest, Bdf2CheckpointsCarryTheStepBeforeAcrossRankCounts) {
  const std::string path = write_case(
      "c.yaml",
      "grid: {dims: 3, n: [17, 15, 13], length: 1.0}\nphysics: {alpha: 1.0, source: 2.0}\n"
      "boundary:\n  all: {type: dirichlet, value: 0.0}\n"
      "  x+: {type: convective, h: 4.0, ambient: 1.0}\n"
      "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}\n"
      "time: {method: bdf2, dt: 0.004, steps: 30}\n"
      "output: {every: 10}\ncheckpoint: {every: 10}\n");
  const fs::path whole = dir_ / "whole", split = dir_ / "split";
  const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
  ASSERT_EQ(s.code, 0) << s.output;
  const auto first = run_ranks(3, "run " + path + " -q -n 10 -o " + split.string());
  ASSERT_EQ(first.code, 0) << first.output;
  const auto rest = run_ranks(2, "run " + path + " -q -o " + split.string() + " --restart " +
                                     (split / "checkpoint_00000010.h5").string());
  ASSERT_EQ(rest.code, 0) << rest.output;
  EXPECT_EQ(rest.output.find("starts again with a backward Euler step"), std::string::npos)
      << rest.output;
  expect_same_run(whole, split, "bdf2: 3 ranks to step 10, then 2");
  for (const char* name :
       {"checkpoint_00000010.h5", "checkpoint_00000020.h5", "checkpoint_00000030.h5"}) {
    const io::FieldFile a = io::read_field_file((whole / name).string());
    const io::FieldFile b = io::read_field_file((split / name).string());
    EXPECT_FALSE(a.previous.empty()) << name;
    EXPECT_TRUE(same_bits(a.previous, b.previous)) << name;
  }
}

}  // namespace
