// shared-tiling: each block stages its input tile plus a halo of R nodes per side in shared
// memory (every field the operator stages: u, and k for the flux operator with nodes' k), then
// computes the output tile from there (the tiled seven-point kernel, generalised to radius R,
// star and box shapes, 1D to 3D, and to the point operators of point_operators.cuh). Unlike
// the textbook kernel the block is the size of the output tile and loads the halo with a
// strided loop, so no thread idles during the compute phase.
#include <algorithm>

#include "../check.cuh"
#include "../point_operators.cuh"
#include "shared_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Tile shapes (output nodes per block, x y z) and threads per block:
//   1D: 1024 (256 threads x 4 nodes, coarsened along x)   smem F x (1024+2R)      x T
//   2D: 32 x 16 (512 threads)                              smem F x (32+2R)(16+2R) x T
//   3D: 32 x 4 x 4 (512 threads)                           smem F x (32+2R)(4+2R)^2 x T
// F the fields staged (1, or 2 for the flux operator with nodes' k). Largest tile: 3D, R = 3,
// fp64, F = 1: 38*10*10*8 = 30.4 KB; the flux operator's (R = 1, F = 2) 19.6 KB (static,
// < 48 KB). Star operators skip the tile's corners (nodes off every axis through the core).
// Registers: the value(s) and addresses; weights are constant-bank operands.
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

// A node's neighbourhood in the staged tile: tile node (cz, cy, cx) of every staged field.
template <typename T, int F, int SZ, int SY, int SX>
struct TileNear {
  const T (*tile)[SZ][SY][SX];
  int cz, cy, cx;
  std::int64_t i, x, y, z;

  template <int S>
  __device__ __forceinline__ T at(int dx, int dy, int dz) const {
    return tile[S][cz + dz][cy + dy][cx + dx];
  }
};

// Blocks per SM the registers must leave room for (0: the compiler's choice): 3 for an operator
// with coefficients that stages one field and applies no rules (the flux operator with the
// faces given: 40 registers; left to itself the compiler took 56, 2 blocks of 512, and
// Heat-3D-faces ran at 30.9 against 43.4 GStencil/s on an H200). With k staged, or the rules,
// 40 registers spill. An explicit 1 lets the constant stencils take up to 72 registers, one
// block per SM (Heat-2D 61.2 against 80.3).
template <class Op>
constexpr int shared_min_blocks() {
  return Op::kCoefficients && Op::kStaged == 1 && !Op::kRules ? 3 : 0;
}

template <class Op, int DIMS = Op::kDims>
__global__ void __launch_bounds__(SharedTile<DIMS>::bx* SharedTile<DIMS>::by* SharedTile<DIMS>::bz,
                                  shared_min_blocks<Op>())
    shared_kernel(const typename Op::Args a, std::int64_t tiles_y, std::int64_t tiles_z) {
  using T = typename Op::Value;
  using Tile = SharedTile<DIMS>;
  constexpr int R = Op::kRadius, F = Op::kStaged;
  constexpr int RY = DIMS > 1 ? R : 0, RZ = DIMS > 2 ? R : 0;
  constexpr int OX = Tile::bx * Tile::cx, OY = Tile::by, OZ = Tile::bz;  // output tile
  constexpr int SX = OX + 2 * R, SY = OY + 2 * RY, SZ = OZ + 2 * RZ;     // input tile
  constexpr int THREADS = Tile::bx * Tile::by * Tile::bz;
  __shared__ T tile[F][SZ][SY][SX];
  const typename Op::Block block = Op::enter(a);

  const DeviceGrid& g = a.grid;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * Tile::by + ty) * Tile::bx + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(OX);

  for (std::int64_t bz = blockIdx.z; bz < tiles_z; bz += gridDim.z)
    for (std::int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
      const std::int64_t y0 = by * OY, z0 = bz * OZ;
      // Input tile: nodes x0-R .. x0+OX+R-1 (and likewise in y, z), clipped to the padded
      // field; clipped nodes (and a star's corners) only feed outputs beyond the grid, which
      // are not stored.
      const std::int64_t origin = g.index(x0 - R, y0 - RY, z0 - RZ);
      for (int l = tid; l < SX * SY * SZ; l += THREADS) {
        const int sx = l % SX, sy = (l / SX) % SY, sz = l / (SX * SY);
        if (Op::kStar) {
          const int halo_axes = (sx < R || sx >= R + OX) + (sy < RY || sy >= RY + OY) +
                                (sz < RZ || sz >= RZ + OZ);
          if (halo_axes > 1) continue;
        }
        if (x0 + sx < g.n[0] + 2 * R && y0 + sy < g.n[1] + 2 * RY && z0 + sz < g.n[2] + 2 * RZ) {
          const std::int64_t at = origin + sz * g.pitch_z + sy * g.pitch_y + sx;
#pragma unroll
          for (int f = 0; f < F; ++f) tile[f][sz][sy][sx] = Op::staged_field(a, f)[at];
        }
      }
      __syncthreads();
      const std::int64_t y = y0 + ty, z = z0 + tz;
      if (y < g.n[1] && z < g.n[2]) {
#pragma unroll
        for (int c = 0; c < Tile::cx; ++c) {
          const int ox = tx + c * Tile::bx;
          const std::int64_t x = x0 + ox;
          if (x < g.n[0]) {
            const std::int64_t i = g.index(x, y, z);
            const TileNear<T, F, SZ, SY, SX> near{tile, tz + RZ, ty + RY, ox + R, i, x, y, z};
            a.out[i] = Op::point(a, block, near);
          }
        }
      }
      __syncthreads();  // the next tile overwrites shared memory
    }
}

template <class Op>
void launch(const typename Op::Args& args, const LaunchContext& context) {
  using Tile = SharedTile<Op::kDims>;
  const DeviceGrid& g = args.grid;
  const std::int64_t ox = Tile::bx * Tile::cx;
  const std::int64_t tiles_x = (g.n[0] + ox - 1) / ox;
  const std::int64_t tiles_y = (g.n[1] + Tile::by - 1) / Tile::by;
  const std::int64_t tiles_z = (g.n[2] + Tile::bz - 1) / Tile::bz;
  const dim3 block(Tile::bx, Tile::by, Tile::bz);
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 0x7fffffff)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_z, 65535)));
  shared_kernel<Op><<<grid, block, 0, context.stream>>>(args, tiles_y, tiles_z);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void launch_shared_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                         const LaunchContext& context) {
  dispatch_stencil<T>(shape,
                      [&](auto op) { launch<typename decltype(op)::type>(args, context); });
}

// The compact forms are not read here: the tile stages k (or the faces' arrays are read), and
// the device keeps the fields beside the classes.
template <typename T>
void launch_shared_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context) {
  const CoefficientForm form =
      args.faces[0] ? CoefficientForm::faces : CoefficientForm::fields;
  dispatch_flux(args, dims, form, [&](auto op) {
    using Op = typename decltype(op)::type;
    if constexpr (!takes_classes(Op::kForm)) launch<Op>(args, context);
  });
}

template void launch_shared_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                         const LaunchContext&);
template void launch_shared_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                          const LaunchContext&);
template void launch_shared_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                     const LaunchContext&);
template void launch_shared_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                      const LaunchContext&);

}  // namespace heatsim::kernels::cuda
