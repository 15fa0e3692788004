// How many steps the run loop takes between its checks (signals, progress, NaN): sized by
// the time the last chunk took.
#include <gtest/gtest.h>

#include "solver/simulation.hpp"

namespace heatsim::solver {
namespace {

TEST(NextChunk, DoublesWhileAChunkIsQuick) {
  EXPECT_EQ(next_chunk(1, 1, 10), 2);
  EXPECT_EQ(next_chunk(512, 512, 249'999), 1024);
  EXPECT_EQ(next_chunk(1 << 20, 1 << 20, 1), 1 << 20);  // the ceiling
}

TEST(NextChunk, AShortenedChunkSaysNothingAboutSpeed) {
  // A due step or the end cut the chunk short: quick, but not evidence for a longer one.
  EXPECT_EQ(next_chunk(512, 100, 1000), 512);
}

TEST(NextChunk, KeptBetweenAQuarterAndHalfASecond) {
  EXPECT_EQ(next_chunk(512, 512, 250'000), 512);
  EXPECT_EQ(next_chunk(512, 512, 500'000), 512);
}

TEST(NextChunk, CutBackToAQuarterOfASecondAfterASlowOne) {
  // 4096 steps took 2 s (the machine got busy): 512 steps is a quarter of a second.
  EXPECT_EQ(next_chunk(4096, 4096, 2'000'000), 512);
  // The rate is the steps advanced, not the chunk's size.
  EXPECT_EQ(next_chunk(4096, 1000, 1'000'000), 250);
  // One step slower than a second still steps.
  EXPECT_EQ(next_chunk(8, 1, 3'000'000), 1);
}

}  // namespace
}  // namespace heatsim::solver
