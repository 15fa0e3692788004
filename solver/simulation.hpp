// The time loop. A Simulation owns the schedule: it advances the backend to the next step at
// which something is due (an observer's interval, a progress report, a diagnostics check) and
// fires what is due there. Output, checkpoints and progress are observers attached by name.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"
#include "stencil.hpp"

namespace heatsim::solver {

// What an observer sees when it fires. field() downloads the field once per step, on demand.
class StepState {
 public:
  StepState(kernels::Backend& backend, std::int64_t step, double time)
      : backend_(backend), step_(step), time_(time) {}
  std::int64_t step() const { return step_; }
  double time() const { return time_; }
  const std::vector<double>& field();
  kernels::FieldStats stats();
  // For an observer that reads a few nodes without a check of the whole field before it
  // (Observer::needs_check false): it saw a value that is not finite, and the loop checks the
  // whole field at once.
  void report_non_finite() { non_finite_ = true; }
  bool non_finite_reported() const { return non_finite_; }

 private:
  kernels::Backend& backend_;
  std::int64_t step_;
  double time_;
  std::vector<double> field_;
  bool have_field_ = false;
  bool non_finite_ = false;
};

struct Observer {
  std::string name;
  std::int64_t every = 0;  // fire when step % every == 0 (0: never on schedule)
  bool at_start = false;   // fire once before the first step
  bool at_end = true;      // fire after the last step
  std::function<void(StepState&)> fire;
  // Also fire at the `lead` steps before each step due on schedule (and before the last step
  // when at_end): for an observer that needs the fields leading up to its step, as the
  // heat-flow rows do. The loop stops at those steps too.
  int lead = 0;
  // The loop checks the whole field finite (a reduction and a wait on the device) before the
  // observer fires. False for one that reads a few nodes and reports a value that is not
  // finite (StepState::report_non_finite), as the probes do: on a small grid sampled every 50
  // steps the check is a good part of the stepping, and the checks every check interval and
  // before every other observer catch the rest.
  bool needs_check = true;
  // Set by an observer that queues its work behind the steps instead of waiting for the device
  // (the probes: Backend::sample_later): it finishes what it queued (writes the rows), and may
  // report a value that is not finite as an unchecked observer does. A chunk of steps that
  // ends where only such observers are due is not waited for, so a small grid's steps go on
  // while the host queues the next ones; the loop calls `collect` wherever it waits for the
  // device anyway (another observer, a check of the field, progress, the end of run_to), before
  // any other observer fires there.
  std::function<void(StepState&)> collect = nullptr;
};

// Summary of a finished (or stopped) run.
struct RunResult {
  enum class Status { completed, interrupted, diverged };
  Status status = Status::completed;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double time = 0.0;
  double wall_seconds = 0.0;
  double gstencils_per_second = 0.0;
  int signal = 0;  // interrupted: the signal number
  std::string message;
  kernels::FieldStats final_stats;
  // Where run()'s time went, so a caller can say what the run spent besides stepping:
  // advancing the backend (advance and synchronize), and each observer's firings (at the
  // start, on schedule and at the end; the first to ask for the field pays its download), in
  // the order the observers were added.
  double stepping_seconds = 0.0;
  std::vector<std::pair<std::string, double>> observer_seconds;
};

// Progress and diagnostics as they happen.
struct ProgressReport {
  std::int64_t step = 0;
  std::int64_t total_steps = 0;
  double time = 0.0;
  double gstencils_per_second = 0.0;
  double eta_seconds = 0.0;
  kernels::FieldStats stats;
};

class Simulation {
 public:
  // The backend must be set up for make_problem(c, plan.dt) and hold the field at step0.
  Simulation(const Case& c, const TimePlan& plan, kernels::Backend& backend,
             std::int64_t step0 = 0);

  void add_observer(Observer observer);
  // Called at most every `seconds` of wall time (and at the end).
  void on_progress(std::function<void(const ProgressReport&)> report, double seconds = 2.0);
  // Checked between chunks of steps; when it becomes nonzero the loop stops at the current
  // step, fires observers marked at_end and returns status interrupted.
  void stop_when(const std::atomic<int>* signal_flag) { stop_flag_ = signal_flag; }
  // Largest number of steps between checks of the field for NaN/Inf (default 1000; the loop
  // also checks before every firing of an observer that needs it, Observer::needs_check, when
  // an unchecked one reports a value that is not finite, and at the end).
  void set_check_interval(std::int64_t steps) { check_every_ = steps; }
  // Replaces backend.advance(steps, step0) as the way the loop advances (implicit steps: the
  // field is solved for, step by step, and handed back to the backend). Exceptions it throws
  // leave run().
  void advance_with(std::function<void(std::int64_t steps, std::int64_t step0)> advance) {
    advance_ = std::move(advance);
  }

  // Several processes stepping one decomposed field (solver/parallel): the loop's wall-clock
  // decisions (stop on a signal, report progress, size the next chunk) must come out the same on
  // every process, because they decide which collective calls follow. `agree` replaces each
  // value with its maximum over the processes; the loop calls it on every process alike.
  void agree_with(std::function<void(std::vector<std::int64_t>& values)> agree) {
    agree_ = std::move(agree);
  }

  // The whole run: from step0 to the plan's last step, then what is due at the end.
  RunResult run() { return run_to(plan_.steps); }
  // Advances to step `stop` (at most the plan's last step), firing the observers due on the
  // way; the first call fires those due at the start. The run ends (finished()) at the last
  // step, where the observers due at the end fire, or when stopped by the flag or diverged.
  // Between calls the field may be replaced (Backend::upload). The result counts from step0
  // over every call so far. Chunk ends fall on multiples of the fusion depth as in one call,
  // so a stop at such a multiple changes no bit of what follows.
  RunResult run_to(std::int64_t stop);
  bool finished() const { return finished_; }
  std::int64_t step() const { return step_; }
  double time() const { return static_cast<double>(step_) * plan_.dt; }
  const TimePlan& plan() const { return plan_; }

 private:
  std::int64_t next_due(std::int64_t step) const;
  // Whether `step` (before the last) is one of an observer's lead steps.
  bool lead_due(const Observer& o, std::int64_t step) const;
  // Whether observer o fires at `step` on its schedule (before the last step).
  bool due_at(const Observer& o, std::int64_t step) const {
    return (o.every > 0 && step % o.every == 0) || lead_due(o, step);
  }
  // Every queued observer's collect (Observer::collect); whether any had one.
  bool collect_queued(StepState& state);

  const Case& case_;
  TimePlan plan_;
  kernels::Backend& backend_;
  std::int64_t step0_;
  std::vector<Observer> observers_;
  std::function<void(const ProgressReport&)> progress_;
  double progress_seconds_ = 2.0;
  const std::atomic<int>* stop_flag_ = nullptr;
  std::int64_t check_every_ = 1000;
  std::function<void(std::int64_t, std::int64_t)> advance_;
  std::function<void(std::vector<std::int64_t>&)> agree_;

  // The loop's state across run_to() calls.
  std::int64_t step_;
  bool started_ = false;
  bool finished_ = false;
  RunResult result_;
  std::vector<std::int64_t> fired_;  // the step at which each observer last fired
  std::int64_t chunk_ = 1;
  std::int64_t reported_step_ = -1;  // the step the last progress report was about
  std::int64_t last_check_ = 0;
  double wall_before_ = 0.0;  // wall seconds spent stepping in earlier calls
  // Steps advanced since the device was last waited for, and when the first of them began:
  // the next chunk is sized on them together.
  std::int64_t unwaited_steps_ = 0;
  std::chrono::steady_clock::time_point unwaited_start_{};
  std::chrono::steady_clock::time_point last_report_{};
};

// The steps of the loop's next chunk, after one of `chunk` steps advanced `advanced` steps
// (fewer when a due step or the end came first) in `took_us` microseconds: doubled (up to
// 2^20) while chunks take under a quarter of a second, cut back to about a quarter of a
// second after one that took over half of one, else kept.
std::int64_t next_chunk(std::int64_t chunk, std::int64_t advanced, std::int64_t took_us);

}  // namespace heatsim::solver
