// CUDA level operations for the multigrid solver (kernels/level_ops.hpp), fp64.
//
// The arithmetic is the CPU reference's (kernels/cpu/cpu_level_ops.cpp) operation for
// operation: neighbour sums in the order x-, x+, y-, y+, z-, z+, restriction and prolongation
// terms in the same loop order, and every product and sum rounded on its own (__dmul_rn,
// __dadd_rn: never contracted into FMAs, which the host build does not use either). residual,
// apply, smooth, restrict_residual, prolong_add, zero_free and axpby therefore give the CPU's
// values bit for bit. dot sums in another order, fixed all the same: each block over a fixed
// grid-stride share in a fixed tree, then the block partials in a fixed tree in one block (no
// atomics, a block count set by the length alone), so a solve repeats itself bit for bit and its
// iterates differ from the CPU's only through the rounding of the CG scalars.
//
// Every vector stays in device memory from create_vector to the next setup; a solve moves
// nothing but one double per dot product to the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.cuh"
#include "device_memory.cuh"
#include "level_ops.cuh"

namespace heatsim::kernels {
namespace cuda {
namespace {

constexpr int kThreads = 128;         // threads per block of the node kernels (along x)
constexpr int kMaxRowBlocks = 65535;  // gridDim.y limit; rows beyond it are strided
constexpr int kDotThreads = 256;
constexpr int kDotMaxBlocks = 1024;  // also the threads of the final dot block
constexpr long long kDotPerThread = 8;

// One level's operator as the kernels see it (device pointers, passed by value).
struct LevelView {
  int dims = 1;
  long long n[3] = {1, 1, 1};
  int periodic[3] = {0, 0, 0};
  const double* diagonal = nullptr;
  const double* conductance[3] = {nullptr, nullptr, nullptr};
  const std::uint8_t* fixed = nullptr;
};

// Per fine index of one axis: the coarse nodes it interpolates from (AxisTransfer::from).
struct Interp {
  long long coarse[2];
  double weight[2];
};

// Per coarse index of one axis: the fine nodes that interpolate from it, in increasing fine
// order (compressed rows: offset[I] .. offset[I + 1]).
struct Gather {
  const long long* offset;
  const long long* fine;
  const double* weight;
};

// Calls f(j, G_ij) for each neighbour j of node i = (x, y, z) in the order x-, x+, y-, y+, z-, z+
// (the CPU's visit_neighbours).
template <typename F>
__device__ inline void visit_neighbours(const LevelView& L, long long x, long long y, long long z,
                                        long long i, F&& f) {
  const long long c[3] = {x, y, z};
  long long stride = 1;
  for (int a = 0; a < 3 && a < L.dims; ++a) {
    const long long n = L.n[a];
    const double* G = L.conductance[a];
    if (c[a] > 0)
      f(i - stride, G[i - stride]);
    else if (L.periodic[a])
      f(i + (n - 1) * stride, G[i + (n - 1) * stride]);
    if (c[a] < n - 1)
      f(i + stride, G[i]);
    else if (L.periodic[a])
      f(i - (n - 1) * stride, G[i]);
    stride *= n;
  }
}

__device__ inline double neighbour_sum(const LevelView& L, const double* v, long long x,
                                       long long y, long long z, long long i) {
  double s = 0.0;
  visit_neighbours(L, x, y, z, i,
                   [&](long long j, double g) { s = __dadd_rn(s, __dmul_rn(g, v[j])); });
  return s;
}

// The node kernels: threadIdx.x + blockIdx.x * blockDim.x walks x (every node, or every second
// for a colour), blockIdx.y strides over the rows (y, z). One thread per node and row, no
// shared memory, a few dozen registers.

// diagonal_i = a_i + sum of the node's conductances, summed in the neighbour order.
__global__ void __launch_bounds__(kThreads)
    diagonal_kernel(LevelView L, const double* __restrict__ node_term, double* __restrict__ d) {
  const long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (x >= L.n[0]) return;
  for (long long row = blockIdx.y; row < L.n[1] * L.n[2]; row += gridDim.y) {
    const long long y = row % L.n[1], z = row / L.n[1];
    const long long i = row * L.n[0] + x;
    double s = node_term[i];
    visit_neighbours(L, x, y, z, i, [&](long long, double g) { s = __dadd_rn(s, g); });
    d[i] = s;
  }
}

// out = b - A x (b given) or A x (b null) on the free nodes, 0 on the fixed ones.
__global__ void __launch_bounds__(kThreads)
    operator_kernel(LevelView L, const double* __restrict__ b, const double* __restrict__ x,
                    double* __restrict__ out) {
  const long long xi = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (xi >= L.n[0]) return;
  for (long long row = blockIdx.y; row < L.n[1] * L.n[2]; row += gridDim.y) {
    const long long y = row % L.n[1], z = row / L.n[1];
    const long long i = row * L.n[0] + xi;
    if (L.fixed[i]) {
      out[i] = 0.0;
      continue;
    }
    const double ax = __dsub_rn(__dmul_rn(L.diagonal[i], x[i]), neighbour_sum(L, x, xi, y, z, i));
    out[i] = b ? __dsub_rn(b[i], ax) : ax;
  }
}

// One colour of red-black Gauss-Seidel: the free nodes with (x + y + z) % 2 == colour take
// old_i + omega * ((b_i + sum G_ij old_j) / diagonal_i - old_i). `old` is x itself, except
// where a periodic axis of odd length joins nodes of one colour (then a copy of x from before
// the sweep, as the CPU does). Threads walk every second x.
__global__ void __launch_bounds__(kThreads)
    colour_kernel(LevelView L, const double* __restrict__ b, double* x, const double* old,
                  int colour, double omega) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  for (long long row = blockIdx.y; row < L.n[1] * L.n[2]; row += gridDim.y) {
    const long long y = row % L.n[1], z = row / L.n[1];
    const long long xi = 2 * t + ((colour + y + z) & 1);
    if (xi >= L.n[0]) continue;
    const long long i = row * L.n[0] + xi;
    if (L.fixed[i]) continue;
    const double xo = old[i];
    const double gs = __ddiv_rn(__dadd_rn(b[i], neighbour_sum(L, old, xi, y, z, i)), L.diagonal[i]);
    x[i] = __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
  }
}

// b_coarse = P^T r_fine on the free coarse nodes (0 on the fixed ones). One thread per coarse
// node gathers its fine nodes, z then y then x, as the CPU does.
__global__ void __launch_bounds__(kThreads)
    restrict_kernel(LevelView C, long long fine_nx, long long fine_ny, const double* __restrict__ r,
                    double* __restrict__ b, Gather gx, Gather gy, Gather gz) {
  const long long X = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (X >= C.n[0]) return;
  for (long long row = blockIdx.y; row < C.n[1] * C.n[2]; row += gridDim.y) {
    const long long Y = row % C.n[1], Z = row / C.n[1];
    const long long I = row * C.n[0] + X;
    if (C.fixed[I]) {
      b[I] = 0.0;
      continue;
    }
    double sum = 0.0;
    for (long long kz = gz.offset[Z]; kz < gz.offset[Z + 1]; ++kz)
      for (long long ky = gy.offset[Y]; ky < gy.offset[Y + 1]; ++ky) {
        const double wzy = __dmul_rn(gz.weight[kz], gy.weight[ky]);
        const double* fine_row = r + (gz.fine[kz] * fine_ny + gy.fine[ky]) * fine_nx;
        for (long long kx = gx.offset[X]; kx < gx.offset[X + 1]; ++kx)
          sum = __dadd_rn(sum, __dmul_rn(__dmul_rn(wzy, gx.weight[kx]), fine_row[gx.fine[kx]]));
      }
    b[I] = sum;
  }
}

// x_fine += P x_coarse on the free fine nodes; terms of weight 0 are skipped, as on the CPU.
__global__ void __launch_bounds__(kThreads)
    prolong_kernel(LevelView F, long long coarse_nx, long long coarse_ny,
                   const double* __restrict__ xc, double* __restrict__ xf,
                   const Interp* __restrict__ tx, const Interp* __restrict__ ty,
                   const Interp* __restrict__ tz) {
  const long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (x >= F.n[0]) return;
  const Interp ix = tx[x];
  for (long long row = blockIdx.y; row < F.n[1] * F.n[2]; row += gridDim.y) {
    const long long y = row % F.n[1], z = row / F.n[1];
    const long long i = row * F.n[0] + x;
    if (F.fixed[i]) continue;
    const Interp iz = tz[z], iy = ty[y];
    double sum = 0.0;
    for (int a = 0; a < 2; ++a) {
      if (iz.weight[a] == 0.0) continue;
      for (int bb = 0; bb < 2; ++bb) {
        if (iy.weight[bb] == 0.0) continue;
        const double* crow = xc + (iz.coarse[a] * coarse_ny + iy.coarse[bb]) * coarse_nx;
        const double wzy = __dmul_rn(iz.weight[a], iy.weight[bb]);
        for (int c = 0; c < 2; ++c)
          if (ix.weight[c] != 0.0)
            sum = __dadd_rn(sum, __dmul_rn(__dmul_rn(wzy, ix.weight[c]), crow[ix.coarse[c]]));
      }
    }
    xf[i] = __dadd_rn(xf[i], sum);
  }
}

__global__ void __launch_bounds__(kThreads)
    zero_free_kernel(const std::uint8_t* __restrict__ fixed, double* __restrict__ v, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    if (!fixed[i]) v[i] = 0.0;
}

// y = a x + b y, or y = a x when `assign` (b == 0: y's old values, NaN included, are dropped).
__global__ void __launch_bounds__(kThreads)
    axpby_kernel(double a, const double* x, double b, double* y, long long n, bool assign) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = assign ? __dmul_rn(a, x[i]) : __dadd_rn(__dmul_rn(a, x[i]), __dmul_rn(b, y[i]));
}

// Block-wide sum of s[0 .. kN) in a fixed tree; the result lands in s[0].
template <int kN>
__device__ inline void tree_sum(double* s) {
  for (int w = kN / 2; w > 0; w /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
  }
  __syncthreads();
}

// Per block: the sum of x_i y_i over its grid-stride share, in a fixed order.
__global__ void __launch_bounds__(kDotThreads)
    dot_partial_kernel(const double* x, const double* y, long long n, double* partial) {
  __shared__ double s[kDotThreads];
  double sum = 0.0;
  for (long long i = blockIdx.x * static_cast<long long>(kDotThreads) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * kDotThreads)
    sum += x[i] * y[i];
  s[threadIdx.x] = sum;
  tree_sum<kDotThreads>(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void __launch_bounds__(kDotMaxBlocks)
    dot_final_kernel(const double* partial, int count, double* result) {
  __shared__ double s[kDotMaxBlocks];
  s[threadIdx.x] = static_cast<int>(threadIdx.x) < count ? partial[threadIdx.x] : 0.0;
  tree_sum<kDotMaxBlocks>(s);
  if (threadIdx.x == 0) *result = s[0];
}

dim3 node_grid(long long threads_x, long long rows) {
  const long long bx = (threads_x + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(std::max(1LL, bx)),
              static_cast<unsigned>(std::clamp<long long>(rows, 1, kMaxRowBlocks)));
}

unsigned flat_blocks(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

template <typename T>
void copy_to_device(DeviceArray& dst, const T* src, std::size_t count, cudaStream_t stream) {
  dst.allocate(count * sizeof(T));
  if (count == 0) return;
  HEATSIM_CUDA_CHECK(
      cudaMemcpyAsync(dst.as<T>(), src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

class CudaLevelOps final : public LevelOps {
 public:
  CudaLevelOps() {
    int count = 0;
    HEATSIM_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0) throw std::runtime_error("cuda level ops: no CUDA device is visible");
    HEATSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HEATSIM_CUDA_CHECK(cudaMallocHost(&host_result_, sizeof(double)));
    partials_.allocate(kDotMaxBlocks * sizeof(double));
    result_.allocate(sizeof(double));
  }
  ~CudaLevelOps() override {
    // No throw from a destructor; at worst a failed release leaks.
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    if (host_result_) cudaFreeHost(host_result_);
  }
  CudaLevelOps(const CudaLevelOps&) = delete;
  CudaLevelOps& operator=(const CudaLevelOps&) = delete;

  std::string name() const override { return "cuda"; }

  void setup(const std::vector<LevelOperator>& levels) override {
    sync();
    levels_.clear();
    vectors_.clear();
    std::int64_t largest_conflict = 0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const LevelOperator& op = levels[l];
      auto L = std::make_unique<Level>();
      const std::int64_t np = op.points();
      const auto size_ok = [&](std::size_t s) { return s == static_cast<std::size_t>(np); };
      if (!size_ok(op.node_term.size()) || !size_ok(op.fixed.size()))
        throw std::invalid_argument("level " + std::to_string(l) + ": field sizes differ from " +
                                    "the grid's " + std::to_string(np) + " points");
      LevelView& v = L->view;
      v.dims = op.dims;
      for (int a = 0; a < kMaxDims; ++a) {
        v.n[a] = op.n[a];
        v.periodic[a] = a < op.dims && op.periodic[a];
        if (a < op.dims && !size_ok(op.conductance[a].size()))
          throw std::invalid_argument("level " + std::to_string(l) + ": conductance[" +
                                      std::to_string(a) + "] has the wrong size");
      }
      L->points = np;
      for (int a = 0; a < op.dims; ++a)
        L->colour_conflict = L->colour_conflict || (v.periodic[a] && op.n[a] % 2 == 1);
      if (L->colour_conflict) largest_conflict = std::max(largest_conflict, np);

      copy_to_device(L->fixed, op.fixed.data(), op.fixed.size(), stream_);
      for (int a = 0; a < kMaxDims; ++a) {
        if (a < op.dims)
          copy_to_device(L->conductance[a], op.conductance[a].data(), op.conductance[a].size(),
                         stream_);
        else
          L->conductance[a].allocate(0);
        v.conductance[a] = L->conductance[a].as<double>();
      }
      v.fixed = L->fixed.as<std::uint8_t>();
      DeviceArray node_term;
      copy_to_device(node_term, op.node_term.data(), op.node_term.size(), stream_);
      L->diagonal.allocate(static_cast<std::size_t>(np) * sizeof(double));
      v.diagonal = L->diagonal.as<double>();
      diagonal_kernel<<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(
          v, node_term.as<double>(), L->diagonal.as<double>());
      HEATSIM_CUDA_CHECK_LAUNCH();

      if (l > 0) set_transfers(*L, *levels_.back(), op, static_cast<int>(l));
      // The staging arrays (node_term, the transfer tables' host copies) go out of scope here.
      sync();
      levels_.push_back(std::move(L));
    }
    scratch_.allocate(static_cast<std::size_t>(largest_conflict) * sizeof(double));
  }

  int create_vector(int level) override {
    const Level& L = at(level);
    Vector v;
    v.level = level;
    v.size = L.points;
    v.data = std::make_unique<DeviceArray>();
    v.data->allocate(static_cast<std::size_t>(v.size) * sizeof(double));
    HEATSIM_CUDA_CHECK(cudaMemsetAsync(v.data->as<double>(), 0,
                                       static_cast<std::size_t>(v.size) * sizeof(double), stream_));
    vectors_.push_back(std::move(v));
    return static_cast<int>(vectors_.size()) - 1;
  }

  void upload(int v, const std::vector<double>& values) override {
    Vector& dst = vec(v);
    if (values.size() != static_cast<std::size_t>(dst.size))
      throw std::invalid_argument("level ops: upload of " + std::to_string(values.size()) +
                                  " values into a vector of " + std::to_string(dst.size));
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(dst.data->as<double>(), values.data(),
                                       values.size() * sizeof(double), cudaMemcpyHostToDevice,
                                       stream_));
    sync();  // `values` may go away once we return
  }

  void download(int v, std::vector<double>& values) override {
    Vector& src = vec(v);
    values.resize(static_cast<std::size_t>(src.size));
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(values.data(), src.data->as<double>(),
                                       values.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                       stream_));
    sync();
  }

  void residual(int level, int b, int x, int r) override {
    const Level& L = at(level);
    launch_operator(L, ptr(b, level), ptr(x, level), ptr(r, level));
  }

  void apply(int level, int x, int y) override {
    const Level& L = at(level);
    launch_operator(L, nullptr, ptr(x, level), ptr(y, level));
  }

  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    const Level& L = at(level);
    const double* bp = ptr(b, level);
    double* xp = ptr(x, level);
    const LevelView& v = L.view;
    const dim3 grid = node_grid((v.n[0] + 1) / 2, v.n[1] * v.n[2]);
    for (int s = 0; s < sweeps; ++s)
      for (int c = 0; c < 2; ++c) {
        const double* old = xp;
        if (L.colour_conflict) {
          HEATSIM_CUDA_CHECK(cudaMemcpyAsync(scratch_.as<double>(), xp,
                                             static_cast<std::size_t>(L.points) * sizeof(double),
                                             cudaMemcpyDeviceToDevice, stream_));
          old = scratch_.as<double>();
        }
        colour_kernel<<<grid, kThreads, 0, stream_>>>(v, bp, xp, old, reverse ? 1 - c : c, omega);
        HEATSIM_CUDA_CHECK_LAUNCH();
      }
  }

  void restrict_residual(int fine_level, int r_fine, int b_coarse) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const LevelView& v = C.view;
    restrict_kernel<<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(
        v, F.view.n[0], F.view.n[1], ptr(r_fine, fine_level), ptr(b_coarse, fine_level + 1),
        C.gather_view(0), C.gather_view(1), C.gather_view(2));
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void prolong_add(int fine_level, int x_coarse, int x_fine) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const LevelView& v = F.view;
    prolong_kernel<<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(
        v, C.view.n[0], C.view.n[1], ptr(x_coarse, fine_level + 1), ptr(x_fine, fine_level),
        C.interp[0].as<Interp>(), C.interp[1].as<Interp>(), C.interp[2].as<Interp>());
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void zero_free(int level, int v) override {
    const Level& L = at(level);
    zero_free_kernel<<<flat_blocks(L.points), kThreads, 0, stream_>>>(L.view.fixed, ptr(v, level),
                                                                      L.points);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  double dot(int x, int y) override {
    const Vector& a = vec(x);
    const Vector& b = vec(y);
    if (a.size != b.size) throw std::invalid_argument("level ops: dot of unequal sizes");
    const long long n = a.size;
    // The block count depends on the length alone, so the summation order does too.
    const long long per_block = kDotThreads * kDotPerThread;
    const int blocks =
        static_cast<int>(std::clamp<long long>((n + per_block - 1) / per_block, 1, kDotMaxBlocks));
    dot_partial_kernel<<<blocks, kDotThreads, 0, stream_>>>(
        a.data->as<double>(), b.data->as<double>(), n, partials_.as<double>());
    HEATSIM_CUDA_CHECK_LAUNCH();
    dot_final_kernel<<<1, kDotMaxBlocks, 0, stream_>>>(partials_.as<double>(), blocks,
                                                       result_.as<double>());
    HEATSIM_CUDA_CHECK_LAUNCH();
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(host_result_, result_.as<double>(), sizeof(double),
                                       cudaMemcpyDeviceToHost, stream_));
    sync();
    return *host_result_;
  }

  void axpby(double a, int x, double b, int y) override {
    const Vector& xv = vec(x);
    Vector& yv = vec(y);
    if (xv.size != yv.size) throw std::invalid_argument("level ops: axpby of unequal sizes");
    axpby_kernel<<<flat_blocks(yv.size), kThreads, 0, stream_>>>(
        a, xv.data->as<double>(), b, yv.data->as<double>(), yv.size, b == 0.0);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

 private:
  struct Level {
    LevelView view;
    std::int64_t points = 0;
    bool colour_conflict = false;
    DeviceArray diagonal, fixed;
    std::array<DeviceArray, kMaxDims> conductance;
    // Levels > 0: the transfers from the next finer level, per axis.
    std::array<DeviceArray, kMaxDims> interp;  // Interp per fine index
    std::array<DeviceArray, kMaxDims> gather_offset, gather_fine, gather_weight;

    Gather gather_view(int a) const {
      return {gather_offset[a].as<long long>(), gather_fine[a].as<long long>(),
              gather_weight[a].as<double>()};
    }
  };
  struct Vector {
    std::unique_ptr<DeviceArray> data;
    long long size = 0;
    int level = 0;
  };

  // The interpolation and restriction tables of coarse level C from fine level F (the CPU's
  // axis_transfer and gather lists, laid out flat).
  void set_transfers(Level& C, const Level& F, const LevelOperator& op, int l) {
    for (int a = 0; a < kMaxDims; ++a) {
      std::vector<std::int64_t> idx = op.fine_index[a];
      if (a >= op.dims) idx = {0};
      if (static_cast<std::int64_t>(idx.size()) != op.n[a])
        throw std::invalid_argument("level " + std::to_string(l) + ": fine_index[" +
                                    std::to_string(a) + "] has the wrong size");
      const std::int64_t fine_n = F.view.n[a];
      const AxisTransfer t = axis_transfer(fine_n, F.view.periodic[a] != 0, idx);
      std::vector<Interp> interp(static_cast<std::size_t>(fine_n));
      std::vector<std::vector<std::pair<long long, double>>> gather(
          static_cast<std::size_t>(op.n[a]));
      for (std::int64_t f = 0; f < fine_n; ++f)
        for (int k = 0; k < 2; ++k) {
          const AxisTransfer::Term& term = t.from[f][k];
          interp[f].coarse[k] = term.coarse;
          interp[f].weight[k] = term.weight;
          if (term.weight != 0.0) gather[term.coarse].push_back({f, term.weight});
        }
      std::vector<long long> offset{0}, fine;
      std::vector<double> weight;
      for (const auto& g : gather) {
        for (const auto& [f, w] : g) {
          fine.push_back(f);
          weight.push_back(w);
        }
        offset.push_back(static_cast<long long>(fine.size()));
      }
      copy_to_device(C.interp[a], interp.data(), interp.size(), stream_);
      copy_to_device(C.gather_offset[a], offset.data(), offset.size(), stream_);
      copy_to_device(C.gather_fine[a], fine.data(), fine.size(), stream_);
      copy_to_device(C.gather_weight[a], weight.data(), weight.size(), stream_);
      sync();  // the host tables die at the end of this iteration
    }
  }

  void launch_operator(const Level& L, const double* b, const double* x, double* out) {
    const LevelView& v = L.view;
    operator_kernel<<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(v, b, x, out);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  const Level& at(int level) const {
    if (level < 0 || level >= static_cast<int>(levels_.size()))
      throw std::out_of_range("level ops: no level " + std::to_string(level));
    return *levels_[static_cast<std::size_t>(level)];
  }
  Vector& vec(int v) { return vectors_.at(static_cast<std::size_t>(v)); }
  // The device data of vector v, which must have the points of `level`.
  double* ptr(int v, int level) {
    Vector& x = vec(v);
    if (x.size != at(level).points)
      throw std::invalid_argument("level ops: vector " + std::to_string(v) + " has " +
                                  std::to_string(x.size) + " values, level " +
                                  std::to_string(level) + " " + std::to_string(at(level).points) +
                                  " points");
    return x.data->as<double>();
  }
  void sync() { HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  cudaStream_t stream_ = nullptr;
  double* host_result_ = nullptr;  // pinned: the dot product's one value
  DeviceArray partials_, result_, scratch_;
  std::vector<std::unique_ptr<Level>> levels_;
  std::vector<Vector> vectors_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<LevelOps> make_cuda_level_ops() { return std::make_unique<cuda::CudaLevelOps>(); }

}  // namespace heatsim::kernels
