// The run's output directory: field files every N steps and at the end, an XDMF index kept
// current during the run, and checkpoints. Directory rules are checked before the run starts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "field_file.hpp"
#include "solver/case.hpp"
#include "xdmf.hpp"

namespace heatsim::io {

// The files a run leaves in its output directory: <name>_<step>.h5, <name>.xmf,
// checkpoint_<step>.h5, and temporaries of these left by a crash. The run-wide files
// materials.h5 and probes.csv count as the index does (kind index).
struct RunFile {
  std::string path;
  enum class Kind { field, index, checkpoint, temporary } kind;
  std::int64_t step = -1;  // field and checkpoint files
};
std::vector<RunFile> find_run_files(const solver::Case& c);

// Makes the output directory ready before any work. Throws std::runtime_error with a clear
// message when it cannot be created or written, or when it already holds a run's files and
// neither `overwrite` nor `restarting` is set. With `overwrite` the old run's files are
// removed. When restarting, the run continues in the same directory: temporaries are removed,
// and when `restart_step` >= 0 so are field files and checkpoints after that step (they belong
// to the run being replaced); everything up to it is kept.
void prepare_output_directory(const solver::Case& c, bool overwrite, bool restarting,
                              std::int64_t restart_step = -1);

// <dir>/<name>_<step, 8 digits>.h5
std::string output_path(const solver::Case& c, std::int64_t step);

class OutputSeries {
 public:
  // Adopts field files already in the directory (a restarted run's earlier outputs) so the
  // index covers the whole run.
  OutputSeries(const solver::Case& c, double dt, std::string backend_name);
  // Writes <dir>/<name>_<step>.h5 and rewrites <dir>/<name>.xmf (both crash-safe).
  void write(std::int64_t step, double time, const std::vector<double>& field);
  // Rewrites the index to list <dir>/<name>_<step>.h5, a file already written (collectively:
  // write_field_file_collective at output_path(step) with meta(step, time)).
  void add_to_index(std::int64_t step, double time);
  FieldMeta meta(std::int64_t step, double time) const;
  std::string xdmf_path() const;
  const std::vector<XdmfEntry>& entries() const { return entries_; }
  // The run's materials file (io/material_output.hpp), relative to the index: every step of
  // the index lists its datasets from the next write on.
  void set_materials_file(std::string file) { materials_file_ = std::move(file); }

 private:
  const solver::Case& case_;
  double dt_;
  std::string backend_;
  std::vector<XdmfEntry> entries_;  // sorted by step
  std::string materials_file_;
};

}  // namespace heatsim::io
