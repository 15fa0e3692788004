// Ghost fill, Dirichlet nodes and statistics on the device. These touch the faces of the
// field (ghosts, boundary nodes) or read it once (statistics); the sweeps are elsewhere.
#include <algorithm>
#include <cmath>

#include "check.cuh"
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
// layer k = 1..g. The rules (layout.hpp) in the CPU's arithmetic: the Dirichlet reflection
// 2g - u is formed in T, the Neumann offset 2*k*h*q in double and rounded once.
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
  const T two_glo = static_cast<T>(2.0 * lo.value);
  const T two_ghi = static_cast<T>(2.0 * hi.value);
  for (int k = 1; k <= g.ghost; ++k) {
    T* left = base - k * st;
    T* right = base + (n - 1 + k) * st;
    switch (lo.kind) {
      case static_cast<int>(BoundaryKind::periodic): *left = base[(n - k) * st]; break;
      case static_cast<int>(BoundaryKind::dirichlet): *left = two_glo - base[k * st]; break;
      default: *left = base[k * st] + static_cast<T>(2.0 * k * h * lo.value); break;
    }
    switch (hi.kind) {
      case static_cast<int>(BoundaryKind::periodic): *right = base[(k - 1) * st]; break;
      case static_cast<int>(BoundaryKind::dirichlet):
        *right = two_ghi - base[(n - 1 - k) * st];
        break;
      default: *right = base[(n - 1 - k) * st] + static_cast<T>(2.0 * k * h * hi.value); break;
    }
  }
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
                 StatsPartial* __restrict__ partials) {
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
    const std::int64_t x1 = min(x0 + kStatsChunk, g.n[0]);
    for (std::int64_t x = x0 + threadIdx.x; x < x1; x += blockDim.x) {
      const double v = static_cast<double>(r[x]);
      if (!isfinite(v)) {
        ++s.non_finite;
        continue;
      }
      const double wx = trap_x && (x == 0 || x == g.n[0] - 1) ? 0.5 : 1.0;
      s.min = fmin(s.min, v);
      s.max = fmax(s.max, v);
      s.total += wzy * wx * v;
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

}  // namespace

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
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  fill_ghosts_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      field, grid, axis, lo, hi, spacing, lines);
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

template <typename T>
int launch_stats(const T* field, const DeviceGrid& grid, const bool trapezoid[3],
                 StatsPartial* partials, int multiprocessors, cudaStream_t stream) {
  const std::int64_t chunks_per_row = (grid.n[0] + kStatsChunk - 1) / kStatsChunk;
  const std::int64_t pieces = chunks_per_row * grid.n[1] * grid.n[2];
  const int blocks = static_cast<int>(
      std::min<std::int64_t>({pieces, static_cast<std::int64_t>(8) * multiprocessors,
                              static_cast<std::int64_t>(kStatsMaxBlocks)}));
  stats_kernel<T><<<blocks, kThreads, 0, stream>>>(field, grid, trapezoid[0], trapezoid[1],
                                                   trapezoid[2], partials);
  HEATSIM_CUDA_CHECK_LAUNCH();
  return blocks;
}

#define HEATSIM_FIELD_KERNELS(T)                                                            \
  template void launch_fill_ghosts<T>(T*, const DeviceGrid&, int, GhostFace, GhostFace,   \
                                      double, cudaStream_t);                              \
  template void launch_set_dirichlet<T>(T*, const DeviceGrid&, const DirichletFaces&,     \
                                        cudaStream_t);                                    \
  template int launch_stats<T>(const T*, const DeviceGrid&, const bool[3], StatsPartial*, \
                               int, cudaStream_t);
HEATSIM_FIELD_KERNELS(float)
HEATSIM_FIELD_KERNELS(double)
#undef HEATSIM_FIELD_KERNELS

}  // namespace heatsim::kernels::cuda
