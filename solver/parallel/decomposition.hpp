// Cartesian domain decomposition with overlapping blocks (docs/parallel.md).
//
// The grid is split into px*py*pz owned boxes, one per rank (rank = cx + px*(cy + py*cz)).
// Each rank steps a normal heatsim problem on its owned box extended by `halo` = k*r layers on
// every side that has a neighbour rank (k the steps between exchanges, r the stencil radius).
// The extra layers are ordinary nodes of the local grid; the local face beyond them is a
// placeholder (a Dirichlet face at 0). Why this is exact: one step changes a node from the
// values within r of it, so a wrong value at the placeholder face reaches r layers further per
// step; after k steps it has reached at most k*r layers, the overlap, and every owned node has
// gone through exactly the arithmetic of the serial run on exactly the same inputs, so it is
// bit for bit the serial value. Then the ranks exchange: each sends its owned layers next to a
// neighbour into that neighbour's overlap, axis after axis (x, then y including the x overlap,
// then z), so edges and corners arrive too, and the overlaps are right again.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim::solver::parallel {

// A grid the ranks cannot split as asked: found alike on every rank (it depends only on the
// grid, the rank count and the case's parallel section), so that the run refuses it once.
class DecompositionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A box of grid nodes: lower corner and extent per axis (x, y, z; extent 1 on unused axes).
struct Box {
  std::array<std::int64_t, 3> lo{0, 0, 0};
  std::array<std::int64_t, 3> extent{1, 1, 1};
  std::int64_t points() const { return extent[0] * extent[1] * extent[2]; }
};

class Decomposition {
 public:
  Decomposition() = default;
  // Splits the problem's grid over `ranks` ranks with overlap `halo`. `procs[a]` > 0 fixes the
  // number of ranks along axis a; 0 leaves it to MPI_Dims_create-style balancing (more ranks
  // along the longer axes). Throws std::invalid_argument when the product is not `ranks`, an
  // unused axis is split, or an owned box is thinner than the halo along a split axis.
  Decomposition(const kernels::StencilProblem& global, int ranks, int rank, int halo,
                std::array<int, 3> procs = {0, 0, 0});

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  int halo() const { return halo_; }
  const std::array<int, 3>& procs() const { return procs_; }
  std::array<int, 3> coords(int rank) const;
  int rank_at(std::array<int, 3> coords) const;
  // The neighbour rank across the low (side 0) or high (side 1) face along axis; -1 when the
  // face is the grid's own (a periodic axis wraps).
  int neighbour(int axis, int side, int rank) const;
  int neighbour(int axis, int side) const { return neighbour(axis, side, rank_); }
  // Global index ranges.
  Box owned(int rank) const;
  Box owned() const { return owned(rank_); }
  Box local(int rank) const;  // owned plus the overlaps
  Box local() const { return local(rank_); }
  // Layers of overlap on the low / high side of axis for this rank (0 or halo).
  std::int64_t overlap(int axis, int side) const;
  const std::array<std::int64_t, 3>& global_n() const { return n_; }

 private:
  std::array<std::int64_t, 3> owned_range(int axis, int c) const;  // {begin, end}

  int dims_ = 1, ranks_ = 1, rank_ = 0, halo_ = 1;
  std::array<int, 3> procs_{1, 1, 1};
  std::array<std::int64_t, 3> n_{1, 1, 1};
  std::array<bool, 3> periodic_{false, false, false};
};

// The pieces of `steps` steps from step0 that a decomposed run advances between exchanges: at
// most `every` steps each, every piece but the last ending on a multiple of `every` (absolute
// step numbers). With `every` a multiple of the fusion depth, a rank's backend then makes the
// serial run's passes, which start on multiples of the depth: a piece from step 20 to 30 at
// depth 3 would otherwise be cut at 23 and take singles at 21 and 22 where the serial run
// fuses 21-23.
struct Piece {
  std::int64_t steps = 0, step0 = 0;
};
std::vector<Piece> exchange_pieces(std::int64_t steps, std::int64_t step0, int every);

// The rank's local problem: the global problem on the local box, placeholder Dirichlet faces
// (marked in StencilProblem::placeholder) where a neighbour rank lies beyond (on a split
// periodic axis: both ends), coefficient and
// source fields cut from the global ones. Everything else (stencil, spacing, dt, schedules,
// fusion) is the global problem's.
kernels::StencilProblem local_problem(const kernels::StencilProblem& global,
                                      const Decomposition& d);

// The values of `box` from a field of grid `n` (memory order), and back.
std::vector<double> extract_box(const std::vector<double>& field,
                                const std::array<std::int64_t, 3>& n, const Box& box);
void insert_box(std::vector<double>& field, const std::array<std::int64_t, 3>& n, const Box& box,
                const std::vector<double>& values);
// `values` cut into consecutive pieces the sizes of `boxes`, each inserted into `field` (what a
// gather of every rank's box in rank order gives back).
void insert_boxes(std::vector<double>& field, const std::array<std::int64_t, 3>& n,
                  const std::vector<Box>& boxes, const std::vector<double>& values);
// `box` relative to `origin` (a box inside a local grid whose global corner is origin).
Box relative(const Box& box, const Box& origin);

}  // namespace heatsim::solver::parallel
