// Probes: the temperature at named points between the nodes, as the multilinear interpolation
// of the 2^dims nodes of the grid cell that holds each point (exact for fields linear in each
// coordinate). The stencils are computed once from the case's grid; a run gathers only their
// nodes from the backend (kernels::Backend::sample) and combines them here.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "case.hpp"

namespace heatsim::solver {

// One point's interpolation: the memory-order indices ([z][y][x]) of the corner nodes of its
// cell, the fraction t in [0, 1] of the way across the cell on each active axis, and the
// corners' weights (products of (1 - t) and t; they sum to 1). Corner c takes the upper node
// on axis a when bit a of c is set. The value is computed as successive linear interpolations
// u0 + t (u1 - u0), axis by axis, which equal the weighted sum and give a constant field back
// exactly.
struct ProbeStencil {
  std::string name;
  std::array<double, 3> point{0, 0, 0};
  std::vector<std::int64_t> nodes;  // 2^dims entries
  std::vector<double> weights;      // same order
  std::array<double, 3> fraction{0, 0, 0};
  // Some corners lie in a void (weight 0, the others' renormalised to sum to 1): the value is
  // the weighted sum instead of the successive interpolations.
  bool partial = false;
};

// The stencil of one point. Coordinates of the active axes must lie in [0, length] (a
// rounding's worth beyond is taken as the face); on a periodic axis a point in the last
// cell [length - h, length] interpolates between the last node and node 0 (the axis wraps).
// Throws std::invalid_argument naming `probes.points.<name>` when the point is outside the
// domain or not finite.
ProbeStencil probe_stencil(const Case& c, const std::string& name,
                           const std::array<double, 3>& point);
// The stencils of every point in c.probes, in the case's order. With the nodes' materials
// (`ids`, material_ids(c)) where they are sampled below the grid, the fraction across the cell
// on each axis is the share of the series resistance along that axis before the point
// (resistance_fractions in subgrid.hpp) rather than of the distance: across an interface the
// temperature between two nodes follows the materials' resistances (a layered wall's steady
// profile exactly), and within one material it is the distance's, bit for bit. With the nodes' heat
// capacities (memory order; null: every node is body), corners in a void (capacity 0: nothing
// is solved there, the node keeps its initial value) take no weight and the body corners' are
// renormalised, so a point at a void's surface reads the body beside it. Points outside the
// domain, or whose corners all lie in voids, throw ProbeErrors naming every one of them.
struct ProbeErrors : std::invalid_argument {
  // Per point refused: its key ("probes.points.<name>") and what is wrong with it.
  std::vector<std::pair<std::string, std::string>> all;
  explicit ProbeErrors(std::vector<std::pair<std::string, std::string>> errors);
};
std::vector<ProbeStencil> probe_stencils(const Case& c,
                                         const std::vector<double>* capacity = nullptr,
                                         const std::vector<std::int32_t>* ids = nullptr);

// The interpolated value of a full field (memory order, c's grid).
double interpolate(const ProbeStencil& stencil, const std::vector<double>& field);

// The probes of a run: the distinct nodes every stencil needs, in ascending order (what
// Backend::sample gathers), and the values combined from what was gathered.
class ProbeSampler {
 public:
  explicit ProbeSampler(std::vector<ProbeStencil> stencils);
  const std::vector<ProbeStencil>& stencils() const { return stencils_; }
  std::vector<std::string> names() const;
  const std::vector<std::int64_t>& nodes() const { return nodes_; }
  // node_values[i] is the value at nodes()[i]; returns one value per probe (the same as
  // interpolate() on the full field, bit for bit).
  std::vector<double> values(const std::vector<double>& node_values) const;

 private:
  std::vector<ProbeStencil> stencils_;
  std::vector<std::int64_t> nodes_;
  std::vector<std::vector<std::size_t>> slots_;  // per probe: positions in nodes_
};

}  // namespace heatsim::solver
