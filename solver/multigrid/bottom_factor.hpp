// The coarsest level solved directly: its operator's Cholesky factor, made with the hierarchy,
// in place of conjugate gradients to a relative residual of 1e-13 at every V-cycle.
//
// Conjugate gradients on the coarsest level take about as many iterations as the level is
// long: a rod of 4 x 3 x 61 nodes, whose x and y axes do not coarsen, kept 153 nodes and took
// 109 iterations a V-cycle (docs/performance.md, "A direct solve of the coarsest level"); on a
// device each iteration is a few barriers of one block or, past a block's size, a few launches.
// The factor costs about rows * band^2 / 2 multiplications once (band: the product of the
// level's two shorter axes, its longest outermost), and a solve 2 rows * band.
//
// The factor covers the free nodes (BottomFactor::node); a fixed node's correction is 0, so its
// entries drop out (a compact level's conductance to a fixed neighbour stays in the diagonal,
// as the operator has it). The lower triangle is read, A(i, j) from the row of the later node:
// the hierarchy's Galerkin levels are symmetric to the bit (LevelOperator::symmetric).
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

// No factor where it would cost more than this (rows * band^2 multiplications, some tens of
// milliseconds) or hold more than kBottomFactorValues values.
inline constexpr double kBottomFactorWork = 4e7;
inline constexpr std::int64_t kBottomFactorValues = std::int64_t{1} << 24;
// A pivot at most this fraction of its row's diagonal ends the factor: the operator is singular
// to rounding (a body that nothing holds at a temperature), where conjugate gradients stay.
inline constexpr double kBottomPivotFloor = 1e-13;

// The factor of `level`'s operator (its stencil on a stencil-form level, node term and
// conductances on a compact one); none where the level has no free node, has a periodic axis
// (whose wrap leaves the band), is past the limits above, or is not positive definite to the
// pivot floor.
std::optional<kernels::BottomFactor> factor_bottom(const kernels::LevelOperator& level);

}  // namespace heatsim::solver::multigrid
