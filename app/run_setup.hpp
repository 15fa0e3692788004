// What `run` and `validate` share: the case loaded, overridden and checked; the time plan;
// the resource checks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "solver/backend_choice.hpp"
#include "solver/case.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::app {

struct PreparedRun {
  solver::Case case_;
  solver::TimePlan plan;
  // Real problems (Case::has_fields()): the material index of every node and the coefficient
  // fields, built once here and shared by the time plan, the backend and the outputs; empty
  // and null for a case without fields.
  std::vector<std::int32_t> material_ids;
  // The surfaces of the box and ball voids, found once (the fields, `validate` and the
  // heat-flow reports read them).
  solver::VoidSurfaces surfaces;
  std::shared_ptr<const kernels::CoefficientFields> fields;
};

// Loads the case, applies the overrides and checks everything (the files regions and sources
// name are read here); prints every problem and returns nothing when the case cannot run.
std::optional<PreparedRun> prepare_run(const std::string& path, const RunOverrides& overrides);

// What the run needs in memory on the backend `backend_name` (solver/memory_estimate.hpp), with
// the backend's ghost width `ghost` (0: the scheme's radius).
solver::MemoryEstimate estimate_run_memory(const PreparedRun& run, const std::string& backend_name,
                                           int ghost = 0);

// Host memory, device memory and output disk space needed vs available; prints what is
// short, with the numbers, and returns false.
bool check_resources(const PreparedRun& run, const solver::BackendChoice& choice, int ghost);

std::string format_bytes(double bytes);

}  // namespace heatsim::app
