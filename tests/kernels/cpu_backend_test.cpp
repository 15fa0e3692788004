// The CPU reference backend against a deliberately naive second implementation: every
// neighbour value is found by applying the boundary rules recursively (no ghost layers), on
// random data, random weights and mixed boundary conditions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"

namespace heatsim::kernels {
namespace {

struct NaiveReference {
  StencilProblem p;
  std::vector<double> u;

  double value(std::array<std::int64_t, 3> c, double t) const {
    // The last axis is resolved first: ghosts of later axes are filled over the ghosts of
    // earlier ones (layout.hpp).
    for (int a = p.dims - 1; a >= 0; --a) {
      const std::int64_t n = p.n[a];
      if (c[a] >= 0 && c[a] < n) continue;
      const bool low = c[a] < 0;
      const BoundaryFace& f = p.faces[2 * a + (low ? 0 : 1)];
      const std::int64_t k = low ? -c[a] : c[a] - (n - 1);
      auto mirror = c;
      switch (f.kind) {
        case BoundaryKind::periodic:
          mirror[a] = low ? c[a] + n : c[a] - n;
          return value(mirror, t);
        case BoundaryKind::dirichlet:
          mirror[a] = low ? k : n - 1 - k;
          return 2.0 * f.at(t) - value(mirror, t);
        case BoundaryKind::neumann:
          mirror[a] = low ? k : n - 1 - k;
          return value(mirror, t) + 2.0 * static_cast<double>(k) * p.h[a] * f.value;
        case BoundaryKind::convective:
          break;  // varying-coefficient problems only (tested with the fields)
      }
    }
    return u[static_cast<std::size_t>((c[2] * p.n[1] + c[1]) * p.n[0] + c[0])];
  }

  void step(std::int64_t s) {
    const double t = static_cast<double>(s) * p.dt;
    std::vector<double> next(u.size());
    const int r = p.stencil.radius;
    const int ry = p.dims > 1 ? r : 0, rz = p.dims > 2 ? r : 0;
    for (std::int64_t z = 0; z < p.n[2]; ++z)
      for (std::int64_t y = 0; y < p.n[1]; ++y)
        for (std::int64_t x = 0; x < p.n[0]; ++x) {
          double acc = 0.0;
          for (int dz = -rz; dz <= rz; ++dz)
            for (int dy = -ry; dy <= ry; ++dy)
              for (int dx = -r; dx <= r; ++dx) {
                const double w = p.stencil.at(dx, dy, dz);
                if (w != 0.0) acc += w * value({x + dx, y + dy, z + dz}, t);
              }
          const std::int64_t c[3] = {x, y, z};
          double v = acc + p.source_increment;
          for (int a = 0; a < p.dims; ++a)
            for (int side = 0; side < 2; ++side) {
              const BoundaryFace& f = p.faces[2 * a + side];
              if (f.kind == BoundaryKind::dirichlet && c[a] == (side ? p.n[a] - 1 : 0))
                v = f.at(t + p.dt);
            }
          next[static_cast<std::size_t>((z * p.n[1] + y) * p.n[0] + x)] = v;
        }
    u = next;
  }
};

StencilProblem random_problem(std::mt19937_64& rng, int dims, int radius, bool box) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  StencilProblem p;
  p.dims = dims;
  p.stencil.dims = dims;
  p.stencil.radius = radius;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  const int ry = dims > 1 ? radius : 0, rz = dims > 2 ? radius : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -radius; dx <= radius; ++dx) {
        const int axes = (dx != 0) + (dy != 0) + (dz != 0);
        if (box || axes <= 1) p.stencil.at(dx, dy, dz) = 0.1 * uni(rng);
      }
  std::uniform_int_distribution<int> extra(0, 6);
  for (int a = 0; a < 3; ++a) {
    p.n[a] = a < dims ? 2 * radius + 1 + extra(rng) : 1;
    p.h[a] = 0.1 + 0.05 * a;
  }
  std::uniform_int_distribution<int> kind(0, 2);
  for (int a = 0; a < dims; ++a) {
    const int k = kind(rng);
    for (int side = 0; side < 2; ++side) {
      BoundaryFace& f = p.faces[2 * a + side];
      if (k == 2) {
        f.kind = BoundaryKind::periodic;
      } else if (k == 0) {
        f = {BoundaryKind::dirichlet, uni(rng), 0.5 * uni(rng), 3.0, {}};
      } else {
        f = {BoundaryKind::neumann, uni(rng), 0.0, 0.0, {}};
      }
    }
  }
  p.dt = 0.013;
  p.source_increment = 0.01 * uni(rng);
  return p;
}

// Random data on p, four steps from step 5 on the backend and on the reference; the largest
// difference relative to the field's largest value.
double relative_error_after_four_steps(const StencilProblem& p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  NaiveReference ref{p, std::vector<double>(static_cast<std::size_t>(p.points()))};
  for (double& v : ref.u) v = uni(rng);
  auto backend = make_cpu_backend(Precision::fp64);
  backend->setup(p);
  backend->upload(ref.u);
  const std::int64_t step0 = 5;
  backend->advance(4, step0);
  for (std::int64_t s = 0; s < 4; ++s) ref.step(step0 + s);
  std::vector<double> got;
  backend->download(got);
  EXPECT_EQ(got.size(), ref.u.size());
  double scale = 0, err = 0;
  for (std::size_t i = 0; i < got.size() && i < ref.u.size(); ++i) {
    scale = std::max(scale, std::abs(ref.u[i]));
    err = std::max(err, std::abs(got[i] - ref.u[i]));
  }
  EXPECT_GT(scale, 0.0);
  return err / scale;
}

TEST(CpuBackend, MatchesNaiveReferenceOnRandomProblems) {
  std::mt19937_64 rng(12345);
  int cases = 0;
  for (int dims = 1; dims <= 3; ++dims)
    for (int radius = 1; radius <= 3; ++radius)
      for (bool box : {false, true})
        for (int rep = 0; rep < 3; ++rep) {
          if (dims == 1 && box) continue;
          const StencilProblem p = random_problem(rng, dims, radius, box);
          EXPECT_LE(relative_error_after_four_steps(p, rng), 1e-13)
              << "dims " << dims << " radius " << radius << " box " << box;
          ++cases;
        }
  EXPECT_EQ(cases, 45);
}

// The sweep works on rows in pieces of 256 nodes, and shares a 1D grid's one row out between
// threads by pieces: rows of several pieces with a partial last one, and a 1D grid past the
// size from which the backend runs threads (32768 points).
TEST(CpuBackend, RowsOfSeveralPiecesMatchTheNaiveReference) {
  std::mt19937_64 rng(777);
  struct Shape {
    int dims, radius;
    bool box;
    std::int64_t n[3];
  };
  const Shape shapes[] = {{1, 3, false, {33001, 1, 1}},
                          {2, 2, true, {601, 5, 1}},
                          {2, 1, false, {513, 4, 1}},
                          {3, 1, true, {300, 3, 4}}};
  for (const Shape& s : shapes) {
    StencilProblem p = random_problem(rng, s.dims, s.radius, s.box);
    for (int a = 0; a < 3; ++a) p.n[a] = s.n[a];
    EXPECT_LE(relative_error_after_four_steps(p, rng), 1e-13)
        << "dims " << s.dims << " n " << s.n[0] << " x " << s.n[1] << " x " << s.n[2];
  }
}

TEST(CpuBackend, StatsUseTrapezoidWeights) {
  StencilProblem p;
  p.dims = 2;
  p.n = {4, 3, 1};
  p.stencil.dims = 2;
  p.stencil.radius = 1;
  p.stencil.weights.assign(9, 0.0);
  p.stencil.at(0, 0) = 1.0;
  p.faces[0] = p.faces[1] = {BoundaryKind::periodic, 0, 0, 0, {}};
  p.faces[2] = p.faces[3] = {BoundaryKind::neumann, 0, 0, 0, {}};
  auto backend = make_cpu_backend(Precision::fp64);
  backend->setup(p);
  std::vector<double> u(12, 2.0);
  u[5] = std::nan("");
  backend->upload(u);
  const FieldStats s = backend->stats();
  EXPECT_EQ(s.non_finite, 1);
  EXPECT_EQ(s.min, 2.0);
  EXPECT_EQ(s.max, 2.0);
  // x periodic (weight 1 each), y non-periodic (0.5, 1, 0.5); node 5 = (1, 1) is skipped.
  EXPECT_DOUBLE_EQ(s.total_heat, 2.0 * (4 * 0.5 + 3 * 1.0 + 4 * 0.5));
}

TEST(Registry, CpuIsAlwaysThereAndUnknownNamesAreRefused) {
  EXPECT_NE(find_backend("cpu"), nullptr);
  EXPECT_THROW(create_backend("no-such-backend", Precision::fp64), std::runtime_error);
  try {
    create_backend("no-such-backend", Precision::fp64);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << "lists known backends";
  }
}

}  // namespace
}  // namespace heatsim::kernels
