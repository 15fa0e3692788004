// The heat-flow operator's node weights (1/2 per non-periodic boundary axis a node lies on) in
// the weighted capacity, the sources' load and the level's node terms, on grids of 1, 2 and 3
// dimensions with a periodic axis, against the weights worked from each node's coordinates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "solver/multigrid/conductance.hpp"

namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::kernels::CoefficientFields;
using heatsim::kernels::StencilProblem;
using heatsim::solver::multigrid::HeatFlowOperator;

void check(int dims, std::array<std::int64_t, 3> n, int periodic_axis) {
  StencilProblem p;
  p.dims = dims;
  p.n = n;
  p.h = {0.1, 0.2, 0.3};
  for (int f = 0; f < 2 * dims; ++f) {
    auto& face = p.faces[static_cast<std::size_t>(f)];
    face.kind = f / 2 == periodic_axis ? BoundaryKind::periodic : BoundaryKind::neumann;
  }
  // One Dirichlet face, when there is a non-periodic axis: its nodes take no load.
  int dirichlet_axis = -1;
  for (int a = 0; a < dims && dirichlet_axis < 0; ++a)
    if (a != periodic_axis) dirichlet_axis = a;
  if (dirichlet_axis >= 0)
    p.faces[static_cast<std::size_t>(2 * dirichlet_axis)].kind = BoundaryKind::dirichlet;
  const std::int64_t np = p.points();
  auto fields = std::make_shared<CoefficientFields>();
  fields->conductivity.assign(static_cast<std::size_t>(np), 3.0);
  fields->capacity.resize(static_cast<std::size_t>(np));
  std::vector<double> q(static_cast<std::size_t>(np));
  for (std::int64_t i = 0; i < np; ++i) {
    fields->capacity[static_cast<std::size_t>(i)] = 1.0e6 * (1.0 + 0.37 * std::sin(0.3 * i));
    q[static_cast<std::size_t>(i)] = 500.0 * (1.0 + 0.21 * std::cos(0.7 * i));
  }
  fields->sources.push_back({q, {1.0, 0.0, 0.0, {}}, false});
  HeatFlowOperator flow(p, fields);
  const std::vector<double> wc = flow.weighted_capacity();
  std::vector<double> load(static_cast<std::size_t>(np), 0.0);
  flow.add_load(0.0, load);
  const double alpha = 0.25, beta = 0.5;
  const auto level = flow.take_level(alpha, beta);
  int halved = 0;
  for (std::int64_t i = 0; i < np; ++i) {
    const std::size_t si = static_cast<std::size_t>(i);
    const std::int64_t c[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
    double w = 1.0;
    for (int a = 0; a < dims; ++a)
      if (a != periodic_axis && (c[a] == 0 || c[a] == n[a] - 1)) w *= 0.5;
    halved += w < 1.0;
    const double C = fields->capacity[si];
    EXPECT_EQ(wc[si], w * C) << "node " << i;
    const bool fixed = dirichlet_axis >= 0 && c[dirichlet_axis] == 0;
    // Neumann faces of no flux add nothing: the load is the source's alone.
    EXPECT_EQ(load[si], fixed ? 0.0 : w * q[si]) << "node " << i;
    EXPECT_EQ(level.node_term[si], alpha * (w * C)) << "node " << i;
  }
  EXPECT_GT(halved, 0);
}

TEST(HeatFlowWeights, OneDimension) { check(1, {9, 1, 1}, -1); }
TEST(HeatFlowWeights, TwoDimensionsPeriodicX) { check(2, {7, 5, 1}, 0); }
TEST(HeatFlowWeights, TwoDimensionsPeriodicY) { check(2, {6, 4, 1}, 1); }
TEST(HeatFlowWeights, ThreeDimensionsPeriodicZ) { check(3, {6, 5, 4}, 2); }
// Enough nodes for the threads (32768 and more): the rows split among them.
TEST(HeatFlowWeights, ThreeDimensionsLarge) { check(3, {41, 33, 29}, 1); }

}  // namespace
