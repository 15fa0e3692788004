// A run's CSV series in its output directory (probes.csv, heat_flows.csv): one row per due
// step, `step,time,<columns...>`, values at full precision (%.17g, so the text reads back to the
// same doubles). Rows reach the disk at every flush(), which the run calls before each
// checkpoint; a restart from a checkpoint at step s keeps the rows with step <= s and continues
// after them, so the file of a restarted run is the file of the run that was never
// interrupted. Nothing needs to go into the checkpoint: the steps in the file are what it is
// truncated by.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace heatsim::io {

// The header line (without the newline): "step,time,<columns...>", a column quoted as CSV
// quotes fields when it holds a comma, a quote or a line break. A steady state has no step or
// time: "state,<columns...>", and its one row starts with the word steady.
std::string step_csv_header(const std::vector<std::string>& columns, bool steady = false);

// Throws std::runtime_error, as StepCsv's constructor does, when `path` holds a file whose
// header is not the one of `columns` (`what` names what changed in the case: "probes"). A run
// that continues in its checkpoint's directory asks this before it removes anything there.
void check_step_csv_header(const std::string& path, const std::vector<std::string>& columns,
                           bool steady, const std::string& what);

// A restart from step s in its checkpoint's directory whose case no longer writes the series
// at `path` (probes removed, output.heat_flows off): the file keeps its header and its complete
// rows with step <= s, as a StepCsv continuing it would, so no row of the run being replaced
// stays behind. A missing file, or one whose rows do not read, is left as it is. Returns the
// rows dropped. Throws std::runtime_error naming the file when it cannot be rewritten.
std::int64_t keep_step_csv_rows(const std::string& path, std::int64_t restart_step);

class StepCsv {
 public:
  // restart_step < 0: a new file with the header (one already there is replaced).
  // restart_step >= 0: the file's complete rows with step <= restart_step are kept (anything
  // after them, a line cut short by a crash included, is dropped) and writing continues after
  // them; a missing file starts anew. Throws std::runtime_error naming the file when it cannot
  // be written, or when the existing file's header is not this run's (`what` says what then
  // changed in the case: "probes").
  // steady: the file of a steady state (header "state,...", one row "steady,...").
  StepCsv(std::string path, const std::vector<std::string>& columns, std::int64_t restart_step,
          bool steady, const std::string& what);
  ~StepCsv();
  StepCsv(const StepCsv&) = delete;
  StepCsv& operator=(const StepCsv&) = delete;

  // Appends a row; a step at or before the last row's is skipped (a restart at the last step
  // fires the final output again). values: one per column.
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
