// Implicit time steps and steady states of the heat-flow operator (conductance.hpp), each one
// multigrid solve:
//   backward Euler:  C (u1 - u0) / dt = D u1 + q(t1)
//   Crank-Nicolson:  C (u1 - u0) / dt = (D u0 + q(t0)) / 2 + (D u1 + q(t1)) / 2
//   BDF2:            C (3 u2 - 4 u1 + u0) / (2 dt) = D u2 + q(t2), the first step backward Euler
//   steady:          D u + q = 0
// D the affine heat-flow operator with the faces' values at the same times as q (Dirichlet nodes
// take g(t1)), every row weighted by the trapezoid node weights so that the system is
// symmetric (HeatFlowOperator). Each step starts the solve from the previous step's field.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "conductance.hpp"
#include "hierarchy.hpp"
#include "kernels/level_ops.hpp"
#include "multigrid.hpp"
#include "solver/case.hpp"

namespace heatsim::solver::multigrid {

using solver::TimeMethod;
// "explicit", "backward-euler", "crank-nicolson", "bdf2", "steady"
const char* to_string(TimeMethod m);
std::optional<TimeMethod> time_method_from_string(const std::string& s);

// Crank-Nicolson's amplification factor for the stiffest mode of a step dt, (1 - r) / (1 + r)
// with r = dt / dt_limit: the explicit limit is 2 / lambda_max (lambda the eigenvalues of
// C^-1 A), so dt lambda_max / 2 = r. It tends to -1 as dt grows: that mode then flips its sign
// every step and hardly decays, and any disturbance at the grid scale (a heated node, a sharp
// initial edge, a sudden change of a face value) rings for many steps. With coefficient
// fields dt_limit is a lower bound (Gershgorin), so the factor is at most this much negative.
double crank_nicolson_stiffest_factor(double dt, double dt_limit);
// Below this factor the stiffest mode keeps more than half its amplitude from one step to the
// next while flipping sign (r > 3, dt more than 3 explicit limits): a grid-scale disturbance
// no longer dies within a step or two as it does under the L-stable methods.
inline constexpr double kRingingFactor = -0.5;
// Empty, or the warning (what, why, what to do) for a Crank-Nicolson step whose stiffest-mode
// factor is below kRingingFactor; the other methods damp every mode and get none.
std::string large_step_warning(TimeMethod m, double dt, double dt_limit);

// A solve that did not converge: the message gives the reason and the numbers.
class SolveFailure : public std::runtime_error {
 public:
  SolveFailure(const std::string& what, SolveReport report)
      : std::runtime_error(what), report_(std::move(report)) {}
  const SolveReport& report() const { return report_; }

 private:
  SolveReport report_;
};

// The fields of the homogeneous shorthand (k = alpha, rho*c_p = 1, a constant source q on
// every node), for a problem that carries no coefficient fields.
std::shared_ptr<const kernels::CoefficientFields> uniform_fields(std::int64_t points, double alpha,
                                                                 double source);

class ImplicitStepper {
 public:
  // Wall time of a part of the set-up (for a log at debug level).
  struct SetupPhase {
    std::string name;
    SetupTime time;
    // A part of the multigrid hierarchy proper: a coarse level, or the level operations' copy
    // of the levels with the multigrid's vectors. Not the heat-flow operator, the finest level
    // (the assembled matrix) or the loads (its right-hand side).
    bool hierarchy = false;
  };
  // The host's part of the set-up: the heat-flow operator and the multigrid levels of the
  // method's level operator, built without level operations, so that a run can build it
  // while its device starts (CUDA's start-up takes a few tenths of a second).
  struct HostSetup {
    kernels::StencilProblem problem;
    std::shared_ptr<const kernels::CoefficientFields> fields;
    TimeMethod method;
    double dt;
    bool nonlinear;
    HeatFlowOperator flow;
    std::vector<LevelOperator> levels;  // the finest first
    std::vector<SetupPhase> phases;     // the heat-flow operator, the finest level, each coarse one
    // A linear steady solve: the coefficient fields go (HeatFlowOperator::release_fields), so
    // that its caller, once it lets its own references go too, does not hold them beside the
    // levels; true where released, false (nothing done) for any other method.
    bool release_fields();
    // Whether the coarse levels are built (prepare's coarse_levels, or build_coarse_levels).
    bool coarse_levels_built = true;
    // Builds the coarse levels below the finest, where prepare left them out (once the
    // coefficient fields are released, so that the coarse levels take their memory).
    void build_coarse_levels();
  };

  // Throws std::invalid_argument for the explicit method, a dt <= 0 for an implicit one, a
  // steady problem without a steady state (every face Neumann or periodic, none Dirichlet,
  // convective or radiating) and Crank-Nicolson on temperature-dependent materials.
  // coarse_levels = false: the finest level alone, for HostSetup::build_coarse_levels.
  static HostSetup prepare(const kernels::StencilProblem& problem,
                           std::shared_ptr<const kernels::CoefficientFields> fields,
                           TimeMethod method, double dt, bool coarse_levels = true);

  // Builds the operator and its multigrid levels (prepare), then the level operations' copy
  // of them. Throws std::invalid_argument as prepare does.
  ImplicitStepper(const kernels::StencilProblem& problem,
                  std::shared_ptr<const kernels::CoefficientFields> fields, TimeMethod method,
                  double dt, std::unique_ptr<kernels::LevelOps> ops, SolveOptions options = {});
  // The same from a HostSetup built before.
  ImplicitStepper(HostSetup setup, std::unique_ptr<kernels::LevelOps> ops,
                  SolveOptions options = {});

  TimeMethod method() const { return method_; }
  int levels() const { return mg_ ? mg_->levels() : released_levels_; }
  // The strong pieces deflated beside the V-cycle (0: none; deflation.hpp; found now if no
  // solve has needed them yet), and whether they have been found (Multigrid::deflation_found).
  // After release_levels(): the pieces found by then (0 if none were looked for).
  std::int64_t deflated_pieces() { return mg_ ? mg_->deflated_pieces() : released_pieces_; }
  bool deflation_found() const { return mg_ ? mg_->deflation_found() : true; }
  // The operator of the fields as given; a nonlinear stepper's has no level left (taken at the
  // set-up: each outer iteration linearises an operator of its own).
  const HeatFlowOperator& heat_flow() const { return flow_; }
  // The options of every later solve (tolerance, logging callback, ...).
  SolveOptions& options() { return options_; }

  // The field the steps advance, held where the level operations live (a device's memory
  // for a GPU backend): set it before the first step (and to restart), read it after any.
  // Memory order [z][y][x].
  void set_field(const std::vector<double>& u);
  void field(std::vector<double>& u);
  // The same from and into the caller's memory (one value per node).
  void set_field(const double* u, std::size_t count);
  void field_to(double* u, std::size_t count);
  // The field's values where the level operations keep them in host memory (the CPU's), for
  // a caller that writes the field in place (a run's initial field: no second array of the
  // grid's size beside the levels at the set-up's peak); nullptr otherwise. The field counts
  // as changed.
  double* field_values();
  // Changes whenever the field may have changed (set_field, advance): what was computed from
  // the field at one version holds while the version stays.
  std::uint64_t field_version() const { return field_version_; }
  // fp32 runs: the field is rounded to fp32 after every step, as an fp32 backend holds it.
  void set_round_to_fp32(bool round) { round_to_fp32_ = round; }
  // Gives the level operations back (their levels and vectors, the loads' parts) and keeps
  // the field in host memory: for a steady run once its one solve is done, whose output then
  // needs the field alone (at 129^3 the levels are four fifths of the solve's resident set).
  // set_field, field and field_to then work on the host copy; advance throws
  // std::logic_error.
  void release_levels();

  // One step from t0 = step * dt on the field held, without it leaving the level operations:
  // the right-hand side is assembled there from the loads' parts (HeatFlowOperator), the solve
  // runs there. steady: solves the steady state with the schedules at t0, the field as the
  // initial guess. Throws SolveFailure, the field unchanged, when the solve stalls or reaches
  // its iteration limit. BDF2 takes a BDF2 step when it holds the field of step - 1 (kept by
  // the advance() before, or given by set_previous_field), and otherwise a backward Euler step
  // (the start; second order overall all the same).
  SolveReport advance(std::int64_t step);
  // The same on a field in host memory: u0 in, u1 out (u unchanged when it throws).
  SolveReport advance(std::vector<double>& u, std::int64_t step);

  // BDF2: the field at step - 1 when the stepper holds it, which a checkpoint at `step` carries
  // so that a restart continues bit for bit; nothing otherwise (and for the one-step methods).
  std::optional<std::vector<double>> previous_field(std::int64_t step);
  // BDF2: the field at step - 1 (exactly as previous_field gave it), for the step from `step`.
  void set_previous_field(std::int64_t step, const std::vector<double>& u);

  // Wall time of the advance() calls so far: the multigrid solves alone (from the right-hand
  // side and initial guess in place to the last residual known), and whole steps (also the
  // right-hand side's assembly).
  struct Timing {
    std::int64_t solves = 0;
    std::int64_t iterations = 0;
    double solve_seconds = 0.0;
    double step_seconds = 0.0;
    double last_solve_seconds = 0.0;
    // Nonlinear transient steps that converged only taken in parts (advance_nonlinear), and
    // the shortest part any of them took, as a share of dt (1: none).
    std::int64_t split_steps = 0;
    double shortest_part = 1.0;
    // A nonlinear solve's outer iterations: all of them, and those that built a new hierarchy
    // (the others kept the coarse levels and replaced the finest).
    std::int64_t outer_iterations = 0;
    std::int64_t hierarchies_built = 0;
  };
  const Timing& timing() const { return timing_; }

  // Wall time of the set-up's parts, in order: the heat-flow operator, the finest level, each
  // coarse level of the hierarchy, the level operations with the multigrid's vectors, and the
  // loads' parts.
  const std::vector<SetupPhase>& setup_phases() const { return setup_phases_; }
  // The phases marked `hierarchy`, summed: what a multigrid library's set-up does once it is
  // given the assembled matrix (hypre's HYPRE_StructPCGSetup: PFMG's coarse grids,
  // interpolation, Galerkin products and relaxation data, and the solver's vectors).
  SetupTime hierarchy_setup() const;

 private:
  // rhs = scale * load(t) (add: rhs += scale * load(t)), from the sources' and faces' parts:
  // the sources at their factors at(t), or with `step` >= 0 at those of the implicit step from
  // `step` (implicit_source_factor with bdf2); `faces` false leaves the faces' parts out.
  void assemble_load(double t, double scale, bool add, std::int64_t step = -1, bool bdf2 = false,
                     bool faces = true);
  // rhs += scale * the faces' parts of load(t) alone.
  void add_face_loads(double t, double scale);
  // Source s's weighted density into level-0 vector v.
  void write_source(std::size_t s, int v);
  // The Dirichlet nodes of the solution take g(t).
  void set_fixed(double t);
  // Solves with the Dirichlet nodes at g(t_fixed), the field as the initial guess; restores
  // the field from `saved_` (when it holds a copy) if the solve fails.
  SolveReport solve(double t_fixed);
  // Sets the level operations up with the hierarchy of the method's level operator (the first
  // time), or replaces it keeping the level-0 vectors.
  void build_levels(TimeMethod m);
  // BDF2's backward Euler start: on its own hierarchy for this one step, then BDF2's again.
  SolveReport start_bdf2(double t1);

  // Temperature laws or radiating faces (linearize.hpp): backward Euler and steady only. Each
  // step is a sequence of linear solves, the fields linearised about the last iterate, until
  // the iterate moves less than the tolerance below; backward Euler advances the enthalpy
  // (C_ref (h(u1) - h(u0)) / dt = -A u1 + load), so heat is conserved to the solve's tolerance.
  SolveReport advance_nonlinear(std::int64_t step);

  // Records the time since the last phase ended under `name` (`hierarchy`: SetupPhase's).
  void end_phase(std::string name, bool hierarchy = false);

  // Before flow_: the set-up's first phase starts when the constructor does.
  PhaseClock phase_clock_;
  std::vector<SetupPhase> setup_phases_;
  // The coarse levels of a HostSetup until the constructor hands them to the multigrid.
  std::vector<LevelOperator> built_levels_;
  TimeMethod method_;
  double dt_;
  // The problem and its fields as given (the nonlinear steps linearise them).
  kernels::StencilProblem problem_;
  std::shared_ptr<const kernels::CoefficientFields> base_fields_;
  bool nonlinear_ = false;
  HeatFlowOperator flow_;
  std::unique_ptr<kernels::LevelOps> ops_;
  std::unique_ptr<Multigrid> mg_;
  SolveOptions options_;
  Timing timing_;
  bool round_to_fp32_ = false;
  std::uint64_t field_version_ = 0;
  // Level-0 vectors and sparse vectors of the level operations: the weighted capacity (0 on
  // the fixed nodes), the sources' weighted densities, the faces' constant loads and ambient
  // weights, the Dirichlet faces' nodes, a copy of the field the step started from (restored
  // when a solve fails; not kept for steady solves) and BDF2's field of step - 1. A nonlinear
  // stepper keeps BDF2's field alone (it assembles its loads on the host).
  int capacity_ = -1, saved_ = -1, previous_ = -1;
  struct Source {
    int vector;  // -1: not kept (a linear steady solve's), written when the load is assembled
    kernels::Schedule schedule;
  };
  std::vector<Source> sources_;
  struct Face {
    int face;
    int constant, ambient;  // sparse vectors; -1: none
  };
  std::vector<Face> faces_;
  std::vector<std::pair<int, int>> dirichlet_;  // (face, sparse vector of ones)
  std::int64_t previous_step_ = -1;             // BDF2: the step previous_ holds, -1: none
  // After release_levels(): the field, and what levels() and deflated_pieces() said.
  kernels::LevelWeights released_field_;
  int released_levels_ = 0;
  std::int64_t released_pieces_ = 0;
};

}  // namespace heatsim::solver::multigrid
