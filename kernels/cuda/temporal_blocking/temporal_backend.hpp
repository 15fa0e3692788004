// The `temporal-blocking` backend: k single steps per pass on the CUDA cores, each block taking
// its tile through all k in shared memory (temporal_sweep.cu), inside fusing_backend.cuh's
// driver (ghost layers k*r wide, bands redone step by step where a pass is not exact).
#pragma once

#include <memory>

#include "../../backend.hpp"

namespace heatsim::kernels {

std::unique_ptr<Backend> make_temporal_blocking_backend(Precision precision);

}  // namespace heatsim::kernels
