// The part of a run's device memory one GPU holds in an explicit run over ranks
// (run/prepare.hpp, device_share): a rank's block with its overlaps, times the ranks sharing
// its GPU, so that a grid larger than one GPU is not refused when its blocks fit the GPUs. And
// the host's share: every rank on a host builds the whole case, so the host holds it per rank.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "run/prepare.hpp"

namespace {

heatsim::kernels::StencilProblem grid3d(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  heatsim::kernels::StencilProblem p;
  p.dims = 3;
  p.n = {nx, ny, nz};
  p.stencil.dims = 3;
  p.stencil.radius = 1;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  return p;
}

using heatsim::run::device_share;

TEST(DeviceShare, OneRankHoldsTheWholeRun) {
  EXPECT_EQ(device_share(grid3d(64, 64, 64), 1, 1, {0, 0, 0}, 1, 1), 1.0);
}

TEST(DeviceShare, EachGpuHoldsItsRanksBlockWithTheOverlap) {
  // 8 ranks on 8 GPUs as 2 x 2 x 2: each block 50 x 50 x 50 nodes plus one overlap layer per
  // split axis (51^3).
  const double share = device_share(grid3d(100, 100, 100), 8, 1, {2, 2, 2}, 8, 8);
  EXPECT_DOUBLE_EQ(share, 51.0 * 51.0 * 51.0 / 1e6);
  // Four layers of overlap (a fused pass of 4 steps): 54^3.
  EXPECT_DOUBLE_EQ(device_share(grid3d(100, 100, 100), 8, 4, {2, 2, 2}, 8, 8),
                   54.0 * 54.0 * 54.0 / 1e6);
}

TEST(DeviceShare, RanksSharingAGpuCountTogether) {
  // 4 ranks split along z on a node with 2 GPUs: two blocks of 25 planes (and their overlaps:
  // the middle ranks have two, 27 planes) on each GPU.
  const double share = device_share(grid3d(40, 40, 100), 4, 1, {1, 1, 4}, 4, 2);
  EXPECT_DOUBLE_EQ(share, 2.0 * 27.0 / 100.0);
  // 3 ranks on one GPU: all of the grid and more, held at 1.
  EXPECT_EQ(device_share(grid3d(40, 40, 90), 3, 1, {1, 1, 3}, 3, 1), 1.0);
}

TEST(DeviceShare, AGridThatCannotBeSplitSoCountsWhole) {
  // Blocks thinner than the overlap: the run refuses the decomposition later, saying why.
  EXPECT_EQ(device_share(grid3d(8, 8, 8), 8, 4, {1, 1, 8}, 8, 8), 1.0);
}

}  // namespace

// Every rank of a run under mpirun builds the whole case in its memory, so the host must hold
// it once per rank there: a small case passes for one rank and is refused, with the count
// named, for more ranks on one host than its memory can hold.
TEST(HostShare, EachRankOnAHostNeedsTheWholeCase) {
  if (!std::filesystem::exists("/proc/meminfo")) GTEST_SKIP() << "no /proc/meminfo";
  namespace run = heatsim::run;
  const run::PreparedRun prepared =
      run::prepare_run(run::CaseSource::yaml("grid: {dims: 3, n: [64, 64, 64], length: [1, 1, 1]}\n"
                                             "physics: {alpha: 1.0}\n"
                                             "boundary: {all: {type: dirichlet, value: 0}}\n"
                                             "initial: {type: constant, value: 1}\n"
                                             "time: {dt: auto, steps: 1}\n"
                                             "backend: cpu\n"),
                       run::Overrides{});
  heatsim::solver::BackendChoice choice;
  choice.name = "cpu";
  EXPECT_TRUE(run::check_resources(prepared, choice, 1, false, 1.0, 1).empty());
  EXPECT_TRUE(run::check_resources(prepared, choice, 1, false, 1.0, 2).empty());
  const std::vector<std::string> short_of =
      run::check_resources(prepared, choice, 1, false, 1.0, 1 << 30);
  ASSERT_EQ(short_of.size(), 1u);
  EXPECT_NE(short_of[0].find("not enough host memory: each of the 1073741824 ranks on this host "
                             "builds the whole case"),
            std::string::npos)
      << short_of[0];
}
