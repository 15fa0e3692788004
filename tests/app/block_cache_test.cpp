// The executable's cache of large blocks (app/block_cache.hpp): freed blocks are kept with
// their pages and taken again, split and joined; a block that fits in none releases them.
#include "app/block_cache.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

using heatsim::app::BlockCache;
constexpr std::size_t MiB = std::size_t{1} << 20;

char* take(BlockCache& cache, std::size_t bytes) { return static_cast<char*>(cache.take(bytes)); }

TEST(BlockCache, AFreedBlockIsTakenAgainWithItsPages) {
  BlockCache cache;
  char* a = take(cache, 9 * MiB);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % BlockCache::kPage, 0u);
  std::memset(a, 0x5a, 9 * MiB);
  EXPECT_TRUE(cache.give(a));
  EXPECT_EQ(cache.idle_bytes(), 10 * MiB);  // rounded to 2 MiB pages
  // A smaller block fits: the same address, the values its last owner wrote still there (the
  // pages were not given back and cleared).
  char* b = take(cache, 3 * MiB);
  EXPECT_EQ(b, a);
  EXPECT_EQ(b[0], 0x5a);
  EXPECT_EQ(b[3 * MiB - 1], 0x5a);
  EXPECT_EQ(cache.reused(), 1u);
  EXPECT_EQ(cache.idle_bytes(), 6 * MiB);  // the rest of the stretch, after it
  char* c = take(cache, 6 * MiB);
  EXPECT_EQ(c, a + 4 * MiB);
  EXPECT_EQ(cache.idle_bytes(), 0u);
  EXPECT_TRUE(cache.give(b));
  EXPECT_TRUE(cache.give(c));
  cache.release_idle();
  EXPECT_EQ(cache.idle_bytes(), 0u);
}

TEST(BlockCache, BlocksItDidNotMakeAreNotItsOwn) {
  BlockCache cache;
  void* small = std::malloc(64);
  EXPECT_FALSE(cache.give(small));
  std::free(small);
  char* a = take(cache, 8 * MiB);
  EXPECT_FALSE(cache.give(a + BlockCache::kPage));  // aligned, but inside a block
  EXPECT_TRUE(cache.give(a));
  EXPECT_FALSE(cache.give(a));  // kept already
  cache.release_idle();
}

TEST(BlockCache, NeighbouringStretchesJoinAndTheSmallestThatFitsIsTaken) {
  BlockCache cache;
  char* x = take(cache, 12 * MiB);
  ASSERT_TRUE(cache.give(x));
  char* p = take(cache, 4 * MiB);
  char* q = take(cache, 4 * MiB);
  char* r = take(cache, 4 * MiB);
  EXPECT_EQ(p, x);
  EXPECT_EQ(q, x + 4 * MiB);
  EXPECT_EQ(r, x + 8 * MiB);
  EXPECT_EQ(cache.idle_stretches(), 0u);
  // q and r join (q before r, then r after q); p stays apart while q is in use.
  EXPECT_TRUE(cache.give(r));
  EXPECT_TRUE(cache.give(p));
  EXPECT_EQ(cache.idle_stretches(), 2u);
  EXPECT_TRUE(cache.give(q));
  EXPECT_EQ(cache.idle_stretches(), 1u);
  EXPECT_EQ(cache.idle_bytes(), 12 * MiB);
  // Two stretches of 4 MiB (x and x + 8 MiB, q between them in use): a block of 6 MiB fits
  // in neither, and releases both before it is mapped.
  p = take(cache, 4 * MiB);
  q = take(cache, 4 * MiB);
  r = take(cache, 4 * MiB);
  EXPECT_TRUE(cache.give(r));
  EXPECT_TRUE(cache.give(p));
  EXPECT_EQ(cache.idle_stretches(), 2u);
  char* six = take(cache, 6 * MiB);
  EXPECT_EQ(cache.idle_bytes(), 0u);
  EXPECT_EQ(cache.reused(), 6u);
  // Stretches of 6 MiB (six) and 4 MiB (q): a block of 2 MiB is taken from the smaller.
  EXPECT_TRUE(cache.give(six));
  EXPECT_TRUE(cache.give(q));
  if (cache.idle_stretches() == 2) {  // (not mapped side by side, and joined)
    char* two = take(cache, 2 * MiB);
    EXPECT_EQ(two, q);
    EXPECT_TRUE(cache.give(two));
  }
  cache.release_idle();
}

TEST(BlockCache, ABlockThatFitsInNoStretchReleasesThemFirst) {
  BlockCache cache;
  char* a = take(cache, 8 * MiB);
  char* b = take(cache, 8 * MiB);
  ASSERT_TRUE(cache.give(a));
  ASSERT_TRUE(cache.give(b));
  const std::size_t kept = cache.idle_bytes();
  EXPECT_EQ(kept, 16 * MiB);
  // 10 MiB fits in neither 8 MiB stretch (unless the two were mapped side by side and joined).
  char* c = take(cache, 10 * MiB);
  if (cache.reused() == 0) {
    EXPECT_EQ(cache.idle_bytes(), 0u);
    EXPECT_EQ(cache.idle_stretches(), 0u);
  } else {
    EXPECT_EQ(cache.idle_bytes(), 6 * MiB);
  }
  EXPECT_TRUE(cache.give(c));
  cache.release_idle();
}

}  // namespace

namespace {

TEST(BlockCache, WithoutKeepingAFreedBlockIsUnmapped) {
  heatsim::app::BlockCache cache(/*keep=*/false);
  void* a = cache.take(8 * MiB);
  EXPECT_TRUE(cache.give(a));
  EXPECT_EQ(cache.idle_bytes(), 0u);
  EXPECT_EQ(cache.idle_stretches(), 0u);
  void* b = cache.take(8 * MiB);
  EXPECT_EQ(cache.reused(), 0u);
  EXPECT_TRUE(cache.give(b));
}

}  // namespace
