// The convstencil sweep kernel and its launcher.
//
// Kernel: out <- S in + source over the interior nodes of one tile per block.
//   Tile: tile_x outputs along x by tile_y rows (2D, 3D) or tile_y stencil2row segments of
//   tile_x outputs (1D). In 3D the block marches along z through tile_z planes, keeping a
//   ring of 2*rz+2 planes in shared memory (2*rz+1 in use, one being prefetched); in 1D and
//   2D a grid of resident blocks walks the tiles, two in shared memory (one being computed,
//   the next being prefetched).
//   Shared memory: slots * rows * pitch doubles of input, the offset table (slots * chunks
//   ints) and, for stencils of more than kMaxRegisterChunks chunks, the B fragments
//   (32 * chunks doubles). Rows are filled with cp.async, unconditionally: rows past the
//   grid are clamped to its last ghost row and columns past the tile read on into the next
//   row or the buffer's slack ("dirty bits" that no stored output depends on).
//   Warps: each warp owns pairs of 8x8 output units stacked along the rows; per chunk one A
//   load from shared memory per unit, the B fragment from registers, and one m16n8k4 MMA for
//   the pair on sm_90 (two m8n8k4 on sm_80).
//   Registers: 2 per chunk for B (up to 128), 8 for the accumulators.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

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
  std::int64_t tiles, tiles_x;  // 1D and 2D: tiles in all, tiles along x
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900
__device__ __forceinline__ void mma_m8n8k4(double& d0, double& d1, double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
      : "+d"(d0), "+d"(d1)
      : "d"(a), "d"(b));
}
#endif

// Two 8x8 units stacked along the rows, one B: on sm_90 one m16n8k4 (Hopper's native fp64
// shape), elsewhere two m8n8k4. d0..d1: rows 0-7, d2..d3: rows 8-15.
__device__ __forceinline__ void mma_two_units(double& d0, double& d1, double& d2, double& d3,
                                              double a_top, double a_bottom, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};\n"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3)
      : "d"(a_top), "d"(a_bottom), "d"(b));
#else
  mma_m8n8k4(d0, d1, a_top, b);
  mma_m8n8k4(d2, d3, a_bottom, b);
#endif
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

// NC > 0: the plan has exactly NC chunks (padded to a multiple of 4) and their B fragments
// live in registers (the loop over chunks unrolls, so each fragment has a fixed register);
// NC == 0: any number of chunks, B fragments read from shared memory.
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
    for (int c = 0; c < NC; ++c) b[c] = p.fragments[c * 32 + lane];
  }

  const cuda::DeviceGrid& g = p.grid;
  // The block's sequence of items. 3D: the planes z_begin .. z_end-1 of one (x, y) tile,
  // ring slot (z + rz) mod slots. 1D and 2D: the tiles blockIdx.x, blockIdx.x + gridDim.x,
  // ..., alternating between two slots, so that the next tile loads while this one computes.
  const bool march = p.dims == 3;
  std::int64_t gx0 = 0, gy0 = 0, z_begin = 0, items = 0;
  if (march) {
    gx0 = static_cast<std::int64_t>(blockIdx.x) * p.tile_x;
    gy0 = static_cast<std::int64_t>(blockIdx.y) * p.tile_y;
    z_begin = static_cast<std::int64_t>(blockIdx.z) * p.tile_z;
    items = min(z_begin + p.tile_z, g.n[2]) - z_begin;
  } else {
    items = (p.tiles - blockIdx.x + gridDim.x - 1) / gridDim.x;
  }
  auto tile_origin = [&](std::int64_t item, std::int64_t& x0, std::int64_t& y0) {
    if (march) {
      x0 = gx0;
      y0 = gy0;
      return;
    }
    const std::int64_t tile = blockIdx.x + item * gridDim.x;
    if (p.dims == 1) {
      x0 = tile * p.tile_x * p.tile_y;
      y0 = 0;
    } else {
      x0 = (tile % p.tiles_x) * p.tile_x;
      y0 = (tile / p.tiles_x) * p.tile_y;
    }
  };

  // Plane z (-rz <= z < nz + rz) of item `item`'s tile into `slot`, as stencil2row rows.
  auto load_plane = [&](std::int64_t item, std::int64_t z, int slot) {
    std::int64_t x0, y0;
    tile_origin(item, x0, y0);
    double* dst = planes + slot * plane_elems;
    for (int r = warp; r < p.rows; r += p.warps) {
      const double* src;
      if (p.dims == 1) {
        src = p.in + g.index(x0 + static_cast<std::int64_t>(r) * p.tile_x - p.radius, 0, 0);
      } else {
        const std::int64_t y = min(y0 - p.ry + r, g.n[1] + p.ry - 1);
        src = p.in + g.index(x0 - p.radius, y, z);
      }
      double* d = dst + r * p.pitch;
      for (int c = lane; c < p.pitch; c += 32) copy_async8(d + c, src + c);
    }
  };
  auto slot_of = [&](std::int64_t item, std::int64_t z) {
    return static_cast<int>(march ? (z + p.rz) % p.slots : item % p.slots);
  };

  if (march) {
    for (std::int64_t z = z_begin - p.rz; z <= z_begin + p.rz; ++z) load_plane(0, z, slot_of(0, z));
  } else if (items > 0) {
    load_plane(0, 0, 0);
  }
  copy_async_commit();

  const int units_x = p.tile_x / 8;
  const int units = units_x * (p.tile_y / 8);
  const int m = lane >> 2, col = 2 * (lane & 3);
  for (std::int64_t item = 0; item < items; ++item) {
    const std::int64_t z = march ? z_begin + item : 0;
    copy_async_wait_all();
    __syncthreads();  // this item's planes have landed; every warp is done with the slot
                      // the next load overwrites
    if (item + 1 < items) {
      const std::int64_t next_z = march ? z + p.rz + 1 : 0;
      load_plane(item + 1, next_z, slot_of(item + 1, next_z));
    }
    copy_async_commit();
    const int* offs = offsets_s + slot_of(item, z) * p.chunks;
    std::int64_t x0, y0;
    tile_origin(item, x0, y0);

    // Pairs of units stacked along the rows: unit rows 2*py and 2*py + 1, unit column px.
    for (int q = warp; q < units / 2; q += p.warps) {
      const int uy = 2 * (q / units_x), ux = q % units_x;
      const double* a0 = planes + (uy * 8 + m) * p.pitch + ux * 8 + (lane & 3);
      const double* a1 = a0 + 8 * p.pitch;
      double d00 = 0.0, d01 = 0.0, d10 = 0.0, d11 = 0.0;
      if constexpr (NC > 0) {
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          const int o = offs[c];
          mma_two_units(d00, d01, d10, d11, a0[o], a1[o], b[c]);
        }
      } else {
#pragma unroll 4
        for (int c = 0; c < p.chunks; ++c) {
          const int o = offs[c];
          mma_two_units(d00, d01, d10, d11, a0[o], a1[o], fragments_s[c * 32 + lane]);
        }
      }
      for (int half = 0; half < 2; ++half) {
        const int row = (uy + half) * 8 + m;
        std::int64_t x, y;
        if (p.dims == 1) {
          x = x0 + static_cast<std::int64_t>(row) * p.tile_x + ux * 8 + col;
          y = 0;
        } else {
          x = x0 + ux * 8 + col;
          y = y0 + row;
        }
        if (y < g.n[1])
          store_pair(p.out + g.index(x, y, z), x, g.n[0], (half ? d10 : d00) + p.source,
                     (half ? d11 : d01) + p.source);
      }
    }
  }
}

using KernelFn = void (*)(SweepParams);

template <int... I>
KernelFn register_kernel(int chunks, std::integer_sequence<int, I...>) {
  static constexpr KernelFn table[] = {sweep_kernel<4 * (I + 1)>...};
  return table[chunks / 4 - 1];
}

KernelFn kernel_for(int chunks) {
  if (chunks <= kMaxRegisterChunks)
    return register_kernel(chunks, std::make_integer_sequence<int, kMaxRegisterChunks / 4>{});
  return sweep_kernel<0>;
}

}  // namespace

std::int64_t slack_elements(const TilePlan& plan) {
  return (plan.dims == 1 ? static_cast<std::int64_t>(plan.tile_x) * plan.tile_y : 0) + plan.pitch + 64;
}

int prepare_plan(const TilePlan& plan) {
  int device = 0, limit = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (plan.shared_bytes > static_cast<std::size_t>(limit))
    throw std::runtime_error("convstencil: tile needs " + std::to_string(plan.shared_bytes) +
                             " bytes of shared memory, the device gives " + std::to_string(limit));
  HEATSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(plan.chunks),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(plan.shared_bytes)));
  int blocks = 0;
  HEATSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel_for(plan.chunks), 32 * plan.warps, plan.shared_bytes));
  return std::max(blocks, 1);
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
  p.tiles = bx * by;
  p.tiles_x = bx;
  p.tile_z = 1;
  dim3 blocks;
  if (t.dims == 3) {
    // Enough blocks to fill the device a few times over, but z-runs long enough that the
    // 2*rz halo planes each run loads stay a small part of its work.
    const std::int64_t nz = grid.n[2];
    const std::int64_t wanted = std::max<std::int64_t>(1, (4 * multiprocessors + bx * by - 1) / (bx * by));
    const std::int64_t min_run = std::min<std::int64_t>(nz, 4 * t.rz + 4);
    const std::int64_t run = std::max(min_run, (nz + wanted - 1) / wanted);
    p.tile_z = static_cast<int>(run);
    blocks = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by),
                  static_cast<unsigned>((nz + run - 1) / run));
  } else {
    // Resident blocks only, each walking its share of the tiles with the next one in flight.
    const std::int64_t resident = static_cast<std::int64_t>(dp.blocks_per_multiprocessor) * multiprocessors;
    blocks = dim3(static_cast<unsigned>(std::max<std::int64_t>(1, std::min(p.tiles, resident))));
  }
  kernel_for(t.chunks)<<<blocks, 32 * t.warps, t.shared_bytes, stream>>>(p);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace heatsim::kernels::convstencil
