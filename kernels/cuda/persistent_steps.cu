// The cooperative small-grid steps of persistent_steps.cuh.
#include <cooperative_groups.h>

#include <algorithm>
#include <type_traits>

#include "check.cuh"
#include "persistent_steps.cuh"

namespace heatsim::kernels::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;

template <typename T, int DIMS, CoefficientForm FORM, bool TRANSFER>
__global__ void __launch_bounds__(kThreads)
    persistent_steps_kernel(const CoefficientArgs<T> a, int steps, DirichletFaces d) {
  cg::grid_group grid = cg::this_grid();
  const ClassTable<T>* table = nullptr;
  if constexpr (takes_classes(FORM)) {
    __shared__ ClassTable<T> staged;
    stage_class_table(a, staged);
    __syncthreads();
    table = &staged;
  }
  const DeviceGrid& g = a.grid;
  // Node numbers in 32 bits (launch_persistent_steps takes grids below 2^31 nodes only): two
  // 32-bit divisions per node for its coordinates instead of three 64-bit ones.
  const unsigned nx = static_cast<unsigned>(g.n[0]), ny = static_cast<unsigned>(g.n[1]);
  const unsigned total = nx * ny * static_cast<unsigned>(g.n[2]);
  const unsigned stride = gridDim.x * blockDim.x;
  for (int s = 0; s < steps; ++s) {
    const T* __restrict__ u = (s & 1) ? a.out : a.in;
    T* __restrict__ out = (s & 1) ? const_cast<T*>(a.in) : a.out;
    const T* factor = a.factor + static_cast<std::ptrdiff_t>(s) * kMaxSourceFields;
    for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {
      const unsigned row = j / nx, z = row / ny;
      const unsigned x = j - row * nx, y = row - z * ny;
      const std::int64_t i = g.index(x, y, z);
      T value = coefficient_node<T, DIMS, FORM, TRANSFER, true>(a, table, u, factor, i, x, y, z);
      const unsigned c[3] = {x, y, z};
      for (int f = 0; f < d.count; ++f)  // the later face wins an edge, as set_dirichlet
        if (c[d.axis[f]] == (d.side[f] == 0 ? 0u : static_cast<unsigned>(g.n[d.axis[f]] - 1)))
          value = static_cast<T>(d.value[f]);
      out[i] = value;
    }
    grid.sync();
  }
}

template <typename T, int DIMS, CoefficientForm FORM, bool TRANSFER>
bool launch_kernel(const CoefficientArgs<T>& a, int steps, const DirichletFaces& d,
                   cudaStream_t stream) {
  const auto kernel = persistent_steps_kernel<T, DIMS, FORM, TRANSFER>;
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) return false;
  HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  HEATSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  if (per_sm < 1) return false;
  const std::int64_t total = a.grid.n[0] * a.grid.n[1] * a.grid.n[2];
  if (total >= (std::int64_t{1} << 31)) return false;
  const std::int64_t wanted = (total + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::min<std::int64_t>(wanted, std::int64_t{per_sm} * sms));
  CoefficientArgs<T> args = a;
  int n = steps;
  DirichletFaces faces = d;
  void* params[] = {&args, &n, &faces};
  HEATSIM_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                                 dim3(blocks), dim3(kThreads), params, 0, stream));
  HEATSIM_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace

template <typename T>
bool launch_persistent_steps(const CoefficientArgs<T>& a, int dims, int steps,
                             const DirichletFaces& dirichlet, cudaStream_t stream) {
  if (steps <= 0) return true;
  const CoefficientForm form = coefficient_form(a);
  const bool transfer = a.transfer != nullptr;
  const auto by_dims = [&](auto dims_tag) {
    constexpr int D = decltype(dims_tag)::value;
    constexpr auto kFaces = CoefficientForm::faces, kFields = CoefficientForm::fields;
    if (form == CoefficientForm::classes)
      return launch_kernel<T, D, CoefficientForm::classes, false>(a, steps, dirichlet, stream);
    if (form == CoefficientForm::face_classes)
      return launch_kernel<T, D, CoefficientForm::face_classes, false>(a, steps, dirichlet, stream);
    if (form == kFaces)
      return transfer ? launch_kernel<T, D, kFaces, true>(a, steps, dirichlet, stream)
                      : launch_kernel<T, D, kFaces, false>(a, steps, dirichlet, stream);
    return transfer ? launch_kernel<T, D, kFields, true>(a, steps, dirichlet, stream)
                    : launch_kernel<T, D, kFields, false>(a, steps, dirichlet, stream);
  };
  switch (dims) {
    case 1:
      return by_dims(std::integral_constant<int, 1>{});
    case 2:
      return by_dims(std::integral_constant<int, 2>{});
    default:
      return by_dims(std::integral_constant<int, 3>{});
  }
}

template bool launch_persistent_steps<float>(const CoefficientArgs<float>&, int, int,
                                             const DirichletFaces&, cudaStream_t);
template bool launch_persistent_steps<double>(const CoefficientArgs<double>&, int, int,
                                              const DirichletFaces&, cudaStream_t);

}  // namespace heatsim::kernels::cuda
