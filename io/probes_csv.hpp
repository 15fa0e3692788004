// <output.directory>/probes.csv: one row per probe output, `step,time,<names...>`, a StepCsv
// (step_csv.hpp) whose columns are the probes: full precision, restart-safe byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "solver/case.hpp"
#include "step_csv.hpp"

namespace heatsim::io {

// <dir>/probes.csv
std::string probes_csv_path(const solver::Case& c);

// The header line (without the newline): "step,time,<names...>" (step_csv_header).
std::string probes_csv_header(const std::vector<std::string>& names, bool steady = false);

class ProbesCsv : public StepCsv {
 public:
  // StepCsv's constructor with the probes' names as columns.
  ProbesCsv(std::string path, const std::vector<std::string>& names, std::int64_t restart_step,
            bool steady = false)
      : StepCsv(std::move(path), names, restart_step, steady, "probes") {}
};

}  // namespace heatsim::io
