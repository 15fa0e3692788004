// The levels of the geometric multigrid: coarsening by two per axis, and coarse operators from
// the fine face conductances combined as heat flows through them, in series along the coarse
// face's direction and in parallel across it. That keeps the coarse levels faithful where the
// conductivity jumps (a layer of copper beside plastic), which plain re-discretisation of k
// would smear. The transfers follow kernels/level_ops.hpp: prolongation linear in the finer
// index, restriction its transpose, the same weights the parallel combination uses.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

using kernels::LevelOperator;

// The fine indices a coarse level keeps on one axis: every second node from 0; a non-periodic
// axis also keeps its last node (so an even n ends with a coarse gap of one). Axes too short to
// coarsen (n <= 3, or n < 4 periodic) keep every node.
std::vector<std::int64_t> coarse_nodes(std::int64_t n, bool periodic);

// The coarse operator of `fine` on the kept nodes (fine_index set on the result): node terms
// summed over each coarse node's dual cell with the restriction weights, face conductances in
// series along the axis and in parallel (same weights) across it, fixed where the fine node is.
LevelOperator coarsen(const LevelOperator& fine);

// The finest level and its coarse versions, coarsening while a level has more than
// `coarsest_points` nodes and some axis can still be halved.
std::vector<LevelOperator> build_hierarchy(LevelOperator finest, std::int64_t coarsest_points = 64);

}  // namespace heatsim::solver::multigrid
