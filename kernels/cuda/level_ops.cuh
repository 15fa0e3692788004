// The CUDA implementation of the multigrid level operations (kernels/level_ops.hpp). Plain
// C++ on the outside, so that the registry (host code) can include it.
#pragma once

#include <memory>

#include "../level_ops.hpp"

namespace heatsim::kernels {

// Level operations on the current CUDA device, fp64. Every vector lives in device memory from
// create_vector to the next setup; only upload, download and dot move data to or from the
// host (dot: one double). Needs a visible device (throws std::runtime_error otherwise).
std::unique_ptr<LevelOps> make_cuda_level_ops();

}  // namespace heatsim::kernels
