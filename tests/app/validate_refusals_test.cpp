// `validate` refuses what `run` refuses around a valid case, by the same rules, before
// anything is written: an output directory that cannot be made (a parent that is a file, a
// file system that keeps no files), more output than the disk holds, more memory than the host
// has.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

class ValidateRefusals : public heatsim_tests::ScratchTest {
 protected:
  // A small valid 1D case; `output` is its line 6.
  std::string small_case(const std::string& name, const std::string& time,
                         const std::string& output) {
    return write_file(name,
                      "grid: {dims: 1, n: [11], length: [1.0]}\n"
                      "physics: {alpha: 1.0}\n"
                      "boundary: {all: {type: dirichlet, value: 0}}\n"
                      "initial: {type: constant, value: 1}\n"
                      "time: " +
                          time + "\n" + output + "\n");
  }
  // A 1D bdf2 case whose x- face is a sine of `frequency`; `time` the rest of its time section.
  std::string sine_yaml(const std::string& frequency, const std::string& time) {
    return "grid: {dims: 1, n: [21], length: [0.1]}\n"
           "physics: {alpha: 1.0e-5}\n"
           "boundary:\n"
           "  x-: {type: dirichlet, value: 300, amplitude: 50, frequency: " +
           frequency +
           "}\n"
           "  x+: {type: dirichlet, value: 300}\n"
           "initial: {type: constant, value: 300}\n"
           "time: {method: bdf2, " +
           time +
           "}\n"
           "output: {directory: " +
           (dir_ / "o").string() + "}\n";
  }
};

TEST_F(ValidateRefusals, AnOutputDirectoryWhoseParentIsAFile) {
  std::ofstream(dir_ / "afile") << "";
  const std::string c = small_case(
      "a.yaml", "{steps: 3}", "output: {directory: " + (dir_ / "afile" / "sub").string() + "}");
  const std::string expected = "output.directory: output directory '" +
                               (dir_ / "afile" / "sub").string() + "' cannot be created: '" +
                               (dir_ / "afile").string() +
                               "' is not a directory; choose another output.directory (or -o "
                               "DIR) (line 6)";
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find(expected), std::string::npos) << v.output;
  // run refuses it the same way, before its set-up (exit code 2).
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot be created: '" + (dir_ / "afile").string() +
                          "' is not a directory; choose another output.directory"),
            std::string::npos)
      << r.output;
}

// A name the file system cannot hold (an output name that makes file names past 255
// characters, a directory part past it) and a link to a missing target: refused by validate
// and by run before anything is written, where run used to fail after its steps (the name) or
// with "File exists" (the link).
TEST_F(ValidateRefusals, NamesTooLongAndLinksToNothing) {
  const std::string name(236, 'n');
  const std::string long_name =
      small_case("n.yaml", "{steps: 3}",
                 "output: {directory: " + (dir_ / "o").string() + ", name: " + name + "}");
  Result v = heatsim("validate " + long_name);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("output.name: the output files' names"), std::string::npos) << v.output;
  EXPECT_NE(v.output.find("at most 235 characters (line 6)"), std::string::npos) << v.output;
  Result r = heatsim("run " + long_name);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  const std::string ok = small_case(
      "k.yaml", "{steps: 3}",
      "output: {directory: " + (dir_ / "k").string() + ", name: " + name.substr(1) + "}");
  EXPECT_EQ(heatsim("run -q " + ok).code, 0);

  const std::string part(256, 'd');
  const std::string long_dir = small_case(
      "d.yaml", "{steps: 3}", "output: {directory: " + (dir_ / part / "x").string() + "}");
  v = heatsim("validate " + long_dir);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("is longer than the 255 characters a file name may have"),
            std::string::npos)
      << v.output;

  fs::create_symlink(dir_ / "nowhere" / "x", dir_ / "dangling");
  const std::string link = small_case("l.yaml", "{steps: 3}",
                                      "output: {directory: " + (dir_ / "dangling").string() + "}");
  v = heatsim("validate " + link);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("is a symbolic link to '" + (dir_ / "nowhere" / "x").string() +
                          "', which does not exist"),
            std::string::npos)
      << v.output;
  r = heatsim("run " + link);
  EXPECT_EQ(r.code, 2) << r.output;
}

// Not a refusal: a sine the steps sample two times a period or fewer is warned of (at its
// zeros the run sees a constant), with the dt that follows it; a resolved one is not.
TEST_F(ValidateRefusals, ASineTheStepsDoNotResolveIsWarnedOf) {
  const auto sine_case = [&](const std::string& name, const std::string& frequency) {
    return write_file(name, sine_yaml(frequency, "dt: 0.1, end: 20"));
  };
  const Result fast = heatsim("validate " + sine_case("f.yaml", "10"));
  EXPECT_EQ(fast.code, 0) << fast.output;
  EXPECT_NE(fast.output.find("boundary.x-.frequency: the sine of frequency 10 (period 0.1 s) is "
                             "sampled by steps of 0.1 s, 1 a period"),
            std::string::npos)
      << fast.output;
  EXPECT_NE(fast.output.find("take dt at most 1/(20 frequency) = 0.005 s"), std::string::npos)
      << fast.output;
  const Result slow = heatsim("validate " + sine_case("s.yaml", "0.01"));
  EXPECT_EQ(slow.code, 0) << slow.output;
  EXPECT_EQ(slow.output.find("the sine of frequency"), std::string::npos) << slow.output;
  // A negative frequency is the sine of its size: warned of alike.
  const Result negative = heatsim("validate " + sine_case("n.yaml", "-10"));
  EXPECT_EQ(negative.code, 0) << negative.output;
  EXPECT_NE(negative.output.find("the sine of frequency 10 (period 0.1 s)"), std::string::npos)
      << negative.output;
  // A source's schedule is not sampled but taken as its mean over each step: its heat goes in
  // whatever the step, so nothing is warned of.
  const Result source = heatsim(
      "validate " +
      write_file("q.yaml",
                 "grid: {dims: 1, n: [11], length: 0.1}\n"
                 "materials: {m: {conductivity: 10, density: 1000, specific_heat: 500}}\n"
                 "regions: [{material: m}]\n"
                 "initial: {type: constant, value: 300}\n"
                 "boundary: {all: {type: insulated}}\n"
                 "sources: [{power: 1000, schedule: {value: 1, amplitude: 1, frequency: 0.3}}]\n"
                 "time: {dt: 2, end: 40.5}\n"
                 "output: {directory: " +
                     (dir_ / "q").string() + "}\n"));
  EXPECT_EQ(source.code, 0) << source.output;
  EXPECT_EQ(source.output.find("the sine of frequency"), std::string::npos) << source.output;
}

// A face's table with a pulse shorter than the step: the steps take the value at their ends
// and may step over it whole (here they did: the field stayed at 300 K), so it is warned of,
// with a dt that follows it; the same pulse under shorter steps is not.
TEST_F(ValidateRefusals, ATablesPulseShorterThanTheStepIsWarnedOf) {
  const auto pulse_case = [&](const std::string& name, const std::string& dt) {
    return write_file(
        name,
        "grid: {dims: 1, n: [11], length: 0.1}\n"
        "materials: {m: {conductivity: 10, density: 1000, specific_heat: 500}}\n"
        "regions: [{material: m}]\n"
        "initial: {type: constant, value: 300}\n"
        "boundary:\n"
        "  x-: {type: dirichlet, value: [[0, 300], [1.1, 300], [1.2, 400], [1.3, 300]]}\n"
        "  x+: {type: convective, h: 1000, ambient: [[0, 300], [1.1, 300], [1.2, 400], "
        "[1.3, 300]]}\n"
        "time: {method: backward-euler, dt: " +
            dt +
            ", end: 3}\n"
            "output: {directory: " +
            (dir_ / "p").string() + "}\n");
  };
  const Result coarse = heatsim("validate " + pulse_case("c.yaml", "0.5"));
  EXPECT_EQ(coarse.code, 0) << coarse.output;
  EXPECT_NE(coarse.output.find("boundary.x-.value: the table's peak at t = 1.2 s (from t = 1.1 to "
                               "1.3 s) is shorter than the step, dt = 0.5 s"),
            std::string::npos)
      << coarse.output;
  EXPECT_NE(coarse.output.find("boundary.x+.ambient: the table's peak"), std::string::npos)
      << coarse.output;
  const Result fine = heatsim("validate " + pulse_case("f.yaml", "0.05"));
  EXPECT_EQ(fine.code, 0) << fine.output;
  EXPECT_EQ(fine.output.find("the table's peak"), std::string::npos) << fine.output;
}

// The parallel section's decompositions that no launch could run are refused by validate on one
// process too: an implicit run's periodic axis split, blocks thinner than the overlap whatever
// the rank count; exchange_every on an implicit run is warned of as ignored.
TEST_F(ValidateRefusals, ADecompositionNoLaunchCouldRunIsRefusedByValidate) {
  const auto parallel_case = [&](const std::string& name, const std::string& method,
                                 const std::string& parallel) {
    return write_file(name,
                      "grid: {dims: 2, n: [25, 30], length: [1.0, 1.0]}\n"
                      "physics: {alpha: 1.0}\n"
                      "boundary:\n"
                      "  all: {type: dirichlet, value: 0}\n"
                      "  x-: {type: periodic}\n"
                      "  x+: {type: periodic}\n"
                      "initial: {type: constant, value: 1}\n"
                      "time: {" +
                          method +
                          "dt: 0.0001, steps: 5}\n"
                          "output: {directory: " +
                          (dir_ / "par").string() +
                          "}\n"
                          "parallel: " +
                          parallel + "\n");
  };
  Result r = heatsim("validate " + parallel_case("a.yaml", "method: backward-euler, ",
                                                  "{decomposition: [2, 1]}"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("parallel.decomposition: implicit and steady runs keep a periodic axis "
                          "on one rank, but x is periodic and split 2 ways: give it 1 (line 10)"),
            std::string::npos)
      << r.output;
  r = heatsim("validate " + parallel_case("b.yaml", "", "{decomposition: [26, 1]}"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("26 ways along x splits its 25 nodes into blocks of 0, thinner than the "
                          "overlap of 1 layers on any number of ranks"),
            std::string::npos)
      << r.output;
  r = heatsim("validate " + parallel_case("c.yaml", "", "{decomposition: [2, 1]}"));
  EXPECT_EQ(r.code, 0) << r.output;  // explicit: a periodic axis may be split
  r = heatsim("validate " + parallel_case("d.yaml", "method: backward-euler, ",
                                          "{decomposition: [1, 2], exchange_every: 4}"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("parallel.exchange_every: backward-euler runs exchange at every "
                          "multigrid operation"),
            std::string::npos)
      << r.output;
}

// Above 9e306 Hz, 1/(20 frequency) computed as written overflowed to a dt of "0 s"; the advice
// is the nonzero (subnormal) 0.05 / frequency, and the numbers are printed to 6 digits, not
// as 4.999999999999999e-302.
TEST_F(ValidateRefusals, AHugeSinesAdviceIsANonzeroDt) {
  const auto sine_case = [&](const std::string& name, const std::string& frequency,
                             const std::string& dt) {
    return write_file(name, sine_yaml(frequency, "dt: " + dt + ", steps: 10"));
  };
  const auto advised_dt = [](const std::string& output) {
    const std::string lead = "take dt at most 1/(20 frequency) = ";
    const std::size_t at = output.find(lead);
    if (at == std::string::npos) return -1.0;
    return std::strtod(output.c_str() + at + lead.size(), nullptr);
  };
  const Result huge = heatsim("validate " + sine_case("h.yaml", "2e307", "1e-307"));
  EXPECT_EQ(huge.code, 0) << huge.output;
  EXPECT_NE(huge.output.find("the sine of frequency 2e+307 (period 5e-308 s) is sampled by steps "
                             "of 1e-307 s, 0.5 a period"),
            std::string::npos)
      << huge.output;
  const double dt = advised_dt(huge.output);
  EXPECT_GT(dt, 0.0) << huge.output;
  EXPECT_LE(dt, 2.5e-309) << huge.output;
  EXPECT_NEAR(dt / 2.5e-309, 1.0, 1e-5) << huge.output;

  const Result large = heatsim("validate " + sine_case("l.yaml", "1e300", "1e-300"));
  EXPECT_EQ(large.code, 0) << large.output;
  EXPECT_NE(large.output.find("(period 1e-300 s) is sampled by steps of 1e-300 s, 1 a period"),
            std::string::npos)
      << large.output;
  EXPECT_NE(large.output.find("= 5e-302 s to follow it"), std::string::npos) << large.output;
}

// With time.dt: auto and steps the run's end is known once dt is: a sine whose 2 pi frequency t
// overflows before it (here at t = 1.8e308 / (2 pi 1e306), about 29 s, of 1125) is refused by
// validate and by run, naming the frequency and its line; not run into NaN at step 32767.
TEST_F(ValidateRefusals, ASineOverflowingBeforeAnAutoDtRunsEndIsRefused) {
  const auto sine_case = [&](const std::string& name, const std::string& frequency) {
    return write_file(name,
                      "grid: {dims: 1, n: [21], length: [1.0]}\n"
                      "physics: {alpha: 1.0}\n"
                      "boundary:\n"
                      "  x-: {type: dirichlet, value: 0, amplitude: 1, frequency: " +
                          frequency +
                          "}\n"
                          "  x+: {type: dirichlet, value: 1}\n"
                          "initial: {type: constant, value: 0}\n"
                          "time: {dt: auto, steps: 1000000}\n"
                          "output: {directory: " +
                          (dir_ / "o").string() + "}\n");
  };
  // dt = 0.9 h^2 / (2 alpha) = 0.001125 s: the run ends at t = 1125.
  const std::string expected =
      "boundary.x-.frequency: 1e+306 Hz is too large: 2 pi frequency t overflows before t = 1125 "
      "(the run's end, 1000000 steps of dt 0.001125), so the sine has no value there (line 4)";
  const std::string c = sine_case("o.yaml", "1e306");
  for (const char* command : {"validate ", "run "}) {
    const Result r = heatsim(command + c);
    EXPECT_EQ(r.code, 2) << command << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << command << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o" / "field_00000000.h5"));
  // 1e300 Hz keeps its phase past t = 1125 (to about 2.9e7 s).
  const Result fine = heatsim("validate " + sine_case("f.yaml", "1e300"));
  EXPECT_EQ(fine.code, 0) << fine.output;
  EXPECT_EQ(fine.output.find("too large"), std::string::npos) << fine.output;
}

// /proc keeps no files: said so, not "No such file or directory".
TEST_F(ValidateRefusals, AnOutputDirectoryWhereNoFileCanBeMade) {
  const std::string c = small_case("p.yaml", "{steps: 3}", "output: {directory: /proc/sys/out}");
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("output.directory: output directory '/proc/sys/out' cannot be created: "
                          "'/proc/sys' is on a "),
            std::string::npos)
      << v.output;
  EXPECT_EQ(v.output.find("No such file"), std::string::npos) << v.output;
  EXPECT_EQ(heatsim("run " + c).code, 2);
}

// 3e12 steps, an output at every one: far more than any disk, refused by both.
TEST_F(ValidateRefusals, MoreOutputThanTheDiskHolds) {
  const std::string c =
      small_case("d.yaml", "{steps: 3000000000000}",
                 "output: {directory: " + (dir_ / "out").string() + ", every: 1}");
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("output.directory: not enough disk space in " + dir_.string() +
                          ": 3000000000001 output files and 1 checkpoint at once need"),
            std::string::npos)
      << v.output;
  EXPECT_NE(v.output.find("(line 6)"), std::string::npos) << v.output;
  EXPECT_EQ(v.output.find(": valid"), std::string::npos) << v.output;
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not enough disk space"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// 2500^3 points: about 230 GiB (two fp64 fields), more than the host has (skipped where
// it has that much).
TEST_F(ValidateRefusals, MoreMemoryThanTheHostHas) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> key >> kib >> unit && key != "MemAvailable:") {
  }
  if (key != "MemAvailable:" || kib * 1024.0 > 200.0 * (1ull << 30))
    GTEST_SKIP() << "the host's available memory is unknown or above 200 GiB";
  const std::string c = write_file("m.yaml",
                                   "grid: {dims: 3, n: [2500, 2500, 2500]}\n"
                                   "physics: {alpha: 1.0}\n"
                                   "boundary: {all: {type: dirichlet, value: 0}}\n"
                                   "initial: {type: constant, value: 1}\n"
                                   "time: {steps: 10}\n"
                                   "output: {directory: " +
                                       (dir_ / "out").string() + "}\n");
  const Result v = heatsim("validate " + c);
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("not enough host memory: the run needs"), std::string::npos) << v.output;
  const Result r = heatsim("run " + c);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not enough host memory: the run needs"), std::string::npos) << r.output;
}

// A case with materials and voids lays its body on the grid (several bytes a node) before the
// run's memory is checked: a grid far larger than the host's memory must be refused with the
// same message, at grid.n, before that body is built (it used to fail as "regions:
// std::bad_alloc", or be killed by the kernel where the allocation was granted), explicit and
// steady, by validate and by run, with no directory made.
TEST_F(ValidateRefusals, MoreMemoryThanTheHostHasWithMaterialsAndVoids) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> key >> kib >> unit && key != "MemAvailable:") {
  }
  // 2600 x 2600 x 2540 points (just below 2^34): a field alone is 137 GB.
  if (key != "MemAvailable:" || kib * 1024.0 > 120.0 * (1ull << 30))
    GTEST_SKIP() << "the host's available memory is unknown or above 120 GiB";
  for (const std::string time : {"{steps: 10}", "{method: steady}"}) {
    SCOPED_TRACE(time);
    const std::string c = write_file(
        "mv.yaml",
        "grid: {dims: 3, n: [2600, 2600, 2540], length: [0.026, 0.026, 0.0254]}\n"
        "materials:\n"
        "  aluminium: {conductivity: 200, density: 2700, specific_heat: 900}\n"
        "regions:\n"
        "  - {material: aluminium}\n"
        "  - {void: true, box: {lower: [0.01, 0.01, 0.01], upper: [0.016, 0.016, 0.0254]},\n"
        "     surface: {type: convective, h: 25, ambient: 300}}\n"
        "boundary: {all: {type: convective, h: 25, ambient: 300}}\n"
        "initial: {type: constant, value: 300}\n"
        "time: " +
            time + "\noutput: {directory: " + (dir_ / "out").string() + "}\n");
    for (const std::string command : {"validate ", "run "}) {
      const Result r = heatsim(command + c);
      EXPECT_EQ(r.code, 2) << command << r.output;
      EXPECT_NE(r.output.find("grid.n: not enough host memory: the run needs"), std::string::npos)
          << command << r.output;
      EXPECT_NE(r.output.find("(line 1)"), std::string::npos) << command << r.output;
      EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << command << r.output;
      EXPECT_FALSE(fs::exists(dir_ / "out")) << command;
    }
  }
}

}  // namespace
