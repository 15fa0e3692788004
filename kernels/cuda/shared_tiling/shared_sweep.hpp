// Launcher of the shared-tiling sweep (shared_sweep.cu).
#pragma once

#include "../coefficient_sweep.cuh"
#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
void launch_shared_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context);

// The varying-coefficient step (coefficient_sweep.cuh), the same tiling over the flux operator.
template <typename T>
void launch_shared_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context);

}  // namespace heatsim::kernels::cuda
