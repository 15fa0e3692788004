// Real heat problems against analytic solutions, through the case model, the coefficient fields
// and the CPU reference backend: layered walls, convective ends, uniform heating, heat balances
// with scheduled sources and convective losses, a manufactured solution's convergence order,
// and one material everywhere against the homogeneous shorthand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "kernels/cpu/cpu_backend.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver {
namespace {

using kernels::CoefficientFields;

Case grid_case(int dims, std::int64_t n, double length) {
  Case c;
  c.grid.dims = dims;
  for (int a = 0; a < 3; ++a) {
    c.grid.n[a] = a < dims ? n : 1;
    c.grid.length[a] = length;
  }
  return c;
}

// k and rho*c_p (density = capacity, specific heat 1).
MaterialSpec material(const std::string& name, double k, double capacity) {
  return heatsim_tests::material(name, k, capacity, 1.0);
}

using heatsim_tests::box;
using heatsim_tests::region;

BoundaryFace dirichlet(double g) {
  BoundaryFace f;
  f.kind = BoundaryKind::dirichlet;
  f.value = g;
  return f;
}

BoundaryFace insulated() {
  BoundaryFace f;
  f.kind = BoundaryKind::neumann;
  return f;
}

BoundaryFace convective(double transfer, double ambient) {
  BoundaryFace f;
  f.kind = BoundaryKind::convective;
  f.transfer = transfer;
  f.value = ambient;
  return f;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// Explicit steps at 0.9 of the field's stability limit until a block of steps changes no node
// by more than `tol`; returns the field. Fails the test when it does not settle.
std::vector<double> steady_state(const kernels::StencilProblem& p, std::vector<double> u,
                                 double tol, std::int64_t max_steps = 2000000) {
  auto backend = kernels::make_cpu_backend(kernels::Precision::fp64);
  backend->setup(p);
  backend->upload(u);
  const std::int64_t block = 200;
  std::vector<double> next;
  for (std::int64_t step = 0; step < max_steps; step += block) {
    backend->advance(block, step);
    backend->download(next);
    const double change = max_abs_diff(next, u);
    u = next;
    if (change < tol) return u;
  }
  ADD_FAILURE() << "no steady state after " << max_steps << " steps";
  return u;
}

// The steady state of a case from a zero field (or the given one).
std::vector<double> case_steady_state(const Case& c, double tol, std::vector<double> u0 = {}) {
  const auto fields = coefficient_fields(c);
  const TimePlan plan = plan_time(c, *fields);
  const kernels::StencilProblem p = make_problem(c, plan.dt, fields);
  if (u0.empty()) u0 = initial_field(c);
  return steady_state(p, u0, tol);
}

// A wall of two materials, conductivities 1 and 20, the interface at x = 0.425, halfway
// between the nodes at 0.4 and 0.45; Dirichlet 1 and 0 at the ends. The steady temperature is
// linear in each layer with one heat flux q through both: q = (T0 - T1) / (a/k_a + (L-a)/k_b).
// The harmonic face conductance is exactly the series resistance of the two half cells, so
// the discrete steady state equals it at every node.
TEST(RealProblems, TwoLayerWallIsExact) {
  Case c = grid_case(1, 21, 1.0);  // h = 0.05
  c.materials = {material("brick", 20.0, 20.0), material("foam", 1.0, 1.0)};
  c.regions = {region("brick"), region("foam", box({0, 0, 0}, {0.425, 0, 0}))};
  c.boundary[0] = dirichlet(1.0);
  c.boundary[1] = dirichlet(0.0);
  const std::vector<std::int32_t> ids = material_ids(c);
  ASSERT_EQ(ids[8], 1);
  ASSERT_EQ(ids[9], 0);
  const std::vector<double> u = case_steady_state(c, 1e-14);
  const double a = 0.425, ka = 1.0, kb = 20.0;
  const double q = (1.0 - 0.0) / (a / ka + (1.0 - a) / kb);
  for (std::int64_t i = 0; i < 21; ++i) {
    const double x = 0.05 * static_cast<double>(i);
    const double exact = x <= a ? 1.0 - q * x / ka : q * (1.0 - x) / kb;
    EXPECT_NEAR(u[static_cast<std::size_t>(i)], exact, 1e-9) << "x = " << x;
  }
}

// A rod held at T0 at x = 0 and cooled by h_c toward T_amb at x = L: the steady profile is
// linear, u = T0 + s x with -k s = h_c (u(L) - T_amb), s = -h_c (T0 - T_amb) / (k + h_c L).
// The convective ghost node is exact for linear profiles.
TEST(RealProblems, RodWithConvectiveEndIsExact) {
  Case c = grid_case(1, 26, 0.5);  // h = 0.02
  c.materials = {material("steel", 2.0, 3.0)};
  c.regions = {region("steel")};
  const double t0 = 1.0, t_amb = 0.2, hc = 5.0, k = 2.0, L = 0.5;
  c.boundary[0] = dirichlet(t0);
  c.boundary[1] = convective(hc, t_amb);
  const std::vector<double> u = case_steady_state(c, 1e-14);
  const double s = -hc * (t0 - t_amb) / (k + hc * L);
  for (std::int64_t i = 0; i < 26; ++i) {
    const double x = 0.02 * static_cast<double>(i);
    EXPECT_NEAR(u[static_cast<std::size_t>(i)], t0 + s * x, 1e-9) << "x = " << x;
  }
  // The heat conducted out of the rod equals the heat carried away at the end.
  EXPECT_NEAR(-k * s, hc * (u.back() - t_amb), 1e-9);
}

// Uniform heating q between walls at T0 and T1: -k u'' = q gives the parabola
// u = T0 + (T1 - T0) x / L + q x (L - x) / (2 k), which the three-point Laplacian holds exactly.
TEST(RealProblems, UniformPowerDensityGivesTheParabola) {
  Case c = grid_case(1, 31, 1.5);  // h = 0.05
  c.materials = {material("copper", 4.0, 2.0)};
  c.regions = {region("copper")};
  c.boundary[0] = dirichlet(0.5);
  c.boundary[1] = dirichlet(-0.25);
  SourceSpec heat;
  heat.power_density = 6.0;
  c.sources = {heat};
  const std::vector<double> u = case_steady_state(c, 1e-14);
  const double L = 1.5;
  for (std::int64_t i = 0; i < 31; ++i) {
    const double x = 0.05 * static_cast<double>(i);
    const double exact = 0.5 + (-0.25 - 0.5) * x / L + 6.0 * x * (L - x) / (2.0 * 4.0);
    EXPECT_NEAR(u[static_cast<std::size_t>(i)], exact, 1e-9) << "x = " << x;
  }
}

// The heat content H = cell volume * sum_i w_i C_i u_i (stats().total_heat times the cell
// volume) changes in each step by dt * (the scheduled power's mean over the step) minus the
// heat leaving through convective faces, transfer * (u_b - ambient(t)) per unit area with
// the face nodes' trapezoid weights, plus the heat flux entering through heat-flux faces.
struct Balance {
  double gained = 0.0;   // integral of the source power so far
  double lost = 0.0;     // heat out through convective faces so far
  double entered = 0.0;  // heat in through heat-flux faces so far
};

// Face area a node of face `f` stands for: its trapezoid weight on the face's axes times their
// spacings.
double face_area(const Case& c, int f, std::int64_t node) {
  const int axis = f / 2;
  const std::int64_t nx = c.grid.n[0], ny = c.grid.n[1];
  const std::int64_t idx[3] = {node % nx, node / nx % ny, node / (nx * ny)};
  double area = 1.0;
  for (int a = 0; a < c.grid.dims; ++a) {
    if (a == axis) continue;
    const bool end = idx[a] == 0 || idx[a] == c.grid.n[a] - 1;
    const bool periodic = c.boundary[2 * a].kind == BoundaryKind::periodic;
    area *= (end && !periodic ? 0.5 : 1.0) * spacing(c, a);
  }
  return area;
}

bool on_face(const Case& c, int f, std::int64_t node) {
  const int axis = f / 2;
  const std::int64_t nx = c.grid.n[0], ny = c.grid.n[1];
  const std::int64_t idx[3] = {node % nx, node / nx % ny, node / (nx * ny)};
  return idx[axis] == (f % 2 == 0 ? 0 : c.grid.n[axis] - 1);
}

void check_heat_balance(const Case& c, double power, const kernels::Schedule& schedule) {
  const auto fields = coefficient_fields(c);
  const TimePlan plan = plan_time(c, *fields);
  const kernels::StencilProblem p = make_problem(c, plan.dt, fields);
  auto backend = kernels::make_cpu_backend(kernels::Precision::fp64);
  backend->setup(p);
  std::vector<double> u = initial_field(c);
  backend->upload(u);
  const double volume = cell_volume(c);
  const double h0 = backend->stats().total_heat * volume;
  Balance b;
  const std::int64_t steps = 400;
  int checks = 0;
  for (std::int64_t s = 0; s < steps; ++s) {
    const double t = static_cast<double>(s) * plan.dt;
    for (int f = 0; f < 2 * c.grid.dims; ++f) {
      const BoundaryFace& face = c.boundary[f];
      const bool conv = face.kind == BoundaryKind::convective;
      const bool flux = face.kind == BoundaryKind::neumann && face.heat_flux;
      if (!conv && !flux) continue;
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(u.size()); ++i) {
        if (!on_face(c, f, i)) continue;
        const double area = face_area(c, f, i);
        if (conv)
          b.lost += plan.dt * face.transfer * (u[static_cast<std::size_t>(i)] - face.at(t)) * area;
        if (flux) b.entered += plan.dt * face.value * area;
      }
    }
    backend->advance(1, s);
    backend->download(u);
    if ((s + 1) % 50 == 0) {
      const double t1 = static_cast<double>(s + 1) * plan.dt;
      b.gained = power * schedule.mean(0.0, t1) * t1;
      const double heat = backend->stats().total_heat * volume;
      const double expected = h0 + b.gained - b.lost + b.entered;
      const double scale =
          std::abs(h0) + std::abs(b.gained) + std::abs(b.lost) + std::abs(b.entered);
      EXPECT_NEAR(heat, expected, 1e-12 * scale) << "step " << s + 1;
      ++checks;
    }
  }
  // The source did work: the schedule was on for part of the run.
  EXPECT_GT(b.gained, 0.1 * power * plan.dt * steps);
  EXPECT_EQ(checks, 8);
}

Case insulated_box_case(int dims, std::int64_t n) {
  Case c = grid_case(dims, n, 1.0);
  for (auto& f : c.boundary) f = insulated();
  c.materials = {material("mold", 0.9, 1.9), material("copper", 4.0, 3.4)};
  c.regions = {region("mold"), region("copper", box({0.2, 0.2, 0.2}, {0.6, 0.55, 0.7}))};
  c.initial.kind = InitialKind::gaussian;
  c.initial.background = 0.3;
  c.initial.amplitude = 1.0;
  c.initial.center = {0.4, 0.5, 0.5};
  c.initial.width = 0.2;
  return c;
}

SourceSpec scheduled_heater(double power, const kernels::Schedule& schedule) {
  SourceSpec s;
  s.shape = box({0.0, 0.3, 0.1}, {0.35, 0.8, 0.45});  // touches the x- face: half weights
  s.power = power;
  s.schedule = schedule;
  return s;
}

kernels::Schedule heater_schedule(double dt) {
  kernels::Schedule s;
  s.table = {{0.0, 0.0}, {40 * dt, 1.0}, {150 * dt, 1.0}, {170.5 * dt, 0.25}, {300 * dt, 0.0}};
  return s;
}

TEST(RealProblems, InsulatedDomainGainsTheScheduledPower2D) {
  Case c = insulated_box_case(2, 23);
  const double dt = plan_time(c).dt;
  c.sources = {scheduled_heater(2.5, heater_schedule(dt))};
  check_heat_balance(c, 2.5, heater_schedule(dt));
}

TEST(RealProblems, InsulatedDomainGainsTheScheduledPower3D) {
  Case c = insulated_box_case(3, 13);
  c.boundary[2].kind = c.boundary[3].kind = BoundaryKind::periodic;  // y periodic: weights 1
  const double dt = plan_time(c).dt;
  c.sources = {scheduled_heater(0.8, heater_schedule(dt))};
  check_heat_balance(c, 0.8, heater_schedule(dt));
}

TEST(RealProblems, ConvectiveAndHeatFluxFacesEnterTheBalance) {
  Case c = insulated_box_case(2, 19);
  const double dt = plan_time(c).dt;
  BoundaryFace cool = convective(3.0, 0.1);
  cool.amplitude = 0.05;
  cool.frequency = 1.0 / (100 * dt);
  c.boundary[3] = cool;            // y+: ambient on a sine
  c.boundary[0].heat_flux = true;  // x-: 0.7 W/m^2 into the body
  c.boundary[0].value = 0.7;
  c.sources = {scheduled_heater(1.5, heater_schedule(dt))};
  check_heat_balance(c, 1.5, heater_schedule(dt));

  Case c3 = insulated_box_case(3, 11);
  c3.boundary[5] = convective(8.0, -0.2);
  const double dt3 = plan_time(c3).dt;
  c3.sources = {scheduled_heater(0.4, heater_schedule(dt3))};
  check_heat_balance(c3, 0.4, heater_schedule(dt3));
}

// Manufactured steady solution u* = prod sin(pi x_a) on the unit square/cube with u* = 0 on
// the Dirichlet faces, k = 1.5 + 0.5 sin(x + 2y) cos(z) smooth and positive, and
// q = -div(k grad u*) given per node. The max error falls as h^2.
double manufactured_error(int dims, std::int64_t n) {
  Case c = grid_case(dims, n, 1.0);
  for (auto& f : c.boundary) f = dirichlet(0.0);
  const auto points = static_cast<std::size_t>(std::pow(n, dims));
  auto fields = std::make_shared<CoefficientFields>();
  CoefficientFields::Source src;
  src.schedule.value = 1.0;  // a constant factor 1
  std::vector<double> exact(points);
  const double h = 1.0 / static_cast<double>(n - 1);
  for (std::size_t i = 0; i < points; ++i) {
    const std::int64_t idx[3] = {static_cast<std::int64_t>(i) % n,
                                 static_cast<std::int64_t>(i) / n % n,
                                 static_cast<std::int64_t>(i) / (n * n)};
    double x[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) x[a] = h * static_cast<double>(idx[a]);
    const double k = 1.5 + 0.5 * std::sin(x[0] + 2 * x[1]) * std::cos(x[2]);
    const double grad_k[3] = {0.5 * std::cos(x[0] + 2 * x[1]) * std::cos(x[2]),
                              std::cos(x[0] + 2 * x[1]) * std::cos(x[2]),
                              -0.5 * std::sin(x[0] + 2 * x[1]) * std::sin(x[2])};
    double s[3], co[3];
    for (int a = 0; a < 3; ++a) {
      s[a] = a < dims ? std::sin(M_PI * x[a]) : 1.0;
      co[a] = a < dims ? std::cos(M_PI * x[a]) : 0.0;
    }
    const double u = s[0] * s[1] * s[2];
    // div(k grad u) = grad k . grad u + k lap u; lap u = -dims pi^2 u.
    double div = -static_cast<double>(dims) * M_PI * M_PI * k * u;
    for (int a = 0; a < dims; ++a) {
      double du = M_PI * co[a];  // du/dx_a = pi cos(pi x_a) prod_{b != a} sin(pi x_b)
      for (int b = 0; b < dims; ++b)
        if (b != a) du *= s[b];
      div += grad_k[a] * du;
    }
    exact[i] = u;
    fields->conductivity.push_back(k);
    fields->capacity.push_back(k);  // diffusivity 1: the same dt limit everywhere
    src.density.push_back(-div);
  }
  fields->sources = {src};
  const TimePlan plan = plan_time(c, *fields);
  const kernels::StencilProblem p = make_problem(c, plan.dt, fields);
  // From u* itself, the transient is the discretisation error's size; a block that changes
  // nothing by 1e-10 leaves it far below the error (about 1e-3 here).
  const std::vector<double> u = steady_state(p, exact, 1e-10);
  return max_abs_diff(u, exact);
}

// Observed order between grids of n_a and n_b points per axis: log(e_a / e_b) / log(h_a / h_b).
double observed_order(int dims, std::int64_t na, std::int64_t nb) {
  const double ea = manufactured_error(dims, na), eb = manufactured_error(dims, nb);
  const double ha = 1.0 / static_cast<double>(na - 1), hb = 1.0 / static_cast<double>(nb - 1);
  return std::log(ea / eb) / std::log(ha / hb);
}

TEST(RealProblems, ManufacturedSolutionConvergesAtSecondOrder2D) {
  EXPECT_NEAR(observed_order(2, 17, 33), 2.0, 0.1);
  EXPECT_NEAR(observed_order(2, 33, 65), 2.0, 0.1);
}

// 3D grids stay below the backend's threading threshold (32768 points) to keep the test quick.
TEST(RealProblems, ManufacturedSolutionConvergesAtSecondOrder3D) {
  EXPECT_NEAR(observed_order(3, 7, 13), 2.0, 0.1);
  EXPECT_NEAR(observed_order(3, 13, 25), 2.0, 0.1);
}

// One material with k = alpha and rho*c_p = 1 everywhere is the homogeneous shorthand: the
// varying-coefficient path and the constant-weight path agree to rounding, with a constant
// source and a time-dependent Dirichlet face.
TEST(RealProblems, OneMaterialEverywhereEqualsTheShorthand) {
  for (int dims = 1; dims <= 3; ++dims) {
    Case plain = grid_case(dims, dims == 3 ? 12 : 25, 1.0);
    plain.physics.alpha = 0.37;
    plain.physics.source = 0.5;
    plain.boundary[0] = dirichlet(1.0);
    plain.boundary[0].amplitude = 0.3;
    plain.boundary[0].frequency = 2.0;
    plain.boundary[1] = insulated();
    plain.boundary[1].value = -0.4;
    plain.boundary[2].kind = plain.boundary[3].kind = BoundaryKind::periodic;
    plain.initial.kind = InitialKind::gaussian;
    plain.initial.background = 0.1;
    ASSERT_FALSE(plain.has_fields());
    Case materials = plain;
    MaterialSpec m;
    m.name = "only";
    m.conductivity = 0.37;
    materials.materials = {m};
    materials.regions = {region("only")};
    ASSERT_TRUE(materials.has_fields());

    const double dt = plan_time(plain).dt;
    EXPECT_NEAR(plan_time(materials).dt, dt, 1e-12 * dt);
    std::vector<double> results[2];
    const Case* cases[2] = {&plain, &materials};
    for (int k = 0; k < 2; ++k) {
      const kernels::StencilProblem p = make_problem(*cases[k], dt);
      EXPECT_EQ(static_cast<bool>(p.coefficients), k == 1);
      auto backend = kernels::make_cpu_backend(kernels::Precision::fp64);
      backend->setup(p);
      backend->upload(initial_field(*cases[k]));
      backend->advance(300, 0);
      backend->download(results[k]);
    }
    double scale = 0.0;
    for (double v : results[0]) scale = std::max(scale, std::abs(v));
    ASSERT_GT(scale, 0.5);
    for (std::size_t i = 0; i < results[0].size(); ++i)
      ASSERT_NEAR(results[1][i], results[0][i], 1e-12 * scale) << dims << "D node " << i;
  }
}

}  // namespace
}  // namespace heatsim::solver
