// Launcher of the temporal-blocking sweep (temporal_sweep.cu): `depth` single steps of S in one
// pass over the field, each block advancing its tile through every step in shared memory.
#pragma once

#include <cstddef>

#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

// out <- S^depth in, computed as `depth` steps u <- S u + source inside the block (work
// O(depth * taps) per node, not O(taps of S^depth)). `args.grid` must carry ghost layers at
// least depth * radius wide, filled before the pass: a node farther than depth * radius from
// the field's edge of the padded layout is exact, like a fused S^depth sweep (FusingBackend
// redoes the bands near faces where the ghost rules are not exact under fusion).
template <typename T>
void launch_temporal_sweep(const SweepArgs<T>& args, const SweepShape& shape, int depth,
                           const LaunchContext& context);

// Shared memory one block of the sweep needs at this depth (bytes), for the driver's check
// against the device's limit; 0 when the shape has no kernel or the tile leaves no output.
std::size_t temporal_sweep_shared_bytes(int dims, int radius, bool box, int depth,
                                        std::size_t value_bytes);

}  // namespace heatsim::kernels::cuda
