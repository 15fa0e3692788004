// Interrupted runs end to end: the command a stopped run prints continues exactly that run, in
// its own directory, touching no other; signals that arrive together (a process and its group,
// mpirun, a scheduler) are one request that checkpoints, and only a later one aborts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::read_text;
using Clock = std::chrono::steady_clock;
const auto heatsim = heatsim_tests::run_heatsim;

// A command line through /bin/sh, as a user pastes it; exit status (-1: not a normal exit),
// and what it printed into `log`.
int shell(const std::string& command, const fs::path& log) {
  const int status = std::system((command + " > " + log.string() + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The command after "continue with: " in a run's log; empty when there is none.
std::string continue_line(const std::string& log) {
  std::smatch m;
  return std::regex_search(log, m, std::regex("continue with: ([^\n]*)")) ? m[1].str()
                                                                          : std::string();
}

// Every file of a directory with its size and modification time: what "unchanged" means.
std::map<std::string, std::tuple<std::uintmax_t, fs::file_time_type>> snapshot(
    const fs::path& dir) {
  std::map<std::string, std::tuple<std::uintmax_t, fs::file_time_type>> files;
  for (const auto& e : fs::directory_iterator(dir))
    files[e.path().filename().string()] = {fs::file_size(e.path()), fs::last_write_time(e.path())};
  return files;
}

std::vector<double> field_of(const fs::path& file) {
  return heatsim::io::read_field_file(file.string()).field;
}

class Interrupt : public heatsim_tests::ScratchTest {
 protected:
  // A 2D case writing into `out` (the case's own output.directory).
  std::string write_case(const std::string& name, const fs::path& out, long steps, long n = 64,
                         const std::string& extra = "") {
    const std::string side = std::to_string(n);
    return write_file(name, "grid: {dims: 2, n: [" + side + ", " + side +
                                "], length: [1.0, 1.0]}\n"
                                "physics: {alpha: 1.0}\n"
                                "boundary: {all: {type: dirichlet, value: 0}}\n"
                                "initial: {type: gaussian, center: [0.4, 0.6], width: 0.1}\n"
                                "time: {dt: auto, steps: " +
                                std::to_string(steps) +
                                "}\n"
                                "backend: cpu\n"
                                "output: {directory: " +
                                out.string() + ", every: 0}\n" + extra);
  }
};

// Starts heatsim with `args` (stdout and stderr into `log`); its pid.
pid_t start(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(HEATSIM_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(HEATSIM_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

// Waits (at most two minutes) until `path` exists while `pid` runs; false if it ended first.
bool wait_for(pid_t pid, const fs::path& path) {
  const Clock::time_point give_up = Clock::now() + std::chrono::minutes(2);
  while (!fs::exists(path)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid || Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Waits (at most two minutes) until the log holds `text` while `pid` runs; false otherwise.
bool wait_for_text(pid_t pid, const fs::path& log, const std::string& text) {
  const Clock::time_point give_up = Clock::now() + std::chrono::minutes(2);
  while (read_text(log).find(text) == std::string::npos) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid || Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A signal during a steady solve stops it after the iteration it came in, with nothing
// written and 128 + signal (it was ignored: the solve ran on to the end and wrote the result).
TEST_F(Interrupt, ASteadySolveStopsOnASignalWithNothingWritten) {
  const fs::path out = dir_ / "steady";
  const std::string c = write_file(
      "steady.yaml",
      "grid: {dims: 3, n: [97, 97, 97], length: 0.05}\n"
      "materials:\n  epoxy: {conductivity: 0.2, density: 1200, specific_heat: 1100}\n"
      "  copper: {conductivity: 390, density: 8960, specific_heat: 385}\n"
      "regions:\n  - {material: epoxy}\n"
      "  - {material: copper, ball: {center: [0.025, 0.025, 0.025], radius: 0.015}}\n"
      "sources:\n  - {ball: {center: [0.025, 0.025, 0.025], radius: 0.01}, power: 5}\n"
      "boundary:\n  all: {type: convective, h: 10, ambient: 300}\n"
      "  z-: {type: dirichlet, value: 300}\n"
      "initial: {type: constant, value: 300}\ntime: {method: steady}\nbackend: cpu\n"
      "output: {directory: " + out.string() + "}\n");
  for (const int signal : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal);
    const fs::path log = dir_ / ("steady_" + std::to_string(signal) + ".log");
    const pid_t pid = start({"run", c}, log);
    ASSERT_TRUE(wait_for_text(pid, log, "iteration 1:")) << read_text(log);
    kill(pid, signal);
    ASSERT_EQ(wait_exit(pid), 128 + signal) << read_text(log);
    const std::string text = read_text(log);
    EXPECT_NE(text.find("during the steady solve, at iteration"), std::string::npos) << text;
    EXPECT_EQ(text.find("converged in"), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(out)) << text;
  }
}

// The issue's first report: the case's own directory holds a finished run; another run of the
// same case into -o out_int is stopped by SIGINT. The printed line, run verbatim, continues that
// run in out_int with its overrides (-o, --steps) and leaves out_full exactly as it was; the
// result is bit for bit the uninterrupted run's.
TEST_F(Interrupt, PrintedLineContinuesThatRunAndTouchesNoOtherDirectory) {
  const fs::path full = dir_ / "out_full", interrupted = dir_ / "out_int";
  const std::string c = write_case("ex.yaml", full, 100000000, 96, "checkpoint: {every: 500}\n");
  ASSERT_EQ(heatsim("run -q " + c + " --steps 600").code, 0);
  const auto before = snapshot(full);
  ASSERT_GE(before.size(), 3u);

  const fs::path log = dir_ / "int.log";
  const pid_t pid = start({"run", c, "-o", interrupted.string(), "--steps", "20000"}, log);
  ASSERT_TRUE(wait_for(pid, interrupted / "checkpoint_00000500.h5")) << read_text(log);
  kill(pid, SIGINT);
  ASSERT_EQ(wait_exit(pid), 130) << read_text(log);
  const std::string line = continue_line(read_text(log));
  ASSERT_FALSE(line.empty()) << read_text(log);
  EXPECT_NE(line.find("-o " + interrupted.string()), std::string::npos) << line;
  EXPECT_NE(line.find("--steps 20000"), std::string::npos) << line;

  // The printed line verbatim, through the shell.
  ASSERT_EQ(shell(line, dir_ / "cont.log"), 0) << read_text(dir_ / "cont.log");
  EXPECT_EQ(snapshot(full), before) << "the finished run's directory changed";
  ASSERT_TRUE(fs::exists(interrupted / "field_00020000.h5")) << read_text(dir_ / "cont.log");

  // The same steps uninterrupted, elsewhere: the same field bit for bit.
  const fs::path whole = dir_ / "out_whole";
  ASSERT_EQ(heatsim("run -q " + c + " -o " + whole.string() + " --steps 20000").code, 0);
  EXPECT_EQ(field_of(interrupted / "field_00020000.h5"), field_of(whole / "field_00020000.h5"));
}

// A restart told to write into a directory that holds another run's files is refused, with
// nothing removed, unless --overwrite; without -o it continues beside its checkpoint.
TEST_F(Interrupt, RestartIntoAnotherRunsDirectoryIsRefusedWithoutOverwrite) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  const std::string c = write_case("c.yaml", a, 40, 32, "checkpoint: {every: 20}\n");
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  ASSERT_EQ(heatsim("run -q " + c + " -o " + b.string()).code, 0);
  const auto b_before = snapshot(b);
  const std::string ckpt = (a / "checkpoint_00000020.h5").string();
  auto r = heatsim("run -q " + c + " -o " + b.string() + " --restart " + ckpt);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already holds a run's files"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(b), b_before);
  r = heatsim("run -q " + c + " -o " + b.string() + " --restart " + ckpt + " --overwrite");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(field_of(b / "field_00000040.h5"), field_of(a / "field_00000040.h5"));
  // Without -o: beside the checkpoint, whatever output.directory says (--overwrite: the run
  // there finished, past the checkpoint).
  const std::string elsewhere =
      write_case("e.yaml", dir_ / "never", 40, 32, "checkpoint: {every: 20}\n");
  r = heatsim("run -q " + elsewhere + " --restart " + ckpt + " --overwrite");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "never"));
}

TEST_F(Interrupt, MissingOrBrokenCheckpointIsACommandLineMistake) {
  const std::string c = write_case("c.yaml", dir_ / "out", 40, 32);
  auto r = heatsim("run " + c + " --restart " + (dir_ / "missing.h5").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.h5"), std::string::npos) << r.output;
  std::ofstream(dir_ / "broken.h5") << "not hdf5";
  r = heatsim("run " + c + " --restart " + (dir_ / "broken.h5").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// SIGINT and SIGTERM back to back (a shell's Ctrl-C reaching a group, mpirun forwarding,
// `timeout` signalling the process and its group): one request, a checkpoint, 130 or 143.
TEST_F(Interrupt, SignalsTogetherAreOneRequest) {
  for (const auto& [first, second] :
       {std::pair{SIGTERM, SIGINT}, std::pair{SIGINT, SIGINT}, std::pair{SIGTERM, SIGTERM}}) {
    const fs::path out = dir_ / ("out" + std::to_string(first) + std::to_string(second));
    // keep: a run of 1e8 steps keeping every checkpoint would ask for 46 GiB of disk at start.
    const std::string c =
        write_case("long.yaml", out, 100000000, 64, "checkpoint: {every: 200, keep: 1000}\n");
    const fs::path log = dir_ / "two.log";
    const pid_t pid = start({"run", c}, log);
    ASSERT_TRUE(wait_for(pid, out / "checkpoint_00000200.h5")) << read_text(log);
    kill(pid, first);
    kill(pid, second);
    // Two different signals pending at once are handled in the kernel's order (the lower
    // number first), so either may be the request's.
    const int code = wait_exit(pid);
    EXPECT_TRUE(code == 128 + first || code == 128 + second) << code << "\n" << read_text(log);
    const std::string text = read_text(log);
    const std::string line = continue_line(text);
    EXPECT_FALSE(line.empty()) << text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(--restart (\S+))"))) << line;
    EXPECT_TRUE(fs::exists(m[1].str())) << line;
    // The request is acknowledged once, when it comes, before the checkpoint is written.
    const std::string ack = "signal received: stopping at the next chunk of steps";
    const std::size_t at = text.find(ack);
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_EQ(text.find(ack, at + 1), std::string::npos) << text;
    EXPECT_LT(at, text.find("continue with: ")) << text;
    EXPECT_EQ(text.find("second signal"), std::string::npos) << text;
  }
}

// A stop signal that came while the program loaded itself again (to set its threads' wait
// policy) was held there and counts once the handlers are in place: a run that starts with
// SIGTERM pending and held, as that load leaves it, stops before its first step with a
// checkpoint of step 0 (it was ended by the signal's default action, with nothing written).
TEST_F(Interrupt, ASignalHeldWhileTheProgramLoadsStopsTheRunWithACheckpoint) {
  const fs::path out = dir_ / "held";
  // Short enough to end by itself where the signal stayed held (the run then exits 0).
  const std::string c =
      write_case("held.yaml", out, 3000, 64, "checkpoint: {every: 100000, keep: 1}\n");
  const fs::path log = dir_ / "held.log";
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, nullptr);
    raise(SIGTERM);  // pending, held
    setenv("HEATSIM_STOP_SIGNALS_HELD", "1", 1);
    std::vector<char*> argv{const_cast<char*>(HEATSIM_BINARY), const_cast<char*>("run"),
                            const_cast<char*>(c.c_str()), nullptr};
    execv(HEATSIM_BINARY, argv.data());
    _exit(127);
  }
  const int code = wait_exit(pid);
  const std::string text = read_text(log);
  EXPECT_EQ(code, 128 + SIGTERM) << text;
  EXPECT_NE(text.find("signal received: stopping"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out / "checkpoint_00000000.h5")) << text;
  EXPECT_FALSE(continue_line(text).empty()) << text;
}

// Whether signal `sig` is pending for `pid` (/proc/PID/status, SigPnd and ShdPnd).
bool pending(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      if ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1) return true;
  return false;
}

// A signal more than the window after the first aborts at once: the run is frozen (SIGSTOP)
// as soon as its handler took the first SIGINT, so that it cannot finish stopping; 2.5 s later
// a SIGTERM and SIGCONT end it by the handler's _exit(143), which says that no checkpoint of
// the step was written (a user pressing Ctrl-C again sees why the run ended). A try where
// the run got through its checkpoint before it was frozen says so and is repeated.
TEST_F(Interrupt, ASignalAfterTheWindowAbortsAtOnce) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const fs::path out = dir_ / ("out" + std::to_string(attempt));
    // keep: a run of 1e8 steps keeping every checkpoint would ask for 46 GiB of disk at start.
    const std::string c =
        write_case("long.yaml", out, 100000000, 64, "checkpoint: {every: 200, keep: 1000}\n");
    const fs::path log = dir_ / "late.log";
    const pid_t pid = start({"run", c}, log);
    ASSERT_TRUE(wait_for(pid, out / "checkpoint_00000200.h5")) << read_text(log);
    kill(pid, SIGINT);
    while (pending(pid, SIGINT)) {
    }
    kill(pid, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    kill(pid, SIGTERM);
    const Clock::time_point sent = Clock::now();
    kill(pid, SIGCONT);
    const int code = wait_exit(pid);
    const double seconds = std::chrono::duration<double>(Clock::now() - sent).count();
    const std::string text = read_text(log);
    if (!continue_line(text).empty()) {
      std::printf("  attempt %d: the run finished stopping before it was frozen\n", attempt);
      continue;
    }
    EXPECT_EQ(code, 143) << text;
    EXPECT_LT(seconds, 5.0);
    EXPECT_NE(text.find("signal received: stopping at the next chunk of steps"), std::string::npos)
        << text;
    EXPECT_NE(text.find("second signal: stopped at once, with no checkpoint of this step"),
              std::string::npos)
        << text;
    return;
  }
  FAIL() << "every attempt finished stopping before it was frozen";
}

// 50 runs stopped by `timeout -s INT` (the signal to heatsim and to its group, so twice) at
// random moments within 80% of an uninterrupted run's work (after heatsim's start-up; the
// run's length that of the reference run, or of a faster trial that finished first when a
// load eased), beside a thread that keeps a core busy: each run either finished first or was
// stopped with exit code 130 and a checkpoint, whose printed command, run verbatim, continues
// to the uninterrupted run's field bit for bit. A signal before heatsim's main installed its
// handler ends it with nothing written (counted, and there must be few). A process started
// alone starts no MPI: OpenMPI's singleton start-up daemon, which such a signal killed, made
// MPI_Init fail (exit code 1).
TEST_F(Interrupt, FiftyRunsStoppedAtRandomMomentsEachRestartBitExactly) {
  constexpr int kTrials = 50;
  const fs::path ref_out = dir_ / "reference";
  const std::string c = write_case("c.yaml", ref_out, 40000, 48, "checkpoint: {every: 5000}\n");
  // One thread per run (the busy thread below takes the other core of a 2-core machine): a
  // 48 x 48 grid is too small to gain from more, and the trials' length stays predictable.
  setenv("OMP_NUM_THREADS", "1", 1);
  // Stopped and joined however the test ends (an ASSERT returns early). Started before the
  // reference run, so that the run's length the moments are drawn from is measured as the
  // trials run.
  struct Load {
    std::atomic<bool> busy{true};
    std::thread thread{[this] {
      volatile double x = 0;
      while (busy.load(std::memory_order_relaxed)) x = x + 1.0;
    }};
    ~Load() {
      busy = false;
      thread.join();
      unsetenv("OMP_NUM_THREADS");
    }
  } load;
  const Clock::time_point t0 = Clock::now();
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  double run_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::vector<double> reference = field_of(ref_out / "field_00040000.h5");
  // How long heatsim takes to start and end through `timeout` under the same load (the
  // longest of three): a signal sooner would stop a run before its handler is installed, and
  // on a busy machine that was a good part of a 0.15 s run. The moments fall in the run's
  // work after it.
  double startup = 0.0;
  for (int k = 0; k < 3; ++k) {
    const Clock::time_point s0 = Clock::now();
    shell(std::string("timeout 10 ") + HEATSIM_BINARY + " --version", dir_ / "version.log");
    startup = std::max(startup, std::chrono::duration<double>(Clock::now() - s0).count());
  }
  std::mt19937 rng(22);
  std::uniform_real_distribution<double> fraction(0.0, 0.8);
  int stopped = 0, finished = 0, before_main = 0;
  for (int t = 0; t < kTrials; ++t) {
    const fs::path out = dir_ / ("t" + std::to_string(t));
    const fs::path log = dir_ / ("t" + std::to_string(t) + ".log");
    char delay[32];
    std::snprintf(delay, sizeof delay, "%.3f",
                  startup + fraction(rng) * std::max(0.0, run_seconds - startup));
    const Clock::time_point started = Clock::now();
    const int code = shell(std::string("timeout --preserve-status -s INT ") + delay + " " +
                               HEATSIM_BINARY + " run " + c + " -o " + out.string(),
                           log);
    const double took = std::chrono::duration<double>(Clock::now() - started).count();
    const std::string text = read_text(log);
    SCOPED_TRACE("trial " + std::to_string(t) + " at " + delay + " s:\n" + text);
    if (code == 0) {
      ++finished;
      EXPECT_EQ(field_of(out / "field_00040000.h5"), reference);
      // The load eased since the reference run: the moments follow the faster run.
      run_seconds = std::min(run_seconds, took);
      continue;
    }
    if (code == 130 && text.empty() && !fs::exists(out)) {
      ++before_main;
      continue;
    }
    ASSERT_EQ(code, 130);
    const std::string line = continue_line(text);
    ASSERT_FALSE(line.empty());
    ASSERT_EQ(shell(line + " -q", dir_ / "continue.log"), 0) << read_text(dir_ / "continue.log");
    EXPECT_EQ(field_of(out / "field_00040000.h5"), reference);
    ++stopped;
    fs::remove_all(out);
  }
  std::printf("  %d stopped and continued, %d finished first, %d signalled before main "
              "(run %.2f s, start-up %.3f s)\n",
              stopped, finished, before_main, run_seconds, startup);
  EXPECT_GE(stopped, 30) << finished << " finished first; the reference took " << run_seconds
                         << " s";
  EXPECT_LE(before_main, 5);
}

}  // namespace
