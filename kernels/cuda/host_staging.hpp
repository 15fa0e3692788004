// Pinned (page-locked) host staging for device backends: kernels/host_staging.hpp's CUDA half.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/host_staging.hpp"

namespace heatsim::kernels::cuda {

// cudaMallocHost of `bytes`, released by cudaFreeHost; throws std::runtime_error naming the
// call when CUDA refuses.
HostStaging allocate_pinned_staging(std::size_t bytes);
// cudaHostRegister of memory the caller owns, undone (cudaHostUnregister) when the result is
// released; empty, with the reason in `why_not`, where CUDA refuses.
HostStaging pin_host_memory(void* p, std::size_t bytes, std::string& why_not);

}  // namespace heatsim::kernels::cuda
