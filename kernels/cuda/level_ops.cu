// CUDA level operations for the multigrid solver (kernels/level_ops.hpp), fp64.
//
// The arithmetic is the CPU reference's (kernels/cpu/cpu_level_ops.cpp) operation for
// operation: neighbour sums in the order x-, x+, y-, y+, z-, z+ on compact levels and over the
// stencil offsets in their numbering on stencil levels, restriction and prolongation terms in
// the same loop order, and every product and sum rounded on its own (__dmul_rn,
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
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "check.cuh"
#include "device_memory.cuh"
#include "fused_sweep.cuh"
#include "level_ops.cuh"

namespace heatsim::kernels {
namespace cuda {
namespace {

constexpr int kThreads = 128;         // threads per block of the node kernels (along x)
constexpr int kMaxRowBlocks = 65535;  // gridDim.y limit; rows beyond it are strided
constexpr int kDotThreads = 256;
constexpr int kDotMaxBlocks = 1024;  // also the threads of the final dot block
constexpr long long kDotPerThread = 8;
constexpr long long kPieceChunk = 8192;  // nodes per block of a piece sum
// Levels of at most kSmallLevel nodes smooth in one block of kSmallThreads (small_smooth_kernel).
constexpr long long kSmallLevel = 8192;
constexpr int kSmallThreads = 512;
// Blocks of kThreads per SM the node kernels are compiled for (so their registers): stencil
// levels' and compact levels' kernels apart, chosen by measurement (docs/performance.md).
constexpr int kStencilBlocksPerSm = 4;
constexpr int kCompactBlocksPerSm = 16;

// One level's operator as the kernels see it (device pointers, passed by value). Compact
// levels: diagonal and conductance, exact, and the smoother's (kernels/level_ops.hpp):
// conductance32 and diagonal32; stencil levels: the smoother's operator alone, the entries off
// the centre in fp32 (LevelOperator's layout; the centre slot unused) and the centres in fp64.
struct LevelView {
  int dims = 1;
  long long n[3] = {1, 1, 1};
  int periodic[3] = {0, 0, 0};
  const double* diagonal = nullptr;
  const double* conductance[3] = {nullptr, nullptr, nullptr};
  const double* diagonal32 = nullptr;
  const float* conductance32[3] = {nullptr, nullptr, nullptr};
  const float* stencil = nullptr;
  const double* centre = nullptr;
  const std::uint8_t* fixed = nullptr;
};

// Per fine index of one axis: the coarse nodes it takes values from (AxisTransfer::from).
struct Interp {
  long long coarse[2];
  int offset[2];
};

// A coarse level's prolongation: its weights (LevelOperator::prolongation) and, per axis, the
// finer index of each of its nodes.
struct Prolongation {
  const float* weight = nullptr;  // fp32, as LevelOperator::prolongation
  const long long* fine_index[3] = {nullptr, nullptr, nullptr};
};

// Coordinate c + o on axis a, or -1 beyond a non-periodic end.
__device__ inline long long step(long long n, int periodic, long long c, int o) {
  c += o;
  if (c < 0) return periodic ? c + n : -1;
  if (c >= n) return periodic ? c - n : -1;
  return c;
}

// The device functions and node kernels take the level's dimensions as a template parameter
// D (launches dispatch on LevelView::dims, with_dims below): their loops over axes and stencil
// offsets unroll, so a thread issues its loads together rather than one after another, which
// is what the small coarse levels (latency, not bandwidth) are bound by.

// Per axis a < D, the coordinates at offsets -1, 0, +1 of c (step's -1 where none); 0 on the
// unused axes.
template <int D>
struct Around {
  long long at[3][3];
  __device__ Around(const LevelView& L, const long long c[3]) {
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
      for (int o = 0; o < 3; ++o) at[a][o] = a < D ? step(L.n[a], L.periodic[a], c[a], o - 1) : 0;
  }
};

// The row and column of a thread's row index: y = row % ny, z = row / ny (32-bit: rows < 2^31).
__device__ inline void split_row(long long row, long long ny, long long& y, long long& z) {
  const unsigned r = static_cast<unsigned>(row), n = static_cast<unsigned>(ny);
  y = r % n;
  z = r / n;
}

// start + sum_k A(i, j_k) v[j_k] over the stencil offsets k whose neighbour j_k exists, k
// increasing (the CPU's visit_stencil order), leaving out the offset `skip` (-1: none); with
// kAbs the terms' magnitudes |A(i, j_k) v[j_k]| (start >= 0). Every offset loads (a missing neighbour reads node i
// and adds 0): a branch per offset would make each load wait for the sum before it, 27
// round trips to memory per node, which is what bound the coarse levels. The sum starts at
// +0 (or a magnitude) and never becomes -0, so adding +0 where the CPU skips changes no bit.
template <int D, bool kAbs = false>
__device__ inline double stencil_sum(const LevelView& L, const double* v, long long x,
                                     long long y, long long z, long long i, int skip = -1,
                                     double start = 0.0) {
  constexpr int kp = D == 1 ? 3 : D == 2 ? 9 : 27;
  const long long np = L.n[0] * L.n[1] * L.n[2];
  const long long c[3] = {x, y, z};
  const Around<D> near(L, c);
  double s = start;
#pragma unroll
  for (int k = 0; k < kp; ++k) {
    const long long jx = near.at[0][k % 3];
    const long long jy = D > 1 ? near.at[1][(k / 3) % 3] : 0;
    const long long jz = D > 2 ? near.at[2][k / 9] : 0;
    const bool exists = k != skip && jx >= 0 && jy >= 0 && jz >= 0;
    const long long j = exists ? (jz * L.n[1] + jy) * L.n[0] + jx : i;
    constexpr int centre = kp / 2;
    const double a = k == centre ? L.centre[i] : static_cast<double>(L.stencil[k * np + i]);
    const double product = __dmul_rn(a, v[j]);
    s = __dadd_rn(s, exists ? (kAbs ? fabs(product) : product) : 0.0);
  }
  return s;
}

// Calls f(j, G_ij) for each neighbour j of node i = (x, y, z) in the order x-, x+, y-, y+, z-, z+
// (the CPU's visit_neighbours).
// kSmoother: the conductances rounded to fp32.
template <int D, bool kSmoother, typename F>
__device__ inline void visit_neighbours(const LevelView& L, long long x, long long y, long long z,
                                        long long i, F&& f) {
  const long long c[3] = {x, y, z};
  long long stride = 1;
#pragma unroll
  for (int a = 0; a < D; ++a) {
    const long long n = L.n[a];
    const auto* G = kSmoother ? nullptr : L.conductance[a];
    const auto* G32 = kSmoother ? L.conductance32[a] : nullptr;
    const auto g = [&](long long j) -> double {
      if constexpr (kSmoother) return G32[j];
      return G[j];
    };
    if (c[a] > 0)
      f(i - stride, g(i - stride));
    else if (L.periodic[a])
      f(i + (n - 1) * stride, g(i + (n - 1) * stride));
    if (c[a] < n - 1)
      f(i + stride, g(i));
    else if (L.periodic[a])
      f(i - (n - 1) * stride, g(i));
    stride *= n;
  }
}

template <int D, bool kSmoother>
__device__ inline double neighbour_sum(const LevelView& L, const double* v, long long x,
                                       long long y, long long z, long long i) {
  double s = 0.0;
  visit_neighbours<D, kSmoother>(
      L, x, y, z, i, [&](long long j, double g) { s = __dadd_rn(s, __dmul_rn(g, v[j])); });
  return s;
}

// (A v)_i (the CPU's row_product); S: a stencil level, else compact; kSmoother: the smoother's
// operator (stencil levels hold only that one).
template <int D, bool S, bool kSmoother>
__device__ inline double row_product(const LevelView& L, const double* v, long long x,
                                     long long y, long long z, long long i) {
  if constexpr (!S)
    return __dsub_rn(__dmul_rn(kSmoother ? L.diagonal32[i] : L.diagonal[i], v[i]),
                     neighbour_sum<D, kSmoother>(L, v, x, y, z, i));
  return stencil_sum<D>(L, v, x, y, z, i);
}

// The Gauss-Seidel value of node i from the values v of its neighbours, with the smoother's
// operator (the CPU's gauss_seidel).
template <int D, bool S>
__device__ inline double gauss_seidel(const LevelView& L, const double* b, const double* v,
                                      long long x, long long y, long long z, long long i) {
  if constexpr (!S)
    return __ddiv_rn(__dadd_rn(b[i], neighbour_sum<D, true>(L, v, x, y, z, i)), L.diagonal32[i]);
  constexpr int centre = D == 1 ? 1 : D == 2 ? 4 : 13;
  const double s = stencil_sum<D>(L, v, x, y, z, i, centre);
  return __ddiv_rn(__dsub_rn(b[i], s), L.centre[i]);
}

// The node kernels: threadIdx.x + blockIdx.x * blockDim.x walks x (every node, or every second
// for a colour), blockIdx.y strides over the rows (y, z). One thread per node and row, no
// shared memory, a few dozen registers.

// diagonal_i = a_i + sum of the node's conductances, summed in the neighbour order. d may be
// node_term itself (each node's term read before its diagonal is written): not restrict.
template <int D, bool kSmoother>
__global__ void __launch_bounds__(kThreads)
    diagonal_kernel(LevelView L, const double* node_term, double* d) {
  const long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (x >= L.n[0]) return;
  for (long long row = blockIdx.y; row < L.n[1] * L.n[2]; row += gridDim.y) {
    long long y, z;
    split_row(row, L.n[1], y, z);
    const long long i = row * L.n[0] + x;
    double s = node_term[i];
    visit_neighbours<D, kSmoother>(L, x, y, z, i,
                                   [&](long long, double g) { s = __dadd_rn(s, g); });
    d[i] = s;
  }
}

// out_i = f(x, y, z, i) at the thread's x on every row of the free nodes, 0 on the fixed ones.
template <typename F>
__device__ inline void each_free_node(const LevelView& L, double* out, F&& f) {
  const long long xi = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (xi >= L.n[0]) return;
  for (long long row = blockIdx.y; row < L.n[1] * L.n[2]; row += gridDim.y) {
    const long long i = row * L.n[0] + xi;
    long long y, z;
    split_row(row, L.n[1], y, z);
    out[i] = L.fixed[i] ? 0.0 : f(xi, y, z, i);
  }
}

// out = b - A x (b given) or A x (b null) on the free nodes, 0 on the fixed ones; kSmoother:
// with the smoother's operator.
template <int D, bool S, bool kSmoother>
__global__ void __launch_bounds__(kThreads, S ? kStencilBlocksPerSm : kCompactBlocksPerSm)
    operator_kernel(LevelView L, const double* __restrict__ b, const double* __restrict__ x,
                    double* __restrict__ out) {
  each_free_node(L, out, [&](long long xi, long long y, long long z, long long i) {
    const double ax = row_product<D, S, kSmoother>(L, x, xi, y, z, i);
    return b ? __dsub_rn(b[i], ax) : ax;
  });
}

// out_i = |b_i| + sum_j |A_ij x_j| on the free nodes, 0 on the fixed ones (the CPU's magnitude).
template <int D, bool S>
__global__ void __launch_bounds__(kThreads, S ? kStencilBlocksPerSm : kCompactBlocksPerSm)
    magnitude_kernel(LevelView L, const double* __restrict__ b, const double* __restrict__ x,
                     double* __restrict__ out) {
  each_free_node(L, out, [&](long long xi, long long y, long long z, long long i) {
    double s = fabs(b[i]);
    if constexpr (S) {
      s = stencil_sum<D, true>(L, x, xi, y, z, i, -1, s);
    } else {
      s = __dadd_rn(s, fabs(__dmul_rn(L.diagonal[i], x[i])));
      visit_neighbours<D, false>(L, xi, y, z, i, [&](long long j, double g) {
        s = __dadd_rn(s, fabs(__dmul_rn(g, x[j])));
      });
    }
    return s;
  });
}

// One colour of the Gauss-Seidel sweep: on compact levels the free nodes with (x + y + z) % 2
// == colour, on stencil levels those whose parities (x%2 + 2 (y%2) + 4 (z%2)) are the colour;
// each takes old_i + omega * (the Gauss-Seidel value - old_i). `old` is x itself, except where a
// periodic axis of odd length joins nodes of one colour (then a copy of x from before the sweep,
// as the CPU does). Threads walk every second x; on stencil levels blockIdx.y strides over the
// colour's rows alone (y and z of its parities), on compact levels over every row.
template <int D, bool S>
__global__ void __launch_bounds__(kThreads, S ? kStencilBlocksPerSm : kCompactBlocksPerSm)
    colour_kernel(LevelView L, const double* __restrict__ b, double* x, const double* old,
                  int colour, double omega) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long cy = (colour >> 1) & 1, cz = (colour >> 2) & 1;
  // Stencil levels: the colour's rows, (ny - cy + 1) / 2 per plane of its z parity.
  const long long colour_ny = (L.n[1] - cy + 1) / 2, colour_nz = (L.n[2] - cz + 1) / 2;
  const long long rows = S ? colour_ny * colour_nz : L.n[1] * L.n[2];
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    long long y, z, first;
    if constexpr (S) {
      split_row(row, colour_ny, y, z);
      y = cy + 2 * y;
      z = cz + 2 * z;
      first = colour & 1;
    } else {
      split_row(row, L.n[1], y, z);
      first = (colour + y + z) & 1;
    }
    const long long xi = 2 * t + first;
    if (xi >= L.n[0]) continue;
    const long long i = (z * L.n[1] + y) * L.n[0] + xi;
    if (L.fixed[i]) continue;
    const double xo = old[i];
    const double gs = gauss_seidel<D, S>(L, b, old, xi, y, z, i);
    x[i] = __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
  }
}

// Colours 2m and 2m + 1 of a stencil level of 2 or 3 dimensions in one launch: they share
// their rows (the y and z parities m), and a node of one has no neighbour of the other outside
// its own row. So a block takes whole rows: the row's nodes of the colour that comes first (x
// even, or odd when `reverse`), a barrier, then the other's. The values of colour_kernel's two
// launches (the CPU's paired sweep does the same), with the row's stencil sectors read once
// instead of twice. Not where a periodic axis of odd length joins nodes of one colour.
template <int D>
__global__ void __launch_bounds__(kThreads, kStencilBlocksPerSm)
    paired_colour_kernel(LevelView L, const double* __restrict__ b, double* x, int pair,
                         bool reverse, double omega) {
  const long long cy = pair & 1, cz = (pair >> 1) & 1;
  const long long colour_ny = (L.n[1] - cy + 1) / 2, colour_nz = (L.n[2] - cz + 1) / 2;
  const long long rows = colour_ny * colour_nz;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    long long y, z;
    split_row(row, colour_ny, y, z);
    y = cy + 2 * y;
    z = cz + 2 * z;
    const long long start = (z * L.n[1] + y) * L.n[0];
    for (int half = 0; half < 2; ++half) {
      const long long parity = reverse ? 1 - half : half;
      for (long long xi = parity + 2 * static_cast<long long>(threadIdx.x); xi < L.n[0];
           xi += 2 * static_cast<long long>(blockDim.x)) {
        const long long i = start + xi;
        if (L.fixed[i]) continue;
        const double xo = x[i];
        const double gs = gauss_seidel<D, true>(L, b, x, xi, y, z, i);
        x[i] = __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
      }
      __syncthreads();  // the first colour's values of the row, before the other reads them
    }
  }
}

// The whole smoothing of a small level (Gauss-Seidel colours as colour_kernel, `sweeps` times,
// `reverse` as LevelOps::smooth) in one block: a barrier between colours instead of a launch
// per colour, since on the coarse levels a launch costs more than its work. Not for levels
// whose colours conflict across a periodic wrap (those copy x before each colour).
template <int D, bool S>
__global__ void __launch_bounds__(kSmallThreads)
    small_smooth_kernel(LevelView L, const double* __restrict__ b, double* x, int sweeps,
                        bool reverse, int colours, double omega) {
  const unsigned nx = static_cast<unsigned>(L.n[0]), ny = static_cast<unsigned>(L.n[1]);
  const unsigned nz = static_cast<unsigned>(L.n[2]);
  for (int s = 0; s < sweeps; ++s)
    for (int c = 0; c < colours; ++c) {
      const unsigned colour = static_cast<unsigned>(reverse ? colours - 1 - c : c);
      // Stencil levels: the colour's own nodes, (x, y, z) = its parities + 2 (u, v, w); compact
      // levels: every node, those of the colour's parity taken.
      const unsigned px = S ? colour & 1 : 0, py = S ? (colour >> 1) & 1 : 0;
      const unsigned pz = S ? (colour >> 2) & 1 : 0, step = S ? 2 : 1;
      const unsigned cx = (nx - px + step - 1) / step, cy = (ny - py + step - 1) / step;
      const unsigned count = cx * cy * ((nz - pz + step - 1) / step);
      for (unsigned k = threadIdx.x; k < count; k += blockDim.x) {
        const unsigned xi = px + step * (k % cx), y = py + step * ((k / cx) % cy);
        const unsigned z = pz + step * (k / (cx * cy));
        if (!S && ((xi + y + z) & 1) != colour) continue;
        const long long i = (static_cast<long long>(z) * ny + y) * nx + xi;
        if (L.fixed[i]) continue;
        const double xo = x[i];
        const double gs = gauss_seidel<D, S>(L, b, x, xi, y, z, i);
        x[i] = __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
      }
      __syncthreads();
    }
}

// The block-wide sum of each thread's `value` in a fixed tree over s[kSmallThreads], the same
// for every thread on return.
__device__ inline double block_sum(double value, double* s) {
  s[threadIdx.x] = value;
  for (int w = kSmallThreads / 2; w > 0; w /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
  }
  __syncthreads();
  const double sum = s[0];
  __syncthreads();  // s is free again
  return sum;
}

// LevelOps::conjugate_gradients on a small level, whole, in one block: the default's steps and
// stopping rule, a barrier between them instead of a launch and a host round trip per dot
// product. The operator is apply()'s (exact on a compact level, the smoother's on a stencil
// one). Dot products sum in block_sum's fixed order.
template <int D, bool S>
__global__ void __launch_bounds__(kSmallThreads)
    small_cg_kernel(LevelView L, const double* __restrict__ b, double* x, double* r, double* p,
                    double* q, double tolerance, long long limit) {
  __shared__ double s[kSmallThreads];
  const unsigned nx = static_cast<unsigned>(L.n[0]), ny = static_cast<unsigned>(L.n[1]);
  const unsigned np = nx * ny * static_cast<unsigned>(L.n[2]);
  // out = v_b - A v on the free nodes (A v where v_b is null), 0 on the fixed ones.
  const auto product = [&](const double* vb, const double* v, double* out) {
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x) {
      if (L.fixed[i]) {
        out[i] = 0.0;
        continue;
      }
      const double av = row_product<D, S, false>(L, v, i % nx, (i / nx) % ny, i / (nx * ny), i);
      out[i] = vb ? __dsub_rn(vb[i], av) : av;
    }
    __syncthreads();
  };
  const auto dot = [&](const double* u, const double* v) {
    double part = 0.0;
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x) part += u[i] * v[i];
    return block_sum(part, s);
  };
  product(b, x, r);
  double rr = dot(r, r);
  if (rr == 0.0) return;
  const double stop = rr * tolerance * tolerance;
  for (unsigned i = threadIdx.x; i < np; i += blockDim.x) p[i] = r[i];
  __syncthreads();
  for (long long it = 0; it < limit && rr > stop; ++it) {
    product(nullptr, p, q);
    const double pq = dot(p, q);
    if (pq <= 0.0) break;
    const double alpha = rr / pq;
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x) {
      x[i] = __dadd_rn(__dmul_rn(alpha, p[i]), x[i]);
      r[i] = __dadd_rn(__dmul_rn(-alpha, q[i]), r[i]);
    }
    __syncthreads();
    const double rr_next = dot(r, r);
    const double beta = rr_next / rr;
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x)
      p[i] = __dadd_rn(r[i], __dmul_rn(beta, p[i]));
    __syncthreads();
    rr = rr_next;
  }
}

// b_coarse = P^T r_fine on the free coarse nodes (0 on the fixed ones). One thread per coarse
// node gathers its finer nodes over the offsets in their numbering, as the CPU does.
template <int D>
__global__ void __launch_bounds__(kThreads)
    restrict_kernel(LevelView C, LevelView F, Prolongation P, const double* __restrict__ r,
                    double* __restrict__ b) {
  const long long X = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (X >= C.n[0]) return;
  const long long nc = C.n[0] * C.n[1] * C.n[2];
  constexpr int kp = D == 1 ? 3 : D == 2 ? 9 : 27;
  for (long long row = blockIdx.y; row < C.n[1] * C.n[2]; row += gridDim.y) {
    long long Y, Z;
    split_row(row, C.n[1], Y, Z);
    const long long I = row * C.n[0] + X;
    if (C.fixed[I]) {
      b[I] = 0.0;
      continue;
    }
    // The finer node of this one, and its neighbours' coordinates per axis.
    const long long f[3] = {P.fine_index[0][X], D > 1 ? P.fine_index[1][Y] : 0,
                            D > 2 ? P.fine_index[2][Z] : 0};
    const Around<D> near(F, f);
    // Every offset loads (stencil_sum's reasoning): a zero weight reads the node's own finer
    // node and adds +0, where the CPU skips it.
    const long long own = (f[2] * F.n[1] + f[1]) * F.n[0] + f[0];
    double term[kp];
#pragma unroll
    for (int k = 0; k < kp; ++k) {
      const double w = static_cast<double>(P.weight[k * nc + I]);
      const long long jx = near.at[0][k % 3];
      const long long jy = D > 1 ? near.at[1][(k / 3) % 3] : 0;
      const long long jz = D > 2 ? near.at[2][k / 9] : 0;
      const bool used = w != 0.0 && jx >= 0 && jy >= 0 && jz >= 0;
      const double rj = r[used ? (jz * F.n[1] + jy) * F.n[0] + jx : own];
      term[k] = used ? __dmul_rn(w, rj) : 0.0;
    }
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < kp; ++k) sum = __dadd_rn(sum, term[k]);
    b[I] = sum;
  }
}

// x_fine += P x_coarse on the free fine nodes, over the coarse nodes z, then y, then x, as the
// CPU does.
template <int D>
__global__ void __launch_bounds__(kThreads)
    prolong_kernel(LevelView F, LevelView C, Prolongation P, const double* __restrict__ xc,
                   double* __restrict__ xf, const Interp* __restrict__ tx,
                   const Interp* __restrict__ ty, const Interp* __restrict__ tz) {
  const long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (x >= F.n[0]) return;
  const long long nc = C.n[0] * C.n[1] * C.n[2];
  const Interp ix = tx[x];
  for (long long row = blockIdx.y; row < F.n[1] * F.n[2]; row += gridDim.y) {
    long long y, z;
    split_row(row, F.n[1], y, z);
    const long long i = row * F.n[0] + x;
    if (F.fixed[i]) continue;
    const Interp iz = tz[z], iy = ty[y];
    // The up to 8 terms, each loaded whether used or not (stencil_sum's reasoning; an unused one
    // reads coarse node 0 and adds +0).
    double term[8];
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int bb = 0; bb < 2; ++bb)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const bool used = iz.coarse[a] >= 0 && iy.coarse[bb] >= 0 && ix.coarse[c] >= 0;
          const int o[3] = {ix.offset[c], iy.offset[bb], iz.offset[a]};
          int k = 0;
#pragma unroll
          for (int ax = D - 1; ax >= 0; --ax) k = 3 * k + o[ax] + 1;
          const long long J =
              used ? (iz.coarse[a] * C.n[1] + iy.coarse[bb]) * C.n[0] + ix.coarse[c] : 0;
          const double product =
              __dmul_rn(static_cast<double>(P.weight[(used ? k : 0) * nc + J]), xc[J]);
          term[4 * a + 2 * bb + c] = used ? product : 0.0;
        }
    double sum = 0.0;
#pragma unroll
    for (int t = 0; t < 8; ++t) sum = __dadd_rn(sum, term[t]);
    xf[i] = __dadd_rn(xf[i], sum);
  }
}

__global__ void __launch_bounds__(kThreads)
    zero_free_kernel(const std::uint8_t* __restrict__ fixed, double* __restrict__ v, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    if (!fixed[i]) v[i] = 0.0;
}

// to[i] = from[i] rounded to fp32.
__global__ void __launch_bounds__(kThreads)
    round_kernel(const double* __restrict__ from, float* __restrict__ to, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    to[i] = __double2float_rn(from[i]);
}

// A stencil level's smoother operator from its exact stencil (kp offsets, centre `centre_k`):
// the entries off the centre rounded to fp32, the centre moved by what their rounding took from
// the row, summed in the offsets' order (the CPU's round_stencil). The rounded centre slot is 0.
__global__ void __launch_bounds__(kThreads)
    round_stencil_kernel(const double* __restrict__ exact, float* __restrict__ rounded,
                         double* __restrict__ centre, long long np, int kp, int centre_k) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < np;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    double moved = 0.0;
    for (int k = 0; k < kp; ++k) {
      if (k == centre_k) continue;
      const double a = exact[k * np + i];
      const float r = __double2float_rn(a);
      moved = __dadd_rn(moved, __dsub_rn(a, static_cast<double>(r)));
      rounded[k * np + i] = r;
    }
    rounded[centre_k * np + i] = 0.0f;
    centre[i] = __dadd_rn(exact[centre_k * np + i], moved);
  }
}

// y = a x + b y, or y = a x when `assign` (b == 0: y's old values, NaN included, are dropped).
__global__ void __launch_bounds__(kThreads)
    axpby_kernel(double a, const double* x, double b, double* y, long long n, bool assign) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = assign ? __dmul_rn(a, x[i]) : __dadd_rn(__dmul_rn(a, x[i]), __dmul_rn(b, y[i]));
}

// The coarsest level's direct solve (BottomFactor::inverse(), m x m over the free nodes node[]):
// x[node[r]] += sum_c inverse[r m + c] rhs[node[c]], one warp a row, its lanes over the columns
// in a fixed order and then a fixed shuffle tree, so the sums are the same every run.
__global__ void __launch_bounds__(kThreads)
    bottom_product_kernel(const double* __restrict__ inverse, const long long* __restrict__ node,
                          long long m, const double* __restrict__ rhs, double* __restrict__ x) {
  const long long row = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (row >= m) return;  // whole warps: m rows are m warps
  const double* a = inverse + row * m;
  double s = 0.0;
  for (long long c = lane; c < m; c += 32) s = __dadd_rn(s, __dmul_rn(a[c], rhs[node[c]]));
  for (int o = 16; o > 0; o /= 2) s = __dadd_rn(s, __shfl_down_sync(0xffffffffu, s, o));
  if (lane == 0) x[node[row]] = __dadd_rn(x[node[row]], s);
}

// y = a (w x) + b y node by node, or y = a (w x) when `assign`.
__global__ void __launch_bounds__(kThreads)
    multiply_add_kernel(double a, const double* w, const double* x, double b, double* y,
                        long long n, bool assign) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const double p = __dmul_rn(a, __dmul_rn(w[i], x[i]));
    y[i] = assign ? p : __dadd_rn(p, __dmul_rn(b, y[i]));
  }
}

// y[node_k] = a value_k (assign) or += a value_k; the nodes are distinct.
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(double a, const long long* nodes, const double* values, long long count,
                   double* y, bool assign) {
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const double p = __dmul_rn(a, values[k]);
    y[nodes[k]] = assign ? p : __dadd_rn(y[nodes[k]], p);
  }
}

__global__ void __launch_bounds__(kThreads) round_to_fp32_kernel(double* v, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    v[i] = static_cast<double>(__double2float_rn(v[i]));
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

// Per chunk of a piece's node list (the nodes in ascending order, cut in chunks of at most
// kPieceChunk): the sum of v over the chunk, in a fixed order.
__global__ void __launch_bounds__(kDotThreads)
    piece_chunk_kernel(const double* v, const long long* order, const long long* chunk_start,
                       double* chunk_sum) {
  __shared__ double s[kDotThreads];
  const long long begin = chunk_start[blockIdx.x], end = chunk_start[blockIdx.x + 1];
  double sum = 0.0;
  for (long long k = begin + threadIdx.x; k < end; k += kDotThreads) sum += v[order[k]];
  s[threadIdx.x] = sum;
  tree_sum<kDotThreads>(s);
  if (threadIdx.x == 0) chunk_sum[blockIdx.x] = s[0];
}

// Per piece: its chunks' sums added in order.
__global__ void __launch_bounds__(kThreads)
    piece_total_kernel(const double* chunk_sum, const long long* piece_chunks, long long pieces,
                       double* sums) {
  const long long g = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (g >= pieces) return;
  double sum = 0.0;
  for (long long c = piece_chunks[g]; c < piece_chunks[g + 1]; ++c) sum += chunk_sum[c];
  sums[g] = sum;
}

// v[i] += values[piece[i]] where piece[i] >= 0.
__global__ void __launch_bounds__(kThreads)
    piece_add_kernel(const int* piece, const double* values, double* v, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int g = piece[i];
    if (g >= 0) v[i] = __dadd_rn(v[i], values[g]);
  }
}

// Calls f(std::integral_constant<int, D>) with D = dims (1, 2 or 3): the node kernels' template
// argument.
template <typename F>
void with_dims(int dims, F&& f) {
  switch (dims) {
    case 1:
      f(std::integral_constant<int, 1>{});
      break;
    case 2:
      f(std::integral_constant<int, 2>{});
      break;
    default:
      f(std::integral_constant<int, 3>{});
  }
}

// Calls f(std::integral_constant<int, D>, std::integral_constant<bool, S>) with D = dims and S
// = stencil: a stencil level's kernels and a compact level's are compiled apart, so that the
// compact ones (the finest level, bound by bandwidth) keep their few registers.
template <typename F>
void with_form(int dims, bool stencil, F&& f) {
  with_dims(dims, [&](auto d) {
    if (stencil)
      f(d, std::true_type{});
    else
      f(d, std::false_type{});
  });
}

dim3 node_grid(long long threads_x, long long rows) {
  const long long bx = (threads_x + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(std::max(1LL, bx)),
              static_cast<unsigned>(std::clamp<long long>(rows, 1, kMaxRowBlocks)));
}

unsigned flat_blocks(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

// dst holding `bytes`: the array it has where that is its size (the level operations' work is
// ordered on their one stream, so a copy or kernel into it follows every use of the old
// contents), else a new one.
void fit(DeviceArray& dst, std::size_t bytes) {
  if (!dst.as<void>() || dst.bytes() != bytes) dst.allocate(bytes);
}

template <typename T>
void copy_to_device(DeviceArray& dst, const T* src, std::size_t count, cudaStream_t stream) {
  fit(dst, count * sizeof(T));
  if (count == 0) return;
  HEATSIM_CUDA_CHECK(
      cudaMemcpyAsync(dst.as<T>(), src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

class CudaLevelOps final : public LevelOps {
  struct Level;  // below

 public:
  CudaLevelOps() {
    int count = 0;
    HEATSIM_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0) throw std::runtime_error("cuda level ops: no CUDA device is visible");
    HEATSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HEATSIM_CUDA_CHECK(cudaMallocHost(&host_result_, sizeof(double)));
    partials_.allocate(kDotMaxBlocks * sizeof(double));
    result_.allocate(sizeof(double));
    const char* fused = std::getenv("HEATSIM_FUSED_SWEEPS");
    fused_sweeps_ = !(fused && std::string(fused) == "0");
    const char* paired = std::getenv("HEATSIM_PAIRED_COLOURS");
    paired_colours_ = !(paired && std::string(paired) == "0");
  }
  ~CudaLevelOps() override {
    // No throw from a destructor; at worst a failed release leaks.
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    if (host_result_) cudaFreeHost(host_result_);
    for (cudaEvent_t e : staged_)
      if (e) cudaEventDestroy(e);
  }
  CudaLevelOps(const CudaLevelOps&) = delete;
  CudaLevelOps& operator=(const CudaLevelOps&) = delete;

  std::string name() const override { return "cuda"; }

  void setup(const std::vector<LevelOperator>& levels) override {
    sync();
    vectors_.clear();
    released_ids_.clear();
    sparse_.clear();
    pieces_ = 0;
    build(levels);
  }

  void replace_hierarchy(const std::vector<LevelOperator>& levels) override {
    if (levels.empty() || levels_.empty() || levels[0].points() != levels_[0]->points)
      throw std::invalid_argument("level ops: the new finest level has another number of points");
    sync();
    for (std::size_t id = 0; id < vectors_.size(); ++id) {
      Vector& v = vectors_[id];
      if (v.level > 0) {
        v.data.reset();  // released; the id is no longer valid until given again
        v.level = -1;
        released_ids_.push_back(static_cast<int>(id));
      }
    }
    build(levels);
  }

  bool replaces_finest() const override { return true; }

  // The finest level's arrays stay on the device, where the host builds the next operator
  // without them: replace_finest writes the new one into them (no frees and allocations, which
  // wait for the device, at every outer iteration).
  void release_finest() override {
    if (!levels_.empty()) sync();
  }

  void replace_finest(LevelOperator level) override {
    if (levels_.empty())
      throw std::logic_error("level ops: no hierarchy whose finest level to replace");
    const LevelView& old = levels_[0]->view;
    bool same = level.dims == old.dims && !level.stencil_form();
    for (int a = 0; a < kMaxDims; ++a)
      same = same && level.n[a] == old.n[a] &&
             (a < level.dims && level.periodic[a]) == (old.periodic[a] != 0);
    if (!same) throw std::invalid_argument("level ops: the new finest level has another shape");
    sync();
    levels_[0] = make_level(0, level, levels_[0].get());
    if (bottom_level_ == 0) bottom_level_ = -1;
  }

  // The inverse, not the factor: a product of one launch per V-cycle, where the factor's two
  // triangular solves would run row after row. None past its limits (conjugate gradients).
  bool set_bottom_factor(int level, BottomFactor factor) override {
    if (factor.points != at(level).points)
      throw std::invalid_argument("level ops: the factor is not of this level");
    if (factor.rows() == 0 || !factor.inverse_affordable()) return false;
    bottom_rows_ = factor.rows();
    const std::vector<double> inverse = factor.inverse();
    copy_to_device(bottom_inverse_, inverse.data(), inverse.size(), stream_);
    std::vector<long long> node(factor.node.begin(), factor.node.end());
    copy_to_device(bottom_node_, node.data(), node.size(), stream_);
    sync();  // the host arrays go with this call
    bottom_level_ = level;
    return true;
  }

  void bottom_solve(int level, int b, int x, int r, bool from_zero) override {
    if (level != bottom_level_) return LevelOps::bottom_solve(level, b, x, r, from_zero);
    if (from_zero)
      zero(x);
    else
      residual(level, b, x, r);
    const long long warps_per_block = kThreads / 32;
    const unsigned blocks =
        static_cast<unsigned>((bottom_rows_ + warps_per_block - 1) / warps_per_block);
    bottom_product_kernel<<<blocks, kThreads, 0, stream_>>>(
        bottom_inverse_.as<double>(), bottom_node_.as<long long>(), bottom_rows_,
        ptr(from_zero ? b : r, level), ptr(x, level));
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  int create_sparse(const std::vector<std::int64_t>& nodes,
                    const std::vector<double>& values) override {
    const std::int64_t np = at(0).points;
    if (nodes.size() != values.size())
      throw std::invalid_argument("level ops: a sparse vector's nodes and values differ in number");
    for (std::int64_t i : nodes)
      if (i < 0 || i >= np) throw std::invalid_argument("level ops: a sparse node off the grid");
    auto sv = std::make_unique<Sparse>();
    sv->count = static_cast<long long>(nodes.size());
    const std::vector<long long> index(nodes.begin(), nodes.end());
    copy_to_device(sv->nodes, index.data(), index.size(), stream_);
    copy_to_device(sv->values, values.data(), values.size(), stream_);
    sync();  // the host copies go out of scope
    sparse_.push_back(std::move(sv));
    return static_cast<int>(sparse_.size()) - 1;
  }

  void scatter(double a, int s, int y, bool assign) override {
    const Sparse& sv = *sparse_.at(static_cast<std::size_t>(s));
    if (sv.count == 0) return;
    scatter_kernel<<<flat_blocks(sv.count), kThreads, 0, stream_>>>(
        a, sv.nodes.as<long long>(), sv.values.as<double>(), sv.count, ptr(y, 0), assign);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  bool set_pieces(const std::vector<std::int32_t>& piece, std::int64_t count) override {
    const std::int64_t np = at(0).points;
    if (piece.size() != static_cast<std::size_t>(np))
      throw std::invalid_argument("level ops: pieces for another number of points");
    // The nodes by piece (ascending within each), and each piece's list cut in chunks.
    std::vector<long long> first(static_cast<std::size_t>(count) + 1, 0);
    for (std::int32_t g : piece) {
      if (g < -1 || g >= count) throw std::invalid_argument("level ops: a piece out of range");
      if (g >= 0) ++first[static_cast<std::size_t>(g) + 1];
    }
    for (std::size_t g = 0; g < static_cast<std::size_t>(count); ++g) first[g + 1] += first[g];
    std::vector<long long> order(static_cast<std::size_t>(first.back()));
    std::vector<long long> next(first.begin(), first.end() - 1);
    for (std::int64_t i = 0; i < np; ++i)
      if (piece[static_cast<std::size_t>(i)] >= 0)
        order[static_cast<std::size_t>(next[static_cast<std::size_t>(piece[static_cast<std::size_t>(i)])]++)] = i;
    std::vector<long long> chunk_start, piece_chunks{0};
    for (std::size_t g = 0; g < static_cast<std::size_t>(count); ++g) {
      for (long long k = first[g]; k < first[g + 1]; k += kPieceChunk) chunk_start.push_back(k);
      piece_chunks.push_back(static_cast<long long>(chunk_start.size()));
    }
    chunk_start.push_back(first.back());
    sync();
    pieces_ = count;
    piece_chunks_count_ = static_cast<long long>(chunk_start.size()) - 1;
    const std::vector<int> piece_int(piece.begin(), piece.end());
    copy_to_device(piece_, piece_int.data(), piece_int.size(), stream_);
    copy_to_device(piece_order_, order.data(), order.size(), stream_);
    copy_to_device(piece_chunk_start_, chunk_start.data(), chunk_start.size(), stream_);
    copy_to_device(piece_chunks_, piece_chunks.data(), piece_chunks.size(), stream_);
    piece_chunk_sum_.allocate(static_cast<std::size_t>(std::max(1LL, piece_chunks_count_)) * sizeof(double));
    piece_values_.allocate(static_cast<std::size_t>(std::max<std::int64_t>(1, count)) * sizeof(double));
    piece_host_.assign(static_cast<std::size_t>(count), 0.0);
    sync();  // the host copies go out of scope
    return true;
  }

  void piece_sums(int v, std::vector<double>& sums) override {
    sums.assign(static_cast<std::size_t>(pieces_), 0.0);
    if (pieces_ == 0) return;
    if (piece_chunks_count_ > 0) {
      piece_chunk_kernel<<<static_cast<unsigned>(piece_chunks_count_), kDotThreads, 0, stream_>>>(
          ptr(v, 0), piece_order_.as<long long>(), piece_chunk_start_.as<long long>(),
          piece_chunk_sum_.as<double>());
      HEATSIM_CUDA_CHECK_LAUNCH();
    }
    piece_total_kernel<<<flat_blocks(pieces_), kThreads, 0, stream_>>>(
        piece_chunk_sum_.as<double>(), piece_chunks_.as<long long>(), pieces_,
        piece_values_.as<double>());
    HEATSIM_CUDA_CHECK_LAUNCH();
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(sums.data(), piece_values_.as<double>(),
                                       static_cast<std::size_t>(pieces_) * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream_));
    sync();
  }

  void piece_add(const std::vector<double>& values, int v) override {
    if (values.size() != static_cast<std::size_t>(pieces_))
      throw std::invalid_argument("level ops: piece values for another number of pieces");
    if (pieces_ == 0) return;
    piece_host_ = values;  // kept until the copy has run
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(piece_values_.as<double>(), piece_host_.data(),
                                       static_cast<std::size_t>(pieces_) * sizeof(double),
                                       cudaMemcpyHostToDevice, stream_));
    piece_add_kernel<<<flat_blocks(at(0).points), kThreads, 0, stream_>>>(
        piece_.as<int>(), piece_values_.as<double>(), ptr(v, 0), at(0).points);
    HEATSIM_CUDA_CHECK_LAUNCH();
    sync();  // piece_host_ may change at the next call
  }

  void multiply_add(double a, int w, int x, double b, int y) override {
    const Vector& wv = vec(w);
    const Vector& xv = vec(x);
    Vector& yv = vec(y);
    if (wv.size != yv.size || xv.size != yv.size)
      throw std::invalid_argument("level ops: multiply_add of unequal sizes");
    multiply_add_kernel<<<flat_blocks(yv.size), kThreads, 0, stream_>>>(
        a, wv.data->as<double>(), xv.data->as<double>(), b, yv.data->as<double>(), yv.size,
        b == 0.0);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void round_to_fp32(int v) override {
    Vector& x = vec(v);
    round_to_fp32_kernel<<<flat_blocks(x.size), kThreads, 0, stream_>>>(x.data->as<double>(),
                                                                         x.size);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

 private:
  // The levels of `levels`, checked and copied to the device with their transfer tables.
  // Level l on the device from its operator, checked (l > 0: below levels_[l - 1], which is in
  // place).
  // Level l of `op`, in the arrays of `reuse` where they have the sizes it needs.
  std::unique_ptr<Level> make_level(std::size_t l, const LevelOperator& op,
                                    Level* reuse = nullptr) {
    auto L = std::make_unique<Level>();
    if (reuse) {
      L->diagonal.swap(reuse->diagonal);
      L->diagonal32.swap(reuse->diagonal32);
      L->fixed.swap(reuse->fixed);
      L->stencil.swap(reuse->stencil);
      L->centre.swap(reuse->centre);
      for (int a = 0; a < kMaxDims; ++a) {
        L->conductance[a].swap(reuse->conductance[a]);
        L->conductance32[a].swap(reuse->conductance32[a]);
      }
    }
    const std::int64_t np = op.points();
    const auto size_ok = [&](std::size_t s) { return s == static_cast<std::size_t>(np); };
    const std::size_t kp = static_cast<std::size_t>(stencil_points(op.dims));
    if (!size_ok(op.fixed.size()) ||
        (op.stencil_form() ? op.stencil.size() != kp * np : !size_ok(op.node_term.size())))
      throw std::invalid_argument("level " + std::to_string(l) + ": field sizes differ from " +
                                  "the grid's " + std::to_string(np) + " points");
    if (l > 0 && op.prolongation.size() != kp * np)
      throw std::invalid_argument("level " + std::to_string(l) + ": the prolongation has " +
                                  "the wrong size");
    LevelView& v = L->view;
    v.dims = op.dims;
    for (int a = 0; a < kMaxDims; ++a) {
      v.n[a] = op.n[a];
      v.periodic[a] = a < op.dims && op.periodic[a];
      if (a < op.dims && !op.stencil_form() && !size_ok(op.conductance[a].size()))
        throw std::invalid_argument("level " + std::to_string(l) + ": conductance[" +
                                    std::to_string(a) + "] has the wrong size");
    }
    L->points = np;
    L->colours = op.stencil_form() ? 1 << op.dims : 2;
    for (int a = 0; a < op.dims; ++a)
      L->colour_conflict = L->colour_conflict || (v.periodic[a] && op.n[a] % 2 == 1);

    copy_to_device(L->fixed, op.fixed.data(), op.fixed.size(), stream_);
    v.fixed = L->fixed.as<std::uint8_t>();
    if (op.stencil_form()) {
      // Only the smoother's operator is kept: fp32 entries and fp64 centres.
      DeviceArray exact;
      upload_values(exact, op.stencil);
      fit(L->stencil, op.stencil.size() * sizeof(float));
      fit(L->centre, static_cast<std::size_t>(np) * sizeof(double));
      round_stencil_kernel<<<flat_blocks(np), kThreads, 0, stream_>>>(
          exact.as<double>(), L->stencil.as<float>(), L->centre.as<double>(), np,
          static_cast<int>(kp), stencil_centre(op.dims));
      HEATSIM_CUDA_CHECK_LAUNCH();
      v.stencil = L->stencil.as<float>();
      v.centre = L->centre.as<double>();
      sync();  // the exact stencil's staging goes out of scope
    } else {
      for (int a = 0; a < kMaxDims; ++a) {
        if (a < op.dims)
          upload_values(L->conductance[a], op.conductance[a]);
        else
          fit(L->conductance[a], 0);
        v.conductance[a] = L->conductance[a].as<double>();
        // The smoother's conductances, rounded to fp32.
        const std::size_t count = a < op.dims ? op.conductance[a].size() : 0;
        fit(L->conductance32[a], count * sizeof(float));
        if (count > 0) {
          round_kernel<<<flat_blocks(static_cast<long long>(count)), kThreads, 0, stream_>>>(
              L->conductance[a].as<double>(), L->conductance32[a].as<float>(),
              static_cast<long long>(count));
          HEATSIM_CUDA_CHECK_LAUNCH();
        }
        v.conductance32[a] = L->conductance32[a].as<float>();
      }
      // The node terms go up into the smoother's diagonal, which is then formed over them in
      // place after the exact diagonal has read them.
      fit(L->diagonal, static_cast<std::size_t>(np) * sizeof(double));
      upload_values(L->diagonal32, op.node_term);
      v.diagonal = L->diagonal.as<double>();
      v.diagonal32 = L->diagonal32.as<double>();
      with_dims(v.dims, [&](auto d) {
        const dim3 grid = node_grid(v.n[0], v.n[1] * v.n[2]);
        diagonal_kernel<decltype(d)::value, false>
            <<<grid, kThreads, 0, stream_>>>(v, v.diagonal32, L->diagonal.as<double>());
        diagonal_kernel<decltype(d)::value, true>
            <<<grid, kThreads, 0, stream_>>>(v, v.diagonal32, L->diagonal32.as<double>());
      });
      HEATSIM_CUDA_CHECK_LAUNCH();
    }

    if (l > 0) set_transfers(*L, *levels_.back(), op, static_cast<int>(l));
    // The staging arrays (the transfer tables' host copies) go out of scope here.
    sync();
    return L;
  }

  void build(const std::vector<LevelOperator>& levels) {
    levels_.clear();
    bottom_level_ = -1;
    std::int64_t largest_conflict = 0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      levels_.push_back(make_level(l, levels[l]));
      if (levels_.back()->colour_conflict)
        largest_conflict = std::max(largest_conflict, levels_.back()->points);
    }
    scratch_.allocate(static_cast<std::size_t>(largest_conflict) * sizeof(double));
    // The fused sweeps' second array for the finest level where they apply (3D, compact, no
    // periodic axis, larger than the one-block smoothing); kept across replace_hierarchy,
    // whose finest level has the same points.
    const LevelView& f = levels_.front()->view;
    const bool fused = fused_sweeps_ && f.dims == 3 && f.stencil == nullptr && !f.periodic[0] &&
                       !f.periodic[1] && !f.periodic[2] && levels_.front()->points > kSmallLevel;
    if (!fused) {
      sweep_out_.reset();
    } else if (!sweep_out_ || sweep_out_points_ != levels_.front()->points) {
      sweep_out_points_ = levels_.front()->points;
      sweep_out_ = std::make_unique<DeviceArray>();
      sweep_out_->allocate(static_cast<std::size_t>(sweep_out_points_) * sizeof(double));
    }
  }

 public:
  int create_vector(int level) override {
    const Level& L = at(level);
    Vector v;
    v.level = level;
    v.size = L.points;
    v.data = std::make_unique<DeviceArray>();
    v.data->allocate(static_cast<std::size_t>(v.size) * sizeof(double));
    HEATSIM_CUDA_CHECK(cudaMemsetAsync(v.data->as<double>(), 0,
                                       static_cast<std::size_t>(v.size) * sizeof(double), stream_));
    // A released coarse vector's id is given again, so that the ids of a solver whose
    // hierarchy is replaced at every outer iteration stay as few as its vectors.
    if (released_ids_.empty()) {
      vectors_.push_back(std::move(v));
      return static_cast<int>(vectors_.size()) - 1;
    }
    const int id = released_ids_.back();
    released_ids_.pop_back();
    vectors_[static_cast<std::size_t>(id)] = std::move(v);
    return id;
  }

  void upload(int v, const std::vector<double>& values) override {
    upload_from(v, values.data(), values.size());
  }
  void upload_from(int v, const double* values, std::size_t count) override {
    Vector& dst = vec(v);
    check_upload(count, static_cast<std::size_t>(dst.size));
    upload_values(dst.data->as<double>(), values, count);
    sync();  // `values` may go away once we return
  }

  void download(int v, std::vector<double>& values) override {
    values.resize(static_cast<std::size_t>(vec(v).size));
    download_to(v, values.data(), values.size());
  }
  void download_to(int v, double* values, std::size_t count) override {
    Vector& src = vec(v);
    check_download(static_cast<std::size_t>(src.size), count);
    HEATSIM_CUDA_CHECK(cudaMemcpyAsync(values, src.data->as<double>(), count * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream_));
    sync();
  }

  void residual(int level, int b, int x, int r) override {
    const Level& L = at(level);
    launch_operator(L, ptr(b, level), ptr(x, level), ptr(r, level), false);
  }

  void cycle_residual(int level, int b, int x, int r) override {
    const Level& L = at(level);
    launch_operator(L, ptr(b, level), ptr(x, level), ptr(r, level), true);
  }

  void apply(int level, int x, int y) override {
    const Level& L = at(level);
    launch_operator(L, nullptr, ptr(x, level), ptr(y, level), false);
  }

  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    const Level& L = at(level);
    const double* bp = ptr(b, level);
    double* xp = ptr(x, level);
    const LevelView& v = L.view;
    if (L.points <= kSmallLevel && !L.colour_conflict) {
      with_form(v.dims, v.stencil != nullptr, [&](auto d, auto form) {
        small_smooth_kernel<decltype(d)::value, decltype(form)::value>
            <<<1, kSmallThreads, 0, stream_>>>(v, bp, xp, sweeps, reverse, L.colours, omega);
      });
      HEATSIM_CUDA_CHECK_LAUNCH();
      return;
    }
    if (level == 0 && sweep_out_) {
      fused_sweeps(v, bp, x, sweeps, reverse, omega, false);
      return;
    }
    if (v.stencil != nullptr && v.dims >= 2 && !L.colour_conflict && paired_colours_) {
      // A launch per pair of colours sharing their rows, a block per row.
      const dim3 grid(1, static_cast<unsigned>(std::clamp<long long>(
                             ((v.n[1] + 1) / 2) * ((v.n[2] + 1) / 2), 1, kMaxRowBlocks)));
      for (int s = 0; s < sweeps; ++s)
        for (int m = 0; m < L.colours / 2; ++m) {
          const int pair = reverse ? L.colours / 2 - 1 - m : m;
          if (v.dims == 2)
            paired_colour_kernel<2>
                <<<grid, kThreads, 0, stream_>>>(v, bp, xp, pair, reverse, omega);
          else
            paired_colour_kernel<3>
                <<<grid, kThreads, 0, stream_>>>(v, bp, xp, pair, reverse, omega);
          HEATSIM_CUDA_CHECK_LAUNCH();
        }
      return;
    }
    // Stencil levels launch the rows of one colour's y and z parities (at most a quarter).
    const dim3 grid = node_grid((v.n[0] + 1) / 2, L.colours > 2 ? ((v.n[1] + 1) / 2) *
                                                                      ((v.n[2] + 1) / 2)
                                                                : v.n[1] * v.n[2]);
    for (int s = 0; s < sweeps; ++s)
      for (int c = 0; c < L.colours; ++c) {
        const double* old = xp;
        if (L.colour_conflict) {
          HEATSIM_CUDA_CHECK(cudaMemcpyAsync(scratch_.as<double>(), xp,
                                             static_cast<std::size_t>(L.points) * sizeof(double),
                                             cudaMemcpyDeviceToDevice, stream_));
          old = scratch_.as<double>();
        }
        const int colour = reverse ? L.colours - 1 - c : c;
        with_form(v.dims, v.stencil != nullptr, [&](auto d, auto form) {
          colour_kernel<decltype(d)::value, decltype(form)::value>
              <<<grid, kThreads, 0, stream_>>>(v, bp, xp, old, colour, omega);
        });
        HEATSIM_CUDA_CHECK_LAUNCH();
      }
  }

  void smooth_from_zero(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    if (level == 0 && sweep_out_ && sweeps > 0) {
      fused_sweeps(at(0).view, ptr(b, 0), x, sweeps, reverse, omega, true);
      return;
    }
    LevelOps::smooth_from_zero(level, b, x, sweeps, reverse, omega);
  }

  void conjugate_gradients(int level, int b, int x, int r, int p, int q, double tolerance,
                           std::int64_t limit) override {
    const Level& L = at(level);
    if (L.points > kSmallLevel)
      return LevelOps::conjugate_gradients(level, b, x, r, p, q, tolerance, limit);
    const LevelView& v = L.view;
    const double* bp = ptr(b, level);
    double *xp = ptr(x, level), *rp = ptr(r, level), *pp = ptr(p, level), *qp = ptr(q, level);
    with_form(v.dims, v.stencil != nullptr, [&](auto d, auto form) {
      small_cg_kernel<decltype(d)::value, decltype(form)::value>
          <<<1, kSmallThreads, 0, stream_>>>(v, bp, xp, rp, pp, qp, tolerance, limit);
    });
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void restrict_residual(int fine_level, int r_fine, int b_coarse) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const LevelView& v = C.view;
    const double* r = ptr(r_fine, fine_level);
    double* b = ptr(b_coarse, fine_level + 1);
    with_dims(v.dims, [&](auto d) {
      restrict_kernel<decltype(d)::value>
          <<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(
              v, F.view, C.prolongation_view(), r, b);
    });
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void prolong_add(int fine_level, int x_coarse, int x_fine) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const LevelView& v = F.view;
    const double* xc = ptr(x_coarse, fine_level + 1);
    double* xf = ptr(x_fine, fine_level);
    with_dims(v.dims, [&](auto d) {
      prolong_kernel<decltype(d)::value>
          <<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(
              v, C.view, C.prolongation_view(), xc, xf, C.interp[0].as<Interp>(),
              C.interp[1].as<Interp>(), C.interp[2].as<Interp>());
    });
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  void magnitude(int level, int b, int x, int out) override {
    const Level& L = at(level);
    const LevelView& v = L.view;
    const double* bp = ptr(b, level);
    const double* xp = ptr(x, level);
    double* op = ptr(out, level);
    with_form(v.dims, v.stencil != nullptr, [&](auto d, auto form) {
      magnitude_kernel<decltype(d)::value, decltype(form)::value>
          <<<node_grid(v.n[0], v.n[1] * v.n[2]), kThreads, 0, stream_>>>(v, bp, xp, op);
    });
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

  void zero(int v) override {
    const Vector& z = vec(v);
    HEATSIM_CUDA_CHECK(cudaMemsetAsync(z.data->as<double>(), 0,
                                       static_cast<std::size_t>(z.size) * sizeof(double), stream_));
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
  // `sweeps` sweeps of the finest level, both colours per launch (fused_sweep_kernel), out of
  // place: each sweep's result goes to sweep_out_, which then becomes x's array (and x's old
  // array the next sweep's output). `from_zero`: x is taken as +0 before the first.
  void fused_sweeps(const LevelView& v, const double* bp, int x, int sweeps, bool reverse,
                    double omega, bool from_zero) {
    Vector& xv = vec(x);
    using Tile = SweepTile<>;
    SweepLevel level;
    for (int a = 0; a < 3; ++a) {
      level.n[a] = v.n[a];
      level.conductance32[a] = v.conductance32[a];
    }
    level.diagonal32 = v.diagonal32;
    level.fixed = v.fixed;
    const dim3 grid = Tile::grid(level);
    const dim3 block(Tile::pairs, Tile::rows);
    for (int s = 0; s < sweeps; ++s) {
      const double* in = xv.data->as<double>();
      double* out = sweep_out_->as<double>();
      const int first = reverse ? 1 : 0;
      if (from_zero && s == 0)
        fused_sweep_kernel<true, Tile>
            <<<grid, block, 0, stream_>>>(level, bp, in, out, first, omega);
      else
        fused_sweep_kernel<false, Tile>
            <<<grid, block, 0, stream_>>>(level, bp, in, out, first, omega);
      HEATSIM_CUDA_CHECK_LAUNCH();
      std::swap(xv.data, sweep_out_);
    }
  }

  struct Level {
    LevelView view;
    std::int64_t points = 0;
    int colours = 2;
    bool colour_conflict = false;
    DeviceArray diagonal, diagonal32, fixed, stencil, centre;
    std::array<DeviceArray, kMaxDims> conductance, conductance32;
    // Levels > 0: the transfers from the next finer level: per axis the coarse nodes of each
    // finer index, and this level's nodes' finer indices; the prolongation weights.
    std::array<DeviceArray, kMaxDims> interp, fine_index;
    DeviceArray prolongation;

    Prolongation prolongation_view() const {
      Prolongation p;
      p.weight = prolongation.as<float>();
      for (int a = 0; a < kMaxDims; ++a) p.fine_index[a] = fine_index[a].as<long long>();
      return p;
    }
  };
  struct Vector {
    std::unique_ptr<DeviceArray> data;
    long long size = 0;
    int level = 0;
  };

  // The transfer tables of coarse level C from fine level F (the CPU's axis_transfer), and the
  // prolongation weights.
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
      for (std::int64_t f = 0; f < fine_n; ++f)
        for (int k = 0; k < 2; ++k) {
          interp[f].coarse[k] = t.from[f][k].coarse;
          interp[f].offset[k] = t.from[f][k].offset;
        }
      const std::vector<long long> index(idx.begin(), idx.end());
      copy_to_device(C.interp[a], interp.data(), interp.size(), stream_);
      copy_to_device(C.fine_index[a], index.data(), index.size(), stream_);
      sync();  // the host tables die at the end of this iteration
    }
    upload_values(C.prolongation, op.prolongation);
  }

  // out = b - A x or A x; `smoother`: with the smoother's operator.
  void launch_operator(const Level& L, const double* b, const double* x, double* out,
                       bool smoother) {
    const LevelView& v = L.view;
    const dim3 grid = node_grid(v.n[0], v.n[1] * v.n[2]);
    with_form(v.dims, v.stencil != nullptr, [&](auto d, auto form) {
      if (smoother)
        operator_kernel<decltype(d)::value, decltype(form)::value, true>
            <<<grid, kThreads, 0, stream_>>>(v, b, x, out);
      else
        operator_kernel<decltype(d)::value, decltype(form)::value, false>
            <<<grid, kThreads, 0, stream_>>>(v, b, x, out);
    });
    HEATSIM_CUDA_CHECK_LAUNCH();
  }

  const Level& at(int level) const {
    if (level < 0 || level >= static_cast<int>(levels_.size()))
      throw std::out_of_range("level ops: no level " + std::to_string(level));
    return *levels_[static_cast<std::size_t>(level)];
  }
  Vector& vec(int v) {
    if (v < 0 || v >= static_cast<int>(vectors_.size()) || vectors_[v].level < 0)
      throw std::out_of_range("level ops: no vector " + std::to_string(v));
    return vectors_[static_cast<std::size_t>(v)];
  }
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

  // dst = count doubles (or floats) from src, on stream_. A large array goes in pieces copied on
  // every core into two pinned buffers in turn (kernels/host_copy.hpp), each piece's transfer
  // running while the next one is copied; a small one straight from pageable memory. Returns
  // before the last transfer ends: src must live until the stream is synchronised.
  template <typename T>
  void upload_values(T* dst, const T* src, std::size_t count) {
    static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>);
    constexpr std::size_t kBytes = std::size_t{32} << 20;  // a piece, a buffer
    constexpr std::size_t kPiece = kBytes / sizeof(T);
    if (count < 2 * kPiece) {
      if (count > 0)
        HEATSIM_CUDA_CHECK(
            cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, stream_));
      return;
    }
    if (!staged_[1]) {  // the buffers and their events, made whole or not at all
      HostStaging made[2];
      for (HostStaging& b : made) {
        try {
          b = allocate_host_staging(kBytes, true);
        } catch (const std::exception&) {  // no pinned memory to be had: pageable, still correct
          b = allocate_host_staging(kBytes, false);
        }
      }
      for (int b = 0; b < 2; ++b) {
        if (!staged_[b])
          HEATSIM_CUDA_CHECK(cudaEventCreateWithFlags(&staged_[b], cudaEventDisableTiming));
        staging_[b] = std::move(made[b]);
      }
    }
    for (std::size_t at = 0, piece = 0; at < count; at += kPiece, ++piece) {
      const int b = static_cast<int>(piece % 2);
      const std::size_t n = std::min(kPiece, count - at);
      HEATSIM_CUDA_CHECK(cudaEventSynchronize(staged_[b]));  // its last transfer is done
      T* buffer = static_cast<T*>(staging_[b].data());
      if constexpr (std::is_same_v<T, double>)
        copy_doubles(src + at, n, buffer);
      else
        copy_floats(src + at, n, buffer);
      HEATSIM_CUDA_CHECK(
          cudaMemcpyAsync(dst + at, buffer, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
      HEATSIM_CUDA_CHECK(cudaEventRecord(staged_[b], stream_));
    }
  }
  template <typename T, typename Alloc>
  void upload_values(DeviceArray& dst, const std::vector<T, Alloc>& src) {
    fit(dst, src.size() * sizeof(T));
    upload_values(dst.as<T>(), src.data(), src.size());
  }

  cudaStream_t stream_ = nullptr;
  double* host_result_ = nullptr;  // pinned: the dot product's one value
  // upload_values' two pinned buffers (64 MiB in all) and the ends of their last transfers,
  // made at the first large upload and kept for the uploads of the run.
  HostStaging staging_[2];
  cudaEvent_t staged_[2] = {nullptr, nullptr};
  DeviceArray partials_, result_, scratch_;
  // set_bottom_factor's inverse and its rows' nodes, for bottom_level_ (-1: none).
  DeviceArray bottom_inverse_, bottom_node_;
  long long bottom_rows_ = 0;
  int bottom_level_ = -1;
  // The finest level's fused sweeps (fused_sweeps): whether taken (HEATSIM_FUSED_SWEEPS=0: a
  // launch per colour, for comparison) and their second array, null where they do not apply.
  bool fused_sweeps_ = true;
  // Stencil levels' colours in pairs (paired_colour_kernel); HEATSIM_PAIRED_COLOURS=0: a launch
  // per colour, for comparison.
  bool paired_colours_ = true;
  std::unique_ptr<DeviceArray> sweep_out_;
  long long sweep_out_points_ = 0;
  std::vector<std::unique_ptr<Level>> levels_;
  std::vector<Vector> vectors_;
  std::vector<int> released_ids_;  // coarse vectors' ids released, given again first
  struct Sparse {
    DeviceArray nodes, values;
    long long count = 0;
  };
  std::vector<std::unique_ptr<Sparse>> sparse_;
  // set_pieces: each node's piece, the nodes ordered by piece, the chunks of that order and
  // each piece's first chunk, the chunks' sums and the pieces' values.
  std::int64_t pieces_ = 0;
  long long piece_chunks_count_ = 0;
  DeviceArray piece_, piece_order_, piece_chunk_start_, piece_chunks_, piece_chunk_sum_,
      piece_values_;
  std::vector<double> piece_host_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<LevelOps> make_cuda_level_ops() { return std::make_unique<cuda::CudaLevelOps>(); }

}  // namespace heatsim::kernels
