// Host-side copies of a field on every core, for code compiled without OpenMP (CUDA host code):
// a device backend's fp32 download widens its floats here, and an upload narrows or copies
// its values into pinned staging here.
#pragma once

#include <cstddef>

namespace heatsim::kernels {

// out[i] = in[i] for i < count, exactly (every float is a double).
void widen_to_double(const float* in, std::size_t count, double* out);
// out[i] = (float)in[i], rounded to nearest as a static_cast does.
void narrow_to_float(const double* in, std::size_t count, float* out);
// out[i] = in[i], the threads each copying one contiguous part.
void copy_doubles(const double* in, std::size_t count, double* out);
void copy_floats(const float* in, std::size_t count, float* out);

}  // namespace heatsim::kernels
