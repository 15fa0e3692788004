// `heatsim run` with temporal fusion (convstencil and the CUDA-core backends), end to end: the written
// fields equal the CPU run's to 1e-12 (time-dependent Dirichlet faces, a sine or a table, and
// Neumann faces, 1D-3D), a
// restart from a checkpoint gives bit for bit the uninterrupted run's final field, and
// `backend: auto` with `fusion: auto` says what it chose.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpu_test_support.hpp"
#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"

namespace heatsim::test {
namespace {

namespace fs = std::filesystem;

using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

// `table`: x-'s value as a table over the run's time (a schedule that changes within a pass)
// instead of the sine, with no source and insulated other faces, so that nothing but the
// table keeps a fused pass from taking x- as exact.
std::string case_text(int dims, const std::string& scheme, const std::string& fusion,
                      const fs::path& out, bool table = false) {
  const std::string n = dims == 1 ? "[301]" : dims == 2 ? "[67, 45]" : "[37, 21, 19]";
  const std::string center = dims == 1 ? "[0.3]" : dims == 2 ? "[0.3, 0.6]" : "[0.3, 0.6, 0.5]";
  const std::string faces =
      table ? "  all: {type: neumann, flux: 0.0}\n"
              "  x-: {type: dirichlet, value: [[0, 0.5], [0.0005, 1.0], [0.002, 0.0]]}\n"
            : "  all: {type: neumann, flux: 0.25}\n"
              "  x-: {type: dirichlet, value: 0.5, amplitude: 0.5, frequency: 3.0}\n";
  return "grid: {dims: " + std::to_string(dims) + ", n: " + n + ", length: 1.0}\n" +
         "physics: {alpha: 1.0, source: " + (table ? "0.0" : "0.5") + "}\n" + "scheme: " +
         scheme + "\n" + "boundary:\n" + faces +
         "initial: {type: gaussian, amplitude: 1.0, center: " + center + ", width: 0.15}\n" +
         "time: {dt: auto, steps: 60}\n" + "fusion: " + fusion + "\n" +
         "output: {directory: " + out.string() + ", every: 20}\n" + "checkpoint: {every: 20}\n";
}

class FusionRun : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    root_ = fs::temp_directory_path() / ("heatsim_fusion_run_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(FusionRun, FusedRunMatchesCpuAndRestartsBitForBit) {
  struct Variant {
    const char* backend;
    int dims;
    const char* scheme;
    const char* fusion;
    bool table;  // x-'s Dirichlet value a table
  };
  for (const Variant& v : std::vector<Variant>{{"convstencil", 1, "order4", "3", false},
                                               {"convstencil", 2, "order2", "auto", false},
                                               {"convstencil", 2, "isotropic", "3", false},
                                               {"convstencil", 3, "order2", "auto", false},
                                               {"convstencil", 2, "order2", "3", true},
                                               {"register-tiling", 2, "order2", "3", false},
                                               {"register-tiling", 3, "isotropic", "2", false},
                                               {"register-tiling", 3, "order2", "3", true},
                                               {"shared-tiling", 1, "order2", "auto", false},
                                               {"cuda-naive", 3, "order2", "3", false}}) {
    const std::string tag = std::string(v.backend) + "_" + std::to_string(v.dims) + "d_" +
                            v.scheme + "_k" + v.fusion + (v.table ? "_table" : "");
    SCOPED_TRACE(tag);
    const fs::path case_path = root_ / (tag + ".yaml");
    const fs::path gpu_out = root_ / (tag + "_gpu");
    std::ofstream(case_path) << case_text(v.dims, v.scheme, v.fusion, gpu_out, v.table);

    const Result gpu = heatsim("run " + case_path.string() + " --backend " + v.backend);
    ASSERT_EQ(gpu.code, 0) << gpu.output;
    const fs::path cpu_out = root_ / (tag + "_cpu");
    const Result cpu =
        heatsim("run " + case_path.string() + " --backend cpu --output-dir " + cpu_out.string());
    ASSERT_EQ(cpu.code, 0) << cpu.output;
    for (const char* name : {"field_00000020.h5", "field_00000040.h5", "field_00000060.h5"}) {
      const io::FieldFile want = io::read_field_file((cpu_out / name).string());
      const io::FieldFile got = io::read_field_file((gpu_out / name).string());
      std::int64_t bad = -1;
      EXPECT_LE(relative_difference(got.field, want.field, &bad), 1e-12) << name << " " << bad;
    }

    // Continue from step 20 (not a multiple of 3): the final field is bit for bit the same
    // (--overwrite: the finished run's files after step 20 are discarded and written again).
    const io::FieldFile uninterrupted = io::read_field_file((gpu_out / "field_00000060.h5").string());
    const Result restart =
        heatsim("run " + case_path.string() + " --backend " + v.backend +
                " --overwrite --restart " + (gpu_out / "checkpoint_00000020.h5").string());
    ASSERT_EQ(restart.code, 0) << restart.output;
    const io::FieldFile resumed = io::read_field_file((gpu_out / "field_00000060.h5").string());
    ASSERT_EQ(resumed.field.size(), uninterrupted.field.size());
    std::int64_t differ = 0;
    for (std::size_t i = 0; i < resumed.field.size(); ++i)
      differ += resumed.field[i] != uninterrupted.field[i];
    EXPECT_EQ(differ, 0) << "points differing after the restart";
  }
}

TEST_F(FusionRun, AutoNamesItsChoice) {
  const fs::path case_path = root_ / "auto.yaml";
  std::ofstream(case_path) << case_text(2, "order2", "auto", root_ / "auto_out");
  // No tuning cache (a missing file): the choice comes from the performance model.
  setenv("HEATSIM_TUNE_CACHE", (root_ / "no-such-cache.json").c_str(), 1);
  const Result r = heatsim("run " + case_path.string() + " --backend auto");
  unsetenv("HEATSIM_TUNE_CACHE");
  ASSERT_EQ(r.code, 0) << r.output;
  // "backend NAME (auto: NAME at fusion depth K, ... (performance model: ...); best per
  // backend: ...)", or for a backend the model only ranks (temporal-blocking) "(auto: NAME at
  // its own fusion depth (the model's best: k=K, ...", then "fusion: K steps per pass (asked
  // for auto)" with the depth the backend took.
  const std::size_t at = r.output.find("info: backend ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::size_t name_end = r.output.find(' ', at + 14);
  const std::string name = r.output.substr(at + 14, name_end - (at + 14));
  EXPECT_TRUE(name == "convstencil" || name == "register-tiling" || name == "temporal-blocking")
      << r.output;
  const bool own = name == "temporal-blocking";
  const std::string said =
      "(auto: " + name +
      (own ? " at its own fusion depth (the model's best: k=" : " at fusion depth ");
  const std::size_t depth_at = r.output.find(said, at);
  ASSERT_NE(depth_at, std::string::npos) << r.output;
  const int rated = std::atoi(r.output.c_str() + depth_at + said.size());
  EXPECT_GT(rated, 1) << r.output;
  EXPECT_NE(r.output.find("performance model"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best per backend"), std::string::npos) << r.output;
  const std::size_t line_end = r.output.find(" steps per pass (asked for auto)", depth_at);
  ASSERT_NE(line_end, std::string::npos) << r.output;
  const std::size_t taken_at = r.output.rfind("fusion: ", line_end);
  ASSERT_NE(taken_at, std::string::npos) << r.output;
  const int depth = std::atoi(r.output.c_str() + taken_at + 8);
  EXPECT_GT(depth, 1) << r.output;
  if (!own) {
    EXPECT_EQ(depth, rated) << r.output;
  }
}

TEST_F(FusionRun, GridTooLargeForTheGpuIsRefusedBeforeAllocation) {
  const fs::path case_path = root_ / "huge.yaml";
  std::ofstream(case_path) << "grid: {dims: 3, n: [2400, 2400, 2400], length: 1.0}\n"
                              "physics: {alpha: 1.0}\n"
                              "boundary: {all: {type: dirichlet, value: 0}}\n"
                              "initial: {type: constant, value: 1}\n"
                              "time: {dt: auto, steps: 1}\n"
                              "backend: register-tiling\n"
                              "output: {directory: " + (root_ / "huge_out").string() + "}\n";
  const Result r = heatsim("run " + case_path.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not enough GPU memory on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GiB is free of"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(root_ / "huge_out"));
}

}  // namespace
}  // namespace heatsim::test
