#include "multigrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

#include "bottom_factor.hpp"
#include "kernels/threads.hpp"

namespace heatsim::solver::multigrid {

const char* to_string(SolveReport::Reason r) {
  switch (r) {
    case SolveReport::Reason::converged:
      return "converged";
    case SolveReport::Reason::stalled:
      return "stalled";
    case SolveReport::Reason::diverged:
      return "diverged";
    case SolveReport::Reason::max_iterations:
      return "reached the iteration limit";
  }
  return "?";
}

double SolveReport::mean_reduction() const {
  if (iterations == 0 || residuals.empty() || residuals.front() <= 0.0) return 0.0;
  return std::pow(residuals.back() / residuals.front(), 1.0 / iterations);
}

namespace {

// The residual's mean reduction per iteration over the last kDeflationTrial iterations (over
// all of them while there are no more).
double recent_reduction(const SolveReport& report) {
  const std::size_t n = report.residuals.size();
  const std::size_t k = static_cast<std::size_t>(kDeflationTrial);
  if (n <= k || report.residuals[n - 1 - k] <= 0.0) return report.mean_reduction();
  return std::pow(report.residuals.back() / report.residuals[n - 1 - k], 1.0 / kDeflationTrial);
}

}  // namespace

std::string SolveReport::describe() const {
  char buf[700];
  const double first = residuals.empty() ? 0.0 : residuals.front();
  int n =
      std::snprintf(buf, sizeof buf, "%s in %d iteration%s to %.3g (from %.3g, %.3g per iteration)",
                    to_string(reason), iterations, iterations == 1 ? "" : "s", final_residual(),
                    first, mean_reduction());
  if (deflated_from >= 0 && n > 0 && static_cast<std::size_t>(n) < sizeof buf) {
    char when[40] = "";
    if (deflated_from > 0) std::snprintf(when, sizeof when, " after iteration %d", deflated_from);
    n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                       ", the strong pieces deflated%s", when);
  }
  const std::size_t used = static_cast<std::size_t>(std::max(0, n));
  char* rest = buf + std::min(used, sizeof buf - 1);
  const std::size_t room = sizeof buf - std::min(used, sizeof buf - 1);
  const double best =
      residuals.empty() ? 0.0 : *std::min_element(residuals.begin(), residuals.end());
  switch (reason) {
    case Reason::converged:
      if (at_floor && final_residual() > kResolvedFloor)
        std::snprintf(rest, room,
                      ": within the rounding floor of fp64 for these values (%.3g), above the "
                      "tolerance %.3g: the load is that small against the rounding of the flows "
                      "between nodes, so the field is resolved to about %.2g of it only",
                      floor, tolerance, final_residual());
      else if (at_floor)
        std::snprintf(rest, room,
                      ": within the rounding floor of fp64 for these values (%.3g), above the "
                      "tolerance %.3g; no solve can get closer",
                      floor, tolerance);
      break;
    case Reason::stalled: {
      // Loosening the tolerance is advice only where the best residual is small already.
      char loosen[64] = "";
      if (10.0 * best < 1e-3)
        std::snprintf(loosen, sizeof loosen, ", or loosen time.tolerance to about %.1g",
                      std::max(tolerance, 10.0 * best));
      std::snprintf(rest, room,
                    ": the residual stopped falling at %.3g, above the tolerance %.3g and the "
                    "rounding floor %.3g, and the error stopped falling with it; check the case "
                    "for conductivities, capacities or transfer coefficients many orders of "
                    "magnitude apart (or in mixed units)%s",
                    best, tolerance, floor, loosen);
      break;
    }
    case Reason::diverged:
      // A load past what a double holds (a source's power or schedule, a face's value, or the
      // field the step starts from) gives no finite residual from the start: the operator is
      // not to blame.
      if (!std::isfinite(reference) || !std::isfinite(first))
        std::snprintf(rest, room,
                      ": the right-hand side is not finite (its norm %.3g): a source's power or "
                      "schedule, a face's value or the field the step starts from holds values "
                      "past what a double holds (about 1.8e308; their squares past 1.3e154 "
                      "overflow the norm); check the sources, their schedules and the faces",
                      reference);
      else
        std::snprintf(rest, room,
                      ": the residual grew to %.3g from a best of %.3g; the operator is not "
                      "positive definite or not finite: check the case for negative, zero or "
                      "non-finite conductivities, capacities or transfer coefficients",
                      final_residual(), best);
      break;
    case Reason::max_iterations:
      std::snprintf(rest, room,
                    ": still falling (best %.3g, tolerance %.3g); loosen time.tolerance, or check "
                    "the case for extreme contrasts",
                    best, tolerance);
      break;
  }
  return buf;
}

namespace {

// out = the free nodes' indicator of a level's `fixed` flags (1 free, 0 held), written in full
// by the threads.
void write_free(const std::vector<std::uint8_t>& fixed, double* out) {
  const std::int64_t np = static_cast<std::int64_t>(fixed.size());
  kernels::for_each_index(0, np, kernels::worth_threads(np), [&](std::int64_t i) {
    out[i] = fixed[static_cast<std::size_t>(i)] ? 0.0 : 1.0;
  });
}

}  // namespace

Multigrid::Multigrid(kernels::LevelOps& ops, std::vector<kernels::LevelOperator> levels,
                     CycleOptions options)
    : ops_(ops), options_(options) {
  std::vector<std::int64_t> points;
  for (const kernels::LevelOperator& op : levels) points.push_back(op.points());
  // The free nodes' indicator, for the level operations that do not keep the finest level in
  // host memory (kernels::UnsetAllocator: no zero fill on one thread first).
  kernels::LevelWeights free;
  if (!ops_.keeps_finest_level()) {
    free = kernels::LevelWeights(levels.at(0).fixed.size());
    write_free(levels.at(0).fixed, free.data());
  }
  // The pieces are found when a solve first asks for them where the level operations keep the
  // finest level (find_deflation is a serial pass over it, and most solves never deflate);
  // from the same level, so the same pieces and factor.
  const bool later = ops_.keeps_finest_level();
  Deflation deflation;
  if (!later) deflation = find_deflation(levels[0]);
  auto factor = factor_bottom(levels.back());
  ops_.adopt(std::move(levels));
  use_bottom_factor(static_cast<int>(points.size()) - 1, std::move(factor));
  p0_ = ops_.create_vector(0);
  free_in_p_ = later && ops_.host_values(p0_) != nullptr;
  if (free_in_p_) {
    free_ = p0_;
  } else {
    if (free.empty()) {  // kept the finest level, but not in host memory
      free = kernels::LevelWeights(ops_.finest_level()->fixed.size());
      write_free(ops_.finest_level()->fixed, free.data());
    }
    free_ = ops_.create_vector(0);
    ops_.upload_from(free_, free.data(), free.size());
    kernels::LevelWeights().swap(free);  // with the level operations now, before their vectors
  }
  b_.push_back(ops_.create_vector(0));
  x_.push_back(ops_.create_vector(0));
  z0_ = ops_.create_vector(0);
  q0_ = ops_.create_vector(0);
  // The rounding floor's magnitude shares q's vector: PCG takes the floor before its first
  // A p and at an ending, when q's values are spent (A p overwrites all of them), and the
  // V-cycle solve does not use q.
  magnitude_ = q0_;
  // So does the finest level's cycle residual: a V-cycle writes it whole before it reads it
  // and leaves nothing in it, and PCG's q is spent from r's update to the next A p, which no
  // V-cycle crosses (the deflation's uses of q0_ come before or after the V-cycle, never
  // across it). The solve's references and the V-cycle solve's residuals are read from it
  // before the floor's magnitude is written.
  r_.push_back(q0_);
  pr_ = ops_.create_vector(0);
  create_coarse_vectors(points);
  if (later)
    deflation_pending_ = true;
  else
    use_deflation(std::move(deflation));
}

void Multigrid::write_free_nodes() {
  write_free(ops_.finest_level()->fixed, ops_.host_values(free_));
}

bool Multigrid::has_deflation() {
  if (deflation_pending_) {
    deflation_pending_ = false;
    use_deflation(find_deflation(*ops_.finest_level()));
  }
  return !deflation_.empty();
}

void Multigrid::use_deflation(Deflation deflation) {
  deflation_ = Deflation{};
  deflating_ = false;
  if (deflation.empty() || !ops_.set_pieces(deflation.piece, deflation.pieces)) return;
  if (inverse_diagonal_ < 0) {
    inverse_diagonal_ = ops_.create_vector(0);
    t_ = ops_.create_vector(0);
    u_ = ops_.create_vector(0);
  }
  ops_.upload(inverse_diagonal_, deflation.inverse_diagonal);
  deflation.inverse_diagonal = {};  // with the backend now
  deflation.piece = {};
  deflation_ = std::move(deflation);
}

void Multigrid::replace_levels(std::vector<kernels::LevelOperator> levels) {
  std::vector<std::int64_t> points;
  for (const kernels::LevelOperator& op : levels) points.push_back(op.points());
  const bool later = ops_.keeps_finest_level();
  Deflation deflation;
  if (!later) deflation = find_deflation(levels.at(0));
  auto factor = factor_bottom(levels.back());
  ops_.adopt_replacement(std::move(levels));
  use_bottom_factor(static_cast<int>(points.size()) - 1, std::move(factor));
  released_ = false;
  deflation_pending_ = false;
  use_deflation(std::move(deflation));
  deflation_pending_ = later;
  b_.resize(1);
  x_.resize(1);
  r_.resize(1);
  create_coarse_vectors(points);
}

void Multigrid::replace_finest(kernels::LevelOperator level) {
  if (released_) throw std::logic_error("multigrid: the levels were released");
  const bool later = ops_.keeps_finest_level();
  // Where the level does not stay on the host, the pieces are found now, and only where the
  // hierarchy's own operator had them: a nearby operator without them (one body of strong
  // links, or no contrast) is taken to have none either, and the serial pass over the level
  // (some 25 ms at 0.9M nodes, every outer iteration) is not made.
  Deflation deflation;
  if (!later && !deflation_.empty()) deflation = find_deflation(level);
  // A one-level hierarchy's finest level is its coarsest: factored again.
  std::optional<kernels::BottomFactor> factor;
  if (levels() == 1) factor = factor_bottom(level);
  ops_.release_finest();
  ops_.replace_finest(std::move(level));
  if (levels() == 1) use_bottom_factor(0, std::move(factor));
  deflation_pending_ = false;
  use_deflation(std::move(deflation));
  deflation_pending_ = later;
}

void Multigrid::use_bottom_factor(int level, std::optional<kernels::BottomFactor> factor) {
  direct_bottom_ = factor && ops_.set_bottom_factor(level, std::move(*factor));
}

void Multigrid::release_levels() {
  ops_.release_levels();
  released_ = true;
}

void Multigrid::create_coarse_vectors(const std::vector<std::int64_t>& points) {
  n_ = points;
  for (std::size_t l = 1; l < points.size(); ++l) {
    const int level = static_cast<int>(l);
    b_.push_back(ops_.create_vector(level));
    x_.push_back(ops_.create_vector(level));
    r_.push_back(ops_.create_vector(level));
  }
  // The bottom solver's vectors; on a one-level hierarchy they are level 0's and kept.
  const int last = static_cast<int>(points.size()) - 1;
  if (last > 0 || bottom_level_ != 0) {
    bottom_p_ = ops_.create_vector(last);
    bottom_q_ = ops_.create_vector(last);
    bottom_r_ = ops_.create_vector(last);
    bottom_level_ = last;
  }
}

void Multigrid::cycle(int level, int b, int x, bool from_zero) {
  if (level == levels() - 1) {
    bottom_solve(b, x, from_zero);
    return;
  }
  if (from_zero)
    ops_.smooth_from_zero(level, b, x, options_.pre_sweeps, false, options_.omega);
  else
    ops_.smooth(level, b, x, options_.pre_sweeps, false, options_.omega);
  ops_.cycle_residual(level, b, x, r_[level]);
  const int cb = b_[level + 1], cx = x_[level + 1];
  ops_.restrict_residual(level, r_[level], cb);
  cycle(level + 1, cb, cx, true);
  ops_.prolong_add(level, cx, x);
  ops_.smooth(level, b, x, options_.post_sweeps, true, options_.omega);
}

void Multigrid::jacobi_step(int v) {
  ops_.apply(0, v, u_);
  ops_.multiply_add(-kDeflationOmega, inverse_diagonal_, u_, 1.0, v);
}

void Multigrid::jacobi_step_adjoint(int v) {
  ops_.multiply_add(1.0, inverse_diagonal_, v, 0.0, u_);
  ops_.apply(0, u_, q0_);
  ops_.axpby(-kDeflationOmega, q0_, 1.0, v);
}

void Multigrid::deflate(int r, int w, int z) {
  ops_.axpby(1.0, r, 0.0, t_);
  if (w >= 0) ops_.axpby(-1.0, w, 1.0, t_);
  for (int s = 0; s < kDeflationSteps; ++s) jacobi_step_adjoint(t_);
  ops_.piece_sums(t_, piece_values_);
  deflation_.solve(piece_values_);
  ops_.zero(z);
  ops_.piece_add(piece_values_, z);
  for (int s = 0; s < kDeflationSteps; ++s) jacobi_step(z);
}

void Multigrid::precondition(int r, int z) {
  if (!deflating_) {
    cycle(0, r, z, true);  // z = M r
    return;
  }
  // z = Q r; z += M (r - A z); z += Q (r - A z), the last built in t_ (deflate may write its
  // result over the scratch it has finished with, never over z while adding to it).
  deflate(r, -1, z);
  vcycle(r, z);
  ops_.apply(0, z, q0_);
  deflate(r, q0_, t_);
  ops_.axpby(1.0, t_, 1.0, z);
}

// x += A^-1 (b - A x) on the coarsest level (x = A^-1 b from_zero): by its factor where the
// level operations took it, else by plain conjugate gradients to bottom_tolerance.
void Multigrid::bottom_solve(int b, int x, bool from_zero) {
  const int level = levels() - 1;
  if (direct_bottom_) {
    ops_.bottom_solve(level, b, x, bottom_r_, from_zero);
    return;
  }
  if (from_zero) ops_.zero(x);
  ops_.conjugate_gradients(level, b, x, bottom_r_, bottom_p_, bottom_q_, options_.bottom_tolerance,
                           4 * n_.back() + 20);
}

double Multigrid::relative_floor(int b, int x, double reference) {
  ops_.magnitude(0, b, x, magnitude_);
  return kFloorFactor * std::numeric_limits<double>::epsilon() * norm(magnitude_) / reference;
}

SolveReport Multigrid::solve(const SolveOptions& options) {
  if (released_) throw std::logic_error("multigrid: the levels were released and not replaced");
  // b - A x_lift (z0_ holds x_lift).
  const int x = x_[0], b = b_[0];
  ops_.axpby(1.0, x, 0.0, z0_);
  ops_.zero_free(0, z0_);
  const double lift_reference = residual_norm(b, z0_, r_[0]);
  if (lift_reference == 0.0) {
    // No load on the free unknowns: the solution is 0 there.
    ops_.axpby(1.0, z0_, 0.0, x);
    SolveReport report;
    report.tolerance = options.tolerance;
    report.residuals = {0.0};
    return report;
  }
  // The reference ||b - A x_level|| (z0_ becomes x_level: the free nodes at their mean).
  if (free_in_p_) write_free_nodes();
  const double free_count = ops_.dot(free_, free_);
  const double level = free_count > 0.0 ? ops_.dot(x, free_) / free_count : 0.0;
  ops_.axpby(level, free_, 1.0, z0_);
  double reference = residual_norm(b, z0_, r_[0]);
  if (!(reference > 0.0)) reference = lift_reference;  // x_level solves it, or not finite
  return options.method == Krylov::pcg ? solve_pcg(options, reference)
                                       : solve_vcycle(options, reference);
}

bool stalled(const std::vector<double>& residuals, const SolveOptions& options,
             const std::vector<double>& energy) {
  if (residuals.empty() || options.stall_window < 1) return false;
  // Walking the history: `reference` is the residual the next halving is measured from, and
  // `near` counts the iterations since then whose residual came within 1 / stall_reduction of
  // the best so far; those far above it (CG's rising phase) do not count.
  double best = residuals.front(), reference = best;
  int near = 0;
  for (std::size_t k = 1; k < residuals.size(); ++k) {
    const double r = residuals[k];
    best = std::min(best, r);
    if (r < options.stall_reduction * reference) {
      reference = r;
      near = 0;
    } else if (options.stall_reduction * r <= best) {
      ++near;
    }
  }
  if (near < options.stall_window) return false;
  if (energy.empty()) return true;
  // CG: the error's energy taken off by the last 2 stall_window iterations against the as many
  // before (fewer, half the history each, while it is shorter). CG's energy steps swing over
  // tens of iterations where the residual hovers: windows of 10 compared 0.2-1.3 on a slowly
  // converging checkerboard, of 20 at most 0.1.
  const std::size_t window = static_cast<std::size_t>(options.stall_window);
  if (energy.size() < 2 * window) return false;
  const std::size_t w = std::min(2 * window, energy.size() / 2);
  double last = 0.0, before = 0.0;
  for (std::size_t k = energy.size() - w; k < energy.size(); ++k) last += energy[k];
  for (std::size_t k = energy.size() - 2 * w; k < energy.size() - w; ++k) before += energy[k];
  return !(last < kEnergyStall * before);
}

namespace {

enum class Verdict { go_on, below_tolerance, stalled, diverged, max_iterations };

// Records the relative residual of one more iteration and judges it.
// `energy`: what a CG iteration took off the error's energy (negative: none, a V-cycle).
Verdict record(SolveReport& report, const SolveOptions& options, double relative,
               double energy = -1.0) {
  const double best_before = *std::min_element(report.residuals.begin(), report.residuals.end());
  report.residuals.push_back(relative);
  if (energy >= 0.0) report.energy.push_back(energy);
  ++report.iterations;
  if (!std::isfinite(relative) || relative > options.divergence_factor * best_before)
    return Verdict::diverged;
  // Below the tolerance, or down to the rounding floor known so far: an ending to confirm on
  // the true residual (a floor-bound solve stops there instead of iterating on rounding). Not
  // before the iterations asked for at least, unless down to the floor.
  if (relative <= report.floor ||
      (relative <= options.tolerance && report.iterations >= options.min_iterations))
    return Verdict::below_tolerance;
  if (stalled(report.residuals, options, report.energy)) return Verdict::stalled;
  if (report.iterations >= options.max_iterations) return Verdict::max_iterations;
  return Verdict::go_on;
}

SolveReport::Reason reason_of(Verdict v) {
  switch (v) {
    case Verdict::stalled:
      return SolveReport::Reason::stalled;
    case Verdict::diverged:
      return SolveReport::Reason::diverged;
    case Verdict::max_iterations:
      return SolveReport::Reason::max_iterations;
    default:
      return SolveReport::Reason::converged;
  }
}

void report_iteration(const SolveReport& report, const SolveOptions& options) {
  if (options.on_iteration) options.on_iteration(report.iterations, report.final_residual());
}

}  // namespace

SolveReport Multigrid::solve_vcycle(const SolveOptions& options, double reference) {
  const int x = x_[0], b = b_[0];
  SolveReport report;
  report.reference = reference;
  report.tolerance = options.tolerance;
  report.residuals.push_back(residual_norm(b, x, r_[0]) / reference);
  report.floor = relative_floor(b, x, reference);
  if (report.final_residual() <= options.tolerance && options.min_iterations <= 0) return report;
  if (report.final_residual() <= report.floor) {
    report.at_floor = report.final_residual() > options.tolerance;
    return report;
  }
  for (;;) {
    vcycle(b, x);
    Verdict v = record(report, options, residual_norm(b, x, r_[0]) / reference);
    if (v != Verdict::go_on && report.final_residual() > options.tolerance) {
      // Judged against the floor of this x (the one known came from an earlier x).
      report.floor = relative_floor(b, x, reference);
      report.at_floor = report.final_residual() <= report.floor;
      if (v == Verdict::below_tolerance && !report.at_floor)
        v = report.iterations >= options.max_iterations ? Verdict::max_iterations : Verdict::go_on;
    }
    report.reason = report.at_floor ? SolveReport::Reason::converged : reason_of(v);
    report_iteration(report, options);
    if (v != Verdict::go_on) break;
  }
  return report;
}

// Conjugate gradients preconditioned by one V-cycle from zero (symmetric: forward smoothing
// before the coarse correction, reverse after, an exact bottom solve).
SolveReport Multigrid::solve_pcg(const SolveOptions& options, double reference) {
  const int x = x_[0], b = b_[0], r = pr_, z = z0_, p = p0_, q = q0_;
  SolveReport report;
  report.reference = reference;
  report.tolerance = options.tolerance;
  report.residuals.push_back(residual_norm(b, x, r) / reference);
  report.floor = relative_floor(b, x, reference);
  if (report.final_residual() <= options.tolerance && options.min_iterations <= 0) return report;
  if (report.final_residual() <= report.floor) {
    report.at_floor = report.final_residual() > options.tolerance;
    return report;
  }
  // Decided afresh by every solve, from its own iterations, so that a solve depends on its
  // inputs alone and a restarted run repeats the uninterrupted one bit for bit.
  deflating_ = options.deflate == SolveOptions::Deflate::always && has_deflation();
  if (deflating_) report.deflated_from = 0;
  double rz = 0.0;
  // The next direction is p = z + beta p, formed in the product's pass; 0 starts afresh (p = z).
  double beta = 0.0;
  // Starts (or restarts) the directions from the residual in r.
  auto restart = [&] {
    precondition(r, z);
    rz = ops_.dot(r, z);
    beta = 0.0;
  };
  restart();
  for (;;) {
    const double pq = ops_.update_apply_dot(0, z, beta, p, q);
    Verdict v = Verdict::go_on;
    if (!(pq > 0.0) || !(rz > 0.0)) {
      // Breakdown: rounding at the solution, or an operator that is not positive. Judged on
      // the true residual below like any ending.
      report.residuals.push_back(report.final_residual());
      report.energy.push_back(0.0);
      ++report.iterations;
      v = Verdict::stalled;
    } else {
      const double alpha = rz / pq;
      const double r_norm = root(ops_.cg_update(alpha, p, q, x, r));
      v = record(report, options, r_norm / reference, alpha * rz);
    }
    if (v == Verdict::go_on && !deflating_ && options.deflate == SolveOptions::Deflate::when_slow &&
        report.iterations >= kDeflationTrial && recent_reduction(report) > kDeflationSlow &&
        has_deflation()) {
      // Slow: on with the deflation, and CG's directions again from the current residual.
      deflating_ = true;
      report.deflated_from = report.iterations;
      report_iteration(report, options);
      restart();
      continue;
    }
    if (v == Verdict::go_on) {
      report_iteration(report, options);
      precondition(r, z);
      const double rz_next = ops_.dot(r, z);
      beta = rz_next / rz;
      rz = rz_next;
      continue;
    }
    // An ending: judged on the true residual b - A x, which replaces the recurrence's (they
    // part near rounding).
    report.residuals.back() = residual_norm(b, x, r) / reference;
    report.floor = relative_floor(b, x, reference);
    const double true_relative = report.final_residual();
    report.at_floor = false;
    if (true_relative <= options.tolerance) {
      report.reason = SolveReport::Reason::converged;
    } else if (true_relative <= report.floor) {
      report.reason = SolveReport::Reason::converged;
      report.at_floor = true;
    } else if (v == Verdict::below_tolerance || v == Verdict::stalled) {
      // The recurrence ran ahead of the true residual, or CG broke down: judge the true one,
      // and go on from it while it is not stalled either.
      report.residuals.pop_back();
      const double energy = report.energy.back();
      report.energy.pop_back();
      --report.iterations;
      const Verdict again = record(report, options, true_relative, energy);
      if (again == Verdict::go_on || again == Verdict::below_tolerance) {
        report_iteration(report, options);
        restart();
        continue;
      }
      report.reason = reason_of(again);
    } else {
      report.reason = reason_of(v);
    }
    report_iteration(report, options);
    break;
  }
  return report;
}

}  // namespace heatsim::solver::multigrid
