// The multigrid solver on a box inclusion whose faces fall a fraction of a spacing past a node
// plane. The weak nodes beside such a face hold a sliver of the strong material in their
// control volumes, and their faces along it take the sliver in parallel (solver/subgrid.hpp):
// a sheet one node thick, coupled along itself hundreds of times more than across (a sliver of
// a tenth of a spacing of k = 1e4 beside k = 1: 1000 along, 2.5 and 1 across). Its plane must
// stay on the coarse levels for as long as it leans so, or PCG needs more iterations at every
// refinement (a cube spanning 0.03 to 0.07 m took 7, 12 and 18 at 33, 65 and 129 nodes
// across; 7 at every size where the faces lie on node planes or halfway between them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver::multigrid {
namespace {

using heatsim_tests::box;
using heatsim_tests::material;
using heatsim_tests::region;

// A cube of k = 1e4 in a block of k = 1, 0.1 m on a side, n nodes per axis: 400 K on x-,
// 300 K on x+, the other faces insulated. The cube's faces lie `fraction` of a spacing past
// the nearest weak node plane on every side (the sliver in that node's control volume), about
// 0.03 and 0.07 m.
Case cube_in_block(std::int64_t n, double fraction) {
  const double h = 0.1 / static_cast<double>(n - 1);
  const double lower = (std::floor(0.03 / h) + 0.5 - fraction) * h;
  const double upper = (std::ceil(0.07 / h) - 0.5 + fraction) * h;
  Case c;
  c.grid.dims = 3;
  c.grid.n = {n, n, n};
  c.grid.length = {0.1, 0.1, 0.1};
  c.materials = {material("weak", 1.0, 1000.0, 1000.0), material("strong", 1e4, 1000.0, 1000.0)};
  c.regions = {region("weak"), region("strong", box({lower, lower, lower}, {upper, upper, upper}))};
  for (auto& f : c.boundary) {
    f.kind = kernels::BoundaryKind::neumann;
    f.value = 0.0;
  }
  c.boundary[0].kind = kernels::BoundaryKind::dirichlet;
  c.boundary[0].value = 400.0;
  c.boundary[1].kind = kernels::BoundaryKind::dirichlet;
  c.boundary[1].value = 300.0;
  c.time.method = TimeMethod::steady;
  return c;
}

// The steady state from 350 K at the default tolerance and stall rule.
SolveReport steady(const Case& c) {
  const auto fields = coefficient_fields(c);
  const kernels::StencilProblem p = make_problem(c, 1.0, fields);
  ImplicitStepper stepper(p, fields, TimeMethod::steady, 0.0,
                          kernels::make_level_ops("cpu", kernels::Precision::fp64));
  std::vector<double> u(static_cast<std::size_t>(p.points()), 350.0);
  return stepper.advance(u, 0);
}

TEST(MultigridSlivers, ACubeWhoseFacesLeaveSliversConvergesInFewIterationsAtEverySize) {
  // A sliver of a tenth of a spacing (the thinnest measured, and the slowest; at 129 nodes the
  // cube spans 0.03 to 0.07 m exactly): 13 and 18 iterations at 65 and 129 nodes across before
  // the sheets' planes were kept, 11 and 10 after.
  int smallest = 1 << 30, largest = 0;
  for (const std::int64_t n : {65, 129}) {
    const Case c = cube_in_block(n, 0.1);
    const SolveReport r = steady(c);
    std::printf("cube with slivers %ld^3: %s\n", static_cast<long>(n), r.describe().c_str());
    EXPECT_EQ(r.reason, SolveReport::Reason::converged) << n << ": " << r.describe();
    EXPECT_LE(r.iterations, 12) << n << ": " << r.describe();
    smallest = std::min(smallest, r.iterations);
    largest = std::max(largest, r.iterations);
  }
  EXPECT_LE(largest, smallest + 2) << smallest << " to " << largest << " iterations";
}

}  // namespace
}  // namespace heatsim::solver::multigrid
