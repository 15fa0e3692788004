// The shared CUDA backend driver. One step is, as on the CPU: ghost fill axis by axis at
// time t, the sweep cur -> next, swap, Dirichlet nodes set to g(t + dt). g(t) is evaluated
// on the host per step (BoundaryFace::at, the same function the CPU uses) and passed by value.
// Between two sweeps, the Dirichlet nodes of one step and the ghost fill of the next are one
// launch (launch_boundary_pass); advance() starts with a ghost fill alone and ends with the
// Dirichlet nodes alone, so the field between calls is the CPU's.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "../boundary_rules.hpp"
#include "../forwarding_backend.hpp"
#include "box_transfer.cuh"
#include "check.cuh"
#include "coefficient_backend.cuh"
#include "device_field_backend.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"
#include "fusing_backend.cuh"
#include "stencil_backend.hpp"

namespace heatsim::kernels::cuda {
namespace {

template <typename T>
class SweepBackend final : public DeviceFieldBackend<T> {
 public:
  SweepBackend(SweepBackendSpec spec, SweepLauncher<T> sweep)
      : spec_(std::move(spec)), sweep_(sweep) {
    spec_.capabilities.gpu = true;
  }

  std::string name() const override { return spec_.name; }
  Capabilities capabilities() const override { return spec_.capabilities; }
  std::string unsupported_reason(const StencilProblem& problem) const override {
    const std::string why = constant_weights_reason(problem);
    return why.empty() ? Backend::unsupported_reason(problem) : why;
  }

  void setup(const StencilProblem& problem) override {
    this->not_ready();
    const std::string why = unsupported_reason(problem);
    if (!why.empty()) throw std::runtime_error(spec_.name + " backend: " + why);
    if (problem.stencil.weights.size() != problem.stencil.size())
      throw std::invalid_argument(spec_.name + " backend: stencil has " +
                                  std::to_string(problem.stencil.weights.size()) +
                                  " weights, expected " + std::to_string(problem.stencil.size()));
    p_ = problem;
    shape_.dims = problem.dims;
    shape_.radius = problem.stencil.radius;
    shape_.taps = tap_set(problem.stencil);
    grid_ = make_device_grid(problem, problem.stencil.radius, sizeof(T));

    int device = 0;
    HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
    HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&context_.multiprocessors,
                                              cudaDevAttrMultiProcessorCount, device));
    context_.stream = backend_stream();

    const std::size_t bytes = static_cast<std::size_t>(grid_.total) * sizeof(T);
    cur_.allocate(bytes);
    next_.allocate(bytes);
    partials_.allocate(kStatsMaxBlocks * sizeof(StatsPartial));
    // All-ones bytes are NaN in fp32 and fp64: a node or ghost that no kernel writes shows up
    // as non-finite instead of passing for a plausible value.
    HEATSIM_CUDA_CHECK(cudaMemset(cur_.as<void>(), 0xff, bytes));
    HEATSIM_CUDA_CHECK(cudaMemset(next_.as<void>(), 0xff, bytes));

    weights_ = StencilWeights<T>{};
    for (std::size_t i = 0; i < problem.stencil.weights.size(); ++i)
      weights_.w[i] = static_cast<T>(problem.stencil.weights[i]);

    has_dirichlet_ = false;
    for (int f = 0; f < 2 * problem.dims; ++f)
      has_dirichlet_ = has_dirichlet_ || problem.faces[f].kind == BoundaryKind::dirichlet;
    // Faces that a step never changes: every face Dirichlet at a constant value and a stencil
    // of radius 1. A step then reads the Dirichlet nodes, which both buffers hold at g, and no
    // ghost, so nothing is left for a boundary pass between sweeps: each step sweeps the rows
    // inside the Dirichlet planes and rows (`inside_`, whole rows along x, so that they stay
    // aligned as the field's rows are) and stores their nodes inside the Dirichlet nodes.
    fixed_faces_ = spec_.stores_x && problem.stencil.radius == 1;
    for (int f = 0; f < 2 * problem.dims; ++f)
      fixed_faces_ = fixed_faces_ && problem.faces[f].kind == BoundaryKind::dirichlet &&
                     !problem.faces[f].time_dependent();
    inside_ = FieldBox{};
    for (int a = 0; a < problem.dims; ++a) {
      inside_.grid[a] = problem.n[a];
      inside_.lo[a] = a == 0 ? 0 : 1;
      inside_.extent[a] = a == 0 ? problem.n[0] : std::max<std::int64_t>(problem.n[a] - 2, 0);
    }
    this->ready(problem.points());
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    this->check_ready("advance()");
    SweepArgs<T> args = step_args();
    if (steps <= 0) return;
    launch_boundary_pass<T>(cur_.as<T>(), grid_, faces_at(step0), false, true, context_.stream);
    if (fixed_faces_) {
      // The Dirichlet nodes at g in the buffer each of the first two steps writes (the field
      // given may hold others there, which its first step reads as the CPU's does).
      launch_boundary_pass<T>(next_.as<T>(), grid_, faces_at(step0 + 1), true, false,
                              context_.stream);
      args.grid = box_grid(grid_, inside_);
      args.store_x[0] = 1;
      args.store_x[1] = p_.n[0] - 1;
      const bool any = inside_.points() > 0 && p_.n[0] > 2;
      for (std::int64_t s = 0; s < steps; ++s) {
        args.in = cur_.as<T>();
        args.out = next_.as<T>();
        if (any) sweep_(args, shape_, context_);
        cur_.swap(next_);
        if (s == 0 && steps > 1)
          launch_boundary_pass<T>(next_.as<T>(), grid_, faces_at(step0 + 2), true, false,
                                  context_.stream);
      }
      return;
    }
    for (std::int64_t s = 0; s < steps; ++s) {
      args.in = cur_.as<T>();
      args.out = next_.as<T>();
      sweep_(args, shape_, context_);
      cur_.swap(next_);
      // Dirichlet nodes at t + dt, and the ghosts of the next step (at the same time) unless
      // this was the last step.
      const bool last = s + 1 == steps;
      if (has_dirichlet_ || !last)
        launch_boundary_pass<T>(cur_.as<T>(), grid_, faces_at(step0 + s + 1), has_dirichlet_, !last,
                                context_.stream);
    }
  }

  // One step: the ghosts, the sweep of `inner`, between() (boxes on a stream of their own
  // while the sweep runs), the ghosts again (between() may have written the nodes some are
  // formed from), the sweep of the nodes around `inner`; then advance()'s Dirichlet nodes.
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    this->check_ready("advance_around()");
    if (steps != 1) return false;
    SweepArgs<T> args = step_args();
    args.in = cur_.as<T>();
    args.out = next_.as<T>();
    const auto sweep = [&](const FieldBox& box) {
      if (box.points() == 0) return;
      args.grid = box_grid(grid_, box);
      sweep_(args, shape_, context_);
    };
    const BoundaryFaces faces = faces_at(step0);
    launch_boundary_pass<T>(cur_.as<T>(), grid_, faces, false, true, context_.stream);
    sweep(inner);
    this->with_boxes_aside(between);
    launch_boundary_pass<T>(cur_.as<T>(), grid_, faces, false, true, context_.stream);
    for (const FieldBox& box : boxes_around(inner)) sweep(box);
    cur_.swap(next_);
    if (has_dirichlet_)
      launch_boundary_pass<T>(cur_.as<T>(), grid_, faces_at(step0 + 1), true, false,
                              context_.stream);
    return true;
  }

  FieldStats stats() override {
    this->check_ready("stats()");
    return device_field_stats<T>(cur_.as<T>(), grid_, p_, partials_.as<StatsPartial>(),
                                 context_.multiprocessors, context_.stream);
  }

 private:
  typename DeviceFieldBackend<T>::FieldNow field_now() override {
    return {cur_.as<T>(), grid_, context_.stream};
  }

  // A step's sweep over the whole grid (in and out left to the caller).
  SweepArgs<T> step_args() const {
    SweepArgs<T> args;
    args.grid = grid_;
    args.source = static_cast<T>(p_.source_increment);
    args.weights = weights_;
    return args;
  }

  // Every face's rule at the time of step `step`.
  BoundaryFaces faces_at(std::int64_t step) const {
    return boundary_faces_at(p_, static_cast<double>(step) * p_.dt);
  }

  SweepBackendSpec spec_;
  SweepLauncher<T> sweep_;
  StencilProblem p_;
  SweepShape shape_;
  DeviceGrid grid_;
  LaunchContext context_;
  DeviceArray cur_, next_, partials_;
  StencilWeights<T> weights_{};
  bool has_dirichlet_ = false;
  bool fixed_faces_ = false;
  FieldBox inside_;
};

// The Kernel of FusingBackend (fusing_backend.cuh) for a CUDA-core sweep: S, or S^k as a
// dense stencil of radius k*r <= kMaxRadius (2D stars: kMaxFusedRadius2D), through the
// backend's own launcher. S^k of a star has off-axis taps but all of them within its
// fused-star tap set (k steps of at most r along one axis each; r = 1: the diamond
// |dx|+|dy|+|dz| <= k), which its sweep then multiplies (tap_set); of a box, the whole box.
// Temporal fusion on CUDA cores is then the sweep's streaming (register-tiling: 2.5D, partial
// sums in registers) or tiling at the fused radius: one read and one write of the field per
// k steps, at 2 x taps flops per pass.
template <typename T>
struct CoreKernel {
  struct Plan {
    StencilWeights<T> weights{};
    SweepShape shape;
  };

  SweepBackendSpec spec;
  SweepLauncher<T> launcher = nullptr;

  std::string name() const { return spec.name; }

  Capabilities capabilities() const {
    Capabilities c = spec.capabilities;
    c.gpu = true;
    c.max_fusion_depth = kMaxFusedRadius2D;  // and k*r <= max_fused_radius()
    return c;
  }

  void prepare(Plan& plan, const Stencil& s) const {
    plan.weights = StencilWeights<T>{};
    for (std::size_t i = 0; i < s.weights.size(); ++i)
      plan.weights.w[i] = static_cast<T>(s.weights[i]);
    plan.shape.dims = s.dims;
    plan.shape.radius = s.radius;
    plan.shape.taps = tap_set(s);
  }

  std::int64_t slack(const Plan&) const { return 0; }

  // Its sweeps take any box of the grid (box_grid): a split pass (advance_around).
  static constexpr bool kSweepsBoxes = true;

  void sweep(const Plan& plan, const T* in, T* out, const DeviceGrid& grid, double source,
             int multiprocessors, cudaStream_t stream) const {
    SweepArgs<T> a;
    a.in = in;
    a.out = out;
    a.grid = grid;
    a.source = static_cast<T>(source);
    a.weights = plan.weights;
    LaunchContext context;
    context.stream = stream;
    context.multiprocessors = multiprocessors;
    launcher(a, plan.shape, context);
  }

  // The largest fused radius the sweeps take: kMaxRadius, and for a 2D star (whose S^k runs
  // on its fused-star taps) kMaxFusedRadius2D.
  static int max_fused_radius(const StencilProblem& p) {
    return p.dims == 2 && p.stencil.is_star() ? kMaxFusedRadius2D : kMaxRadius;
  }

  // `fusion: auto`: 1D at the deepest depth; stars in 2D and 3D to the backend's radius; boxes
  // in 2D at the deepest and in 3D not at all: their fused stencil stays a dense box and makes
  // the pass compute-bound (H100, fp64, 512^3, register-tiling: Box-3D27P 139.7, 96.3, 37.0
  // GStencil/s at k = 1, 2, 3; Heat-3D on the diamond taps 143.0, 209.2, 236.8).
  int auto_depth(const StencilProblem& p) const {
    const int deepest = max_fused_radius(p) / p.stencil.radius;
    if (p.dims == 1) return deepest;
    if (!p.stencil.is_star()) return p.dims == 2 ? deepest : 1;
    const int radius = p.dims == 2 ? spec.auto_radius_2d : spec.auto_radius_3d;
    return std::max(1, std::min(radius / p.stencil.radius, deepest));
  }

  bool takes_radius(const StencilProblem& p, int radius, int) const {
    return radius <= max_fused_radius(p);
  }
};

// A CUDA-core backend: fused passes (FusingBackend with CoreKernel) when the problem asks
// for fusion and at least two steps fit a pass (k*r <= max_fused_radius()), else one step per
// pass (SweepBackend, whose boundary work is one launch per step).
template <typename T>
class CoreBackend final : public ForwardingBackend {
 public:
  CoreBackend(SweepBackendSpec spec, SweepLauncher<T> sweep)
      : spec_(std::move(spec)), sweep_(sweep) {}

  std::string name() const override { return spec_.name; }
  Capabilities capabilities() const override { return CoreKernel<T>{spec_, sweep_}.capabilities(); }
  std::string unsupported_reason(const StencilProblem& problem) const override {
    if (problem.coefficients) {
      if (!coefficient_sweep())
        return "no varying-coefficient sweep";
      return coefficient_unsupported_reason(spec_.capabilities, problem);
    }
    const std::string why = constant_weights_reason(problem);
    return why.empty() ? Backend::unsupported_reason(problem) : why;
  }

  void setup(const StencilProblem& problem) override {
    forget();
    if (problem.coefficients) {  // one step per pass: no constant S to fuse
      auto varying = make_coefficient_backend<T>(spec_.name, spec_.capabilities, coefficient_sweep());
      varying->setup(problem);
      choose(std::move(varying));
      return;
    }
    if (problem.fusion_depth != 1) {
      auto fused =
          std::make_unique<FusingBackend<T, CoreKernel<T>>>(CoreKernel<T>{spec_, sweep_});
      fused->setup(problem);
      if (fused->fusion_depth() > 1) {
        choose(std::move(fused));
        return;
      }
    }
    auto single = std::make_unique<SweepBackend<T>>(spec_, sweep_);
    single->setup(problem);
    choose(std::move(single));
  }

 private:
  CoefficientLauncher<T> coefficient_sweep() const {
    if constexpr (std::is_same_v<T, float>)
      return spec_.coefficient_fp32;
    else
      return spec_.coefficient_fp64;
  }

  SweepBackendSpec spec_;
  SweepLauncher<T> sweep_;
};

}  // namespace

std::string constant_weights_reason(const StencilProblem& p) {
  if (p.coefficients)
    return "varying coefficients (materials, source fields) need per-node weights, and this "
           "pass applies one constant stencil";
  for (int f = 0; f < 2 * p.dims; ++f)
    if (needs_coefficients(p.faces[f]))
      return std::string("a ") + (p.faces[f].heat_flux ? "heat-flux" : "convective") +
             " face needs the coefficient fields (StencilProblem::coefficients)";
  return "";
}

std::unique_ptr<Backend> make_sweep_backend(const SweepBackendSpec& spec, Precision precision) {
  if (precision == Precision::fp32) {
    if (!spec.sweep_fp32) throw std::runtime_error(spec.name + " backend: no fp32 kernels");
    return std::make_unique<CoreBackend<float>>(spec, spec.sweep_fp32);
  }
  if (!spec.sweep_fp64) throw std::runtime_error(spec.name + " backend: no fp64 kernels");
  return std::make_unique<CoreBackend<double>>(spec, spec.sweep_fp64);
}

}  // namespace heatsim::kernels::cuda
