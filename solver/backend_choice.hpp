// Picks and creates the backend for a problem: a named one (checked against the problem), or
// `auto`, which takes the first backend in registry order (fastest first) that is available
// on this machine and supports the problem.
#pragma once

#include <memory>
#include <string>

#include "kernels/backend.hpp"

namespace heatsim::solver {

struct BackendChoice {
  std::unique_ptr<kernels::Backend> backend;
  std::string name;
  std::string reason;  // why this one, for the run log
};

// Throws std::invalid_argument when the named backend is unknown or cannot run the problem,
// std::runtime_error when it needs a GPU that is not there.
BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem);

}  // namespace heatsim::solver
