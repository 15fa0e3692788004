// Implicit and steady runs under mpirun against the serial run: the multigrid's finest level
// and the levels below it that are large enough split over the ranks, the rest on rank 0
// (solver/parallel/decomposed_level_ops.hpp).
// With x whole on every rank (the default decomposition) every output, checkpoint and probe row
// is the serial run's bit for bit, and so are the iteration counts; with x split the fields
// agree to the solver's tolerance and the counts within one. Restarts across rank counts, bdf2's
// too.
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
      {"steady_ball_3d",
       "grid: {dims: 3, n: [23, 21, 19], length: [0.05, 0.05, 0.05]}\n"
       "materials:\n  epoxy: {conductivity: 0.2, density: 1200, specific_heat: 1100}\n"
       "  copper: {conductivity: 390, density: 8960, specific_heat: 385}\n"
       "regions:\n  - {material: epoxy}\n"
       "  - {material: copper, ball: {center: [0.025, 0.025, 0.025], radius: 0.015}}\n"
       "sources:\n  - {ball: {center: [0.025, 0.025, 0.025], radius: 0.015}, power: 5.0}\n"
       "boundary:\n  all: {type: convective, h: 25, ambient: 300}\n"
       "  z-: {type: dirichlet, value: 310}\n"
       "initial: {type: constant, value: 300}\ntime: {method: steady}\n"},
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

// The multigrid iterations of every solve the log reports ("converged in 7 iterations"), in
// order.
std::vector<int> iterations(const std::string& log) {
  std::vector<int> counts;
  static const std::regex pattern("converged in ([0-9]+) iteration");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern);
       it != std::sregex_iterator(); ++it)
    counts.push_back(std::stoi((*it)[1]));
  return counts;
}

TEST_P(DecomposedImplicitTest, EqualsTheSerialRunBitForBit) {
  const int ranks = GetParam();
  for (const Case& c : cases()) {
    const bool steady = c.yaml.find("method: steady") != std::string::npos;
    const std::string out = steady ? "" : "output: {every: 10}\ncheckpoint: {every: 20}\n";
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + out);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const fs::path split = dir_ / (std::string(c.name) + "_np" + std::to_string(ranks));
    // Every solve logged (progress every 0 s), so that the iteration counts can be compared.
    const auto s =
        heatsim_tests::run_heatsim("run " + path + " --progress-seconds 0 -o " + serial.string());
    ASSERT_EQ(s.code, 0) << c.name << "\n" << s.output;
    const auto p = run_ranks(ranks, "run " + path + " --progress-seconds 0 -o " + split.string());
    ASSERT_EQ(p.code, 0) << c.name << " on " << ranks << " ranks\n" << p.output;
    expect_same_run(serial, split, std::string(c.name) + " on " + std::to_string(ranks) + " ranks");
    const std::vector<int> want = iterations(s.output);
    EXPECT_FALSE(want.empty()) << c.name << "\n" << s.output;
    EXPECT_EQ(want, iterations(p.output)) << c.name << " on " << ranks << " ranks\n" << p.output;
    if (ranks > 1) {
      EXPECT_NE(p.output.find(" split (one layer exchanged)"), std::string::npos) << p.output;
      if (std::string(c.name) == "steady_ball_3d") {
        EXPECT_NE(p.output.find("finest levels split"), std::string::npos) << p.output;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DecomposedImplicitTest, ::testing::Values(1, 2, 3, 4));

class DecomposedImplicitSplitTest : public DecomposedImplicitTest {};

// Rows split along x: the dot products add a row's parts in x order, so the solve is another
// rounding of the same one: the field to the tolerance's accuracy, the iterations within one.
TEST_F(DecomposedImplicitSplitTest, RowsSplitAlongXAgreeToTheTolerance) {
  for (const Case& c : {cases()[0], cases()[1]}) {
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const auto s =
        heatsim_tests::run_heatsim("run " + path + " --progress-seconds 0 -o " + serial.string());
    ASSERT_EQ(s.code, 0) << s.output;
    const io::FieldFile want = io::read_field_file((serial / "field_00000000.h5").string());
    const double lo = *std::min_element(want.field.begin(), want.field.end());
    const double hi = *std::max_element(want.field.begin(), want.field.end());
    const bool three = c.yaml.find("dims: 3") != std::string::npos;
    for (int ranks : {2, 4}) {
      const std::string split =
          std::string(ranks == 2 ? "[2, 1" : "[2, 2") + (three ? ", 1]" : "]");
      const std::string split_path = write_case(
          std::string(c.name) + "_x.yaml", c.yaml + "parallel: {decomposition: " + split + "}\n");
      const fs::path out = dir_ / (std::string(c.name) + "_x" + std::to_string(ranks));
      const auto p =
          run_ranks(ranks, "run " + split_path + " --progress-seconds 0 -o " + out.string());
      ASSERT_EQ(p.code, 0) << c.name << " " << split << "\n" << p.output;
      const io::FieldFile got = io::read_field_file((out / "field_00000000.h5").string());
      ASSERT_EQ(got.field.size(), want.field.size());
      double largest = 0.0;
      for (std::size_t i = 0; i < want.field.size(); ++i)
        largest = std::max(largest, std::abs(got.field[i] - want.field[i]));
      // The rise over the lowest temperature is known to about 1e-8 of itself at a relative
      // residual of 1e-10 on these grids; the split run's rounding differs by far less.
      EXPECT_LE(largest, 1e-7 * (hi - lo)) << c.name << " " << split;
      const std::vector<int> a = iterations(s.output), b = iterations(p.output);
      ASSERT_EQ(a.size(), 1u) << s.output;
      ASSERT_EQ(b.size(), 1u) << p.output;
      EXPECT_LE(std::abs(a[0] - b[0]), 1) << c.name << " " << split;
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
