// The point operators the CUDA tilings are written over: what one output node is, as a function
// of its neighbourhood. A tiling decides which nodes a thread computes and where their
// neighbours are read from (global memory, a tile staged in shared memory); the operator decides
// the arithmetic, so a new kind of physics is a new operator, not a new sweep per tiling.
//
// An operator Op declares
//   Value, Args                the value type and what a sweep of it needs;
//   kDims, kRadius             the problem's dimensions and how far a node's neighbours reach;
//   kStar                      whether only the axes' neighbours are read (a tile's corners are
//                              then not staged);
//   kBox                       whether every offset of the (2R+1)^dims window is read;
//   kCoefficients              whether nodes carry coefficients of their own (the tilings pick
//                              their shapes by it);
//   kRules                     whether it forms the faces' ghosts by their rules itself;
//   kStaged, staged_field(a, s)  the fields a tiling stages per node (slot 0 is u) and where
//                              each lives in global memory;
//   Block, enter(a)            what a block shares (the classes' table); every thread of the
//                              block calls enter before any leaves;
//   point(a, block, near)      the node's new value, its neighbourhood read through `near`:
//                              near.at<S>(dx, dy, dz) is staged field S at offset (dx, dy, dz)
//                              from the node; near.i its element index and near.x, y, z its
//                              coordinates (for what is read from global memory by index, and
//                              the faces' rules);
// and may declare
//   column<C>(a, first, outputs)   C nodes along z at once, each input loaded once for every
//                              output it feeds (the constant stencil: cuda-naive's 3D columns).
#pragma once

#include <cstdint>

#include "coefficient_sweep.cuh"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// A node's neighbourhood read from global memory: node i of a column whose first node is at
// element `first` of each staged field, the node `j` planes along z from it (j a constant once
// the column's loop unrolls, so that outputs of one column share the loads of a plane).
// READ_ONLY: the fields are not written while the kernel runs (a sweep from one buffer into
// another, not a persistent run's steps), so they may be read through the read-only data path.
template <typename T, int STAGED, bool READ_ONLY>
struct GlobalNear {
  const T* field[STAGED];  // each staged field at the column's first node
  std::int64_t pitch_y, pitch_z;
  int j;
  std::int64_t i, x, y, z;

  template <int S>
  __device__ __forceinline__ T at(int dx, int dy, int dz) const {
    const T* p = field[S] + ((j + dz) * pitch_z + dy * pitch_y + dx);
    if constexpr (READ_ONLY) return __ldg(p);
    return *p;
  }
};

// The neighbourhood of node `first` + j planes along z, the staged fields of Op read from
// global memory (slot 0 from `u` when given: a run that alternates its buffers).
template <class Op, bool READ_ONLY>
__device__ __forceinline__ GlobalNear<typename Op::Value, Op::kStaged, READ_ONLY> global_near(
    const typename Op::Args& a, const typename Op::Value* u, std::int64_t first, int j,
    std::int64_t x, std::int64_t y, std::int64_t z) {
  GlobalNear<typename Op::Value, Op::kStaged, READ_ONLY> near;
#pragma unroll
  for (int s = 0; s < Op::kStaged; ++s) near.field[s] = Op::staged_field(a, s) + first;
  if (u) near.field[0] = u + first;
  near.pitch_y = a.grid.pitch_y;
  near.pitch_z = a.grid.pitch_z;
  near.j = j;
  near.i = first + j * a.grid.pitch_z;
  near.x = x;
  near.y = y;
  near.z = z + j;
  return near;
}

// The constant stencil: out = sum_taps w * u(x + d) + dt*f over the taps TAPS of radius R, in
// kernels::Stencil's order (for_each_tap).
template <typename T, int DIMS, int R, int TAPS>
struct StencilPoint {
  using Value = T;
  using Args = SweepArgs<T>;
  static constexpr int kDims = DIMS, kRadius = R, kStaged = 1;
  static constexpr bool kStar = TAPS == kStarTaps, kBox = TAPS == kBoxTaps, kCoefficients = false;
  static constexpr bool kRules = false;
  struct Block {};

  __device__ static const T* staged_field(const Args& a, int) { return a.in; }
  __device__ static Block enter(const Args&) { return {}; }

  template <class Near>
  __device__ __forceinline__ static T point(const Args& a, const Block&, const Near& near) {
    T acc = T(0);
    for_each_tap<DIMS, R, TAPS>([&](int dx, int dy, int dz, int w) {
      acc += a.weights.w[w] * near.template at<0>(dx, dy, dz);
    });
    return acc + a.source;
  }

  // Whether plane q (relative to a column's first output) feeds any of C outputs through tap
  // (dx, dy, q - j), j in [0, C).
  template <int C>
  __host__ __device__ static constexpr bool plane_tap_used(int dx, int dy, int q) {
    for (int j = 0; j < C; ++j) {
      const int dz = q - j;
      if (dz >= -R && dz <= R && is_tap<TAPS, R>(dx, dy, dz)) return true;
    }
    return false;
  }

  // point() of C consecutive nodes along z (3D) from a.in to a.out, the first at element `first`,
  // plane by plane: each input loaded once and added to every output it feeds, planes in
  // increasing z and each plane's taps in increasing y, x, so that every output sums its taps in
  // point()'s order. Only the first `outputs` nodes are formed (planes beyond them are not
  // read). The pitches are read from the arguments where they are used, not held: held in
  // registers (and the values formed into an array and stored after), the radius-1 box took 57
  // registers instead of 48, four blocks per SM instead of five, and Box-3D27P ran 7% slower.
  template <int C>
  __device__ __forceinline__ static void column(const Args& a, std::int64_t first, int outputs) {
    static_assert(DIMS == 3, "columns run along z");
    const DeviceGrid& g = a.grid;
    const T* __restrict__ in = a.in;
    T* __restrict__ out = a.out;
    T value[C];
#pragma unroll
    for (int j = 0; j < C; ++j) value[j] = T(0);
#pragma unroll
    for (int q = -R; q < C + R; ++q) {
      if (q - R >= outputs) break;  // this plane feeds only nodes beyond the grid
      const T* __restrict__ plane = in + first + q * g.pitch_z;
#pragma unroll
      for (int dy = -R; dy <= R; ++dy)
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) {
          if (!plane_tap_used<C>(dx, dy, q)) continue;
          const T v = plane[dy * g.pitch_y + dx];
#pragma unroll
          for (int j = 0; j < C; ++j) {
            const int dz = q - j;
            if (dz >= -R && dz <= R && is_tap<TAPS, R>(dx, dy, dz))
              value[j] += a.weights.w[weight_index<3, R>(dx, dy, dz)] * v;
          }
        }
    }
#pragma unroll
    for (int j = 0; j < C; ++j)
      if (j < outputs) out[first + j * g.pitch_z] = value[j] + a.source;
  }
};

// The classes' table of `a` staged in shared memory for the block (stage_class_table), the
// block synchronised after it.
template <typename T>
__device__ __forceinline__ const ClassTable<T>* staged_class_table(const CoefficientArgs<T>& a) {
  __shared__ ClassTable<T> staged;
  stage_class_table(a, staged);
  __syncthreads();
  return &staged;
}

// The conservative flux operator (coefficient_sweep.cuh): FORM says where the coefficients
// come from, TRANSFER adds the surfaces' H (not with classes), RULES applies the faces' rules at
// boundary nodes. Staged: u, and k where the faces are the harmonic means of the nodes' k; the
// faces' arrays, classes, dt/C and sources are read per node by index.
template <typename T, int DIMS, CoefficientForm FORM, bool TRANSFER, bool RULES>
struct FluxPoint {
  static_assert(!(TRANSFER && takes_classes(FORM)), "no surfaces with classes");
  using Value = T;
  using Args = CoefficientArgs<T>;
  static constexpr int kDims = DIMS, kRadius = 1;
  static constexpr int kStaged = FORM == CoefficientForm::fields ? 2 : 1;
  static constexpr bool kStar = true, kBox = false, kCoefficients = true, kRules = RULES;
  static constexpr CoefficientForm kForm = FORM;
  // The classes' table (classes and face_classes) and the step's source factors.
  struct Block {
    const ClassTable<T>* table;
    const T* factor;
  };

  __device__ static const T* staged_field(const Args& a, int s) {
    return s == 0 ? a.in : a.conductivity;
  }
  __device__ static Block enter(const Args& a) {
    if constexpr (takes_classes(FORM)) return {staged_class_table(a), a.factor};
    else return {nullptr, a.factor};
  }

  template <class Near>
  __device__ __forceinline__ static T point(const Args& a, const Block& b, const Near& near) {
    const DeviceGrid& g = a.grid;
    const std::uint8_t* __restrict__ cls = a.node_class;
    const std::int64_t i = near.i;
    const T ui = near.template at<0>(0, 0, 0);
    T ki = T(0);
    if constexpr (FORM == CoefficientForm::fields) ki = near.template at<1>(0, 0, 0);
    const unsigned ci = takes_classes(FORM) ? cls[i] : 0u;
    T flow = T(0);
#pragma unroll
    for (int axis = 0; axis < DIMS; ++axis) {
      const int ex = axis == 0, ey = axis == 1, ez = axis == 2;
      const std::int64_t st = g.stride(axis);
      T k_lo, k_hi;
      if constexpr (FORM == CoefficientForm::faces) {
        face_pair(a, axis, i, st, k_lo, k_hi);
      } else if constexpr (FORM == CoefficientForm::face_classes) {
        k_lo = b.table->face[axis][a.face_class[axis][i - st]];
        k_hi = b.table->face[axis][a.face_class[axis][i]];
      } else if constexpr (FORM == CoefficientForm::classes) {
        k_lo = class_conductance(*b.table, ci, cls[i - st], a.pairs);
        k_hi = class_conductance(*b.table, ci, cls[i + st], a.pairs);
      } else {
        k_lo = face_conductance(ki, near.template at<1>(-ex, -ey, -ez));
        k_hi = face_conductance(ki, near.template at<1>(ex, ey, ez));
      }
      T u_lo = near.template at<0>(-ex, -ey, -ez), u_hi = near.template at<0>(ex, ey, ez);
      if constexpr (RULES) {
        const std::int64_t c = axis == 0 ? near.x : axis == 1 ? near.y : near.z;
        apply_face_rules(a.rules, axis, c, g.n[axis], ui, k_lo, k_hi, u_lo, u_hi);
      }
      add_axis(flow, a.inv_h2[axis], ui, k_lo, u_lo, k_hi, u_hi);
    }
    if constexpr (takes_classes(FORM))
      return fma(b.table->dt_over_capacity[ci], flow + class_source(a, *b.table, b.factor, ci), ui);
    else
      return finish_node<TRANSFER>(a, b.factor, i, ui, flow);
  }
};

// An operator type as a value, for the generic lambdas the dispatchers below call:
// [&](auto op) { using Op = typename decltype(op)::type; ... }.
template <class Op>
struct OperatorTag {
  using type = Op;
};

// dispatch_shape's launcher that hands each shape on as its StencilPoint.
template <typename T, typename Pick>
struct StencilPick {
  Pick& pick;
  template <int DIMS, int R, int TAPS>
  void operator()() const {
    pick(OperatorTag<StencilPoint<T, DIMS, R, TAPS>>{});
  }
};

// Calls pick(OperatorTag<StencilPoint<T, DIMS, R, TAPS>>{}) for the shape (dispatch_shape's
// instantiations).
template <typename T, typename Pick>
void dispatch_stencil(const SweepShape& shape, Pick&& pick) {
  dispatch_shape(shape, StencilPick<T, std::remove_reference_t<Pick>>{pick});
}

// Calls pick(OperatorTag<FluxPoint<T, DIMS, FORM, TRANSFER, RULES>>{}) for the form, surfaces
// and rules of `a` (FORM as given: a tiling maps the compact forms it does not read to the
// fields first). The one place that turns a coefficient sweep's run-time choices into an
// operator type.
template <typename T, int DIMS, typename Pick>
void dispatch_flux_form(const CoefficientArgs<T>& a, CoefficientForm form, Pick&& pick) {
  const bool transfer = a.transfer != nullptr, rules = any_rule(a.rules);
  const auto with_rules = [&](auto rules_tag) {
    constexpr bool RULES = decltype(rules_tag)::value;
    constexpr auto kFields = CoefficientForm::fields, kFaces = CoefficientForm::faces;
    constexpr auto kClasses = CoefficientForm::classes;
    constexpr auto kFaceClasses = CoefficientForm::face_classes;
    switch (form) {
      case kClasses:
        return pick(OperatorTag<FluxPoint<T, DIMS, kClasses, false, RULES>>{});
      case kFaceClasses:
        return pick(OperatorTag<FluxPoint<T, DIMS, kFaceClasses, false, RULES>>{});
      case kFaces:
        return transfer ? pick(OperatorTag<FluxPoint<T, DIMS, kFaces, true, RULES>>{})
                        : pick(OperatorTag<FluxPoint<T, DIMS, kFaces, false, RULES>>{});
      default:
        return transfer ? pick(OperatorTag<FluxPoint<T, DIMS, kFields, true, RULES>>{})
                        : pick(OperatorTag<FluxPoint<T, DIMS, kFields, false, RULES>>{});
    }
  };
  if (rules) with_rules(std::true_type{});
  else with_rules(std::false_type{});
}

// dispatch_flux_form for the problem's dims.
template <typename T, typename Pick>
void dispatch_flux(const CoefficientArgs<T>& a, int dims, CoefficientForm form, Pick&& pick) {
  switch (dims) {
    case 1: return dispatch_flux_form<T, 1>(a, form, pick);
    case 2: return dispatch_flux_form<T, 2>(a, form, pick);
    default: return dispatch_flux_form<T, 3>(a, form, pick);
  }
}

}  // namespace heatsim::kernels::cuda
