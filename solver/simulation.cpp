#include "simulation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace heatsim::solver {

const std::vector<double>& StepState::field() {
  if (!have_field_) {
    backend_.download(field_);
    have_field_ = true;
  }
  return field_;
}

kernels::FieldStats StepState::stats() { return backend_.stats(); }

Simulation::Simulation(const Case& c, const TimePlan& plan, kernels::Backend& backend,
                       std::int64_t step0)
    : case_(c), plan_(plan), backend_(backend), step0_(step0), step_(step0) {}

void Simulation::add_observer(Observer observer) { observers_.push_back(std::move(observer)); }

void Simulation::on_progress(std::function<void(const ProgressReport&)> report, double seconds) {
  progress_ = std::move(report);
  progress_seconds_ = seconds;
}

std::int64_t Simulation::next_due(std::int64_t step) const {
  std::int64_t due = plan_.steps;
  for (const Observer& o : observers_) {
    if (o.every > 0) due = std::min(due, (step / o.every + 1) * o.every);
    // The first step after `step` that lies j steps before a due one.
    for (std::int64_t j = 1; j <= o.lead; ++j) {
      if (o.every > 0) {
        const std::int64_t s = ((step + j) / o.every + 1) * o.every - j;
        if (s > step) due = std::min(due, s);
      }
      if (o.at_end && plan_.steps - j > step) due = std::min(due, plan_.steps - j);
    }
  }
  return due;
}

bool Simulation::lead_due(const Observer& o, std::int64_t step) const {
  for (std::int64_t j = 1; j <= o.lead; ++j)
    if ((o.every > 0 && (step + j) % o.every == 0) || (o.at_end && step + j == plan_.steps))
      return true;
  return false;
}

bool Simulation::collect_queued(StepState& state) {
  bool any = false;
  for (const Observer& o : observers_)
    if (o.collect) {
      o.collect(state);
      any = true;
    }
  return any;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::int64_t next_chunk(std::int64_t chunk, std::int64_t advanced, std::int64_t took_us) {
  constexpr std::int64_t kQuarter = 250'000, kHalf = 500'000;
  // Doubled while a whole chunk takes under a quarter of a second.
  if (took_us < kQuarter)
    return advanced >= chunk ? std::min<std::int64_t>(chunk * 2, 1 << 20) : chunk;
  // Cut back to about a quarter of a second when a chunk took over half of one (a machine
  // shared with other work runs a chunk many times slower than the one that grew it): a
  // signal waits at most one chunk for its checkpoint, and `mpirun` kills the ranks a second
  // after it forwards one.
  if (took_us > kHalf) return std::max<std::int64_t>(1, advanced * kQuarter / took_us);
  return chunk;
}

RunResult Simulation::run_to(std::int64_t stop) {
  if (finished_) return result_;
  const std::int64_t total = plan_.steps;
  stop = std::clamp(stop, step_, total);
  // Grid points (n is 1 on unused axes); building the problem would rebuild any fields.
  const double points = static_cast<double>(case_.grid.n[0] * case_.grid.n[1] * case_.grid.n[2]);
  std::int64_t& step = step_;
  RunResult& result = result_;
  std::vector<std::int64_t>& fired = fired_;
  auto time_of = [&](std::int64_t s) { return static_cast<double>(s) * plan_.dt; };

  auto fire = [&](std::size_t i, StepState& state) {
    const Clock::time_point t0 = Clock::now();
    observers_[i].fire(state);
    result.observer_seconds[i].second += seconds_since(t0);
  };
  if (!started_) {
    started_ = true;
    result.first_step = step0_;
    // The step at which each observer last fired, so none fires twice for one step.
    fired.assign(observers_.size(), -1);
    for (const Observer& o : observers_) result.observer_seconds.emplace_back(o.name, 0.0);
    last_check_ = step;
    StepState state(backend_, step, time_of(step));
    for (std::size_t i = 0; i < observers_.size(); ++i)
      if (observers_[i].at_start) {
        if (!observers_[i].collect) collect_queued(state);
        fire(i, state);
        fired[i] = step;
      }
    last_report_ = Clock::now();
  }

  const Clock::time_point start = Clock::now();
  const auto wall_so_far = [&] { return wall_before_ + seconds_since(start); };
  // Steps per chunk (chunk_): sized to take a quarter to half a second (next_chunk), so
  // progress, signals and the NaN check are never far behind.
  std::int64_t& chunk = chunk_;
  std::int64_t& last_check = last_check_;

  auto report = [&](const kernels::FieldStats& stats) {
    if (!progress_) return;
    ProgressReport r;
    r.step = step;
    r.total_steps = total;
    r.time = time_of(step);
    const double wall = wall_so_far();
    const double done = static_cast<double>(step - step0_);
    r.gstencils_per_second = wall > 0 ? points * done / wall / 1e9 : 0.0;
    r.eta_seconds = done > 0 ? wall / done * static_cast<double>(total - step) : 0.0;
    r.stats = stats;
    progress_(r);
    reported_step_ = step;
  };
  const auto account = [&] {
    result.last_step = step;
    result.time = time_of(step);
    result.wall_seconds = wall_so_far();
    result.gstencils_per_second =
        result.wall_seconds > 0
            ? points * static_cast<double>(step - step0_) / result.wall_seconds / 1e9
            : 0.0;
  };

  while (step < stop) {
    int signal = stop_flag_ ? stop_flag_->load() : 0;
    if (agree_) {
      std::vector<std::int64_t> v{signal};
      agree_(v);
      signal = static_cast<int>(v[0]);
    }
    if (signal != 0) {
      result.status = RunResult::Status::interrupted;
      result.signal = signal;
      break;
    }
    // Chunk ends that are not due steps fall on multiples of the backend's fusion depth, so
    // the passes a run takes depend only on its schedule, not on wall-clock chunking, and a
    // restart from a checkpoint repeats the uninterrupted run bit for bit.
    // A progress line at every step (progress_seconds 0) takes chunks of one step (one pass of
    // k steps where the backend fuses).
    const std::int64_t k = std::max(1, backend_.fusion_depth());
    const std::int64_t steps_ahead = progress_ && !(progress_seconds_ > 0.0) ? 1 : chunk;
    const std::int64_t chunk_end = std::max((step + steps_ahead) / k * k, (step / k + 1) * k);
    const std::int64_t target = std::min({stop, next_due(step), chunk_end});
    const Clock::time_point t0 = Clock::now();
    if (advance_)
      advance_(target - step, step);
    else
      backend_.advance(target - step, step);
    bool checked_due = false, unchecked_due = false, waiting_due = false;
    for (const Observer& o : observers_)
      if (due_at(o, target)) {
        (o.needs_check && !o.collect ? checked_due : unchecked_due) = true;
        if (!o.collect) waiting_due = true;
      }
    const bool due = checked_due || unchecked_due;
    bool report_due = progress_ && seconds_since(last_report_) >= progress_seconds_;
    // Not waited for where only queued observers are due and nothing else needs the device
    // (several processes always wait: their decisions below are agreed on every chunk; so
    // does a backend that samples at once, whose samples are then collected at their step).
    const bool wait = agree_ || !backend_.queues_samples() || !due || waiting_due ||
                      report_due || target == stop || target - last_check >= check_every_;
    if (wait) backend_.synchronize();
    const double took = seconds_since(t0);
    result.stepping_seconds += took;
    const std::int64_t advanced = target - step;
    step = target;
    if (!wait) {
      if (unwaited_steps_ == 0) unwaited_start_ = t0;
      unwaited_steps_ += advanced;
    } else {
      // The slowest process's time (microseconds), so that every process sizes the next chunk
      // alike; with the chunks before it that were not waited for.
      const std::int64_t steps = advanced + unwaited_steps_;
      std::int64_t took_us = static_cast<std::int64_t>(
          (unwaited_steps_ > 0 ? seconds_since(unwaited_start_) : took) * 1e6);
      unwaited_steps_ = 0;
      if (agree_) {
        std::vector<std::int64_t> v{took_us, report_due};
        agree_(v);
        took_us = v[0];
        report_due = v[1] != 0;
      }
      chunk = next_chunk(chunk, steps, took_us);
    }
    // The whole field's check; false when it holds a value that is not finite (the run then
    // diverged).
    const auto finite = [&](kernels::FieldStats& stats) {
      stats = backend_.stats();
      if (stats.non_finite == 0) return true;
      std::ostringstream msg;
      msg << "the field holds " << stats.non_finite << " NaN/Inf value"
          << (stats.non_finite == 1 ? "" : "s") << " at step " << step << " (t = " << time_of(step)
          << "; the last check, at step " << last_check
          << ", was finite): the run is unstable or the input is not finite";
      result.status = RunResult::Status::diverged;
      result.message = msg.str();
      result.final_stats = stats;
      return false;
    };
    // Checked where the call stops as well, so that a caller reading the field there knows
    // it finite.
    if (checked_due || report_due || step - last_check >= check_every_ || step == stop) {
      kernels::FieldStats stats;
      if (!finite(stats)) break;
      last_check = step;
      if (report_due && step < total) {
        report(stats);
        last_report_ = Clock::now();
      }
    }
    if (wait || (due && step < total)) {
      StepState state(backend_, step, time_of(step));
      bool collected = false;
      if (due && step < total)
        for (std::size_t i = 0; i < observers_.size(); ++i)
          if (due_at(observers_[i], step)) {
            // What the queued observers queued up to here is finished before another fires
            // (a checkpoint flushes the probes' rows).
            if (!observers_[i].collect) collected = collect_queued(state) || collected;
            fire(i, state);
            fired[i] = step;
          }
      if (wait) collected = collect_queued(state) || collected;
      // An observer that fired unchecked, or finished what it queued, saw a value that is not
      // finite (on some process): the whole field's check now.
      if (unchecked_due || collected) {
        std::vector<std::int64_t> seen{state.non_finite_reported() ? 1 : 0};
        if (agree_) agree_(seen);
        kernels::FieldStats stats;
        if (seen[0] != 0 && !finite(stats)) break;
      }
    }
  }

  account();
  {
    // What is still queued: the rows of the steps before a stop or the divergence. (Their own
    // values that are not finite end the rows; the field's state is judged below or was.)
    StepState state(backend_, step, time_of(step));
    collect_queued(state);
    unwaited_steps_ = 0;
  }
  if (result.status == RunResult::Status::completed && step < total) {
    wall_before_ = result.wall_seconds;
    return result;
  }
  finished_ = true;
  if (result.status == RunResult::Status::diverged) return result;

  result.final_stats = backend_.stats();
  // Said once: a signal can stop the loop at the step its last report was about.
  if (reported_step_ != step) report(result.final_stats);
  StepState state(backend_, step, time_of(step));
  for (std::size_t i = 0; i < observers_.size(); ++i) {
    const Observer& o = observers_[i];
    const bool scheduled = o.every > 0 && step % o.every == 0;
    if ((o.at_end || scheduled) && fired[i] != step) {
      if (!o.collect) collect_queued(state);
      fire(i, state);
    }
  }
  collect_queued(state);
  return result;
}

}  // namespace heatsim::solver
