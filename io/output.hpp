// The run's output directory: field files every N steps and at the end, an XDMF index kept
// current during the run, and checkpoints. Directory rules are checked before the run starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "field_file.hpp"
#include "solver/case.hpp"

namespace heatsim::io {

// Throws std::runtime_error with a clear message when the directory cannot be created or
// written, or already holds a run's files and `overwrite` is false. Called before any work.
void prepare_output_directory(const solver::Case& c, bool overwrite, bool restarting);

class OutputSeries {
 public:
  OutputSeries(const solver::Case& c, double dt, std::string backend_name);
  // Writes <dir>/<name>_<step>.h5 and rewrites <dir>/<name>.xmf. On restart the index is
  // rebuilt from the files already there up to the restart step.
  void write(std::int64_t step, double time, const std::vector<double>& field);
  std::string xdmf_path() const;

 private:
  struct Entry {
    std::int64_t step;
    double time;
    std::string file;
  };
  const solver::Case& case_;
  double dt_;
  std::string backend_;
  std::vector<Entry> entries_;
};

}  // namespace heatsim::io
