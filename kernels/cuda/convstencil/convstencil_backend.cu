// The convstencil backend: fusing_backend.cuh's driver with the tensor-core sweep of
// convstencil_kernel.cu as its Kernel. See fusing_backend.cuh for how fused passes stay exact
// at the boundaries, docs/convstencil.md for the whole backend.
#include "convstencil_backend.hpp"

#include <algorithm>
#include <string>

#include "../fusing_backend.cuh"
#include "convstencil_kernel.cuh"

namespace heatsim::kernels {
namespace {

// Largest fused radius: 1D and 2D tiles keep their halo rows in shared memory, 3D tiles a
// ring of 2*radius+2 planes, which limits 3D to radius 4.
int max_fused_radius(int dims) { return dims == 3 ? 4 : 12; }

// A plan with its tables on the device.
struct UploadedPlan {
  convstencil::DevicePlan device;
  cuda::DeviceArray offsets, fragments;

  void upload(convstencil::TilePlan plan) {
    offsets.allocate(plan.offsets.size() * sizeof(int));
    fragments.allocate(plan.fragments.size() * sizeof(double));
    HEATSIM_CUDA_CHECK(cudaMemcpy(offsets.as<void>(), plan.offsets.data(),
                                  plan.offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
    HEATSIM_CUDA_CHECK(cudaMemcpy(fragments.as<void>(), plan.fragments.data(),
                                  plan.fragments.size() * sizeof(double), cudaMemcpyHostToDevice));
    device.blocks_per_multiprocessor = convstencil::prepare_plan(plan);
    device.plan = std::move(plan);
    device.offsets = offsets.as<int>();
    device.fragments = fragments.as<double>();
  }
};

// The Kernel of FusingBackend (fusing_backend.cuh): fp64 tensor-core MMAs.
struct TensorCoreKernel {
  using Plan = UploadedPlan;

  std::string name() const { return "convstencil"; }

  Capabilities capabilities() const {
    Capabilities c;
    c.max_radius = 3;
    c.fp32 = false;
    c.gpu = true;
    c.max_fusion_depth = 12;  // and k*r <= 12 (1D, 2D) or 4 (3D); see takes_radius
    c.tensor_cores = true;
    return c;
  }

  void prepare(Plan& plan, const Stencil& s) const { plan.upload(convstencil::plan_for(s)); }

  std::int64_t slack(const Plan& plan) const { return convstencil::slack_elements(plan.device.plan); }

  // Its sweeps take any box of the grid (box_grid), as a split pass (advance_around) needs.
  // The kernel stores its outputs in pairs at even x (16-byte aligned, as the grid's origin
  // is); a box that starts at an odd x is swept from the node before it, which lies in the
  // grid (x >= 0) and outside the box: the split pass's sweeps of the nodes around the
  // interior come after the interior's and write it again, and a node that does not read the
  // halo comes out the same from either sweep.
  static constexpr bool kSweepsBoxes = true;

  void sweep(const Plan& plan, const double* in, double* out, const cuda::DeviceGrid& grid,
             double source, int multiprocessors, cudaStream_t stream) const {
    cuda::DeviceGrid g = grid;
    if (g.origin % 2 != 0) {
      --g.origin;
      ++g.n[0];
    }
    convstencil::launch_sweep(plan.device, in, out, g, source, multiprocessors, stream);
  }

  // The depth measured fastest on an H100 for the shape class (docs/convstencil.md): deep
  // fusion pays while the fused stencil stays small.
  int auto_depth(const StencilProblem& p) const {
    const int r = p.stencil.radius;
    const bool star = p.stencil.is_star();
    if (p.dims == 1) return 12 / r;  // deeper keeps paying in 1D: the fused radius is the limit
    if (p.dims == 2) return r == 1 ? (star ? 5 : 4) : r == 2 ? 2 : star ? 3 : 2;
    return (r == 1 && star) ? 2 : 1;
  }

  // The fused radius fits the kernel and its tile the device's shared memory.
  bool takes_radius(const StencilProblem& p, int radius, int shared_limit) const {
    if (radius > max_fused_radius(p.dims)) return false;
    Stencil s = p.stencil;
    s.dims = p.dims;
    s.radius = radius;
    s.weights.assign(s.size(), 1.0);  // densest stencil of that radius: the largest tile
    return convstencil::plan_for(s).shared_bytes <= static_cast<std::size_t>(shared_limit);
  }
};

}  // namespace

// fp32 problems are refused through unsupported_reason (Capabilities::fp32 is false), so
// that `auto` and the benchmark can ask every registered backend the same way.
std::unique_ptr<Backend> make_convstencil_backend(Precision) {
  return std::make_unique<cuda::FusingBackend<double, TensorCoreKernel>>(TensorCoreKernel{});
}

}  // namespace heatsim::kernels
