#include "solver/stencil.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "solver/expression.hpp"

namespace heatsim::solver {
namespace {

Case unit_case(int dims, std::int64_t n, SchemeKind scheme) {
  Case c;
  c.grid.dims = dims;
  for (int a = 0; a < dims; ++a) {
    c.grid.n[a] = n;
    c.grid.length[a] = 1.0;
  }
  c.physics.alpha = 2.0;
  c.scheme.kind = scheme;
  return c;
}

TEST(Stencil, ClassicWeights) {
  Case c = unit_case(2, 11, SchemeKind::isotropic);  // h = 0.1
  const Stencil lap = laplacian(c);
  const double h2 = 0.01;
  EXPECT_NEAR(lap.at(0, 0) * h2, -20.0 / 6, 1e-12);
  EXPECT_NEAR(lap.at(1, 0) * h2, 4.0 / 6, 1e-12);
  EXPECT_NEAR(lap.at(1, 1) * h2, 1.0 / 6, 1e-12);
  EXPECT_FALSE(lap.is_star());
  EXPECT_TRUE(lap.is_mirror_symmetric());

  Case c3 = unit_case(3, 11, SchemeKind::isotropic);
  const Stencil lap3 = laplacian(c3);
  EXPECT_NEAR(lap3.at(0, 0, 0) * h2, -64.0 / 15, 1e-12);
  EXPECT_NEAR(lap3.at(1, 0, 0) * h2, 7.0 / 15, 1e-12);
  EXPECT_NEAR(lap3.at(1, 1, 0) * h2, 1.0 / 10, 1e-12);
  EXPECT_NEAR(lap3.at(1, 1, 1) * h2, 1.0 / 30, 1e-12);
  double sum = 0;
  for (double w : lap3.weights) sum += w;
  EXPECT_NEAR(sum, 0.0, 1e-9);

  const Stencil star = laplacian(unit_case(3, 11, SchemeKind::order6));
  EXPECT_EQ(star.radius, 3);
  EXPECT_EQ(star.nonzeros(), 19u);
  EXPECT_TRUE(star.is_star());
}

TEST(Stability, KnownLimits) {
  // order2: dt <= h^2 / (2 d alpha); order4 1D: max |lambda| = 16/(3h^2) -> dt <= 3h^2/(8 alpha).
  const double h2 = 0.01, alpha = 2.0;
  EXPECT_NEAR(max_stable_dt(laplacian(unit_case(1, 11, SchemeKind::order2)), alpha),
              h2 / (2 * alpha), 1e-15);
  EXPECT_NEAR(max_stable_dt(laplacian(unit_case(2, 11, SchemeKind::order2)), alpha),
              h2 / (4 * alpha), 1e-15);
  EXPECT_NEAR(max_stable_dt(laplacian(unit_case(3, 11, SchemeKind::order2)), alpha),
              h2 / (6 * alpha), 1e-15);
  EXPECT_NEAR(max_stable_dt(laplacian(unit_case(1, 11, SchemeKind::order4)), alpha),
              3 * h2 / (8 * alpha), 1e-15);
}

TEST(Stability, SymbolOfSAtTheLimit) {
  for (SchemeKind k : {SchemeKind::order2, SchemeKind::order4, SchemeKind::order6,
                       SchemeKind::isotropic}) {
    for (int dims : {2, 3}) {
      Case c = unit_case(dims, 9, k);
      const Stencil lap = laplacian(c);
      const double dt = max_stable_dt(lap, c.physics.alpha);
      EXPECT_LE(max_symbol_magnitude(update_operator(lap, c.physics.alpha * dt)), 1.0 + 1e-12);
      EXPECT_GT(max_symbol_magnitude(update_operator(lap, c.physics.alpha * dt * 1.02)), 1.0);
    }
  }
}

TEST(Stability, CustomAntiDiffusionIsRejected) {
  Case c = unit_case(1, 11, SchemeKind::custom);
  c.scheme.radius = 1;
  c.scheme.weights = {-1.0, 2.0, -1.0};  // minus the Laplacian: unstable for every dt
  EXPECT_EQ(max_stable_dt(laplacian(c), 1.0), 0.0);
  EXPECT_THROW(plan_time(c), std::invalid_argument);
}

TEST(TimePlan, AutoEndAndUnstable) {
  Case c = unit_case(2, 11, SchemeKind::order2);
  c.time.steps = 10;
  TimePlan p = plan_time(c);
  EXPECT_TRUE(p.dt_auto);
  EXPECT_NEAR(p.dt, 0.9 * p.dt_limit, 1e-18);
  EXPECT_EQ(p.steps, 10);

  c.time.steps.reset();
  c.time.end_time = 0.01;
  p = plan_time(c);
  EXPECT_NEAR(p.dt * static_cast<double>(p.steps), 0.01, 1e-15);
  EXPECT_LE(p.dt, 0.9 * p.dt_limit);

  c.time.dt = 2 * p.dt_limit;
  try {
    plan_time(c);
    FAIL() << "an unstable dt must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("largest stable dt"), std::string::npos) << e.what();
  }
}

TEST(InitialField, DirichletNodesTakeTheBoundaryValue) {
  Case c = unit_case(2, 7, SchemeKind::order2);
  c.initial.kind = InitialKind::constant;
  c.initial.value = 3.0;
  c.boundary[0] = {BoundaryKind::dirichlet, 1.0, 0.0, 0.0, {}};
  c.boundary[1] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  c.boundary[2] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  c.boundary[3] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  const std::vector<double> u = initial_field(c);
  for (int y = 0; y < 7; ++y) {
    EXPECT_EQ(u[y * 7 + 0], 1.0);
    EXPECT_EQ(u[y * 7 + 6], 3.0);
  }
}

TEST(InitialField, ExpressionAtEveryNodeAndDirichletNodesStillTakeG) {
  Case c = unit_case(2, 9, SchemeKind::order2);
  c.initial.kind = InitialKind::expression;
  c.initial.expression = "sin(pi * x) * cos(2 * y) + (x > 0.5)";
  c.boundary[0] = {BoundaryKind::dirichlet, -1.0, 0.0, 0.0, {}};
  for (int f = 1; f < 4; ++f) c.boundary[f] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  const std::vector<double> u = initial_field(c);
  ASSERT_EQ(u.size(), 81u);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) {
      const double px = coordinate(c, 0, x), py = coordinate(c, 1, y);
      const double expected =
          x == 0 ? -1.0 : std::sin(M_PI * px) * std::cos(2 * py) + (px > 0.5 ? 1.0 : 0.0);
      EXPECT_EQ(u[static_cast<std::size_t>(y * 9 + x)], expected) << x << ", " << y;
    }
}

TEST(InitialField, ExpressionNotFiniteAtANodeIsRefusedWithTheNode) {
  Case c = unit_case(2, 9, SchemeKind::order2);
  c.initial.kind = InitialKind::expression;
  for (int f = 0; f < 4; ++f) c.boundary[f] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  // log(x) is -inf on the x = 0 face: an error there, but not on a Dirichlet face.
  c.initial.expression = "log(x) + y";
  try {
    initial_field(c);
    FAIL() << "accepted -inf";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("initial.value: the expression is -inf at node (0, 0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(expression_sample_problem(c), "-inf at node (0, 0): x = 0, y = 0");
  c.boundary[0] = {BoundaryKind::dirichlet, 0.0, 0.0, 0.0, {}};
  EXPECT_EQ(initial_field(c)[1], std::log(coordinate(c, 0, 1)));
  EXPECT_EQ(expression_sample_problem(c), "");
  // NaN at an inner node the samples (0, n/2, n-1 per axis) miss: initial_field finds it.
  c.initial.expression = "sqrt(y - 0.2)";
  EXPECT_EQ(expression_sample_problem(c), "nan at node (4, 0): x = 0.5, y = 0");
  c.boundary[2] = {BoundaryKind::dirichlet, 0.0, 0.0, 0.0, {}};
  EXPECT_EQ(expression_sample_problem(c), "");
  try {
    initial_field(c);
    FAIL() << "accepted nan";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nan at node (1, 1)"), std::string::npos) << e.what();
  }
  // A formula that does not compile.
  c.initial.expression = "x +";
  EXPECT_THROW(initial_field(c), std::invalid_argument);
  EXPECT_THROW(expression_sample_problem(c), ExpressionError);
}

TEST(InitialField, ExpressionWrittenAsTheModesFormulaGivesTheModesField) {
  // modes computes amplitude * f(pi * k * x / L) per axis in this order; the formula below
  // does the same operations, so the two fields agree bit for bit.
  Case c = unit_case(2, 13, SchemeKind::order2);
  c.grid.length = {2.0, 0.5, 1.0};
  for (int f = 0; f < 4; ++f) c.boundary[f] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
  c.initial.kind = InitialKind::modes;
  ModeTerm t;
  t.amplitude = 1.0;
  t.k = {3, 2, 0};
  t.cosine = {false, true, false};
  c.initial.modes = {t};
  const std::vector<double> modes = initial_field(c);
  c.initial.kind = InitialKind::expression;
  c.initial.expression = "sin(pi * 3 * x / 2) * cos(pi * 2 * y / 0.5)";
  EXPECT_EQ(initial_field(c), modes);
}

TEST(InitialField, DescribedInOneLine) {
  Case c = unit_case(2, 9, SchemeKind::order2);
  c.initial.kind = InitialKind::gaussian;
  c.initial.center = {0.5, 0.25, 0.0};
  c.initial.width = 0.05;
  EXPECT_EQ(describe_initial(c), "gaussian, amplitude 1 at (0.5, 0.25), width 0.05, background 0");
  c.initial.kind = InitialKind::box;
  c.initial.value = 2.0;
  c.initial.lower = {0.1, 0.2, 0.0};
  c.initial.upper = {0.3, 0.4, 0.0};
  EXPECT_EQ(describe_initial(c), "box, 2 on (0.1, 0.2) - (0.3, 0.4), background 0");
  c.initial.kind = InitialKind::expression;
  c.initial.expression = "sin(pi*x)";
  EXPECT_EQ(describe_initial(c), "expression sin(pi*x)");
  c.initial.kind = InitialKind::file;
  c.initial.path = "out/u.h5";
  EXPECT_EQ(describe_initial(c), "file out/u.h5, dataset u");
  c.initial.kind = InitialKind::modes;
  c.initial.modes.resize(1);
  EXPECT_EQ(describe_initial(c), "modes, 1 term");
  c.initial.kind = InitialKind::constant;
  c.initial.value = -0.5;
  EXPECT_EQ(describe_initial(c), "constant -0.5");
}

TEST(InitialField, ExpressionVariablesAreTheActiveAxes) {
  EXPECT_EQ(expression_variables(1), (std::vector<std::string>{"x"}));
  EXPECT_EQ(expression_variables(3), (std::vector<std::string>{"x", "y", "z"}));
  Case c = unit_case(1, 9, SchemeKind::order2);
  c.initial.kind = InitialKind::expression;
  c.initial.expression = "x + y";
  EXPECT_THROW(initial_field(c), std::invalid_argument);
}

}  // namespace
}  // namespace heatsim::solver
