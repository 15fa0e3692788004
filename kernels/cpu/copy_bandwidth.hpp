// Host memory copy bandwidth, the CPU counterpart of kernels::cuda::copy_bandwidth.
#pragma once

#include <cstddef>

namespace heatsim::kernels::cpu {

// Bytes per second of an OpenMP-parallel copy b[i] = a[i] of two `bytes` buffers (the STREAM
// copy), counted as 2*bytes (read + write) over the median time of `repeats` samples after a
// warm-up. Pages are first touched by the threads that copy them. Each sample repeats the copy
// until it has copied at least 32 MiB, so small buffers still give a measurable time. A buffer
// that fits in cache measures the cache's bandwidth, as a run on a field that size sees it.
double copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace heatsim::kernels::cpu
