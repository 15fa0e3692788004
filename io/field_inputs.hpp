// The files a case names for its materials and sources (initial: {type: file} has its own,
// io/initial_file.hpp): a file region's integer material map and a file source's density
// (W/m^3 per node). Each is a dataset of any HDF5 file whose dimensions are the grid's, listed
// z, y, x (dimensions of 1 in front are ignored).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solver/case.hpp"

namespace heatsim::io {

// Why a file named by the case cannot give its field, and the key it concerns
// ("regions[2].file.path", "sources[0].file.dataset", "regions[2].file.ids").
struct FieldInputProblem {
  std::string key;
  std::string message;
};

// Every problem of the files the case names: missing or unreadable, no such dataset, the wrong
// dimensions, a region map that does not hold integers or holds an id that its `ids` does not
// name. Region maps are read whole (the ids need their values); source files are checked from
// their structure (their values are read, and checked finite, by read_field_inputs).
std::vector<FieldInputProblem> field_input_problems(const solver::Case& c);

// Reads every file region's map into RegionSpec::map and every file source's density into
// SourceSpec::density (memory order [z][y][x]). Throws std::invalid_argument naming the key
// ("regions[1].file.ids: ...") for any problem field_input_problems reports and for a density
// value that is not finite (naming the node).
void read_field_inputs(solver::Case& c);

// "" when `dims` (a dataset's dimensions, slowest first; leading 1s dropped) are the grid's,
// else "dataset 'name' has dimensions [4, 5]; the grid needs [5, 4] (y, x)".
std::string grid_shape_problem(const solver::Case& c, const std::string& dataset,
                               const std::vector<std::int64_t>& dims);

}  // namespace heatsim::io
