// temporal-blocking's register march: `depth` steps of a radius-1 star point operator in 3D per
// pass, the march axis's neighbours of every level held in registers (after AN5D, Matsumura et
// al., CGO 2020, and EBISU, Zhang et al., ICS 2023; written for heatsim's padded layout and
// its point operators). Included by temporal_sweep.cu and by the kernel lab
// (scripts/kernel-lab), which times the same code at other tiles.
//
// A block of BX x BY threads owns a tile of BX x (BY*CY) nodes of the xy plane (its output the
// centre, `depth` nodes in from each side) and streams along z through a chunk of planes. A
// thread owns CY consecutive nodes along y of one x. Level 0 is the input; level j the field
// after j steps. For every level j < depth a thread holds, per node, the values of level j on
// three consecutive planes (below, middle, above) in registers, and shared memory holds the
// middle plane of each level once, so a node of level j+1 reads its z neighbours and its y
// neighbours inside the thread's run from registers and only its x neighbours (and the y
// neighbours past the run's ends) from shared memory: 2 + 2/CY shared loads and one store per
// node and level, against 6 loads in the queue kernel.
//
// Each iteration of the march stores the middle planes of levels 0 .. depth-1 (double
// buffered; or in one buffer, with a second barrier after the levels read it), waits once, and then
// takes every level one plane on, the deepest first, so that level j reads level j-1's window as
// stored: level j forms plane b + it - (2j - 1) at iteration it (b the chunk's first input plane),
// and output plane p leaves at iteration p - b + 2*depth - 1. A level skips the iterations before
// its first valid plane and after the last one a later level needs (uniform branches). The window
// of three planes is a ring whose slots rotate with it % 3 (the loop unrolled three times), so no
// values move.
//
// Exactness: a node is formed by Op::point() from the same neighbours as the single-step
// sweeps, so a stored node gets `depth` single steps' values bit for bit. Nodes within `depth`
// of the tile's sides read garbage (the pads around each shared plane, the next row) and reach
// no stored node; nodes outside the padded field are zeros.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../point_operators.cuh"

namespace heatsim::kernels::cuda {

template <int BX, int BY, int CY, int DEPTH, int BUFFERS = 2>
struct MarchTile {
  static constexpr int bx = BX, by = BY, cy = CY, depth = DEPTH, buffers = BUFFERS;
  static constexpr int tile_x = BX, tile_y = BY * CY, threads = BX * BY;
  static constexpr int out_x = tile_x - 2 * DEPTH, out_y = tile_y - 2 * DEPTH;
  // One shared plane: a pad element, a pad row, the tile's rows, a pad row, a pad element.
  static constexpr int plane = tile_x * (tile_y + 2) + 2;
  static constexpr int first = tile_x + 1;  // element of tile node (0, 0)
  static constexpr std::size_t shared_bytes(std::size_t value_bytes) {
    return static_cast<std::size_t>(DEPTH) * BUFFERS * plane * value_bytes;
  }
  static_assert(out_x > 0 && out_y > 0, "the tile keeps no output at this depth");
  static_assert(BUFFERS == 1 || BUFFERS == 2, "one or two shared planes per level");
};

// A node's neighbourhood at level j-1: z neighbours and the node from the thread's registers
// (below, middle, above: node c of the thread's run), in-plane neighbours from the middle
// plane in shared memory where they are not the thread's own.
template <typename T, int CY, int PITCH>
struct MarchNear {
  const T (&below)[CY];
  const T (&middle)[CY];
  const T (&above)[CY];
  const T* row;  // shared memory at the thread's node 0 of this level's middle plane
  int c;
  std::int64_t i, x, y, z;

  template <int S>
  __device__ __forceinline__ T at(int dx, int dy, int dz) const {
    if (dz < 0) return below[c];
    if (dz > 0) return above[c];
    if (dx == 0 && dy == 0) return middle[c];
    if (dy == 0) return row[c * PITCH + dx];
    const int cc = c + dy;
    if (cc >= 0 && cc < CY) return middle[cc];
    return row[cc * PITCH + dx];
  }
};

// One iteration of the march at ring phase P (= it % 3): slot P holds each level's oldest
// plane, (P+1) % 3 its middle, (P+2) % 3 its newest.
template <class Op, class Tile, int P>
struct MarchStep {
  using T = typename Op::Value;
  static constexpr int K = Tile::depth, CY = Tile::cy, BX = Tile::bx, PLANE = Tile::plane;
  static constexpr int LEVEL = Tile::buffers * PLANE;  // from one level's planes to the next

  __device__ __forceinline__ static void run(const typename Op::Args& a, T (&win)[K][3][CY],
                                             const T (&next)[CY], T* shared, int node,
                                             std::int64_t it, std::int64_t planes, std::int64_t b,
                                             std::int64_t m0, std::int64_t m1,
                                             const std::int64_t (&offset)[CY],
                                             const bool (&store)[CY]) {
    constexpr int OLD = P, MID = (P + 1) % 3, NEW = (P + 2) % 3;
    const DeviceGrid& g = a.grid;
    // Level j's plane at cur + j * LEVEL; with one buffer per level, a second barrier below.
    T* cur = shared + (Tile::buffers == 2 ? (it & 1) * PLANE : 0);
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < CY; ++c) cur[j * LEVEL + node + c * BX] = win[j][MID][c];
    __syncthreads();
    const typename Op::Block block{};
#pragma unroll
    for (int j = K; j >= 1; --j) {
      // Level j forms plane b + it - (2j - 1): its first valid plane is b + j, and the last a
      // later level needs is m1 - 1 + K - j.
      if (it < 3 * j - 1 || it > planes + 2 * K + j - 2) continue;
      const T* row = cur + (j - 1) * LEVEL + node;
      const std::int64_t p = b + it - (2 * j - 1);
#pragma unroll
      for (int c = 0; c < CY; ++c) {
        const MarchNear<T, CY, BX> near{
            win[j - 1][OLD], win[j - 1][MID], win[j - 1][NEW], row, c, 0, 0, 0, p};
        const T v = Op::point(a, block, near);
        if (j == K) {
          if (store[c] && p >= m0 && p < m1) a.out[offset[c] + p * g.pitch_z] = v;
        } else {
          win[j][OLD][c] = v;
        }
      }
    }
#pragma unroll
    for (int c = 0; c < CY; ++c) win[0][OLD][c] = next[c];
    if (Tile::buffers == 1) __syncthreads();
  }
};

// The march over a chunk of `chunk` planes per block along z; blocks stride over the y tiles
// past the launch grid's limit. Op: a constant star of radius 1 in 3D.
template <class Op, class Tile>
__global__ void __launch_bounds__(Tile::threads)
    temporal_march_kernel(const typename Op::Args a, std::int64_t chunk, std::int64_t tiles_y) {
  using T = typename Op::Value;
  static_assert(Op::kDims == 3 && Op::kRadius == 1 && Op::kStar && !Op::kCoefficients,
                "the march takes radius-1 stars in 3D");
  constexpr int K = Tile::depth, BX = Tile::bx, CY = Tile::cy, PLANE = Tile::plane;
  extern __shared__ unsigned char shared_raw[];
  T* shared = reinterpret_cast<T*>(shared_raw);  // [level][buffer][plane]
  const int tid = threadIdx.x + BX * threadIdx.y;
  for (int e = tid; e < K * Tile::buffers * PLANE; e += Tile::threads) shared[e] = T(0);
  __syncthreads();

  const DeviceGrid& g = a.grid;
  const std::int64_t m0 = blockIdx.z * chunk;
  const std::int64_t m1 = min(m0 + chunk, g.n[2]);
  const std::int64_t planes = m1 - m0;
  const std::int64_t b = m0 - K;  // input plane of iteration 0
  const std::int64_t iterations = planes + 3 * K - 1;
  const std::int64_t loads = planes + 2 * K;  // input planes b .. m1 - 1 + K
  const int tx = threadIdx.x, ly0 = threadIdx.y * CY;
  const int node = Tile::first + ly0 * BX + tx;

  for (std::int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * Tile::out_x - K + tx;
    const std::int64_t y0 = by * Tile::out_y - K + ly0;
    const bool in_x = x >= -g.ghost && x < g.n[0] + g.ghost;
    std::int64_t offset[CY];
    bool inside[CY], store[CY];
#pragma unroll
    for (int c = 0; c < CY; ++c) {
      const std::int64_t y = y0 + c;
      offset[c] = g.origin + y * g.pitch_y + x;
      inside[c] = in_x && y >= -g.ghost && y < g.n[1] + g.ghost;
      store[c] = tx >= K && tx < BX - K && ly0 + c >= K && ly0 + c < Tile::tile_y - K &&
                 x < g.n[0] && y < g.n[1];
    }
    T next[CY];
    auto load = [&](std::int64_t l) {
      const std::int64_t m = b + l;
      const bool ok = l < loads && m >= -g.ghost && m < g.n[2] + g.ghost;
#pragma unroll
      for (int c = 0; c < CY; ++c)
        next[c] = ok && inside[c] ? __ldg(a.in + offset[c] + m * g.pitch_z) : T(0);
    };
    T win[K][3][CY];
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int s = 0; s < 3; ++s)
#pragma unroll
        for (int c = 0; c < CY; ++c) win[j][s][c] = T(0);
    load(0);
#pragma unroll
    for (int c = 0; c < CY; ++c) win[0][2][c] = next[c];  // plane b, the newest at phase 0
    for (std::int64_t it = 0; it < iterations; it += 3) {
      load(it + 1);
      MarchStep<Op, Tile, 0>::run(a, win, next, shared, node, it, planes, b, m0, m1, offset, store);
      if (it + 1 >= iterations) break;
      load(it + 2);
      MarchStep<Op, Tile, 1>::run(a, win, next, shared, node, it + 1, planes, b, m0, m1, offset,
                                  store);
      if (it + 2 >= iterations) break;
      load(it + 3);
      MarchStep<Op, Tile, 2>::run(a, win, next, shared, node, it + 2, planes, b, m0, m1, offset,
                                  store);
    }
    __syncthreads();  // the next y tile refills the planes
  }
}

}  // namespace heatsim::kernels::cuda
