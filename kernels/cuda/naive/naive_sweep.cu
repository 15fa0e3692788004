// cuda-naive: one thread per output node, every tap read from global memory (neighbour
// reuse is left to the L1 and L2 caches). The baseline the tiled backends are measured
// against.
#include <algorithm>

#include "../check.cuh"
#include "naive_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// out(x,y,z) = sum_taps w * in(x+dx, y+dy, z+dz) + dt*f for every interior node (1D, 2D).
// Tile: 32 x 8 nodes (1D: 256) per block of 256 threads; blocks stride over y when the
// grid has more rows than a launch grid can hold. Shared memory: none. Registers: the
// accumulator and the row base; weights are constant-bank operands.
template <typename T, int DIMS, int R, int TAPS>
__global__ void __launch_bounds__(256) naive_sweep_kernel(const SweepArgs<T> a) {
  const DeviceGrid& g = a.grid;
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (x >= g.n[0]) return;
  const T* __restrict__ in = a.in;
  T* __restrict__ out = a.out;
  for (std::int64_t z = blockIdx.z * blockDim.z + threadIdx.z; z < g.n[2];
       z += static_cast<std::int64_t>(gridDim.z) * blockDim.z)
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < g.n[1];
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
      const std::int64_t i = g.index(x, y, z);
      T acc = T(0);
      for_each_tap<DIMS, R, TAPS>([&](int dx, int dy, int dz, int w) {
        acc += a.weights.w[w] * in[i + dz * g.pitch_z + dy * g.pitch_y + dx];
      });
      out[i] = acc + a.source;
    }
}

// 3D: the same sum, each thread computing C consecutive z nodes of one (x, y) column, so that
// a tap input shared by several of them is loaded once (the centre column: C+2R loads instead
// of C(2R+1); a box plane: (2R+1)^2 loads feed every output within R) and one thread has many
// independent loads in flight. Planes are visited in increasing z and each plane's taps in
// increasing y, x, so every output sums its taps in the order of for_each_tap, like the 1D/2D
// kernel. Tile: 32 x 8 x C nodes per block of 256 threads; blocks stride over y and z.
// Shared memory: none. Registers: C accumulators and the loads in flight (fp64: 38 for the
// 7-point star, 48 for the 27-point box).
// C (H100, 512^3 fp64): 4 for stars (Heat-3D 141.7 GStencil/s; 8: 133.1), 8 for the radius-1
// box (Box-3D27P 121.3; 4: 117.4); larger boxes keep 4, their register count grows with C.
template <int R, int TAPS>
__host__ __device__ constexpr int column_length() {
  return TAPS == kBoxTaps && R == 1 ? 8 : 4;
}

// Whether plane q (relative to the column's first output) feeds any output through tap
// (dx, dy, q - j) for j in [0, C).
template <int R, int TAPS, int C>
__host__ __device__ constexpr bool plane_tap_used(int dx, int dy, int q) {
  for (int j = 0; j < C; ++j) {
    const int dz = q - j;
    if (dz >= -R && dz <= R && is_tap<TAPS, R>(dx, dy, dz)) return true;
  }
  return false;
}

template <typename T, int R, int TAPS>
__global__ void __launch_bounds__(256) naive_sweep_3d_kernel(const SweepArgs<T> a) {
  constexpr int kColumn = column_length<R, TAPS>();
  const DeviceGrid& g = a.grid;
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (x >= g.n[0]) return;
  const T* __restrict__ in = a.in;
  T* __restrict__ out = a.out;
  for (std::int64_t z0 = static_cast<std::int64_t>(blockIdx.z) * kColumn; z0 < g.n[2];
       z0 += static_cast<std::int64_t>(gridDim.z) * kColumn)
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < g.n[1];
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
      const std::int64_t i = g.index(x, y, z0);
      const int outputs = g.n[2] - z0 < kColumn ? static_cast<int>(g.n[2] - z0) : kColumn;
      T acc[kColumn];
#pragma unroll
      for (int j = 0; j < kColumn; ++j) acc[j] = T(0);
#pragma unroll
      for (int q = -R; q < kColumn + R; ++q) {
        if (q - R >= outputs) break;  // this plane feeds only nodes beyond the grid
        const T* __restrict__ plane = in + i + q * g.pitch_z;
#pragma unroll
        for (int dy = -R; dy <= R; ++dy)
#pragma unroll
          for (int dx = -R; dx <= R; ++dx) {
            if (!plane_tap_used<R, TAPS, kColumn>(dx, dy, q)) continue;
            const T v = plane[dy * g.pitch_y + dx];
#pragma unroll
            for (int j = 0; j < kColumn; ++j) {
              const int dz = q - j;
              if (dz >= -R && dz <= R && is_tap<TAPS, R>(dx, dy, dz))
                acc[j] += a.weights.w[weight_index<3, R>(dx, dy, dz)] * v;
            }
          }
      }
#pragma unroll
      for (int j = 0; j < kColumn; ++j)
        if (j < outputs) out[i + j * g.pitch_z] = acc[j] + a.source;
    }
}

template <typename T>
struct NaiveLaunch {
  const SweepArgs<T>& args;
  const LaunchContext& context;

  template <int DIMS, int R, int TAPS>
  void operator()() const {
    const DeviceGrid& g = args.grid;
    const dim3 block = DIMS == 1 ? dim3(256, 1, 1) : dim3(32, 8, 1);
    const auto blocks = [](std::int64_t n, unsigned b, std::int64_t cap) {
      return static_cast<unsigned>(std::min<std::int64_t>((n + b - 1) / b, cap));
    };
    if constexpr (DIMS == 3) {
      const dim3 grid(blocks(g.n[0], block.x, 0x7fffffff), blocks(g.n[1], block.y, 65535),
                      blocks(g.n[2], column_length<R, TAPS>(), 65535));
      naive_sweep_3d_kernel<T, R, TAPS><<<grid, block, 0, context.stream>>>(args);
    } else {
      const dim3 grid(blocks(g.n[0], block.x, 0x7fffffff), blocks(g.n[1], block.y, 65535), 1);
      naive_sweep_kernel<T, DIMS, R, TAPS><<<grid, block, 0, context.stream>>>(args);
    }
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

template <typename T>
void launch_naive_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context) {
  dispatch_shape(shape, NaiveLaunch<T>{args, context});
}

template void launch_naive_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                        const LaunchContext&);
template void launch_naive_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                         const LaunchContext&);

}  // namespace heatsim::kernels::cuda
