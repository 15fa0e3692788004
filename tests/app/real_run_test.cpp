// A real problem end to end through the heatsim executable: materials, a scheduled source, a
// convective face and probes. probes.csv holds the values interpolated from the fields at full
// precision, a restart (from a periodic checkpoint after a crash, or from the checkpoint a
// signal wrote) continues it with no row lost or repeated, and materials.h5 is written and
// listed with every step of the XDMF index.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/case_loader.hpp"
#include "io/field_file.hpp"
#include "io/material_output.hpp"
#include "solver/materials.hpp"
#include "solver/probes.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::lines;
using heatsim_tests::read_text;
const auto heatsim = heatsim_tests::run_heatsim;

// The steps of probes.csv's rows, in file order.
std::vector<std::int64_t> row_steps(const std::string& text) {
  std::vector<std::int64_t> steps;
  const std::vector<std::string> all = lines(text);
  for (std::size_t i = 1; i < all.size(); ++i) steps.push_back(std::stoll(all[i]));
  return steps;
}

// Steel beside foam, a heater in the steel switched on and off by a table, air above.
struct Schedule {
  int probes = 7;
  int output = 50;
  int n = 33;  // points along x (two thirds of it along y)
};

std::string plate_case(const fs::path& out, int steps, int checkpoint_every, Schedule every = {}) {
  const int n = every.n;
  const int ny = (n * 2) / 3;
  return "grid: {dims: 2, n: [" + std::to_string(n) + ", " + std::to_string(ny) +
         "], length: [0.032, 0.02]}\n"
         "materials:\n"
         "  steel: {conductivity: 45, density: 7800, specific_heat: 470}\n"
         "  foam: {conductivity: 0.05, density: 40, specific_heat: 1300}\n"
         "regions:\n"
         "  - {material: foam}\n"
         "  - {material: steel, box: {lower: [0, 0], upper: [0.0165, 0.02]}}\n"
         "sources:\n"
         "  - {ball: {center: [0.008, 0.01], radius: 0.003}, power: 2000.0,\n"
         "     schedule: [[0, 0], [0.5, 1], [2, 1], [2.5, 0]]}\n"
         "boundary:\n"
         "  all: {type: neumann, flux: 0}\n"
         "  y+: {type: convective, h: 100, ambient: 290}\n"
         "initial: {type: constant, value: 290}\n"
         "time: {dt: auto, steps: " +
         std::to_string(steps) +
         "}\n"
         "backend: cpu\n"
         "probes: {every: " +
         std::to_string(every.probes) +
         ", points: {hot: [0.008, 0.01], interface: [0.0165, 0.01], "
         "far: [0.03, 0.019]}}\n"
         "output: {directory: " +
         out.string() + ", every: " + std::to_string(every.output) +
         "}\n"
         "checkpoint: {every: " +
         std::to_string(checkpoint_every) + "}\n";
}

class RealRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("real_run"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_case(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  fs::path dir_;
};

TEST_F(RealRun, ProbesAreTheFieldsInterpolatedAndMaterialsAreIndexed) {
  const fs::path out = dir_ / "out";
  const fs::path c = write_case("plate.yaml", plate_case(out, 150, 40));
  const heatsim_tests::ProcessResult r = heatsim("run " + c.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("material steel: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("material foam: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("probes at t = "), std::string::npos) << r.output;

  // Rows at step 0, every 7 steps, and the last step.
  const std::string csv = read_text(out / "probes.csv");
  EXPECT_EQ(lines(csv).at(0), "step,time,hot,interface,far");
  std::vector<std::int64_t> expected;
  for (std::int64_t s = 0; s <= 150; s += 7) expected.push_back(s);
  expected.push_back(150);
  EXPECT_EQ(row_steps(csv), expected);

  // Each row at an output step is the output field interpolated at the points (across the
  // steel-foam interface by the resistances' shares), to the bit.
  const heatsim::io::LoadResult loaded = heatsim::io::load_case_file(c.string());
  ASSERT_TRUE(loaded.ok());
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(*loaded.value);
  const heatsim::solver::ProbeSampler sampler(
      heatsim::solver::probe_stencils(*loaded.value, nullptr, &ids));
  int compared = 0;
  for (const std::string& line : lines(csv)) {
    std::istringstream row(line);
    std::string field;
    std::getline(row, field, ',');
    if (field == "step" || std::stoll(field) % 50 != 0) continue;
    char name[32];
    std::snprintf(name, sizeof name, "field_%08lld.h5", std::stoll(field));
    const std::vector<double> u = heatsim::io::read_field_file((out / name).string()).field;
    std::getline(row, field, ',');  // time
    for (const heatsim::solver::ProbeStencil& s : sampler.stencils()) {
      ASSERT_TRUE(std::getline(row, field, ','));
      EXPECT_EQ(std::strtod(field.c_str(), nullptr), heatsim::solver::interpolate(s, u))
          << s.name << " in " << line;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 2);  // steps 0 and 100 (50 and 150 are no multiple of 7)
  // The heater warms the hot probe; the far corner, behind the foam, barely moves.
  const std::vector<std::string> all = lines(csv);
  std::istringstream last(all.back());
  std::vector<double> v;
  for (std::string f; std::getline(last, f, ',');) v.push_back(std::strtod(f.c_str(), nullptr));
  ASSERT_EQ(v.size(), 5u);
  EXPECT_GT(v[2], 291.0);
  EXPECT_LT(v[4] - 290.0, 0.1 * (v[2] - 290.0));

  // materials.h5: the ids and coefficients of the case, listed with every step of the index.
  const heatsim::io::MaterialFile m =
      heatsim::io::read_material_file((out / heatsim::io::kMaterialFileName).string());
  EXPECT_EQ(m.names, (std::vector<std::string>{"steel", "foam"}));
  EXPECT_EQ(m.material, heatsim::solver::material_ids(*loaded.value));
  std::int64_t steel = 0;
  for (std::size_t i = 0; i < m.material.size(); ++i) {
    steel += m.material[i] == 0;
    EXPECT_EQ(m.conductivity[i], m.material[i] == 0 ? 45.0 : 0.05);
    EXPECT_EQ(m.capacity[i], m.material[i] == 0 ? 7800.0 * 470 : 40.0 * 1300);
  }
  EXPECT_EQ(steel, 17 * 22);  // x <= 0.0165: 17 of the 33 columns, all 22 rows
  double source = 0.0;
  for (double q : m.source_density) source += q;
  EXPECT_GT(source, 0.0);
  const std::string xmf = read_text(out / "field.xmf");
  std::size_t grids = 0, listed = 0;
  for (std::size_t p = 0; (p = xmf.find("<Grid Name=\"step ", p)) != std::string::npos; ++p)
    ++grids;
  for (std::size_t p = 0; (p = xmf.find("materials.h5:/material<", p)) != std::string::npos; ++p)
    ++listed;
  EXPECT_EQ(grids, 4u);  // steps 0, 50, 100 and 150
  EXPECT_EQ(listed, grids);
  for (const char* name : {"conductivity", "capacity", "source_density"})
    EXPECT_NE(xmf.find(std::string("materials.h5:/") + name), std::string::npos) << name;
  const heatsim_tests::ProcessResult inspect =
      heatsim("inspect " + (out / "materials.h5").string());
  EXPECT_EQ(inspect.code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("0 steel: conductivity 45, capacity 3666000, 374 nodes"),
            std::string::npos)
      << inspect.output;
}

TEST_F(RealRun, RestartAfterACrashContinuesProbesExactly) {
  // The uninterrupted run.
  const fs::path whole = dir_ / "whole";
  ASSERT_EQ(heatsim("run -q " + write_case("a.yaml", plate_case(whole, 150, 40)).string()).code, 0);
  // The same run, then a crash after the checkpoint at step 80 (rows past it, half a row at the
  // end); the restart from that checkpoint must give the same file, byte for byte (the run
  // finished, so its files after step 80 go only with --overwrite).
  const fs::path out = dir_ / "out";
  const fs::path c = write_case("b.yaml", plate_case(out, 150, 40));
  ASSERT_EQ(heatsim("run -q " + c.string()).code, 0);
  std::ofstream(out / "probes.csv", std::ios::app) << "157,3.1,290.5";
  const heatsim_tests::ProcessResult r =
      heatsim("run -q " + c.string() + " --restart " + (out / "checkpoint_00000080.h5").string() +
              " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_text(out / "probes.csv"), read_text(whole / "probes.csv"));
  // Restarting at the last step adds nothing.
  ASSERT_EQ(
      heatsim("run -q " + c.string() + " --restart " + (out / "checkpoint_00000150.h5").string())
          .code,
      0);
  EXPECT_EQ(read_text(out / "probes.csv"), read_text(whole / "probes.csv"));
  EXPECT_TRUE(fs::exists(out / "materials.h5"));
}

// `--steps N` on a case that ends at a time (`end`, dt auto) runs the first N steps of that
// case's own run, at its dt: the checkpoint continues the case without --steps to the
// uninterrupted run's files (it was refused: the override had taken 0.9 of the limit as dt).
TEST_F(RealRun, StepsOverrideRunsTheCasesFirstStepsAtItsDt) {
  std::string text = plate_case(dir_ / "whole", 150, 40);
  text.replace(text.find("time: {dt: auto, steps: 150}"), 28, "time: {dt: auto, end: 1.3}");
  const fs::path c = write_case("a.yaml", text);
  const heatsim_tests::ProcessResult whole = heatsim("run -q " + c.string());
  ASSERT_EQ(whole.code, 0) << whole.output;
  const fs::path out = dir_ / "part";
  const heatsim_tests::ProcessResult part =
      heatsim("run -q " + c.string() + " -n 42 -o " + out.string());  // a probe row's step
  ASSERT_EQ(part.code, 0) << part.output;
  const heatsim_tests::ProcessResult rest =
      heatsim("run -q " + c.string() + " -o " + out.string() + " --restart " +
              (out / "checkpoint_00000042.h5").string());
  ASSERT_EQ(rest.code, 0) << rest.output;
  EXPECT_EQ(read_text(out / "probes.csv"), read_text(dir_ / "whole" / "probes.csv"));
  const auto last = [](const std::string& o) {
    const auto at = o.find("final field: ");
    return at == std::string::npos ? std::string() : o.substr(at, o.find('\n', at) - at);
  };
  EXPECT_FALSE(last(whole.output).empty()) << whole.output;
  EXPECT_EQ(last(rest.output), last(whole.output)) << rest.output;
  const heatsim_tests::ProcessResult negative = heatsim("run -q " + c.string() + " -n -3");
  EXPECT_EQ(negative.code, 2) << negative.output;
  EXPECT_NE(negative.output.find("--steps: must be >= 0"), std::string::npos) << negative.output;
  // --progress-seconds 0 is a line at every step (the steps' chunks were growing past one).
  const heatsim_tests::ProcessResult every = heatsim("run " + c.string() + " -o " +
                                                     (dir_ / "every").string() +
                                                     " -n 7 --progress-seconds 0");
  EXPECT_EQ(every.code, 0) << every.output;
  std::size_t lines = 0;
  for (std::size_t at = every.output.find("info: step "); at != std::string::npos;
       at = every.output.find("info: step ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 7u) << every.output;
  // time.steps' limit holds for the override too (validate checks the same).
  const heatsim_tests::ProcessResult many =
      heatsim("validate " + c.string() + " -n 2000000000000000");
  EXPECT_EQ(many.code, 2) << many.output;
  EXPECT_NE(many.output.find("--steps: must be at most 1e15"), std::string::npos) << many.output;
  // Every override's problem at once (the first alone before).
  const heatsim_tests::ProcessResult both =
      heatsim("validate " + c.string() + " -n -3 --precision fp16");
  EXPECT_EQ(both.code, 2) << both.output;
  EXPECT_NE(both.output.find("2 problems"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("--precision: must be fp64 or fp32, not 'fp16'"), std::string::npos)
      << both.output;
  // An empty -o is the override's problem, not output.directory's at the case's line.
  const heatsim_tests::ProcessResult empty = heatsim("validate " + c.string() + " -o ''");
  EXPECT_EQ(empty.code, 2) << empty.output;
  EXPECT_NE(empty.output.find("--output-dir: must not be empty"), std::string::npos)
      << empty.output;
  EXPECT_EQ(empty.output.find("output.directory"), std::string::npos) << empty.output;
}

TEST_F(RealRun, RestartFromASignalsCheckpointContinuesProbesExactly) {
  // Long enough that SIGINT lands mid-run: the signal comes once the first checkpoint is
  // there. The loop checks for it where it stopped to fire something: at a checkpoint step
  // (every 300) or a probe row (every 1000), so mostly between two rows, where the probes must
  // write no row (the uninterrupted run has none there).
  const int steps = 20000;
  const Schedule every{1000, 0, 65};
  const fs::path whole = dir_ / "whole";
  ASSERT_EQ(
      heatsim("run -q " + write_case("a.yaml", plate_case(whole, steps, 300, every)).string()).code,
      0);
  const fs::path out = dir_ / "out";
  const fs::path c = write_case("b.yaml", plate_case(out, steps, 300, every));
  const heatsim_tests::StoppedRun stopped =
      heatsim_tests::stop_run_when(c.string(), out, out / "checkpoint_00000300.h5");
  if (stopped.code == 0) GTEST_SKIP() << "the run finished before the signal arrived";
  ASSERT_EQ(stopped.code, 130);
  // The checkpoint the signal wrote: the newest one.
  const fs::path newest = stopped.newest;
  ASSERT_FALSE(newest.empty());
  const heatsim_tests::ProcessResult r =
      heatsim("run -q " + c.string() + " --restart " + newest.string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string a = read_text(whole / "probes.csv"), b = read_text(out / "probes.csv");
  EXPECT_EQ(row_steps(b), row_steps(a)) << "restarted from " << newest;
  EXPECT_EQ(b, a);
}

TEST_F(RealRun, ValidateNamesTheLimitingNodeAndListsMaterialsSourcesAndProbes) {
  const fs::path c = write_case("plate.yaml", plate_case(dir_ / "out", 150, 40));
  const heatsim_tests::ProcessResult r = heatsim("validate " + c.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("stability limit set by the node at x = "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(steel)"), std::string::npos) << r.output;  // k/C is largest there
  EXPECT_NE(r.output.find("steel: conductivity 45, capacity 3.666e+06"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("374 nodes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("field 0: 2000 W/m (per metre of depth) at factor 1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("face y+: convective, h 100, ambient 290"), std::string::npos)
      << r.output;
  // Every face is named, not the convective ones alone.
  for (const char* face : {"x-", "x+", "y-"})
    EXPECT_NE(r.output.find(std::string("face ") + face + ": insulated (no heat crosses it)"),
              std::string::npos)
        << r.output;
  const fs::path fixed =
      write_case("fixed.yaml",
                 std::regex_replace(plate_case(dir_ / "out", 150, 40),
                                    std::regex("  all: \\{type: neumann, flux: 0\\}"),
                                    "  all: {type: dirichlet, value: 285}\n  x-: {type: periodic}\n"
                                    "  x+: {type: periodic}"));
  const heatsim_tests::ProcessResult f = heatsim("validate " + fixed.string());
  ASSERT_EQ(f.code, 0) << f.output;
  EXPECT_NE(f.output.find("face y-: fixed temperature 285"), std::string::npos) << f.output;
  EXPECT_NE(f.output.find("face x+: periodic (wraps to x-)"), std::string::npos) << f.output;
  EXPECT_NE(r.output.find("interface at (0.0165, 0.01)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));  // validate writes nothing
}

TEST_F(RealRun, ProbeOutsideTheDomainIsRefusedByName) {
  std::string text = plate_case(dir_ / "out", 10, 0);
  text.replace(text.find("far: [0.03, 0.019]"), 18, "far: [0.03, 0.021]");
  const heatsim_tests::ProcessResult r = heatsim("run " + write_case("c.yaml", text).string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("probes.points.far"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "probes.csv"));
}

}  // namespace
