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
std::vector<std::int32_t> material_ids(const Case& c);

// The fields of kernels::CoefficientFields for the case: k and rho*c_p per node from the
// materials (or k = physics.alpha, rho*c_p = 1), the sources' densities grouped by schedule
// (sources with equal schedules share one field; a constant physics.source is a field too).
// Throws std::invalid_argument as material_ids does, and when more than
// kernels::kMaxSourceFields distinct schedules remain.
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
FieldStability field_stability(const Case& c, const kernels::CoefficientFields& fields);

// min / max / mean temperature per material over a field in memory order (mean weighted as
// the total heat weighs nodes, without the capacity).
struct MaterialSummary {
  std::string name;
  std::int64_t nodes = 0;
  double min = 0.0, max = 0.0, mean = 0.0;
};
std::vector<MaterialSummary> summarize_materials(const Case& c,
                                                 const std::vector<std::int32_t>& ids,
                                                 const std::vector<double>& u);

}  // namespace heatsim::solver
