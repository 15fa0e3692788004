// The driver of a backend with exact temporal fusion: the field lives on the device in the
// padded layout of stencil_common.cuh with ghost layers as wide as the fused stencil, k =
// fusion depth steps are one pass of S^k, and the bands next to faces where a pass is not
// exact are redone step by step. The sweep itself is the Kernel's (convstencil's tensor-core
// MMAs, or a CUDA-core sweep at the fused radius; see the Kernel concept below).
//
// One fused pass from time t (k steps of dt):
//   1. fill the ghosts of every axis (width k*r) by boundary_rules.hpp's rules at time t;
//   2. sweep next <- S^k cur + c_k (c_k: fused_source);
//   3. for each face where S^k is not exact (face_is_exact_under_fusion): copy a slab of
//      2*k*r nodes along that face's axis out of cur, advance it k single steps with the real
//      boundary conditions on every face of the slab except its inner one, and copy its k*r
//      nodes next to the face into next. After k steps of radius r the inner face's made-up
//      ghosts have reached k*r nodes into the slab, so the outer k*r nodes are exact;
//   4. swap, then set the Dirichlet nodes to g(t + k*dt), as a single step does.
// Nodes farther than k*r from a face read no ghost of that face in the pass, so step 2 is
// exact for them whatever the face's rule. Steps that do not fill a whole pass (and grids
// too small for k*r ghosts) run as single steps, the same kernel with S.
//
// Kernel concept (a value type, copied into the backend):
//   using Plan;                                   the uploaded form of one stencil
//   std::string name() const; Capabilities capabilities() const;
//   void prepare(Plan&, const Stencil&) const;    plan and upload (S, or S^k)
//   std::int64_t slack(const Plan&) const;        elements a buffer needs past DeviceGrid::total
//   void sweep(const Plan&, const T* in, T* out, const DeviceGrid&, double source,
//              int multiprocessors, cudaStream_t) const;
//   int auto_depth(const StencilProblem&) const;  the depth `fusion: auto` asks for
//   bool takes_radius(const StencilProblem&, int radius, int shared_limit) const;
// A Kernel that takes the k steps of a pass one by one inside its sweep (temporal blocking)
// also declares
//   static constexpr bool kBlocksSteps = true;
//   void prepare_steps(Plan&, const Stencil& S, int k) const;  its fused plan: S, k steps
// and its fused sweep is given the source of one step: the pass reads and writes the same
// ghost layers (width k*r, filled once) and bands as a sweep of S^k, so it is exact where
// S^k is.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../boundary_rules.hpp"
#include "box_transfer.cuh"
#include "check.cuh"
#include "convstencil/fusion_plan.hpp"
#include "device_field_backend.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"

namespace heatsim::kernels::cuda {

template <typename Kernel, typename = void>
struct BlocksSteps : std::false_type {};
template <typename Kernel>
struct BlocksSteps<Kernel, std::void_t<decltype(Kernel::kBlocksSteps)>>
    : std::bool_constant<Kernel::kBlocksSteps> {};
template <typename Kernel>
constexpr bool blocks_steps() {
  return BlocksSteps<Kernel>::value;
}
// Whether a Kernel's sweep takes any box of the grid (box_grid): `static constexpr bool
// kSweepsBoxes = true`, which split passes (advance_around) need.
template <typename Kernel, typename = void>
struct SweepsBoxes : std::false_type {};
template <typename Kernel>
struct SweepsBoxes<Kernel, std::void_t<decltype(Kernel::kSweepsBoxes)>>
    : std::bool_constant<Kernel::kSweepsBoxes> {};

// A field on the device: its layout, faces and the two buffers of a step.
template <typename T>
struct DeviceField {
  DeviceGrid grid;
  std::array<BoundaryFace, kFaces> faces{};
  std::array<double, kMaxDims> h{1.0, 1.0, 1.0};
  DeviceArray cur, next;

  void allocate(std::int64_t slack) {
    const std::size_t bytes = static_cast<std::size_t>(grid.total + slack) * sizeof(T);
    cur.allocate(bytes);
    next.allocate(bytes);
    // Zero, not NaN: convstencil tiles read the alignment pads and the slack as dirty bits,
    // which meet only zero weights, and 0 * NaN would not be 0.
    HEATSIM_CUDA_CHECK(cudaMemset(cur.as<void>(), 0, bytes));
    HEATSIM_CUDA_CHECK(cudaMemset(next.as<void>(), 0, bytes));
  }
};

// Copies a box of nodes between two padded fields (copy_box, fusing_backend.cu).
template <typename T>
void copy_box(const T* src, const DeviceGrid& gs, const std::array<std::int64_t, 3>& s0, T* dst,
              const DeviceGrid& gd, const std::array<std::int64_t, 3>& d0,
              const std::array<std::int64_t, 3>& extent, cudaStream_t stream);

// Where a pass of k steps is not exact next to a face: the slab of `width` nodes along `axis`
// at the face `side` is copied out of the field before the pass, stepped k times on its own
// with the real faces (its inner face a made-up du/dn = 0 one: its ghosts only need to be
// finite), and its outer `exact` nodes (k times the radius: the made-up face's reach stops short
// of them) replace the pass's. A slab that is the whole axis is exact throughout. Shared by
// the fused passes here and temporal-blocking's coefficient passes.
struct BandGeometry {
  int axis = 0;
  int side = 0;
  std::int64_t n = 0;      // the field's nodes along the axis
  std::int64_t width = 0;  // slab nodes along the axis: min(n, 2 * exact)
  std::int64_t exact = 0;  // the outer nodes the slab's steps leave exact

  static BandGeometry at(const StencilProblem& p, int axis, int side, std::int64_t exact) {
    BandGeometry b;
    b.axis = axis;
    b.side = side;
    b.n = p.n[axis];
    b.exact = exact;
    b.width = std::min<std::int64_t>(b.n, 2 * exact);
    return b;
  }

  // The problem the slab is stepped as (its coefficient fields, if any, are the caller's to
  // slice).
  StencilProblem slab_problem(const StencilProblem& p) const {
    StencilProblem slab = p;
    slab.n[axis] = width;
    if (width < n) {
      BoundaryFace& inner = slab.faces[2 * axis + (1 - side)];
      inner = BoundaryFace{};
      inner.kind = BoundaryKind::neumann;
    }
    return slab;
  }

  // The slab's first node along the axis in the field.
  std::int64_t origin() const { return side == 0 ? 0 : n - width; }

  // The slab out of `field` (layout g) into `slab` (layout gs).
  template <typename T>
  void copy_in(const T* field, const DeviceGrid& g, T* slab, const DeviceGrid& gs,
               cudaStream_t stream) const {
    std::array<std::int64_t, 3> extent{g.n[0], g.n[1], g.n[2]}, from{0, 0, 0}, zero{0, 0, 0};
    from[axis] = origin();
    extent[axis] = width;
    copy_box<T>(field, g, from, slab, gs, zero, extent, stream);
  }

  // The slab's exact nodes back into `field`.
  template <typename T>
  void copy_out(const T* slab, const DeviceGrid& gs, T* field, const DeviceGrid& g,
                cudaStream_t stream) const {
    std::array<std::int64_t, 3> extent{g.n[0], g.n[1], g.n[2]}, from{0, 0, 0}, to{0, 0, 0};
    if (width == n) {  // the whole axis
      extent[axis] = width;
    } else {
      extent[axis] = exact;
      from[axis] = side == 0 ? 0 : width - exact;
      to[axis] = side == 0 ? 0 : n - exact;
    }
    copy_box<T>(slab, gs, from, field, g, to, extent, stream);
  }
};

// A band of the fused passes: its geometry and its slab's field.
template <typename T>
struct Band {
  BandGeometry at;
  DeviceField<T> slab;
};

template <typename T, typename Kernel>
class FusingBackend final : public DeviceFieldBackend<T> {
  using Field = DeviceField<T>;

 public:
  explicit FusingBackend(Kernel kernel) : kernel_(std::move(kernel)) {}

  std::string name() const override { return kernel_.name(); }

  int fusion_depth() const override { return depth_; }

  Capabilities capabilities() const override { return kernel_.capabilities(); }

  // S^k and its fused weights exist only for one constant stencil: varying coefficients (and
  // the faces that need them) are refused, with the reason.
  std::string unsupported_reason(const StencilProblem& problem) const override {
    if (problem.coefficients)
      return "varying coefficients (materials, source fields) have no constant weights, and " +
             name() + " applies one constant stencil (its fused S^k) by construction";
    for (int f = 0; f < 2 * problem.dims; ++f)
      if (needs_coefficients(problem.faces[f]))
        return std::string("a ") + (problem.faces[f].heat_flux ? "heat-flux" : "convective") +
               " face needs the coefficient fields, which " + name() +
               " cannot take (constant weights by construction)";
    return Backend::unsupported_reason(problem);
  }

  void setup(const StencilProblem& problem) override {
    this->not_ready();
    const std::string why = unsupported_reason(problem);
    if (!why.empty()) throw std::runtime_error(name() + " backend: " + why);
    if (problem.stencil.weights.size() != problem.stencil.size())
      throw std::invalid_argument(name() + " backend: stencil has " +
                                  std::to_string(problem.stencil.weights.size()) +
                                  " weights, expected " + std::to_string(problem.stencil.size()));
    p_ = problem;
    int device = 0;
    HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
    HEATSIM_CUDA_CHECK(
        cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device));
    HEATSIM_CUDA_CHECK(
        cudaDeviceGetAttribute(&shared_limit_, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));

    const int r = problem.stencil.radius;
    kernel_.prepare(single_, problem.stencil);
    depth_ = effective_depth(problem);
    if (depth_ > 1) {
      if constexpr (blocks_steps<Kernel>()) {  // k single steps per sweep: S and k, c per step
        kernel_.prepare_steps(fused_, problem.stencil, depth_);
        fused_source_ = problem.source_increment;
      } else {
        kernel_.prepare(fused_, convstencil::fuse_stencil(problem.stencil, depth_));
        fused_source_ =
            convstencil::fused_source(problem.stencil, problem.source_increment, depth_);
      }
    }
    const int ghost = depth_ * r;
    std::int64_t slack = kernel_.slack(single_);
    if (depth_ > 1) slack = std::max(slack, kernel_.slack(fused_));

    main_.grid = cuda::make_device_grid(problem, ghost, sizeof(T));
    main_.faces = problem.faces;
    main_.h = problem.h;
    main_.allocate(slack);
    partials_.allocate(cuda::kStatsMaxBlocks * sizeof(cuda::StatsPartial));

    bands_.clear();
    if (depth_ > 1)
      for (int axis = 0; axis < problem.dims; ++axis)
        for (int side = 0; side < 2; ++side) {
          if (convstencil::face_is_exact_under_fusion(problem, 2 * axis + side)) continue;
          auto band = std::make_unique<Band<T>>();
          Band<T>& b = *band;
          b.at = BandGeometry::at(problem, axis, side, ghost);
          const StencilProblem slab = b.at.slab_problem(problem);
          b.slab.grid = cuda::make_device_grid(slab, r, sizeof(T));
          b.slab.faces = slab.faces;
          b.slab.h = problem.h;
          b.slab.allocate(kernel_.slack(single_));
          bands_.push_back(std::move(band));
        }
    this->ready(problem.points());
  }

  // After an upload the next advance asks whether the Dirichlet nodes hold g (a box write, the
  // base's write_box, does not: a decomposed run writes its overlaps between passes, and the
  // passes must stay the serial run's).
  void upload(const std::vector<double>& field) override {
    DeviceFieldBackend<T>::upload(field);
    uploaded();
  }

  void upload_from(const HostField& field) override {
    DeviceFieldBackend<T>::upload_from(field);
    uploaded();
  }

  // The odd reflection about g reproduces itself only when the Dirichlet nodes hold g; an
  // uploaded field need not (an initial condition), so then the first step after the upload
  // is a single one. A field that does (a checkpoint, or any field the solver set up) goes
  // straight on, so a restarted run takes the same passes as an uninterrupted one. The nodes
  // are read from the device when the answer is first needed: a decomposed run's overlaps hold
  // their neighbours' values by then.
  bool first_step_single(std::int64_t step0) override {
    this->check_ready("first_step_single()");
    if (check_nodes_at_next_advance_) {
      first_step_single_ =
          depth_ > 1 && !dirichlet_nodes_hold_g(static_cast<double>(step0) * p_.dt);
      check_nodes_at_next_advance_ = false;
    }
    return first_step_single_;
  }

  void set_first_step_single(bool single) override {
    check_nodes_at_next_advance_ = false;
    first_step_single_ = single;
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    this->check_ready("advance()");
    if (steps <= 0) return;
    std::int64_t s = 0;
    // A step or pass followed by another fills the next one's ghosts with its Dirichlet nodes.
    bool ghosts_filled = false;
    const auto step = [&] {
      const bool another = s + 1 < steps;
      single_step(main_, step0 + s, ghosts_filled, another);
      ghosts_filled = another;
      ++s;
    };
    if (first_step_single(step0)) step();
    first_step_single_ = false;
    // Fused passes start on multiples of the depth (absolute step numbers), so the passes a
    // run takes, and so its rounding, do not depend on how the caller splits it into calls.
    if (depth_ > 1) {
      while (s < steps && (step0 + s) % depth_ != 0) step();
      for (; steps - s >= depth_; s += depth_) {
        const bool another = steps - s > depth_;
        fused_pass(step0 + s, nullptr, nullptr, ghosts_filled, another);
        ghosts_filled = another;
      }
    }
    while (s < steps) step();
  }

  // One pass split around `inner` (a fused pass, or one step at depth 1), where the Kernel
  // sweeps boxes and the pass is one whole pass from a pass boundary with no single step
  // pending.
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    this->check_ready("advance_around()");
    if (!SweepsBoxes<Kernel>::value || steps != depth_ || step0 % depth_ != 0 ||
        first_step_single(step0))
      return false;
    if (depth_ == 1) {
      const double t = static_cast<double>(step0) * p_.dt;
      fill_ghosts(main_, t);
      sweep_split(single_, p_.source_increment, t, inner, between);
      main_.cur.swap(main_.next);
      finish_pass(main_, static_cast<double>(step0 + 1) * p_.dt, false);
    } else {
      fused_pass(step0, &inner, &between);
    }
    return true;
  }

  FieldStats stats() override {
    this->check_ready("stats()");
    return cuda::device_field_stats<T>(main_.cur.template as<T>(), main_.grid, p_,
                                       partials_.as<cuda::StatsPartial>(), multiprocessors_,
                                       stream_);
  }

 private:
  typename DeviceFieldBackend<T>::FieldNow field_now() override {
    return {main_.cur.template as<T>(), main_.grid, stream_};
  }

 private:
  // The fusion depth actually used: the requested one (fusion_depth 0, `fusion: auto`: the
  // kernel's choice for the shape), lowered until the kernel takes the fused radius and
  // every axis is longer than the ghost width (the reflections must land on interior nodes).
  int effective_depth(const StencilProblem& p) const {
    const int r = p.stencil.radius;
    int k = p.fusion_depth == 0 ? kernel_.auto_depth(p) : std::max(1, p.fusion_depth);
    auto fits = [&](int depth) {
      const int radius = depth * r;
      for (int a = 0; a < p.dims; ++a)
        if (radius > p.n[a] - 1) return false;
      return kernel_.takes_radius(p, radius, shared_limit_);
    };
    while (k > 1 && !fits(k)) --k;
    return k;
  }

  void fill_ghosts(Field& f, double t) {
    for (int axis = 0; axis < p_.dims; ++axis) {
      const BoundaryFace& lo = f.faces[2 * axis];
      const BoundaryFace& hi = f.faces[2 * axis + 1];
      cuda::launch_fill_ghosts<T>(f.cur.template as<T>(), f.grid, axis,
                                  cuda::GhostFace{static_cast<int>(lo.kind), lo.at(t)},
                                  cuda::GhostFace{static_cast<int>(hi.kind), hi.at(t)}, f.h[axis],
                                  stream_);
    }
  }

  // Every Dirichlet face in one launch: where faces meet (edges, corners) the last face in the
  // CPU's order owns the node, as on the CPU, which sets the faces one after another (one
  // launch per face cost 15-35 us each at 512^3, 130 us per pass with six faces).
  void set_dirichlet(Field& f, double t) {
    cuda::DirichletFaces d;
    for (int axis = 0; axis < p_.dims; ++axis)
      for (int side = 0; side < 2; ++side) {
        const BoundaryFace& face = f.faces[2 * axis + side];
        if (face.kind != BoundaryKind::dirichlet) continue;
        d.axis[d.count] = axis;
        d.side[d.count] = side;
        d.value[d.count] = face.at(t);
        ++d.count;
      }
    cuda::launch_set_dirichlet<T>(f.cur.template as<T>(), f.grid, d, stream_);
  }

  // The Dirichlet nodes at t and, when `fill`, the ghosts at t (the next pass's): one launch
  // where the boundary pass takes the grid (its row ends fit a warp), which writes what
  // set_dirichlet() then fill_ghosts() would (at 512^3 fp64, depth 4, those took 79 us and
  // 43 us a pass, the Dirichlet launch writing one node per row of its x faces).
  void finish_pass(Field& f, double t, bool fill) {
    if (fill && cuda::boundary_pass_fills(f.grid, sizeof(T))) {
      cuda::launch_boundary_pass<T>(f.cur.template as<T>(), f.grid,
                                    cuda::boundary_faces_at(f.faces, f.h, t), true, true, stream_);
      return;
    }
    set_dirichlet(f, t);
    if (fill) fill_ghosts(f, t);
  }

  // One step of S, exactly as the CPU reference takes it. `ghosts_filled`: the step or pass
  // before filled this one's ghosts; `fill_next`: this step fills the next one's (with its
  // Dirichlet nodes, one launch: at 512^3 fp64 the separate launches cost Heat-3D's single
  // steps a sixth of their rate).
  void single_step(Field& f, std::int64_t step, bool ghosts_filled = false,
                   bool fill_next = false) {
    if (!ghosts_filled) fill_ghosts(f, static_cast<double>(step) * p_.dt);
    kernel_.sweep(single_, f.cur.template as<T>(), f.next.template as<T>(), f.grid,
                  p_.source_increment, multiprocessors_, stream_);
    f.cur.swap(f.next);
    finish_pass(f, static_cast<double>(step + 1) * p_.dt, fill_next);
  }

  // The main field's sweep of a pass (plan, source) into next, split around `inner`: the
  // nodes of `inner`, between() with the boxes on their own stream, the ghosts at t filled
  // again (between() may have written nodes they are formed from), the nodes around `inner`.
  // The ghosts at t are filled before.
  void sweep_split(const typename Kernel::Plan& plan, double source, double t,
                   const FieldBox& inner, const std::function<void()>& between) {
    const auto sweep = [&](const DeviceGrid& grid) {
      kernel_.sweep(plan, main_.cur.template as<T>(), main_.next.template as<T>(), grid, source,
                    multiprocessors_, stream_);
    };
    if (inner.points() > 0) sweep(box_grid(main_.grid, inner));
    this->with_boxes_aside(between);
    fill_ghosts(main_, t);
    for (const FieldBox& box : boxes_around(inner)) sweep(box_grid(main_.grid, box));
  }

  // A pass from `step`; split (inner and between given): the nodes of `inner`, between()
  // with the boxes on their own stream, the ghosts filled again (between() may have written
  // nodes they are formed from), the nodes around `inner`, then the bands from the field as
  // between() left it. `ghosts_filled`: the previous pass filled this one's ghosts;
  // `fill_next`: this pass fills the next one's.
  void fused_pass(std::int64_t step, const FieldBox* inner = nullptr,
                  const std::function<void()>* between = nullptr, bool ghosts_filled = false,
                  bool fill_next = false) {
    const double t = static_cast<double>(step) * p_.dt;
    if (!ghosts_filled) fill_ghosts(main_, t);
    if (inner)
      sweep_split(fused_, fused_source_, t, *inner, *between);
    else
      kernel_.sweep(fused_, main_.cur.template as<T>(), main_.next.template as<T>(), main_.grid,
                    fused_source_, multiprocessors_, stream_);
    for (auto& band : bands_) {
      Band<T>& b = *band;
      b.at.copy_in(main_.cur.template as<T>(), main_.grid, b.slab.cur.template as<T>(), b.slab.grid,
                   stream_);
      for (int j = 0; j < depth_; ++j) single_step(b.slab, step + j);
      b.at.copy_out(b.slab.cur.template as<T>(), b.slab.grid, main_.next.template as<T>(),
                    main_.grid, stream_);
    }
    main_.cur.swap(main_.next);
    finish_pass(main_, static_cast<double>(step + depth_) * p_.dt, fill_next);
  }

  Kernel kernel_;
  StencilProblem p_;
  int depth_ = 1;
  double fused_source_ = 0.0;
  int multiprocessors_ = 1;
  int shared_limit_ = 48 * 1024;
  cudaStream_t stream_ = nullptr;  // the legacy default stream, like the other CUDA backends
  typename Kernel::Plan single_, fused_;
  Field main_;
  std::vector<std::unique_ptr<Band<T>>> bands_;
  DeviceArray partials_;
  bool first_step_single_ = false;
  bool check_nodes_at_next_advance_ = false;

  void uploaded() {
    first_step_single_ = false;
    check_nodes_at_next_advance_ = true;
  }

  // Whether every node of every Dirichlet face of the grid (placeholders aside) holds g(t), as
  // the device holds them (T): an fp32 field holds g when its nodes hold g rounded.
  bool dirichlet_nodes_hold_g(double t) {
    std::vector<double> nodes;
    for (int axis = 0; axis < p_.dims; ++axis)
      for (int side = 0; side < 2; ++side) {
        const int f = 2 * axis + side;
        if (p_.faces[f].kind != BoundaryKind::dirichlet || p_.placeholder[f]) continue;
        FieldBox face;
        face.grid = p_.n;
        face.extent = p_.n;
        face.extent[axis] = 1;
        face.lo[axis] = side == 0 ? 0 : p_.n[axis] - 1;
        Backend::read_box(face, nodes);
        const double g = static_cast<double>(static_cast<T>(p_.faces[f].at(t)));
        for (double v : nodes)
          if (v != g) return false;
      }
    return true;
  }
};

}  // namespace heatsim::kernels::cuda
