// The decomposition's pieces between exchanges (exchange_pieces) and the local problem's
// placeholder faces: what makes a rank's fused passes the serial run's.
#include "solver/parallel/decomposition.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace heatsim::solver::parallel {
namespace {

// The passes a fusing backend takes for advance(steps, step0) at depth k (fusing_backend.cuh):
// single steps up to a multiple of k, fused passes while k steps remain, then single steps.
// Each pass as its first step, negated for a single step.
std::vector<std::int64_t> passes(std::int64_t steps, std::int64_t step0, int k) {
  std::vector<std::int64_t> out;
  std::int64_t s = 0;
  for (; s < steps && (step0 + s) % k != 0; ++s) out.push_back(-(step0 + s) - 1);
  for (; steps - s >= k; s += k) out.push_back(step0 + s);
  for (; s < steps; ++s) out.push_back(-(step0 + s) - 1);
  return out;
}

TEST(ExchangePieces, EndOnMultiplesOfTheExchangeAndCoverTheSteps) {
  const std::vector<Piece> p = exchange_pieces(10, 20, 3);
  ASSERT_EQ(p.size(), 4u);
  const std::int64_t want[4][2] = {{1, 20}, {3, 21}, {3, 24}, {3, 27}};
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].steps, want[i][0]) << i;
    EXPECT_EQ(p[i].step0, want[i][1]) << i;
  }
  EXPECT_TRUE(exchange_pieces(0, 5, 3).empty());
  const std::vector<Piece> short_run = exchange_pieces(2, 7, 6);
  ASSERT_EQ(short_run.size(), 1u);
  EXPECT_EQ(short_run[0].steps, 2);
  EXPECT_EQ(short_run[0].step0, 7);
  EXPECT_THROW(exchange_pieces(4, 0, 0), std::invalid_argument);
}

// Every split of a run into advance() calls, at every depth and exchange interval (a multiple
// of the depth): the pieces' passes are the serial backend's passes of the same call.
TEST(ExchangePieces, GiveTheSerialRunsPassesAtEveryDepth) {
  int compared = 0;
  for (int k = 1; k <= 4; ++k)
    for (int every = k; every <= 3 * k; every += k)
      for (std::int64_t step0 = 0; step0 < 13; ++step0)
        for (std::int64_t steps = 0; steps < 23; ++steps) {
          std::vector<std::int64_t> pieced;
          std::int64_t covered = 0;
          for (const Piece& piece : exchange_pieces(steps, step0, every)) {
            EXPECT_EQ(piece.step0, step0 + covered);
            EXPECT_GE(piece.steps, 1);
            EXPECT_LE(piece.steps, every);  // the overlap holds `every` steps' reach
            covered += piece.steps;
            for (std::int64_t pass : passes(piece.steps, piece.step0, k)) pieced.push_back(pass);
          }
          EXPECT_EQ(covered, steps);
          ASSERT_EQ(pieced, passes(steps, step0, k))
              << "k " << k << ", every " << every << ", steps " << steps << " from " << step0;
          ++compared;
        }
  EXPECT_EQ(compared, 4 * 3 * 13 * 23);
}

TEST(LocalProblem, MarksThePlaceholdersTowardNeighboursOnly) {
  kernels::StencilProblem global;
  global.dims = 3;
  global.n = {40, 30, 20};
  global.stencil.dims = 3;
  global.stencil.weights.assign(global.stencil.size(), 0.0);
  global.faces[0].kind = kernels::BoundaryKind::dirichlet;
  global.faces[0].value = 0.5;
  for (int f = 1; f < 6; ++f) global.faces[f].kind = kernels::BoundaryKind::neumann;
  // 2 x 2 x 1 ranks; rank 1 is the high-x, low-y block.
  const Decomposition d(global, 4, 1, 3, {2, 2, 1});
  const kernels::StencilProblem local = local_problem(global, d);
  const bool want[6] = {true, false, false, true, false, false};
  for (int f = 0; f < 6; ++f) {
    EXPECT_EQ(local.placeholder[static_cast<std::size_t>(f)], want[f]) << "face " << f;
    if (want[f]) {
      EXPECT_EQ(local.faces[static_cast<std::size_t>(f)].kind, kernels::BoundaryKind::dirichlet);
    }
  }
  EXPECT_EQ(local.faces[1].kind, kernels::BoundaryKind::neumann);  // the grid's own x+ face
  for (bool p : global.placeholder) EXPECT_FALSE(p);
}

}  // namespace
}  // namespace heatsim::solver::parallel
