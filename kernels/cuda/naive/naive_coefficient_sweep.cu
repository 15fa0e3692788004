// cuda-naive, varying coefficients: one thread per node, u and k of every neighbour read from
// global memory (reuse left to the caches), in the CPU's neighbour order.
#include <algorithm>
#include <type_traits>

#include "../check.cuh"
#include "naive_sweep.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Tile: 32 x 8 nodes (1D: 256) per block of 256 threads; blocks stride over y and z when the
// grid has more rows or planes than a launch grid holds. Shared memory: none, or the classes'
// table (2.7 KB in fp64). Registers: the sum, the centre u and k, the row base; fp64 about 40.
// FORM: where the coefficients come from (coefficient_sweep.cuh). RULES: the faces' ghost rules
// applied at the boundary nodes (CoefficientArgs::rules).
template <typename T, int DIMS, CoefficientForm FORM, bool TRANSFER, bool RULES>
__global__ void __launch_bounds__(256) naive_coefficient_kernel(const CoefficientArgs<T> a) {
  const ClassTable<T>* table = nullptr;
  if constexpr (takes_classes(FORM)) {
    __shared__ ClassTable<T> staged;
    stage_class_table(a, staged);
    __syncthreads();
    table = &staged;
  }
  const DeviceGrid& g = a.grid;
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (x >= g.n[0]) return;
  for (std::int64_t z = blockIdx.z; z < g.n[2]; z += gridDim.z)
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < g.n[1];
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
      const std::int64_t i = g.index(x, y, z);
      a.out[i] =
          coefficient_node<T, DIMS, FORM, TRANSFER, RULES>(a, table, a.in, a.factor, i, x, y, z);
    }
}

}  // namespace

template <typename T>
void launch_naive_coefficient_sweep(const CoefficientArgs<T>& args, int dims,
                                    const LaunchContext& context) {
  const DeviceGrid& g = args.grid;
  const dim3 block = dims == 1 ? dim3(256, 1, 1) : dim3(32, 8, 1);
  const auto blocks = [](std::int64_t n, unsigned b, std::int64_t cap) {
    return static_cast<unsigned>(std::min<std::int64_t>((n + b - 1) / b, cap));
  };
  const dim3 grid(blocks(g.n[0], block.x, 0x7fffffff), blocks(g.n[1], block.y, 65535),
                  blocks(g.n[2], 1, 65535));
  // The kernel for the problem's dims, form and surfaces (template arguments, so that the
  // plain harmonic step carries none of the others' code).
  const auto launch = [&](auto dims_tag) {
    constexpr int D = decltype(dims_tag)::value;
    // The faces given are read from their arrays even where they are compacted: at 512^3 the
    // faces' classes (a byte per face, then the table) took cuda-naive's Heat-3D-faces row from
    // 50.7 to 39.7 GStencil/s on an H200. The cooperative runs of small grids, whose fields sit
    // in L2, keep them (persistent_steps.cu).
    const CoefficientForm compact = coefficient_form(args);
    const CoefficientForm form =
        compact == CoefficientForm::face_classes ? CoefficientForm::faces : compact;
    const bool transfer = args.transfer != nullptr;
    const auto pick = [&](auto rules_tag) {
      constexpr bool RULES = decltype(rules_tag)::value;
      constexpr auto kFaces = CoefficientForm::faces, kFields = CoefficientForm::fields;
      if (form == CoefficientForm::classes)
        return naive_coefficient_kernel<T, D, CoefficientForm::classes, false, RULES>;
      return form == kFaces ? (transfer ? naive_coefficient_kernel<T, D, kFaces, true, RULES>
                                        : naive_coefficient_kernel<T, D, kFaces, false, RULES>)
                            : (transfer ? naive_coefficient_kernel<T, D, kFields, true, RULES>
                                        : naive_coefficient_kernel<T, D, kFields, false, RULES>);
    };
    const auto kernel = any_rule(args.rules) ? pick(std::true_type{}) : pick(std::false_type{});
    kernel<<<grid, block, 0, context.stream>>>(args);
  };
  switch (dims) {
    case 1:
      launch(std::integral_constant<int, 1>{});
      break;
    case 2:
      launch(std::integral_constant<int, 2>{});
      break;
    default:
      launch(std::integral_constant<int, 3>{});
      break;
  }
  HEATSIM_CUDA_CHECK_LAUNCH();
}

template void launch_naive_coefficient_sweep<float>(const CoefficientArgs<float>&, int,
                                                    const LaunchContext&);
template void launch_naive_coefficient_sweep<double>(const CoefficientArgs<double>&, int,
                                                     const LaunchContext&);

}  // namespace heatsim::kernels::cuda
