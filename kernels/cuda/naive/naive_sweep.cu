// cuda-naive: one thread per output node (in 3D under the constant stencil, per column of a few
// nodes along z), every neighbour read from global memory (reuse is left to the L1 and L2
// caches). The baseline the tiled backends are measured against. Written once over the point
// operators (point_operators.cuh): the constant stencil and the conservative flux operator.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "../check.cuh"
#include "../point_operators.cuh"
#include "naive_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// The nodes along z one thread computes. A tap input shared by several of them is loaded once
// (the constant star's centre column: C+2R loads instead of C(2R+1); a box plane: (2R+1)^2
// loads feed every output within R), and one thread has many independent loads in flight; each
// output still sums its taps in the operator's order.
// C (H100, 512^3 fp64): 4 for stars (Heat-3D 141.7 GStencil/s; 8: 133.1), 8 for the radius-1
// box (Box-3D27P 121.3; 4: 117.4); larger boxes keep 4, their register count grows with C (an
// H200 with one column per thread: Heat-3D 220.2 at C = 4, 218.9 at 8). 1 in
// 1D and 2D, and for operators with coefficients of their own (their loads are per node).
template <class Op>
__host__ __device__ constexpr int column_length() {
  if (Op::kDims < 3 || Op::kCoefficients) return 1;
  return Op::kBox && Op::kRadius == 1 ? 8 : 4;
}

// Whether a column is formed plane by plane (the operator's column(): each plane's loads added
// to every output they feed as they arrive) rather than output by output (point() per node, the
// loads shared by the compiler). On an H200, 512^3 fp64: the radius-1 star is faster output by
// output (Heat-3D 191.9 against 173.6 GStencil/s), the others plane by plane (Box-3D27P 140.8
// against 80.1, the radius-2 star 179.4 against 126.8: output by output holds every load of
// the column in registers, 102 and 52 of them).
template <class Op>
__host__ __device__ constexpr bool plane_by_plane() {
  return column_length<Op>() > 1 && !(Op::kStar && Op::kRadius == 1);
}

// Whether the neighbours are read through the read-only data path (ld.global.nc). On an H200,
// 512^3 / 8192^2 / 2^26 fp64 against plain loads: Heat-1D 217 against 130-147 GStencil/s,
// Heat-2D 200 against 143, Star-2D13P 161 against 127, Heat-3D-faces 69 against 47. The
// radius-1 3D star's full columns load their centre nodes once through it (StarColumnNear);
// node by node (the grid's last, partial columns) it keeps plain loads, which the compiler
// shares between outputs better than __ldg (22 loads a column against 35).
template <class Op>
__host__ __device__ constexpr bool read_only_loads() {
  return !(Op::kDims == 3 && Op::kStar && Op::kRadius == 1 && !Op::kCoefficients);
}

// The radius-1 3D star's neighbourhood in a full column: the node's centre column (dz = -1, 0,
// 1) from registers the column loaded once through the read-only path, its in-plane taps from
// global memory through it too. H200, 512^3 fp64: Heat-3D 219.9 GStencil/s with plain loads
// shared by the compiler, 230.2 with every load by __ldg, 236.0 so (90% of the copy bound).
// The same form at C = 8: 201.7. This control flow is the one measured: with the star's branch
// inside the general one (and __ldg on the partial columns) the gpu-check's bench had 226.1.
template <typename T, int C>
struct StarColumnNear {
  const T* u;  // the node
  std::int64_t pitch_y;
  T c[3];  // the node's centre column at dz = -1, 0, 1

  template <int S>
  __device__ __forceinline__ T at(int dx, int dy, int dz) const {
    if (dx == 0 && dy == 0) return c[dz + 1];
    return __ldg(u + (dy * pitch_y + dx));
  }
};

// One column of C nodes along z (one node in 1D and 2D) from element `first`: output by output,
// a full column computes every output before storing any, so that the loads of a plane shared
// by several outputs are issued once; the grid's last, partial column goes node by node.
template <class Op>
__device__ __forceinline__ void naive_column(const typename Op::Args& a,
                                             const typename Op::Block& block, std::int64_t x,
                                             std::int64_t y, std::int64_t z0) {
  using T = typename Op::Value;
  constexpr int C = column_length<Op>();
  constexpr bool kReadOnly = read_only_loads<Op>();
  const DeviceGrid& g = a.grid;
  const std::int64_t first = g.index(x, y, z0);
  if constexpr (plane_by_plane<Op>()) {
    const int outputs = g.n[2] - z0 < C ? static_cast<int>(g.n[2] - z0) : C;
    Op::template column<C>(a, first, outputs);
  } else if constexpr (Op::kStar && Op::kRadius == 1 && !Op::kCoefficients && C > 1) {
    if (z0 + C <= g.n[2]) {
      T centre[C + 2];
#pragma unroll
      for (int q = 0; q < C + 2; ++q) centre[q] = __ldg(a.in + first + (q - 1) * g.pitch_z);
      T value[C];
#pragma unroll
      for (int j = 0; j < C; ++j) {
        StarColumnNear<T, C> near{a.in + first + j * g.pitch_z, g.pitch_y,
                                  {centre[j], centre[j + 1], centre[j + 2]}};
        value[j] = Op::point(a, block, near);
      }
#pragma unroll
      for (int j = 0; j < C; ++j) a.out[first + j * g.pitch_z] = value[j];
    } else {
      for (int j = 0; j < g.n[2] - z0; ++j)
        a.out[first + j * g.pitch_z] =
            Op::point(a, block, global_near<Op, kReadOnly>(a, nullptr, first, j, x, y, z0));
    }
  } else if (C == 1 || z0 + C <= g.n[2]) {
    T value[C];
#pragma unroll
    for (int j = 0; j < C; ++j)
      value[j] = Op::point(a, block, global_near<Op, kReadOnly>(a, nullptr, first, j, x, y, z0));
#pragma unroll
    for (int j = 0; j < C; ++j) a.out[first + j * g.pitch_z] = value[j];
  } else {
    for (int j = 0; j < g.n[2] - z0; ++j)
      a.out[first + j * g.pitch_z] =
          Op::point(a, block, global_near<Op, kReadOnly>(a, nullptr, first, j, x, y, z0));
  }
}

// Tile: 32 x 8 x C nodes (1D: 256) per block of 256 threads. Shared memory: what the operator's
// block holds (the classes' table, 20 KB in fp64), else none. Registers: C values and the
// loads in flight (fp64: 32 for the 7-point star at C = 4, 40 for the 27-point box at C = 8,
// about 40 for the flux operator). STRIDE: blocks stride over y and z, for grids with more rows
// or planes than a launch grid holds; otherwise a thread forms one column, its coordinates from
// its block's alone. The loops cost the 7-point star's column 15% (H200, 512^3 fp64, the lab's
// scripts/kernel-lab/naive-sweep: 64 registers instead of 32, 201 against 235 GStencil/s; in
// the backend 48 against 32 registers, Heat-3D 209.5 -> 217.5, Box-3D27P 136.6 -> 172.6).
template <class Op, bool STRIDE>
__global__ void __launch_bounds__(256) naive_kernel(const typename Op::Args a) {
  constexpr int C = column_length<Op>();
  const typename Op::Block block = Op::enter_unstaged(a);
  const DeviceGrid& g = a.grid;
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (x >= g.n[0] || !stores_x(a, x)) return;
  if constexpr (STRIDE) {
    for (std::int64_t z0 = static_cast<std::int64_t>(blockIdx.z) * C; z0 < g.n[2];
         z0 += static_cast<std::int64_t>(gridDim.z) * C)
      for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < g.n[1];
           y += static_cast<std::int64_t>(gridDim.y) * blockDim.y)
        naive_column<Op>(a, block, x, y, z0);
  } else {
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= g.n[1]) return;
    naive_column<Op>(a, block, x, y, blockIdx.z * C);
  }
}

// The compact forms in 3D (the faces' ghosts read), their tables in the kernel's parameters,
// read through the constant bank the launch fills (per launch, so two problems on two streams,
// and graphs, keep their own):
//   PairParams, the classes form: the pairs' conductances of at most kPairClasses classes;
//   FaceParams, the faces given as classes (CoefficientForm::face_classes): each axis's
//     distinct conductances, a node's faces looked up by their class bytes;
// and per class dt/C, the source densities and, where the surfaces' transfer is compacted
// (Capabilities::compact_transfer), H. A thread forms a column of kClassesColumn nodes along z,
// its centre values and classes (and z faces' classes) loaded once through the read-only path,
// each node's arithmetic the flux operator's and finish_node's (add_axis per axis x, y, z; the
// sources in order; fma(dt/C, flow + src, u), with the transfer fma(dt/C, fma(-H, u, flow +
// src), u)), so the same bits as the fields. SOURCES: the problem's source fields, unrolled.
// A block is a uniform tile's nodes (kUniformTileX x Y x Z): where the tile's word says that
// every byte of the compact form it would read is one value, it reads none (16 bytes a node in
// fp64 instead of 17 or 20) and takes its conductances, dt/C, H and sources once.
// H200, 512^3 fp64: Heat-3D-faces 129.6 -> 185, Heat-3D-mat 176.5 -> 185.7 (docs/performance.md).
// H200, 512^3 fp64, Heat-3D-mat: the lab's form (scripts/kernel-lab/flux_lab.cu) measured
// 181.5 GStencil/s with the table in the parameters against 157.4 from global memory.
template <typename T>
struct PairParams {
  static constexpr bool kFaces = false;
  static constexpr int kClasses = kPairClasses;
  T pair[kPairClasses * kPairClasses];
  T dt_over_capacity[kPairClasses];
  T source[kPairClasses * kMaxSourceFields];
  T transfer[kPairClasses];
};
template <typename T>
struct FaceParams {
  static constexpr bool kFaces = true;
  static constexpr int kClasses = kMaxNodeClasses;
  T face[3][kMaxNodeClasses];
  T dt_over_capacity[kMaxNodeClasses];
  T source[kMaxNodeClasses * kMaxSourceFields];
  T transfer[kMaxNodeClasses];
};
static_assert(sizeof(FaceParams<double>) <= 32764,
              "a kernel's parameters hold at most 32764 bytes");

constexpr int kClassesColumn = 4;
constexpr unsigned kClassesBlockX = 64, kClassesBlockY = 4;

template <typename T, class P, int SOURCES, bool TRANSFER>
__global__ void __launch_bounds__(kClassesBlockX* kClassesBlockY)
    naive_classes_kernel(const CoefficientArgs<T> a, const __grid_constant__ P p) {
  constexpr int C = kClassesColumn;
  const DeviceGrid& g = a.grid;
  // Blocks start on 128-byte lines (tile_x_shift nodes before node 0 in the first block).
  const std::int64_t x =
      blockIdx.x * static_cast<std::int64_t>(kClassesBlockX) + threadIdx.x - tile_x_shift<T>(g);
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(kClassesBlockY) + threadIdx.y;
  if (x < 0 || x >= g.n[0] || y >= g.n[1]) return;
  const std::int64_t z0 = static_cast<std::int64_t>(blockIdx.z) * C;
  const int count = g.n[2] - z0 < C ? static_cast<int>(g.n[2] - z0) : C;
  // Pointers at the column's first node, offsets from it in 32 bits (launch_classes: a plane's
  // pitch times C + 2 fits).
  const std::int64_t first = g.index(x, y, z0);
  const int pz = static_cast<int>(g.pitch_z), py = static_cast<int>(g.pitch_y);
  const T* __restrict__ in = a.in + first;
  T* __restrict__ out = a.out + first;
  const std::uint8_t* __restrict__ cls = a.node_class + first;
  T factor[SOURCES > 0 ? SOURCES : 1];
#pragma unroll
  for (int s = 0; s < SOURCES; ++s) factor[s] = __ldg(a.factor + s);
  // The centre column from plane z0 - 1 to z0 + count (a ghost plane at either end at most),
  // asked for before the tile's word so that the word's latency hides behind it.
  T col[C + 2];
#pragma unroll
  for (int q = 0; q < C + 2; ++q) col[q] = q <= count + 1 ? __ldg(in + (q - 1) * pz) : T(0);
  // A uniform tile (CoefficientArgs::uniform_tile): its class and conductances once, no byte
  // of the compact form read per node, the same arithmetic.
  const std::uint32_t tile =
      a.uniform_tile
          ? __ldg(a.uniform_tile + (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x)
          : kMixedTile;
  if (tile != kMixedTile) {
    const unsigned c = tile & 0xffu;
    T kx, ky, kz;
    if constexpr (P::kFaces) {
      kx = p.face[0][(tile >> 8) & 0xffu];
      ky = p.face[1][(tile >> 16) & 0xffu];
      kz = p.face[2][tile >> 24];
    } else {
      kx = ky = kz = p.pair[c * kPairClasses + c];
    }
    const T dtc = p.dt_over_capacity[c];
    const T hold = TRANSFER ? p.transfer[c] : T(0);
    T src = T(0);
#pragma unroll
    for (int s = 0; s < SOURCES; ++s) src = fma(factor[s], p.source[c * kMaxSourceFields + s], src);
#pragma unroll
    for (int j = 0; j < C; ++j) {
      if (j < count) {
        const int i = j * pz;
        const T ui = col[j + 1];
        T flow = T(0);
        add_axis(flow, a.inv_h2[0], ui, kx, __ldg(in + i - 1), kx, __ldg(in + i + 1));
        add_axis(flow, a.inv_h2[1], ui, ky, __ldg(in + i - py), ky, __ldg(in + i + py));
        add_axis(flow, a.inv_h2[2], ui, kz, col[j], kz, col[j + 2]);
        out[i] = finish_value<TRANSFER>(dtc, hold, ui, flow + src);
      }
    }
    return;
  }
  // A mixed tile. The pairs' form node by node, the loop kept rolled, each value stored once
  // formed and the z neighbours read again (from L1): few registers held, so that the kernel
  // stays at the uniform tiles' count (ptxas, sm_90, fp64: 32 registers, 8 blocks of 256 per
  // SM; 40 with this column unrolled). The faces' form keeps its unrolled column (the classes
  // of its z faces once, the values stored last): 32 registers without sources, 40 with.
  if constexpr (!P::kFaces) {
#pragma unroll 1
    for (int j = 0; j < count; ++j) {
      const int i = j * pz;
      const unsigned c = __ldg(cls + i);
      const T ui = __ldg(in + i);
      const T* pair = p.pair + c * kPairClasses;
      T flow = T(0);
      add_axis(flow, a.inv_h2[0], ui, pair[__ldg(cls + i - 1)], __ldg(in + i - 1),
               pair[__ldg(cls + i + 1)], __ldg(in + i + 1));
      add_axis(flow, a.inv_h2[1], ui, pair[__ldg(cls + i - py)], __ldg(in + i - py),
               pair[__ldg(cls + i + py)], __ldg(in + i + py));
      add_axis(flow, a.inv_h2[2], ui, pair[__ldg(cls + i - pz)], __ldg(in + i - pz),
               pair[__ldg(cls + i + pz)], __ldg(in + i + pz));
      T src = T(0);
#pragma unroll
      for (int s = 0; s < SOURCES; ++s)
        src = fma(factor[s], p.source[c * kMaxSourceFields + s], src);
      out[i] = finish_value<TRANSFER>(p.dt_over_capacity[c], TRANSFER ? p.transfer[c] : T(0), ui,
                                      flow + src);
    }
  } else {
    const std::uint8_t* __restrict__ fx = a.face_class[0] + first;
    const std::uint8_t* __restrict__ fy = a.face_class[1] + first;
    const std::uint8_t* __restrict__ fz = a.face_class[2] + first;
    std::uint8_t zface[C + 1];  // the column's z faces' classes, from the one below plane z0 on
#pragma unroll
    for (int q = 0; q < C + 1; ++q) zface[q] = q <= count ? __ldg(fz + (q - 1) * pz) : 0;
    T value[C];
#pragma unroll
    for (int j = 0; j < C; ++j) {
      value[j] = T(0);
      if (j < count) {
        const int i = j * pz;
        const unsigned c = __ldg(cls + i);
        const T ui = col[j + 1];
        T flow = T(0);
        add_axis(flow, a.inv_h2[0], ui, p.face[0][__ldg(fx + i - 1)], __ldg(in + i - 1),
                 p.face[0][__ldg(fx + i)], __ldg(in + i + 1));
        add_axis(flow, a.inv_h2[1], ui, p.face[1][__ldg(fy + i - py)], __ldg(in + i - py),
                 p.face[1][__ldg(fy + i)], __ldg(in + i + py));
        add_axis(flow, a.inv_h2[2], ui, p.face[2][zface[j]], col[j], p.face[2][zface[j + 1]],
                 col[j + 2]);
        T src = T(0);
#pragma unroll
        for (int s = 0; s < SOURCES; ++s)
          src = fma(factor[s], p.source[c * kMaxSourceFields + s], src);
        value[j] = finish_value<TRANSFER>(p.dt_over_capacity[c], TRANSFER ? p.transfer[c] : T(0),
                                          ui, flow + src);
      }
    }
#pragma unroll
    for (int j = 0; j < C; ++j)
      if (j < count) out[j * pz] = value[j];
  }
}

// naive_classes_kernel with SOURCES = `sources` (S up to kMaxSourceFields).
template <typename T, class P, bool TRANSFER, int S = 0>
void launch_classes_with(int sources, dim3 grid, dim3 block, const CoefficientArgs<T>& a,
                         const P& p, cudaStream_t stream) {
  if constexpr (S < kMaxSourceFields) {
    if (sources > S)
      return launch_classes_with<T, P, TRANSFER, S + 1>(sources, grid, block, a, p, stream);
  }
  naive_classes_kernel<T, P, S, TRANSFER><<<grid, block, 0, stream>>>(a, p);
}

// The table's entries of `a`'s classes into `p` (PairParams or FaceParams).
template <typename T, class P>
void fill_params(const CoefficientArgs<T>& a, P& p) {
  const ClassTable<T>& t = *a.host_class_table;
  const int classes = std::min(a.classes, P::kClasses);
  if constexpr (P::kFaces) {
    for (int axis = 0; axis < 3; ++axis)
      std::copy(t.face[axis], t.face[axis] + a.face_classes[axis], p.face[axis]);
  } else {
    std::copy(t.pair, t.pair + kPairClasses * kPairClasses, p.pair);
  }
  std::copy(t.dt_over_capacity, t.dt_over_capacity + classes, p.dt_over_capacity);
  std::copy(t.source, t.source + classes * kMaxSourceFields, p.source);
  if (a.host_class_transfer)
    std::copy(a.host_class_transfer, a.host_class_transfer + classes, p.transfer);
}

// Launches naive_classes_kernel where it serves (3D, a compact form with its table on the
// host, the surfaces' transfer in it where the problem has some, no rules in the sweep, a
// launch grid that covers the problem); false otherwise.
template <typename T>
bool launch_classes(const CoefficientArgs<T>& a, int dims, const LaunchContext& context) {
  const DeviceGrid& g = a.grid;
  if (dims != 3 || a.node_class == nullptr || a.host_class_table == nullptr || any_rule(a.rules))
    return false;
  const bool faces = a.faces[0] != nullptr;
  const bool transfer = a.transfer != nullptr;
  if (faces && a.face_class[0] == nullptr) return false;
  if (!faces && a.classes > kPairClasses) return false;
  if (transfer && a.host_class_transfer == nullptr) return false;
  const std::int64_t by = (g.n[1] + kClassesBlockY - 1) / kClassesBlockY;
  const std::int64_t bz = (g.n[2] + kClassesColumn - 1) / kClassesColumn;
  if (by > 65535 || bz > 65535) return false;
  // The kernel's offsets from a column's first node in 32 bits.
  if (g.pitch_z > std::numeric_limits<int>::max() / (kClassesColumn + 2)) return false;
  static_assert(kClassesBlockX == kUniformTileX && kClassesBlockY == kUniformTileY &&
                    kClassesColumn == kUniformTileZ,
                "a block's nodes are a uniform tile's");
  // The uniform tiles where they cover this sweep's grid (not a box of it).
  CoefficientArgs<T> args = a;
  const DeviceGrid& t = a.tile_grid;
  if (t.origin != g.origin || t.pitch_y != g.pitch_y || t.pitch_z != g.pitch_z ||
      t.n[0] != g.n[0] || t.n[1] != g.n[1] || t.n[2] != g.n[2])
    args.uniform_tile = nullptr;
  const dim3 block(kClassesBlockX, kClassesBlockY, 1);
  const dim3 grid(
      static_cast<unsigned>((g.n[0] + tile_x_shift<T>(g) + kClassesBlockX - 1) / kClassesBlockX),
      static_cast<unsigned>(by), static_cast<unsigned>(bz));
  const auto go = [&](auto params) {
    auto& p = *params;
    fill_params(a, p);
    if (transfer)
      launch_classes_with<T, std::decay_t<decltype(p)>, true>(a.sources, grid, block, args, p,
                                                              context.stream);
    else
      launch_classes_with<T, std::decay_t<decltype(p)>, false>(a.sources, grid, block, args, p,
                                                               context.stream);
  };
  if (faces)
    go(std::make_unique<FaceParams<T>>());
  else
    go(std::make_unique<PairParams<T>>());
  HEATSIM_CUDA_CHECK_LAUNCH();
  return true;
}

template <class Op>
void launch(const typename Op::Args& args, const LaunchContext& context) {
  const DeviceGrid& g = args.grid;
  const dim3 block = Op::kDims == 1 ? dim3(256, 1, 1) : dim3(32, 8, 1);
  const auto blocks = [](std::int64_t n, unsigned b, std::int64_t cap) {
    return static_cast<unsigned>(std::min<std::int64_t>((n + b - 1) / b, cap));
  };
  const dim3 grid(blocks(g.n[0], block.x, 0x7fffffff), blocks(g.n[1], block.y, 65535),
                  blocks(g.n[2], column_length<Op>(), 65535));
  const bool covered = static_cast<std::int64_t>(grid.y) * block.y >= g.n[1] &&
                       static_cast<std::int64_t>(grid.z) * column_length<Op>() >= g.n[2];
  if (covered)
    naive_kernel<Op, false><<<grid, block, 0, context.stream>>>(args);
  else
    naive_kernel<Op, true><<<grid, block, 0, context.stream>>>(args);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void launch_naive_sweep(const SweepArgs<T>& args, const SweepShape& shape,
                        const LaunchContext& context) {
  dispatch_stencil<T>(shape, [&](auto op) { launch<typename decltype(op)::type>(args, context); });
}

template <typename T>
void launch_naive_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                    const LaunchContext& context) {
  // In 3D the compact forms go to naive_classes_kernel. Elsewhere the faces given are read from
  // their arrays even where they are compacted: at 512^3 the faces' classes through the point
  // operator (a byte per face, then the table from global memory) took cuda-naive's
  // Heat-3D-faces row from 50.7 to 39.7 GStencil/s on an H200.
  const CoefficientForm compact = coefficient_form(args);
  const CoefficientForm form =
      compact == CoefficientForm::face_classes ? CoefficientForm::faces : compact;
  if (args.node_class != nullptr && launch_classes(args, dims, context)) return;
  dispatch_flux(args, dims, form, [&](auto op) {
    using Op = typename decltype(op)::type;
    if constexpr (Op::kForm != CoefficientForm::face_classes) launch<Op>(args, context);
  });
}

template void launch_naive_sweep<float>(const SweepArgs<float>&, const SweepShape&,
                                        const LaunchContext&);
template void launch_naive_sweep<double>(const SweepArgs<double>&, const SweepShape&,
                                         const LaunchContext&);
template void launch_naive_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                    const LaunchContext&);
template void launch_naive_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                     const LaunchContext&);

}  // namespace heatsim::kernels::cuda
