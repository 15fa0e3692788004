// A run's output directory is its own while it runs: another run there, with or without
// --overwrite, is refused by a message that names the holder, and removes nothing. A run killed
// outright (SIGKILL) leaves its lock file behind, which blocks no later run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "io/output.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

class DirectoryLock : public heatsim_tests::ScratchTest {
 protected:
  // A run into dir_/out of `steps` steps, a field file every `every`.
  std::string write_case(const std::string& name, long steps, long every) {
    return write_file(name,
                      "grid: {dims: 2, n: [64, 64], length: [1.0, 1.0]}\n"
                      "physics: {alpha: 1.0}\n"
                      "boundary: {all: {type: neumann, flux: 0}}\n"
                      "initial: {type: gaussian, center: [0.5, 0.5], width: 0.1}\n"
                      "time: {dt: auto, steps: " +
                          std::to_string(steps) +
                          "}\n"
                          "backend: cpu\n"
                          "output: {directory: " +
                          (dir_ / "out").string() + ", every: " + std::to_string(every) + "}\n");
  }

  // The complete field files in dir_/out (temporaries left out).
  std::set<std::string> field_files() const {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "out", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("field_", 0) == 0 && e.path().extension() == ".h5") names.insert(name);
    }
    return names;
  }
};

TEST_F(DirectoryLock, ALiveRunsDirectoryIsRefusedAndAKilledRunsLockBlocksNothing) {
  // The holder: a run far longer than the test, writing a field file every 2000 steps.
  const std::string long_case = write_case("long.yaml", 100000000, 2000);
  const pid_t holder = heatsim_tests::start_quiet_run(long_case);
  ASSERT_GE(holder, 0);
  // Until it has written two field files (or 120 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  bool ended = false;
  while (field_files().size() < 2 && std::chrono::steady_clock::now() < deadline &&
         !(ended = waitpid(holder, &status, WNOHANG) == holder))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (ended || field_files().size() < 2) {
    if (!ended) {
      kill(holder, SIGKILL);
      waitpid(holder, &status, 0);
    }
    FAIL() << "the holding run wrote no field files";
  }
  const std::set<std::string> written = field_files();

  // Another run into the directory, with and without --overwrite: refused (exit 2, a directory
  // the run may not use), naming the holder, before it removes or writes anything.
  const std::string short_case = write_case("short.yaml", 20, 10);
  const std::string pid = "pid " + std::to_string(holder);
  for (const std::string& args : {"run " + short_case, "run --overwrite " + short_case}) {
    const Result r = heatsim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("is in use"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(pid), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("long.yaml"), std::string::npos) << r.output;  // its command
    EXPECT_EQ(r.output.find(".tmp"), std::string::npos) << "not its files: " << r.output;
  }
  ASSERT_EQ(waitpid(holder, &status, WNOHANG), 0) << "the holder still runs";
  const std::set<std::string> after = field_files();
  for (const std::string& name : written) EXPECT_EQ(after.count(name), 1u) << name << " removed";

  // Killed outright: its lock file stays, and blocks nothing. Without --overwrite its files
  // are refused as a run's files (not as a live run's); with it they are replaced.
  kill(holder, SIGKILL);
  waitpid(holder, &status, 0);
  ASSERT_TRUE(fs::exists(dir_ / "out" / heatsim::io::kLockFile));
  Result r = heatsim("run " + short_case);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("already holds a run's files"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("in use"), std::string::npos) << r.output;
  r = heatsim("run --overwrite " + short_case);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(field_files(),
            (std::set<std::string>{"field_00000000.h5", "field_00000010.h5", "field_00000020.h5"}));
  EXPECT_FALSE(fs::exists(dir_ / "out" / heatsim::io::kLockFile)) << "a finished run lets go";
}

// Two runs started together into one directory: whichever takes it first runs, the other is
// refused as any run into a held or filled directory is (exit code 2), whether it finds the
// winner's lock or, once the winner has ended, its files; never a failure of the run (exit
// code 1). Ten pairs, so the loser meets the lock after the check before its setup as well.
TEST_F(DirectoryLock, TheLoserOfTwoRunsStartedTogetherIsRefused) {
  const std::string c = write_case("pair.yaml", 200, 100);
  for (int trial = 0; trial < 10; ++trial) {
    fs::remove_all(dir_ / "out");
    const pid_t first = heatsim_tests::start_quiet_run(c);
    const pid_t second = heatsim_tests::start_quiet_run(c);
    ASSERT_GT(first, 0);
    ASSERT_GT(second, 0);
    std::multiset<int> codes;
    for (const pid_t pid : {first, second}) {
      int status = 0;
      waitpid(pid, &status, 0);
      codes.insert(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    EXPECT_EQ(codes, (std::multiset<int>{0, 2})) << "trial " << trial;
    EXPECT_EQ(field_files(), (std::set<std::string>{"field_00000000.h5", "field_00000100.h5",
                                                    "field_00000200.h5"}))
        << "trial " << trial;
  }
}

}  // namespace
