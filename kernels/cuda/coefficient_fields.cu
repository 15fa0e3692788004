// Coefficient fields on the device and the ghost fill of u for the varying-coefficient step.
#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../boundary_rules.hpp"
#include "../node_classes.hpp"
#include "../registry.hpp"
#include "check.cuh"
#include "coefficient_fields.cuh"
#include "coefficient_sweep.cuh"
#include "step_graphs.cuh"  // environment_switch

namespace heatsim::kernels::cuda {
namespace {

constexpr int kThreads = 256;

struct GhostLines {
  std::int64_t end[3];  // cumulative line counts: axis a owns lines [end[a-1], end[a])
};

// The ghost of one end of a line along an axis (boundary_rules.hpp, in the CPU's arithmetic),
// from the elements b (the boundary node), m (its mirror one node inside) and the periodic
// image. K_bm is the faces' entry `face` (else the harmonic mean of k), K_g, of the face toward
// the ghost, the entry `ghost_face` (else the harmonic mean of k_b and the ghost's k at
// `ghost`, which upload() sets so that this is K_bm, or k_b where K_bm is 0).
template <typename T>
__device__ __forceinline__ T ghost_value(int kind, double value, double transfer, bool heat_flux,
                                         double radiation, double ambient4, double h, const T* u,
                                         const T* k, const T* face_k, std::int64_t b,
                                         std::int64_t m, std::int64_t face, std::int64_t ghost_face,
                                         std::int64_t ghost, std::int64_t image) {
  if (kind == static_cast<int>(BoundaryKind::periodic)) return u[image];
  const T k_bm = face_k ? face_k[face] : face_conductance(k[b], k[m]);
  // The face toward the ghost is the mirror face wherever that conducts (upload() and the
  // faces' update keep it so), so it is read only where the mirror face conducts nothing.
  const T k_g = k_bm > T(0) ? k_bm : face_k ? face_k[ghost_face] : face_conductance(k[b], k[ghost]);
  const CoefficientGhostRule rule = coefficient_ghost_rule(
      static_cast<BoundaryKind>(kind), heat_flux, value, transfer, h, radiation, ambient4);
  return coefficient_ghost(rule, u[b], u[m], k_bm, k_g);
}

// Per axis, the faces' array (null: the harmonic mean of k).
template <typename T>
struct FacePointers {
  const T* axis[3] = {nullptr, nullptr, nullptr};
};

// The two ghosts of line l along AXIS (interior of the other axes). The axis is a template
// parameter so that every index into the grid, the faces and their arrays is fixed: with it
// chosen at run time they were copied to a stack frame of 136 bytes per thread.
template <typename T, int AXIS>
__device__ __forceinline__ void fill_line_ghosts(T* u, const T* __restrict__ k,
                                                 const FacePointers<T>& K, const DeviceGrid& g,
                                                 const CoefficientFaces& f, std::int64_t l) {
  constexpr int first = AXIS == 0 ? 1 : 0, second = AXIS == 2 ? 1 : 2;
  constexpr int lo = 2 * AXIS, hi = 2 * AXIS + 1;
  const std::int64_t n = g.n[AXIS], st = g.stride(AXIS);
  // The line's place across the axis, in 32 bits where it fits (every grid a card holds).
  std::int64_t along_first, along_second;
  if (l <= 0xFFFFFFFFll && g.n[first] <= 0xFFFFFFFFll) {
    const auto l32 = static_cast<std::uint32_t>(l), n32 = static_cast<std::uint32_t>(g.n[first]);
    along_first = l32 % n32;
    along_second = l32 / n32;
  } else {
    along_first = l % g.n[first];
    along_second = l / g.n[first];
  }
  const std::int64_t base =  // node 0 of the line
      g.origin + along_first * g.stride(first) + along_second * g.stride(second);
  const double h = f.spacing[AXIS];
  const T* face_k = K.axis[AXIS];
  u[base - st] = ghost_value<T>(f.kind[lo], f.value[lo], f.transfer[lo], f.heat_flux[lo],
                                f.radiation[lo], f.ambient4[lo], h, u, k, face_k, base, base + st,
                                base, base - st, base - st, base + (n - 1) * st);
  u[base + n * st] =
      ghost_value<T>(f.kind[hi], f.value[hi], f.transfer[hi], f.heat_flux[hi], f.radiation[hi],
                     f.ambient4[hi], h, u, k, face_k, base + (n - 1) * st, base + (n - 2) * st,
                     base + (n - 2) * st, base + (n - 1) * st, base + n * st, base);
}

// One thread per grid line along an active axis (interior of the other axes), both ends.
// Registers: a handful; no shared memory.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    coefficient_ghosts_kernel(T* u, const T* __restrict__ k, FacePointers<T> K, DeviceGrid g,
                              CoefficientFaces f, GhostLines lines) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= lines.end[g.dims - 1]) return;
  if (j < lines.end[0])
    fill_line_ghosts<T, 0>(u, k, K, g, f, j);
  else if (j < lines.end[1])
    fill_line_ghosts<T, 1>(u, k, K, g, f, j - lines.end[0]);
  else
    fill_line_ghosts<T, 2>(u, k, K, g, f, j - lines.end[1]);
}

// A field of the problem's nodes in the padded layout: interior values, every other element
// zero, and (with_ghosts) the face ghosts taken from the mirror node, or on periodic axes from
// the node one period away.
template <typename T, typename From>
std::vector<T> padded(const std::vector<From>& field, const StencilProblem& p,
                      const DeviceGrid& g, bool with_ghosts) {
  std::vector<T> out(static_cast<std::size_t>(g.total), T(0));
  const std::int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        out[static_cast<std::size_t>(g.index(x, y, z))] =
            static_cast<T>(field[static_cast<std::size_t>((z * ny + y) * nx + x)]);
  if (!with_ghosts) return out;
  for (int axis = 0; axis < p.dims; ++axis) {
    const int first = axis == 0 ? 1 : 0, second = axis == 2 ? 1 : 2;
    const std::int64_t n = g.n[axis], st = g.stride(axis);
    const bool periodic = p.periodic(axis);
    std::int64_t c[3] = {0, 0, 0};
    for (c[second] = 0; c[second] < g.n[second]; ++c[second])
      for (c[first] = 0; c[first] < g.n[first]; ++c[first]) {
        const std::int64_t base = g.index(c[0], c[1], c[2]);
        const std::int64_t lo = periodic ? n - 1 : 1, hi = periodic ? 0 : n - 2;
        out[static_cast<std::size_t>(base - st)] = out[static_cast<std::size_t>(base + lo * st)];
        out[static_cast<std::size_t>(base + n * st)] =
            out[static_cast<std::size_t>(base + hi * st)];
      }
  }
  return out;
}

std::atomic<std::int64_t> class_uploads{0};
std::atomic<std::int64_t> uniform_tiles{0}, all_tiles{0};  // cuda_uniform_tiles()

// One block per tile (CoefficientArgs::uniform_tile), a thread per column: whether every byte
// the compact sweep reads over the tile equals the tile's first node's (its class, or its
// faces' classes), and the word that names them. `fx` null: the pairs' form (the neighbours'
// classes read instead of the faces').
__global__ void __launch_bounds__(kUniformTileX* kUniformTileY)
    uniform_tiles_kernel(const std::uint8_t* __restrict__ cls, const std::uint8_t* __restrict__ fx,
                         const std::uint8_t* __restrict__ fy, const std::uint8_t* __restrict__ fz,
                         DeviceGrid g, int shift, std::uint32_t* out) {
  // The tile's nodes from x0 (before node 0 in the first tile: tile_x_shift).
  const std::int64_t x0 = blockIdx.x * static_cast<std::int64_t>(kUniformTileX) - shift;
  const std::int64_t y0 = blockIdx.y * static_cast<std::int64_t>(kUniformTileY);
  const std::int64_t z0 = blockIdx.z * static_cast<std::int64_t>(kUniformTileZ);
  const std::int64_t ref = g.index(x0 < 0 ? 0 : x0, y0, z0);
  const unsigned c = cls[ref];
  const unsigned rx = fx ? fx[ref] : 0u, ry = fx ? fy[ref] : 0u, rz = fx ? fz[ref] : 0u;
  const std::int64_t x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  bool same = true;
  if (x >= 0 && x < g.n[0] && y < g.n[1]) {
    const std::int64_t pz = g.pitch_z, py = g.pitch_y, first = g.index(x, y, z0);
    const std::int64_t count = g.n[2] - z0 < kUniformTileZ ? g.n[2] - z0 : kUniformTileZ;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t i = first + j * pz;
      same = same && cls[i] == c;
      if (fx)
        same = same && fx[i - 1] == rx && fx[i] == rx && fy[i - py] == ry && fy[i] == ry;
      else
        same = same && cls[i - 1] == c && cls[i + 1] == c && cls[i - py] == c && cls[i + py] == c;
    }
    if (fx) {
      for (std::int64_t q = 0; q <= count; ++q) same = same && fz[first + (q - 1) * pz] == rz;
    } else {
      same = same && cls[first - pz] == c && cls[first + count * pz] == c;
    }
  }
  same = __syncthreads_and(same) != 0;
  if (threadIdx.x == 0 && threadIdx.y == 0)
    out[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] =
        same ? c | rx << 8 | ry << 16 | rz << 24 : kMixedTile;
}

// On each face of a non-periodic axis, the ghost of a padded per-node field (filled from the
// mirror node by padded()) takes the boundary node b's own entry where the face between b and
// its mirror conducts nothing, the conductivities k_of(entry) (a value of T): what upload()
// does to k, and to the nodes' classes so that each ghost's class holds its k.
template <typename V, typename KOf>
void own_ghost_where_nothing_conducts(std::vector<V>& field, const StencilProblem& p,
                                      const DeviceGrid& grid, KOf k_of) {
  using K = decltype(k_of(field[0]));
  for (int a = 0; a < p.dims; ++a) {
    if (p.periodic(a)) continue;
    const int first = a == 0 ? 1 : 0, second = a == 2 ? 1 : 2;
    const std::int64_t n = grid.n[a], st = grid.stride(a);
    std::int64_t at[3] = {0, 0, 0};
    for (at[second] = 0; at[second] < grid.n[second]; ++at[second])
      for (at[first] = 0; at[first] < grid.n[first]; ++at[first]) {
        V* line = &field[static_cast<std::size_t>(grid.index(at[0], at[1], at[2]))];
        if (!(face_conductance(k_of(line[0]), k_of(line[st])) > K(0))) line[-st] = line[0];
        if (!(face_conductance(k_of(line[(n - 1) * st]), k_of(line[(n - 2) * st])) > K(0)))
          line[n * st] = line[(n - 1) * st];
      }
  }
}

template <typename T>
void upload_array(DeviceArray& array, const std::vector<T>& host) {
  array.allocate(host.size() * sizeof(T));
  HEATSIM_CUDA_CHECK(
      cudaMemcpy(array.as<void>(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

}  // namespace

CoefficientFaces coefficient_faces_at(const StencilProblem& p, double t) {
  CoefficientFaces f;
  for (int i = 0; i < kFaces; ++i) {
    f.kind[i] = static_cast<int>(p.faces[i].kind);
    f.value[i] = p.faces[i].at(t);
    f.transfer[i] = p.faces[i].transfer;
    f.heat_flux[i] = p.faces[i].heat_flux;
    if (p.faces[i].radiates()) {
      const double a = f.value[i];
      f.radiation[i] = radiation_coefficient(p.faces[i], p.h[i / 2]);
      f.ambient4[i] = a * a * a * a;
    }
  }
  for (int a = 0; a < 3; ++a) f.spacing[a] = p.h[a];
  return f;
}

FaceRules face_rules_at(const StencilProblem& p, double t) {
  const CoefficientFaces f = coefficient_faces_at(p, t);
  FaceRules r;
  for (int i = 0; i < 2 * p.dims; ++i) {
    const auto kind = static_cast<BoundaryKind>(f.kind[i]);
    r.apply[i] = kind != BoundaryKind::periodic;
    r.rule[i] = coefficient_ghost_rule(kind, f.heat_flux[i], f.value[i], f.transfer[i],
                                       f.spacing[i / 2], f.radiation[i], f.ambient4[i]);
  }
  return r;
}

template <typename T>
void launch_coefficient_ghosts(T* u, const T* conductivity, const T* const* face_k,
                               const DeviceGrid& grid, const CoefficientFaces& faces,
                               cudaStream_t stream) {
  FacePointers<T> K;
  if (face_k)
    for (int a = 0; a < 3; ++a) K.axis[a] = face_k[a];
  GhostLines lines{};
  std::int64_t total = 0;
  for (int a = 0; a < 3; ++a) {
    if (a < grid.dims) {
      const int first = a == 0 ? 1 : 0, second = a == 2 ? 1 : 2;
      total += grid.n[first] * grid.n[second];
    }
    lines.end[a] = total;
  }
  if (total == 0) return;
  const std::int64_t blocks = (total + kThreads - 1) / kThreads;
  coefficient_ghosts_kernel<T>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(u, conductivity, K, grid, faces,
                                                                lines);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template <typename T>
void DeviceCoefficients<T>::upload(const StencilProblem& p, const DeviceGrid& grid,
                                   const Capabilities& caps) {
  if (!p.coefficients) throw std::invalid_argument("coefficient fields: none in the problem");
  const CoefficientFields& c = *p.coefficients;
  const std::size_t points = static_cast<std::size_t>(p.points());
  auto check = [&](const std::vector<double>& f, const std::string& what) {
    if (f.size() != points)
      throw std::invalid_argument("coefficient fields: " + what + " has " +
                                  std::to_string(f.size()) + " values, the grid " +
                                  std::to_string(points));
  };
  check(c.conductivity, "conductivity");
  check(c.capacity, "capacity");
  if (c.sources.size() > static_cast<std::size_t>(kMaxSourceFields))
    throw std::invalid_argument("coefficient fields: " + std::to_string(c.sources.size()) +
                                " source fields, at most " + std::to_string(kMaxSourceFields));
  for (std::size_t s = 0; s < c.sources.size(); ++s)
    check(c.sources[s].density, "source " + std::to_string(s));

  // k's ghosts: the mirror node's, or b's own where the face between b and m conducts nothing
  // (ghost_value), so that the face toward the ghost conducts k_b there.
  std::vector<T> k = padded<T>(c.conductivity, p, grid, true);
  own_ghost_where_nothing_conducts(k, p, grid, [](T v) { return v; });
  upload_array(conductivity, k);
  // dt / C formed in T, as the CPU does: T(dt) / T(C).
  std::vector<T> dtc = padded<T>(c.capacity, p, grid, false);
  for (std::int64_t z = 0; z < grid.n[2]; ++z)
    for (std::int64_t y = 0; y < grid.n[1]; ++y)
      for (std::int64_t x = 0; x < grid.n[0]; ++x) {
        T& v = dtc[static_cast<std::size_t>(grid.index(x, y, z))];
        if (v != T(0)) v = static_cast<T>(p.dt) / v;  // 0 inside a void: not stepped
      }
  upload_array(dt_over_capacity, dtc);
  sources = static_cast<int>(c.sources.size());
  for (int s = 0; s < sources; ++s)
    upload_array(source[s],
                 padded<T>(c.sources[static_cast<std::size_t>(s)].density, p, grid, false));
  upload_array(capacity, c.capacity);
  has_transfer = !c.transfer.empty();
  if (has_transfer) {
    check(c.transfer, "transfer");
    upload_array(transfer, padded<T>(c.transfer, p, grid, false));
  }
  has_faces = c.has_faces();
  for (int a = 0; a < 3; ++a) {
    DeviceArray none;
    faces[a].swap(none);
  }
  std::array<std::vector<T>, 3> padded_faces;
  if (!has_faces) {
    upload_classes(p, grid, padded_faces, caps);
    return;
  }
  for (int a = 0; a < p.dims; ++a) {
    check(c.faces[static_cast<std::size_t>(a)], "the faces of axis " + std::to_string(a));
    // The interior's faces, then the face toward each ghost: the mirror face (periodic: the
    // wrap face, which the last node holds), or k_b where the mirror face conducts nothing.
    std::vector<T> K = padded<T>(c.faces[static_cast<std::size_t>(a)], p, grid, false);
    const int first = a == 0 ? 1 : 0, second = a == 2 ? 1 : 2;
    const std::int64_t n = grid.n[a], st = grid.stride(a);
    const bool periodic = p.periodic(a);
    std::int64_t at[3] = {0, 0, 0};
    for (at[second] = 0; at[second] < grid.n[second]; ++at[second])
      for (at[first] = 0; at[first] < grid.n[first]; ++at[first]) {
        const std::size_t start = static_cast<std::size_t>(grid.index(at[0], at[1], at[2]));
        fill_ghost_faces(&K[start], &k[start], n, st, periodic);
      }
    upload_array(faces[a], K);
    padded_faces[static_cast<std::size_t>(a)] = std::move(K);
  }
  upload_classes(p, grid, padded_faces, caps);
}

template <typename T>
void DeviceCoefficients<T>::form_tiles(const DeviceGrid& grid) {
  DeviceArray none_tiles;
  uniform_tile.swap(none_tiles);
  if (grid.dims == 3 && classes > 0) {
    const int shift = tile_x_shift<T>(grid);
    const dim3 tiles(static_cast<unsigned>((grid.n[0] + shift + kUniformTileX - 1) / kUniformTileX),
                     static_cast<unsigned>((grid.n[1] + kUniformTileY - 1) / kUniformTileY),
                     static_cast<unsigned>((grid.n[2] + kUniformTileZ - 1) / kUniformTileZ));
    if (tiles.y <= 65535 && tiles.z <= 65535) {
      uniform_tile.allocate(sizeof(std::uint32_t) * tiles.x * tiles.y * tiles.z);
      const std::uint8_t* fx = has_faces ? face_class[0].template as<std::uint8_t>() : nullptr;
      uniform_tiles_kernel<<<tiles, dim3(kUniformTileX, kUniformTileY)>>>(
          node_class.template as<std::uint8_t>(), fx,
          fx ? face_class[1].template as<std::uint8_t>() : nullptr,
          fx ? face_class[2].template as<std::uint8_t>() : nullptr, grid, shift,
          uniform_tile.template as<std::uint32_t>());
      HEATSIM_CUDA_CHECK_LAUNCH();
      std::vector<std::uint32_t> words(static_cast<std::size_t>(tiles.x) * tiles.y * tiles.z);
      HEATSIM_CUDA_CHECK(cudaMemcpy(words.data(), uniform_tile.as<void>(),
                                    words.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
      uniform_tiles = static_cast<std::int64_t>(std::count_if(
          words.begin(), words.end(), [](std::uint32_t w) { return w != kMixedTile; }));
      all_tiles = static_cast<std::int64_t>(words.size());
      tile_grid = grid;
    }
  }
}

template <typename T>
void DeviceCoefficients<T>::upload_classes(const StencilProblem& p, const DeviceGrid& grid,
                                           const std::array<std::vector<T>, 3>& padded_faces,
                                           const Capabilities& caps) {
  classes = 0;
  DeviceArray none_ids, none_table;
  node_class.swap(none_ids);
  class_table.swap(none_table);
  host_class_table.reset();
  class_transfer.clear();
  for (int a = 0; a < 3; ++a) {
    DeviceArray none;
    face_class[a].swap(none);
    face_classes[a] = 0;
  }
  DeviceArray none_packed;
  packed_class.swap(none_packed);
  form_tiles(grid);  // none
  if (environment_switch("HEATSIM_CUDA_CLASSES") == 0) return;
  // With the faces given a sweep takes the node's class only beside the faces' (CoefficientForm).
  if (!caps.compact_materials || (has_faces && !caps.compact_faces)) return;
  const auto found =
      find_node_classes(*p.coefficients, p.points(), kMaxNodeClasses, caps.compact_transfer);
  if (!found) return;
  // Without the faces a sweep looks every conductance up in the pairs' table.
  if (!has_faces && found->count() > kPairClasses) return;
  ClassTable<T> table{};
  // The faces given: each axis's padded array (ghost faces filled, in T) as a class per element
  // and its distinct values, at most kMaxNodeClasses of them, or no compact form at all.
  std::array<std::vector<std::uint8_t>, 3> face_ids;
  if (has_faces)
    for (int a = 0; a < p.dims; ++a) {
      auto compact = find_value_classes(padded_faces[static_cast<std::size_t>(a)]);
      if (!compact) return;  // too many distinct conductances
      face_classes[a] = static_cast<int>(compact->value.size());
      std::copy(compact->value.begin(), compact->value.end(), table.face[a]);
      face_ids[static_cast<std::size_t>(a)] = std::move(compact->id);
    }
  // Each ghost takes the class of the node whose k it holds (upload(): the mirror node, the
  // periodic image, or b itself where the face between b and its mirror conducts nothing).
  std::vector<std::uint8_t> ids = padded<std::uint8_t>(found->id, p, grid, true);
  own_ghost_where_nothing_conducts(ids, p, grid, [&](std::uint8_t id) {
    return static_cast<T>(found->conductivity[id]);
  });
  upload_array(node_class, ids);
  // k, dt / C and the densities in T, as the fields' path forms them.
  for (int c = 0; c < found->count(); ++c) {
    const auto at = static_cast<std::size_t>(c);
    table.k[c] = static_cast<T>(found->conductivity[at]);
    const T capacity = static_cast<T>(found->capacity[at]);
    table.dt_over_capacity[c] = capacity != T(0) ? static_cast<T>(p.dt) / capacity : T(0);
    if (has_transfer) class_transfer.push_back(static_cast<T>(found->transfer[at]));
    for (int s = 0; s < kMaxSourceFields; ++s)
      table.source[c * kMaxSourceFields + s] =
          static_cast<T>(found->source[at][static_cast<std::size_t>(s)]);
  }
  // The pairs' conductances on the host: face_conductance's products and quotient are
  // correctly rounded in T on either side, so they are the values the fields' path forms.
  if (!has_faces)
    for (int c = 0; c < found->count(); ++c)
      for (int d = 0; d < found->count(); ++d)
        table.pair[c * kPairClasses + d] = face_conductance(table.k[c], table.k[d]);
  class_table.allocate(sizeof(ClassTable<T>));
  HEATSIM_CUDA_CHECK(
      cudaMemcpy(class_table.as<void>(), &table, sizeof(table), cudaMemcpyHostToDevice));
  host_class_table = std::make_unique<ClassTable<T>>(table);
  for (int a = 0; a < p.dims && has_faces; ++a)
    upload_array(face_class[a], face_ids[static_cast<std::size_t>(a)]);
  if (has_faces && p.dims >= 2) {
    std::vector<std::uint32_t> packed(ids.size());
    for (std::size_t e = 0; e < packed.size(); ++e) {
      packed[e] = std::uint32_t{ids[e]} | std::uint32_t{face_ids[0].at(e)} << 8 |
                  std::uint32_t{face_ids[1].at(e)} << 16;
      if (p.dims == 3) packed[e] |= std::uint32_t{face_ids[2].at(e)} << 24;
    }
    upload_array(packed_class, packed);
  }
  classes = found->count();
  form_tiles(grid);
  ++class_uploads;
}

template void launch_coefficient_ghosts<float>(float*, const float*, const float* const*,
                                               const DeviceGrid&, const CoefficientFaces&,
                                               cudaStream_t);
template void launch_coefficient_ghosts<double>(double*, const double*, const double* const*,
                                                const DeviceGrid&, const CoefficientFaces&,
                                                cudaStream_t);
template struct DeviceCoefficients<float>;
template struct DeviceCoefficients<double>;

}  // namespace heatsim::kernels::cuda

namespace heatsim::kernels {
std::int64_t cuda_class_uploads() { return cuda::class_uploads.load(); }
std::array<std::int64_t, 2> cuda_uniform_tiles() {
  return {cuda::uniform_tiles.load(), cuda::all_tiles.load()};
}
}  // namespace heatsim::kernels
