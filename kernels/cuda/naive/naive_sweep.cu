// cuda-naive: one thread per output node, every tap read from global memory (neighbour
// reuse is left to the L1 and L2 caches). The baseline the tiled backends are measured
// against.
#include <algorithm>

#include "../check.cuh"
#include "naive_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// out(x,y,z) = sum_taps w * in(x+dx, y+dy, z+dz) + dt*f for every interior node.
// Tile: 32 x 8 nodes (1D: 256) per block of 256 threads; blocks stride over y and z when the
// grid has more rows than a launch grid can hold. Shared memory: none. Registers: the
// accumulator and the row base; weights are constant-bank operands.
template <typename T, int DIMS, int R, bool BOX>
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
      for_each_tap<DIMS, R, BOX>([&](int dx, int dy, int dz, int w) {
        acc += a.weights.w[w] * in[i + dz * g.pitch_z + dy * g.pitch_y + dx];
      });
      out[i] = acc + a.source;
    }
}

template <typename T>
struct NaiveLaunch {
  const SweepArgs<T>& args;
  const LaunchContext& context;

  template <int DIMS, int R, bool BOX>
  void operator()() const {
    const DeviceGrid& g = args.grid;
    const dim3 block = DIMS == 1 ? dim3(256, 1, 1) : dim3(32, 8, 1);
    const auto blocks = [](std::int64_t n, unsigned b, std::int64_t cap) {
      return static_cast<unsigned>(std::min<std::int64_t>((n + b - 1) / b, cap));
    };
    const dim3 grid(blocks(g.n[0], block.x, 0x7fffffff), blocks(g.n[1], block.y, 65535),
                    blocks(g.n[2], block.z, 65535));
    naive_sweep_kernel<T, DIMS, R, BOX><<<grid, block, 0, context.stream>>>(args);
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
