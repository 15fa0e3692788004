// The kernel lab's driver for temporal-blocking's register march (march_kernel.cuh): one tile
// (LAB_DIMS 3: LAB_BX x LAB_BY threads of LAB_CY nodes along y; 2: LAB_BX threads of LAB_CY
// nodes along x; LAB_K steps per pass, value type LAB_T) per build. It checks one pass against
// LAB_K single steps of the same point operator read from global memory (bit for bit, random
// field and ghosts, output poisoned, a size that is no tile multiple), then times passes at
// the bench's size. Built and run by scripts/kernel-lab/sweep.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/register_tiling/register_sweep.hpp"
#include "kernels/cuda/temporal_blocking/march_kernel.cuh"

using namespace heatsim::kernels::cuda;
using heatsim::kernels::kMaxSourceFields;
// LAB_BOX 1: the radius-1 box (27 points), else the star (7); LAB_SUMS 1: the march in sums
// (temporal_sum_march_kernel; boxes take only it), else the march of three planes of values.
#ifndef LAB_BOX
#define LAB_BOX 0
#endif
#ifndef LAB_SUMS
#define LAB_SUMS LAB_BOX
#endif
#ifndef LAB_BUF
#define LAB_BUF 2
#endif
#ifndef LAB_DIMS
#define LAB_DIMS 3
#endif
// LAB_FLUX 1: the conservative flux operator over materials as classes (a byte per node and a
// table of pair conductances, dt/C and sources per class; FluxPoint's classes form, 3D), with
// one source whose factor changes from step to step; the march of values.
#ifndef LAB_FLUX
#define LAB_FLUX 0
#endif
// LAB_RADIUS: the stencil's radius (2D row marches; the 3D marches take radius 1).
#ifndef LAB_RADIUS
#define LAB_RADIUS 1
#endif
constexpr int kDims = LAB_DIMS;
constexpr int kR = LAB_RADIUS;
static_assert(kDims == 2 || kR == 1, "the 3D marches take radius 1");
[[maybe_unused]] constexpr int kTaps = LAB_BOX ? kBoxTaps : kStarTaps;
using T = LAB_T;
#if LAB_FLUX
using Op = FluxPoint<T, 3, CoefficientForm::classes, false, false>;
#else
using Op = StencilPoint<T, kDims, kR, kTaps>;
#endif
using Args = typename Op::Args;
#if LAB_DIMS == 3
using Tile = MarchTile<LAB_BX, LAB_BY, LAB_CY, LAB_K, LAB_BUF>;
#else
using Tile = RowMarchTile<LAB_BX, LAB_CY, LAB_K, LAB_BUF, kR>;
#endif

namespace {

DeviceGrid grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz, int ghost) {
  const std::int64_t align = 128 / sizeof(T);
  auto up = [](std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; };
  DeviceGrid g;
  g.dims = kDims;
  g.ghost = ghost;
  g.n[0] = nx, g.n[1] = ny, g.n[2] = nz;
  const std::int64_t x_offset = up(ghost, align);
  const int gz = kDims == 3 ? ghost : 0;
  g.pitch_y = up(x_offset + nx + ghost, align);
  g.pitch_z = g.pitch_y * (ny + 2 * ghost);
  g.origin = gz * g.pitch_z + ghost * g.pitch_y + x_offset;
  g.total = g.pitch_z * (nz + 2 * gz);
  return g;
}

// One single step over every node of the padded field that has its neighbours in it.
__global__ void reference_step(Args a) {
  const DeviceGrid& g = a.grid;
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x - g.ghost + kR;
  const std::int64_t y = std::int64_t(blockIdx.y) - g.ghost + kR;
  const std::int64_t z = kDims == 3 ? std::int64_t(blockIdx.z) - g.ghost + kR : 0;
  if (x >= g.n[0] + g.ghost - kR) return;
  const std::int64_t i = g.index(x, y, z);
  a.out[i] = Op::point(a, Op::enter_unstaged(a), global_near<Op, false>(a, nullptr, i, 0, x, y, z));
}

// A well-mixed 64-bit hash of element i (`salt` picks one of several independent streams).
__device__ std::uint64_t mix(std::int64_t i, std::uint64_t salt) {
  std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + salt;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

// Values 280-380 from a hash of the element (every padded element, ghosts too).
__global__ void random_fill(T* u, std::int64_t total) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const std::uint64_t h = mix(i, 0x632BE59BD9B4E019ull);
  u[i] = T(280.0 + 100.0 * double(h >> 11) * (1.0 / 9007199254740992.0));
}

template <typename U>
__device__ long long bits(U v) {
  if constexpr (sizeof(U) == 8) return __double_as_longlong(v);
  return __float_as_int(v);
}

// counts[0]: interior nodes whose bits differ; counts[1]: 1 + the largest difference in 1e-9
// (0 when none differ).
__global__ void compare(DeviceGrid g, const T* got, const T* want, unsigned long long* counts) {
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (x >= g.n[0]) return;
  const std::int64_t i = g.index(x, blockIdx.y, blockIdx.z);
  const T a = got[i], b = want[i];
  if (bits(a) != bits(b)) {
    const unsigned long long n = atomicAdd(&counts[0], 1ull);
    const double d = fabs(double(a) - double(b));
    atomicMax(&counts[1],
              d == d ? 1ull + static_cast<unsigned long long>(fmin(d * 1e9, 1e18)) : ~0ull);
    if (n < 3)
      printf("  (%lld, %u, %u): %.17g, want %.17g\n", (long long)x, blockIdx.y, blockIdx.z,
             double(a), double(b));
  }
}

#if LAB_FLUX
// A class per padded node from a hash of the element: 0 .. classes - 1. LAB_BLOCKS > 0: the
// classes in blocks of LAB_BLOCKS^3 elements (a hash of the block), as materials in regions.
#ifndef LAB_BLOCKS
#define LAB_BLOCKS 0
#endif
__global__ void random_classes(std::uint8_t* c, std::int64_t total, int classes,
                               std::int64_t pitch_y, std::int64_t pitch_z) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  std::int64_t key = i;
  if (LAB_BLOCKS > 0) {
    const std::int64_t z = i / pitch_z, y = (i % pitch_z) / pitch_y, x = i % pitch_y;
    key = ((z / LAB_BLOCKS) * 4096 + y / LAB_BLOCKS) * 4096 + x / LAB_BLOCKS;
  }
  c[i] = static_cast<std::uint8_t>(mix(key, 0x8CB92BA72F3D8DD7ull) %
                                   static_cast<std::uint64_t>(classes));
}
#endif

struct Pass {
  Args args;
  PassFactors<T> factors;
  dim3 grid;
  std::int64_t chunk;  // 2D
  MarchSplit split;    // 3D
  std::size_t bytes;
};

constexpr auto lab_kernel() {
#if LAB_DIMS == 2
  return temporal_row_march_kernel<Op, Tile>;
#elif LAB_SUMS
  return temporal_sum_march_kernel<Op, Tile>;
#else
  return temporal_march_kernel<Op, Tile>;
#endif
}

Pass plan(const Args& a, const PassFactors<T>& factors, int sms) {
  const auto kernel = lab_kernel();
#if LAB_DIMS == 3 && !LAB_SUMS
  Pass p{a, factors, {}, 0, {}, march_shared_bytes<Op, Tile>()};
#else
  Pass p{a, factors, {}, 0, {}, Tile::shared_bytes(sizeof(T))};
#endif
  int device = 0, most = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  HEATSIM_CUDA_CHECK(
      cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (p.bytes > static_cast<std::size_t>(most)) {
    std::printf("does not fit (shared %zu of %d bytes)\n", p.bytes, most);
    std::exit(3);
  }
  HEATSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(p.bytes)));
  int resident = 0;
  HEATSIM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Tile::threads, p.bytes));
  if (resident < 1) {
    std::printf("does not launch (shared %zu bytes)\n", p.bytes);
    std::exit(3);
  }
  const DeviceGrid& g = a.grid;
  const std::int64_t tiles_x = (g.n[0] + Tile::out_x - 1) / Tile::out_x;
  const std::int64_t slots = std::int64_t(resident) * sms;
#if LAB_DIMS == 3
  {
    const std::int64_t tiles = tiles_x * ((g.n[1] + Tile::out_y - 1) / Tile::out_y);
    std::int64_t blocks = 0;
    p.split = march_split(tiles_x, tiles, g.n[2], 3 * Tile::depth - 1, slots, blocks);
    p.chunk = p.split.chunk;
    p.grid = dim3(unsigned(blocks));
  }
#else
  p.chunk = march_chunk(tiles_x, g.n[1], (3 * Tile::depth) / 2, slots);
  p.grid = dim3(unsigned(tiles_x), unsigned((g.n[1] + p.chunk - 1) / p.chunk));
#endif
  return p;
}

void launch(const Pass& p, const T* in, T* out) {
  Args a = p.args;
  a.in = in;
  a.out = out;
#if LAB_DIMS == 3 && !LAB_SUMS
  lab_kernel()<<<p.grid, dim3(Tile::bx, Tile::by), p.bytes>>>(a, p.factors, p.split);
#elif LAB_DIMS == 3
  lab_kernel()<<<p.grid, dim3(Tile::bx, Tile::by), p.bytes>>>(a, p.split);
#else
  lab_kernel()<<<p.grid, Tile::bx, p.bytes>>>(a, p.chunk);
#endif
  HEATSIM_CUDA_CHECK_LAUNCH();
}

// Checks one pass at nx x ny x nz against K single steps; times passes when `seconds` > 0.
bool run(std::int64_t nx, std::int64_t ny, std::int64_t nz, double seconds, int sms) {
  const DeviceGrid g = grid_of(nx, ny, nz, Tile::depth * kR);
  Args a;
  a.grid = g;
  PassFactors<T> factors;
#if LAB_FLUX
  T* step_factors = nullptr;  // the factors of step s at step_factors + s * kMaxSourceFields
  // Four classes: pair conductances 0.2-1 (not symmetric in the table: any value is read as
  // given), dt/C 0.04-0.07, one source per class, its factor 1 + 0.1 s at step s.
  ClassTable<T> table{};
  const int classes = 4;
  for (int c = 0; c < classes; ++c) {
    for (int d = 0; d < classes; ++d)
      table.pair[c * kPairClasses + d] = T(0.2 + 0.1 * c + 0.17 * d);
    table.k[c] = T(0.5 + 0.1 * c);
    table.dt_over_capacity[c] = T(0.04 + 0.01 * c);
    table.source[c * kMaxSourceFields] = T(0.3 - 0.1 * c);
  }
  ClassTable<T>* d_table;
  std::uint8_t* d_classes;
  HEATSIM_CUDA_CHECK(cudaMalloc(&d_table, sizeof table));
  HEATSIM_CUDA_CHECK(cudaMemcpy(d_table, &table, sizeof table, cudaMemcpyHostToDevice));
  HEATSIM_CUDA_CHECK(cudaMalloc(&d_classes, g.total));
  random_classes<<<unsigned((g.total + 255) / 256), 256>>>(d_classes, g.total, classes, g.pitch_y,
                                                           g.pitch_z);
  HEATSIM_CUDA_CHECK_LAUNCH();
  a.node_class = d_classes;
  a.class_table = d_table;
  a.classes = classes;
  a.sources = 1;
  a.inv_h2[0] = T(1.0), a.inv_h2[1] = T(0.9), a.inv_h2[2] = T(1.1);
  T rows[kMaxBlockedDepth * kMaxSourceFields] = {};
  for (int s = 0; s < Tile::depth; ++s)
    rows[s * kMaxSourceFields] = factors.step[s][0] = T(1.0 + 0.1 * s);
  HEATSIM_CUDA_CHECK(cudaMalloc(&step_factors, sizeof rows));
  HEATSIM_CUDA_CHECK(cudaMemcpy(step_factors, rows, sizeof rows, cudaMemcpyHostToDevice));
#else
  a.source = T(1e-3);
  // Distinct weights summing to about 1, so that a tap read from the wrong place or summed out
  // of order shows and the field stays bounded.
  const int rz = kDims == 3 ? kR : 0;
  const int e = 2 * kR + 1;
  int taps = 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -kR; dy <= kR; ++dy)
      for (int dx = -kR; dx <= kR; ++dx) taps += is_tap<kTaps, kR>(dx, dy, dz);
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -kR; dy <= kR; ++dy)
      for (int dx = -kR; dx <= kR; ++dx)
        if (is_tap<kTaps, kR>(dx, dy, dz))
          a.weights.w[weight_index<kDims, kR>(dx, dy, dz)] =
              T((1.0 + 0.013 * (dx + e * dy + e * e * dz + 7)) / taps);
#endif
  T *in, *out, *r0, *r1;
  const std::size_t bytes = g.total * sizeof(T);
  HEATSIM_CUDA_CHECK(cudaMalloc(&in, bytes));
  HEATSIM_CUDA_CHECK(cudaMalloc(&out, bytes));
  HEATSIM_CUDA_CHECK(cudaMalloc(&r0, bytes));
  HEATSIM_CUDA_CHECK(cudaMalloc(&r1, bytes));
  const unsigned fill_blocks = unsigned((g.total + 255) / 256);
  random_fill<<<fill_blocks, 256>>>(in, g.total);
  HEATSIM_CUDA_CHECK_LAUNCH();
  HEATSIM_CUDA_CHECK(cudaMemcpy(r0, in, bytes, cudaMemcpyDeviceToDevice));
  HEATSIM_CUDA_CHECK(cudaMemcpy(r1, in, bytes, cudaMemcpyDeviceToDevice));
  HEATSIM_CUDA_CHECK(cudaMemset(out, 0xff, bytes));  // NaN
  const Pass p = plan(a, factors, sms);
  launch(p, in, out);
  for (int s = 0; s < Tile::depth; ++s) {
    Args r = a;
#if LAB_FLUX
    r.factor = step_factors + s * kMaxSourceFields;
#endif
    r.in = s % 2 ? r1 : r0;
    r.out = s % 2 ? r0 : r1;
    const dim3 grid(unsigned((nx + 2 * g.ghost - 2 * kR + 127) / 128),
                    unsigned(ny + 2 * g.ghost - 2 * kR),
                    unsigned(kDims == 3 ? nz + 2 * g.ghost - 2 : 1));
    reference_step<<<grid, 128>>>(r);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
  const T* ref = Tile::depth % 2 ? r1 : r0;
  unsigned long long* counts;
  HEATSIM_CUDA_CHECK(cudaMalloc(&counts, 2 * sizeof(unsigned long long)));
  HEATSIM_CUDA_CHECK(cudaMemset(counts, 0, 2 * sizeof(unsigned long long)));
  compare<<<dim3(unsigned((nx + 127) / 128), unsigned(ny), unsigned(nz)), 128>>>(g, out, ref,
                                                                                 counts);
  HEATSIM_CUDA_CHECK_LAUNCH();
  unsigned long long host_counts[2];
  HEATSIM_CUDA_CHECK(cudaMemcpy(host_counts, counts, sizeof host_counts, cudaMemcpyDeviceToHost));
  cudaFree(counts);
  const long long wrong = static_cast<long long>(host_counts[0]);
  const double worst = host_counts[1] ? double(host_counts[1] - 1) / 1e9 : 0.0;
  std::printf("%lldx%lldx%lld: %lld of %lld nodes differ (worst %.3g)%s", (long long)nx,
              (long long)ny, (long long)nz, (long long)wrong, (long long)(nx * ny * nz), worst,
              seconds > 0 ? "" : "\n");
  if (seconds > 0) {
    cudaEvent_t e0, e1;
    HEATSIM_CUDA_CHECK(cudaEventCreate(&e0));
    HEATSIM_CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; ++i) launch(p, i % 2 ? out : in, i % 2 ? in : out);
    HEATSIM_CUDA_CHECK(cudaEventRecord(e0));
    int passes = 0;
    float ms = 0;
    for (int round = 0; round < 4 && ms < seconds * 1e3; ++round) {
      const int n = passes == 0 ? 4 : passes;
      for (int i = 0; i < n; ++i)
        launch(p, (passes + i) % 2 ? out : in, (passes + i) % 2 ? in : out);
      passes += n;
      HEATSIM_CUDA_CHECK(cudaEventRecord(e1));
      HEATSIM_CUDA_CHECK(cudaEventSynchronize(e1));
      HEATSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    }
    const double rate = double(nx) * ny * nz * Tile::depth * passes / (ms * 1e-3) / 1e9;
    std::printf("; %d passes in %.2f ms: %.1f GStencil/s (chunk %lld, blocks %u)\n", passes, ms,
                rate, (long long)p.chunk, p.grid.x * p.grid.y * p.grid.z);
  }
  cudaFree(in), cudaFree(out), cudaFree(r0), cudaFree(r1);
#if LAB_FLUX
  cudaFree(d_table), cudaFree(d_classes), cudaFree(step_factors);
#endif
  return wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  // N: the timed size (N^3, or N^2 in 2D); "small" checks one small grid only (for the
  // sanitizers).
  const bool small = argc > 1 && std::strcmp(argv[1], "small") == 0;
  const int n = argc > 1 && !small ? std::atoi(argv[1]) : kDims == 3 ? 512 : 8192;
  int device = 0, sms = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
#if LAB_DIMS == 3
  std::printf(
      "%s%s%s%s tile %dx%d (threads %dx%d, %d per thread) depth %d, %d buffers, shared %zu B: ",
      sizeof(T) == 8 ? "fp64" : "fp32",
      LAB_FLUX  ? " flux (classes)"
      : LAB_BOX ? " box"
                : " star",
      LAB_SUMS ? " sums" : "", "", Tile::tile_x, Tile::tile_y, Tile::bx, Tile::by, Tile::cy,
      Tile::depth, Tile::buffers, Tile::shared_bytes(sizeof(T)));
  if (small) return run(70, 45, 19, 0, sms) ? 0 : 1;
  bool ok = run(203, 157, 91, 0, sms);
  std::printf("  ");
  ok = run(n, n, n, 0.3, sms) && ok;
#else
  std::printf(
      "%s 2D%s radius %d row %d (threads %d, %d per thread) depth %d, %d buffers, shared %zu B: ",
      sizeof(T) == 8 ? "fp64" : "fp32", LAB_BOX ? " box" : " star", kR, Tile::tile_x, Tile::bx,
      Tile::cx, Tile::depth, Tile::buffers, Tile::shared_bytes(sizeof(T)));
  if (small) return run(1500, 37, 1, 0, sms) ? 0 : 1;
  bool ok = run(3001, 157, 1, 0, sms);
  std::printf("  ");
  ok = run(n, n, 1, 0.3, sms) && ok;
#endif
  return ok ? 0 : 1;
}
