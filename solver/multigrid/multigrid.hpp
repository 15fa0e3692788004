// The multigrid driver (after AMReX's MLMG): V-cycles over a hierarchy of level operators,
// alone or as the preconditioner of conjugate gradients, ending with a reason as PETSc's
// KSPConvergedReason does. The arithmetic runs through kernels::LevelOps, so the driver never
// knows which backend does it.
//
// Solves A x = b on level 0 (kernels/level_ops.hpp), x holding the fixed nodes' values and the
// initial guess on the free ones. Convergence is relative: ||b - A x|| <= tolerance * ||b0||,
// b0 = b - A x_lift the right-hand side of the free unknowns (x_lift: x with its free nodes set
// to 0, so the fixed values' pull counts as load), 2-norms over the free nodes.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

struct CycleOptions {
  int pre_sweeps = 2;   // red-black Gauss-Seidel sweeps before the coarse correction
  int post_sweeps = 2;  // and after it, in the reverse colour order
  double omega = 1.0;   // over-relaxation of the smoother
  // The coarsest level is solved by conjugate gradients to this relative residual, so that a
  // V-cycle is (to rounding) a fixed symmetric operator, as PCG needs.
  double bottom_tolerance = 1e-13;
};

enum class Krylov { pcg, vcycle };

struct SolveOptions {
  Krylov method = Krylov::pcg;  // CG preconditioned by one V-cycle, or V-cycles alone
  double tolerance = 1e-10;
  int max_iterations = 200;
  // Stalled: the residual shrank by less than stall_reduction (ratio above it) in each of
  // stall_iterations iterations in a row.
  int stall_iterations = 5;
  double stall_reduction = 0.5;
  // Called after every iteration with its number (1, 2, ...) and the relative residual.
  std::function<void(int, double)> on_iteration;
};

struct SolveReport {
  enum class Reason { converged, stalled, max_iterations };
  Reason reason = Reason::converged;
  int iterations = 0;
  double reference = 0.0;         // ||b0||
  std::vector<double> residuals;  // relative residual before the first and after each iteration
  double final_residual() const { return residuals.empty() ? 0.0 : residuals.back(); }
  // Mean reduction per iteration: (final / initial)^(1 / iterations).
  double mean_reduction() const;
  // "converged in 7 iterations to 3.1e-11 (from 1, 0.031 per iteration)".
  std::string describe() const;
};

const char* to_string(SolveReport::Reason r);

class Multigrid {
 public:
  // Sets `ops` up with the hierarchy (finest first) and allocates its work vectors.
  Multigrid(kernels::LevelOps& ops, const std::vector<kernels::LevelOperator>& levels,
            CycleOptions options = {});

  int levels() const { return static_cast<int>(n_.size()); }
  std::int64_t points(int level) const { return n_.at(static_cast<std::size_t>(level)); }
  // The level-0 vectors the caller fills: the right-hand side and the solution.
  int rhs() const { return b_[0]; }
  int solution() const { return x_[0]; }

  // Solves in place: solution() in, solution() out.
  SolveReport solve(const SolveOptions& options);
  // One V-cycle on level 0: x += (approximately) A^-1 (b - A x).
  void vcycle(int b, int x) { cycle(0, b, x); }

 private:
  void cycle(int level, int b, int x);
  void bottom_solve(int b, int x);
  double norm(int v) { return std::sqrt(std::max(0.0, ops_.dot(v, v))); }
  SolveReport solve_pcg(const SolveOptions& options, double reference);
  SolveReport solve_vcycle(const SolveOptions& options, double reference);

  kernels::LevelOps& ops_;
  CycleOptions options_;
  std::vector<std::int64_t> n_;
  std::vector<int> b_, x_, r_;  // per level
  int bottom_p_ = -1, bottom_q_ = -1, bottom_r_ = -1;
  int z0_ = -1, p0_ = -1, q0_ = -1, pr_ = -1;  // level-0 work vectors of PCG
};

}  // namespace heatsim::solver::multigrid
