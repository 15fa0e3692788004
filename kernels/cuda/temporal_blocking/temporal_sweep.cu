// temporal-blocking: `depth` steps of a point operator per pass, each block advancing its tile
// through all of them in shared memory (DESIGN.md "Temporal blocking"; after EBISU's deep
// temporal blocking, Zhang et al., ICS 2023, written for heatsim's padded layout and its point
// operators, point_operators.cuh: the constant stencil and the conservative flux operator).
//
// 2D and 3D: a block owns a tile of the plane across the slowest axis (3D: 64 x 32 nodes in xy,
// 2D: a row of 1024 nodes in x) with a halo of depth*R on each side, and streams along the
// slowest axis (z in 3D, y in 2D) through a chunk of planes. Level 0 is the input; level j is
// the field after j steps. Each level keeps a circular queue of the last 2R+1 planes of u in
// shared memory; when input plane m arrives, level j computes plane m - j*R from level j-1's
// planes m - j*R - R .. m - j*R + R, so level `depth` leaves the block as plane m - depth*R of
// the output, depth*R planes behind the input. A level's valid region shrinks by R per step on
// each in-plane side, so the block computes only it, and stores the tile's centre. The other
// fields an operator stages (the flux operator's k) do not step: one ring of planes serves
// every level. What an operator reads by element index (dt/C, the sources, the faces'
// conductances) comes from global memory at the node, and the pass's step j takes its own
// source factors.
//
// 1D: a block loads 2048 nodes with their halo once and takes the steps in two buffers.
//
// Exactness: a level forms a node by the operator's point(), the single-step sweeps' arithmetic,
// so a node whose depth*R neighbourhood lies inside the padded field gets k single steps'
// values bit for bit. Nodes read outside the padded field are zeros; they reach no stored node.
// An operator with coefficients forms no node on the padded field's outermost layer (its
// faces there lie outside the arrays); those reach no stored node either.
//
// Budgets: threads 512 (3D: 32 x 16, 2 x 2 nodes each; 2D: 512, 2 nodes each; 1D: 256, 8
// each); shared memory depth * (2R+1) planes of the tile for u (3D fp64, R = 1, depth 4: 192
// KiB; one block per SM at depth >= 3, by design: large tiles waste less on the halo), and for
// the flux operator with k staged depth + 3 planes more (3D fp64 depth 2: 176 KiB, depth 3 does
// not fit; with the faces given no k is staged); registers: the prefetched next input plane (4
// values per staged field) and one accumulator.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../check.cuh"
#include "../point_operators.cuh"
#include "../register_tiling/register_sweep.hpp"
#include "march_kernel.cuh"
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

// The shared memory of a pass, in bytes: 2D and 3D, slot 0 (u) a queue of 2R+1 planes per
// level and every other staged field one ring of ring_planes(); 1D, the tile twice for u and
// once for each other field. 0 when the tile keeps no output after its halos.
__host__ __device__ constexpr int ring_planes(int radius, int depth) {
  // Level j computes plane m - jR of input plane m from planes m - jR - R .. m - jR + R; the
  // last level is not waited for at depth 1, so the next input must not overwrite its planes.
  return depth * radius + radius + 2;
}
std::size_t shared_bytes(int dims, int radius, int depth, int staged, std::size_t value_bytes) {
  const int halo = depth * radius;
  const int hx = dims == 1 ? tile_x<1>() : dims == 2 ? tile_x<2>() : tile_x<3>();
  if (hx - 2 * halo < kMinOutputX) return 0;
  if (dims == 1) return static_cast<std::size_t>(1 + staged) * hx * value_bytes;
  const int hy = dims == 3 ? tile_y<3>() : 1;
  if (dims == 3 && hy - 2 * halo < kMinOutputY) return 0;
  const int planes = depth * (2 * radius + 1) + (staged - 1) * ring_planes(radius, depth);
  return static_cast<std::size_t>(planes) * hx * hy * value_bytes;
}

// The static shared memory of staged_factors (an operator with coefficients), in bytes.
constexpr std::size_t factor_bytes(std::size_t value_bytes) {
  return kMaxBlockedDepth * kMaxSourceFields * value_bytes;
}

// A node's neighbourhood at level j-1 of a pass, read from shared memory: staged field S's
// plane at march offset d - R (plane[S][d], 1D: only d = R), the node at `node` within it.
template <typename T, int DIMS, int R, int STAGED, int HX>
struct QueueNear {
  const T* (&plane)[STAGED][2 * R + 1];
  int node;
  std::int64_t i, x, y, z;

  template <int S>
  __device__ __forceinline__ T at(int dx, int dy, int dz) const {
    const int dm = DIMS == 3 ? dz : dy;  // offset along the march axis
    const int dp = DIMS == 3 ? dy : 0;   // in-plane y offset
    return plane[S][dm + R][node + dp * HX + dx];
  }
};

// Whether node (x, y, m) lies inside the padded field without its outermost layer, where an
// operator with coefficients may form it (its faces' elements lie in the arrays).
__device__ __forceinline__ bool inner_node(const DeviceGrid& g, int dims, std::int64_t x,
                                           std::int64_t y, std::int64_t z) {
  const std::int64_t c[3] = {x, y, z};
  bool ok = true;
  for (int a = 0; a < dims; ++a) ok = ok && c[a] > -g.ghost && c[a] < g.n[a] + g.ghost - 1;
  return ok;
}

// 1D: the whole haloed tile in shared memory, `depth` steps between two buffers of u.
template <class Op>
__global__ void __launch_bounds__(threads<1>())
    temporal_1d_kernel(const typename Op::Args a, const PassFactors<typename Op::Value> f,
                       int depth) {
  using T = typename Op::Value;
  constexpr int HX = tile_x<1>(), BX = BlockedTile<1>::bx, CX = BlockedTile<1>::cx;
  constexpr int R = Op::kRadius, S = Op::kStaged;
  extern __shared__ unsigned char shared_raw[];
  T* buffer = reinterpret_cast<T*>(shared_raw);  // u, u, then the other staged fields
  const DeviceGrid& g = a.grid;
  const int halo = depth * R;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(HX - 2 * halo);
  const std::int64_t first = x0 - halo;  // node of tile position 0
#pragma unroll
  for (int c = 0; c < CX; ++c) {
    const int lx = threadIdx.x + c * BX;
    const std::int64_t x = first + lx;
    const bool ok = x >= -g.ghost && x < g.n[0] + g.ghost;
#pragma unroll
    for (int s = 0; s < S; ++s)
      buffer[(s == 0 ? 0 : s + 1) * HX + lx] = ok ? Op::staged_field(a, s)[g.origin + x] : T(0);
  }
  const T* factor = staged_factors<Op>(f, depth);
  const typename Op::Block block = Op::enter(a);
  __syncthreads();
  for (int j = 1; j <= depth; ++j) {
    const T* plane[S][2 * R + 1] = {};
    plane[0][R] = buffer + ((j - 1) & 1) * HX;
#pragma unroll
    for (int s = 1; s < S; ++s) plane[s][R] = buffer + (s + 1) * HX;
    T* dst = buffer + (j & 1) * HX;
    const typename Op::Block step = Op::at_step(block, factor + (j - 1) * kMaxSourceFields);
    const int lo = j * R;
#pragma unroll
    for (int c = 0; c < CX; ++c) {
      const int lx = threadIdx.x + c * BX;
      if (lx < lo || lx >= HX - lo) continue;
      const std::int64_t x = first + lx;
      T v = T(0);
      if (!Op::kCoefficients || inner_node(g, 1, x, 0, 0)) {
        const QueueNear<T, 1, R, S, HX> near{plane, lx, g.origin + x, x, 0, 0};
        v = Op::point(a, step, near);
      }
      if (j < depth) {
        dst[lx] = v;
      } else if (lx >= halo && lx < HX - halo && x < g.n[0]) {
        a.out[g.origin + x] = v;
      }
    }
    if (j < depth) __syncthreads();
  }
}

// 2D and 3D: the streaming kernel of the header comment. `chunk` planes of output per block
// along the march axis; 3D blocks stride over y tiles past the launch grid's limit.
template <class Op>
__global__ void __launch_bounds__(threads<Op::kDims>())
    temporal_stream_kernel(const typename Op::Args a, const PassFactors<typename Op::Value> f,
                           int depth, std::int64_t chunk, std::int64_t tiles_y) {
  using T = typename Op::Value;
  constexpr int DIMS = Op::kDims, R = Op::kRadius, S = Op::kStaged;
  using Tile = BlockedTile<DIMS>;
  constexpr int HX = tile_x<DIMS>(), HY = tile_y<DIMS>();
  constexpr int BX = Tile::bx, BY = Tile::by, CX = Tile::cx, CY = Tile::cy;
  constexpr int Q = 2 * R + 1;  // planes a level keeps
  constexpr int PLANE = HX * HY;
  constexpr int MARCH = DIMS - 1;
  extern __shared__ unsigned char shared_raw[];
  T* queue = reinterpret_cast<T*>(shared_raw);  // u: [level][slot][y][x]
  T* ring = queue + depth * Q * PLANE;          // staged field s >= 1: [s - 1][slot][y][x]
  const int KQ = ring_planes(R, depth);

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
  const T* factor = staged_factors<Op>(f, depth);
  const typename Op::Block block = Op::enter(a);

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
    T next[S][CX * CY];
    auto load = [&](std::int64_t m) {
      const bool plane_ok = m >= -g.ghost && m < march_n + g.ghost;
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int p = 0; p < CX * CY; ++p)
          next[s][p] =
              plane_ok && inside[p] ? Op::staged_field(a, s)[offset[p] + m * march_pitch] : T(0);
    };

    load(base);
    for (std::int64_t it = 0; it < planes; ++it) {
#pragma unroll
      for (int s = 0; s < S; ++s) {
        T* in_plane = s == 0 ? queue + static_cast<int>(it) % Q * PLANE
                             : ring + ((s - 1) * KQ + static_cast<int>(it) % KQ) * PLANE;
#pragma unroll
        for (int b = 0; b < CY; ++b)
#pragma unroll
          for (int c = 0; c < CX; ++c)
            in_plane[(ty + b * BY) * HX + tx + c * BX] = next[s][b * CX + c];
      }
      if (it + 1 < planes) load(base + it + 1);
      __syncthreads();
      for (int j = 1; j <= depth; ++j) {
        if (it < 2 * j * R) break;                     // level j-1 does not yet hold 2R+1 planes
        const int rel = static_cast<int>(it) - j * R;  // the plane level j computes, from base
        const T* plane[S][Q];
#pragma unroll
        for (int d = 0; d < Q; ++d) {
          plane[0][d] = queue + ((j - 1) * Q + (rel - R + d) % Q) * PLANE;
#pragma unroll
          for (int s = 1; s < S; ++s)
            plane[s][d] = ring + ((s - 1) * KQ + (rel - R + d) % KQ) * PLANE;
        }
        const typename Op::Block step = Op::at_step(block, factor + (j - 1) * kMaxSourceFields);
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
            const int p = b * CX + c;
            const std::int64_t x = x_first + lx, y = y_first + ly;
            T v = T(0);
            if (!Op::kCoefficients || inner_node(g, DIMS, x, DIMS == 3 ? y : m, m)) {
              const QueueNear<T, DIMS, R, S, HX> near{
                  plane, ly * HX + lx,      offset[p] + m * march_pitch,
                  x,     DIMS == 3 ? y : m, DIMS == 3 ? m : 0};
              v = Op::point(a, step, near);
            }
            if (!last) {
              dst[ly * HX + lx] = v;
            } else if (m >= m0 && m < m1) {
              if (x < g.n[0] && (DIMS == 2 || y < g.n[1])) a.out[offset[p] + m * march_pitch] = v;
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

// Dynamic shared memory past the 48 KiB a launch gets without opting in (the static part,
// staged_factors', counts toward it).
template <typename Kernel>
void allow_shared(Kernel kernel, std::size_t bytes, std::size_t static_bytes) {
  if (bytes + static_bytes > 48 * 1024)
    HEATSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
}

// The register marches (march_kernel.cuh), at the tiles the kernel lab measured fastest on an
// H200 (scripts/kernel-lab/sweep, fp64 and fp32; docs/performance.md "Temporal blocking: the
// register march" and "the marches in sums"):
// - 3D radius-1 stars, depths 2-4: the march of values (temporal_march_kernel);
// - 3D radius-1 boxes, depths 2-3: the march in sums (temporal_sum_march_kernel);
// - 2D radius-1 stars and boxes, depths 2-12: the row march (temporal_row_march_kernel), a
//   block of 256 threads of 2 nodes along x;
// - 2D radius-2 and -3 stars at depths 2-6 and boxes at depths 2-4: the row march, a block of
//   256 threads of 1 node (its pending outputs grow with the radius: 2R per node and level).
// - 3D radius-1 stars in fp64 at depth 3: the march in sums too (408.6 GStencil/s in the lab,
//   kernel alone at 512^3, against the march of values' 395.4 at depth 4, its best; in fp32
//   the values win: 507.4 at depth 4 against the sums' 425.3).
// Other depths and shapes, and the flux operator, take the queue kernel above.
constexpr int kMaxMarchDepth = 4, kMaxSumMarchDepth = 3, kMaxRowMarchDepth = 12;
constexpr int kStarSumDepth = 3;
constexpr int kMaxWideStarRowDepth = 6, kMaxWideBoxRowDepth = 4;
template <int DEPTH>
using MarchTileAt =
    std::conditional_t<DEPTH == 2, MarchTile<64, 16, 2, 2>, MarchTile<64, 8, 4, DEPTH>>;
template <int DEPTH>
using SumMarchTileAt = MarchTile<64, 8, 4, DEPTH>;
template <int DEPTH, int R = 1>
using RowMarchTileAt =
    std::conditional_t<R == 1, RowMarchTile<256, 2, DEPTH>, RowMarchTile<256, 1, DEPTH, 2, R>>;

enum class March { none, values, sums, rows };

// The deepest row march of a 2D shape.
constexpr int max_row_depth(bool box, int radius) {
  return radius == 1 ? kMaxRowMarchDepth : box ? kMaxWideBoxRowDepth : kMaxWideStarRowDepth;
}

// The march a pass of this shape and depth takes (constant stencil; radius 1, or 2-3 in 2D;
// value_bytes: the field's element size).
constexpr March march_of(int dims, bool box, int depth, int radius, std::size_t value_bytes) {
  if (depth < 2 || radius < 1 || radius > kMaxRadius) return March::none;
  if (dims == 2 && depth <= max_row_depth(box, radius)) return March::rows;
  if (radius != 1) return March::none;
  if (dims == 3 && !box && depth == kStarSumDepth && value_bytes == 8) return March::sums;
  if (dims == 3 && !box && depth <= kMaxMarchDepth) return March::values;
  if (dims == 3 && box && depth <= kMaxSumMarchDepth) return March::sums;
  return March::none;
}

template <class Op>
constexpr bool marches() {
  return !Op::kCoefficients && (Op::kStar || Op::kBox) &&
         ((Op::kDims == 3 && Op::kRadius == 1) || Op::kDims == 2);
}

// Calls f(std::integral_constant<int, D>) for the D of 2 .. MAX equal to depth.
template <int MAX, class F, int... D>
void at_depth(int depth, F&& f, std::integer_sequence<int, D...>) {
  (void)((depth == D + 2 ? (f(std::integral_constant<int, D + 2>{}), true) : false) || ...);
}
template <int MAX, class F>
void at_depth(int depth, F&& f) {
  at_depth<MAX>(depth, f, std::make_integer_sequence<int, MAX - 1>{});
}

std::size_t march_shared_bytes(March march, int radius, int depth, std::size_t value_bytes) {
  std::size_t bytes = 0;
  switch (march) {
    case March::values:
      at_depth<kMaxMarchDepth>(depth, [&](auto d) {
        bytes = MarchTileAt<decltype(d)::value>::shared_bytes(value_bytes);
      });
      break;
    case March::sums:
      at_depth<kMaxSumMarchDepth>(depth, [&](auto d) {
        bytes = SumMarchTileAt<decltype(d)::value>::shared_bytes(value_bytes);
      });
      break;
    case March::rows: {
      auto at_radius = [&](auto r) {
        constexpr int R = decltype(r)::value;
        at_depth<max_row_depth(false, R)>(depth, [&](auto d) {
          bytes = RowMarchTileAt<decltype(d)::value, R>::shared_bytes(value_bytes);
        });
      };
      if (radius == 1) at_radius(std::integral_constant<int, 1>{});
      if (radius == 2) at_radius(std::integral_constant<int, 2>{});
      if (radius == 3) at_radius(std::integral_constant<int, 3>{});
      break;
    }
    case March::none:
      break;
  }
  return bytes;
}

// One march pass of Tile over the field: 3D tiles of the xy plane marching along z, their
// planes shared out among the blocks (march_split), 2D row segments marching along y in
// chunks of planes.
template <class Op, class Tile, class Kernel, class... Extra>
void launch_march(Kernel kernel, const typename Op::Args& args, const LaunchContext& context,
                  const Extra&... extra) {
  constexpr int DIMS = Op::kDims, DEPTH = Tile::depth;
  const std::size_t bytes = Tile::shared_bytes(sizeof(typename Op::Value));
  allow_shared(kernel, bytes, 0);
  int resident = 0;
  HEATSIM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Tile::threads, bytes));
  resident = std::max(resident, 1);
  const std::int64_t slots = static_cast<std::int64_t>(resident) * context.multiprocessors;
  const DeviceGrid& g = args.grid;
  const std::int64_t tiles_x = (g.n[0] + Tile::out_x - 1) / Tile::out_x;
  const std::int64_t march_n = g.n[DIMS - 1];
  if constexpr (DIMS == 3) {
    const std::int64_t tiles = tiles_x * ((g.n[1] + Tile::out_y - 1) / Tile::out_y);
    std::int64_t blocks = 0;
    const MarchSplit split = march_split(tiles_x, tiles, march_n, 3 * DEPTH - 1, slots, blocks);
    if (blocks > 0x7fffffff)
      throw std::runtime_error("temporal-blocking: grid too large for one launch");
    kernel<<<static_cast<unsigned>(blocks), dim3(Tile::bx, Tile::by), bytes, context.stream>>>(
        args, extra..., split);
  } else {
    // A chunk costs its planes and the march's 3*DEPTH - 1 iterations of filling and draining.
    const std::int64_t chunk = march_chunk(tiles_x, march_n, (3 * DEPTH) / 2, slots);
    const std::int64_t chunks = (march_n + chunk - 1) / chunk;
    if (tiles_x > 0x7fffffff || chunks > 65535)
      throw std::runtime_error("temporal-blocking: grid too large for one launch");
    const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks));
    kernel<<<grid, Tile::threads, bytes, context.stream>>>(args, chunk);
  }
  HEATSIM_CUDA_CHECK_LAUNCH();
}

// A march pass of `depth` steps of Op; false when no march takes this shape and depth.
template <class Op>
bool launch_marching(const typename Op::Args& args, const PassFactors<typename Op::Value>& f,
                     int depth, const LaunchContext& context) {
  if constexpr (!marches<Op>()) {
    return false;
  } else {
    constexpr int R = Op::kRadius;
    using T = typename Op::Value;
    const March march = march_of(Op::kDims, !Op::kStar, depth, R, sizeof(T));
    if (march == March::none || args.grid.ghost < depth * R) return false;
    if constexpr (Op::kDims == 3) {
      // Only the shapes march_of sends each way are instantiated; another is a logic error.
      if (march == March::sums) {
        if constexpr (Op::kBox || sizeof(T) == 8)
          at_depth<kMaxSumMarchDepth>(depth, [&](auto d) {
            using Tile = SumMarchTileAt<decltype(d)::value>;
            launch_march<Op, Tile>(temporal_sum_march_kernel<Op, Tile>, args, context);
          });
        else
          throw std::logic_error("temporal-blocking: no march in sums for fp32 stars");
      } else {
        if constexpr (Op::kStar)
          at_depth<kMaxMarchDepth>(depth, [&](auto d) {
            using Tile = MarchTileAt<decltype(d)::value>;
            launch_march<Op, Tile>(temporal_march_kernel<Op, Tile>, args, context, f);
          });
        else
          throw std::logic_error("temporal-blocking: no march of values for boxes");
      }
    } else {
      at_depth<max_row_depth(!Op::kStar, R)>(depth, [&](auto d) {
        using Tile = RowMarchTileAt<decltype(d)::value, R>;
        launch_march<Op, Tile>(temporal_row_march_kernel<Op, Tile>, args, context);
      });
    }
    return true;
  }
}

// A pass of `depth` steps of Op over the field.
template <class Op>
void launch(const typename Op::Args& args, const PassFactors<typename Op::Value>& factors,
            int depth, const LaunchContext& context) {
  using T = typename Op::Value;
  constexpr int DIMS = Op::kDims, R = Op::kRadius;
  if (launch_marching<Op>(args, factors, depth, context)) return;
  const std::size_t bytes = shared_bytes(DIMS, R, depth, Op::kStaged, sizeof(T));
  if (bytes == 0 || depth > kMaxBlockedDepth)
    throw std::logic_error("temporal-blocking: depth " + std::to_string(depth) +
                           " leaves no output in the tile at radius " + std::to_string(R));
  const std::size_t static_bytes =
      Op::kCoefficients ? factor_bytes(sizeof(T)) : 0;
  const DeviceGrid& g = args.grid;
  if (g.ghost < depth * R)
    throw std::logic_error("temporal-blocking: ghost layers narrower than depth * radius");
  const int halo = depth * R;
  if constexpr (DIMS == 1) {
    const auto kernel = temporal_1d_kernel<Op>;
    allow_shared(kernel, bytes, static_bytes);
    const std::int64_t out_x = tile_x<1>() - 2 * halo;
    const std::int64_t blocks = (g.n[0] + out_x - 1) / out_x;
    kernel<<<static_cast<unsigned>(blocks), threads<1>(), bytes, context.stream>>>(args, factors,
                                                                                   depth);
  } else {
    const auto kernel = temporal_stream_kernel<Op>;
    allow_shared(kernel, bytes, static_bytes);
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
    const dim3 grid = DIMS == 3
                          ? dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(launch_y),
                                 static_cast<unsigned>(chunks))
                          : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
    kernel<<<grid, block, bytes, context.stream>>>(args, factors, depth, chunk, tiles_y);
  }
  HEATSIM_CUDA_CHECK_LAUNCH();
}

// The flux operator's forms a pass takes: the fields (k staged) or the faces given; the
// compact forms map to them (the device keeps the fields beside the classes).
template <typename T>
CoefficientForm pass_form(const CoefficientArgs<T>& a) {
  return a.faces[0] ? CoefficientForm::faces : CoefficientForm::fields;
}

}  // namespace

std::size_t temporal_sweep_shared_bytes(int dims, int radius, bool box, int depth,
                                        std::size_t value_bytes) {
  if (dims < 1 || dims > 3 || radius < 1 || radius > kMaxRadius || depth < 1 ||
      depth > kMaxBlockedDepth)
    return 0;
  const March march = march_of(dims, box, depth, radius, value_bytes);
  if (march != March::none) return march_shared_bytes(march, radius, depth, value_bytes);
  return shared_bytes(dims, radius, depth, 1, value_bytes);
}

// Stars of radius 1-3 in 1D-3D, boxes of radius 1-3 in 2D and 3D; other tap sets run as boxes
// (their zero weights are multiplied like any other).
template <typename T>
void launch_temporal_sweep(const SweepArgs<T>& args, const SweepShape& shape, int depth,
                           const LaunchContext& context) {
  SweepShape s = shape;
  if (s.dims == 1)
    s.taps = kStarTaps;
  else if (s.taps != kStarTaps)
    s.taps = kBoxTaps;
  dispatch_stencil<T>(s, [&](auto op) {
    using Op = typename decltype(op)::type;
    if constexpr (Op::kStar || Op::kBox) launch<Op>(args, PassFactors<T>{}, depth, context);
  });
}

std::size_t temporal_coefficient_shared_bytes(int dims, int depth, std::size_t value_bytes,
                                              bool faces) {
  if (dims < 1 || dims > 3 || depth < 1 || depth > kMaxBlockedDepth) return 0;
  const std::size_t bytes = shared_bytes(dims, 1, depth, faces ? 1 : 2, value_bytes);
  if (bytes == 0) return 0;
  return bytes + factor_bytes(value_bytes);
}

template <typename T>
void launch_temporal_coefficient_sweep(const CoefficientArgs<T>& args,
                                       const PassFactors<T>& factors, int depth,
                                       const LaunchContext& context) {
  if (any_rule(args.rules))
    throw std::logic_error(
        "temporal-blocking: a pass reads the faces' ghosts, it applies no rules");
  dispatch_flux(args, args.grid.dims, pass_form(args), [&](auto op) {
    using Op = typename decltype(op)::type;
    if constexpr (!takes_classes(Op::kForm) && !Op::kRules)
      launch<Op>(args, factors, depth, context);
  });
}

template void launch_temporal_coefficient_sweep<float>(const CoefficientArgs<float>&,
                                                       const PassFactors<float>&, int,
                                                       const LaunchContext&);
template void launch_temporal_coefficient_sweep<double>(const CoefficientArgs<double>&,
                                                        const PassFactors<double>&, int,
                                                        const LaunchContext&);
template void launch_temporal_sweep<float>(const SweepArgs<float>&, const SweepShape&, int,
                                           const LaunchContext&);
template void launch_temporal_sweep<double>(const SweepArgs<double>&, const SweepShape&, int,
                                            const LaunchContext&);

}  // namespace heatsim::kernels::cuda
