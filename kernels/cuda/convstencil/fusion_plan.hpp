// Host-side planning for the convstencil backend: the fused operator S^k, which faces it
// is exact at, and the lookup tables that turn a stencil into tensor-core MMAs.
// Nothing here touches the device; the launcher uploads what these functions compute.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "../../backend.hpp"

namespace heatsim::kernels::convstencil {

// S^k: the stencil convolved with itself k times (radius k*r). Structural zeros stay exact
// zeros, so a fused star keeps its sparsity (Heat-2D fused 3x is the radius-3 diamond).
Stencil fuse_stencil(const Stencil& s, int k);

// The source term of k fused steps. One step is u <- S u + c; on a field extended by the
// exact ghost rules a constant c stays constant under S up to the factor sigma = sum of the
// weights, so k steps add c * (1 + sigma + ... + sigma^(k-1)).
double fused_source(const Stencil& s, double source_increment, int k);

// Whether S^k computed from ghosts of width k*r (filled once, by the constant-weight rules of
// boundary_rules.hpp at the pass's first time level) equals k single steps at the nodes within
// k*r of `face` (boundary_rules.hpp: constant_rule_exact_under_fusion). See
// docs/convstencil.md for the argument; in short: the ghost rules extend the field by a
// reflection (or a period), and a pass is exact when S maps every extended field to the
// extension of its image, so that re-filling the ghosts between steps changes nothing.
//   periodic: always (S commutes with the shift by one period);
//   neumann:  S mirror-symmetric with weights summing to 1 (the even part stays even, the
//             linear flux part is reproduced; a constant source is even);
//   dirichlet: S mirror-symmetric, weights summing to 1, g constant in time and no source
//             (the odd reflection about g is reproduced only without them);
// and, for non-periodic faces, where the face meets a face of another axis the two
// reflections must compose consistently (Dirichlet faces with the same constant g, Neumann
// faces, or a Dirichlet face and a zero-flux Neumann face).
bool face_is_exact_under_fusion(const StencilProblem& p, int face);

// The tile geometry and lookup tables of one stencil for the MMA kernel.
//
// The kernel computes, per warp, a unit of 8 output rows x 8 consecutive outputs along x
// with mma.m8n8k4 (fp64): D(8x8) += A(8x4) B(4x8). Row m of A is a stretch of 4 inputs of
// the m-th row of the shared tile (the stencil2row view: tile rows are the rows of the
// input matrix), and B holds 4 rows of one weight band. For one line (dz, dy) of the
// stencil with taps dx in [dmin, dmax], output n of the unit needs inputs n+dmin..n+dmax,
// so the line is the banded Toeplitz matrix W[i][n] = w(i + dmin - n) of (dmax-dmin+8) x 8
// entries, split into chunks of 4 rows. Its top rows form a lower-triangular block and its
// bottom rows an upper-triangular one: ConvStencil's two triangular weight matrices of the
// dual tessellation, joined by full rows when the line is longer than 7 taps. The two
// halves are summed in the accumulator, never stored apart.
//
// Per chunk c the host computes the shared-memory offset of its first input (line dz, dy
// and band position; the lookup table, one row per ring phase in 3D) and the B fragment
// each lane holds (32 values). Tile rows are padded to a pitch = 4 (mod 16) doubles, so the
// 4 rows a half-warp reads fall on distinct banks; the pad and the tile's ragged edges hold
// "dirty" data loaded without bounds checks and are only ever multiplied by zero weights or
// never stored.
struct TilePlan {
  int dims = 2;
  int radius = 1;     // radius of the (fused) stencil along x
  int ry = 0, rz = 0; // radius along y and z (0 where the axis is inactive)
  int tile_x = 64;    // outputs per tile row (multiple of 8)
  int tile_y = 32;    // tile rows of outputs (multiple of 8); in 1D: segments of tile_x
  int rows = 0;       // shared rows per plane: tile_y + 2*ry
  int pitch = 0;      // doubles per shared row, = 4 (mod 16)
  int slots = 2;      // planes in shared memory: 3D 2*rz + 2, 1D and 2D 2 (one prefetched)
  int warps = 8;      // each warp owns pairs of units stacked along the rows
  int chunks = 0;
  std::vector<int> offsets;      // [slots][chunks]: shared offset of chunk c at ring phase
  std::vector<double> fragments; // [chunks][32]: B fragment of lane l for chunk c
  bool fragments_in_shared = false;  // too many chunks to hold B in registers
  std::size_t shared_bytes = 0;
  int plane_elems() const { return rows * pitch; }
  int units() const { return (tile_x / 8) * (tile_y / 8); }
};

// Chunks up to this count keep their B fragments in registers (two per chunk).
constexpr int kMaxRegisterChunks = 64;

TilePlan make_tile_plan(const Stencil& s, int tile_x, int tile_y);

// The tile shape the launcher uses for a stencil of this dimension and radius.
TilePlan plan_for(const Stencil& s);

}  // namespace heatsim::kernels::convstencil
