#include "implicit_stepper.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "hierarchy.hpp"

namespace heatsim::solver::multigrid {

const char* to_string(TimeMethod m) {
  switch (m) {
    case TimeMethod::explicit_euler:
      return "explicit";
    case TimeMethod::backward_euler:
      return "backward-euler";
    case TimeMethod::crank_nicolson:
      return "crank-nicolson";
    case TimeMethod::bdf2:
      return "bdf2";
    case TimeMethod::steady:
      return "steady";
  }
  return "?";
}

std::optional<TimeMethod> time_method_from_string(const std::string& s) {
  for (TimeMethod m : {TimeMethod::explicit_euler, TimeMethod::backward_euler,
                       TimeMethod::crank_nicolson, TimeMethod::bdf2, TimeMethod::steady})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

double crank_nicolson_stiffest_factor(double dt, double dt_limit) {
  const double r = dt / dt_limit;
  return (1.0 - r) / (1.0 + r);
}

std::string large_step_warning(TimeMethod m, double dt, double dt_limit) {
  if (m != TimeMethod::crank_nicolson || !(dt > 0.0 && dt_limit > 0.0)) return {};
  const double factor = crank_nicolson_stiffest_factor(dt, dt_limit);
  if (!(factor < kRingingFactor)) return {};
  // r = 3 gives the factor -0.5: the largest step that keeps the stiffest mode's decay.
  const double r_max = (1.0 - kRingingFactor) / (1.0 + kRingingFactor);
  char text[640];
  std::snprintf(text, sizeof text,
                "crank-nicolson at dt = %.6g, %.3g times the explicit limit %.6g, multiplies the "
                "stiffest mode by %.6f per step: it flips sign every step and hardly decays, so "
                "a heated node, a sharp initial edge or a sudden boundary change rings for many "
                "steps; use bdf2 (second order, damps it) or backward-euler, or a dt of at most "
                "%.6g (%g explicit limits, factor %g)",
                dt, dt / dt_limit, dt_limit, factor, r_max * dt_limit, r_max, kRingingFactor);
  return text;
}

std::shared_ptr<const kernels::CoefficientFields> uniform_fields(std::int64_t points, double alpha,
                                                                 double source) {
  auto f = std::make_shared<kernels::CoefficientFields>();
  f->conductivity.assign(static_cast<std::size_t>(points), alpha);
  f->capacity.assign(static_cast<std::size_t>(points), 1.0);
  if (source != 0.0) {
    kernels::CoefficientFields::Source s;
    s.density.assign(static_cast<std::size_t>(points), source);
    s.schedule.value = 1.0;
    f->sources.push_back(std::move(s));
  }
  return f;
}

namespace {

// alpha and beta of the level operator alpha * wC + beta * A for the method.
std::pair<double, double> scalars(TimeMethod m, double dt) {
  switch (m) {
    case TimeMethod::backward_euler:
      return {1.0 / dt, 1.0};
    case TimeMethod::crank_nicolson:
      return {1.0 / dt, 0.5};
    case TimeMethod::bdf2:
      return {1.5 / dt, 1.0};
    case TimeMethod::steady:
      return {0.0, 1.0};
    case TimeMethod::explicit_euler:
      break;
  }
  throw std::invalid_argument("the explicit method takes no implicit solve");
}

}  // namespace

ImplicitStepper::ImplicitStepper(const kernels::StencilProblem& problem,
                                 std::shared_ptr<const kernels::CoefficientFields> fields,
                                 TimeMethod method, double dt,
                                 std::unique_ptr<kernels::LevelOps> ops, SolveOptions options)
    : method_(method),
      dt_(dt),
      flow_(problem, std::move(fields)),
      ops_(std::move(ops)),
      options_(std::move(options)) {
  if (method != TimeMethod::steady && !(dt > 0.0 && std::isfinite(dt)))
    throw std::invalid_argument(std::string(to_string(method)) + " needs a time step dt > 0");
  if (method == TimeMethod::steady && flow_.floating())
    throw std::invalid_argument(
        "steady: the problem has no steady state to solve for: no face is Dirichlet or "
        "convective, so the temperature is fixed only up to a constant (and a steady state "
        "exists only if the sources and boundary fluxes balance exactly); make a face dirichlet "
        "or convective, or run the transient with backward-euler");
  build_levels(method);
}

void ImplicitStepper::build_levels(TimeMethod m) {
  const auto [alpha, beta] = scalars(m, dt_);
  // The new driver sets the level operations up (dropping the old one's vectors) before the
  // old driver goes.
  mg_ = std::make_unique<Multigrid>(*ops_, build_hierarchy(flow_.level(alpha, beta)));
}

const std::vector<double>* ImplicitStepper::previous_field(std::int64_t step) const {
  if (method_ != TimeMethod::bdf2 || previous_.empty() || previous_step_ != step - 1)
    return nullptr;
  return &previous_;
}

void ImplicitStepper::set_previous_field(std::int64_t step, std::vector<double> u) {
  if (method_ != TimeMethod::bdf2) return;
  if (u.size() != static_cast<std::size_t>(flow_.points()))
    throw std::invalid_argument("bdf2: the previous field has the wrong number of values");
  previous_ = std::move(u);
  previous_step_ = step - 1;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

SolveReport ImplicitStepper::advance(std::vector<double>& u, std::int64_t step) {
  if (u.size() != static_cast<std::size_t>(flow_.points()))
    throw std::invalid_argument("implicit step: the field has the wrong number of values");
  const Clock::time_point start = Clock::now();
  struct AddStepTime {  // also when the solve throws
    Timing& t;
    Clock::time_point start;
    ~AddStepTime() { t.step_seconds += seconds_since(start); }
  } add_step_time{timing_, start};
  const double t0 = static_cast<double>(step) * dt_;
  const double t1 = static_cast<double>(step + 1) * dt_;
  const std::vector<double>& wc = flow_.weighted_capacity();
  const std::vector<std::uint8_t>& fixed = flow_.fixed();
  std::vector<double> rhs(u.size(), 0.0);
  // BDF2 without the field of step - 1 starts with a backward Euler step.
  const bool bdf2_start = method_ == TimeMethod::bdf2 && !previous_field(step);
  switch (bdf2_start ? TimeMethod::backward_euler : method_) {
    case TimeMethod::steady:
      flow_.add_load(t0, rhs);
      break;
    case TimeMethod::backward_euler:
      for (std::size_t i = 0; i < u.size(); ++i)
        if (!fixed[i]) rhs[i] = wc[i] / dt_ * u[i];
      flow_.add_load(t1, rhs);
      break;
    case TimeMethod::crank_nicolson: {
      // (wC/dt) u0 + (-A u0 + load(t0)) / 2 = 2 (wC/dt) u0 - M u0 + load(t0) / 2, with M =
      // wC/dt + A/2 the level operator itself.
      std::vector<double> mu0;
      ops_->upload(mg_->solution(), u);
      ops_->apply(0, mg_->solution(), mg_->rhs());
      ops_->download(mg_->rhs(), mu0);
      std::vector<double> load0(u.size(), 0.0), load1(u.size(), 0.0);
      flow_.add_load(t0, load0);
      flow_.add_load(t1, load1);
      for (std::size_t i = 0; i < u.size(); ++i)
        if (!fixed[i]) rhs[i] = 2.0 * wc[i] / dt_ * u[i] - mu0[i] + 0.5 * (load0[i] + load1[i]);
      break;
    }
    case TimeMethod::bdf2:
      for (std::size_t i = 0; i < u.size(); ++i)
        if (!fixed[i]) rhs[i] = wc[i] * (4.0 * u[i] - previous_[i]) / (2.0 * dt_);
      flow_.add_load(t1, rhs);
      break;
    case TimeMethod::explicit_euler:
      break;
  }
  if (method_ != TimeMethod::bdf2) return solve(u, rhs, method_ == TimeMethod::steady ? t0 : t1);
  std::vector<double> u_step = u;  // u_{n-1} of the next step, kept once this one converged
  const SolveReport report = bdf2_start ? start_bdf2(u, rhs, t1) : solve(u, rhs, t1);
  previous_ = std::move(u_step);
  previous_step_ = step;
  return report;
}

SolveReport ImplicitStepper::start_bdf2(std::vector<double>& u, const std::vector<double>& rhs,
                                        double t1) {
  // The backward Euler operator differs from BDF2's (alpha = 1/dt against 3/(2 dt)), and one
  // set of level operations holds one hierarchy: build backward Euler's for this step and
  // BDF2's again afterwards (also when the solve throws), rather than keep both for the run.
  build_levels(TimeMethod::backward_euler);
  SolveReport report;
  try {
    report = solve(u, rhs, t1);
  } catch (...) {
    build_levels(TimeMethod::bdf2);
    throw;
  }
  build_levels(TimeMethod::bdf2);
  return report;
}

SolveReport ImplicitStepper::solve(std::vector<double>& u, const std::vector<double>& rhs,
                                   double t_fixed) {
  std::vector<double> x = u;  // warm start: the previous step's field
  flow_.set_fixed(t_fixed, x);
  ops_->upload(mg_->rhs(), rhs);
  ops_->upload(mg_->solution(), x);
  const Clock::time_point start = Clock::now();
  SolveReport report = mg_->solve(options_);
  timing_.last_solve_seconds = seconds_since(start);
  timing_.solve_seconds += timing_.last_solve_seconds;
  ++timing_.solves;
  timing_.iterations += report.iterations;
  if (report.reason != SolveReport::Reason::converged)
    throw SolveFailure(
        std::string(to_string(method_)) + ": the multigrid solve " + report.describe(), report);
  ops_->download(mg_->solution(), u);
  return report;
}

}  // namespace heatsim::solver::multigrid
