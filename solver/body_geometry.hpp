// What the voids do to the body, for the checks of a case's geometry (io/ words them, with key
// paths and lines): the pieces they cut the body into, and whether two shapes overlap.
#pragma once

#include <cstdint>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver {

// A piece of the body: nodes with heat capacity joined by faces that conduct (a face's
// conductance > 0, across a periodic seam too), no face joining it to another piece.
struct BodyPiece {
  std::int64_t nodes = 0;
  std::int64_t first = 0;  // its first node in memory order
  // Its temperature is tied to something outside it: it holds a Dirichlet node, or loses heat
  // by convection or radiation (a face or a void surface with h > 0 or an emissivity).
  bool anchored = false;
  // A source or a heat flux (a face's or a void surface's) puts heat into it: where it is not
  // anchored, no steady state exists (set for pieces found apart, not for a one-piece body).
  bool heated = false;
  // Every node's control volume is partly void: the piece is slivers of the body that a void's
  // bound leaves in nodes whose faces all cross a void (a bound less than half a spacing past a
  // node, on the void's side), not a part of the body the voids cut off.
  bool slivers = false;
  // The void regions beside it (indices into Case::regions, ascending): the regions of the
  // void nodes next to its nodes, each the last void region whose shape holds the node.
  std::vector<std::size_t> voids;
};

// The pieces of the body of a case with coefficient fields (`ids`: material_ids(c)), in the
// order of their first nodes.
std::vector<BodyPiece> body_pieces(const Case& c, const kernels::CoefficientFields& fields,
                                   const std::vector<std::int32_t>& ids);

// Whether shapes `a` and `b` share some volume inside the domain: boxes and balls exactly (a
// box clipped to the domain; touching is not overlapping), a `where` shape at the nodes (a
// node both hold). File shapes are not looked at (false).
bool shapes_overlap(const Case& c, const ShapeSpec& a, const ShapeSpec& b);

}  // namespace heatsim::solver
