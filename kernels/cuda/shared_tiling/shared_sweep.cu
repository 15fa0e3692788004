// shared-tiling: each block stages its input tile plus a halo of R nodes per side in shared
// memory, then computes the output tile from there (the tiled seven-point kernel,
// generalised to radius R, star and box shapes, 1D to 3D). Unlike the textbook kernel the
// block is the size of the output tile and loads the halo with a strided loop, so no thread
// idles during the compute phase.
#include <algorithm>

#include "../check.cuh"
#include "shared_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Tile shapes (output nodes per block, x y z) and threads per block:
//   1D: 1024 (256 threads x 4 nodes, coarsened along x)   smem (1024+2R)      x T
//   2D: 32 x 16 (512 threads)                              smem (32+2R)(16+2R) x T
//   3D: 32 x 4 x 4 (512 threads)                           smem (32+2R)(4+2R)^2 x T
// Largest shared-memory tile: 3D, R = 3, fp64: 38*10*10*8 = 30.4 KB (static, < 48 KB).
// Star stencils skip the tile's corners (nodes off every axis through the core).
// Registers: the accumulator(s) and addresses; weights are constant-bank operands.
template <int DIMS>
struct SharedTile;
template <>
struct SharedTile<1> {
  static constexpr int bx = 256, by = 1, bz = 1, cx = 4;
};
template <>
struct SharedTile<2> {
  static constexpr int bx = 32, by = 16, bz = 1, cx = 1;
};
template <>
struct SharedTile<3> {
  static constexpr int bx = 32, by = 4, bz = 4, cx = 1;
};

template <typename T, int DIMS, int R, int TAPS>
__global__ void __launch_bounds__(SharedTile<DIMS>::bx* SharedTile<DIMS>::by* SharedTile<DIMS>::bz)
    shared_sweep_kernel(const SweepArgs<T> a, std::int64_t tiles_y, std::int64_t tiles_z) {
  using Tile = SharedTile<DIMS>;
  constexpr int RY = DIMS > 1 ? R : 0, RZ = DIMS > 2 ? R : 0;
  constexpr int OX = Tile::bx * Tile::cx, OY = Tile::by, OZ = Tile::bz;  // output tile
  constexpr int SX = OX + 2 * R, SY = OY + 2 * RY, SZ = OZ + 2 * RZ;     // input tile
  constexpr int THREADS = Tile::bx * Tile::by * Tile::bz;
  __shared__ T tile[SZ][SY][SX];

  const DeviceGrid& g = a.grid;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * Tile::by + ty) * Tile::bx + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(OX);
  const T* __restrict__ in = a.in;
  T* __restrict__ out = a.out;

  for (std::int64_t bz = blockIdx.z; bz < tiles_z; bz += gridDim.z)
    for (std::int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
      const std::int64_t y0 = by * OY, z0 = bz * OZ;
      // Input tile: nodes x0-R .. x0+OX+R-1 (and likewise in y, z), clipped to the padded
      // field; clipped nodes only feed outputs beyond the grid, which are not stored.
      const T* src = in + g.index(x0 - R, y0 - RY, z0 - RZ);
      for (int l = tid; l < SX * SY * SZ; l += THREADS) {
        const int sx = l % SX, sy = (l / SX) % SY, sz = l / (SX * SY);
        if (TAPS == kStarTaps) {
          const int halo_axes = (sx < R || sx >= R + OX) + (sy < RY || sy >= RY + OY) +
                                (sz < RZ || sz >= RZ + OZ);
          if (halo_axes > 1) continue;
        }
        if (x0 + sx < g.n[0] + 2 * R && y0 + sy < g.n[1] + 2 * RY && z0 + sz < g.n[2] + 2 * RZ)
          tile[sz][sy][sx] = src[sz * g.pitch_z + sy * g.pitch_y + sx];
      }
      __syncthreads();
      const std::int64_t y = y0 + ty, z = z0 + tz;
      if (y < g.n[1] && z < g.n[2]) {
#pragma unroll
        for (int c = 0; c < Tile::cx; ++c) {
          const int ox = tx + c * Tile::bx;
          const std::int64_t x = x0 + ox;
          if (x < g.n[0]) {
            T acc = T(0);
            for_each_tap<DIMS, R, TAPS>([&](int dx, int dy, int dz, int w) {
              acc += a.weights.w[w] * tile[tz + RZ + dz][ty + RY + dy][ox + R + dx];
            });
            out[g.index(x, y, z)] = acc + a.source;
          }
        }
      }
      __syncthreads();  // the next tile overwrites shared memory
    }
}

template <typename T>
struct SharedLaunch {
  const SweepArgs<T>& args;
  const LaunchContext& context;

  template <int DIMS, int R, int TAPS>
  void operator()() const {
    using Tile = SharedTile<DIMS>;
    const DeviceGrid& g = args.grid;
    const std::int64_t ox = Tile::bx * Tile::cx;
    const std::int64_t tiles_x = (g.n[0] + ox - 1) / ox;
    const std::int64_t tiles_y = (g.n[1] + Tile::by - 1) / Tile::by;
    const std::int64_t tiles_z = (g.n[2] + Tile::bz - 1) / Tile::bz;
    const dim3 block(Tile::bx, Tile::by, Tile::bz);
    const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 0x7fffffff)),
                    static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                    static_cast<unsigned>(std::min<std::int64_t>(tiles_z, 65535)));
    shared_sweep_kernel<T, DIMS, R, TAPS><<<grid, block, 0, context.stream>>>(args, tiles_y,
                                                                            tiles_z);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

template <typename T>
void launch_shared_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                         const LaunchContext& context) {
  dispatch_shape(shape, SharedLaunch<T>{args, context});
}

template void launch_shared_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                         const LaunchContext&);
template void launch_shared_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                          const LaunchContext&);

}  // namespace heatsim::kernels::cuda
