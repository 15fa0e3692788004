// Real problems on the node grid: which material each node holds, the coefficient fields the
// backends step with (conductivity, heat capacity, source densities), the stability limit those
// fields set, and per-material summaries. Files named by the case (material maps, source
// fields) are read by io/ into RegionSpec::map and SourceSpec::density first; nothing here
// touches HDF5.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver {

// The material index (into Case::materials, or 0 for the homogeneous shorthand) of every node
// in memory order. Throws std::invalid_argument when a node is left without a material ("1200
// nodes have no material, e.g. the node at x = 0.1, y = 0.2"), when a region names an unknown
// material, or when a `where` formula does not compile (the message names regions[i]).
// A node is inside a box or ball when it lies within 1e-9 of a spacing of the bounds (so a
// bound written as a node's decimal coordinate takes that node in), inside a `where` when the
// formula is nonzero and not NaN. No materials and no regions: every node is 0.
std::vector<std::int32_t> material_ids(const Case& c);
// The id of a node a void region holds (no material: k = rho c_p = 0 there).
constexpr std::int32_t kVoid = -2;
// How far inside the domain, in spacings, a `where` shape is tested for a node on a face of the
// domain (material_ids), and a face's line along such a face lies (the sub-grid sampling):
// a surface on the domain's face itself (a layer of no thickness, as floor(x / c) makes at
// x = L when c divides L) decides neither. Far beyond the 1e-11 of a spacing to which a `where`
// surface is found along a line, far below what moves a surface's crossings measurably.
constexpr double kFaceInset = 1e-6;

// The fields of kernels::CoefficientFields for the case: k and rho*c_p per node from the
// materials (or k = physics.alpha, rho*c_p = 1), the sources' densities grouped by schedule
// (sources with equal schedules share one field; a constant physics.source is a field too).
// Throws std::invalid_argument as material_ids does, and when more than
// kernels::kMaxSourceFields distinct schedules remain.
// physics.source f keeps its meaning u_t = ... + f: it becomes the constant source
// q = f * rho*c_p (q = f in the shorthand). `power` P over a shape gives q = P / (sum of the
// shape's node weights * cell_volume(c)), the node weights those of FieldStats::total_heat.
std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(const Case& c);
std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(
    const Case& c, const std::vector<std::int32_t>& ids);

// The explicit stability limit of the fields (Gershgorin): min over nodes of
// rho*c_p / (sum of the node's conductances / h^2, boundary ghosts and convective transfer
// included). `node` is the memory-order index of the node that sets it.
struct FieldStability {
  double dt_limit = 0.0;
  std::int64_t node = 0;
};
// Temperature-dependent materials count at their tables' worst case (the largest
// conductivity, the smallest capacity), radiating faces with 4 eps sigma T^3 at
// hottest_named_temperature(c).
FieldStability field_stability(const Case& c, const kernels::CoefficientFields& fields);
// The highest temperature the case names: Dirichlet values, ambients of faces and voids' surfaces
// (with their amplitude), the initial field's largest value (constant, box, gaussian and modes;
// not an expression's or a file's), the materials' table temperatures and liquidus.
double hottest_named_temperature(const Case& c);

// min / max / mean temperature per material over a field in memory order (mean weighted as
// the total heat weighs nodes, without the capacity). One entry per material in case order
// (one named "physics" for the shorthand); a material with no node has nodes = 0 and zeros.
struct MaterialSummary {
  std::string name;
  std::int64_t nodes = 0;
  double min = 0.0, max = 0.0, mean = 0.0;
};
std::vector<MaterialSummary> summarize_materials(const Case& c,
                                                 const std::vector<std::int32_t>& ids,
                                                 const std::vector<double>& u);

// "x = 0.1, y = 0.2": where the node of memory-order index `node` lies (active axes only).
std::string node_location(const Case& c, std::int64_t node);
// The volume one node stands for away from the faces: the product of the active axes' spacings.
double cell_volume(const Case& c);
// The node's trapezoidal weight, as FieldStats::total_heat weighs it: 1/2 per non-periodic
// axis on which it is an end node.
double node_weight(const Case& c, std::int64_t node);

}  // namespace heatsim::solver
