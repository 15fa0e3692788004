#pragma once

#include <memory>

#include "../level_ops.hpp"

namespace heatsim::kernels {

// The CPU's multigrid level operations (OpenMP, fp64).
std::unique_ptr<LevelOps> make_cpu_level_ops();

}  // namespace heatsim::kernels
