// copy_box of fusing_backend.cuh: one thread per node of the box.
#include "fusing_backend.cuh"

namespace heatsim::kernels::cuda {
namespace {

template <typename T>
__global__ void copy_box_kernel(const T* __restrict__ src, DeviceGrid gs, std::int64_t sx,
                                std::int64_t sy, std::int64_t sz, T* __restrict__ dst,
                                DeviceGrid gd, std::int64_t dx, std::int64_t dy, std::int64_t dz,
                                std::int64_t cx, std::int64_t cy, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::int64_t x = i % cx, y = (i / cx) % cy, z = i / (cx * cy);
  dst[gd.index(dx + x, dy + y, dz + z)] = src[gs.index(sx + x, sy + y, sz + z)];
}

}  // namespace

template <typename T>
void copy_box(const T* src, const DeviceGrid& gs, const std::array<std::int64_t, 3>& s0, T* dst,
              const DeviceGrid& gd, const std::array<std::int64_t, 3>& d0,
              const std::array<std::int64_t, 3>& extent, cudaStream_t stream) {
  const std::int64_t count = extent[0] * extent[1] * extent[2];
  if (count == 0) return;
  const int threads = 256;
  const std::int64_t blocks = (count + threads - 1) / threads;
  copy_box_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      src, gs, s0[0], s0[1], s0[2], dst, gd, d0[0], d0[1], d0[2], extent[0], extent[1], count);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template void copy_box<float>(const float*, const DeviceGrid&, const std::array<std::int64_t, 3>&,
                              float*, const DeviceGrid&, const std::array<std::int64_t, 3>&,
                              const std::array<std::int64_t, 3>&, cudaStream_t);
template void copy_box<double>(const double*, const DeviceGrid&,
                               const std::array<std::int64_t, 3>&, double*, const DeviceGrid&,
                               const std::array<std::int64_t, 3>&,
                               const std::array<std::int64_t, 3>&, cudaStream_t);

}  // namespace heatsim::kernels::cuda
