// The output directory rules and the output series with its XDMF index.
#include "io/output.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include "io/checkpoint.hpp"
#include "io/inspect.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = heatsim_tests::make_scratch_dir("output");
    c_.grid.dims = 1;
    c_.grid.n = {8, 1, 1};
    c_.output.directory = (root_ / "run" / "out").string();
    c_.source_text = "# a case\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::vector<double> field(double v) const { return std::vector<double>(8, v); }
  std::string read(const std::string& p) const {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // A finished run: outputs at 0, 10, 20 and checkpoints at 10, 20.
  void make_run() {
    prepare_output_directory(c_, false, false);
    OutputSeries s(c_, 0.1, "cpu");
    for (int step : {0, 10, 20}) s.write(step, 0.1 * step, field(step));
    for (int step : {10, 20})
      write_checkpoint(checkpoint_path(c_, step), make_meta(c_, 0.1, "cpu", step, 0.1 * step),
                       field(step));
  }

  fs::path root_;
  solver::Case c_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST_F(OutputTest, CreatesTheDirectoryAndWritesAnIndexedSeries) {
  make_run();
  const std::string dir = c_.output.directory;
  EXPECT_TRUE(fs::exists(dir + "/field_00000000.h5"));
  EXPECT_TRUE(fs::exists(dir + "/field_00000010.h5"));
  EXPECT_TRUE(fs::exists(dir + "/field_00000020.h5"));
  const std::string xmf = read(dir + "/field.xmf");
  EXPECT_NE(xmf.find(">field_00000000.h5:/u<"), std::string::npos);  // relative to the .xmf
  EXPECT_NE(xmf.find(">field_00000020.h5:/u<"), std::string::npos);
  EXPECT_NE(xmf.find("<Time Value=\"2\"/>"), std::string::npos);
  EXPECT_EQ(xmf.find(root_.string()), std::string::npos) << "no absolute paths inside";
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().extension(), ".h5" == e.path().extension() ? ".h5" : ".xmf")
        << e.path();
}

TEST_F(OutputTest, RewritingAStepReplacesItsEntry) {
  prepare_output_directory(c_, false, false);
  OutputSeries s(c_, 0.1, "cpu");
  s.write(0, 0.0, field(0));
  s.write(5, 0.5, field(1));
  s.write(5, 0.5, field(2));
  ASSERT_EQ(s.entries().size(), 2u);
  EXPECT_EQ(read_field_file(output_path(c_, 5)).field, field(2));
}

TEST_F(OutputTest, RefusesAnEarlierRunUnlessOverwrite) {
  make_run();
  const std::string msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find(c_.output.directory), std::string::npos) << msg;
  EXPECT_NE(msg.find("--overwrite"), std::string::npos) << msg;

  std::ofstream(c_.output.directory + "/notes.txt") << "mine";
  prepare_output_directory(c_, true, false);
  EXPECT_TRUE(find_run_files(c_).empty());
  EXPECT_TRUE(fs::exists(c_.output.directory + "/notes.txt")) << "only run files are removed";
}

// A live run holds its directory (the lock prepare_output_directory returns): another run is
// refused there, with or without --overwrite, by a message that names the holder, and the
// holder's files stay. Once it lets go, --overwrite replaces them.
TEST_F(OutputTest, ADirectoryALiveRunHoldsIsRefusedWithOrWithoutOverwrite) {
  c_.source_path = "cases/plate.yaml";
  DirectoryLock held = prepare_output_directory(c_, false, false);
  ASSERT_TRUE(held.held());
  OutputSeries s(c_, 0.1, "cpu");
  for (int step : {0, 10}) s.write(step, 0.1 * step, field(step));
  const std::vector<RunFile> before = find_run_files(c_);
  ASSERT_EQ(before.size(), 3u);  // two field files and the index: the lock file is none

  const std::string pid = "pid " + std::to_string(::getpid());
  for (const bool overwrite : {false, true}) {
    std::string msg = message_of([&] { prepare_output_directory(c_, overwrite, false); });
    EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
    EXPECT_NE(msg.find(pid), std::string::npos) << msg;
    EXPECT_NE(msg.find("cases/plate.yaml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("another output directory"), std::string::npos) << msg;
    msg = message_of([&] { check_output_directory(c_, {overwrite, false, -1}); });
    EXPECT_NE(msg.find(pid), std::string::npos) << msg;
    EXPECT_TRUE(files_removed_first(c_, {overwrite, false, -1}).empty());
    const DirectoryUse restart{overwrite, true, 10};  // nor a restart from its checkpoint
    EXPECT_NE(message_of([&] { prepare_output_directory(c_, restart); }).find(pid),
              std::string::npos);
  }
  EXPECT_EQ(find_run_files(c_).size(), before.size());
  for (const RunFile& f : before) EXPECT_TRUE(fs::exists(f.path)) << f.path;

  held.release();
  EXPECT_FALSE(fs::exists(c_.output.directory + "/" + kLockFile)) << "removed with the lock";
  prepare_output_directory(c_, true, false);
  EXPECT_TRUE(find_run_files(c_).empty());
}

// A lock file whose run died without letting go (SIGKILL, a power cut: the kernel dropped the
// lock) blocks nothing: the directory counts by its run files alone.
TEST_F(OutputTest, ALockFileOfADeadRunBlocksNothing) {
  fs::create_directories(c_.output.directory);
  const std::string lock_file = c_.output.directory + "/" + kLockFile;
  {
    // A process that took the lock and was killed outright.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        DirectoryLock lock = lock_output_directory(c_.output.directory);
        ::pause();
      } catch (...) {
      }
      ::_exit(1);
    }
    // Until the child holds it (its pid in the file), then SIGKILL.
    const std::string pid = "pid " + std::to_string(child);
    for (int i = 0; i < 10000 && read(lock_file).find(pid) == std::string::npos; ++i)
      ::usleep(1000);
    EXPECT_NE(message_of([&] { check_output_directory(c_, {}); }).find(pid), std::string::npos);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
  }
  ASSERT_TRUE(fs::exists(lock_file)) << "a killed run leaves its lock file";
  EXPECT_NO_THROW(check_output_directory(c_, {}));
  DirectoryLock lock;
  EXPECT_NO_THROW(lock = prepare_output_directory(c_, false, false));
  EXPECT_TRUE(lock.held());
  EXPECT_NE(read(lock_file).find("pid " + std::to_string(::getpid())), std::string::npos);
}

TEST_F(OutputTest, OtherFilesDoNotBlockARun) {
  fs::create_directories(c_.output.directory);
  std::ofstream(c_.output.directory + "/notes.txt") << "mine";
  std::ofstream(c_.output.directory + "/other_00000001.h5") << "x";
  EXPECT_NO_THROW(prepare_output_directory(c_, false, false));
}

// A run under another output.name shares the directory's checkpoints, materials.h5 and CSV
// files: a new run that replaces those (--overwrite) replaces that run whole, its series and
// index too, rather than leave other.xmf naming the new run's files; refused, the message
// counts them. Files under the stem that are not field files stay.
TEST_F(OutputTest, OverwriteReplacesARunUnderAnotherNameWhole) {
  c_.output.name = "other";
  make_run();
  std::ofstream(c_.output.directory + "/other_00000099.h5") << "not a field file";
  std::ofstream(c_.output.directory + "/notes.txt") << "mine";
  c_.output.name = "field";
  const std::string msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find("(6 files)"), std::string::npos) << msg;  // 2 checkpoints, xmf, 3 fields
  prepare_output_directory(c_, true, false);
  const std::string dir = c_.output.directory;
  EXPECT_FALSE(fs::exists(dir + "/other.xmf"));
  for (int step : {0, 10, 20})
    EXPECT_FALSE(fs::exists(dir + "/other_000000" + (step ? std::to_string(step) : "00") + ".h5"))
        << step;
  EXPECT_TRUE(fs::exists(dir + "/other_00000099.h5")) << "not a field file: not a run's";
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
}

TEST_F(OutputTest, RestartKeepsOutputsUpToTheRestartStep) {
  make_run();
  std::ofstream(c_.output.directory + "/field_00000030.h5.tmp") << "left by a crash";
  // --overwrite: the run there went on past step 10, to its checkpoint at 20.
  prepare_output_directory(c_, true, true, 10);
  const std::string dir = c_.output.directory;
  EXPECT_TRUE(fs::exists(dir + "/field_00000000.h5"));
  EXPECT_TRUE(fs::exists(dir + "/field_00000010.h5"));
  EXPECT_TRUE(fs::exists(dir + "/checkpoint_00000010.h5"));
  EXPECT_FALSE(fs::exists(dir + "/field_00000020.h5"));
  EXPECT_FALSE(fs::exists(dir + "/checkpoint_00000020.h5"));
  EXPECT_FALSE(fs::exists(dir + "/field_00000030.h5.tmp"));

  // The continued series indexes the earlier outputs as well as its own.
  OutputSeries s(c_, 0.1, "cpu");
  ASSERT_EQ(s.entries().size(), 2u);
  s.write(15, 1.5, field(15));
  const std::string xmf = read(s.xdmf_path());
  EXPECT_NE(xmf.find("field_00000000.h5"), std::string::npos);
  EXPECT_NE(xmf.find("field_00000010.h5"), std::string::npos);
  EXPECT_NE(xmf.find("field_00000015.h5"), std::string::npos);
  EXPECT_EQ(xmf.find("field_00000020.h5"), std::string::npos);
}

// The index records the end of a run that finished; a restart from an earlier step there is
// refused while the finished output is there, unless --overwrite, and names no checkpoint to
// go on from where the run left none after the step. Once that output is gone (a restart that
// discarded it was killed before it rewrote the index) the record says nothing. A failed
// run's files are replaced without --overwrite, as before.
TEST_F(OutputTest, ARestartDoesNotDiscardAFinishedRunsOutputsUnasked) {
  make_run();
  const std::string index = c_.output.directory + "/field.xmf";
  EXPECT_EQ(xdmf_finished_step(index), -1) << "written during the run: no record";
  OutputSeries(c_, 0.1, "cpu").mark_finished(20);
  EXPECT_EQ(xdmf_finished_step(index), 20);
  EXPECT_EQ(xdmf_finished_step(index + ".missing"), -1);
  EXPECT_NE(read(index).find("field_00000020.h5"), std::string::npos) << "the series kept";
  fs::remove(checkpoint_path(c_, 20));
  const DirectoryUse restart{false, true, 10};
  const std::string msg = message_of([&] { check_output_directory(c_, restart); });
  EXPECT_NE(msg.find("the run there went on past step 10 (it finished at step 20)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("remove the 1 file(s) it wrote after that step (field_00000020.h5)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("--restart"), std::string::npos) << msg;
  EXPECT_TRUE(files_removed_first(c_, restart).empty());
  EXPECT_NO_THROW(check_output_directory(c_, {false, true, 20}));
  EXPECT_NO_THROW(check_output_directory(c_, {true, true, 10}));
  mark_failed_run(c_, 1, "cannot write");
  EXPECT_NO_THROW(check_output_directory(c_, restart));
  fs::remove(c_.output.directory + "/" + kFailedRunFile);
  fs::remove(c_.output.directory + "/field_00000020.h5");
  std::ofstream(c_.output.directory + "/field_00000015.h5") << "a killed run's partial output";
  EXPECT_NO_THROW(check_output_directory(c_, restart));
}

TEST_F(OutputTest, DirectoryThatCannotBeCreated) {
  std::ofstream((root_ / "plain_file").string()) << "x";
  c_.output.directory = (root_ / "plain_file" / "out").string();
  std::string msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find("cannot be created"), std::string::npos) << msg;
  EXPECT_NE(msg.find(c_.output.directory), std::string::npos) << msg;

  c_.output.directory = (root_ / "plain_file").string();
  msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find("not a directory"), std::string::npos) << msg;
}

TEST_F(OutputTest, DirectoryThatIsNotWritable) {
  // /proc refuses new files even to root.
  c_.output.directory = "/proc/self";
  const std::string msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find("not writable"), std::string::npos) << msg;
}

TEST_F(OutputTest, InspectShowsProvenance) {
  c_.source_text = "grid:\n  n: [8]\n";
  make_run();
  std::ostringstream out;
  inspect_file(checkpoint_path(c_, 20), out);
  const std::string s = out.str();
  for (const char* want : {"kind:       checkpoint (Fletcher32 checksum verified)",
                           "step:       20", "time:       2", "grid:       1D, 8 (8 points)",
                           "min/max:    20 / 20", "precision:  fp64", "scheme:     order2",
                           "backend:    cpu", "  |   n: [8]"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
}

// check_output_directory says what prepare_output_directory would refuse and changes nothing.
TEST_F(OutputTest, CheckingTheDirectoryChangesNothing) {
  EXPECT_NO_THROW(check_output_directory(c_, {}));
  EXPECT_FALSE(fs::exists(c_.output.directory)) << "not created by a check";
  make_run();
  const std::size_t files = find_run_files(c_).size();
  const std::string msg = message_of([&] { check_output_directory(c_, {}); });
  EXPECT_NE(msg.find("already holds a run's files"), std::string::npos) << msg;
  EXPECT_NO_THROW(check_output_directory(c_, {true, false, -1}));  // --overwrite
  EXPECT_NO_THROW(check_output_directory(c_, {false, true, 20}));  // a restart here
  // From an older checkpoint: it would remove the run's later checkpoint, unless --overwrite.
  EXPECT_THROW(check_output_directory(c_, {false, true, 10}), std::runtime_error);
  EXPECT_NO_THROW(check_output_directory(c_, {true, true, 10}));
  EXPECT_EQ(find_run_files(c_).size(), files);
}

// The refusal of a directory that holds a run's files names the checkpoint that continues
// that run (its newest: after a kill -9 nothing else says which), and offers no --restart
// where the run left no checkpoint (a steady state's).
TEST_F(OutputTest, TheRefusalNamesTheNewestCheckpointToRestartFrom) {
  make_run();
  std::string msg = message_of([&] { check_output_directory(c_, {}); });
  EXPECT_NE(msg.find("--restart " + checkpoint_path(c_, 20) + " to continue that run"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("CHECKPOINT"), std::string::npos) << msg;
  fs::remove(checkpoint_path(c_, 10));
  fs::remove(checkpoint_path(c_, 20));
  msg = message_of([&] { check_output_directory(c_, {}); });
  EXPECT_NE(msg.find("already holds a run's files"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pass --overwrite to replace them"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("--restart"), std::string::npos) << msg;
}

// A failed run's files (failed_run.txt among them) are replaced by the next run without
// --overwrite; a restart keeps them up to its step and removes the mark.
TEST_F(OutputTest, AFailedRunsFilesAreReplacedAndARestartRemovesTheMark) {
  make_run();
  mark_failed_run(c_, 3, "the field holds 1 NaN/Inf value at step 20");
  const std::string mark = c_.output.directory + "/" + kFailedRunFile;
  EXPECT_NE(read(mark).find("exit code 3: the field holds 1 NaN/Inf"), std::string::npos);
  prepare_output_directory(c_, false, true, 10);
  EXPECT_FALSE(fs::exists(mark));
  EXPECT_TRUE(fs::exists(c_.output.directory + "/field_00000010.h5"));

  // A failed run that left a checkpoint past its start is not discarded unasked: the refusal
  // names the checkpoint that continues it and what the mark says.
  mark_failed_run(c_, 1, "cannot write");
  const std::string msg = message_of([&] { prepare_output_directory(c_, false, false); });
  EXPECT_NE(msg.find("holds a run that failed (failed_run.txt: exit code 1: cannot write"),
            std::string::npos)
      << msg;
  // (The restart from step 10 above removed the checkpoint at 20.)
  EXPECT_NE(msg.find("--restart " + checkpoint_path(c_, 10) + " continues it"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("--overwrite"), std::string::npos) << msg;
  EXPECT_TRUE(fs::exists(checkpoint_path(c_, 10))) << "a refusal removes nothing";
  EXPECT_NO_THROW(prepare_output_directory(c_, true, false));
  EXPECT_TRUE(find_run_files(c_).empty());

  // One that failed before any checkpoint past its start is replaced without asking.
  make_run();
  fs::remove(checkpoint_path(c_, 10));
  fs::remove(checkpoint_path(c_, 20));
  mark_failed_run(c_, 3, "the field holds 1 NaN/Inf value at step 20");
  EXPECT_NO_THROW(prepare_output_directory(c_, false, false));
  EXPECT_TRUE(find_run_files(c_).empty());
}

// --overwrite removes a run's files all together or not at all: a directory of a run file's
// name is no run file (nothing removes it), and a file the case reads (its initial field) is
// not removed with the run that wrote it.
TEST_F(OutputTest, OverwriteRemovesAllOrNothingAndNeverTheCasesInputs) {
  make_run();
  fs::create_directories(c_.output.directory + "/checkpoint_00000030.h5/inside");
  for (const RunFile& f : find_run_files(c_))
    EXPECT_NE(f.path, c_.output.directory + "/checkpoint_00000030.h5") << "a directory";
  solver::Case reads = c_;
  reads.initial.kind = solver::InitialKind::file;
  reads.initial.path = c_.output.directory + "/field_00000020.h5";
  const std::string msg = message_of([&] { prepare_output_directory(reads, true, false); });
  EXPECT_NE(msg.find("the run would remove " + reads.initial.path +
                     ", which the case reads (initial.path)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(find_run_files(c_).size(), 6u) << "nothing removed";  // 3 fields, 2 checkpoints, xmf
  EXPECT_NO_THROW(prepare_output_directory(c_, true, false));
  EXPECT_TRUE(find_run_files(c_).empty());
  EXPECT_TRUE(fs::is_directory(c_.output.directory + "/checkpoint_00000030.h5/inside"));
  for (const auto& e : fs::directory_iterator(c_.output.directory))
    EXPECT_EQ(e.path().filename().string().rfind(".heatsim-removing-", 0), std::string::npos)
        << e.path();
}

// A restart under a changed case in its checkpoint's directory (a branch at step 10) would
// replace the run's outputs after step 10, results of the case that run began with: refused
// unless --overwrite, or where that run is the one that failed there (its files go with the
// mark, as the corrected case's run is meant to replace them).
TEST_F(OutputTest, ABranchInPlaceReplacesItsParentsLaterFilesOnlyWhenAskedOrFailed) {
  make_run();
  DirectoryUse use;
  use.restarting = true;
  use.restart_step = 10;
  use.checkpoint = checkpoint_path(c_, 10);
  use.lineage = branch_lineage(case_digest(c_.source_text), 10, "# a changed case\n");
  use.branching = true;
  const std::string msg = message_of([&] { check_output_directory(c_, use); });
  EXPECT_NE(msg.find("a restart under a changed case from step 10 would replace the 2 file(s)"),
            std::string::npos)
      << msg;  // field_00000020.h5 and checkpoint_00000020.h5
  EXPECT_NE(msg.find("--overwrite"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-o DIR"), std::string::npos) << msg;
  DirectoryUse asked = use;
  asked.overwrite = true;
  EXPECT_NO_THROW(check_output_directory(c_, asked));
  DirectoryUse same = use;  // the same case: the run continues, its later files go
  same.lineage = case_digest(c_.source_text);
  same.branching = false;
  same.overwrite = true;  // as the run went on to its checkpoint at 20, only when asked
  EXPECT_NO_THROW(check_output_directory(c_, same));
  same.overwrite = false;
  EXPECT_NE(message_of([&] {
              check_output_directory(c_, same);
            }).find("--restart " + checkpoint_path(c_, 20)),
            std::string::npos);
  mark_failed_run(c_, 3, "the field holds 1 NaN/Inf value at step 20");
  EXPECT_NO_THROW(check_output_directory(c_, use));
  EXPECT_TRUE(fs::exists(c_.output.directory + "/field_00000020.h5")) << "a check removes nothing";
}

// On a full disk failed_run.txt still gets its message, written into the reserve set aside
// when the run began writing (a tmpfs filled to the last byte; mounting one needs root).
TEST_F(OutputTest, TheFailedRunMarkHoldsItsMessageOnAFullDisk) {
  const fs::path mnt = root_ / "mnt";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root: " << std::strerror(errno);
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  c_.output.directory = (mnt / "out").string();
  prepare_output_directory(c_, false, false);
  const std::string mark = c_.output.directory + "/" + kFailedRunFile;
  // A run that ends without failing leaves no reserve behind.
  reserve_failed_run_mark(c_);
  EXPECT_TRUE(fs::exists(mark + kTemporarySuffix));
  release_failed_run_mark(c_);
  EXPECT_TRUE(fs::is_empty(c_.output.directory));

  reserve_failed_run_mark(c_);
  {
    std::FILE* filler = std::fopen((mnt / "filler").c_str(), "wb");
    ASSERT_NE(filler, nullptr);
    const std::string block(512, 'x');
    while (std::fwrite(block.data(), 1, block.size(), filler) == block.size() &&
           std::fflush(filler) == 0) {
    }
    std::fclose(filler);
  }
  std::FILE* probe = std::fopen((mnt / "probe").c_str(), "wb");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(std::fputs("x", probe) < 0 || std::fflush(probe) != 0, true) << "the disk is full";
  std::fclose(probe);
  const std::string message = "cannot write " + output_path(c_, 40) + ": No space left on device";
  mark_failed_run(c_, 1, message);
  EXPECT_EQ(read(mark), "heatsim run failed with exit code 1: " + message + "\n" +
                            kFailedLineagePrefix + case_digest(c_.source_text) + "\n");
  EXPECT_FALSE(fs::exists(mark + kTemporarySuffix));
  // A message longer than the reserve is cut to it.
  fs::remove(mark);
  reserve_failed_run_mark(c_);  // room again: the mark's bytes were freed
  mark_failed_run(c_, 1, std::string(2 * kFailedRunReserve, 'm'));
  EXPECT_EQ(fs::file_size(mark), kFailedRunReserve);
}

// A steady state's index: one grid named so, with an Information element, at Time 0.
TEST_F(OutputTest, ASteadyStatesIndexSaysSteady) {
  c_.time.method = solver::TimeMethod::steady;
  prepare_output_directory(c_, false, false);
  OutputSeries s(c_, 0.0, "cpu");
  s.write(0, 0.0, field(1));
  const std::string xmf = read(s.xdmf_path());
  EXPECT_NE(xmf.find("<Grid Name=\"steady state\" GridType=\"Uniform\">"), std::string::npos)
      << xmf;
  EXPECT_NE(xmf.find("<Information Name=\"steady\" Value=\"1\"/>"), std::string::npos) << xmf;
  EXPECT_NE(xmf.find("<Time Value=\"0\"/>"), std::string::npos) << xmf;
  const FieldFile f = read_field_file(output_path(c_, 0));
  EXPECT_TRUE(f.meta.steady);
  std::ostringstream out;
  inspect_file(output_path(c_, 0), out);
  EXPECT_NE(out.str().find("state:      steady"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace heatsim::io
