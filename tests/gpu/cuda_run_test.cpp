// `heatsim run` end to end on each CUDA-core backend against `--backend cpu`: the same case
// (1D/2D/3D, mixed time-dependent Dirichlet and Neumann faces, fp64 and fp32) must write the
// same fields, every output file compared point by point.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "gpu_test_support.hpp"
#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"

namespace heatsim::test {
namespace {

namespace fs = std::filesystem;

using Result = heatsim_tests::ProcessResult;
const auto heatsim = heatsim_tests::run_heatsim;

std::string case_text(int dims, const std::string& scheme, const std::string& precision) {
  const std::string n = dims == 1 ? "[301]" : dims == 2 ? "[67, 45]" : "[37, 21, 19]";
  const std::string center = dims == 1 ? "[0.3]" : dims == 2 ? "[0.3, 0.6]" : "[0.3, 0.6, 0.5]";
  return "grid: {dims: " + std::to_string(dims) + ", n: " + n + ", length: 1.0}\n" +
         "physics: {alpha: 1.0}\n" + "scheme: " + scheme + "\n" +
         "boundary:\n"
         "  all: {type: neumann, flux: 0.25}\n"
         "  x-: {type: dirichlet, value: 0.5, amplitude: 0.5, frequency: 3.0}\n"
         "initial: {type: gaussian, amplitude: 1.0, center: " +
         center + ", width: 0.15}\n" + "time: {dt: auto, steps: 40}\n" + "precision: " +
         precision + "\n" + "output: {every: 20}\n";
}

class CudaRun : public GpuTest {};

TEST_F(CudaRun, HeatsimRunMatchesCpuOnEveryBackend) {
  const fs::path root = fs::temp_directory_path() / ("heatsim_gpu_run_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  struct Variant {
    int dims;
    const char* scheme;
    const char* precision;
  };
  const std::vector<Variant> variants{{1, "order4", "fp64"},    {2, "order2", "fp64"},
                                      {2, "isotropic", "fp32"}, {3, "order2", "fp64"},
                                      {3, "isotropic", "fp64"}, {3, "order6", "fp32"}};
  for (const Variant& v : variants) {
    const std::string tag = std::to_string(v.dims) + "d_" + v.scheme + "_" + v.precision;
    const fs::path case_path = root / (tag + ".yaml");
    std::ofstream(case_path) << case_text(v.dims, v.scheme, v.precision);
    auto run = [&](const std::string& backend) {
      const fs::path out = root / (tag + "_" + backend);
      const Result r = heatsim("run " + case_path.string() + " --backend " + backend +
                               " --output-dir " + out.string() + " --overwrite --quiet");
      EXPECT_EQ(r.code, 0) << backend << " " << tag << ":\n" << r.output;
      return r.code == 0 ? out : fs::path();
    };
    const fs::path cpu_out = run("cpu");
    ASSERT_FALSE(cpu_out.empty());
    for (const auto& backend : cuda_backend_names()) {
      if (!steps_dims(backend, v.dims)) continue;
      SCOPED_TRACE(backend + " " + tag);
      const fs::path gpu_out = run(backend);
      if (gpu_out.empty()) continue;
      int compared = 0;
      for (const auto& entry : fs::directory_iterator(cpu_out)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("field_", 0) != 0 || entry.path().extension() != ".h5") continue;
        ASSERT_TRUE(fs::exists(gpu_out / name)) << name;
        const io::FieldFile want = io::read_field_file(entry.path().string());
        const io::FieldFile got = io::read_field_file((gpu_out / name).string());
        EXPECT_EQ(got.meta.backend, backend);
        EXPECT_EQ(got.meta.step, want.meta.step);
        std::int64_t bad = -1;
        const double tol = std::string(v.precision) == "fp64" ? 1e-13 : 1e-5;
        EXPECT_LE(relative_difference(got.field, want.field, &bad), tol)
            << name << " worst point " << bad;
        ++compared;
      }
      EXPECT_GE(compared, 2);  // steps 20 and 40 at least
    }
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace heatsim::test
