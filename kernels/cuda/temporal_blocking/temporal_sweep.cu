// temporal-blocking: `depth` steps of S per pass, each block advancing its tile through all of
// them in shared memory (DESIGN.md "Temporal blocking"; after EBISU's deep temporal blocking,
// Zhang et al., ICS 2023, written for heatsim's padded layout and stencil set).
//
// 2D and 3D: a block owns a tile of the plane across the slowest axis (3D: 64 x 32 nodes in xy,
// 2D: a row of 1024 nodes in x) with a halo of depth*R on each side, and streams along the
// slowest axis (z in 3D, y in 2D) through a chunk of planes. Level 0 is the input; level j is
// the field after j steps. Each level keeps a circular queue of the last 2R+1 planes in shared
// memory; when input plane m arrives, level j computes plane m - j*R from level j-1's planes
// m - j*R - R .. m - j*R + R, so level `depth` leaves the block as plane m - depth*R of the
// output, depth*R planes behind the input. A level's valid region shrinks by R per step on
// each in-plane side, so the block computes only it, and stores the tile's centre.
//
// 1D: a block loads 2048 nodes with their halo once and takes the steps in two buffers.
//
// Exactness: a level adds its taps in kernels::Stencil's order and then the source, as the
// single-step sweeps do, so a node whose depth*R neighbourhood lies inside the padded field
// gets k single steps' values to the rounding of those steps (S^k's, in exact arithmetic).
// Nodes read outside the padded field are zeros; they reach no stored node.
//
// Budgets: threads 512 (3D: 32 x 16, 2 x 2 nodes each; 2D: 512, 2 nodes each; 1D: 256, 8
// each); shared memory depth * (2R+1) planes of the tile (3D fp64, R = 1, depth 4: 192 KiB; one
// block per SM at depth >= 3, by design: large tiles waste less on the halo); registers: the
// prefetched next input plane (4 values) and one accumulator.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "../check.cuh"
#include "../register_tiling/register_sweep.hpp"
#include "temporal_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

template <int DIMS>
struct BlockedTile;
template <>
struct BlockedTile<1> {
  static constexpr int bx = 256, by = 1, cx = 8;
};
template <>
struct BlockedTile<2> {
  static constexpr int bx = 512, by = 1, cx = 2, cy = 1;
};
template <>
struct BlockedTile<3> {
  static constexpr int bx = 32, by = 16, cx = 2, cy = 2;
};

template <int DIMS>
__host__ __device__ constexpr int tile_x() {
  return BlockedTile<DIMS>::bx * BlockedTile<DIMS>::cx;
}
template <int DIMS>
__host__ __device__ constexpr int tile_y() {
  return BlockedTile<DIMS>::by * BlockedTile<DIMS>::cy;
}
template <int DIMS>
__host__ __device__ constexpr int threads() {
  return BlockedTile<DIMS>::bx * BlockedTile<DIMS>::by;
}

// The smallest output a tile must keep after its halos (nodes along x, and along y in 3D).
constexpr int kMinOutputX = 8, kMinOutputY = 4;

std::size_t shared_bytes(int dims, int radius, int depth, std::size_t value_bytes) {
  const int halo = depth * radius;
  const int hx = dims == 1 ? tile_x<1>() : dims == 2 ? tile_x<2>() : tile_x<3>();
  if (hx - 2 * halo < kMinOutputX) return 0;
  if (dims == 1) return 2 * static_cast<std::size_t>(hx) * value_bytes;
  const int hy = dims == 3 ? tile_y<3>() : 1;
  if (dims == 3 && hy - 2 * halo < kMinOutputY) return 0;
  return static_cast<std::size_t>(depth) * (2 * radius + 1) * hx * hy * value_bytes;
}

// 1D: the whole haloed tile in shared memory, `depth` steps between two buffers.
template <typename T, int R>
__global__ void __launch_bounds__(threads<1>())
    temporal_1d_kernel(const SweepArgs<T> a, int depth) {
  constexpr int HX = tile_x<1>(), BX = BlockedTile<1>::bx, CX = BlockedTile<1>::cx;
  extern __shared__ unsigned char shared_raw[];
  T* buffer = reinterpret_cast<T*>(shared_raw);
  const DeviceGrid& g = a.grid;
  const int halo = depth * R;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(HX - 2 * halo);
  const std::int64_t first = x0 - halo;  // node of tile position 0
#pragma unroll
  for (int c = 0; c < CX; ++c) {
    const int lx = threadIdx.x + c * BX;
    const std::int64_t x = first + lx;
    buffer[lx] = x >= -g.ghost && x < g.n[0] + g.ghost ? a.in[g.origin + x] : T(0);
  }
  __syncthreads();
  for (int j = 1; j <= depth; ++j) {
    const T* src = buffer + ((j - 1) & 1) * HX;
    T* dst = buffer + (j & 1) * HX;
    const int lo = j * R;
#pragma unroll
    for (int c = 0; c < CX; ++c) {
      const int lx = threadIdx.x + c * BX;
      if (lx < lo || lx >= HX - lo) continue;
      T acc = T(0);
#pragma unroll
      for (int dx = -R; dx <= R; ++dx) acc += a.weights.w[dx + R] * src[lx + dx];
      acc = acc + a.source;
      if (j < depth) {
        dst[lx] = acc;
      } else {
        const std::int64_t x = first + lx;
        if (lx >= halo && lx < HX - halo && x < g.n[0]) a.out[g.origin + x] = acc;
      }
    }
    if (j < depth) __syncthreads();
  }
}

// 2D and 3D: the streaming kernel of the header comment. `chunk` planes of output per block
// along the march axis; 3D blocks stride over y tiles past the launch grid's limit.
template <typename T, int DIMS, int R, int TAPS>
__global__ void __launch_bounds__(threads<DIMS>())
    temporal_stream_kernel(const SweepArgs<T> a, int depth, std::int64_t chunk,
                           std::int64_t tiles_y) {
  using Tile = BlockedTile<DIMS>;
  constexpr int HX = tile_x<DIMS>(), HY = tile_y<DIMS>();
  constexpr int BX = Tile::bx, BY = Tile::by, CX = Tile::cx, CY = Tile::cy;
  constexpr int Q = 2 * R + 1;  // planes a level keeps
  constexpr int PLANE = HX * HY;
  constexpr int MARCH = DIMS - 1;
  extern __shared__ unsigned char shared_raw[];
  T* queue = reinterpret_cast<T*>(shared_raw);  // [level][slot][y][x]

  const DeviceGrid& g = a.grid;
  const int halo = depth * R;
  const int out_x = HX - 2 * halo, out_y = DIMS == 3 ? HY - 2 * halo : 1;
  const std::int64_t march_pitch = g.stride(MARCH);
  const std::int64_t march_n = g.n[MARCH];
  const std::int64_t m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  const std::int64_t m1 = min(m0 + chunk, march_n);
  const std::int64_t base = m0 - halo;  // plane of iteration 0
  const std::int64_t planes = (m1 - m0) + 2 * halo;
  const std::int64_t x_first = blockIdx.x * static_cast<std::int64_t>(out_x) - halo;
  const int tx = threadIdx.x, ty = threadIdx.y;

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y_first = DIMS == 3 ? by * out_y - halo : 0;
    // This thread's nodes: (tx + a*BX, ty + b*BY) of the tile, their element in plane 0 and
    // whether they lie in the padded field.
    std::int64_t offset[CX * CY];
    bool inside[CX * CY];
#pragma unroll
    for (int b = 0; b < CY; ++b)
#pragma unroll
      for (int c = 0; c < CX; ++c) {
        const std::int64_t x = x_first + tx + c * BX, y = y_first + ty + b * BY;
        bool ok = x >= -g.ghost && x < g.n[0] + g.ghost;
        if (DIMS == 3) ok = ok && y >= -g.ghost && y < g.n[1] + g.ghost;
        inside[b * CX + c] = ok;
        offset[b * CX + c] = g.origin + (DIMS == 3 ? y * g.pitch_y : 0) + x;
      }
    T next[CX * CY];
    auto load = [&](std::int64_t m) {
      const bool plane_ok = m >= -g.ghost && m < march_n + g.ghost;
#pragma unroll
      for (int p = 0; p < CX * CY; ++p)
        next[p] = plane_ok && inside[p] ? a.in[offset[p] + m * march_pitch] : T(0);
    };

    load(base);
    for (std::int64_t it = 0; it < planes; ++it) {
      {
        T* level0 = queue + static_cast<int>(it) % Q * PLANE;
#pragma unroll
        for (int b = 0; b < CY; ++b)
#pragma unroll
          for (int c = 0; c < CX; ++c) level0[(ty + b * BY) * HX + tx + c * BX] = next[b * CX + c];
      }
      if (it + 1 < planes) load(base + it + 1);
      __syncthreads();
      for (int j = 1; j <= depth; ++j) {
        if (it < 2 * j * R) break;                     // level j-1 does not yet hold 2R+1 planes
        const int rel = static_cast<int>(it) - j * R;  // the plane level j computes, from base
        const T* src[Q];
#pragma unroll
        for (int d = 0; d < Q; ++d) src[d] = queue + ((j - 1) * Q + (rel - R + d) % Q) * PLANE;
        const int lo = j * R;
        const bool last = j == depth;
        T* dst = last ? nullptr : queue + (j * Q + rel % Q) * PLANE;
        const std::int64_t m = base + rel;
#pragma unroll
        for (int b = 0; b < CY; ++b)
#pragma unroll
          for (int c = 0; c < CX; ++c) {
            const int lx = tx + c * BX, ly = ty + b * BY;
            if (lx < lo || lx >= HX - lo) continue;
            if (DIMS == 3 && (ly < lo || ly >= HY - lo)) continue;
            const int at = ly * HX + lx;
            T acc = T(0);
            for_each_tap<DIMS, R, TAPS>([&](int dx, int dy, int dz, int w) {
              const int dm = DIMS == 3 ? dz : dy;  // offset along the march axis
              const int dp = DIMS == 3 ? dy : 0;   // in-plane y offset
              acc += a.weights.w[w] * src[dm + R][at + dp * HX + dx];
            });
            acc = acc + a.source;
            if (!last) {
              dst[at] = acc;
            } else if (m >= m0 && m < m1) {
              const std::int64_t x = x_first + lx, y = y_first + ly;
              if (x < g.n[0] && (DIMS == 2 || y < g.n[1]))
                a.out[offset[b * CX + c] + m * march_pitch] = acc;
            }
          }
        // Level j+1 reads what level j wrote; at depth 1 the next input plane overwrites a
        // slot this level read.
        if (!last || depth == 1) __syncthreads();
      }
    }
    __syncthreads();  // the next y tile refills the queues
  }
}

// ---- Varying coefficients (StencilProblem::coefficients), radius 1 -------------------------
// The same tiles and streaming as above, for the step of coefficient_sweep.cuh: each level keeps
// its queue of 3 planes of u, and one ring of depth+3 planes of k serves every level (level j
// computes plane m - j of input plane m and reads k at planes m - j - 1 .. m - j + 1; three
// planes more than the depth keep a slot from being rewritten before the last level's read
// two iterations later). dt/C and the sources are read from global memory at the node.
// Shared memory: (4 * depth + 3) planes of the tile (3D fp64, depth 3: 240 KiB is too much;
// depth 2: 176 KiB; fp32 depth 4: 152 KiB). 1D: u in two buffers, k and dt/C, 2048 nodes each.
// With the faces' conductances given (FACES: sub-grid geometry, BlockedCoefficientArgs::faces)
// there is no ring of k: each level reads the node's six faces from global memory, as the
// single-step sweeps do (face_pair), and the queues of u take 3 * depth planes. With surfaces
// inside the body (TRANSFER) the node's update is finish_node's, - H u inside the bracket.

std::size_t coefficient_shared_bytes(int dims, int depth, std::size_t value_bytes, bool faces) {
  const int hx = dims == 1 ? tile_x<1>() : dims == 2 ? tile_x<2>() : tile_x<3>();
  if (hx - 2 * depth < kMinOutputX) return 0;
  if (dims == 1) return 4 * static_cast<std::size_t>(hx) * value_bytes;
  const int hy = dims == 3 ? tile_y<3>() : 1;
  if (dims == 3 && hy - 2 * depth < kMinOutputY) return 0;
  const int planes = faces ? 3 * depth : 4 * depth + 3;
  return static_cast<std::size_t>(planes) * hx * hy * value_bytes;
}

// The node's sources at step j's factors, in order (node_source's sum).
template <typename T>
__device__ __forceinline__ T blocked_source(const BlockedCoefficientArgs<T>& a, int j,
                                            std::int64_t i) {
  T src = T(0);
#pragma unroll
  for (int s = 0; s < kMaxSourceFields; ++s)
    if (s < a.sources) src = fma(a.factor[j][s], a.source[s][i], src);
  return src;
}

// The node's new value, finish_node's arithmetic with step j's source factors.
template <bool TRANSFER, typename T>
__device__ __forceinline__ T blocked_finish(const BlockedCoefficientArgs<T>& a, int j,
                                            std::int64_t i, T ui, T flow) {
  const T sum = flow + blocked_source(a, j, i);
  if constexpr (TRANSFER) return fma(a.dt_over_capacity[i], fma(-a.transfer[i], ui, sum), ui);
  else return fma(a.dt_over_capacity[i], sum, ui);
}

template <typename T, bool FACES, bool TRANSFER>
__global__ void __launch_bounds__(threads<1>())
    temporal_coefficient_1d_kernel(const BlockedCoefficientArgs<T> a, int depth) {
  constexpr int HX = tile_x<1>(), BX = BlockedTile<1>::bx, CX = BlockedTile<1>::cx;
  extern __shared__ unsigned char shared_raw[];
  T* buffer = reinterpret_cast<T*>(shared_raw);  // u, u, k, dt/C
  T* sk = buffer + 2 * HX;
  T* sdtc = buffer + 3 * HX;
  const DeviceGrid& g = a.grid;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(HX - 2 * depth);
  const std::int64_t first = x0 - depth;
#pragma unroll
  for (int c = 0; c < CX; ++c) {
    const int lx = threadIdx.x + c * BX;
    const std::int64_t x = first + lx;
    const bool ok = x >= -g.ghost && x < g.n[0] + g.ghost;
    buffer[lx] = ok ? a.in[g.origin + x] : T(0);
    sk[lx] = ok ? a.conductivity[g.origin + x] : T(1);
    sdtc[lx] = ok ? a.dt_over_capacity[g.origin + x] : T(0);
  }
  __syncthreads();
  const T inv_x = a.inv_h2[0];
  for (int j = 1; j <= depth; ++j) {
    const T* src = buffer + ((j - 1) & 1) * HX;
    T* dst = buffer + (j & 1) * HX;
#pragma unroll
    for (int c = 0; c < CX; ++c) {
      const int lx = threadIdx.x + c * BX;
      if (lx < j || lx >= HX - j) continue;
      const std::int64_t x = first + lx;
      if (x < -g.ghost || x >= g.n[0] + g.ghost) continue;  // outside the padded field
      const T uc = src[lx];
      T flow = T(0);
      if constexpr (FACES) {
        const std::int64_t i = g.origin + x;
        add_axis(flow, inv_x, uc, x > -g.ghost ? a.faces[0][i - 1] : T(0), src[lx - 1],
                 a.faces[0][i], src[lx + 1]);
      } else {
        const T kc = sk[lx];
        add_axis(flow, inv_x, uc, face_conductance(kc, sk[lx - 1]), src[lx - 1],
                 face_conductance(kc, sk[lx + 1]), src[lx + 1]);
      }
      const T v = blocked_finish<TRANSFER>(a, j - 1, g.origin + x, uc, flow);
      if (j < depth)
        dst[lx] = v;
      else if (lx >= depth && lx < HX - depth && x < g.n[0])
        a.out[g.origin + x] = v;
    }
    if (j < depth) __syncthreads();
  }
}

template <typename T, int DIMS, bool FACES, bool TRANSFER>
__global__ void __launch_bounds__(threads<DIMS>())
    temporal_coefficient_kernel(const BlockedCoefficientArgs<T> a, int depth, std::int64_t chunk,
                                std::int64_t tiles_y) {
  using Tile = BlockedTile<DIMS>;
  constexpr int HX = tile_x<DIMS>(), HY = tile_y<DIMS>();
  constexpr int BX = Tile::bx, BY = Tile::by, CX = Tile::cx, CY = Tile::cy;
  constexpr int PLANE = HX * HY;
  constexpr int MARCH = DIMS - 1;
  extern __shared__ unsigned char shared_raw[];
  T* queue = reinterpret_cast<T*>(shared_raw);  // u: [level][3][y][x]
  T* ring = queue + 3 * depth * PLANE;          // k: [depth + 3][y][x], none with FACES
  const int KQ = depth + 3;

  const DeviceGrid& g = a.grid;
  const int out_x = HX - 2 * depth, out_y = DIMS == 3 ? HY - 2 * depth : 1;
  const std::int64_t march_pitch = g.stride(MARCH);
  const std::int64_t march_n = g.n[MARCH];
  const std::int64_t m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  const std::int64_t m1 = min(m0 + chunk, march_n);
  const std::int64_t base = m0 - depth;
  const std::int64_t planes = (m1 - m0) + 2 * depth;
  const std::int64_t x_first = blockIdx.x * static_cast<std::int64_t>(out_x) - depth;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const T inv_x = a.inv_h2[0], inv_y = a.inv_h2[1], inv_m = a.inv_h2[MARCH];

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y_first = DIMS == 3 ? by * out_y - depth : 0;
    std::int64_t offset[CX * CY];
    bool inside[CX * CY];
#pragma unroll
    for (int b = 0; b < CY; ++b)
#pragma unroll
      for (int c = 0; c < CX; ++c) {
        const std::int64_t x = x_first + tx + c * BX, y = y_first + ty + b * BY;
        bool ok = x >= -g.ghost && x < g.n[0] + g.ghost;
        if (DIMS == 3) ok = ok && y >= -g.ghost && y < g.n[1] + g.ghost;
        inside[b * CX + c] = ok;
        offset[b * CX + c] = g.origin + (DIMS == 3 ? y * g.pitch_y : 0) + x;
      }
    T next_u[CX * CY], next_k[CX * CY];
    auto load = [&](std::int64_t m) {
      const bool plane_ok = m >= -g.ghost && m < march_n + g.ghost;
#pragma unroll
      for (int p = 0; p < CX * CY; ++p) {
        const bool ok = plane_ok && inside[p];
        next_u[p] = ok ? a.in[offset[p] + m * march_pitch] : T(0);
        if constexpr (!FACES) next_k[p] = ok ? a.conductivity[offset[p] + m * march_pitch] : T(1);
      }
    };

    load(base);
    for (std::int64_t it = 0; it < planes; ++it) {
      {
        T* level0 = queue + static_cast<int>(it) % 3 * PLANE;
        T* k_in = ring + static_cast<int>(it) % KQ * PLANE;
#pragma unroll
        for (int b = 0; b < CY; ++b)
#pragma unroll
          for (int c = 0; c < CX; ++c) {
            const int at = (ty + b * BY) * HX + tx + c * BX;
            level0[at] = next_u[b * CX + c];
            if constexpr (!FACES) k_in[at] = next_k[b * CX + c];
          }
      }
      if (it + 1 < planes) load(base + it + 1);
      __syncthreads();
      for (int j = 1; j <= depth; ++j) {
        if (it < 2 * j) break;
        const int rel = static_cast<int>(it) - j;
        const T* su[3];
        const T* sk[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
          su[d] = queue + ((j - 1) * 3 + (rel - 1 + d) % 3) * PLANE;
          sk[d] = ring + (rel - 1 + d) % KQ * PLANE;
        }
        const bool last = j == depth;
        T* dst = last ? nullptr : queue + (j * 3 + rel % 3) * PLANE;
        const std::int64_t m = base + rel;
        const bool plane_ok = m >= -g.ghost && m < march_n + g.ghost;
#pragma unroll
        for (int b = 0; b < CY; ++b)
#pragma unroll
          for (int c = 0; c < CX; ++c) {
            const int lx = tx + c * BX, ly = ty + b * BY;
            if (lx < j || lx >= HX - j) continue;
            if (DIMS == 3 && (ly < j || ly >= HY - j)) continue;
            const int p = b * CX + c;
            const int at = ly * HX + lx;
            T v = T(0);  // nodes outside the padded field feed no stored node
            if (plane_ok && inside[p]) {
              const T uc = su[1][at];
              const std::int64_t i = offset[p] + m * march_pitch;
              T flow = T(0);
              if constexpr (FACES) {
                // A face beyond the padded field is never read by a stored node: 0 there.
                const std::int64_t x = x_first + lx, y = y_first + ly;
                add_axis(flow, inv_x, uc, x > -g.ghost ? a.faces[0][i - 1] : T(0), su[1][at - 1],
                         a.faces[0][i], su[1][at + 1]);
                if (DIMS == 3)
                  add_axis(flow, inv_y, uc, y > -g.ghost ? a.faces[1][i - g.pitch_y] : T(0),
                           su[1][at - HX], a.faces[1][i], su[1][at + HX]);
                add_axis(flow, inv_m, uc,
                         m > -g.ghost ? a.faces[MARCH][i - march_pitch] : T(0), su[0][at],
                         a.faces[MARCH][i], su[2][at]);
              } else {
                const T kc = sk[1][at];
                add_axis(flow, inv_x, uc, face_conductance(kc, sk[1][at - 1]), su[1][at - 1],
                         face_conductance(kc, sk[1][at + 1]), su[1][at + 1]);
                if (DIMS == 3)
                  add_axis(flow, inv_y, uc, face_conductance(kc, sk[1][at - HX]),
                           su[1][at - HX], face_conductance(kc, sk[1][at + HX]),
                           su[1][at + HX]);
                add_axis(flow, inv_m, uc, face_conductance(kc, sk[0][at]), su[0][at],
                         face_conductance(kc, sk[2][at]), su[2][at]);
              }
              v = blocked_finish<TRANSFER>(a, j - 1, i, uc, flow);
            }
            if (!last) {
              dst[at] = v;
            } else if (m >= m0 && m < m1) {
              const std::int64_t x = x_first + lx, y = y_first + ly;
              if (x < g.n[0] && (DIMS == 2 || y < g.n[1])) a.out[offset[p] + m * march_pitch] = v;
            }
          }
        if (!last || depth == 1) __syncthreads();
      }
    }
    __syncthreads();
  }
}

template <typename Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    HEATSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
}

template <typename T>
struct TemporalLaunch {
  const SweepArgs<T>& args;
  int depth;
  const LaunchContext& context;

  template <int DIMS, int R, int TAPS>
  void operator()() const {
    const std::size_t bytes = shared_bytes(DIMS, R, depth, sizeof(T));
    if (bytes == 0)
      throw std::logic_error("temporal-blocking: depth " + std::to_string(depth) +
                             " leaves no output in the tile at radius " + std::to_string(R));
    const DeviceGrid& g = args.grid;
    if (g.ghost < depth * R)
      throw std::logic_error("temporal-blocking: ghost layers narrower than depth * radius");
    const int halo = depth * R;
    if constexpr (DIMS == 1) {
      const auto kernel = temporal_1d_kernel<T, R>;
      allow_shared(kernel, bytes);
      const std::int64_t out_x = tile_x<1>() - 2 * halo;
      const std::int64_t blocks = (g.n[0] + out_x - 1) / out_x;
      kernel<<<static_cast<unsigned>(blocks), threads<1>(), bytes, context.stream>>>(args, depth);
    } else {
      const auto kernel = temporal_stream_kernel<T, DIMS, R, TAPS>;
      allow_shared(kernel, bytes);
      int resident = 0;
      HEATSIM_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads<DIMS>(), bytes));
      resident = std::max(resident, 1);
      const std::int64_t out_x = tile_x<DIMS>() - 2 * halo;
      const std::int64_t out_y = DIMS == 3 ? tile_y<DIMS>() - 2 * halo : 1;
      const std::int64_t tiles_x = (g.n[0] + out_x - 1) / out_x;
      const std::int64_t tiles_y = DIMS == 3 ? (g.n[1] + out_y - 1) / out_y : 1;
      const std::int64_t launch_y = std::min<std::int64_t>(tiles_y, 65535);
      const std::int64_t march_n = g.n[DIMS - 1];
      const std::int64_t chunk =
          march_chunk(tiles_x * launch_y, march_n, halo,
                      static_cast<std::int64_t>(resident) * context.multiprocessors);
      const std::int64_t chunks = (march_n + chunk - 1) / chunk;
      if (tiles_x > 0x7fffffff || chunks > 65535)
        throw std::runtime_error("temporal-blocking: grid too large for one launch");
      const dim3 block(BlockedTile<DIMS>::bx, BlockedTile<DIMS>::by, 1);
      const dim3 grid =
          DIMS == 3 ? dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(launch_y),
                           static_cast<unsigned>(chunks))
                    : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
      kernel<<<grid, block, bytes, context.stream>>>(args, depth, chunk, tiles_y);
    }
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
};

// The shapes this backend instantiates: stars of radius 1-3 in 1D-3D, boxes of radius 1-3 in
// 2D and 3D (other tap sets run as boxes: their zero weights are multiplied like any other).
template <int DIMS, int TAPS, int R = 1, typename Launch>
void dispatch_blocked_radius(int radius, const Launch& launch) {
  if constexpr (R <= kMaxRadius) {
    if (radius == R) return launch.template operator()<DIMS, R, TAPS>();
    dispatch_blocked_radius<DIMS, TAPS, R + 1>(radius, launch);
  } else {
    throw std::logic_error("temporal-blocking: no kernel for radius " + std::to_string(radius));
  }
}

template <typename Launch>
void dispatch_blocked(const SweepShape& s, const Launch& launch) {
  const bool box = s.taps != kStarTaps;
  switch (s.dims) {
    case 1:
      return dispatch_blocked_radius<1, kStarTaps>(s.radius, launch);
    case 2:
      return box ? dispatch_blocked_radius<2, kBoxTaps>(s.radius, launch)
                 : dispatch_blocked_radius<2, kStarTaps>(s.radius, launch);
    case 3:
      return box ? dispatch_blocked_radius<3, kBoxTaps>(s.radius, launch)
                 : dispatch_blocked_radius<3, kStarTaps>(s.radius, launch);
  }
  throw std::logic_error("temporal-blocking: no kernel for " + std::to_string(s.dims) + "D");
}

template <typename T, bool FACES, bool TRANSFER>
void launch_coefficient(const BlockedCoefficientArgs<T>& args, int depth,
                        const LaunchContext& context) {
  const DeviceGrid& g = args.grid;
  const int dims = g.dims;
  const std::size_t bytes = coefficient_shared_bytes(dims, depth, sizeof(T), FACES);
  if (bytes == 0 || depth > kMaxBlockedDepth)
    throw std::logic_error("temporal-blocking: depth " + std::to_string(depth) +
                           " leaves no output in the tile");
  if (g.ghost < depth)
    throw std::logic_error("temporal-blocking: ghost layers narrower than the depth");
  if (dims == 1) {
    const auto kernel = temporal_coefficient_1d_kernel<T, FACES, TRANSFER>;
    allow_shared(kernel, bytes);
    const std::int64_t out_x = tile_x<1>() - 2 * depth;
    const std::int64_t blocks = (g.n[0] + out_x - 1) / out_x;
    kernel<<<static_cast<unsigned>(blocks), threads<1>(), bytes, context.stream>>>(args, depth);
    HEATSIM_CUDA_CHECK_LAUNCH();
    return;
  }
  auto stream_launch = [&](auto kernel, int dims_, int tx, int ty, int nthreads, dim3 block) {
    allow_shared(kernel, bytes);
    int resident = 0;
    HEATSIM_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, nthreads, bytes));
    resident = std::max(resident, 1);
    const std::int64_t out_x = tx - 2 * depth;
    const std::int64_t out_y = dims_ == 3 ? ty - 2 * depth : 1;
    const std::int64_t tiles_x = (g.n[0] + out_x - 1) / out_x;
    const std::int64_t tiles_y = dims_ == 3 ? (g.n[1] + out_y - 1) / out_y : 1;
    const std::int64_t launch_y = std::min<std::int64_t>(tiles_y, 65535);
    const std::int64_t march_n = g.n[dims_ - 1];
    const std::int64_t chunk =
        march_chunk(tiles_x * launch_y, march_n, depth,
                    static_cast<std::int64_t>(resident) * context.multiprocessors);
    const std::int64_t chunks = (march_n + chunk - 1) / chunk;
    if (tiles_x > 0x7fffffff || chunks > 65535)
      throw std::runtime_error("temporal-blocking: grid too large for one launch");
    const dim3 grid = dims_ == 3
                          ? dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(launch_y),
                                 static_cast<unsigned>(chunks))
                          : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
    kernel<<<grid, block, bytes, context.stream>>>(args, depth, chunk, tiles_y);
    HEATSIM_CUDA_CHECK_LAUNCH();
  };
  if (dims == 2)
    stream_launch(temporal_coefficient_kernel<T, 2, FACES, TRANSFER>, 2, tile_x<2>(), tile_y<2>(), threads<2>(),
                  dim3(BlockedTile<2>::bx, BlockedTile<2>::by, 1));
  else
    stream_launch(temporal_coefficient_kernel<T, 3, FACES, TRANSFER>, 3, tile_x<3>(), tile_y<3>(), threads<3>(),
                  dim3(BlockedTile<3>::bx, BlockedTile<3>::by, 1));
}

}  // namespace

std::size_t temporal_sweep_shared_bytes(int dims, int radius, bool /*box*/, int depth,
                                        std::size_t value_bytes) {
  if (dims < 1 || dims > 3 || radius < 1 || radius > kMaxRadius || depth < 1) return 0;
  return shared_bytes(dims, radius, depth, value_bytes);
}

template <typename T>
void launch_temporal_sweep(const SweepArgs<T>& args, const SweepShape& shape, int depth,
                           const LaunchContext& context) {
  dispatch_blocked(shape, TemporalLaunch<T>{args, depth, context});
}

std::size_t temporal_coefficient_shared_bytes(int dims, int depth, std::size_t value_bytes,
                                              bool faces) {
  if (dims < 1 || dims > 3 || depth < 1 || depth > kMaxBlockedDepth) return 0;
  return coefficient_shared_bytes(dims, depth, value_bytes, faces);
}

template <typename T>
void launch_temporal_coefficient_sweep(const BlockedCoefficientArgs<T>& args, int depth,
                                       const LaunchContext& context) {
  const bool faces = args.faces[0] != nullptr, transfer = args.transfer != nullptr;
  if (faces && transfer) return launch_coefficient<T, true, true>(args, depth, context);
  if (faces) return launch_coefficient<T, true, false>(args, depth, context);
  if (transfer) return launch_coefficient<T, false, true>(args, depth, context);
  launch_coefficient<T, false, false>(args, depth, context);
}

template void launch_temporal_coefficient_sweep<float>(const BlockedCoefficientArgs<float>&, int,
                                                       const LaunchContext&);
template void launch_temporal_coefficient_sweep<double>(const BlockedCoefficientArgs<double>&, int,
                                                        const LaunchContext&);
template void launch_temporal_sweep<float>(const SweepArgs<float>&, const SweepShape&, int,
                                           const LaunchContext&);
template void launch_temporal_sweep<double>(const SweepArgs<double>&, const SweepShape&, int,
                                            const LaunchContext&);

}  // namespace heatsim::kernels::cuda
