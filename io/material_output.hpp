// <output.directory>/materials.h5: what the run's coefficient fields are, written once per run
// of a case with fields (materials, sources, convective or heat-flux faces), in the field
// files' layout (datasets of rank dims, listed z, y, x; the grid attributes of docs/output.md),
// so the XDMF index lists them beside u at every step and ParaView colours and thresholds by
// material. Datasets: `material` (int32 id, the index into the attribute `materials`),
// `conductivity` k, `capacity` rho*c_p and `source_density` (the sum of the source fields at
// schedule factor 1, W/m^3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "field_file.hpp"
#include "kernels/backend.hpp"
#include "solver/case.hpp"

namespace heatsim::io {

inline constexpr const char* kMaterialFileName = "materials.h5";
// The datasets, in the order the XDMF index lists them.
inline constexpr const char* kMaterialDatasets[] = {"material", "conductivity", "capacity",
                                                    "source_density"};

// <dir>/materials.h5
std::string material_file_path(const solver::Case& c);

// Names of the material ids: the case's materials in order, or "physics" for the homogeneous
// shorthand (id 0: k = physics.alpha, rho*c_p = 1).
std::vector<std::string> material_names(const solver::Case& c);

struct MaterialFile {
  FieldMeta grid;  // dims, n, spacing, origin, version and case text (step, time: 0)
  std::vector<std::string> names;             // attribute `materials`, index = id
  std::vector<double> material_conductivity;  // per name (attribute)
  std::vector<double> material_capacity;      // per name (attribute)
  std::vector<std::int32_t> material;         // per node, memory order
  std::vector<double> conductivity, capacity, source_density;
};

// Writes the file crash-safely (temporary + fsync + rename). `ids` and the fields are per node
// in memory order. Throws std::runtime_error naming the file.
void write_material_file(const std::string& path, const solver::Case& c,
                         const std::vector<std::int32_t>& ids,
                         const kernels::CoefficientFields& fields);
// True when the file at `path` holds what write_material_file writes for these: the same grid,
// materials and per-node ids, coefficients and source density. False where anything differs or
// the file cannot be read.
bool material_file_matches(const std::string& path, const solver::Case& c,
                           const std::vector<std::int32_t>& ids,
                           const kernels::CoefficientFields& fields);
// Throws std::runtime_error naming the file when it is missing, unreadable or not a heatsim
// materials file.
MaterialFile read_material_file(const std::string& path);
// True when the file says it is a heatsim materials file (attribute `format`); false for any
// other file, readable or not.
bool is_material_file(const std::string& path);

}  // namespace heatsim::io
