// Scheduled sources on implicit steps (solver/multigrid/implicit_stepper.hpp): an insulated bar
// heated uniformly stays uniform, so its heat content is exactly what the sources put in. A
// pulse of power that starts and ends between two step times must add its whole energy
// (backward Euler, Crank-Nicolson and BDF2, constant and temperature-dependent conductivity),
// as the explicit method's mean of the schedule over the step does; a sine source adds exactly
// its integral on backward Euler and Crank-Nicolson steps, and on BDF2's up to the last step's
// part of second order. The heat-flow rows report the source the steps applied: they balance to the
// solve.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"

namespace heatsim_tests {
namespace {

namespace mg = heatsim::solver::multigrid;
using heatsim::solver::Case;
using heatsim::solver::TimeMethod;

constexpr double kLength = 0.01, kRho = 2700.0, kCp = 900.0, kPower = 1000.0;  // W/m^2 in 1D

// An insulated aluminium bar, 11 nodes, heated by kPower over its whole length on `schedule`;
// with `varying_k` its conductivity is a table of T.
Case bar(const heatsim::kernels::Schedule& schedule, bool varying_k) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {11, 1, 1};
  c.grid.length = {kLength, 1.0, 1.0};
  heatsim::solver::MaterialSpec al = material("al", 200.0, kRho, kCp);
  if (varying_k) al.conductivity_table = {{300.0, 200.0}, {400.0, 150.0}};
  c.materials = {al};
  c.regions = {region("al")};
  c.boundary[0] = heatsim::solver::RegionSpec::insulated();
  c.boundary[1] = heatsim::solver::RegionSpec::insulated();
  heatsim::solver::SourceSpec heater;
  heater.power = kPower;
  heater.schedule = schedule;
  c.sources = {heater};
  return c;
}

// The heat content per m^2 of cross-section (J/m^2) above 300 K: the nodes' trapezoid weights.
double heat_above_300(const std::vector<double>& u) {
  const double h = kLength / static_cast<double>(u.size() - 1);
  double sum = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i)
    sum += (i == 0 || i + 1 == u.size() ? 0.5 : 1.0) * h * (u[i] - 300.0);
  return kRho * kCp * sum;
}

struct BarRun {
  std::vector<double> u;
  double largest_imbalance = 0.0;  // of the heat-flow rows, relative to their largest flow
};

// `steps` steps of dt from 300 K with the given method, every step's heat-flow row checked.
BarRun run(const Case& c, TimeMethod method, double dt, std::int64_t steps) {
  auto ids = heatsim::solver::material_ids(c);
  auto surfaces = heatsim::solver::void_surfaces(c, ids);
  auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
  const auto problem = heatsim::solver::make_problem(c, dt, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  mg::ImplicitStepper stepper(problem, fields, method, dt,
                              heatsim::kernels::make_level_ops("cpu", problem.precision), options);
  const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces, &stepper.heat_flow());
  heatsim::solver::HeatFlowRows rows(meter, method, dt);
  BarRun r;
  r.u.assign(static_cast<std::size_t>(problem.points()), 300.0);
  for (std::int64_t step = 0; step <= steps; ++step) {
    if (step > 0) stepper.advance(r.u, step - 1);
    const auto row = rows.take(step, r.u, true);
    if (!row || step == 0) continue;
    double largest = std::abs(row->storage);
    for (double f : row->flows) largest = std::max(largest, std::abs(f));
    if (largest > 0.0)
      r.largest_imbalance = std::max(r.largest_imbalance, std::abs(row->imbalance) / largest);
  }
  return r;
}

TEST(ImplicitSources, APulseBetweenStepTimesAddsItsWholeEnergy) {
  // 1 kW/m^2 from t = 1.1 to 1.3 (ramps of 0.1 ms): 200 J/m^2, wholly inside the step from
  // 1.0 to 1.5, so that neither step end samples it.
  const heatsim::kernels::Schedule pulse{
      0.0, 0.0, 0.0, {{0.0, 0.0}, {1.1, 0.0}, {1.1001, 1.0}, {1.3, 1.0}, {1.3001, 0.0}}};
  const double energy = kPower * 0.2;
  for (bool varying_k : {false, true}) {
    for (TimeMethod method :
         {TimeMethod::backward_euler, TimeMethod::crank_nicolson, TimeMethod::bdf2}) {
      if (varying_k && method == TimeMethod::crank_nicolson) continue;  // refused there
      SCOPED_TRACE(std::string(mg::to_string(method)) + (varying_k ? ", k(T)" : ""));
      const BarRun r = run(bar(pulse, varying_k), method, 0.5, 20);
      // Backward Euler and Crank-Nicolson add the step's mean exactly; BDF2's stored heat
      // settles on it as its last step's change dies out (a third a step: 3^-18 after it).
      const double tol = method == TimeMethod::bdf2 ? 1e-6 : 1e-9;
      EXPECT_NEAR(heat_above_300(r.u), energy, tol * energy);
      EXPECT_LT(r.largest_imbalance, 1e-8);
      // Uniform heating keeps the bar uniform.
      EXPECT_NEAR(r.u.front(), r.u.back(), 1e-9);
    }
  }
}

TEST(ImplicitSources, ASineSourceAddsItsIntegral) {
  // 1 + 0.5 sin(2 pi 0.3 t) for t in [0, 4]: the integral is 4 + 0.5 (1 - cos(2.4 pi)) / (0.6 pi).
  const heatsim::kernels::Schedule sine{1.0, 0.5, 0.3, {}};
  const double end = 4.0, w = 2.0 * M_PI * 0.3;
  const double energy = kPower * (end + 0.5 * (1.0 - std::cos(w * end)) / w);
  for (TimeMethod method : {TimeMethod::backward_euler, TimeMethod::crank_nicolson}) {
    SCOPED_TRACE(mg::to_string(method));
    const BarRun r = run(bar(sine, false), method, 0.25, 16);
    EXPECT_NEAR(heat_above_300(r.u), energy, 1e-10 * energy);
    EXPECT_LT(r.largest_imbalance, 1e-8);
  }
  // BDF2: its stored heat counts 3/2 of the last step's change less 1/2 of the one before, and
  // its source factors sum to the integral in the same way, so what is left is that last
  // step's part, of second order (measured 3.5e-11, 3.2e-12 and 9.3e-13 of the energy at dt
  // 0.5, 0.25 and 0.125; sampling the schedule at the step ends left 3%).
  for (int k = 0; k < 3; ++k) {
    const double dt = 0.5 / (1 << k);
    SCOPED_TRACE("bdf2 at dt " + std::to_string(dt));
    const BarRun r = run(bar(sine, false), TimeMethod::bdf2, dt, 8 << k);
    EXPECT_NEAR(heat_above_300(r.u), energy, 1e-9 * energy);
    EXPECT_LT(r.largest_imbalance, 1e-8);
  }
}

}  // namespace
}  // namespace heatsim_tests
