// `mpirun -np N heatsim case.yaml` against the serial run: every output file, checkpoint and
// probe row bit for bit identical for N = 1..4, every face kind, materials and sources, a deep
// overlap; a restart on another number of ranks; a rank that fails ends all of them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
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

const std::vector<Case>& cases() {
  static const std::vector<Case> list = {
      {"dirichlet_2d_order4",
       "grid: {dims: 2, n: [25, 19], length: 1.0}\nphysics: {alpha: 1.0, source: 0.5}\n"
       "scheme: order4\nboundary:\n  all: {type: dirichlet, value: 0.0}\n"
       "  x-: {type: dirichlet, value: 0.5, amplitude: 0.5, frequency: 3.0}\n"
       "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6], width: 0.15}\n"
       "time: {dt: auto, steps: 40}\n"},
      {"neumann_3d_order2",
       "grid: {dims: 3, n: [13, 11, 9], length: 1.0}\nphysics: {alpha: 1.0, source: 1.0}\n"
       "boundary:\n  all: {type: neumann, flux: 0.0}\n  z+: {type: neumann, flux: -0.5}\n"
       "initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}\n"
       "time: {dt: auto, steps: 30}\n"},
      {"periodic_2d_box",
       "grid: {dims: 2, n: [24, 18], length: 1.0}\nphysics: {alpha: 1.0}\nscheme: isotropic\n"
       "boundary:\n  all: {type: periodic}\n"
       "initial: {type: expression, value: \"sin(2*pi*x) * cos(2*pi*y) + x\"}\n"
       "time: {dt: auto, steps: 35}\n"},
      {"mixed_1d_order6_deep_overlap",
       "grid: {dims: 1, n: [61], length: 1.0}\nphysics: {alpha: 1.0}\nscheme: order6\n"
       "boundary:\n  x-: {type: dirichlet, value: 1.0}\n  x+: {type: neumann, flux: 0.25}\n"
       "initial: {type: gaussian, amplitude: 1.0, center: [0.4], width: 0.1}\n"
       "time: {dt: auto, steps: 41}\nparallel: {exchange_every: 3}\n"},
      {"materials_sources_convective_2d",
       "grid: {dims: 2, n: [23, 17], length: [0.22, 0.16]}\n"
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
      // A void's nodes keep their initial value and are no part of the body: the summary's
      // minimum is the body's (300 would be the void's).
      {"void_convective_3d",
       "grid: {dims: 3, n: [21, 13, 11], length: [0.02, 0.012, 0.01]}\n"
       "materials:\n  aluminium: {conductivity: 205, density: 2700, specific_heat: 900}\n"
       "regions:\n  - {material: aluminium}\n"
       "  - {void: true, box: {lower: [0.006, -1, 0.004], upper: [0.013, 1, 1]},\n"
       "     surface: {type: convective, h: 400, ambient: 300}}\n"
       "sources:\n  - {box: {lower: [0, 0, 0], upper: [0.02, 0.012, 0.001]}, power: 20}\n"
       "boundary:\n  all: {type: convective, h: 40, ambient: 300}\n  z-: {type: neumann, flux: 0}\n"
       "initial: {type: constant, value: 300}\ntime: {dt: auto, steps: 40}\n"},
      // Melting and a specific heat that varies: the total heat is each node's enthalpy.
      {"melting_1d",
       "grid: {dims: 1, n: [41], length: [0.02]}\n"
       "materials:\n  wax: {conductivity: 0.24, density: 800, specific_heat: [[300, 1900], [340, "
       "2300]],\n        phase_change: {solidus: 301, liquidus: 303, latent_heat: 2.0e5}}\n"
       "regions:\n  - {material: wax}\n"
       "boundary:\n  x-: {type: dirichlet, value: 330}\n  x+: {type: neumann, flux: 0}\n"
       "initial: {type: constant, value: 300}\ntime: {dt: auto, steps: 400}\n"},
  };
  return list;
}

class DecomposedRunTest : public DecomposedFixture {};

TEST_P(DecomposedRunTest, EqualsTheSerialRunBitForBit) {
  const int ranks = GetParam();
  for (const Case& c : cases()) {
    const std::string out = "output: {every: 10}\ncheckpoint: {every: 20}\n";
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + out);
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const fs::path split = dir_ / (std::string(c.name) + "_np" + std::to_string(ranks));
    const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + serial.string());
    ASSERT_EQ(s.code, 0) << c.name << "\n" << s.output;
    const auto p = run_ranks(ranks, "run " + path + " -q -o " + split.string());
    ASSERT_EQ(p.code, 0) << c.name << " on " << ranks << " ranks\n" << p.output;
    expect_same_run(serial, split, std::string(c.name) + " on " + std::to_string(ranks) + " ranks");
    // The summary's totals are the global ones over the body (min and max exactly; the heat's
    // sum order differs from the serial backend's, so to rounding).
    const auto line = [](const std::string& text) {
      const auto at = text.find("final field: min ");
      return at == std::string::npos ? std::string()
                                     : text.substr(at, text.find(" total", at) - at);
    };
    EXPECT_EQ(line(s.output), line(p.output)) << c.name << "\n" << p.output;
    EXPECT_FALSE(line(p.output).empty()) << p.output;
    const auto heat = [](const std::string& text) {
      const auto at = text.find("total heat ");
      return at == std::string::npos ? std::nan("") : std::stod(text.substr(at + 11));
    };
    EXPECT_NEAR(heat(p.output), heat(s.output), 1e-10 * std::abs(heat(s.output)))
        << c.name << "\n"
        << s.output << p.output;
    // The CPU backend's passes split around the interior, the halo exchanged meanwhile (not
    // with exchange_every deeper than its one step per pass).
    if (ranks > 1 && c.yaml.find("exchange_every") == std::string::npos) {
      static const std::regex beside(R"(, (\d+) of them while the interior stepped)");
      std::smatch m;
      ASSERT_TRUE(std::regex_search(p.output, m, beside)) << p.output;
      EXPECT_GT(std::stol(m[1].str()), 0) << c.name << "\n" << p.output;
    }
    // Each exchange's parts (slabs out, MPI, slabs in) add up to no more than the exchanges'
    // time (the rest: the loop around them), and not to nothing.
    if (ranks > 1) {
      static const std::regex parts(
          R"(halo exchanges ([0-9.e+-]+) s of .*, (\d+) exchanges, .*; per exchange ([0-9.e+-]+) )"
          R"(ms out, ([0-9.e+-]+) ms MPI, ([0-9.e+-]+) ms in)");
      std::smatch m;
      ASSERT_TRUE(std::regex_search(p.output, m, parts)) << p.output;
      const double total = std::stod(m[1].str()), count = std::stod(m[2].str());
      double sum = 0.0;
      for (int k = 3; k <= 5; ++k) {
        EXPECT_GE(std::stod(m[k].str()), 0.0) << p.output;
        sum += std::stod(m[k].str());
      }
      EXPECT_GT(sum, 0.0) << p.output;
      EXPECT_LE(sum * count / 1e3, total * 1.01 + 1e-6) << p.output;  // %.3g each
    }
  }
}

// Ranks of one node take their neighbours' slabs through shared memory (the log says so);
// HEATSIM_HALO_SHARED=0 sends them as messages, as between nodes, and so does a node where the
// segment cannot be had. Each gives the serial run's bits: the materials case and the periodic
// one (two ranks are each other's neighbour on both sides).
TEST_P(DecomposedRunTest, SharedMemoryAndMessagesGiveTheSameBits) {
  const int ranks = GetParam();
  if (ranks == 1) GTEST_SKIP() << "one rank exchanges nothing";
  for (const std::size_t k : {std::size_t{4}, std::size_t{2}}) {
    const Case& c = cases()[k];
    const std::string path =
        write_case(std::string(c.name) + ".yaml", c.yaml + "output: {every: 10}\n");
    const fs::path serial = dir_ / (std::string(c.name) + "_serial");
    const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + serial.string());
    ASSERT_EQ(s.code, 0) << c.name << "\n" << s.output;
    for (const bool shared : {true, false}) {
      const fs::path out = dir_ / (std::string(c.name) + (shared ? "_shared" : "_messages"));
      const auto p = run_ranks(ranks, "run " + path + " -o " + out.string(),
                               shared ? std::string() : std::string("HEATSIM_HALO_SHARED=0"));
      ASSERT_EQ(p.code, 0) << c.name << "\n" << p.output;
      EXPECT_EQ(p.output.find("through shared memory") != std::string::npos, shared)
          << c.name << "\n"
          << p.output;
      expect_same_run(serial, out,
                      std::string(c.name) + (shared ? ", shared" : ", messages") + " on " +
                          std::to_string(ranks) + " ranks");
    }
    // A node that cannot have the segment (Open MPI without its shared-memory windows, as
    // where /dev/shm is too small): the ranks say why and exchange messages, not fail.
    if (heatsim_tests::run_heatsim("info").output.find("Open MPI") != std::string::npos) {
      const fs::path out = dir_ / (std::string(c.name) + "_no_segment");
      const auto p = run_ranks(ranks, "run " + path + " -o " + out.string(), "OMPI_MCA_osc=^sm");
      ASSERT_EQ(p.code, 0) << c.name << "\n" << p.output;
      EXPECT_NE(p.output.find("halos as messages (no memory shared on this node"),
                std::string::npos)
          << p.output;
      expect_same_run(serial, out, std::string(c.name) + ", no segment");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DecomposedRunTest, ::testing::Values(1, 2, 3, 4));

class DecomposedRestartTest : public DecomposedRunTest {};

// A checkpoint written by 4 ranks continues on 2 exactly as the uninterrupted serial run goes.
TEST_F(DecomposedRestartTest, FourRanksRestartOnTwo) {
  const Case& c = cases()[4];  // materials, sources, convective faces, probes
  const std::string out = "output: {every: 10}\ncheckpoint: {every: 20}\n";
  const std::string path = write_case("c.yaml", c.yaml + out);
  const fs::path whole = dir_ / "whole", split = dir_ / "split";
  const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
  ASSERT_EQ(s.code, 0) << s.output;
  const auto first = run_ranks(4, "run " + path + " -q -n 20 -o " + split.string());
  ASSERT_EQ(first.code, 0) << first.output;
  const auto rest = run_ranks(2, "run " + path + " -q -o " + split.string() + " --restart " +
                                     (split / "checkpoint_00000020.h5").string());
  ASSERT_EQ(rest.code, 0) << rest.output;
  expect_same_run(whole, split, "4 ranks to step 20, then 2 ranks");
}

class DecomposedFailureTest : public DecomposedRunTest {};

// Every rank fails alike (a missing initial file): a clear message, a nonzero exit, no hang.
TEST_F(DecomposedFailureTest, BadInitialFileStopsEveryRank) {
  const std::string path =
      write_case("c.yaml",
                 "grid: {dims: 2, n: [16, 16], length: 1.0}\nphysics: {alpha: 1.0}\n"
                 "boundary:\n  all: {type: dirichlet, value: 0.0}\n"
                 "initial: {type: file, path: " +
                     (dir_ / "missing.h5").string() +
                     "}\n"
                     "time: {dt: auto, steps: 10}\noutput: {directory: " +
                     (dir_ / "out").string() + "}\n");
  const auto r = run_ranks(3, "run " + path);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_NE(r.output.find("missing.h5"), std::string::npos) << r.output;
}

// A case with mistakes: every rank reads it and finds them, rank 0 alone reports them (once,
// not once per rank), and nothing runs.
TEST_F(DecomposedFailureTest, ACasesProblemsAreReportedOnce) {
  const std::string path =
      write_case("c.yaml",
                 "grid: {dims: 2, n: [16, 16], length: 1.0}\nphysics: {alpah: 1.0}\n"
                 "boundary:\n  all: {type: dirichlet, value: 0.0}\n"
                 "initial: {type: constant, value: 0}\ntime: {dt: auto, steps: 10}\n"
                 "output: {directory: " +
                     (dir_ / "out").string() + "}\n");
  const auto r = run_ranks(3, "run " + path);
  EXPECT_EQ(r.code, 2) << r.output;
  std::size_t reports = 0;
  for (auto at = r.output.find("did you mean 'alpha'"); at != std::string::npos;
       at = r.output.find("did you mean 'alpha'", at + 1))
    ++reports;
  EXPECT_EQ(reports, 1u) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << r.output;
}

// A refusal every rank reaches alike (here the output directory holding another run's files,
// then a checkpoint that does not match the case) is reported once, by rank 0, exit 2.
TEST_F(DecomposedFailureTest, ARefusalEveryRankReachesIsReportedOnce) {
  const std::string out = (dir_ / "out").string();
  const std::string path =
      write_case("c.yaml", cases()[0].yaml + "output: {directory: " + out +
                               ", every: 10}\ncheckpoint: {every: 10}\n");
  const auto first = run_ranks(3, "run " + path + " -q");
  ASSERT_EQ(first.code, 0) << first.output;
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const auto again = run_ranks(3, "run " + path + " -q");
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_EQ(count(again.output, "already holds a run's files"), 1u) << again.output;
  const std::string other =
      write_case("other.yaml", cases()[1].yaml + "output: {directory: " + out + "}\n");
  const auto mismatch =
      run_ranks(3, "run " + other + " -q --restart " + out + "/checkpoint_00000010.h5");
  EXPECT_EQ(mismatch.code, 2) << mismatch.output;
  EXPECT_EQ(count(mismatch.output, "does not match the case"), 1u) << mismatch.output;
}

// A run on 2 ranks stopped by a signal prints once the command that continues it, on 2
// ranks, naming a checkpoint that is there; `timeout_args` says how `timeout` signals.
void expect_interrupted_run_continues(const fs::path& dir, const std::string& timeout_args,
                                      const std::string& env, int want_code) {
  const std::string out = (dir / "out").string();
  const fs::path path = dir / "c.yaml";
  std::ofstream(path) << "grid: {dims: 3, n: [40, 40, 40], length: 1.0}\nphysics: {alpha: 1.0}\n"
                         "boundary: {all: {type: dirichlet, value: 0}}\n"
                         "initial: {type: gaussian, amplitude: 1.0, width: 0.2}\n"
                         "time: {dt: auto, steps: 10000000}\noutput: {directory: "
                      << out << ", every: 0}\n";
  const MpiSessionDir session;
  const std::string cmd = session.prefix() + env + "timeout --preserve-status " + timeout_args +
                          " 4 " + HEATSIM_MPIEXEC + " --oversubscribe --allow-run-as-root -np 2 " +
                          HEATSIM_BINARY + " run " + path.string() + " 2>&1";
  std::string output;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[4096];
  while (fgets(buf, sizeof buf, pipe)) output += buf;
  const int status = pclose(pipe);
  // The options given to mpirun here (--oversubscribe, --allow-run-as-root) are not the ranks'
  // to see: the line asks for them instead of leaving them out silently.
  const std::string want =
      std::string(
          "continue with (adding the options you gave mpirun, which heatsim cannot see): "
          "mpirun -np 2 ") +
      HEATSIM_BINARY + " run ";
  const auto at = output.find(want);
  ASSERT_NE(at, std::string::npos) << output;
  EXPECT_EQ(output.find(want, at + 1), std::string::npos) << "printed twice\n" << output;
  const auto restart = output.find("--restart ", at);
  ASSERT_NE(restart, std::string::npos) << output;
  const std::string checkpoint =
      output.substr(restart + 10, output.find_first_of(" \n", restart + 10) - restart - 10);
  EXPECT_TRUE(fs::exists(checkpoint)) << checkpoint << "\n" << output;
  // The step it stopped at is reported once, not again as the run's last.
  const auto stopped = output.find("interrupted by signal");
  ASSERT_NE(stopped, std::string::npos) << output;
  const auto step_at = output.find(" at step ", stopped) + 9;
  const std::string step = output.substr(step_at, output.find(';', step_at) - step_at);
  std::size_t reports = 0;
  for (auto i = output.find("step " + step + "/"); i != std::string::npos;
       i = output.find("step " + step + "/", i + 1))
    ++reports;
  EXPECT_EQ(reports, 1u) << output;
  if (want_code >= 0) {
    ASSERT_TRUE(WIFEXITED(status)) << output;
    EXPECT_EQ(WEXITSTATUS(status), want_code) << output;
  }
}

// SIGUSR1 to mpirun alone: OpenMPI forwards it to every rank and lets them finish, so the
// ranks exit 138 (128 + 10) with their checkpoint, however long it takes.
TEST_F(DecomposedFailureTest, AnInterruptedRunSaysHowToContinueOnItsRanks) {
  expect_interrupted_run_continues(dir_, "--foreground -s USR1", "", 138);
}

// Ctrl-C: one SIGINT to mpirun. OpenMPI 4.1 passes it on as SIGTERM and kills the ranks a
// grace time later (odls_base_sigkill_timeout, 1 s by default, which a checkpoint on a busy
// machine can outlast): lengthened here, so that the test is about the ranks, not about how
// busy the machine is. mpirun's own exit code then says that it ended the job. (`timeout`
// without --foreground would signal mpirun twice, once directly and once through its process
// group; a second SIGINT makes mpirun kill the ranks at once.)
TEST_F(DecomposedFailureTest, CtrlCStopsEveryRankWithACheckpoint) {
  expect_interrupted_run_continues(dir_, "--foreground -s INT",
                                   "OMPI_MCA_odls_base_sigkill_timeout=3 ", -1);
}

// Only rank 0 writes, so only rank 0 finds the output directory unusable; the others are
// already waiting to exchange and must be ended too.
TEST_F(DecomposedFailureTest, OneFailingRankEndsAllOfThem) {
  std::ofstream(dir_ / "file") << "not a directory";
  const std::string path = write_case("c.yaml", cases()[0].yaml + "output: {directory: " +
                                                    (dir_ / "file" / "out").string() + "}\n");
  const auto r = run_ranks(4, "run " + path);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_NE(r.output.find("file/out"), std::string::npos) << r.output;
}

// A refusal every rank reaches alike: rank 1 called MPI_Abort at once, and mpirun's SIGTERM
// reached rank 0 while it was still reporting the refusal, which then said "signal received:
// stopping at the next chunk of steps (a transient run writes a checkpoint first)" of a run
// that never began (4 of 6 refusals on 2 ranks). Rank 0 now reports and aborts; the others
// wait for it, and a failed command speaks of no signal.
TEST_F(DecomposedFailureTest, ARefusedRunSaysNothingOfTheSignalThatEndsIt) {
  const std::string path = write_case(
      "c.yaml", cases()[0].yaml + "output: {directory: " + (dir_ / "out").string() + "}\n");
  for (int i = 0; i < 6; ++i) {
    const auto r = run_ranks(2, "run " + path + " --restart " + (dir_ / "missing.h5").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("missing.h5: no such file"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("signal received"), std::string::npos) << r.output;
  }
}

}  // namespace

class DecomposedHeaderTest : public DecomposedRunTest {};

// The run header lists where every rank runs (gathered to rank 0, which alone prints it).
TEST_F(DecomposedHeaderTest, NamesEveryRanksDevice) {
  const std::string path = write_case(
      "c.yaml", cases()[0].yaml + "output: {directory: " + (dir_ / "out").string() + "}\n");
  const auto r = run_ranks(3, "run " + path);
  ASSERT_EQ(r.code, 0) << r.output;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string line = "rank " + std::to_string(rank) + ": host ";
    const auto at = r.output.find(line);
    ASSERT_NE(at, std::string::npos) << line << "\n" << r.output;
    EXPECT_EQ(r.output.find(line, at + 1), std::string::npos) << "printed twice\n" << r.output;
    const std::string rest = r.output.substr(at, r.output.find('\n', at) - at);
    // A CPU build runs the cpu backend; a GPU machine's ranks name their device.
    EXPECT_TRUE(rest.find(", CPU, backend cpu") != std::string::npos ||
                rest.find(", GPU ") != std::string::npos)
        << rest;
    // Three ranks share the node's cores: each runs at most cores / 3 OpenMP threads (one on a
    // machine of fewer than six cores), unless OMP_NUM_THREADS is set.
    if (!std::getenv("OMP_NUM_THREADS")) {
      const long cores = sysconf(_SC_NPROCESSORS_ONLN);
      const long threads = std::max(1L, cores / 3);
      EXPECT_NE(rest.find(", " + std::to_string(threads) + " thread"), std::string::npos) << rest;
    }
  }
}

// A decomposed run's log is plain text: mpirun hands the ranks a terminal whatever its own
// output is, so colour codes would end up in `mpirun ... > run.log` (here a pipe, with a
// terminal named in TERM).
TEST_F(DecomposedHeaderTest, TheLogHasNoColourCodes) {
  const std::string path = write_case(
      "c.yaml", cases()[0].yaml + "output: {directory: " + (dir_ / "out").string() + "}\n");
  for (int ranks : {1, 2}) {  // mpirun -np 1 as well: its one rank has mpirun's terminal too
    const auto r = run_ranks(ranks, "run " + path + " --overwrite", "TERM=xterm-256color");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("] info: "), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << ranks << " ranks:\n" << r.output;
  }
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

// What every rank finds alike is said once, by rank 0: `validate`'s report and its refusals,
// and a field that became NaN (every rank finds it from the whole field's statistics).
TEST_F(DecomposedHeaderTest, WhatEveryRankFindsAlikeIsSaidOnce) {
  const std::string good = write_case(
      "good.yaml", cases()[0].yaml + "output: {directory: " + (dir_ / "g").string() + "}\n");
  const auto ok = run_ranks(3, "validate " + good);
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_EQ(occurrences(ok.output, ": valid"), 1u) << ok.output;
  const std::string bad =
      write_case("bad.yaml", cases()[0].yaml + "output: {directory: " + (dir_ / "b").string() +
                                 "}\nsurprise: 1\n");
  const auto refused = run_ranks(3, "validate " + bad);
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_EQ(occurrences(refused.output, "unknown key"), 1u) << refused.output;
  const std::string nan = write_case(
      "nan.yaml",
      "grid: {dims: 3, n: [12, 11, 10], length: 1.0}\nphysics: {alpha: 1.0, source: 1.0e308}\n"
      "boundary: {all: {type: neumann, flux: 0}}\ninitial: {type: constant, value: 1.7e308}\n"
      "time: {dt: auto, steps: 500}\noutput: {directory: " +
          (dir_ / "n").string() + "}\n");
  const auto diverged = run_ranks(3, "run " + nan);
  EXPECT_EQ(diverged.code, 3) << diverged.output;
  EXPECT_EQ(occurrences(diverged.output, "error: "), 1u) << diverged.output;
}

class DecomposedFilesTest : public DecomposedRunTest {};

// fp32 fields through the collective writer (each rank's floats into its hyperslab), a 3D
// grid split along every axis, and no temporaries left behind.
TEST_F(DecomposedFilesTest, Fp32On4RanksEqualsSerialFiles) {
  const std::string path =
      write_case("c.yaml", cases()[1].yaml +
                               "precision: fp32\noutput: {every: 10}\ncheckpoint: {every: 20}\n"
                               "parallel: {decomposition: [2, 1, 2]}\n");
  const fs::path serial = dir_ / "serial", split = dir_ / "split";
  const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + serial.string());
  ASSERT_EQ(s.code, 0) << s.output;
  const auto p = run_ranks(4, "run " + path + " -q -o " + split.string());
  ASSERT_EQ(p.code, 0) << p.output;
  expect_same_run(serial, split, "fp32 on 2 x 1 x 2 ranks");
  for (const auto& e : fs::directory_iterator(split))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  // The index is today's, so ParaView opens the series as before.
  EXPECT_EQ(read_text(serial / "field.xmf"), read_text(split / "field.xmf"));
}

// A checkpoint written by 3 ranks restarts on 4 ranks and on one process (no mpirun), each
// continuing exactly as the uninterrupted serial run; `inspect` reads it (checksum verified).
TEST_F(DecomposedFilesTest, ThreeRankCheckpointRestartsOnFourAndOnOne) {
  const Case& c = cases()[4];  // materials, sources, convective faces, probes
  const std::string out = "output: {every: 10}\ncheckpoint: {every: 20}\n";
  const std::string path = write_case("c.yaml", c.yaml + out);
  const fs::path whole = dir_ / "whole";
  const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
  ASSERT_EQ(s.code, 0) << s.output;
  for (const int ranks : {4, 1}) {
    const fs::path split = dir_ / ("split_to_" + std::to_string(ranks));
    const auto first = run_ranks(3, "run " + path + " -q -n 20 -o " + split.string());
    ASSERT_EQ(first.code, 0) << first.output;
    const std::string checkpoint = (split / "checkpoint_00000020.h5").string();
    const auto inspect = heatsim_tests::run_heatsim("inspect " + checkpoint);
    EXPECT_EQ(inspect.code, 0) << inspect.output;
    EXPECT_NE(inspect.output.find("checksum verified"), std::string::npos) << inspect.output;
    const std::string rest_args =
        "run " + path + " -q -o " + split.string() + " --restart " + checkpoint;
    const auto rest =
        ranks == 1 ? heatsim_tests::run_heatsim(rest_args) : run_ranks(ranks, rest_args);
    ASSERT_EQ(rest.code, 0) << rest.output;
    expect_same_run(whole, split, "3 ranks to step 20, then " + std::to_string(ranks));
  }
}

// heat_flows.csv under mpirun: rank 0 measures from the gathered field, so the rows are one
// process's bit for bit, explicit (the void's surface among the flows) and backward Euler,
// and a 3-rank run stopped at step 20 continues the file on 2 ranks as the uninterrupted run.
TEST_F(DecomposedFilesTest, HeatFlowsAreOneProcesssRowsBitForBit) {
  const std::string flows = "output: {every: 10, heat_flows: true}\ncheckpoint: {every: 20}\n";
  std::string implicit = cases()[4].yaml;
  implicit.replace(implicit.find("time: {dt: auto, steps: 60}"), 27,
                   "time: {method: backward-euler, dt: 0.5, steps: 30}");
  for (const Case& c : {cases()[5], Case{"implicit_2d", implicit}}) {
    SCOPED_TRACE(c.name);
    const std::string path = write_case(std::string(c.name) + ".yaml", c.yaml + flows);
    const fs::path whole = dir_ / (std::string(c.name) + "_whole");
    const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
    ASSERT_EQ(s.code, 0) << s.output;
    const std::string want = read_text(whole / "heat_flows.csv");
    ASSERT_GE(std::count(want.begin(), want.end(), '\n'), 4) << want;
    for (int ranks : {2, 3}) {
      const fs::path split = dir_ / (std::string(c.name) + "_np" + std::to_string(ranks));
      const auto p = run_ranks(ranks, "run " + path + " -q -o " + split.string());
      ASSERT_EQ(p.code, 0) << p.output;
      EXPECT_EQ(read_text(split / "heat_flows.csv"), want) << ranks << " ranks";
      EXPECT_NE(p.output.find("heat flows into the body over the last step"), std::string::npos)
          << p.output;
    }
    const fs::path split = dir_ / (std::string(c.name) + "_restarted");
    const auto first = run_ranks(3, "run " + path + " -q -n 20 -o " + split.string());
    ASSERT_EQ(first.code, 0) << first.output;
    const auto rest = run_ranks(2, "run " + path + " -q -o " + split.string() + " --restart " +
                                       (split / "checkpoint_00000020.h5").string());
    ASSERT_EQ(rest.code, 0) << rest.output;
    EXPECT_EQ(read_text(split / "heat_flows.csv"), want) << "3 ranks to step 20, then 2";
  }
}

// output.fields on 2 and 3 ranks: every output file's /heat_flux, /conductivity and
// /liquid_fraction are one process's bit for bit (rank 0 forms them from the gathered field),
// beside the split u; in fp64 and fp32, plain and compressed (deflate: written collectively
// with a parallel HDF5), with materials, sources, convective faces and a melting wax; and a
// steady state's one output.
TEST_F(DecomposedFilesTest, OutputFieldsAreOneProcesssDatasetsBitForBit) {
  struct Variant {
    std::string name, yaml, fields;
  };
  const std::string melting = cases()[6].yaml;
  ASSERT_NE(melting.find("phase_change"), std::string::npos);
  const std::vector<Variant> variants = {
      {"materials_2d", cases()[4].yaml, "[temperature, heat_flux, conductivity]"},
      {"void_3d_fp32_deflated", cases()[5].yaml + "precision: fp32\n",
       "[heat_flux, conductivity]"},
      {"melting_1d", melting, "[temperature, liquid_fraction, heat_flux, conductivity]"},
      {"steady_ball", steady_ball_yaml("[23, 21, 19]"), "[temperature, heat_flux, conductivity]"}};
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    const std::string compression =
        v.name.find("deflated") != std::string::npos ? ", compression: 3" : "";
    const std::string path = write_case(
        v.name + ".yaml",
        v.yaml + "output: {every: 10, fields: " + v.fields + compression + "}\n");
    const fs::path whole = dir_ / (v.name + "_whole");
    const auto s = heatsim_tests::run_heatsim("run " + path + " -q -o " + whole.string());
    ASSERT_EQ(s.code, 0) << s.output;
    std::vector<std::string> names;
    for (const char* name : {"heat_flux", "conductivity", "liquid_fraction"})
      if (v.fields.find(name) != std::string::npos) names.push_back(name);
    for (int ranks : {2, 3}) {
      const fs::path split = dir_ / (v.name + "_np" + std::to_string(ranks));
      const auto p = run_ranks(ranks, "run " + path + " -q -o " + split.string());
      ASSERT_EQ(p.code, 0) << p.output;
      expect_same_run(whole, split, v.name + " on " + std::to_string(ranks) + " ranks");
      int compared = 0, files = 0;
      for (const auto& e : fs::directory_iterator(whole)) {
        if (e.path().filename().string().rfind("field_", 0) != 0) continue;
        if (e.path().extension() != ".h5") continue;
        ++files;
        for (const std::string& name : names) {
          const io::Dataset want = io::read_dataset(e.path().string(), name, true);
          const io::Dataset got =
              io::read_dataset((split / e.path().filename()).string(), name, true);
          EXPECT_EQ(got.dims, want.dims) << name;
          ASSERT_EQ(got.values.size(), want.values.size()) << name;
          EXPECT_EQ(0, std::memcmp(got.values.data(), want.values.data(),
                                   want.values.size() * sizeof(double)))
              << e.path().filename() << " /" << name << " on " << ranks << " ranks";
          ++compared;
        }
      }
      EXPECT_GE(files, 1);
      EXPECT_EQ(compared, files * static_cast<int>(names.size())) << ranks << " ranks";
      EXPECT_EQ(read_text(whole / "field.xmf"), read_text(split / "field.xmf"));
    }
  }
}

// A checkpoint whose data fails its checksum is found by rank 0 as it reads the slabs of a
// decomposed restart (the other ranks read only the attributes): every rank stops, none hangs.
TEST_F(DecomposedFilesTest, CorruptCheckpointStopsEveryRankOfARestart) {
  const std::string path =
      write_case("c.yaml", cases()[1].yaml + "output: {every: 10}\ncheckpoint: {every: 20}\n");
  const fs::path split = dir_ / "split";
  const auto first = run_ranks(2, "run " + path + " -q -n 20 -o " + split.string());
  ASSERT_EQ(first.code, 0) << first.output;
  const std::string checkpoint = (split / "checkpoint_00000020.h5").string();
  // One bit of a value in the middle of the field, found by its bytes in the file.
  const io::FieldFile f = io::read_field_file(checkpoint);
  const double value = f.field[f.field.size() / 2];
  std::string bytes = read_text(checkpoint);
  const auto at = bytes.find(std::string(reinterpret_cast<const char*>(&value), sizeof value));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = static_cast<char>(bytes[at + 3] ^ 0x10);
  std::ofstream(checkpoint, std::ios::binary) << bytes;
  const auto r =
      run_ranks(3, "run " + path + " -q -o " + split.string() + " --restart " + checkpoint);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_NE(r.output.find("checksum"), std::string::npos) << r.output;
}
