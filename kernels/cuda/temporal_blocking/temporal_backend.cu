// The temporal-blocking backend. Constant weights: fusing_backend.cuh's driver with the blocked
// sweep of temporal_sweep.cu as its Kernel. A pass of depth k fills ghost layers k*r wide once,
// and each block advances its tile k steps in shared memory; faces where that is not exact
// (fusion_plan.hpp, face_is_exact_under_fusion) get their bands redone step by step, as for
// any fused pass. Varying coefficients: BlockedCoefficientBackend below, the same scheme on the
// coefficient step.
#include <algorithm>
#include <functional>
#include <string>

#include "../../forwarding_backend.hpp"
#include "../box_transfer.cuh"
#include "../coefficient_backend.cuh"
#include "../device_field_backend.cuh"
#include "../fusing_backend.cuh"
#include "../naive/naive_sweep.hpp"
#include "../register_tiling/register_sweep.hpp"
#include "temporal_backend.hpp"
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
    c.fuses_coefficients = true;
    // Its single steps (register-tiling's sweep; 1D: cuda-naive's) read the compact form; the
    // blocked passes read the fields, which stay on the device beside it.
    c.compact_materials = true;
    c.compact_faces = true;
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

  // Its passes take any box of the grid (box_grid), as a split pass (advance_around) needs: a
  // tile reads the box's ghost width around it from the buffer, zeros only past that, and a
  // node's arithmetic does not depend on where its tile lies, so the box's nodes come out as
  // the whole grid's pass gives them.
  static constexpr bool kSweepsBoxes = true;

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
    // A single step (steps outside whole passes, and the bands) in 2D and 3D is register-tiling's
    // sweep, which agrees with a pass of depth 1 to rounding and is faster in 2D (H100, fp64,
    // one step per pass in this driver: Heat-2D 161 against 139 GStencil/s, Box-2D9P 161
    // against 129; Heat-3D 117 either way, where the per-step ghost and Dirichlet launches
    // weigh more); 1D has no register-tiling sweep.
    if (plan.depth == 1 && plan.shape.dims > 1)
      cuda::launch_register_sweep(a, plan.shape, context);
    else
      cuda::launch_temporal_sweep(a, plan.shape, plan.depth, context);
  }

  // `fusion: auto` (before a tuning cache says otherwise): the depths measured fastest at the
  // bench sizes, fp64 (docs/performance.md, "Temporal blocking" and "the register marches in
  // the backend"): Heat-1D 16 on an H100 (943 GStencil/s; 8: 887); on an H200 with the
  // register marches, Heat-2D 8 (931; 4: 743, 12: 691) and Box-2D9P 8 (772; 4: 677, 12: 573),
  // Heat-3D 3 in fp64 since its depth 3 takes the march in sums (369.0; 4: 364.4, 2: 213) and
  // 4 in fp32 (455), Box-3D27P 2 (212; 3: 199). Past those the
  // registers and shared memory of the deeper marches cost more than the DRAM traffic saved.
  // Where single steps (register-tiling's sweep in 2D and 3D) beat every pass, auto takes
  // them: radius 2-3 in 3D (the queue kernel) and 2D boxes of radius 2-3 (Box-2D49P 152 at
  // k = 1, 136-143 at k = 2-4). 2D stars of radius 2-3 take the row march of 1 node per thread:
  // Star-2D13P 409.8 at k = 4 (3: 389.7, 5: 376.6; 217.3 at k = 1).
  int auto_depth(const StencilProblem& p) const {
    const int r = p.stencil.radius;
    const bool star = p.stencil.is_star();
    if (p.dims == 1) return kMaxDepth;
    if (r != 1) return p.dims == 2 && star ? 4 : 1;
    if (p.dims == 2) return 8;
    if (!star) return 2;
    return sizeof(T) == 8 ? 3 : 4;  // fp64 at 3: the march in sums (temporal_sweep.cu)
  }

  // Depth k = radius / r fits when a tile keeps an output after its halos and its queues fit
  // the device's shared memory.
  bool takes_radius(const StencilProblem& p, int radius, int shared_limit) const {
    const int r = p.stencil.radius;
    if (radius % r != 0) return false;
    const std::size_t bytes =
        cuda::temporal_sweep_shared_bytes(p.dims, r, !p.stencil.is_star(), radius / r, sizeof(T));
    return bytes > 0 && bytes <= static_cast<std::size_t>(shared_limit);
  }
};

// The nodes of `fields` in the slab [origin, origin + width) along `axis` of a grid of n nodes,
// in the slab's own memory order.
CoefficientFields slice_fields(const CoefficientFields& fields,
                               const std::array<std::int64_t, 3>& n, int axis, std::int64_t origin,
                               std::int64_t width) {
  std::array<std::int64_t, 3> m = n;
  m[static_cast<std::size_t>(axis)] = width;
  auto slice = [&](const std::vector<double>& f) {
    std::vector<double> out(static_cast<std::size_t>(m[0] * m[1] * m[2]));
    std::size_t i = 0;
    for (std::int64_t z = 0; z < m[2]; ++z)
      for (std::int64_t y = 0; y < m[1]; ++y)
        for (std::int64_t x = 0; x < m[0]; ++x) {
          std::array<std::int64_t, 3> c{x, y, z};
          c[static_cast<std::size_t>(axis)] += origin;
          out[i++] = f[static_cast<std::size_t>((c[2] * n[1] + c[1]) * n[0] + c[0])];
        }
    return out;
  };
  CoefficientFields s;
  s.conductivity = slice(fields.conductivity);
  s.capacity = slice(fields.capacity);
  for (const auto& src : fields.sources) s.sources.push_back({slice(src.density), src.schedule});
  for (std::size_t a = 0; a < 3; ++a)
    if (!fields.faces[a].empty()) s.faces[a] = slice(fields.faces[a]);
  if (!fields.transfer.empty()) s.transfer = slice(fields.transfer);
  return s;
}

// Varying coefficients (radius 1): passes of `depth` coefficient steps, each block taking its
// tile through all of them (temporal_sweep.cu), on a field whose ghost layers are `depth` wide.
// The coefficient step has no exact reflection at a face (its ghosts depend on the conductances
// and, for convective faces, on the node itself), so every non-periodic face gets a band: a slab
// of 2*depth nodes along the face's axis, copied out before the pass, advanced `depth` single
// steps with the real faces (its inner face a made-up Neumann face), whose outer `depth` nodes
// replace the pass's. Periodic axes are exact: the ghosts hold the period's image, of u at the
// pass's start and of k, dt/C and the sources once. Steps outside whole passes are single
// steps (the CUDA-core coefficient sweep), and passes start on multiples of the depth.
template <typename T>
class BlockedCoefficientBackend final : public cuda::DeviceFieldBackend<T> {
 public:
  explicit BlockedCoefficientBackend(Capabilities caps) : caps_(caps) {}

  std::string name() const override { return "temporal-blocking"; }
  Capabilities capabilities() const override { return caps_; }
  std::string unsupported_reason(const StencilProblem& problem) const override {
    return cuda::coefficient_unsupported_reason(caps_, problem);
  }
  int fusion_depth() const override { return depth_; }
  // One step per pass reads the compact form (the single steps' sweep); deeper passes the fields.
  double bytes_per_point_step() const override {
    return depth_ == 1 ? main_.fields().compact_bytes_per_point(main_.problem().dims) : 0.0;
  }

  void setup(const StencilProblem& problem) override {
    const std::string why = unsupported_reason(problem);
    this->not_ready();
    if (!why.empty()) throw std::runtime_error(name() + " backend: " + why);
    p_ = problem;
    int device = 0, shared_limit = 0;
    HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
    HEATSIM_CUDA_CHECK(
        cudaDeviceGetAttribute(&context_.multiprocessors, cudaDevAttrMultiProcessorCount, device));
    HEATSIM_CUDA_CHECK(
        cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    context_.stream = nullptr;  // the legacy default stream, like the other CUDA backends
    depth_ = problem.fusion_depth == 0 ? auto_depth(problem) : std::max(1, problem.fusion_depth);
    depth_ = std::min(depth_, cuda::kMaxBlockedDepth);
    auto fits = [&](int k) {
      for (int a = 0; a < problem.dims; ++a)
        if (k > problem.n[a] - 1) return false;
      const std::size_t bytes = cuda::temporal_coefficient_shared_bytes(
          problem.dims, k, sizeof(T), problem.coefficients->has_faces());
      return bytes > 0 && bytes <= static_cast<std::size_t>(shared_limit);
    };
    while (depth_ > 1 && !fits(depth_)) --depth_;

    const cuda::CoefficientLauncher<T> single = problem.dims == 1
                                                    ? &cuda::launch_naive_coefficient_sweep<T>
                                                    : &cuda::launch_register_coefficient_sweep<T>;
    main_.setup(problem, single, depth_, context_, capabilities());
    partials_.allocate(cuda::kStatsMaxBlocks * sizeof(cuda::StatsPartial));
    bands_.clear();
    if (depth_ > 1) {
      // k, dt/C and the sources across every face, `depth` deep (see the class comment).
      cuda::DeviceCoefficients<T>& f = main_.fields();
      fill_wide_ghosts(f.conductivity.template as<T>());
      fill_wide_ghosts(f.dt_over_capacity.template as<T>());
      for (int s = 0; s < f.sources; ++s) fill_wide_ghosts(f.source[s].template as<T>());
      if (f.has_transfer) fill_wide_ghosts(f.transfer.template as<T>());
      // The faces' first ghost layer holds the face rule the single steps read (the mirror
      // face, or k_b); only periodic axes need the wider image, elsewhere the bands decide.
      if (f.has_faces)
        for (int a = 0; a < problem.dims; ++a) fill_wide_ghosts(f.faces[a].template as<T>(), true);
      for (int axis = 0; axis < problem.dims; ++axis) {
        if (problem.periodic(axis)) continue;
        for (int side = 0; side < 2; ++side) {
          // A placeholder's wrong nodes stay in a decomposed block's overlap, which is at
          // least `depth` deep.
          if (problem.placeholder[2 * axis + side]) continue;
          auto band = std::make_unique<Band>();
          band->at = cuda::BandGeometry::at(problem, axis, side, depth_);
          StencilProblem slab = band->at.slab_problem(problem);
          slab.coefficients = std::make_shared<CoefficientFields>(slice_fields(
              *problem.coefficients, problem.n, axis, band->at.origin(), band->at.width));
          band->slab.setup(slab, single, 1, context_, capabilities());
          bands_.push_back(std::move(band));
        }
      }
    }
    dirichlet_ = cuda::DirichletFaces{};
    for (int f = 0; f < 2 * problem.dims; ++f)
      if (problem.faces[f].kind == BoundaryKind::dirichlet) {
        dirichlet_.axis[dirichlet_.count] = f / 2;
        dirichlet_.side[dirichlet_.count] = f % 2;
        ++dirichlet_.count;
      }
    this->ready(problem.points());
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    this->check_ready("advance()");
    if (steps <= 0) return;
    std::int64_t s = 0;
    if (depth_ > 1) {
      // Passes start on multiples of the depth (absolute step numbers), so the passes a run
      // takes do not depend on how the caller splits it into calls.
      const std::int64_t lead = std::min<std::int64_t>(steps, (depth_ - step0 % depth_) % depth_);
      main_.advance(lead, step0);
      for (s = lead; steps - s >= depth_; s += depth_) blocked_pass(step0 + s);
    }
    main_.advance(steps - s, step0 + s);
  }

  // One pass split around `inner`, the boxes of between() on a stream of their own: one step
  // per pass (depth 1, `fusion: auto`'s choice here) as the CUDA-core coefficient backends
  // split it (CoefficientStepper::step_around), a blocked pass by blocked_pass.
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    this->check_ready("advance_around()");
    if (steps != depth_ || step0 % depth_ != 0) return false;
    if (depth_ == 1)
      main_.step_around(step0, inner, [&] { this->with_boxes_aside(between); });
    else
      blocked_pass(step0, &inner, &between);
    return true;
  }

  FieldStats stats() override {
    this->check_ready("stats()");
    return cuda::coefficient_field_stats(main_, partials_, context_);
  }

  // `fusion: auto`: one step per pass. Measured on the H100 (docs/performance.md, Heat-3D-mat
  // 512^3): fp64 63.4 GStencil/s at depth 1 against 35.2 at 2, fp32 83.4 against 35.6 at 4;
  // the blocked coefficient sweep is issue-bound (ncu: 25% occupancy, 9.6 cycles per issued
  // instruction), so deeper passes are taken only when asked for.
  static int auto_depth(const StencilProblem&) { return 1; }

 private:
  typename cuda::DeviceFieldBackend<T>::FieldNow field_now() override {
    return {main_.cur(), main_.grid(), context_.stream};
  }

  struct Band {
    cuda::BandGeometry at;
    cuda::CoefficientStepper<T> slab;
  };

  // Every ghost layer of a main-field array: the periodic image on periodic axes, the mirror
  // node elsewhere (even reflection; any finite value would do there, the bands replace what
  // it reaches).
  void fill_wide_ghosts(T* array, bool periodic_only = false) {
    for (int axis = 0; axis < p_.dims; ++axis) {
      if (periodic_only && !p_.periodic(axis)) continue;
      const int kind =
          static_cast<int>(p_.periodic(axis) ? BoundaryKind::periodic : BoundaryKind::neumann);
      cuda::launch_fill_ghosts<T>(array, main_.grid(), axis, cuda::GhostFace{kind, 0.0},
                                  cuda::GhostFace{kind, 0.0}, p_.h[axis], context_.stream);
    }
  }

  // A pass of depth_ steps from `step`; split (inner and between given): the nodes of `inner`,
  // between(), the ghosts filled again (between() may have written nodes they are formed
  // from), the nodes around `inner`; then the bands, from the field as between() left it.
  void blocked_pass(std::int64_t step, const FieldBox* inner = nullptr,
                    const std::function<void()>* between = nullptr) {
    fill_wide_ghosts(main_.cur());
    // The single steps' arguments with the pass's buffers; the pass reads the fields and
    // applies no face rules (the bands below take the faces).
    cuda::CoefficientArgs<T> a = main_.sweep_args();
    a.in = main_.cur();
    a.out = main_.next();
    a.rules = cuda::FaceRules{};
    a.factor = nullptr;
    cuda::PassFactors<T> factors;
    const auto& sources = p_.coefficients->sources;
    for (int j = 0; j < depth_; ++j) {
      const double tj = static_cast<double>(step + j) * p_.dt;
      for (int q = 0; q < a.sources; ++q)
        factors.step[j][q] =
            static_cast<T>(sources[static_cast<std::size_t>(q)].schedule.mean(tj, tj + p_.dt));
    }
    if (inner) {
      const cuda::DeviceGrid whole = a.grid;
      const auto sweep = [&](const FieldBox& box) {
        a.grid = cuda::box_grid(whole, box);
        cuda::launch_temporal_coefficient_sweep<T>(a, factors, depth_, context_);
      };
      if (inner->points() > 0) sweep(*inner);
      this->with_boxes_aside(*between);
      fill_wide_ghosts(main_.cur());
      for (const FieldBox& box : boxes_around(*inner)) sweep(box);
    } else {
      cuda::launch_temporal_coefficient_sweep<T>(a, factors, depth_, context_);
    }
    for (auto& band : bands_) {
      Band& b = *band;
      b.at.copy_in(main_.cur(), main_.grid(), b.slab.cur(), b.slab.grid(), context_.stream);
      b.slab.advance(depth_, step);
      b.at.copy_out(b.slab.cur(), b.slab.grid(), main_.next(), main_.grid(), context_.stream);
    }
    main_.swap();
    if (dirichlet_.count > 0) {
      cuda::DirichletFaces d = dirichlet_;
      const double t1 = static_cast<double>(step + depth_) * p_.dt;
      for (int f = 0; f < d.count; ++f) d.value[f] = p_.faces[2 * d.axis[f] + d.side[f]].at(t1);
      cuda::launch_set_dirichlet<T>(main_.cur(), main_.grid(), d, context_.stream);
    }
  }

  Capabilities caps_;
  StencilProblem p_;
  int depth_ = 1;
  cuda::LaunchContext context_;
  cuda::CoefficientStepper<T> main_;
  std::vector<std::unique_ptr<Band>> bands_;
  cuda::DeviceArray partials_;
  cuda::DirichletFaces dirichlet_;
};

// The backend `temporal-blocking` names: the constant-weight driver or the coefficient one,
// chosen by the problem at setup().
template <typename T>
class TemporalBlockingBackend final : public ForwardingBackend {
 public:
  std::string name() const override { return "temporal-blocking"; }
  Capabilities capabilities() const override { return BlockedKernel<T>{}.capabilities(); }
  std::string unsupported_reason(const StencilProblem& problem) const override {
    if (problem.coefficients)
      return BlockedCoefficientBackend<T>(coefficient_caps()).unsupported_reason(problem);
    return cuda::FusingBackend<T, BlockedKernel<T>>(BlockedKernel<T>{}).unsupported_reason(problem);
  }

  void setup(const StencilProblem& problem) override {
    forget();
    std::unique_ptr<Backend> inner;
    if (problem.coefficients)
      inner = std::make_unique<BlockedCoefficientBackend<T>>(coefficient_caps());
    else
      inner = std::make_unique<cuda::FusingBackend<T, BlockedKernel<T>>>(BlockedKernel<T>{});
    inner->setup(problem);
    choose(std::move(inner));
  }

 private:
  static Capabilities coefficient_caps() {
    Capabilities c = BlockedKernel<T>{}.capabilities();
    c.max_radius = 1;  // the conservative form's radius
    c.face_conductances = true;  // faces and surfaces inside the body: read per level, sliced
    return c;
  }

};

}  // namespace

std::unique_ptr<Backend> make_temporal_blocking_backend(Precision precision) {
  if (precision == Precision::fp32) return std::make_unique<TemporalBlockingBackend<float>>();
  return std::make_unique<TemporalBlockingBackend<double>>();
}

}  // namespace heatsim::kernels
