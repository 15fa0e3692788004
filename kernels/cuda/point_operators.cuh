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
//   Block, enter(a)            what a block shares (the classes' table, the step's source
//                              factors); every thread of the block calls enter before any
//                              leaves; at_step(block, factor) the same block at another step's
//                              source factors (a pass of several steps: temporal-blocking);
//                              enter_unstaged(a) the same with nothing staged or summed and no
//                              barrier (a block of one node per thread: cuda-naive);
//   point(a, block, near)      the node's new value, its neighbourhood read through `near`:
//                              near.at<S>(dx, dy, dz) is staged field S at offset (dx, dy, dz)
//                              from the node; near.i its element index and near.x, y, z its
//                              coordinates (for what is read from global memory by index, and
//                              the faces' rules);
// and may declare
//   column<C>(a, first, outputs)   C nodes along z at once, each input loaded once for every
//                              output it feeds (the constant stencil: cuda-naive's 3D columns);
//   the march (register-tiling, 2D and 3D): the planes of the slowest axis (z in 3D, y in 2D)
//   arrive in order, each staged in shared memory with its in-plane halo, and a thread carries
//   its column's pending outputs from plane to plane:
//     Plane<SY, SX>            what a plane stages per node (the arrays of an SY x SX tile);
//     Slot, load(a, in, e), put(plane, l, slot)   one node's staged values: read from element e
//                              (u from `in`), stored as tile node l;
//     kPrefetch                how many planes a thread's loads run ahead (1 or 2 register
//                              sets of Slots);
//     kRows                    the nodes along y each thread forms in a plane (3D; 1 in 2D);
//                              the tile is kRows times as tall, the thread's rows at.y ..
//                              at.y + kRows - 1;
//     request(plane, l, src, ok)  (optional) tile node l by an asynchronous copy from src
//                              (zero-filled where !ok), for tilings that stage by copies;
//     March: start(), plane(a, block, tile, at, p)   the column's state; plane p added to it
//                              (at: MarchAt), each output stored once complete.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

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

// Where a marching thread's column is (the march of the operators below): its node in the
// plane tile (without the halo), its coordinates, the element of its node in plane 0 (planes are
// march_pitch apart), the outputs [m0, m1) its block forms along the march axis, and whether
// its node is inside the grid.
struct MarchAt {
  int tx, ty;
  std::int64_t x, y, own;
  std::int64_t m0, m1, march_n, march_pitch;
  bool active;
};

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
  __device__ static Block enter_unstaged(const Args&) { return {}; }
  __device__ static Block at_step(const Block& b, const T*) { return b; }

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

  // The march: instead of holding the 2R+1 input planes, a thread holds 2R+1 partial sums.
  // Plane p adds w(., ., p - m) * u(p) to the pending outputs m = p-R .. p+R, and output p-R is
  // complete once plane p is in. That covers stars (planes p != m give their centre node only)
  // and boxes (every node of the in-plane window read once from shared memory and applied to
  // all 2R+1 sums; for a fused star, only the sums whose offset is a tap). Each output sums its
  // taps plane by plane, in increasing y and x within a plane.
  template <int SY, int SX>
  struct Plane {
    T u[SY][SX];
  };
  struct Slot {
    T u;
  };
  static constexpr int kPrefetch = 2, kRows = 1;
  __device__ __forceinline__ static Slot load(const Args&, const T* __restrict__ in,
                                              std::int64_t e) {
    return {in[e]};
  }
  template <int SY, int SX>
  __device__ __forceinline__ static void put(Plane<SY, SX>& t, int l, const Slot& v) {
    (&t.u[0][0])[l] = v.u;
  }
  template <int SY, int SX>
  __device__ __forceinline__ static void request(Plane<SY, SX>& t, int l, const T* src, bool ok) {
    __pipeline_memcpy_async(&t.u[0][0] + l, src, sizeof(T), ok ? 0 : sizeof(T));
  }

  struct March {
    static constexpr int Q = 2 * R + 1;
    T acc[Q];  // acc[j]: output p - R + j while plane p is added

    __device__ __forceinline__ void start() {
#pragma unroll
      for (int j = 0; j < Q; ++j) acc[j] = T(0);
    }

    template <int SY, int SX>
    __device__ __forceinline__ void plane(const Args& a, const Block&, const Plane<SY, SX>& t,
                                          const MarchAt& at, std::int64_t p) {
      static_assert(DIMS >= 2, "a march needs a plane");
      constexpr int RY = DIMS == 3 ? R : 0;
      const int tx = at.tx, ty = at.ty;
      // The weight of in-plane offset (dx, dy) and march offset dm.
      auto w = [&](int dx, int dy, int dm) -> T {
        return DIMS == 3 ? a.weights.w[weight_index<3, R>(dx, dy, dm)]
                         : a.weights.w[weight_index<2, R>(dx, dm, 0)];
      };
      if constexpr (!kStar) {
#pragma unroll
        for (int dy = -RY; dy <= RY; ++dy)
#pragma unroll
          for (int dx = -R; dx <= R; ++dx) {
            const T u = t.u[ty + RY + dy][tx + R + dx];
#pragma unroll
            for (int j = 0; j < Q; ++j)
              if (is_tap<TAPS, R>(dx, dy, R - j)) acc[j] += w(dx, dy, R - j) * u;
          }
      } else {
        const T centre = t.u[ty + RY][tx + R];
#pragma unroll
        for (int j = 0; j < Q; ++j)
          if (j != R) acc[j] += w(0, 0, R - j) * centre;
#pragma unroll
        for (int dy = -RY; dy <= RY; ++dy)
#pragma unroll
          for (int dx = -R; dx <= R; ++dx)
            if (dx == 0 || dy == 0) acc[R] += w(dx, dy, 0) * t.u[ty + RY + dy][tx + R + dx];
      }
      const std::int64_t m = p - R;
      if (at.active && m >= at.m0) a.out[at.own + m * at.march_pitch] = acc[0] + a.source;
#pragma unroll
      for (int j = 0; j + 1 < Q; ++j) acc[j] = acc[j + 1];
      acc[Q - 1] = T(0);
    }
  };
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

// A neighbourhood that carries the nodes' classes staged (Near::kKeys and Near::key(dx, dy,
// dz)), as temporal-blocking's march of values over the classes form does: FluxPoint reads them
// there instead of from the class array in global memory.
template <class Near, class = void>
struct near_has_keys : std::false_type {};
template <class Near>
struct near_has_keys<Near, std::void_t<decltype(Near::kKeys)>> : std::bool_constant<Near::kKeys> {};

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
  // The classes' table (classes and face_classes), the step's source factors, and each
  // class's sources at those factors, summed once for the block (class_source). The sums are
  // null where the factors are not known on entry (a pass whose factors come per step,
  // temporal-blocking: a.factor null) and after at_step (another step's factors); then the
  // sources are summed per node.
  // Each class's dt/C and its sources side by side. The march of the faces as classes reads
  // both in one 16-byte load (Heat-3D-faces on an H200: 104.45 against 103.62 GStencil/s);
  // the classes' march reads them apart (the paired load: 4 registers more, -1.2%).
  using Terms = std::conditional_t<sizeof(T) == 8, double2, float2>;
  struct Block {
    const ClassTable<T>* table;
    const T* factor;
    const Terms* class_terms;  // .x dt/C, .y the sources; null where the sums are not known
  };

  __device__ static const T* staged_field(const Args& a, int s) {
    return s == 0 ? a.in : a.conductivity;
  }
  __device__ static Block enter(const Args& a) {
    if constexpr (takes_classes(FORM)) {
      const ClassTable<T>* table = staged_class_table(a);
      __shared__ Terms terms[kMaxNodeClasses];
      const int threads = blockDim.x * blockDim.y * blockDim.z;
      const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      const bool known = a.factor != nullptr || a.sources == 0;  // the same for the block
      if (known) {
        for (int c = tid; c < a.classes; c += threads) {
          terms[c].x = table->dt_over_capacity[c];
          terms[c].y = class_source(a, *table, a.factor, static_cast<unsigned>(c));
        }
        // The faces' march reads a slot outside the grid too (its values unused): zeros there.
        if (FORM == CoefficientForm::face_classes)
          for (int c = a.classes + tid; c < kMaxNodeClasses; c += threads) terms[c] = Terms{};
      }
      __syncthreads();
      return {table, a.factor, known ? terms : nullptr};
    } else {
      return {nullptr, a.factor, nullptr};
    }
  }
  // For a block that forms one node per thread with no march to spread a set-up over
  // (cuda-naive): the table read where it is, through the L1 cache, and the sources summed per
  // node. Staging it cost such a block a barrier and shared memory the cache could have held:
  // Heat-3D-mat on an H200, 512^3 fp64, cuda-naive 73.7 GStencil/s with enter(), 82.0 with the
  // table staged but not the sums, 99.3 unstaged.
  __device__ static Block enter_unstaged(const Args& a) {
    return {takes_classes(FORM) ? a.class_table : nullptr, a.factor, nullptr};
  }
  __device__ static Block at_step(const Block& b, const T* factor) {
    return {b.table, factor, nullptr};
  }
  // The sources of a node of class c at the block's factors.
  __device__ __forceinline__ static T sources_of_class(const Args& a, const Block& b, unsigned c) {
    return b.class_terms ? b.class_terms[c].y : class_source(a, *b.table, b.factor, c);
  }

  template <class Near>
  __device__ __forceinline__ static T point(const Args& a, const Block& b, const Near& near) {
    const DeviceGrid& g = a.grid;
    const std::uint8_t* __restrict__ cls = a.node_class;
    const std::int64_t i = near.i;
    const T ui = near.template at<0>(0, 0, 0);
    T ki = T(0);
    if constexpr (FORM == CoefficientForm::fields) ki = near.template at<1>(0, 0, 0);
    constexpr bool kNearKeys = near_has_keys<Near>::value;
    unsigned ci = 0u;
    if constexpr (takes_classes(FORM)) {
      if constexpr (kNearKeys)
        ci = near.key(0, 0, 0);
      else
        ci = cls[i];
    }
    T flow = T(0);
#pragma unroll
    for (int axis = 0; axis < DIMS; ++axis) {
      const int ex = axis == 0, ey = axis == 1, ez = axis == 2;
      const std::int64_t st = g.stride(axis);
      T k_lo, k_hi;
      if constexpr (FORM == CoefficientForm::faces) {
        face_pair(a, axis, i, st, k_lo, k_hi);
      } else if constexpr (FORM == CoefficientForm::face_classes) {
        k_lo = face_at(a, b, axis, i - st);
        k_hi = face_at(a, b, axis, i);
      } else if constexpr (FORM == CoefficientForm::classes && kNearKeys) {
        k_lo = class_conductance(*b.table, ci, near.key(-ex, -ey, -ez));
        k_hi = class_conductance(*b.table, ci, near.key(ex, ey, ez));
      } else if constexpr (FORM == CoefficientForm::classes) {
        k_lo = class_conductance(*b.table, ci, cls[i - st]);
        k_hi = class_conductance(*b.table, ci, cls[i + st]);
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
      return fma(b.table->dt_over_capacity[ci], flow + sources_of_class(a, b, ci), ui);
    else
      return finish_node<TRANSFER>(a, b.factor, i, ui, flow);
  }

  // The march. Output m is finished one plane late: plane m gives the flow of its in-plane
  // axes and, with the previous plane's centre values held in registers, the march axis's minus
  // face; plane m+1 adds the plus face. That keeps point()'s grouping and order (in-plane axes
  // first, then the march axis, minus before plus). The march-axis face between planes m and
  // m+1 is one conductance for both of its nodes (face_conductance is exactly symmetric), so a
  // node forms five conductances instead of six in 3D. A plane stages u and, where the faces
  // are not given, each node's k or class (Key); with the faces given as values, a node reads
  // its in-plane faces from global memory (its own and its lower neighbour's, cached lines) and
  // the march face below it once for both of its nodes. With the rules, the first and last
  // planes read their mirror node (and its key) again from global memory, a load on those
  // planes only, rather than holding more registers on every plane.
  static constexpr bool kFacesGiven =
      FORM == CoefficientForm::faces || FORM == CoefficientForm::face_classes;
  // The faces as classes stage each node's word (Args::packed_class: its class and its faces'
  // classes) with u, as the classes stage their class: a node's lower neighbours' faces then
  // come from the plane in shared memory, its march face from the word of the plane before.
  static constexpr bool kStagedKeys = !kFacesGiven || FORM == CoefficientForm::face_classes;
  using Key = std::conditional_t<
      FORM == CoefficientForm::face_classes, std::uint32_t,
      std::conditional_t<takes_classes(FORM), std::uint8_t, T>>;
  template <int SY, int SX>
  struct Plane {
    T u[SY][SX];
    Key k[kStagedKeys ? SY : 1][kStagedKeys ? SX : 1];
  };
  struct Slot {
    T u;
    Key k;
  };
  static constexpr int kPrefetch = 1;
  // Rows per thread along y (3D classes without the rules): a thread's two rows share the
  // conductance of the y face between them and each other's staged values (per node 4 instead
  // of 5 staged u and keys, 4.5 instead of 5 conductances). Heat-3D-mat on an H200, 512^3
  // fp64: 150.1 GStencil/s with one row, 158.9 with two (76 registers, 3 blocks per SM), 156.7
  // with two held to 4 blocks (64 registers), 158.6 with four (126 registers). The faces as
  // classes (Heat-3D-faces) form two rows too: 104.3 against 100.9 with one. With the rules two
  // rows spill (80 registers), so those keep one.
  static constexpr int kRows =
      DIMS == 3 && (FORM == CoefficientForm::classes || FORM == CoefficientForm::face_classes) &&
              !RULES
          ? 2
          : 1;
  __device__ __forceinline__ static Key key_at(const Args& a, std::int64_t e) {
    if constexpr (FORM == CoefficientForm::face_classes)
      return a.packed_class[e];
    else if constexpr (takes_classes(FORM))
      return a.node_class[e];
    else
      return a.conductivity[e];
  }
  __device__ __forceinline__ static Slot load(const Args& a, const T* __restrict__ in,
                                              std::int64_t e) {
    if constexpr (!kStagedKeys)
      return {in[e], Key(0)};
    else
      return {in[e], key_at(a, e)};
  }
  template <int SY, int SX>
  __device__ __forceinline__ static void put(Plane<SY, SX>& t, int l, const Slot& v) {
    (&t.u[0][0])[l] = v.u;
    if constexpr (kStagedKeys) (&t.k[0][0])[l] = v.k;
  }
  // The conductance between two nodes' keys; the face between element e and e + e_axis, the
  // faces given.
  __device__ __forceinline__ static T conductance(const Args& a, const Block& b, Key p, Key q) {
    if constexpr (takes_classes(FORM))
      return class_conductance(*b.table, p, q);
    else
      return face_conductance(p, q);
  }
  __device__ __forceinline__ static T face_at(const Args& a, const Block& b, int axis,
                                              std::int64_t e) {
    if constexpr (FORM == CoefficientForm::face_classes)
      return b.table->face[axis][a.face_class[axis][e]];
    else
      return a.faces[axis][e];
  }

  struct March {
    // Per row r of the thread's column group (kRows rows along y, node at.y + r):
    T u_prev[kRows];  // the previous plane's centre value, and its key
    Key k_prev[kRows];
    T flow[kRows];   // output p-1: the flow of its in-plane axes
    T minus[kRows];  // output p-1: K_lo (u_lo - u_i) of the march axis
    T dtc[kRows];    // output p-1: dt / C
    T src[kRows];    // output p-1: its sources at this step's factors
    T hold[kRows];   // output p-1: H of a surface inside the body

    __device__ __forceinline__ void start() {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        u_prev[r] = flow[r] = minus[r] = dtc[r] = src[r] = hold[r] = T(0);
        k_prev[r] = Key(0);
      }
    }

    template <int SY, int SX>
    __device__ __forceinline__ void plane(const Args& a, const Block& b, const Plane<SY, SX>& t,
                                          const MarchAt& at, std::int64_t p) {
      static_assert(DIMS >= 2, "a march needs a plane");
      static_assert(kRows == 1 || DIMS == 3, "rows per thread along y in 3D");
      constexpr int MARCH = DIMS - 1, RY = DIMS == 3 ? 1 : 0;
      const DeviceGrid& g = a.grid;
      const int cx = at.tx + 1, cy = at.ty * kRows + RY;  // row 0's node in the tile
      const std::int64_t pitch_y = DIMS == 3 ? g.pitch_y : 0;
      T uc[kRows];
      Key kc[kRows];
      bool active[kRows];
      std::int64_t i[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        uc[r] = t.u[cy + r][cx];
        kc[r] = Key(0);
        if constexpr (kStagedKeys) kc[r] = t.k[cy + r][cx];
        active[r] = at.active && (r == 0 || at.y + r < g.n[1]);
        i[r] = at.own + r * pitch_y + p * at.march_pitch;
      }
      // The face between planes p-1 and p: output p-1's plus face and output p's minus face.
      T k_march[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if constexpr (FORM == CoefficientForm::face_classes)  // plane p-1's word: its face above
          k_march[r] = b.table->face[MARCH][(k_prev[r] >> (8 * (MARCH + 1))) & 0xFFu];
        else if constexpr (kFacesGiven)
          k_march[r] = active[r] && p >= at.m0 ? face_at(a, b, MARCH, i[r] - at.march_pitch) : T(0);
        else
          k_march[r] = conductance(a, b, k_prev[r], kc[r]);
      }
      if (p > at.m0) {  // output p-1 is complete with its march-plus face
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          T u_hi = uc[r];
          if constexpr (RULES) {
            if (p == at.march_n && active[r] && a.rules.apply[2 * MARCH + 1]) {  // ghost above
              const std::int64_t m = at.own + r * pitch_y + (at.march_n - 2) * at.march_pitch;
              T k_bm;  // the mirror node's face
              if constexpr (kFacesGiven)
                k_bm = face_at(a, b, MARCH, m);
              else
                k_bm = conductance(a, b, k_prev[r], key_at(a, m));
              u_hi = coefficient_ghost(a.rules.rule[2 * MARCH + 1], u_prev[r], a.in[m], k_bm,
                                       k_march[r]);
            }
          }
          flow[r] = fma(a.inv_h2[MARCH], fma(k_march[r], u_hi - u_prev[r], minus[r]),
                        flow[r]);  // add_axis
          if (active[r]) {
            T& out = a.out[at.own + r * pitch_y + (p - 1) * at.march_pitch];
            if constexpr (TRANSFER)
              out = fma(dtc[r], fma(-hold[r], u_prev[r], flow[r] + src[r]), u_prev[r]);
            else
              out = fma(dtc[r], flow[r] + src[r], u_prev[r]);
          }
        }
      }
      if (p >= at.m0 && p < at.m1) {
        // The y faces of staged keys: face r lies between rows r-1 and r (row -1 and row kRows
        // the tile's neighbours), one conductance for both of its nodes, as the march face.
        T ky[kRows + 1];
        if constexpr (!kFacesGiven && DIMS == 3) {
          ky[0] = conductance(a, b, kc[0], t.k[cy - 1][cx]);
#pragma unroll
          for (int r = 1; r < kRows; ++r) ky[r] = conductance(a, b, kc[r - 1], kc[r]);
          ky[kRows] = conductance(a, b, kc[kRows - 1], t.k[cy + kRows][cx]);
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          flow[r] = T(0);
          T kx_lo, kx_hi, ky_lo = T(0), ky_hi = T(0);
          if constexpr (FORM == CoefficientForm::face_classes) {
            // Looked up for a slot outside the grid too, whose values go unused (every entry of
            // the staged table is written): no branch around the lookups. Heat-3D-faces on an
            // H200: 144.8 against 134.9 GStencil/s with them under the node's test.
            kx_lo = b.table->face[0][(t.k[cy + r][cx - 1] >> 8) & 0xFFu];
            kx_hi = b.table->face[0][(kc[r] >> 8) & 0xFFu];
            if (DIMS == 3) {
              const Key below = r == 0 ? t.k[cy - 1][cx] : kc[r > 0 ? r - 1 : 0];
              ky_lo = b.table->face[1][(below >> 16) & 0xFFu];
              ky_hi = b.table->face[1][(kc[r] >> 16) & 0xFFu];
            }
          } else if constexpr (kFacesGiven) {
            kx_lo = kx_hi = T(0);
            if (active[r]) {
              kx_lo = face_at(a, b, 0, i[r] - 1);
              kx_hi = face_at(a, b, 0, i[r]);
              if (DIMS == 3) {
                ky_lo = face_at(a, b, 1, i[r] - g.pitch_y);
                ky_hi = face_at(a, b, 1, i[r]);
              }
            }
          } else {
            kx_lo = conductance(a, b, kc[r], t.k[cy + r][cx - 1]);
            kx_hi = conductance(a, b, kc[r], t.k[cy + r][cx + 1]);
            if (DIMS == 3) {
              ky_lo = ky[r];
              ky_hi = ky[r + 1];
            }
          }
          T ux_lo = t.u[cy + r][cx - 1], ux_hi = t.u[cy + r][cx + 1];
          if constexpr (RULES)
            apply_face_rules(a.rules, 0, at.x, g.n[0], uc[r], kx_lo, kx_hi, ux_lo, ux_hi);
          add_axis(flow[r], a.inv_h2[0], uc[r], kx_lo, ux_lo, kx_hi, ux_hi);
          if constexpr (DIMS == 3) {
            T uy_lo = r == 0 ? t.u[cy - 1][cx] : uc[r > 0 ? r - 1 : 0];
            T uy_hi = r + 1 == kRows ? t.u[cy + kRows][cx] : uc[r + 1 < kRows ? r + 1 : r];
            if constexpr (RULES)
              apply_face_rules(a.rules, 1, at.y + r, g.n[1], uc[r], ky_lo, ky_hi, uy_lo, uy_hi);
            add_axis(flow[r], a.inv_h2[1], uc[r], ky_lo, uy_lo, ky_hi, uy_hi);
          }
          T u_lo = u_prev[r];
          if constexpr (RULES) {
            if (p == 0 && active[r] && a.rules.apply[2 * MARCH]) {  // the ghost below
              const std::int64_t m = i[r] + at.march_pitch;
              T k_bm;  // the mirror node's face
              if constexpr (kFacesGiven)
                k_bm = face_at(a, b, MARCH, i[r]);
              else
                k_bm = conductance(a, b, kc[r], key_at(a, m));
              u_lo = coefficient_ghost(a.rules.rule[2 * MARCH], uc[r], a.in[m], k_bm, k_march[r]);
            }
          }
          minus[r] = rounded_product(k_march[r], u_lo - uc[r]);
          // The faces as classes with the block's sums: the node's terms by its staged class,
          // in or out of the grid (every entry of the block's terms is written).
          bool terms_known = false;
          if constexpr (FORM == CoefficientForm::face_classes) {
            if (b.class_terms) {
              const Terms terms = b.class_terms[kc[r] & 0xFFu];
              dtc[r] = terms.x;
              src[r] = terms.y;
              terms_known = true;
            }
          }
          if (active[r] && !terms_known) {
            if constexpr (takes_classes(FORM)) {
              // Staged (in the faces' classes' word, its byte 0) or, the faces given, read here.
              const unsigned c = FORM == CoefficientForm::face_classes ? kc[r] & 0xFFu
                                 : kFacesGiven                        ? a.node_class[i[r]]
                                                                      : kc[r];
              dtc[r] = b.table->dt_over_capacity[c];
              src[r] = sources_of_class(a, b, c);
            } else {
              dtc[r] = a.dt_over_capacity[i[r]];
              src[r] = node_source(a, b.factor, i[r]);
              if constexpr (TRANSFER) hold[r] = a.transfer[i[r]];
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        u_prev[r] = uc[r];
        k_prev[r] = kc[r];
      }
    }
  };
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
