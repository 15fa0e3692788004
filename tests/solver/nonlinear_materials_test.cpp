// Materials beyond constants (kernels/temperature_laws.hpp): conductivity and heat capacity
// as tables of T, latent heat over a melting range, anisotropic conductivity and radiating
// faces, on the CPU backend's explicit steps and the multigrid's outer iterations. Checked
// against closed forms: the Kirchhoff transform of k linear in T (exact at the nodes), the energy
// balance of a radiating face, Neumann's similarity solution of the one-phase Stefan problem
// with the heat content conserved to rounding, and the discrete decay factor of an anisotropic
// mode.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"
#include "kernels/temperature_laws.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_backend.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim_tests {
namespace {

namespace mg = heatsim::solver::multigrid;
using heatsim::kernels::BoundaryKind;
using heatsim::kernels::kStefanBoltzmann;
using heatsim::solver::Case;

Case rod(int n, double length) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {n, 1, 1};
  c.grid.length = {length, 1.0, 1.0};
  return c;
}

// The steady field (or one backward Euler step of dt) of case c on the CPU's multigrid, from u.
std::vector<double> solve(const Case& c, std::vector<double> u, mg::TimeMethod method,
                          double dt = 0.0, mg::SolveOptions options = {}) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, dt > 0 ? dt : 1.0, fields);
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  mg::ImplicitStepper stepper(p, fields, method, dt,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  stepper.advance(0);
  stepper.field(u);
  return u;
}

// `steps` explicit steps of case c at dt on the CPU backend from u.
std::vector<double> explicit_steps(const Case& c, std::vector<double> u, double dt,
                                   std::int64_t steps) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, dt, fields);
  auto backend = heatsim::kernels::make_cpu_backend(p.precision);
  backend->setup(p);
  heatsim::solver::set_dirichlet_nodes(c, u);
  backend->upload(u);
  backend->advance(steps, 0);
  backend->download(u);
  return u;
}

// k = k0 (1 + beta (T - T0)) between Dirichlet faces at T0 and T1: the Kirchhoff transform
// phi(T) = k0 ((T - T0) + beta (T - T0)^2 / 2) is linear in x, so
// T(x) = T0 + (sqrt(1 + 2 beta phi(x) / k0) - 1) / beta.
// A rod 0.1 m long of one material, k linear from 10 W/mK at 300 K to k_900 at 900 K, between
// Dirichlet faces at `lower` (x = 0) and `upper`.
Case linear_k_rod(int n, const char* name, double rho, double cp, double k_900, double lower,
                  double upper) {
  Case c = rod(n, 0.1);
  heatsim::solver::MaterialSpec m = material(name, 10.0, rho, cp);
  m.conductivity_table = {{300.0, 10.0}, {900.0, k_900}};
  c.materials = {m};
  c.regions = {region(name)};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = lower;
  c.boundary[1].kind = BoundaryKind::dirichlet;
  c.boundary[1].value = upper;
  return c;
}

Case kirchhoff_rod(int n) {
  return linear_k_rod(n, "steel", 7900, 500, 30.0, 300.0, 900.0);  // beta = 1/300 per K
}

double kirchhoff_exact(double x) {
  const double k0 = 10.0, beta = 1.0 / 300.0, dT = 600.0, L = 0.1;
  const double phi_end = k0 * (dT + beta * dT * dT / 2.0);
  const double phi = phi_end * x / L;
  return 300.0 + (std::sqrt(1.0 + 2.0 * beta * phi / k0) - 1.0) / beta;
}

TEST(Nonlinear, ConductivityLinearInTFollowsTheKirchhoffProfileExactly) {
  std::vector<double> errors;
  for (int n : {21, 41, 81}) {
    const Case c = kirchhoff_rod(n);
    const std::vector<double> u = solve(c, std::vector<double>(n, 300.0), mg::TimeMethod::steady);
    double worst = 0.0;
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(u[i] - kirchhoff_exact(0.1 * i / (n - 1))));
    errors.push_back(worst);
  }
  // A face of one law conducts the Kirchhoff mean of k between its nodes: exact at the nodes
  // at every n to the solve's tolerance (the harmonic mean of the nodes' k was second order).
  for (double e : errors) EXPECT_LT(e, 1e-8) << "K, of 600 across the rod";
  // The explicit steps reach the same discrete steady state.
  const Case c = kirchhoff_rod(21);
  const std::vector<double> steady = solve(c, std::vector<double>(21, 300.0), mg::TimeMethod::steady);
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const std::vector<double> late = explicit_steps(c, std::vector<double>(21, 300.0), dt, 40000);
  for (int i = 0; i < 21; ++i) EXPECT_NEAR(late[i], steady[i], 1e-7) << "node " << i;
}

// The Kirchhoff mean of a table between two temperatures, by its pieces: across all of them
// and beyond both ends (constant there), in either order, and at the limit of equal ends.
TEST(Nonlinear, TheMeanRatioIntegratesTheTablesPieces) {
  heatsim::kernels::TemperatureLaw law;
  law.conductivity = {{300.0, 1.0}, {400.0, 3.0}, {500.0, 2.0}};
  law.prepare();
  // 50 * 1 + 100 * 2 + 100 * 2.5 + 50 * 2 over 300.
  EXPECT_NEAR(law.mean_conductivity_ratio(250.0, 550.0), 2.0, 1e-15);
  EXPECT_NEAR(law.mean_conductivity_ratio(550.0, 250.0), 2.0, 1e-15);
  // 50 * 2.5 + 50 * 2.75 over 100.
  EXPECT_NEAR(law.mean_conductivity_ratio(450.0, 350.0), 2.625, 1e-15);
  EXPECT_NEAR(law.mean_conductivity_ratio(100.0, 200.0), 1.0, 1e-15);
  EXPECT_NEAR(law.mean_conductivity_ratio(600.0, 700.0), 2.0, 1e-15);
  EXPECT_DOUBLE_EQ(law.mean_conductivity_ratio(350.0, 350.0), 2.0);
  EXPECT_NEAR(law.mean_conductivity_ratio(350.0, 350.0 + 1e-11), 2.0, 1e-12);
}

// The slab of a Kirchhoff-transform check: k linear from 10 W/mK at 300 K to 100 at 900 K,
// faces at 900 K (x = 0) and 300 K (x = 0.1). U(T) = 10 s + 0.075 s^2 (s = T - 300) is linear
// in x, from U(900) = 33000 to 0: the flux is 330000 W/m^2 and
// T(x) = 300 + (sqrt(100 + 0.3 U(x)) - 10) / 0.15. A face of one law conducts the mean of k
// between its nodes' temperatures (U_i - U_j) / (T_i - T_j), with which the discrete steady
// state is exact at the nodes whatever the spacing; the harmonic mean of the nodes' k was 17%
// off in the flux at 6 nodes.
Case steep_slab(int n) { return linear_k_rod(n, "slab", 1000, 1000, 100.0, 900.0, 300.0); }

double steep_slab_exact(double x) {
  const double U = 33000.0 * (1.0 - x / 0.1);
  return 300.0 + (std::sqrt(100.0 + 0.3 * U) - 10.0) / 0.15;
}

TEST(Nonlinear, TheSteadySlabOfKLinearInTIsExactAtTheNodes) {
  for (int n : {6, 11}) {
    const Case c = steep_slab(n);
    const std::vector<double> u = solve(c, std::vector<double>(n, 300.0), mg::TimeMethod::steady);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(u[i], steep_slab_exact(0.1 * i / (n - 1)), 1e-8) << n << " nodes, node " << i;
    auto fields = heatsim::solver::coefficient_fields(c);
    const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, 1.0, fields);
    const std::vector<double> q = heatsim::solver::node_heat_flux(p, fields.get(), 0.0, u.data());
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(q[3 * i] / 330000.0, 1.0, 1e-6) << n << " nodes, node " << i;
  }
}

// The slab across a 33 x 9 x 7 grid, its other faces insulated.
Case steep_slab_3d() {
  Case c = steep_slab(33);
  c.grid.dims = 3;
  c.grid.n = {33, 9, 7};
  c.grid.length = {0.1, 0.025, 0.02};
  for (int face = 2; face < 6; ++face) {
    c.boundary[face].kind = BoundaryKind::neumann;  // insulated
    c.boundary[face].value = 0.0;
  }
  return c;
}

// The largest difference of a field of steep_slab_3d() from the exact nodal values.
double steep_slab_3d_error(const std::vector<double>& u) {
  const std::int64_t nx = 33;
  double worst = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i)
    worst = std::max(
        worst, std::abs(u[i] - steep_slab_exact(0.1 * double(static_cast<std::int64_t>(i) % nx) /
                                                (nx - 1))));
  return worst;
}

// The slab across a 3D grid (its other faces insulated), steady from 300 K: the outer
// iterations after the first keep the coarse levels and replace the finest, and the field is
// still exact at the nodes to the tolerance.
TEST(Nonlinear, OuterIterationsThatKeepTheCoarseLevelsReachTheExactNodalValues) {
  const Case c = steep_slab_3d();
  auto fields = heatsim::solver::coefficient_fields(c);
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  std::vector<int> iterations;
  options.on_outer_iteration = [&](int, double, const mg::SolveReport& r) {
    iterations.push_back(r.iterations);
  };
  mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  ASSERT_GE(stepper.levels(), 3);
  std::vector<double> u(static_cast<std::size_t>(p.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  stepper.advance(0);
  stepper.field(u);
  EXPECT_LT(steep_slab_3d_error(u), 1e-8);
  const auto& t = stepper.timing();
  EXPECT_EQ(t.outer_iterations, static_cast<std::int64_t>(iterations.size()));
  EXPECT_GE(t.outer_iterations, 4);
  EXPECT_GE(t.hierarchies_built, 1);
  EXPECT_LT(t.hierarchies_built, t.outer_iterations);
}

// The slab across a 3D grid heated from 300 K by backward Euler steps: a step whose first outer
// iteration moves the field by a few percent of its scale (the step's own change) keeps the
// coarse levels of that iteration's hierarchy for the rest of the step, so it builds one
// hierarchy, not two; the field still reaches the exact nodal values.
TEST(Nonlinear, AStepWhoseFirstIterationMovesTheFieldLittleBuildsOneHierarchy) {
  const Case c = steep_slab_3d();
  auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 20.0;
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, dt, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-12;
  std::vector<double> first_change;  // of each step
  options.on_outer_iteration = [&](int outer, double change, const mg::SolveReport&) {
    if (outer == 1) first_change.push_back(change);
  };
  mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::backward_euler, dt,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  ASSERT_GE(stepper.levels(), 3);
  std::vector<double> u(static_cast<std::size_t>(p.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  int window_steps = 0;  // steps whose first change is 1-10% of the scale (900 K)
  for (int step = 0; step < 60; ++step) {
    const std::int64_t built = stepper.timing().hierarchies_built;
    stepper.advance(u, step);
    ASSERT_EQ(first_change.size(), static_cast<std::size_t>(step + 1));
    const double share = first_change.back() / 900.0;
    if (share > 0.01 && share <= 0.1) {
      ++window_steps;
      EXPECT_EQ(stepper.timing().hierarchies_built - built, 1)
          << "step " << step << ", first change " << first_change.back() << " K";
    }
  }
  EXPECT_GE(window_steps, 3);
  EXPECT_LT(steep_slab_3d_error(u), 1e-8);
}

// The same slab from 300 K inside by backward Euler steps: the field converges to the exact
// nodal values (dt = 100 s: the slowest mode, of rate 0.01 to 0.1 per second, at least halves
// every step).
TEST(Nonlinear, BackwardEulerStepsOfTheSlabConvergeToTheExactNodalValues) {
  const int n = 11;
  const Case c = steep_slab(n);
  auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 100.0;
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, dt, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::backward_euler, dt,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  std::vector<double> u(n, 300.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  double last = 1e300;
  for (int step = 0; step < 100; ++step) {
    stepper.advance(u, step);
    double worst = 0.0;
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(u[i] - steep_slab_exact(0.1 * i / (n - 1))));
    if (step < 10) {
      EXPECT_LT(worst, last) << "step " << step;
    }
    last = worst;
  }
  EXPECT_LT(last, 1e-8);
}

// A wall of two layers whose reference conductivities are equal: a = 10 W/mK on [0, 0.05], b
// with k(T) = 10 + 0.1 (T - 300) beyond it, 500 K at x = 0 and 300 K at x = 0.1. One flux q
// through both: q = k_a (500 - T_i) / 0.05 and, by Kirchhoff, 10 s + 0.05 s^2 = 0.05 q with s =
// T_i - 300, so s^2 + 400 s - 40000 = 0. Every face's segment lies in one layer; the faces'
// conductances cannot tell the layers apart (both 10 at the reference), and a face of b's
// taken half in a's constant law was first order.
TEST(Nonlinear, ALayerOfKOfTBesideOneOfTheSameReferenceKStaysSecondOrder) {
  const double s = (-400.0 + std::sqrt(400.0 * 400.0 + 4.0 * 40000.0)) / 2.0;
  const double interface_exact = 300.0 + s;
  std::vector<double> errors;
  for (int n : {21, 41, 81}) {
    Case c = rod(n, 0.1);
    heatsim::solver::MaterialSpec b = material("b", 10.0, 1000, 1000);
    b.conductivity_table = {{300.0, 10.0}, {500.0, 30.0}};
    c.materials = {material("a", 10.0, 1000, 1000), b};
    c.regions = {region("b"), region("a", box({0.0, 0, 0}, {0.05, 0, 0}))};
    c.boundary[0].kind = BoundaryKind::dirichlet;
    c.boundary[0].value = 500.0;
    c.boundary[1].kind = BoundaryKind::dirichlet;
    c.boundary[1].value = 300.0;
    const std::vector<double> u = solve(c, std::vector<double>(n, 400.0), mg::TimeMethod::steady);
    errors.push_back(std::abs(u[(n - 1) / 2] - interface_exact));
  }
  // Each face lies in one layer, taken by that layer's Kirchhoff transform (series_face):
  // exact at the nodes (second order, 0.12 K at n = 21, when a's part was taken at its node).
  for (double e : errors) EXPECT_LT(e, 1e-7);
}

// Two k(T) materials in series, 0.1 m between 900 K and 300 K: A (k 10 at 300 K to 100 at 900
// K) on [0, xi], B (50 to 5) beyond, a contact of R'' between them. Per layer the Kirchhoff
// transforms R_A(T) = 10 d + 0.075 d^2 and R_B(T) = 50 d - 0.0375 d^2 (d = T - 300) are
// linear in x, one flux q through both: the exact nodal values wherever xi lies. Each face
// a layer's bound cuts is its parts in series, each by its own transform (series_face); a face
// of one material beside a node of the other (xi on a node plane) is that material's Kirchhoff
// mean. Taking the parts at the nodes' own ratios (as before) was 8% off q at 6 nodes.
struct KWall {
  double xi, contact;
  double ra(double T) const { return 10.0 * (T - 300) + 0.075 * (T - 300) * (T - 300); }
  double rb(double T) const { return 50.0 * (T - 300) - 0.0375 * (T - 300) * (T - 300); }
  // T from R_A or R_B (the root in [300, 900]).
  static double root(double a, double b, double R) {  // a d + b d^2 = R
    return 300.0 + 2.0 * R / (a + std::sqrt(a * a + 4.0 * b * R));
  }
  // The temperature on A's side of the interface, by bisection: A's flux = B's flux.
  double interface_a() const {
    double lo = 300.0, hi = 900.0;
    for (int k = 0; k < 200; ++k) {
      const double ta = 0.5 * (lo + hi);
      const double q = (ra(900.0) - ra(ta)) / xi;
      const double tb = ta - q * contact;
      const double excess = (tb > 300.0 ? rb(tb) : -1.0) / (0.1 - xi) - q;  // B carries more
      (excess > 0.0 ? hi : lo) = ta;
    }
    return 0.5 * (lo + hi);
  }
  double flux() const { return (ra(900.0) - ra(interface_a())) / xi; }
  double at(double x) const {
    const double q = flux();
    if (x <= xi) return root(10.0, 0.075, ra(900.0) - q * x);
    const double tb = interface_a() - q * contact;
    return root(50.0, -0.0375, rb(tb) - q * (x - xi));
  }
};

TEST(Nonlinear, AWallOfTwoKOfTLayersIsExactAtTheNodesWhereverItsInterfaceLies) {
  for (const KWall w : {KWall{0.04, 0.0}, KWall{0.045, 0.0}, KWall{0.04, 1e-4}, KWall{0.047, 1e-4}}) {
    for (int n : {6, 11, 21}) {
      SCOPED_TRACE("xi " + std::to_string(w.xi) + ", contact " + std::to_string(w.contact) + ", " +
                   std::to_string(n) + " nodes");
      Case c = rod(n, 0.1);
      heatsim::solver::MaterialSpec a = material("A", 10.0, 1000, 500);
      a.conductivity_table = {{300.0, 10.0}, {900.0, 100.0}};
      heatsim::solver::MaterialSpec b = material("B", 50.0, 1000, 500);
      b.conductivity_table = {{300.0, 50.0}, {900.0, 5.0}};
      c.materials = {a, b};
      c.regions = {region("B"), region("A", box({0.0, 0, 0}, {w.xi, 0, 0}))};
      if (w.contact > 0.0) c.contacts = {{{"A", "B"}, w.contact}};
      c.boundary[0].kind = BoundaryKind::dirichlet;
      c.boundary[0].value = 900.0;
      c.boundary[1].kind = BoundaryKind::dirichlet;
      c.boundary[1].value = 300.0;
      const std::vector<double> u = solve(c, std::vector<double>(n, 600.0), mg::TimeMethod::steady);
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(u[i], w.at(0.1 * i / (n - 1)), 1e-7) << "node " << i;
      // Explicit steps toward the same steady state take the same faces: the node beside the
      // hot face moves from the exact field by no more than rounding in one step.
      auto fields = heatsim::solver::coefficient_fields(c);
      const auto p = heatsim::solver::make_problem(c, 1.0, fields);
      std::vector<double> exact(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) exact[i] = w.at(0.1 * i / (n - 1));
      const double dt = 0.2 * (0.1 / (n - 1)) * (0.1 / (n - 1)) * 1000 * 500 / 100.0;
      const std::vector<double> stepped = explicit_steps(c, exact, dt, 1);
      for (int i = 0; i < n; ++i) EXPECT_NEAR(stepped[i], exact[i], 1e-7) << "stepped node " << i;
    }
  }
}

// On a long rod each outer iteration's solve starts below its tolerance once the field is
// close: a solve that never iterated moved the field by 0 K and ended the outer iteration with
// the field 2e-5 K off at 1001 nodes (the tolerance lets that much through there). Every outer
// solve now iterates at least once, so the change it reports is the field's.
TEST(Nonlinear, ALongRodConvergesToTheKirchhoffProfileNotToAnUntriedSolve) {
  for (int n : {201, 1001}) {
    const Case c = kirchhoff_rod(n);
    // At the default tolerances (1e-10 of the load, a change of 1e-10 of the field's scale).
    auto fields = heatsim::solver::coefficient_fields(c);
    const auto p = heatsim::solver::make_problem(c, 1.0, fields);
    mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::steady, 0.0,
                                heatsim::kernels::make_level_ops("cpu", p.precision));
    std::vector<double> u(static_cast<std::size_t>(n), 300.0);
    heatsim::solver::set_dirichlet_nodes(c, u);
    stepper.set_field(u);
    stepper.advance(0);
    stepper.field(u);
    double worst = 0.0;
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(u[i] - kirchhoff_exact(0.1 * i / (n - 1))));
    EXPECT_LT(worst, 1e-6) << n << " nodes";
  }
}

// dt: auto takes a radiating face's slope at the hottest temperature the case names: the
// initial field's (a body that starts hot) and a void's surface's ambient count as the faces'
// do. A ceramic starting at 3000 K took the limit at its 300 K ambient and diverged.
TEST(Nonlinear, TheHottestNamedTemperatureCountsTheStartAndTheVoids) {
  Case c = kirchhoff_rod(21);
  c.materials[0].conductivity_table.clear();
  c.boundary[1].kind = heatsim::kernels::BoundaryKind::convective;
  c.boundary[1].transfer = 0.0;
  c.boundary[1].emissivity = 1.0;
  c.boundary[1].value = 300.0;
  c.boundary[0] = c.boundary[1];
  c.initial.kind = heatsim::solver::InitialKind::constant;
  c.initial.value = 300.0;
  EXPECT_EQ(heatsim::solver::hottest_named_temperature(c), 300.0);
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double cold = heatsim::solver::field_stability(c, *fields).dt_limit;
  c.initial.value = 3000.0;
  EXPECT_EQ(heatsim::solver::hottest_named_temperature(c), 3000.0);
  const double hot = heatsim::solver::field_stability(c, *fields).dt_limit;
  EXPECT_LT(hot, 0.5 * cold);
  c.initial.kind = heatsim::solver::InitialKind::gaussian;
  c.initial.background = 300.0;
  c.initial.amplitude = 500.0;
  EXPECT_EQ(heatsim::solver::hottest_named_temperature(c), 800.0);
  c.initial.kind = heatsim::solver::InitialKind::box;
  c.initial.value = 1200.0;
  EXPECT_EQ(heatsim::solver::hottest_named_temperature(c), 1200.0);
  c.initial = {};
  heatsim::solver::RegionSpec hole;
  hole.is_void = true;
  hole.shape.kind = heatsim::solver::ShapeKind::box;
  hole.shape.lower = {0.04, 0, 0};
  hole.shape.upper = {0.06, 0, 0};
  hole.surface.kind = heatsim::kernels::BoundaryKind::convective;
  hole.surface.emissivity = 0.9;
  hole.surface.value = 2500.0;
  c.regions.push_back(hole);
  EXPECT_EQ(heatsim::solver::hottest_named_temperature(c), 2500.0);
}

// The steady solve of case c from u on the CPU's multigrid at the default tolerances, by
// Newton's steps or (newton false) Picard's; the field in u, the outer iterations returned.
int steady_outer_iterations(const Case& c, std::vector<double>& u, bool newton) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.newton = newton;
  mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  const mg::SolveReport r = stepper.advance(0);
  EXPECT_EQ(r.reason, mg::SolveReport::Reason::converged) << r.describe();
  stepper.field(u);
  return stepper.timing().outer_iterations;
}

// The message of the steady solve of case c from u that fails (SolveFailure), or "" where it
// converges (a test's failure then).
std::string steady_failure(const Case& c, std::vector<double> u, const mg::SolveOptions& options) {
  try {
    solve(c, std::move(u), mg::TimeMethod::steady, 0.0, options);
  } catch (const mg::SolveFailure& e) {
    return e.what();
  }
  ADD_FAILURE() << "the steady iteration converged";
  return "";
}

// A steady wall whose k table rises and falls (10, 100, 10 W/mK at 300, 600, 900 K): Picard's
// iteration contracts by about 0.8 an outer iteration, and past the 50 allowed it was refused
// at 1.4e-7 K, still contracting, and told to start nearer the answer. While contracting it
// goes on. Newton's steps (the default) are exact in one material and take far fewer.
TEST(Nonlinear, ASteadyIterationStillContractingAtItsLimitGoesOn) {
  Case c = linear_k_rod(11, "m", 1000, 500, 10.0, 900.0, 300.0);
  c.materials[0].conductivity_table = {{300.0, 10.0}, {600.0, 100.0}, {900.0, 10.0}};
  std::vector<double> picard(11, 300.0), newton(11, 300.0);
  EXPECT_GT(steady_outer_iterations(c, picard, false), 50);
  EXPECT_LE(steady_outer_iterations(c, newton, true), 15);
  for (int i = 0; i < 11; ++i) EXPECT_NEAR(newton[i], picard[i], 1e-6) << i;
}

// A steep table (k 1 -> 1000 W/mK between 599 and 601 K, 900 / 300 K faces, 21 nodes, from
// 900 K): under-relaxed, Picard's changes fell by about 0.985 an outer iteration, each below
// the one before, and it was refused at iteration 50 (9.1e-6 K) as not contracting by 0.95 an
// iteration. It goes on, to the exact flux: k's integral over 300..900 K across 0.1 m. Newton's
// steps reach it at once.
TEST(Nonlinear, ASteadyIterationContractingSlowlyGoesOnToTheAnswer) {
  Case c = linear_k_rod(21, "s", 7900, 500, 1.0, 900.0, 300.0);
  c.materials[0].conductivity_table = {{599.0, 1.0}, {601.0, 1000.0}};
  // Kirchhoff: the integral of k from 300 K to the midpoint's temperature is half of that from
  // 300 to 900 K (299 + 1001 + 299000 W/m): 1300 to 601 K, then 1000 W/mK above.
  const double half = 0.5 * (299.0 + 1001.0 + 299000.0);
  for (const bool newton : {false, true}) {
    std::vector<double> u(21, 900.0);
    const int outer = steady_outer_iterations(c, u, newton);
    if (newton)
      EXPECT_LE(outer, 10);
    else
      EXPECT_GT(outer, 50);
    EXPECT_NEAR(u[10], 601.0 + (half - 1300.0) / 1000.0, 1e-6) << newton;
  }
}

TEST(Nonlinear, TheStabilityLimitTakesTheTablesWorstCase) {
  Case c = kirchhoff_rod(21);
  const auto with_table = heatsim::solver::coefficient_fields(c);
  const double limit = heatsim::solver::field_stability(c, *with_table).dt_limit;
  // k at its largest (30, three times the reference) sets the limit.
  c.materials[0].conductivity_table.clear();
  c.materials[0].conductivity = 30.0;
  const auto hot = heatsim::solver::coefficient_fields(c);
  EXPECT_NEAR(limit, heatsim::solver::field_stability(c, *hot).dt_limit, 1e-12 * limit);
}

// A slab at T1 on x- that radiates from x+ (emissivity eps, ambient Ta, optionally also
// convecting with h): the steady profile is linear, so the face temperature T2 solves
// k (T1 - T2) / L = h (T2 - Ta) + eps sigma (T2^4 - Ta^4) exactly.
TEST(Nonlinear, ARadiatingFaceBalancesConductionAtTheSteadyState) {
  for (double h : {0.0, 10.0}) {
    const int n = 31;
    const double k = 2.0, L = 0.05, T1 = 700.0, Ta = 300.0, eps = 0.8;
    Case c = rod(n, L);
    c.materials = {material("ceramic", k, 3000, 800)};
    c.regions = {region("ceramic")};
    c.boundary[0].kind = BoundaryKind::dirichlet;
    c.boundary[0].value = T1;
    c.boundary[1].kind = BoundaryKind::convective;
    c.boundary[1].transfer = h;
    c.boundary[1].emissivity = eps;
    c.boundary[1].value = Ta;
    double T2 = 500.0;  // Newton on the scalar balance
    for (int it = 0; it < 50; ++it) {
      const double f = k * (T1 - T2) / L - h * (T2 - Ta) - eps * kStefanBoltzmann * (std::pow(T2, 4) - std::pow(Ta, 4));
      const double df = -k / L - h - 4.0 * eps * kStefanBoltzmann * std::pow(T2, 3);
      T2 -= f / df;
    }
    const std::vector<double> u = solve(c, std::vector<double>(n, 400.0), mg::TimeMethod::steady);
    EXPECT_NEAR(u[n - 1], T2, 1e-9 * T1) << "h = " << h;
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(u[i], T1 + (T2 - T1) * i / (n - 1.0), 1e-9 * T1) << "node " << i;
    // Explicit steps to the same state.
    const auto fields = heatsim::solver::coefficient_fields(c);
    const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
    const std::vector<double> late = explicit_steps(c, std::vector<double>(n, 400.0), dt, 60000);
    EXPECT_NEAR(late[n - 1], T2, 1e-6 * T1) << "h = " << h;
  }
}

// A plate in space: 50 W/m heated in its middle, every face radiating (eps 0.85) to 3 K, the
// steady solve started from 0 K (the default initial value). At 0 K radiation's slope is 0 and
// the first operator had nothing to fix its level: the solve stalled or diverged at the first
// outer iteration at 33 and 64 nodes a side (it happened to pass at 21). The start is raised to
// the ambient (at least 1 K): the plate, nearly isothermal, sits at the lumped balance
// (50 / (eps sigma 0.4 m) + 3^4)^(1/4) = 225.67 K, whatever the start.
TEST(Nonlinear, APlateCooledByRadiationAloneSolvesFromZeroKelvin) {
  for (int n : {21, 33, 64}) {
    SCOPED_TRACE(n);
    Case c;
    c.grid.dims = 2;
    c.grid.n = {n, n, 1};
    c.grid.length = {0.1, 0.1, 1.0};
    c.materials = {material("al", 237, 2700, 900)};
    c.regions = {region("al")};
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::convective;
      f.transfer = 0.0;
      f.emissivity = 0.85;
      f.value = 3.0;
    }
    heatsim::solver::SourceSpec src;
    src.shape.kind = heatsim::solver::ShapeKind::box;
    src.shape.lower = {0.04, 0.04, 0};
    src.shape.upper = {0.06, 0.06, 1};
    src.power = 50.0;
    c.sources = {src};
    const std::size_t points = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    const std::vector<double> cold =
        solve(c, std::vector<double>(points, 0.0), mg::TimeMethod::steady);
    const std::vector<double> warm =
        solve(c, std::vector<double>(points, 300.0), mg::TimeMethod::steady);
    const double lumped = std::pow(50.0 / (0.85 * kStefanBoltzmann * 0.4) + std::pow(3.0, 4), 0.25);
    for (std::size_t i = 0; i < points; ++i) {
      EXPECT_NEAR(cold[i], lumped, 0.5) << "node " << i;
      EXPECT_NEAR(cold[i], warm[i], 1e-8 * lumped) << "node " << i;
    }
  }
}

// A slab whose conductivity falls from 100 to 1 W/(m K) over 300-1000 K, heated by 3e7 W/m^3
// between faces at 300 K (Kirchhoff: its middle at 3150 K). Picard's iteration drifts even from
// the exact field; its failure says why and names the transient, rather than pointing at the
// sources' units alone. Newton's steps (the default) reach the exact field.
TEST(Nonlinear, ASteeplyFallingConductivitySolvesByNewtonsSteps) {
  Case c = linear_k_rod(41, "m", 3000, 800, 1.0, 300.0, 300.0);
  c.materials[0].conductivity = 100.0;
  c.materials[0].conductivity_table = {{300.0, 100.0}, {1000.0, 1.0}};
  heatsim::solver::SourceSpec q;
  q.power_density = 3e7;
  c.sources = {q};
  mg::SolveOptions picard;
  picard.newton = false;
  const std::string what = steady_failure(c, std::vector<double>(41, 300.0), picard);
  EXPECT_NE(what.find("a conductivity falls steeply over the field's range"), std::string::npos)
      << what;
  EXPECT_NE(what.find("reach the steady state by a transient run (backward-euler"),
            std::string::npos)
      << what;
  std::vector<double> u(41, 300.0);
  EXPECT_LE(steady_outer_iterations(c, u, true), 12);
  EXPECT_NEAR(u[20], 3150.0, 1e-6);
  // Every node: the integral of k from 300 K to u is q x (L - x) / 2.
  for (int i = 1; i < 40; ++i) {
    const double x = 0.1 * i / 40.0, phi = 3e7 * x * (0.1 - x) / 2.0;
    const double exact =
        phi <= 35350.0
            ? 300.0 + (100.0 - std::sqrt(100.0 * 100.0 - 2.0 * 99.0 / 700.0 * phi)) / (99.0 / 700.0)
            : 1000.0 + (phi - 35350.0);
    EXPECT_NEAR(u[i], exact, 1e-6 * exact) << i;
  }
}

// A 2D plate of nx x ny nodes over lx x ly m with insulated faces (the tests set their own).
Case insulated_plate(int nx, int ny, double lx, double ly) {
  Case c;
  c.grid.dims = 2;
  c.grid.n = {nx, ny, 1};
  c.grid.length = {lx, ly, 1.0};
  for (auto& f : c.boundary) {
    f.kind = BoundaryKind::neumann;
    f.value = 0.0;
  }
  return c;
}

// A silicon die (k from 148 W/(m K) at 300 K to 20 at 1400 K) on a copper base cooled by
// water below, heated at its top to 1100 K: Newton's steps are exact inside each material and
// nearly so across the interface (each material's step scaled to match the other's slope
// there), so they take about half of Picard's outer iterations to the same field.
TEST(Nonlinear, NewtonsStepsAcrossAMaterialInterfaceConvergeFasterThanPicards) {
  Case c = insulated_plate(81, 21, 0.02, 0.005);
  heatsim::solver::MaterialSpec si = material("silicon", 148, 2329, 700);
  si.conductivity_table = {{300, 148},  {400, 98.9},  {500, 76.2}, {600, 61.9},
                           {800, 42.4}, {1000, 31.2}, {1400, 20}};
  c.materials = {si, material("copper", 401, 8960, 385)};
  c.regions = {region("silicon"), region("copper", box({0, 0, 0}, {0.02, 0.001, 1}))};
  c.boundary[2].kind = BoundaryKind::convective;
  c.boundary[2].transfer = 20000.0;
  c.boundary[2].value = 300.0;
  heatsim::solver::SourceSpec q;
  q.shape = box({0.008, 0.004, 0}, {0.012, 0.005, 1});
  q.power = 6e4;
  c.sources = {q};
  std::vector<double> picard(81 * 21, 300.0), newton(81 * 21, 300.0);
  const int picard_outer = steady_outer_iterations(c, picard, false);
  const int newton_outer = steady_outer_iterations(c, newton, true);
  EXPECT_LE(newton_outer, 10);
  EXPECT_LE(2 * newton_outer, picard_outer + 2) << newton_outer << " against " << picard_outer;
  EXPECT_GT(*std::max_element(newton.begin(), newton.end()), 1000.0);
  for (std::size_t i = 0; i < newton.size(); ++i)
    EXPECT_NEAR(newton[i], picard[i], 1e-8 * picard[i]) << i;
}

// The same die on its base on a grid large enough for threads (33k nodes): Newton's steps give
// the same field, bit for bit, on 1, 2 and 3 threads (each material's scale came from a sum of
// logarithms over the interface, once added up in the threads' order: a steady run under mpirun,
// one thread per rank, then differed from the serial run on two threads by 1e-11 K).
TEST(Nonlinear, NewtonsStepsGiveTheSameFieldOnAnyNumberOfThreads) {
  Case c = insulated_plate(257, 129, 0.02, 0.005);
  heatsim::solver::MaterialSpec si = material("silicon", 148, 2329, 700);
  si.conductivity_table = {{300, 148}, {400, 98.9}, {600, 61.9}, {1000, 31.2}, {1400, 20}};
  c.materials = {si, material("copper", 401, 8960, 385)};
  // The interface across the rows (x = 5 mm), so that every thread's nodes hold part of it.
  c.regions = {region("silicon"), region("copper", box({0, 0, 0}, {0.00501, 0.005, 1}))};
  c.boundary[0].kind = BoundaryKind::convective;
  c.boundary[0].transfer = 20000.0;
  c.boundary[0].value = 300.0;
  c.boundary[3].kind = BoundaryKind::convective;
  c.boundary[3].transfer = 10.0;
  c.boundary[3].value = 300.0;
  c.boundary[3].emissivity = 0.9;
  heatsim::solver::SourceSpec q;
  q.shape = box({0.014, 0.001, 0}, {0.018, 0.004, 1});
  q.power = 4e4;
  c.sources = {q};
  const int before = omp_get_max_threads();
  std::vector<double> one;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    std::vector<double> u(257 * 129, 300.0);
    steady_outer_iterations(c, u, true);
    if (threads == 1)
      one = u;
    else
      EXPECT_TRUE(u == one) << threads << " threads";
  }
  omp_set_num_threads(before);
}

// A silicon box (k from 148 W/(m K) at 300 K to 49.19 at 700 K) in steel behind a contact of
// R'' = 2e-4 m^2 K/W, its corner between node planes: a face beside the corner whose strips
// include a path beside the contact (moved onto it from the line beyond) has a contact part of
// its whole reference resistance. Its materials' parts were left at halves, so at 700 K the
// face took -593 W/(m K) and the steady solve stalled at its first outer iteration. Every face
// keeps share + contact <= 1, conducts a positive K at every temperature, and the steady state
// with a face held at 300 K and no source is 300 K everywhere.
TEST(Nonlinear, AContactFaceBesideAParallelPathKeepsItsReferenceAtEveryTemperature) {
  Case c = insulated_plate(81, 41, 0.04, 0.02);
  heatsim::solver::MaterialSpec si = material("si", 148, 2329, 700);
  si.conductivity_table = {{300, 148}, {700, 49.19}};
  c.materials = {material("ss", 19.8, 7900, 500), si};
  c.regions = {region("ss"), region("si", box({0.0152, 0, 0}, {0.0253, 0.0043, 1}))};
  c.contacts = {{{"si", "ss"}, 2e-4}};
  c.boundary[3].kind = BoundaryKind::dirichlet;
  c.boundary[3].value = 300.0;
  const auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_TRUE(fields->temperature);
  const heatsim::kernels::TemperatureDependence& laws = *fields->temperature;
  ASSERT_FALSE(laws.contact[0].empty());
  for (int a = 0; a < 2; ++a) {
    const std::int64_t stride = a == 0 ? 1 : 81;
    for (std::int64_t i = 0; i < 81 * 41; ++i) {
      const std::int64_t x = i % 81, y = i / 81;
      if ((a == 0 && x == 80) || (a == 1 && y == 40)) continue;
      const double K0 = fields->faces[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)];
      if (!(K0 > 0.0)) continue;
      const double sh = laws.share[a][static_cast<std::size_t>(i)];
      const double ct = laws.contact[a][static_cast<std::size_t>(i)];
      EXPECT_LE(sh + ct, 1.0 + 1e-12) << "axis " << a << " node " << i;
      for (const double T : {300.0, 500.0, 700.0})
        EXPECT_GT(laws.face(a, i, i + stride, K0, T, T), 0.0)
            << "axis " << a << " node " << i << " at " << T << " K";
    }
  }
  std::vector<double> u(81 * 41, 700.0);
  steady_outer_iterations(c, u, true);
  for (std::size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], 300.0, 1e-8) << i;
}

// A table with a narrow spike (k 1, then 1000 over 500-502 K, then 1 again) heated to just
// past the spike: Newton's steps do not converge, the iteration is taken again by Picard's
// (the note says so), which cycles too. The failure says the iterates move up and down
// without settling, not that the largest temperature "still rises".
TEST(Nonlinear, ASteadyIterationThatCyclesSaysSoWhenItFails) {
  Case c = rod(41, 0.05);
  heatsim::solver::MaterialSpec m = material("m", 1.0, 1000, 1000);
  m.conductivity_table = {{300, 1}, {500, 1}, {501, 1000}, {502, 1}};
  c.materials = {m};
  c.regions = {region("m")};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 300.0;
  c.boundary[1].kind = BoundaryKind::dirichlet;
  c.boundary[1].value = 350.0;
  heatsim::solver::SourceSpec q;
  q.power_density = 1e6;
  c.sources = {q};
  std::vector<std::string> notes;
  mg::SolveOptions options;
  options.on_note = [&notes](const std::string& n) { notes.push_back(n); };
  const std::string what = steady_failure(c, std::vector<double>(41, 300.0), options);
  EXPECT_NE(what.find("the iterates move up and down without settling"), std::string::npos) << what;
  EXPECT_EQ(what.find("still rises"), std::string::npos) << what;
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("taken again from the start"), std::string::npos) << notes.back();
}

// A brick square (k(T)) in insulation (k(T)) behind a contact, its sides on node planes: the
// faces of its corner rows conduct less than even the insulation over their whole segment, and
// their lower node's share was a_i K / k_i on one side (the rest left to the brick's law) and
// all the insulation's on the other: 0.75 K between mirrored points. The field is mirror- and
// transpose-symmetric to rounding.
TEST(Nonlinear, AK_TSquareBehindAContactOnNodePlanesIsSymmetric) {
  Case c = insulated_plate(41, 41, 0.1, 0.1);
  heatsim::solver::MaterialSpec ins = material("ins", 0.03, 200, 1000);
  ins.conductivity_table = {{300, 0.03}, {500, 0.06}, {700, 0.12}, {900, 0.25}, {1100, 0.5}};
  heatsim::solver::MaterialSpec brick = material("brick", 1.2, 2000, 900);
  brick.conductivity_table = {{300, 1.2}, {800, 1.0}, {1400, 0.8}};
  c.materials = {ins, brick};
  c.regions = {region("ins"), region("brick", box({0.0325, 0.0325, 0}, {0.0675, 0.0675, 1}))};
  c.contacts = {{{"brick", "ins"}, 5e-3}};
  heatsim::solver::SourceSpec q;
  q.shape = box({0.0325, 0.0325, 0}, {0.0675, 0.0675, 1});
  q.power_density = 2e4;
  c.sources = {q};
  convective_faces(c, 10.0, 300.0);
  std::vector<double> u(41 * 41, 300.0);
  steady_outer_iterations(c, u, true);
  EXPECT_GT(*std::max_element(u.begin(), u.end()), 400.0);
  for (int y = 0; y < 41; ++y)
    for (int x = 0; x < 41; ++x) {
      const double v = u[static_cast<std::size_t>(y * 41 + x)];
      EXPECT_NEAR(u[static_cast<std::size_t>(y * 41 + 40 - x)], v, 1e-9) << x << ", " << y;
      EXPECT_NEAR(u[static_cast<std::size_t>(x * 41 + y)], v, 1e-9) << x << ", " << y;
    }
}

// lambda of Neumann's solution: lambda exp(lambda^2) erf(lambda) = St / sqrt(pi).
double neumann_lambda(double stefan) {
  double lo = 1e-6, hi = 3.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (mid * std::exp(mid * mid) * std::erf(mid) < stefan / std::sqrt(M_PI) ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// One-phase melting: a bar of wax at its melting point, its x- face raised to Tm + dT: the front
// lies at s(t) = 2 lambda sqrt(alpha t). The melted length is measured as the liquid fractions'
// integral.
Case stefan_bar(int n) {
  Case c = rod(n, 1.0);
  heatsim::solver::MaterialSpec wax = material("wax", 1.0, 1.0, 1.0);
  wax.phase_change = heatsim::solver::PhaseChangeSpec{319.9995, 320.0005, 2.0};  // St = 1 / 2
  c.materials = {wax};
  c.regions = {region("wax")};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 321.0;
  c.boundary[1].kind = BoundaryKind::neumann;
  return c;
}

double melted_length(const Case& c, const std::vector<double>& u) {
  heatsim::kernels::TemperatureLaw law;
  law.solidus = c.materials[0].phase_change->solidus;
  law.liquidus = c.materials[0].phase_change->liquidus;
  law.latent = 1.0;
  law.prepare();
  const double h = c.grid.length[0] / (c.grid.n[0] - 1);
  double s = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i)
    s += (i == 0 || i + 1 == u.size() ? 0.5 : 1.0) * h * law.liquid_fraction(u[i]);
  return s;
}

TEST(Nonlinear, TheStefanFrontFollowsNeumannsSolution) {
  const double lambda = neumann_lambda(0.5), t_end = 0.25;
  const double exact = 2.0 * lambda * std::sqrt(t_end);
  std::vector<double> errors;
  for (int n : {101, 201}) {
    const Case c = stefan_bar(n);
    const double h = 1.0 / (n - 1), dt = 0.4 * h * h;
    const std::int64_t steps = static_cast<std::int64_t>(std::llround(t_end / dt));
    const std::vector<double> u = explicit_steps(c, std::vector<double>(n, 319.9995), t_end / steps, steps);
    errors.push_back(std::abs(melted_length(c, u) - exact));
  }
  EXPECT_LT(errors[1], 0.02 * exact);
  EXPECT_GT(errors[0] / errors[1], 1.8);  // first order or better
}

// Melting and freezing inside an insulated bar: the heat content sum w C_ref h(u) stays to
// rounding on the explicit steps (the flows between nodes cancel) and to the solve's tolerance
// on backward Euler's.
TEST(Nonlinear, PhaseChangeConservesTheHeatContent) {
  const int n = 64;
  Case c = stefan_bar(n);
  c.boundary[0].kind = BoundaryKind::neumann;
  c.boundary[0].value = 0.0;
  std::vector<double> u0(n);
  for (int i = 0; i < n; ++i) u0[i] = i < n / 2 ? 325.0 : 310.0;  // liquid against solid
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const auto p = heatsim::solver::make_problem(c, dt, fields);
  auto backend = heatsim::kernels::make_cpu_backend(p.precision);
  backend->setup(p);
  backend->upload(u0);
  const double before = backend->stats().total_heat;
  backend->advance(5000, 0);
  const auto after = backend->stats();
  EXPECT_NEAR(after.total_heat, before, 1e-12 * before);
  std::vector<double> u;
  backend->download(u);
  EXPECT_LT(u[n / 2 - 1], 324.0);  // something melted and froze
  EXPECT_GT(u[n / 2], 311.0);

  // Backward Euler, 20 steps of 50 explicit limits.
  auto be_fields = heatsim::solver::coefficient_fields(c);
  const auto q = heatsim::solver::make_problem(c, 50 * dt, be_fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  mg::ImplicitStepper stepper(q, be_fields, mg::TimeMethod::backward_euler, 50 * dt,
                              heatsim::kernels::make_level_ops("cpu", q.precision), options);
  stepper.set_field(u0);
  const auto content = [&](const std::vector<double>& v) {
    heatsim::kernels::TemperatureLaw law = be_fields->temperature->laws[0];
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += (i == 0 || i == n - 1 ? 0.5 : 1.0) * law.enthalpy(v[i]);
    return sum;
  };
  for (std::int64_t s = 0; s < 20; ++s) stepper.advance(s);
  stepper.field(u);
  EXPECT_NEAR(content(u), content(u0), 1e-9 * content(u0));
  EXPECT_LT(u[n / 2 - 1], 324.0);
}

// The total heat an implicit run reports is the heat content the explicit backends report:
// where the capacity varies, sum w C_ref h(u), latent heat included, not sum w C_ref u.
TEST(Nonlinear, TheImplicitBackendsTotalHeatCountsTheEnthalpy) {
  const int n = 64;
  Case c = stefan_bar(n);
  std::vector<double> u0(n);
  for (int i = 0; i < n; ++i) u0[i] = 305.0 + 20.0 * i / (n - 1);  // solid, melting, liquid
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const auto p = heatsim::solver::make_problem(c, dt, fields);
  auto explicit_backend = heatsim::kernels::make_cpu_backend(p.precision);
  explicit_backend->setup(p);
  explicit_backend->upload(u0);
  const double expected = explicit_backend->stats().total_heat;
  // The same content by hand: C_ref h(u) at every node, trapezoid weights.
  const heatsim::kernels::TemperatureLaw& law = fields->temperature->laws[0];
  ASSERT_TRUE(law.varying_capacity());
  double by_hand = 0.0;
  for (int i = 0; i < n; ++i)
    by_hand += (i == 0 || i == n - 1 ? 0.5 : 1.0) * fields->capacity[static_cast<std::size_t>(i)] *
               law.enthalpy(u0[static_cast<std::size_t>(i)]);
  EXPECT_NEAR(expected, by_hand, 1e-12 * std::abs(by_hand));

  const auto q = heatsim::solver::make_problem(c, 50 * dt, fields);
  for (const mg::TimeMethod method : {mg::TimeMethod::backward_euler, mg::TimeMethod::bdf2}) {
    mg::ImplicitBackend backend(
        "cpu", std::make_unique<mg::ImplicitStepper>(
                   q, fields, method, 50 * dt,
                   heatsim::kernels::make_level_ops("cpu", q.precision), mg::SolveOptions{}));
    backend.setup(q);
    backend.upload(u0);
    EXPECT_NEAR(backend.stats().total_heat, expected, 1e-12 * std::abs(expected));
  }
}

// A steel rod heated from x- (Dirichlet 900 K) and radiating and convecting from x+ to 300 K,
// k and c_p both tables of T, from 300 K: `steps` steps of `method` to t = 40 s.
std::vector<double> heated_rod(mg::TimeMethod method, int steps,
                               std::vector<double>* previous = nullptr, int split = -1) {
  const int n = 41;
  Case c = rod(n, 0.02);
  heatsim::solver::MaterialSpec steel = material("steel", 50.0, 7800, 480);
  steel.conductivity_table = {{300.0, 50.0}, {600.0, 40.0}, {900.0, 30.0}};
  steel.specific_heat_table = {{300.0, 480.0}, {900.0, 700.0}};
  c.materials = {steel};
  c.regions = {region("steel")};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 900.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 20.0;
  c.boundary[1].emissivity = 0.8;
  c.boundary[1].value = 300.0;
  const double dt = 40.0 / steps;
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  options.outer_tolerance = 1e-13;
  const auto make = [&] {
    auto fields = heatsim::solver::coefficient_fields(c);
    const auto p = heatsim::solver::make_problem(c, dt, fields);
    return std::make_unique<mg::ImplicitStepper>(
        p, fields, method, dt, heatsim::kernels::make_level_ops("cpu", p.precision), options);
  };
  std::vector<double> u(n, 300.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  auto stepper = make();
  stepper->set_field(u);
  for (int s = 0; s < steps; ++s) {
    if (s == split) {
      // A restart: a new stepper from the field and the field of the step before.
      std::vector<double> before = *stepper->previous_field(s);
      stepper->field(u);
      stepper = make();
      stepper->set_field(u);
      stepper->set_previous_field(s, before);
    }
    stepper->advance(s);
  }
  stepper->field(u);
  if (previous) *previous = stepper->previous_field(steps).value_or(std::vector<double>{});
  return u;
}

// BDF2 takes temperature-dependent materials and radiation (Newton on the enthalpy about the
// history (4 h_n - h_{n-1}) / 3): its error at t = 40 s against a run of 1024 steps falls 4
// times per halving of dt (second order), backward Euler's 2 times; a run restarted halfway
// from the field and the one before it ends on the same bits.
TEST(Nonlinear, Bdf2IsSecondOrderWithTemperatureLawsAndRadiation) {
  const std::vector<double> reference = heated_rod(mg::TimeMethod::bdf2, 1024);
  EXPECT_GT(reference[20], 400.0);  // the middle has warmed through the tables' range
  const auto error = [&](mg::TimeMethod m, int steps) {
    const std::vector<double> u = heated_rod(m, steps);
    double e = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - reference[i]));
    return e;
  };
  const double b8 = error(mg::TimeMethod::bdf2, 8), b16 = error(mg::TimeMethod::bdf2, 16),
               b32 = error(mg::TimeMethod::bdf2, 32);
  EXPECT_GT(b8 / b16, 3.3);
  EXPECT_LT(b8 / b16, 5.0);
  EXPECT_GT(b16 / b32, 3.3);
  EXPECT_LT(b16 / b32, 4.5);
  const double e16 = error(mg::TimeMethod::backward_euler, 16),
               e32 = error(mg::TimeMethod::backward_euler, 32);
  EXPECT_GT(e16 / e32, 1.7);
  EXPECT_LT(e16 / e32, 2.3);
  EXPECT_LT(b32, e32 / 10.0);

  std::vector<double> previous, previous_restarted;
  const std::vector<double> straight = heated_rod(mg::TimeMethod::bdf2, 20, &previous);
  const std::vector<double> restarted =
      heated_rod(mg::TimeMethod::bdf2, 20, &previous_restarted, 10);
  EXPECT_EQ(straight, restarted);
  ASSERT_EQ(previous.size(), straight.size());
  EXPECT_EQ(previous, previous_restarted);
}

// The mode sin(pi x / Lx) sin(pi y / Ly) (sin(pi z / Lz)) with Dirichlet faces: one explicit
// step multiplies it by 1 - dt / (rho c) sum_a k_a 4 / h_a^2 sin^2(pi h_a / (2 L_a)).
TEST(Nonlinear, AnAnisotropicModeDecaysByTheDiscreteFactor) {
  for (int dims : {2, 3}) {
    Case c;
    c.grid.dims = dims;
    c.grid.n = {21, 13, dims == 3 ? 9 : 1};
    c.grid.length = {1.0, 0.5, dims == 3 ? 0.3 : 1.0};
    heatsim::solver::MaterialSpec pcb = material("pcb", 20.0, 1850, 1100);
    pcb.axes = {20.0, 7.0, dims == 3 ? 0.3 : 20.0};
    c.materials = {pcb};
    c.regions = {region("pcb")};
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::dirichlet;
      f.value = 0.0;
    }
    const auto fields = heatsim::solver::coefficient_fields(c);
    const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
    double rate = 0.0;
    std::vector<double> u0(static_cast<std::size_t>(c.grid.n[0] * c.grid.n[1] * c.grid.n[2]));
    for (int a = 0; a < dims; ++a) {
      const double h = c.grid.length[a] / (c.grid.n[a] - 1);
      const double s = std::sin(M_PI * h / (2.0 * c.grid.length[a]));
      rate += pcb.axes[a] * 4.0 / (h * h) * s * s;
    }
    const double factor = 1.0 - dt / (1850.0 * 1100.0) * rate;
    std::size_t i = 0;
    for (int z = 0; z < c.grid.n[2]; ++z)
      for (int y = 0; y < c.grid.n[1]; ++y)
        for (int x = 0; x < c.grid.n[0]; ++x, ++i) {
          double v = std::sin(M_PI * x / (c.grid.n[0] - 1)) * std::sin(M_PI * y / (c.grid.n[1] - 1));
          if (dims == 3) v *= std::sin(M_PI * z / (c.grid.n[2] - 1));
          u0[i] = v;
        }
    const std::vector<double> u1 = explicit_steps(c, u0, dt, 1);
    for (std::size_t k = 0; k < u0.size(); ++k)
      EXPECT_NEAR(u1[k], factor * u0[k], 1e-12) << dims << "D node " << k;
    EXPECT_LT(factor, 0.99);  // the step did decay the mode
  }
}

}  // namespace
}  // namespace heatsim_tests
