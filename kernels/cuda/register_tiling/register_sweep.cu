// register-tiling: thread blocks tile the plane across the slowest axis (xy in 3D, x in 2D)
// and march along that axis (z in 3D, y in 2D) through a chunk of planes: thread coarsening
// along the march axis and register tiling across it. Each plane is loaded from global memory
// once per block into shared memory (with its in-plane halo; a star's tile skips the corners);
// the march-axis neighbours live in registers, as the operator's march carries them
// (point_operators.cuh: the constant stencil's 2R+1 partial sums, the flux operator's output
// finished one plane late). Written once over the point operators: the tiling decides how planes
// reach shared memory (through registers, or by asynchronous copies; use_async_planes() picks
// one per operator, as measured), the operator what a plane adds to its column.
#include <algorithm>
#include <stdexcept>

#include "../check.cuh"
#include "../point_operators.cuh"
#include "register_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Block shapes (threads = output columns per block):
//   2D: 256 x 1, march along y; smem B x (256+2R) x F                 (fp64 R=3: 4.2 KB x F)
//   3D: 32 x 8,  march along z; smem B x (32+2R) x (8 Y+2R) x F        (fp64 R=3: 8.5 KB x F)
// Y = Op::kRows, the rows each thread forms (2 for the classes' flux operator, else 1).
// B the planes in shared memory (2, or kStages by copies), F the bytes a node stages (u; the
// flux operator also its k or class, unless the faces are given). Registers: the operator's
// march state, kPrefetch planes of prefetched Slots (the plane p+kPrefetch load is issued
// before plane p is computed), their addresses. Shared memory is double-buffered, so one
// barrier per plane suffices: a thread writing buffer b for plane p+2 has passed the barrier of
// plane p+1, which every thread reaches only after it finished reading buffer b for plane p.
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

// Planes in flight by asynchronous copies (cp.async, sm_80+): a ring of kStages shared-memory
// planes, plane p+kStages-1 requested while plane p is computed, so kStages-1 planes per block
// are in flight without holding registers. One barrier per plane: it publishes plane p and
// frees the buffer of plane p-1, which the next request overwrites. Nodes a thread does not load
// (beyond the padded field, star corners) are zero-filled by the copy, as the register version
// stores zeros there. Shared memory: kStages x (TX+2R) x (TY+2R) x T (3D fp64 R=3: 17 KB).
constexpr int kStages = 4;

// Which way planes reach shared memory, as measured (H100, fp64, one step per pass): the
// staged copies pay in 2D at radius 3 (Star-2D13P 166.6 against 158.8 GStencil/s, Box-2D49P
// 148.4 against 139.7), are even at 2D radius 1 (Heat-2D 170.0 / 168.8, Box-2D9P 164.0 / 168.8)
// and lose in 3D at radius 1 (Heat-3D 128.1 / 142.5, Box-3D27P 136.9 / 139.1). The fused 2D
// stars of radius 4-6 take them as radius 3 does; so do the fused 3D stars in fp64 (Heat-3D at
// k = 2 / 3: 209.2 / 236.8 against 193.4 / 208.5) but not in fp32 (282.0 / 300.7 against 327.4
// / 284.9). The flux operator (radius 1) stages through registers.
template <class Op>
constexpr bool use_async_planes() {
  constexpr int DIMS = Op::kDims, R = Op::kRadius;
  return !Op::kCoefficients &&
         ((DIMS == 2 && R >= 3) || (DIMS == 3 && R >= 2 && sizeof(typename Op::Value) == 8));
}

// Blocks per SM the registers must leave room for (0: the compiler's choice). The flux
// operator: 4, or 3 with the rules, which leaves them 80 registers (fp64 3D: 54.0 against 52.5
// GStencil/s at 512^3 and 34.7 against 33.5 at 96^3 held to 64 with spills). The compact
// forms in fp64 3D without the rules, as measured on an H200 at 512^3 (GStencil/s, 0 3 4 5 6
// blocks): the classes 140.9 121.2 121.4 131.2 128.0 (the compiler's choice is 48 registers, 5
// blocks), the faces as classes 64.3 64.4 64.4 74.6 82.0 (6 blocks: 40 registers, no spills).
// Since each thread forms two rows along y (FluxPoint::kRows): the classes keep the compiler's
// choice (76 registers, 3 blocks), the faces as classes are held to 3 (76 registers, no spills;
// 104.3 against 100.9 GStencil/s with one row at 6 blocks).
template <class Op>
constexpr int register_min_blocks() {
  if constexpr (Op::kCoefficients && Op::kDims == 3 && !Op::kRules &&
                sizeof(typename Op::Value) == 8) {
    if constexpr (Op::kForm == CoefficientForm::classes) return 0;
    if constexpr (Op::kForm == CoefficientForm::face_classes) return 3;
  }
  return Op::kCoefficients ? (Op::kRules ? 3 : 4) : 0;
}

template <class Op, bool ASYNC>
__global__ void __launch_bounds__(RegisterTile<Op::kDims>::tx* RegisterTile<Op::kDims>::ty,
                                  register_min_blocks<Op>())
    register_kernel(const typename Op::Args a, std::int64_t tiles_y, std::int64_t chunk) {
  using T = typename Op::Value;
  constexpr int DIMS = Op::kDims, R = Op::kRadius;
  constexpr int TX = RegisterTile<DIMS>::tx, TY = RegisterTile<DIMS>::ty;
  constexpr int RY = DIMS == 3 ? R : 0;  // in-plane y halo
  constexpr int NY = Op::kRows;          // rows per thread along y (3D)
  constexpr int SX = TX + 2 * R, SY = TY * NY + 2 * RY, NT = TX * TY;
  constexpr int NSLOT = (SX * SY + NT - 1) / NT;  // plane nodes each thread loads
  using Plane = typename Op::template Plane<SY, SX>;
  using Slot = typename Op::Slot;
  __shared__ Plane planes[ASYNC ? kStages : 2];
  const typename Op::Block block = Op::enter(a);

  const DeviceGrid& g = a.grid;
  const T* __restrict__ in = a.in;
  MarchAt at;
  at.tx = threadIdx.x;
  at.ty = threadIdx.y;
  at.march_n = g.n[DIMS - 1];
  at.march_pitch = g.stride(DIMS - 1);
  const int tid = at.ty * TX + at.tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(TX);
  at.m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  at.m1 = min(at.m0 + chunk, at.march_n);
  const std::int64_t p_begin = at.m0 - R, p_end = at.m1 + R;  // planes this block reads

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y0 = by * TY * NY;
    at.x = x0 + at.tx;
    at.y = y0 + at.ty * NY;
    at.active = at.x < g.n[0] && (DIMS == 2 || at.y < g.n[1]) && stores_x(a, at.x);
    at.own = g.origin + (DIMS == 3 ? at.y * g.pitch_y : 0) + at.x;

    // This thread's share of the plane tile: slot s is tile node tid + s*NT, element slot_at[s]
    // of plane 0. Nodes beyond the padded field, and the corners a star never reads, are not
    // loaded (zeros; they feed no stored output).
    std::int64_t slot_at[NSLOT];
    bool load_slot[NSLOT];
#pragma unroll
    for (int s = 0; s < NSLOT; ++s) {
      const int l = tid + s * NT;
      const int sx = l % SX, sy = l / SX;
      const std::int64_t gx = x0 - R + sx, gy = y0 - RY + sy;
      bool ok = l < SX * SY && gx < g.n[0] + R;
      if (DIMS == 3) ok = ok && gy < g.n[1] + RY;
      if (Op::kStar && DIMS == 3)
        ok = ok && !((sx < R || sx >= R + TX) && (sy < RY || sy >= SY - RY));
      load_slot[s] = ok;
      slot_at[s] = g.origin + (DIMS == 3 ? gy * g.pitch_y : 0) + gx;
    }

    typename Op::March march;
    march.start();
    if constexpr (ASYNC) {
      // Requests plane p into its ring buffer (nothing past the block's last plane); one commit
      // group per plane, empty or not, so that "plane p is in" is always the same wait.
      const T* src[NSLOT];  // each slot's node in plane 0 (`in` where it is not loaded)
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) src[s] = load_slot[s] ? in + slot_at[s] : in;
      auto request = [&](std::int64_t p) {
        if (p < p_end) {
          Plane& tile = planes[static_cast<int>((p - p_begin) % kStages)];
#pragma unroll
          for (int s = 0; s < NSLOT; ++s) {
            const int l = tid + s * NT;
            if (l < SX * SY)
              Op::request(tile, l, src[s] + (load_slot[s] ? p * at.march_pitch : 0),
                          load_slot[s]);
          }
        }
        __pipeline_commit();
      };
#pragma unroll
      for (int k = 0; k + 1 < kStages; ++k) request(p_begin + k);
      for (std::int64_t p = p_begin; p < p_end; ++p) {
        __pipeline_wait_prior(kStages - 2);
        __syncthreads();
        request(p + kStages - 1);
        march.plane(a, block, planes[static_cast<int>((p - p_begin) % kStages)], at, p);
      }
      __pipeline_wait_prior(0);
    } else {
      constexpr int D = Op::kPrefetch;
      static_assert(D == 1 || D == 2, "one or two planes ahead");
      // The planes are loaded in order, once each: each slot's element advances by the march
      // pitch from one load to the next (an add, not a 64-bit multiply per plane and slot).
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) slot_at[s] += p_begin * at.march_pitch;
      auto load = [&](Slot(&v)[NSLOT], std::int64_t) {
#pragma unroll
        for (int s = 0; s < NSLOT; ++s) {
          v[s] = load_slot[s] ? Op::load(a, in, slot_at[s]) : Slot{};
          slot_at[s] += at.march_pitch;
        }
      };
      // Plane p: publish its values (prefetched D planes ago), prefetch plane p+D, then add
      // plane p to the column.
      auto step = [&](Slot(&v)[NSLOT], Plane& tile, std::int64_t p) {
#pragma unroll
        for (int s = 0; s < NSLOT; ++s) {
          const int l = tid + s * NT;
          if (l < SX * SY) Op::put(tile, l, v[s]);
        }
        if (p + D < p_end) load(v, p + D);
        __syncthreads();
        march.plane(a, block, tile, at, p);
      };
      // Two planes ahead: two register sets and two shared buffers, used alternately with
      // compile-time indices (a register array indexed at run time would go to local memory).
      // One plane ahead: one set, the buffers alternating at run time (the flux operator: 64
      // registers with 8 bytes spilled for the classes unrolled by two, none this way).
      Slot v0[NSLOT];
      load(v0, p_begin);
      if constexpr (D == 2) {
        Slot v1[NSLOT];
        load(v1, p_begin + 1);  // a block reads at least 2R+1 >= 3 planes
        for (std::int64_t p = p_begin; p < p_end; p += 2) {
          step(v0, planes[0], p);
          if (p + 1 < p_end) step(v1, planes[1], p + 1);
        }
      } else {
        int b = 0;
        for (std::int64_t p = p_begin; p < p_end; ++p, b ^= 1) step(v0, planes[b], p);
      }
    }
    __syncthreads();  // the next y tile overwrites shared memory
  }
}

template <class Op>
void launch(const typename Op::Args& args, const LaunchContext& context) {
  constexpr int DIMS = Op::kDims;
  if constexpr (DIMS == 1) {
    throw std::logic_error("register-tiling: 1D grids are not supported");
  } else {
    using Tile = RegisterTile<DIMS>;
    const auto kernel = register_kernel<Op, use_async_planes<Op>()>;
    static const int resident = [&] {
      int blocks = 0;
      HEATSIM_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Tile::tx * Tile::ty, 0));
      return std::max(blocks, 1);
    }();
    const DeviceGrid& g = args.grid;
    const std::int64_t tiles_x = (g.n[0] + Tile::tx - 1) / Tile::tx;
    const std::int64_t tile_rows = Tile::ty * Op::kRows;
    const std::int64_t tiles_y = DIMS == 3 ? (g.n[1] + tile_rows - 1) / tile_rows : 1;
    const std::int64_t march_n = g.n[DIMS - 1];
    const std::int64_t chunk =
        march_chunk(tiles_x * std::min<std::int64_t>(tiles_y, 65535), march_n, Op::kRadius,
                    static_cast<std::int64_t>(resident) * context.multiprocessors);
    const std::int64_t chunks = (march_n + chunk - 1) / chunk;
    const dim3 block(Tile::tx, Tile::ty, 1);
    const dim3 grid = DIMS == 3
                          ? dim3(static_cast<unsigned>(tiles_x),
                                 static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                                 static_cast<unsigned>(chunks))
                          : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
    kernel<<<grid, block, 0, context.stream>>>(args, tiles_y, chunk);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

template <typename T>
void launch_register_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                           const LaunchContext& context) {
  dispatch_stencil<T>(shape, [&](auto op) { launch<typename decltype(op)::type>(args, context); });
}

template <typename T>
void launch_register_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                       const LaunchContext& context) {
  if (dims < 2) throw std::logic_error("register-tiling: 1D grids are not supported");
  dispatch_flux(args, dims, coefficient_form(args),
                [&](auto op) { launch<typename decltype(op)::type>(args, context); });
}

template void launch_register_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                           const LaunchContext&);
template void launch_register_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                            const LaunchContext&);
template void launch_register_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                       const LaunchContext&);
template void launch_register_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                        const LaunchContext&);

}  // namespace heatsim::kernels::cuda
