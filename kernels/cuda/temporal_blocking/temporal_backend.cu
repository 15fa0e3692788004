// The temporal-blocking backend: fusing_backend.cuh's driver with the blocked sweep of
// temporal_sweep.cu as its Kernel. A pass of depth k fills ghost layers k*r wide once, and
// each block advances its tile k steps in shared memory; faces where that is not exact
// (fusion_plan.hpp, face_is_exact_under_fusion) get their bands redone step by step, as for
// any fused pass.
#include "temporal_backend.hpp"

#include <algorithm>
#include <string>

#include "../fusing_backend.cuh"
#include "temporal_sweep.hpp"

namespace heatsim::kernels {
namespace {

template <typename T>
struct BlockedKernel {
  static constexpr bool kBlocksSteps = true;
  static constexpr int kMaxDepth = 16;

  struct Plan {
    cuda::StencilWeights<T> weights{};
    cuda::SweepShape shape;
    int depth = 1;
  };

  std::string name() const { return "temporal-blocking"; }

  Capabilities capabilities() const {
    Capabilities c;
    c.max_radius = cuda::kMaxRadius;
    c.gpu = true;
    c.max_fusion_depth = kMaxDepth;  // and the tile must keep an output; see takes_radius
    return c;
  }

  void prepare(Plan& plan, const Stencil& s) const { prepare_steps(plan, s, 1); }

  void prepare_steps(Plan& plan, const Stencil& s, int depth) const {
    plan.weights = cuda::StencilWeights<T>{};
    for (std::size_t i = 0; i < s.weights.size(); ++i)
      plan.weights.w[i] = static_cast<T>(s.weights[i]);
    plan.shape.dims = s.dims;
    plan.shape.radius = s.radius;
    plan.shape.taps = s.dims == 1 || s.is_star() ? cuda::kStarTaps : cuda::kBoxTaps;
    plan.depth = depth;
  }

  std::int64_t slack(const Plan&) const { return 0; }

  void sweep(const Plan& plan, const T* in, T* out, const cuda::DeviceGrid& grid, double source,
             int multiprocessors, cudaStream_t stream) const {
    cuda::SweepArgs<T> a;
    a.in = in;
    a.out = out;
    a.grid = grid;
    a.source = static_cast<T>(source);
    a.weights = plan.weights;
    cuda::LaunchContext context;
    context.stream = stream;
    context.multiprocessors = multiprocessors;
    cuda::launch_temporal_sweep(a, plan.shape, plan.depth, context);
  }

  // `fusion: auto` (before a tuning cache says otherwise): the depths measured fastest on an
  // H100 at the bench sizes (docs/performance.md, "Temporal blocking").
  int auto_depth(const StencilProblem& p) const {
    const int r = p.stencil.radius;
    const bool star = p.dims == 1 || p.stencil.is_star();
    if (p.dims == 1) return kMaxDepth;
    if (p.dims == 2) return star ? std::max(1, 8 / r) : std::max(1, 6 / r);
    return r == 1 ? (star ? 4 : 3) : 1;
  }

  // Depth k = radius / r fits when a tile keeps an output after its halos and its queues fit
  // the device's shared memory.
  bool takes_radius(const StencilProblem& p, int radius, int shared_limit) const {
    const int r = p.stencil.radius;
    if (radius % r != 0) return false;
    const std::size_t bytes = cuda::temporal_sweep_shared_bytes(
        p.dims, r, !p.stencil.is_star(), radius / r, sizeof(T));
    return bytes > 0 && bytes <= static_cast<std::size_t>(shared_limit);
  }
};

}  // namespace

std::unique_ptr<Backend> make_temporal_blocking_backend(Precision precision) {
  if (precision == Precision::fp32)
    return std::make_unique<cuda::FusingBackend<float, BlockedKernel<float>>>(BlockedKernel<float>{});
  return std::make_unique<cuda::FusingBackend<double, BlockedKernel<double>>>(BlockedKernel<double>{});
}

}  // namespace heatsim::kernels
