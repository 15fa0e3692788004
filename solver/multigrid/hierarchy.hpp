// The levels of the geometric multigrid: coarsening by two per axis, operator-dependent
// prolongation and Galerkin coarse operators R A P with R = P^T (the black-box multigrid of
// Dendy, 1982). Interpolation follows the heat flow rather than the grid: a finer node between
// coarse nodes takes their values weighted by its own conductances, summed over the planes
// across the interpolation direction (copper beside epoxy takes the copper side's value), and
// the coarse operator is what A does to interpolated corrections, so a coarse level sees the
// same inclusions, layers and contrasts as the finest; iteration counts then stay the same
// across grid sizes and conductivity jumps. Coarse levels hold 3^dims-point stencils
// (kernels/level_ops.hpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>

#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

using kernels::LevelOperator;

// The fine indices a coarse level keeps on one axis: every second node from 0, and every node
// marked strong with the next but one after it; a non-periodic axis also keeps its last node
// (so an even n ends with a coarse gap of one). Axes too short to coarsen (n <= 3, or n < 6
// periodic, so that a periodic coarse axis keeps three nodes) keep every node.
std::vector<std::int64_t> coarse_nodes(std::int64_t n, bool periodic,
                                       const std::vector<std::uint8_t>& strong = {},
                                       bool odd = false);

// Per axis, the planes across it that stay coarse: planes whose couplings within them outweigh
// those across them far more than in their neighbours' (a copper sheet one node thick in
// epoxy, layers alternating k = 1 and 1e6), or far more than isotropic couplings do (a grid
// much finer across the planes than along them). A point smoother cannot smooth along such a
// plane and interpolation across it cannot represent it, so it is kept rather than
// interpolated: the semi-coarsening of hypre's PFMG, decided plane by plane. Beside voids the
// same holds node by node: a plane holding a node coupled across it by nothing (a sliver of
// body that a void's face leaves beyond its surface, a fin one coarse node wide between two
// voids), or a node beside a void whose couplings within outweigh those across it as an
// anisotropic plane's do, is kept too. And in 3D a plane holding a line's worth of nodes whose
// own couplings within it outweigh those across 8 times, and 8 times as many such nodes as
// either plane beside it holds: a sheet of strong material thinner than a spacing inside weak
// nodes' control volumes, beside a box inclusion's face, which the plane sums dilute among the
// plane's other nodes a level or two down.
// `NodeSums::direct` takes a level's couplings (no removed nodes) straight from its
// conductances (compact) or its entries (stencil form), entry by entry in its rows' order, so
// to the same bits as `NodeSums::from_rows`, which builds each free node's row as on any level
// (the tests compare the two).
enum class NodeSums { direct, from_rows };
std::array<std::vector<std::uint8_t>, kernels::kMaxDims> strong_planes(
    const LevelOperator& op, NodeSums sums = NodeSums::direct);

// Per node: whether a held node (fixed == 1, a Dirichlet node) lies at an offset of the
// level's stencil from it (the held nodes themselves included), wrapping across periodic axes.
// The prolongation keeps the row sums of such nodes' rows in their weights' denominators.
std::vector<std::uint8_t> nodes_beside_held(const LevelOperator& op);

// Per axis, whether the coarse level keeps nodes 0, 1, 3, 5, ... (the odd planes and the ends)
// rather than 0, 2, 4, ...: where the nodes at which materials meet as a checkerboard's cubes
// meet along an edge (two opposite quadrants around the node conducting far more than the other
// two) lie on the even planes and seldom on the odd ones. A coarse node there carries a basis
// function over the cubes that meet at it, which the fine level joins only along their edge,
// and the V-cycle misses their separate modes (the checkerboard whose cube bounds fall on node
// planes: 44 PCG iterations at 65^3, 23 with the odd planes kept). Inclusions and layers, whose
// bounds meet no such edge, keep the even planes. Non-periodic axes only.
std::array<bool, kernels::kMaxDims> odd_planes(const LevelOperator& op);

// The coarse level of `fine` (either form) on the kept nodes: fine_index, fixed (where the fine
// node is), the prolongation to `fine` and the Galerkin stencil P^T A P over the free nodes,
// symmetric to the last bit. Interpolation, per finer node of the types below in turn (a
// coarse node takes its own value, weight 1):
//   between two coarse nodes along one axis: A's row summed over each plane across that axis;
//     the two outer planes' sums over the centre plane's give the two weights;
//   between coarse nodes along two axes: the row summed along the third axis, a 3 x 3 stencil
//     whose neighbours (of the first type, or coarse) are interpolated already;
//   along three axes: the whole row, every neighbour interpolated already.
// The denominators (the centre plane's sum, the row's centre) keep the row sum only where it
// holds the node (beside a Dirichlet node, or a node term a good part of the centre);
// elsewhere they are the sums of the neighbours' pulls, the positive entries off the centre
// left out, so that weights are positive and sum to 1 and a floating body's near-constant
// error keeps its coarse representation. Fixed neighbours hold no correction and are left
// out; fixed coarse nodes give no value. A removed neighbour (kernels::kRemovedNode, inside a
// void) is no part of the body: what a row gathers on it is taken as the node's own value
// (an insulated surface), so that interpolation beside a void keeps constants.
// `Reuse::along_x` (3D, no periodic axis): where a node's neighbourhood (two finer nodes each
// way for the weights, three for the rest) repeats the one two finer nodes before it along x,
// its weights, A P row and coarse row
// are copied from there rather than computed, to the same bits, and where the rows of nodes
// within that reach along y and z repeat, whole, those two finer rows before along y, a row's
// weights and coarse rows are copied from the rows before, and where the planes within that
// reach along z repeat those two finer planes before, a plane's weights and coarse rows are
// copied from the planes before; `Reuse::none` computes every node (the tests compare the two).
enum class Reuse { along_x, none };
LevelOperator coarsen(const LevelOperator& fine, Reuse reuse = Reuse::along_x);

// What Reuse::along_x copies by on the level below `fine`, for the tests against the
// definitions (empty where nothing repeats). A finer node is `same` when it and the node two
// before along x are the same bits (fixed and the level's values at the node) and the transfer
// along x at it is that at the node two before moved by one coarse node (both nodes and the
// node after it inside the grid). Per finer node, bit r - 2 of `windows` for r = 2, 3: every
// node within r of it per axis is same (x beyond the grid is not; y and z beyond it hold
// nothing). Per finer row (y, z), `rows2` and `rows3`: every row within 2 or 3 of it along y
// (inside the grid) and z (beyond it: nothing) is the same bits as the row two before along y
// and the transfer along y there is moved by one coarse node, as along x. Per finer plane z,
// `planes2` and `planes3`: every plane within 2 or 3 of it along z (inside the grid) and the one
// before it are each the same bits as the plane before, and the transfer along z there is moved
// by one coarse node (a plane's weights and coarse rows are then those of the plane two before).
struct RepeatWindows {
  std::vector<std::uint8_t> windows, rows2, rows3, planes2, planes3;
};
RepeatWindows repeat_windows(const LevelOperator& fine);

// Wall and process CPU time (all threads) of a piece of the set-up.
struct SetupTime {
  double seconds = 0.0;
  double cpu_seconds = 0.0;
};

// Times pieces of a set-up one after another: each lap() is the time since the last (or since
// the clock was made).
class PhaseClock {
 public:
  SetupTime lap() {
    const auto now = std::chrono::steady_clock::now();
    const std::clock_t cpu_now = std::clock();
    const SetupTime t{std::chrono::duration<double>(now - start_).count(),
                      static_cast<double>(cpu_now - cpu_start_) / CLOCKS_PER_SEC};
    start_ = now;
    cpu_start_ = cpu_now;
    return t;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::clock_t cpu_start_ = std::clock();
};

// The finest level and its coarse versions, coarsening while a level has more than
// `coarsest_points` nodes and the next level keeps at most three quarters of its nodes and, if
// it halves axes (keeps at most three quarters of their nodes), halves one that the last level
// to halve any halved too (any axis, for level 1). A level that coarsens by less, or halves
// only axes whose planes the levels before kept (layers that conduct far better within than
// across, once the axes along them are down to 3 nodes), is not built, and the level before
// is the coarsest. `times`, when given, receives the time of each coarse level's construction
// (level 1 first; the one not built included).
// `coarsest_points` 0: default_coarsest_points.
std::vector<LevelOperator> build_hierarchy(LevelOperator finest, std::int64_t coarsest_points = 0,
                                           std::vector<SetupTime>* times = nullptr);

// The coarsest level's size where the caller does not give one: kCoarsestPoints nodes; in 1D
// kCoarsest1D, a chain whose coarsest level is factored and solved directly (bottom_factor.hpp),
// where levels below a few hundred nodes cost more to build and cycle through than they save;
// on a periodic 1D axis, which is not factored, kCoarsest1DPeriodic (conjugate gradients take
// about as many iterations as the chain has nodes: docs/performance.md, "1D hierarchies to 8
// nodes").
inline constexpr std::int64_t kCoarsestPoints = 64;
inline constexpr std::int64_t kCoarsest1D = 256;
inline constexpr std::int64_t kCoarsest1DPeriodic = 8;
constexpr std::int64_t default_coarsest_points(int dims, bool periodic_x) {
  return dims != 1 ? kCoarsestPoints : periodic_x ? kCoarsest1DPeriodic : kCoarsest1D;
}

}  // namespace heatsim::solver::multigrid
