// Nonlinear implicit steps and steady states (solver/multigrid/linearize.hpp: outer iterations
// around the multigrid) on a device's level operations against the CPU's: a 3D block of steel
// with k(T), a strip of wax that melts, a face that convects and radiates and one that only
// radiates, a heat source, a Dirichlet face. Each outer iteration rebuilds the operator on the
// device; the steady state and five backward Euler or BDF2 steps through melting end where the
// CPU's do (relative 1e-9, the outer tolerance's order), with the same outer iteration counts.
#include <cmath>
#include <memory>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryKind;
namespace mg = solver::multigrid;

solver::Case melting_block(solver::TimeMethod method) {
  solver::Case c;
  c.grid.dims = 3;
  c.grid.n = {37, 21, 13};
  c.grid.length = {0.09, 0.05, 0.03};
  solver::MaterialSpec steel = heatsim_tests::material("steel", 16.2, 7900.0, 500.0);
  steel.conductivity_table = {{300.0, 16.2}, {900.0, 23.0}};
  steel.specific_heat_table = {{300.0, 500.0}, {900.0, 650.0}};
  solver::MaterialSpec wax = heatsim_tests::material("wax", 0.2, 800.0, 2000.0);
  wax.phase_change = solver::PhaseChangeSpec{318.0, 320.0, 2.0e5};
  c.materials = {steel, wax};
  c.regions = {heatsim_tests::region("steel"),
               heatsim_tests::region("wax", heatsim_tests::box({0.0313, -1.0, 0.0071},
                                                               {0.0521, 1.0, 0.0219}))};
  solver::SourceSpec heater;
  heater.shape = heatsim_tests::box({0.0, 0.0, 0.0}, {0.012, 0.05, 0.03});
  heater.power_density = 4e5;
  c.sources = {heater};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 330.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 10.0;
  c.boundary[1].value = 300.0;
  c.boundary[1].emissivity = 0.9;
  c.boundary[2].kind = BoundaryKind::convective;
  c.boundary[2].transfer = 0.0;
  c.boundary[2].value = 290.0;
  c.boundary[2].emissivity = 0.8;
  for (int f = 3; f < 6; ++f) c.boundary[f] = solver::RegionSpec::insulated();
  c.time.method = method;
  return c;
}

struct Result {
  std::vector<double> u;
  std::vector<int> outer;
};

Result run(const solver::Case& c, double dt, int steps, const std::string& ops,
           bool newton = true) {
  const auto fields = solver::coefficient_fields(c);
  const kernels::StencilProblem p = solver::make_problem(c, dt, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-11;
  options.newton = newton;
  Result r;
  options.on_outer_iteration = [&r](int iteration, double, const mg::SolveReport&) {
    if (iteration == 1) r.outer.push_back(0);
    r.outer.back() = iteration;
  };
  mg::ImplicitStepper stepper(p, fields, c.time.method, dt,
                              kernels::make_level_ops(ops, kernels::Precision::fp64), options);
  r.u.assign(static_cast<std::size_t>(p.points()), 316.0);  // the wax just below its solidus
  solver::set_dirichlet_nodes(c, r.u);
  for (int s = 0; s < steps; ++s) stepper.advance(r.u, s);
  return r;
}

class NonlinearImplicit : public ::testing::Test {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_F(NonlinearImplicit, SteadyBackwardEulerAndBdf2OnTheDeviceMatchTheCpu) {
  for (const std::string& device : {std::string("register-tiling"), std::string("cuda-naive")}) {
    SCOPED_TRACE(device);
    {
      const solver::Case c = melting_block(solver::TimeMethod::steady);
      const Result cpu = run(c, 1.0, 1, "cpu");
      const Result gpu = run(c, 1.0, 1, device);
      EXPECT_LE(relative_difference(gpu.u, cpu.u), 1e-9);
      EXPECT_EQ(gpu.outer, cpu.outer);
      ASSERT_FALSE(cpu.outer.empty());
      EXPECT_GT(cpu.outer[0], 2) << "the properties made it iterate";
    }
    for (const solver::TimeMethod m :
         {solver::TimeMethod::backward_euler, solver::TimeMethod::bdf2}) {
      SCOPED_TRACE(solver::multigrid::to_string(m));
      const solver::Case c = melting_block(m);
      const Result cpu = run(c, 20.0, 5, "cpu");
      const Result gpu = run(c, 20.0, 5, device);
      EXPECT_LE(relative_difference(gpu.u, cpu.u), 1e-9);
      EXPECT_EQ(gpu.outer, cpu.outer);
      EXPECT_EQ(cpu.outer.size(), 5u);
    }
  }
}

// The steel's conductivity falling steeply (100 to 5 W/(m K) over 300-1500 K) and the heater
// 750 times stronger (710 K): Picard's iteration contracts slowly and the steady solve takes
// Newton's steps (solver/multigrid/implicit_stepper.cpp: J' and the residual built on the
// host, the correction w solved on the device). The device's field and outer iterations are
// the CPU's.
TEST_F(NonlinearImplicit, SteadyNewtonStepsOnTheDeviceMatchTheCpu) {
  solver::Case c = melting_block(solver::TimeMethod::steady);
  c.materials[0].conductivity = 100.0;
  c.materials[0].conductivity_table = {{300.0, 100.0}, {700.0, 20.0}, {1500.0, 5.0}};
  c.sources[0].power_density = 3e8;
  const Result cpu = run(c, 1.0, 1, "cpu");
  const Result picard = run(c, 1.0, 1, "cpu", false);
  ASSERT_FALSE(cpu.outer.empty());
  EXPECT_NE(cpu.outer, picard.outer) << "Newton's steps were taken";
  EXPECT_LE(relative_difference(picard.u, cpu.u), 1e-9);
  for (const std::string& device : {std::string("register-tiling"), std::string("cuda-naive")}) {
    SCOPED_TRACE(device);
    const Result gpu = run(c, 1.0, 1, device);
    EXPECT_LE(relative_difference(gpu.u, cpu.u), 1e-9);
    EXPECT_EQ(gpu.outer, cpu.outer);
  }
}

}  // namespace
}  // namespace heatsim::test
