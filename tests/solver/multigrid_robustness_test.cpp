// The multigrid solver on the cases that defeat a geometric one: an inclusion with a conductivity
// ratio near 2000, layers one node thick alternating k = 1 and 1e6, a checkerboard of k = 1 and
// 1e4, each with Dirichlet and with convective faces at temperatures near 300 K, at the default
// tolerance. Operator-dependent interpolation and Galerkin coarse levels must keep the
// iteration counts low and the same across grid sizes, and every solve must end converged
// (below the tolerance, or on the rounding floor of fp64 when the temperatures' offset puts the
// floor above it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/registry.hpp"
#include "solver/multigrid/implicit_stepper.hpp"

namespace heatsim::solver::multigrid {
namespace {

using kernels::BoundaryKind;
using kernels::CoefficientFields;
using kernels::StencilProblem;

enum class Material { homogeneous, ball, layers, checkerboard };
enum class Faces { dirichlet, convective };

std::string name(Material m) {
  switch (m) {
    case Material::homogeneous:
      return "homogeneous";
    case Material::ball:
      return "copper ball in epoxy";
    case Material::layers:
      return "layers k 1 / 1e6";
    case Material::checkerboard:
      return "checkerboard k 1 / 1e4";
  }
  return "?";
}

struct RobustCase {
  Material material;
  Faces faces;
  std::int64_t n;
};

// A 50 mm cube of n^3 nodes; a source in the middle (the ball, or a central box), the faces at
// 300 K or convective (h 25 to 300 K).
SolveReport solve_case(const RobustCase& c, SolveOptions options = {}) {
  const double L = 0.05;
  StencilProblem p;
  p.dims = 3;
  p.n = {c.n, c.n, c.n};
  for (int a = 0; a < 3; ++a) p.h[a] = L / static_cast<double>(c.n - 1);
  for (auto& f : p.faces) {
    if (c.faces == Faces::dirichlet) {
      f.kind = BoundaryKind::dirichlet;
      f.value = 300.0;
    } else {
      f.kind = BoundaryKind::convective;
      f.transfer = 25.0;
      f.value = 300.0;
    }
  }
  auto fields = std::make_shared<CoefficientFields>();
  const std::size_t np = static_cast<std::size_t>(p.points());
  fields->conductivity.assign(np, 1.0);
  fields->capacity.assign(np, 1.0);
  CoefficientFields::Source s;
  s.density.assign(np, 0.0);
  s.schedule.value = 1.0;
  for (std::int64_t i = 0; i < p.points(); ++i) {
    const std::int64_t ix = i % c.n, iy = (i / c.n) % c.n, iz = i / (c.n * c.n);
    const double x = ix * p.h[0], y = iy * p.h[1], z = iz * p.h[2];
    const double r = std::sqrt((x - L / 2) * (x - L / 2) + (y - L / 2) * (y - L / 2) +
                               (z - L / 2) * (z - L / 2));
    double& k = fields->conductivity[i];
    switch (c.material) {
      case Material::homogeneous:
        k = 237.0;
        break;
      case Material::ball:
        k = r <= 0.015 ? 390.0 : 0.2;
        break;
      case Material::layers:
        k = iz % 2 == 0 ? 1.0 : 1e6;
        break;
      case Material::checkerboard: {
        const auto cell = [&](double v) { return static_cast<int>(std::floor(v / (L / 8))); };
        k = (cell(x) + cell(y) + cell(z)) % 2 == 0 ? 1.0 : 1e4;
        break;
      }
    }
    if (r <= 0.015) s.density[i] = 1e5;  // W/m^3: about 1.4 W in the ball
  }
  fields->sources.push_back(std::move(s));
  std::vector<double> u(np, 300.0);
  ImplicitStepper stepper(p, fields, TimeMethod::steady, 0.0,
                          kernels::make_level_ops("cpu", kernels::Precision::fp64), options);
  return stepper.advance(u, 0);
}

// Sanitizer builds run the same cases on smaller grids.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::int64_t kSizes[] = {17, 25, 33};
#else
constexpr std::int64_t kSizes[] = {33, 49, 65};
#endif

class MultigridRobustness : public ::testing::TestWithParam<std::tuple<Material, Faces>> {};

TEST_P(MultigridRobustness, ConvergesAtTheDefaultToleranceInFewIterationsAtEverySize) {
  const auto [m, f] = GetParam();
  int smallest = 1 << 30, largest = 0;
  for (std::int64_t n : kSizes) {
    const SolveReport r = solve_case({m, f, n});
    std::printf("%-24s %-10s %3lld^3: %s\n", name(m).c_str(),
                f == Faces::dirichlet ? "dirichlet" : "convective", static_cast<long long>(n),
                r.describe().c_str());
    EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
    EXPECT_LE(r.iterations, 25) << name(m) << " " << n << ": " << r.describe();
    smallest = std::min(smallest, r.iterations);
    largest = std::max(largest, r.iterations);
  }
  // Nearly the same work at every size (the checkerboard with convective faces takes 10 to 11
  // iterations between 33^3 and 65^3; the others vary by at most one).
  EXPECT_LE(largest, smallest + 3) << name(m) << ": " << smallest << " to " << largest
                                   << " iterations";
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Material, Faces>>& info) {
  static const char* const materials[] = {"homogeneous", "ball", "layers", "checkerboard"};
  return std::string(materials[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) == Faces::dirichlet ? "_dirichlet" : "_convective");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MultigridRobustness,
    ::testing::Combine(::testing::Values(Material::homogeneous, Material::ball, Material::layers,
                                         Material::checkerboard),
                       ::testing::Values(Faces::dirichlet, Faces::convective)),
    case_name);

// Layers one node thick across z, k = 1 on the even planes and 1e6 on the odd, convective faces
// and a source on every node, on 8 x 8 x 342 nodes spanning the 50 mm cube: a column that
// degenerates as the layered cube of 384^3 does. The coarse levels keep the z planes, which
// conduct far better within than across, while x and y halve; each halving of x and y lowers
// the planes' ratio of within to across about 4 times, here to near the strong planes' bound on the
// 3 x 3 x 172 level. There the plane beside the lower face fell below the bound and was
// dropped, the next level dropped the next, and so on: 168 levels and 50 PCG iterations. The
// hierarchy now stops on the 3 x 3 x 172 level (3 levels), and the solve takes 5 iterations.
TEST(MultigridRobustness, LayersKeepAFewLevelsWhereTheirPlanesStopCoarsening) {
  const double L = 0.05;
  StencilProblem p;
  p.dims = 3;
  p.n = {8, 8, 342};
  for (int a = 0; a < 3; ++a) p.h[a] = L / static_cast<double>(p.n[a] - 1);
  for (auto& f : p.faces) {
    f.kind = BoundaryKind::convective;
    f.transfer = 25.0;
    f.value = 300.0;
  }
  auto fields = std::make_shared<CoefficientFields>();
  const std::size_t np = static_cast<std::size_t>(p.points());
  fields->conductivity.assign(np, 1.0);
  fields->capacity.assign(np, 1.0);
  CoefficientFields::Source s;
  s.density.assign(np, 1e5);
  s.schedule.value = 1.0;
  for (std::int64_t i = 0; i < p.points(); ++i)
    if ((i / (p.n[0] * p.n[1])) % 2 == 1) fields->conductivity[i] = 1e6;
  fields->sources.push_back(std::move(s));
  std::vector<double> u(np, 300.0);
  ImplicitStepper stepper(p, fields, TimeMethod::steady, 0.0,
                          kernels::make_level_ops("cpu", kernels::Precision::fp64));
  const SolveReport r = stepper.advance(u, 0);
  std::printf("layers 8 x 8 x 342: %d levels, %s\n", stepper.levels(), r.describe().c_str());
  EXPECT_LE(stepper.levels(), 11);  // log2(342) + 2
  EXPECT_EQ(r.reason, SolveReport::Reason::converged) << r.describe();
  EXPECT_LE(r.iterations, 6) << r.describe();
}

}  // namespace
}  // namespace heatsim::solver::multigrid
