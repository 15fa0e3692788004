// Fused passes against the CPU reference (convstencil, the CUDA-core backends' S^k sweeps and
// temporal-blocking's k single steps per pass). The convstencil backend: every suite shape in 1D,
// 2D and 3D, fusion depths 1 to 4, every boundary condition (Dirichlet constant and time-dependent,
// Neumann with flux, periodic, mixed), with and without a source, on random data and on
// grid sizes that are not multiples of the tile down to the smallest legal ones. Fused runs
// must also equal the unfused run. Tolerance: 1e-12 relative to max |value|, every point.
//
// Without a GPU every test skips, unless HEATSIM_REQUIRE_GPU=1, when they fail.
// HEATSIM_CONVSTENCIL_BENCH=1 also runs a throughput table (GStencil/s, every fused step
// counted).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/convstencil/convstencil_backend.hpp"
#endif

#ifndef HEATSIM_HAVE_CUDA
// Without CUDA the tests below only skip; their helpers are compiled but unused.
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

namespace heatsim::kernels {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

// Skips the test without a GPU, or fails it when HEATSIM_REQUIRE_GPU=1.
#define HEATSIM_REQUIRE_GPU_OR_SKIP()                                                \
  do {                                                                               \
    if (cuda_devices().empty()) {                                                    \
      if (env_set("HEATSIM_REQUIRE_GPU")) FAIL() << "HEATSIM_REQUIRE_GPU=1, no GPU"; \
      GTEST_SKIP() << "no CUDA GPU";                                                 \
    }                                                                                \
  } while (0)

// S = I + nu * L for a star of second-difference coefficients c[0..r] on every axis.
Stencil star(int dims, const std::vector<double>& c, double nu) {
  Stencil s;
  s.dims = dims;
  s.radius = static_cast<int>(c.size()) - 1;
  s.weights.assign(s.size(), 0.0);
  for (int a = 0; a < dims; ++a)
    for (int d = -s.radius; d <= s.radius; ++d) {
      int o[3] = {0, 0, 0};
      o[a] = d;
      s.at(o[0], o[1], o[2]) += nu * c[static_cast<std::size_t>(std::abs(d))];
    }
  s.at(0, 0, 0) += 1.0;
  return s;
}

// A symmetric box of radius r: weight f(|dx|) f(|dy|) f(|dz|), normalised to sum 1.
Stencil box(int dims, int r, std::vector<double> f) {
  Stencil s;
  s.dims = dims;
  s.radius = r;
  s.weights.assign(s.size(), 0.0);
  const int ry = dims > 1 ? r : 0, rz = dims > 2 ? r : 0;
  double sum = 0.0;
  for (int z = -rz; z <= rz; ++z)
    for (int y = -ry; y <= ry; ++y)
      for (int x = -r; x <= r; ++x) {
        const double w =
            f[std::abs(x)] * (dims > 1 ? f[std::abs(y)] : 1.0) * (dims > 2 ? f[std::abs(z)] : 1.0);
        s.at(x, y, z) = w;
        sum += w;
      }
  for (double& w : s.weights) w /= sum;
  return s;
}

struct Shape {
  std::string name;
  Stencil stencil;
};

std::vector<Shape> suite_shapes() {
  const std::vector<double> o2{-2.0, 1.0}, o4{-5.0 / 2, 4.0 / 3, -1.0 / 12},
      o6{-49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90};
  std::vector<Shape> s;
  s.push_back({"Heat1D", star(1, o2, 0.4)});
  s.push_back({"1D5P", star(1, o4, 0.3)});
  s.push_back({"1D7P", star(1, o6, 0.25)});
  s.push_back({"Heat2D", star(2, o2, 0.2)});
  s.push_back({"Star2D9P", star(2, o4, 0.15)});
  s.push_back({"Star2D13P", star(2, o6, 0.12)});
  Stencil b9 = star(2, o2, 0.0);  // isotropic: (1/6)[1 4 1; 4 -20 4; 1 4 1]
  const double nu = 0.15;
  for (int y = -1; y <= 1; ++y)
    for (int x = -1; x <= 1; ++x) {
      const double l = (x == 0 && y == 0) ? -20.0 : (x == 0 || y == 0) ? 4.0 : 1.0;
      b9.at(x, y) = (x == 0 && y == 0 ? 1.0 : 0.0) + nu * l / 6.0;
    }
  s.push_back({"Box2D9P", b9});
  s.push_back({"Box2D49P", box(2, 3, {0.5, 0.3, 0.2, 0.1})});
  s.push_back({"Heat3D", star(3, o2, 0.12)});
  s.push_back({"Star3D13P", star(3, o4, 0.1)});
  s.push_back({"Box3D27P", box(3, 1, {0.6, 0.25})});
  // Not mirror-symmetric (diffusion plus upwind drift): no reflection rule is exact under
  // fusion, so every non-periodic face takes the step-by-step band.
  Stencil drift = star(2, o2, 0.15);
  drift.at(-1, 0) += 0.05;
  drift.at(0, 0) -= 0.05;
  s.push_back({"Drift2D", drift});
  return s;
}

struct Boundaries {
  std::string name;
  std::array<BoundaryFace, kFaces> faces;
  double source = 0.0;
};

BoundaryFace face(BoundaryKind k, double value, double amplitude = 0.0) {
  BoundaryFace f;
  f.kind = k;
  f.value = value;
  f.amplitude = amplitude;
  f.frequency = amplitude != 0.0 ? 3.0 : 0.0;
  return f;
}

std::vector<Boundaries> boundary_sets() {
  using K = BoundaryKind;
  std::vector<Boundaries> b;
  Boundaries d{"Dirichlet", {}, 0.0};
  for (int f = 0; f < kFaces; ++f) d.faces[f] = face(K::dirichlet, 0.3 + 0.1 * f);
  b.push_back(d);
  // One constant g on every face and no source: the case where fused passes are exact at
  // Dirichlet faces without redoing any band.
  Boundaries du{"DirichletUniform", {}, 0.0};
  for (int f = 0; f < kFaces; ++f) du.faces[f] = face(K::dirichlet, 0.7);
  b.push_back(du);
  Boundaries dt{"DirichletTimeSource", {}, 0.01};
  for (int f = 0; f < kFaces; ++f)
    dt.faces[f] = face(K::dirichlet, 0.5 - 0.1 * f, f % 2 ? 0.2 : 0.0);
  b.push_back(dt);
  Boundaries n{"NeumannSource", {}, 0.004};
  for (int f = 0; f < kFaces; ++f) n.faces[f] = face(K::neumann, f % 2 ? 0.7 : -0.4);
  b.push_back(n);
  Boundaries p{"PeriodicSource", {}, -0.003};
  for (int f = 0; f < kFaces; ++f) p.faces[f] = face(K::periodic, 0.0);
  b.push_back(p);
  Boundaries m{"Mixed", {}, 0.0};
  m.faces[0] = m.faces[1] = face(K::periodic, 0.0);
  m.faces[2] = face(K::dirichlet, 1.0, 0.3);
  m.faces[3] = face(K::neumann, 0.5);
  m.faces[4] = face(K::neumann, -0.2);
  m.faces[5] = face(K::dirichlet, -0.5);
  b.push_back(m);
  return b;
}

std::vector<double> random_field(std::int64_t points, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(0.25, 1.75);
  std::vector<double> u(static_cast<std::size_t>(points));
  for (double& v : u) v = dist(gen);
  return u;
}

StencilProblem make_problem(const Shape& shape, const Boundaries& bc,
                            std::array<std::int64_t, 3> n) {
  StencilProblem p;
  p.dims = shape.stencil.dims;
  p.stencil = shape.stencil;
  for (int a = 0; a < 3; ++a) p.n[a] = a < p.dims ? n[a] : 1;
  for (int a = 0; a < p.dims; ++a) p.h[a] = 1.0 / static_cast<double>(p.n[a] - 1);
  p.faces = bc.faces;
  p.dt = 1e-3;
  p.source_increment = bc.source;
  return p;
}

std::vector<double> run(Backend& b, const StencilProblem& p, const std::vector<double>& u0,
                        std::int64_t steps, std::int64_t step0) {
  b.setup(p);
  b.upload(u0);
  b.advance(steps, step0);
  std::vector<double> out(u0.size(), std::numeric_limits<double>::quiet_NaN());
  b.download(out);
  return out;
}

// Every point within rel * max|reference|; NaN anywhere fails.
::testing::AssertionResult agrees(const std::vector<double>& got, const std::vector<double>& want,
                                  std::int64_t nx = 1, std::int64_t ny = 1, double rel = 1e-12) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size differs";
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  const double tol = rel * scale;
  std::size_t bad = 0, first = 0, at = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]);
    if (!(e <= tol)) {
      if (bad++ == 0) first = i;
      if (!(e <= worst)) {
        worst = e;
        at = i;
      }
    }
  }
  const auto xyz = [&](std::size_t i) {
    const std::int64_t k = static_cast<std::int64_t>(i);
    return "(" + std::to_string(k % nx) + "," + std::to_string(k / nx % ny) + "," +
           std::to_string(k / (nx * ny)) + ")";
  };
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " points off (first at " << first << ": " << got[first]
         << " vs " << want[first] << " at " << xyz(first) << "), worst error " << worst << " at "
         << xyz(at) << ", tolerance " << tol;
}

struct Case {
  Shape shape;
  Boundaries bc;
  std::array<std::int64_t, 3> n;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const Shape& s : suite_shapes()) {
    const int r = s.stencil.radius, d = s.stencil.dims;
    std::vector<std::array<std::int64_t, 3>> sizes;
    if (d == 1) sizes = {{r + 1, 1, 1}, {7, 1, 1}, {2049 + 2 * r, 1, 1}, {5003, 1, 1}};
    if (d == 2) sizes = {{r + 1, r + 2, 1}, {9, 7, 1}, {67, 45, 1}, {130, 97, 1}};
    if (d == 3) sizes = {{r + 1, r + 2, r + 1}, {9, 7, 11}, {67, 19, 13}};
    for (const Boundaries& bc : boundary_sets())
      for (const auto& n : sizes) cases.push_back({s, bc, n});
  }
  return cases;
}

class ConvStencilAgainstCpu : public ::testing::TestWithParam<Case> {};

#ifdef HEATSIM_HAVE_CUDA
TEST_P(ConvStencilAgainstCpu, EveryFusionDepth) {
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const Case& c = GetParam();
  StencilProblem p = make_problem(c.shape, c.bc, c.n);
  const std::vector<double> u0 = random_field(p.points(), 17u + static_cast<unsigned>(p.points()));
  const std::int64_t steps = 13, step0 = 5;  // not a multiple of any depth > 1
  auto cpu = make_cpu_backend(Precision::fp64);
  const std::vector<double> want = run(*cpu, p, u0, steps, step0);
  std::vector<double> unfused;
  for (int k = 1; k <= 4; ++k) {
    p.fusion_depth = k;
    auto gpu = make_convstencil_backend(Precision::fp64);
    const std::vector<double> got = run(*gpu, p, u0, steps, step0);
    EXPECT_TRUE(agrees(got, want, p.n[0], p.n[1])) << "fusion depth " << k << " against the CPU";
    if (k == 1)
      unfused = got;
    else
      EXPECT_TRUE(agrees(got, unfused, p.n[0], p.n[1]))
          << "fusion depth " << k << " against unfused";
    const FieldStats st = gpu->stats();
    EXPECT_EQ(st.non_finite, 0);
  }
}
#endif

std::string case_label(const Case& c) {
  std::string s = c.shape.name + "_" + c.bc.name;
  for (int a = 0; a < c.shape.stencil.dims; ++a) s += "_" + std::to_string(c.n[a]);
  return s;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return case_label(info.param); }

INSTANTIATE_TEST_SUITE_P(Suite, ConvStencilAgainstCpu, ::testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConvStencilAgainstCpu);

// Temporal fusion on the CUDA-core backends (fusing_backend.cuh's driver with each backend's
// own sweep at the fused radius, k*r <= 3, 2D stars k*r <= 6 on their fused-star taps): the
// radius-1 cases above and the 2D stars of radius 2 and 3, depths 1 to 3 (2D stars: to
// 6 / r), in fp64
// (1e-12) and fp32 (1e-5, against the CPU in fp32), fused against the CPU and against the
// backend's own unfused run. register-tiling runs 2D and 3D.
struct CoreCase {
  std::string backend;
  Precision precision;
  Case c;
};

std::vector<CoreCase> core_cases() {
  std::vector<CoreCase> cases;
  for (const BackendEntry& e : backend_registry()) {  // every CUDA-core tiling
    if (!e.point_sweep) continue;
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (const Case& c : all_cases()) {
        // Radius 1, and the 2D stars of radius 2 and 3 (their fused-star tap sets).
        const bool star_2d = c.shape.stencil.dims == 2 && c.shape.stencil.is_star();
        if (c.shape.stencil.radius != 1 && !star_2d) continue;
        const int dims = c.shape.stencil.dims;
        if (dims < e.min_dims || dims > e.max_dims) continue;
        cases.push_back({e.name, precision, c});
      }
  }
  return cases;
}

class CoreFusionAgainstCpu : public ::testing::TestWithParam<CoreCase> {};

#ifdef HEATSIM_HAVE_CUDA
TEST_P(CoreFusionAgainstCpu, EveryFusionDepth) {
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const CoreCase& cc = GetParam();
  StencilProblem p = make_problem(cc.c.shape, cc.c.bc, cc.c.n);
  p.precision = cc.precision;
  const double rel = cc.precision == Precision::fp64 ? 1e-12 : 1e-5;
  const std::vector<double> u0 = random_field(p.points(), 29u + static_cast<unsigned>(p.points()));
  const std::int64_t steps = 13, step0 = 5;  // not a multiple of any depth > 1
  auto cpu = make_cpu_backend(cc.precision);
  const std::vector<double> want = run(*cpu, p, u0, steps, step0);
  std::vector<double> unfused;
  const int r = p.stencil.radius;
  const int deepest = (p.dims == 2 && p.stencil.is_star() ? 6 : 3) / r;
  for (int k = 1; k <= deepest; ++k) {
    p.fusion_depth = k;
    auto gpu = create_backend(cc.backend, cc.precision);
    ASSERT_GE(gpu->capabilities().max_fusion_depth, deepest);
    // Poison: a NaN field advanced through both buffers, then the real start.
    gpu->setup(p);
    gpu->upload(std::vector<double>(u0.size(), std::numeric_limits<double>::quiet_NaN()));
    gpu->advance(2 * k, 0);
    gpu->upload(u0);
    gpu->advance(steps, step0);
    std::vector<double> got(u0.size(), std::numeric_limits<double>::quiet_NaN());
    gpu->download(got);
    // The depth taken: k, lowered until every axis is longer than the fused radius.
    int depth = k;
    for (int a = 0; a < p.dims; ++a)
      depth = std::min<int>(depth, static_cast<int>((p.n[a] - 1) / r));
    EXPECT_EQ(gpu->fusion_depth(), std::max(depth, 1)) << "depth taken";
    EXPECT_TRUE(agrees(got, want, p.n[0], p.n[1], rel))
        << "fusion depth " << k << " against the CPU";
    if (k == 1)
      unfused = got;
    else
      EXPECT_TRUE(agrees(got, unfused, p.n[0], p.n[1], rel))
          << "fusion depth " << k << " against unfused";
    EXPECT_EQ(gpu->stats().non_finite, 0);
  }
}
#endif

std::string core_case_name(const ::testing::TestParamInfo<CoreCase>& info) {
  std::string b = info.param.backend;
  std::replace(b.begin(), b.end(), '-', '_');
  return b + (info.param.precision == Precision::fp64 ? "_fp64_" : "_fp32_") +
         case_label(info.param.c);
}

INSTANTIATE_TEST_SUITE_P(Suite, CoreFusionAgainstCpu, ::testing::ValuesIn(core_cases()),
                         core_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CoreFusionAgainstCpu);

// temporal-blocking (fusing_backend.cuh's driver, k single steps per pass inside each block):
// every suite shape above, radius 1 to 3, star and box, 1D-3D, with sizes past one tile
// (1D 2048, 2D 1024 nodes along x, 3D 64 x 32 in xy, less the halos) and not multiples of it,
// depths 1 to 16, fp64 (1e-12) and fp32 (1e-5), against the CPU; the step count leaves
// single steps before and after the passes.
struct BlockedCase {
  Precision precision;
  Shape shape;
  std::array<std::int64_t, 3> n;
};

// One case per precision, shape and size; each runs every boundary set of boundary_sets().
std::vector<BlockedCase> blocked_cases() {
  std::vector<BlockedCase> cases;
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    const std::vector<Case> all = all_cases();
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].bc.name == boundary_sets().front().name)
        cases.push_back({precision, all[i].shape, all[i].n});
    // Several tiles along every axis, with ragged last tiles.
    for (const Shape& s : suite_shapes()) {
      const int d = s.stencil.dims;
      const std::array<std::int64_t, 3> n = d == 1   ? std::array<std::int64_t, 3>{9001, 1, 1}
                                            : d == 2 ? std::array<std::int64_t, 3>{2100, 41, 1}
                                                     : std::array<std::int64_t, 3>{99, 67, 23};
      cases.push_back({precision, s, n});
    }
  }
  return cases;
}

class BlockedAgainstCpu : public ::testing::TestWithParam<BlockedCase> {};

#ifdef HEATSIM_HAVE_CUDA
TEST_P(BlockedAgainstCpu, EveryDepth) {
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const BlockedCase& bc = GetParam();
  const double rel = bc.precision == Precision::fp64 ? 1e-12 : 1e-5;
  // 41 steps from step 5: single steps, then passes of every depth, then single steps.
  const std::int64_t steps = 41, step0 = 5;
  for (const Boundaries& faces : boundary_sets()) {
    SCOPED_TRACE(faces.name);
    StencilProblem p = make_problem(bc.shape, faces, bc.n);
    p.precision = bc.precision;
    const std::vector<double> u0 =
        random_field(p.points(), 31u + static_cast<unsigned>(p.points()));
    auto cpu = make_cpu_backend(bc.precision);
    const std::vector<double> want = run(*cpu, p, u0, steps, step0);
    for (int k : {1, 2, 3, 4, 6, 9, 16}) {
      p.fusion_depth = k;
      auto gpu = create_backend("temporal-blocking", bc.precision);
      ASSERT_GE(gpu->capabilities().max_fusion_depth, 16);
      // Poison: a NaN field advanced through both buffers, then the real start.
      gpu->setup(p);
      gpu->upload(std::vector<double>(u0.size(), std::numeric_limits<double>::quiet_NaN()));
      gpu->advance(2 * k, 0);
      gpu->upload(u0);
      gpu->advance(steps, step0);
      std::vector<double> got(u0.size(), std::numeric_limits<double>::quiet_NaN());
      gpu->download(got);
      EXPECT_GE(gpu->fusion_depth(), 1);
      EXPECT_LE(gpu->fusion_depth(), k);
      EXPECT_TRUE(agrees(got, want, p.n[0], p.n[1], rel))
          << "depth " << k << " (taken " << gpu->fusion_depth() << ") against the CPU";
      EXPECT_EQ(gpu->stats().non_finite, 0);
    }
  }
}

// The depths a bench-sized tile takes: radius 1 reaches 4 steps in 3D fp64 and 8 in 2D, so a
// pass is not quietly lowered to single steps where the tests above expect blocking.
TEST(TemporalBlocking, TakesTheDepthAsked) {
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const std::vector<Shape> shapes = suite_shapes();
  auto depth_taken = [](const Stencil& s, std::array<std::int64_t, 3> n, int k,
                        Precision precision) {
    StencilProblem p;
    p.dims = s.dims;
    p.stencil = s;
    p.n = n;
    p.dt = 1e-3;
    for (auto& f : p.faces) f.kind = BoundaryKind::periodic;
    p.fusion_depth = k;
    p.precision = precision;
    auto b = create_backend("temporal-blocking", precision);
    b->setup(p);
    return b->fusion_depth();
  };
  EXPECT_EQ(depth_taken(shapes[0].stencil, {5000, 1, 1}, 16, Precision::fp64), 16);  // Heat1D
  EXPECT_EQ(depth_taken(shapes[3].stencil, {300, 200, 1}, 8, Precision::fp64), 8);   // Heat2D
  EXPECT_EQ(depth_taken(shapes[5].stencil, {300, 200, 1}, 4, Precision::fp64), 4);   // Star2D13P
  EXPECT_EQ(depth_taken(shapes[5].stencil, {300, 200, 1}, 6, Precision::fp32), 6);   // the march
  EXPECT_EQ(depth_taken(shapes[7].stencil, {300, 200, 1}, 4, Precision::fp64), 4);   // Box2D49P
  EXPECT_EQ(depth_taken(shapes[8].stencil, {100, 80, 60}, 4, Precision::fp64), 4);   // Heat3D
  EXPECT_EQ(depth_taken(shapes[8].stencil, {100, 80, 60}, 6, Precision::fp32), 6);   // Heat3D fp32
  EXPECT_EQ(depth_taken(shapes[8].stencil, {4, 80, 60}, 6, Precision::fp64), 3);     // (n - 1) / r
}

// The register marches (march_kernel.cuh: Heat-3D's passes of depth 2-4, Box-3D27P's of depth
// 2-3, the 2D radius-1 shapes' of depth 2-12, 2D radius-2 and -3 stars' of depth 2-6 and
// boxes' of depth 2-4) form every node as the single steps do (the march
// of values by the operator's point(), the marches in sums by its taps in point()'s order):
// passes of depth k give the single steps' field bit for bit wherever a pass reads the same
// ghosts as the steps (periodic faces, and faces whose bands are redone by single steps), at a
// size of ragged tiles across the march axis and pieces along it, in both precisions. Where a
// pass fills a face's ghosts k deep once by a rule that is exact under fusion (one Dirichlet
// value on every face; Neumann faces, as in Mixed), the ghosts it evolves are rounded apart
// from those a step refills: there the fields agree to rounding (Heat2D's Mixed: 1 ulp on
// 300-800 of 223300 nodes).
TEST(TemporalBlocking, MarchPassesAreSingleStepsBitForBit) {
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const std::vector<Shape> shapes = suite_shapes();
  struct Marched {
    std::size_t shape;
    std::array<std::int64_t, 3> n;
    std::vector<int> depths;
  };
  // 3D: 131 x 75 x 41 shares 9 tiles' planes among fewer blocks than the card holds (pieces
  // across columns); 700 x 300 x 12 has more tiles than one block per SM (MarchSplit's whole
  // columns per block, then the rest shared: Heat3D at depth 3 on 132 SMs, 156 tiles).
  const std::vector<Marched> marched = {{8, {131, 75, 41}, {2, 3, 4}},          // Heat3D
                                        {8, {700, 300, 12}, {3}},               // Heat3D
                                        {10, {131, 75, 41}, {2, 3}},            // Box3D27P
                                        {10, {700, 300, 12}, {2}},              // Box3D27P
                                        {3, {1100, 203, 1}, {2, 3, 4, 8, 12}},  // Heat2D
                                        {6, {1100, 203, 1}, {2, 5, 8, 12}},     // Box2D9P
                                        {11, {1100, 203, 1}, {4, 7}},           // Drift2D
                                        {4, {1100, 203, 1}, {2, 4, 6}},         // Star2D9P
                                        {5, {1100, 203, 1}, {2, 3, 4, 6}},      // Star2D13P
                                        {7, {1100, 203, 1}, {2, 3, 4}}};        // Box2D49P
  for (const Marched& m : marched) {
    const Shape& shape = shapes[m.shape];
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      for (const Boundaries& faces : boundary_sets()) {
        SCOPED_TRACE(shape.name + " " + faces.name +
                     (precision == Precision::fp64 ? " fp64" : " fp32"));
        StencilProblem p = make_problem(shape, faces, m.n);
        p.precision = precision;
        const std::vector<double> u0 = random_field(p.points(), 77u);
        // 3 single steps, then passes, then what is left: 29 steps from step 3.
        const std::int64_t steps = 29, step0 = 3;
        p.fusion_depth = 1;
        auto single = create_backend("temporal-blocking", precision);
        const std::vector<double> want = run(*single, p, u0, steps, step0);
        const bool same_ghosts = faces.name != "DirichletUniform" &&
                                 faces.name != "NeumannSource" && faces.name != "Mixed";
        const double rounding = precision == Precision::fp64 ? 1e-14 : 1e-6;
        for (int k : m.depths) {
          p.fusion_depth = k;
          auto blocked = create_backend("temporal-blocking", precision);
          const std::vector<double> got = run(*blocked, p, u0, steps, step0);
          ASSERT_EQ(blocked->fusion_depth(), k);
          std::int64_t differ = 0;
          double worst = 0.0;
          std::int64_t rows[2] = {p.n[1], -1};  // the rows (y) where nodes differ
          for (std::size_t i = 0; i < got.size(); ++i)
            if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0) {
              ++differ;
              worst = std::max(worst, std::abs(got[i] - want[i]));
              const std::int64_t y = static_cast<std::int64_t>(i) / p.n[0] % p.n[1];
              rows[0] = std::min(rows[0], y);
              rows[1] = std::max(rows[1], y);
            }
          const std::string where = std::to_string(differ) + " of " + std::to_string(got.size()) +
                                    " nodes differ (rows " + std::to_string(rows[0]) + "-" +
                                    std::to_string(rows[1]) + "), by up to ";
          if (same_ghosts)
            EXPECT_EQ(differ, 0) << "depth " << k << ": " << where << worst;
          else
            EXPECT_LE(worst, rounding) << "depth " << k << ": " << where << worst;
          EXPECT_EQ(blocked->stats().non_finite, 0);
        }
      }
    }
  }
}
#endif

std::string blocked_case_name(const ::testing::TestParamInfo<BlockedCase>& info) {
  std::string s = std::string(info.param.precision == Precision::fp64 ? "fp64_" : "fp32_") +
                  info.param.shape.name;
  for (int a = 0; a < info.param.shape.stencil.dims; ++a)
    s += "_" + std::to_string(info.param.n[a]);
  return s;
}

INSTANTIATE_TEST_SUITE_P(Suite, BlockedAgainstCpu, ::testing::ValuesIn(blocked_cases()),
                         blocked_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BlockedAgainstCpu);

TEST(ConvStencil, RefusesFp32AndLargeRadius) {
#ifndef HEATSIM_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  auto gpu = make_convstencil_backend(Precision::fp64);
  EXPECT_FALSE(gpu->capabilities().fp32);
  StencilProblem single = make_problem(suite_shapes()[3], boundary_sets()[0], {20, 20, 1});
  single.precision = Precision::fp32;
  EXPECT_FALSE(gpu->unsupported_reason(single).empty());
  EXPECT_THROW(gpu->setup(single), std::runtime_error);
  StencilProblem p = make_problem({"r4", star(2, {-2.0, 1.0, 0.0, 0.0, 0.0}, 0.1)},
                                  boundary_sets()[0], {20, 20, 1});
  EXPECT_FALSE(gpu->unsupported_reason(p).empty());
#endif
}

// Long runs: many fused passes must not drift from the unfused run.
TEST(ConvStencil, LongRunFusedEqualsUnfused) {
#ifndef HEATSIM_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const auto shapes = suite_shapes();
  for (int i : {3, 6}) {  // Heat2D, Box2D9P
    StencilProblem p = make_problem(shapes[i], boundary_sets()[2], {301, 257, 1});
    const auto u0 = random_field(p.points(), 99);
    auto a = make_convstencil_backend(Precision::fp64);
    const auto unfused = run(*a, p, u0, 240, 0);
    auto cpu = make_cpu_backend(Precision::fp64);
    EXPECT_TRUE(agrees(unfused, run(*cpu, p, u0, 240, 0), p.n[0], p.n[1])) << shapes[i].name;
    for (int k : {2, 3, 4}) {
      p.fusion_depth = k;
      auto b = make_convstencil_backend(Precision::fp64);
      EXPECT_TRUE(agrees(run(*b, p, u0, 240, 0), unfused, p.n[0], p.n[1]))
          << shapes[i].name << " depth " << k;
    }
  }
#endif
}

TEST(ConvStencilBench, Throughput) {
#ifndef HEATSIM_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  if (!env_set("HEATSIM_CONVSTENCIL_BENCH")) GTEST_SKIP() << "set HEATSIM_CONVSTENCIL_BENCH=1";
  HEATSIM_REQUIRE_GPU_OR_SKIP();
  const char* only = std::getenv("HEATSIM_CONVSTENCIL_BENCH_ONLY");
  for (const Shape& s : suite_shapes()) {
    if (s.name == "Drift2D" || s.name == "1D7P" || s.name == "Star2D9P" || s.name == "Star3D13P")
      continue;
    if (only && s.name.find(only) == std::string::npos) continue;
    const int d = s.stencil.dims;
    const std::array<std::int64_t, 3> n = d == 1   ? std::array<std::int64_t, 3>{1 << 26, 1, 1}
                                          : d == 2 ? std::array<std::int64_t, 3>{8192, 8192, 1}
                                                   : std::array<std::int64_t, 3>{512, 512, 512};
    StencilProblem p = make_problem(s, boundary_sets()[4], n);
    const auto u0 = random_field(p.points(), 5);
    for (int k = 1; k <= 4; ++k) {
      p.fusion_depth = k;
      auto b = make_convstencil_backend(Precision::fp64);
      b->setup(p);
      b->upload(u0);
      const std::int64_t steps = 48;  // a multiple of every depth
      b->advance(12, 0);              // warm-up
      b->synchronize();
      std::vector<double> rates;
      for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        b->advance(steps, 12);
        b->synchronize();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rates.push_back(static_cast<double>(p.points()) * steps / seconds / 1e9);
      }
      std::sort(rates.begin(), rates.end());
      EXPECT_EQ(b->stats().non_finite, 0);
      std::printf("convstencil %-10s fusion %d  %8.1f GStencil/s (median of 5, %lld points)\n",
                  s.name.c_str(), k, rates[2], static_cast<long long>(p.points()));
      std::fflush(stdout);
    }
  }
#endif
}

}  // namespace
}  // namespace heatsim::kernels
