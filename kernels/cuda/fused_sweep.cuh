// Both colours of one red-black Gauss-Seidel sweep of a compact 3D multigrid level (the finest:
// a diagonal and a conductance per axis, the smoother's in fp32) without periodic axes, in one
// launch and out of place: `out` receives what level_ops.cu's colour_kernel leaves in x after
// its two launches (colour `first`, then the other), bit for bit, and `in` (x before the sweep)
// is only read. A launch per colour reads every array once each (a colour's nodes share their
// sectors with the other's); this reads them once per sweep. Used by the CUDA level operations
// (level_ops.cu) and by the kernel lab (scripts/kernel-lab/mg_sweep_lab.cu), which times other
// tiles of the same code.
//
// A block owns a tile of Tile::pairs - 2 pairs of x nodes by Tile::rows - 2 rows and marches
// Tile::planes planes along z. Each thread holds one pair; in each pair and plane one node has
// the first colour and one the second. Ahead of the march, the first colour's new values of
// plane z + 1 are formed from `in` over the tile and a halo of one pair and one row (the halo
// formed again by the neighbouring block: the blocks share nothing) into a ring of planes in
// shared memory; then the second colour's nodes of plane z take their six neighbours (all of
// the first colour) from the ring, and both values of each pair are stored. The ring holds four
// planes, so one barrier per plane suffices: the slot written for plane z + 1 was last read at
// plane z - 1, before every thread's barrier of plane z. Every load of a node is issued before
// any of its values is used (a node off the grid or of no use reads node 0 alone, its result
// dropped), and the second colour's loads of plane z before that barrier, so that a thread's
// loads overlap instead of waiting on a branch (tile rows 8, 16 and 32 measured: 16 is fastest,
// docs/performance.md).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace heatsim::kernels::cuda {

// What a fused sweep reads of its level (device pointers, passed by value).
struct SweepLevel {
  long long n[3] = {1, 1, 1};
  const float* conductance32[3] = {nullptr, nullptr, nullptr};  // to the next node along each axis
  const double* diagonal32 = nullptr;  // the node term plus the fp32 conductances, in fp64
  const std::uint8_t* fixed = nullptr;
};

// A tile: `pairs` threads along x (one pair of nodes each; the outer two the halo), `rows`
// along y (the outer two the halo), `planes` planes along z per block.
template <int PAIRS = 32, int ROWS = 16, int PLANES = 32>
struct SweepTile {
  static constexpr int pairs = PAIRS, rows = ROWS, planes = PLANES, threads = PAIRS * ROWS;
  static_assert(PAIRS > 2 && ROWS > 2 && PLANES > 0, "a tile keeps no node");
  static dim3 grid(const SweepLevel& L) {
    constexpr long long nodes_x = 2 * (PAIRS - 2), rows_y = ROWS - 2;
    return dim3(static_cast<unsigned>((L.n[0] + nodes_x - 1) / nodes_x),
                static_cast<unsigned>((L.n[1] + rows_y - 1) / rows_y),
                static_cast<unsigned>((L.n[2] + PLANES - 1) / PLANES));
  }
};

// A node of a fused sweep with its own values: index, which neighbours exist (x-, x+, y-, y+,
// z-, z+), the smoother's conductances to them, fixed flag, old value, b and diagonal.
struct SweepNode {
  long long i = 0;
  bool there[6];
  float g[6];
  bool fixed = false;
  double xo = 0.0, b = 0.0, diagonal = 0.0;

  // colour_kernel's new value from the neighbours' values v (in visit_neighbours' order; a
  // missing one adds +0, the same bits as leaving it out); a fixed node keeps xo.
  __device__ double relaxed(const double (&v)[6], double omega) const {
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 6; ++k)
      s = __dadd_rn(s, there[k] ? __dmul_rn(static_cast<double>(g[k]), v[k]) : 0.0);
    const double gs = __ddiv_rn(__dadd_rn(b, s), diagonal);
    return fixed ? xo : __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
  }
};

// kZero: x is +0 on every node before the sweep (LevelOps::smooth_from_zero), and `in` is not
// read. Launched on Tile::grid(L) blocks of Tile::pairs x Tile::rows threads.
template <bool kZero, class Tile>
__global__ void __launch_bounds__(Tile::threads)
    fused_sweep_kernel(SweepLevel L, const double* __restrict__ b, const double* __restrict__ in,
                       double* __restrict__ out, int first, double omega) {
  constexpr int kPairs = Tile::pairs, kRows = Tile::rows;
  __shared__ double ring[4][kRows][kPairs];  // the first colour's new values
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const long long nx = L.n[0], ny = L.n[1], nz = L.n[2], plane = nx * ny;
  // This thread's pair: nodes x0 and x0 + 1 (x0 even) of row y.
  const long long x0 = 2 * (static_cast<long long>(blockIdx.x) * (kPairs - 2) + tx - 1);
  const long long y = static_cast<long long>(blockIdx.y) * (kRows - 2) + ty - 1;
  const long long z0 = static_cast<long long>(blockIdx.z) * Tile::planes;
  const long long z1 = min(z0 + Tile::planes, nz);
  const bool row = y >= 0 && y < ny;
  const bool inner = row && tx > 0 && tx < kPairs - 1 && ty > 0 && ty < kRows - 1;
  const float *gx = L.conductance32[0], *gy = L.conductance32[1], *gz = L.conductance32[2];
  const std::uint8_t* fixed = L.fixed;
  const double* diagonal = L.diagonal32;
  // Which node of the pair has the first colour on plane z: x0 + offset ((x + y + z) % 2).
  const auto offset = [&](long long z) { return static_cast<long long>((first + y + z) & 1); };
  const auto slot = [](long long z) { return static_cast<int>((z + 4) & 3); };
  // Node x of this thread's row on plane z, its own values loaded (node 0's where not `here`,
  // every neighbour then taken as missing).
  const auto sweep_node = [&](long long x, long long z, bool here) {
    SweepNode n;
    n.i = here ? z * plane + y * nx + x : 0;
    const long long i = n.i;
    n.there[0] = here && x > 0;
    n.there[1] = here && x < nx - 1;
    n.there[2] = here && y > 0;
    n.there[3] = here && y < ny - 1;
    n.there[4] = here && z > 0;
    n.there[5] = here && z < nz - 1;
    n.fixed = fixed[i] != 0;
    n.xo = kZero ? 0.0 : in[i];
    n.b = b[i];
    n.diagonal = diagonal[i];
    n.g[0] = gx[n.there[0] ? i - 1 : i];
    n.g[1] = gx[i];
    n.g[2] = gy[n.there[2] ? i - nx : i];
    n.g[3] = gy[i];
    n.g[4] = gz[n.there[4] ? i - plane : i];
    n.g[5] = gz[i];
    return n;
  };
  // The first colour's new value of this thread's pair on plane z, from `in`.
  const auto first_colour = [&](long long z) {
    const long long x = x0 + offset(z);
    const bool here = row && z >= 0 && z < nz && x >= 0 && x < nx;
    const SweepNode n = sweep_node(x, z, here);
    const auto old = [&](long long j) { return kZero ? 0.0 : in[j]; };
    const long long i = n.i;
    const double v0 = old(n.there[0] ? i - 1 : i), v1 = old(n.there[1] ? i + 1 : i);
    const double v2 = old(n.there[2] ? i - nx : i), v3 = old(n.there[3] ? i + nx : i);
    const double v4 = old(n.there[4] ? i - plane : i), v5 = old(n.there[5] ? i + plane : i);
    const double v = n.relaxed({v0, v1, v2, v3, v4, v5}, omega);
    ring[slot(z)][ty][tx] = here ? v : 0.0;
  };
  first_colour(z0 - 1);
  first_colour(z0);
  for (long long z = z0; z < z1; ++z) {
    // The second colour's node of plane z and its own values, loaded before the barrier.
    const long long o = offset(z);
    const long long base = z * plane + y * nx;
    const long long x = x0 + 1 - o;
    const bool mine = inner && x < nx;
    const SweepNode n = sweep_node(x, z, mine);
    first_colour(z + 1);
    __syncthreads();
    if (inner) {
      const int s0 = slot(z);
      if (x0 + o < nx) out[base + x0 + o] = ring[s0][ty][tx];
      if (mine) {
        // Its neighbours along x: the first colour's nodes of this pair and of the pair before
        // (o = 1) or after (o = 0) it.
        out[n.i] = n.relaxed(
            {ring[s0][ty][o ? tx - 1 : tx], ring[s0][ty][o ? tx : tx + 1], ring[s0][ty - 1][tx],
             ring[s0][ty + 1][tx], ring[slot(z - 1)][ty][tx], ring[slot(z + 1)][ty][tx]},
            omega);
      }
    }
  }
}

}  // namespace heatsim::kernels::cuda
