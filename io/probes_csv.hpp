// <output.directory>/probes.csv: one row per probe output, `step,time,<names...>`, values at
// full precision (%.17g, so the text reads back to the same doubles). Rows reach the disk at
// every flush(), which the run calls before each checkpoint; a restart from a checkpoint at
// step s keeps the rows with step <= s and continues after them, so the file of a restarted run
// is the file of the run that was never interrupted. Nothing needs to go into the checkpoint:
// the steps in the file are what it is truncated by.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "solver/case.hpp"

namespace heatsim::io {

// <dir>/probes.csv
std::string probes_csv_path(const solver::Case& c);

// The header line (without the newline): "step,time,<names...>", a name quoted as CSV quotes
// fields when it holds a comma, a quote or a line break. A steady state has no step or time:
// "state,<names...>", and its one row starts with the word steady.
std::string probes_csv_header(const std::vector<std::string>& names, bool steady = false);

class ProbesCsv {
 public:
  // restart_step < 0: a new file with the header (one already there is replaced).
  // restart_step >= 0: the file's complete rows with step <= restart_step are kept (anything
  // after them, a line cut short by a crash included, is dropped) and writing continues after
  // them; a missing file starts anew. Throws std::runtime_error naming the file when it cannot
  // be written, or when the existing file's header is not this run's (other probes).
  // steady: the file of a steady state (header "state,...", one row "steady,...").
  ProbesCsv(std::string path, const std::vector<std::string>& names, std::int64_t restart_step,
            bool steady = false);
  ~ProbesCsv();
  ProbesCsv(const ProbesCsv&) = delete;
  ProbesCsv& operator=(const ProbesCsv&) = delete;

  // Appends a row; a step at or before the last row's is skipped (a restart at the last step
  // fires the final output again). values: one per name.
  void write(std::int64_t step, double time, const std::vector<double>& values);
  // Puts the rows written so far on disk (fflush + fsync). Throws std::runtime_error.
  void flush();

  const std::string& path() const { return path_; }
  // The step of the last row in the file; -1 when it has none.
  std::int64_t last_step() const { return last_step_; }
  // Rows kept from an earlier run on restart.
  std::int64_t kept_rows() const { return kept_rows_; }

 private:
  std::string path_;
  std::size_t columns_ = 0;
  bool steady_ = false;
  std::FILE* file_ = nullptr;
  std::int64_t last_step_ = -1;
  std::int64_t kept_rows_ = 0;
};

}  // namespace heatsim::io
