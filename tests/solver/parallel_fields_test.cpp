// The setup passes over every node (initial field, material ids, coefficient and source fields,
// the stability limit, the first non-finite node) run on OpenMP threads; each must give the
// same bits with any number of threads as with one.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/expression.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver {
namespace {

using heatsim_tests::box;
using heatsim_tests::material;
using heatsim_tests::region;

// Runs f with `threads` OpenMP threads, then restores the count.
template <class F>
auto with_threads(int threads, F f) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  auto result = f();
  omp_set_num_threads(before);
  return result;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// A 3D grid of odd sizes (no thread's share is a whole number of rows) with an expression
// initial condition and Dirichlet faces.
Case expression_case(int dims) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = {dims == 1 ? 100003 : 61, 47, 29};
  c.grid.length = {1.0, 0.8, 0.5};
  for (int a = dims; a < 3; ++a) c.grid.n[a] = 1;
  c.initial.kind = InitialKind::expression;
  c.initial.expression = dims == 1 ? "exp(-40 * (x - 0.3)^2) + 0.1 * sin(7 * x)"
                         : dims == 2
                             ? "sin(pi * x) * cos(3 * y) + (x > 0.25) * (y < 0.5)"
                             : "sin(pi * x) * cos(3 * y) * exp(-z) + (x > 0.25) * (z < 0.2)";
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 2.5;
  c.boundary[1].kind = BoundaryKind::dirichlet;
  c.boundary[1].value = -1.0;
  for (int f = 2; f < 6; ++f) c.boundary[static_cast<std::size_t>(f)].kind = BoundaryKind::neumann;
  return c;
}

TEST(ParallelFields, InitialFieldIsTheSameOnOneThreadAndOnSeveral) {
  for (int dims = 1; dims <= 3; ++dims) {
    SCOPED_TRACE(dims);
    const Case c = expression_case(dims);
    const auto one = with_threads(1, [&] { return initial_field(c); });
    const auto three = with_threads(3, [&] { return initial_field(c); });
    ASSERT_EQ(one.size(), static_cast<std::size_t>(c.grid.n[0] * c.grid.n[1] * c.grid.n[2]));
    EXPECT_TRUE(same_bits(one, three));
    // Not a constant field: the expression varies and the x- face holds its value.
    EXPECT_EQ(one.front(), 2.5);
    EXPECT_NE(one[one.size() / 2], one[one.size() / 3]);
  }
}

// The field against each node's value computed alone (Expression::eval at coordinate()),
// Dirichlet nodes at g(0); the fp32 field is each double rounded, as an upload rounds it.
TEST(ParallelFields, InitialFieldIsEachNodesOwnValueInEitherPrecision) {
  for (int dims = 1; dims <= 3; ++dims) {
    SCOPED_TRACE(dims);
    const Case c = expression_case(dims);
    const Expression e = Expression::compile(c.initial.expression, expression_variables(dims));
    const std::int64_t nx = c.grid.n[0], ny = c.grid.n[1], nz = c.grid.n[2];
    std::vector<double> expected(static_cast<std::size_t>(nx * ny * nz));
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          const double pos[3] = {coordinate(c, 0, x), coordinate(c, 1, y), coordinate(c, 2, z)};
          expected[static_cast<std::size_t>((z * ny + y) * nx + x)] =
              x == 0 ? 2.5 : x == nx - 1 ? -1.0 : e.eval(pos);
        }
    std::vector<double> doubles(expected.size(), -99.0);
    std::vector<float> floats(expected.size(), -99.0f);
    with_threads(3, [&] {
      fill_initial_field(c, doubles.data());
      fill_initial_field(c, floats.data());
      return 0;
    });
    EXPECT_TRUE(same_bits(doubles, expected));
    EXPECT_TRUE(same_bits(initial_field(c), expected));
    std::vector<float> rounded(expected.begin(), expected.end());
    EXPECT_TRUE(same_bits(floats, rounded));
  }
}

// An expression that is not finite at some nodes: the first in memory order off the
// Dirichlet faces is named (1 / x is infinite on the x- face, which takes g(0)).
TEST(ParallelFields, InitialFieldNamesTheFirstNodeWhereTheExpressionIsNotFinite) {
  Case c = expression_case(2);
  c.initial.expression = "1 / x + 1 / (y - 0.4) + log(0.5 - x)";
  std::vector<double> u(static_cast<std::size_t>(61 * 47), 0.0);
  for (int threads : {1, 3}) {
    try {
      with_threads(threads, [&] {
        fill_initial_field(c, u.data());
        return 0;
      });
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& err) {
      // Row 0 comes before any row near y = 0.4 in memory order; in it x = 0.5 (column 30 on
      // a spacing of 1/60) gives log(0) = -inf.
      EXPECT_NE(std::string(err.what()).find("-inf at node (30, 0)"), std::string::npos)
          << err.what();
      EXPECT_EQ(std::string(err.what()).rfind("initial.value: the expression is", 0), 0u);
    }
  }
  c.initial.expression = "1 / x";  // infinite only on the x- face: accepted
  EXPECT_NO_THROW(fill_initial_field(c, u.data()));
  EXPECT_EQ(u[0], 2.5);
  EXPECT_EQ(u[1], 60.0);
}

TEST(ParallelFields, GaussianAndModesAreTheSameOnOneThreadAndOnSeveral) {
  Case c = expression_case(1);
  c.initial.kind = InitialKind::gaussian;
  c.initial.amplitude = 3.0;
  c.initial.center = {0.4, 0, 0};
  c.initial.width = 0.05;
  const auto g1 = with_threads(1, [&] { return initial_field(c); });
  const auto g3 = with_threads(3, [&] { return initial_field(c); });
  EXPECT_TRUE(same_bits(g1, g3));
  c.initial.kind = InitialKind::modes;
  ModeTerm m;
  m.amplitude = 1.5;
  m.k = {3, 0, 0};
  c.initial.modes = {m};
  const auto m1 = with_threads(1, [&] { return initial_field(c); });
  const auto m3 = with_threads(3, [&] { return initial_field(c); });
  EXPECT_TRUE(same_bits(m1, m3));
  EXPECT_FALSE(same_bits(g1, m1));
}

TEST(ParallelFields, FirstNonFiniteNodeIsTheFirstInMemoryOrder) {
  const Case c = expression_case(3);
  std::vector<double> u(static_cast<std::size_t>(61 * 47 * 29), 1.0);
  // Two bad nodes in different threads' shares: the one earlier in memory order is named.
  u[u.size() - 5] = std::nan("");
  u[61 * 47 * 3 + 61 * 2 + 7] = INFINITY;
  const auto one = with_threads(1, [&] { return first_non_finite(c, u); });
  const auto three = with_threads(3, [&] { return first_non_finite(c, u); });
  EXPECT_EQ(one, three);
  EXPECT_EQ(one.rfind("inf at node (7, 2, 3)", 0), 0u) << one;
}

// Overlapping regions (a later one wins), a `where` region, sources sharing a schedule and a
// `power` source normalised by a weighted node count.
Case materials_case() {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {33, 21, 17};
  c.grid.length = {1.0, 0.6, 0.5};
  c.materials = {material("copper", 400, 8960, 385), material("epoxy", 0.3, 1200, 1100),
                 material("steel", 45, 7850, 470)};
  ShapeSpec where;
  where.kind = ShapeKind::where;
  where.where = "(x - 0.5)^2 + (y - 0.3)^2 < 0.04";
  c.regions = {region("epoxy"), region("copper", box({0.2, 0, 0}, {0.7, 0.6, 0.25})),
               region("steel", where)};
  SourceSpec a;
  a.shape = box({0.1, 0.1, 0.1}, {0.3, 0.4, 0.2});
  a.power = 5.0;
  SourceSpec b = a;
  b.shape = box({0.5, 0.0, 0.3}, {0.9, 0.2, 0.5});
  b.power.reset();
  b.power_density = 2e4;
  SourceSpec s;
  s.shape = box({0.0, 0.0, 0.0}, {1.0, 0.6, 0.1});
  s.power = 1.0;
  s.schedule = kernels::Schedule{0.0, 1.0, 2.0, {}};
  c.sources = {a, b, s};
  c.physics.source = 0.25;
  c.boundary[4].kind = BoundaryKind::convective;
  c.boundary[4].transfer = 50.0;
  return c;
}

TEST(ParallelFields, MaterialFieldsAreTheSameOnOneThreadAndOnSeveral) {
  const Case c = materials_case();
  const auto ids1 = with_threads(1, [&] { return material_ids(c); });
  const auto ids3 = with_threads(3, [&] { return material_ids(c); });
  EXPECT_TRUE(same_bits(ids1, ids3));
  const auto f1 = with_threads(1, [&] { return coefficient_fields(c, ids1); });
  const auto f3 = with_threads(3, [&] { return coefficient_fields(c, ids1); });
  EXPECT_TRUE(same_bits(f1->conductivity, f3->conductivity));
  EXPECT_TRUE(same_bits(f1->capacity, f3->capacity));
  ASSERT_EQ(f1->sources.size(), f3->sources.size());
  // physics.source and the two sources of schedule 1 share a field; the sine source has its own.
  ASSERT_EQ(f1->sources.size(), 2u);
  for (std::size_t s = 0; s < f1->sources.size(); ++s)
    EXPECT_TRUE(same_bits(f1->sources[s].density, f3->sources[s].density)) << s;
  const FieldStability s1 = with_threads(1, [&] { return field_stability(c, *f1); });
  const FieldStability s3 = with_threads(3, [&] { return field_stability(c, *f1); });
  EXPECT_EQ(s1.dt_limit, s3.dt_limit);
  EXPECT_EQ(s1.node, s3.node);
  EXPECT_GT(s1.dt_limit, 0.0);
  // Every material holds nodes, so the fields are not uniform.
  for (std::int32_t m = 0; m < 3; ++m)
    EXPECT_NE(std::find(ids1.begin(), ids1.end(), m), ids1.end()) << m;
}

TEST(ParallelFields, AnUncoveredNodeIsNamedAlikeOnOneThreadAndOnSeveral) {
  Case c = materials_case();
  c.regions.erase(c.regions.begin());  // no region for the whole domain any more
  auto message = [&] {
    try {
      material_ids(c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string one = with_threads(1, message);
  const std::string three = with_threads(3, message);
  EXPECT_EQ(one, three);
  EXPECT_NE(one.find("nodes have no material, e.g. the node at x = 0, y = 0, z = 0"),
            std::string::npos)
      << one;
}

}  // namespace
}  // namespace heatsim::solver
