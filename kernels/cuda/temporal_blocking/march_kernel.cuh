// temporal-blocking's register march: `depth` steps of a radius-1 star point operator in 3D per
// pass, the march axis's neighbours of every level held in registers (after AN5D, Matsumura et
// al., CGO 2020, and EBISU, Zhang et al., ICS 2023; written for heatsim's padded layout and
// its point operators). Included by temporal_sweep.cu and by the kernel lab
// (scripts/kernel-lab), which times the same code at other tiles. The backend takes, for the
// constant stencil, the march of values (temporal_march_kernel) for 3D stars, the march in
// sums (temporal_sum_march_kernel) for 3D boxes and fp64 stars at depth 3, and the row march
// (temporal_row_march_kernel) for 2D stars and boxes of radius 1-3 (temporal_sweep.cu: which
// depths and tiles). Over the flux operator (its classes form: materials as a byte per node,
// each level at its step's source factors, the classes staged once per plane in a key ring) the
// march of values runs in the lab only: measured there at 117 GStencil/s at depth 2 with the
// classes in blocks (below the one-step sweep's 159), it is no backend's yet.
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

#include "../march_split.cuh"
#include "../point_operators.cuh"
#include "temporal_sweep.hpp"

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

// The flux operator's classes form stages each input plane's class bytes once, in a ring of
// key planes every level reads (its plane and the two beside it), instead of every level
// reading its nodes' and neighbours' classes from global memory. Level j at iteration it forms
// plane b + it - (2j - 1), so iteration it reads planes b + it - 2K .. b + it; a ring of 2K + 2
// lets iteration it write plane b + it while no thread still reads the plane it replaces (the
// last reader, iteration it - 2, finished before iteration it - 1's barrier).
template <class Op, class = void>
struct MarchKeys {
  static constexpr bool value = false;
};
template <class Op>
struct MarchKeys<Op, std::void_t<decltype(Op::kForm)>> {
  static constexpr bool value = Op::kForm == CoefficientForm::classes;
};
template <class Tile>
__host__ __device__ constexpr int key_ring_planes() {
  return 2 * Tile::depth + 2;
}
// The march's dynamic shared memory: the levels' planes of values, then the key ring.
template <class Op, class Tile>
constexpr std::size_t march_shared_bytes() {
  return Tile::shared_bytes(sizeof(typename Op::Value)) +
         (MarchKeys<Op>::value ? std::size_t(key_ring_planes<Tile>()) * Tile::plane : 0);
}

// What both 3D marches share: the piece of planes along z the block marches (b the input
// plane of iteration 0, `depth` before the first output), the thread's run of CY nodes in the
// piece's tile (their elements in plane 0, whether they lie in the padded field, whether the
// thread stores them) and the load of one input plane.
template <class Op, class Tile>
struct MarchRun {
  using T = typename Op::Value;
  static constexpr int K = Tile::depth, CY = Tile::cy, BX = Tile::bx;
  std::int64_t m0, m1, planes, b, iterations, loads;  // loads: input planes b .. m1 - 1 + K
  int node;                                           // the thread's node 0 in a shared plane
  std::int64_t x, y0;                                 // the run's first node in the tile
  std::int64_t offset[CY];
  // inner: off the padded field's outermost layer in x and y, where an operator with
  // coefficients may form a node (its faces' elements lie in the arrays).
  bool inside[CY], store[CY], inner[CY];

  __device__ MarchRun() { node = Tile::first + threadIdx.y * CY * BX + threadIdx.x; }

  // Planes [first, last) of tile `tile` (split.tiles_x tiles along x).
  __device__ void at_piece(const DeviceGrid& g, const MarchSplit& split, std::int64_t tile,
                           std::int64_t first, std::int64_t last) {
    m0 = first;
    m1 = last;
    planes = m1 - m0;
    b = m0 - K;
    iterations = planes + 3 * K - 1;
    loads = planes + 2 * K;
    const std::int64_t by = tile / split.tiles_x, bx = tile - by * split.tiles_x;
    const int tx = threadIdx.x, ly0 = threadIdx.y * CY;
    x = bx * Tile::out_x - K + tx;
    y0 = by * Tile::out_y - K + ly0;
    const bool in_x = x >= -g.ghost && x < g.n[0] + g.ghost;
    const bool inner_x = x > -g.ghost && x < g.n[0] + g.ghost - 1;
#pragma unroll
    for (int c = 0; c < CY; ++c) {
      const std::int64_t y = y0 + c;
      offset[c] = g.origin + y * g.pitch_y + x;
      inside[c] = in_x && y >= -g.ghost && y < g.n[1] + g.ghost;
      inner[c] = inner_x && y > -g.ghost && y < g.n[1] + g.ghost - 1;
      store[c] = tx >= K && tx < BX - K && ly0 + c >= K && ly0 + c < Tile::tile_y - K &&
                 x < g.n[0] && y < g.n[1];
    }
  }

  // Input plane b + l of the run (zeros outside the padded field and past the last needed).
  __device__ void load(const typename Op::Args& a, T (&next)[CY], std::int64_t l) const {
    const DeviceGrid& g = a.grid;
    const std::int64_t m = b + l;
    const bool ok = l < loads && m >= -g.ghost && m < g.n[2] + g.ghost;
#pragma unroll
    for (int c = 0; c < CY; ++c)
      next[c] = ok && inside[c] ? __ldg(a.in + offset[c] + m * g.pitch_z) : T(0);
  }
  // The classes of input plane b + l (class 0 where the values are zeros).
  __device__ void load_keys(const typename Op::Args& a, std::uint8_t (&next)[CY],
                            std::int64_t l) const {
    const DeviceGrid& g = a.grid;
    const std::int64_t m = b + l;
    const bool ok = l < loads && m >= -g.ghost && m < g.n[2] + g.ghost;
#pragma unroll
    for (int c = 0; c < CY; ++c)
      next[c] = ok && inside[c] ? __ldg(a.node_class + offset[c] + m * g.pitch_z) : 0;
  }
};

// The shared planes zeroed once (their pads are read by nodes that reach no stored node).
template <typename T>
__device__ void zero_shared(T* shared, int elements, int threads) {
  const int tid = threadIdx.x + blockDim.x * threadIdx.y;
  for (int e = tid; e < elements; e += threads) shared[e] = T(0);
  __syncthreads();
}

// The source factors of a pass's steps staged for the block (an operator with coefficients:
// level j takes step j's row, Op::at_step); read after the block's next barrier. Null for the
// constant stencil.
template <class Op>
__device__ __forceinline__ const typename Op::Value* staged_factors(
    const PassFactors<typename Op::Value>& f, int depth) {
  using T = typename Op::Value;
  if constexpr (!Op::kCoefficients) {
    return nullptr;
  } else {
    __shared__ T staged[kMaxBlockedDepth * kMaxSourceFields];
    const int tid = threadIdx.x + blockDim.x * threadIdx.y;
    for (int e = tid; e < depth * kMaxSourceFields; e += blockDim.x * blockDim.y)
      staged[e] = f.step[e / kMaxSourceFields][e % kMaxSourceFields];
    return staged;
  }
}

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

// The same with the classes of the plane and of the planes below and above it from the key
// ring (each at the thread's node 0).
template <typename T, int CY, int PITCH>
struct MarchKeyNear : MarchNear<T, CY, PITCH> {
  static constexpr bool kKeys = true;
  const std::uint8_t* key_below;
  const std::uint8_t* key_row;
  const std::uint8_t* key_above;
  __device__ __forceinline__ unsigned key(int dx, int dy, int dz) const {
    const int e = (this->c + dy) * PITCH + dx;
    return dz < 0 ? key_below[e] : dz > 0 ? key_above[e] : key_row[e];
  }
};

// One iteration of the march at ring phase P (= it % 3): slot P holds each level's oldest
// plane, (P+1) % 3 its middle, (P+2) % 3 its newest.
template <class Op, class Tile, int P>
struct MarchStep {
  using T = typename Op::Value;
  static constexpr int K = Tile::depth, CY = Tile::cy, BX = Tile::bx, PLANE = Tile::plane;
  static constexpr int LEVEL = Tile::buffers * PLANE;  // from one level's planes to the next

  __device__ __forceinline__ static void run(const typename Op::Args& a,
                                             const typename Op::Block& block, const T* factor,
                                             const MarchRun<Op, Tile>& run, T (&win)[K][3][CY],
                                             const T (&next)[CY], T* shared, std::int64_t it,
                                             std::uint8_t* ring = nullptr,
                                             const std::uint8_t (*keys)[CY] = nullptr) {
    constexpr int OLD = P, MID = (P + 1) % 3, NEW = (P + 2) % 3;
    constexpr bool KEYS = MarchKeys<Op>::value;
    constexpr int RING = key_ring_planes<Tile>();
    const DeviceGrid& g = a.grid;
    // Level j's plane at cur + j * LEVEL; with one buffer per level, a second barrier below.
    T* cur = shared + (Tile::buffers == 2 ? (it & 1) * PLANE : 0);
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < CY; ++c) cur[j * LEVEL + run.node + c * BX] = win[j][MID][c];
    int slot = 0;  // the ring's plane of input plane b + it
    if constexpr (KEYS) {
      slot = static_cast<int>(it % RING);
#pragma unroll
      for (int c = 0; c < CY; ++c) ring[slot * PLANE + run.node + c * BX] = (*keys)[c];
    }
    __syncthreads();
#pragma unroll
    for (int j = K; j >= 1; --j) {
      // Level j forms plane b + it - (2j - 1): its first valid plane is b + j, and the last a
      // later level needs is m1 - 1 + K - j.
      if (it < 3 * j - 1 || it > run.planes + 2 * K + j - 2) continue;
      const T* row = cur + (j - 1) * LEVEL + run.node;
      const std::int64_t p = run.b + it - (2 * j - 1);
      const typename Op::Block step = Op::at_step(block, factor + (j - 1) * kMaxSourceFields);
      const bool inner_z = p > -g.ghost && p < g.n[2] + g.ghost - 1;
#pragma unroll
      for (int c = 0; c < CY; ++c) {
        const MarchNear<T, CY, BX> near{win[j - 1][OLD],
                                        win[j - 1][MID],
                                        win[j - 1][NEW],
                                        row,
                                        c,
                                        run.offset[c] + p * g.pitch_z,
                                        run.x,
                                        run.y0 + c,
                                        p};
        T v = T(0);
        if constexpr (KEYS) {
          // Plane p is input plane b + it - (2j - 1): ring planes slot - (2j - 1) and beside.
          auto plane_of = [&](int back) {
            const int q = slot - back;
            return ring + (q < 0 ? q + RING : q) * PLANE + run.node;
          };
          const MarchKeyNear<T, CY, BX> keyed{near, plane_of(2 * j), plane_of(2 * j - 1),
                                              plane_of(2 * j - 2)};
          if (run.inner[c] && inner_z) v = Op::point(a, step, keyed);
        } else {
          if (!Op::kCoefficients || (run.inner[c] && inner_z)) v = Op::point(a, step, near);
        }
        if (j == K) {
          if (run.store[c] && p >= run.m0 && p < run.m1) a.out[run.offset[c] + p * g.pitch_z] = v;
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

// The march over the block's pieces of planes along z (MarchSplit). Op: a radius-1 star in 3D
// that stages u alone (the constant stencil, or the flux operator with its faces from classes or arrays), level j at step j's
// source factors (f, staged); an operator with coefficients forms no node on the padded
// field's outermost layer (its faces there lie outside the arrays; it reaches no stored node).
template <class Op, class Tile>
__global__ void __launch_bounds__(Tile::threads)
    temporal_march_kernel(const typename Op::Args a, const PassFactors<typename Op::Value> f,
                          const MarchSplit split) {
  using T = typename Op::Value;
  static_assert(Op::kDims == 3 && Op::kRadius == 1 && Op::kStar && !Op::kRules,
                "the march takes radius-1 stars in 3D whose ghosts are read");
  static_assert(Op::kStaged == 1, "the march stages u alone (the flux operator's classes)");
  constexpr int K = Tile::depth, CY = Tile::cy, PLANE = Tile::plane;
  extern __shared__ unsigned char shared_raw[];
  T* shared = reinterpret_cast<T*>(shared_raw);  // [level][buffer][plane]
  const T* factor = staged_factors<Op>(f, K);
  const typename Op::Block block = Op::enter(a);
  zero_shared(shared, K * Tile::buffers * PLANE, Tile::threads);
  constexpr bool KEYS = MarchKeys<Op>::value;
  std::uint8_t* ring = nullptr;  // the key ring (its pads stay class 0)
  if constexpr (KEYS) {
    ring = shared_raw + sizeof(T) * K * Tile::buffers * PLANE;
    zero_shared(ring, key_ring_planes<Tile>() * PLANE, Tile::threads);
  }
  const DeviceGrid& g = a.grid;
  MarchRun<Op, Tile> run;

  for_each_piece(split, [&](std::int64_t tile, std::int64_t m0, std::int64_t m1) {
    run.at_piece(g, split, tile, m0, m1);
    const std::int64_t iterations = run.iterations;
    T next[CY];
    std::uint8_t keys[CY], next_keys[CY];  // input plane b + it's classes, and the next one's
    auto load = [&](std::int64_t l) {
      run.load(a, next, l);
      if constexpr (KEYS) run.load_keys(a, next_keys, l);
    };
    auto advance = [&]() {
      if constexpr (KEYS) {
#pragma unroll
        for (int c = 0; c < CY; ++c) keys[c] = next_keys[c];
      }
    };
    T win[K][3][CY];
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int s = 0; s < 3; ++s)
#pragma unroll
        for (int c = 0; c < CY; ++c) win[j][s][c] = T(0);
    load(0);
    advance();
#pragma unroll
    for (int c = 0; c < CY; ++c) win[0][2][c] = next[c];  // plane b, the newest at phase 0
    for (std::int64_t it = 0; it < iterations; it += 3) {
      load(it + 1);
      MarchStep<Op, Tile, 0>::run(a, block, factor, run, win, next, shared, it, ring, &keys);
      advance();
      if (it + 1 >= iterations) break;
      load(it + 2);
      MarchStep<Op, Tile, 1>::run(a, block, factor, run, win, next, shared, it + 1, ring, &keys);
      advance();
      if (it + 2 >= iterations) break;
      load(it + 3);
      MarchStep<Op, Tile, 2>::run(a, block, factor, run, win, next, shared, it + 2, ring, &keys);
      advance();
    }
    __syncthreads();  // the next piece refills the planes
  });
}

// The march in sums (3D radius-1 stars and boxes of the constant stencil): instead of three
// planes of values per level, a thread holds per node and level two pending sums and the newest
// value, as register-tiling's march does for one step. When level j-1's plane q is in shared
// memory, a node of level j reads its 3 x 3 in-plane window once (the thread's own column from
// registers, the rest from shared memory: 2 CY + 6 loads for a run of CY nodes of a box, 2 CY +
// 2 of a star) and adds it to three outputs: with the weights of dz = +1 to output q-1, which is
// then complete, of dz = 0 to output q, of dz = -1 to output q+1, which it starts. Each output
// thus sums plane q-1's taps, then plane q's, then plane q+1's, each plane's in increasing y and
// x, and then the source: point()'s order (for_each_tap), the single steps' values bit for
// bit. The lag and the iteration count are the window kernel's: level j completes plane
// b + it - (2j - 1) at iteration it; it starts consuming two planes before its first valid one
// (its sums need them).
template <class Op, class Tile>
__global__ void __launch_bounds__(Tile::threads)
    temporal_sum_march_kernel(const typename Op::Args a, const MarchSplit split) {
  using T = typename Op::Value;
  static_assert(Op::kDims == 3 && Op::kRadius == 1 && (Op::kStar || Op::kBox) && !Op::kCoefficients,
                "the march in sums takes radius-1 stars and boxes in 3D");
  constexpr int TAPS = Op::kStar ? kStarTaps : kBoxTaps;
  constexpr int K = Tile::depth, BX = Tile::bx, CY = Tile::cy, PLANE = Tile::plane;
  constexpr int LEVEL = Tile::buffers * PLANE;
  extern __shared__ unsigned char shared_raw[];
  T* shared = reinterpret_cast<T*>(shared_raw);  // [level][buffer][plane]
  zero_shared(shared, K * LEVEL, Tile::threads);
  const DeviceGrid& g = a.grid;
  MarchRun<Op, Tile> run;
  const int node = run.node;
  auto w = [&](int dx, int dy, int dz) -> T { return a.weights.w[weight_index<3, 1>(dx, dy, dz)]; };

  for_each_piece(split, [&](std::int64_t tile, std::int64_t first, std::int64_t last) {
    run.at_piece(g, split, tile, first, last);
    const std::int64_t planes = run.planes, b = run.b, m0 = run.m0, m1 = run.m1;
    const std::int64_t iterations = run.iterations;
    T next[CY];
    auto load = [&](std::int64_t l) { run.load(a, next, l); };
    // newest[j]: level j's newest plane (level 0: the input); near[j-1], far[j-1]: level j's
    // pending outputs, the older (two planes in) and the newer (one plane in).
    T newest[K][CY], near[K][CY], far[K][CY];
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < CY; ++c) newest[j][c] = near[j][c] = far[j][c] = T(0);
    load(0);
#pragma unroll
    for (int c = 0; c < CY; ++c) newest[0][c] = next[c];
    for (std::int64_t it = 0; it < iterations; ++it) {
      if (it + 1 < iterations) load(it + 1);
      T* cur = shared + (Tile::buffers == 2 ? (it & 1) * PLANE : 0);
#pragma unroll
      for (int j = 0; j < K; ++j)
#pragma unroll
        for (int c = 0; c < CY; ++c) cur[j * LEVEL + node + c * BX] = newest[j][c];
      __syncthreads();
#pragma unroll
      for (int j = K; j >= 1; --j) {
        // Level j consumes level j-1's plane b + it - 2(j-1) and completes b + it - (2j - 1).
        if (it < 3 * j - 3 || it > planes + 2 * K + j - 2) continue;
        const T* row = cur + (j - 1) * LEVEL + node;
        // The window's columns dx = -1, 0, 1 over rows -1 .. CY of the run (only what a tap
        // reads is loaded; the thread's own column inside the run is its registers).
        T col[3][CY + 2];
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx)
#pragma unroll
          for (int r = -1; r <= CY; ++r) {
            bool used = false;
#pragma unroll
            for (int c = 0; c < CY; ++c)
              used = used || (r - c >= -1 && r - c <= 1 &&
                              (is_tap<TAPS, 1>(dx, r - c, -1) || is_tap<TAPS, 1>(dx, r - c, 0) ||
                               is_tap<TAPS, 1>(dx, r - c, 1)));
            if (dx == 0 && r >= 0 && r < CY)
              col[1][r + 1] = newest[j - 1][r];
            else if (used)
              col[dx + 1][r + 1] = row[r * BX + dx];
          }
        const std::int64_t p = b + it - (2 * j - 1);
#pragma unroll
        for (int c = 0; c < CY; ++c) {
          T done = near[j - 1][c], mid = far[j - 1][c], start = T(0);
#pragma unroll
          for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
            for (int dx = -1; dx <= 1; ++dx) {
              const T u = col[dx + 1][c + dy + 1];
              if (is_tap<TAPS, 1>(dx, dy, 1)) done += w(dx, dy, 1) * u;
              if (is_tap<TAPS, 1>(dx, dy, 0)) mid += w(dx, dy, 0) * u;
              if (is_tap<TAPS, 1>(dx, dy, -1)) start += w(dx, dy, -1) * u;
            }
          done += a.source;
          near[j - 1][c] = mid;
          far[j - 1][c] = start;
          if (j == K) {
            if (run.store[c] && p >= m0 && p < m1) a.out[run.offset[c] + p * g.pitch_z] = done;
          } else {
            newest[j][c] = done;
          }
        }
      }
#pragma unroll
      for (int c = 0; c < CY; ++c) newest[0][c] = next[c];
      if (Tile::buffers == 1) __syncthreads();
    }
    __syncthreads();  // the next piece refills the planes
  });
}

// 2D: a block of BX threads owns a row segment of BX*CX nodes (its output the centre, depth*R
// in from each end; thread t owns nodes t + c*BX, so that a warp's shared accesses are
// consecutive) and marches along y. The march in sums of the 3D kernel above with rows for
// planes: a node of level j reads its x neighbours on level j-1's row from shared memory (R pad
// elements at each end of the row) and the node itself from its registers, and adds them to
// the 2R + 1 outputs the row feeds: the one R rows below (complete), the 2R - 1 above it
// (pending) and the one R rows above (started). Each output thus sums its rows in increasing
// y, each row's taps in increasing x, then the source: point()'s order. Level j consumes level
// j-1's row b + it - (j-1)(R+1) at iteration it and completes row b + it - j(R+1) + 1.
template <int BX, int CX, int DEPTH, int BUFFERS = 2, int R = 1>
struct RowMarchTile {
  static constexpr int bx = BX, cx = CX, depth = DEPTH, buffers = BUFFERS, radius = R;
  static constexpr int threads = BX, tile_x = BX * CX, out_x = tile_x - 2 * DEPTH * R;
  static constexpr int plane = tile_x + 2 * R, first = R;
  static constexpr std::size_t shared_bytes(std::size_t value_bytes) {
    return static_cast<std::size_t>(DEPTH) * BUFFERS * plane * value_bytes;
  }
  static_assert(out_x > 0, "the tile keeps no output at this depth");
  static_assert(BUFFERS == 1 || BUFFERS == 2, "one or two shared rows per level");
};

template <class Op, class Tile>
__global__ void __launch_bounds__(Tile::threads)
    temporal_row_march_kernel(const typename Op::Args a, std::int64_t chunk) {
  using T = typename Op::Value;
  static_assert(Op::kDims == 2 && (Op::kStar || Op::kBox) && !Op::kCoefficients,
                "the row march takes stars and boxes of the constant stencil in 2D");
  static_assert(Op::kRadius == Tile::radius, "the tile's pads are the operator's radius");
  constexpr int TAPS = Op::kStar ? kStarTaps : kBoxTaps;
  constexpr int R = Op::kRadius, P = 2 * R;  // P outputs pending per node and level
  constexpr int K = Tile::depth, BX = Tile::bx, CX = Tile::cx, PLANE = Tile::plane;
  constexpr int H = K * R;  // the pass's halo
  constexpr int LEVEL = Tile::buffers * PLANE;
  extern __shared__ unsigned char shared_raw[];
  T* shared = reinterpret_cast<T*>(shared_raw);  // [level][buffer][row]
  const int tx = threadIdx.x;
  zero_shared(shared, K * LEVEL, Tile::threads);

  const DeviceGrid& g = a.grid;
  const std::int64_t m0 = blockIdx.y * chunk;
  const std::int64_t m1 = min(m0 + chunk, g.n[1]);
  const std::int64_t planes = m1 - m0;
  const std::int64_t b = m0 - H;
  const std::int64_t iterations = planes + K * (2 * R + 1) - 1;
  const std::int64_t loads = planes + 2 * H;
  auto w = [&](int dx, int dy) -> T { return a.weights.w[weight_index<2, R>(dx, dy, 0)]; };

  const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * Tile::out_x - H + tx;
  std::int64_t offset[CX];
  bool inside[CX], store[CX];
#pragma unroll
  for (int c = 0; c < CX; ++c) {
    const std::int64_t x = x0 + c * BX;
    const int l = tx + c * BX;
    offset[c] = g.origin + x;
    inside[c] = x >= -g.ghost && x < g.n[0] + g.ghost;
    store[c] = l >= H && l < Tile::tile_x - H && x < g.n[0];
  }
  T next[CX];
  auto load = [&](std::int64_t l) {
    const std::int64_t m = b + l;
    const bool ok = l < loads && m >= -g.ghost && m < g.n[1] + g.ghost;
#pragma unroll
    for (int c = 0; c < CX; ++c)
      next[c] = ok && inside[c] ? __ldg(a.in + offset[c] + m * g.pitch_y) : T(0);
  };
  // pend[j-1][i]: level j's output i + 1 - R rows from the row it consumes next (i = 0: the one
  // the next row completes).
  T newest[K][CX], pend[K][P][CX];
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int c = 0; c < CX; ++c) {
      newest[j][c] = T(0);
#pragma unroll
      for (int i = 0; i < P; ++i) pend[j][i][c] = T(0);
    }
  load(0);
#pragma unroll
  for (int c = 0; c < CX; ++c) newest[0][c] = next[c];
  for (std::int64_t it = 0; it < iterations; ++it) {
    if (it + 1 < iterations) load(it + 1);
    T* cur = shared + (Tile::buffers == 2 ? (it & 1) * PLANE : 0) + Tile::first;
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < CX; ++c) cur[j * LEVEL + tx + c * BX] = newest[j][c];
    __syncthreads();
#pragma unroll
    for (int j = K; j >= 1; --j) {
      // Level j's first row read is level j-1's first valid one, b + (j-1)R; its last
      // completed row is the last a later level needs, m1 - 1 + (K - j)R.
      if (it < (j - 1) * (2 * R + 1) || it > planes + 2 * H + j - 2) continue;
      const T* row = cur + (j - 1) * LEVEL + tx;
      const std::int64_t p = b + it - j * (R + 1) + 1;
#pragma unroll
      for (int c = 0; c < CX; ++c) {
        T u[2 * R + 1];
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) u[dx + R] = dx == 0 ? newest[j - 1][c] : row[c * BX + dx];
        // The row is dy = R - i rows above output i, and -R below the output it starts.
        T start = T(0);
#pragma unroll
        for (int i = 0; i < P; ++i)
#pragma unroll
          for (int dx = -R; dx <= R; ++dx)
            if (is_tap<TAPS, R>(dx, R - i, 0)) pend[j - 1][i][c] += w(dx, R - i) * u[dx + R];
#pragma unroll
        for (int dx = -R; dx <= R; ++dx)
          if (is_tap<TAPS, R>(dx, -R, 0)) start += w(dx, -R) * u[dx + R];
        const T done = pend[j - 1][0][c] + a.source;
#pragma unroll
        for (int i = 0; i + 1 < P; ++i) pend[j - 1][i][c] = pend[j - 1][i + 1][c];
        pend[j - 1][P - 1][c] = start;
        if (j == K) {
          if (store[c] && p >= m0 && p < m1) a.out[offset[c] + p * g.pitch_y] = done;
        } else {
          newest[j][c] = done;
        }
      }
    }
#pragma unroll
    for (int c = 0; c < CX; ++c) newest[0][c] = next[c];
    if (Tile::buffers == 1) __syncthreads();
  }
}

}  // namespace heatsim::kernels::cuda
