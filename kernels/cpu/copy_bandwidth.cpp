#include "copy_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace heatsim::kernels::cpu {

double copy_bandwidth(std::size_t bytes, int repeats) {
  const std::int64_t n =
      static_cast<std::int64_t>(std::max<std::size_t>(bytes / sizeof(double), 1));
  // Uninitialised (new[] without value-init) so that the parallel loop below touches each
  // page first, placing it near the thread that copies it.
  std::unique_ptr<double[]> a(new double[static_cast<std::size_t>(n)]);
  std::unique_ptr<double[]> b(new double[static_cast<std::size_t>(n)]);
  double* const src = a.get();
  double* const dst = b.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    src[i] = 1.0;
    dst[i] = 0.0;
  }
  auto copy = [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
  };
  const double buffer = static_cast<double>(n) * sizeof(double);
  const int copies = std::max(1, static_cast<int>(32.0 * (1 << 20) / buffer));
  copy();  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < copies; ++c) copy();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      copies);
  }
  // Read the result so that the copies cannot be dropped as dead stores.
  volatile double sink = dst[n / 2];
  (void)sink;
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  return median > 0 ? 2.0 * buffer / median : 0.0;
}

}  // namespace heatsim::kernels::cpu
