// The deflation of strong pieces beside the V-cycle (solver/multigrid/deflation.hpp): which
// pieces it finds, its coarse operator against Z^T A Z built another way, and the solves it
// is for: a checkerboard of k = 1 and 1e4 sampled below the grid, whose strong cubes touch
// only along edges, at the default tolerance.
#include "solver/multigrid/deflation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/hierarchy.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/multigrid/multigrid.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver::multigrid {
namespace {

using kernels::LevelOperator;

// A compact level of n[0] x n[1] x n[2] nodes whose conductances are the harmonic means of
// per-node conductivities k(x, y, z), and a node term where `term` > 0.
template <class K>
LevelOperator level_of(std::array<std::int64_t, 3> n, K k, double term = 0.0,
                       std::array<bool, 3> periodic = {false, false, false}) {
  LevelOperator op;
  op.dims = 3;
  op.n = n;
  op.periodic = periodic;
  const std::int64_t np = op.points();
  op.fixed.assign(static_cast<std::size_t>(np), 0);
  op.node_term.assign(static_cast<std::size_t>(np), term);
  for (int a = 0; a < 3; ++a) {
    op.conductance[a].assign(static_cast<std::size_t>(np), 0.0);
    for (std::int64_t i = 0; i < np; ++i) {
      const std::int64_t c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
      std::int64_t d[3] = {c[0], c[1], c[2]};
      if (c[a] + 1 < n[a]) {
        ++d[a];
      } else if (periodic[a]) {
        d[a] = 0;
      } else {
        continue;
      }
      const double k1 = k(c[0], c[1], c[2]), k2 = k(d[0], d[1], d[2]);
      op.conductance[a][static_cast<std::size_t>(i)] = 2.0 * k1 * k2 / (k1 + k2);
    }
  }
  return op;
}

// Cubes of `side` nodes alternating weak (1) and strong (ratio).
auto checkerboard(std::int64_t side, double ratio) {
  return [=](std::int64_t x, std::int64_t y, std::int64_t z) {
    return (x / side + y / side + z / side) % 2 == 1 ? ratio : 1.0;
  };
}

TEST(Deflation, FindsEachStrongCubeOfACheckerboardAsOnePiece) {
  // 4 x 4 x 4 cubes of 5 nodes: 32 strong cubes, touching only along edges and corners.
  const LevelOperator op = level_of({20, 20, 20}, checkerboard(5, 1e4));
  const Deflation d = find_deflation(op);
  ASSERT_EQ(d.pieces, 32);
  std::vector<std::int64_t> nodes(32, 0);
  for (std::int64_t i = 0; i < op.points(); ++i) {
    const std::int64_t x = i % 20, y = (i / 20) % 20, z = i / 400;
    const bool strong = (x / 5 + y / 5 + z / 5) % 2 == 1;
    const std::int32_t g = d.piece[static_cast<std::size_t>(i)];
    EXPECT_EQ(g >= 0, strong) << "node " << i;
    if (g >= 0) ++nodes[static_cast<std::size_t>(g)];
  }
  for (std::int64_t count : nodes) EXPECT_EQ(count, 125);
}

// The CPU's level operations drop a node term of +0 on every node (kernels/cpu/
// cpu_level_ops.cpp): the pieces, diagonal and factor found from the finest level they keep are
// those of the level as given, which the solve's later search relies on.
TEST(Deflation, TheCpuFinestLevelWithoutItsZeroNodeTermGivesTheSameDeflation) {
  LevelOperator level = level_of({20, 20, 20}, checkerboard(5, 1e4));
  for (std::int64_t i = 0; i < level.points(); i += 20)
    level.fixed[static_cast<std::size_t>(i)] = 1;
  const Deflation expected = find_deflation(level);
  ASSERT_GE(expected.pieces, 2);
  auto ops = kernels::make_level_ops("cpu", kernels::Precision::fp64);
  ops->setup(build_hierarchy(level));
  ASSERT_TRUE(ops->keeps_finest_level());
  EXPECT_TRUE(ops->finest_level()->node_term.empty());
  const Deflation d = find_deflation(*ops->finest_level());
  EXPECT_EQ(d.pieces, expected.pieces);
  EXPECT_EQ(d.piece, expected.piece);
  EXPECT_EQ(d.inverse_diagonal, expected.inverse_diagonal);
  EXPECT_EQ(d.factor, expected.factor);
  // A node term that is not +0 everywhere stays.
  level.node_term[7] = 0.5;
  ops->setup(build_hierarchy(level));
  EXPECT_FALSE(ops->finest_level()->node_term.empty());
}

TEST(Deflation, NoneWithoutContrastOrForASingleInclusion) {
  EXPECT_TRUE(find_deflation(level_of({12, 11, 10}, [](auto, auto, auto) { return 237.0; })).empty());
  // A ratio of 20 is no contrast here.
  EXPECT_TRUE(find_deflation(level_of({20, 20, 20}, checkerboard(5, 20.0))).empty());
  // One strong ball in a weak cube: a single piece, which the hierarchy carries.
  const auto ball = [](std::int64_t x, std::int64_t y, std::int64_t z) {
    const double r2 = (x - 9.5) * (x - 9.5) + (y - 9.5) * (y - 9.5) + (z - 9.5) * (z - 9.5);
    return r2 <= 25.0 ? 390.0 : 0.2;
  };
  EXPECT_TRUE(find_deflation(level_of({20, 20, 20}, ball)).empty());
}

// E = Z^T A Z with Z = S^steps Z0, S = I - omega D^-1 A, computed on whole-grid vectors by
// the definition (not on boxes around each piece as find_deflation does), with Dirichlet
// nodes, a node term and a periodic axis so that every rule of A enters.
TEST(Deflation, CoarseOperatorIsZTransposeAZOfTheSmoothedIndicators) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0.5, 2.0);
  const std::array<std::int64_t, 3> n{17, 13, 11};
  std::vector<double> noise(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (double& v : noise) v = jitter(rng);
  const auto k = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    const double base = (x / 4 + y / 4 + z / 4) % 2 == 1 ? 1e3 : 1.0;
    return base * noise[static_cast<std::size_t>((z * n[1] + y) * n[0] + x)];
  };
  LevelOperator op = level_of(n, k, 0.37, {false, true, false});
  const std::int64_t np = op.points();
  for (std::int64_t i = 0; i < np; ++i)
    if (i % n[0] == 0) op.fixed[static_cast<std::size_t>(i)] = 1;  // the x = 0 face held
  const Deflation d = find_deflation(op);
  ASSERT_GE(d.pieces, 2);

  // A on whole vectors: the free rows, fixed neighbours' values left out.
  const auto neighbour = [&](std::int64_t i, int a, int o) -> std::int64_t {
    std::int64_t c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
    c[a] += o;
    if (c[a] < 0 || c[a] >= n[a]) {
      if (!op.periodic[a]) return -1;
      c[a] = (c[a] + n[a]) % n[a];
    }
    return (c[2] * n[1] + c[1]) * n[0] + c[0];
  };
  const auto G = [&](std::int64_t i, int a, int o) {
    const std::int64_t j = neighbour(i, a, o);
    return o > 0 ? op.conductance[a][static_cast<std::size_t>(i)]
                 : op.conductance[a][static_cast<std::size_t>(j)];
  };
  std::vector<double> diag(static_cast<std::size_t>(np), 0.0);
  for (std::int64_t i = 0; i < np; ++i) {
    diag[static_cast<std::size_t>(i)] = op.node_term[static_cast<std::size_t>(i)];
    for (int a = 0; a < 3; ++a)
      for (int o = -1; o <= 1; o += 2)
        if (neighbour(i, a, o) >= 0) diag[static_cast<std::size_t>(i)] += G(i, a, o);
  }
  const auto A = [&](const std::vector<double>& v) {
    std::vector<double> y(v.size(), 0.0);
    for (std::int64_t i = 0; i < np; ++i) {
      if (op.fixed[static_cast<std::size_t>(i)]) continue;
      double s = diag[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(i)];
      for (int a = 0; a < 3; ++a)
        for (int o = -1; o <= 1; o += 2) {
          const std::int64_t j = neighbour(i, a, o);
          if (j >= 0 && !op.fixed[static_cast<std::size_t>(j)]) s -= G(i, a, o) * v[static_cast<std::size_t>(j)];
        }
      y[static_cast<std::size_t>(i)] = s;
    }
    return y;
  };
  const std::size_t m = static_cast<std::size_t>(d.pieces);
  std::vector<std::vector<double>> Z(m, std::vector<double>(static_cast<std::size_t>(np), 0.0));
  for (std::size_t g = 0; g < m; ++g) {
    for (std::int64_t i = 0; i < np; ++i)
      if (d.piece[static_cast<std::size_t>(i)] == static_cast<std::int32_t>(g)) Z[g][static_cast<std::size_t>(i)] = 1.0;
    for (int s = 0; s < kDeflationSteps; ++s) {
      const std::vector<double> w = A(Z[g]);
      for (std::int64_t i = 0; i < np; ++i)
        if (!op.fixed[static_cast<std::size_t>(i)])
          Z[g][static_cast<std::size_t>(i)] -= kDeflationOmega * w[static_cast<std::size_t>(i)] / diag[static_cast<std::size_t>(i)];
    }
  }
  // L L^T from the factor against Z^T A Z.
  for (std::size_t b = 0; b < m; ++b) {
    const std::vector<double> w = A(Z[b]);
    for (std::size_t a = 0; a < m; ++a) {
      double e = 0.0;
      for (std::int64_t i = 0; i < np; ++i) e += Z[a][static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(i)];
      double llt = 0.0;
      for (std::size_t q = 0; q <= std::min(a, b); ++q) llt += d.factor[a * m + q] * d.factor[b * m + q];
      // sqrt(E_aa E_bb) bounds |E_ab| for a positive definite E.
      const double scale = d.factor[a * m + a] * d.factor[b * m + b];
      EXPECT_NEAR(llt, e, 1e-11 * scale) << "E(" << a << ", " << b << ")";
    }
  }
}

// The steady state of `c` with every face convective (h 25 to 300 K) or at 300 K, from 300 K,
// on the CPU's level operations; `pieces` gets the pieces the deflation found.
SolveReport steady_solve(Case c, bool convective, std::int64_t* pieces,
                         SolveOptions::Deflate deflate = SolveOptions::Deflate::when_slow) {
  for (auto& f : c.boundary) {
    f.kind = convective ? kernels::BoundaryKind::convective : kernels::BoundaryKind::dirichlet;
    f.transfer = 25.0;
    f.value = 300.0;
  }
  c.time.method = TimeMethod::steady;
  const auto fields = coefficient_fields(c);
  const kernels::StencilProblem p = make_problem(c, 1.0, fields);
  std::vector<double> u(static_cast<std::size_t>(p.points()), 300.0);
  SolveOptions options;
  options.deflate = deflate;
  ImplicitStepper stepper(p, fields, TimeMethod::steady, 0.0,
                          kernels::make_level_ops("cpu", kernels::Precision::fp64), options);
  *pieces = stepper.deflated_pieces();
  return stepper.advance(u, 0);
}

// The checkerboard of scripts/mg-cases (cubes of L/8 alternating k = 1 and 1e4 in a 50 mm
// cube, a `where` region sampled below the grid, a 1e5 W/m^3 ball in the middle): n - 1 not a
// multiple of 8, so no cube bound lies on a node plane. Its faces as Case leaves them. With
// `foils`, the cubes are shifted by a hundredth of a cube toward the lower faces, which lays a
// ninth layer of cubes 0.0625 mm thick (0.08 of a spacing at 64^3) on the upper faces: foils of
// the other material over the cubes below, which the face nodes' links along those faces take
// (one-node sheets a point smoother and a structured coarsening cannot follow), and which keep
// the hierarchy alone slow and the deflation needed.
Case checkerboard_case(std::int64_t n, bool foils = true) {
  Case c;
  const double L = 0.05, s = L / 8;
  c.grid.dims = 3;
  c.grid.n = {n, n, n};
  c.grid.length = {L, L, L};
  c.materials = {heatsim_tests::material("weak", 1.0, 1000, 1000),
                 heatsim_tests::material("strong", 1e4, 1000, 1000)};
  ShapeSpec where;
  where.kind = ShapeKind::where;
  const std::string shift = foils ? " + " + std::to_string(s / 100) : "";
  const auto cell = [&](const char* v) {
    return "floor((" + std::string(v) + shift + ") / " + std::to_string(s) + ")";
  };
  const std::string cells = "(" + cell("x") + " + " + cell("y") + " + " + cell("z") + ")";
  where.where = cells + " - 2 * floor(" + cells + " / 2) > 0.5";
  c.regions = {heatsim_tests::region("weak"), heatsim_tests::region("strong", where)};
  SourceSpec q;
  q.shape.kind = ShapeKind::ball;
  q.shape.center = {L / 2, L / 2, L / 2};
  q.shape.radius = 0.015;
  q.power_density = 1e5;
  c.sources.push_back(q);
  return c;
}

// The checkerboard solved to steady state. With the foils and without the deflation PCG took
// 146 iterations at 64^3 with convective faces.
SolveReport solve_checkerboard(std::int64_t n, bool convective, std::int64_t* pieces,
                               SolveOptions::Deflate deflate = SolveOptions::Deflate::when_slow,
                               bool foils = true) {
  return steady_solve(checkerboard_case(n, foils), convective, pieces, deflate);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr std::int64_t kCheckerSizes[] = {40};
#else
constexpr std::int64_t kCheckerSizes[] = {40, 64};
#endif

TEST(Deflation, SampledCheckerboardConvergesInFewIterations) {
  for (bool foils : {false, true})
    for (bool convective : {true, false})
      for (std::int64_t n : kCheckerSizes) {
        std::int64_t pieces = 0;
        const SolveReport r =
            solve_checkerboard(n, convective, &pieces, SolveOptions::Deflate::when_slow, foils);
        std::printf("checkerboard%s %s %lld^3: %lld pieces, %s\n", foils ? " with foils" : "",
                    convective ? "convective" : "dirichlet", static_cast<long long>(n),
                    static_cast<long long>(pieces), r.describe().c_str());
        EXPECT_GE(pieces, 256) << n;
        EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
        EXPECT_LE(r.iterations, 25) << n << ": " << r.describe();
        // Without the foils the hierarchy alone takes the cubes, in about ten iterations.
        if (!foils) {
          EXPECT_LE(r.iterations, 12) << n << ": " << r.describe();
          EXPECT_EQ(r.deflated_from, -1) << r.describe();
        }
        // The foils beside convective faces: the hierarchy alone is slow, and the deflation
        // comes on after the trial iterations.
        if (foils && convective) {
          EXPECT_EQ(r.deflated_from, kDeflationTrial) << r.describe();
        }
      }
}

// A 2D checkerboard of 8 x 8 squares of 8 x 8 nodes, k = 1 and 2000, whose last row and
// column carry along themselves one-node sheets of the other material than the squares they
// border (a foil on the upper faces, joined to the squares below only across), as a level
// operator: x- held, and the other faces convective (h = 5 on a unit square) or x+ held and
// the y faces insulated. Such sheets are what a case's sampling once made of a zero-thickness
// layer on the upper faces (a `where` of floor(8 x) at x = 1; docs/performance.md).
LevelOperator sheeted_board(bool convective) {
  const std::int64_t n = 64;
  const double h = 1.0 / (n - 1), transfer = 5.0;
  LevelOperator op;
  op.dims = 2;
  op.n = {n, n, 1};
  const std::int64_t np = op.points();
  op.fixed.assign(static_cast<std::size_t>(np), 0);
  op.node_term.assign(static_cast<std::size_t>(np), 0.0);
  const auto square = [](std::int64_t x, std::int64_t y) {
    return (x / 8 + y / 8) % 2 == 1 ? 2000.0 : 1.0;
  };
  for (int a = 0; a < 2; ++a) op.conductance[a].assign(static_cast<std::size_t>(np), 0.0);
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const auto i = static_cast<std::size_t>(y * n + x);
      const bool edge_x = x == 0 || x == n - 1, edge_y = y == 0 || y == n - 1;
      if (x == 0 || (!convective && x == n - 1)) op.fixed[i] = 1;
      // Convective faces: h times the node's share of each face it lies on.
      if (convective)
        op.node_term[i] = (edge_x ? transfer * h * (edge_y ? 0.5 : 1.0) : 0.0) +
                          (edge_y ? transfer * h * (edge_x ? 0.5 : 1.0) : 0.0);
      for (int a = 0; a < 2; ++a) {
        const std::int64_t x2 = x + (a == 0), y2 = y + (a == 1);
        if (x2 >= n || y2 >= n) continue;
        // Along the last row or column: the sheet, the other material than the square below.
        const bool sheet = (a == 0 && y == n - 1) || (a == 1 && x == n - 1);
        const double k1 = sheet ? 2001.0 - square(x, y) : square(x, y);
        const double k2 = sheet ? 2001.0 - square(x2, y2) : square(x2, y2);
        const double g = 2.0 * k1 * k2 / (k1 + k2);
        // A link along a face has half a cross-section.
        op.conductance[a][i] = (a == 0 ? edge_y : edge_x) ? 0.5 * g : g;
      }
    }
  return op;
}

// The steady state of the sheeted board from 300 K, x- at 310 K (the ambient and x+ at
// 300 K): the first V-cycles take the residual down fast and it then stalls. A trial judged on
// the mean reduction since the start never deflated such solves (30 and 22 iterations in the
// sampled cases); judged on the last kDeflationTrial iterations, the deflation comes on once the
// residual stalls, and the solve takes far fewer iterations than without it.
TEST(Deflation, AStallAfterAFastStartDeflatesToo) {
  for (bool convective : {true, false}) {
    const LevelOperator finest = sheeted_board(convective);
    ASSERT_GE(find_deflation(finest).pieces, 32);
    auto ops = kernels::make_level_ops("cpu", kernels::Precision::fp64);
    Multigrid m(*ops, build_hierarchy(finest));
    const auto points = static_cast<std::size_t>(finest.points());
    std::vector<double> b(points), x0(points, 300.0);
    for (std::size_t i = 0; i < points; ++i) {
      const bool lower = i % 64 == 0;
      if (finest.fixed[i])
        x0[i] = b[i] = lower ? 310.0 : 300.0;
      else
        b[i] = finest.node_term[i] * 300.0;
    }
    const auto solve = [&](SolveOptions::Deflate deflate) {
      ops->upload(m.rhs(), b);
      ops->upload(m.solution(), x0);
      SolveOptions o;
      o.deflate = deflate;
      return m.solve(o);
    };
    const SolveReport r = solve(SolveOptions::Deflate::when_slow);
    const SolveReport plain = solve(SolveOptions::Deflate::never);
    std::printf("2D sheeted board, %s: %s; undeflated %s\n",
                convective ? "convective" : "x faces held", r.describe().c_str(),
                plain.describe().c_str());
    EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
    EXPECT_LE(r.iterations, 20) << r.describe();
    EXPECT_GT(r.deflated_from, kDeflationTrial) << r.describe();
    EXPECT_EQ(plain.reason, SolveReport::Reason::converged) << plain.describe();
    EXPECT_GT(plain.iterations, r.iterations) << plain.describe();
  }
}

// The checkerboard with foils and convective faces converges in fewer iterations with the
// deflation than without it (15 against 10 at 40^3); with it from the first iteration, at most
// as many as when it comes on after the trial.
TEST(Deflation, TheFoilsNeedTheDeflation) {
  const std::int64_t n = kCheckerSizes[0];
  std::int64_t pieces = 0;
  const SolveOptions::Deflate modes[] = {SolveOptions::Deflate::never,
                                         SolveOptions::Deflate::when_slow,
                                         SolveOptions::Deflate::always};
  int iterations[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    const SolveReport r = solve_checkerboard(n, true, &pieces, modes[k]);
    std::printf("checkerboard with foils %lld^3, deflation %s: %s\n", static_cast<long long>(n),
                k == 0   ? "never"
                : k == 1 ? "when slow"
                         : "always",
                r.describe().c_str());
    EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
    iterations[k] = r.iterations;
  }
  EXPECT_GT(iterations[0], iterations[1]) << iterations[0] << " against " << iterations[1];
  EXPECT_LE(iterations[2], iterations[1]);
  EXPECT_LE(iterations[1], iterations[2] + kDeflationTrial);
}

// On the CPU the pieces are found by the first solve that deflates, from the finest level the
// level operations keep: the same pieces and factor as found at set-up, so the same solve to
// the bit (here against a stepper asked for them before its solve); a solve that never
// deflates never finds them.
TEST(Deflation, PiecesFoundByTheSolveAreThoseOfTheSetUp) {
  const std::int64_t n = kCheckerSizes[0];
  Case c = checkerboard_case(n);
  for (auto& f : c.boundary) {
    f.kind = kernels::BoundaryKind::convective;
    f.transfer = 25.0;
    f.value = 300.0;
  }
  c.time.method = TimeMethod::steady;
  const auto fields = coefficient_fields(c);
  const kernels::StencilProblem p = make_problem(c, 1.0, fields);
  const auto stepper = [&] {
    return ImplicitStepper(p, fields, TimeMethod::steady, 0.0,
                           kernels::make_level_ops("cpu", kernels::Precision::fp64));
  };
  ImplicitStepper asked = stepper(), later = stepper();
  const std::int64_t pieces = asked.deflated_pieces();
  EXPECT_GE(pieces, 64);
  EXPECT_TRUE(asked.deflation_found());
  EXPECT_FALSE(later.deflation_found());
  std::vector<double> u(static_cast<std::size_t>(p.points()), 300.0), v(u);
  const SolveReport a = asked.advance(u, 0);
  const SolveReport b = later.advance(v, 0);
  EXPECT_EQ(b.deflated_from, kDeflationTrial) << b.describe();
  EXPECT_TRUE(later.deflation_found());
  EXPECT_EQ(later.deflated_pieces(), pieces);
  EXPECT_EQ(a.residuals, b.residuals);
  EXPECT_EQ(u, v);

  // The homogeneous block: no solve deflates, and none looks for pieces.
  Case plain = c;
  plain.regions = {heatsim_tests::region("weak")};
  const auto plain_fields = coefficient_fields(plain);
  const kernels::StencilProblem q = make_problem(plain, 1.0, plain_fields);
  ImplicitStepper fast(q, plain_fields, TimeMethod::steady, 0.0,
                       kernels::make_level_ops("cpu", kernels::Precision::fp64));
  std::vector<double> w(static_cast<std::size_t>(q.points()), 300.0);
  const SolveReport r = fast.advance(w, 0);
  EXPECT_EQ(r.deflated_from, -1) << r.describe();
  EXPECT_FALSE(fast.deflation_found());
}

// A case the hierarchy alone solves fast (eight copper balls in epoxy, convective faces) has
// pieces but is not deflated: the trial iterations already converge fast.
TEST(Deflation, FastSolvesStayUndeflated) {
  Case c;
  const double L = 0.05;
  c.grid.dims = 3;
  c.grid.n = {33, 33, 33};
  c.grid.length = {L, L, L};
  c.materials = {heatsim_tests::material("epoxy", 0.2, 1200, 1100),
                 heatsim_tests::material("copper", 390, 8960, 385)};
  c.regions = {heatsim_tests::region("epoxy")};
  for (double x : {0.0125, 0.0375})
    for (double y : {0.0125, 0.0375})
      for (double z : {0.0125, 0.0375}) {
        ShapeSpec ball;
        ball.kind = ShapeKind::ball;
        ball.center = {x, y, z};
        ball.radius = 0.008;
        c.regions.push_back(heatsim_tests::region("copper", ball));
      }
  SourceSpec q;
  q.shape = c.regions[1].shape;
  q.power = 2.0;
  c.sources.push_back(q);
  std::int64_t pieces = 0;
  const SolveReport r = steady_solve(c, true, &pieces);
  EXPECT_EQ(pieces, 8);
  EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
  EXPECT_EQ(r.deflated_from, -1) << r.describe();
  EXPECT_LE(r.iterations, 12) << r.describe();
}

}  // namespace
}  // namespace heatsim::solver::multigrid
