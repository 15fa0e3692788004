// The varying-coefficient driver of coefficient_backend.cuh.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../boundary_rules.hpp"
#include "box_transfer.cuh"
#include "check.cuh"
#include "coefficient_backend.cuh"
#include "coefficient_fields.cuh"
#include "device_field_backend.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"
#include "persistent_steps.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
void CoefficientStepper<T>::setup(const StencilProblem& problem, CoefficientLauncher<T> sweep,
                                  int ghost, const LaunchContext& context,
                                  const Capabilities& caps) {
  p_ = problem;
  sweep_ = sweep;
  context_ = context;
  grid_ = make_device_grid(problem, ghost, sizeof(T));
  const std::size_t bytes = static_cast<std::size_t>(grid_.total) * sizeof(T);
  cur_.allocate(bytes);
  next_.allocate(bytes);
  // NaN everywhere (all-ones bytes): a node or ghost no kernel writes shows up.
  HEATSIM_CUDA_CHECK(cudaMemset(cur_.as<void>(), 0xff, bytes));
  HEATSIM_CUDA_CHECK(cudaMemset(next_.as<void>(), 0xff, bytes));
  fields_.upload(problem, grid_, caps);
  temperature_.upload(problem, grid_);

  // The boundary pass fills every ghost layer, and takes only a few; wider layouts (a blocked
  // backend's) take the coefficient ghost fill, which writes the first layer, all a step reads.
  faces_need_k_ = ghost > 1;
  for (int f = 0; f < 2 * problem.dims; ++f)
    faces_need_k_ = faces_need_k_ || needs_coefficients(problem.faces[f]);
  factors_.setup(kStepRun, kMaxSourceFields);
  graphs_.clear();
  // What a step launches is the same at every step when nothing depends on temperature and
  // the faces' values are constant: only the sources' factors change, and they are staged.
  const bool no_temperature =
      !temperature_.varying_k && !temperature_.varying_c && temperature_.radiation_groups == 0;
  bool faces_constant = true;
  for (int f = 0; f < 2 * problem.dims; ++f)
    faces_constant = faces_constant && !problem.faces[f].time_dependent();
  // A graph replays its launches' arguments.
  graphs_ok_ = no_temperature && faces_constant && environment_switch("HEATSIM_CUDA_GRAPHS") != 0;
  // The rules in the sweep: at most kRulesMaxPoints nodes unless HEATSIM_CUDA_FACE_RULES says.
  const int rules = environment_switch("HEATSIM_CUDA_FACE_RULES");
  rules_in_sweep_ = ghost == 1 && no_temperature &&
                    (rules < 0 ? problem.points() <= kRulesMaxPoints : rules == 1);
  for (int a = 0; a < problem.dims; ++a) rules_in_sweep_ = rules_in_sweep_ && !problem.periodic(a);
  // Small grids whose steps are alike step whole runs in one cooperative launch.
  persistent_ok_ = rules_in_sweep_ && faces_constant &&
                   environment_switch("HEATSIM_CUDA_PERSISTENT") != 0;
  dirichlet_ = DirichletFaces{};
  for (int f = 0; f < 2 * problem.dims; ++f)
    if (problem.faces[f].kind == BoundaryKind::dirichlet) {
      dirichlet_.axis[dirichlet_.count] = f / 2;
      dirichlet_.side[dirichlet_.count] = f % 2;
      ++dirichlet_.count;
    }
  // Faces that a step never changes (every face Dirichlet at a constant value, nothing
  // depending on temperature, one ghost layer): a step reads the Dirichlet nodes, which both
  // buffers then hold at g, and no ghost, so the general steps sweep only the nodes inside
  // the Dirichlet nodes (`inside_`) with no boundary pass between them.
  fixed_faces_ = ghost == 1 && !faces_need_k_ && no_temperature && faces_constant &&
                 dirichlet_.count == 2 * problem.dims;
  inside_ = FieldBox{};
  for (int a = 0; a < problem.dims; ++a) {
    inside_.grid[a] = problem.n[a];
    inside_.lo[a] = 1;
    inside_.extent[a] = std::max<std::int64_t>(problem.n[a] - 2, 0);
  }
  // Between fixed faces the steps sweep the box inside them: the uniform tiles over it.
  if (fixed_faces_ && inside_.points() > 0) fields_.form_tiles(box_grid(grid_, inside_));
}

template <typename T>
CoefficientArgs<T> CoefficientStepper<T>::sweep_args() {
  CoefficientArgs<T> a;
  a.grid = grid_;
  a.conductivity = fields_.conductivity.template as<T>();
  fields_.face_pointers(a.faces);
  fields_.class_pointers(a.node_class, a.class_table, a.host_class_table, a.host_class_transfer,
                         a.classes);
  fields_.face_class_pointers(a.face_class, a.face_classes, a.packed_class);
  fields_.tile_pointers(a.uniform_tile, a.tile_grid);
  a.transfer = fields_.has_transfer ? fields_.transfer.template as<T>() : nullptr;
  a.dt_over_capacity = fields_.dt_over_capacity.template as<T>();
  a.sources = fields_.sources;
  for (int s = 0; s < fields_.sources; ++s) a.source[s] = fields_.source[s].template as<T>();
  for (int axis = 0; axis < 3; ++axis)
    a.inv_h2[axis] = static_cast<T>(1.0 / (p_.h[axis] * p_.h[axis]));
  return a;
}

template <typename T>
void CoefficientStepper<T>::advance(std::int64_t steps, std::int64_t step0) {
  const auto& sources = p_.coefficients->sources;
  while (steps > 0) {
    const int run = static_cast<int>(std::min<std::int64_t>(steps, kStepRun));
    const std::int64_t first = step0;
    // Without sources the sweeps read no factor: nothing to stage.
    const T* factors = sources.empty() ? factors_.device()
                                       : factors_.stage(run, context_.stream, [&](int r, T* row) {
                                           factor_row(first + r, row);
                                         });
    if (persistent_ok_ && persistent_run(run, step0, factors)) {
      // stepped in one cooperative launch
    } else if (graphs_ok_ && run >= kGraphMinSteps) {
      T* const start = cur();
      graphs_.run(run, start, context_.stream, [&](cudaStream_t capture) {
        launch_steps(run, step0, factors, capture);
        if (cur() != start) swap();  // capturing swapped the buffers as the steps will
      });
      if (run % 2 == 1) swap();
    } else {
      launch_steps(run, step0, factors, context_.stream);
    }
    steps -= run;
    step0 += run;
  }
}

template <typename T>
bool CoefficientStepper<T>::persistent_run(int steps, std::int64_t step0, const T* factors) {
  CoefficientArgs<T> a = sweep_args();
  const double t = static_cast<double>(step0) * p_.dt;  // the faces are constant in time
  a.rules = face_rules_at(p_, t);
  a.factor = factors;
  a.in = cur();
  a.out = next();
  DirichletFaces d = dirichlet_;
  for (int f = 0; f < d.count; ++f) d.value[f] = p_.faces[2 * d.axis[f] + d.side[f]].at(t);
  if (!launch_persistent_steps<T>(a, p_.dims, steps, d, context_.stream)) {
    persistent_ok_ = false;  // no cooperative launch on this device
    return false;
  }
  if (steps % 2 == 1) swap();
  return true;
}

template <typename T>
void CoefficientStepper<T>::factor_row(std::int64_t step, T* row) const {
  const auto& sources = p_.coefficients->sources;
  const double t = static_cast<double>(step) * p_.dt;
  for (int q = 0; q < kMaxSourceFields; ++q)
    row[q] = q < static_cast<int>(sources.size())
                 ? static_cast<T>(sources[static_cast<std::size_t>(q)].schedule.mean(t, t + p_.dt))
                 : T(0);
}

template <typename T>
void CoefficientStepper<T>::launch_steps(int steps, std::int64_t step0, const T* factors,
                                         cudaStream_t stream) {
  CoefficientArgs<T> a = sweep_args();
  LaunchContext context = context_;
  context.stream = stream;
  if (rules_in_sweep_) {
    for (int s = 0; s < steps; ++s) {
      const double t = static_cast<double>(step0 + s) * p_.dt;
      a.rules = face_rules_at(p_, t);
      a.factor = factors + static_cast<std::size_t>(s) * kMaxSourceFields;
      a.in = cur();
      a.out = next();
      sweep_(a, p_.dims, context);
      swap();
      if (dirichlet_.count > 0) set_dirichlet(step0 + s + 1, stream);
    }
    return;
  }
  if (!faces_need_k_) boundary_pass(step0, false, true, stream);
  if (fixed_faces_) {
    // The Dirichlet nodes at g in the buffer each of the first two steps writes (the field
    // given may hold others there, which its first step reads as the CPU's does).
    const auto dirichlet_of_next = [&](std::int64_t step) {
      const BoundaryFaces f = boundary_faces_at(p_, static_cast<double>(step) * p_.dt);
      launch_boundary_pass<T>(next(), grid_, f, true, false, stream);
    };
    dirichlet_of_next(step0 + 1);
    a.grid = box_grid(grid_, inside_);
    for (int s = 0; s < steps; ++s) {
      a.factor = factors + static_cast<std::size_t>(s) * kMaxSourceFields;
      a.in = cur();
      a.out = next();
      if (inside_.points() > 0) sweep_(a, p_.dims, context);
      swap();
      if (s == 0 && steps > 1) dirichlet_of_next(step0 + 2);
    }
    return;
  }
  T* faces[3] = {nullptr, nullptr, nullptr};
  bool periodic[3] = {false, false, false};
  for (int a = 0; a < p_.dims; ++a) {
    faces[a] = fields_.has_faces ? fields_.faces[a].template as<T>() : nullptr;
    periodic[a] = p_.periodic(a);
  }
  for (int s = 0; s < steps; ++s) {
    const double t = static_cast<double>(step0 + s) * p_.dt;
    // Temperature-dependent conductivities: the faces from the field at the step's start.
    if (temperature_.varying_k)
      launch_update_faces<T>(cur(), faces, temperature_, grid_, periodic, stream);
    if (faces_need_k_)
      launch_coefficient_ghosts<T>(cur(), a.conductivity, fields_.has_faces ? a.faces : nullptr,
                                   grid_, coefficient_faces_at(p_, t), stream);
    a.factor = factors + static_cast<std::size_t>(s) * kMaxSourceFields;
    a.in = cur();
    a.out = next();
    sweep_(a, p_.dims, context);
    if (temperature_.radiation_groups > 0) {
      double ambient4[kMaxRadiationGroups] = {};
      for (int q = 0; q < temperature_.radiation_groups; ++q) {
        const double amb = p_.coefficients->radiation[static_cast<std::size_t>(q)].ambient.at(t);
        ambient4[q] = amb * amb * amb * amb;
      }
      launch_surface_radiation<T>(cur(), next(), a.dt_over_capacity, temperature_, ambient4,
                                  grid_, stream);
    }
    if (temperature_.varying_c) launch_enthalpy_step<T>(cur(), next(), temperature_, grid_, stream);
    swap();
    if (!faces_need_k_) {
      // Dirichlet nodes at t + dt and, unless this was the last step, the next step's ghosts.
      const bool last = s + 1 == steps;
      if (dirichlet_.count > 0 || !last)
        boundary_pass(step0 + s + 1, dirichlet_.count > 0, !last, stream);
    } else if (dirichlet_.count > 0) {
      set_dirichlet(step0 + s + 1, stream);
    }
  }
}

template <typename T>
void CoefficientStepper<T>::step_around(std::int64_t step0, const FieldBox& inner,
                                        const std::function<void()>& between) {
  const cudaStream_t stream = context_.stream;
  const double t = static_cast<double>(step0) * p_.dt;
  CoefficientArgs<T> a = sweep_args();
  a.factor = p_.coefficients->sources.empty()
                 ? factors_.device()
                 : factors_.stage(1, stream, [&](int, T* row) { factor_row(step0, row); });
  a.in = cur();
  a.out = next();
  const FaceRules rules = rules_in_sweep_ ? face_rules_at(p_, t) : FaceRules{};
  const auto sweep = [&](const FieldBox& box) {
    if (box.points() == 0) return;
    CoefficientArgs<T> part = a;
    part.grid = box_grid(grid_, box);
    part.rules = rules;
    for (int axis = 0; axis < p_.dims; ++axis) {  // a side of the box inside the grid: no face
      if (box.lo[axis] != 0) part.rules.apply[2 * axis] = false;
      if (box.lo[axis] + box.extent[axis] != p_.n[axis]) part.rules.apply[2 * axis + 1] = false;
    }
    sweep_(part, p_.dims, context_);
  };
  T* faces[3] = {nullptr, nullptr, nullptr};
  bool periodic[3] = {false, false, false};
  for (int axis = 0; axis < p_.dims; ++axis) {
    faces[axis] = fields_.has_faces ? fields_.faces[axis].template as<T>() : nullptr;
    periodic[axis] = p_.periodic(axis);
  }
  const auto prepare = [&] {  // launch_steps' launches before a sweep
    if (rules_in_sweep_) return;
    if (!faces_need_k_) boundary_pass(step0, false, true, stream);
    if (temperature_.varying_k)
      launch_update_faces<T>(cur(), faces, temperature_, grid_, periodic, stream);
    if (faces_need_k_)
      launch_coefficient_ghosts<T>(cur(), a.conductivity, fields_.has_faces ? a.faces : nullptr,
                                   grid_, coefficient_faces_at(p_, t), stream);
  };
  prepare();
  sweep(inner);
  between();
  prepare();
  for (const FieldBox& box : boxes_around(inner)) sweep(box);
  // launch_steps' launches after a sweep, for a last step.
  if (temperature_.radiation_groups > 0) {
    double ambient4[kMaxRadiationGroups] = {};
    for (int q = 0; q < temperature_.radiation_groups; ++q) {
      const double amb = p_.coefficients->radiation[static_cast<std::size_t>(q)].ambient.at(t);
      ambient4[q] = amb * amb * amb * amb;
    }
    launch_surface_radiation<T>(cur(), next(), a.dt_over_capacity, temperature_, ambient4, grid_,
                                stream);
  }
  if (temperature_.varying_c) launch_enthalpy_step<T>(cur(), next(), temperature_, grid_, stream);
  swap();
  if (dirichlet_.count == 0) return;
  if (!rules_in_sweep_ && !faces_need_k_)
    boundary_pass(step0 + 1, true, false, stream);
  else
    set_dirichlet(step0 + 1, stream);
}

template <typename T>
void CoefficientStepper<T>::set_dirichlet(std::int64_t step, cudaStream_t stream) {
  DirichletFaces d = dirichlet_;
  const double t = static_cast<double>(step) * p_.dt;
  for (int f = 0; f < d.count; ++f) d.value[f] = p_.faces[2 * d.axis[f] + d.side[f]].at(t);
  launch_set_dirichlet<T>(cur(), grid_, d, stream);
}

// Faces without K_bm (Dirichlet, Neumann du/dn, periodic) have the constant-weight ghost rules
// at width 1, so the driver's one boundary pass between sweeps does them: the Dirichlet nodes of
// one step and the ghosts of the next in one launch (field_kernels.cuh).
template <typename T>
void CoefficientStepper<T>::boundary_pass(std::int64_t step, bool set_dirichlet, bool fill_ghosts,
                                          cudaStream_t stream) {
  const BoundaryFaces f = boundary_faces_at(p_, static_cast<double>(step) * p_.dt);
  launch_boundary_pass<T>(cur(), grid_, f, set_dirichlet, fill_ghosts, stream);
}

template <typename T>
FieldStats coefficient_field_stats(CoefficientStepper<T>& field, DeviceArray& partials,
                                   const LaunchContext& context) {
  const StencilProblem& p = field.problem();
  FieldStats st = device_field_stats<T>(field.cur(), field.grid(), p, partials.as<StatsPartial>(),
                                        context.multiprocessors, context.stream,
                                        field.fields().capacity.template as<double>());
  // Laws of varying capacity hold C_ref h(u): their heat content on the host.
  if (field.temperature().varying_c) st.total_heat = enthalpy_content(field.cur(), p, field.grid());
  return st;
}

template class CoefficientStepper<float>;
template class CoefficientStepper<double>;
template FieldStats coefficient_field_stats<float>(CoefficientStepper<float>&, DeviceArray&,
                                                   const LaunchContext&);
template FieldStats coefficient_field_stats<double>(CoefficientStepper<double>&, DeviceArray&,
                                                    const LaunchContext&);

namespace {

template <typename T>
class CoefficientBackend final : public DeviceFieldBackend<T> {
 public:
  CoefficientBackend(std::string name, Capabilities caps, CoefficientLauncher<T> sweep)
      : name_(std::move(name)), caps_(caps), sweep_(sweep) {
    caps_.gpu = true;
    caps_.max_fusion_depth = 1;
  }

  std::string name() const override { return name_; }
  Capabilities capabilities() const override { return caps_; }
  std::string unsupported_reason(const StencilProblem& problem) const override {
    return coefficient_unsupported_reason(caps_, problem);
  }
  double bytes_per_point_step() const override {
    return field_.fields().compact_bytes_per_point(field_.problem().dims);
  }

  void setup(const StencilProblem& problem) override {
    const std::string why = unsupported_reason(problem);
    this->not_ready();
    if (!why.empty()) throw std::runtime_error(name_ + " backend: " + why);
    int device = 0;
    HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
    HEATSIM_CUDA_CHECK(
        cudaDeviceGetAttribute(&context_.multiprocessors, cudaDevAttrMultiProcessorCount, device));
    context_.stream = nullptr;  // the legacy default stream, like the other CUDA backends
    field_.setup(problem, sweep_, 1, context_, caps_);
    partials_.allocate(kStatsMaxBlocks * sizeof(StatsPartial));
    this->ready(problem.points());
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    this->check_ready("advance()");
    field_.advance(steps, step0);
  }

  // One step per pass, split (CoefficientStepper::step_around), the boxes of between() on a
  // stream of their own.
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    this->check_ready("advance_around()");
    if (steps != 1) return false;
    field_.step_around(step0, inner, [&] { this->with_boxes_aside(between); });
    return true;
  }

  FieldStats stats() override {
    this->check_ready("stats()");
    return coefficient_field_stats(field_, partials_, context_);
  }

 private:
  typename DeviceFieldBackend<T>::FieldNow field_now() override {
    return {field_.cur(), field_.grid(), context_.stream};
  }

  std::string name_;
  Capabilities caps_;
  CoefficientLauncher<T> sweep_;
  LaunchContext context_;
  CoefficientStepper<T> field_;
  DeviceArray partials_;
};

}  // namespace

std::string coefficient_unsupported_reason(const Capabilities& caps, const StencilProblem& p) {
  const std::string why = check_capabilities(caps, p);
  if (!why.empty()) return why;
  if (!p.coefficients) return "no coefficient fields";
  if (p.stencil.radius != 1)
    return "varying coefficients take the radius-1 conservative form, not radius " +
           std::to_string(p.stencil.radius);
  const std::size_t points = static_cast<std::size_t>(p.points());
  const CoefficientFields& c = *p.coefficients;
  if (c.conductivity.size() != points || c.capacity.size() != points)
    return "the conductivity and capacity fields must have one value per node";
  if (c.sources.size() > static_cast<std::size_t>(kMaxSourceFields))
    return "at most " + std::to_string(kMaxSourceFields) + " source fields, not " +
           std::to_string(c.sources.size());
  for (const auto& s : c.sources)
    if (s.density.size() != points) return "a source field must have one value per node";
  for (int a = 0; a < p.dims; ++a)
    if (p.n[a] < 2) return "coefficient fields need at least 2 nodes per axis";
  if (c.has_faces()) {
    for (int a = 0; a < p.dims; ++a)
      if (c.faces[static_cast<std::size_t>(a)].size() != points)
        return "the face conductances must have one value per node and axis";
    if (!caps.face_conductances)
      return "sub-grid face conductances (regions sampled below the grid) are not supported by "
             "this backend";
  }
  if (!c.transfer.empty()) {
    if (c.transfer.size() != points) return "the surfaces' transfer must have one value per node";
    if (!caps.face_conductances)
      return "surfaces inside the body (void regions) are not supported by this backend";
  }
  return temperature_unsupported_reason(p);
}

template <typename T>
std::unique_ptr<Backend> make_coefficient_backend(const std::string& name, const Capabilities& caps,
                                                  CoefficientLauncher<T> sweep) {
  if (!sweep) throw std::runtime_error(name + " backend: no coefficient sweep");
  return std::make_unique<CoefficientBackend<T>>(name, caps, sweep);
}

template std::unique_ptr<Backend> make_coefficient_backend<float>(const std::string&,
                                                                  const Capabilities&,
                                                                  CoefficientLauncher<float>);
template std::unique_ptr<Backend> make_coefficient_backend<double>(const std::string&,
                                                                   const Capabilities&,
                                                                   CoefficientLauncher<double>);

}  // namespace heatsim::kernels::cuda
