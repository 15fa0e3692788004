// solver::forms_strong_pieces (the memory estimate's question whether a body deflates) against
// a flood fill over the strong faces written here from coordinates, on small grids: two
// copper blocks in epoxy (two pieces), one block (one), blocks joined through a periodic
// axis, a Dirichlet face cutting a block's nodes off, given faces instead of the harmonic
// mean, and random bodies.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/face_conductance.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/multigrid/deflation.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver {
namespace {

using multigrid::kMinPieceNodes;
using multigrid::kStrongRatio;

Case case_of(std::array<std::int64_t, 3> n, std::array<kernels::BoundaryKind, 6> kinds) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = n;
  for (std::size_t f = 0; f < 6; ++f) c.boundary[f].kind = kinds[f];
  c.materials = {heatsim_tests::material("copper", 390.0, 1.0, 1.0),
                 heatsim_tests::material("epoxy", 0.2, 1.0, 1.0)};
  return c;
}

// The reference: every face from its two nodes' coordinates, the strong ones joined by a
// breadth-first fill; pieces of kMinPieceNodes free nodes or more counted.
bool reference(const Case& c, const kernels::CoefficientFields& f) {
  const auto n = c.grid.n;
  const auto index = [&](std::array<std::int64_t, 3> p) {
    return p[0] + n[0] * (p[1] + n[1] * p[2]);
  };
  const auto face = [&](int a, std::array<std::int64_t, 3> p, std::array<std::int64_t, 3> q) {
    return f.has_faces()
               ? f.faces[static_cast<std::size_t>(a)][static_cast<std::size_t>(index(p))]
               : kernels::face_conductance(f.conductivity[static_cast<std::size_t>(index(p))],
                                           f.conductivity[static_cast<std::size_t>(index(q))]);
  };
  // The face from p upwards along a, if there is one (periodic wrap included).
  const auto above = [&](int a, std::array<std::int64_t, 3> p, std::array<std::int64_t, 3>& q) {
    q = p;
    const std::int64_t last = n[static_cast<std::size_t>(a)] - 1;
    if (p[static_cast<std::size_t>(a)] < last) {
      ++q[static_cast<std::size_t>(a)];
      return true;
    }
    if (c.boundary[static_cast<std::size_t>(2 * a)].kind != kernels::BoundaryKind::periodic ||
        last == 0)
      return false;
    q[static_cast<std::size_t>(a)] = 0;
    return true;
  };
  std::array<double, 3> hi{0, 0, 0}, lo{1e300, 1e300, 1e300};
  std::array<std::int64_t, 3> p, q;
  for (int a = 0; a < 3; ++a)
    for (p[2] = 0; p[2] < n[2]; ++p[2])
      for (p[1] = 0; p[1] < n[1]; ++p[1])
        for (p[0] = 0; p[0] < n[0]; ++p[0])
          if (above(a, p, q) && face(a, p, q) > 0) {
            hi[static_cast<std::size_t>(a)] =
                std::max(hi[static_cast<std::size_t>(a)], face(a, p, q));
            lo[static_cast<std::size_t>(a)] =
                std::min(lo[static_cast<std::size_t>(a)], face(a, p, q));
          }
  bool contrast = false;
  for (std::size_t a = 0; a < 3; ++a)
    contrast = contrast || (hi[a] > 0 && hi[a] >= kStrongRatio * lo[a]);
  if (!contrast) return false;
  const auto fixed = [&](std::array<std::int64_t, 3> r) {
    for (std::size_t a = 0; a < 3; ++a) {
      if (r[a] == 0 && c.boundary[2 * a].kind == kernels::BoundaryKind::dirichlet) return true;
      if (r[a] == n[a] - 1 && c.boundary[2 * a + 1].kind == kernels::BoundaryKind::dirichlet)
        return true;
    }
    return false;
  };
  // Adjacency of strong faces between free nodes, both ways.
  const std::int64_t np = n[0] * n[1] * n[2];
  std::vector<std::vector<std::int64_t>> links(static_cast<std::size_t>(np));
  for (int a = 0; a < 3; ++a)
    for (p[2] = 0; p[2] < n[2]; ++p[2])
      for (p[1] = 0; p[1] < n[1]; ++p[1])
        for (p[0] = 0; p[0] < n[0]; ++p[0])
          if (above(a, p, q) && !fixed(p) && !fixed(q) &&
              face(a, p, q) * kStrongRatio >= hi[static_cast<std::size_t>(a)]) {
            links[static_cast<std::size_t>(index(p))].push_back(index(q));
            links[static_cast<std::size_t>(index(q))].push_back(index(p));
          }
  std::vector<char> seen(static_cast<std::size_t>(np), 0);
  int pieces = 0;
  for (p[2] = 0; p[2] < n[2]; ++p[2])
    for (p[1] = 0; p[1] < n[1]; ++p[1])
      for (p[0] = 0; p[0] < n[0]; ++p[0]) {
        const std::int64_t s = index(p);
        if (fixed(p) || seen[static_cast<std::size_t>(s)]) continue;
        std::vector<std::int64_t> stack{s};
        seen[static_cast<std::size_t>(s)] = 1;
        std::int64_t size = 0;
        while (!stack.empty()) {
          const std::int64_t v = stack.back();
          stack.pop_back();
          ++size;
          for (std::int64_t w : links[static_cast<std::size_t>(v)])
            if (!seen[static_cast<std::size_t>(w)]) {
              seen[static_cast<std::size_t>(w)] = 1;
              stack.push_back(w);
            }
        }
        if (size >= kMinPieceNodes) ++pieces;
      }
  return pieces >= 2;
}

// k = 390 inside the boxes [lo, hi] (inclusive node ranges), 0.2 elsewhere.
kernels::CoefficientFields blocks(std::array<std::int64_t, 3> n,
                                  std::vector<std::array<std::int64_t, 6>> boxes) {
  kernels::CoefficientFields f;
  f.conductivity.assign(static_cast<std::size_t>(n[0] * n[1] * n[2]), 0.2);
  for (const auto& b : boxes)
    for (std::int64_t z = b[4]; z <= b[5]; ++z)
      for (std::int64_t y = b[2]; y <= b[3]; ++y)
        for (std::int64_t x = b[0]; x <= b[1]; ++x)
          f.conductivity[static_cast<std::size_t>(x + n[0] * (y + n[1] * z))] = 390.0;
  return f;
}

constexpr auto D = kernels::BoundaryKind::dirichlet;
constexpr auto P = kernels::BoundaryKind::periodic;
constexpr auto N = kernels::BoundaryKind::neumann;

TEST(StrongPieces, TwoBlocksAreTwoPiecesOneIsNot) {
  const std::array<std::int64_t, 3> n{12, 10, 9};
  const Case c = case_of(n, {D, D, D, D, D, D});
  const auto two = blocks(n, {{1, 4, 2, 6, 2, 6}, {7, 10, 2, 6, 2, 6}});
  EXPECT_TRUE(forms_strong_pieces(c, two));
  EXPECT_TRUE(reference(c, two));
  const auto one = blocks(n, {{1, 4, 2, 6, 2, 6}});
  EXPECT_FALSE(forms_strong_pieces(c, one));
  EXPECT_FALSE(reference(c, one));
  // Blocks of kMinPieceNodes nodes count; one of 6 does not (every axis has copper faces,
  // so epoxy's are weak along each).
  const auto eight = blocks(n, {{1, 2, 2, 3, 2, 3}, {7, 8, 2, 3, 2, 3}});
  EXPECT_TRUE(forms_strong_pieces(c, eight));
  EXPECT_TRUE(reference(c, eight));
  const auto six = blocks(n, {{1, 2, 2, 3, 2, 3}, {7, 8, 2, 3, 2, 2}, {7, 7, 2, 3, 3, 3}});
  EXPECT_FALSE(forms_strong_pieces(c, six));
  EXPECT_FALSE(reference(c, six));
  // One material only: no contrast.
  const auto none = blocks(n, {});
  EXPECT_FALSE(forms_strong_pieces(c, none));
}

TEST(StrongPieces, APeriodicAxisJoinsBlocksAcrossItsEnds) {
  const std::array<std::int64_t, 3> n{12, 6, 6};
  // Blocks touching x = 0 and x = 11: apart with walls, one piece around a periodic x.
  const auto f = blocks(n, {{0, 2, 1, 4, 1, 4}, {9, 11, 1, 4, 1, 4}});
  EXPECT_TRUE(forms_strong_pieces(case_of(n, {N, N, D, D, D, D}), f));
  EXPECT_FALSE(forms_strong_pieces(case_of(n, {P, P, D, D, D, D}), f));
  EXPECT_FALSE(reference(case_of(n, {P, P, D, D, D, D}), f));
}

TEST(StrongPieces, DirichletNodesBelongToNoPiece) {
  const std::array<std::int64_t, 3> n{12, 6, 6};
  // Two blocks joined only through a bridge in the plane y = 0: one piece, two where y- is
  // Dirichlet (the bridge's nodes fixed).
  const auto f = blocks(n, {{1, 4, 0, 3, 1, 4}, {7, 10, 0, 3, 1, 4}, {1, 10, 0, 0, 1, 4}});
  EXPECT_FALSE(forms_strong_pieces(case_of(n, {N, N, N, N, N, N}), f));
  EXPECT_TRUE(forms_strong_pieces(case_of(n, {N, N, D, N, N, N}), f));
  EXPECT_TRUE(reference(case_of(n, {N, N, D, N, N, N}), f));
}

TEST(StrongPieces, GivenFacesAreReadInsteadOfTheMeans) {
  const std::array<std::int64_t, 3> n{10, 8, 8};
  const Case c = case_of(n, {D, D, D, D, D, D});
  // One block of k, but the given x faces through its middle (x = 4 to 5) weak: two pieces
  // as the faces say, one as the conductivities would.
  auto f = blocks(n, {{1, 8, 1, 6, 1, 6}});
  EXPECT_FALSE(forms_strong_pieces(c, f));
  for (int a = 0; a < 3; ++a) {
    auto& faces = f.faces[static_cast<std::size_t>(a)];
    faces.assign(f.conductivity.size(), 0.0);
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t i = x + n[0] * (y + n[1] * z);
          std::array<std::int64_t, 3> p{x, y, z};
          if (p[static_cast<std::size_t>(a)] == n[static_cast<std::size_t>(a)] - 1) continue;
          const std::int64_t j = i + (a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1]);
          faces[static_cast<std::size_t>(i)] =
              a == 0 && x == 4
                  ? 0.2
                  : kernels::face_conductance(f.conductivity[static_cast<std::size_t>(i)],
                                              f.conductivity[static_cast<std::size_t>(j)]);
        }
  }
  EXPECT_TRUE(forms_strong_pieces(c, f));
  EXPECT_TRUE(reference(c, f));
}

TEST(StrongPieces, RandomBodiesAgreeWithTheFloodFill) {
  std::mt19937 rng(7);
  int agreed_true = 0, agreed_false = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::array<std::int64_t, 3> n{std::uniform_int_distribution<std::int64_t>(3, 11)(rng),
                                        std::uniform_int_distribution<std::int64_t>(1, 9)(rng),
                                        std::uniform_int_distribution<std::int64_t>(1, 7)(rng)};
    std::array<kernels::BoundaryKind, 6> kinds{};
    for (std::size_t a = 0; a < 3; ++a) {
      const int pick = std::uniform_int_distribution<int>(0, 2)(rng);
      kinds[2 * a] = pick == 0 ? D : pick == 1 ? N : P;
      kinds[2 * a + 1] = pick == 2 ? P : std::uniform_int_distribution<int>(0, 1)(rng) ? D : N;
    }
    Case c = case_of(n, kinds);
    kernels::CoefficientFields f;
    const double share = std::uniform_real_distribution<double>(0.2, 0.6)(rng);
    for (std::int64_t i = 0; i < n[0] * n[1] * n[2]; ++i)
      f.conductivity.push_back(std::uniform_real_distribution<double>(0, 1)(rng) < share ? 390.0
                                                                                         : 0.2);
    const bool want = reference(c, f);
    EXPECT_EQ(forms_strong_pieces(c, f), want) << "trial " << trial;
    (want ? agreed_true : agreed_false) += 1;
  }
  // Both answers come up, so the comparison tells something.
  EXPECT_GT(agreed_true, 5);
  EXPECT_GT(agreed_false, 5);
}

// The resource check takes the estimate with the deflation's memory first and asks
// forms_strong_pieces only where that one does not fit (run/prepare.cpp): sound because the
// deflation only adds to the estimate, on the host and on a device, for a steady solve and an
// implicit step alike, and it does add where the materials span the strong ratio.
TEST(StrongPieces, TheDeflationOnlyAddsToTheMemoryEstimate) {
  Case c =
      case_of({65, 49, 33}, {kernels::BoundaryKind::dirichlet, kernels::BoundaryKind::dirichlet,
                             kernels::BoundaryKind::dirichlet, kernels::BoundaryKind::dirichlet,
                             kernels::BoundaryKind::dirichlet, kernels::BoundaryKind::dirichlet});
  c.grid.length = {0.064, 0.048, 0.032};
  c.regions = {
      heatsim_tests::region("epoxy"),
      heatsim_tests::region("copper", heatsim_tests::box({0.01, 0.01, 0.01}, {0.03, 0.03, 0.02}))};
  for (TimeMethod method : {TimeMethod::steady, TimeMethod::backward_euler}) {
    c.time.method = method;
    for (bool on_gpu : {false, true}) {
      const MemoryEstimate with = estimate_memory(c, 1, on_gpu, 1, true);
      const MemoryEstimate without = estimate_memory(c, 1, on_gpu, 1, false);
      EXPECT_GE(with.host_bytes(), without.host_bytes());
      EXPECT_GE(with.device_bytes(), without.device_bytes());
      EXPECT_GT(with.host_bytes() + with.device_bytes(),
                without.host_bytes() + without.device_bytes())
          << "the deflation's memory is counted";
    }
  }
}

}  // namespace
}  // namespace heatsim::solver
