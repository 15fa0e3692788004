// Thermal contact resistances (Case::contacts) on the GPU backends: the faces a contact
// changes are written out by the solver (solver/contacts.hpp) and taken by every CUDA-core
// backend as given faces; with a temperature-dependent conductivity the device re-forms them
// each step keeping the contact's share. A three-material block (silicon around a copper box and a
// solder ball, both off the node planes) with contacts on two of its three pairs, a Dirichlet face,
// a convective one and a heat flux: 40 explicit steps on each backend against the CPU, 2D and 3D,
// at sizes that are not tile multiples, fp64 within 1e-12 and fp32 within 1e-5 of max |u|; and
// the steady state solved on the device against the CPU's, which the contacts move.
#include <cmath>
#include <random>
#include <sstream>

#include "case_on_gpu.hpp"
#include "gpu_test_support.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryKind;
using kernels::Precision;
namespace mg = solver::multigrid;

solver::Case stack(int dims, const std::array<std::int64_t, 3>& n, bool contacts,
                   bool laws = false) {
  solver::Case c;
  c.grid.dims = dims;
  c.grid.n = {n[0], n[1], dims > 2 ? n[2] : 1};
  c.grid.length = {0.02, 0.012, 0.01};
  c.materials = {heatsim_tests::material("silicon", 150.0, 2330.0, 700.0),
                 heatsim_tests::material("copper", 400.0, 8960.0, 385.0),
                 heatsim_tests::material("solder", 50.0, 7400.0, 230.0)};
  if (laws) c.materials[0].conductivity_table = {{280.0, 160.0}, {330.0, 140.0}, {380.0, 120.0}};
  solver::RegionSpec ball = heatsim_tests::region("solder");
  ball.shape.kind = solver::ShapeKind::ball;
  ball.shape.center = {0.0137, 0.0061, 0.0049};
  ball.shape.radius = 0.0031;
  c.regions = {
      heatsim_tests::region("silicon"),
      heatsim_tests::region("copper", heatsim_tests::box({0.0, 0.0, 0.0}, {0.00713, 0.0077, 1.0})),
      ball};
  if (contacts) c.contacts = {{{"copper", "silicon"}, 2.0e-5}, {{"solder", "silicon"}, 5.0e-6}};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 360.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 2000.0;
  c.boundary[1].value = 300.0;
  c.boundary[2] = solver::RegionSpec::insulated();
  c.boundary[2].heat_flux = true;
  c.boundary[2].value = 4000.0;
  for (int f = 3; f < 6; ++f) c.boundary[f] = solver::RegionSpec::insulated();
  // In 3D z- is convective: the copper/silicon interface meets it and the heat-flux face y-,
  // whose strips beyond the contact go to the nodes across it (the faces' cuts).
  if (dims > 2) {
    c.boundary[4].kind = BoundaryKind::convective;
    c.boundary[4].transfer = 500.0;
    c.boundary[4].value = 290.0;
  }
  return c;
}

struct Size {
  int dims;
  std::array<std::int64_t, 3> n;
};

class ContactsOnGpu : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(ContactsOnGpu, StepsMatchCpu) {
  const BackendCase bc = GetParam();
  const std::vector<Size> sizes = bc.dims == 2
                                      ? std::vector<Size>{{2, {41, 27, 1}}, {2, {67, 35, 1}}}
                                      : std::vector<Size>{{3, {41, 27, 23}}, {3, {37, 19, 13}}};
  std::mt19937_64 rng(31 + 7 * bc.dims + (bc.precision == Precision::fp32 ? 3 : 0));
  int runs = 0;
  for (const Size& s : sizes)
    for (bool laws : {false, true}) {
      CaseOnGpu run;
      run.c = stack(s.dims, s.n, true, laws);
      run.laws = laws;
      run.faces_given = true;
      run.t_hi = 360.0;
      if (!case_steps_match_cpu(run, bc, rng)) continue;
      ++runs;
    }
  EXPECT_GT(runs, 0);
}

// The steady state on the device's level operations against the CPU's, with the contacts and
// without: the same answer to the solve's tolerance, and the contacts move it.
std::vector<double> steady(const solver::Case& c, const std::string& ops) {
  const auto fields = solver::coefficient_fields(c);
  const kernels::StencilProblem p = solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-11;
  mg::ImplicitStepper stepper(p, fields, solver::TimeMethod::steady, 1.0,
                              kernels::make_level_ops(ops, Precision::fp64), options);
  std::vector<double> u(static_cast<std::size_t>(p.points()), 320.0);
  solver::set_dirichlet_nodes(c, u);
  stepper.advance(u, 0);
  return u;
}

class ContactsSteadyOnGpu : public GpuTest {};

TEST_F(ContactsSteadyOnGpu, SteadyStateMatchesCpu) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    solver::Case c = stack(dims, {45, 29, 21}, true);
    c.time.method = solver::TimeMethod::steady;
    const std::vector<double> cpu = steady(c, "cpu");
    for (const std::string& device : {std::string("register-tiling"), std::string("cuda-naive")}) {
      SCOPED_TRACE(device);
      EXPECT_LE(relative_difference(steady(c, device), cpu), 1e-9);
    }
    solver::Case perfect = stack(dims, {45, 29, 21}, false);
    perfect.time.method = solver::TimeMethod::steady;
    EXPECT_GT(relative_difference(steady(perfect, "cpu"), cpu), 1e-4)
        << "the contacts change the steady state";
  }
}

std::vector<BackendCase> cases_2d_3d() {
  std::vector<BackendCase> out;
  for (const BackendCase& c : backend_cases())
    if (c.dims >= 2) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ContactsOnGpu, ::testing::ValuesIn(cases_2d_3d()), backend_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ContactsOnGpu);

}  // namespace
}  // namespace heatsim::test
