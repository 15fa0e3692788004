// The varying-coefficient step on the device (StencilProblem::coefficients, backend.hpp):
//   u_i <- u_i + dt/C_i * ( sum_axis inv_h2[axis] * sum_{j = i-e, i+e} K_ij (u_j - u_i)
//                           + sum_s factor_s * q_s,i ),   K_ij = 2 k_i k_j / (k_i + k_j),
// with the CPU reference's grouping and order (cpu_backend.cpp, sweep_fields), in T:
//   flow = 0; for each active axis x, y, z:
//     flow += inv_h2 * (K(i, i-e) * (u[i-e] - u_i) + K(i, i+e) * (u[i+e] - u_i))
//   src = 0; for each source s in order: src += factor_s * q_s[i]
//   u_i <- u_i + (T(dt) / T(C_i)) * (flow + src)
// What a sweep needs (the fields on the device, the step's source factors) and the per-node
// arithmetic every CUDA-core sweep shares (the flux operator of point_operators.cuh and
// register-tiling's sweep), so that every tiling rounds alike. They differ from the CPU by the
// multiply-adds the compiler fuses: an ulp here and there, ~1e-16 per step.
#pragma once

#include <cstdint>

#include "../boundary_rules.hpp"
#include "../face_conductance.hpp"
#include "../node_classes.hpp"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// One sweep of the coefficient operator, out <- step(in) over every interior node. All fields
// share the padded layout `grid` (ghost width 1): `in` with its ghosts filled for this step
// (coefficient_fields.cuh), `conductivity` with its ghosts filled once at setup (mirror node,
// periodic image), `dt_over_capacity` = dt / (rho c_p) and the source densities on the
// interior.
// The faces' ghost rules (boundary_rules.hpp) for a sweep that applies them itself: at a
// boundary node b of a face with `apply` set, the neighbour beyond the face is
// coefficient_ghost(rule, u_b, u_m, K_bm, K_g), m the node one inside, K_bm the conductance
// between them and K_g that of the face toward the ghost: the value the ghost fill
// (coefficient_fields.cuh) would have stored, from the same operands, so the ghost layer of
// `in` is never read there. Periodic faces (apply unset) read the ghost layer.
struct FaceRules {
  bool apply[kFaces] = {};
  CoefficientGhostRule rule[kFaces];
};

// Whether some face's rule applies.
inline bool any_rule(const FaceRules& r) {
  for (bool a : r.apply)
    if (a) return true;
  return false;
}

// Where a sweep takes each node's conductivity, dt/C and source densities from:
//   fields:  k, dt/C and each source density per node, the faces' conductances the harmonic
//            mean of the two nodes' k;
//   faces:   each face's conductance from its array (CoefficientArgs::faces), dt/C and the
//            sources per node;
//   classes: a class per node (node_classes.hpp, CoefficientArgs::node_class) and the classes'
//            table (ClassTable): k, dt/C and the source densities of each class, the faces'
//            conductances the harmonic mean of the two classes' k;
//   face_classes: the faces given as a class per face and axis (CoefficientArgs::face_class)
//            and the table's distinct conductances of each axis, dt/C and the sources from
//            the node's class.
// fields and classes give the same bits, and so do faces and face_classes: the table holds
// the values the fields hold.
enum class CoefficientForm { fields, faces, classes, face_classes };

// The classes' table (CoefficientForm::classes), in T, on the device; a sweep stages the
// entries of the problem's classes (CoefficientArgs::classes) into shared memory. k[c] is the
// class's conductivity, dt_over_capacity[c] = T(dt) / T(C_c) (0 for a void),
// source[c * kMaxSourceFields + s] the density of source s. In the classes form (at most
// kPairClasses classes) pair[c * kPairClasses + d] holds the conductance between classes c and
// d, face_conductance(k[c], k[d]) formed once: a sweep reads it instead of comparing and
// dividing per face (Heat-3D-mat fp64 on an H200: 89.6 against 79.1 GStencil/s), with no
// branch around the lookup.
template <typename T>
struct ClassTable {
  T pair[kPairClasses * kPairClasses];
  T face[3][kMaxNodeClasses];  // face_classes: the distinct conductances of each axis's faces
  T k[kMaxNodeClasses];
  T dt_over_capacity[kMaxNodeClasses];
  T source[kMaxNodeClasses * kMaxSourceFields];
};

// The tiles of cuda-naive's 3D compact kernel: 64 x 4 columns of 4 nodes along z, a block of
// threads each. A tile is uniform when every byte its sweep reads of the compact form is one
// value: its nodes' classes and, without the faces given, its neighbours' (the pairs' lookups),
// with them its faces' classes on each axis (the faces toward the tile's lower neighbours
// included). Such a tile's sweep reads no class byte: one word (DeviceCoefficients::
// uniform_tile) names its node class and its x, y and z faces' classes in bytes 0-3;
// kMixedTile marks the rest (and a uniform tile whose four bytes are all 255, which the
// general sweep serves as well).
constexpr unsigned kUniformTileX = 64, kUniformTileY = 4, kUniformTileZ = 4;
constexpr std::uint32_t kMixedTile = 0xffffffffu;
// The tiles along x start on 128-byte lines: the first tile begins this many nodes before the
// grid's node x = 0 (its row start's place within a line; 0 on the padded grid, whose rows
// start on lines, 1 on the box inside fixed faces), so that no warp's loads and stores
// straddle two lines.
template <typename T>
__host__ __device__ inline int tile_x_shift(const DeviceGrid& g) {
  return static_cast<int>(g.origin % static_cast<std::int64_t>(128 / sizeof(T)));
}

template <typename T>
struct CoefficientArgs {
  const T* in = nullptr;
  T* out = nullptr;
  const T* conductivity = nullptr;
  // The faces' conductances (CoefficientFields::faces), padded, ghost faces filled: faces[a][i]
  // is K(i, i + e_a). Null when the faces take the harmonic mean of k; a sweep then reads k.
  const T* faces[3] = {nullptr, nullptr, nullptr};
  const T* dt_over_capacity = nullptr;
  const T* transfer = nullptr;  // H of surfaces inside the body (CoefficientFields::transfer)
  const T* source[kMaxSourceFields] = {};
  // The compact form (CoefficientForm::classes): per node its class, padded, ghosts holding the
  // class of the node whose k the ghost takes; and the classes' table. Null: the fields. The
  // fields above are set either way (sweeps without the compact form read them).
  const std::uint8_t* node_class = nullptr;
  const ClassTable<T>* class_table = nullptr;
  // The same table on the host (never read on the device): a launcher that passes its entries
  // in the kernel's parameters reads them here. Null where the table is not kept there.
  const ClassTable<T>* host_class_table = nullptr;
  // With it, where the backend takes the surfaces' transfer into the compact form
  // (Capabilities::compact_transfer) and the problem has some: H of each class's nodes, on the
  // host; else null.
  const T* host_class_transfer = nullptr;
  int classes = 0;  // the classes in the table (at most kPairClasses without the faces given)
  // face_classes: per axis, each face's class (padded, ghost faces filled, as faces[a]) and
  // the number of distinct conductances in ClassTable::face[a]. Null: the faces' arrays.
  const std::uint8_t* face_class[3] = {nullptr, nullptr, nullptr};
  int face_classes[3] = {0, 0, 0};
  // face_classes in 2D and 3D: per element the node's class and the classes of its faces along
  // each axis a (face_class[a] at the element) as bytes 0 and 1 + a of one word, which the
  // register march stages with u. Set with face_class in 2D and 3D.
  const std::uint32_t* packed_class = nullptr;
  // With the compact form in 3D: a word per tile of kUniformTileX x Y x Z nodes over
  // `tile_grid` (the tiles' x fastest), as above; a sweep takes it only over that grid.
  const std::uint32_t* uniform_tile = nullptr;
  DeviceGrid tile_grid;
  // Schedule::mean(t, t + dt) of each source this step, kMaxSourceFields values on the device
  // (a row of the stepper's StepTable, so that a step replayed from a graph reads its own).
  const T* factor = nullptr;
  int sources = 0;
  T inv_h2[3] = {T(1), T(1), T(1)};
  DeviceGrid grid;
  // Faces whose ghosts the sweep forms by their rules instead of reading them (a sweep whose
  // launcher says so: CoefficientSweep::applies_rules); none set: every ghost is read.
  FaceRules rules;
};

// The form a sweep of `a` takes: the faces when given (as classes when compacted), else the
// classes when given.
// Every node of a varying-coefficient sweep's rows is stored (SweepArgs::store_x's
// counterpart).
template <typename T>
__host__ __device__ inline bool stores_x(const CoefficientArgs<T>&, std::int64_t) {
  return true;
}

// The compact forms of the point operators carry no transfer: with surfaces inside the body a
// sweep of them reads the arrays (cuda-naive's classes kernel takes the classes' transfer from
// its table itself, naive_sweep.cu).
template <typename T>
CoefficientForm coefficient_form(const CoefficientArgs<T>& a) {
  const bool compact = a.transfer == nullptr;
  if (a.faces[0])
    return a.face_class[0] && compact ? CoefficientForm::face_classes : CoefficientForm::faces;
  return a.node_class && compact ? CoefficientForm::classes : CoefficientForm::fields;
}

// Whether a form takes dt/C and the sources from the node's class.
__host__ __device__ constexpr bool takes_classes(CoefficientForm f) {
  return f == CoefficientForm::classes || f == CoefficientForm::face_classes;
}

template <typename T>
using CoefficientLauncher = void (*)(const CoefficientArgs<T>& args, int dims,
                                     const LaunchContext& context);

// The neighbours u_lo and u_hi of node i along an axis where it is the first (c == 0) or last
// (c == n - 1) node of its line: the face's rule in place of the ghost layer's value where
// FaceRules applies (k_lo and k_hi the node's two faces' conductances on that axis). Inlined:
// out of line (noinline) the register-tiling sweep ran slower still (Heat-3D-mat 96^3: 29.6
// against 33.5 GStencil/s).
template <typename T>
__device__ __forceinline__ void apply_face_rules(const FaceRules& r, int axis, std::int64_t c,
                                                 std::int64_t n, T ui, T k_lo, T k_hi, T& u_lo,
                                                 T& u_hi) {
  const T lo = u_lo, hi = u_hi;
  if (c == 0 && r.apply[2 * axis]) u_lo = coefficient_ghost(r.rule[2 * axis], ui, hi, k_hi, k_lo);
  if (c == n - 1 && r.apply[2 * axis + 1])
    u_hi = coefficient_ghost(r.rule[2 * axis + 1], ui, lo, k_lo, k_hi);
}

using kernels::face_conductance;

// K(i, i - e_axis) and K(i, i + e_axis) of node i (element index) from the faces' array, for
// sweeps that read the faces from global memory (FACES true) rather than staging k.
template <typename T>
__device__ __forceinline__ void face_pair(const CoefficientArgs<T>& a, int axis, std::int64_t i,
                                          std::int64_t stride, T& k_lo, T& k_hi) {
  k_lo = a.faces[axis][i - stride];
  k_hi = a.faces[axis][i];
}

// One axis's flow into node i, inv_h2 * (K_lo (u_lo - u_i) + K_hi (u_hi - u_i)), added to the
// node's sum, from the two faces' conductances. The multiply-adds are spelled out (the lower
// face's product rounded, the upper face's fused with it, the axis's sum fused into the flow), so
// that every kernel that forms a node this way rounds it alike, whatever the compiler would
// fuse in each (tests/gpu/coefficients_test.cpp compares kernels bit for bit).
template <typename T>
__device__ __forceinline__ void add_axis(T& flow, T inv_h2, T ui, T k_lo, T u_lo, T k_hi, T u_hi) {
  flow = fma(inv_h2, fma(k_hi, u_hi - ui, rounded_product(k_lo, u_lo - ui)), flow);
}

// The node's sources in order, at the factors `factor` (this step's: CoefficientArgs::factor).
template <typename T>
__device__ __forceinline__ T node_source(const CoefficientArgs<T>& a, const T* factor,
                                         std::int64_t i) {
  T src = T(0);
#pragma unroll
  for (int s = 0; s < kMaxSourceFields; ++s)
    if (s < a.sources) src = fma(factor[s], a.source[s][i], src);
  return src;
}
template <typename T>
__device__ __forceinline__ T node_source(const CoefficientArgs<T>& a, std::int64_t i) {
  return node_source(a, a.factor, i);
}

// u + dt/C * sum (sum = flow + src), or with surfaces inside the body (TRANSFER) u + dt/C *
// (sum - H u), from values at hand (a compact sweep's table entries): finish_node's arithmetic.
template <bool TRANSFER, typename T>
__device__ __forceinline__ T finish_value(T dt_over_capacity, T transfer, T ui, T sum) {
  if constexpr (TRANSFER)
    return fma(dt_over_capacity, fma(-transfer, ui, sum), ui);
  else
    return fma(dt_over_capacity, sum, ui);
}

// The node's new value from its flow: u + dt/C * (flow + src), or with surfaces inside the body
// (TRANSFER, CoefficientArgs::transfer set) u + dt/C * ((flow + src) - H u).
template <bool TRANSFER, typename T>
__device__ __forceinline__ T finish_node(const CoefficientArgs<T>& a, const T* factor,
                                         std::int64_t i, T ui, T flow) {
  const T sum = flow + node_source(a, factor, i);
  if constexpr (TRANSFER)
    return fma(a.dt_over_capacity[i], fma(-a.transfer[i], ui, sum), ui);
  else
    return fma(a.dt_over_capacity[i], sum, ui);
}
template <bool TRANSFER, typename T>
__device__ __forceinline__ T finish_node(const CoefficientArgs<T>& a, std::int64_t i, T ui,
                                         T flow) {
  return finish_node<TRANSFER>(a, a.factor, i, ui, flow);
}

// Copies the entries of the problem's classes of the classes' table (CoefficientArgs::
// class_table) into `staged` (shared memory), every thread of the block a share; the caller
// synchronises the block before reading it.
template <typename T>
__device__ __forceinline__ void stage_class_table(const CoefficientArgs<T>& a,
                                                  ClassTable<T>& staged) {
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const ClassTable<T>& from = *a.class_table;
  for (int j = tid; j < a.classes; j += threads) {
    staged.k[j] = from.k[j];
    staged.dt_over_capacity[j] = from.dt_over_capacity[j];
  }
  if (!a.faces[0])  // the classes form: the pairs' conductances
    for (int j = tid; j < kPairClasses * kPairClasses; j += threads) staged.pair[j] = from.pair[j];
  // Every entry of an axis with faces' classes: a march looks its faces up before it knows
  // whether the node is in the grid, so a slot outside it reads a zero here.
  for (int axis = 0; axis < 3; ++axis)
    if (a.face_classes[axis] > 0)
      for (int j = tid; j < kMaxNodeClasses; j += threads)
        staged.face[axis][j] = j < a.face_classes[axis] ? from.face[axis][j] : T(0);
  for (int j = tid; j < a.classes * a.sources; j += threads) {
    const int c = j / a.sources, s = j - c * a.sources;
    staged.source[c * kMaxSourceFields + s] = from.source[c * kMaxSourceFields + s];
  }
}

// The conductance between classes c and d: the harmonic mean of their k (face_conductance),
// formed on the host for every pair (the classes form has at most kPairClasses classes), so
// that a sweep looks it up with no division and no branch.
template <typename T>
__device__ __forceinline__ T class_conductance(const ClassTable<T>& t, unsigned c, unsigned d) {
  return t.pair[c * kPairClasses + d];
}

// A node of class c's sources in order at the factors `factor` (node_source's sum).
template <typename T>
__device__ __forceinline__ T class_source(const CoefficientArgs<T>& a, const ClassTable<T>& t,
                                          const T* factor, unsigned c) {
  T src = T(0);
#pragma unroll
  for (int s = 0; s < kMaxSourceFields; ++s)
    if (s < a.sources) src = fma(factor[s], t.source[c * kMaxSourceFields + s], src);
  return src;
}

}  // namespace heatsim::kernels::cuda
