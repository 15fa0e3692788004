// The device side of temperature-dependent materials (temperature_kernels.cuh).
#include <cmath>
#include <vector>

#include "check.cuh"
#include "temperature_kernels.cuh"

namespace heatsim::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
struct FaceArrays {
  T* axis[3] = {nullptr, nullptr, nullptr};
};

// Which axes are periodic.
struct Wraps {
  bool axis[3] = {false, false, false};
};

// One thread per interior node, x fastest; per active axis the face toward the node one step
// up (the wrap on a periodic axis; none past the last node of another). The CPU's arithmetic:
// the ratios and the face in double, rounded to T once. Registers: a few dozen; no shared
// memory.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    update_faces_kernel(const T* __restrict__ u, FaceArrays<T> K,
                        const std::int32_t* __restrict__ law, const LawTables* __restrict__ laws,
                        const double* __restrict__ ref0, const double* __restrict__ ref1,
                        const double* __restrict__ ref2, DeviceGrid g, Wraps periodic) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t points = g.n[0] * g.n[1] * g.n[2];
  if (k >= points) return;
  const std::int64_t c[3] = {k % g.n[0], k / g.n[0] % g.n[1], k / (g.n[0] * g.n[1])};
  const std::int64_t i = g.index(c[0], c[1], c[2]);
  const double* refs[3] = {ref0, ref1, ref2};
  // Unrolled: the per-axis arrays above are then indexed by constants and stay in registers
  // (indexed at run time they went to local memory, 140 bytes a node of stores).
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    if (a >= g.dims) break;
    const std::int64_t st = g.stride(a);
    std::int64_t j = i + st;
    if (c[a] == g.n[a] - 1) {
      if (!periodic.axis[a]) continue;
      j = i - (g.n[a] - 1) * st;
    }
    const std::int32_t li = law[i], lj = law[j];
    // One law along the face: its Kirchhoff mean ratio between the two temperatures. Two laws'
    // faces are interface_faces_kernel's (its loop here held every face to spilled registers:
    // Heat-3D-kT 15.3 -> 13.6 GStencil/s on cuda-naive).
    if (li < 0 || li != lj) continue;
    K.axis[a][i] = static_cast<T>(refs[a][i] * law_mean_conductivity(laws[li], static_cast<double>(u[i]),
                                                                      static_cast<double>(u[j])));
  }
}

// One thread per face between nodes of two laws (DeviceTemperature::interfaces): its parts in
// series, each by its own Kirchhoff transform (series_face), in double, rounded to T once.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    interface_faces_kernel(const T* __restrict__ u, FaceArrays<T> K,
                           const InterfaceFace* __restrict__ faces, std::int64_t count,
                           const std::int32_t* __restrict__ law,
                           const LawTables* __restrict__ laws, const double* __restrict__ share0,
                           const double* __restrict__ share1, const double* __restrict__ share2,
                           const double* __restrict__ ref0, const double* __restrict__ ref1,
                           const double* __restrict__ ref2, const double* __restrict__ contact0,
                           const double* __restrict__ contact1,
                           const double* __restrict__ contact2) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const InterfaceFace f = faces[k];
  const int a = f.axis;
  const double* share = a == 0 ? share0 : a == 1 ? share1 : share2;
  const double* ref = a == 0 ? ref0 : a == 1 ? ref1 : ref2;
  const double* contact = a == 0 ? contact0 : a == 1 ? contact1 : contact2;
  const std::int32_t li = law[f.i], lj = law[f.j];
  T* out = a == 0 ? K.axis[0] : a == 1 ? K.axis[1] : K.axis[2];
  out[f.i] = static_cast<T>(series_face(ref[f.i], share[f.i], contact ? contact[f.i] : 0.0,
                                        li < 0 ? nullptr : &laws[li],
                                        lj < 0 ? nullptr : &laws[lj],
                                        static_cast<double>(u[f.i]), static_cast<double>(u[f.j])));
}

// One thread per grid line along an active axis: the faces toward its two ghosts, as
// DeviceCoefficients::upload sets them (mirror face; periodic: the wrap face). A mirror face of
// reference 0 (a void beside the boundary node) stays 0, and its ghost face keeps the k_b the
// upload gave it.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    mirror_faces_kernel(FaceArrays<T> K, DeviceGrid g, Wraps periodic, int axis) {
  const int first = axis == 0 ? 1 : 0, second = axis == 2 ? 1 : 2;
  const std::int64_t l = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (l >= g.n[first] * g.n[second]) return;
  std::int64_t c[3] = {0, 0, 0};
  c[first] = l % g.n[first];
  c[second] = l / g.n[first];
  const std::int64_t n = g.n[axis], st = g.stride(axis);
  const bool wraps = periodic.axis[axis];
  T* line = K.axis[axis] + g.index(c[0], c[1], c[2]);
  if (wraps) {
    line[-st] = line[(n - 1) * st];
    return;
  }
  if (line[(n - 2) * st] > T(0)) line[(n - 1) * st] = line[(n - 2) * st];
  if (line[0] > T(0)) line[-st] = line[0];
}

// One thread per interior node.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    enthalpy_step_kernel(const T* __restrict__ u, T* __restrict__ next,
                         const std::int32_t* __restrict__ law, const LawTables* __restrict__ laws,
                         DeviceGrid g) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t points = g.n[0] * g.n[1] * g.n[2];
  if (k >= points) return;
  const std::int64_t i = g.index(k % g.n[0], k / g.n[0] % g.n[1], k / (g.n[0] * g.n[1]));
  const std::int32_t l = law[i];
  if (l < 0) return;
  const LawTables& tables = laws[l];
  if (tables.capacity_pairs < 2 && !(tables.latent > 0.0)) return;
  const double ui = static_cast<double>(u[i]);
  const double gained = static_cast<double>(next[i] - u[i]);
  next[i] = static_cast<T>(law_temperature(tables, law_enthalpy(tables, ui) + gained));
}

template <typename T>
struct RadiationArgs {
  const T* R[kMaxRadiationGroups] = {};
  T ambient4[kMaxRadiationGroups] = {};
  int groups = 0;
};

// One thread per interior node. The CPU's arithmetic for the loss (u^2 squared, in T).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    surface_radiation_kernel(const T* __restrict__ u, T* __restrict__ next,
                             const T* __restrict__ dtc, RadiationArgs<T> r, DeviceGrid g) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t points = g.n[0] * g.n[1] * g.n[2];
  if (k >= points) return;
  const std::int64_t i = g.index(k % g.n[0], k / g.n[0] % g.n[1], k / (g.n[0] * g.n[1]));
  const T ui = u[i], u2 = ui * ui;
  T loss = T(0);
#pragma unroll
  for (int q = 0; q < kMaxRadiationGroups; ++q)
    if (q < r.groups) loss += r.R[q][i] * (u2 * u2 - r.ambient4[q]);
  if (loss != T(0)) next[i] -= dtc[i] * loss;
}

template <typename T>
void upload_array(DeviceArray& array, const std::vector<T>& host) {
  array.allocate(host.size() * sizeof(T));
  HEATSIM_CUDA_CHECK(
      cudaMemcpy(array.as<void>(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// A compact per-node field into the padded layout (zeros, or `outside`, elsewhere).
template <typename V, typename F>
std::vector<V> padded(const F& field, const DeviceGrid& g, V outside) {
  std::vector<V> out(static_cast<std::size_t>(g.total), outside);
  std::size_t k = 0;
  for (std::int64_t z = 0; z < g.n[2]; ++z)
    for (std::int64_t y = 0; y < g.n[1]; ++y)
      for (std::int64_t x = 0; x < g.n[0]; ++x, ++k)
        out[static_cast<std::size_t>(g.index(x, y, z))] = static_cast<V>(field[k]);
  return out;
}

std::int64_t blocks_for(std::int64_t items) { return (items + kThreads - 1) / kThreads; }

}  // namespace

std::string temperature_unsupported_reason(const StencilProblem& p) {
  if (p.coefficients &&
      p.coefficients->radiation.size() > static_cast<std::size_t>(kMaxRadiationGroups))
    return "at most " + std::to_string(kMaxRadiationGroups) +
           " ambients of radiating surfaces inside the body on the device, not " +
           std::to_string(p.coefficients->radiation.size());
  if (!p.coefficients || !p.coefficients->temperature) return "";
  const TemperatureDependence& t = *p.coefficients->temperature;
  if (t.laws.size() > static_cast<std::size_t>(kMaxDeviceLaws))
    return "at most " + std::to_string(kMaxDeviceLaws) +
           " temperature-dependent materials on the device, not " + std::to_string(t.laws.size());
  if (!p.coefficients->has_faces()) return "temperature-dependent materials need the faces";
  const std::size_t points = static_cast<std::size_t>(p.points());
  if (t.law.size() != points) return "the material laws must have one value per node";
  for (int a = 0; a < p.dims; ++a)
    if (t.share[static_cast<std::size_t>(a)].size() != points ||
        (!t.contact[static_cast<std::size_t>(a)].empty() &&
         t.contact[static_cast<std::size_t>(a)].size() != points))
      return "the faces' material shares must have one value per node and axis";
  return "";
}

template <typename T>
void DeviceTemperature<T>::upload(const StencilProblem& p, const DeviceGrid& grid) {
  radiation_groups = 0;
  if (p.coefficients) {
    const std::string why = temperature_unsupported_reason(p);
    if (!why.empty()) throw std::invalid_argument(why);
    for (const auto& r : p.coefficients->radiation)
      upload_array(radiation[radiation_groups++], padded<T>(r.coefficient, grid, T(0)));
  }
  present = p.coefficients && p.coefficients->temperature;
  varying_k = varying_c = false;
  set = DeviceLawSet{};
  if (!present) return;
  const std::string why = temperature_unsupported_reason(p);
  if (!why.empty()) throw std::invalid_argument(why);
  const TemperatureDependence& t = *p.coefficients->temperature;
  // The tables, flat: each law's conductivity pairs then capacity pairs; then the pieces.
  std::vector<double> flat;
  std::vector<EnthalpyPiece> all_pieces;
  std::vector<std::array<std::size_t, 3>> at;  // per law: conductivity, capacity, pieces offsets
  for (const TemperatureLaw& law : t.laws) {
    at.push_back({flat.size(), flat.size() + 2 * law.conductivity.size(), all_pieces.size()});
    for (const auto& e : law.conductivity) flat.insert(flat.end(), {e[0], e[1]});
    for (const auto& e : law.capacity) flat.insert(flat.end(), {e[0], e[1]});
    all_pieces.insert(all_pieces.end(), law.pieces.begin(), law.pieces.end());
    varying_k = varying_k || law.varying_conductivity();
    varying_c = varying_c || law.varying_capacity();
  }
  flat.push_back(0.0);  // never empty
  upload_array(tables, flat);
  upload_array(pieces, all_pieces);
  set.count = static_cast<int>(t.laws.size());
  for (int l = 0; l < set.count; ++l) {
    const TemperatureLaw& law = t.laws[static_cast<std::size_t>(l)];
    LawTables& d = set.law[l];
    d = law.tables();
    d.conductivity = tables.as<double>() + at[static_cast<std::size_t>(l)][0];
    d.capacity = tables.as<double>() + at[static_cast<std::size_t>(l)][1];
    d.pieces = pieces.as<EnthalpyPiece>() + at[static_cast<std::size_t>(l)][2];
  }
  upload_array(laws, std::vector<LawTables>(set.law, set.law + set.count));
  upload_array(law, padded<std::int32_t>(t.law, grid, -1));
  for (int a = 0; a < 3; ++a) {
    DeviceArray none_s, none_r, none_c;
    share[a].swap(none_s);
    reference[a].swap(none_r);
    contact[a].swap(none_c);
  }
  interface_count = 0;
  if (!varying_k) return;
  // The faces between nodes of two laws, in the faces kernel's order (x fastest, axis by axis).
  std::vector<InterfaceFace> between;
  const auto& n = p.n;
  for (int a = 0; a < p.dims; ++a) {
    const std::int64_t st = a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1];
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t c[3] = {x, y, z};
          const std::int64_t i = (z * n[1] + y) * n[0] + x;
          std::int64_t j = i + st;
          std::int64_t cj[3] = {x, y, z};
          if (c[a] == n[a] - 1) {
            if (!p.periodic(a)) continue;
            j = i - (n[a] - 1) * st;
            cj[a] = 0;
          } else {
            cj[a] = c[a] + 1;
          }
          const std::int32_t li = t.law[static_cast<std::size_t>(i)];
          const std::int32_t lj = t.law[static_cast<std::size_t>(j)];
          if (li == lj) continue;
          between.push_back({grid.index(x, y, z), grid.index(cj[0], cj[1], cj[2]), a});
        }
  }
  interface_count = static_cast<std::int64_t>(between.size());
  if (interface_count > 0) upload_array(interfaces, between);
  for (int a = 0; a < p.dims; ++a) {
    upload_array(share[a], padded<double>(t.share[static_cast<std::size_t>(a)], grid, 0.5));
    if (!t.contact[static_cast<std::size_t>(a)].empty())
      upload_array(contact[a], padded<double>(t.contact[static_cast<std::size_t>(a)], grid, 0.0));
    upload_array(reference[a], padded<double>(p.coefficients->faces[static_cast<std::size_t>(a)], grid, 0.0));
  }
}

template <typename T>
void launch_update_faces(const T* u, T* const* faces, const DeviceTemperature<T>& t,
                         const DeviceGrid& grid, const bool* periodic, cudaStream_t stream) {
  if (!t.varying_k) return;
  FaceArrays<T> K;
  for (int a = 0; a < grid.dims; ++a) K.axis[a] = faces[a];
  Wraps wraps;
  for (int a = 0; a < 3; ++a) wraps.axis[a] = periodic[a];
  const std::int64_t points = grid.n[0] * grid.n[1] * grid.n[2];
  const double* share[3] = {nullptr, nullptr, nullptr};
  const double* ref[3] = {nullptr, nullptr, nullptr};
  const double* contact[3] = {nullptr, nullptr, nullptr};
  for (int a = 0; a < grid.dims; ++a) {
    share[a] = t.share[a].template as<double>();
    ref[a] = t.reference[a].template as<double>();
    contact[a] = t.contact[a].template as<double>();  // null where none was uploaded
  }
  update_faces_kernel<T><<<static_cast<unsigned>(blocks_for(points)), kThreads, 0, stream>>>(
      u, K, t.law.template as<std::int32_t>(), t.laws.template as<LawTables>(), ref[0], ref[1],
      ref[2], grid, wraps);
  HEATSIM_CUDA_CHECK_LAUNCH();
  if (t.interface_count > 0) {
    interface_faces_kernel<T>
        <<<static_cast<unsigned>(blocks_for(t.interface_count)), kThreads, 0, stream>>>(
            u, K, t.interfaces.template as<InterfaceFace>(), t.interface_count,
            t.law.template as<std::int32_t>(), t.laws.template as<LawTables>(), share[0],
            share[1], share[2], ref[0], ref[1], ref[2], contact[0], contact[1], contact[2]);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
  for (int a = 0; a < grid.dims; ++a) {
    const int first = a == 0 ? 1 : 0, second = a == 2 ? 1 : 2;
    const std::int64_t lines = grid.n[first] * grid.n[second];
    mirror_faces_kernel<T><<<static_cast<unsigned>(blocks_for(lines)), kThreads, 0, stream>>>(
        K, grid, wraps, a);
    HEATSIM_CUDA_CHECK_LAUNCH();
  }
}

template <typename T>
void launch_enthalpy_step(const T* u, T* next, const DeviceTemperature<T>& t,
                          const DeviceGrid& grid, cudaStream_t stream) {
  if (!t.varying_c) return;
  const std::int64_t points = grid.n[0] * grid.n[1] * grid.n[2];
  enthalpy_step_kernel<T><<<static_cast<unsigned>(blocks_for(points)), kThreads, 0, stream>>>(
      u, next, t.law.template as<std::int32_t>(), t.laws.template as<LawTables>(), grid);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_surface_radiation(const T* u, T* next, const T* dt_over_capacity,
                              const DeviceTemperature<T>& t, const double* ambient4,
                              const DeviceGrid& grid, cudaStream_t stream) {
  if (t.radiation_groups == 0) return;
  RadiationArgs<T> r;
  r.groups = t.radiation_groups;
  for (int q = 0; q < r.groups; ++q) {
    r.R[q] = t.radiation[q].template as<T>();
    r.ambient4[q] = static_cast<T>(ambient4[q]);
  }
  const std::int64_t points = grid.n[0] * grid.n[1] * grid.n[2];
  surface_radiation_kernel<T><<<static_cast<unsigned>(blocks_for(points)), kThreads, 0, stream>>>(
      u, next, dt_over_capacity, r, grid);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template <typename T>
double enthalpy_content(const T* u, const StencilProblem& p, const DeviceGrid& grid) {
  std::vector<T> host(static_cast<std::size_t>(grid.total));
  HEATSIM_CUDA_CHECK(cudaMemcpy(host.data(), u, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const CoefficientFields& f = *p.coefficients;
  const TemperatureDependence* t = f.temperature.get();
  double total = 0.0;
  std::size_t k = 0;
  const auto weight = [&](int a, std::int64_t i) {
    if (a >= p.dims || p.periodic(a)) return 1.0;
    return (i == 0 || i == grid.n[a] - 1) ? 0.5 : 1.0;
  };
  for (std::int64_t z = 0; z < grid.n[2]; ++z)
    for (std::int64_t y = 0; y < grid.n[1]; ++y)
      for (std::int64_t x = 0; x < grid.n[0]; ++x, ++k) {
        const double C = f.capacity[k];
        const double v = static_cast<double>(host[static_cast<std::size_t>(grid.index(x, y, z))]);
        if (C == 0.0 || !std::isfinite(v)) continue;
        const std::int32_t l = t ? t->law[k] : -1;
        const TemperatureLaw* law =
            l >= 0 && t->laws[static_cast<std::size_t>(l)].varying_capacity()
                ? &t->laws[static_cast<std::size_t>(l)]
                : nullptr;
        total += weight(2, z) * weight(1, y) * weight(0, x) * C * (law ? law->enthalpy(v) : v);
      }
  return total;
}

template struct DeviceTemperature<float>;
template struct DeviceTemperature<double>;
template void launch_update_faces<float>(const float*, float* const*, const DeviceTemperature<float>&,
                                         const DeviceGrid&, const bool*, cudaStream_t);
template void launch_update_faces<double>(const double*, double* const*,
                                          const DeviceTemperature<double>&, const DeviceGrid&,
                                          const bool*, cudaStream_t);
template void launch_enthalpy_step<float>(const float*, float*, const DeviceTemperature<float>&,
                                          const DeviceGrid&, cudaStream_t);
template void launch_enthalpy_step<double>(const double*, double*, const DeviceTemperature<double>&,
                                           const DeviceGrid&, cudaStream_t);
template void launch_surface_radiation<float>(const float*, float*, const float*,
                                              const DeviceTemperature<float>&, const double*,
                                              const DeviceGrid&, cudaStream_t);
template void launch_surface_radiation<double>(const double*, double*, const double*,
                                               const DeviceTemperature<double>&, const double*,
                                               const DeviceGrid&, cudaStream_t);
template double enthalpy_content<float>(const float*, const StencilProblem&, const DeviceGrid&);
template double enthalpy_content<double>(const double*, const StencilProblem&, const DeviceGrid&);

}  // namespace heatsim::kernels::cuda
