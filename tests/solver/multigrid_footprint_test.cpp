// The multigrid footprint counts the levels and nodes build_hierarchy makes, so that the memory
// estimate follows the solver's coarsening (any dims, odd and even sizes, periodic axes).
#include "solver/multigrid_footprint.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "solver/multigrid/hierarchy.hpp"

namespace {

using heatsim::solver::multigrid::build_hierarchy;
using heatsim::solver::multigrid::LevelOperator;

TEST(MultigridFootprint, CountsTheLevelsAndNodesOfTheHierarchy) {
  struct Grid {
    int dims;
    std::array<std::int64_t, 3> n;
    std::array<bool, 3> periodic;
  };
  for (const Grid& g :
       {Grid{1, {101, 1, 1}, {false, false, false}}, Grid{2, {45, 31, 1}, {true, false, false}},
        Grid{2, {64, 64, 1}, {false, false, false}}, Grid{3, {37, 29, 23}, {false, false, true}},
        Grid{3, {20, 17, 9}, {false, false, false}}}) {
    LevelOperator finest;
    finest.dims = g.dims;
    finest.n = g.n;
    finest.periodic = g.periodic;
    const auto points = static_cast<std::size_t>(finest.points());
    finest.node_term.assign(points, 1.0);
    finest.fixed.assign(points, 0);
    for (int a = 0; a < g.dims; ++a) finest.conductance[a].assign(points, 1.0);
    const auto levels = build_hierarchy(finest);
    std::int64_t coarse = 0;
    for (std::size_t l = 1; l < levels.size(); ++l) coarse += levels[l].points();

    heatsim::solver::MultigridLayout layout = heatsim::solver::multigrid_layout(g.dims);
    const auto b = heatsim::solver::multigrid_bytes(g.dims, g.n, g.periodic, {}, true, layout);
    EXPECT_EQ(b.levels, static_cast<std::int64_t>(levels.size())) << g.dims << "D " << g.n[0];
    // The set-up's hierarchy: the finest level's compact operator (diagonal and a conductance
    // per axis) and the coarse levels' Galerkin stencil (3^dims doubles) and fp32 prolongation
    // (3^dims floats), a fixed flag on every node.
    const int stencil = g.dims == 3 ? 27 : g.dims == 2 ? 9 : 3;
    EXPECT_EQ(layout.coarse_operator_doubles, 1.5 * stencil);
    EXPECT_EQ(b.host_setup,
              finest.points() * (8 * (1 + g.dims) + 1) + coarse * (8 * stencil + 4 * stencil + 1));
    // The CPU's level operations keep the prolongation in fp32 and the stencil in fp32 with an
    // fp64 centre, in 3D its upper half alone (13 entries); that size shows in their bytes.
    const double cpu = 0.5 * stencil + (g.dims == 3 ? 6.5 : 0.5 * stencil) + 1.0;
    EXPECT_EQ(layout.cpu_coarse_operator_doubles, cpu);
    layout.cpu_coarse_operator_doubles = 1 + g.dims;
    const auto compact =
        heatsim::solver::multigrid_bytes(g.dims, g.n, g.periodic, {}, true, layout);
    EXPECT_EQ(b.level_ops - compact.level_ops,
              static_cast<std::int64_t>(static_cast<double>(coarse) * 8 * (cpu - (1 + g.dims))));
  }
}

// The level operations' bytes under `layout` less those under `other`, no periodic axis.
std::int64_t level_ops_gap(const heatsim::solver::MultigridLayout& layout,
                           const heatsim::solver::MultigridLayout& other, int dims,
                           const std::array<std::int64_t, 3>& n, bool cpu) {
  const std::array<bool, 3> none{false, false, false};
  return heatsim::solver::multigrid_bytes(dims, n, none, {}, cpu, layout).level_ops -
         heatsim::solver::multigrid_bytes(dims, n, none, {}, cpu, other).level_ops;
}

// On a GPU a 3D finest level without periodic axes smooths out of place: one more finest
// vector; not on the CPU, not with a periodic axis, not in 2D.
TEST(MultigridFootprint, CountsTheFusedSweepsSecondArrayWhereTheDeviceTakesThem) {
  using heatsim::solver::multigrid_bytes;
  const heatsim::solver::MultigridLayout layout = heatsim::solver::multigrid_layout(3);
  heatsim::solver::MultigridLayout without = layout;
  without.device_sweep_vectors = 0;
  const std::array<std::int64_t, 3> n{37, 29, 23};
  const std::int64_t finest = 37 * 29 * 23;
  EXPECT_EQ(level_ops_gap(layout, without, 3, n, false), finest * 8);
  EXPECT_EQ(level_ops_gap(layout, without, 3, n, true), 0);
  const std::array<bool, 3> z{false, false, true};
  EXPECT_EQ(multigrid_bytes(3, n, z, {}, false, layout).level_ops,
            multigrid_bytes(3, n, z, {}, false, without).level_ops);
  const heatsim::solver::MultigridLayout flat = heatsim::solver::multigrid_layout(2);
  heatsim::solver::MultigridLayout flat_without = flat;
  flat_without.device_sweep_vectors = 0;
  EXPECT_EQ(level_ops_gap(flat, flat_without, 2, {301, 299, 1}, false), 0);
}

// The CPU's level operations sum the finest level's diagonals where they use them, so its
// level operations count two doubles a finest node fewer than a device's; a device's keep them.
TEST(MultigridFootprint, CountsNoFinestDiagonalsOnTheCpu) {
  const heatsim::solver::MultigridLayout layout = heatsim::solver::multigrid_layout(3);
  heatsim::solver::MultigridLayout kept = layout;
  kept.cpu_finest_diagonal_doubles = 0;
  const std::array<std::int64_t, 3> n{41, 33, 27};
  const std::int64_t finest = 41 * 33 * 27;
  EXPECT_EQ(level_ops_gap(kept, layout, 3, n, true), finest * 2 * 8);
  EXPECT_EQ(level_ops_gap(kept, layout, 3, n, false), 0);
}

}  // namespace
