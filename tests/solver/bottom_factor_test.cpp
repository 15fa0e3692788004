// The coarsest level's direct solve (solver/multigrid/bottom_factor.hpp): the factor solves the
// level's own operator (compact and Galerkin stencil levels, fixed and void nodes, 1D to 3D),
// its inverse is the same solve, it refuses what it cannot factor, the CPU level operations'
// bottom_solve is the factor's solve, and a one-level hierarchy whose finest level is replaced
// is factored again.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/multigrid/bottom_factor.hpp"
#include "solver/multigrid/hierarchy.hpp"
#include "solver/multigrid/multigrid.hpp"

namespace heatsim::solver::multigrid {
namespace {

using kernels::BottomFactor;
using kernels::LevelOperator;

// A compact level of random conductances (over `decades` decades) and node terms, every 11th
// node fixed and, in 3D, a few void nodes whose faces do not conduct.
LevelOperator random_compact(std::mt19937& rng, int dims, std::array<std::int64_t, 3> n,
                             double decades = 3.0, double node_term = 0.01) {
  LevelOperator op;
  op.dims = dims;
  op.n = {1, 1, 1};
  for (int a = 0; a < dims; ++a) op.n[a] = n[a];
  const std::int64_t np = op.points();
  std::uniform_real_distribution<double> g(0.5, 2.0), e(0.0, decades);
  op.node_term.resize(static_cast<std::size_t>(np));
  for (auto& v : op.node_term) v = node_term * g(rng);
  op.fixed.assign(static_cast<std::size_t>(np), 0);
  for (std::int64_t i = 3; i < np; i += 11) op.fixed[static_cast<std::size_t>(i)] = 1;
  if (dims == 3 && np > 40) op.fixed[static_cast<std::size_t>(np / 2)] = kernels::kRemovedNode;
  for (int a = 0; a < dims; ++a) {
    op.conductance[a].resize(static_cast<std::size_t>(np));
    const std::int64_t stride = a == 0 ? 1 : a == 1 ? op.n[0] : op.n[0] * op.n[1];
    for (std::int64_t i = 0; i < np; ++i) {
      const std::int64_t c = a == 0 ? i % op.n[0] : a == 1 ? i / op.n[0] % op.n[1] : i / stride;
      const bool beyond = c == op.n[a] - 1;
      const bool void_face = !beyond && (op.fixed[static_cast<std::size_t>(i)] == 2 ||
                                         op.fixed[static_cast<std::size_t>(i + stride)] == 2);
      op.conductance[a][static_cast<std::size_t>(i)] =
          beyond || void_face ? 0.0 : g(rng) * std::pow(10.0, e(rng));
    }
  }
  return op;
}

// A v on the free nodes (0 on the fixed ones), the fixed nodes' values taken as 0: the
// operator the correction solves with, written from the level's definition.
std::vector<double> product(const LevelOperator& op, const std::vector<double>& v) {
  const std::int64_t np = op.points();
  std::vector<double> out(static_cast<std::size_t>(np), 0.0);
  const auto value = [&](std::int64_t j) { return op.fixed[j] ? 0.0 : v[j]; };
  for (std::int64_t i = 0; i < np; ++i) {
    if (op.fixed[i]) continue;
    const std::int64_t c[3] = {i % op.n[0], i / op.n[0] % op.n[1], i / (op.n[0] * op.n[1])};
    double s = 0.0;
    if (op.stencil_form()) {
      for (int k = 0; k < kernels::stencil_points(op.dims); ++k) {
        std::int64_t j[3] = {c[0], c[1], c[2]};
        bool inside = true;
        for (int a = 0; a < op.dims; ++a) {
          j[a] += kernels::stencil_offset(k, a);
          inside = inside && j[a] >= 0 && j[a] < op.n[a];
        }
        if (inside) s += op.stencil[k * np + i] * value((j[2] * op.n[1] + j[1]) * op.n[0] + j[0]);
      }
    } else {
      s = op.node_term[i] * v[i];
      for (int a = 0; a < op.dims; ++a) {
        const std::int64_t stride = a == 0 ? 1 : a == 1 ? op.n[0] : op.n[0] * op.n[1];
        if (c[a] + 1 < op.n[a]) s += op.conductance[a][i] * (v[i] - value(i + stride));
        if (c[a] > 0) s += op.conductance[a][i - stride] * (v[i] - value(i - stride));
      }
    }
    out[i] = s;
  }
  return out;
}

std::vector<double> random_values(std::mt19937& rng, std::int64_t n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

// The largest |A x - b| over the free nodes, relative to the largest |b|.
double relative_misfit(const LevelOperator& op, const std::vector<double>& x,
                       const std::vector<double>& b) {
  const std::vector<double> ax = product(op, x);
  double misfit = 0.0, size = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (op.fixed[i]) continue;
    misfit = std::max(misfit, std::abs(ax[i] - b[i]));
    size = std::max(size, std::abs(b[i]));
  }
  return misfit / size;
}

// Solves op x = b by the factor (x poisoned on the fixed nodes first, which it must keep) and,
// where affordable, by its inverse, and checks both.
void expect_solves(const LevelOperator& op, std::mt19937& rng, const char* what) {
  SCOPED_TRACE(what);
  const auto factor = factor_bottom(op);
  ASSERT_TRUE(factor.has_value());
  EXPECT_EQ(factor->points, op.points());
  const std::vector<double> b = random_values(rng, op.points());
  std::vector<double> x(b.size(), 0.0), work(static_cast<std::size_t>(factor->rows()));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (op.fixed[i]) x[i] = 1234.5;
  factor->solve_add(b.data(), x.data(), work.data());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (op.fixed[i]) {
      ASSERT_EQ(x[i], 1234.5) << "fixed node " << i;
    }
  }
  std::vector<double> free_x = x;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (op.fixed[i]) free_x[i] = 0.0;
  EXPECT_LT(relative_misfit(op, free_x, b), 1e-11);
  if (!factor->inverse_affordable()) return;
  // The inverse: A^-1 b row by row, the same values to rounding.
  const std::int64_t m = factor->rows();
  const std::vector<double> inverse = factor->inverse();
  ASSERT_EQ(inverse.size(), static_cast<std::size_t>(m * m));
  double largest = 0.0, apart = 0.0;
  for (std::int64_t r = 0; r < m; ++r) {
    double s = 0.0;
    for (std::int64_t c = 0; c < m; ++c)
      s += inverse[static_cast<std::size_t>(r * m + c)] * b[factor->node[c]];
    largest = std::max(largest, std::abs(free_x[factor->node[r]]));
    apart = std::max(apart, std::abs(s - free_x[factor->node[r]]));
    EXPECT_EQ(inverse[static_cast<std::size_t>(r * m + (m - 1 - r))],
              inverse[static_cast<std::size_t>((m - 1 - r) * m + r)]);
  }
  EXPECT_LT(apart, 1e-11 * largest);
}

TEST(BottomFactor, SolvesCompactLevelsInOneTwoAndThreeDimensions) {
  std::mt19937 rng(7);
  expect_solves(random_compact(rng, 1, {37, 1, 1}), rng, "1D, 37 nodes");
  expect_solves(random_compact(rng, 2, {9, 13, 1}), rng, "2D, 9 x 13");
  expect_solves(random_compact(rng, 3, {5, 4, 7}), rng, "3D, 5 x 4 x 7 with a void node");
  expect_solves(random_compact(rng, 3, {4, 3, 61}), rng, "3D rod, 4 x 3 x 61");
  // Six decades of conductance and no node term: held by the fixed nodes alone.
  expect_solves(random_compact(rng, 3, {6, 5, 4}, 6.0, 0.0), rng, "3D, six decades");
}

TEST(BottomFactor, SolvesTheGalerkinLevelsOfAHierarchy) {
  std::mt19937 rng(11);
  const auto levels = build_hierarchy(random_compact(rng, 3, {23, 17, 29}), 64);
  ASSERT_GE(levels.size(), 3u);
  for (std::size_t l = 1; l < levels.size(); ++l) {
    ASSERT_TRUE(levels[l].stencil_form());
    expect_solves(levels[l], rng, l + 1 == levels.size() ? "coarsest" : "coarse level");
  }
  const auto flat = build_hierarchy(random_compact(rng, 2, {41, 33, 1}), 16);
  ASSERT_GE(flat.size(), 3u);
  expect_solves(flat.back(), rng, "2D coarsest");
}

TEST(BottomFactor, TheBandFollowsTheShorterAxes) {
  std::mt19937 rng(3);
  // A column of 3 x 4 nodes, 50 long along x: numbered with x outermost, its band is the
  // 7-point operator's 3 x 4, not 50 x 4.
  const LevelOperator column = random_compact(rng, 3, {50, 3, 4});
  const auto factor = factor_bottom(column);
  ASSERT_TRUE(factor.has_value());
  EXPECT_LE(factor->band, 12);
}

TEST(BottomFactor, RefusesWhatItCannotFactor) {
  std::mt19937 rng(5);
  LevelOperator periodic = random_compact(rng, 3, {5, 4, 6});
  periodic.periodic[2] = true;
  EXPECT_FALSE(factor_bottom(periodic).has_value()) << "a periodic axis";
  LevelOperator held = random_compact(rng, 2, {5, 4, 1});
  std::fill(held.fixed.begin(), held.fixed.end(), 1);
  EXPECT_FALSE(factor_bottom(held).has_value()) << "no free node";
  LevelOperator floating = random_compact(rng, 3, {5, 4, 6}, 2.0, 0.0);
  std::fill(floating.fixed.begin(), floating.fixed.end(), 0);
  EXPECT_FALSE(factor_bottom(floating).has_value()) << "singular: nothing holds it";
  LevelOperator big = random_compact(rng, 3, {60, 60, 60});
  EXPECT_FALSE(factor_bottom(big).has_value()) << "past the work limit";
  LevelOperator long_rod = random_compact(rng, 3, {3, 3, 400});
  const auto rod = factor_bottom(long_rod);
  ASSERT_TRUE(rod.has_value()) << "a long rod factors";
  EXPECT_FALSE(rod->inverse_affordable()) << "but is past the inverse's rows";
}

TEST(BottomFactor, TheCpuBottomSolveIsTheFactorsSolve) {
  std::mt19937 rng(13);
  auto levels = build_hierarchy(random_compact(rng, 3, {4, 3, 61}), 64);
  ASSERT_GE(levels.size(), 2u);
  const int last = static_cast<int>(levels.size()) - 1;
  const LevelOperator coarsest = levels.back();
  const auto factor = factor_bottom(coarsest);
  ASSERT_TRUE(factor.has_value());
  auto ops = kernels::make_level_ops("cpu", kernels::Precision::fp64);
  ops->setup(levels);
  EXPECT_THROW(ops->bottom_solve(last, 0, 0, 0, true), std::logic_error) << "no factor yet";
  ASSERT_TRUE(ops->set_bottom_factor(last, *factor));
  const std::int64_t np = coarsest.points();
  const int b = ops->create_vector(last), x = ops->create_vector(last),
            r = ops->create_vector(last);
  std::vector<double> bv = random_values(rng, np);
  for (std::size_t i = 0; i < bv.size(); ++i)
    if (coarsest.fixed[i]) bv[i] = 0.0;  // as restriction leaves them
  ops->upload(b, bv);
  ops->upload(x, random_values(rng, np));  // from zero: not read
  ops->bottom_solve(last, b, x, r, true);
  std::vector<double> got, want(bv.size(), 0.0), work(static_cast<std::size_t>(factor->rows()));
  ops->download(x, got);
  factor->solve_add(bv.data(), want.data(), work.data());
  EXPECT_EQ(got, want);
  EXPECT_LT(relative_misfit(coarsest, got, bv), 1e-11);
  // From a start: x += A^-1 (b - A x), the residual the level operations form.
  std::vector<double> start = random_values(rng, np), residual;
  for (std::size_t i = 0; i < start.size(); ++i)
    if (coarsest.fixed[i]) start[i] = 0.0;
  ops->upload(x, start);
  ops->residual(last, b, x, r);
  ops->download(r, residual);
  ops->bottom_solve(last, b, x, r, false);
  ops->download(x, got);
  want = start;
  factor->solve_add(residual.data(), want.data(), work.data());
  EXPECT_EQ(got, want);
  // A new hierarchy drops the factor.
  ops->setup(levels);
  EXPECT_THROW(ops->bottom_solve(last, b, x, r, true), std::logic_error);
}

TEST(BottomFactor, AOneLevelHierarchyIsFactoredAgainWhenItsFinestLevelIsReplaced) {
  std::mt19937 rng(17);
  const LevelOperator first = random_compact(rng, 3, {4, 4, 3}, 1.0);
  LevelOperator second = first;
  for (auto& g : second.conductance[0]) g *= 50.0;
  ASSERT_EQ(build_hierarchy(first, 64).size(), 1u);
  auto ops = kernels::make_level_ops("cpu", kernels::Precision::fp64);
  Multigrid mg(*ops, {first});
  SolveOptions o;
  o.tolerance = 1e-10;
  const auto solve_in = [&](const LevelOperator& op) {
    std::vector<double> b = random_values(rng, op.points()), x(b.size(), 0.0);
    for (std::size_t i = 0; i < b.size(); ++i)
      if (op.fixed[i]) b[i] = 0.0;
    ops->upload(mg.rhs(), b);
    ops->upload(mg.solution(), x);
    const SolveReport report = mg.solve(o);
    EXPECT_EQ(report.reason, SolveReport::Reason::converged);
    return report.iterations;
  };
  // The preconditioner is A^-1 itself: one PCG iteration, before the replacement and after it
  // (a factor of the first operator would take several for the second, 50 times stiffer
  // along x).
  EXPECT_LE(solve_in(first), 1);
  mg.replace_finest(second);
  EXPECT_LE(solve_in(second), 1);
}

// A chain's coarsest level is factored: by default its hierarchy stops at kCoarsest1D nodes or
// fewer, at kCoarsest1DPeriodic on a periodic axis (not factored), and a caller's own size holds.
TEST(BottomFactor, OneDimensionalHierarchiesStopWhereTheirCoarsestLevelIsFactored) {
  std::mt19937 rng(19);
  const LevelOperator chain = random_compact(rng, 1, {1001, 1, 1});
  const auto levels = build_hierarchy(chain);
  ASSERT_GE(levels.size(), 2u);
  EXPECT_LE(levels.back().points(), kCoarsest1D);
  EXPECT_GT(levels[levels.size() - 2].points(), kCoarsest1D);
  EXPECT_TRUE(factor_bottom(levels.back()).has_value());
  EXPECT_LE(build_hierarchy(chain, 8).back().points(), 8);
  LevelOperator ring = chain;
  ring.periodic[0] = true;
  for (auto& g : ring.conductance[0]) g = g == 0.0 ? 1.0 : g;  // the wrap's face too
  EXPECT_LE(build_hierarchy(ring).back().points(), kCoarsest1DPeriodic);
  EXPECT_EQ(default_coarsest_points(3, false), kCoarsestPoints);
}

}  // namespace
}  // namespace heatsim::solver::multigrid
