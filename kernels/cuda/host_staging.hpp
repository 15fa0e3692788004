// Pinned (page-locked) host staging for device backends: kernels/host_staging.hpp's CUDA half.
#pragma once

#include <cstddef>

#include "kernels/host_staging.hpp"

namespace heatsim::kernels::cuda {

// cudaMallocHost of `bytes`, released by cudaFreeHost; throws std::runtime_error naming the
// call when CUDA refuses.
HostStaging allocate_pinned_staging(std::size_t bytes);

}  // namespace heatsim::kernels::cuda
