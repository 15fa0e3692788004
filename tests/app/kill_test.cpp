// kill -9 at random moments of a run that writes checkpoints all the time: whatever the moment,
// the newest checkpoint under its real name reads cleanly and continues to the same final
// field, bit for bit, as an uninterrupted run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <thread>

#include "io/checkpoint.hpp"
#include "io/field_file.hpp"
#include "io/output.hpp"

namespace {

namespace fs = std::filesystem;

int run_heatsim(const std::vector<std::string>& args) {
  std::string cmd = HEATSIM_BINARY;
  for (const auto& a : args) cmd += " " + a;
  cmd += " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string case_text(const fs::path& out) {
  // Checkpoints every 2 steps: most of the run's time is spent writing them.
  return "grid: {dims: 2, n: [256, 256], length: [1.0, 1.0]}\n"
         "physics: {alpha: 1.0}\n"
         "boundary: {all: {type: neumann, flux: 0}}\n"
         "initial: {type: gaussian, center: [0.4, 0.6], width: 0.1}\n"
         "time: {dt: auto, steps: 120}\n"
         "backend: cpu\n"
         "output: {directory: " + out.string() + ", every: 0}\n"
         "checkpoint: {every: 2}\n";
}

// The newest checkpoint_*.h5 (temporaries, which end in .tmp, do not count).
fs::path newest_checkpoint(const fs::path& dir) {
  fs::path best;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint_", 0) == 0 && e.path().extension() == ".h5" &&
        (best.empty() || name > best.filename().string()))
      best = e.path();
  }
  return best;
}

// Sets an environment variable for the runs this process starts, and puts it back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

pid_t start_heatsim(const fs::path& case_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(HEATSIM_BINARY, HEATSIM_BINARY, case_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Polls (every 0.5 ms) until the run has written its first checkpoint, however slow the
// machine. False when it ended first (its wait status in `status`) or nothing appeared within
// a minute (then it is killed); either way it has been waited for.
bool wait_for_first_checkpoint(pid_t pid, const fs::path& out, int& status) {
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < give_up) {
    std::error_code ec;
    if (fs::exists(out, ec) && !newest_checkpoint(out).empty()) return true;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return false;
}

// Polls until `deadline`; true (and its wait status) if the run ended before it.
bool ended_before(pid_t pid, Clock::time_point deadline, int& status) {
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(std::chrono::microseconds(500), deadline - Clock::now()));
  }
  return false;
}

// The kill lands at a random moment between the first checkpoint appearing and the end of the
// run, however fast the machine: the window is the one an uninterrupted run of this machine
// takes (timed on the reference run), narrowed to any shorter one a trial that finished before
// its kill took; the moment is drawn in the first 80% of it. Trials go on (at most kMaxTrials)
// until kKills kills have landed, so a few that finish first cost nothing but time.
TEST(KillDuringCheckpoints, NewestCheckpointAlwaysRestartsBitExactly) {
  constexpr int kKills = 24, kMaxTrials = 60;
  // OpenMP threads that wait by sleeping rather than spinning: on a loaded machine (a 2-core CI
  // runner with tests and builds beside this one) spinning threads make each run several times
  // slower; the results are the same bit for bit.
  const ScopedEnv passive("OMP_WAIT_POLICY", "passive");
  const fs::path root =
      fs::temp_directory_path() / ("heatsim_kill_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path ref_out = root / "reference";
  const fs::path ref_case = root / "reference.yaml";
  std::ofstream(ref_case) << case_text(ref_out);
  double window = 0;  // seconds from the first checkpoint appearing to the end of the run
  {
    const pid_t pid = start_heatsim(ref_case);
    ASSERT_GE(pid, 0);
    int status = 0;
    if (!wait_for_first_checkpoint(pid, ref_out, status))
      FAIL() << "the reference run wrote no checkpoint (wait status " << status << ")";
    const Clock::time_point first = Clock::now();
    waitpid(pid, &status, 0);
    window = seconds(Clock::now() - first);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  const heatsim::io::FieldFile reference =
      heatsim::io::read_field_file((ref_out / "field_00000120.h5").string());

  const fs::path out = root / "killed";
  const fs::path c = root / "killed.yaml";
  std::ofstream(c) << case_text(out);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> fraction(0.0, 0.8);
  int trials = 0, kills = 0, restarts = 0, with_temporary = 0, finished_first = 0;
  const double reference_window = window;
  for (; trials < kMaxTrials && kills < kKills; ++trials) {
    fs::remove_all(out);
    const pid_t pid = start_heatsim(c);
    ASSERT_GE(pid, 0);
    int status = 0;
    if (!wait_for_first_checkpoint(pid, out, status))
      FAIL() << "trial " << trials << ": no checkpoint appeared (wait status " << status << ")";
    const Clock::time_point first = Clock::now();
    const Clock::time_point moment =
        first + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(fraction(rng) * window));
    if (ended_before(pid, moment, status)) {
      // Faster than the window: this run's own is the new one.
      window = std::min(window, seconds(Clock::now() - first));
      ++finished_first;
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
      continue;
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {  // it ended just before
      window = std::min(window, seconds(Clock::now() - first));
      ++finished_first;
      continue;
    }
    ++kills;
    // Half-written files only: failed_run.txt's reserve (io/output.hpp) is whole.
    for (const auto& e : fs::directory_iterator(out))
      with_temporary += e.path().extension() == ".tmp" &&
                        e.path().filename() != std::string(heatsim::io::kFailedRunFile) + ".tmp";
    const fs::path ckpt = newest_checkpoint(out);
    SCOPED_TRACE("trial " + std::to_string(trials) + ": " + ckpt.string());
    ASSERT_FALSE(ckpt.empty());
    EXPECT_NO_THROW(heatsim::io::read_checkpoint(ckpt.string()));
    ASSERT_EQ(run_heatsim({"run", c.string(), "--restart", ckpt.string()}), 0);
    const heatsim::io::FieldFile resumed =
        heatsim::io::read_field_file((out / "field_00000120.h5").string());
    ASSERT_EQ(resumed.field.size(), reference.field.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < reference.field.size(); ++i)
      differ += resumed.field[i] != reference.field[i];
    EXPECT_EQ(differ, 0u);
    ++restarts;
  }
  std::printf(
      "  %d kills in %d trials (%d finished first; window %.0f ms, %.0f ms at the end), "
      "%d restarts from the newest checkpoint, %d temporaries left behind\n",
      kills, trials, finished_first, 1e3 * reference_window, 1e3 * window, restarts,
      with_temporary);
  EXPECT_GE(kills, 20);
  EXPECT_GE(restarts, 20);
  fs::remove_all(root);
}

}  // namespace
