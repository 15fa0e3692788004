// The free-space check before a run writes: it counts only the files still to be written (a
// restart's after its step) and credits the files the run removes before it writes (an earlier
// run's with --overwrite or after a failed run, a restart's files after its step). On a small
// tmpfs (mounting one needs root; skipped otherwise), holding a finished run.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

class DiskSpace : public heatsim_tests::ScratchTest {
 protected:
  void SetUp() override {
    ScratchTest::SetUp();
    mnt_ = dir_ / "mnt";
    fs::create_directories(mnt_);
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=3m") != 0)
      GTEST_SKIP() << "mounting a tmpfs needs root: " << std::strerror(errno);
    mounted_ = true;
    // 128 x 128 fp64: 128 KiB of values a file, which the check counts as 192 KiB (a header of
    // 64 KiB each). 80 steps: outputs at 0, 10, ..., 80 (9), checkpoints at 25, 50, 75, 80 (4):
    // 13 files, 2.4 MiB by the check, about 1.7 MiB on the disk; the tmpfs holds 3 MiB.
    case_ = write_file("c.yaml",
                       "grid: {dims: 2, n: [128, 128], length: 1.0}\n"
                       "physics: {alpha: 1.0}\n"
                       "boundary: {all: {type: dirichlet, value: 0.0}}\n"
                       "initial: {type: constant, value: 1.0}\n"
                       "time: {dt: auto, steps: 80}\n"
                       "output: {directory: " +
                           (mnt_ / "out").string() +
                           ", every: 10}\n"
                           "checkpoint: {every: 25}\n");
    const Result first = heatsim("run -q " + case_ + " --backend cpu");
    ASSERT_EQ(first.code, 0) << first.output;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mnt_.c_str(), MNT_DETACH);
    ScratchTest::TearDown();
  }

  double free_bytes() const {
    struct statvfs s {};
    ::statvfs(mnt_.c_str(), &s);
    return static_cast<double>(s.f_bavail) * static_cast<double>(s.f_frsize);
  }

  fs::path mnt_;
  bool mounted_ = false;
  std::string case_;
};

// The whole run again needs more than is free beside the finished run, but the finished run's
// files go first: --overwrite runs.
TEST_F(DiskSpace, OverwriteCountsTheSpaceOfTheFilesItRemoves) {
  ASSERT_LT(free_bytes(), 2.4 * 1024 * 1024) << "the case must not fit beside the finished run";
  const Result r = heatsim("run -q " + case_ + " --backend cpu --overwrite");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(mnt_ / "out" / "checkpoint_00000080.h5"));
}

// A failed run's files (failed_run.txt) are replaced without --overwrite: their space counts.
// (Its checkpoints past step 0 go first here: a failed run that left one is refused instead,
// tests/io/output_test.cpp.)
TEST_F(DiskSpace, AFailedRunsFilesCount) {
  std::vector<fs::path> checkpoints;
  for (const auto& e : fs::directory_iterator(mnt_ / "out"))
    if (e.path().filename().string().rfind("checkpoint_", 0) == 0) checkpoints.push_back(e.path());
  for (const fs::path& p : checkpoints) fs::remove(p);
  ASSERT_LT(free_bytes(), 2.4 * 1024 * 1024) << "the case must not fit beside the failed run";
  std::ofstream(mnt_ / "out" / "failed_run.txt") << "heatsim run failed with exit code 1: x\n";
  const Result r = heatsim("run -q " + case_ + " --backend cpu");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(mnt_ / "out" / "failed_run.txt"));
}

// A restart from step 50 writes the outputs at 60, 70, 80 and the checkpoints at 75 and 80
// only (5 files, 0.9 MiB by the check), after removing the finished run's files after step 50
// (--overwrite).
TEST_F(DiskSpace, ARestartCountsOnlyTheFilesAfterItsStep) {
  const Result r = heatsim("run -q " + case_ + " --backend cpu --overwrite --restart " +
                           (mnt_ / "out" / "checkpoint_00000050.h5").string());
  EXPECT_EQ(r.code, 0) << r.output;
  // The same, with the disk holding less than those 5 files need even with the later files
  // gone: refused, counting 3 outputs and 2 checkpoints after step 50.
  {
    std::ofstream filler(mnt_ / "filler", std::ios::binary);
    for (const std::size_t size : {64 * 1024, 4 * 1024}) {
      const std::string block(size, 'x');
      while (free_bytes() > size && filler.write(block.data(), block.size())) filler.flush();
    }
  }
  const Result refused = heatsim("run -q " + case_ + " --backend cpu --overwrite --restart " +
                                 (mnt_ / "out" / "checkpoint_00000050.h5").string());
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_NE(refused.output.find("3 output files and 2 checkpoints at once after step 50 need"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("and the files the run removes first hold"), std::string::npos)
      << refused.output;
}

}  // namespace
