// Index helpers shared by every CUDA stencil kernel: the device's padded field layout, the
// stencil weights as a kernel parameter, and the compile-time walk over a stencil's taps.
// Kernels include this header; launchers build the structs on the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../backend.hpp"

namespace heatsim::kernels::cuda {

// The padded layout of layout.hpp (ghost layers of width `ghost` on every active axis) with
// one change: rows are padded so that interior node x = 0 of every row starts on a 128-byte
// boundary. A warp reading or writing 32 consecutive interior nodes then touches whole
// sectors; the x ghosts sit in the alignment pad just before and after the row.
struct DeviceGrid {
  int dims = 1;
  int ghost = 0;
  std::int64_t n[3] = {1, 1, 1};  // interior nodes per axis (x, y, z)
  std::int64_t pitch_y = 1;       // elements from row y to row y+1
  std::int64_t pitch_z = 1;       // elements from plane z to plane z+1
  std::int64_t origin = 0;        // element index of interior node (0, 0, 0)
  std::int64_t total = 0;         // elements per buffer

  __host__ __device__ std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return origin + z * pitch_z + y * pitch_y + x;
  }
  __host__ __device__ std::int64_t stride(int axis) const {
    return axis == 0 ? 1 : axis == 1 ? pitch_y : pitch_z;
  }
};

inline DeviceGrid make_device_grid(const StencilProblem& p, int ghost, int value_bytes) {
  const std::int64_t align = 128 / value_bytes;  // elements per 128 bytes
  auto round_up = [](std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; };
  DeviceGrid g;
  g.dims = p.dims;
  g.ghost = ghost;
  for (int a = 0; a < 3; ++a) g.n[a] = a < p.dims ? p.n[a] : 1;
  const std::int64_t x_offset = round_up(ghost, align);
  g.pitch_y = round_up(x_offset + g.n[0] + ghost, align);
  const std::int64_t rows = g.n[1] + (p.dims > 1 ? 2 * ghost : 0);
  const std::int64_t planes = g.n[2] + (p.dims > 2 ? 2 * ghost : 0);
  g.pitch_z = g.pitch_y * rows;
  g.origin = (p.dims > 2 ? ghost : 0) * g.pitch_z + (p.dims > 1 ? ghost : 0) * g.pitch_y + x_offset;
  g.total = g.pitch_z * planes;
  return g;
}

// The nodes of `box` (FieldBox, in g's grid) as a grid of their own over the same buffer and
// pitches: a sweep over it computes those nodes alone, reading their neighbours where g holds
// them (nodes next to the box, or g's ghosts at g's faces). What a split pass sweeps
// (Backend::advance_around).
inline DeviceGrid box_grid(const DeviceGrid& g, const FieldBox& box) {
  DeviceGrid b = g;
  b.origin = g.index(box.lo[0], box.lo[1], box.lo[2]);
  for (int a = 0; a < 3; ++a) b.n[a] = box.extent[a];
  return b;
}

// The dense (2R+1)^dims weights of S, ordered like kernels::Stencil ([dz][dy][dx], dx
// fastest). Passed by value as a kernel parameter, so a tap with a compile-time index reads
// its weight straight from the constant bank (an FMA operand, no load). 343 fp64 weights are
// 2744 bytes, inside the classic 4 KB parameter limit.
constexpr int kMaxRadius = 3;
// The one exception: a fused 2D star (S^k on a fused-star tap set) up to radius 6, whose 169
// window weights still fit the array below; register-tiling's Heat-2D gains to k = 4-6.
constexpr int kMaxFusedRadius2D = 6;
constexpr int kMaxTaps = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);

template <typename T>
struct StencilWeights {
  T w[kMaxTaps];
};

// What one sweep (out <- S in + dt*f over every interior node) needs.
template <typename T>
struct SweepArgs {
  const T* in = nullptr;
  T* out = nullptr;
  DeviceGrid grid;
  T source = T(0);  // dt * f
  StencilWeights<T> weights;
  // The x range [store_x[0], store_x[1]) of the nodes a sweep stores (of the grid's own x):
  // a sweep forms whole rows, aligned as the field's rows are, and leaves the nodes outside
  // it as they were (a row's Dirichlet nodes at its ends).
  std::int64_t store_x[2] = {0, std::int64_t{1} << 62};
};

// Whether a sweep stores node x of its rows (SweepArgs::store_x; every node of a varying-
// coefficient sweep).
template <typename T>
__host__ __device__ inline bool stores_x(const SweepArgs<T>& a, std::int64_t x) {
  return x >= a.store_x[0] && x < a.store_x[1];
}

// Which offsets of the (2R+1)^DIMS window a sweep multiplies (a template argument of every
// sweep kernel): a star's axes; the whole box; or a fused star. S^k of a star S of radius q has
// off-axis weights, but each step moves along one axis by at most q, so they all lie in
//   ceil(|dx|/q) + ceil(|dy|/q) + ceil(|dz|/q) <= k,   R = k*q,
// the fused-star tap set of step radius q; for q = 1 the diamond |dx|+|dy|+|dz| <= R (25 of
// the 49 window taps at R = 3 in 2D, 25 of 125 at R = 2 in 3D; for Star-2D13P fused twice,
// q = 3, R = 6: 61 of 169).
constexpr int kStarTaps = 0, kBoxTaps = 1, kDiamondTaps = 2;
constexpr int fused_star_taps(int q) { return kDiamondTaps + q - 1; }  // q = 1, 2, 3

// Whether a sweep kernel exists for the fused star of step radius q at radius R: the diamond
// at R = 2, 3 (and 4-6 in 2D), q = 2 at R = 4, 6 and q = 3 at R = 6 in 2D.
constexpr bool has_fused_star_kernel(int dims, int radius, int q) {
  return q == 1 ? radius >= 2 && (radius <= 3 || (dims == 2 && radius <= kMaxFusedRadius2D))
                : dims == 2 && radius <= kMaxFusedRadius2D && radius % q == 0 && radius / q >= 2;
}

// Whether the sweeps are instantiated for this shape: stars and boxes of radius 1 to 3 (1D:
// stars only), fused stars where has_fused_star_kernel says. dispatch_shape instantiates
// exactly these, and tap_set picks only among them.
constexpr bool has_sweep_kernel(int dims, int radius, int taps) {
  return taps == kStarTaps   ? radius >= 1 && radius <= kMaxRadius
         : dims == 1         ? false
         : taps == kBoxTaps  ? radius >= 1 && radius <= kMaxRadius
                             : has_fused_star_kernel(dims, radius, taps - kDiamondTaps + 1);
}

// The host side of a sweep launch: stencil shape, stream and the device's size.
struct SweepShape {
  int dims = 1;
  int radius = 1;
  int taps = kStarTaps;
};

// Steps of at most q along one axis that reach offset d.
__host__ __device__ constexpr int steps_to(int d, int q) {
  return ((d < 0 ? -d : d) + q - 1) / q;
}

// Whether offset (dx, dy, dz) is a tap of the tap set TAPS at radius R.
template <int TAPS, int R>
__host__ __device__ constexpr bool is_tap(int dx, int dy, int dz) {
  constexpr int q = TAPS >= kDiamondTaps ? TAPS - kDiamondTaps + 1 : 1;  // fused star's step
  return TAPS == kBoxTaps ||
         (TAPS == kStarTaps ? (dx != 0) + (dy != 0) + (dz != 0) <= 1
                            : steps_to(dx, q) + steps_to(dy, q) + steps_to(dz, q) <= R / q);
}

// The smallest tap set with a kernel that holds every nonzero weight of s.
inline int tap_set(const Stencil& s) {
  if (s.dims == 1 || s.is_star()) return kStarTaps;
  const int r = s.radius;
  for (int q = 3; q >= 1; --q) {
    if (!has_fused_star_kernel(s.dims, r, q)) continue;
    bool holds = true;
    for (int dz = s.dims > 2 ? -r : 0; dz <= (s.dims > 2 ? r : 0) && holds; ++dz)
      for (int dy = -r; dy <= r && holds; ++dy)
        for (int dx = -r; dx <= r && holds; ++dx)
          if (steps_to(dx, q) + steps_to(dy, q) + steps_to(dz, q) > r / q &&
              s.at(dx, dy, dz) != 0.0)
            holds = false;
    if (holds) return fused_star_taps(q);
  }
  return kBoxTaps;
}

struct LaunchContext {
  cudaStream_t stream = nullptr;
  int multiprocessors = 1;
};

// Index of the weight at offset (dx, dy, dz) in StencilWeights for a DIMS-dimensional
// stencil of radius R (kernels::Stencil's order).
template <int DIMS, int R>
__host__ __device__ constexpr int weight_index(int dx, int dy, int dz) {
  constexpr int E = 2 * R + 1;
  return DIMS == 1 ? dx + R : DIMS == 2 ? (dy + R) * E + dx + R : ((dz + R) * E + dy + R) * E + dx + R;
}

// Calls f(dx, dy, dz, weight_index) for every tap, in kernels::Stencil's order. All loops
// unroll, so the offsets and weight indices are compile-time constants in f.
template <int DIMS, int R, int TAPS, typename F>
__device__ __forceinline__ void for_each_tap(F&& f) {
  constexpr int RY = DIMS > 1 ? R : 0;
  constexpr int RZ = DIMS > 2 ? R : 0;
#pragma unroll
  for (int dz = -RZ; dz <= RZ; ++dz)
#pragma unroll
    for (int dy = -RY; dy <= RY; ++dy)
#pragma unroll
      for (int dx = -R; dx <= R; ++dx)
        if (is_tap<TAPS, R>(dx, dy, dz)) f(dx, dy, dz, weight_index<DIMS, R>(dx, dy, dz));
}

// Calls launch.template operator()<DIMS, R, TAPS>() for the problem's shape: the one place
// that turns run-time shapes into template instantiations, one per shape has_sweep_kernel
// accepts (radius 1 to kMaxFusedRadius2D, tried in turn at compile time).
template <int D, int T, int R = 1, typename Launch>
void dispatch_radius(const SweepShape& s, Launch& launch) {
  if constexpr (R <= kMaxFusedRadius2D) {
    if constexpr (has_sweep_kernel(D, R, T)) {
      if (s.radius == R) {
        launch.template operator()<D, R, T>();
        return;
      }
    }
    dispatch_radius<D, T, R + 1>(s, launch);
  } else {
    throw std::logic_error("sweep: no kernel for radius " + std::to_string(s.radius) + " in " +
                           std::to_string(D) + "D with tap set " + std::to_string(s.taps));
  }
}

template <int D, int T = kStarTaps, typename Launch>
void dispatch_taps(const SweepShape& s, Launch& launch) {
  if constexpr (T <= fused_star_taps(3)) {
    if (s.taps == T) return dispatch_radius<D, T>(s, launch);
    dispatch_taps<D, T + 1>(s, launch);
  } else {
    throw std::logic_error("sweep: unknown tap set " + std::to_string(s.taps));
  }
}

template <typename Launch>
void dispatch_shape(const SweepShape& s, Launch&& launch) {
  switch (s.dims) {
    case 1: dispatch_taps<1>(s, launch); break;
    case 2: dispatch_taps<2>(s, launch); break;
    case 3: dispatch_taps<3>(s, launch); break;
  }
}

}  // namespace heatsim::kernels::cuda
