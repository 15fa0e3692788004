// Launcher of the cuda-naive sweep (naive_sweep.cu).
#pragma once

#include "../coefficient_sweep.cuh"
#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
void launch_naive_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context);

// The varying-coefficient step (coefficient_sweep.cuh), the same tiling over the flux operator.
template <typename T>
void launch_naive_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context);

}  // namespace heatsim::kernels::cuda
