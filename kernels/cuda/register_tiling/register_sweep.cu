// register-tiling: thread blocks tile the plane across the slowest axis (xy in 3D, x in 2D)
// and march along that axis (z in 3D, y in 2D) through a chunk of planes: thread coarsening
// along the march axis and register tiling across it. Each plane is loaded from global memory
// once per block into shared memory (with its in-plane halo); the march-axis neighbours live in
// registers. Instead of keeping the 2R+1 input planes, each thread keeps 2R+1 partial sums:
// plane p adds w(., ., p - m) * u(p) to the pending outputs m = p-R .. p+R, and output p-R is
// complete once plane p is in. That one scheme covers star stencils (planes p != m contribute
// their centre node only) and box stencils (every node of the (2R+1)^2 in-plane window, read
// once from shared memory and applied to all 2R+1 partial sums; for a fused star, only the
// partial sums whose offset is a tap). Two kernels share that
// scheme and differ in how planes reach shared memory (through registers, or by asynchronous
// copies); use_async_planes() picks one per shape, as measured.
#include <cuda_pipeline.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "../check.cuh"
#include "register_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Block shapes (threads = output columns per block):
//   2D: 256 x 1, march along y; smem 2 x (256+2R) x T                 (fp64 R=3: 4.2 KB)
//   3D: 32 x 8,  march along z; smem 2 x (32+2R) x (8+2R) x T          (fp64 R=3: 8.5 KB)
// Registers per thread: 2R+1 partial sums, two planes of prefetched values (the plane p+2 load
// is issued before plane p is computed, so two loads per thread are in flight), their addresses.
// Shared memory is double-buffered, so one barrier per plane suffices.
template <int DIMS>
struct RegisterTile;
template <>
struct RegisterTile<2> {
  static constexpr int tx = 256, ty = 1;
};
template <>
struct RegisterTile<3> {
  static constexpr int tx = 32, ty = 8;
};

// Adds plane p, in `tile` (shared memory, with its in-plane halo), to the 2R+1 pending
// outputs of thread (tx, ty): acc[j] is output p - R + j, which plane p reaches at march
// offset R - j. Both kernels below call it, so they sum in the same order.
template <typename T, int DIMS, int R, int TAPS, int SY, int SX>
__device__ __forceinline__ void add_plane(const SweepArgs<T>& a, const T (&tile)[SY][SX],
                                          T (&acc)[2 * R + 1], int tx, int ty) {
  constexpr int RY = DIMS == 3 ? R : 0;
  constexpr int Q = 2 * R + 1;
  // Weight of in-plane offset (dx, dy) and march offset dm.
  auto w = [&](int dx, int dy, int dm) -> T {
    return DIMS == 3 ? a.weights.w[weight_index<3, R>(dx, dy, dm)]
                     : a.weights.w[weight_index<2, R>(dx, dm, 0)];
  };
  if (TAPS != kStarTaps) {
#pragma unroll
    for (int dy = -RY; dy <= RY; ++dy)
#pragma unroll
      for (int dx = -R; dx <= R; ++dx) {
        const T u = tile[ty + RY + dy][tx + R + dx];
#pragma unroll
        for (int j = 0; j < Q; ++j)
          if (is_tap<TAPS, R>(dx, dy, R - j)) acc[j] += w(dx, dy, R - j) * u;
      }
  } else {
    const T centre = tile[ty + RY][tx + R];
#pragma unroll
    for (int j = 0; j < Q; ++j)
      if (j != R) acc[j] += w(0, 0, R - j) * centre;
#pragma unroll
    for (int dy = -RY; dy <= RY; ++dy)
#pragma unroll
      for (int dx = -R; dx <= R; ++dx)
        if (dx == 0 || dy == 0) acc[R] += w(dx, dy, 0) * tile[ty + RY + dy][tx + R + dx];
  }
}

template <typename T, int DIMS, int R, int TAPS>
__global__ void __launch_bounds__(RegisterTile<DIMS>::tx* RegisterTile<DIMS>::ty)
    register_sweep_kernel(const SweepArgs<T> a, std::int64_t tiles_y, std::int64_t chunk) {
  constexpr int TX = RegisterTile<DIMS>::tx, TY = RegisterTile<DIMS>::ty;
  constexpr int RY = DIMS == 3 ? R : 0;  // in-plane y halo
  constexpr int SX = TX + 2 * R, SY = TY + 2 * RY, NT = TX * TY;
  constexpr int NSLOT = (SX * SY + NT - 1) / NT;  // plane values each thread loads
  constexpr int Q = 2 * R + 1;                     // pending outputs per thread
  __shared__ T plane[2][SY][SX];

  const DeviceGrid& g = a.grid;
  const T* __restrict__ in = a.in;
  T* __restrict__ out = a.out;
  const std::int64_t march_n = DIMS == 3 ? g.n[2] : g.n[1];
  const std::int64_t march_pitch = DIMS == 3 ? g.pitch_z : g.pitch_y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * TX + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(TX);
  const std::int64_t m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  const std::int64_t m1 = min(m0 + chunk, march_n);
  const std::int64_t p_begin = m0 - R, p_end = m1 + R;  // planes this block reads

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y0 = by * TY;
    const std::int64_t x = x0 + tx, y = y0 + ty;
    const bool active = x < g.n[0] && (DIMS == 2 || y < g.n[1]);

    // This thread's share of the plane tile: slot s is tile node tid + s*NT. Nodes beyond the
    // padded field, and the corners a star stencil never reads, are not loaded.
    const T* src[NSLOT];
    bool load_slot[NSLOT];
#pragma unroll
    for (int s = 0; s < NSLOT; ++s) {
      const int l = tid + s * NT;
      const int sx = l % SX, sy = l / SX;
      const std::int64_t gx = x0 - R + sx, gy = y0 - RY + sy;
      bool ok = l < SX * SY && gx < g.n[0] + R;
      if (DIMS == 3) ok = ok && gy < g.n[1] + RY;
      if (TAPS == kStarTaps && DIMS == 3)
        ok = ok && !((sx < R || sx >= R + TX) && (sy < RY || sy >= RY + TY));
      load_slot[s] = ok;
      src[s] = in + g.origin + (DIMS == 3 ? gy * g.pitch_y : 0) + gx;
    }
    auto load = [&](T(&v)[NSLOT], std::int64_t p) {
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) v[s] = load_slot[s] ? src[s][p * march_pitch] : T(0);
    };

    T acc[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) acc[j] = T(0);

    // Plane p: publish its values (prefetched two planes ago), prefetch plane p+2, then add
    // plane p to the pending outputs and store output p-R once complete.
    auto step = [&](T(&v)[NSLOT], T(&tile)[SY][SX], std::int64_t p) {
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) {
        const int l = tid + s * NT;
        if (l < SX * SY) (&tile[0][0])[l] = v[s];
      }
      if (p + 2 < p_end) load(v, p + 2);
      __syncthreads();
      add_plane<T, DIMS, R, TAPS>(a, tile, acc, tx, ty);
      const std::int64_t m = p - R;
      if (active && m >= m0)
        out[DIMS == 3 ? g.index(x, y, m) : g.index(x, m, 0)] = acc[0] + a.source;
#pragma unroll
      for (int j = 0; j + 1 < Q; ++j) acc[j] = acc[j + 1];
      acc[Q - 1] = T(0);
    };

    // Two register sets and two shared buffers, used alternately with compile-time indices
    // (a register array indexed at run time would go to local memory).
    T v0[NSLOT], v1[NSLOT];
    load(v0, p_begin);
    load(v1, p_begin + 1);  // a block reads at least 2R+1 >= 3 planes
    for (std::int64_t p = p_begin; p < p_end; p += 2) {
      step(v0, plane[0], p);
      if (p + 1 < p_end) step(v1, plane[1], p + 1);
    }
    __syncthreads();  // the next y tile overwrites shared memory
  }
}

// The same sweep with the planes staged by asynchronous copies (cp.async, sm_80+) into a ring
// of kStages shared-memory planes: plane p+kStages-1 is requested while plane p is computed,
// so kStages-1 planes per block are in flight without holding registers (the register version
// above holds two planes of values per thread). One barrier per plane: it publishes plane p
// and frees the buffer of plane p-1, which the next request overwrites. Tap loops, order of
// summation and stores are those of register_sweep_kernel. Nodes a thread does not load (beyond
// the padded field, star corners) are zero-filled by the copy, as the register version stores
// zeros there.
// Shared memory: kStages x (TX+2R) x (TY+2R) x T (3D fp64 R=3: 4 x 38 x 14 x 8 = 17 KB).
constexpr int kStages = 4;

template <typename T, int DIMS, int R, int TAPS>
__global__ void __launch_bounds__(RegisterTile<DIMS>::tx* RegisterTile<DIMS>::ty)
    register_sweep_async_kernel(const SweepArgs<T> a, std::int64_t tiles_y, std::int64_t chunk) {
  constexpr int TX = RegisterTile<DIMS>::tx, TY = RegisterTile<DIMS>::ty;
  constexpr int RY = DIMS == 3 ? R : 0;
  constexpr int SX = TX + 2 * R, SY = TY + 2 * RY, NT = TX * TY;
  constexpr int NSLOT = (SX * SY + NT - 1) / NT;
  constexpr int Q = 2 * R + 1;
  __shared__ T plane[kStages][SY][SX];

  const DeviceGrid& g = a.grid;
  const T* __restrict__ in = a.in;
  T* __restrict__ out = a.out;
  const std::int64_t march_n = DIMS == 3 ? g.n[2] : g.n[1];
  const std::int64_t march_pitch = DIMS == 3 ? g.pitch_z : g.pitch_y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * TX + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(TX);
  const std::int64_t m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  const std::int64_t m1 = min(m0 + chunk, march_n);
  const std::int64_t p_begin = m0 - R, p_end = m1 + R;

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y0 = by * TY;
    const std::int64_t x = x0 + tx, y = y0 + ty;
    const bool active = x < g.n[0] && (DIMS == 2 || y < g.n[1]);

    const T* src[NSLOT];
    bool load_slot[NSLOT];
#pragma unroll
    for (int s = 0; s < NSLOT; ++s) {
      const int l = tid + s * NT;
      const int sx = l % SX, sy = l / SX;
      const std::int64_t gx = x0 - R + sx, gy = y0 - RY + sy;
      bool ok = l < SX * SY && gx < g.n[0] + R;
      if (DIMS == 3) ok = ok && gy < g.n[1] + RY;
      if (TAPS == kStarTaps && DIMS == 3)
        ok = ok && !((sx < R || sx >= R + TX) && (sy < RY || sy >= RY + TY));
      load_slot[s] = ok;
      src[s] = ok ? in + g.origin + (DIMS == 3 ? gy * g.pitch_y : 0) + gx : in;
    }
    // Requests plane p into its ring buffer (nothing past the block's last plane); one commit
    // group per plane, empty or not, so that "plane p is in" is always the same wait.
    auto request = [&](std::int64_t p) {
      if (p < p_end) {
        T* tile = &plane[static_cast<int>((p - p_begin) % kStages)][0][0];
#pragma unroll
        for (int s = 0; s < NSLOT; ++s) {
          const int l = tid + s * NT;
          if (l < SX * SY)
            __pipeline_memcpy_async(tile + l, src[s] + (load_slot[s] ? p * march_pitch : 0),
                                    sizeof(T), load_slot[s] ? 0 : sizeof(T));
        }
      }
      __pipeline_commit();
    };

    T acc[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) acc[j] = T(0);

#pragma unroll
    for (int k = 0; k + 1 < kStages; ++k) request(p_begin + k);
    for (std::int64_t p = p_begin; p < p_end; ++p) {
      __pipeline_wait_prior(kStages - 2);
      __syncthreads();
      request(p + kStages - 1);
      const T(&tile)[SY][SX] = plane[static_cast<int>((p - p_begin) % kStages)];
      add_plane<T, DIMS, R, TAPS>(a, tile, acc, tx, ty);
      const std::int64_t m = p - R;
      if (active && m >= m0)
        out[DIMS == 3 ? g.index(x, y, m) : g.index(x, m, 0)] = acc[0] + a.source;
#pragma unroll
      for (int j = 0; j + 1 < Q; ++j) acc[j] = acc[j + 1];
      acc[Q - 1] = T(0);
    }
    __pipeline_wait_prior(0);
    __syncthreads();  // the next y tile overwrites shared memory
  }
}

// Which of the two runs a shape, as measured (H100, fp64, one step per pass): the staged
// copies pay in 2D at radius 3 (Star-2D13P 166.6 against 158.8 GStencil/s, Box-2D49P 148.4
// against 139.7), are even at 2D radius 1 (Heat-2D 170.0 / 168.8, Box-2D9P 164.0 / 168.8) and
// lose in 3D at radius 1 (Heat-3D 128.1 / 142.5, Box-3D27P 136.9 / 139.1). The fused 2D
// stars of radius 4-6 take them as radius 3 does; so do the fused 3D stars in fp64 (Heat-3D
// at k = 2 / 3: 209.2 / 236.8 against 193.4 / 208.5) but not in fp32 (282.0 / 300.7 against
// 327.4 / 284.9).
template <typename T, int DIMS, int R>
constexpr bool use_async_planes() {
  return (DIMS == 2 && R >= 3) || (DIMS == 3 && R >= 2 && sizeof(T) == 8);
}

template <typename T>
struct RegisterLaunch {
  const SweepArgs<T>& args;
  const LaunchContext& context;

  template <int DIMS, int R, int TAPS>
  void operator()() const {
    if constexpr (DIMS == 1) {
      throw std::logic_error("register-tiling: 1D grids are not supported");
    } else {
      using Tile = RegisterTile<DIMS>;
      const auto kernel = use_async_planes<T, DIMS, R>()
                              ? register_sweep_async_kernel<T, DIMS, R, TAPS>
                              : register_sweep_kernel<T, DIMS, R, TAPS>;
      static const int resident = [&] {
        int blocks = 0;
        HEATSIM_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Tile::tx * Tile::ty, 0));
        return std::max(blocks, 1);
      }();
      const DeviceGrid& g = args.grid;
      const std::int64_t tiles_x = (g.n[0] + Tile::tx - 1) / Tile::tx;
      const std::int64_t tiles_y = DIMS == 3 ? (g.n[1] + Tile::ty - 1) / Tile::ty : 1;
      const std::int64_t march_n = DIMS == 3 ? g.n[2] : g.n[1];
      const std::int64_t chunk =
          march_chunk(tiles_x * std::min<std::int64_t>(tiles_y, 65535), march_n, R,
                      static_cast<std::int64_t>(resident) * context.multiprocessors);
      const std::int64_t chunks = (march_n + chunk - 1) / chunk;
      const dim3 block(Tile::tx, Tile::ty, 1);
      const dim3 grid =
          DIMS == 3 ? dim3(static_cast<unsigned>(tiles_x),
                           static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                           static_cast<unsigned>(chunks))
                    : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
      kernel<<<grid, block, 0, context.stream>>>(args, tiles_y, chunk);
      HEATSIM_CUDA_CHECK_LAUNCH();
    }
  }

};

}  // namespace

template <typename T>
void launch_register_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                           const LaunchContext& context) {
  dispatch_shape(shape, RegisterLaunch<T>{args, context});
}

template void launch_register_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                           const LaunchContext&);
template void launch_register_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                            const LaunchContext&);

}  // namespace heatsim::kernels::cuda
