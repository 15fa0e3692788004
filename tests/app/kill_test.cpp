// kill -9 at random moments of a run that writes checkpoints all the time: whatever the moment,
// the newest checkpoint under its real name reads cleanly and continues to the same final
// field, bit for bit, as an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "io/checkpoint.hpp"
#include "io/field_file.hpp"

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

TEST(KillDuringCheckpoints, NewestCheckpointAlwaysRestartsBitExactly) {
  const fs::path root =
      fs::temp_directory_path() / ("heatsim_kill_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path ref_out = root / "reference";
  const fs::path ref_case = root / "reference.yaml";
  std::ofstream(ref_case) << case_text(ref_out);
  ASSERT_EQ(run_heatsim({ref_case.string()}), 0);
  const heatsim::io::FieldFile reference =
      heatsim::io::read_field_file((ref_out / "field_00000120.h5").string());

  const fs::path out = root / "killed";
  const fs::path c = root / "killed.yaml";
  std::ofstream(c) << case_text(out);
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> delay_us(0, 150000);
  int kills = 0, restarts = 0, with_temporary = 0;
  for (int trial = 0; trial < 24; ++trial) {
    fs::remove_all(out);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      execl(HEATSIM_BINARY, HEATSIM_BINARY, c.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Once the first checkpoint is there, a random moment in the next 150 ms.
    for (int i = 0; i < 400 && (!fs::exists(out) || newest_checkpoint(out).empty()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) continue;  // it finished first
    ++kills;
    if (!fs::exists(out)) continue;
    for (const auto& e : fs::directory_iterator(out))
      with_temporary += e.path().extension() == ".tmp";
    const fs::path ckpt = newest_checkpoint(out);
    if (ckpt.empty()) continue;  // killed before the first checkpoint
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + ckpt.string());
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
  std::printf("  %d kills, %d restarts from the newest checkpoint, %d temporaries left behind\n",
              kills, restarts, with_temporary);
  EXPECT_GE(kills, 20);
  EXPECT_GE(restarts, 20);
  fs::remove_all(root);
}

}  // namespace
