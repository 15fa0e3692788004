// The heatsim executable end to end: restart from a checkpoint is bit-for-bit an uninterrupted
// run (fp64 and fp32, 1D/2D/3D, also from a checkpoint written on SIGINT); damaged or
// mismatched checkpoints are refused with the reason; output directory rules; inspect.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/field_file.hpp"
#include "io/xdmf.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

// Polls `ready` every millisecond while the child `pid` runs, for at most two minutes: true
// once it holds, false when the child exited first (or the time ran out), so a slow machine
// only makes the wait longer, never the outcome different.
template <typename Ready>
bool wait_while_running(pid_t pid, Ready ready) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < give_up) {
    if (ready()) return true;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

namespace fs = std::filesystem;

using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

struct Shape {
  int dims;
  const char* precision;
};

// Every file of a directory by name, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    files[e.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

std::string case_text(int dims, const std::string& precision, const fs::path& out, long steps,
                      const std::string& n_override = "", long output_every = 20,
                      long checkpoint_every = 25) {
  std::string n = dims == 1 ? "[61]" : dims == 2 ? "[25, 19]" : "[13, 11, 9]";
  if (!n_override.empty()) n = n_override;
  const std::string center = dims == 1 ? "[0.3]" : dims == 2 ? "[0.3, 0.6]" : "[0.3, 0.6, 0.5]";
  const std::string scheme = dims == 1 ? "order4" : dims == 2 ? "isotropic" : "order2";
  // A time-dependent Dirichlet face: the continuation must also pick up the right time.
  return "grid: {dims: " + std::to_string(dims) + ", n: " + n +
         ", length: 1.0}\n"
         "physics: {alpha: 1.0}\n"
         "scheme: " +
         scheme +
         "\n"
         "boundary:\n"
         "  all: {type: dirichlet, value: 0.0}\n"
         "  x-: {type: dirichlet, value: 0.5, amplitude: 0.5, frequency: 3.0}\n"
         "initial: {type: gaussian, amplitude: 1.0, center: " +
         center +
         ", width: 0.15}\n"
         "time: {dt: auto, steps: " +
         std::to_string(steps) +
         "}\n"
         "precision: " +
         precision +
         "\n"
         "output: {directory: " +
         out.string() +
         ", every: " + std::to_string(output_every) + "}\n" +
         "checkpoint: {every: " + std::to_string(checkpoint_every) + "}\n";
}

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("restart"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_case(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  static std::string field_at(const fs::path& out, long step) {
    char name[32];
    std::snprintf(name, sizeof name, "field_%08ld.h5", step);
    return (out / name).string();
  }
  static std::string checkpoint_at(const fs::path& out, long step) {
    char name[40];
    std::snprintf(name, sizeof name, "checkpoint_%08ld.h5", step);
    return (out / name).string();
  }

  fs::path dir_;
};

// Stops after 37 steps (a checkpoint at the end, between scheduled ones), continues to 60, and
// compares with 60 uninterrupted steps: the fields, and the files themselves, are identical.
TEST_F(RestartTest, ContinuationIsBitForBitInEveryShape) {
  for (const Shape shape : {Shape{1, "fp64"}, Shape{2, "fp64"}, Shape{3, "fp64"},
                            Shape{1, "fp32"}, Shape{2, "fp32"}, Shape{3, "fp32"}}) {
    SCOPED_TRACE(std::to_string(shape.dims) + "D " + shape.precision);
    const std::string tag = std::to_string(shape.dims) + shape.precision;
    const fs::path full_out = dir_ / ("full" + tag);
    const fs::path split_out = dir_ / ("split" + tag);
    const std::string full = write_case("full" + tag + ".yaml",
                                        case_text(shape.dims, shape.precision, full_out, 60));
    const std::string split = write_case("split" + tag + ".yaml",
                                         case_text(shape.dims, shape.precision, split_out, 60));

    Result r = heatsim("run -q " + full);
    ASSERT_EQ(r.code, 0) << r.output;
    r = heatsim("run -q " + split + " --steps 37");
    ASSERT_EQ(r.code, 0) << r.output;
    ASSERT_TRUE(fs::exists(checkpoint_at(split_out, 37))) << r.output;
    r = heatsim("run -q " + split + " --restart " + checkpoint_at(split_out, 37));
    ASSERT_EQ(r.code, 0) << r.output;

    const FieldFile a = read_field_file(field_at(full_out, 60));
    const FieldFile b = read_field_file(field_at(split_out, 60));
    EXPECT_EQ(a.meta.precision, shape.precision);
    EXPECT_EQ(b.meta.step, 60);
    EXPECT_EQ(a.meta.time, b.meta.time);
    ASSERT_EQ(a.field.size(), b.field.size());
    EXPECT_TRUE(a.field == b.field) << "final fields differ";
    const Checkpoint ca = read_checkpoint(checkpoint_at(full_out, 60));
    const Checkpoint cb = read_checkpoint(checkpoint_at(split_out, 60));
    EXPECT_TRUE(ca.field == cb.field);
    // The continued series indexes the outputs of both parts.
    std::ifstream in((split_out / "field.xmf").string());
    const std::string xmf{std::istreambuf_iterator<char>(in), {}};
    for (const char* f : {"field_00000000.h5", "field_00000020.h5", "field_00000037.h5",
                          "field_00000040.h5", "field_00000060.h5"})
      EXPECT_NE(xmf.find(f), std::string::npos) << f;
  }
}

// Smaller output files (fp32, deflate) of an fp64 run: the checkpoints stay fp64 and
// uncompressed, and the continuation is still bit for bit, its outputs the same files' values.
TEST_F(RestartTest, SmallerOutputsLeaveCheckpointsFullAndRestartsExact) {
  const auto text = [&](const fs::path& out) {
    std::string t = case_text(2, "fp64", out, 60);
    const std::string every = "every: 20}";
    t.replace(t.find(every), every.size(), "every: 20, precision: fp32, compression: 3}");
    return t;
  };
  const fs::path full_out = dir_ / "full_small";
  const fs::path split_out = dir_ / "split_small";
  const std::string full = write_case("full_small.yaml", text(full_out));
  const std::string split = write_case("split_small.yaml", text(split_out));
  ASSERT_EQ(heatsim("run -q " + full).code, 0);
  Result r = heatsim("run -q " + split + " --steps 37");
  ASSERT_EQ(r.code, 0) << r.output;
  const Checkpoint at37 = read_checkpoint(checkpoint_at(split_out, 37));
  EXPECT_EQ(at37.meta.precision, "fp64");
  r = heatsim("run -q " + split + " --restart " + checkpoint_at(split_out, 37));
  ASSERT_EQ(r.code, 0) << r.output;
  const FieldFile a = read_field_file(field_at(full_out, 60));
  const FieldFile b = read_field_file(field_at(split_out, 60));
  EXPECT_EQ(a.meta.precision, "fp32");
  EXPECT_EQ(a.deflate, 3);
  EXPECT_TRUE(a.field == b.field) << "final outputs differ";
  const FieldFile ca = read_field_file(checkpoint_at(full_out, 60));
  const FieldFile cb = read_field_file(checkpoint_at(split_out, 60));
  EXPECT_EQ(ca.meta.precision, "fp64");
  EXPECT_EQ(ca.deflate, 0);
  EXPECT_TRUE(ca.field == cb.field) << "final checkpoints differ";
  // The fp32 output holds the checkpoint's doubles rounded to floats.
  ASSERT_EQ(a.field.size(), ca.field.size());
  for (std::size_t i = 0; i < a.field.size(); ++i)
    ASSERT_EQ(a.field[i], static_cast<double>(static_cast<float>(ca.field[i]))) << i;
}

// bdf2 steps from the fields of two steps: its checkpoints carry the one before (in fp64, also
// in an fp32 run), and a run stopped after 37 steps (between the outputs at 20 and 40, after
// the checkpoint at 25) continues to 60 exactly as the uninterrupted run. A checkpoint without
// it (here one of a Crank-Nicolson run) restarts bdf2 with a backward Euler step, said so.
TEST_F(RestartTest, Bdf2ContinuationIsBitForBit) {
  const auto bdf2_case = [&](const std::string& precision, const fs::path& out,
                             const std::string& method) {
    std::string text = case_text(2, precision, out, 60);
    text.replace(text.find("scheme: isotropic"), 17, "scheme: order2");
    text.replace(text.find("dt: auto"), 8, "method: " + method + ", dt: 0.01");
    return text;
  };
  for (const std::string precision : {"fp64", "fp32"}) {
    SCOPED_TRACE(precision);
    const fs::path full_out = dir_ / ("bdf2_full_" + precision);
    const fs::path split_out = dir_ / ("bdf2_split_" + precision);
    const std::string full = write_case("bdf2_full.yaml", bdf2_case(precision, full_out, "bdf2"));
    const std::string split =
        write_case("bdf2_split.yaml", bdf2_case(precision, split_out, "bdf2"));
    Result r = heatsim("run -q " + full);
    ASSERT_EQ(r.code, 0) << r.output;
    r = heatsim("run -q " + split + " --steps 37");
    ASSERT_EQ(r.code, 0) << r.output;
    const Checkpoint at37 = read_checkpoint(checkpoint_at(split_out, 37));
    ASSERT_EQ(at37.previous.size(), at37.field.size());
    EXPECT_FALSE(at37.previous == at37.field);
    r = heatsim("run " + split + " --restart " + checkpoint_at(split_out, 37));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("backward Euler"), std::string::npos) << r.output;
    for (const long step : {40L, 60L}) {
      const FieldFile a = read_field_file(field_at(full_out, step));
      const FieldFile b = read_field_file(field_at(split_out, step));
      EXPECT_TRUE(a.field == b.field) << "fields at step " << step << " differ";
    }
    const Checkpoint ca = read_checkpoint(checkpoint_at(full_out, 60));
    const Checkpoint cb = read_checkpoint(checkpoint_at(split_out, 60));
    EXPECT_TRUE(ca.field == cb.field);
    EXPECT_TRUE(ca.previous == cb.previous);
    EXPECT_EQ(ca.previous.size(), ca.field.size());
  }
  const fs::path cn_out = dir_ / "cn";
  const std::string cn = write_case("cn.yaml", bdf2_case("fp64", cn_out, "crank-nicolson"));
  Result r = heatsim("run -q " + cn + " --steps 37");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(read_checkpoint(checkpoint_at(cn_out, 37)).previous.empty());
  const std::string to_bdf2 = write_case("to_bdf2.yaml", bdf2_case("fp64", cn_out, "bdf2"));
  r = heatsim("run " + to_bdf2 + " --restart " + checkpoint_at(cn_out, 37));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("holds no field of step 36 (written by a run of another method): "
                          "bdf2 starts again with a backward Euler step"),
            std::string::npos)
      << r.output;
}

// A checkpoint records the fusion depth of its run; a restart of a `fusion: auto` case takes
// that depth instead of choosing again, and says so.
TEST_F(RestartTest, FusionAutoContinuesAtTheCheckpointsDepth) {
  const fs::path out = dir_ / "auto";
  const std::string path =
      write_case("auto.yaml", case_text(2, "fp64", out, 30) + "fusion: auto\n");
  Result r = heatsim("run " + path + " --steps 25");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(asked for auto)"), std::string::npos) << r.output;
  const Checkpoint cp = read_checkpoint(checkpoint_at(out, 25));
  EXPECT_EQ(cp.meta.fusion, 1);  // the CPU takes one step per pass
  r = heatsim("run " + path + " --restart " + checkpoint_at(out, 25));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(asked for auto: 1, the checkpoint's depth)"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_field_file(field_at(out, 30)).meta.step, 30);
}

// SIGINT mid-run writes a checkpoint at the step reached; continuing from it to a later step
// gives exactly what an uninterrupted run to that step gives.
TEST_F(RestartTest, ContinuationFromASignalCheckpoint) {
  const fs::path out = dir_ / "out";
  // Outputs only at the start and the end; a checkpoint only on the signal.
  const std::string text = case_text(2, "fp64", out, 50000000, "[64, 48]", 100000000, 0);
  const std::string c = write_case("long.yaml", text);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(HEATSIM_BINARY, HEATSIM_BINARY, "run", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the run has started stepping (the initial output exists, written after the
  // signal handlers are installed) however slow the machine, then interrupt.
  ASSERT_TRUE(wait_while_running(pid, [&] { return fs::exists(field_at(out, 0)); }))
      << "the run ended or never wrote its initial output";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 130);

  long step = -1;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint_", 0) == 0) step = std::stol(name.substr(11, 8));
  }
  ASSERT_GT(step, 0) << "no checkpoint written on SIGINT";
  EXPECT_FALSE(fs::exists(checkpoint_at(out, step) + ".tmp"));
  const long end = step + 123;

  Result r = heatsim("run -q " + c + " --steps " + std::to_string(end) + " --restart " +
                     checkpoint_at(out, step));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string ref = write_case(
      "ref.yaml", case_text(2, "fp64", dir_ / "ref", 50000000, "[64, 48]", 100000000, 0));
  r = heatsim("run -q " + ref + " --steps " + std::to_string(end));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(read_field_file(field_at(out, end)).field ==
              read_field_file(field_at(dir_ / "ref", end)).field);
}

TEST_F(RestartTest, MismatchedCheckpointIsRefusedNamingTheDifference) {
  const fs::path out = dir_ / "out";
  const std::string c = write_case("c.yaml", case_text(2, "fp64", out, 30));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  const std::string ckpt = checkpoint_at(out, 25);

  struct Variant {
    std::string text;
    std::string expect;
  };
  const Variant variants[] = {
      {case_text(2, "fp64", dir_ / "o1", 30, "[31, 19]"), "grid.n: checkpoint 25x19, case 31x19"},
      {case_text(2, "fp32", dir_ / "o2", 30), "precision: checkpoint fp64, case fp32"},
      {case_text(3, "fp64", dir_ / "o3", 30), "grid.dims: checkpoint 2, case 3"},
      {[&] {
         std::string t = case_text(2, "fp64", dir_ / "o4", 30);
         t.replace(t.find("scheme: isotropic"), 17, "scheme: order4");
         return t;
       }(),
       "scheme: checkpoint isotropic, case order4"},
      {[&] {
         std::string t = case_text(2, "fp64", dir_ / "o5", 30);
         t.replace(t.find("dt: auto"), 8, "dt: 1e-5");
         return t;
       }(),
       "time.dt: checkpoint"},
  };
  int i = 0;
  for (const Variant& v : variants) {
    const std::string other = write_case("v" + std::to_string(i++) + ".yaml", v.text);
    const Result r = heatsim("run -q " + other + " --restart " + ckpt);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(ckpt), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(v.expect), std::string::npos) << r.output;
  }
}

TEST_F(RestartTest, DamagedCheckpointIsRefusedNamingTheFile) {
  const fs::path out = dir_ / "out";
  const std::string c = write_case("c.yaml", case_text(3, "fp64", out, 30));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  const std::string ckpt = checkpoint_at(out, 25);

  // One flipped bit in the field data: the Fletcher32 checksum catches it.
  const std::string corrupt = (dir_ / "corrupt.h5").string();
  {
    const Checkpoint good = read_checkpoint(ckpt);
    std::ifstream in(ckpt, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), {}};
    // The field's bytes: find the largest value's bit pattern, which occurs once.
    double peak = 0;
    for (double v : good.field) peak = std::max(peak, v);
    const std::string pattern(reinterpret_cast<const char*>(&peak), 8);
    const std::size_t at = bytes.find(pattern);
    ASSERT_NE(at, std::string::npos);
    bytes[at + 2] ^= 0x04;
    std::ofstream(corrupt, std::ios::binary) << bytes;
  }
  Result r = heatsim("run -q " + c + " --restart " + corrupt);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find(corrupt), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checksum"), std::string::npos) << r.output;

  const std::string truncated = (dir_ / "truncated.h5").string();
  fs::copy_file(ckpt, truncated);
  fs::resize_file(truncated, fs::file_size(ckpt) / 2);
  r = heatsim("run -q " + c + " --restart " + truncated);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find(truncated), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;

  r = heatsim("run -q " + c + " --restart " + field_at(out, 20));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("not a checkpoint"), std::string::npos) << r.output;
}

// The disk fills up mid-run (a small tmpfs, filled while the run is stopped): the run fails
// with a clear message, leaves no temporaries, and its last checkpoint is intact and restarts.
TEST_F(RestartTest, DiskFullMidRunKeepsTheLastCheckpoint) {
  const fs::path mnt = dir_ / "mnt";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=32m") != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root: " << std::strerror(errno);
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};

  const fs::path out = mnt / "out";
  const std::string c = write_case(
      "c.yaml", case_text(2, "fp64", out, 50000, "[64, 48]", 500, 1000));
  const std::string log = (dir_ / "log.txt").string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(HEATSIM_BINARY, HEATSIM_BINARY, "run", "-q", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(wait_while_running(pid, [&] { return fs::exists(checkpoint_at(out, 1000)); }))
      << "the run ended before its checkpoint at step 1000";
  kill(pid, SIGSTOP);
  {
    // Fill the file system to the last byte.
    std::FILE* filler = std::fopen((mnt / "filler").c_str(), "wb");
    ASSERT_NE(filler, nullptr);
    const std::string block(4096, 'x');
    while (std::fwrite(block.data(), 1, block.size(), filler) == block.size() &&
           std::fflush(filler) == 0) {
    }
    std::fclose(filler);
  }
  kill(pid, SIGCONT);
  int status = 0;
  waitpid(pid, &status, 0);
  std::string output;
  {
    std::ifstream in(log);
    output.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_NE(output.find("cannot write " + out.string()), std::string::npos) << output;
  {
    // The mark holds the message on the full disk too (its reserve, set aside at the start).
    std::ifstream in(out / "failed_run.txt");
    const std::string mark{std::istreambuf_iterator<char>(in), {}};
    EXPECT_EQ(mark.rfind("heatsim run failed with exit code 1: cannot write " + out.string(), 0),
              0u)
        << mark;
    EXPECT_NE(mark.find("No space left on device"), std::string::npos) << mark;
  }

  long last = -1;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "temporary left behind: " << name;
    if (name.rfind("checkpoint_", 0) == 0) last = std::max(last, std::stol(name.substr(11, 8)));
  }
  ASSERT_GE(last, 1000);
  EXPECT_NO_THROW(read_checkpoint(checkpoint_at(out, last)));
  std::ifstream xmf((out / "field.xmf").string());
  const std::string index{std::istreambuf_iterator<char>(xmf), {}};
  EXPECT_NE(index.find("</Xdmf>"), std::string::npos) << "the index is complete";

  fs::remove(mnt / "filler");
  const Result r = heatsim("run -q " + c + " --steps " + std::to_string(last + 10) +
                           " --restart " + checkpoint_at(out, last));
  EXPECT_EQ(r.code, 0) << r.output;
}

// The disk fills up while the writer thread writes a checkpoint: a tmpfs with room for three
// of the run's files (the output at step 0, the checkpoints at steps 10 and 20), so the
// checkpoint at step 30 fails a tenth of the way in while the run steps on. The run's check of
// the free space before it starts (which counts every file: this run would be refused) is off,
// standing for a disk that other processes fill after it. The run reports it and fails;
// the checkpoint it could not finish is under no name (nor left as a temporary), nothing after
// it was written, and the last complete checkpoint continues the run bit for bit.
TEST_F(RestartTest, DiskFullUnderTheWriterThreadKeepsTheLastCompleteCheckpoint) {
  const fs::path mnt = dir_ / "mnt";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=25m") != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root: " << std::strerror(errno);
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  // 1024 x 1024 fp64: 8.4 MB a file.
  const fs::path out = mnt / "out";
  const std::string c =
      write_case("c.yaml", case_text(2, "fp64", out, 40, "[1024, 1024]", 0, 10));
  const Result r =
      heatsim_tests::run_heatsim_with("HEATSIM_DISK_CHECK=off", "run " + c + " --backend cpu");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot write " + checkpoint_at(out, 30)), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  const std::vector<std::string> expected{"checkpoint_00000010.h5", "checkpoint_00000020.h5",
                                          "failed_run.txt", "field.xmf", "field_00000000.h5"};
  EXPECT_EQ(names, expected);
  EXPECT_NO_THROW(read_checkpoint(checkpoint_at(out, 20)));

  // The uninterrupted run, and the continuation from step 20 elsewhere: the same field.
  const fs::path full_out = dir_ / "full";
  const std::string full =
      write_case("full.yaml", case_text(2, "fp64", full_out, 40, "[1024, 1024]", 0, 10));
  ASSERT_EQ(heatsim("run -q " + full + " --backend cpu").code, 0);
  const fs::path continued = dir_ / "continued";
  const Result again = heatsim("run -q " + c + " --backend cpu -o " + continued.string() +
                               " --restart " + checkpoint_at(out, 20));
  ASSERT_EQ(again.code, 0) << again.output;
  const FieldFile a = read_field_file(field_at(full_out, 40));
  const FieldFile b = read_field_file(field_at(continued, 40));
  EXPECT_TRUE(a.field == b.field) << "the continuation differs from the uninterrupted run";
}

TEST_F(RestartTest, EarlierRunIsKeptUnlessOverwrite) {
  const fs::path out = dir_ / "out";
  const std::string c = write_case("c.yaml", case_text(1, "fp64", out, 30));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  Result r = heatsim("run -q " + c);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("--overwrite"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(field_at(out, 30)));
  r = heatsim("run -q " + c + " --overwrite --steps 10");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(field_at(out, 30))) << "old outputs removed";
  EXPECT_TRUE(fs::exists(field_at(out, 10)));
}

// A restart from an earlier checkpoint of a run that finished (a command from the shell's
// history, pasted again) would remove the finished results after that step: refused (exit
// code 2, every file unchanged, byte for byte) with what would be lost and what to do. With
// --overwrite it discards them and runs again from there, to the uninterrupted run's field.
TEST_F(RestartTest, AFinishedRunsResultsAreNotDiscardedUnasked) {
  const fs::path out = dir_ / "out", whole = dir_ / "whole";
  const std::string c = write_case("c.yaml", case_text(2, "fp64", out, 60));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  ASSERT_EQ(heatsim("run -q " + c + " -o " + whole.string()).code, 0);
  EXPECT_EQ(xdmf_finished_step((out / "field.xmf").string()), 60);
  const auto before = snapshot(out);
  Result r = heatsim("run -q " + c + " --restart " + checkpoint_at(out, 25));
  EXPECT_EQ(r.code, 2) << r.output;
  // After step 25: the outputs at 40 and 60, the checkpoints at 50 and 60.
  for (const std::string& said :
       std::vector<std::string>{"finished at step 60", "remove the 4 file(s)",
                                "--restart " + checkpoint_at(out, 60), "--overwrite", "-o DIR"})
    EXPECT_NE(r.output.find(said), std::string::npos) << said << "\n" << r.output;
  EXPECT_TRUE(snapshot(out) == before) << "the finished run's directory changed";
  // The run's own newest checkpoint (its last step) continues it, with nothing to remove.
  r = heatsim("run -q " + c + " --restart " + checkpoint_at(out, 60) + " --steps 70");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(xdmf_finished_step((out / "field.xmf").string()), 70);
  EXPECT_TRUE(fs::exists(field_at(out, 60)));

  r = heatsim("run -q " + c + " --restart " + checkpoint_at(out, 25) + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(checkpoint_at(out, 70))) << "the discarded run's later checkpoint";
  EXPECT_EQ(xdmf_finished_step((out / "field.xmf").string()), 60);
  EXPECT_TRUE(read_field_file(field_at(out, 60)).field ==
              read_field_file(field_at(whole, 60)).field);
  EXPECT_TRUE(read_checkpoint(checkpoint_at(out, 60)).field ==
              read_checkpoint(checkpoint_at(whole, 60)).field);
}

// A run killed after its step-50 checkpoint (simulated: a finished run's index without the
// record of its end and its last checkpoint gone) leaves its output at step 60 past that
// checkpoint. A restart from an older checkpoint would remove the newer one: refused, naming
// it, nothing changed. The newest checkpoint continues the run without --overwrite, its partial
// output recomputed, to the uninterrupted run's field.
TEST_F(RestartTest, AKilledRunContinuesFromItsNewestCheckpointOnly) {
  const fs::path out = dir_ / "out", whole = dir_ / "whole";
  const std::string c = write_case("c.yaml", case_text(2, "fp64", out, 60));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  ASSERT_EQ(heatsim("run -q " + c + " -o " + whole.string()).code, 0);
  const fs::path index = out / "field.xmf";
  std::string text;
  {
    std::ifstream in(index);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string record = "      <Information Name=\"finished\" Value=\"60\"/>\n";
  ASSERT_NE(text.find(record), std::string::npos) << text;
  text.erase(text.find(record), record.size());
  std::ofstream(index, std::ios::trunc) << text;
  ASSERT_EQ(xdmf_finished_step(index.string()), -1);
  fs::remove(checkpoint_at(out, 60));
  ASSERT_TRUE(fs::exists(field_at(out, 60)));

  const auto before = snapshot(out);
  Result r = heatsim("run -q " + c + " --restart " + checkpoint_at(out, 25));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("its newest checkpoint at step 50"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--restart " + checkpoint_at(out, 50)), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("finished at"), std::string::npos) << r.output;
  EXPECT_TRUE(snapshot(out) == before) << "the killed run's directory changed";

  r = heatsim("run -q " + c + " --restart " + checkpoint_at(out, 50));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(read_field_file(field_at(out, 60)).field ==
              read_field_file(field_at(whole, 60)).field);
  EXPECT_EQ(xdmf_finished_step(index.string()), 60);
}

// A checkpoint copied into another run's directory does not make that run's files its own:
// the restart there is refused and changes nothing (it would have removed the other run's later
// files and spliced the two runs into one series). A restart of a run whose case changed on an
// earlier restart still continues in its own directory.
TEST_F(RestartTest, CheckpointInAnotherRunsDirectoryIsRefused) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  const std::string case_a = write_case("a.yaml", case_text(2, "fp64", a, 60));
  std::string text_b = case_text(2, "fp64", b, 60);
  text_b.replace(text_b.find("value: 0.5"), 10, "value: 0.7");
  const std::string case_b = write_case("b.yaml", text_b);
  ASSERT_EQ(heatsim("run -q " + case_a).code, 0);
  ASSERT_EQ(heatsim("run -q " + case_b).code, 0);
  const fs::path copied = b / "from_a.h5";
  fs::copy_file(checkpoint_at(a, 25), copied);
  const auto before = snapshot(b);
  const Result r = heatsim("run -q " + case_a + " --restart " + copied.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("another run's files"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-o DIR"), std::string::npos) << r.output;
  EXPECT_TRUE(snapshot(b) == before) << "the other run's directory changed";

  // Into a directory of its own (-o) the same restart runs, and equals the run it continues.
  const Result moved = heatsim("run -q " + case_a + " --restart " + copied.string() + " -o " +
                               (dir_ / "c").string());
  ASSERT_EQ(moved.code, 0) << moved.output;
  EXPECT_TRUE(read_field_file(field_at(dir_ / "c", 60)).field ==
              read_field_file(field_at(a, 60)).field);

  // Run a restarted at step 25 under a changed case (a branch of it from there), then again
  // from its step-50 checkpoint (written under the changed case): still its own run's
  // directory, the outputs up to step 25 the first run's, the later ones the branch's.
  std::string changed = case_text(2, "fp64", a, 60);
  changed.replace(changed.find("amplitude: 0.5"), 14, "amplitude: 0.4");
  const std::string case_a2 = write_case("a2.yaml", changed);
  Result again = heatsim("run -q " + case_a2 + " --restart " + checkpoint_at(a, 25));
  ASSERT_EQ(again.code, 2) << again.output;  // it would replace the first run's later files
  EXPECT_NE(again.output.find("a restart under a changed case from step 25 would replace"),
            std::string::npos)
      << again.output;
  again = heatsim("run -q " + case_a2 + " --restart " + checkpoint_at(a, 25) + " --overwrite");
  ASSERT_EQ(again.code, 0) << again.output;
  // The branch finished at 60: its step-50 checkpoint continues it there once asked to
  // discard its later files.
  again = heatsim("run -q " + case_a2 + " --restart " + checkpoint_at(a, 50));
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find("finished at step 60"), std::string::npos) << again.output;
  again = heatsim("run -q " + case_a2 + " --restart " + checkpoint_at(a, 50) + " --overwrite");
  EXPECT_EQ(again.code, 0) << again.output;
  const std::string first = read_field_file(field_at(a, 0)).meta.run_digest;
  const std::string branch = read_field_file(field_at(a, 60)).meta.run_digest;
  EXPECT_EQ(first, case_digest(read_field_file(field_at(a, 0)).meta.case_yaml));
  EXPECT_EQ(read_field_file(field_at(a, 40)).meta.run_digest, branch);
  EXPECT_EQ(branch, branch_lineage(first, 25, read_field_file(field_at(a, 60)).meta.case_yaml));
  EXPECT_TRUE(in_run_history(branch, first, 20));
  EXPECT_FALSE(in_run_history(branch, first, 40));
  EXPECT_NE(read_field_file(field_at(b, 0)).meta.run_digest, first);
}

// The lineages of branches: a run's own files at any step, an ancestor's up to the step its
// line left it, nobody else's; a branch of a branch keeps both ancestors; files from before
// lineages had ancestors (a digest alone) read the same.
TEST(RunLineage, BranchesKeepTheirAncestorsUpToTheBranchStep) {
  const std::string a = case_digest("case a");
  const std::string b = branch_lineage(a, 50000, "case b");
  const std::string c = branch_lineage(b, 80000, "case c");
  EXPECT_EQ(b.substr(b.find(';')), ";" + a + "@50000");
  EXPECT_EQ(c.substr(c.find(';')), ";" + b.substr(0, b.find(';')) + "@80000;" + a + "@50000");
  EXPECT_NE(branch_lineage(a, 50001, "case b"), b);  // another branch step, another run
  EXPECT_NE(branch_lineage(a, 50000, "case b2"), b);
  EXPECT_TRUE(in_run_history(a, a, 123456789));
  EXPECT_TRUE(in_run_history(b, b, 90000));
  EXPECT_TRUE(in_run_history(b, b.substr(0, b.find(';')), 90000));
  EXPECT_TRUE(in_run_history(b, a, 50000));
  EXPECT_FALSE(in_run_history(b, a, 50001));
  EXPECT_FALSE(in_run_history(a, b, 10));  // a parent has no branch in its history
  EXPECT_TRUE(in_run_history(c, b, 80000));
  EXPECT_FALSE(in_run_history(c, b, 80001));
  EXPECT_TRUE(in_run_history(c, a, 40000));
  EXPECT_FALSE(in_run_history(c, a, 60000));
  EXPECT_FALSE(in_run_history(c, case_digest("case d"), 0));
}

// Two branches of one run (a parameter study: the second restarted from the first's checkpoint
// under another conductivity into a directory of its own) are different runs: the second's
// checkpoint copied into (a copy of) the first's directory is refused there, with nothing
// removed, because the first run's outputs after the branch step are not the second's history.
// Before branches had lineages of their own, this restart removed the first run's later files
// and kept its outputs between the branch step and the restart step beside the second's.
TEST_F(RestartTest, BranchCheckpointInTheParentsDirectoryIsRefused) {
  const fs::path a = dir_ / "a", b = dir_ / "b", copy = dir_ / "a_copy";
  const std::string case_a = write_case("a.yaml", case_text(2, "fp64", a, 100));
  std::string text_b = case_text(2, "fp64", a, 100);
  text_b.replace(text_b.find("value: 0.5"), 10, "value: 0.7");
  const std::string case_b = write_case("b.yaml", text_b);
  ASSERT_EQ(heatsim("run -q " + case_a).code, 0);
  const Result branch = heatsim("run -q " + case_b + " --restart " + checkpoint_at(a, 25) + " -o " +
                                b.string() + " --steps 75");
  ASSERT_EQ(branch.code, 0) << branch.output;
  fs::copy(a, copy);
  const fs::path copied = copy / "b_checkpoint.h5";
  fs::copy_file(checkpoint_at(b, 75), copied);
  const auto before = snapshot(copy);
  const Result r = heatsim("run -q " + case_b + " --restart " + copied.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("another run's files"), std::string::npos) << r.output;
  EXPECT_TRUE(snapshot(copy) == before) << "the first run's directory changed";
  // With the parent's outputs between the branch step and the restart step gone and the
  // branch's checkpoints copied over the parent's of the same names, the parent's later files
  // are still not the branch's to remove: refused, the parent's last checkpoint kept.
  const fs::path copy2 = dir_ / "a_copy2";
  fs::copy(a, copy2);
  for (long step : {40, 60}) fs::remove(field_at(copy2, step));
  for (long step : {50, 75})
    fs::copy_file(checkpoint_at(b, step), checkpoint_at(copy2, step),
                  fs::copy_options::overwrite_existing);
  const auto before2 = snapshot(copy2);
  const Result r2 = heatsim("run -q " + case_b + " --restart " + checkpoint_at(copy2, 75));
  EXPECT_EQ(r2.code, 2) << r2.output;
  EXPECT_NE(r2.output.find("another run's files"), std::string::npos) << r2.output;
  EXPECT_TRUE(snapshot(copy2) == before2) << "the parent's later files were touched";
  // The branch continues in its own directory, and the first run in its own, as before.
  EXPECT_EQ(
      heatsim("run -q " + case_b + " --restart " + checkpoint_at(b, 75) + " --steps 100").code, 0);
  EXPECT_EQ(
      heatsim("run -q " + case_a + " --restart " + checkpoint_at(a, 75) + " --overwrite").code, 0);
  EXPECT_FALSE(read_field_file(field_at(b, 100)).field == read_field_file(field_at(a, 100)).field);
}

// A branch continued in its parent's directory from step 50 (the parent's later files gone with
// --overwrite), then the parent's case restarted there from that same checkpoint: refused, the
// reason said as it is (the files are a branch of that run from step 50; the message said the
// run "began from another case, or continued under a changed case from another step").
TEST_F(RestartTest, ARestartBesideItsOwnBranchNamesTheBranch) {
  const fs::path a = dir_ / "a";
  const std::string case_a = write_case("a.yaml", case_text(2, "fp64", a, 100));
  std::string text_b = case_text(2, "fp64", a, 100);
  text_b.replace(text_b.find("value: 0.5"), 10, "value: 0.7");
  const std::string case_b = write_case("b.yaml", text_b);
  ASSERT_EQ(heatsim("run -q " + case_a).code, 0);
  const Result branch =
      heatsim("run -q " + case_b + " --restart " + checkpoint_at(a, 50) + " --overwrite");
  ASSERT_EQ(branch.code, 0) << branch.output;
  const auto before = snapshot(a);
  const Result r = heatsim("run -q " + case_a + " --restart " + checkpoint_at(a, 50));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("it is a branch of that run, continued under a changed case from its "
                          "step 50"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(snapshot(a) == before) << "the branch's files were touched";
}

// A restart in place under another output.name is refused (exit 2, nothing written): the run's
// series would be split between two names. From the run's last checkpoint no output of it lies
// after the step, and the message does not say there is one.
TEST_F(RestartTest, AnotherOutputNameInPlaceIsRefused) {
  const fs::path a = dir_ / "a";
  std::string text = case_text(2, "fp64", a, 100);
  const std::string first = write_case("a.yaml", text);
  ASSERT_EQ(heatsim("run -q " + first + " --steps 50").code, 0);
  const std::size_t at = text.find(", every: 20}");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 12, ", every: 20, name: other}");
  const std::string renamed = write_case("b.yaml", text);
  const auto before = snapshot(a);
  const Result r = heatsim("run -q " + renamed + " --restart " + checkpoint_at(a, 50));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("would split the run's series between two names (and leave any of its "
                          "outputs after step 50 beside the new ones). Keep output.name: field"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(snapshot(a) == before);
  // Into another directory it runs.
  EXPECT_EQ(heatsim("run -q " + renamed + " --restart " + checkpoint_at(a, 50) + " -o " +
                    (dir_ / "b").string())
                .code,
            0);
}

// A branch begun in its parent's directory that fails (a NaN stop) marks the directory as a
// failed run's; the next plain run there is refused rather than remove files unasked: the
// failed branch left a checkpoint past its start (step 50), and the parent's outputs up to the
// branch step are beside them. A restart of the parent from its checkpoint there removes the failed branch's
// files and continues the parent, equal to its uninterrupted run.
TEST_F(RestartTest, AFailedBranchLeavesItsParentsFilesToTheParent) {
  const fs::path a = dir_ / "a", whole = dir_ / "whole";
  const std::string text = case_text(2, "fp64", a, 100);
  const std::string case_a = write_case("a.yaml", text);
  ASSERT_EQ(heatsim("run -q " + case_a).code, 0);
  ASSERT_EQ(heatsim("run -q " + case_a + " -o " + whole.string()).code, 0);
  std::string broken = text;
  broken.replace(broken.find("value: 0.5, amplitude: 0.5"), 26,
                 "value: 1.0e308, amplitude: 1.0e308");  // inf on the face: a NaN stop
  const std::string case_f = write_case("f.yaml", broken);
  const Result f =
      heatsim("run -q " + case_f + " --restart " + checkpoint_at(a, 25) + " --overwrite");
  ASSERT_NE(f.code, 0) << f.output;
  ASSERT_TRUE(fs::exists(a / "failed_run.txt")) << f.output;
  const Result plain = heatsim("run -q " + case_a);
  EXPECT_EQ(plain.code, 2) << plain.output;
  EXPECT_NE(plain.output.find("holds a run that failed"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("--restart " + checkpoint_at(a, 50)), std::string::npos)
      << plain.output;
  EXPECT_TRUE(fs::exists(checkpoint_at(a, 25)));
  EXPECT_TRUE(fs::exists(checkpoint_at(a, 50)));
  EXPECT_TRUE(fs::exists(field_at(a, 20)));
  const Result again = heatsim("run -q " + case_a + " --restart " + checkpoint_at(a, 25));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_FALSE(fs::exists(a / "failed_run.txt"));
  EXPECT_TRUE(read_field_file(field_at(a, 100)).field ==
              read_field_file(field_at(whole, 100)).field);
}

// A restart in its checkpoint's directory under another output.name would leave the replaced
// run's later outputs (under the old name) beside the new series: refused, nothing removed;
// into another directory the new name is the new run's.
TEST_F(RestartTest, RestartInPlaceUnderAnotherOutputNameIsRefused) {
  const fs::path a = dir_ / "a";
  const std::string text = case_text(2, "fp64", a, 60);
  const std::string case_a = write_case("a.yaml", text);
  ASSERT_EQ(heatsim("run -q " + case_a).code, 0);
  std::string renamed = text;
  renamed.replace(renamed.find(", every: 20}"), 12, ", every: 20, name: temp}");
  const std::string case_t = write_case("t.yaml", renamed);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(a)) files += e.is_regular_file();
  const Result r = heatsim("run -q " + case_t + " --restart " + checkpoint_at(a, 25));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("output.name"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'field'"), std::string::npos) << r.output;
  std::size_t after = 0;
  for (const auto& e : fs::directory_iterator(a)) after += e.is_regular_file();
  EXPECT_EQ(after, files);
  EXPECT_TRUE(fs::exists(field_at(a, 60)));
  const Result moved = heatsim("run -q " + case_t + " --restart " + checkpoint_at(a, 25) + " -o " +
                               (dir_ / "t").string());
  EXPECT_EQ(moved.code, 0) << moved.output;
  EXPECT_TRUE(fs::exists(dir_ / "t" / "temp_00000060.h5"));
  EXPECT_TRUE(read_field_file((dir_ / "t" / "temp_00000060.h5").string()).field ==
              read_field_file(field_at(a, 60)).field);
}

TEST_F(RestartTest, UnusableOutputDirectoryFailsBeforeTheRun) {
  std::ofstream((dir_ / "file").string()) << "x";
  const std::string c = write_case("c.yaml", case_text(1, "fp64", dir_ / "file" / "out", 30));
  const Result r = heatsim("run -q " + c);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("cannot be created"), std::string::npos) << r.output;
  // A file system that keeps no files (proc reports no blocks): the directory's own failure,
  // not a disk "0 B free".
  if (!fs::exists("/proc/self")) return;
  const std::string p = write_case("p.yaml", case_text(1, "fp64", "/proc/heatsim_out", 30));
  const Result in_proc = heatsim("run -q " + p);
  EXPECT_NE(in_proc.code, 0);
  EXPECT_NE(in_proc.output.find("output directory '/proc/heatsim_out' cannot be created"),
            std::string::npos)
      << in_proc.output;
  EXPECT_EQ(in_proc.output.find("disk space"), std::string::npos) << in_proc.output;
}

TEST_F(RestartTest, InspectPrintsTheProvenance) {
  const fs::path out = dir_ / "out";
  const std::string c = write_case("c.yaml", case_text(2, "fp32", out, 30));
  ASSERT_EQ(heatsim("run -q " + c).code, 0);
  const Result r = heatsim("inspect " + checkpoint_at(out, 30));
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* want : {"step:       30", "grid:       2D, 25 x 19", "precision:  fp32",
                           "scheme:     isotropic", "backend:    ", "min/max:",
                           "version:    heatsim ", "  | boundary:"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
  const Result bad = heatsim("inspect " + (dir_ / "missing.h5").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("missing.h5"), std::string::npos) << bad.output;
}

// A plate with a scheduled source whose factor jumps to 1e306 at t = 7 (step 70): the run
// (backward Euler, as explicit steps would need 1250)
// fails after its step-50 checkpoint. `last` replaces that factor (a mended case), `k` the
// copper's conductivity.
std::string plate_text(const fs::path& out, const std::string& last, const std::string& k = "400") {
  return "grid: {dims: 2, n: [21, 21], length: [0.04, 0.04]}\n"
         "materials:\n"
         "  steel: {conductivity: 15, density: 7900, specific_heat: 500}\n"
         "  copper: {conductivity: " + k + ", density: 8900, specific_heat: 385}\n"
         "regions:\n"
         "  - {material: steel}\n"
         "  - {material: copper, box: {lower: [0.01, 0.01], upper: [0.025, 0.03]}}\n"
         "sources:\n"
         "  - box: {lower: [0.015, 0.015], upper: [0.02, 0.02]}\n"
         "    power: 500\n"
         "    schedule: [[0, 0], [2, 1], [6, 1], [7, " + last + "]]\n"
         "boundary:\n"
         "  x-: {type: dirichlet, value: 300}\n"
         "  x+: {type: convective, h: 50, ambient: 300}\n"
         "  y-: {type: insulated}\n"
         "  y+: {type: insulated}\n"
         "initial: {type: constant, value: 300}\n"
         "time: {method: backward-euler, dt: 0.1, end: 10}\n"
         "output: {directory: " + out.string() + ", every: 20}\n"
         "checkpoint: {every: 25}\n";
}

// The restart a failed run's message prescribes (the case mended, --restart its checkpoint, in
// its directory) continues it there: the checkpoint it reads and the failed run's files up to
// its step are that restart's history and stay; only the failed run's later files and its mark
// go. Before, the branch removed them all, the checkpoint it restarted from included, and the
// same command could not be given again.
TEST_F(RestartTest, ABranchOfAFailedRunKeepsTheFilesUpToItsStep) {
  const fs::path a = dir_ / "a", moved = dir_ / "moved";
  const std::string failing = write_case("f.yaml", plate_text(a, "1e306"));
  const std::string mended = write_case("m.yaml", plate_text(a, "0.2"));
  const Result f = heatsim("run -q " + failing);
  ASSERT_NE(f.code, 0) << f.output;
  // The schedule's 1e306 W makes the load overflow: said so, not blamed on the operator.
  EXPECT_NE(f.output.find("the right-hand side is not finite"), std::string::npos) << f.output;
  EXPECT_EQ(f.output.find("not positive definite"), std::string::npos) << f.output;
  ASSERT_TRUE(fs::exists(a / "failed_run.txt")) << f.output;
  ASSERT_TRUE(fs::exists(checkpoint_at(a, 50)));
  const std::string failed_digest = read_field_file(field_at(a, 40)).meta.run_digest;
  const auto early = snapshot(a);

  const Result m = heatsim("run -q " + mended + " --restart " + checkpoint_at(a, 50));
  ASSERT_EQ(m.code, 0) << m.output;
  EXPECT_FALSE(fs::exists(a / "failed_run.txt"));
  for (const std::string name : {"checkpoint_00000025.h5", "checkpoint_00000050.h5",
                                 "field_00000000.h5", "field_00000020.h5", "field_00000040.h5"}) {
    ASSERT_TRUE(fs::exists(a / name)) << name << " removed\n" << m.output;
    EXPECT_TRUE(snapshot(a)[name] == early.at(name)) << name << " changed";
  }
  EXPECT_EQ(read_field_file(field_at(a, 40)).meta.run_digest, failed_digest);
  EXPECT_NE(read_field_file(field_at(a, 100)).meta.run_digest, failed_digest);
  // The same continuation into a directory of its own gives the same field.
  const Result again = heatsim("run -q " + mended + " --restart " + checkpoint_at(a, 50) +
                               " -o " + moved.string());
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(read_field_file(field_at(a, 100)).field ==
              read_field_file(field_at(moved, 100)).field);
}

// materials.h5 describes every field the directory keeps. A branch in its parent's directory
// with other materials (a conductivity changed) would relabel the parent's fields: refused
// before anything is written, --overwrite or not, from the last checkpoint (no step left) or
// an earlier one; into another directory it runs. A branch that leaves materials.h5 as it is
// (a schedule changed) and has no step left leaves the parent's output and checkpoint at the
// restart step as they are: the same state, which a branch's files would have replaced.
TEST_F(RestartTest, ABranchWithOtherMaterialsLeavesItsParentsDirectoryAlone) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  const std::string parent = write_case("p.yaml", plate_text(a, "0.2"));
  const std::string copper = write_case("k.yaml", plate_text(a, "0.2", "390"));
  const std::string schedule = write_case("s.yaml", plate_text(a, "0.3"));
  ASSERT_EQ(heatsim("run -q " + parent).code, 0);
  const auto before = snapshot(a);
  for (const std::string& extra : {std::string(" --restart ") + checkpoint_at(a, 100),
                                   std::string(" --restart ") + checkpoint_at(a, 50) +
                                       " --overwrite"}) {
    const Result r = heatsim("run -q " + copper + extra);
    EXPECT_EQ(r.code, 2) << extra << "\n" << r.output;
    EXPECT_NE(r.output.find("materials.h5 describes those fields"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("-o DIR"), std::string::npos) << r.output;
    // Refused: no word of the run continuing (said only once every refusal has passed).
    EXPECT_EQ(r.output.find("continues under this case"), std::string::npos) << r.output;
    EXPECT_TRUE(snapshot(a) == before) << extra << ": the parent's directory changed";
  }
  const Result s = heatsim("run -q " + schedule + " --restart " + checkpoint_at(a, 100));
  ASSERT_EQ(s.code, 0) << s.output;
  const auto after = snapshot(a);
  for (const std::string name : {"checkpoint_00000100.h5", "field_00000100.h5"})
    EXPECT_TRUE(after.at(name) == before.at(name)) << name << " rewritten";
  const Result moved =
      heatsim("run -q " + copper + " --restart " + checkpoint_at(a, 50) + " -o " + b.string());
  ASSERT_EQ(moved.code, 0) << moved.output;
  EXPECT_FALSE(read_field_file(field_at(b, 100)).field ==
               read_field_file(field_at(a, 100)).field);
}


// A restart that changes output.precision and output.fields indexes each file as it is: the
// earlier part's fp64 files without heat_flux, the continuation's fp32 files with it. Before,
// the index described every step with the restart's settings, and ParaView read the fp64
// files as floats and looked for datasets they do not hold.
TEST_F(RestartTest, TheIndexDescribesEachFileAsItWasWritten) {
  const fs::path a = dir_ / "a";
  std::string text = case_text(2, "fp64", a, 100);
  const std::string first = write_case("a.yaml", text);
  ASSERT_EQ(heatsim("run -q " + first + " --steps 50").code, 0);
  text.replace(text.find(", every: 20}"), 12,
               ", every: 20, precision: fp32, fields: [temperature, heat_flux]}");
  const std::string second = write_case("b.yaml", text);
  const Result r = heatsim("run -q " + second + " --restart " + checkpoint_at(a, 50));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(a / "field.xmf");
  const std::string index((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto grid = [&](long step) {
    const std::size_t at = index.find("<Grid Name=\"step " + std::to_string(step) + "\"");
    EXPECT_NE(at, std::string::npos) << "step " << step << "\n" << index;
    if (at == std::string::npos) return std::string();
    return index.substr(at, index.find("</Grid>", at) - at);
  };
  for (long step : {0, 20, 40}) {
    const std::string g = grid(step);
    EXPECT_NE(g.find("Precision=\"8\" Format=\"HDF\">field_"), std::string::npos) << g;
    EXPECT_EQ(g.find("heat_flux"), std::string::npos) << g;
    EXPECT_EQ(read_field_header(field_at(a, step)).meta.precision, "fp64");
  }
  for (long step : {60, 80, 100}) {
    const std::string g = grid(step);
    EXPECT_NE(g.find("Precision=\"4\" Format=\"HDF\">field_"), std::string::npos) << g;
    EXPECT_NE(g.find(":/heat_flux"), std::string::npos) << g;
    EXPECT_EQ(read_field_header(field_at(a, step)).meta.precision, "fp32");
  }
}

// A probe moved under its own name: a restart in place would write the new point's readings
// on in the old point's column of probes.csv. Refused (exit 2, the directory as it was); the
// same point written otherwise (2e-2 for 0.02) is no move; into another directory it runs.
TEST_F(RestartTest, AProbeMovedUnderItsNameIsRefusedInPlace) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  const std::string text = plate_text(a, "0.2");
  const std::string first =
      write_case("p.yaml", text + "probes: {every: 10, points: {c: [0.02, 0.02]}}\n");
  const std::string moved =
      write_case("m.yaml", text + "probes: {every: 10, points: {c: [0.01, 0.02]}}\n");
  const std::string same =
      write_case("s.yaml", text + "probes: {every: 10, points: {c: [2e-2, 0.02]}}\n");
  ASSERT_EQ(heatsim("run -q " + first).code, 0);
  const auto before = snapshot(a);
  const Result r = heatsim("run -q " + moved + " --overwrite --restart " + checkpoint_at(a, 50));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("c: [0.02, 0.02] -> [0.01, 0.02]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-o DIR"), std::string::npos) << r.output;
  EXPECT_TRUE(snapshot(a) == before) << "the directory changed";
  const Result elsewhere =
      heatsim("run -q " + moved + " --restart " + checkpoint_at(a, 50) + " -o " + b.string());
  EXPECT_EQ(elsewhere.code, 0) << elsewhere.output;
  const Result again = heatsim("run -q " + same + " --overwrite --restart " + checkpoint_at(a, 50));
  EXPECT_EQ(again.code, 0) << again.output;
}

// A restart in place under a case that no longer writes probes or heat flows keeps those files'
// rows up to its step only: the later rows were the replaced run's, as its later fields were.
TEST_F(RestartTest, ASeriesTheRestartNoLongerWritesKeepsItsRowsUpToTheStep) {
  const fs::path a = dir_ / "a";
  std::string text = plate_text(a, "0.2");
  text.replace(text.find(", every: 20}"), 12, ", every: 20, heat_flows: true}");
  const std::string with = write_case("with.yaml", text + "probes: {every: 10, points: {c: [0.02, 0.02]}}\n");
  text.replace(text.find(", heat_flows: true}"), 19, "}");
  const std::string without = write_case("without.yaml", text);
  ASSERT_EQ(heatsim("run -q " + with).code, 0);
  const auto rows = [](const fs::path& file) {
    std::ifstream in(file);
    std::vector<long> steps;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) steps.push_back(std::stol(line.substr(0, line.find(','))));
    return steps;
  };
  ASSERT_EQ(rows(a / "probes.csv").back(), 100);
  const Result r =
      heatsim("run " + without + " --restart " + checkpoint_at(a, 50) + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(rows(a / "probes.csv"), (std::vector<long>{0, 10, 20, 30, 40, 50}));
  EXPECT_EQ(rows(a / "heat_flows.csv"), (std::vector<long>{0, 20, 40}));
  EXPECT_NE(r.output.find("probes.csv: the case writes it no more; its 5 row(s) after step 50"),
            std::string::npos)
      << r.output;
  // Back on from step 75: both files end at step 50, and both gaps are said.
  const Result back =
      heatsim("run " + with + " --restart " + checkpoint_at(a, 75) + " --overwrite");
  ASSERT_EQ(back.code, 0) << back.output;
  EXPECT_NE(back.output.find("probes.csv ends at step 50, before the restart step's last row 70"),
            std::string::npos)
      << back.output;
  EXPECT_NE(
      back.output.find("heat_flows.csv ends at step 40, before the restart step's last row 60"),
      std::string::npos)
      << back.output;
}


// A new run refused by a directory that holds another run's files suggests that run's newest
// checkpoint only as what it is: on another grid, the restart would refuse this case, so the
// refusal says whose case continues it.
TEST_F(RestartTest, TheRefusalSaysWhoseCaseItsCheckpointContinues) {
  const fs::path a = dir_ / "a";
  ASSERT_EQ(heatsim("run -q " + write_case("a.yaml", case_text(2, "fp64", a, 60))).code, 0);
  const Result same = heatsim("run -q " + write_case("b.yaml", case_text(2, "fp64", a, 80)));
  EXPECT_EQ(same.code, 2) << same.output;
  EXPECT_NE(same.output.find("--restart " + checkpoint_at(a, 60) + " to continue that run"),
            std::string::npos)
      << same.output;
  const Result other =
      heatsim("run -q " + write_case("c.yaml", case_text(2, "fp64", a, 60, "[25, 20]")));
  EXPECT_EQ(other.code, 2) << other.output;
  EXPECT_NE(other.output.find("with that run's case to continue it (its grid is 25x19, this "
                              "case's 25x20)"),
            std::string::npos)
      << other.output;
}

}  // namespace
}  // namespace heatsim::io
