#include "host_copy.hpp"

#include <cstdint>

namespace heatsim::kernels {

void widen_to_double(const float* in, std::size_t count, double* out) {
  const std::int64_t n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(in[i]);
}

}  // namespace heatsim::kernels
