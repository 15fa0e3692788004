// Deflation of strongly conducting pieces: a second coarse space beside the hierarchy, for the
// modes a structured coarsening cannot represent.
//
// A body of strongly conducting pieces that barely touch (a checkerboard of k = 1 and 1e4
// cubes, inclusions in a weak matrix) has one near-null mode per piece: the piece's
// temperature shifted as a whole, which its weak surroundings barely resist. The hierarchy's
// operator-dependent interpolation carries such shifts only where the pieces' bounds fall on
// coarse planes; elsewhere the differences between pieces stay in the error, and PCG took a
// hundred iterations or more for them (docs/performance.md, "Multigrid on coefficient jumps").
// Here each piece spans one vector of a coarse space Z, solved exactly: Q = Z (Z^T A Z)^-1 Z^T,
// and the preconditioner is the symmetric product of Q, the V-cycle and Q again (the error
// propagator (I - Q A)(I - M A)(I - Q A), as balancing and deflated PCG combine a coarse
// space with a preconditioner; Tang, Nabben, Vuik and Erlangga, J. Sci. Comput. 39, 2009).
// PCG turns it on only once a solve proves slow (multigrid.hpp, kDeflationTrial).
//
// Z's vectors are the pieces' indicators smoothed by kDeflationSteps Jacobi steps,
// Z = S^steps Z0 with S = I - omega D^-1 A (D the diagonal of A): a bare indicator jumps from 1
// to 0 across the weak links around its piece, where the true mode falls off over a few nodes,
// and the smoothing extends it there (as smoothed aggregation does). Z is never stored: Z c =
// S^steps (Z0 c) and Z^T v = Z0^T (S^T)^steps v run as operator applications, and only the
// pieces' numbers (one per node) live with the backend.
//
// The pieces: free nodes joined by links whose conductance is at least 1/kStrongRatio of the
// largest along their axis, where that largest is at least kStrongRatio times the smallest (a
// contrast; a one-material body has none). Only pieces of kMinPieceNodes nodes or more count,
// the kMaxPieces largest of them, and only where there are two or more: one inclusion alone
// is a mode the hierarchy does carry (the copper ball converges as the homogeneous cube does).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

constexpr double kStrongRatio = 100.0;
constexpr std::int64_t kMaxPieces = 1024;
constexpr std::int64_t kMinPieceNodes = 8;
// Two undamped steps: the damped ones (omega 2/3) reach less far, and took 20 and 26 iterations
// where these take 17 and 23 (the checkerboard at 64^3 and 128^3, docs/performance.md).
constexpr int kDeflationSteps = 2;
constexpr double kDeflationOmega = 1.0;

struct Deflation {
  // Per node of the finest level: its piece (0 .. pieces - 1), or -1.
  std::vector<std::int32_t> piece;
  std::int64_t pieces = 0;
  // 1 / D_i on the free nodes, 0 on the fixed ones.
  std::vector<double> inverse_diagonal;
  // The Cholesky factor L of E = Z^T A Z (row-major, lower triangle).
  std::vector<double> factor;

  bool empty() const { return pieces == 0; }
  // c = E^-1 s in place.
  void solve(std::vector<double>& s) const;
};

// The pieces of `level` (the compact finest level) and E's factor; empty when the operator has
// no contrast, fewer than two pieces qualify, or E is not positive definite (to rounding).
Deflation find_deflation(const kernels::LevelOperator& level);

}  // namespace heatsim::solver::multigrid
