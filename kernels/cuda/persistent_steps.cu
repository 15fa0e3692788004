// The cooperative small-grid steps of persistent_steps.cuh.
#include <cooperative_groups.h>

#include <algorithm>
#include <type_traits>

#include "check.cuh"
#include "persistent_steps.cuh"
#include "point_operators.cuh"

namespace heatsim::kernels::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;

// Op: the flux operator (point_operators.cuh) with the faces' rules applied.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    persistent_steps_kernel(const typename Op::Args a, int steps, DirichletFaces d) {
  using T = typename Op::Value;
  cg::grid_group grid = cg::this_grid();
  typename Op::Block block = Op::enter(a);
  const DeviceGrid& g = a.grid;
  // Node numbers in 32 bits (launch_persistent_steps takes grids below 2^31 nodes only): two
  // 32-bit divisions per node for its coordinates instead of three 64-bit ones.
  const unsigned nx = static_cast<unsigned>(g.n[0]), ny = static_cast<unsigned>(g.n[1]);
  const unsigned total = nx * ny * static_cast<unsigned>(g.n[2]);
  const unsigned stride = gridDim.x * blockDim.x;
  for (int s = 0; s < steps; ++s) {
    const T* __restrict__ u = (s & 1) ? a.out : a.in;
    T* __restrict__ out = (s & 1) ? const_cast<T*>(a.in) : a.out;
    // Step s's factors (row s); step 0's are enter()'s, its class sums already formed.
    if (s > 0)
      block = Op::at_step(block, a.factor + static_cast<std::ptrdiff_t>(s) * kMaxSourceFields);
    for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {
      const unsigned row = j / nx, z = row / ny;
      const unsigned x = j - row * nx, y = row - z * ny;
      const std::int64_t i = g.index(x, y, z);
      T value = Op::point(a, block, global_near<Op, false>(a, u, i, 0, x, y, z));
      const unsigned c[3] = {x, y, z};
      for (int f = 0; f < d.count; ++f)  // the later face wins an edge, as set_dirichlet
        if (c[d.axis[f]] == (d.side[f] == 0 ? 0u : static_cast<unsigned>(g.n[d.axis[f]] - 1)))
          value = static_cast<T>(d.value[f]);
      out[i] = value;
    }
    grid.sync();
  }
}

template <class Op>
bool launch_kernel(const typename Op::Args& a, int steps, const DirichletFaces& d,
                   cudaStream_t stream) {
  const auto kernel = persistent_steps_kernel<Op>;
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
  typename Op::Args args = a;
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
  bool launched = false;
  dispatch_flux(a, dims, coefficient_form(a), [&](auto op) {
    using Op = typename decltype(op)::type;
    if constexpr (Op::kRules)  // the run applies every face's rule (persistent_steps.cuh)
      launched = launch_kernel<Op>(a, steps, dirichlet, stream);
  });
  return launched;
}

template bool launch_persistent_steps<float>(const CoefficientArgs<float>&, int, int,
                                             const DirichletFaces&, cudaStream_t);
template bool launch_persistent_steps<double>(const CoefficientArgs<double>&, int, int,
                                              const DirichletFaces&, cudaStream_t);

}  // namespace heatsim::kernels::cuda
