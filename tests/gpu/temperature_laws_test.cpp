// The CUDA-core backends on temperature-dependent materials (kernels/temperature_laws.hpp) and
// radiating faces against the CPU reference: random laws (conductivity and capacity tables,
// a melting range with latent heat), a random law per node (a quarter of constant properties),
// random reference conductances and material shares per face, every face kind at random
// including convective faces that also radiate and radiative ones, 1D to 3D at sizes that are
// not tile multiples, fp64 and fp32, temperatures of 300 to 400 K across the tables' break
// points. The buffers are poisoned with NaN first. fp64 within 1e-11, fp32 within 1e-5 of max
// |u|; stats() (the heat content with the enthalpy) as the CPU's. Up to two groups of radiating
// surfaces inside the body (CoefficientFields::radiation) come with them. And: temporal-blocking
// refuses such problems with the reason, and `auto` takes a CUDA-core backend.
#include <array>
#include <memory>
#include <sstream>

#include "gpu_test_support.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/temperature_laws.hpp"
#include "solver/backend_choice.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryFace;
using kernels::BoundaryKind;
using kernels::CoefficientFields;
using kernels::Precision;
using kernels::StencilProblem;
using kernels::TemperatureLaw;

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// A table of 2 to 5 (T, ratio) pairs over 290..410 K, ratios in [lo, hi].
std::vector<std::array<double, 2>> random_table(std::mt19937_64& rng, double lo, double hi) {
  const int pairs = std::uniform_int_distribution<int>(2, 5)(rng);
  std::vector<std::array<double, 2>> t;
  double T = uniform(rng, 290.0, 320.0);
  for (int i = 0; i < pairs; ++i) {
    t.push_back({T, uniform(rng, lo, hi)});
    T += uniform(rng, 10.0, 30.0);
  }
  return t;
}

struct Built {
  StencilProblem problem;
  std::string what;
};

Built nonlinear_problem(int dims, const std::array<std::int64_t, 3>& n, Precision precision,
                        std::mt19937_64& rng) {
  Built b;
  StencilProblem& p = b.problem;
  p.dims = dims;
  for (int a = 0; a < 3; ++a) p.n[a] = a < dims ? n[a] : 1;
  p.h = {0.01, 0.013, 0.009};
  p.stencil.dims = dims;
  p.stencil.radius = 1;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  p.precision = precision;
  const std::size_t points = static_cast<std::size_t>(p.points());
  auto fields = std::make_shared<CoefficientFields>();
  fields->conductivity.resize(points);
  fields->capacity.resize(points);
  double c_min = 1e300, k_max = 0.0;
  for (std::size_t i = 0; i < points; ++i) {
    fields->conductivity[i] = uniform(rng, 1.0, 100.0);
    fields->capacity[i] = uniform(rng, 1e6, 4e6);
    c_min = std::min(c_min, fields->capacity[i]);
  }
  auto laws = std::make_shared<kernels::TemperatureDependence>();
  // A law of k(T) alone, one of k(T) and C(T), one that melts over [340, 345] K.
  TemperatureLaw conducting, both, melting;
  conducting.conductivity = random_table(rng, 0.5, 2.0);
  both.conductivity = random_table(rng, 0.5, 2.0);
  both.capacity = random_table(rng, 0.7, 1.5);
  melting.capacity = random_table(rng, 0.7, 1.5);
  melting.solidus = 340.0;
  melting.liquidus = 345.0;
  melting.latent = uniform(rng, 10.0, 40.0);
  for (TemperatureLaw* l : {&conducting, &both, &melting}) {
    l->prepare();
    laws->laws.push_back(*l);
  }
  laws->law.resize(points);
  for (auto& l : laws->law) l = std::uniform_int_distribution<std::int32_t>(-1, 2)(rng);
  for (int a = 0; a < dims; ++a) {
    auto& K = fields->faces[static_cast<std::size_t>(a)];
    auto& share = laws->share[static_cast<std::size_t>(a)];
    K.resize(points);
    share.resize(points);
    for (std::size_t i = 0; i < points; ++i) {
      K[i] = uniform(rng, 1.0, 100.0);
      k_max = std::max(k_max, K[i]);
      share[i] = uniform(rng, 0.05, 0.95);
    }
  }
  // A quarter of the problems without laws: radiation alone.
  if (std::uniform_int_distribution<int>(0, 3)(rng) != 0) fields->temperature = laws;
  // Radiating surfaces inside the body: up to two ambients, R on a third of the nodes.
  const int groups = std::uniform_int_distribution<int>(0, 2)(rng);
  double radiating = 0.0;  // the largest sum of 4 R T^3 at 450 K
  std::vector<double> per_node(points, 0.0);
  for (int g = 0; g < groups; ++g) {
    CoefficientFields::Radiation r;
    r.coefficient.assign(points, 0.0);
    for (std::size_t i = 0; i < points; ++i)
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        r.coefficient[i] = uniform(rng, 1e-5, 1e-3);
        per_node[i] += 4.0 * r.coefficient[i] * 450.0 * 450.0 * 450.0;
        radiating = std::max(radiating, per_node[i]);
      }
    r.ambient.value = uniform(rng, 250.0, 320.0);
    if (g == 1) {
      r.ambient.amplitude = 15.0;
      r.ambient.frequency = 2.0;
    }
    fields->radiation.push_back(std::move(r));
  }
  CoefficientFields::Source q;
  q.density.resize(points);
  for (double& v : q.density) v = uniform(rng, 0.0, 5e7);
  q.schedule.value = 1.0;
  fields->sources.push_back(std::move(q));

  // Faces; radiation's coefficient 4 sigma T^3 at 450 K, the hottest the field reaches.
  std::ostringstream what;
  double diag = 0.0;
  for (int a = 0; a < dims; ++a) {
    diag += 4.0 * 2.0 * k_max / (p.h[a] * p.h[a]);
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
      p.faces[2 * a].kind = p.faces[2 * a + 1].kind = BoundaryKind::periodic;
      what << " periodic periodic";
      continue;
    }
    for (int s = 0; s < 2; ++s) {
      BoundaryFace& f = p.faces[2 * a + s];
      switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
          f.kind = BoundaryKind::dirichlet;
          f.value = uniform(rng, 300.0, 400.0);
          break;
        case 1:
          f.kind = BoundaryKind::neumann;
          f.heat_flux = true;
          f.value = uniform(rng, -2e3, 2e3);
          break;
        case 2:  // convective, radiating too
          f.kind = BoundaryKind::convective;
          f.transfer = uniform(rng, 5.0, 50.0);
          f.emissivity = uniform(rng, 0.1, 1.0);
          f.value = uniform(rng, 280.0, 320.0);
          break;
        default:  // radiative
          f.kind = BoundaryKind::convective;
          f.emissivity = uniform(rng, 0.1, 1.0);
          f.value = uniform(rng, 250.0, 350.0);
          f.amplitude = 20.0;
          f.frequency = 1.0;
          break;
      }
      what << " " << kernels::to_string(f.kind) << (f.radiates() ? "(radiating)" : "");
      const double rad = 4.0 * f.emissivity * kernels::kStefanBoltzmann * 450.0 * 450.0 * 450.0;
      diag += 2.0 * (f.transfer + rad) / p.h[a];
    }
  }
  p.dt = 0.3 * 0.7 * c_min / (diag + radiating);
  what << " radiating surfaces " << groups << (fields->temperature ? " laws" : " no laws");
  p.coefficients = fields;
  b.what = what.str();
  return b;
}

std::vector<std::array<std::int64_t, 3>> sizes(int dims) {
  switch (dims) {
    case 1:
      return {{3, 1, 1}, {1237, 1, 1}};
    case 2:
      return {{2, 2, 1}, {300, 37, 1}, {33, 130, 1}};
    default:
      return {{2, 2, 2}, {37, 19, 13}, {70, 11, 5}};
  }
}

using Case = BackendCase;

class TemperatureLawAgreement : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(TemperatureLawAgreement, MatchesCpuOnRandomLawsAndRadiatingFaces) {
  const Case c = GetParam();
  std::mt19937_64 rng(9001 + 31 * c.dims + (c.precision == Precision::fp32 ? 7 : 0) +
                      static_cast<std::uint64_t>(c.backend.size()));
  const double tol = c.precision == Precision::fp64 ? 1e-11 : 1e-5;
  int runs = 0;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (const auto& n : sizes(c.dims)) {
      const Built built = nonlinear_problem(c.dims, n, c.precision, rng);
      const StencilProblem& p = built.problem;
      std::ostringstream what;
      what << c.backend << " " << c.dims << "D n=" << n[0] << "x" << n[1] << "x" << n[2]
           << " faces" << built.what;
      SCOPED_TRACE(what.str());
      auto gpu = kernels::create_backend(c.backend, c.precision);
      const std::string why = gpu->unsupported_reason(p);
      if (c.backend == "register-tiling" && c.dims == 1) {
        EXPECT_FALSE(why.empty());
        continue;
      }
      ASSERT_TRUE(why.empty()) << why;
      std::vector<double> u0(static_cast<std::size_t>(p.points()));
      for (double& v : u0) v = uniform(rng, 300.0, 400.0);

      const StepsOnBoth both = step_on_cpu_and(*gpu, p, u0, 9, 4);
      std::int64_t bad = -1;
      EXPECT_LE(relative_difference(both.gpu, both.cpu, &bad), tol) << "worst node " << bad;
      EXPECT_GT(relative_difference(both.cpu, u0), 1e-4);  // the steps did change the field
      const kernels::FieldStats& gs = both.gpu_stats;
      const kernels::FieldStats& cs = both.cpu_stats;
      EXPECT_EQ(gs.non_finite, 0);
      EXPECT_NEAR(gs.total_heat, cs.total_heat, 10 * tol * std::abs(cs.total_heat));
      EXPECT_NEAR(gs.max, cs.max, tol * std::abs(cs.max));
      ++runs;
    }
  if (!(c.backend == "register-tiling" && c.dims == 1)) {
    EXPECT_GT(runs, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, TemperatureLawAgreement, ::testing::ValuesIn(backend_cases()),
                         backend_case_name);
// A build without CUDA has no GPU backend to give it cases.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TemperatureLawAgreement);

class TemperatureLawBasics : public ::testing::Test {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

// temporal-blocking does not re-evaluate laws: it refuses with the reason, and `auto` takes a
// CUDA-core backend.
TEST_F(TemperatureLawBasics, TemporalBlockingRefusesAndAutoTakesACoreBackend) {
  std::mt19937_64 rng(23);
  const Built built = nonlinear_problem(3, {40, 33, 21}, Precision::fp64, rng);
  if (kernels::find_backend("temporal-blocking")) {
    auto blocked = kernels::create_backend("temporal-blocking", Precision::fp64);
    EXPECT_FALSE(blocked->unsupported_reason(built.problem).empty());
    EXPECT_THROW(blocked->setup(built.problem), std::runtime_error);
  }
  const solver::BackendChoice choice = solver::choose_backend("auto", built.problem);
  EXPECT_NE(choice.name, "temporal-blocking");
  EXPECT_NE(choice.name, "cpu") << choice.reason;
}

}  // namespace
}  // namespace heatsim::test
