// Launcher of the temporal-blocking sweep (temporal_sweep.cu): `depth` single steps of S in one
// pass over the field, each block advancing its tile through every step in shared memory.
#pragma once

#include <cstddef>

#include "../coefficient_sweep.cuh"
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

// The deepest pass either sweep takes.
constexpr int kMaxBlockedDepth = 16;

// The source factors of a pass's steps: step[j][s] is Schedule::mean over step j of the pass
// of source s (CoefficientArgs::factor of a single step).
template <typename T>
struct PassFactors {
  T step[kMaxBlockedDepth][kMaxSourceFields] = {};
};

// out <- `depth` coefficient steps of in (the flux operator of point_operators.cuh), each block
// taking its tile through all of them in shared memory, with the single-step sweeps'
// arithmetic, step j at factors.step[j] (args.factor is not read). Every array of `args` has
// ghost layers `depth` wide: u filled for the pass; k, dt/C, the sources and the faces filled
// once (the periodic image on periodic axes, anything finite elsewhere). The fields are read
// (the compact forms map to them) and no face rules are applied (args.rules empty): as for
// launch_temporal_sweep, nodes within `depth` of a non-periodic face are left to the caller.
template <typename T>
void launch_temporal_coefficient_sweep(const CoefficientArgs<T>& args,
                                       const PassFactors<T>& factors, int depth,
                                       const LaunchContext& context);

// Shared memory one block of the coefficient sweep needs (bytes), with the faces' conductances
// given or not; 0 when the tile leaves no output at this depth.
std::size_t temporal_coefficient_shared_bytes(int dims, int depth, std::size_t value_bytes,
                                              bool faces);

}  // namespace heatsim::kernels::cuda
