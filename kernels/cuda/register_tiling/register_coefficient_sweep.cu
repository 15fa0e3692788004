// register-tiling, varying coefficients: blocks tile the plane across the slowest axis (xy in
// 3D, x in 2D) and march along it (z in 3D, y in 2D) through a chunk of planes, as the
// constant-weight sweep does. Each plane's u and k are loaded once per block into shared
// memory (with the in-plane halo; the star never reads the corners); the march-axis
// neighbours stay in registers. Output m is finished one plane late: plane m gives the flow
// of its in-plane axes and, with the previous plane's centre values held in registers, the
// march axis's minus face; plane m+1 adds the plus face. That keeps the CPU's grouping and
// order (coefficient_sweep.cuh: in-plane axes first, then the march axis, minus before plus). The
// march-axis face between planes m and m+1 is one conductance for both of its nodes
// (face_conductance is exactly symmetric), so a node costs five divisions instead of six in 3D.
#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "../check.cuh"
#include "register_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Block shapes (threads = output columns per block):
//   2D: 256 x 1, march along y; smem 2 buffers x 2 fields x 258 x T           (fp64 8.3 KB)
//   3D: 32 x 8,  march along z; smem 2 buffers x 2 fields x 34 x 10 x T       (fp64 10.9 KB)
// Registers per thread: the next plane's u and k values (two slots each), the previous
// centre u and k, the pending output's flow, minus face, dt/C and sources.
// Shared memory is double-buffered, so one barrier per plane suffices: a thread writing buffer
// b for plane p+2 has passed the barrier of plane p+1, which every thread reaches only after
// it finished reading buffer b for plane p.
template <int DIMS>
struct CoefficientTile;
template <>
struct CoefficientTile<2> {
  static constexpr int tx = 256, ty = 1;
};
template <>
struct CoefficientTile<3> {
  static constexpr int tx = 32, ty = 8;
};

// FORM (coefficient_sweep.cuh): fields stage k; classes stage each node's class (a byte) and
// take the conductances, dt/C and the sources from the classes' table, staged once per block;
// faces: the faces' conductances come from their arrays (CoefficientArgs::faces): k is not
// staged, each node reads its in-plane faces from global memory (its own and its lower
// neighbour's, cached lines) and the march face below it once for both of its nodes;
// face_classes read the same faces' classes and the node's class from global memory, and the
// values from the table.
// RULES: the faces' ghost rules applied by the sweep (CoefficientArgs::rules). On the march
// axis the first and last planes read their mirror node (and its k) again from global memory,
// a load on those planes only, rather than holding more registers on every plane; 3 blocks
// per SM instead of 4 leave the rules 80 registers (fp64 3D: 54.0 against 52.5 GStencil/s at
// 512^3 and 34.7 against 33.5 at 96^3 held to 64 with spills).
template <typename T, int DIMS, CoefficientForm FORM, bool RULES>
__global__ void __launch_bounds__(CoefficientTile<DIMS>::tx* CoefficientTile<DIMS>::ty,
                                  RULES ? 3 : 4)
    register_coefficient_kernel(const CoefficientArgs<T> a, std::int64_t tiles_y,
                                std::int64_t chunk) {
  // FACES: the faces given (as arrays, or classes per axis); CLASSES: dt/C and the sources from
  // the node's class.
  constexpr bool FACES =
      FORM == CoefficientForm::faces || FORM == CoefficientForm::face_classes;
  constexpr bool CLASSES = takes_classes(FORM);
  // What the tile stages per node besides u (not with the faces given): its k, or its class.
  using Key = std::conditional_t<CLASSES, std::uint8_t, T>;
  constexpr int TX = CoefficientTile<DIMS>::tx, TY = CoefficientTile<DIMS>::ty;
  constexpr int RY = DIMS == 3 ? 1 : 0;  // in-plane y halo
  constexpr int SX = TX + 2, SY = TY + 2 * RY, NT = TX * TY;
  constexpr int NSLOT = (SX * SY + NT - 1) / NT;
  constexpr int MARCH = DIMS - 1;  // the march axis
  __shared__ T su[2][SY][SX];
  __shared__ Key sk[2][SY][SX];
  const ClassTable<T>* table = nullptr;
  if constexpr (CLASSES) {
    __shared__ ClassTable<T> staged;
    stage_class_table(a, staged);  // the first plane's barrier orders it before any read
    table = &staged;
  }
  // The conductance between two staged keys, and a node's key read from global memory.
  const auto conductance = [&](Key p, Key q) -> T {
    if constexpr (CLASSES) return class_conductance(*table, p, q, a.pairs);
    else return face_conductance(p, q);
  };
  const auto key_at = [&](std::int64_t e) -> Key {
    if constexpr (CLASSES) return a.node_class[e];
    else return a.conductivity[e];
  };
  // The conductance of the face between element e and e + e_axis, the faces given.
  const auto face_at = [&](int axis, std::int64_t e) -> T {
    if constexpr (FORM == CoefficientForm::face_classes)
      return table->face[axis][a.face_class[axis][e]];
    else return a.faces[axis][e];
  };
  const DeviceGrid& g = a.grid;
  const T* __restrict__ in = a.in;
  const std::int64_t march_n = g.n[MARCH];
  const std::int64_t march_pitch = g.stride(MARCH);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * TX + tx;
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(TX);
  const std::int64_t m0 = (DIMS == 3 ? blockIdx.z : blockIdx.y) * chunk;
  const std::int64_t m1 = min(m0 + chunk, march_n);
  const std::int64_t p_begin = m0 - 1, p_end = m1 + 1;  // planes this block reads
  const T inv_x = a.inv_h2[0], inv_y = a.inv_h2[1], inv_m = a.inv_h2[MARCH];

  const std::int64_t y_step = DIMS == 3 ? gridDim.y : 1;
  for (std::int64_t by = DIMS == 3 ? blockIdx.y : 0; by < tiles_y; by += y_step) {
    const std::int64_t y0 = by * TY;
    const std::int64_t x = x0 + tx, y = y0 + ty;
    const bool active = x < g.n[0] && (DIMS == 2 || y < g.n[1]);
    // Element of this thread's node in plane 0 (planes are march_pitch apart).
    const std::int64_t own = g.origin + (DIMS == 3 ? y * g.pitch_y : 0) + x;

    // This thread's share of a plane tile: slot s is tile node tid + s*NT. Nodes beyond the
    // padded field and the corners are not loaded (zeros; they feed no stored output).
    std::int64_t slot_at[NSLOT];
    bool load_slot[NSLOT];
#pragma unroll
    for (int s = 0; s < NSLOT; ++s) {
      const int l = tid + s * NT;
      const int sx = l % SX, sy = l / SX;
      const std::int64_t gx = x0 - 1 + sx, gy = y0 - RY + sy;
      bool ok = l < SX * SY && gx < g.n[0] + 1;
      if (DIMS == 3) ok = ok && gy < g.n[1] + 1 && !((sx < 1 || sx > TX) && (sy < 1 || sy > TY));
      load_slot[s] = ok;
      slot_at[s] = g.origin + (DIMS == 3 ? gy * g.pitch_y : 0) + gx;
    }
    T vu[NSLOT];
    Key vk[NSLOT];
    auto load = [&](std::int64_t p) {
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) {
        vu[s] = load_slot[s] ? in[slot_at[s] + p * march_pitch] : T(0);
        if (!FACES) vk[s] = load_slot[s] ? key_at(slot_at[s] + p * march_pitch) : Key(0);
      }
    };

    T u_prev = T(0);  // the previous plane's centre values
    Key k_prev = Key(0);
    T flow = T(0);                   // output p-1: the flow of its in-plane axes
    T minus = T(0);                  // output p-1: K_lo (u_lo - u_i) of the march axis
    T dtc = T(0);                    // output p-1: dt / C
    T src = T(0);                    // output p-1: its sources at this step's factors
    T hold = T(0);                   // output p-1: H of a surface inside the body

    load(p_begin);
    int b = 0;
    for (std::int64_t p = p_begin; p < p_end; ++p, b ^= 1) {
#pragma unroll
      for (int s = 0; s < NSLOT; ++s) {
        const int l = tid + s * NT;
        if (l < SX * SY) {
          (&su[b][0][0])[l] = vu[s];
          if (!FACES) (&sk[b][0][0])[l] = vk[s];
        }
      }
      if (p + 1 < p_end) load(p + 1);
      __syncthreads();
      const int cx = tx + 1, cy = ty + RY;
      const T uc = su[b][cy][cx];
      const Key kc = FACES ? Key(0) : sk[b][cy][cx];
      const std::int64_t i = own + p * march_pitch;
      // The face between planes p-1 and p: output p-1's plus face and output p's minus face.
      T k_march;
      if constexpr (FACES)
        k_march = active && p >= m0 ? face_at(MARCH, i - march_pitch) : T(0);
      else
        k_march = conductance(k_prev, kc);
      if (p > m0) {  // output p-1 is complete with its march-plus face
        T u_hi = uc;
        if constexpr (RULES) {
          if (p == march_n && active && a.rules.apply[2 * MARCH + 1]) {  // the ghost above
            const std::int64_t m = own + (march_n - 2) * march_pitch;  // output's mirror node
            const T k_bm = FACES ? face_at(MARCH, m) : conductance(k_prev, key_at(m));
            u_hi = coefficient_ghost(a.rules.rule[2 * MARCH + 1], u_prev, in[m], k_bm, k_march);
          }
        }
        flow = fma(inv_m, fma(k_march, u_hi - u_prev, minus), flow);  // add_axis's roundings
        if (active)
          a.out[own + (p - 1) * march_pitch] =
              a.transfer ? fma(dtc, fma(-hold, u_prev, flow + src), u_prev)
                         : fma(dtc, flow + src, u_prev);
      }
      if (p >= m0 && p < m1) {
        flow = T(0);
        T kx_lo, kx_hi, ky_lo = T(0), ky_hi = T(0);
        if constexpr (FACES) {
          kx_lo = kx_hi = T(0);
          if (active) {
            kx_lo = face_at(0, i - 1);
            kx_hi = face_at(0, i);
            if (DIMS == 3) {
              ky_lo = face_at(1, i - g.pitch_y);
              ky_hi = face_at(1, i);
            }
          }
        } else {
          kx_lo = conductance(kc, sk[b][cy][cx - 1]);
          kx_hi = conductance(kc, sk[b][cy][cx + 1]);
          if (DIMS == 3) {
            ky_lo = conductance(kc, sk[b][cy - 1][cx]);
            ky_hi = conductance(kc, sk[b][cy + 1][cx]);
          }
        }
        T ux_lo = su[b][cy][cx - 1], ux_hi = su[b][cy][cx + 1];
        if constexpr (RULES) apply_face_rules(a.rules, 0, x, g.n[0], uc, kx_lo, kx_hi, ux_lo, ux_hi);
        add_axis(flow, inv_x, uc, kx_lo, ux_lo, kx_hi, ux_hi);
        if constexpr (DIMS == 3) {
          T uy_lo = su[b][cy - 1][cx], uy_hi = su[b][cy + 1][cx];
          if constexpr (RULES)
            apply_face_rules(a.rules, 1, y, g.n[1], uc, ky_lo, ky_hi, uy_lo, uy_hi);
          add_axis(flow, inv_y, uc, ky_lo, uy_lo, ky_hi, uy_hi);
        }
        T u_lo = u_prev;
        if constexpr (RULES) {
          if (p == 0 && active && a.rules.apply[2 * MARCH]) {  // the ghost below
            const std::int64_t m = i + march_pitch;
            const T k_bm = FACES ? face_at(MARCH, i) : conductance(kc, key_at(m));
            u_lo = coefficient_ghost(a.rules.rule[2 * MARCH], uc, in[m], k_bm, k_march);
          }
        }
        minus = rounded_product(k_march, u_lo - uc);
        if (active) {
          if constexpr (CLASSES) {
            const unsigned c = FACES ? a.node_class[i] : kc;  // not staged with the faces given
            dtc = table->dt_over_capacity[c];
            src = class_source(a, *table, a.factor, c);
          } else {
            dtc = a.dt_over_capacity[i];
            src = node_source(a, i);
            if (a.transfer) hold = a.transfer[i];
          }
        }
      }
      u_prev = uc;
      k_prev = kc;
    }
    __syncthreads();  // the next y tile overwrites shared memory
  }
}

template <typename T, int DIMS, CoefficientForm FORM, bool RULES>
void launch(const CoefficientArgs<T>& args, const LaunchContext& context) {
  using Tile = CoefficientTile<DIMS>;
  const auto kernel = register_coefficient_kernel<T, DIMS, FORM, RULES>;
  static const int resident = [&] {
    int blocks = 0;
    HEATSIM_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Tile::tx * Tile::ty, 0));
    return std::max(blocks, 1);
  }();
  const DeviceGrid& g = args.grid;
  const std::int64_t tiles_x = (g.n[0] + Tile::tx - 1) / Tile::tx;
  const std::int64_t tiles_y = DIMS == 3 ? (g.n[1] + Tile::ty - 1) / Tile::ty : 1;
  const std::int64_t march_n = g.n[DIMS - 1];
  const std::int64_t chunk =
      march_chunk(tiles_x * std::min<std::int64_t>(tiles_y, 65535), march_n, 1,
                  static_cast<std::int64_t>(resident) * context.multiprocessors);
  const std::int64_t chunks = (march_n + chunk - 1) / chunk;
  const dim3 block(Tile::tx, Tile::ty, 1);
  const dim3 grid = DIMS == 3
                        ? dim3(static_cast<unsigned>(tiles_x),
                               static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)),
                               static_cast<unsigned>(chunks))
                        : dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(chunks), 1);
  kernel<<<grid, block, 0, context.stream>>>(args, tiles_y, chunk);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void launch_register_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                       const LaunchContext& context) {
  const CoefficientForm form = coefficient_form(args);
  const bool rules = any_rule(args.rules);
  const auto by_flags = [&](auto dims_tag) {
    constexpr int D = decltype(dims_tag)::value;
    const auto by_form = [&](auto form_tag) {
      constexpr CoefficientForm F = decltype(form_tag)::value;
      rules ? launch<T, D, F, true>(args, context) : launch<T, D, F, false>(args, context);
    };
    using Form = CoefficientForm;
    if (form == Form::faces)
      by_form(std::integral_constant<Form, Form::faces>{});
    else if (form == Form::face_classes)
      by_form(std::integral_constant<Form, Form::face_classes>{});
    else if (form == Form::classes)
      by_form(std::integral_constant<Form, Form::classes>{});
    else
      by_form(std::integral_constant<Form, Form::fields>{});
  };
  if (dims == 2)
    by_flags(std::integral_constant<int, 2>{});
  else if (dims == 3)
    by_flags(std::integral_constant<int, 3>{});
  else
    throw std::logic_error("register-tiling: 1D grids are not supported");
}

template void launch_register_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                       const LaunchContext&);
template void launch_register_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                        const LaunchContext&);

}  // namespace heatsim::kernels::cuda
