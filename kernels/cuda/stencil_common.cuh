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

// The dense (2R+1)^dims weights of S, ordered like kernels::Stencil ([dz][dy][dx], dx
// fastest). Passed by value as a kernel parameter, so a tap with a compile-time index reads
// its weight straight from the constant bank (an FMA operand, no load). 343 fp64 weights are
// 2744 bytes, inside the classic 4 KB parameter limit.
constexpr int kMaxRadius = 3;
// The one exception: a fused 2D star (S^k on the diamond tap set) up to radius 6, whose 169
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
};

// Which offsets of the (2R+1)^DIMS window a sweep multiplies (a template argument of every
// sweep kernel): a star's axes; the whole box; or the diamond |dx| + |dy| + |dz| <= R, which
// holds every nonzero of S^k for a star S of radius r and R = k*r (each step of a star moves
// along one axis by at most r). A fused star is box-shaped but has (2R+1)^DIMS taps of which
// the diamond keeps 2R^2+2R+1 in 2D (25 of 49 at R = 3) and 25 of 125 in 3D at R = 2.
constexpr int kStarTaps = 0, kBoxTaps = 1, kDiamondTaps = 2;

// The host side of a sweep launch: stencil shape, stream and the device's size.
struct SweepShape {
  int dims = 1;
  int radius = 1;
  int taps = kStarTaps;
};

// The smallest tap set that holds every nonzero weight of s.
inline int tap_set(const Stencil& s) {
  if (s.dims == 1 || s.is_star()) return kStarTaps;
  const int r = s.radius;
  for (int dz = s.dims > 2 ? -r : 0; dz <= (s.dims > 2 ? r : 0); ++dz)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int l1 = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy) + (dz < 0 ? -dz : dz);
        if (l1 > r && s.at(dx, dy, dz) != 0.0) return kBoxTaps;
      }
  return kDiamondTaps;
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

// Whether offset (dx, dy, dz) is a tap of the tap set TAPS at radius R.
template <int TAPS, int R>
__host__ __device__ constexpr bool is_tap(int dx, int dy, int dz) {
  return TAPS == kBoxTaps ||
         (TAPS == kStarTaps ? (dx != 0) + (dy != 0) + (dz != 0) <= 1
                            : (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy) + (dz < 0 ? -dz : dz) <= R);
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
// that turns run-time shapes into template instantiations (1D stencils are always stars; a
// diamond of radius 1 is the star; radius 4-6 only for the 2D diamond).
template <typename Launch>
void dispatch_shape(const SweepShape& s, Launch&& launch) {
  auto by_radius = [&](auto dims_tag, auto taps_tag) {
    constexpr int D = decltype(dims_tag)::value;
    constexpr int T = decltype(taps_tag)::value;
    switch (s.radius) {
      case 1: launch.template operator()<D, 1, T == kDiamondTaps ? kStarTaps : T>(); return;
      case 2: launch.template operator()<D, 2, T>(); return;
      case 3: launch.template operator()<D, 3, T>(); return;
    }
    if constexpr (D == 2 && T == kDiamondTaps) {
      switch (s.radius) {
        case 4: launch.template operator()<D, 4, T>(); return;
        case 5: launch.template operator()<D, 5, T>(); return;
        case 6: launch.template operator()<D, 6, T>(); return;
      }
    }
    throw std::logic_error("sweep: no kernel for radius " + std::to_string(s.radius) +
                           " in " + std::to_string(D) + "D");
  };
  auto by_taps = [&](auto dims_tag) {
    if constexpr (decltype(dims_tag)::value == 1) {
      by_radius(dims_tag, std::integral_constant<int, kStarTaps>{});
    } else {
      switch (s.taps) {
        case kStarTaps: by_radius(dims_tag, std::integral_constant<int, kStarTaps>{}); break;
        case kBoxTaps: by_radius(dims_tag, std::integral_constant<int, kBoxTaps>{}); break;
        case kDiamondTaps: by_radius(dims_tag, std::integral_constant<int, kDiamondTaps>{}); break;
      }
    }
  };
  switch (s.dims) {
    case 1: by_taps(std::integral_constant<int, 1>{}); break;
    case 2: by_taps(std::integral_constant<int, 2>{}); break;
    case 3: by_taps(std::integral_constant<int, 3>{}); break;
  }
}

}  // namespace heatsim::kernels::cuda
