// Launcher of the shared-tiling sweep (shared_sweep.cu).
#pragma once

#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
void launch_shared_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context);

}  // namespace heatsim::kernels::cuda
