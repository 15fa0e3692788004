// Runs that fail: one that fails before its first step (whatever validate catches, a solver
// that cannot start) creates no file; one that fails later leaves complete files and a
// failed_run.txt, and the same command then runs again instead of being refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

class FailedRun : public heatsim_tests::ScratchTest {
 protected:
  // The case with output into dir_/out.
  std::string write_case(const std::string& name, const std::string& body) {
    return write_file(name, body + "output: {directory: " + (dir_ / "out").string() + "}\n");
  }

  // A 2D steady case with a source, a probe, and the given faces.
  std::string steady_case(const std::string& name, const std::string& boundary,
                          const std::string& tolerance = "1.0e-10") {
    return write_case(name,
                      "grid: {dims: 2, n: [33, 33], length: [1.0, 1.0]}\n"
                      "materials: {m: {conductivity: 2, density: 1, specific_heat: 1}}\n"
                      "regions: [{material: m}]\n"
                      "sources: [{power_density: 10}]\n"
                      "boundary: " +
                          boundary +
                          "\n"
                          "initial: {type: constant, value: 0}\n"
                          "time: {method: steady, tolerance: " +
                          tolerance +
                          "}\n"
                          "probes: {points: {centre: [0.5, 0.5]}}\n");
  }
};

// The issue's case: every face insulated. validate refuses it, and run refuses it the same way
// before creating the directory, materials.h5 or probes.csv; corrected, the same command runs.
TEST_F(FailedRun, SteadyWithoutAFixedFaceIsRefusedWithNothingWritten) {
  const std::string c = steady_case("ins.yaml", "{all: {type: neumann, flux: 0}}");
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 2) << v.output;
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(
                "time.method: steady: no face is Dirichlet, convective with h > 0 or radiating"),
            std::string::npos)
      << r.output;
  // At the line of time.method (the case's line 7), as validate says it.
  EXPECT_NE(r.output.find("the sources and boundary fluxes balance exactly); make a face "
                          "dirichlet, convective with h > 0 or radiative, or run the transient "
                          "with backward-euler (line 7)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(v.output.find("with backward-euler (line 7)"), std::string::npos) << v.output;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "refused before anything was written";
  const std::string fixed =
      steady_case("ins.yaml", "{all: {type: neumann, flux: 0}, x-: {type: dirichlet, value: 300}}");
  const Result ok = heatsim("run " + fixed);
  EXPECT_EQ(ok.code, 0) << ok.output;
}

// `dt: auto` with an `end` fits dt to the end, so a restart to a later end has another dt and
// is refused; the refusal gives the checkpoint's dt and the steps that continue the run, and
// those continue it.
TEST_F(FailedRun, ARestartToALaterEndSaysHowToContinue) {
  const std::string head =
      "grid: {dims: 1, n: [51], length: [1.0]}\n"
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "checkpoint: {every: 100}\n";
  ASSERT_EQ(heatsim("run -q " + write_case("a.yaml", head + "time: {dt: auto, end: 0.1}\n")).code,
            0);
  const std::string checkpoint = (dir_ / "out" / "checkpoint_00000556.h5").string();
  ASSERT_TRUE(fs::exists(checkpoint));
  const Result later =
      heatsim("run -q " + write_case("b.yaml", head + "time: {dt: auto, end: 0.13}\n") +
              " --restart " + checkpoint);
  EXPECT_EQ(later.code, 2) << later.output;
  const std::regex hint(R"(give time: \{dt: ([0-9.e+-]+), steps: ([0-9]+)\})");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(later.output, m, hint)) << later.output;
  EXPECT_EQ(m[2].str(), "723");  // ceil(0.13 / (0.1 / 556))
  const Result go = heatsim(
      "run -q " +
      write_case("c.yaml", head + "time: {dt: " + m[1].str() + ", steps: " + m[2].str() + "}\n") +
      " --restart " + checkpoint);
  EXPECT_EQ(go.code, 0) << go.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "checkpoint_00000700.h5"));
}

// A checkpoint of another grid cannot continue this case whatever its dt: the refusal names
// the grid and gives no time: {dt, steps} to continue with (which would fail again on the grid).
TEST_F(FailedRun, ACheckpointOfAnotherGridGetsNoHintOfDt) {
  const std::string tail =
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "checkpoint: {every: 100}\n"
      "time: {dt: auto, end: 0.1}\n";
  ASSERT_EQ(
      heatsim("run -q " + write_case("a.yaml", "grid: {dims: 1, n: [51], length: [1.0]}\n" + tail))
          .code,
      0);
  const std::string checkpoint = (dir_ / "out" / "checkpoint_00000556.h5").string();
  ASSERT_TRUE(fs::exists(checkpoint));
  const Result other =
      heatsim("run -q -o " + (dir_ / "other").string() + " " +
              write_case("b.yaml", "grid: {dims: 2, n: [21, 21], length: [1.0, 1.0]}\n" + tail) +
              " --restart " + checkpoint);
  EXPECT_EQ(other.code, 2) << other.output;
  EXPECT_NE(other.output.find("does not match the case: grid.dims: checkpoint 1, case 2"),
            std::string::npos)
      << other.output;
  EXPECT_EQ(other.output.find("give time:"), std::string::npos) << other.output;
  EXPECT_EQ(other.output.find("to continue this run"), std::string::npos) << other.output;
}

// `dt: auto` follows the material: a restart that changes it (on purpose) has another dt and
// is refused, saying why (not blaming `end` or `steps`) and how to continue; the continued run
// then warns of the material's change alone, not of its dt.
TEST_F(FailedRun, ARestartWithAChangedMaterialSaysDtAutoFollowsIt) {
  const std::string tail =
      "grid: {dims: 1, n: [51], length: [1.0]}\n"
      "regions: [{material: m}]\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "checkpoint: {every: 100}\n";
  ASSERT_EQ(heatsim("run -q " +
                    write_case("a.yaml",
                               "materials: {m: {conductivity: 1, density: 1, specific_heat: 1}}\n" +
                                   tail + "time: {dt: auto, steps: 300}\n"))
                .code,
            0);
  const std::string checkpoint = (dir_ / "out" / "checkpoint_00000200.h5").string();
  ASSERT_TRUE(fs::exists(checkpoint));
  const Result changed = heatsim(
      "run -q " +
      write_case("b.yaml", "materials: {m: {conductivity: 0.8, density: 1, specific_heat: 1}}\n" +
                               tail + "time: {dt: auto, steps: 400}\n") +
      " --restart " + checkpoint);
  EXPECT_EQ(changed.code, 2) << changed.output;
  EXPECT_NE(changed.output.find("dt: auto follows the materials"), std::string::npos)
      << changed.output;
  EXPECT_EQ(changed.output.find("time.end"), std::string::npos) << changed.output;
  const std::regex hint(R"(give time: \{dt: ([0-9.e+-]+), steps: ([0-9]+)\})");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(changed.output, m, hint)) << changed.output;
  EXPECT_EQ(m[2].str(), "400");
  const Result go =
      heatsim("run " +
              write_case("c.yaml",
                         "materials: {m: {conductivity: 0.8, density: 1, specific_heat: 1}}\n" +
                             tail + "time: {dt: " + m[1].str() + ", steps: " + m[2].str() + "}\n") +
              " --restart " + checkpoint + " -o " + (dir_ / "branch").string());
  EXPECT_EQ(go.code, 0) << go.output;
  EXPECT_NE(go.output.find("materials.m.conductivity: 1 -> 0.8"), std::string::npos) << go.output;
  EXPECT_EQ(go.output.find("time.dt"), std::string::npos) << go.output;
}

// Every face convective with h = 0 is insulated too: the message says so, naming the faces.
TEST_F(FailedRun, ConvectiveFacesWithHZeroAreNamedAsInsulated) {
  const std::string c = steady_case("h0.yaml", "{all: {type: convective, h: 0, ambient: 300}}");
  const Result r = heatsim("validate " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no face is Dirichlet, convective with h > 0 or radiating (x-, x+, y-, "
                          "y+ are convective with h = 0, which is insulated)"),
            std::string::npos)
      << r.output;
}

// A body that loses its heat by radiation alone has a steady state (a satellite's box in
// space): validate and run take it, and the temperature is the radiative balance's. A square
// of k = 200 W/(m K), 0.1 m, 10 W/m^2 of source over its area in 2D (W/m^3 times the unit
// depth), all four faces radiating with emissivity 0.8 to 4 K: nearly isothermal, so
// eps sigma (T^4 - 4^4) times the perimeter equals the source.
TEST_F(FailedRun, ARadiatingBodyHasASteadyState) {
  const std::string c = write_case(
      "rad.yaml",
      "grid: {dims: 2, n: [33, 33], length: [0.1, 0.1]}\n"
      "materials: {m: {conductivity: 200, density: 2700, specific_heat: 900}}\n"
      "regions: [{material: m}]\n"
      "sources: [{power_density: 1000}]\n"
      "boundary: {all: {type: radiative, emissivity: 0.8, ambient: 4}}\n"
      "initial: {type: constant, value: 250}\n"
      "time: {method: steady}\n"
      "probes: {points: {centre: [0.05, 0.05]}}\n");
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 0) << v.output;
  const Result r = heatsim("run " + c);
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream probes(dir_ / "out" / "probes.csv");
  std::string header, row;
  ASSERT_TRUE(std::getline(probes, header) && std::getline(probes, row)) << r.output;
  const double centre = std::stod(row.substr(row.rfind(',') + 1));
  // 1000 W/m^3 * 0.01 m^2 = 10 W per metre of depth, out through a perimeter of 0.4 m.
  const double sigma = 5.670374419e-8;
  const double balance = std::pow(10.0 / (0.8 * sigma * 0.4) + std::pow(4.0, 4), 0.25);
  EXPECT_NEAR(centre, balance, 0.01 * balance) << r.output;
  EXPECT_GT(centre, balance) << "the centre is the warmest point";

  // Started at the ambient, far below the answer: Newton's first step from 4 K would overshoot
  // by orders of magnitude (then fall a quarter per iteration, past 50 outer iterations); held
  // to doubling, the iterates climb to the same answer in a few.
  fs::remove_all(dir_ / "out");
  std::ifstream in(c);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("value: 250"), 10, "value: 4");
  std::ofstream(c) << text;
  const Result r4 = heatsim("run " + c);
  ASSERT_EQ(r4.code, 0) << r4.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r4.output, m, std::regex(R"(steady state in (\d+) outer)")))
      << r4.output;
  EXPECT_LE(std::stoi(m[1]), 12) << r4.output;
  std::ifstream probes4(dir_ / "out" / "probes.csv");
  ASSERT_TRUE(std::getline(probes4, header) && std::getline(probes4, row)) << r4.output;
  EXPECT_NEAR(std::stod(row.substr(row.rfind(',') + 1)), centre, 1e-6 * centre) << r4.output;
}

// A steady solve that stalls (a tolerance below rounding) ends with exit code 3 and no file:
// the solve comes before the first write.
TEST_F(FailedRun, SteadySolveBelowRoundingEndsOnTheFloorAndWritesItsResult) {
  // A tolerance no fp64 solve can reach ends on the rounding floor, converged and saying so;
  // a solve that fails would be refused before any file (the solve comes first).
  const std::string c =
      steady_case("floor.yaml", "{all: {type: dirichlet, value: 300}}", "1.0e-30");
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("rounding floor"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out"));
}

// The summary itself says when a steady solve ended on the rounding floor above the tolerance
// asked for: under --quiet the solver's info line is left out, and the summary's residual
// alone would read as if the tolerance had been met. A tolerance within reach adds nothing.
TEST_F(FailedRun, QuietSteadySummaryNamesTheFloorAboveTheTolerance) {
  const std::string floor =
      steady_case("floor.yaml", "{all: {type: dirichlet, value: 300}}", "1.0e-30");
  const Result r = heatsim("run --quiet " + floor);
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"(done: steady state in \d+ iterations? to relative residual ([0-9.e+-]+) )"
                 R"(\(from [0-9.e+-]+\), within the rounding floor of fp64 for these values )"
                 R"(\(([0-9.e+-]+)\): the tolerance 1e-30 is out of reach, solve )")))
      << r.output;
  // The residual reached lies above the tolerance and at most at the floor.
  EXPECT_GT(std::stod(m[1]), 1e-30) << r.output;
  EXPECT_LE(std::stod(m[1]), std::stod(m[2])) << r.output;

  const std::string within =
      steady_case("within.yaml", "{all: {type: dirichlet, value: 0}}", "1.0e-6");
  const Result w = heatsim("run --quiet --overwrite " + within);
  ASSERT_EQ(w.code, 0) << w.output;
  EXPECT_TRUE(std::regex_search(
      w.output, std::regex(R"(done: steady state in \d+ iterations? to relative residual )"
                           R"([0-9.e+-]+ \(from [0-9.e+-]+\), solve )")))
      << w.output;
  EXPECT_EQ(w.output.find("rounding floor"), std::string::npos) << w.output;
}

// An explicit run that becomes NaN after writing: its files stay (complete), failed_run.txt
// says why, and the same command runs again (here it fails the same way); the corrected case
// then replaces everything, the mark included.
TEST_F(FailedRun, ARunThatFailedLaterDoesNotBlockTheSameCommand) {
  const std::string grid =
      "grid: {dims: 2, n: [30, 30], length: [1.0, 1.0]}\n"
      "physics: {alpha: 1.0}\n"
      "scheme: order4\n"
      "initial: {type: constant, value: 0}\n"
      "time: {dt: auto, steps: 100}\n";
  const std::string bad =
      write_case("c.yaml", grid + "boundary: {all: {type: dirichlet, value: 1.5e308}}\n");
  Result r = heatsim("run " + bad);
  ASSERT_EQ(r.code, 3) << r.output;
  ASSERT_TRUE(fs::exists(dir_ / "out" / "failed_run.txt"));
  std::ifstream in(dir_ / "out" / "failed_run.txt");
  const std::string mark{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(mark.find("exit code 3"), std::string::npos) << mark;
  EXPECT_NE(mark.find("NaN/Inf"), std::string::npos) << mark;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "field_00000000.h5"));
  for (const auto& e : fs::directory_iterator(dir_ / "out"))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();

  r = heatsim("run " + bad);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_EQ(r.output.find("already holds"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("that failed (failed_run.txt)"), std::string::npos) << r.output;

  const std::string good =
      write_case("c.yaml", grid + "boundary: {all: {type: dirichlet, value: 1}}\n");
  r = heatsim("run " + good);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "failed_run.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "field_00000100.h5"));
  // A finished run is protected again.
  r = heatsim("run " + good);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already holds"), std::string::npos) << r.output;
}

// A run blowing up over several checkpoints before it stops (a source ramped to 1e302 W/m^3
// from t = 6 s, explicit steps, a checkpoint every 5 steps): its newest checkpoint already holds
// 1e300 K, which no mended case continues. The message says what that one holds and names the
// newest whose field is plausible (0 to 1e5 K), before the ramp. The same case restarted from
// there fails again past the checkpoints it writes: its message and mark name the checkpoint
// it restarted from, as they do when it fails before writing any (both named none before).
TEST_F(FailedRun, AFailedRunNamesTheNewestCheckpointWithAPlausibleField) {
  const auto case_with = [&](const std::string& name, int every) {
    return write_case(name,
                      "grid: {dims: 2, n: [21, 21], length: [0.04, 0.04]}\n"
                      "materials: {steel: {conductivity: 15, density: 7900, specific_heat: 500}}\n"
                      "regions: [{material: steel}]\n"
                      "sources:\n"
                      "  - box: {lower: [0.015, 0.015], upper: [0.02, 0.02]}\n"
                      "    power: 500\n"
                      "    schedule: [[0, 1], [6, 1], [7, 1e302]]\n"
                      "boundary: {all: {type: dirichlet, value: 300}}\n"
                      "initial: {type: constant, value: 300}\n"
                      "time: {dt: 0.01, end: 10}\n"
                      "checkpoint: {every: " +
                          std::to_string(every) + "}\n");
  };
  const fs::path out = dir_ / "out";
  const std::string often = case_with("often.yaml", 5);
  const Result r = heatsim("run -q " + often);
  ASSERT_EQ(r.code, 3) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(
          R"(its newest checkpoint, (\S+checkpoint_(\d+)\.h5), already holds temperatures from [0-9.e+]+ to ([0-9.e+]+) K; the newest that does not \(step (\d+)\), (\S+checkpoint_\d+\.h5), holds the field before that: with the case mended, --restart (\S+) continues from there)")))
      << r.output;
  EXPECT_GT(std::stod(m[3].str()), 1e5);
  const long newest = std::stol(m[2].str()), plausible = std::stol(m[4].str());
  EXPECT_LT(plausible, newest);
  EXPECT_EQ(m[5].str(), m[6].str());
  const std::string named = m[5].str();
  const Result inspected = heatsim("inspect " + named);
  std::smatch range;
  ASSERT_TRUE(std::regex_search(inspected.output, range,
                                std::regex(R"(min/max: +([-0-9.e+]+) / ([-0-9.e+]+))")))
      << inspected.output;
  EXPECT_GE(std::stod(range[1].str()), 0.0);
  EXPECT_LE(std::stod(range[2].str()), 1e5);
  std::ifstream in(out / "failed_run.txt");
  const std::string mark{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(mark.find("--restart " + named + " continues from there"), std::string::npos) << mark;
  // An explicit run's checkpoint continues at its dt: the mends that keep it are named, and a
  // smaller dt is not offered as one (a restart refuses another dt).
  EXPECT_NE(r.output.find("(a checkpoint continues at its own dt: mend the sources, materials or "
                          "faces, or take time.method backward-euler or bdf2; a smaller time.dt "
                          "runs the mended case again from its start)"),
            std::string::npos)
      << r.output;

  // Again from there, unmended: it writes checkpoints past the ramp and fails; then with no
  // checkpoint before its failure.
  for (const std::string& c : {often, case_with("rare.yaml", 100000)}) {
    const Result again = heatsim("run -q " + c + " --restart " + named);
    ASSERT_EQ(again.code, 3) << again.output;
    EXPECT_NE(again.output.find("the checkpoint it restarted from, " + named +
                                ", holds the field before that"),
              std::string::npos)
        << again.output;
    std::ifstream in2(out / "failed_run.txt");
    const std::string mark2{std::istreambuf_iterator<char>(in2), {}};
    EXPECT_NE(mark2.find("--restart " + named + " continues from there"), std::string::npos)
        << mark2;
  }
}

// A run that fails after a checkpoint (here the output at step 60 cannot be written: a
// directory holds its name) says which checkpoint continues it and the command, and so does its
// mark; the same command again is refused rather than discarding that checkpoint, and the
// printed command, once the obstacle is gone, finishes the run.
TEST_F(FailedRun, ARunThatFailsAfterACheckpointSaysHowToContinueAndKeepsIt) {
  const std::string out = (dir_ / "out").string();
  const std::string c = write_file("c.yaml",
                                   "grid: {dims: 1, n: [41], length: [1.0]}\n"
                                   "physics: {alpha: 1.0}\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {dt: auto, steps: 100}\n"
                                   "checkpoint: {every: 25}\n"
                                   "output: {directory: " +
                                       out + ", every: 20}\n");
  // Outputs every 20 steps: the file at 60 is the first that cannot be written.
  fs::create_directories(dir_ / "out" / "field_00000060.h5" / "blocking");
  const Result failed = heatsim("run " + c);
  ASSERT_EQ(failed.code, 1) << failed.output;
  const std::string checkpoint = (dir_ / "out" / "checkpoint_00000050.h5").string();
  ASSERT_TRUE(fs::exists(checkpoint)) << failed.output;
  EXPECT_NE(failed.output.find("its newest checkpoint, " + checkpoint), std::string::npos)
      << failed.output;
  const std::string command = "--restart " + checkpoint;
  EXPECT_NE(failed.output.find("continue with: "), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find(command), std::string::npos) << failed.output;
  std::ifstream in(dir_ / "out" / "failed_run.txt");
  const std::string mark{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(mark.find("(--restart " + checkpoint + ")"), std::string::npos) << mark;

  const Result again = heatsim("run " + c);
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find("holds a run that failed"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find(command + " continues it"), std::string::npos) << again.output;
  EXPECT_TRUE(fs::exists(checkpoint));

  fs::remove_all(dir_ / "out" / "field_00000060.h5");
  const Result go = heatsim("run " + c + " " + command);
  EXPECT_EQ(go.code, 0) << go.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "field_00000100.h5"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "failed_run.txt"));
}

// A restart in its checkpoint's directory whose probes.csv or heat_flows.csv header the case
// no longer makes (a probe or a source added) is refused before the directory loses anything:
// the outputs and checkpoints after the restart step stay, materials.h5 is not rewritten, and
// no failed_run.txt is left (exit 2, as for any checkpoint that does not fit).
TEST_F(FailedRun, ARestartWhoseCsvHeadersChangedIsRefusedWithNothingRemoved) {
  const std::string body =
      "grid: {dims: 1, n: [21], length: [1.0]}\n"
      "materials: {m: {conductivity: 1, density: 1, specific_heat: 1}}\n"
      "regions: [{material: m}]\n"
      "SOURCES"
      "boundary: {x-: {type: dirichlet, value: 1}, x+: FACE}\n"
      "initial: {type: constant, value: 0}\n"
      "time: {dt: 0.001, steps: 40}\n"
      "probes: {every: 10, points: {PROBES}}\n"
      "checkpoint: {every: 10}\n";
  const auto make = [&](const std::string& name, const std::string& sources,
                        const std::string& probes,
                        const std::string& face = "{type: convective, h: 2, ambient: 0}") {
    std::string text = body;
    text.replace(text.find("SOURCES"), 7, sources);
    text.replace(text.find("PROBES"), 6, probes);
    text.replace(text.find("FACE"), 4, face);
    return write_file(name, text + "output: {directory: " + (dir_ / "out").string() +
                                ", every: 10, heat_flows: true}\n");
  };
  const std::string first = make("c.yaml", "", "a: [0.5]");
  Result r = heatsim("run " + first);
  ASSERT_EQ(r.code, 0) << r.output;
  // Each file's name with a hash of its bytes.
  const auto contents = [&] {
    std::map<std::string, std::size_t> files;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) {
      std::ifstream in(e.path(), std::ios::binary);
      files[e.path().filename().string()] = std::hash<std::string>{}(
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    }
    return files;
  };
  const auto before = contents();
  ASSERT_TRUE(before.count("checkpoint_00000040.h5"));
  const std::string checkpoint = (dir_ / "out" / "checkpoint_00000020.h5").string();
  // A new probe; the face x+ given a heat flux (the heat flows' column of x+ renamed); a
  // source (which changes materials.h5 too, refused for that first).
  for (const auto& [sources, probes, face, said] :
       {std::tuple<std::string, std::string, std::string, std::string>{
            "", "a: [0.5], b: [0.25]", "{type: convective, h: 2, ambient: 0}",
            "probes.csv: its header"},
        {"", "a: [0.5]", "{type: neumann, heat_flux: 3}", "heat_flows.csv: its header"},
        {"sources: [{power_density: 3}]\n", "a: [0.5]", "{type: convective, h: 2, ambient: 0}",
         "materials.h5 describes those fields"}}) {
    SCOPED_TRACE(said);
    r = heatsim("run " + make("changed.yaml", sources, probes, face) + " --restart " + checkpoint +
                " --overwrite");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
    EXPECT_EQ(contents(), before) << "the directory is as the finished run left it";
  }
  // The same case continues the run (discarding the finished run's files after the step).
  r = heatsim("run " + first + " --restart " + checkpoint + " --overwrite");
  EXPECT_EQ(r.code, 0) << r.output;
}

}  // namespace

namespace {

// Started by an MPI launcher as one of several processes but alone in its world (a build
// without MPI, or another MPI's launcher): refused with exit 2 before any file is written.
// PMI_SIZE is the variable of MPICH's and PMI launchers; Open MPI's own MPI_Init ignores it.
TEST_F(FailedRun, OneOfSeveralProcessesAloneInItsWorldIsRefused) {
  const std::string path = steady_case("launched.yaml", "{all: {type: dirichlet, value: 0}}");
  const Result r = heatsim_tests::run_heatsim_with("PMI_SIZE=2", "run " + path);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("one of 2 processes by an MPI launcher (PMI_SIZE=2)"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // One process of one runs.
  const Result one = heatsim_tests::run_heatsim_with("PMI_SIZE=1", "run " + path);
  EXPECT_EQ(one.code, 0) << one.output;
  EXPECT_TRUE(fs::exists(dir_ / "out"));
}

}  // namespace

namespace {

// A source in the wrong units (W/m^3 read as a thousand times too much, and more) heats the
// field past any solid's melting point: the run ends as asked, and says where to look. The same
// case at a plausible power says nothing of it.
TEST_F(FailedRun, AFieldFarAboveAnySolidsMeltingPointIsWarnedOf) {
  const auto case_with = [&](const std::string& name, const std::string& power) {
    return write_case(name,
                      "grid: {dims: 2, n: [17, 17], length: [0.01, 0.01]}\n"
                      "materials: {steel: {conductivity: 50, density: 7800, specific_heat: 500}}\n"
                      "regions: [{material: steel}]\n"
                      "sources: [{power_density: " +
                          power +
                          "}]\n"
                          "boundary: {all: {type: dirichlet, value: 300}}\n"
                          "initial: {type: constant, value: 300}\n"
                          "time: {end: 0.5}\n");
  };
  const Result hot = heatsim("run " + case_with("hot.yaml", "1.0e300") + " --quiet");
  EXPECT_EQ(hot.code, 0) << hot.output;
  EXPECT_NE(hot.output.find("far above where any solid melts (about 4000 K): check the units of "
                            "the sources"),
            std::string::npos)
      << hot.output;
  const Result fine = heatsim("run " + case_with("fine.yaml", "1.0e6") + " --overwrite --quiet");
  EXPECT_EQ(fine.code, 0) << fine.output;
  EXPECT_EQ(fine.output.find("far above where any solid melts"), std::string::npos) << fine.output;
}

}  // namespace

namespace {

// With materials every temperature is in kelvin, so a field that falls below 0 K is no answer:
// a sink given as a source (a power's sign slipped) or one larger than the faces can feed. A
// steady slab with a uniform sink of q = -1e6 W/m^3 and both faces convective (h = 100 to
// 300 K), L = 0.02 m: the faces sit q L / (2 h) = 100 K below the ambient at 200 K, the middle a
// further q L^2 / (8 k) = 1 K lower; with -1e7 W/m^3 the faces would need -700 K and the
// middle -710 K. The run ends as
// asked, warns of the coldest value, and says nothing of the plausible case.
TEST_F(FailedRun, AFieldBelowAbsoluteZeroIsWarnedOf) {
  const auto case_with = [&](const std::string& name, const std::string& density) {
    return write_case(name,
                      "grid: {dims: 1, n: [21], length: 0.02}\n"
                      "materials: {steel: {conductivity: 50, density: 7800, specific_heat: 500}}\n"
                      "regions: [{material: steel}]\n"
                      "sources: [{power_density: " +
                          density +
                          "}]\n"
                          "boundary: {all: {type: convective, h: 100, ambient: 300}}\n"
                          "initial: {type: constant, value: 300}\n"
                          "time: {method: steady}\n");
  };
  const Result cold = heatsim("run " + case_with("cold.yaml", "-1.0e7") + " --quiet");
  EXPECT_EQ(cold.code, 0) << cold.output;
  // The middle node (exact at the nodes: the profile is a parabola) to three digits.
  EXPECT_NE(cold.output.find("the final field falls to -710 K, below absolute zero"),
            std::string::npos)
      << cold.output;
  const Result fine = heatsim("run " + case_with("fine.yaml", "-1.0e6") + " --overwrite --quiet");
  EXPECT_EQ(fine.code, 0) << fine.output;
  EXPECT_EQ(fine.output.find("below absolute zero"), std::string::npos) << fine.output;
}

// Below 0 K with nothing that takes heat out: a slab at 1000 K between 300 K faces, by
// Crank-Nicolson at 200 s steps (about 2000 explicit limits) swings below 0 K beside the faces.
// The warning blamed a sink the case does not have; it names the method's swings now.
TEST_F(FailedRun, BelowAbsoluteZeroWithoutASinkNamesTheMethod) {
  const std::string path = write_case(
      "ringing.yaml",
      "grid: {dims: 1, n: [51], length: [0.05]}\n"
      "materials: {m: {conductivity: 1.0, density: 1000, specific_heat: 1000}}\n"
      "regions: [{material: m}]\n"
      "boundary: {all: {type: dirichlet, value: 300}}\n"
      "initial: {type: constant, value: 1000}\n"
      "time: {method: crank-nicolson, dt: 200, end: 1000}\n");
  const Result r = heatsim("run " + path + " --quiet");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("below absolute zero, though nothing in the case takes heat out: "
                          "Crank-Nicolson swings"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("a sink (a negative power"), std::string::npos) << r.output;
}

}  // namespace

// A result whose heat balance is off by more than a percent of its largest flow is warned of
// in fp64 too, steady or transient: a copper bar given k = 1e12 cooling through h = 100 faces
// by Crank-Nicolson ended with its storage growing while both faces took heat out (imbalance
// 12 times the largest flow) and no word of it. The same bar at k = 400 balances and is not.
TEST_F(FailedRun, AHeatBalanceOffByMoreThanAPercentIsWarnedOfInFp64) {
  const auto bar = [&](const std::string& name, const std::string& k) {
    return write_file(name,
                      "grid: {dims: 1, n: [11], length: [0.01]}\n"
                      "materials: {cu: {conductivity: " + k +
                          ", density: 8960, specific_heat: 385}}\n"
                          "regions: [{material: cu}]\n"
                          "boundary: {all: {type: convective, h: 100, ambient: 300}}\n"
                          "initial: {type: constant, value: 1000}\n"
                          "time: {method: crank-nicolson, dt: 10, end: 2000}\n"
                          "probes: {every: 10, points: {c: [0.005]}}\n"
                          "output: {heat_flows: true, every: 10, directory: " +
                          (dir_ / "out").string() + "}\n");
  };
  const std::string stiff = bar("stiff.yaml", "1.0e12");
  Result r = heatsim("run " + stiff);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("the last step's heat balance is off by"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("perfect conductor"), std::string::npos) << r.output;
  r = heatsim("run " + bar("copper.yaml", "400") + " --overwrite");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("heat balance is off"), std::string::npos) << r.output;
}
