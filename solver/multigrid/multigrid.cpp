#include "multigrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace heatsim::solver::multigrid {

const char* to_string(SolveReport::Reason r) {
  switch (r) {
    case SolveReport::Reason::converged:
      return "converged";
    case SolveReport::Reason::stalled:
      return "stalled";
    case SolveReport::Reason::max_iterations:
      return "reached the iteration limit";
  }
  return "?";
}

double SolveReport::mean_reduction() const {
  if (iterations == 0 || residuals.empty() || residuals.front() <= 0.0) return 0.0;
  return std::pow(residuals.back() / residuals.front(), 1.0 / iterations);
}

std::string SolveReport::describe() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s in %d iteration%s to %.3g (from %.3g, %.3g per iteration)",
                to_string(reason), iterations, iterations == 1 ? "" : "s", final_residual(),
                residuals.empty() ? 0.0 : residuals.front(), mean_reduction());
  return buf;
}

Multigrid::Multigrid(kernels::LevelOps& ops, const std::vector<kernels::LevelOperator>& levels,
                     CycleOptions options)
    : ops_(ops), options_(options) {
  ops_.setup(levels);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const int level = static_cast<int>(l);
    n_.push_back(levels[l].points());
    b_.push_back(ops_.create_vector(level));
    x_.push_back(ops_.create_vector(level));
    r_.push_back(ops_.create_vector(level));
  }
  const int last = static_cast<int>(levels.size()) - 1;
  bottom_p_ = ops_.create_vector(last);
  bottom_q_ = ops_.create_vector(last);
  bottom_r_ = ops_.create_vector(last);
  z0_ = ops_.create_vector(0);
  p0_ = ops_.create_vector(0);
  q0_ = ops_.create_vector(0);
  pr_ = ops_.create_vector(0);
}

void Multigrid::cycle(int level, int b, int x) {
  if (level == levels() - 1) {
    bottom_solve(b, x);
    return;
  }
  ops_.smooth(level, b, x, options_.pre_sweeps, false, options_.omega);
  ops_.residual(level, b, x, r_[level]);
  const int cb = b_[level + 1], cx = x_[level + 1];
  ops_.restrict_residual(level, r_[level], cb);
  ops_.axpby(0.0, cx, 0.0, cx);
  cycle(level + 1, cb, cx);
  ops_.prolong_add(level, cx, x);
  ops_.smooth(level, b, x, options_.post_sweeps, true, options_.omega);
}

// Plain conjugate gradients on the coarsest level, x += A^-1 (b - A x) to bottom_tolerance.
void Multigrid::bottom_solve(int b, int x) {
  const int level = levels() - 1;
  const int r = bottom_r_, p = bottom_p_, q = bottom_q_;
  ops_.residual(level, b, x, r);
  double rr = ops_.dot(r, r);
  const double stop = rr * options_.bottom_tolerance * options_.bottom_tolerance;
  if (rr == 0.0) return;
  ops_.axpby(1.0, r, 0.0, p);
  const std::int64_t limit = 4 * n_.back() + 20;
  for (std::int64_t it = 0; it < limit && rr > stop; ++it) {
    ops_.apply(level, p, q);
    const double pq = ops_.dot(p, q);
    if (pq <= 0.0) break;
    const double alpha = rr / pq;
    ops_.axpby(alpha, p, 1.0, x);
    ops_.axpby(-alpha, q, 1.0, r);
    const double rr_next = ops_.dot(r, r);
    ops_.axpby(1.0, r, rr_next / rr, p);
    rr = rr_next;
  }
}

SolveReport Multigrid::solve(const SolveOptions& options) {
  // The reference ||b0||, b0 = b - A x_lift (z0_ holds x_lift).
  const int x = x_[0], b = b_[0];
  ops_.axpby(1.0, x, 0.0, z0_);
  ops_.zero_free(0, z0_);
  ops_.residual(0, b, z0_, r_[0]);
  const double reference = norm(r_[0]);
  if (reference == 0.0) {
    // No load on the free unknowns: the solution is 0 there.
    ops_.axpby(1.0, z0_, 0.0, x);
    SolveReport report;
    report.residuals = {0.0};
    return report;
  }
  return options.method == Krylov::pcg ? solve_pcg(options, reference)
                                       : solve_vcycle(options, reference);
}

namespace {

// Records the residual and decides whether to go on; returns false when the solve is done.
bool keep_going(SolveReport& report, const SolveOptions& options, double relative,
                int& slow_in_a_row) {
  const double previous = report.residuals.back();
  report.residuals.push_back(relative);
  ++report.iterations;
  if (options.on_iteration) options.on_iteration(report.iterations, relative);
  if (relative <= options.tolerance) {
    report.reason = SolveReport::Reason::converged;
    return false;
  }
  slow_in_a_row = relative > options.stall_reduction * previous ? slow_in_a_row + 1 : 0;
  if (slow_in_a_row >= options.stall_iterations) {
    report.reason = SolveReport::Reason::stalled;
    return false;
  }
  if (report.iterations >= options.max_iterations) {
    report.reason = SolveReport::Reason::max_iterations;
    return false;
  }
  return true;
}

}  // namespace

SolveReport Multigrid::solve_vcycle(const SolveOptions& options, double reference) {
  const int x = x_[0], b = b_[0];
  SolveReport report;
  report.reference = reference;
  ops_.residual(0, b, x, r_[0]);
  double relative = norm(r_[0]) / reference;
  report.residuals.push_back(relative);
  if (relative <= options.tolerance) return report;
  int slow = 0;
  do {
    vcycle(b, x);
    ops_.residual(0, b, x, r_[0]);
    relative = norm(r_[0]) / reference;
  } while (keep_going(report, options, relative, slow));
  return report;
}

// Conjugate gradients preconditioned by one V-cycle from zero (symmetric: forward smoothing
// before the coarse correction, reverse after, an exact bottom solve).
SolveReport Multigrid::solve_pcg(const SolveOptions& options, double reference) {
  const int x = x_[0], b = b_[0], r = pr_, z = z0_, p = p0_, q = q0_;
  SolveReport report;
  report.reference = reference;
  ops_.residual(0, b, x, r);
  double relative = norm(r) / reference;
  report.residuals.push_back(relative);
  if (relative <= options.tolerance) return report;
  auto precondition = [&] {
    ops_.axpby(0.0, z, 0.0, z);
    vcycle(r, z);
  };
  precondition();
  ops_.axpby(1.0, z, 0.0, p);
  double rz = ops_.dot(r, z);
  int slow = 0, stuck = 0;
  double last_true = std::numeric_limits<double>::infinity();
  for (;;) {
    ops_.apply(0, p, q);
    const double pq = ops_.dot(p, q);
    if (!(pq > 0.0) || !(rz > 0.0)) {
      // Breakdown (rounding at the solution, or an operator that is not positive): stop with
      // what the residual says.
      report.reason = relative <= options.tolerance ? SolveReport::Reason::converged
                                                    : SolveReport::Reason::stalled;
      break;
    }
    const double alpha = rz / pq;
    ops_.axpby(alpha, p, 1.0, x);
    ops_.axpby(-alpha, q, 1.0, r);
    relative = norm(r) / reference;
    if (!keep_going(report, options, relative, slow)) {
      if (report.reason != SolveReport::Reason::converged) break;
      // The recurrence's residual drifts from b - A x near rounding: converged only when the
      // true residual agrees; else restart from it.
      ops_.residual(0, b, x, r);
      relative = norm(r) / reference;
      report.residuals.back() = relative;
      if (relative <= options.tolerance) break;
      // Stalled when two restarts in a row gain less than half on the previous one.
      stuck = relative > options.stall_reduction * last_true ? stuck + 1 : 0;
      last_true = relative;
      if (stuck >= 2) {
        report.reason = SolveReport::Reason::stalled;
        break;
      }
      if (report.iterations >= options.max_iterations) {
        report.reason = SolveReport::Reason::max_iterations;
        break;
      }
      precondition();
      ops_.axpby(1.0, z, 0.0, p);
      rz = ops_.dot(r, z);
      continue;
    }
    precondition();
    const double rz_next = ops_.dot(r, z);
    ops_.axpby(1.0, z, rz_next / rz, p);
    rz = rz_next;
  }
  return report;
}

}  // namespace heatsim::solver::multigrid
