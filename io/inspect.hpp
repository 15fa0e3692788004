// `heatsim inspect FILE`: what an output or checkpoint file holds, for people.
#pragma once

#include <ostream>
#include <string>

namespace heatsim::io {

// Prints kind, step, time, dt, grid, spacing, origin, min/max of the field, precision,
// scheme, backend, alpha, heatsim version, checksum state and the case YAML (provenance), and
// the run's materials.h5 when it lies beside the file. The min/max leaves out the nodes that
// materials.h5 gives capacity 0 (voids), as the run's statistics do; a case with voids and no
// materials.h5 of the same run beside it says its min/max counts every node. A materials.h5
// itself: its materials (id, name, conductivity, capacity, node count; -2 is "void") and the
// ranges of its coefficient fields.
// Throws std::runtime_error naming the file when it cannot be read (or fails its checksum).
void inspect_file(const std::string& path, std::ostream& out);

}  // namespace heatsim::io
