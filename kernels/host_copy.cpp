#include "host_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace heatsim::kernels {

void widen_to_double(const float* in, std::size_t count, double* out) {
  const std::int64_t n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(in[i]);
}

void narrow_to_float(const double* in, std::size_t count, float* out) {
  const std::int64_t n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

namespace {

template <typename T>
void copy_parts(const T* in, std::size_t count, T* out) {
  // Small copies stay on the calling thread: a team costs more than it saves below ~1 MB.
  if (count * sizeof(T) < (std::size_t{1} << 20)) {
    std::memcpy(out, in, count * sizeof(T));
    return;
  }
#pragma omp parallel
  {
#ifdef _OPENMP
    const std::size_t threads = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
#else
    const std::size_t threads = 1, t = 0;  // a build without OpenMP (the case fuzzer's)
#endif
    const std::size_t part = (count + threads - 1) / threads;
    const std::size_t lo = std::min(count, t * part), hi = std::min(count, lo + part);
    if (hi > lo) std::memcpy(out + lo, in + lo, (hi - lo) * sizeof(T));
  }
}

}  // namespace

void copy_doubles(const double* in, std::size_t count, double* out) { copy_parts(in, count, out); }
void copy_floats(const float* in, std::size_t count, float* out) { copy_parts(in, count, out); }

}  // namespace heatsim::kernels
