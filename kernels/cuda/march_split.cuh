// How a march's work, the (tile, plane) pairs of the tiles across its march axis and the
// planes along it, is shared out among the blocks of a one-dimensional launch
// (temporal-blocking's 3D marches, march_kernel.cuh; included by the kernel lab too).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "register_tiling/register_sweep.hpp"

namespace heatsim::kernels::cuda {

// How a 3D march's work, the (xy tile, plane) pairs, is shared out among the blocks of a
// one-dimensional launch; tiles are numbered x fastest.
// - chunk > 0, uniform chunks: block b marches planes [c chunk, (c + 1) chunk) of tile
//   b % tiles, c = b / tiles (so the blocks of one wave march the same planes of neighbouring
//   tiles).
// - chunk == 0, balanced shares: each block marches `rounds` whole columns (round r: tile
//   r B + b, B blocks), then an equal share of the rest's pairs in tile order, at most two
//   pieces. With one block per SM the launch is one wave of equal blocks: no wave half
//   empty, and no more pieces (each costs the march's 3 depth - 1 iterations of filling and
//   draining) than the shares cut.
// Each piece is marched as a chunk is: the same nodes stored, the same values.
struct MarchSplit {
  std::int64_t tiles_x, tiles, planes, chunk, rounds;

  // The block's piece k (0, 1, ...): its tile and planes [m0, m1); false past the last.
  __device__ __forceinline__ bool piece(std::int64_t k, std::int64_t& tile, std::int64_t& m0,
                                        std::int64_t& m1) const {
    const std::int64_t blocks = gridDim.x, block = blockIdx.x;
    if (chunk > 0) {
      tile = block % tiles;
      m0 = (block / tiles) * chunk;
      m1 = min(m0 + chunk, planes);
      return k == 0;
    }
    if (k < rounds) {
      tile = k * blocks + block;
      m0 = 0;
      m1 = planes;
      return true;
    }
    const std::int64_t first = rounds * blocks, rest = (tiles - first) * planes;
    const std::int64_t start = rest * block / blocks, end = rest * (block + 1) / blocks;
    const std::int64_t t = start / planes + (k - rounds);
    m0 = k == rounds ? start - (start / planes) * planes : 0;
    m1 = min(planes, end - t * planes);
    tile = first + t;
    return m0 < m1;
  }
};

// How a 3D march's (tile, plane) pairs go to the blocks (MarchSplit): balanced shares, one
// wave of `slots` blocks (the resident blocks of the card) or fewer, so that a share holds at
// least the march's `fill` iterations of filling and draining; HEATSIM_TB_SPLIT=chunks takes
// the uniform chunks of march_chunk instead (the split before, kept for comparison).
inline MarchSplit march_split(std::int64_t tiles_x, std::int64_t tiles, std::int64_t planes,
                              int fill, std::int64_t slots, std::int64_t& blocks) {
  static const bool chunks = [] {
    const char* v = std::getenv("HEATSIM_TB_SPLIT");
    return v != nullptr && std::string(v) == "chunks";
  }();
  MarchSplit split{tiles_x, tiles, planes, 0, 0};
  if (chunks) {
    split.chunk = march_chunk(tiles, planes, (fill + 1) / 2, slots);
    blocks = tiles * ((planes + split.chunk - 1) / split.chunk);
    return split;
  }
  const std::int64_t work = tiles * planes;
  blocks = std::max<std::int64_t>(1, std::min(slots, work / std::max(fill, 1)));
  split.rounds = tiles / blocks;
  return split;
}

// f(tile, m0, m1) for each of the block's pieces, in order (one call site: the march is
// inlined once).
template <class F>
__device__ __forceinline__ void for_each_piece(const MarchSplit& s, F&& f) {
  std::int64_t tile, m0, m1;
  for (std::int64_t k = 0; s.piece(k, tile, m0, m1); ++k) f(tile, m0, m1);
}

}  // namespace heatsim::kernels::cuda
