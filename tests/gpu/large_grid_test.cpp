// A grid of more than 2^31 points on the GPU against the CPU: every index of the device code
// (node numbers, padded offsets, block numbers times tile widths) must be 64-bit. 1D fp32,
// 2^31 + 7 points, temporal-blocking at depth 16 with time-dependent Dirichlet faces (so the
// bands are redone at both ends) and a source, 37 steps from step 3 (single steps, passes,
// single steps), on data that are neither zero nor smooth. About 50 GB of host memory and
// 17 GB on the device; skipped, saying why, where either is not free.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "gpu_test_support.hpp"
#include "kernels/cpu/cpu_backend.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryKind;
using kernels::Precision;
using kernels::StencilProblem;

// A value in [0.5, 1.5) from the node number (splitmix64), the same on every thread.
double hashed_value(std::uint64_t i) {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return 0.5 + static_cast<double>(z >> 11) * 0x1.0p-53;
}

class LargeGrid : public GpuTest {};

TEST_F(LargeGrid, OneDimensionalPastTwoToThe31MatchesCpu) {
  const std::int64_t n = (std::int64_t{1} << 31) + 7;
  const double host_needed = 56e9, device_needed = 18e9;
  const double host_free =
      static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (host_free < host_needed)
    GTEST_SKIP() << "needs " << host_needed / 1e9 << " GB of free host memory, has "
                 << host_free / 1e9;
  const auto devices = kernels::cuda_devices();
  ASSERT_FALSE(devices.empty());
  if (static_cast<double>(devices.front().free_memory) < device_needed)
    GTEST_SKIP() << "needs " << device_needed / 1e9 << " GB free on the device";

  StencilProblem p;
  p.dims = 1;
  p.n = {n, 1, 1};
  p.h = {1.0 / static_cast<double>(n - 1), 1.0, 1.0};
  p.stencil.dims = 1;
  p.stencil.radius = 1;
  p.stencil.weights = {0.3, 0.4, 0.3};
  p.faces[0].kind = BoundaryKind::dirichlet;
  p.faces[0].value = 0.8;
  p.faces[0].amplitude = 0.3;
  p.faces[0].frequency = 5.0;
  p.faces[1].kind = BoundaryKind::dirichlet;
  p.faces[1].value = 1.2;
  p.faces[1].amplitude = 0.2;
  p.faces[1].frequency = 3.0;
  p.dt = 0.01;
  p.source_increment = 0.001;
  p.precision = Precision::fp32;
  p.fusion_depth = 16;
  const std::int64_t steps = 37, step0 = 3;

  std::vector<double> u(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    u[static_cast<std::size_t>(i)] = hashed_value(static_cast<std::uint64_t>(i));

  auto gpu = kernels::create_backend("temporal-blocking", Precision::fp32);
  gpu->setup(p);
  EXPECT_EQ(gpu->fusion_depth(), 16);
  gpu->upload(u);
  std::vector<double> want;
  {
    auto cpu = kernels::make_cpu_backend(Precision::fp32);
    cpu->setup(p);
    cpu->upload(u);
    std::vector<double>().swap(u);
    cpu->advance(steps, step0);
    cpu->download(want);
  }
  gpu->advance(steps, step0);
  std::vector<double> got(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN());
  gpu->download(got);

  // Every node, and the last ones by name: past 2^31 is where 32-bit offsets would wrap.
  std::int64_t bad = -1;
  EXPECT_LE(relative_difference(got, want, &bad), 1e-5) << "worst node " << bad;
  for (std::int64_t i = n - 3; i < n; ++i)
    EXPECT_NEAR(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)], 1e-5)
        << "node " << i;
  // The run changed the field near both ends (the bands) and in the middle.
  EXPECT_NE(want[1], hashed_value(1));
  EXPECT_NE(want[static_cast<std::size_t>(n / 2)], hashed_value(static_cast<std::uint64_t>(n / 2)));
}

}  // namespace
}  // namespace heatsim::test
