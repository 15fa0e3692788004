// Probes: multilinear interpolation is exact for fields linear in each coordinate, points at
// nodes and faces take the node values, periodic axes wrap, points outside are refused by name.
#include "solver/probes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace {

using heatsim::solver::BoundaryKind;
using heatsim::solver::Case;
using heatsim::solver::ProbeSampler;
using heatsim::solver::ProbeStencil;

Case grid_case(int dims, std::array<std::int64_t, 3> n, std::array<double, 3> length) {
  Case c;
  c.grid.dims = dims;
  for (int a = 0; a < 3; ++a) {
    c.grid.n[a] = a < dims ? n[a] : 1;
    c.grid.length[a] = length[a];
  }
  return c;
}

// f(x, y, z) sampled at every node, memory order [z][y][x].
template <class F>
std::vector<double> sample(const Case& c, F f) {
  std::vector<double> u;
  for (std::int64_t z = 0; z < c.grid.n[2]; ++z)
    for (std::int64_t y = 0; y < c.grid.n[1]; ++y)
      for (std::int64_t x = 0; x < c.grid.n[0]; ++x)
        u.push_back(f(heatsim::solver::coordinate(c, 0, x), heatsim::solver::coordinate(c, 1, y),
                      heatsim::solver::coordinate(c, 2, z)));
  return u;
}

class ProbesLinear : public ::testing::TestWithParam<int> {};

TEST_P(ProbesLinear, InterpolationIsExactForMultilinearFields) {
  const int dims = GetParam();
  const Case c = grid_case(dims, {13, 9, 7}, {1.3, 0.7, 0.45});
  // Linear in each coordinate, with the cross terms multilinear interpolation also reproduces.
  auto f = [dims](double x, double y, double z) {
    double v = 2.0 + 3.5 * x;
    if (dims > 1) v += -1.25 * y + 0.5 * x * y;
    if (dims > 2) v += 4.0 * z - 0.75 * y * z + 0.3 * x * y * z;
    return v;
  };
  const std::vector<double> u = sample(c, f);
  std::mt19937 rng(7);
  std::vector<ProbeStencil> stencils;
  for (int i = 0; i < 200; ++i) {
    std::array<double, 3> p{0, 0, 0};
    for (int a = 0; a < dims; ++a)
      p[a] = std::uniform_real_distribution<double>(0.0, c.grid.length[a])(rng);
    const ProbeStencil s = heatsim::solver::probe_stencil(c, "p" + std::to_string(i), p);
    ASSERT_EQ(s.nodes.size(), std::size_t{1} << dims);
    double sum = 0.0;
    for (double w : s.weights) {
      EXPECT_GE(w, 0.0);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-15);
    const double exact = f(p[0], p[1], p[2]);
    EXPECT_NEAR(heatsim::solver::interpolate(s, u), exact, 1e-13 * std::abs(exact) + 1e-14)
        << "point " << p[0] << " " << p[1] << " " << p[2];
    stencils.push_back(s);
  }
  // What a run does: gather the distinct nodes, then combine; bit for bit the same.
  const ProbeSampler sampler(stencils);
  std::vector<double> gathered;
  for (std::int64_t node : sampler.nodes()) gathered.push_back(u[static_cast<std::size_t>(node)]);
  const std::vector<double> values = sampler.values(gathered);
  ASSERT_EQ(values.size(), stencils.size());
  for (std::size_t i = 0; i < stencils.size(); ++i)
    EXPECT_EQ(values[i], heatsim::solver::interpolate(stencils[i], u));
  EXPECT_TRUE(std::is_sorted(sampler.nodes().begin(), sampler.nodes().end()));
  EXPECT_LE(sampler.nodes().size(), stencils.size() << dims);
}

INSTANTIATE_TEST_SUITE_P(Dims, ProbesLinear, ::testing::Values(1, 2, 3));

TEST(Probes, PointsOnNodesCornersAndFacesTakeTheNodeValues) {
  const Case c = grid_case(3, {5, 4, 3}, {1.0, 0.6, 0.2});
  std::vector<double> u(5 * 4 * 3);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::sin(1.0 + static_cast<double>(i));
  // The far corner (x = L on every axis) is the last node; an interior node is itself.
  EXPECT_DOUBLE_EQ(
      heatsim::solver::interpolate(heatsim::solver::probe_stencil(c, "corner", {1.0, 0.6, 0.2}), u),
      u.back());
  const double hx = 0.25, hy = 0.2, hz = 0.1;
  EXPECT_DOUBLE_EQ(heatsim::solver::interpolate(
                       heatsim::solver::probe_stencil(c, "node", {2 * hx, 1 * hy, 1 * hz}), u),
                   u[2 + 5 * (1 + 4 * 1)]);
  // Halfway between two nodes along x on the y = L face: their mean.
  EXPECT_DOUBLE_EQ(heatsim::solver::interpolate(
                       heatsim::solver::probe_stencil(c, "face", {1.5 * hx, 0.6, 0.0}), u),
                   0.5 * (u[1 + 5 * 3] + u[2 + 5 * 3]));
}

TEST(Probes, PeriodicAxisWrapsToTheFirstNode) {
  Case c = grid_case(2, {8, 5, 1}, {1.0, 1.0, 1.0});
  c.boundary[0].kind = BoundaryKind::periodic;
  c.boundary[1].kind = BoundaryKind::periodic;
  // h = L/8 on the periodic x axis: node 7 sits at 0.875, the next one is node 0 again.
  std::vector<double> u(8 * 5);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<double>(i * i % 17);
  const ProbeStencil s = heatsim::solver::probe_stencil(c, "wrap", {0.9375, 0.0, 0.0});
  EXPECT_DOUBLE_EQ(heatsim::solver::interpolate(s, u), 0.5 * (u[7] + u[0]));
  EXPECT_EQ(s.nodes[1], 0);  // the upper x corner of the first row
  // x = L is node 0 itself.
  EXPECT_DOUBLE_EQ(
      heatsim::solver::interpolate(heatsim::solver::probe_stencil(c, "end", {1.0, 0.5, 0.0}), u),
      u[0 + 8 * 2]);
}

TEST(Probes, PointOutsideTheDomainIsRefusedByName) {
  Case c = grid_case(2, {11, 11, 1}, {0.02, 0.01, 1.0});
  c.probes.points = {{"inside", {0.01, 0.005, 0}}, {"beyond_y", {0.01, 0.0101, 0}}};
  try {
    heatsim::solver::probe_stencils(c);
    FAIL() << "a point outside the domain was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("probes.points.beyond_y"), std::string::npos) << what;
    EXPECT_NE(what.find("outside the domain"), std::string::npos) << what;
  }
  EXPECT_THROW(heatsim::solver::probe_stencil(c, "neg", {-1e-6, 0.0, 0}), std::invalid_argument);
  EXPECT_THROW(heatsim::solver::probe_stencil(c, "nan", {NAN, 0.0, 0}), std::invalid_argument);
  // A rounding's worth beyond the face is the face.
  EXPECT_NO_THROW(heatsim::solver::probe_stencil(c, "face", {0.02 * (1 + 1e-15), 0.0, 0}));
}

// Nodes of a void hold no solution (their initial value): a point at the void's surface reads
// the body corners of its cell alone, their weights renormalised; a point whose whole cell is
// void is refused by name.
TEST(Probes, CornersInAVoidTakeNoWeight) {
  Case c = grid_case(2, {11, 11, 1}, {1.0, 1.0, 1.0});
  // The void: x > 0.55 (nodes 6-10 along x), capacity 0.
  std::vector<double> capacity(121, 1.0);
  for (int y = 0; y < 11; ++y)
    for (int x = 6; x < 11; ++x) capacity[static_cast<std::size_t>(11 * y + x)] = 0.0;
  const std::vector<double> u = sample(c, [](double x, double y, double) {
    return x > 0.55 ? -1000.0 : 300.0 + 10.0 * x + 20.0 * y;  // the void's nodes poisoned
  });
  c.probes.points = {
      {"surface", {0.55, 0.33, 0}}, {"body", {0.25, 0.33, 0}}, {"on_node", {0.5, 0.3, 0}}};
  const std::vector<ProbeStencil> s = heatsim::solver::probe_stencils(c, &capacity);
  ASSERT_EQ(s.size(), 3u);
  // Between x = 0.5 (body) and 0.6 (void): the body's column x = 0.5, interpolated along y.
  EXPECT_TRUE(s[0].partial);
  EXPECT_NEAR(heatsim::solver::interpolate(s[0], u), 300.0 + 5.0 + 20.0 * 0.33, 1e-12);
  // A cell wholly in the body, and a point on a body node beside the void: unchanged, exact.
  EXPECT_FALSE(s[1].partial);
  EXPECT_NEAR(heatsim::solver::interpolate(s[1], u), 300.0 + 2.5 + 6.6, 1e-12);
  EXPECT_FALSE(s[2].partial);
  EXPECT_EQ(heatsim::solver::interpolate(s[2], u), u[11 * 3 + 5]);
  // The sampler gives the same values as the whole field.
  const ProbeSampler sampler(s);
  std::vector<double> gathered;
  for (std::int64_t node : sampler.nodes()) gathered.push_back(u[static_cast<std::size_t>(node)]);
  const std::vector<double> values = sampler.values(gathered);
  for (std::size_t p = 0; p < s.size(); ++p)
    EXPECT_EQ(values[p], heatsim::solver::interpolate(s[p], u)) << s[p].name;
  // Inside the void.
  c.probes.points = {{"deep", {0.8, 0.5, 0}}};
  try {
    heatsim::solver::probe_stencils(c, &capacity);
    FAIL() << "a point in a void was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("probes.points.deep"), std::string::npos) << what;
    EXPECT_NE(what.find("void"), std::string::npos) << what;
  }
  // Two in it: both named, each with its key (a case's checks report every problem at once).
  c.probes.points = {{"deep", {0.8, 0.5, 0}}, {"deeper", {0.85, 0.5, 0}}, {"fine", {0.1, 0.5, 0}}};
  try {
    heatsim::solver::probe_stencils(c, &capacity);
    FAIL() << "points in a void were accepted";
  } catch (const heatsim::solver::ProbeErrors& e) {
    ASSERT_EQ(e.all.size(), 2u) << e.what();
    EXPECT_EQ(e.all[0].first, "probes.points.deep");
    EXPECT_EQ(e.all[1].first, "probes.points.deeper");
    EXPECT_NE(e.all[1].second.find("lies in a void"), std::string::npos) << e.all[1].second;
  }
}

// A wall of brick, mineral wool, brick and plaster across x (box layers whose bounds lie
// between nodes), at 41 x 5 nodes: the field at the nodes is the exact steady profile (a layered
// wall's nodes are exact), piecewise linear in x with the slopes of 1/k. A probe in a cell an
// interface crosses reads that profile at its point (the fractions by resistance), where the
// distance's fractions were off by a tenth of a kelvin and more; one in a cell of one material
// reads what the distance's fractions give, bit for bit.
// A contact whose interface lies on a node plane (B from x = 5 mm, a node, in A of k = 1 with
// R'' = 1e-3 between them; spacing 1 mm): the face from the last A node to the first B node is
// 1 mm of A and the contact, so a point halfway along it lies a quarter of the way down the
// temperature drop (0.5e-3 of 2e-3 of resistance), on either side of the probe's cell row and
// off the node lines too. It read the distance's half, the contact's drop left out.
TEST(Probes, AContactOnANodePlaneTakesItsShareOfTheDrop) {
  Case c = grid_case(2, {11, 3, 1}, {0.01, 0.002, 1.0});
  using heatsim_tests::box;
  using heatsim_tests::material;
  using heatsim_tests::region;
  c.materials = {material("A", 1.0, 1000, 1000), material("B", 100.0, 1000, 1000)};
  c.regions = {region("A"), region("B", box({0.005, 0, 0}, {0.01, 0.002, 0}))};
  c.contacts = {{{"A", "B"}, 1e-3}};
  c.probes.points = {{"mid", {0.0045, 0.001, 0}}, {"off", {0.0045, 0.0013, 0}},
                     {"inside_a", {0.0025, 0.001, 0}}};
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const std::vector<ProbeStencil> s = heatsim::solver::probe_stencils(c, nullptr, &ids);
  ASSERT_EQ(s.size(), 3u);
  // Per node a value linear in its resistance from x = 0: A's nodes at x, B's at 0.004 + 1e-3
  // (the contact) + 1e-3 (A's last millimetre) + (x - 0.005) / 100.
  const auto r = [](double x, double, double) {
    return x < 0.0045 ? x : 0.004 + 2e-3 + (x - 0.005) / 100.0;
  };
  const std::vector<double> u = sample(c, r);
  EXPECT_NEAR(heatsim::solver::interpolate(s[0], u), 0.0045, 1e-15);
  EXPECT_NEAR(heatsim::solver::interpolate(s[1], u), 0.0045, 1e-15);
  // In a cell of A alone: the distance's share, the same bits.
  EXPECT_EQ(s[2].weights, heatsim::solver::probe_stencils(c)[2].weights);
}

TEST(Probes, AcrossAnInterfaceTheFractionIsTheResistancesShare) {
  Case c = grid_case(2, {41, 5, 1}, {0.2, 0.02, 1.0});
  using heatsim_tests::box;
  using heatsim_tests::material;
  using heatsim_tests::region;
  c.materials = {material("brick", 0.7, 1800, 840), material("wool", 0.035, 30, 1000),
                 material("plaster", 0.5, 1300, 1000)};
  c.regions = {region("brick"), region("wool", box({0.1013, 0, 0}, {0.1507, 0.02, 0})),
               region("plaster", box({0.1807, 0, 0}, {0.2, 0.02, 0}))};
  const double layers[4][3] = {
      {0.0, 0.1013, 0.7}, {0.1013, 0.1507, 0.035}, {0.1507, 0.1807, 0.7}, {0.1807, 0.2, 0.5}};
  double resistance = 0.0;
  for (const auto& l : layers) resistance += (l[1] - l[0]) / l[2];
  const double flux = 20.0 / resistance;
  const auto exact = [&](double x, double, double) {
    double t = 273.15;
    for (const auto& l : layers)
      if (x > l[0]) t += flux * (std::min(x, l[1]) - l[0]) / l[2];
    return t;
  };
  const std::vector<double> u = sample(c, exact);
  c.probes.points = {{"a", {0.1003, 0.013, 0}}, {"b", {0.1023, 0.0, 0}},  {"c", {0.149, 0.02, 0}},
                     {"d", {0.1512, 0.007, 0}}, {"e", {0.1805, 0.01, 0}}, {"f", {0.181, 0.0111, 0}},
                     {"g", {0.05, 0.0033, 0}}};
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const std::vector<ProbeStencil> by_resistance = heatsim::solver::probe_stencils(c, nullptr, &ids);
  const std::vector<ProbeStencil> by_distance = heatsim::solver::probe_stencils(c);
  ASSERT_EQ(by_resistance.size(), 7u);
  double worst_distance = 0.0;
  for (std::size_t p = 0; p < by_resistance.size(); ++p) {
    const auto& point = by_resistance[p].point;
    const double want = exact(point[0], point[1], 0.0);
    EXPECT_NEAR(heatsim::solver::interpolate(by_resistance[p], u), want, 1e-9)
        << by_resistance[p].name;
    worst_distance =
        std::max(worst_distance, std::abs(heatsim::solver::interpolate(by_distance[p], u) - want));
  }
  EXPECT_GT(worst_distance, 0.1);
  // g lies in a cell of brick alone: the distance's fractions, the same bits.
  EXPECT_EQ(by_resistance[6].weights, by_distance[6].weights);
  EXPECT_EQ(heatsim::solver::interpolate(by_resistance[6], u),
            heatsim::solver::interpolate(by_distance[6], u));
}

}  // namespace
