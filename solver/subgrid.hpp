// Geometry below the grid: the regions' boxes, balls and `where` shapes sampled inside each
// node's control volume and along each face's segment, so that an interface anywhere between
// two nodes counts where it lies, not where the nearer node is (DESIGN.md "Materials").
//
// The rules (docs/case-format.md states them for users):
// - The material at a point is that of the last region containing it (boxes and balls closed;
//   `where` nonzero and not NaN); a point no region holds takes its nearest node's material.
// - The conductance of the face between node i and i + e_a is the series combination along a
//   line (h_a / integral of dx / k over the segment's length), combined in parallel across the
//   face of the control volume (the cross-section h_b x h_c around the segment, clipped to the
//   domain) where box bounds split that face: one line per piece, at its centre, weighted by
//   its area. A face no box bound splits takes the segment between the two nodes itself. Along
//   a line the material changes only at box bounds and ball surfaces, which are found exactly,
//   and inside `where` shapes, sampled at 8 points per spacing, the surface found by bisection
//   between two samples (or a sample and the line's end) that differ. So layers of boxes are
//   exact both across and along the axis (a layered wall's steady profile is exact at the
//   nodes; plane `where` layers across it are too, the split of a face's cross-section being
//   the boxes' alone), and
//   a curved surface enters as the distance from each node to it along the grid lines (the
//   Shortley-Weller distances): a ball's steady field converges at second order. (Averaging
//   lines across a face a curved surface cuts, 4 x 4 of them, was measured first order.)
// - A body node whose own point lies inside a void (the void holds part of its control volume,
//   the rest a sliver of body beyond the void's surface, less than half a spacing thick) is
//   joined to the body through the sliver alone: every segment from it crosses the void. It is
//   folded into the body nodes beside it that the sliver reaches (their segments' void at its
//   end not counted, weighted by those conductances; a corner's, between two sides' slivers,
//   where those go): its capacity, its shares of sources and surfaces, and its faces, moved over
//   by the node's offset, so that the surface's heat reaches the body it bounds. Bounds on node
//   planes and halfway between them cut no such sliver.
// - A node's heat capacity, and the share of a source shape's density it takes, are averages
//   over its control volume (half or a quarter of a cell at a face), sampled at the centres of
//   a 4-per-axis split refined at box bounds. One material (and no void) gives its capacity
//   to every node unsampled; with one material and no void a source's share is sampled only
//   where the source's own surface passes.
// - A part of a node's control volume beyond an interface from it (another material than the
//   node's, not a void) holds its capacity and its share of the sources for the neighbour node
//   of that material along the axis on which the part lies farthest from the node: beyond a
//   contact the whole part, so that its heat crosses R'' as in the body (left at the node it
//   bypassed R'': first order in the spacing); without one, the share R_i / (R_i + R_j) of it,
//   R_i and R_j the resistances along the axis from the node and from the neighbour to the
//   part's centre, as the part's temperature lies between theirs in a steady line. So a heated
//   layer's sliver in a poor conductor's control volume heats the layer (whose node takes
//   almost all of it), not the poor conductor's node, whose material the heat would have to
//   cross; a poor conductor's sliver beside a good one mostly stays. Without a contact, an
//   interface through the node's own point leaves both sides with it (the node is the
//   interface's). A node that would keep less than a quarter of its control volume keeps its
//   parts; the totals stay as sampled.
// - Only nodes near a surface are sampled: a node whose neighbourhood (one spacing each way)
//   no box or ball surface crosses, and whose 3^d neighbours a `where` shape holds all or none
//   of, takes its node material throughout. `where` features thinner than a spacing between
//   nodes can be missed.
// - Cases with a file region (a per-node material map) keep per-node materials: the map is the
//   geometry at the grid's resolution. Their sources, and the shorthand's, take 1 at the nodes
//   inside; every other case with materials samples its source shapes, even where no region
//   is shaped (samples_source_shapes).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver {

// Whether the case's materials are sampled below the grid: materials with a box, ball or
// `where` region, and no file region.
bool samples_subgrid(const Case& c);

// For probes at points[p], each in the grid cell whose lower corner is node lower[p] (memory
// order), t[p] the fraction of the way across the cell on each axis: per probe and active
// axis, the share of the series resistance (integral of dx/k, and the contacts met) of the line
// along that axis through the point, from the lower node's plane to the upper's, that lies
// before the point; t[p] itself where the line is one material, holds a void, or the materials
// are not sampled below the grid (samples_subgrid). In a layered wall the steady temperature
// between two nodes follows it. The shapes are prepared once for all the points.
std::vector<std::array<double, 3>> resistance_fractions(
    const Case& c, const std::vector<std::int32_t>& ids,
    const std::vector<std::array<double, 3>>& points, const std::vector<std::int64_t>& lower,
    const std::vector<std::array<double, 3>>& t);

// Whether the sources' box, ball and `where` shapes are sampled below the grid (a share of
// each node's control volume): any case with materials and no file region, whether or not a
// region is shaped. The shorthand without materials, and a case with a file region, take 1 at
// the nodes inside.
bool samples_source_shapes(const Case& c);

// A sliver (the rules above: a body node whose own point lies inside a void) and the body
// nodes beside it it is folded into, with their shares (summing to 1).
struct SliverFold {
  std::int64_t node = 0;
  std::vector<std::pair<std::int64_t, double>> takers;
};

// The slivers of the case's voids and where each goes (`ids`: material_ids(c)); empty without
// a void or a sliver. A scan of the nodes near a surface: found once per run (void_surfaces
// keeps them) for the capacities, the voids' surfaces and the sources' shares, which each
// find them themselves where they are not given.
std::vector<SliverFold> sliver_folds(const Case& c, const std::vector<std::int32_t>& ids);

// The sampled fields for `ids` (material_ids(c)): the faces' conductances and the nodes'
// capacities. `faces` stays empty when no node lies near a surface (every face then is inside
// one material, the harmonic mean's value). `slivers`: sliver_folds(c, ids), or null.
struct SubgridMaterials {
  std::array<std::vector<double>, 3> faces;
  std::vector<double> capacity;
};
SubgridMaterials subgrid_materials(const Case& c, const std::vector<std::int32_t>& ids,
                                   const std::vector<SliverFold>* slivers = nullptr);

// Per node, the area of void region `region`'s surface that faces the body inside the node's
// control volume, over the control volume's volume (1/m; a 2D grid's surfaces are lines of
// 1 m depth, a 1D grid's points of 1 m^2): the true boundary between the void and the body.
// The void's box faces or ball sphere, cut in elements an eighth of a spacing across (a box's
// faces at the multiples of an eighth of each axis's spacing, so that no element straddles two
// control volumes, and at every region's box bounds, so that a painted box's share is exact),
// each going, where the point just outside it is body (not a void, inside the domain) and the point
// just inside it really void (no later region, void or material, holds it), to the node whose
// control volume holds the outside point: a surface halfway between two nodes goes to the
// body's one. And the sides of every box or ball material painted after the void that lie
// inside it (fins over an "air" void), cut alike (a box's faces at the void's bounds too), each
// element counting where the point just outside the painted shape is this void's (inside it,
// in the domain, held by no region after the void) and going to the node whose control volume
// holds the point just inside it, where that is body. `where` shapes painted inside a void add
// no surface. Throws std::invalid_argument for a `where` void. `slivers`: sliver_folds(c, ids),
// or null.
// `resistance` (when given): per node, the thermal resistance (m^2 K/W) of the body between
// the node and its part of the surface: the mean distance from the node to its elements along
// their normals into the body (area-weighted, after the folds, each share measured from the
// node it went to; at least 0) over the node's material's conductivity along those normals;
// 0 where the node holds none, or its conductivity varies with temperature.
std::vector<double> surface_per_volume(const Case& c, const std::vector<std::int32_t>& ids,
                                       std::size_t region,
                                       const std::vector<SliverFold>* slivers = nullptr,
                                       std::vector<double>* distance = nullptr);

// The surfaces of a case's box and ball voids, found once per run and shared by everything
// that needs them (the coefficient fields, `validate`, the heat-flow reports, the checks of the
// geometry): per void, surface_per_volume's nonzero values with their nodes.
struct VoidSurface {
  std::size_t region = 0;           // index into Case::regions
  std::vector<std::int64_t> nodes;  // ascending
  std::vector<double> per_volume;   // 1/m, one per node
  // A convective surface's area per volume as its convection sees it (1/m, one per node): the
  // node's share times 1 / (1 + h d / k), the body between the node and its part of the
  // surface (d, the mean distance along the normals; k, the node's material's conductivity
  // along them) in series with the film, so that a surface between node planes passes the
  // heat a surface there does (exact for heat crossing it along a grid line). Equal to
  // per_volume where d = 0, for other conditions, and for a material whose conductivity
  // varies with temperature (its law's value at the node is not known at set-up).
  std::vector<double> convective_per_volume;
  // The area facing the body (m^2; m per metre of depth in 2D; 1 per m^2 of section in 1D):
  // per_volume times the nodes' weights and the cell volume, as the total heat weighs nodes.
  double area = 0.0;
};
// An outer face that a void reaches, whose condition passes heat (convective, radiative or a
// heat flux): its ghost rule acts on the whole face of each boundary node's control volume
// (2 / h_a of area per unit volume, at a node it steps), of which the void holds part. Per
// node, the body's area of the face over the control volume less what the ghost rule counts
// there (1/m): negative at the nodes beside the void (minus the void's share of their face);
// positive at the body nodes that a node inside the void, or a folded sliver, hands its share
// of the face to (fold_void_nodes, sliver folds), as its capacity goes. Each node's face is cut
// in elements an eighth of a spacing across and at the boxes' bounds (so a box void's share is
// exact), sampled just inside the domain. The coefficient fields take the excess times the
// face's law (materials.cpp), the heat-flow report counts it in the face's flow.
struct FaceCut {
  int face = 0;                     // 2 * axis + side
  std::vector<std::int64_t> nodes;  // ascending
  std::vector<double> excess;       // 1/m, one per node
};
struct VoidSurfaces {
  std::vector<VoidSurface> voids;  // in region order; `where` voids have none
  std::vector<FaceCut> faces;      // in face order; only the faces a void reaches
  // The slivers of every void (sliver_folds), found with the surfaces where the case has a
  // void and samples below the grid; nullopt where none was looked for.
  std::optional<std::vector<SliverFold>> slivers;
  // The slivers' folds to pass on (null: not found here).
  const std::vector<SliverFold>* folds() const { return slivers ? &*slivers : nullptr; }
  // The surface of region `region`, or null (not a box or ball void).
  const VoidSurface* find(std::size_t region) const;
};
// `ids`: material_ids(c).
VoidSurfaces void_surfaces(const Case& c, const std::vector<std::int32_t>& ids);

// coefficient_fields(c, ids) of materials.hpp with the voids' surfaces given (the form without
// them finds them itself), so that a run finds them once. Defined in materials.cpp.
std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(
    const Case& c, const std::vector<std::int32_t>& ids, const VoidSurfaces& surfaces);

// The fraction of each node's control volume that `shape` holds and no void does, sampled as
// the capacities are, the parts beyond an interface moved as theirs (their weighted total is the
// shape's sampled volume): 0 or 1 away from surfaces (`ids`: material_ids(c); `slivers`:
// sliver_folds(c, ids), or null).
std::vector<double> subgrid_fractions(const Case& c, const ShapeSpec& shape,
                                      const std::vector<std::int32_t>& ids,
                                      const std::vector<SliverFold>* slivers = nullptr);

}  // namespace heatsim::solver
