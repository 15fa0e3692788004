// The `file` initial condition: a dataset of an HDF5 file as the field at t = 0 (a heatsim
// output file or checkpoint, whose dataset is `u`, or any file with a numeric dataset whose
// dimensions are the grid's, listed z, y, x; dimensions of 1 in front are ignored).
#pragma once

#include <string>
#include <vector>

#include "solver/case.hpp"

namespace heatsim::io {

// Why the case's file cannot give its initial field, from the file's structure alone (the
// values are not read), and the key it concerns ("initial.path" or "initial.dataset"); an
// empty message when it can.
struct InitialFileProblem {
  std::string key;
  std::string message;
};
InitialFileProblem initial_file_problem(const solver::Case& c);

// The field in memory order [z][y][x], Dirichlet nodes set to g(0). Throws
// std::invalid_argument when the file does not fit the case or holds a value that is not
// finite (naming the node), std::runtime_error when it cannot be read.
std::vector<double> read_initial_field(const solver::Case& c);

}  // namespace heatsim::io
