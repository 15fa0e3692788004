// Heat-flow reports (solver/heat_flows.hpp): each row's flows and stored heat balance to the
// rounding of explicit steps and to the solve of implicit ones, on a plate with two materials,
// void surfaces of both kinds, every kind of face, and sources and ambients on schedules; the
// heat flux at the nodes is -k times the slope of a linear field, and a layered wall's steady
// flux at every node; observers with lead steps fire before each due step and the last;
// observers that need no check of the whole field fire without one, and one that reports a
// value that is not finite stops the run at its step.
#include "solver/heat_flows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/simulation.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"

namespace heatsim_tests {
namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::solver::Case;
using heatsim::solver::HeatFlowMeter;
using heatsim::solver::HeatFlowRows;
using heatsim::solver::TimeMethod;

// A 0.1 x 0.05 m plate: steel with a copper strip whose edges fall between nodes, a convective
// box void (its ambient on a sine) and a ball void taking 3 kW/m^2; x- Dirichlet on a sine, x+
// convective with an ambient table, y- a heat flux in, y+ insulated; a heater on a sine and a
// constant one.
Case plate() {
  Case c;
  c.grid.dims = 2;
  c.grid.n = {41, 21, 1};
  c.grid.length = {0.1, 0.05, 1.0};
  c.materials = {material("steel", 45.0, 7800, 470), material("copper", 390, 8960, 385)};
  heatsim::solver::RegionSpec gap;
  gap.is_void = true;
  gap.name = "gap";
  gap.shape = box({0.0411, 0.0213, 0}, {0.0607, 0.0388, 0});
  gap.surface.kind = BoundaryKind::convective;
  gap.surface.transfer = 80.0;
  gap.surface.value = 295.0;
  gap.surface.amplitude = 4.0;
  gap.surface.frequency = 0.5;
  heatsim::solver::RegionSpec hole;
  hole.is_void = true;
  hole.shape.kind = heatsim::solver::ShapeKind::ball;
  hole.shape.center = {0.0803, 0.0251, 0};
  hole.shape.radius = 0.0071;
  hole.surface = heatsim::solver::RegionSpec::insulated();
  hole.surface.heat_flux = true;
  hole.surface.value = 3000.0;
  c.regions = {region("steel"), region("copper", box({0.0137, 0, 0}, {0.0261, 0.05, 0})), gap,
               hole};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 310.0;
  c.boundary[0].amplitude = 5.0;
  c.boundary[0].frequency = 0.25;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 40.0;
  c.boundary[1].table = {{0.0, 290.0}, {1.0, 300.0}, {4.0, 285.0}};
  c.boundary[2] = heatsim::solver::RegionSpec::insulated();
  c.boundary[2].heat_flux = true;
  c.boundary[2].value = 1500.0;
  c.boundary[3] = heatsim::solver::RegionSpec::insulated();
  heatsim::solver::SourceSpec heater;
  heater.shape = box({0.0152, 0.0101, 0}, {0.0243, 0.0197, 0});
  heater.power = 400.0;
  heater.schedule = {0.6, 0.4, 1.5, {}};
  heatsim::solver::SourceSpec steady_heater;
  steady_heater.shape = box({0.065, 0.005, 0}, {0.09, 0.012, 0});
  steady_heater.power_density = 2e6;
  c.sources = {heater, steady_heater};
  return c;
}

struct Prepared {
  Case c;
  std::vector<std::int32_t> ids;
  heatsim::solver::VoidSurfaces surfaces;
  std::shared_ptr<const heatsim::kernels::CoefficientFields> fields;
};

Prepared prepare(Case c) {
  Prepared p{c, heatsim::solver::material_ids(c), {}, nullptr};
  p.surfaces = heatsim::solver::void_surfaces(p.c, p.ids);
  p.fields = heatsim::solver::coefficient_fields(p.c, p.ids, p.surfaces);
  return p;
}

double largest(const heatsim::solver::HeatFlowRow& row) {
  double m = std::abs(row.storage);
  for (double f : row.flows) m = std::max(m, std::abs(f));
  return m;
}

// A Neumann face is "insulated" (as `validate` says) only where its flux is zero.
TEST(HeatFlowRows, AFaceIsNamedInsulatedOnlyWhenNoHeatCrossesItEver) {
  Case c = plate();
  c.boundary[3].value = 2.0;  // a gradient du/dn: heat crosses
  const Prepared p = prepare(c);
  const double dt = 0.5 * heatsim::solver::field_stability(p.c, *p.fields).dt_limit;
  const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
  EXPECT_EQ(HeatFlowMeter(p.c, problem, p.fields, p.surfaces).names()[3], "face y+ (neumann)");
}

TEST(HeatFlowRows, ExplicitStepsBalanceToRounding) {
  const Prepared p = prepare(plate());
  const double dt = 0.9 * heatsim::solver::field_stability(p.c, *p.fields).dt_limit;
  const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
  const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces);
  // Four faces, two voids, two source fields.
  ASSERT_EQ(meter.names().size(), 8u);
  EXPECT_EQ(meter.names()[0], "face x- (dirichlet)");
  EXPECT_EQ(meter.names()[1], "face x+ (convective)");
  EXPECT_EQ(meter.names()[2], "face y- (neumann, heat flux)");
  EXPECT_EQ(meter.names()[3], "face y+ (insulated)");
  EXPECT_EQ(meter.names()[4], "void regions[2] (gap)");
  EXPECT_EQ(meter.names()[5], "void regions[3]");
  EXPECT_EQ(meter.names()[6], "sources[0]");
  EXPECT_EQ(meter.names()[7], "sources[1]");
  HeatFlowRows rows(meter, TimeMethod::explicit_euler, dt);
  EXPECT_EQ(rows.lead(), 1);

  auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
  backend->setup(problem);
  std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(p.c, u);
  backend->upload(u);
  int made = 0;
  for (std::int64_t step = 0; step <= 200; ++step) {
    if (step > 0) backend->advance(1, step - 1);
    backend->download(u);
    const auto row = rows.take(step, u, step % 20 == 0);
    if (step % 20 != 0) continue;
    ASSERT_TRUE(row.has_value()) << step;
    ++made;
    // The explicit step is exactly these flows times dt: what is left is rounding (measured
    // 4e-13 of the largest flow at most).
    EXPECT_LT(std::abs(row->imbalance), 1e-11 * largest(*row)) << "step " << step;
    if (step > 0) {
      EXPECT_GT(std::abs(row->flows[4]), 0.1) << "the gap's surface passes heat";
    }
  }
  EXPECT_EQ(made, 11);
}

TEST(HeatFlowRows, ImplicitStepsBalanceToTheSolve) {
  namespace mg = heatsim::solver::multigrid;
  for (TimeMethod method :
       {TimeMethod::backward_euler, TimeMethod::crank_nicolson, TimeMethod::bdf2}) {
    SCOPED_TRACE(mg::to_string(method));
    const Prepared p = prepare(plate());
    const double dt = 0.05;  // hundreds of explicit limits
    const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
    mg::SolveOptions options;
    options.tolerance = 1e-12;
    mg::ImplicitStepper stepper(problem, p.fields, method, dt,
                                heatsim::kernels::make_level_ops("cpu", problem.precision),
                                options);
    // The stepper's own operator: no second one.
    const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces, &stepper.heat_flow());
    HeatFlowRows rows(meter, method, dt);
    EXPECT_EQ(rows.lead(), method == TimeMethod::bdf2 ? 2 : 1);
    std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
    heatsim::solver::set_dirichlet_nodes(p.c, u);
    for (std::int64_t step = 0; step <= 30; ++step) {
      if (step > 0) stepper.advance(u, step - 1);
      const auto row = rows.take(step, u, true);
      ASSERT_TRUE(row.has_value()) << step;
      // Measured 5e-12 of the largest flow at most, at relative residual 1e-12.
      EXPECT_LT(std::abs(row->imbalance), 1e-10 * largest(*row)) << "step " << step;
    }
  }
}

TEST(HeatFlowRows, ASteadyStateStoresNothing) {
  Prepared p = prepare(plate());
  p.c.time.method = TimeMethod::steady;
  const auto problem = heatsim::solver::make_problem(p.c, 1.0, p.fields);
  const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces);
  HeatFlowRows rows(meter, TimeMethod::steady, 1.0);
  EXPECT_EQ(rows.lead(), 0);
  const std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  const auto row = rows.take(0, u, true);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->storage, 0.0);
  double sum = 0.0;
  for (double f : row->flows) sum += f;
  EXPECT_EQ(row->imbalance, sum);
}

// The plate with properties that vary with temperature: steel's conductivity a table, the
// copper strip melting over [305, 309] K with its capacity a table, x+ convective and radiating,
// y+ radiative alone, the gap's surface convective and radiating; the ball void's heat flux
// keeps it warm.
Case nonlinear_plate() {
  Case c = plate();
  c.materials[0].conductivity_table = {{280.0, 45.0}, {320.0, 60.0}, {400.0, 30.0}};
  c.materials[1].specific_heat_table = {{280.0, 385.0}, {330.0, 420.0}};
  c.materials[1].phase_change = heatsim::solver::PhaseChangeSpec{305.0, 309.0, 2.0e5};
  c.boundary[1].emissivity = 0.8;
  c.boundary[3].kind = BoundaryKind::convective;
  c.boundary[3].transfer = 0.0;
  c.boundary[3].value = 250.0;
  c.boundary[3].emissivity = 0.9;
  c.regions[2].surface.emissivity = 0.7;
  c.sources[1].power_density = 2e7;  // enough to melt the copper beside it
  return c;
}

// The names of its columns say which faces radiate.
TEST(HeatFlowRows, NamesTheRadiatingFaces) {
  const Prepared p = prepare(nonlinear_plate());
  const auto problem = heatsim::solver::make_problem(p.c, 1e-3, p.fields);
  const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces);
  ASSERT_EQ(meter.names().size(), 8u);
  EXPECT_EQ(meter.names()[1], "face x+ (convective, radiating)");
  EXPECT_EQ(meter.names()[3], "face y+ (radiative)");
  EXPECT_EQ(meter.names()[4], "void regions[2] (gap)");
}

// Explicit steps evaluate k(T) and the radiation at the step's start and advance the enthalpy
// where the capacity varies: the flows at the field before the step and the enthalpy's change
// balance to rounding, through melting.
TEST(HeatFlowRows, ExplicitStepsBalanceWithVaryingPropertiesAndRadiation) {
  const Prepared p = prepare(nonlinear_plate());
  const double dt = 0.9 * heatsim::solver::field_stability(p.c, *p.fields).dt_limit;
  const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
  const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces);
  HeatFlowRows rows(meter, TimeMethod::explicit_euler, dt);
  auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
  backend->setup(problem);
  std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(p.c, u);
  backend->upload(u);
  const heatsim::kernels::TemperatureDependence& laws = *p.fields->temperature;
  bool melting = false;
  for (std::int64_t step = 0; step <= 3000; ++step) {
    if (step > 0) backend->advance(1, step - 1);
    backend->download(u);
    const bool due = step % 300 == 0;
    const auto row = rows.take(step, u, due);
    if (!due) continue;
    ASSERT_TRUE(row.has_value()) << step;
    // Rounding: up to 0.9e-11 of the largest flow measured, 1.7e-11 with the gap's slivers
    // folded into the body beside them (its bounds cut slivers 0.02 and 0.22 of a spacing
    // thick from two rows of nodes).
    EXPECT_LT(std::abs(row->imbalance), 3e-11 * largest(*row)) << "step " << step;
    if (step > 0) {
      EXPECT_GT(std::abs(row->flows[3]), 1.0) << "y+ radiates";
      EXPECT_GT(std::abs(row->flows[4]), 0.1) << "the gap's surface passes heat";
    }
    for (std::size_t i = 0; i < u.size(); ++i)
      if (laws.law[i] >= 0 && u[i] > 305.0 && u[i] < 309.0 && p.fields->capacity[i] > 0.0 &&
          laws.laws[static_cast<std::size_t>(laws.law[i])].latent > 0.0)
        melting = true;
  }
  EXPECT_TRUE(melting) << "some copper node passed through its melting range";
}

// Backward Euler iterates to the nonlinear step's solution: the balance holds to the outer
// iteration's tolerance; a steady state's flows sum to that of its last outer iteration.
TEST(HeatFlowRows, NonlinearImplicitStepsAndSteadyStatesBalance) {
  namespace mg = heatsim::solver::multigrid;
  const Prepared p = prepare(nonlinear_plate());
  const double dt = 0.05;
  const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
  mg::SolveOptions options;
  options.tolerance = 1e-12;
  mg::ImplicitStepper stepper(problem, p.fields, TimeMethod::backward_euler, dt,
                              heatsim::kernels::make_level_ops("cpu", problem.precision), options);
  // The stepper's operator is linearised at its last field: the meter takes its own.
  const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces, &stepper.heat_flow());
  HeatFlowRows rows(meter, TimeMethod::backward_euler, dt);
  std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(p.c, u);
  for (std::int64_t step = 0; step <= 20; ++step) {
    if (step > 0) stepper.advance(u, step - 1);
    const auto row = rows.take(step, u, true);
    ASSERT_TRUE(row.has_value()) << step;
    EXPECT_LT(std::abs(row->imbalance), 1e-8 * largest(*row)) << "step " << step;
  }

  Case steady_case = p.c;
  steady_case.time.method = TimeMethod::steady;
  const auto steady_problem = heatsim::solver::make_problem(steady_case, 1.0, p.fields);
  mg::ImplicitStepper steady(steady_problem, p.fields, TimeMethod::steady, 1.0,
                             heatsim::kernels::make_level_ops("cpu", problem.precision), options);
  const HeatFlowMeter steady_meter(steady_case, steady_problem, p.fields, p.surfaces);
  std::vector<double> s(static_cast<std::size_t>(problem.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(steady_case, s);
  steady.advance(s, 0);
  const auto report = steady_meter.report(s, 0.0);
  EXPECT_LT(std::abs(report.imbalance), 1e-8 * report.largest);
  EXPECT_GT(report.largest, 100.0);
}

// The plate with y- a Dirichlet face too (its corner with x- on both, x- on a sine), y+
// convective, and a source over the x- face's nodes: every Dirichlet node's
// reaction, the corner's split between its faces, the other faces' and the source's parts on
// the Dirichlet nodes and their stored heat balance as the free nodes' flows do, for explicit
// steps, every implicit method and a steady state.
Case dirichlet_corner_plate() {
  Case c = plate();
  c.boundary[2] = {};
  c.boundary[2].kind = BoundaryKind::dirichlet;
  c.boundary[2].value = 320.0;
  c.boundary[3].kind = BoundaryKind::convective;
  c.boundary[3].transfer = 30.0;
  c.boundary[3].value = 290.0;
  heatsim::solver::SourceSpec edge;
  edge.shape = box({0.0, 0.02, 0}, {0.004, 0.03, 0});
  edge.power = 100.0;
  edge.schedule = c.sources[0].schedule;
  c.sources.push_back(edge);
  return c;
}

TEST(HeatFlowRows, DirichletFacesMeetingAtACornerBalance) {
  namespace mg = heatsim::solver::multigrid;
  {
    const Prepared p = prepare(dirichlet_corner_plate());
    const double dt = 0.9 * heatsim::solver::field_stability(p.c, *p.fields).dt_limit;
    const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
    const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces);
    EXPECT_EQ(meter.names()[2], "face y- (dirichlet)");
    HeatFlowRows rows(meter, TimeMethod::explicit_euler, dt);
    auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
    backend->setup(problem);
    std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
    heatsim::solver::set_dirichlet_nodes(p.c, u);
    backend->upload(u);
    for (std::int64_t step = 0; step <= 200; ++step) {
      if (step > 0) backend->advance(1, step - 1);
      backend->download(u);
      const auto row = rows.take(step, u, step % 20 == 0);
      if (step % 20 != 0) continue;
      ASSERT_TRUE(row.has_value()) << step;
      EXPECT_LT(std::abs(row->imbalance), 1e-11 * largest(*row)) << "step " << step;
      EXPECT_GT(std::abs(row->flows[2]), 1.0) << "y- passes heat";
    }
  }
  for (TimeMethod method : {TimeMethod::backward_euler, TimeMethod::crank_nicolson,
                            TimeMethod::bdf2, TimeMethod::steady}) {
    SCOPED_TRACE(mg::to_string(method));
    Prepared p = prepare(dirichlet_corner_plate());
    p.c.time.method = method;
    const double dt = method == TimeMethod::steady ? 1.0 : 0.05;
    const auto problem = heatsim::solver::make_problem(p.c, dt, p.fields);
    mg::SolveOptions options;
    options.tolerance = 1e-12;
    mg::ImplicitStepper stepper(problem, p.fields, method, dt,
                                heatsim::kernels::make_level_ops("cpu", problem.precision),
                                options);
    const HeatFlowMeter meter(p.c, problem, p.fields, p.surfaces, &stepper.heat_flow());
    HeatFlowRows rows(meter, method, dt);
    std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
    heatsim::solver::set_dirichlet_nodes(p.c, u);
    const std::int64_t steps = method == TimeMethod::steady ? 1 : 20;
    for (std::int64_t step = 0; step <= steps; ++step) {
      if (method == TimeMethod::steady)
        stepper.advance(u, 0);
      else if (step > 0)
        stepper.advance(u, step - 1);
      const auto row = rows.take(step, u, true);
      ASSERT_TRUE(row.has_value()) << step;
      EXPECT_LT(std::abs(row->imbalance), 1e-10 * largest(*row)) << "step " << step;
      if (method == TimeMethod::steady) break;
    }
  }
}

// The conductivity written at the nodes is k(T) at their temperature; the liquid fraction
// runs from 0 to 1 over the melting range.
TEST(NodeFields, ConductivityAndLiquidFractionFollowTheField) {
  const Prepared p = prepare(nonlinear_plate());
  const heatsim::kernels::TemperatureDependence& laws = *p.fields->temperature;
  std::vector<double> u(p.fields->capacity.size());
  // 295 to 315 K, scattered over the nodes.
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double x = 0.6180339887 * static_cast<double>(i);
    u[i] = 295.0 + 20.0 * (x - std::floor(x));
  }
  const std::vector<double> k = heatsim::solver::node_conductivity(*p.fields, u.data());
  const std::vector<double> phi = heatsim::solver::node_liquid_fraction(*p.fields, u.data());
  int steel = 0, melting = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    // A node folded into the body beside it (the gap's bounds cut slivers of steel from the
    // nodes inside it) holds nothing and takes no law, as a void's.
    if (p.fields->capacity[i] == 0.0) continue;
    if (p.ids[i] == 0) {
      // 45 at 280 K rising to 60 at 320 K.
      EXPECT_NEAR(k[i], 45.0 + 15.0 * (u[i] - 280.0) / 40.0, 1e-9) << i;
      EXPECT_EQ(phi[i], 0.0);
      ++steel;
    }
    if (p.ids[i] == 1) {
      EXPECT_DOUBLE_EQ(k[i], 390.0);
      EXPECT_NEAR(phi[i], std::clamp((u[i] - 305.0) / 4.0, 0.0, 1.0), 1e-12) << i;
      if (phi[i] > 0.0 && phi[i] < 1.0) ++melting;
    }
    if (laws.law[i] < 0) {
      EXPECT_EQ(phi[i], 0.0);
    }
  }
  EXPECT_GT(steel, 100);
  EXPECT_GT(melting, 5);
  const std::vector<float> f(u.begin(), u.end());
  const std::vector<double> kf = heatsim::solver::node_conductivity(*p.fields, f.data());
  for (std::size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(kf[i], k[i], 1e-4 * k[i]);
}

// A field linear along every axis in one material: every node's flux is -k times the slope,
// boundary nodes included.
TEST(NodeHeatFlux, ALinearFieldGivesMinusKTimesTheSlope) {
  for (int dims : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    Case c;
    c.grid.dims = dims;
    c.grid.n = {9, dims > 1 ? 7 : 1, dims > 2 ? 5 : 1};
    c.grid.length = {0.8, 0.3, 0.2};
    c.materials = {material("steel", 45.0, 7800, 470)};
    c.regions = {region("steel")};
    const auto fields = heatsim::solver::coefficient_fields(c);
    const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
    const double slope[3] = {120.0, -35.0, 7.5};
    std::vector<double> u(static_cast<std::size_t>(problem.points()));
    for (std::int64_t i = 0; i < problem.points(); ++i) {
      const std::int64_t at[3] = {i % problem.n[0], i / problem.n[0] % problem.n[1],
                                  i / (problem.n[0] * problem.n[1])};
      u[static_cast<std::size_t>(i)] = 300.0;
      for (int a = 0; a < dims; ++a)
        u[static_cast<std::size_t>(i)] += slope[a] * at[a] * problem.h[a];
    }
    const std::vector<double> q =
        heatsim::solver::node_heat_flux(problem, fields.get(), 0.0, u.data());
    ASSERT_EQ(q.size(), static_cast<std::size_t>(3 * problem.points()));
    for (std::int64_t i = 0; i < problem.points(); ++i)
      for (int a = 0; a < 3; ++a) {
        const double expected = a < dims ? -45.0 * slope[a] : 0.0;
        EXPECT_NEAR(q[static_cast<std::size_t>(3 * i + a)], expected, 1e-9 * 45.0 * 120.0)
            << "node " << i << " axis " << a;
      }
    // The shorthand: k = physics.alpha, no fields.
    const std::vector<float> uf(u.begin(), u.end());
    const std::vector<double> qs =
        heatsim::solver::node_heat_flux(problem, nullptr, 2.0, uf.data());
    EXPECT_NEAR(qs[0], -2.0 * slope[0], 1e-3);
  }
}

// Three layers with their interfaces between nodes, steady: the same heat flux through every
// node, the wall's U-value times the difference, from the faces' series conductances.
TEST(NodeHeatFlux, ALayeredWallCarriesOneFluxThroughEveryNode) {
  namespace mg = heatsim::solver::multigrid;
  Case c;
  c.grid.dims = 1;
  c.grid.n = {100, 1, 1};
  c.grid.length = {0.2425, 1.0, 1.0};
  c.materials = {material("gypsum", 0.25, 900, 1000), material("wool", 0.035, 30, 840),
                 material("concrete", 1.4, 2300, 880)};
  c.regions = {region("gypsum"), region("wool", box({0.0125, 0, 0}, {0.0925, 0, 0})),
               region("concrete", box({0.0925, 0, 0}, {0.2425, 0, 0}))};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 293.15;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 25.0;
  c.boundary[1].value = 263.15;
  const auto fields = heatsim::solver::coefficient_fields(c);
  const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  mg::ImplicitStepper stepper(problem, fields, TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", problem.precision), options);
  std::vector<double> u(100, 280.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.advance(u, 0);
  const double R = 0.0125 / 0.25 + 0.08 / 0.035 + 0.15 / 1.4 + 1.0 / 25.0, flux = 30.0 / R;
  const std::vector<double> q =
      heatsim::solver::node_heat_flux(problem, fields.get(), 0.0, u.data());
  for (int i = 0; i < 100; ++i) EXPECT_NEAR(q[3 * i], flux, 1e-9 * flux) << "node " << i;
}

// A 1D case of n nodes and the given steps, its other settings the defaults.
Case line_case(std::int64_t n, std::int64_t steps) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {n, 1, 1};
  c.time.steps = steps;
  return c;
}

// An observer with lead steps fires at the steps before each due one and before the last.
TEST(Simulation, LeadStepsFireBeforeEachDueStepAndTheLast) {
  const Case c = line_case(11, 25);
  const heatsim::solver::TimePlan plan = heatsim::solver::plan_time(c);
  const auto problem = heatsim::solver::make_problem(c, plan.dt);
  auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
  backend->setup(problem);
  backend->upload(std::vector<double>(11, 1.0));
  heatsim::solver::Simulation sim(c, plan, *backend);
  std::vector<std::int64_t> fired;
  heatsim::solver::Observer o{"rows", 10, true, true,
                              [&](heatsim::solver::StepState& s) { fired.push_back(s.step()); }};
  o.lead = 2;
  sim.add_observer(o);
  sim.run();
  EXPECT_EQ(fired, (std::vector<std::int64_t>{0, 8, 9, 10, 18, 19, 20, 23, 24, 25}));
}

// A backend that hands its calls to the CPU backend: what the test backends below change.
class WrappedCpu : public heatsim::kernels::Backend {
 public:
  explicit WrappedCpu(std::unique_ptr<heatsim::kernels::Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  heatsim::kernels::Capabilities capabilities() const override { return inner_->capabilities(); }
  void setup(const heatsim::kernels::StencilProblem& p) override { inner_->setup(p); }
  void upload(const std::vector<double>& f) override { inner_->upload(f); }
  void download(std::vector<double>& f) override { inner_->download(f); }
  void advance(std::int64_t steps, std::int64_t step0) override { inner_->advance(steps, step0); }
  heatsim::kernels::FieldStats stats() override { return inner_->stats(); }
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    inner_->sample(nodes, values);
  }

 private:
  std::unique_ptr<heatsim::kernels::Backend> inner_;
};

// The CPU backend, counting the checks of the whole field (stats()).
class CountingBackend final : public WrappedCpu {
 public:
  using WrappedCpu::WrappedCpu;
  heatsim::kernels::FieldStats stats() override {
    ++checks;
    return WrappedCpu::stats();
  }
  int checks = 0;
};

// An observer that reads one node every 5 steps: with needs_check it costs a check of the
// whole field at each firing, without one none; reporting a value that is not finite has the
// loop check at once, which stops a field holding a NaN at that step.
TEST(Simulation, UncheckedObserversFireWithoutTheWholeFieldsCheck) {
  const Case c = line_case(41, 100);
  const heatsim::solver::TimePlan plan = heatsim::solver::plan_time(c);
  const auto problem = heatsim::solver::make_problem(c, plan.dt);
  for (const bool needs_check : {true, false}) {
    CountingBackend backend(heatsim::kernels::make_cpu_backend(problem.precision));
    backend.setup(problem);
    backend.upload(std::vector<double>(41, 1.0));
    heatsim::solver::Simulation sim(c, plan, backend);
    int fired = 0;
    heatsim::solver::Observer o{"node", 5, false, false, [&](heatsim::solver::StepState& s) {
                                  std::vector<double> v;
                                  backend.sample({20}, v);
                                  if (!std::isfinite(v.at(0))) s.report_non_finite();
                                  ++fired;
                                }};
    o.needs_check = needs_check;
    sim.add_observer(o);
    const heatsim::solver::RunResult r = sim.run();
    EXPECT_EQ(r.status, heatsim::solver::RunResult::Status::completed);
    EXPECT_EQ(fired, 20) << "steps 5 to 100";
    if (needs_check)
      EXPECT_GE(backend.checks, 20);
    else
      EXPECT_LE(backend.checks, 2) << "the last step's check and the final statistics";
  }

  // A NaN at the sampled node from step 0: the unchecked observer reports it at step 5.
  CountingBackend backend(heatsim::kernels::make_cpu_backend(problem.precision));
  backend.setup(problem);
  std::vector<double> u(41, 1.0);
  u[20] = std::numeric_limits<double>::quiet_NaN();
  backend.upload(u);
  heatsim::solver::Simulation sim(c, plan, backend);
  heatsim::solver::Observer o{"node", 5, false, false, [&](heatsim::solver::StepState& s) {
                                std::vector<double> v;
                                backend.sample({20}, v);
                                if (!std::isfinite(v.at(0))) s.report_non_finite();
                              }};
  o.needs_check = false;
  sim.add_observer(o);
  const heatsim::solver::RunResult r = sim.run();
  EXPECT_EQ(r.status, heatsim::solver::RunResult::Status::diverged);
  EXPECT_EQ(r.last_step, 5) << r.message;
  EXPECT_NE(r.message.find("at step 5 "), std::string::npos) << r.message;
}


// The CPU backend, sampling as a device backend does (Backend::sample_later): the values are
// taken when asked for but handed out only by collect_samples(); counting the loop's waits
// (synchronize()). From the `poison_at`-th sample on, the samples and the field's check see a
// value that is not finite, as a field gone bad would show them.
class QueuingBackend final : public WrappedCpu {
 public:
  QueuingBackend(std::unique_ptr<heatsim::kernels::Backend> inner, bool queues, int poison_at)
      : WrappedCpu(std::move(inner)), queues_(queues), poison_at_(poison_at) {}
  void synchronize() override { ++waits; }
  heatsim::kernels::FieldStats stats() override {
    heatsim::kernels::FieldStats st = WrappedCpu::stats();
    if (poisoned_) st.non_finite = 1;
    return st;
  }
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    WrappedCpu::sample(nodes, values);
    if (++samples_ >= poison_at_) poisoned_ = true;
    if (poisoned_) values.assign(values.size(), std::numeric_limits<double>::quiet_NaN());
  }
  void sample_later(const std::vector<std::int64_t>& nodes) override {
    queued_.emplace_back();
    sample(nodes, queued_.back());
  }
  void collect_samples(std::vector<std::vector<double>>& samples) override {
    samples = std::move(queued_);
    queued_.clear();
  }
  bool queues_samples() const override { return queues_; }
  int waits = 0;

 private:
  bool queues_;
  int poison_at_, samples_ = 0;
  bool poisoned_ = false;
  std::vector<std::vector<double>> queued_;
};

struct QueuedRun {
  heatsim::solver::RunResult result;
  std::vector<std::pair<std::int64_t, double>> rows;  // step, value
  int waits = 0;
};

// Probe-like rows every 5 steps (queued, collected) beside an observer every 20 steps that
// waits for the device and expects the rows up to its own step written.
QueuedRun run_queued(bool queues, int poison_at) {
  const Case c = line_case(41, 100);
  const heatsim::solver::TimePlan plan = heatsim::solver::plan_time(c);
  const auto problem = heatsim::solver::make_problem(c, plan.dt);
  QueuingBackend backend(heatsim::kernels::make_cpu_backend(problem.precision), queues, poison_at);
  backend.setup(problem);
  std::vector<double> u(41);
  for (int i = 0; i < 41; ++i) u[static_cast<std::size_t>(i)] = std::sin(0.1 * i) + 2.0;
  backend.upload(u);
  heatsim::solver::Simulation sim(c, plan, backend);
  QueuedRun out;
  std::vector<std::int64_t> pending;
  heatsim::solver::Observer rows{"rows", 5, true, true, [&](heatsim::solver::StepState& s) {
                                   backend.sample_later({20});
                                   pending.push_back(s.step());
                                 }};
  rows.needs_check = false;
  rows.collect = [&](heatsim::solver::StepState& s) {
    std::vector<std::vector<double>> samples;
    backend.collect_samples(samples);
    EXPECT_EQ(samples.size(), pending.size());
    for (std::size_t k = 0; k < samples.size() && k < pending.size(); ++k) {
      if (!std::isfinite(samples[k].at(0))) {
        s.report_non_finite();
        break;
      }
      out.rows.emplace_back(pending[k], samples[k][0]);
    }
    pending.clear();
  };
  sim.add_observer(rows);
  sim.add_observer({"every 20", 20, false, false, [&](heatsim::solver::StepState& s) {
                      ASSERT_FALSE(out.rows.empty());
                      EXPECT_EQ(out.rows.back().first, s.step()) << "rows not yet collected";
                    }});
  out.result = sim.run();
  out.waits = backend.waits;
  EXPECT_TRUE(pending.empty()) << "a sample left uncollected";
  return out;
}

// A backend whose samples are queued: the loop does not wait for the device at the chunk ends
// where only the queued rows are due, collects them wherever it waits, before another observer
// fires there, and the rows are those of samples taken at once, bit for bit.
TEST(Simulation, QueuedSamplesAreCollectedWhereTheLoopWaits) {
  const QueuedRun at_once = run_queued(false, 1000), queued = run_queued(true, 1000);
  EXPECT_EQ(at_once.result.status, heatsim::solver::RunResult::Status::completed);
  EXPECT_EQ(queued.result.status, heatsim::solver::RunResult::Status::completed);
  ASSERT_EQ(queued.rows.size(), 21u) << "steps 0, 5, ..., 100";
  for (std::size_t k = 0; k < queued.rows.size(); ++k)
    EXPECT_EQ(queued.rows[k].first, static_cast<std::int64_t>(5 * k));
  EXPECT_EQ(queued.rows, at_once.rows);
  // At once: a wait at every chunk end (every 5 steps, and the first chunks' ends before step
  // 5); queued: at the first chunks' ends, at the steps of the observer every 20 and at the
  // end.
  EXPECT_GE(at_once.waits, 20);
  EXPECT_LE(queued.waits, 9) << "waited " << queued.waits << " times";

  // The fourth sample (step 15) is not finite: no row from there on; taken at once the run
  // stops at step 15, queued where the loop next waits (step 20, the other observer's).
  const QueuedRun bad_at_once = run_queued(false, 4), bad_queued = run_queued(true, 4);
  for (const QueuedRun* r : {&bad_at_once, &bad_queued}) {
    EXPECT_EQ(r->result.status, heatsim::solver::RunResult::Status::diverged);
    ASSERT_EQ(r->rows.size(), 3u);
    EXPECT_EQ(r->rows.back().first, 10);
  }
  EXPECT_EQ(bad_at_once.result.last_step, 15) << bad_at_once.result.message;
  EXPECT_EQ(bad_queued.result.last_step, 20) << bad_queued.result.message;
}

}  // namespace
}  // namespace heatsim_tests
