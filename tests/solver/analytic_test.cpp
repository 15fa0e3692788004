// Analytic regression: discrete eigenmodes decay by exactly the forward-Euler factor of the
// stencil's symbol; under refinement the error against the continuous solution falls at the
// scheme's order; zero-flux and periodic runs conserve the total heat; fp32 tracks fp64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/cpu/cpu_backend.hpp"
#include "solver/simulation.hpp"
#include "solver/stencil.hpp"

namespace heatsim::solver {
namespace {

Case make_case(int dims, std::array<std::int64_t, 3> n, std::array<double, 3> length,
               SchemeKind scheme, BoundaryKind bc) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = {1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    c.grid.n[a] = n[a];
    c.grid.length[a] = length[a];
  }
  c.physics.alpha = 0.7;
  c.scheme.kind = scheme;
  for (auto& f : c.boundary) f = BoundaryFace{bc, 0.0, 0.0, 0.0, {}};
  return c;
}

// One mode: sin (Dirichlet) or cos (Neumann, periodic) of pi*k*x/L per axis.
void set_mode(Case& c, std::array<int, 3> k, bool cosine) {
  c.initial.kind = InitialKind::modes;
  ModeTerm m;
  m.amplitude = 1.5;
  m.k = k;
  m.cosine = {cosine, cosine, cosine};
  c.initial.modes = {m};
}

// The exact per-step factor of that mode: the symbol of S at theta_a = pi*k_a*h_a/L_a.
double mode_factor(const Case& c, const kernels::Stencil& S, std::array<int, 3> k) {
  std::array<double, 3> theta{0, 0, 0};
  for (int a = 0; a < c.grid.dims; ++a) theta[a] = M_PI * k[a] * spacing(c, a) / c.grid.length[a];
  const auto z = symbol(S, theta);
  return z[0];
}

std::vector<double> run_cpu(const Case& c, double dt, std::int64_t steps,
                            const std::vector<double>& u0) {
  auto backend = kernels::make_cpu_backend(c.precision);
  backend->setup(make_problem(c, dt));
  backend->upload(u0);
  backend->advance(steps, 0);
  std::vector<double> u;
  backend->download(u);
  return u;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// max |u - factor^steps * u0| / max |u0|
double mode_error(const std::vector<double>& u, const std::vector<double>& u0, double amp) {
  double e = 0;
  for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - amp * u0[i]));
  return e / max_abs(u0);
}

struct ModeCase {
  const char* name;
  int dims;
  std::array<std::int64_t, 3> n;
  std::array<double, 3> length;
  SchemeKind scheme;
  BoundaryKind bc;
  std::array<int, 3> k;
};

class DiscreteModeTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(DiscreteModeTest, DecaysByTheExactForwardEulerFactor) {
  const ModeCase& m = GetParam();
  Case c = make_case(m.dims, m.n, m.length, m.scheme, m.bc);
  set_mode(c, m.k, m.bc != BoundaryKind::dirichlet);
  const double dt = 0.8 * max_stable_dt(laplacian(c), c.physics.alpha);
  const std::int64_t steps = 60;
  const kernels::Stencil S = update_operator(laplacian(c), c.physics.alpha * dt);
  const double g = mode_factor(c, S, m.k);
  ASSERT_LT(std::abs(g), 1.0);
  ASSERT_GT(std::abs(std::pow(g, steps)), 1e-3) << "choose a slower mode: the test would be vacuous";
  const std::vector<double> u0 = initial_field(c);
  const std::vector<double> u = run_cpu(c, dt, steps, u0);
  EXPECT_LT(mode_error(u, u0, std::pow(g, steps)), 1e-12 * std::abs(std::pow(g, steps)));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DiscreteModeTest,
    ::testing::Values(
        ModeCase{"dirichlet_sine_1d", 1, {97, 1, 1}, {2.0, 1, 1}, SchemeKind::order2,
                 BoundaryKind::dirichlet, {3, 0, 0}},
        ModeCase{"dirichlet_sine_1d_order6", 1, {61, 1, 1}, {1.0, 1, 1}, SchemeKind::order6,
                 BoundaryKind::dirichlet, {2, 0, 0}},
        ModeCase{"dirichlet_sine_2d_unequal", 2, {41, 29, 1}, {1.0, 0.6, 1}, SchemeKind::order2,
                 BoundaryKind::dirichlet, {2, 1, 0}},
        ModeCase{"dirichlet_sine_2d_order4", 2, {33, 45, 1}, {1.3, 1.0, 1}, SchemeKind::order4,
                 BoundaryKind::dirichlet, {1, 2, 0}},
        ModeCase{"dirichlet_sine_2d_isotropic", 2, {37, 37, 1}, {1.0, 1.0, 1},
                 SchemeKind::isotropic, BoundaryKind::dirichlet, {2, 1, 0}},
        ModeCase{"dirichlet_sine_3d_unequal", 3, {17, 21, 13}, {1.0, 1.5, 0.8},
                 SchemeKind::order2, BoundaryKind::dirichlet, {1, 2, 1}},
        ModeCase{"dirichlet_sine_3d_isotropic", 3, {15, 19, 17}, {1.0, 1.2, 1.1},
                 SchemeKind::isotropic, BoundaryKind::dirichlet, {1, 1, 2}},
        ModeCase{"neumann_cosine_1d", 1, {50, 1, 1}, {1.0, 1, 1}, SchemeKind::order4,
                 BoundaryKind::neumann, {2, 0, 0}},
        ModeCase{"neumann_cosine_2d", 2, {33, 25, 1}, {1.0, 0.7, 1}, SchemeKind::order2,
                 BoundaryKind::neumann, {1, 2, 0}},
        ModeCase{"neumann_cosine_3d", 3, {13, 16, 11}, {1.0, 1.0, 0.9}, SchemeKind::order4,
                 BoundaryKind::neumann, {1, 1, 1}},
        ModeCase{"periodic_fourier_1d", 1, {64, 1, 1}, {1.0, 1, 1}, SchemeKind::order6,
                 BoundaryKind::periodic, {4, 0, 0}},
        ModeCase{"periodic_fourier_2d", 2, {48, 40, 1}, {1.0, 2.0, 1}, SchemeKind::order2,
                 BoundaryKind::periodic, {2, 4, 0}},
        ModeCase{"periodic_fourier_3d", 3, {16, 12, 20}, {1.0, 1.0, 1.0}, SchemeKind::isotropic,
                 BoundaryKind::periodic, {2, 2, 2}}),
    [](const auto& info) { return std::string(info.param.name); });

// Error of the amplitude after time T against the continuous solution
// exp(-alpha * |kappa|^2 * T), sampled at every node.
double continuous_error(int dims, SchemeKind scheme, std::int64_t n, double dt_per_h_power,
                        int power, double T, bool time_discrete_reference) {
  Case c = make_case(dims, {n, n, n}, {1.0, 1.0, 1.0}, scheme, BoundaryKind::dirichlet);
  const std::array<int, 3> k{2, 1, 1};
  set_mode(c, k, false);
  const double h = spacing(c, 0);
  double dt = dt_per_h_power * std::pow(h, power);
  const auto steps = static_cast<std::int64_t>(std::ceil(T / dt));
  dt = T / static_cast<double>(steps);
  double kappa2 = 0;
  for (int a = 0; a < dims; ++a) kappa2 += std::pow(M_PI * k[a] / c.grid.length[a], 2);
  // The continuous-in-space solution, advanced exactly in time or by the same forward Euler
  // steps (which removes the time error altogether and leaves the spatial one).
  const double exact = time_discrete_reference
                           ? std::pow(1.0 - c.physics.alpha * dt * kappa2, static_cast<double>(steps))
                           : std::exp(-c.physics.alpha * kappa2 * T);
  const std::vector<double> u0 = initial_field(c);
  const std::vector<double> u = run_cpu(c, dt, steps, u0);
  return mode_error(u, u0, exact);
}

double observed_order(double e_coarse, double e_fine) {
  const double order = std::log2(e_coarse / e_fine);
  std::printf("  observed order %.4f (errors %.3e -> %.3e)\n", order, e_coarse, e_fine);
  return order;
}

TEST(Convergence, Order2AgainstContinuousSolution1D) {
  // dt ~ h^2: the time error is a small fixed fraction of the spatial one at every level.
  const double e1 = continuous_error(1, SchemeKind::order2, 33, 0.02, 2, 0.02, false);
  const double e2 = continuous_error(1, SchemeKind::order2, 65, 0.02, 2, 0.02, false);
  const double e3 = continuous_error(1, SchemeKind::order2, 129, 0.02, 2, 0.02, false);
  EXPECT_NEAR(observed_order(e1, e2), 2.0, 0.1);
  EXPECT_NEAR(observed_order(e2, e3), 2.0, 0.1);
}

TEST(Convergence, Order4AgainstContinuousSolution1D) {
  // dt ~ h^4 with a small constant: the time error stays about 1% of the spatial error.
  const double e1 = continuous_error(1, SchemeKind::order4, 17, 0.008, 4, 0.002, false);
  const double e2 = continuous_error(1, SchemeKind::order4, 33, 0.008, 4, 0.002, false);
  const double e3 = continuous_error(1, SchemeKind::order4, 65, 0.008, 4, 0.002, false);
  EXPECT_NEAR(observed_order(e1, e2), 4.0, 0.2);
  EXPECT_NEAR(observed_order(e2, e3), 4.0, 0.2);
}

TEST(Convergence, Order2And4In2DAnd3D) {
  // Against the continuous-in-space solution stepped by the same forward Euler factor, so
  // only the spatial error remains.
  const double a1 = continuous_error(2, SchemeKind::order2, 17, 0.1, 2, 0.01, true);
  const double a2 = continuous_error(2, SchemeKind::order2, 33, 0.1, 2, 0.01, true);
  const double a3 = continuous_error(2, SchemeKind::order2, 65, 0.1, 2, 0.01, true);
  EXPECT_NEAR(observed_order(a1, a2), 2.0, 0.1);
  EXPECT_NEAR(observed_order(a2, a3), 2.0, 0.1);
  const double b1 = continuous_error(2, SchemeKind::order4, 17, 0.1, 2, 0.01, true);
  const double b2 = continuous_error(2, SchemeKind::order4, 33, 0.1, 2, 0.01, true);
  const double b3 = continuous_error(2, SchemeKind::order4, 65, 0.1, 2, 0.01, true);
  EXPECT_NEAR(observed_order(b1, b2), 4.0, 0.2);
  EXPECT_NEAR(observed_order(b2, b3), 4.0, 0.2);
  const double c1 = continuous_error(3, SchemeKind::order2, 17, 0.1, 2, 0.01, true);
  const double c2 = continuous_error(3, SchemeKind::order2, 33, 0.1, 2, 0.01, true);
  EXPECT_NEAR(observed_order(c1, c2), 2.0, 0.1);
  const double d1 = continuous_error(3, SchemeKind::isotropic, 17, 0.1, 2, 0.01, true);
  const double d2 = continuous_error(3, SchemeKind::isotropic, 33, 0.1, 2, 0.01, true);
  EXPECT_NEAR(observed_order(d1, d2), 2.0, 0.1);
}

double total_heat(const Case& c, double dt, std::int64_t steps) {
  auto backend = kernels::make_cpu_backend(c.precision);
  backend->setup(make_problem(c, dt));
  backend->upload(initial_field(c));
  backend->advance(steps, 0);
  return backend->stats().total_heat;
}

class Conservation : public ::testing::TestWithParam<std::tuple<BoundaryKind, SchemeKind, int>> {};

TEST_P(Conservation, TotalHeatIsConstant) {
  const auto [bc, scheme, dims] = GetParam();
  Case c = make_case(dims, {40, 31, 23}, {1.0, 0.8, 1.2}, scheme, bc);
  c.initial.kind = InitialKind::gaussian;
  c.initial.center = {0.3, 0.5, 0.4};
  c.initial.width = 0.15;
  c.initial.background = 0.25;
  const double dt = 0.9 * max_stable_dt(laplacian(c), c.physics.alpha);
  const double before = total_heat(c, dt, 0);
  const double after = total_heat(c, dt, 400);
  EXPECT_NEAR(after, before, 1e-12 * std::abs(before));
  // Heat did move: the run is not a no-op.
  auto backend = kernels::make_cpu_backend(c.precision);
  backend->setup(make_problem(c, dt));
  backend->upload(initial_field(c));
  const double max0 = backend->stats().max;
  backend->advance(400, 0);
  EXPECT_LT(backend->stats().max, 0.99 * max0);
}

INSTANTIATE_TEST_SUITE_P(
    ZeroFluxAndPeriodic, Conservation,
    ::testing::Combine(::testing::Values(BoundaryKind::neumann, BoundaryKind::periodic),
                       ::testing::Values(SchemeKind::order2, SchemeKind::order4,
                                         SchemeKind::isotropic),
                       ::testing::Values(2, 3)));

TEST(Precision, Fp32AgreesWithFp64OnASmoothCase) {
  Case c = make_case(2, {64, 48, 1}, {1.0, 0.75, 1}, SchemeKind::order2, BoundaryKind::dirichlet);
  c.initial.kind = InitialKind::gaussian;
  c.initial.center = {0.5, 0.4, 0};
  c.initial.width = 0.12;
  const double dt = 0.9 * max_stable_dt(laplacian(c), c.physics.alpha);
  const std::vector<double> u0 = initial_field(c);
  const std::vector<double> u64 = run_cpu(c, dt, 200, u0);
  c.precision = Precision::fp32;
  const std::vector<double> u32 = run_cpu(c, dt, 200, u0);
  const double scale = max_abs(u64);
  double err = 0;
  for (std::size_t i = 0; i < u64.size(); ++i) err = std::max(err, std::abs(u32[i] - u64[i]));
  EXPECT_LT(err / scale, 1e-5);
  EXPECT_GT(err, 0.0) << "fp32 must actually run in single precision";
}

}  // namespace
}  // namespace heatsim::solver
