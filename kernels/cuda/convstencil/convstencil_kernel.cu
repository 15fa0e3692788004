// The convstencil sweep kernel and its launcher.
//
// Kernel: out <- S in + source over the interior nodes of one tile per block.
//   Tile: tile_x outputs along x by tile_y rows (2D, 3D) or tile_y stencil2row segments of
//   tile_x outputs (1D); in 3D the block marches along z through tile_z planes, keeping a
//   ring of 2*rz+2 planes in shared memory (2*rz+1 in use, one being prefetched).
//   Shared memory: slots * rows * pitch doubles of input, the offset table (slots * chunks
//   ints) and, for stencils of more than kMaxRegisterChunks chunks, the B fragments
//   (32 * chunks doubles). Rows are filled with cp.async, unconditionally: rows past the
//   grid are clamped to its last ghost row and columns past the tile read on into the next
//   row or the buffer's slack ("dirty bits" that no stored output depends on).
//   Warps: each warp owns pairs of 8x8 output units; per chunk one A load from shared memory
//   per unit, the B fragment from registers, one mma.m8n8k4 per unit. Two independent
//   accumulators per warp hide the MMA latency.
//   Registers: 2 per chunk for B (up to 128), 8 for the accumulators.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "../check.cuh"
#include "convstencil_kernel.cuh"

namespace heatsim::kernels::convstencil {
namespace {

struct SweepParams {
  const double* in;
  double* out;
  cuda::DeviceGrid grid;
  double source;
  const int* offsets;
  const double* fragments;
  int chunks, dims, radius, ry, rz;
  int tile_x, tile_y, tile_z, rows, pitch, slots, warps;
};

__device__ __forceinline__ void mma_m8n8k4(double& d0, double& d1, double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
      : "+d"(d0), "+d"(d1)
      : "d"(a), "d"(b));
}

__device__ __forceinline__ void copy_async8(double* shared, const double* global) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(global) : "memory");
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Two neighbouring outputs of one row; x is even, so the pair is 16-byte aligned.
__device__ __forceinline__ void store_pair(double* out, std::int64_t x, std::int64_t nx, double a,
                                           double b) {
  if (x + 1 < nx)
    *reinterpret_cast<double2*>(out) = make_double2(a, b);
  else if (x < nx)
    out[0] = a;
}

// NC > 0: B fragments of up to NC chunks live in registers (the loop over chunks unrolls, so
// each fragment has a fixed register); NC == 0: they are read from shared memory.
template <int NC>
__global__ void __launch_bounds__(256) sweep_kernel(const SweepParams p) {
  extern __shared__ __align__(16) double smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double* fragments_s = smem;
  double* planes = smem + (NC == 0 ? 32 * p.chunks : 0);
  const int plane_elems = p.rows * p.pitch;
  int* offsets_s = reinterpret_cast<int*>(planes + p.slots * plane_elems);

  for (int i = threadIdx.x; i < p.slots * p.chunks; i += blockDim.x) offsets_s[i] = p.offsets[i];
  if constexpr (NC == 0)
    for (int i = threadIdx.x; i < 32 * p.chunks; i += blockDim.x) fragments_s[i] = p.fragments[i];
  double b[NC > 0 ? NC : 1];
  if constexpr (NC > 0) {
#pragma unroll
    for (int c = 0; c < NC; ++c) b[c] = c < p.chunks ? p.fragments[c * 32 + lane] : 0.0;
  }

  const cuda::DeviceGrid& g = p.grid;
  const std::int64_t gx0 =
      static_cast<std::int64_t>(blockIdx.x) * (p.dims == 1 ? p.tile_x * p.tile_y : p.tile_x);
  const std::int64_t gy0 = static_cast<std::int64_t>(blockIdx.y) * p.tile_y;
  const std::int64_t z_begin = static_cast<std::int64_t>(blockIdx.z) * p.tile_z;
  const std::int64_t z_end = min(z_begin + p.tile_z, g.n[2]);

  // Plane z (-rz <= z < nz + rz) of the tile into its ring slot, as stencil2row rows.
  auto load_plane = [&](std::int64_t z) {
    double* dst = planes + static_cast<int>((z + p.rz) % p.slots) * plane_elems;
    for (int r = warp; r < p.rows; r += p.warps) {
      const double* src;
      if (p.dims == 1) {
        src = p.in + g.index(gx0 + static_cast<std::int64_t>(r) * p.tile_x - p.radius, 0, 0);
      } else {
        const std::int64_t y = min(gy0 - p.ry + r, g.n[1] + p.ry - 1);
        src = p.in + g.index(gx0 - p.radius, y, z);
      }
      double* d = dst + r * p.pitch;
      for (int c = lane; c < p.pitch; c += 32) copy_async8(d + c, src + c);
    }
  };

  for (std::int64_t z = z_begin - p.rz; z <= z_begin + p.rz; ++z) load_plane(z);
  copy_async_commit();

  const int units_x = p.tile_x / 8;
  const int units = units_x * (p.tile_y / 8);
  const int m = lane >> 2, col = 2 * (lane & 3);
  const bool prefetch = p.slots > 2 * p.rz + 1;
  for (std::int64_t z = z_begin; z < z_end; ++z) {
    copy_async_wait_all();
    __syncthreads();  // plane z+rz has landed; every warp is done with plane z-rz-1's slot
    if (prefetch && z + 1 < z_end) load_plane(z + p.rz + 1);
    copy_async_commit();
    const int* offs = offsets_s + static_cast<int>((z + p.rz) % p.slots) * p.chunks;

    for (int u = 2 * warp; u < units; u += 2 * p.warps) {
      const int uy = u / units_x, ux = u % units_x;  // units u, u+1 share a row
      const double* a0 = planes + (uy * 8 + m) * p.pitch + ux * 8 + (lane & 3);
      const double* a1 = a0 + 8;
      double d00 = 0.0, d01 = 0.0, d10 = 0.0, d11 = 0.0;
      if constexpr (NC > 0) {
#pragma unroll
        for (int c = 0; c < NC; ++c)
          if (c < p.chunks) {
            const int o = offs[c];
            mma_m8n8k4(d00, d01, a0[o], b[c]);
            mma_m8n8k4(d10, d11, a1[o], b[c]);
          }
      } else {
#pragma unroll 4
        for (int c = 0; c < p.chunks; ++c) {
          const int o = offs[c];
          const double bc = fragments_s[c * 32 + lane];
          mma_m8n8k4(d00, d01, a0[o], bc);
          mma_m8n8k4(d10, d11, a1[o], bc);
        }
      }
      std::int64_t x, y;
      if (p.dims == 1) {
        x = gx0 + static_cast<std::int64_t>(uy * 8 + m) * p.tile_x + ux * 8 + col;
        y = 0;
      } else {
        x = gx0 + ux * 8 + col;
        y = gy0 + uy * 8 + m;
      }
      if (y < g.n[1]) {
        double* o = p.out + g.index(x, y, z);
        store_pair(o, x, g.n[0], d00 + p.source, d01 + p.source);
        store_pair(o + 8, x + 8, g.n[0], d10 + p.source, d11 + p.source);
      }
    }
  }
}

using KernelFn = void (*)(SweepParams);

KernelFn kernel_for(int chunks) {
  if (chunks <= 16) return sweep_kernel<16>;
  if (chunks <= 32) return sweep_kernel<32>;
  if (chunks <= kMaxRegisterChunks) return sweep_kernel<kMaxRegisterChunks>;
  return sweep_kernel<0>;
}

}  // namespace

std::int64_t slack_elements(const TilePlan& plan) {
  return (plan.dims == 1 ? static_cast<std::int64_t>(plan.tile_x) * plan.tile_y : 0) + plan.pitch + 64;
}

void prepare_plan(const TilePlan& plan) {
  int device = 0, limit = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (plan.shared_bytes > static_cast<std::size_t>(limit))
    throw std::runtime_error("convstencil: tile needs " + std::to_string(plan.shared_bytes) +
                             " bytes of shared memory, the device gives " + std::to_string(limit));
  HEATSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(plan.chunks),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(plan.shared_bytes)));
}

void launch_sweep(const DevicePlan& dp, const double* in, double* out, const cuda::DeviceGrid& grid,
                  double source, int multiprocessors, cudaStream_t stream) {
  const TilePlan& t = dp.plan;
  SweepParams p{};
  p.in = in;
  p.out = out;
  p.grid = grid;
  p.source = source;
  p.offsets = dp.offsets;
  p.fragments = dp.fragments;
  p.chunks = t.chunks;
  p.dims = t.dims;
  p.radius = t.radius;
  p.ry = t.ry;
  p.rz = t.rz;
  p.tile_x = t.tile_x;
  p.tile_y = t.tile_y;
  p.rows = t.rows;
  p.pitch = t.pitch;
  p.slots = t.slots;
  p.warps = t.warps;
  const std::int64_t per_block_x = t.dims == 1 ? static_cast<std::int64_t>(t.tile_x) * t.tile_y : t.tile_x;
  const std::int64_t bx = (grid.n[0] + per_block_x - 1) / per_block_x;
  const std::int64_t by = t.dims == 1 ? 1 : (grid.n[1] + t.tile_y - 1) / t.tile_y;
  std::int64_t bz = 1;
  p.tile_z = 1;
  if (t.dims == 3) {
    // Enough blocks to fill the device a few times over, but z-runs long enough that the
    // 2*rz halo planes each run loads stay a small part of its work.
    const std::int64_t nz = grid.n[2];
    const std::int64_t wanted = std::max<std::int64_t>(1, (4 * multiprocessors + bx * by - 1) / (bx * by));
    const std::int64_t min_run = std::min<std::int64_t>(nz, 4 * t.rz + 4);
    const std::int64_t run = std::max(min_run, (nz + wanted - 1) / wanted);
    bz = (nz + run - 1) / run;
    p.tile_z = static_cast<int>(run);
  }
  const dim3 blocks(static_cast<unsigned>(bx), static_cast<unsigned>(by), static_cast<unsigned>(bz));
  kernel_for(t.chunks)<<<blocks, 32 * t.warps, t.shared_bytes, stream>>>(p);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace heatsim::kernels::convstencil
