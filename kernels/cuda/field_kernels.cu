// Ghost fill, Dirichlet nodes and statistics on the device. These touch the faces of the
// field (ghosts, boundary nodes) or read it once (statistics); the sweeps are elsewhere.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "../boundary_rules.hpp"
#include "check.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"

namespace heatsim::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// The two axes other than `axis`, lower first (the lower one is the faster in memory, so
// consecutive threads walk it for coalescing).
struct OtherAxes {
  int first, second;
};
__host__ __device__ inline OtherAxes other_axes(int axis) {
  return axis == 0 ? OtherAxes{1, 2} : axis == 1 ? OtherAxes{0, 2} : OtherAxes{0, 1};
}

struct LineRange {
  std::int64_t begin[2];
  std::int64_t count[2];
};

// Ghost fill of one axis: one thread per grid line along `axis`, both faces, every ghost
// layer k = 1..g: the constant-weight rules of boundary_rules.hpp, as the CPU applies them.
// Registers: a handful; no shared memory.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    fill_ghosts_kernel(T* __restrict__ u, DeviceGrid g, int axis, GhostFace lo, GhostFace hi,
                       double h, LineRange lines) {
  const std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (line >= lines.count[0] * lines.count[1]) return;
  const OtherAxes o = other_axes(axis);
  std::int64_t c[3] = {0, 0, 0};
  c[o.first] = lines.begin[0] + line % lines.count[0];
  c[o.second] = lines.begin[1] + line / lines.count[0];
  const std::int64_t n = g.n[axis];
  const std::int64_t st = g.stride(axis);
  T* base = u + g.index(c[0], c[1], c[2]);  // node 0 of this line
  const BoundaryKind lo_kind = static_cast<BoundaryKind>(lo.kind);
  const BoundaryKind hi_kind = static_cast<BoundaryKind>(hi.kind);
  for (int k = 1; k <= g.ghost; ++k) {
    // The low ghost first, as on the CPU: on short lines the high one's source may be it.
    const T* from_lo = base + ghost_source(lo_kind, 0, k, n) * st;
    base[-k * st] = constant_ghost<T>(lo_kind, lo.value, k, h, *from_lo);
    const T* from_hi = base + ghost_source(hi_kind, 1, k, n) * st;
    base[(n - 1 + k) * st] = constant_ghost<T>(hi_kind, hi.value, k, h, *from_hi);
  }
}

// The ghost fill along x where every ghost's source is an interior node (n > ghost, so that no
// ghost is formed from another and the order of the writes does not matter): one thread per
// ghost node, a row's ghosts side by side, so that a warp reads and writes whole sectors. The
// kernel above, one thread per row, wrote two nodes a row apart per warp instruction: at depth
// 4 on 512^3 in fp64 it took 168 us, against 19 us along y or z, where its rows lie along x.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    fill_x_ghosts_kernel(T* __restrict__ u, DeviceGrid g, GhostFace lo, GhostFace hi, double h,
                         LineRange lines) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const int per_row = 2 * g.ghost;
  const std::int64_t row = e / per_row;
  if (row >= lines.count[0] * lines.count[1]) return;
  const int j = static_cast<int>(e - row * per_row);
  const int side = j / g.ghost, k = j % g.ghost + 1;
  const std::int64_t y = lines.begin[0] + row % lines.count[0];
  const std::int64_t z = lines.begin[1] + row / lines.count[0];
  const std::int64_t n = g.n[0];
  T* base = u + g.index(0, y, z);
  const GhostFace face = side == 0 ? lo : hi;
  const BoundaryKind kind = static_cast<BoundaryKind>(face.kind);
  base[side == 0 ? -k : n - 1 + k] =
      constant_ghost<T>(kind, face.value, k, h, base[ghost_source(kind, side, k, n)]);
}

// Dirichlet nodes: blockIdx.y picks the face (faces listed in the CPU's order x-, x+, y-, ...),
// threads stride over its nodes.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    set_dirichlet_kernel(T* __restrict__ u, DeviceGrid g, DirichletFaces f) {
  const int face = blockIdx.y;
  const int axis = f.axis[face];
  const OtherAxes o = other_axes(axis);
  const std::int64_t na = g.n[o.first], nodes = na * g.n[o.second];
  const T value = static_cast<T>(f.value[face]);
  std::int64_t c[3] = {0, 0, 0};
  c[axis] = f.side[face] == 0 ? 0 : g.n[axis] - 1;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < nodes; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    c[o.first] = i % na;
    c[o.second] = i / na;
    // Edges and corners shared with a later face take that face's value, as on the CPU,
    // which sets the faces one after another in this order.
    bool later_face_owns = false;
    for (int h = face + 1; h < f.count; ++h)
      later_face_owns = later_face_owns || c[f.axis[h]] == (f.side[h] == 0 ? 0 : g.n[f.axis[h]] - 1);
    if (!later_face_owns) u[g.index(c[0], c[1], c[2])] = value;
  }
}

// The boundary pass (launch_boundary_pass). Every node it writes is computed from one
// interior node: the node's mirror m (per axis outside the interior: the periodic image, or
// the reflection k -> k for ghost -k), whose value is g of the last Dirichlet face through m
// when the pass sets Dirichlet nodes, else the field; then the ghost rule of each axis on
// which the node lies outside, in the order x, y, z. That is exactly the arithmetic of the
// CPU's fill (x ghosts from the interior, y ghosts from the x-padded rows, z ghosts from the
// x,y-padded planes) after its Dirichlet nodes: no node depends on another written one, so
// one launch does all faces without ordering.
// The written nodes come in three lists, each a range of blocks of one launch:
//   y rows:   whole rows x = -R .. n_x+R-1 (coalesced; x = 0 .. n_x-1 when the pass fills no
//             ghosts) for y in `ys` (the y ghost rows and Dirichlet rows), z in [z0, z1);
//   z planes: every row y = -R .. n_y+R-1 of the planes z in `zs` (z ghosts, Dirichlet planes);
//   row ends: the other rows (y in [y0, y1), z in [z0, z1)), `lanes` threads per row, one per
//             node x in `xs`: both ends' x ghosts and Dirichlet nodes, plus the alignment pad
//             that completes the ghosts' 32-byte sectors (written as zeros, never read), so
//             that no scattered sector is written in part. These nodes lie apart on every row
//             (one sector per end): giving a row's nodes to neighbouring lanes lets one warp
//             instruction write whole sectors of several rows.
// Registers: a handful; no shared memory.
struct NodeRanges {  // two ranges of coordinates, low end and high end of an axis
  std::int64_t begin[2];
  int count[2];
  __host__ __device__ int total() const { return count[0] + count[1]; }
  __host__ __device__ std::int64_t at(std::int64_t j) const {
    return j < count[0] ? begin[0] + j : begin[1] + (j - count[0]);
  }
};

struct BoundaryPlan {
  int kind[kFaces];  // BoundaryKind, -1 on inactive axes
  double value[kFaces];
  double spacing[3];
  bool dirichlet;  // set the Dirichlet nodes (and mirror them as g)
  NodeRanges xs, ys, zs;
  int lanes_log2;  // threads per row end: 1 << lanes_log2 >= xs.total()
  std::int64_t y0, y1, z0, z1;
  int ghosts;             // ghost layers written: R, or 0 when the pass fills none
  std::int64_t row_len;   // n_x + 2 ghosts
  std::int64_t nodes[3];  // threads of the y rows, the z planes, the row ends
  int row_chunks;         // warps per row of the first two lists
  unsigned blocks[2];     // blocks of the y rows and the z planes
};

// A node of the row-end list: its row (y, z) is interior and, when the pass sets Dirichlet
// nodes, on no Dirichlet face (those rows are in the other lists), so only x can be outside
// and only an x face can own the mirror. write_row_nodes's arithmetic for that case, without
// its y and z part: the row ends are most of the pass's threads (2 per row, 512^2 rows on a
// 512^3 grid), and the general function made it issue-bound (ncu, 512^3 fp64: 78% SM busy,
// 33% of DRAM bandwidth, 81 us).
template <typename T>
__device__ __forceinline__ T row_end_value(const T* __restrict__ u, const DeviceGrid& g,
                                           const BoundaryPlan& b, std::int64_t x,
                                           std::int64_t row) {
  constexpr int kDirichlet = static_cast<int>(BoundaryKind::dirichlet);
  const std::int64_t n = g.n[0];
  const int side = x < 0 ? 0 : x >= n ? 1 : -1;  // the face x lies beyond, if any
  const int kind = b.kind[side == 1 ? 1 : 0];
  const int k = side == 0 ? static_cast<int>(-x) : side == 1 ? static_cast<int>(x - n + 1) : 0;
  const std::int64_t m =
      side < 0 ? x : ghost_source(static_cast<BoundaryKind>(kind), side, k, n);
  T v;
  if (b.dirichlet && b.kind[1] == kDirichlet && m == n - 1)
    v = static_cast<T>(b.value[1]);
  else if (b.dirichlet && b.kind[0] == kDirichlet && m == 0)
    v = static_cast<T>(b.value[0]);
  else
    v = u[row + m];
  if (side >= 0)
    v = constant_ghost<T>(static_cast<BoundaryKind>(kind), b.value[side], k, b.spacing[0], v);
  return v;
}

// A y row or z plane row (y, z) of the first two lists, written whole: what depends on y and
// z alone (their mirrors, ghost layers and rules, and whether a y or z Dirichlet face owns the
// mirror row) is found once per thread, then the x part and the node: the mirror's value (g of
// the last Dirichlet face through the mirror, else the field's), then the rules of x, y and z, for
// the nodes x = x_first + 32 j, j < kRowGroup: a warp's store instruction writes 32 neighbouring
// nodes, whole sectors, while each thread does the row's work once for kRowGroup nodes.
constexpr int kRowGroup = 4;

template <typename T>
__device__ __forceinline__ void write_row_nodes(T* __restrict__ u, const DeviceGrid& g,
                                                const BoundaryPlan& b, std::int64_t y,
                                                std::int64_t z, std::int64_t x_first) {
  constexpr int kDirichlet = static_cast<int>(BoundaryKind::dirichlet);
  const std::int64_t c[3] = {0, y, z};
  std::int64_t m[3] = {0, y, z};
  int k[3] = {0, 0, 0}, kind[3];
  double value[3];
#pragma unroll
  for (int a = 1; a < 3; ++a) {
    const std::int64_t n = g.n[a];
    kind[a] = b.kind[2 * a];
    value[a] = b.value[2 * a];
    if (c[a] < 0) {
      k[a] = static_cast<int>(-c[a]);
      m[a] = ghost_source(static_cast<BoundaryKind>(kind[a]), 0, k[a], n);
    } else if (c[a] >= n) {
      k[a] = static_cast<int>(c[a] - n + 1);
      kind[a] = b.kind[2 * a + 1];
      value[a] = b.value[2 * a + 1];
      m[a] = ghost_source(static_cast<BoundaryKind>(kind[a]), 1, k[a], n);
    }
  }
  int owner_yz = -1;  // the last Dirichlet face of y or z through the mirror row
  if (b.dirichlet) {
#pragma unroll
    for (int f = kFaces - 1; f >= 2; --f)
      if (owner_yz < 0 && b.kind[f] == kDirichlet && m[f / 2] == (f % 2 == 0 ? 0 : g.n[f / 2] - 1))
        owner_yz = f;
  }
  const std::int64_t mirror_row = g.index(0, m[1], m[2]);
  const std::int64_t row = g.index(0, y, z);
  const std::int64_t nx = g.n[0];
  const std::int64_t x_end = nx + b.ghosts;
#pragma unroll
  for (int j = 0; j < kRowGroup; ++j) {
    const std::int64_t x = x_first + 32 * j;
    if (x >= x_end) break;
    int kx = 0, kind_x = b.kind[0];
    double value_x = b.value[0];
    std::int64_t mx = x;
    if (x < 0) {
      kx = static_cast<int>(-x);
      mx = ghost_source(static_cast<BoundaryKind>(kind_x), 0, kx, nx);
    } else if (x >= nx) {
      kx = static_cast<int>(x - nx + 1);
      kind_x = b.kind[1];
      value_x = b.value[1];
      mx = ghost_source(static_cast<BoundaryKind>(kind_x), 1, kx, nx);
    }
    int owner = owner_yz;
    if (b.dirichlet && owner < 0) {
      if (b.kind[1] == kDirichlet && mx == nx - 1)
        owner = 1;
      else if (b.kind[0] == kDirichlet && mx == 0)
        owner = 0;
    }
    T v;
    if (owner >= 0) {
      double gv = b.value[0];
#pragma unroll
      for (int f = 1; f < kFaces; ++f)
        if (owner == f) gv = b.value[f];
      v = static_cast<T>(gv);
    } else {
      v = u[mirror_row + mx];
    }
    if (kx != 0)
      v = constant_ghost<T>(static_cast<BoundaryKind>(kind_x), value_x, kx, b.spacing[0], v);
#pragma unroll
    for (int a = 1; a < 3; ++a)
      if (k[a] != 0)
        v = constant_ghost<T>(static_cast<BoundaryKind>(kind[a]), value[a], k[a], b.spacing[a], v);
    u[row + x] = v;
  }
}

// I: the type of the thread numbering within each list, 32-bit unsigned whenever the lists fit
// (the usual case), so that the divisions turning a thread's number into coordinates are
// hardware 32-bit ones instead of the 64-bit division routine. In the first two lists a warp
// takes 32 kRowGroup nodes of one row (row_chunks warps per row).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    boundary_pass_kernel(T* __restrict__ u, DeviceGrid g, BoundaryPlan b) {
  if (blockIdx.x < b.blocks[0] + b.blocks[1]) {
    const bool planes = blockIdx.x >= b.blocks[0];
    const I i =
        static_cast<I>(blockIdx.x - (planes ? b.blocks[0] : 0)) * kThreads + threadIdx.x;
    if (i >= static_cast<I>(b.nodes[planes ? 1 : 0])) return;
    const I warp = i / 32;
    const I row = warp / static_cast<I>(b.row_chunks);
    const I chunk = warp - row * static_cast<I>(b.row_chunks);
    const std::int64_t x_first =
        static_cast<std::int64_t>(chunk) * (32 * kRowGroup) + (i % 32) - b.ghosts;
    std::int64_t y, z;
    if (!planes) {
      const I rows_per_z = static_cast<I>(b.ys.total());
      y = b.ys.at(row % rows_per_z);
      z = b.z0 + static_cast<std::int64_t>(row / rows_per_z);
    } else {
      const I rows_per_plane = static_cast<I>(g.n[1] + 2 * b.ghosts);
      y = static_cast<std::int64_t>(row % rows_per_plane) - b.ghosts;
      z = b.zs.at(row / rows_per_plane);
    }
    write_row_nodes(u, g, b, y, z, x_first);
    return;
  }
  const I i = static_cast<I>(blockIdx.x - b.blocks[0] - b.blocks[1]) * kThreads + threadIdx.x;
  if (i >= static_cast<I>(b.nodes[2])) return;
  const int lane = static_cast<int>(i & ((1u << b.lanes_log2) - 1));
  if (lane >= b.xs.total()) return;
  const I row = i >> b.lanes_log2;
  const I rows_per_z = static_cast<I>(b.y1 - b.y0);
  const std::int64_t x = b.xs.at(lane);
  const std::int64_t y = b.y0 + static_cast<std::int64_t>(row % rows_per_z);
  const std::int64_t z = b.z0 + static_cast<std::int64_t>(row / rows_per_z);
  const std::int64_t row0 = g.index(0, y, z);
  const bool pad = x < -g.ghost || x >= g.n[0] + g.ghost;
  u[row0 + x] = pad ? T(0) : row_end_value(u, g, b, x, row0);
}

// Statistics: blocks stride over pieces of rows (kStatsChunk nodes each), reduce in double
// within the block (warp shuffles, then one value per warp in shared memory), one partial
// per block. Shared memory: 8 warps x 32 bytes.
constexpr std::int64_t kStatsChunk = 8 * kThreads;

__device__ inline void combine(StatsPartial& a, const StatsPartial& b) {
  a.min = fmin(a.min, b.min);
  a.max = fmax(a.max, b.max);
  a.total += b.total;
  a.non_finite += b.non_finite;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    stats_kernel(const T* __restrict__ u, DeviceGrid g, bool trap_x, bool trap_y, bool trap_z,
                 const double* __restrict__ capacity, StatsPartial* __restrict__ partials) {
  StatsPartial s{INFINITY, -INFINITY, 0.0, 0};
  const std::int64_t chunks_per_row = (g.n[0] + kStatsChunk - 1) / kStatsChunk;
  const std::int64_t pieces = chunks_per_row * g.n[1] * g.n[2];
  for (std::int64_t piece = blockIdx.x; piece < pieces; piece += gridDim.x) {
    const std::int64_t row = piece / chunks_per_row;
    const std::int64_t x0 = (piece % chunks_per_row) * kStatsChunk;
    const std::int64_t y = row % g.n[1], z = row / g.n[1];
    const double wy = trap_y && (y == 0 || y == g.n[1] - 1) ? 0.5 : 1.0;
    const double wz = trap_z && (z == 0 || z == g.n[2] - 1) ? 0.5 : 1.0;
    const double wzy = wz * wy;
    const T* r = u + g.index(0, y, z);
    const double* c = capacity ? capacity + row * g.n[0] : nullptr;
    const std::int64_t x1 = min(x0 + kStatsChunk, g.n[0]);
    for (std::int64_t x = x0 + threadIdx.x; x < x1; x += blockDim.x) {
      const double v = static_cast<double>(r[x]);
      if (c && c[x] == 0.0) continue;  // inside a void: no part of the body
      if (!isfinite(v)) {
        ++s.non_finite;
        continue;
      }
      const double wx = trap_x && (x == 0 || x == g.n[0] - 1) ? 0.5 : 1.0;
      s.min = fmin(s.min, v);
      s.max = fmax(s.max, v);
      s.total += c ? wzy * wx * c[x] * v : wzy * wx * v;
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    StatsPartial o;
    o.min = __shfl_down_sync(0xffffffffu, s.min, off);
    o.max = __shfl_down_sync(0xffffffffu, s.max, off);
    o.total = __shfl_down_sync(0xffffffffu, s.total, off);
    o.non_finite = __shfl_down_sync(0xffffffffu, s.non_finite, off);
    combine(s, o);
  }
  __shared__ StatsPartial warps[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) combine(s, warps[w]);
    partials[blockIdx.x] = s;
  }
}

// Backend::sample: value j is the node with compact index nodes[j].
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const T* __restrict__ u, DeviceGrid g, const std::int64_t* __restrict__ nodes,
                  double* __restrict__ values, std::int64_t count) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= count) return;
  const std::int64_t i = nodes[j];
  const std::int64_t x = i % g.n[0], y = (i / g.n[0]) % g.n[1], z = i / (g.n[0] * g.n[1]);
  values[j] = static_cast<double>(u[g.index(x, y, z)]);
}


// The queued slots' values moved to buffers.ready, in order (the stream waited for).
void empty_slots(SampleBuffers& buffers) {
  if (buffers.queued.empty()) return;
  HEATSIM_CUDA_CHECK(cudaStreamSynchronize(buffers.stream));
  const double* host = static_cast<const double*>(buffers.host.data());
  for (std::size_t k = 0; k < buffers.queued.size(); ++k) {
    const double* slot = host + k * buffers.capacity;
    buffers.ready.emplace_back(slot, slot + buffers.queued[k]);
  }
  buffers.queued.clear();
}

}  // namespace

template <typename T>
void queue_sample(const T* field, const DeviceGrid& grid, const std::vector<std::int64_t>& nodes,
                  cudaStream_t stream, SampleBuffers& buffers) {
  const std::int64_t points = grid.n[0] * grid.n[1] * grid.n[2];
  for (const std::int64_t i : nodes)
    if (i < 0 || i >= points)
      throw std::out_of_range("sample: node " + std::to_string(i) + " is outside the grid of " +
                              std::to_string(points) + " nodes");
  const std::size_t count = nodes.size();
  if (count == 0) {
    empty_slots(buffers);
    buffers.ready.emplace_back();
    return;
  }
  // Slots enough for the samples between two waits of a run that samples every few steps (the
  // loop waits at least every 1000 steps); when they are all in use, they are emptied first.
  constexpr std::size_t kSlots = 64;
  if (count > buffers.capacity) {
    empty_slots(buffers);
    // The indices and the values, both 8-byte elements, in one allocation.
    buffers.device.allocate(2 * count * sizeof(std::int64_t));
    buffers.host = allocate_host_staging(kSlots * count * sizeof(double), true);
    buffers.capacity = count;
    buffers.slots = kSlots;
    buffers.nodes.clear();
  } else if (buffers.queued.size() == buffers.slots || buffers.stream != stream) {
    empty_slots(buffers);
  }
  buffers.stream = stream;
  std::int64_t* d_nodes = buffers.device.as<std::int64_t>();
  double* d_values = reinterpret_cast<double*>(d_nodes + buffers.capacity);
  if (buffers.nodes != nodes) {
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(d_nodes, nodes.data(), count * sizeof(std::int64_t),
                                       cudaMemcpyHostToDevice, stream));
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));  // `nodes` may change after the return
    buffers.nodes = nodes;
  }
  const std::int64_t blocks = (static_cast<std::int64_t>(count) + kThreads - 1) / kThreads;
  gather_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      field, grid, d_nodes, d_values, static_cast<std::int64_t>(count));
  HEATSIM_CUDA_CHECK_LAUNCH();
  // The device's values are read before the next sample's gather writes them (one stream).
  double* slot = static_cast<double*>(buffers.host.data()) + buffers.queued.size() * buffers.capacity;
  HEATSIM_CUDA_CHECK(
      cudaMemcpyAsync(slot, d_values, count * sizeof(double), cudaMemcpyDeviceToHost, stream));
  buffers.queued.push_back(count);
}

void collect_queued_samples(SampleBuffers& buffers, std::vector<std::vector<double>>& samples) {
  empty_slots(buffers);
  samples = std::move(buffers.ready);
  buffers.ready.clear();
}

template <typename T>
void sample_nodes(const T* field, const DeviceGrid& grid, const std::vector<std::int64_t>& nodes,
                  std::vector<double>& values, cudaStream_t stream, SampleBuffers& buffers) {
  queue_sample(field, grid, nodes, stream, buffers);
  empty_slots(buffers);
  values = std::move(buffers.ready.back());
  buffers.ready.pop_back();
}

template <typename T>
void launch_fill_ghosts(T* field, const DeviceGrid& grid, int axis, GhostFace lo, GhostFace hi,
                        double spacing, cudaStream_t stream) {
  const OtherAxes o = other_axes(axis);
  LineRange lines{};
  const int other[2] = {o.first, o.second};
  for (int i = 0; i < 2; ++i) {
    const int a = other[i];
    if (a >= grid.dims) {
      lines.begin[i] = 0;
      lines.count[i] = 1;
    } else if (a < axis) {  // earlier axes: their ghosts are filled already, include them
      lines.begin[i] = -grid.ghost;
      lines.count[i] = grid.n[a] + 2 * grid.ghost;
    } else {
      lines.begin[i] = 0;
      lines.count[i] = grid.n[a];
    }
  }
  const std::int64_t count = lines.count[0] * lines.count[1];
  if (axis == 0 && grid.ghost > 0 && grid.n[0] > grid.ghost) {
    const std::int64_t nodes = count * 2 * grid.ghost;
    const std::int64_t blocks = (nodes + kThreads - 1) / kThreads;
    fill_x_ghosts_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        field, grid, lo, hi, spacing, lines);
  } else {
    const std::int64_t blocks = (count + kThreads - 1) / kThreads;
    fill_ghosts_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        field, grid, axis, lo, hi, spacing, lines);
  }
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_set_dirichlet(T* field, const DeviceGrid& grid, const DirichletFaces& faces,
                          cudaStream_t stream) {
  if (faces.count == 0) return;
  std::int64_t largest = 1;
  for (int f = 0; f < faces.count; ++f) {
    const OtherAxes o = other_axes(faces.axis[f]);
    largest = std::max(largest, grid.n[o.first] * grid.n[o.second]);
  }
  const std::int64_t blocks = std::min<std::int64_t>((largest + kThreads - 1) / kThreads, 4096);
  const dim3 launch_grid(static_cast<unsigned>(blocks), static_cast<unsigned>(faces.count));
  set_dirichlet_kernel<T><<<launch_grid, kThreads, 0, stream>>>(field, grid, faces);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

bool boundary_pass_fills(const DeviceGrid& grid, std::size_t value_bytes) {
  const std::int64_t sector = 32 / static_cast<std::int64_t>(value_bytes);
  auto pad = [&](std::int64_t v) { return (v + sector - 1) / sector * sector - v; };
  const std::int64_t ends = 2 * (grid.ghost + 1) + pad(grid.ghost) + pad(grid.n[0] + grid.ghost);
  return ends <= 32;
}

template <typename T>
void launch_boundary_pass(T* field, const DeviceGrid& grid, const BoundaryFaces& faces,
                          bool set_dirichlet, bool fill_ghosts, cudaStream_t stream) {
  BoundaryPlan b{};
  for (int f = 0; f < kFaces; ++f) {
    b.kind[f] = f / 2 < grid.dims ? faces.kind[f] : -1;
    b.value[f] = faces.value[f];
  }
  for (int a = 0; a < 3; ++a) b.spacing[a] = faces.spacing[a];
  b.dirichlet = set_dirichlet;
  const int ghosts = fill_ghosts ? grid.ghost : 0;
  auto dirichlet = [&](int f) {
    return set_dirichlet && b.kind[f] == static_cast<int>(BoundaryKind::dirichlet);
  };
  // The nodes of `axis` the pass writes on every line along it: ghosts and Dirichlet nodes
  // of both ends, widened by `pad_lo` / `pad_hi` alignment-pad nodes.
  auto line_ends = [&](int axis, int pad_lo, int pad_hi) {
    NodeRanges r{};
    if (axis >= grid.dims) return r;
    const bool lo = dirichlet(2 * axis), hi = dirichlet(2 * axis + 1);
    r.begin[0] = -(ghosts + pad_lo);
    r.count[0] = ghosts + pad_lo + (lo ? 1 : 0);
    r.begin[1] = hi ? grid.n[axis] - 1 : grid.n[axis];
    r.count[1] = (hi ? 1 : 0) + ghosts + pad_hi;
    return r;
  };
  // Whole 32-byte sectors around the x ghosts: x = 0 is 128-byte aligned (DeviceGrid), and
  // the pad up to the next sector boundary lies inside the row's pitch.
  const std::int64_t sector = 32 / static_cast<std::int64_t>(sizeof(T));
  auto round_up = [](std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; };
  const int pad_lo = fill_ghosts ? static_cast<int>(round_up(grid.ghost, sector) - grid.ghost) : 0;
  const int pad_hi =
      fill_ghosts
          ? static_cast<int>(round_up(grid.n[0] + grid.ghost, sector) - grid.n[0] - grid.ghost)
          : 0;
  b.xs = line_ends(0, pad_lo, pad_hi);
  // A Dirichlet node's row end also rewrites the other nodes of its 32-byte sector with their
  // own values (the same bits), so that every sector the pass writes along x is whole.
  {
    NodeRanges whole = b.xs;
    const std::int64_t n = grid.n[0];
    if (n >= 2 * sector) {
      if (dirichlet(0)) whole.count[0] += static_cast<int>(sector - 1);
      if (dirichlet(1)) {
        const std::int64_t add = (n - 1) - (n - 1) / sector * sector;
        whole.begin[1] -= add;
        whole.count[1] += static_cast<int>(add);
      }
    }
    if (whole.total() <= 32) b.xs = whole;  // else the partial sectors, as the lanes allow
  }
  b.ys = line_ends(1, 0, 0);
  b.zs = line_ends(2, 0, 0);
  b.lanes_log2 = 0;
  while ((1 << b.lanes_log2) < b.xs.total()) ++b.lanes_log2;
  if (b.lanes_log2 > 5) throw std::logic_error("boundary pass: too many nodes per row end");
  // Rows of the row-end list: neither a y Dirichlet row nor on a z Dirichlet plane (those
  // rows are written whole).
  b.y0 = dirichlet(2) ? 1 : 0;
  b.y1 = grid.n[1] - (dirichlet(3) ? 1 : 0);
  b.z0 = dirichlet(4) ? 1 : 0;
  b.z1 = grid.n[2] - (dirichlet(5) ? 1 : 0);
  b.ghosts = ghosts;
  b.row_len = grid.n[0] + 2 * ghosts;
  const std::int64_t end_rows =
      std::max<std::int64_t>(b.y1 - b.y0, 0) * std::max<std::int64_t>(b.z1 - b.z0, 0);
  b.row_chunks = static_cast<int>((b.row_len + 32 * kRowGroup - 1) / (32 * kRowGroup));
  const std::int64_t row_threads = 32 * static_cast<std::int64_t>(b.row_chunks);
  b.nodes[0] = b.ys.total() * std::max<std::int64_t>(b.z1 - b.z0, 0) * row_threads;
  b.nodes[1] = b.zs.total() * (grid.n[1] + 2 * ghosts) * row_threads;
  b.nodes[2] = b.xs.total() > 0 ? end_rows << b.lanes_log2 : 0;
  std::int64_t blocks[3];
  for (int l = 0; l < 3; ++l) blocks[l] = (b.nodes[l] + kThreads - 1) / kThreads;
  const std::int64_t total = blocks[0] + blocks[1] + blocks[2];
  if (total == 0) return;
  if (total > 0x7fffffff) throw std::runtime_error("boundary pass: grid too large");
  b.blocks[0] = static_cast<unsigned>(blocks[0]);
  b.blocks[1] = static_cast<unsigned>(blocks[1]);
  // 32-bit numbering when every list's threads (rounded up to whole blocks) fit.
  if (total * kThreads <= 0xffffffffLL)
    boundary_pass_kernel<T, std::uint32_t>
        <<<static_cast<unsigned>(total), kThreads, 0, stream>>>(field, grid, b);
  else
    boundary_pass_kernel<T, std::int64_t>
        <<<static_cast<unsigned>(total), kThreads, 0, stream>>>(field, grid, b);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template <typename T>
int launch_stats(const T* field, const DeviceGrid& grid, const bool trapezoid[3],
                 StatsPartial* partials, int multiprocessors, cudaStream_t stream,
                 const double* capacity) {
  const std::int64_t chunks_per_row = (grid.n[0] + kStatsChunk - 1) / kStatsChunk;
  const std::int64_t pieces = chunks_per_row * grid.n[1] * grid.n[2];
  const int blocks = static_cast<int>(
      std::min<std::int64_t>({pieces, static_cast<std::int64_t>(8) * multiprocessors,
                              static_cast<std::int64_t>(kStatsMaxBlocks)}));
  stats_kernel<T><<<blocks, kThreads, 0, stream>>>(field, grid, trapezoid[0], trapezoid[1],
                                                   trapezoid[2], capacity, partials);
  HEATSIM_CUDA_CHECK_LAUNCH();
  return blocks;
}

template <typename T>
FieldStats device_field_stats(const T* field, const DeviceGrid& grid, const StencilProblem& p,
                              StatsPartial* partials, int multiprocessors, cudaStream_t stream,
                              const double* capacity) {
  bool trapezoid[3];
  for (int a = 0; a < 3; ++a) trapezoid[a] = a < p.dims && !p.periodic(a);
  const int blocks =
      launch_stats<T>(field, grid, trapezoid, partials, multiprocessors, stream, capacity);
  std::vector<StatsPartial> host(static_cast<std::size_t>(blocks));
  HEATSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), partials, host.size() * sizeof(StatsPartial),
                                     cudaMemcpyDeviceToHost, stream));
  HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  FieldStats st;
  st.min = std::numeric_limits<double>::infinity();
  st.max = -st.min;
  for (const StatsPartial& q : host) {
    st.min = std::min(st.min, q.min);
    st.max = std::max(st.max, q.max);
    st.total_heat += q.total;
    st.non_finite += q.non_finite;
  }
  return st;
}

#define HEATSIM_FIELD_KERNELS(T)                                                            \
  template void launch_fill_ghosts<T>(T*, const DeviceGrid&, int, GhostFace, GhostFace,   \
                                      double, cudaStream_t);                              \
  template void launch_set_dirichlet<T>(T*, const DeviceGrid&, const DirichletFaces&,     \
                                        cudaStream_t);                                    \
  template void launch_boundary_pass<T>(T*, const DeviceGrid&, const BoundaryFaces&, bool, \
                                        bool, cudaStream_t);                              \
  template int launch_stats<T>(const T*, const DeviceGrid&, const bool[3], StatsPartial*, \
                               int, cudaStream_t, const double*);                          \
  template FieldStats device_field_stats<T>(const T*, const DeviceGrid&,                  \
                                            const StencilProblem&, StatsPartial*, int,    \
                                            cudaStream_t, const double*);                 \
  template void sample_nodes<T>(const T*, const DeviceGrid&, const std::vector<std::int64_t>&, \
                                std::vector<double>&, cudaStream_t, SampleBuffers&);       \
  template void queue_sample<T>(const T*, const DeviceGrid&, const std::vector<std::int64_t>&, \
                                cudaStream_t, SampleBuffers&);
HEATSIM_FIELD_KERNELS(float)
HEATSIM_FIELD_KERNELS(double)
#undef HEATSIM_FIELD_KERNELS

}  // namespace heatsim::kernels::cuda
