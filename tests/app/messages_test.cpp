// What heatsim says, checked where a new user found it wrong: the exit codes in --help, a tab
// in the indentation named, inspect's alpha and spacing, a power's unit per dimension, plurals,
// inspect's min/max without voids and its exit code, a shortened dt, a steady state's outer
// iterations.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

using Messages = heatsim_tests::ScratchTest;

TEST_F(Messages, HelpSaysExitCode3CoversASolveThatStoppedConverging) {
  const Result r = heatsim("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("3 the field became NaN/Inf or an implicit or steady solve stopped\n"
                          "converging"),
            std::string::npos)
      << r.output;
}

TEST_F(Messages, ATabInTheIndentationIsNamed) {
  const std::string c = write_file("tab.yaml",
                                   "grid:\n"
                                   "  dims: 1\n"
                                   "\tn: [10]\n");
  const Result r = heatsim("validate " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("line 3 is indented with a tab, and YAML indents with spaces only"),
            std::string::npos)
      << r.output;
}

// A case with materials: inspect does not show physics.alpha as if the run used it, and the
// spacing reads as the case gave it (0.00025, not 0.00025000000000000001).
TEST_F(Messages, InspectShowsNoAlphaForMaterialsAndTheShortestSpacing) {
  const std::string c =
      write_file("m.yaml",
                 "grid: {dims: 1, n: [4001], length: [1.0]}\n"
                 "materials: {a: {conductivity: 2, density: 3, specific_heat: 4}}\n"
                 "regions: [{material: a}]\n"
                 "boundary: {all: {type: dirichlet, value: 0}}\n"
                 "initial: {type: constant, value: 1}\n"
                 "time: {dt: auto, steps: 2}\n"
                 "output: {directory: " +
                     (dir_ / "out").string() + "}\n");
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  const Result r = heatsim("inspect " + (dir_ / "out" / "field_00000002.h5").string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("spacing:    0.00025\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("alpha:      not used: the case has materials"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("alpha:      1\n"), std::string::npos) << r.output;
}

// A power is W in 3D, W/m in 2D (per metre of depth), W/m^2 in 1D, in the source's line and
// in its field's.
TEST_F(Messages, APowerStatesItsUnitForTheDimension) {
  const char* grids[] = {"grid: {dims: 1, n: [41], length: [1.0]}\n",
                         "grid: {dims: 2, n: [21, 21], length: [1.0, 1.0]}\n",
                         "grid: {dims: 3, n: [9, 9, 9], length: [1.0, 1.0, 1.0]}\n"};
  const char* units[] = {"W/m^2 (per m^2 of cross-section)", "W/m (per metre of depth)", "W"};
  for (int d = 0; d < 3; ++d) {
    const std::string c =
        write_file("p.yaml", std::string(grids[d]) +
                                 "materials: {a: {conductivity: 1, density: 1, specific_heat: 1}}\n"
                                 "regions: [{material: a}]\n"
                                 "sources: [{power: 100}]\n"
                                 "boundary: {all: {type: dirichlet, value: 0}}\n"
                                 "initial: {type: constant, value: 0}\n"
                                 "time: {dt: auto, steps: 2}\n");
    const Result r = heatsim("validate " + c);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("power 100 ") + units[d] + ", constant"), std::string::npos)
        << r.output;
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex(std::string(R"(field 0: 100 )") +
                             std::regex_replace(units[d], std::regex(R"([()^])"), R"(\$&)") +
                             " at factor 1")))
        << r.output;
  }
}

// One output file is "1 output file" (a grid of 2^34 points and no steps: the output at step 0
// alone; refused for the disk here unless this disk has 256 GiB free).
TEST_F(Messages, OneOutputFileIsSingular) {
  const std::string c = write_file("big.yaml",
                                   "grid: {dims: 3, n: [4096, 2048, 2048], length: [1, 1, 1]}\n"
                                   "physics: {alpha: 1.0}\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {dt: auto, steps: 0}\n"
                                   "backend: cpu\n"
                                   "output: {directory: " +
                                       (dir_ / "out").string() + "}\n");
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  if (r.output.find("not enough disk space") == std::string::npos)
    GTEST_SKIP() << "this disk holds 384 GiB";
  EXPECT_NE(r.output.find(": 1 output file and 1 checkpoint at once need"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// The min/max of inspect leaves a void's nodes out, as the run's statistics do (it counted
// their frozen initial value); materials.h5 names -2 "void". Without materials.h5 beside the
// file, inspect says it cannot tell.
TEST_F(Messages, InspectLeavesVoidNodesOutAndNamesTheVoidId) {
  const std::string c =
      write_file("void.yaml",
                 "grid: {dims: 2, n: [21, 11], length: [0.02, 0.01]}\n"
                 "materials: {al: {conductivity: 237, density: 2700, specific_heat: 900}}\n"
                 "regions:\n"
                 "  - {material: al}\n"
                 "  - {void: true, box: {lower: [0.005, 0.005], upper: [0.015, 0.01]}}\n"
                 "sources: [{box: {lower: [0.008, 0], upper: [0.012, 0.002]}, power: 100}]\n"
                 "boundary: {all: {type: convective, h: 25, ambient: 300}}\n"
                 "initial: {type: constant, value: 280}\n"
                 "time: {method: backward-euler, dt: 5, steps: 2}\n"
                 "output: {directory: " +
                     (dir_ / "out").string() + "}\n");
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  const std::string field = (dir_ / "out" / "field_00000002.h5").string();
  const Result r = heatsim("inspect " + field);
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(
          R"(min/max:    ([0-9.]+) / ([0-9.]+) \(the body's nodes: (\d+) void nodes left out)")))
      << r.output;
  EXPECT_GT(std::stod(m[1]), 280.0) << r.output;  // the voids' 280 is not the minimum
  const Result materials = heatsim("inspect " + (dir_ / "out" / "materials.h5").string());
  ASSERT_EQ(materials.code, 0) << materials.output;
  EXPECT_NE(materials.output.find("  -2 (void): "), std::string::npos) << materials.output;
  EXPECT_EQ(materials.output.find("(no name)"), std::string::npos) << materials.output;

  fs::create_directories(dir_ / "alone");
  fs::copy_file(field, dir_ / "alone" / "field.h5");
  const Result alone = heatsim("inspect " + (dir_ / "alone" / "field.h5").string());
  ASSERT_EQ(alone.code, 0) << alone.output;
  EXPECT_TRUE(std::regex_search(
      alone.output, std::regex(R"(min/max:    280 / [0-9.]+ \(every node, void nodes included)")))
      << alone.output;
}

// A file inspect cannot read is a bad input (exit code 2), not a runtime failure.
TEST_F(Messages, InspectOfAFileItCannotReadExitsWith2) {
  const std::string csv = write_file("probes.csv", "step,time,a\n0,0,1\n");
  const Result r = heatsim("inspect " + csv);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("probes.csv"), std::string::npos) << r.output;
  EXPECT_EQ(heatsim("inspect " + (dir_ / "missing.h5").string()).code, 2);
}

// A given dt shortened so that the last step lands on time.end says both.
TEST_F(Messages, ValidateSaysAGivenDtWasShortenedToLandOnEnd) {
  const std::string given =
      "grid: {dims: 1, n: [21], length: [1.0]}\n"
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "time: {method: backward-euler, dt: 7, end: 50}\n";
  const Result r = heatsim("validate " + write_file("dt.yaml", given));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("dt: 6.25 (given 7, shortened to land on end)"), std::string::npos)
      << r.output;
  std::string text = given;
  text.replace(text.find("dt: 7"), 5, "dt: 5");
  const Result exact = heatsim("validate " + write_file("dt5.yaml", text));
  ASSERT_EQ(exact.code, 0) << exact.output;
  EXPECT_NE(exact.output.find("dt: 5 (given) ="), std::string::npos) << exact.output;
  // The run's log says it as validate does, not "from the case".
  const Result ran = heatsim("run " + write_file("dt_run.yaml", given) + " -o " +
                             (dir_ / "dt_run").string());
  ASSERT_EQ(ran.code, 0) << ran.output;
  EXPECT_NE(ran.output.find("dt 6.25 (given 7, shortened to land on end;"), std::string::npos)
      << ran.output;
}

// validate's summary gives the grid's extent and spacing, in metres with materials: a case
// written in millimetres (length 100 for 0.1 m) shows it there.
TEST_F(Messages, ValidateGivesTheGridsExtentAndSpacing) {
  const Result r = heatsim("validate " + write_file("mm.yaml",
                                                    "grid: {dims: 2, n: [101, 51], length: [100, 50]}\n"
                                                    "materials:\n"
                                                    "  al: {conductivity: 200, density: 2700, specific_heat: 900}\n"
                                                    "regions: [{material: al}]\n"
                                                    "boundary: {all: {type: insulated}, x-: {type: dirichlet, value: 300}}\n"
                                                    "initial: {type: constant, value: 300}\n"
                                                    "time: {method: steady}\n"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("grid: 2D, 5151 points, 100 x 50 m, spacing 1 x 1 m"), std::string::npos)
      << r.output;
}

// An option the command does not take: another command's option is named as such, a near
// miss of its own gets the name it meant (the parser said "arguments were not expected").
TEST_F(Messages, AnOptionOfAnotherCommandOrANearMissIsNamed) {
  const std::string path = write_file("ok.yaml",
                                      "grid: {dims: 1, n: [21], length: [1.0]}\n"
                                      "physics: {alpha: 1.0}\n"
                                      "boundary: {all: {type: dirichlet, value: 0}}\n"
                                      "initial: {type: constant, value: 1}\n"
                                      "time: {steps: 2}\n");
  const Result restart = heatsim("validate " + path + " --restart foo.h5");
  EXPECT_EQ(restart.code, 2) << restart.output;
  EXPECT_NE(restart.output.find("heatsim validate does not take --restart, an option of heatsim run"),
            std::string::npos)
      << restart.output;
  const Result output = heatsim("run " + path + " --output " + (dir_ / "x").string());
  EXPECT_EQ(output.code, 2) << output.output;
  EXPECT_NE(output.output.find("unknown option --output (did you mean '--output-dir'?)"),
            std::string::npos)
      << output.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
}

// An initial expression that is not finite at a node the case's checks do not sample (they
// take the first, middle and last nodes) is refused by the run, at the key's line.
TEST_F(Messages, ARunRefusesANonFiniteInitialExpressionAtItsLine) {
  const std::string text =
      "grid: {dims: 2, n: [21, 21], length: [0.1, 0.1]}\n"
      "physics: {alpha: 1.0e-4}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: expression, value: \"1/(x-0.045)\"}\n"
      "time: {dt: 0.01, end: 0.02}\n";
  const Result r = heatsim("run " + write_file("inf.yaml", text) + " -o " +
                           (dir_ / "inf").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("initial.value: the expression is inf at node (9, 1)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(every node must be finite) (line 4)"), std::string::npos)
      << r.output;
}

// initial: {type: constant} alone is the documented default 0; validate's summary says that the
// case left the value out, and says nothing of a value the case wrote.
TEST_F(Messages, ValidateSaysAConstantInitialWithoutValueIsTheDefault) {
  const std::string text =
      "grid: {dims: 1, n: [21], length: [1.0]}\n"
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 1}}\n"
      "initial: {type: constant}\n"
      "time: {steps: 5}\n";
  const Result r = heatsim("validate " + write_file("initial.yaml", text));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("  initial: constant 0 (initial.value not given: 0 by default)\n"),
            std::string::npos)
      << r.output;
  std::string given = text;
  given.replace(given.find("{type: constant}"), 16, "{type: constant, value: 0}");
  const Result written = heatsim("validate " + write_file("initial0.yaml", given));
  ASSERT_EQ(written.code, 0) << written.output;
  EXPECT_NE(written.output.find("  initial: constant 0\n"), std::string::npos) << written.output;
}

// A steady state with outer iterations says that they converged, and what its last linear
// solve's residual is relative to (it read as not converged: "the last to relative residual
// 4.26e-07").
TEST_F(Messages, ASteadyStateWithOuterIterationsSaysItConverged) {
  const std::string c =
      write_file("rad.yaml",
                 "grid: {dims: 2, n: [21, 11], length: [0.02, 0.01]}\n"
                 "materials: {al: {conductivity: 237, density: 2700, specific_heat: 900}}\n"
                 "regions: [{material: al}]\n"
                 "sources: [{box: {lower: [0.008, 0], upper: [0.012, 0.002]}, power: 100}]\n"
                 "boundary: {all: {type: radiative, emissivity: 0.8, ambient: 300}}\n"
                 "initial: {type: constant, value: 300}\n"
                 "time: {method: steady}\n"
                 "output: {directory: " +
                     (dir_ / "out").string() + "}\n");
  const Result r = heatsim("run " + c);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output,
      std::regex(
          R"(done: steady state in \d+ outer iterations \(\d+ multigrid iterations\), converged: the last changed no node by more than 1e-10 of the largest temperature, and its linear solve (ended at [0-9.e+-]+ of its right-hand side|needed no iteration: it started within fp64's rounding floor))")))
      << r.output;
  EXPECT_EQ(r.output.find("the last to relative residual"), std::string::npos) << r.output;
}

}  // namespace
