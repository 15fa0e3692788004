// shared-tiling, varying coefficients: each block stages the u and k tiles of its output nodes
// plus a one-node halo (the star's arms, no corners) in shared memory, then every node takes
// its six neighbours from there; dt/C and the source densities are read once per node from
// global memory.
#include <algorithm>

#include "../check.cuh"
#include "shared_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Tile shapes (output nodes per block, x y z) and threads per block, as the constant-weight
// sweep's:
//   1D: 1024 (256 threads x 4 nodes)   smem 2 x 1026 x T          (fp64 16.4 KB)
//   2D: 32 x 16 (512 threads)          smem 2 x 34 x 18 x T       (fp64  9.8 KB)
//   3D: 32 x 4 x 4 (512 threads)       smem 2 x 34 x 6 x 6 x T    (fp64 19.6 KB)
// Registers: the sum, the centre u and k, addresses.
template <int DIMS>
struct CoefficientTile;
template <>
struct CoefficientTile<1> {
  static constexpr int bx = 256, by = 1, bz = 1, cx = 4;
};
template <>
struct CoefficientTile<2> {
  static constexpr int bx = 32, by = 16, bz = 1, cx = 1;
};
template <>
struct CoefficientTile<3> {
  static constexpr int bx = 32, by = 4, bz = 4, cx = 1;
};

// FACES: the faces' conductances come from their arrays (CoefficientArgs::faces, read per
// node from global memory) and k is not staged. RULES: the faces' ghost rules applied at the
// boundary nodes (CoefficientArgs::rules).
template <typename T, int DIMS, bool FACES, bool RULES>
__global__ void __launch_bounds__(
    CoefficientTile<DIMS>::bx* CoefficientTile<DIMS>::by* CoefficientTile<DIMS>::bz)
    shared_coefficient_kernel(const CoefficientArgs<T> a, std::int64_t tiles_y,
                              std::int64_t tiles_z) {
  using Tile = CoefficientTile<DIMS>;
  constexpr int RY = DIMS > 1 ? 1 : 0, RZ = DIMS > 2 ? 1 : 0;
  constexpr int OX = Tile::bx * Tile::cx, OY = Tile::by, OZ = Tile::bz;
  constexpr int SX = OX + 2, SY = OY + 2 * RY, SZ = OZ + 2 * RZ;
  constexpr int THREADS = Tile::bx * Tile::by * Tile::bz;
  __shared__ T su[SZ][SY][SX];
  __shared__ T sk[SZ][SY][SX];

  const DeviceGrid& g = a.grid;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * Tile::by + ty) * Tile::bx + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(OX);

  for (std::int64_t bz = blockIdx.z; bz < tiles_z; bz += gridDim.z)
    for (std::int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
      const std::int64_t y0 = by * OY, z0 = bz * OZ;
      // Input tile x0-1 .. x0+OX (likewise y, z), clipped to the padded field; clipped nodes
      // and the corners feed no stored output.
      const std::int64_t origin = g.index(x0 - 1, y0 - RY, z0 - RZ);
      for (int l = tid; l < SX * SY * SZ; l += THREADS) {
        const int sx = l % SX, sy = (l / SX) % SY, sz = l / (SX * SY);
        const int halo_axes =
            (sx < 1 || sx > OX) + (sy < RY || sy >= RY + OY) + (sz < RZ || sz >= RZ + OZ);
        if (halo_axes > 1) continue;
        if (x0 + sx < g.n[0] + 2 && y0 + sy < g.n[1] + 2 * RY && z0 + sz < g.n[2] + 2 * RZ) {
          const std::int64_t at = origin + sz * g.pitch_z + sy * g.pitch_y + sx;
          su[sz][sy][sx] = a.in[at];
          if (!FACES) sk[sz][sy][sx] = a.conductivity[at];
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
            const int cx = ox + 1, cy = ty + RY, cz = tz + RZ;
            const T ui = su[cz][cy][cx], ki = FACES ? T(0) : sk[cz][cy][cx];
            const std::int64_t i = g.index(x, y, z);
            // K toward the neighbour at offset -1 or +1 along `axis`, tile node (nz, ny, nx).
            const auto K = [&](int axis, int side, int nz, int ny, int nx) -> T {
              if constexpr (FACES)
                return a.faces[axis][side < 0 ? i - g.stride(axis) : i];
              else
                return face_conductance(ki, sk[nz][ny][nx]);
            };
            // One axis's flow from the tile nodes below and above (with the face's rule at a
            // boundary node under RULES).
            const auto axis_flow = [&](T& flow, int axis, std::int64_t coordinate, int lz, int ly,
                                       int lx, int hz, int hy, int hx) {
              const T k_lo = K(axis, -1, lz, ly, lx), k_hi = K(axis, 1, hz, hy, hx);
              T u_lo = su[lz][ly][lx], u_hi = su[hz][hy][hx];
              if constexpr (RULES)
                apply_face_rules(a.rules, axis, coordinate, g.n[axis], ui, k_lo, k_hi, u_lo, u_hi);
              add_axis(flow, a.inv_h2[axis], ui, k_lo, u_lo, k_hi, u_hi);
            };
            T flow = T(0);
            axis_flow(flow, 0, x, cz, cy, cx - 1, cz, cy, cx + 1);
            if (DIMS > 1) axis_flow(flow, 1, y, cz, cy - 1, cx, cz, cy + 1, cx);
            if (DIMS > 2) axis_flow(flow, 2, z, cz - 1, cy, cx, cz + 1, cy, cx);
            a.out[i] = a.transfer ? finish_node<true>(a, i, ui, flow)
                                  : finish_node<false>(a, i, ui, flow);
          }
        }
      }
      __syncthreads();  // the next tile overwrites shared memory
    }
}

template <typename T, int DIMS>
void launch(const CoefficientArgs<T>& args, const LaunchContext& context) {
  using Tile = CoefficientTile<DIMS>;
  const DeviceGrid& g = args.grid;
  const std::int64_t ox = Tile::bx * Tile::cx;
  const std::int64_t tiles_x = (g.n[0] + ox - 1) / ox;
  const std::int64_t tiles_y = (g.n[1] + Tile::by - 1) / Tile::by;
  const std::int64_t tiles_z = (g.n[2] + Tile::bz - 1) / Tile::bz;
  const dim3 block(Tile::bx, Tile::by, Tile::bz);
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 0x7fffffff)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_z, 65535)));
  const bool faces = args.faces[0] != nullptr, rules = any_rule(args.rules);
  const auto kernel = faces ? (rules ? shared_coefficient_kernel<T, DIMS, true, true>
                                     : shared_coefficient_kernel<T, DIMS, true, false>)
                            : (rules ? shared_coefficient_kernel<T, DIMS, false, true>
                                     : shared_coefficient_kernel<T, DIMS, false, false>);
  kernel<<<grid, block, 0, context.stream>>>(args, tiles_y, tiles_z);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void launch_shared_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context) {
  switch (dims) {
    case 1:
      launch<T, 1>(args, context);
      break;
    case 2:
      launch<T, 2>(args, context);
      break;
    default:
      launch<T, 3>(args, context);
      break;
  }
}

template void launch_shared_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                     const LaunchContext&);
template void launch_shared_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                      const LaunchContext&);

}  // namespace heatsim::kernels::cuda
