// The heatsim executable end to end: run, validate, info, exit codes, progress and summary,
// divergence, signals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "io/field_file.hpp"
#include "kernels/registry.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

// The field of a heatsim output file.
std::vector<double> heatsim_io_field(const fs::path& file) {
  return heatsim::io::read_field_file(file.string()).field;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("cli"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_case(const std::string& name, const std::string& body) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << body;
    return p.string();
  }

  std::string small_case(long steps, const std::string& extra = "", int every = 50) {
    return "grid: {dims: 2, n: [40, 30], length: [1.0, 0.75]}\n"
           "physics: {alpha: 1.0}\n"
           "scheme: order2\n"
           "boundary: {all: {type: dirichlet, value: 0}}\n"
           "initial: {type: gaussian, center: [0.5, 0.4], width: 0.1}\n"
           "time: {dt: auto, steps: " +
           std::to_string(steps) + "}\n" + "output: {directory: " + (dir_ / "out").string() +
           ", every: " + std::to_string(every) + "}\n" + extra;
  }

  fs::path dir_;
};

TEST_F(Cli, RunPrintsSettingsProgressAndSummary) {
  const std::string c = write_case("c.yaml", small_case(200));
  const Result r = heatsim(c + " --progress-seconds 0");
  ASSERT_EQ(r.code, 0) << r.output;
  // The backend line names what `auto` took (the CPU here, a CUDA tiling on a GPU machine),
  // and the summary names the same backend.
  std::smatch chosen;
  ASSERT_TRUE(std::regex_search(r.output, chosen, std::regex(R"(info: backend ([a-z-]+))")))
      << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(step \d+/200 .*GStencil/s ETA)")))
      << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex("done: 200 steps .* GStencil/s on " + chosen[1].str() + "\\b")))
      << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "field.xmf"));
}

// An empty --restart (a shell variable left unset) is refused, not taken as no restart: the run
// would start over and replace the files of the run it was meant to continue.
TEST_F(Cli, AnEmptyRestartPathIsRefused) {
  const std::string c = write_case("c.yaml", small_case(20));
  const Result r = heatsim("run " + c + " --restart ''");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--restart: needs a checkpoint file, got an empty path"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << r.output;
}

// A case's warnings (here a material no region uses) are printed by validate and by run,
// and stop neither.
TEST_F(Cli, CaseWarningsArePrintedAndDoNotStopTheRun) {
  const std::string c = write_case(
      "w.yaml",
      "grid: {dims: 1, n: [21], length: [1.0]}\n"
      "materials: {a: {diffusivity: 1.0}, spare: {diffusivity: 2.0}}\n"
      "regions: [{material: a}]\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "time: {dt: auto, steps: 10}\n"
      "output: {directory: " + (dir_ / "out").string() + "}\n");
  for (const std::string command : {"validate ", "run -q "}) {
    const Result r = heatsim(command + c);
    EXPECT_EQ(r.code, 0) << command << r.output;
    EXPECT_NE(r.output.find("materials.spare: is not used by any region (line 2)"),
              std::string::npos)
        << command << r.output;
  }
}

TEST_F(Cli, ExpressionThatIsNotFiniteAtANodeIsRefusedBeforeAnythingIsWritten) {
  // sqrt(y - 0.3) is NaN below y = 0.3, away from the nodes validation samples (y = 0 is a
  // Dirichlet face, y = 0.375 and 0.75 are fine): the run finds it before writing anything.
  std::string text = small_case(20);
  text.replace(text.find("{type: gaussian, center: [0.5, 0.4], width: 0.1}"),
               std::string("{type: gaussian, center: [0.5, 0.4], width: 0.1}").size(),
               "{type: expression, value: \"sqrt(y - 0.3)\"}");
  const std::string c = write_case("c.yaml", text);
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 0) << v.output;
  EXPECT_NE(v.output.find("  initial: expression sqrt(y - 0.3)\n"), std::string::npos) << v.output;
  const Result r = heatsim(c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("initial.value: the expression is nan at node (1, 1)"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // Made finite, the same case runs.
  const std::string ok =
      write_case("ok.yaml", text.replace(text.find("sqrt(y - 0.3)"), 13, "sqrt(abs(y - 0.3))"));
  EXPECT_EQ(heatsim(ok).code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "field.xmf"));
}

TEST_F(Cli, FileInitialConditionStartsFromAnotherRunsOutput) {
  // Run A for 40 steps; run B starts from A's last output and writes it back unchanged as its
  // step 0 (Dirichlet zero nodes are zero in both), then 40 more steps equal A run for 80.
  const std::string a = write_case("a.yaml", small_case(40, "", 40));
  ASSERT_EQ(heatsim(a).code, 0);
  const fs::path a_out = dir_ / "a_out";
  fs::rename(dir_ / "out", a_out);
  std::string b_text = small_case(40, "", 40);
  const std::string gauss = "{type: gaussian, center: [0.5, 0.4], width: 0.1}";
  b_text.replace(b_text.find(gauss), gauss.size(),
                 "{type: file, path: " + (a_out / "field_00000040.h5").string() + "}");
  const std::string b = write_case("b.yaml", b_text);
  const Result r = heatsim(b);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(heatsim_io_field(dir_ / "out" / "field_00000000.h5"),
            heatsim_io_field(a_out / "field_00000040.h5"));
  const std::string c80 = write_case("c.yaml", small_case(80, "", 80));
  const fs::path b_out = dir_ / "b_out";
  fs::rename(dir_ / "out", b_out);
  ASSERT_EQ(heatsim(c80).code, 0);
  EXPECT_EQ(heatsim_io_field(b_out / "field_00000040.h5"),
            heatsim_io_field(dir_ / "out" / "field_00000080.h5"));
  // A file that is not there: validation names the key, the run exits 2 with nothing written.
  fs::remove_all(dir_ / "out");
  const std::string missing = write_case(
      "m.yaml", std::string(b_text).replace(b_text.find("field_00000040.h5"), 17, "nothing.h5"));
  const Result m = heatsim(missing);
  EXPECT_EQ(m.code, 2) << m.output;
  EXPECT_NE(m.output.find("initial.path:"), std::string::npos) << m.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// On the CPU the summary states no bound: a copy timed after the run, beside whatever else the
// machine does, is no measurement (one 2-core machine gave 0.72 to 166 GB/s), and a fraction
// of it once came out at 243%. `heatsim bench` is the place for bounds.
TEST_F(Cli, RunSummaryStatesNoBoundFromAnUnreliableMeasurement) {
  const std::string c = write_case("c.yaml", small_case(200));
  const Result r = heatsim("run " + c + " --backend cpu");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex(R"(done: 200 steps .* [0-9.]+ GStencil/s on cpu\n)")))
      << r.output;
  EXPECT_EQ(r.output.find("% of the"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("GB/s measured"), std::string::npos) << r.output;
}

// validate's disk figure counts what the run writes: output.fields beside the temperature, and
// materials.h5 for a case with materials (both once left out: a third of the bytes here).
TEST_F(Cli, TheDiskEstimateCountsOutputFieldsAndTheMaterialsFile) {
  const fs::path out = dir_ / "out";
  const std::string c = write_case(
      "m.yaml",
      "grid: {dims: 3, n: [40, 40, 40], length: [0.04, 0.04, 0.04]}\n"
      "materials:\n"
      "  al: {conductivity: 200, density: 2700, specific_heat: 900}\n"
      "  cu: {conductivity: 400, density: 8900, specific_heat: 385}\n"
      "regions: [{material: al}, {material: cu, box: {lower: [0, 0, 0], upper: [0.02, 0.04, "
      "0.04]}}]\n"
      "boundary: {all: {type: insulated}, x-: {type: dirichlet, value: 350}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: backward-euler, dt: 0.1, steps: 2}\n"
      "output: {directory: " +
          out.string() + ", every: 1, fields: [temperature, heat_flux, conductivity]}\n");
  Result r = heatsim("validate " + c);
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex(R"(files in .*: about ([0-9.]+) (KiB|MiB) at most: 3 )"
                                           R"(output files of .*, materials.h5 of)")))
      << r.output;
  const double estimate = std::stod(m[1].str()) * (m[2].str() == "MiB" ? 1048576.0 : 1024.0);
  r = heatsim("run -q " + c + " --backend cpu");
  ASSERT_EQ(r.code, 0) << r.output;
  double written = 0.0;
  for (const auto& entry : fs::directory_iterator(out))
    written += static_cast<double>(fs::file_size(entry.path()));
  EXPECT_GT(estimate, 0.95 * written);
  EXPECT_LT(estimate, 1.3 * written);
}

// checkpoint.keep: the run keeps its newest `keep` checkpoints and removes the older ones it
// wrote. A restart keeps the file it continued from and whatever else it did not write, and its
// end is the uninterrupted run's.
TEST_F(Cli, CheckpointKeepRemovesOnlyThisRunsOlderCheckpoints) {
  const fs::path out = dir_ / "out";
  auto checkpoints = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("checkpoint_", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  using Names = std::vector<std::string>;
  // Every 30 steps to 200: 30, 60, ..., 180 and the end; the newest two stay.
  const std::string c = write_case("c.yaml", small_case(200, "checkpoint: {every: 30, keep: 2}\n"));
  // validate counts what lies on the disk at most at once: outputs at 0, 50, ..., 200, and
  // the two kept checkpoints with the next one beside them.
  Result r = heatsim("validate " + c);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output,
      std::regex(
          R"(files in .*/out: about [0-9.]+ KiB at most: 5 output files of [0-9.]+ KiB and 3 checkpoints of [0-9.]+ KiB \(the newest 2 kept\)\n)")))
      << r.output;
  r = heatsim("run " + c + " --backend cpu");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(checkpoints(), (Names{"checkpoint_00000180.h5", "checkpoint_00000200.h5"}));
  const std::vector<double> whole = heatsim_io_field(out / "field_00000200.h5");
  // keep: 0 (the default) keeps every one.
  const std::string all =
      write_case("all.yaml", small_case(200, "checkpoint: {every: 30, keep: 0}\n"));
  r = heatsim("run " + all + " --backend cpu --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(checkpoints().size(), 7u);
  // Restarted from 90 with keep: 1 (--overwrite: discarding the finished run's later files),
  // it writes 120, 150, 180 and 200 and keeps the newest: the earlier run's 30 and 60 and the
  // file it continued from stay.
  const std::string k1 =
      write_case("k1.yaml", small_case(200, "checkpoint: {every: 30, keep: 1}\n"));
  r = heatsim("run " + k1 + " --backend cpu --overwrite --restart " +
              (out / "checkpoint_00000090.h5").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(checkpoints(), (Names{"checkpoint_00000030.h5", "checkpoint_00000060.h5",
                                  "checkpoint_00000090.h5", "checkpoint_00000200.h5"}));
  const std::vector<double> restarted = heatsim_io_field(out / "field_00000200.h5");
  ASSERT_EQ(restarted.size(), 40u * 30u);
  EXPECT_TRUE(restarted == whole) << "the restarted run's last output differs";
  // A run kept at keep: 2 and stopped at step 100, continued in place to 150 and then to its
  // end: each continuation counts the checkpoints its run kept there (not only its own), so
  // the directory holds the newest two at every stop (before, each process kept two and the
  // file it continued from: 90 and 100, then 150, stayed beside the newest). The checkpoints of
  // the keep: 0 run above stay (kept by their own run's setting).
  const fs::path two = dir_ / "two";
  const std::string k2 =
      write_case("k2.yaml", small_case(200, "checkpoint: {every: 30, keep: 2}\n"));
  const auto in_two = [&] {
    Names names;
    for (const auto& entry : fs::directory_iterator(two)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("checkpoint_", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  r = heatsim("run " + k2 + " --backend cpu -o " + two.string() + " --steps 100");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(in_two(), (Names{"checkpoint_00000090.h5", "checkpoint_00000100.h5"}));
  r = heatsim("run " + k2 + " --backend cpu --steps 150 --restart " +
              (two / "checkpoint_00000100.h5").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(in_two(), (Names{"checkpoint_00000120.h5", "checkpoint_00000150.h5"}));
  r = heatsim("run " + k2 + " --backend cpu --restart " +
              (two / "checkpoint_00000150.h5").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(in_two(), (Names{"checkpoint_00000180.h5", "checkpoint_00000200.h5"}));
  EXPECT_TRUE(heatsim_io_field(two / "field_00000200.h5") == whole)
      << "the continued run's last output differs";
  // A negative keep is refused with its line.
  const std::string bad =
      write_case("bad.yaml", small_case(20, "checkpoint:\n  every: 5\n  keep: -1\n"));
  r = heatsim("run " + bad + " --backend cpu");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("checkpoint.keep: must be >= 0 (got -1; 0 keeps every one) (line 10)"),
            std::string::npos)
      << r.output;
}

// The `time:` line after `done:`: where the wall time went. The parts before `total` add up to
// it, which is no more than the process's own wall time; output and checkpoints, written by
// the writer thread, state the bytes of the files they wrote and how much of the writing the
// run did not wait for.
TEST_F(Cli, RunSummaryBreaksTheWallTimeDown) {
  const std::string c = write_case("c.yaml", small_case(200, "checkpoint: {every: 100}\n"));
  const auto start = std::chrono::steady_clock::now();
  const Result r = heatsim("run " + c + " --backend cpu");
  const double process_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  const std::string number = R"(([0-9]+\.[0-9]{3}))";
  const std::string rate = R"( \(([0-9]+\.[0-9]{3}) GB, ([0-9.e+-]+) GB/s\))";
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"(done: 200 steps [^\n]*\ntime: setup )" + number + " s, stepping " + number +
                 " s, files " + number + " s, other " + number + " s; total " + number +
                 " s; output " + number + " s" + rate + ", checkpoints " + number + " s" + rate +
                 "; " + number + " of " + number +
                 R"( s of writing hidden \(([0-9]+)%\)\n)")))
      << r.output;
  const double setup = std::stod(m[1]), stepping = std::stod(m[2]), files = std::stod(m[3]);
  const double other = std::stod(m[4]), total = std::stod(m[5]);
  const double output = std::stod(m[6]), output_gb = std::stod(m[7]);
  const double checkpoints = std::stod(m[9]), checkpoint_gb = std::stod(m[10]);
  const double hidden = std::stod(m[12]), writing = std::stod(m[13]);
  for (double part : {setup, stepping, files, other, output, checkpoints, hidden})
    EXPECT_GE(part, 0.0);
  // Each printed part is rounded to a millisecond: the sum may exceed the total by 2.5 ms.
  EXPECT_LE(setup + stepping + files + other, total + 0.0025) << m[0];
  EXPECT_LE(total, process_seconds) << m[0];
  EXPECT_NEAR(writing, output + checkpoints, 0.0015) << m[0];
  EXPECT_LE(hidden, writing + 0.0005) << m[0];
  // Outputs at steps 0, 50, 100, 150, 200 and checkpoints at 100 and 200, as on the disk.
  double written = 0.0, checkpointed = 0.0;
  for (const auto& entry : fs::directory_iterator(dir_ / "out")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("field_", 0) == 0) written += static_cast<double>(fs::file_size(entry));
    if (name.rfind("checkpoint_", 0) == 0)
      checkpointed += static_cast<double>(fs::file_size(entry));
  }
  EXPECT_GT(written, 5 * 40 * 30 * 8.0);
  EXPECT_NEAR(output_gb, written / 1e9, 0.0005) << m[0];
  EXPECT_NEAR(checkpoint_gb, checkpointed / 1e9, 0.0005) << m[0];
}

TEST_F(Cli, RunSubcommandAndOverrides) {
  const std::string c = write_case("c.yaml", small_case(200));
  const fs::path other = dir_ / "elsewhere";
  const Result r = heatsim("run " + c + " --steps 30 --backend cpu --output-dir " + other.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("done: 30 steps"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(other / "field.xmf"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(Cli, ValidateReportsEveryProblemWithPathAndLine) {
  const std::string c = write_case("bad.yaml",
                                   "grid: {dims: 2, n: [40, 2], length: [1.0, 1.0]}\n"
                                   "physics: {alpah: 1.0}\n"
                                   "scheme: order2\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {dt: auto, steps: 10}\n");
  const Result r = heatsim("validate " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("grid.n[1]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("alpah"), std::string::npos) << r.output;
  // The typo is one problem: the key it names is not also reported missing.
  EXPECT_NE(r.output.find("(did you mean 'alpha'?)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("physics.alpha:"), std::string::npos) << r.output;
  // `run` refuses the same case before doing any work.
  const Result run = heatsim(c);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.output.find("step "), std::string::npos) << run.output;
}

TEST_F(Cli, ValidateGivesTheLargestStableDt) {
  std::string body = small_case(10);
  body.replace(body.find("dt: auto"), 8, "dt: 0.01");
  const Result r = heatsim("validate " + write_case("c.yaml", body));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(time\.dt: .*largest stable dt is [0-9.e-]+)")))
      << r.output;
  const Result ok = heatsim("validate " + write_case("ok.yaml", small_case(10)));
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("largest stable dt"), std::string::npos) << ok.output;
}

// The limit validate's summary and the run's log print is one the case may give: rounded down,
// as the refusal's is. A 16 x 12 grid's limit, 0.001445086..., printed to the nearest as
// 0.00144509, was refused when given ("0.00144509 is unstable ...").
TEST_F(Cli, ThePrintedLargestStableDtIsAccepted) {
  const std::string body =
      "grid: {dims: 2, n: [16, 12]}\n"
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n"
      "time: {steps: 2}\n"
      "output: {directory: " +
      (dir_ / "out").string() + "}\n";
  const Result v = heatsim("validate " + write_case("auto.yaml", body));
  ASSERT_EQ(v.code, 0) << v.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(v.output, m, std::regex(R"(largest stable dt ([0-9.e+-]+))")))
      << v.output;
  const std::string printed = m[1];
  EXPECT_EQ(printed, "0.00144508");
  const Result r = heatsim("run " + write_case("run.yaml", body));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("explicit stability limit " + printed + ")"), std::string::npos)
      << r.output;
  std::string given = body;
  given.replace(given.find("steps: 2"), 8, "steps: 2, dt: " + printed);
  const Result g = heatsim("validate " + write_case("given.yaml", given));
  EXPECT_EQ(g.code, 0) << g.output;
}

// More problems than are listed (200): the first line counts all of them, as the last one
// does ("... and 300 more errors"), not the lines shown.
TEST_F(Cli, ValidateCountsEveryProblemWhenTheListIsCut) {
  std::string extra = "probes:\n  points:\n";
  for (int i = 0; i < 250; ++i) extra += "    p" + std::to_string(i) + ": [5, 5]\n";
  const std::string c = write_case("c.yaml", small_case(10, extra));
  for (const char* command : {"validate ", "run "}) {
    const Result r = heatsim(command + c);
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_NE(r.output.find(c + ": 500 problems:"), std::string::npos)
        << command << r.output.substr(0, 300);
    EXPECT_NE(r.output.find("  ... and 300 more errors"), std::string::npos) << command;
  }
}

TEST_F(Cli, NonFiniteFieldStopsTheRunNamingTheStep) {
  // A boundary value so large that its ghost nodes (2g - u) overflow to Inf on the first step.
  std::string body = small_case(100);
  body.replace(body.find("value: 0}"), 9, "value: 1.5e308}");
  body.replace(body.find("order2"), 6, "order4");  // radius 2: interior nodes read the ghosts
  const Result r = heatsim(write_case("inf.yaml", body));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(NaN/Inf value.* at step \d+)"))) << r.output;
}

// Probe rows are written without a check of the whole field first; a sampled value that is
// not finite writes no row, a warning names its step, and on the CPU, which samples at once,
// the run stops at that step, long before the check interval. (A GPU backend reads its samples
// where the run next waits for the device: Simulation.QueuedSamplesAreCollectedWhereTheLoopWaits.)
TEST_F(Cli, NonFiniteProbeStopsTheRunAtItsRow) {
  std::string body = small_case(
      2000, "probes: {every: 5, points: {edge: [0.0257, 0.4], middle: [0.5, 0.4]}}\n", 1000);
  body.replace(body.find("value: 0}"), 9, "value: 1.5e308}");
  body.replace(body.find("order2"), 6, "order4");
  const Result r = heatsim(write_case("inf.yaml", body) + " --backend cpu");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(NaN/Inf value.* at step 5 )"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(probes: a value that is not finite at step 5 )")))
      << r.output;
  std::ifstream in(dir_ / "out" / "probes.csv");
  ASSERT_TRUE(in.good());
  std::string line, text;
  int rows = 0;
  while (std::getline(in, line)) {
    text += line + "\n";
    rows += !line.empty() && line[0] != '#' && std::isdigit(static_cast<unsigned char>(line[0]));
  }
  EXPECT_EQ(rows, 1) << "the row of step 0 only:\n" << text;
  for (const char* bad : {"inf", "nan", "Inf", "NaN"})
    EXPECT_EQ(text.find(bad), std::string::npos) << text;
}

TEST_F(Cli, UnknownBackendAndMissingFile) {
  const std::string c = write_case("c.yaml", small_case(10));
  Result r = heatsim(c + " --backend warp-drive");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("warp-drive"), std::string::npos) << r.output;
  r = heatsim((dir_ / "missing.yaml").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.yaml"), std::string::npos) << r.output;
}

// A command without its file names the command and what to type, not the parser's "case is
// required"; heatsim alone prints its usage.
TEST_F(Cli, ACommandWithoutItsFileSaysWhatToType) {
  Result r = heatsim("run");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("heatsim run: a case file is required: heatsim run CASE.yaml"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("case is required"), std::string::npos) << r.output;
  r = heatsim("validate --steps 3");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("heatsim validate: a case file is required"), std::string::npos)
      << r.output;
  r = heatsim("inspect");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("heatsim inspect FILE.h5"), std::string::npos) << r.output;
  r = heatsim("");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("Usage: heatsim CASE.yaml"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("A subcommand is required"), std::string::npos) << r.output;
}

// A mistyped command is named as such: `heatsim CASE.yaml` would take it for the case, and the
// parser then blamed the real case ("The following argument was not expected: c.yaml").
TEST_F(Cli, AMistypedCommandIsNamedNotTheCase) {
  const std::string c = write_case("c.yaml", small_case(10));
  Result r = heatsim("valdate " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'valdate' (did you mean 'validate'?)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("not expected"), std::string::npos) << r.output;
  r = heatsim("frobnicate " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'frobnicate'; the commands are run, validate"),
            std::string::npos)
      << r.output;
  r = heatsim("inspct " + (dir_ / "x.h5").string());
  EXPECT_NE(r.output.find("did you mean 'inspect'?"), std::string::npos) << r.output;
  // A case file keeps its meaning, and a missing one its own message.
  r = heatsim(c + " --steps 3 -o " + (dir_ / "o").string());
  EXPECT_EQ(r.code, 0) << r.output;
  r = heatsim((dir_ / "missing").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot open the case file"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// A progress interval that is negative or not a number printed a line at every step, silently.
TEST_F(Cli, ProgressSecondsMustBeANumberOfSecondsAtLeastZero) {
  const std::string c = write_case("c.yaml", small_case(10));
  for (const std::string v : {"-1", "nan", "inf"}) {
    const Result r = heatsim(c + " --progress-seconds " + v);
    EXPECT_EQ(r.code, 2) << v << ": " << r.output;
    EXPECT_NE(r.output.find("--progress-seconds: must be a number of seconds >= 0"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << v;
  }
  EXPECT_EQ(heatsim(c + " --progress-seconds 0.5").code, 0);
}

TEST_F(Cli, InfoVersionHelp) {
  Result r = heatsim("info");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GPU"), std::string::npos) << r.output;
  r = heatsim("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(heatsim \d+\.\d+\.\d+)"))) << r.output;
  r = heatsim("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("validate"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Exit codes"), std::string::npos) << r.output;
  r = heatsim("run");
  EXPECT_EQ(r.code, 2) << r.output;
}

// Without a GPU `bench --tune` has nothing to measure: it says so, exits 1 and writes no
// cache; `auto` runs on cpu and never reads the cache (a corrupt one included).
TEST_F(Cli, BenchTuneWithoutAGpuSaysThereIsNothingToTune) {
  if (!heatsim::kernels::cuda_devices().empty()) GTEST_SKIP() << "a GPU is visible";
  const fs::path cache = dir_ / "tune.json";
  setenv("HEATSIM_TUNE_CACHE", cache.c_str(), 1);
  Result r = heatsim("bench --tune --shape Heat-2D");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no CUDA GPU is visible"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing to tune"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(cache));

  std::ofstream(cache) << "{ not json";
  const std::string c = write_case("c.yaml", small_case(10, "fusion: auto\n"));
  r = heatsim(c + " --overwrite");
  unsetenv("HEATSIM_TUNE_CACHE");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("backend cpu (auto: the first available backend"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("tuning cache"), std::string::npos) << r.output;
}

struct Interrupted {
  int code = -1;                // exit status; -1 when it did not exit normally
  double seconds_after = -1.0;  // from the (first) signal to the end of the process
};

// Starts a long run, waits for its first output (written once the signal handlers are in
// place), sends `signals` (a second one right after the first when two are given) and returns
// the exit status. However slow the machine, no signal is sent before that output is there:
// the wait ends only when it appears, the run ends, or after two minutes (then the run is
// killed and the result says -1).
Interrupted interrupt_run(const fs::path& dir, const std::string& case_path,
                          std::vector<int> signals) {
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(HEATSIM_BINARY, HEATSIM_BINARY, case_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point give_up = Clock::now() + std::chrono::minutes(2);
  int status = 0;
  while (!fs::exists(dir / "out" / "field.xmf")) {
    if (waitpid(pid, &status, WNOHANG) == pid) return {};  // it ended on its own
    if (Clock::now() > give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Clock::time_point sent = Clock::now();
  for (int sig : signals) kill(pid, sig);
  waitpid(pid, &status, 0);
  Interrupted r;
  r.seconds_after = std::chrono::duration<double>(Clock::now() - sent).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool has_checkpoint(const fs::path& out) {
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind("checkpoint_", 0) == 0 &&
        e.path().extension() == ".h5")
      return true;
  return false;
}

TEST_F(Cli, SigintWritesACheckpointAndExits130) {
  const std::string c = write_case("long.yaml", small_case(100000000, "", 0));
  EXPECT_EQ(interrupt_run(dir_, c, {SIGINT}).code, 130);
  EXPECT_TRUE(has_checkpoint(dir_ / "out"));
}

TEST_F(Cli, SigtermWritesACheckpointAndExits143) {
  const std::string c = write_case("long.yaml", small_case(100000000, "", 0));
  EXPECT_EQ(interrupt_run(dir_, c, {SIGTERM}).code, 143);
  EXPECT_TRUE(has_checkpoint(dir_ / "out"));
}

TEST_F(Cli, TooLargeForHostMemoryIsRefusedWithNumbers) {
  const std::string c = write_case("huge.yaml",
                                   "grid: {dims: 3, n: [2048, 2048, 2048], length: [1, 1, 1]}\n"
                                   "physics: {alpha: 1.0}\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {dt: auto, steps: 1}\n"
                                   "backend: cpu\n"
                                   "output: {directory: " + (dir_ / "out").string() + "}\n");
  const Result r = heatsim(c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(not enough host memory: the run needs [0-9.]+ GiB)")))
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "refused before anything was written";
}

TEST_F(Cli, OutputThatCannotFitOnTheDiskIsRefusedWithNumbers) {
  const fs::path mnt = dir_ / "small_disk";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=4m") != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root";
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  // 21 outputs of 200x200 fp64 (320 KB each) plus the final checkpoint: about 7 MB for a 4 MB
  // disk.
  const std::string c = write_case("big.yaml",
                                   "grid: {dims: 2, n: [200, 200], length: [1, 1]}\n"
                                   "physics: {alpha: 1.0}\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {dt: auto, steps: 200}\n"
                                   "output: {directory: " + (mnt / "out").string() +
                                       ", every: 10}\n");
  const Result r = heatsim(c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output,
      std::regex(
          R"(not enough disk space in .*: 21 output files and 1 checkpoint at once need [0-9.]+ MiB, [0-9.]+ MiB is free\n)")))
      << r.output;
  EXPECT_FALSE(fs::exists(mnt / "out")) << "refused before anything was written";
  // Checkpoints every 10 steps are 21 files of 320 KB, kept unless checkpoint.keep says
  // otherwise: refused, with the key named; keeping 2 (3 on disk at once) fits.
  const std::string every10 =
      "time: {dt: auto, steps: 200}\n"
      "output: {directory: " +
      (mnt / "out").string() +
      "}\n"
      "checkpoint: {every: 10";
  const std::string base =
      "grid: {dims: 2, n: [200, 200], length: [1, 1]}\n"
      "physics: {alpha: 1.0}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n" +
      every10;
  const Result all = heatsim(write_case("all.yaml", base + "}\n") + " --backend cpu");
  EXPECT_EQ(all.code, 2) << all.output;
  EXPECT_TRUE(std::regex_search(
      all.output,
      std::regex(
          R"(not enough disk space in .*: 2 output files and 21 checkpoints at once need [0-9.]+ MiB, [0-9.]+ MiB is free \(checkpoint.keep: N keeps only the newest N checkpoints\))")))
      << all.output;
  const Result kept = heatsim(write_case("kept.yaml", base + ", keep: 2}\n") + " --backend cpu");
  EXPECT_EQ(kept.code, 0) << kept.output;
  EXPECT_TRUE(fs::exists(mnt / "out" / "checkpoint_00000190.h5"));
  EXPECT_TRUE(fs::exists(mnt / "out" / "checkpoint_00000200.h5"));
  EXPECT_FALSE(fs::exists(mnt / "out" / "checkpoint_00000180.h5"));
}

// A case whose properties depend on the temperature (a k(T) table, a radiating face) says that
// its implicit steps and steady state iterate on them, and how far; without, one solve.
TEST_F(Cli, ValidateSaysWhenImplicitStepsIterateOnTheProperties) {
  const std::string base =
      "grid: {dims: 2, n: [21, 11], length: [0.1, 0.05]}\n"
      "materials: {steel: {conductivity: [[300, 50], [900, 30]], density: 7800, "
      "specific_heat: 480}}\n"
      "regions: [{material: steel}]\n"
      "boundary: {all: {type: insulated}, x-: {type: dirichlet, value: 900}}\n"
      "initial: {type: constant, value: 300}\n";
  const std::string iterating =
      "iterating on the temperature-dependent properties (at most 50 "
      "outer iterations";
  for (const std::string time : {"{method: bdf2, dt: 1, steps: 5}", "{method: steady}"}) {
    const Result r = heatsim("validate " + write_case("t.yaml", base + "time: " + time + "\n"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find(iterating), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("one multigrid solve per outer iteration to relative residual 1e-10"),
              std::string::npos)
        << r.output;
  }
  std::string constant = base;
  constant.replace(constant.find("[[300, 50], [900, 30]]"), 22, "50");
  const Result r = heatsim(
      "validate " + write_case("c.yaml", constant + "time: {method: bdf2, dt: 1, steps: 5}\n"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find(iterating), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("one multigrid solve per step to relative residual 1e-10"),
            std::string::npos)
      << r.output;
  std::string radiating = constant;
  radiating.replace(radiating.find("x-: {type: dirichlet"), 0,
                    "x+: {type: radiative, emissivity: 0.8, ambient: 300}, ");
  const Result rr = heatsim(
      "validate " + write_case("r.yaml", radiating + "time: {method: backward-euler, dt: 1, "
                                                     "steps: 5}\n"));
  ASSERT_EQ(rr.code, 0) << rr.output;
  EXPECT_NE(rr.output.find(iterating), std::string::npos) << rr.output;
}

// validate states the time method; for implicit steps how dt compares with the explicit
// limit (the same limit validate gives an explicit run of the grid), for steady the tolerance
// and no dt or step count. A steady problem without a steady state, and an implicit method
// with another scheme than order2, are refused as `run` refuses them.
TEST_F(Cli, ValidateStatesTheTimeMethodAndHowDtComparesWithTheExplicitLimit) {
  const std::string explicit_case = small_case(10);
  const Result ex = heatsim("validate " + write_case("explicit.yaml", explicit_case));
  ASSERT_EQ(ex.code, 0) << ex.output;
  EXPECT_NE(ex.output.find("time: explicit"), std::string::npos) << ex.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ex.output, m, std::regex(R"(largest stable dt ([0-9.e+-]+))")))
      << ex.output;
  const double limit = std::stod(m[1]);

  std::string be = explicit_case;
  be.replace(be.find("dt: auto"), 8, "method: backward-euler, dt: 0.05");
  const Result b = heatsim("validate " + write_case("be.yaml", be));
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_TRUE(std::regex_search(
      b.output,
      std::regex(
          R"(time: backward-euler \(first order\), one multigrid solve per step to relative residual 1e-10)")))
      << b.output;
  ASSERT_TRUE(std::regex_search(
      b.output, m,
      std::regex(R"(dt: 0\.05 \(given\) = ([0-9.]+)x the explicit limit ([0-9.e+-]+))")))
      << b.output;
  EXPECT_NEAR(std::stod(m[2]), limit, 1e-5 * limit);
  EXPECT_NEAR(std::stod(m[1]), 0.05 / limit, 0.005 * 0.05 / limit) << b.output;
  EXPECT_GT(std::stod(m[1]), 100.0);
  EXPECT_NE(b.output.find("steps: 10 to t = 0.5"), std::string::npos) << b.output;

  std::string cn = explicit_case;
  cn.replace(cn.find("dt: auto"), 8, "method: crank-nicolson, tolerance: 1.0e-8, dt: 0.05");
  const Result c = heatsim("validate " + write_case("cn.yaml", cn));
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("time: crank-nicolson (second order), one multigrid solve per step to "
                          "relative residual 1e-08"),
            std::string::npos)
      << c.output;
  EXPECT_TRUE(std::regex_search(c.output,
                                std::regex(R"(dt: 0\.05 \(given\) = [0-9.]+x the explicit limit)")))
      << c.output;

  std::string steady = explicit_case;
  steady.replace(steady.find("{dt: auto, steps: 10}"), 21, "{method: steady, tolerance: 1.0e-9}");
  const Result s = heatsim("validate " + write_case("steady.yaml", steady));
  ASSERT_EQ(s.code, 0) << s.output;
  EXPECT_TRUE(std::regex_search(
      s.output,
      std::regex(
          R"(time: steady, one multigrid solve .* to relative residual 1e-09, written as step 0 with attribute steady = 1 \(no time\))")))
      << s.output;
  EXPECT_EQ(s.output.find("dt:"), std::string::npos) << s.output;
  EXPECT_EQ(s.output.find("steps:"), std::string::npos) << s.output;

  std::string floating = steady;
  floating.replace(floating.find("{type: dirichlet, value: 0}"), 27, "{type: neumann, flux: 0}");
  const Result f = heatsim("validate " + write_case("floating.yaml", floating));
  EXPECT_EQ(f.code, 2) << f.output;
  EXPECT_NE(f.output.find("no face is Dirichlet, convective with h > 0 or radiating"),
            std::string::npos)
      << f.output;
  EXPECT_EQ(f.output.find("valid\n"), std::string::npos) << f.output;

  std::string order4 = be;
  order4.replace(order4.find("scheme: order2"), 14, "scheme: order4");
  const Result o = heatsim("validate " + write_case("order4.yaml", order4));
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("backward-euler needs scheme order2, not order4"), std::string::npos)
      << o.output;
}

// Crank-Nicolson multiplies the stiffest mode by (1 - r) / (1 + r) per step, r = dt over the
// explicit limit; below -0.5 (r > 3) a grid-scale disturbance rings for many steps. validate
// and run warn then, with the numbers and what to do; Crank-Nicolson within 3 limits, and
// bdf2 and backward-euler at any dt, get no warning.
// An implicit method with dt left out ran at 0.9 of the explicit limit without a word: a
// multigrid solve for every step the explicit method would take.
TEST_F(Cli, ImplicitMethodWithAnAutoDtWarnsThatItTakesTheExplicitStep) {
  const std::string base =
      "grid: {dims: 2, n: [21, 11], length: [0.1, 0.05]}\n"
      "physics: {alpha: 1.0e-4}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 1}\n";
  // h = 0.005 on both axes: the explicit limit is h^2 / (4 alpha) = 0.0625, dt auto 0.05625.
  for (const std::string method : {"backward-euler", "crank-nicolson", "bdf2"}) {
    const Result r = heatsim(
        "validate " + write_case("a.yaml", base + "time: {method: " + method + ", end: 1.125}\n"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("time.dt: auto with " + method +
                            " takes 0.9 of the explicit stability limit, dt = 0.05625: 20 steps, "
                            "each a multigrid solve, to t = 1.125"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(line 5)"), std::string::npos) << r.output;
  }
  for (const std::string time :
       {"{method: bdf2, dt: 0.5, end: 1}", "{end: 1.125}", "{method: steady}"}) {
    const Result r = heatsim("validate " + write_case("g.yaml", base + "time: " + time + "\n"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("takes 0.9 of the explicit stability limit"), std::string::npos)
        << time << ": " << r.output;
  }
}

TEST_F(Cli, CrankNicolsonFarPastTheExplicitLimitWarnsOfRinging) {
  const std::string base = small_case(3);
  const Result ex = heatsim("validate " + write_case("explicit.yaml", base));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ex.output, m, std::regex(R"(largest stable dt ([0-9.e+-]+))")))
      << ex.output;
  const double limit = std::stod(m[1]);
  const auto with_time = [&](const std::string& name, const std::string& time) {
    std::string text = base;
    text.replace(text.find("dt: auto"), 8, time);
    return write_case(name, text);
  };
  const std::string ringing = "multiplies the stiffest mode by";

  const Result far =
      heatsim("validate " + with_time("far.yaml", "method: crank-nicolson, dt: 0.05"));
  ASSERT_EQ(far.code, 0) << far.output;
  ASSERT_TRUE(std::regex_search(
      far.output, m,
      std::regex(
          R"(time\.dt: crank-nicolson at dt = 0\.05, ([0-9.]+) times the explicit limit [0-9.e+-]+, multiplies the stiffest mode by (-0\.[0-9]+) per step)")))
      << far.output;
  const double r = 0.05 / limit;
  EXPECT_NEAR(std::stod(m[1]), r, 0.01 * r);
  EXPECT_NEAR(std::stod(m[2]), (1 - r) / (1 + r), 1e-5);
  EXPECT_NE(far.output.find("use bdf2 (second order, damps it) or backward-euler, or a dt of at "
                            "most"),
            std::string::npos)
      << far.output;
  // How long the ringing lasts: the steps to a hundredth, ln 0.01 / ln |factor|; and the line.
  ASSERT_TRUE(
      std::regex_search(far.output, m, std::regex(R"(a hundredth (only )?after ([0-9]+) steps)")))
      << far.output;
  const double factor = std::abs((1 - r) / (1 + r));
  EXPECT_NEAR(std::stod(m[2]), std::log(0.01) / std::log(factor), 1.0) << far.output;
  EXPECT_NE(far.output.find("factor -0.5) (line "), std::string::npos) << far.output;

  const std::string modest_dt = std::to_string(2.5 * limit);
  const Result modest =
      heatsim("validate " + with_time("modest.yaml", "method: crank-nicolson, dt: " + modest_dt));
  ASSERT_EQ(modest.code, 0) << modest.output;
  EXPECT_EQ(modest.output.find(ringing), std::string::npos) << modest.output;
  for (const std::string method : {"bdf2", "backward-euler"}) {
    const Result other =
        heatsim("validate " + with_time(method + ".yaml", "method: " + method + ", dt: 0.05"));
    ASSERT_EQ(other.code, 0) << other.output;
    EXPECT_EQ(other.output.find(ringing), std::string::npos) << other.output;
  }
  const Result bdf2 = heatsim("validate " + with_time("bdf2.yaml", "method: bdf2, dt: 0.05"));
  EXPECT_NE(bdf2.output.find("time: bdf2 (second order, L-stable; the first step backward "
                             "Euler), one multigrid solve per step"),
            std::string::npos)
      << bdf2.output;

  const Result run = heatsim("run " + with_time("run.yaml", "method: crank-nicolson, dt: 0.05"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find(ringing), std::string::npos) << run.output;
}

// A nonlinear implicit step (k(T) here) logs its outer iterations before the last one's
// solve: that solve alone ("converged in 1 iteration") read as a step with nothing to do.
TEST_F(Cli, ANonlinearStepLogsItsOuterIterations) {
  const std::string c = write_case(
      "kt.yaml",
      "grid: {dims: 1, n: [41], length: [0.1]}\n"
      "materials: {steel: {conductivity: [[300, 10], [900, 40]], density: 7900, "
      "specific_heat: 500}}\n"
      "regions: [{material: steel}]\n"
      "boundary: {all: {type: dirichlet, value: 300}, x-: {type: dirichlet, value: 900}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: backward-euler, dt: 20, steps: 3}\n"
      "output: {directory: " +
          (dir_ / "out").string() + "}\n");
  const Result r = heatsim(c + " --progress-seconds 0");
  ASSERT_EQ(r.code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"(step 1: (\d+) nonlinear iterations?, the last one's solve converged in \d+ )"
                 R"(iterations? to [0-9.e+-]+ .*; solve [0-9.]+ m?s)")))
      << r.output;
  EXPECT_GT(std::stoi(m[1].str()), 1) << r.output;
}

// An implicit run logs each step's multigrid solve with its wall time (every step with
// --progress-seconds 0), and at the end the solves' time in total and per solve apart from the
// rest of the steps (the right-hand sides).
TEST_F(Cli, ImplicitRunLogsTheSolveTimePerStepAndInTotal) {
  std::string body = small_case(4, "", 2);
  body.replace(body.find("dt: auto"), 8, "method: backward-euler, dt: 0.02");
  const Result r = heatsim(write_case("be.yaml", body) + " --progress-seconds 0");
  ASSERT_EQ(r.code, 0) << r.output;
  for (int step = 1; step <= 4; ++step)
    EXPECT_TRUE(std::regex_search(
        r.output,
        std::regex("step " + std::to_string(step) +
                   R"(: converged in \d+ iterations? to [0-9.e+-]+ .*; solve [0-9.]+ m?s)")))
        << "step " << step << "\n"
        << r.output;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(R"(done: 4 steps to step 4 \(t = 0\.08\) in [0-9.]+s wall on cpu: \d+ )"
                           R"(multigrid iterations, [0-9.]+ m?s solving\n)")))
      << r.output;
  EXPECT_EQ(r.output.find("GStencil/s"), std::string::npos) << r.output;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(
          R"(multigrid: 4 solves, (\d+) iterations \(.* per solve\); solve [0-9.]+ m?s in total, [0-9.]+ m?s per solve; right-hand sides and the rest of the steps [0-9.]+ m?s)")))
      << r.output;
  EXPECT_GE(std::stoi(m[1]), 4);
}

}  // namespace

namespace {

// A steady run's header names the tolerance, not a time step it does not take; its result
// says steady wherever a time would stand: the file (attribute steady = 1, step, time and dt
// 0), the XDMF index, probes.csv (header "state", row "steady"), the summary (iterations,
// residual and solve time, no GStencil/s, no checkpoints on the time line) and inspect. It
// writes no checkpoint, and a restart is refused.
TEST(CliSteady, ResultSaysSteadyWhereverATimeWouldStand) {
  const fs::path dir = heatsim_tests::make_scratch_dir("cli_steady");
  const fs::path c = dir / "s.yaml";
  std::ofstream(c) << "grid: {dims: 2, n: [17, 13], length: [1.0, 0.75]}\n"
                      "physics: {alpha: 1.0, source: 1.0}\n"
                      "boundary: {all: {type: dirichlet, value: 0}}\n"
                      "initial: {type: constant, value: 0}\n"
                      "time: {method: steady, tolerance: 1.0e-9}\n"
                      "probes: {points: {mid: [0.5, 0.375]}}\n"
                      "output: {directory: " +
                          (dir / "out").string() + "}\n";
  const Result r = heatsim("run " + c.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("steady state to relative residual 1e-09, written as step 0 with "
                          "attribute steady = 1 (no time)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("stability limit"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output,
      std::regex(R"(done: steady state in \d+ iterations to relative residual [0-9.e+-]+ )"
                 R"(\(from [0-9.e+-]+\), solve [0-9.]+ m?s on cpu\n)")))
      << r.output;
  EXPECT_EQ(r.output.find("GStencil/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("probes at the steady state: mid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time: setup "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", solve "), std::string::npos) << r.output;
  // No checkpoints item on the time line: a steady run writes none.
  std::smatch time_line;
  ASSERT_TRUE(std::regex_search(r.output, time_line, std::regex("time: setup [^\n]*"))) << r.output;
  EXPECT_NE(time_line.str().find("; output "), std::string::npos) << time_line.str();
  EXPECT_EQ(time_line.str().find("checkpoints"), std::string::npos) << time_line.str();

  const fs::path out = dir / "out";
  const auto file = heatsim::io::read_field_file((out / "field_00000000.h5").string());
  EXPECT_TRUE(file.meta.steady);
  EXPECT_EQ(file.meta.step, 0);
  EXPECT_EQ(file.meta.time, 0.0);
  EXPECT_EQ(file.meta.dt, 0.0);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"field.xmf", "field_00000000.h5", "probes.csv"}));
  std::ifstream xmf(out / "field.xmf");
  const std::string index{std::istreambuf_iterator<char>(xmf), {}};
  EXPECT_NE(index.find("<Grid Name=\"steady state\""), std::string::npos) << index;
  EXPECT_NE(index.find("<Information Name=\"steady\" Value=\"1\"/>"), std::string::npos) << index;
  std::ifstream csv(out / "probes.csv");
  std::string header, row, more;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header, "state,mid");
  EXPECT_EQ(row.rfind("steady,", 0), 0u) << row;
  EXPECT_FALSE(std::getline(csv, more)) << more;

  const Result inspect = heatsim("inspect " + (out / "field_00000000.h5").string());
  EXPECT_NE(inspect.output.find("state:      steady"), std::string::npos) << inspect.output;
  EXPECT_EQ(inspect.output.find("time:  "), std::string::npos) << inspect.output;

  const Result restart =
      heatsim("run " + c.string() + " --restart " + (out / "field_00000000.h5").string());
  EXPECT_EQ(restart.code, 2) << restart.output;
  EXPECT_NE(restart.output.find("nothing to continue"), std::string::npos) << restart.output;
  fs::remove_all(dir);
}

// The README says which options validate takes: each one listed is taken, and the run's
// --restart and --overwrite, which it says validate does not take, are refused.
TEST_F(Cli, ValidateTakesTheOptionsTheReadmeLists) {
  std::ifstream in(std::string(HEATSIM_SOURCE_DIR) + "/README.md");
  const std::string readme{std::istreambuf_iterator<char>(in), {}};
  const std::string sentence = "`validate` takes the overrides of case keys among these (";
  const std::size_t at = readme.find(sentence);
  ASSERT_NE(at, std::string::npos) << "README.md no longer says which options validate takes";
  const std::string listed = readme.substr(at, readme.find(')', at + sentence.size()) - at);
  const std::string c = write_case("c.yaml", small_case(5));
  const std::map<std::string, std::string> value{{"--backend/-b", "--backend cpu"},
                                                 {"--steps/-n", "--steps 3"},
                                                 {"--output-dir/-o", "-o " + (dir_ / "o").string()},
                                                 {"--precision", "--precision fp32"}};
  for (const auto& [option, args] : value) {
    EXPECT_NE(listed.find("`" + option + "`"), std::string::npos) << option << ": " << listed;
    const Result r = heatsim("validate " + c + " " + args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.output;
  }
  EXPECT_NE(readme.find("not `--restart` or `--overwrite`", at), std::string::npos);
  EXPECT_EQ(heatsim("validate " + c + " --overwrite").code, 2);
  EXPECT_EQ(heatsim("validate " + c + " --restart " + (dir_ / "x.h5").string()).code, 2);
}

}  // namespace
