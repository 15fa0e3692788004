// The CUDA backends' registry entries.
//
// Order = preference of `auto`: the registry's first entry whose unsupported_reason(problem)
// is empty and which is available (a GPU is visible) runs the problem; cpu, appended by the
// registry, is the fallback. register-tiling comes first (fastest on every 2D and 3D shape
// measured on an H100, fp64 and fp32; it does not run 1D), then shared-tiling (covers 1D, at
// or above cuda-naive there), then cuda-naive. docs/backends.md holds the measurements.
#include "cuda_backends.hpp"

#include "convstencil/convstencil_backend.hpp"
#include "naive/naive_sweep.hpp"
#include "register_tiling/register_sweep.hpp"
#include "shared_tiling/shared_sweep.hpp"
#include "stencil_backend.hpp"

namespace heatsim::kernels {
namespace {

using cuda::SweepBackendSpec;

SweepBackendSpec naive_spec() {
  SweepBackendSpec s;
  s.name = "cuda-naive";
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.sweep_fp32 = &cuda::launch_naive_sweep<float>;
  s.sweep_fp64 = &cuda::launch_naive_sweep<double>;
  return s;
}

SweepBackendSpec shared_spec() {
  SweepBackendSpec s;
  s.name = "shared-tiling";
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.sweep_fp32 = &cuda::launch_shared_sweep<float>;
  s.sweep_fp64 = &cuda::launch_shared_sweep<double>;
  return s;
}

SweepBackendSpec register_spec() {
  SweepBackendSpec s;
  s.name = "register-tiling";
  s.capabilities.min_dims = 2;
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.sweep_fp32 = &cuda::launch_register_sweep<float>;
  s.sweep_fp64 = &cuda::launch_register_sweep<double>;
  return s;
}

}  // namespace

std::vector<BackendEntry> cuda_backend_entries() {
  return {
      {"register-tiling",
       "CUDA: 2D blocks march along the slowest axis, plane in shared memory, neighbours in "
       "registers; 2D/3D, star and box, radius <= 3, fp64/fp32",
       true, [](Precision p) { return cuda::make_sweep_backend(register_spec(), p); }},
      {"shared-tiling",
       "CUDA: input tile with halo in shared memory; 1D-3D, star and box, radius <= 3, "
       "fp64/fp32",
       true, [](Precision p) { return cuda::make_sweep_backend(shared_spec(), p); }},
      {"cuda-naive",
       "CUDA: one thread per node from global memory (baseline); 1D-3D, star and box, "
       "radius <= 3, fp64/fp32",
       true, [](Precision p) { return cuda::make_sweep_backend(naive_spec(), p); }},
      {"convstencil",
       "CUDA: fp64 tensor-core MMAs from a stencil2row tile, exact temporal fusion "
       "(fusion_depth); 1D-3D, star and box, radius <= 3, fp64 only",
       true, [](Precision p) { return make_convstencil_backend(p); }},
  };
}

}  // namespace heatsim::kernels
