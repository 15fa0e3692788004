// Device timing for benchmarks, measured with CUDA events on the stream the CUDA backends
// queue their work on. Plain C++ header: callers need no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../backend.hpp"

namespace heatsim::kernels::cuda {

// Milliseconds of device time that backend.advance(steps, step0) takes (events recorded
// before and after; waits for completion). For CUDA backends only.
double time_advance_ms(Backend& backend, std::int64_t steps, std::int64_t step0);

// Device copy bandwidth in bytes per second: cudaMemcpy device-to-device of a `bytes` buffer,
// counted as 2*bytes (read + write) over the median time of `repeats` copies after a warm-up.
double copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace heatsim::kernels::cuda
