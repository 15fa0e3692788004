// The CUDA-core backends (cuda-naive, shared-tiling, register-tiling) against the CPU
// reference: every dimension, star and box shapes of radius 1 to 3, every boundary condition
// (Dirichlet constant and time-dependent, Neumann with flux, periodic, mixed per axis), with a
// source, fp64 and fp32, on random data, on grid sizes that are not multiples of any tile and
// on the smallest legal ones (n = 2R+1). Both of a backend's buffers are poisoned with NaN
// before the real run, and every point is compared after 7 steps (given as 3 + 4, so step0
// and the ping-pong parity are exercised). fp64 within 1e-13, fp32 within 1e-5, relative to
// max |value|.
#include <array>
#include <sstream>

#include "gpu_test_support.hpp"
#include "kernels/cpu/cpu_backend.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryFace;
using kernels::BoundaryKind;
using kernels::Precision;
using kernels::StencilProblem;

struct BoundarySet {
  std::string name;
  std::array<BoundaryFace, kernels::kFaces> faces;
};

BoundaryFace dirichlet(double value, double amplitude = 0.0, double frequency = 0.0) {
  BoundaryFace f;
  f.kind = BoundaryKind::dirichlet;
  f.value = value;
  f.amplitude = amplitude;
  f.frequency = frequency;
  return f;
}
BoundaryFace neumann(double flux) {
  BoundaryFace f;
  f.kind = BoundaryKind::neumann;
  f.value = flux;
  return f;
}
BoundaryFace periodic() {
  BoundaryFace f;
  f.kind = BoundaryKind::periodic;
  return f;
}

std::vector<BoundarySet> boundary_sets() {
  std::vector<BoundarySet> sets;
  sets.push_back({"dirichlet", {dirichlet(0.3), dirichlet(-0.2), dirichlet(1.5), dirichlet(0.0),
                                dirichlet(2.0), dirichlet(0.7)}});
  sets.push_back({"dirichlet-time", {dirichlet(0.3, 0.5, 3.0), dirichlet(-0.2, 1.0, 7.0),
                                     dirichlet(1.5, 0.25, 2.0), dirichlet(0.0, 0.5, 11.0),
                                     dirichlet(2.0, 0.8, 5.0), dirichlet(0.7, 0.3, 1.0)}});
  sets.push_back({"neumann", {neumann(0.7), neumann(-0.4), neumann(1.3), neumann(0.2),
                              neumann(-0.9), neumann(0.5)}});
  sets.push_back({"periodic", {periodic(), periodic(), periodic(), periodic(), periodic(),
                               periodic()}});
  // Mixed per axis: x periodic, y time-dependent Dirichlet / Neumann, z Neumann / Dirichlet.
  sets.push_back({"mixed", {periodic(), periodic(), dirichlet(1.0, 0.5, 4.0), neumann(-0.6),
                            neumann(0.8), dirichlet(-0.5)}});
  // Mixed the other way round: x Dirichlet / Neumann, y periodic, z periodic.
  sets.push_back({"mixed2", {dirichlet(0.4, 0.2, 9.0), neumann(0.3), periodic(), periodic(),
                             periodic(), periodic()}});
  return sets;
}

std::vector<std::array<std::int64_t, 3>> sizes(int dims, int radius) {
  const std::int64_t m = 2 * radius + 1;  // smallest legal
  switch (dims) {
    case 1: return {{m, 1, 1}, {1237, 1, 1}};
    case 2: return {{m, m, 1}, {300, 37, 1}, {m, 45, 1}};
    default: return {{m, m, m}, {37, 19, 13}, {33, 9, 70}};
  }
}

StencilProblem make_problem(int dims, int radius, bool box, const BoundarySet& bc,
                            const std::array<std::int64_t, 3>& n, Precision precision,
                            std::mt19937_64& rng) {
  StencilProblem p;
  p.dims = dims;
  for (int a = 0; a < 3; ++a) p.n[a] = a < dims ? n[a] : 1;
  p.h = {0.1, 0.07, 0.13};
  p.stencil = random_stencil(dims, radius, box, rng);
  p.faces = bc.faces;
  for (int f = 2 * dims; f < kernels::kFaces; ++f) p.faces[f] = dirichlet(0.0);
  p.dt = 0.01;
  p.source_increment = 0.003;
  p.precision = precision;
  return p;
}

// Runs `steps` steps on the CPU and on `name`, after poisoning `name`'s buffers.
double run_against_cpu(const std::string& name, const StencilProblem& p,
                       const std::vector<double>& u0, std::int64_t* first_bad,
                       kernels::FieldStats* gpu_stats, kernels::FieldStats* cpu_stats) {
  auto cpu = kernels::make_cpu_backend(p.precision);
  cpu->setup(p);
  cpu->upload(u0);
  cpu->advance(7, 0);
  std::vector<double> want;
  cpu->download(want);
  *cpu_stats = cpu->stats();

  auto gpu = kernels::create_backend(name, p.precision);
  gpu->setup(p);
  // Poison: NaN in the interior of both ping-pong buffers (two steps of a NaN field).
  gpu->upload(std::vector<double>(u0.size(), std::numeric_limits<double>::quiet_NaN()));
  gpu->advance(2, 0);
  gpu->upload(u0);
  gpu->advance(3, 0);
  gpu->advance(4, 3);
  std::vector<double> got;
  gpu->download(got);
  *gpu_stats = gpu->stats();
  return relative_difference(got, want, first_bad);
}

using Case = BackendCase;

class CudaBackendAgreement : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(CudaBackendAgreement, MatchesCpuEveryShapeBoundaryAndSize) {
  const Case c = GetParam();
  std::mt19937_64 rng(1234 + 17 * c.dims + (c.precision == Precision::fp32 ? 5 : 0));
  const double tol = tolerance(c.precision);
  auto probe = kernels::create_backend(c.backend, c.precision);
  int runs = 0;
  for (int radius = 1; radius <= 3; ++radius)
    for (bool box : {false, true}) {
      if (box && c.dims == 1) continue;  // a 1D stencil is a star
      for (const BoundarySet& bc : boundary_sets())
        for (const auto& n : sizes(c.dims, radius)) {
          const StencilProblem p = make_problem(c.dims, radius, box, bc, n, c.precision, rng);
          std::ostringstream what;
          what << c.backend << " " << kernels::to_string(c.precision) << " " << c.dims
               << "D r=" << radius << (box ? " box" : " star") << " " << bc.name << " n=" << n[0]
               << "x" << n[1] << "x" << n[2];
          SCOPED_TRACE(what.str());
          const std::string why = probe->unsupported_reason(p);
          if (!steps_dims(c.backend, c.dims)) {
            EXPECT_FALSE(why.empty());
            continue;
          }
          ASSERT_TRUE(why.empty()) << why;
          const std::vector<double> u0 = random_field(p.points(), rng);
          std::int64_t bad = -1;
          kernels::FieldStats gs, cs;
          const double diff = run_against_cpu(c.backend, p, u0, &bad, &gs, &cs);
          EXPECT_LE(diff, tol) << "worst point " << bad;
          EXPECT_EQ(gs.non_finite, 0);
          EXPECT_NEAR(gs.min, cs.min, tol * std::abs(cs.max) + 1e-300);
          EXPECT_NEAR(gs.max, cs.max, tol * std::abs(cs.max) + 1e-300);
          EXPECT_NEAR(gs.total_heat, cs.total_heat,
                      tol * std::abs(cs.max) * static_cast<double>(p.points()));
          ++runs;
        }
    }
  if (steps_dims(c.backend, c.dims)) {
    EXPECT_GT(runs, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, CudaBackendAgreement, ::testing::ValuesIn(backend_cases()),
                         backend_case_name);
// A build without CUDA has no GPU backend to give it cases.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaBackendAgreement);

class CudaBackendBasics : public GpuTest {};

// The registry lists the CUDA-core backends before cpu, marked as needing a GPU.
TEST_F(CudaBackendBasics, RegisteredBeforeCpu) {
  const auto names = kernels::backend_names();
  auto pos = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  for (const auto& b : cuda_backend_names()) {
    ASSERT_NE(kernels::find_backend(b), nullptr) << b;
    EXPECT_TRUE(kernels::find_backend(b)->needs_gpu);
    EXPECT_LT(pos(b), pos("cpu")) << b;
    auto backend = kernels::create_backend(b, Precision::fp64);
    EXPECT_EQ(backend->name(), b);
    EXPECT_TRUE(backend->capabilities().gpu);
  }
}

// Radius 4 is beyond the kernels' templates: refused with a reason, and setup() throws.
TEST_F(CudaBackendBasics, RefusesRadiusAboveThree) {
  std::mt19937_64 rng(7);
  const BoundarySet bc = boundary_sets()[0];
  const StencilProblem p = make_problem(2, 4, false, bc, {20, 20, 1}, Precision::fp64, rng);
  for (const auto& b : cuda_backend_names()) {
    auto backend = kernels::create_backend(b, Precision::fp64);
    EXPECT_FALSE(backend->unsupported_reason(p).empty()) << b;
    EXPECT_THROW(backend->setup(p), std::runtime_error) << b;
  }
}

// stats() counts NaN and Inf like the CPU and leaves them out of min, max and total.
TEST_F(CudaBackendBasics, StatsCountNonFiniteLikeCpu) {
  std::mt19937_64 rng(11);
  for (const auto& b : cuda_backend_names())
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      const StencilProblem p =
          make_problem(3, 1, false, boundary_sets()[2], {41, 23, 9}, prec, rng);
      std::vector<double> u = random_field(p.points(), rng);
      u[5] = std::numeric_limits<double>::quiet_NaN();
      u[100] = std::numeric_limits<double>::infinity();
      u[u.size() - 1] = -std::numeric_limits<double>::infinity();
      auto cpu = kernels::make_cpu_backend(prec);
      cpu->setup(p);
      cpu->upload(u);
      auto gpu = kernels::create_backend(b, prec);
      gpu->setup(p);
      gpu->upload(u);
      const auto cs = cpu->stats(), gs = gpu->stats();
      SCOPED_TRACE(b + " " + kernels::to_string(prec));
      EXPECT_EQ(gs.non_finite, 3);
      EXPECT_EQ(gs.non_finite, cs.non_finite);
      EXPECT_EQ(gs.min, cs.min);
      EXPECT_EQ(gs.max, cs.max);
      EXPECT_NEAR(gs.total_heat, cs.total_heat, 1e-12 * std::abs(cs.total_heat));
      std::vector<double> back;
      gpu->download(back);
      ASSERT_EQ(back.size(), u.size());
      if (prec == Precision::fp64) {
        for (std::size_t i = 0; i < u.size(); ++i) {
          if (std::isfinite(u[i])) {
            ASSERT_EQ(back[i], u[i]) << i;
          }
        }
      }
    }
}

// A large grid with the benchmark's default-like shapes: exercises many blocks, the register
// tiling's chunking along the march axis, and the grid-stride paths.
TEST_F(CudaBackendBasics, LargerGridsMatchCpu) {
  std::mt19937_64 rng(99);
  struct Big {
    int dims, radius;
    bool box;
    std::array<std::int64_t, 3> n;
  };
  const std::vector<Big> bigs{{1, 2, false, {100003, 1, 1}}, {2, 1, false, {1031, 523, 1}},
                              {2, 3, true, {517, 389, 1}},   {3, 1, false, {131, 67, 129}},
                              {3, 1, true, {97, 101, 83}},   {2, 1, false, {5, 524301, 1}},
                              {3, 1, false, {3, 4, 262147}}};
  for (const auto& b : cuda_backend_names())
    for (const Big& big : bigs) {
      if (b == "register-tiling" && big.dims == 1) continue;
      // More rows (2D) or planes (3D) than one launch grid covers: cuda-naive's blocks stride
      // over them (its other form takes one column per thread).
      const bool tall = big.n[big.dims - 1] > 65535 * 4;
      if (tall && b != "cuda-naive") continue;
      const StencilProblem p = make_problem(big.dims, big.radius, big.box, boundary_sets()[4],
                                            big.n, Precision::fp64, rng);
      const std::vector<double> u0 = random_field(p.points(), rng);
      std::int64_t bad = -1;
      kernels::FieldStats gs, cs;
      SCOPED_TRACE(b + " " + std::to_string(big.dims) + "D r=" + std::to_string(big.radius));
      EXPECT_LE(run_against_cpu(b, p, u0, &bad, &gs, &cs), 1e-13) << "worst point " << bad;
    }
}

}  // namespace
}  // namespace heatsim::test
