// A run of a case as a library object: the layer the command line (`heatsim run`) and the
// Python module are clients of. A Session is built from a case (a file, YAML text or a case in
// memory) with overrides; the constructor does all the setting up `heatsim run` does before its
// first step (checks, restart, output directory, backend, initial field, the steady solve), so
// a case that cannot run is refused there with nothing written. It then advances by steps or to
// a time, exposes the field, the step and the time, and writes through the run's writers on
// their schedules (output files and the XDMF index, probes.csv, heat_flows.csv, checkpoints),
// as solver::Simulation fires them. The log (progress, set-up) goes to spdlog's default
// logger: its level silences it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "run/errors.hpp"
#include "run/prepare.hpp"
#include "solver/case.hpp"
#include "solver/stencil.hpp"

namespace heatsim::run {

struct SessionOptions {
  CaseSource source;
  Overrides overrides;
  std::string restart;     // checkpoint file; empty: start from the initial condition
  bool overwrite = false;  // replace another run's files in the output directory
  // false: nothing is written (no output files, index, materials file, probes.csv,
  // heat_flows.csv nor checkpoints) and the output directory is not looked at; the probes
  // and heat-flow rows are still kept (keep_rows).
  bool write_files = true;
  // The probe rows and heat-flow rows, in memory as well as in their files (probe_rows(),
  // heat_flow_rows()).
  bool keep_rows = false;
  double progress_seconds = 2.0;  // between progress lines in the log
  // Checked between chunks of steps: when nonzero (a signal's number), the run stops at the
  // current step with a checkpoint and ends interrupted.
  const std::atomic<int>* stop_flag = nullptr;
};

// Rows as probes.csv and heat_flows.csv hold them: the step, the time and a value per column.
struct Rows {
  std::vector<std::string> names;
  std::vector<std::int64_t> steps;
  std::vector<double> times;
  std::vector<std::vector<double>> values;  // one vector per row, a value per name
};

// How a run ended, with what its summary says.
struct Summary {
  bool interrupted = false;
  int signal = 0;  // interrupted: the signal
  std::string backend;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double time = 0.0;
  double wall_seconds = 0.0;  // stepping's wall time (the done line's)
  double gstencils_per_second = 0.0;
  double total_seconds = 0.0;  // from the start of the setting up to the summary
  double min = 0.0, max = 0.0, total_heat = 0.0;
  // Implicit and steady runs: the multigrid's solves, iterations and solve time; a steady
  // state's last relative residual.
  std::int64_t solves = 0, iterations = 0;
  double solve_seconds = 0.0;
  double residual = 0.0;
  std::string output;  // the XDMF index ("" when nothing was written)
  // The summary as `heatsim run` prints it, a line each (empty on the ranks after the first).
  std::vector<std::string> lines;
};

class Session {
 public:
  // Sets up. Throws InvalidCase (the case or an override refused), RunError (Failure::invalid:
  // a restart checkpoint, the output directory, the backend or the resources refused;
  // Failure::diverged: a steady solve that stalled; Failure::runtime) with nothing written.
  explicit Session(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Advances `steps` steps, to step `step`, or to the first step at or after `time` (at most
  // the case's last step), firing what is due on the way. At the last step the run ends: the
  // writers write what is due at the end and the summary is made (finished()). Throws
  // RunError (Failure::diverged: NaN/Inf or a stalled solve; Failure::runtime: a failed
  // write) after marking the output directory as a failed run's; std::invalid_argument for a
  // step past the last one (or a time that is not finite); std::logic_error for a step after
  // the run has ended.
  void advance(std::int64_t steps);
  void advance_to_step(std::int64_t step);
  void advance_to_time(double time);
  // To the end (interrupted on the stop flag), returning the summary.
  const Summary& run();

  bool finished() const;
  const Summary& summary() const;  // once finished()
  std::int64_t step() const;
  double time() const;
  std::int64_t last_step() const;  // the case's
  const solver::Case& run_case() const;
  const solver::TimePlan& plan() const;
  const std::string& backend_name() const;
  // The field's shape, slowest axis first ([z][y][x], `dims` entries).
  std::vector<std::int64_t> shape() const;
  bool fp32() const;
  // The field now, in the run's precision (fields of `points` values).
  void field(double* out) const;
  void field(float* out) const;
  // Replaces the field (a value per point, in doubles; an fp32 run rounds them). The nodes of
  // Dirichlet faces take the faces' values now, g(time()), whatever `values` holds there, as an
  // initial field's take g(0). Throws std::logic_error once the run has ended.
  void set_field(std::vector<double> values);
  // A checkpoint of the field now, at `path` (restart: SessionOptions::restart).
  void write_checkpoint(const std::string& path);
  // The last checkpoint written by the run's schedule ("" when none).
  const std::string& last_checkpoint() const;
  const Rows& probe_rows() const;
  const Rows& heat_flow_rows() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace heatsim::run
