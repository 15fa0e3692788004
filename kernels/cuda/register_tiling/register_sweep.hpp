// Launcher of the register-tiling sweep (register_sweep.cu); 2D and 3D only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "../coefficient_sweep.cuh"
#include "../stencil_common.cuh"

namespace heatsim::kernels::cuda {

// Planes per block along the march axis. Each block re-reads 2R halo planes, so chunks
// should be long; but the grid must fill the device without a ragged last wave. Cost model:
// waves * (chunk + 2R), waves = ceil(blocks / resident blocks); the cheapest chunk wins.
// Chunks may be as short as 2R planes (max(2R, 2)): on a small grid (the chip example's 96 x 96
// x 32) the device must be filled whatever the halo re-reads cost (docs/performance.md).
inline std::int64_t march_chunk(std::int64_t plane_tiles, std::int64_t march_n, int radius,
                                std::int64_t resident) {
  std::int64_t best = march_n;
  double best_cost = std::numeric_limits<double>::infinity();
  const std::int64_t max_chunks = std::min<std::int64_t>(
      std::max<std::int64_t>(1, march_n / std::max(2 * radius, 2)), 4096);
  for (std::int64_t c = 1; c <= max_chunks; ++c) {
    const std::int64_t chunk = (march_n + c - 1) / c;
    const std::int64_t blocks = plane_tiles * ((march_n + chunk - 1) / chunk);
    const double waves = static_cast<double>((blocks + resident - 1) / resident);
    const double cost = waves * static_cast<double>(chunk + 2 * radius);
    if (cost < best_cost) {
      best_cost = cost;
      best = chunk;
    }
  }
  return best;
}

template <typename T>
void launch_register_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context);

// The varying-coefficient step (coefficient_sweep.cuh): the same tiling over the flux operator.
template <typename T>
void launch_register_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context);

}  // namespace heatsim::kernels::cuda
