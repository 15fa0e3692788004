// The CPU backend's varying-coefficient path (StencilProblem::coefficients) against a second,
// naive implementation of the formula in backend.hpp written per node with explicit ghost
// rules; homogeneous fields against the constant-weight path; heat conservation with
// capacity-weighted totals; and what the constant path refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/cpu_backend.hpp"

namespace heatsim::kernels {
namespace {

std::int64_t flat(const StencilProblem& p, std::array<std::int64_t, 3> c) {
  return (c[2] * p.n[1] + c[1]) * p.n[0] + c[0];
}

double harmonic(double a, double b) { return 2.0 * a * b / (a + b); }

// One step of rho c_p u_t = div(k grad u) + sum_s factor_s q_s as backend.hpp states it: node
// by node, each neighbour looked up through the face rules.
std::vector<double> naive_step(const StencilProblem& p, const std::vector<double>& u, double t) {
  const CoefficientFields& f = *p.coefficients;
  std::vector<double> next(u.size());
  for (std::int64_t z = 0; z < p.n[2]; ++z)
    for (std::int64_t y = 0; y < p.n[1]; ++y)
      for (std::int64_t x = 0; x < p.n[0]; ++x) {
        const std::array<std::int64_t, 3> c{x, y, z};
        const std::int64_t i = flat(p, c);
        double flow = 0.0;
        for (int a = 0; a < p.dims; ++a) {
          double axis_flow = 0.0;
          for (int side = 0; side < 2; ++side) {
            auto j = c;
            j[a] += side ? 1 : -1;
            double uj = 0.0, kj = 0.0;
            if (j[a] >= 0 && j[a] < p.n[a]) {
              uj = u[flat(p, j)];
              kj = f.conductivity[flat(p, j)];
            } else {
              const BoundaryFace& face = p.faces[2 * a + side];
              auto m = c;  // the mirror node, or the node one period away
              if (face.kind == BoundaryKind::periodic)
                m[a] = side ? 0 : p.n[a] - 1;
              else
                m[a] += side ? -1 : 1;
              const double um = u[flat(p, m)];
              kj = f.conductivity[flat(p, m)];
              const double kbm = harmonic(f.conductivity[i], kj);
              const double h = p.h[a];
              switch (face.kind) {
                case BoundaryKind::periodic:
                  uj = um;
                  break;
                case BoundaryKind::dirichlet:
                  uj = 2.0 * face.at(t) - um;
                  break;
                case BoundaryKind::neumann:
                  uj = face.heat_flux ? um + 2.0 * h * face.value / kbm : um + 2.0 * h * face.value;
                  break;
                case BoundaryKind::convective:
                  uj = um - 2.0 * h * face.transfer * (u[i] - face.at(t)) / kbm;
                  break;
              }
            }
            axis_flow += harmonic(f.conductivity[i], kj) * (uj - u[i]);
          }
          flow += axis_flow / (p.h[a] * p.h[a]);
        }
        double src = 0.0;
        for (const auto& s : f.sources) src += s.schedule.mean(t, t + p.dt) * s.density[i];
        double v = u[i] + p.dt / f.capacity[i] * (flow + src);
        for (int a = 0; a < p.dims; ++a)
          for (int side = 0; side < 2; ++side) {
            const BoundaryFace& face = p.faces[2 * a + side];
            if (face.kind == BoundaryKind::dirichlet && c[a] == (side ? p.n[a] - 1 : 0))
              v = face.at(t + p.dt);
          }
        next[i] = v;
      }
  return next;
}

Stencil star_update(int dims, double alpha_dt, const std::array<double, 3>& h) {
  Stencil s;
  s.dims = dims;
  s.radius = 1;
  s.weights.assign(s.size(), 0.0);
  for (int a = 0; a < dims; ++a)
    for (int o : {-1, 1}) {
      int off[3] = {0, 0, 0};
      off[a] = o;
      s.at(off[0], off[1], off[2]) += alpha_dt / (h[a] * h[a]);
      s.at(0, 0, 0) -= alpha_dt / (h[a] * h[a]);
    }
  s.at(0, 0, 0) += 1.0;
  return s;
}

// A problem with random k in [1, 20], rho*c_p in [0.5, 3], two scheduled sources and the
// given faces, at a dt of half the Gershgorin limit.
StencilProblem random_fields_problem(std::mt19937_64& rng, int dims,
                                     const std::array<std::int64_t, 3>& n,
                                     const std::array<BoundaryFace, kFaces>& faces) {
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  StencilProblem p;
  p.dims = dims;
  p.n = n;
  p.h = {0.1, 0.07, 0.13};
  p.faces = faces;
  auto fields = std::make_shared<CoefficientFields>();
  const auto points = static_cast<std::size_t>(p.points());
  for (std::size_t i = 0; i < points; ++i) {
    fields->conductivity.push_back(1.0 + 19.0 * uni(rng));
    fields->capacity.push_back(0.5 + 2.5 * uni(rng));
  }
  CoefficientFields::Source a, b;
  for (std::size_t i = 0; i < points; ++i) {
    a.density.push_back(uni(rng) < 0.3 ? 50.0 * uni(rng) : 0.0);
    b.density.push_back(10.0 * uni(rng));
  }
  a.schedule.table = {{0.0, 0.0}, {0.002, 1.0}, {0.004, 0.25}};
  b.schedule.value = 0.5;
  b.schedule.amplitude = 0.5;
  b.schedule.frequency = 100.0;
  fields->sources = {a, b};
  // Gershgorin: C / sum of conductances / h^2 (k <= 20, convective h_c <= 5 adds 2 h_c / h).
  double worst = 0.0;
  for (int ax = 0; ax < dims; ++ax) worst += 2.0 * 20.0 / (p.h[ax] * p.h[ax]) + 10.0 / p.h[ax];
  p.dt = 0.5 * 0.5 / worst;
  p.stencil = star_update(dims, 0.0, p.h);
  p.coefficients = fields;
  return p;
}

std::vector<double> random_field(std::mt19937_64& rng, std::size_t points) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<double> u(points);
  for (double& v : u) v = uni(rng);
  return u;
}

BoundaryFace face(BoundaryKind kind, double value) {
  BoundaryFace f;
  f.kind = kind;
  f.value = value;
  return f;
}

// Face sets covering every kind: Dirichlet with a table, Neumann flux and heat flux,
// convective with a sine ambient, periodic.
std::vector<std::array<BoundaryFace, kFaces>> face_sets() {
  BoundaryFace dir = face(BoundaryKind::dirichlet, 0.3);
  dir.table = {{0.0, 0.3}, {0.003, -0.2}};
  BoundaryFace neu = face(BoundaryKind::neumann, 0.7);
  BoundaryFace flux = face(BoundaryKind::neumann, -4.0);
  flux.heat_flux = true;
  BoundaryFace conv = face(BoundaryKind::convective, 0.2);
  conv.transfer = 5.0;
  conv.amplitude = 0.4;
  conv.frequency = 200.0;
  const BoundaryFace per = face(BoundaryKind::periodic, 0.0);
  return {
      {dir, conv, flux, neu, conv, dir},
      {conv, flux, per, per, neu, conv},
      {per, per, conv, dir, flux, flux},
      {neu, dir, conv, conv, per, per},
  };
}

TEST(CpuCoefficients, MatchesNaiveReferenceOnRandomFieldsAndFaces) {
  std::mt19937_64 rng(13);
  const std::array<std::array<std::int64_t, 3>, 3> sizes{{{17, 1, 1}, {13, 11, 1}, {9, 7, 6}}};
  for (int dims = 1; dims <= 3; ++dims)
    for (const auto& faces : face_sets()) {
      const StencilProblem p = random_fields_problem(rng, dims, sizes[dims - 1], faces);
      std::vector<double> u = random_field(rng, static_cast<std::size_t>(p.points()));
      auto backend = make_cpu_backend(Precision::fp64);
      ASSERT_EQ(backend->unsupported_reason(p), "");
      backend->setup(p);
      backend->upload(u);
      const std::int64_t step0 = 3, steps = 40;
      for (std::int64_t s = 0; s < steps; ++s)
        u = naive_step(p, u, static_cast<double>(step0 + s) * p.dt);
      backend->advance(steps, step0);
      std::vector<double> got;
      backend->download(got);
      double scale = 0.0;
      for (double v : u) scale = std::max(scale, std::abs(v));
      for (std::size_t i = 0; i < u.size(); ++i)
        ASSERT_NEAR(got[i], u[i], 1e-12 * scale) << dims << "D node " << i;
    }
}

TEST(CpuCoefficients, Fp32AgreesWithFp64) {
  std::mt19937_64 rng(7);
  const StencilProblem p = random_fields_problem(rng, 2, {21, 15, 1}, face_sets()[0]);
  const std::vector<double> u0 = random_field(rng, static_cast<std::size_t>(p.points()));
  std::vector<double> results[2];
  const Precision precisions[2] = {Precision::fp64, Precision::fp32};
  for (int k = 0; k < 2; ++k) {
    StencilProblem q = p;
    q.precision = precisions[k];
    auto backend = make_cpu_backend(precisions[k]);
    backend->setup(q);
    backend->upload(u0);
    backend->advance(50, 0);
    backend->download(results[k]);
  }
  double scale = 0.0;
  for (double v : results[0]) scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 0.0);
  for (std::size_t i = 0; i < results[0].size(); ++i)
    EXPECT_NEAR(results[1][i], results[0][i], 1e-5 * scale) << i;
}

// k = alpha and rho*c_p = 1 everywhere is the constant operator S = I + alpha dt L: the two
// paths agree to rounding on Dirichlet, Neumann and periodic faces.
TEST(CpuCoefficients, HomogeneousFieldsEqualTheConstantPath) {
  std::mt19937_64 rng(3);
  const double alpha = 0.37;
  const std::array<std::array<std::int64_t, 3>, 3> sizes{{{31, 1, 1}, {15, 12, 1}, {8, 9, 7}}};
  BoundaryFace dir = face(BoundaryKind::dirichlet, 0.25);
  dir.amplitude = 0.1;
  dir.frequency = 3.0;
  const BoundaryFace neu = face(BoundaryKind::neumann, -0.6);
  const BoundaryFace per = face(BoundaryKind::periodic, 0.0);
  for (int dims = 1; dims <= 3; ++dims) {
    StencilProblem p;
    p.dims = dims;
    p.n = sizes[dims - 1];
    p.h = {0.05, 0.04, 0.06};
    p.faces = {dir, neu, per, per, neu, dir};
    double diag = 0.0;
    for (int a = 0; a < dims; ++a) diag += 2.0 * alpha / (p.h[a] * p.h[a]);
    p.dt = 0.9 / diag;
    p.stencil = star_update(dims, alpha * p.dt, p.h);
    const std::vector<double> u0 = random_field(rng, static_cast<std::size_t>(p.points()));

    StencilProblem q = p;
    auto fields = std::make_shared<CoefficientFields>();
    fields->conductivity.assign(u0.size(), alpha);
    fields->capacity.assign(u0.size(), 1.0);
    q.coefficients = fields;

    std::vector<double> constant, varying;
    for (const StencilProblem* problem : {&p, &q}) {
      auto backend = make_cpu_backend(Precision::fp64);
      backend->setup(*problem);
      backend->upload(u0);
      backend->advance(60, 0);
      backend->download(problem == &p ? constant : varying);
    }
    for (std::size_t i = 0; i < u0.size(); ++i)
      ASSERT_NEAR(varying[i], constant[i], 1e-12 * (1.0 + std::abs(constant[i])))
          << dims << "D node " << i;
  }
}

// Insulated faces (Neumann 0) and no source: the capacity-weighted trapezoidal total is the
// heat content, and the conservative form keeps it to rounding however k and C vary.
TEST(CpuCoefficients, InsulatedBoxKeepsItsHeat) {
  std::mt19937_64 rng(11);
  const BoundaryFace ins = face(BoundaryKind::neumann, 0.0);
  const BoundaryFace per = face(BoundaryKind::periodic, 0.0);
  StencilProblem p = random_fields_problem(rng, 3, {10, 9, 8}, {ins, ins, per, per, ins, ins});
  auto fields = std::make_shared<CoefficientFields>(*p.coefficients);
  fields->sources.clear();
  p.coefficients = fields;
  std::vector<double> u0 = random_field(rng, static_cast<std::size_t>(p.points()));
  for (double& v : u0) v += 2.0;
  auto backend = make_cpu_backend(Precision::fp64);
  backend->setup(p);
  backend->upload(u0);
  double expected = 0.0;
  for (std::int64_t z = 0; z < p.n[2]; ++z)
    for (std::int64_t y = 0; y < p.n[1]; ++y)
      for (std::int64_t x = 0; x < p.n[0]; ++x) {
        const double w = (x == 0 || x == p.n[0] - 1 ? 0.5 : 1.0) *
                         (z == 0 || z == p.n[2] - 1 ? 0.5 : 1.0);  // y is periodic
        const std::int64_t i = flat(p, {x, y, z});
        expected += w * fields->capacity[i] * u0[i];
      }
  EXPECT_NEAR(backend->stats().total_heat, expected, 1e-13 * expected);
  backend->advance(200, 0);
  const FieldStats st = backend->stats();
  EXPECT_NEAR(st.total_heat, expected, 1e-12 * expected);
  // The field did change: heat moved, it did not stay put.
  std::vector<double> u;
  backend->download(u);
  double moved = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) moved = std::max(moved, std::abs(u[i] - u0[i]));
  EXPECT_GT(moved, 0.1);
}

TEST(CpuCoefficients, ConstantPathRefusesConvectiveAndHeatFluxFaces) {
  StencilProblem p;
  p.dims = 1;
  p.n = {10, 1, 1};
  p.stencil = star_update(1, 0.1, p.h);
  auto backend = make_cpu_backend(Precision::fp64);
  EXPECT_EQ(backend->unsupported_reason(p), "");
  p.faces[1] = face(BoundaryKind::convective, 1.0);
  EXPECT_NE(backend->unsupported_reason(p).find("needs coefficient fields"), std::string::npos);
  EXPECT_THROW(backend->setup(p), std::runtime_error);
  p.faces[1] = face(BoundaryKind::neumann, 1.0);
  p.faces[1].heat_flux = true;
  EXPECT_NE(backend->unsupported_reason(p).find("needs coefficient fields"), std::string::npos);
  // With fields both are fine; fields of the wrong size are refused.
  auto fields = std::make_shared<CoefficientFields>();
  fields->conductivity.assign(10, 1.0);
  fields->capacity.assign(10, 1.0);
  p.coefficients = fields;
  EXPECT_EQ(backend->unsupported_reason(p), "");
  fields->capacity.assign(9, 1.0);
  EXPECT_NE(backend->unsupported_reason(p), "");
}

}  // namespace
}  // namespace heatsim::kernels
