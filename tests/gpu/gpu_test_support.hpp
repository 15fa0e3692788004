// Helpers for the GPU tests: skipping without a device, random problems and fields, and the
// comparison against the CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"

namespace heatsim::test {

// Call from SetUp(): without a visible GPU the test is skipped, unless HEATSIM_REQUIRE_GPU=1,
// when it fails (so a GPU machine that lost its device cannot pass by skipping).
inline void skip_without_gpu() {
  if (!kernels::cuda_devices().empty()) return;
  const char* require = std::getenv("HEATSIM_REQUIRE_GPU");
  if (require && std::string(require) == "1") {
    FAIL() << "HEATSIM_REQUIRE_GPU=1 but no CUDA device is visible"
           << (kernels::cuda_compiled() ? "" : " (this build has no CUDA support)");
  }
  GTEST_SKIP() << "no CUDA device";
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

// The CUDA-core tilings this suite covers: every registered point sweep (registry.hpp).
inline const std::vector<std::string>& cuda_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& e : kernels::backend_registry())
      if (e.point_sweep) n.push_back(e.name);
    return n;
  }();
  return names;
}

// Whether backend `name` steps problems of `dims` dimensions (its registry entry).
inline bool steps_dims(const std::string& name, int dims) {
  const kernels::BackendEntry* e = kernels::find_backend(name);
  return e && dims >= e->min_dims && dims <= e->max_dims;
}

// Random weights of the given shape, some negative, scaled to sum |w| = 1 so that values
// stay bounded over the steps and rounding errors stay comparable to the values.
inline kernels::Stencil random_stencil(int dims, int radius, bool box, std::mt19937_64& rng) {
  kernels::Stencil s;
  s.dims = dims;
  s.radius = radius;
  s.weights.assign(s.size(), 0.0);
  std::uniform_real_distribution<double> w(-0.3, 1.0);
  const int ry = dims > 1 ? radius : 0, rz = dims > 2 ? radius : 0;
  double sum = 0.0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -radius; dx <= radius; ++dx) {
        const int axes = (dx != 0) + (dy != 0) + (dz != 0);
        if (!box && axes > 1) continue;
        double v = w(rng);
        if (v == 0.0) v = 0.5;
        s.at(dx, dy, dz) = v;
        sum += std::abs(v);
      }
  for (double& v : s.weights) v /= sum;
  return s;
}

inline std::vector<double> random_field(std::int64_t points, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(1.0, 3.0);  // never zero
  std::vector<double> f(static_cast<std::size_t>(points));
  for (double& v : f) v = u(rng);
  return f;
}

// max |a - b| / max |b| over every point; +inf when a has a non-finite value or the sizes
// differ (a node the backend never wrote reads as NaN after poisoning).
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b,
                                  std::int64_t* first_bad = nullptr) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double scale = 0.0, diff = 0.0;
  for (double v : b) scale = std::max(scale, std::abs(v));
  if (scale == 0.0) scale = 1.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]);
    if (!std::isfinite(a[i]) || !(d <= diff)) {
      if (!std::isfinite(a[i])) {
        if (first_bad) *first_bad = static_cast<std::int64_t>(i);
        return std::numeric_limits<double>::infinity();
      }
      diff = d;
      if (first_bad) *first_bad = static_cast<std::int64_t>(i);
    }
  }
  return diff / scale;
}

inline double tolerance(kernels::Precision p) {
  return p == kernels::Precision::fp64 ? 1e-13 : 1e-5;
}

// `steps` steps of `p` from u0 on the CPU reference and on `gpu` (set up here, its buffers
// poisoned with NaN first by two steps of a NaN field, then the steps in two calls, `split` and
// the rest, continuing the step count): the fields after and their statistics.
struct StepsOnBoth {
  std::vector<double> cpu, gpu;
  kernels::FieldStats cpu_stats, gpu_stats;
};
inline StepsOnBoth step_on_cpu_and(kernels::Backend& gpu, const kernels::StencilProblem& p,
                                   const std::vector<double>& u0, std::int64_t steps,
                                   std::int64_t split) {
  StepsOnBoth out;
  auto cpu = kernels::make_cpu_backend(p.precision);
  cpu->setup(p);
  cpu->upload(u0);
  cpu->advance(steps, 0);
  cpu->download(out.cpu);
  out.cpu_stats = cpu->stats();
  gpu.setup(p);
  gpu.upload(std::vector<double>(u0.size(), std::numeric_limits<double>::quiet_NaN()));
  gpu.advance(2, 0);
  gpu.upload(u0);
  gpu.advance(split, 0);
  gpu.advance(steps - split, split);
  gpu.download(out.gpu);
  out.gpu_stats = gpu.stats();
  return out;
}

// One agreement case of a parameterised suite: a CUDA-core backend, a precision, a dimension.
struct BackendCase {
  std::string backend;
  kernels::Precision precision;
  int dims;
};

// How ctest and a failure name a case: "register-tiling fp64 3D".
inline void PrintTo(const BackendCase& c, std::ostream* os) {
  *os << c.backend << ' ' << kernels::to_string(c.precision) << ' ' << c.dims << 'D';
}

// Every CUDA-core backend in fp64 and fp32, 1D to 3D.
inline std::vector<BackendCase> backend_cases() {
  std::vector<BackendCase> cases;
  for (const auto& b : cuda_backend_names())
    for (kernels::Precision p : {kernels::Precision::fp64, kernels::Precision::fp32})
      for (int d = 1; d <= 3; ++d) cases.push_back({b, p, d});
  return cases;
}

// The test name's suffix: "register_tiling_fp64_3D".
inline std::string backend_case_name(const ::testing::TestParamInfo<BackendCase>& info) {
  std::string s = info.param.backend + "_" + kernels::to_string(info.param.precision) + "_" +
                  std::to_string(info.param.dims) + "D";
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

}  // namespace heatsim::test
