// The driver of a CUDA-core backend on a varying-coefficient problem (StencilProblem::
// coefficients): u, k, dt/C and the source densities live on the device for the whole run,
// and each step is, as on the CPU, the ghost fill of u at time t, the backend's coefficient
// sweep cur -> next with the sources' factors Schedule::mean(t, t + dt) (evaluated on the host
// and staged on the device per run of steps, a row per step), swap, and the Dirichlet nodes set
// to g(t + dt). Without a convective or heat-flux face the Dirichlet nodes and the next ghosts
// are the constant-weight driver's one boundary pass (the rules agree at width 1); with one,
// the coefficient ghost fill (coefficient_fields.cuh) and a Dirichlet launch. On a grid of at
// most kRulesMaxPoints nodes, one ghost wide, without periodic axes or temperature-dependent
// materials, the sweep itself forms each ghost by its face's rule instead
// (CoefficientArgs::rules: the same operands, the same value), and a step is the sweep and,
// with Dirichlet faces, their launch; with the faces constant in time, too, a whole run of
// steps is one cooperative launch (persistent_steps.cuh). One step per
// pass: S changes from node to node, so there is no S^k to fuse. Runs of steps are cut at
// kStepRun steps; a run of kGraphMinSteps or more whose launches do not change from step to
// step (faces constant in time, no temperature-dependent materials) is replayed as a CUDA
// graph (step_graphs.cuh): the same launches, so the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "coefficient_fields.cuh"
#include "coefficient_sweep.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"
#include "step_graphs.cuh"
#include "temperature_kernels.cuh"

namespace heatsim::kernels::cuda {

// The largest grid whose sweeps form the faces' ghosts themselves. There the ghost launch (about
// 4 us on an H200) is a third of a step; on larger grids it is a small part, and the rules slow
// the register-tiling sweep by a fifth or more (Heat-3D-mat 512^3: 69 -> 52-54 GStencil/s), so
// they keep the launch. Measured: 96 x 96 x 32 (295k nodes) faster with the rules, 96^3 (885k)
// slower (docs/performance.md).
constexpr std::int64_t kRulesMaxPoints = std::int64_t{1} << 19;

// The field, its coefficients and the single step of the header comment, on one padded layout
// (ghost layers `ghost` wide; the step reads and fills only the first). The CUDA-core
// backends' coefficient driver is one of these; temporal-blocking keeps one for its whole
// field (steps outside a pass) and one per band slab.
template <typename T>
class CoefficientStepper {
 public:
  // Allocates for `problem` (NaN everywhere, so that a node no kernel writes shows up) and
  // uploads its coefficient fields, in the compact forms `caps` says the sweep reads.
  void setup(const StencilProblem& problem, CoefficientLauncher<T> sweep, int ghost,
             const LaunchContext& context, const Capabilities& caps);
  // Steps step0 .. step0 + steps - 1 of the problem: u in cur() advances in place.
  void advance(std::int64_t steps, std::int64_t step0);
  // Step step0 split around `inner` (Backend::advance_around): what comes before the sweep
  // (the ghosts, or the faces' rules; temperature-dependent faces), the sweep of `inner`,
  // between(), the same again (between() may have written nodes they are formed from), the
  // sweep of the nodes around `inner` (the rules applied only at the grid's own faces), then
  // the rest of the step: the same launches and bits as advance(1, step0), unstaged.
  void step_around(std::int64_t step0, const FieldBox& inner,
                   const std::function<void()>& between);

  // The longest run of steps staged (and replayed) at once, and the shortest replayed as a graph.
  static constexpr int kStepRun = 256;
  static constexpr int kGraphMinSteps = 8;

  const DeviceGrid& grid() const { return grid_; }
  const StencilProblem& problem() const { return p_; }
  T* cur() { return cur_.as<T>(); }
  T* next() { return next_.as<T>(); }
  void swap() { cur_.swap(next_); }
  DeviceCoefficients<T>& fields() { return fields_; }
  const DeviceCoefficients<T>& fields() const { return fields_; }
  const DeviceTemperature<T>& temperature() const { return temperature_; }
  // The fields and spacing of a sweep (in, out and the factors left for the caller).
  CoefficientArgs<T> sweep_args();

 private:
  // Steps step0 .. step0 + steps - 1 in one cooperative launch (persistent_steps.cuh); false,
  // having launched nothing, where the device cannot (the stepper then launches per step).
  bool persistent_run(int steps, std::int64_t step0, const T* factors);
  // The sources' factors Schedule::mean(t, t + dt) of step `step` (t = step dt), padded with 0
  // to kMaxSourceFields.
  void factor_row(std::int64_t step, T* row) const;
  // Steps step0 .. step0 + steps - 1 (steps <= kStepRun), the sources' factors of step
  // step0 + s read from row s of `factors`, launched on `stream`.
  void launch_steps(int steps, std::int64_t step0, const T* factors, cudaStream_t stream);
  // The Dirichlet nodes at `step`'s time (a launch of their own).
  void set_dirichlet(std::int64_t step, cudaStream_t stream);
  // Dirichlet nodes at `step`'s time and, optionally, the next step's ghosts (one launch).
  void boundary_pass(std::int64_t step, bool set_dirichlet, bool fill_ghosts,
                     cudaStream_t stream);

  StencilProblem p_;
  DeviceGrid grid_;
  LaunchContext context_;
  CoefficientLauncher<T> sweep_ = nullptr;
  DeviceArray cur_, next_;
  DeviceCoefficients<T> fields_;
  DeviceTemperature<T> temperature_;  // temperature-dependent materials, when the problem has them
  DirichletFaces dirichlet_;
  bool fixed_faces_ = false;  // every face Dirichlet and constant: steps sweep `inside_`
  FieldBox inside_;
  bool faces_need_k_ = false;  // a convective or heat-flux face, or ghost > 1: the ghost fill
  // The sweep forms every face's ghost by its rule (CoefficientArgs::rules): no ghost launch.
  bool rules_in_sweep_ = false;
  // Whole runs of steps in one cooperative launch: rules in the sweep, faces constant in time.
  bool persistent_ok_ = false;
  StepTable<T> factors_;       // the sources' factors, kMaxSourceFields per step
  StepGraphs graphs_;
  bool graphs_ok_ = false;     // a step's launches are the same at every step
};

// The statistics of the stepper's field (FieldStats, heat weighed by the capacity), reduced in
// block order through `partials` (kStatsMaxBlocks StatsPartial).
template <typename T>
FieldStats coefficient_field_stats(CoefficientStepper<T>& field, DeviceArray& partials,
                                   const LaunchContext& context);

// Why a CUDA-core backend with `caps` cannot run a coefficient problem, empty when it can:
// the capability checks, then radius 1 and the sizes of the fields.
std::string coefficient_unsupported_reason(const Capabilities& caps, const StencilProblem& problem);

template <typename T>
std::unique_ptr<Backend> make_coefficient_backend(const std::string& name, const Capabilities& caps,
                                                  CoefficientLauncher<T> sweep);

}  // namespace heatsim::kernels::cuda
