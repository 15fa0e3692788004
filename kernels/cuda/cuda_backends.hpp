// The CUDA backends' registry entries (compiled only with CUDA).
#pragma once

#include <vector>

#include "../registry.hpp"

namespace heatsim::kernels {

std::vector<BackendEntry> cuda_backend_entries();

}  // namespace heatsim::kernels
