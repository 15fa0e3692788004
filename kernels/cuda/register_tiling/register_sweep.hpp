// Launcher of the register-tiling sweep (register_sweep.cu); 2D and 3D only.
#pragma once

#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
void launch_register_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context);

}  // namespace heatsim::kernels::cuda
