// linearize(): the fields an outer iteration hands the multigrid, node by node against the rule
// of linearize.hpp worked from each node's coordinates (radiating faces on every face of a 2D
// and of a 3D grid, a periodic axis, a void on a face, temperature laws and a radiating
// surface inside the body).
#include "solver/multigrid/linearize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/temperature_laws.hpp"

namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::kernels::CoefficientFields;
using heatsim::kernels::StencilProblem;
using heatsim::kernels::TemperatureDependence;
using heatsim::kernels::TemperatureLaw;

struct Case {
  StencilProblem problem;
  CoefficientFields fields;
  std::vector<double> u;
};

// dims axes of n nodes each (x periodic when asked), every other face convective and radiating
// with its own emissivity and ambient; two laws and nodes of constant properties; node
// 1 (on the y- face) inside a void.
Case make_case(int dims, std::array<std::int64_t, 3> n, bool periodic_x, bool laws) {
  Case c;
  StencilProblem& p = c.problem;
  p.dims = dims;
  p.n = n;
  p.h = {0.01, 0.02, 0.03};
  for (int f = 0; f < 2 * dims; ++f) {
    auto& face = p.faces[static_cast<std::size_t>(f)];
    if (periodic_x && f < 2) {
      face.kind = BoundaryKind::periodic;
      continue;
    }
    face.kind = BoundaryKind::convective;
    face.transfer = 10.0;
    face.emissivity = 0.3 + 0.1 * f;
    face.value = 280.0 + 15.0 * f;
  }
  const std::int64_t np = p.points();
  const std::size_t sn = static_cast<std::size_t>(np);
  c.fields.conductivity.assign(sn, 20.0);
  c.fields.capacity.assign(sn, 4.0e6);
  c.fields.capacity[1] = 0.0;  // a void on y-
  c.fields.sources.push_back({std::vector<double>(sn, 1000.0), {}, false});
  c.u.resize(sn);
  for (std::int64_t i = 0; i < np; ++i)
    c.u[static_cast<std::size_t>(i)] = 300.0 + static_cast<double>((i * 37) % 101) * 7.5;
  for (int a = 0; a < dims; ++a) {
    auto& K = c.fields.faces[static_cast<std::size_t>(a)];
    K.resize(sn);
    for (std::int64_t i = 0; i < np; ++i) K[static_cast<std::size_t>(i)] = 15.0 + 0.01 * i + a;
  }
  // A radiating surface inside the body at every third node.
  CoefficientFields::Radiation r;
  r.coefficient.assign(sn, 0.0);
  for (std::size_t i = 0; i < sn; i += 3) r.coefficient[i] = 2.0e-6 * (1.0 + i % 5);
  r.ambient.value = 310.0;
  c.fields.radiation.push_back(r);
  if (!laws) return c;
  auto dep = std::make_shared<TemperatureDependence>();
  TemperatureLaw a, b;
  a.conductivity = {{300.0, 1.0}, {900.0, 1.4}};
  a.capacity = {{300.0, 1.0}, {900.0, 1.5}};
  b.conductivity = {{300.0, 1.0}, {500.0, 0.7}, {900.0, 0.35}};
  a.prepare();
  b.prepare();
  dep->laws = {a, b};
  dep->law.resize(sn);
  for (std::int64_t i = 0; i < np; ++i)
    dep->law[static_cast<std::size_t>(i)] = i % 7 == 0 ? -1 : (i / 3) % 2;
  for (int a2 = 0; a2 < dims; ++a2) dep->share[static_cast<std::size_t>(a2)].assign(sn, 0.5);
  c.fields.temperature = dep;
  return c;
}

// The rule of linearize.hpp, from each node's coordinates (divided out of its index).
void check(const Case& c, double t) {
  const StencilProblem& p = c.problem;
  const CoefficientFields& base = c.fields;
  const auto out = heatsim::solver::multigrid::linearize(p, base, c.u, t);
  const std::int64_t np = p.points();
  const auto& n = p.n;
  const std::int64_t stride[3] = {1, n[0], n[0] * n[1]};
  ASSERT_EQ(out->temperature, nullptr);
  EXPECT_TRUE(out->radiation.empty());
  // The faces are given: the nodes' k are not copied (the operator reads the faces).
  ASSERT_TRUE(base.has_faces());
  EXPECT_TRUE(out->conductivity.empty());
  ASSERT_EQ(out->sources.size(), base.sources.size() + 1);
  EXPECT_EQ(out->sources[0].density, base.sources[0].density);
  const std::vector<double>& load = out->sources.back().density;
  EXPECT_EQ(out->sources.back().schedule.at(t), 1.0);
  ASSERT_EQ(out->transfer.size(), static_cast<std::size_t>(np));
  const TemperatureDependence* laws = base.temperature.get();
  for (int a = 0; a < 3; ++a) {
    if (a >= p.dims || !laws) {
      EXPECT_EQ(out->faces[static_cast<std::size_t>(a)], base.faces[static_cast<std::size_t>(a)]);
      continue;
    }
    ASSERT_EQ(out->faces[static_cast<std::size_t>(a)].size(), static_cast<std::size_t>(np));
  }
  int radiating_nodes = 0;
  for (std::int64_t i = 0; i < np; ++i) {
    const std::size_t si = static_cast<std::size_t>(i);
    const std::int64_t coord[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
    const double ui = c.u[si];
    if (laws) {
      for (int a = 0; a < p.dims; ++a) {
        const double K0 = base.faces[static_cast<std::size_t>(a)][si];
        double expected = K0;
        if (coord[a] < n[a] - 1 || p.periodic(a)) {
          const std::int64_t j = coord[a] < n[a] - 1 ? i + stride[a] : i - (n[a] - 1) * stride[a];
          expected = laws->face(a, i, j, K0, ui, c.u[static_cast<std::size_t>(j)]);
        }
        EXPECT_EQ(out->faces[static_cast<std::size_t>(a)][si], expected)
            << "axis " << a << " node " << i;
      }
      const std::int32_t l = laws->law[si];
      const double ratio = l < 0 ? 1.0 : laws->laws[static_cast<std::size_t>(l)].capacity_ratio(ui);
      EXPECT_EQ(out->capacity[si], l < 0 ? base.capacity[si] : base.capacity[si] * ratio);
    } else {
      EXPECT_EQ(out->capacity[si], base.capacity[si]);
    }
    double transfer = 0.0, source = 0.0;
    const double ub3 = ui * ui * ui;
    for (int a = 0; a < p.dims; ++a)
      for (int side = 0; side < 2; ++side) {
        const auto& f = p.faces[static_cast<std::size_t>(2 * a + side)];
        if (!f.radiates() || base.capacity[si] == 0.0) continue;
        if (coord[a] != (side == 0 ? 0 : n[a] - 1)) continue;
        const double es = f.emissivity * heatsim::kernels::kStefanBoltzmann * 2.0 / p.h[a];
        const double amb = f.at(t);
        transfer += 4.0 * es * ub3;
        source += es * (3.0 * ub3 * ui + amb * amb * amb * amb);
        ++radiating_nodes;
      }
    const double R = base.radiation[0].coefficient[si];
    if (R != 0.0) {
      const double amb = base.radiation[0].ambient.at(t);
      transfer += 4.0 * R * ub3;
      source += R * (3.0 * ub3 * ui + amb * amb * amb * amb);
    }
    EXPECT_EQ(out->transfer[si], transfer) << "node " << i;
    EXPECT_EQ(load[si], source) << "node " << i;
  }
  // Each radiating face's plane, less the void's node on the planes it lies on.
  std::int64_t expected_nodes = 0;
  for (std::int64_t i = 0; i < np; ++i) {
    if (base.capacity[static_cast<std::size_t>(i)] != 0.0) continue;
    const std::int64_t coord[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
    for (int a = 0; a < p.dims; ++a)
      if (!p.periodic(a)) expected_nodes -= (coord[a] == 0) + (coord[a] == n[a] - 1);
  }
  for (int a = 0; a < p.dims; ++a)
    if (!p.periodic(a)) expected_nodes += 2 * np / n[a];
  EXPECT_EQ(radiating_nodes, expected_nodes);
}

TEST(Linearize, RadiatingFacesEverywhere3D) { check(make_case(3, {6, 5, 4}, false, false), 0.0); }

TEST(Linearize, RadiatingFacesPeriodicX3DWithLaws) {
  check(make_case(3, {5, 4, 3}, true, true), 2.0);
}

TEST(Linearize, RadiatingFacesEverywhere2DWithLaws) {
  check(make_case(2, {7, 5, 1}, false, true), 1.0);
}

// Without faces the operator takes each face's harmonic mean of the nodes' k: they are kept.
TEST(Linearize, NodesConductivitiesKeptWithoutFaces) {
  Case c = make_case(3, {6, 5, 4}, false, false);
  for (auto& K : c.fields.faces) K.clear();
  c.fields.conductivity[7] = 45.0;
  const auto out = heatsim::solver::multigrid::linearize(c.problem, c.fields, c.u, 0.0);
  EXPECT_EQ(out->conductivity, c.fields.conductivity);
  EXPECT_FALSE(out->has_faces());
}

// Enough nodes for the threads (32768 and more): the rows split among them.
TEST(Linearize, LargeGridWithLaws) { check(make_case(3, {40, 33, 27}, true, true), 3.0); }

}  // namespace
