// Host-side copies of a field on every core, for code compiled without OpenMP (CUDA host code):
// a device backend's fp32 download widens its floats here.
#pragma once

#include <cstddef>

namespace heatsim::kernels {

// out[i] = in[i] for i < count, exactly (every float is a double).
void widen_to_double(const float* in, std::size_t count, double* out);

}  // namespace heatsim::kernels
