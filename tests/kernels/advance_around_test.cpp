// A pass split around an inner box (Backend::advance_around: a decomposed run's interior
// stepped while its halo travels) gives the bits of the halo written first and the pass taken
// whole: the CPU backend on every dimension, both precisions, the constant stencil and the
// coefficient fields; and boxes_around() tiles the grid around the box once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "tests/advance_around_check.hpp"
#include "tests/box_problems.hpp"

namespace heatsim::kernels {
namespace {

TEST(CpuBackendSplitPass, EqualsTheHaloFirstThenTheWholePass) {
  for (Precision precision : {Precision::fp64, Precision::fp32})
    for (int dims = 1; dims <= 3; ++dims)
      for (bool fields : {false, true}) {
        const StencilProblem p = heatsim_tests::box_test_problem(dims, fields);
        const std::string label = std::string("cpu ") + to_string(precision) + " " +
                                  std::to_string(dims) + "D" + (fields ? " with fields" : "");
        const int split = heatsim_tests::expect_split_passes_match(
            [precision] { return make_cpu_backend(precision); }, p, 3, label);
        EXPECT_EQ(split, 2) << label << ": the CPU splits every one-step pass";
      }
}

TEST(CpuBackendSplitPass, SplitsOnlyOneStep) {
  const StencilProblem p = heatsim_tests::box_test_problem(3, false);
  auto backend = make_cpu_backend(Precision::fp64);
  backend->setup(p);
  backend->upload(std::vector<double>(static_cast<std::size_t>(p.points()), 1.0));
  FieldBox inner;
  inner.grid = inner.extent = p.n;
  int calls = 0;
  EXPECT_FALSE(backend->advance_around(2, 0, inner, [&] { ++calls; }));
  EXPECT_EQ(calls, 0);
}

TEST(BoxesAround, TileTheGridOutsideTheInnerBoxOnce) {
  struct Case {
    std::array<std::int64_t, 3> grid, lo, extent;
  };
  const std::vector<Case> cases = {
      {{13, 9, 7}, {2, 1, 3}, {5, 4, 2}},   // away from every face
      {{13, 9, 7}, {0, 0, 2}, {13, 9, 3}},  // a split along z
      {{13, 9, 7}, {3, 0, 0}, {7, 9, 7}},   // along x
      {{13, 9, 7}, {0, 0, 0}, {13, 9, 7}},  // the whole grid: nothing around it
      {{13, 9, 7}, {4, 4, 4}, {0, 3, 2}},   // empty: everything around it
      {{17, 1, 1}, {5, 0, 0}, {6, 1, 1}},   // 1D
  };
  for (const Case& c : cases) {
    FieldBox inner;
    inner.grid = c.grid;
    inner.lo = c.lo;
    inner.extent = c.extent;
    std::vector<int> count(static_cast<std::size_t>(c.grid[0] * c.grid[1] * c.grid[2]), 0);
    std::vector<FieldBox> boxes = boxes_around(inner);
    boxes.push_back(inner);
    for (const FieldBox& b : boxes)
      for (std::int64_t z = b.lo[2]; z < b.lo[2] + b.extent[2]; ++z)
        for (std::int64_t y = b.lo[1]; y < b.lo[1] + b.extent[1]; ++y)
          for (std::int64_t x = b.lo[0]; x < b.lo[0] + b.extent[0]; ++x) {
            ASSERT_TRUE(x >= 0 && y >= 0 && z >= 0 && x < c.grid[0] && y < c.grid[1] &&
                        z < c.grid[2]);
            ++count[static_cast<std::size_t>((z * c.grid[1] + y) * c.grid[0] + x)];
          }
    for (std::size_t i = 0; i < count.size(); ++i)
      ASSERT_EQ(count[i], 1) << "node " << i << " of inner box at " << c.lo[0] << "," << c.lo[1]
                             << "," << c.lo[2];
    EXPECT_LE(boxes.size(), 7u);
  }
}

}  // namespace
}  // namespace heatsim::kernels
