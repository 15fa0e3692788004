// The multigrid driver (after AMReX's MLMG): V-cycles over a hierarchy of level operators,
// alone or as the preconditioner of conjugate gradients, ending with a reason as PETSc's
// KSPConvergedReason does. The arithmetic runs through kernels::LevelOps, so the driver never
// knows which backend does it.
//
// Solves A x = b on level 0 (kernels/level_ops.hpp), x holding the fixed nodes' values and the
// initial guess on the free ones. The measure is the relative residual ||b - A x|| / ||b0||,
// b0 = b - A x_level, x_level the initial x with its free nodes at their mean (the fixed nodes
// at their values), 2-norms over the free nodes: the load as seen from the temperature level
// the problem sits at, so that neither a uniform offset (300 K on every face, in the ambient
// and inside) nor the faces' pull on it counts as load that the solve has already met. (Against
// b - A x_lift, x_lift the free nodes at 0, layers of k = 1e6 touching 300 K faces pulled so
// hard that a 256^3 start at 300 K read as converged before the first iteration.) Where
// x_level solves the system already, b - A x_lift is the reference. A solve has
// converged when that is at most the tolerance, or when the true residual is down to the
// rounding floor of fp64 for this x: floor = kFloorFactor * eps * || |b| + |A| |x| || (the
// terms whose rounding b - A x carries, LevelOps::magnitude), the attainable limit whatever the
// temperature offset; the report says which. The residual each iteration reports is the one
// the rule judges; CG's recurrence residual is checked against b - A x before the solve ends.
// Stalled: over stall_window iterations with a residual near the best so far (within
// 1 / stall_reduction of it) the residual has not fallen to stall_reduction times where they
// started. Iterations far above the best do not count: CG's residual may rise for a while,
// its error's energy falling all the same, and fall fast after (a preconditioner that misses
// a few modes: 1, 2.1, 4.6, ... for a dozen iterations), which is no stall. Nor is a hover
// while CG's error's energy goes on falling (stalled() below). Diverged: a residual above
// divergence_factor times the best, or not finite.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "deflation.hpp"
#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

struct CycleOptions {
  int pre_sweeps = 2;   // red-black Gauss-Seidel sweeps before the coarse correction
  int post_sweeps = 2;  // and after it, in the reverse colour order
  double omega = 1.0;   // over-relaxation of the smoother
  // The coarsest level is solved directly where it is small enough to factor and the level
  // operations take the factor (bottom_factor.hpp), else by conjugate gradients to this
  // relative residual, so that a V-cycle is (to rounding) a fixed symmetric operator, as PCG
  // needs.
  double bottom_tolerance = 1e-13;
};

enum class Krylov { pcg, vcycle };

struct SolveReport;

struct SolveOptions {
  Krylov method = Krylov::pcg;  // CG preconditioned by one V-cycle, or V-cycles alone
  double tolerance = 1e-10;
  int max_iterations = 200;
  // Iterations taken even where the start is below the tolerance: a nonlinear problem's outer
  // iteration judges its change by the field's move, which a solve that never iterated leaves
  // at 0 while the field is still off by what the tolerance lets through.
  int min_iterations = 0;
  // Stalled: over stall_window iterations near the best residual (within 1 /
  // stall_reduction of it; a rise far above it does not count) the residual did not fall
  // below stall_reduction times where they started (CG's residual need not fall every step),
  // and for CG its error's energy did not fall either (stalled() below).
  int stall_window = 10;
  double stall_reduction = 0.5;
  // Diverged: a residual above divergence_factor times the best so far.
  double divergence_factor = 1e6;
  // PCG's deflation of strong pieces (deflation.hpp), where the operator has them: once a
  // solve proves slow (kDeflationTrial below), from the first iteration, or not at all.
  enum class Deflate { when_slow, always, never };
  Deflate deflate = Deflate::when_slow;
  // Called after every iteration with its number (1, 2, ...) and the relative residual.
  std::function<void(int, double)> on_iteration;
  // Nonlinear problems (temperature-dependent materials, radiation): the outer iterations
  // around the solves. Converged when the largest change of the field in one outer iteration
  // is at most outer_tolerance times the largest |u| (and the solve's own tolerance met).
  int max_outer_iterations = 50;
  // A steady solve whose conductivities vary with temperature takes Newton's steps (Picard's,
  // the conductances at the last iterate, where they do not converge); false: Picard's alone.
  bool newton = true;
  double outer_tolerance = 1e-10;
  // Called after every outer iteration with its number, the largest change (K) and the
  // solve's report.
  std::function<void(int, double, const SolveReport&)> on_outer_iteration;
  // Called with a line worth the user's notice (a nonlinear iteration taken again another way).
  std::function<void(const std::string&)> on_note;
};

// The floor's factor: measured residuals at rounding sit at 0.3-0.7 eps || |b| + |A||x| ||
// (layers of k 1 and 1e6, a checkerboard of 1 and 1e4, at 300 K), so twice that is reached.
constexpr double kFloorFactor = 2.0;
// A solve that ends on a rounding floor above this share of the load (conductivities 1e12 apart
// at 300 K, whose flows' rounding dwarfs the load; or a load of almost nothing) has its field
// resolved to about that share only: its report and the run say so, not "converged".
constexpr double kResolvedFloor = 1e-3;

struct SolveReport {
  enum class Reason { converged, stalled, diverged, max_iterations };
  Reason reason = Reason::converged;
  int iterations = 0;
  double reference = 0.0;         // ||b0||
  double tolerance = 0.0;         // the relative residual asked for
  double floor = 0.0;             // the rounding floor, relative to ||b0|| (0: not computed)
  bool at_floor = false;          // converged on the floor, not below the tolerance
  std::vector<double> residuals;  // relative residual before the first and after each iteration
  // PCG: the error's energy ((e, A e)) each iteration took off, alpha (r, z); none for V-cycles
  // alone. What CG minimises, so it falls while the residual hovers.
  std::vector<double> energy;
  // PCG: the iteration after which the strong pieces were deflated (0: from the start, as
  // SolveOptions::deflate asked), -1: not deflated (Multigrid's kDeflationTrial).
  int deflated_from = -1;
  double final_residual() const { return residuals.empty() ? 0.0 : residuals.back(); }
  // Mean reduction per iteration: (final / initial)^(1 / iterations).
  double mean_reduction() const;
  // "converged in 7 iterations to 3.1e-11 (from 1, 0.031 per iteration)", and for a solve that
  // did not converge, or did on the floor, what that means and what to try.
  std::string describe() const;
};

const char* to_string(SolveReport::Reason r);

// The stall rule above on a history of relative residuals (the first from before any
// iteration, one per iteration after it). With `energy` (SolveReport::energy, one per
// iteration), a hover is a stall only where CG's error has stopped falling too: the energy the
// last 2 stall_window iterations took off is at least kEnergyStall of what as many before took
// off (with a shorter history, its two halves; none before 2 stall_window iterations). A preconditioner that misses many modes (a checkerboard of k = 1 and 1e4 whose
// cubes touch along edges, every face convective) holds the residual near 1 for dozens of
// iterations while each window takes a tenth of the error's energy off; rounding, or an
// iteration that does not converge, takes off as much in one window as in the one before.
bool stalled(const std::vector<double>& residuals, const SolveOptions& options,
             const std::vector<double>& energy = {});
constexpr double kEnergyStall = 0.5;

// PCG turns the deflation of strong pieces on (deflation.hpp) for the rest of a solve once
// its last kDeflationTrial iterations (from the third on) have reduced the residual by less
// than kDeflationSlow per iteration: the last ones, not all since the start, since the first
// V-cycles can take a checkerboard's residual down fast before it stalls (each solve decides
// for itself, so that restarts repeat a run bit for bit): where
// the hierarchy alone converges fast (separate inclusions it carries, 8 copper
// balls in epoxy in 10 iterations) the deflation's passes, about 70% of a V-cycle's, would cost
// more than the iterations they save.
constexpr int kDeflationTrial = 3;
constexpr double kDeflationSlow = 0.5;

class Multigrid {
 public:
  // Sets `ops` up with the hierarchy (finest first; LevelOps::adopt, so a hierarchy passed as
  // a temporary is moved, not copied) and allocates its work vectors.
  Multigrid(kernels::LevelOps& ops, std::vector<kernels::LevelOperator> levels,
            CycleOptions options = {});

  // Replaces the hierarchy (LevelOps::adopt_replacement: a hierarchy passed as a temporary is
  // moved, not copied): the level-0 vectors, rhs() and solution() among them, keep their ids
  // and values. The finest level keeps its points.
  void replace_levels(std::vector<kernels::LevelOperator> levels);
  // Lets the levels go before the next replace_levels (LevelOps::release_levels), so that the
  // next hierarchy is built without them beside it. The level-0 vectors stay, for upload and
  // download; solve() throws std::logic_error until the levels are replaced.
  void release_levels();
  // Whether replace_finest is offered (LevelOps::replaces_finest) and the levels are there.
  bool replaces_finest() const { return !released_ && ops_.replaces_finest(); }
  // Replaces the finest level's operator alone (LevelOps::release_finest, then replace_finest):
  // the coarse levels stay, built for the operator before, a preconditioner for a nearby one
  // (a nonlinear solve's later outer iterations). The pieces are found again when a solve
  // needs them (where the level operations keep the finest level on the host), or now where
  // the operator before had them. The level has the old one's shape and fixed flags.
  void replace_finest(kernels::LevelOperator level);
  // Lets the finest level's operator go before the next replace_finest, so that the next one
  // is built without it beside it; solve() must not run until it is replaced.
  void release_finest() { ops_.release_finest(); }

  int levels() const { return static_cast<int>(n_.size()); }
  std::int64_t points(int level) const { return n_.at(static_cast<std::size_t>(level)); }
  // The level-0 vectors the caller fills: the right-hand side and the solution.
  int rhs() const { return b_[0]; }
  int solution() const { return x_[0]; }
  // A level-0 vector no solve reads before it writes it (CG's directions): free between
  // solves, for a caller that assembles rhs() from parts it does not keep.
  int scratch() const { return p0_; }

  // The strong pieces that the deflation would solve beside the V-cycle (0: none;
  // deflation.hpp; found now if no solve has needed them yet), and whether the last solve did.
  std::int64_t deflated_pieces() {
    has_deflation();
    return deflation_.pieces;
  }
  // Whether the pieces have been found (at set-up where the level operations do not keep the
  // finest level, else by the first solve that deflates, or deflated_pieces()).
  bool deflation_found() const { return !deflation_pending_; }
  bool deflating() const { return deflating_; }

  // Solves in place: solution() in, solution() out.
  SolveReport solve(const SolveOptions& options);
  // One V-cycle on level 0: x += (approximately) A^-1 (b - A x).
  void vcycle(int b, int x) { cycle(0, b, x); }

 private:
  // The vectors of the levels below the finest, and the bottom solver's.
  void create_coarse_vectors(const std::vector<std::int64_t>& points);
  // One V-cycle from `level` down: x += (approximately) A^-1 (b - A x); `from_zero`: x = 0
  // first (the correction of a coarser level, or z = M r).
  void cycle(int level, int b, int x, bool from_zero = false);
  void bottom_solve(int b, int x, bool from_zero);
  // Gives the coarsest level's factor (bottom_factor.hpp) to the level operations: the bottom
  // solve is then theirs, direct (direct_bottom_), where they take it; else conjugate gradients.
  void use_bottom_factor(int level, std::optional<kernels::BottomFactor> factor);
  // Takes the deflation of the finest level's strong pieces (find_deflation), where the
  // backend can sum over pieces (none otherwise), and its vectors on first use.
  void use_deflation(Deflation deflation);
  // Finds the pieces if they are still to be found (from the finest level the level operations
  // keep); whether there are any.
  bool has_deflation();
  // PCG's preconditioner: z = M r, M the V-cycle from zero, with the pieces' coarse space
  // solved before and after it while deflating_. Uses q0_ as scratch.
  void precondition(int r, int z);
  // z = Z E^-1 Z^T (r - w) (w < 0: r alone), Z = S^steps Z0 (deflation.hpp); t_, u_ and q0_
  // are its scratch (z may be t_: it is written after t_ is spent).
  void deflate(int r, int w, int z);
  // v = S v = v - omega D^-1 A v, and v = S^T v = v - omega A D^-1 v.
  void jacobi_step(int v);
  void jacobi_step_adjoint(int v);
  double norm(int v) { return root(ops_.dot(v, v)); }
  // ||r|| from r . r (rounding may leave a sum of squares below 0 only where it is 0).
  static double root(double squared) { return std::sqrt(std::max(0.0, squared)); }
  // r = b - A x on level 0; returns ||r||.
  double residual_norm(int b, int x, int r) { return root(ops_.residual_norm(0, b, x, r)); }
  // The rounding floor of b - A x on level 0, relative to `reference`.
  double relative_floor(int b, int x, double reference);
  SolveReport solve_pcg(const SolveOptions& options, double reference);
  SolveReport solve_vcycle(const SolveOptions& options, double reference);

  kernels::LevelOps& ops_;
  CycleOptions options_;
  std::vector<std::int64_t> n_;
  std::vector<int> b_, x_, r_;  // per level
  int bottom_p_ = -1, bottom_q_ = -1, bottom_r_ = -1, bottom_level_ = -1;
  bool direct_bottom_ = false;
  int z0_ = -1, p0_ = -1, q0_ = -1, pr_ = -1;  // level-0 work vectors of PCG
  int magnitude_ = -1;  // level 0: for relative_floor (q0_'s vector)
  // Level 0: 1 on the free nodes, 0 on the fixed. Where the level operations keep the finest
  // level and their vectors in host memory, p0_'s vector, written from the fixed flags at each
  // solve's start (free_in_p_): no vector of its own beside the levels.
  int free_ = -1;
  bool free_in_p_ = false;
  void write_free_nodes();
  Deflation deflation_;
  bool deflation_pending_ = false;  // find_deflation still to run on ops_.finest_level()
  bool deflating_ = false;
  bool released_ = false;  // release_levels() until replace_levels()
  int inverse_diagonal_ = -1, t_ = -1, u_ = -1;  // level 0: the deflation's (-1: none yet)
  std::vector<double> piece_values_;
};

}  // namespace heatsim::solver::multigrid
