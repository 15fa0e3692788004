// Materials on the node grid: which node gets which material (regions in order, inclusive box
// bounds, formulas, integer maps), the coefficient and source fields built from them, the
// Gershgorin stability limit, time planning with fields, per-material summaries, and the
// schedules that scale sources and faces.
#include "solver/materials.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver {
namespace {

Case grid_case(int dims, std::array<std::int64_t, 3> n, std::array<double, 3> length) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = n;
  c.grid.length = length;
  for (int a = dims; a < 3; ++a) c.grid.n[a] = 1;
  return c;
}

using heatsim_tests::box;
using heatsim_tests::material;
using heatsim_tests::region;

ShapeSpec where(const std::string& formula) {
  ShapeSpec s;
  s.kind = ShapeKind::where;
  s.where = formula;
  return s;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Simpson's rule on a fine grid: an independent value of a schedule's mean.
double numeric_mean(const kernels::Schedule& s, double t0, double t1) {
  const int n = 20000;
  const double h = (t1 - t0) / n;
  double sum = s.at(t0) + s.at(t1);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4.0 : 2.0) * s.at(t0 + i * h);
  return sum * h / 3.0 / (t1 - t0);
}

TEST(Schedule, TableIsPiecewiseLinearAndConstantBeyondItsEnds) {
  kernels::Schedule s;
  s.table = {{0.0, 0.0}, {1.0, 2.0}, {3.0, 2.0}, {4.0, 0.0}};
  EXPECT_EQ(s.at(-1.0), 0.0);
  EXPECT_EQ(s.at(0.5), 1.0);
  EXPECT_EQ(s.at(2.0), 2.0);
  EXPECT_EQ(s.at(3.5), 1.0);
  EXPECT_EQ(s.at(10.0), 0.0);
  EXPECT_FALSE(s.constant());
  // Means: the integral of the linear pieces over the interval.
  EXPECT_DOUBLE_EQ(s.mean(0.0, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(s.mean(0.5, 3.5), (0.75 + 4.0 + 0.75) / 3.0);
  EXPECT_DOUBLE_EQ(s.mean(-2.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(s.mean(-1.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(s.mean(3.5, 6.0), 0.5 * (1.0 + 0.0) * 0.5 / 2.5);
  EXPECT_EQ(s.mean(0.5, 0.5), s.at(0.5));
  for (const auto& [t0, t1] : {std::pair{0.1, 0.37}, {0.9, 3.2}, {2.5, 4.5}})
    EXPECT_NEAR(s.mean(t0, t1), numeric_mean(s, t0, t1), 1e-9) << t0 << " " << t1;
}

TEST(Schedule, SineFormMeanIsItsIntegral) {
  kernels::Schedule s{1.0, 0.5, 2.0, {}};
  EXPECT_DOUBLE_EQ(s.at(0.125), 1.5);         // sin(pi/2)
  EXPECT_NEAR(s.mean(0.0, 0.5), 1.0, 1e-15);  // one whole period
  EXPECT_DOUBLE_EQ(s.mean(0.0, 0.25), 1.0 + 0.5 * 2.0 / M_PI);
  for (const auto& [t0, t1] : {std::pair{0.0, 0.01}, {0.3, 0.41}, {1.0, 2.7}})
    EXPECT_NEAR(s.mean(t0, t1), numeric_mean(s, t0, t1), 1e-9) << t0 << " " << t1;
  const kernels::Schedule constant{3.0, 0.0, 0.0, {}};
  EXPECT_TRUE(constant.constant());
  EXPECT_EQ(constant.mean(0.0, 5.0), 3.0);
}

TEST(MaterialIds, BoxBoundsAreInclusiveAndLaterRegionsWin) {
  Case c = grid_case(1, {11, 1, 1}, {1.0, 1, 1});  // x = 0, 0.1, ..., 1
  c.materials = {material("a", 1, 1, 1), material("b", 2, 1, 1), material("c", 3, 1, 1)};
  c.regions = {region("a"), region("b", box({0.3, 0, 0}, {0.6, 0, 0})),
               region("c", box({0.6, 0, 0}, {0.7, 0, 0}))};
  const std::vector<std::int32_t> ids = material_ids(c);
  // 0.3 and 0.6 (= 3 * 0.1, 6 * 0.1 with rounding) are on the bounds and inside; c wins at 0.6.
  const std::vector<std::int32_t> expected{0, 0, 0, 1, 1, 1, 2, 2, 0, 0, 0};
  EXPECT_EQ(ids, expected);
}

TEST(MaterialIds, BallAndFormulaRegionsIn2D) {
  Case c = grid_case(2, {5, 5, 1}, {1.0, 1.0, 1});  // h = 0.25
  c.materials = {material("mold", 1, 1, 1), material("die", 2, 1, 1), material("cap", 3, 1, 1)};
  ShapeSpec ball;
  ball.kind = ShapeKind::ball;
  ball.center = {0.5, 0.5, 0};
  ball.radius = 0.25;
  c.regions = {region("mold"), region("die", ball), region("cap", where("y > 0.8 && x < 0.3"))};
  const std::vector<std::int32_t> ids = material_ids(c);
  const auto at = [&](int x, int y) { return ids[static_cast<std::size_t>(y * 5 + x)]; };
  EXPECT_EQ(at(2, 2), 1);
  EXPECT_EQ(at(1, 2), 1);  // distance 0.25 = radius: inside
  EXPECT_EQ(at(2, 3), 1);
  EXPECT_EQ(at(1, 1), 0);  // distance 0.35
  EXPECT_EQ(at(0, 4), 2);
  EXPECT_EQ(at(1, 4), 2);
  EXPECT_EQ(at(2, 4), 0);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 5);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 2);
}

TEST(MaterialIds, FileMapNamesIdsAndUnlistedIdsKeepEarlierMaterials) {
  Case c = grid_case(1, {6, 1, 1}, {1.0, 1, 1});
  c.materials = {material("a", 1, 1, 1), material("b", 2, 1, 1), material("c", 3, 1, 1)};
  RegionSpec map;
  map.shape.kind = ShapeKind::file;
  map.ids = {{1, "b"}, {7, "c"}};
  map.map = {0, 1, 7, 7, 3, 1};
  c.regions = {region("a"), map};
  EXPECT_EQ(material_ids(c), (std::vector<std::int32_t>{0, 1, 2, 2, 0, 1}));
  c.regions[1].map.pop_back();
  EXPECT_NE(message_of([&] { material_ids(c); }).find("regions[1].file"), std::string::npos);
}

TEST(MaterialIds, ErrorsNameTheCountTheNodeAndTheRegion) {
  Case c = grid_case(2, {11, 6, 1}, {1.0, 0.5, 1});
  c.materials = {material("a", 1, 1, 1)};
  c.regions = {region("a", box({0, 0, 0}, {0.45, 0.5, 0}))};  // x = 0 .. 0.4: 5 columns
  std::string m = message_of([&] { material_ids(c); });
  EXPECT_NE(m.find("36 nodes have no material"), std::string::npos) << m;
  EXPECT_NE(m.find("x = 0.5, y = 0"), std::string::npos) << m;

  c.regions.push_back(region("steel"));
  m = message_of([&] { material_ids(c); });
  EXPECT_NE(m.find("regions[1].material: unknown material 'steel'"), std::string::npos) << m;

  c.regions = {region("a", where("x < "))};
  m = message_of([&] { material_ids(c); });
  EXPECT_NE(m.find("regions[0].where"), std::string::npos) << m;

  // No materials and no regions: the homogeneous shorthand, material 0 everywhere.
  Case plain = grid_case(2, {4, 3, 1}, {1, 1, 1});
  EXPECT_EQ(material_ids(plain), std::vector<std::int32_t>(12, 0));
}

TEST(CoefficientFields, ShorthandAndMaterialsGiveKAndCapacity) {
  Case c = grid_case(1, {5, 1, 1}, {1.0, 1, 1});
  c.physics.alpha = 0.3;
  c.physics.source = 2.0;
  auto f = coefficient_fields(c);
  EXPECT_EQ(f->conductivity, std::vector<double>(5, 0.3));
  EXPECT_EQ(f->capacity, std::vector<double>(5, 1.0));
  ASSERT_EQ(f->sources.size(), 1u);  // physics.source: q = f * rho*c_p = f
  EXPECT_EQ(f->sources[0].density, std::vector<double>(5, 2.0));
  EXPECT_TRUE(f->sources[0].schedule.constant());

  c.materials = {material("a", 4, 2, 3), material("b", 1, 5, 7)};
  c.regions = {region("a"), region("b", box({0.5, 0, 0}, {1, 0, 0}))};
  f = coefficient_fields(c);
  EXPECT_EQ(f->conductivity, (std::vector<double>{4, 4, 1, 1, 1}));
  // Node 2 sits on the interface at x = 0.5: its control volume is half a, half b
  // (solver/subgrid.hpp), and so is its capacity.
  EXPECT_EQ(f->capacity, (std::vector<double>{6, 6, 20.5, 35, 35}));
  // physics.source keeps u_t gaining f in each material: q = f * rho*c_p.
  EXPECT_EQ(f->sources[0].density, (std::vector<double>{12, 12, 41, 70, 70}));
}

TEST(CoefficientFields, PowerIsSpreadWithTheTotalHeatsNodeWeights) {
  Case c = grid_case(2, {9, 7, 1}, {0.8, 0.3, 1});                   // hx = 0.1, hy = 0.05
  c.boundary[2].kind = c.boundary[3].kind = BoundaryKind::periodic;  // y periodic: hy = 0.3/7
  SourceSpec heater;
  heater.shape = box({0.0, 0.0, 0}, {0.3, 1.0, 0});  // x = 0 (weight 1/2) .. 0.3
  heater.power = 2.5;
  heater.schedule.table = {{0, 0}, {1, 1}};
  SourceSpec same = heater;
  same.power.reset();
  same.power_density = 1.0;
  SourceSpec other = heater;
  other.schedule = {1.0, 0.0, 0.0, {}};
  c.sources = {heater, same, other};
  const auto f = coefficient_fields(c);
  ASSERT_EQ(f->sources.size(), 2u);  // heater and `same` share a schedule
  const double volume = cell_volume(c);
  EXPECT_DOUBLE_EQ(volume, 0.1 * 0.3 / 7);
  double power = 0.0;
  for (std::int64_t i = 0; i < 63; ++i) power += node_weight(c, i) * f->sources[1].density[i];
  EXPECT_NEAR(power * volume, 2.5, 1e-13);
  // The nodes of the box: 4 columns of 7, the x = 0 column at half weight: 3.5 * 7 weights.
  const double q = 2.5 / (3.5 * 7 * volume);
  EXPECT_DOUBLE_EQ(f->sources[1].density[3], q);
  EXPECT_EQ(f->sources[1].density[4], 0.0);
  EXPECT_DOUBLE_EQ(f->sources[0].density[0], q + 1.0);  // merged: the densities add up
  EXPECT_EQ(f->sources[0].density[4], 0.0);

  // More distinct schedules than fields: refused.
  for (int s = 0; s < kernels::kMaxSourceFields; ++s) {
    SourceSpec more = other;
    more.schedule.value = 2.0 + s;
    c.sources.push_back(more);
  }
  EXPECT_NE(message_of([&] { coefficient_fields(c); }).find("schedules"), std::string::npos);
  c.sources = {heater};
  c.sources[0].shape = box({0.82, 0, 0}, {0.9, 1, 0});  // between nodes: none inside
  EXPECT_NE(message_of([&] { coefficient_fields(c); }).find("sources[0]: the shape holds no node"),
            std::string::npos);
  // Inside the domain but thinner than a spacing, between two node planes: its size against
  // the spacing, and the remedy.
  c.sources[0].shape = box({0.42, 0, 0}, {0.48, 1, 0});
  const std::string thin = message_of([&] { coefficient_fields(c); });
  EXPECT_NE(thin.find("sources[0]: the box (0.06 across along x) is thinner than the grid "
                      "resolves (spacing 0.1)"),
            std::string::npos)
      << thin;
  EXPECT_NE(thin.find("refine the grid"), std::string::npos) << thin;
}

TEST(FieldStability, HomogeneousIsHSquaredOverFourAlphaIn2D) {
  Case c = grid_case(2, {21, 21, 1}, {1.0, 1.0, 1});
  c.physics.alpha = 0.7;
  c.sources.push_back({});
  c.sources[0].power_density = 1.0;
  const auto f = coefficient_fields(c);
  const FieldStability s = field_stability(c, *f);
  const double h = 0.05;
  EXPECT_NEAR(s.dt_limit, h * h / (4 * 0.7), 1e-15);
  // The limit agrees with the stencil symbol's for the same operator.
  EXPECT_NEAR(s.dt_limit, max_stable_dt(laplacian(c), 0.7), 1e-12 * s.dt_limit);
  // Dirichlet nodes are reset each step and set no limit.
  const std::int64_t x = s.node % 21, y = s.node / 21;
  EXPECT_TRUE(x > 0 && x < 20 && y > 0 && y < 20) << s.node;
}

TEST(FieldStability, HighDiffusivityNodeAndConvectiveFaceSetTheLimit) {
  Case c = grid_case(1, {11, 1, 1}, {1.0, 1, 1});  // h = 0.1
  c.materials = {material("slow", 1, 1, 1), material("fast", 10, 1, 2)};
  c.regions = {region("slow"), region("fast", box({0.6, 0, 0}, {1, 0, 0}))};
  c.boundary[1].kind = BoundaryKind::neumann;
  auto f = coefficient_fields(c);
  FieldStability s = field_stability(c, *f);
  // Inside "fast": C = 2, sum of conductances 2 * 10 / h^2 -> 2 / 2000.
  EXPECT_NEAR(s.dt_limit, 2.0 / 2000.0, 1e-15);
  EXPECT_GE(s.node, 7);
  // A convective x+ face: the end node's ghost is its mirror (conductance counted twice) and
  // adds 2 h_c / h: C / (2 * 10 / h^2 + 2 h_c / h).
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 50.0;
  f = coefficient_fields(c);
  s = field_stability(c, *f);
  EXPECT_EQ(s.node, 10);
  EXPECT_NEAR(s.dt_limit, 2.0 / (2000.0 + 2 * 50.0 / 0.1), 1e-15);
  EXPECT_EQ(node_location(c, s.node), "x = 1");
}

TEST(PlanTime, FieldsSetTheLimitAutoAndTheMessage) {
  Case c = grid_case(2, {11, 11, 1}, {1.0, 1.0, 1});
  c.materials = {material("a", 2, 1, 1)};
  c.regions = {region("a")};
  c.time.steps = 10;
  TimePlan plan = plan_time(c);
  EXPECT_NEAR(plan.dt_limit, 0.01 / 8.0, 1e-16);
  EXPECT_DOUBLE_EQ(plan.dt, 0.9 * plan.dt_limit);
  EXPECT_TRUE(plan.dt_auto);
  EXPECT_GE(plan.limit_node, 0);
  c.time.dt = 0.002;
  const std::string m = message_of([&] { plan_time(c); });
  EXPECT_NE(m.find("0.00125"), std::string::npos) << m;
  EXPECT_NE(m.find("set by the node at x = "), std::string::npos) << m;
  c.scheme.kind = SchemeKind::order4;
  EXPECT_NE(message_of([&] { plan_time(c); }).find("order2"), std::string::npos);
  EXPECT_NE(message_of([&] { make_problem(c, 0.001); }).find("order2"), std::string::npos);
}

TEST(MakeProblem, CarriesTheFieldsAndTheFusionAsked) {
  Case c = grid_case(1, {8, 1, 1}, {1.0, 1, 1});
  c.physics.source = 3.0;
  c.fusion = 4;
  kernels::StencilProblem p = make_problem(c, 0.001);
  EXPECT_FALSE(p.coefficients);  // no materials, sources or special faces: constant weights
  EXPECT_DOUBLE_EQ(p.source_increment, 0.003);
  c.boundary[0].kind = BoundaryKind::convective;
  c.boundary[0].transfer = 2.0;
  p = make_problem(c, 0.001);
  ASSERT_TRUE(p.coefficients);
  EXPECT_EQ(p.source_increment, 0.0);
  EXPECT_EQ(p.fusion_depth, 4);  // taken by a backend that blocks coefficient steps
  c.fusion = 0;                  // auto: one step per pass
  EXPECT_EQ(make_problem(c, 0.001).fusion_depth, 1);
  ASSERT_EQ(p.coefficients->sources.size(), 1u);
  EXPECT_EQ(p.coefficients->sources[0].density[3], 3.0);
}

TEST(SummarizeMaterials, MinMaxAndTrapezoidMeanPerMaterial) {
  Case c = grid_case(1, {5, 1, 1}, {1.0, 1, 1});
  c.materials = {material("a", 1, 1, 1), material("b", 2, 1, 1), material("unused", 3, 1, 1)};
  c.regions = {region("a"), region("b", box({0.5, 0, 0}, {1, 0, 0}))};
  const auto ids = material_ids(c);
  const std::vector<double> u{1.0, 3.0, 5.0, 6.0, 10.0};
  const auto s = summarize_materials(c, ids, u);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "a");
  EXPECT_EQ(s[0].nodes, 2);
  EXPECT_EQ(s[0].min, 1.0);
  EXPECT_EQ(s[0].max, 3.0);
  EXPECT_DOUBLE_EQ(s[0].mean, (0.5 * 1.0 + 3.0) / 1.5);  // x = 0 weighs 1/2
  EXPECT_EQ(s[1].nodes, 3);
  EXPECT_DOUBLE_EQ(s[1].mean, (5.0 + 6.0 + 0.5 * 10.0) / 2.5);
  EXPECT_EQ(s[2].nodes, 0);
  Case plain = grid_case(1, {5, 1, 1}, {1.0, 1, 1});
  const auto p = summarize_materials(plain, material_ids(plain), u);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].nodes, 5);
  EXPECT_EQ(p[0].max, 10.0);
}

}  // namespace
}  // namespace heatsim::solver
