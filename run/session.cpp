// The run session: everything `heatsim run` does between reading its options and printing its
// summary, as a library object (run/session.hpp).
#include "run/session.hpp"

#include <omp.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "io/case_loader.hpp"
#include "io/checkpoint.hpp"
#include "io/file_writer.hpp"
#include "io/heat_flows_csv.hpp"
#include "io/initial_file.hpp"
#include "io/material_output.hpp"
#include "io/output.hpp"
#include "io/probes_csv.hpp"
#include "kernels/kept_blocks.hpp"
#include "kernels/registry.hpp"
#include "run/auto_choice.hpp"
#include "run/report.hpp"
#include "solver/backend_choice.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/multigrid/implicit_backend.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposed_backend.hpp"
#include "solver/parallel/decomposed_implicit.hpp"
#include "solver/parallel/decomposed_level_ops.hpp"
#include "solver/probes.hpp"
#include "solver/simulation.hpp"
#include "solver/version.hpp"

namespace heatsim::run {
namespace {

// A steady solve ended on the rounding floor above this relative residual is warned of: its
// field is resolved only to about that share of the load.
constexpr double kRoundingLimited = solver::multigrid::kResolvedFloor;

namespace parallel = solver::parallel;
using Clock = std::chrono::steady_clock;

// A refusal of one of the case's keys ("initial.value: the expression is inf at ..."), found
// only when the run evaluates it, with the key's line, as the case's checks name theirs. Not
// for a case built from a Python dict (origin "<dict>"): its lines are those of the YAML the
// package rendered, which mean nothing to its author (the module leaves them out too).
std::string with_line(const solver::Case& c, const std::map<std::string, int>& lines,
                      const std::string& what) {
  if (c.source_path == "<dict>") return what;
  const auto colon = what.find(": ");
  if (colon == std::string::npos) return what;
  const auto at = lines.find(what.substr(0, colon));
  return at == lines.end() ? what : fmt::format("{} (line {})", what, at->second);
}

// A heat balance off by more than a percent of its largest flow (fp64: the fp32 lag has its
// own message): the field does not follow this case's heat to better than that, whatever the
// solve reported. fp64's rounding does this where the conductances between nodes dwarf the
// load: conductivities far apart, or a conductor against weak faces.
void warn_unbalanced(const solver::Case& c, const solver::HeatFlowReport& flows, bool steady,
                     double dt) {
  const double off = flows.largest > 0.0 ? std::abs(flows.imbalance) / flows.largest : 0.0;
  if (!(off > 1e-2)) return;
  double k_min = 0.0, k_max = 0.0;
  for (const solver::MaterialSpec& m : c.materials) {
    if (!(m.conductivity > 0.0)) continue;
    k_min = k_min > 0.0 ? std::min(k_min, m.conductivity) : m.conductivity;
    k_max = std::max(k_max, m.conductivity);
  }
  const std::string apart =
      k_min > 0.0 && k_max / k_min >= 1e6
          ? fmt::format(" (here {:.2g} between the materials)", k_max / k_min)
          : std::string();
  const std::string short_steps =
      steady ? std::string()
             : fmt::format("; or steps so short (dt = {:.3g} s) that a step's change nears the "
                           "last digits of the temperatures",
                           dt);
  spdlog::warn(
      "{} heat balance is off by {:.2g} of its largest flow: the field is not {} to better "
      "than that. fp64's rounding does this where the conductances between nodes dwarf the "
      "load: conductivities many orders of magnitude apart{}, or a conductor of very large k "
      "against weak faces (a body meant as a perfect conductor is modelled as well by k 1e4 to "
      "1e6 times its neighbours'){}",
      steady ? "the steady state's" : "the last step's", off,
      steady ? "this case's steady state" : "the step's answer", apart, short_steps);
}

// A restart in place whose series (probes.csv, heat_flows.csv) lacks rows the run up to the
// restart step wrote (a run between that did not write it, a file removed): said, as the
// continued file will have a gap.
void warn_rows_missing(const io::StepCsv& csv, std::int64_t step0, std::int64_t expected) {
  if (csv.last_step() >= expected) return;
  if (csv.last_step() < 0)
    spdlog::warn(
        "{} held no rows before the restart (missing or empty): it starts again after step {}, "
        "and the rows up to the restart step's last one ({}) are missing",
        csv.path(), step0, expected);
  else
    spdlog::warn("{} ends at step {}, before the restart step's last row {}: rows in between "
                 "are missing",
                 csv.path(), csv.last_step(), expected);
}

double file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0.0 : static_cast<double>(size);
}

// checkpoint.keep: the checkpoints of this run, oldest first, of which the newest `keep` stay
// on disk (0: every one): those it wrote, after `earlier` (a continuation in place: the
// checkpoints its run wrote there before, up to the one it restarted from, which are this
// run's too). A checkpoint is removed only once a newer one is complete (the writer calls
// written() after the file is in place), only if this run (with `earlier`) wrote it, and never
// when it is the file the run restarted from unless that is one of `earlier`.
class CheckpointRotation {
 public:
  CheckpointRotation(std::int64_t keep, std::string restarted_from,
                     const std::vector<std::string>& earlier = {})
      : keep_(keep),
        restarted_from_(std::move(restarted_from)),
        paths_(earlier.begin(), earlier.end()) {
    if (!earlier.empty()) restarted_from_.clear();
  }

  // `range`: the least and greatest value of the checkpoint's field (NaN both where it holds
  // a NaN), where known.
  void written(const std::string& path, std::int64_t step,
               std::optional<std::pair<double, double>> range = std::nullopt) {
    std::lock_guard<std::mutex> lock(mutex_);
    written_.erase(std::remove_if(written_.begin(), written_.end(),
                                  [&](const Written& w) { return w.path == path; }),
                   written_.end());
    written_.push_back({path, step, range});
    if (keep_ <= 0) return;
    // A path written again (a signal at a checkpoint's step) moves to the newest place.
    paths_.erase(std::remove(paths_.begin(), paths_.end(), path), paths_.end());
    paths_.push_back(path);
    while (static_cast<std::int64_t>(paths_.size()) > keep_) {
      const std::string old = paths_.front();
      paths_.pop_front();
      std::error_code ec;
      if (!restarted_from_.empty() && std::filesystem::equivalent(old, restarted_from_, ec))
        continue;
      if (!std::filesystem::remove(old, ec) && ec)
        spdlog::warn("checkpoint.keep: could not remove the older checkpoint {}: {}", old,
                     ec.message());
    }
  }

  // Every checkpoint this run wrote whole, with its field's range, newest first (some may
  // have been removed since: checkpoint.keep).
  struct Written {
    std::string path;
    std::int64_t step = -1;
    std::optional<std::pair<double, double>> range;
  };
  std::vector<Written> history() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Written> out = written_;
    std::sort(out.begin(), out.end(),
              [](const Written& a, const Written& b) { return a.step > b.step; });
    return out;
  }

 private:
  std::int64_t keep_;
  std::string restarted_from_;
  std::mutex mutex_;
  std::deque<std::string> paths_;
  std::vector<Written> written_;
};

// With materials every temperature is in kelvin: a field far above where any solid melts or
// sublimes (about 4000 K) is most often a unit slip or a run blowing up; below 0 K no
// temperature exists (rounding's -1e-24 K beside a 0 K face aside).
constexpr double kImplausibleKelvin = 1e5;
constexpr double kBelowZeroNoise = -1e-6;

// The least and greatest of a field's values (NaN where one is NaN).
std::pair<double, double> value_range(const io::FieldValues& f) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool nan = false;
  for (std::size_t i = 0; i < f.count; ++i) {
    const double v = f.doubles ? f.doubles[i] : static_cast<double>(f.floats[i]);
    nan = nan || std::isnan(v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (nan) lo = hi = std::nan("");
  return {lo, hi};
}

// The host's part of an implicit or steady case's multigrid set-up (the heat-flow operator and
// the hierarchy), which make_implicit_stepper takes. Throws std::invalid_argument for a case
// it cannot solve (prepare_run refuses those already; this is the solver's own word).
solver::multigrid::ImplicitStepper::HostSetup prepare_implicit(
    const solver::Case& c, const kernels::StencilProblem& problem, const solver::TimePlan& plan,
    bool coarse_levels = true) {
  namespace mg = solver::multigrid;
  auto fields = problem.coefficients
                    ? problem.coefficients
                    : mg::uniform_fields(problem.points(), c.physics.alpha, c.physics.source);
  return mg::ImplicitStepper::prepare(problem, std::move(fields), c.time.method, plan.dt,
                                      coarse_levels);
}

// The multigrid stepper of an implicit or steady case, on `level_ops`.
std::unique_ptr<solver::multigrid::ImplicitStepper> make_implicit_stepper(
    const solver::Case& c, const solver::TimePlan& plan,
    solver::multigrid::ImplicitStepper::HostSetup setup,
    std::unique_ptr<kernels::LevelOps> level_ops) {
  namespace mg = solver::multigrid;
  mg::SolveOptions options;
  options.tolerance = c.time.tolerance;
  // Temperature-dependent materials and radiation: each outer iteration of a steady solve is
  // worth a line; a transient's, at debug level.
  const bool steady = c.time.method == solver::TimeMethod::steady;
  options.on_outer_iteration = [steady](int outer, double change, const mg::SolveReport& r) {
    spdlog::log(steady ? spdlog::level::info : spdlog::level::debug,
                "nonlinear iteration {}: largest change {:.3g} K ({} multigrid iterations)", outer,
                change, r.iterations);
  };
  options.on_note = [](const std::string& note) { spdlog::info("{}", note); };
  auto stepper =
      std::make_unique<mg::ImplicitStepper>(std::move(setup), std::move(level_ops), options);
  // The heat-flow operator, the hierarchy and the level operations' copy of it.
  double seconds = 0.0;
  for (const auto& p : stepper->setup_phases()) seconds += p.time.seconds;
  std::string levels =
      fmt::format("{} levels, set up in {}", stepper->levels(), format_solve_seconds(seconds));
  // Where the pieces are found only when a slow solve needs them (the CPU), the solve's line
  // says when they were deflated.
  if (stepper->deflation_found() && stepper->deflated_pieces() > 0)
    levels += fmt::format("; {} strongly conducting pieces to deflate if convergence is slow",
                          stepper->deflated_pieces());
  if (c.time.method == solver::TimeMethod::steady)
    spdlog::info("steady: multigrid ({}), CG to relative residual {:.3g}", levels,
                 c.time.tolerance);
  else
    spdlog::info(
        "{}: multigrid ({}), CG to relative residual {:.3g} per step; dt is "
        "{:.3g} times the explicit limit",
        mg::to_string(c.time.method), levels, c.time.tolerance, plan.dt / plan.dt_limit);
  return stepper;
}

// This rank's block of an implicit or steady run over several ranks: the case's
// parallel.decomposition where it fixes the ranks per axis; otherwise a periodic axis stays
// whole (the decomposed multigrid does not split one) and so does x where the other axes can
// take the ranks, so that every grid row lies on one rank and the solve's dot products need no
// chain of messages along x (solver/parallel/decomposed_level_ops.hpp). Throws
// std::invalid_argument when the grid cannot be split so.
solver::parallel::Decomposition implicit_decomposition(const solver::Case& c,
                                                       const kernels::StencilProblem& problem) {
  namespace parallel = solver::parallel;
  const auto split = [&](const std::array<int, 3>& procs) {
    return parallel::Decomposition(problem, parallel::size(), parallel::rank(), 1, procs);
  };
  if (c.parallel.decomposition != std::array<int, 3>{0, 0, 0})
    return split(c.parallel.decomposition);
  std::array<int, 3> procs{0, 0, 0};
  for (int a = 0; a < problem.dims; ++a)
    if (problem.periodic(a)) procs[a] = 1;
  std::array<int, 3> rows_whole = procs;
  rows_whole[0] = 1;
  bool other_free = false;
  for (int a = 1; a < problem.dims; ++a) other_free = other_free || procs[a] == 0;
  if (other_free) {
    try {
      return split(rows_whole);
    } catch (const std::invalid_argument&) {
      // Too few nodes across x for the ranks: x takes its share.
    }
  }
  return split(procs);
}

// Logs each implicit step's solve, at most every `progress_seconds` (every step with 0), with
// the mean over the steps since the last line.
void log_implicit_steps(solver::multigrid::ImplicitBackend& implicit, double progress_seconds) {
  implicit.on_step([&stepper = implicit.stepper(), progress_seconds,
                    last_line = std::chrono::steady_clock::time_point(), unlogged = std::int64_t{0},
                    unlogged_seconds = 0.0,
                    outer_before = implicit.stepper().timing().outer_iterations](
                       std::int64_t step, const solver::multigrid::SolveReport& r) mutable {
    const double solve = stepper.timing().last_solve_seconds;
    // A nonlinear step's outer iterations: its report is the last one's solve alone.
    const auto outer = stepper.timing().outer_iterations - outer_before;
    outer_before = stepper.timing().outer_iterations;
    ++unlogged;
    unlogged_seconds += solve;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_line).count() < progress_seconds) return;
    spdlog::info(
        "step {}: {}{}; solve {}{}", step,
        outer > 0 ? fmt::format("{} nonlinear iteration{}, the last one's solve ", outer,
                                outer == 1 ? "" : "s")
                  : std::string(),
        r.describe(), format_solve_seconds(solve),
        unlogged > 1
            ? fmt::format(" (mean {} over the last {} steps)",
                          format_solve_seconds(unlogged_seconds / static_cast<double>(unlogged)),
                          unlogged)
            : std::string());
    last_line = now;
    unlogged = 0;
    unlogged_seconds = 0.0;
  });
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The lowest and highest values a schedule takes (a table's extremes, or value -+ amplitude).
std::pair<double, double> schedule_range(const kernels::Schedule& s) {
  if (!s.table.empty()) {
    double lo = s.table.front()[1], hi = lo;
    for (const auto& e : s.table) {
      lo = std::min(lo, e[1]);
      hi = std::max(hi, e[1]);
    }
    return {lo, hi};
  }
  return {s.value - std::abs(s.amplitude), s.value + std::abs(s.amplitude)};
}

// Whether anything in the case can take heat out at any temperature: a source whose power can
// be negative (its sign times its schedule's), a file's density below 0, a heat flux out of a
// face or a void's surface (a shorthand Neumann gradient of either sign counts).
bool may_take_heat_out(const solver::Case& c) {
  for (const solver::SourceSpec& src : c.sources) {
    const auto [lo, hi] = schedule_range(src.schedule);
    const double p = src.power ? *src.power : src.power_density ? *src.power_density : 0.0;
    if ((p < 0.0 && hi > 0.0) || (p > 0.0 && lo < 0.0)) return true;
    if (p == 0.0 && !src.density.empty()) {
      const double least = *std::min_element(src.density.begin(), src.density.end());
      if ((least < 0.0 && hi > 0.0) || lo < 0.0) return true;
    }
  }
  const auto face_takes = [](const kernels::BoundaryFace& f) {
    if (f.kind != kernels::BoundaryKind::neumann) return false;
    const auto [lo, hi] = schedule_range(f.schedule());
    return f.heat_flux ? lo < 0.0 : (lo != 0.0 || hi != 0.0);
  };
  for (const kernels::BoundaryFace& f : c.boundary)
    if (face_takes(f)) return true;
  for (const solver::RegionSpec& r : c.regions)
    if (r.is_void && face_takes(r.surface)) return true;
  return false;
}

}  // namespace

// A thread joined when it is replaced or goes out of scope (std::jthread is C++20's).
class JoiningThread {
 public:
  JoiningThread() = default;
  template <typename F>
  explicit JoiningThread(F&& f) : thread_(std::forward<F>(f)) {}
  JoiningThread(JoiningThread&&) = default;
  JoiningThread& operator=(JoiningThread&& other) {
    join();
    thread_ = std::move(other.thread_);
    return *this;
  }
  ~JoiningThread() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

struct Session::State {
  explicit State(SessionOptions o) : options(std::move(o)) {}
  // A run that did not fail leaves no reserve for failed_run.txt behind.
  ~State() { release_mark(); }

  // What the constructor does (set_up) and what the end of a run does (finish).
  void set_up();
  void open_files();
  void add_observers();
  void advance_to(std::int64_t target);
  void finish(const solver::RunResult& result);
  void summarize(const solver::RunResult& result, double finishing);
  // Marks the output directory as a failed run's (once it has been written to) and throws.
  [[noreturn]] void fail(Failure failure, const std::string& message);
  void release_mark() {
    if (mark_reserved) io::release_failed_run_mark(prepared.case_);
    mark_reserved = false;
  }
  // The set-up's phases at debug level, each with the wall and process CPU time (all threads)
  // since the one before: on a shared machine the CPU time is the steadier figure.
  void end_phase(const char* what);
  std::shared_ptr<const io::StagedField> staged(solver::StepState& s);
  io::FieldPart owned_part();

  SessionOptions options;
  // An implicit run on one process builds its hierarchy on the host before its backend is
  // chosen, while CUDA starts on a thread of its own (joined once the backend is chosen).
  std::optional<solver::multigrid::ImplicitStepper::HostSetup> host_setup;
  JoiningThread cuda_start;
  Clock::time_point run_start = Clock::now();
  solver::multigrid::PhaseClock phase_clock;

  PreparedRun prepared;
  io::Checkpoint restart;
  std::int64_t step0 = 0;
  // A restart under a changed case: what changed (said once every refusal has passed).
  std::string case_changed;
  // A continuation in place: the checkpoints its run kept in the directory (checkpoint.keep
  // counts them), oldest first.
  std::vector<std::string> kept_checkpoints;
  io::DirectoryUse directory_use;
  kernels::StencilProblem problem;
  bool resume_depth = false;
  solver::BackendChoice choice;
  parallel::DistributedField* decomposed = nullptr;
  bool root = true;
  bool steady = false;
  // The coefficient fields released for the steady solve, laid again after it.
  bool fields_released = false;
  solver::multigrid::ImplicitStepper* implicit = nullptr;
  kernels::Backend* backend = nullptr;
  solver::multigrid::SolveReport steady_report;
  bool writing = false;  // files written into the output directory from here on
  bool mark_reserved = false;  // failed_run.txt's reserve is in the directory
  // Rank 0's hold on the output directory while the run writes there: let go when the run ends
  // or, for one dropped before its end, after the writer (declared after it) has finished.
  io::DirectoryLock directory_lock;
  WallTime wall;

  std::optional<io::OutputSeries> series;
  std::optional<solver::ProbeSampler> probes;
  std::optional<io::ProbesCsv> probes_csv;
  std::vector<double> probe_values;  // the last row
  double probe_time = 0.0;
  std::vector<std::pair<std::int64_t, double>> probes_queued;  // step and time of each sample
  Rows probe_rows;
  // output.fields and heat flows: the shorthand's fields (k = alpha, rho c_p = 1) stand in for
  // a case without fields.
  std::shared_ptr<const kernels::CoefficientFields> flow_fields;
  std::optional<solver::HeatFlowMeter> meter;
  std::optional<solver::HeatFlowRows> flow_rows;
  std::optional<io::HeatFlowsCsv> flows_csv;
  std::optional<solver::HeatFlowRow> last_flow_row;
  double last_flow_time = 0.0;
  Rows heat_flow_rows;
  std::string last_checkpoint;
  // The checkpoints write_checkpoint wrote (weakly canonical paths): the only files besides
  // the run's own checkpoints that a later write_checkpoint may replace.
  std::vector<std::filesystem::path> written_checkpoints;
  std::shared_ptr<CheckpointRotation> rotation;
  std::unique_ptr<solver::Simulation> sim;
  Summary summary;
  bool finished = false;
  // A run on one process writes its output and checkpoints on a writer thread, from two
  // staging buffers the backend allocates (pinned on a GPU), while it steps on; the field is
  // staged once per step for both. A decomposed run writes on its own thread. Declared after
  // everything its jobs use, so it finishes them first.
  std::optional<io::FileWriter> writer;
  std::weak_ptr<const io::StagedField> last_staged;
};

void Session::State::end_phase(const char* what) {
  const solver::multigrid::SetupTime t = phase_clock.lap();
  spdlog::debug("set-up: {} {:.3f} s (CPU {:.3f} s)", what, t.seconds, t.cpu_seconds);
}

void Session::State::fail(Failure failure, const std::string& message) {
  // What was queued is written first (unless a write failed): the files left are complete,
  // and the index lists them.
  writer.reset();
  if (series) {
    try {
      series->flush_index();
    } catch (const std::exception& e) {
      spdlog::warn("{}: the index could not be brought up to date: {}", series->xdmf_path(),
                   e.what());
    }
  }
  // The run's newest checkpoint past its start, where it was written whole, continues it: the
  // message and the mark say so, and the command line prints the command. Where that one
  // already holds what no body reaches (NaN, or with materials, kelvin below 0 K or past
  // kImplausibleKelvin: a run blowing up over several checkpoints before it stopped), the
  // message says so and names the newest one that does not; where the run wrote none (or none
  // such), the checkpoint it restarted from.
  std::string continue_from, which = "its newest checkpoint", passed_over;
  if (writing && rotation) {
    const bool kelvin = prepared.fields != nullptr;
    const auto implausible = [&](const CheckpointRotation::Written& w) {
      if (!w.range) return false;
      const auto [lo, hi] = *w.range;
      return !std::isfinite(lo) || !std::isfinite(hi) ||
             (kelvin && (hi > kImplausibleKelvin || lo < kBelowZeroNoise));
    };
    std::error_code ec;
    for (const CheckpointRotation::Written& w : rotation->history()) {
      if (w.step <= 0 || !std::filesystem::is_regular_file(w.path, ec)) continue;
      if (!implausible(w)) {
        continue_from = w.path;
        if (!passed_over.empty()) which = fmt::format("the newest that does not (step {})", w.step);
        break;
      }
      if (passed_over.empty()) {
        const auto [lo, hi] = *w.range;
        passed_over =
            std::isnan(lo) || std::isnan(hi)
                ? fmt::format("its newest checkpoint, {}, already holds NaN values", w.path)
                : fmt::format("its newest checkpoint, {}, already holds {} from {:.3g} to {:.3g}{}",
                              w.path, kelvin ? "temperatures" : "values", lo, hi,
                              kelvin ? " K" : "");
      }
    }
    if (continue_from.empty() && !options.restart.empty() &&
        std::filesystem::is_regular_file(options.restart, ec)) {
      continue_from = options.restart;
      which = "the checkpoint it restarted from";
    }
  }
  const std::string lead = passed_over.empty() ? "; " : "; " + passed_over + "; ";
  // A run that diverged diverges again from its checkpoint unless the case is mended first.
  const std::string said =
      continue_from.empty()
          ? (passed_over.empty() ? message
                                 : message + lead +
                                       "no checkpoint of the run holds less: with the case "
                                       "mended, run it again from its start")
      : failure == Failure::diverged
          ? message + lead + which + ", " + continue_from +
                ", holds the field before that: with the case mended, --restart " + continue_from +
                " continues from there" +
                (prepared.case_.time.method == solver::TimeMethod::explicit_euler
                     ? " (a checkpoint continues at its own dt: mend the sources, materials "
                       "or faces, or take time.method backward-euler or bdf2; a smaller "
                       "time.dt runs the mended case again from its start)"
                     : "")
          : message + lead + which + ", " + continue_from +
                ", continues the run from there (--restart " + continue_from + ")";
  if (root && writing) io::mark_failed_run(prepared.case_, exit_code(failure), said);
  mark_reserved = false;  // the mark took it
  directory_lock.release();
  finished = true;
  RunError error(failure, said);
  // The command to paste where the cause lies outside the case (a full disk, a device); a run
  // that diverged needs its case mended first, which the message leaves to the user.
  if (failure == Failure::runtime) error.set_checkpoint(continue_from);
  throw error;
}

std::shared_ptr<const io::StagedField> Session::State::staged(solver::StepState& s) {
  std::shared_ptr<const io::StagedField> f = last_staged.lock();
  if (!f || f->step != s.step()) {
    // An fp32 run stages its floats (half the bytes, nothing widened); an fp64 run its doubles.
    const bool fp32_staging = prepared.case_.precision == solver::Precision::fp32;
    f = writer->stage(s.step(), [&](void* out) {
      if (fp32_staging)
        backend->download_to(static_cast<float*>(out));
      else
        backend->download_to(static_cast<double*>(out));
    });
    last_staged = f;
  }
  return f;
}

io::FieldPart Session::State::owned_part() {
  io::FieldPart part;
  const parallel::Box owned = decomposed->decomposition().owned();
  part.lo = owned.lo;
  part.extent = owned.extent;
  decomposed->download_owned(part.values);
  return part;
}

void Session::State::set_up() {
  // Large blocks freed from the coefficient fields' release on are kept for the level
  // operations' arrays and vectors (kernels/kept_blocks.hpp), until the backend's set-up ends
  // (or the set-up fails).
  std::optional<kernels::KeepFreedBlocks> keep_blocks;
  prepared = prepare_run(options.source, options.overrides);
  end_phase("case, materials and coefficient fields");
  solver::Case& c = prepared.case_;
  const solver::TimePlan& plan = prepared.plan;
  const bool restarting = !options.restart.empty();
  const auto refuse = [](const std::string& message) { throw RunError(Failure::invalid, message); };
  // What every rank finds alike (the case, the command line, the checkpoint's attributes, the
  // output directory): reported once.
  const auto refuse_alike = [](const std::string& message) { throw RefusedOnEveryRank(message); };

  // Restart: the checkpoint must match the case before anything is written.
  if (restarting) {
    if (c.time.method == solver::TimeMethod::steady)
      refuse_alike(
          "--restart: a steady state is one solve with nothing to continue; run the "
          "case without --restart");
    // A checkpoint that is missing, corrupt or not a checkpoint is a mistake on the command
    // line: exit code 2, nothing run. Ranks of a decomposed run read the attributes here and
    // their parts of the field at the upload.
    // bdf2's checkpoints hold the field of the step before as well: every rank reads them
    // whole (as its checkpoints are written whole, see add_observers).
    try {
      restart = io::read_checkpoint(options.restart, parallel::size() == 1 ||
                                                         c.time.method == solver::TimeMethod::bdf2);
    } catch (const std::runtime_error& e) {
      refuse_alike(std::string("--restart: ") + e.what());
    }
    // A field that is not finite would step into NaN at once (a diverged run's checkpoint, or
    // one of a field set so): refused as an initial field from a file is.
    for (const std::vector<double>* f : {&restart.field, &restart.previous}) {
      const auto finite = [](double v) { return std::isfinite(v); };
      const auto bad = std::find_if_not(f->begin(), f->end(), finite);
      if (bad == f->end()) continue;
      const auto count = f->end() - f->begin() - std::count_if(f->begin(), f->end(), finite);
      refuse_alike(fmt::format(
          "--restart: {}: {} holds {} value{} that {} not finite (the first at index {} of the "
          "[z][y][x] order): a run does not continue from it; restart from an earlier "
          "checkpoint",
          options.restart, f == &restart.field ? "the field" : "the field of the step before",
          count, count == 1 ? "" : "s", count == 1 ? "is" : "are", bad - f->begin()));
    }
    const std::string mismatch = io::checkpoint_mismatch(restart, c, plan.dt);
    if (!mismatch.empty()) {
      // dt: auto follows the materials and faces, and an `end` fits dt to itself: a changed
      // material or a later end gives another dt. Why, and the way to continue the run, where
      // dt is all that differs (the problems are listed grid first, time.dt after them).
      std::string hint;
      if (restart.meta.dt > 0.0 && restart.meta.dt != plan.dt &&
          mismatch.rfind("time.dt:", 0) == 0) {
        std::string why;
        if (!c.time.dt)
          why =
              "dt: auto follows the materials and faces (0.9 of the stability limit), so a "
              "changed material or face gives another dt";
        if (c.time.end_time)
          why += std::string(why.empty() ? "" : "; ") +
                 "time.end sets dt so that the steps reach it exactly, so another end gives "
                 "another dt";
        if (c.time.end_time) {
          const double steps = std::ceil(*c.time.end_time / restart.meta.dt - 1e-9);
          hint = fmt::format(
              " ({}; to continue this run to t = {}, give time: {{dt: {}, steps: {}}}, which "
              "ends at t = {})",
              why, *c.time.end_time, restart.meta.dt, static_cast<std::int64_t>(steps),
              restart.meta.dt * steps);
        } else if (c.time.steps) {
          hint = fmt::format(" ({}{}to continue this run, give time: {{dt: {}, steps: {}}})", why,
                             why.empty() ? "" : "; ", restart.meta.dt, *c.time.steps);
        }
        // A changed method changes the step's limit too (an implicit run's dt is far past the
        // explicit limit): the checkpoint's dt continues the run only under its own method.
        for (const std::string& change : io::case_changes(restart.meta.case_yaml, c.source_text))
          if (change.rfind("time.method", 0) == 0) {
            hint += fmt::format(
                " (the method changed as well, {}: the checkpoint's dt continues the run under "
                "its own method; give that back too, or run the changed case from this field "
                "with initial: {{type: file, path: {}}} and no --restart)",
                change, options.restart);
            break;
          }
      } else if (mismatch.rfind("grid", 0) == 0 || mismatch.rfind("scheme:", 0) == 0 ||
                 mismatch.rfind("precision:", 0) == 0 || mismatch.rfind("physics.alpha:", 0) == 0) {
        // The grid, scheme, precision or diffusivity: a checkpoint continues only its own run.
        // Where the grid is the same, its field can still start the changed case.
        const bool same_grid = mismatch.rfind("grid", 0) != 0;
        hint = fmt::format(
            " (a checkpoint continues only the run that wrote it: give the case its settings "
            "again to continue that run, or run the changed case without --restart{})",
            same_grid ? fmt::format(", from this field with initial: {{type: file, path: {}}}",
                                    options.restart)
                      : "");
      }
      refuse_alike(
          fmt::format("{}: does not match the case: {}{}", options.restart, mismatch, hint));
    }
    // A restart may change the physics (a face's value, a material) on purpose; it says so.
    const std::vector<std::string> changes =
        io::case_changes(restart.meta.case_yaml, c.source_text);
    if (!changes.empty()) {
      std::string listed;
      for (std::size_t i = 0; i < changes.size() && i < 6; ++i)
        listed += (i ? "; " : "") + changes[i];
      if (changes.size() > 6) listed += fmt::format("; and {} more", changes.size() - 6);
      // Said once the output directory has taken the run (below): a refusal there says it.
      case_changed = listed;
    }
    // The run goes on: its files keep the lineage of the run it continues, or under a changed
    // case branch from it at the restart step (from there on its fields are not that run's).
    c.run_digest = changes.empty() ? io::run_lineage(restart.meta)
                                   : io::branch_lineage(io::run_lineage(restart.meta),
                                                        restart.meta.step, c.source_text);
    step0 = restart.meta.step;
    if (step0 > plan.steps)
      refuse_alike(fmt::format(
          "{}: checkpoint is at step {}, past the case's last step {} ({}): give a later "
          "time.end or more steps (time.steps, --steps), or restart from an earlier checkpoint",
          options.restart, step0, plan.steps, [&] {
            const std::string key = c.time.steps_override ? "--steps"
                                    : c.time.end_time     ? "time.end"
                                                          : "time.steps";
            const auto at = prepared.lines.find(key);
            return at == prepared.lines.end() || c.source_path == "<dict>"
                       ? key
                       : fmt::format("{}, line {}", key, at->second);
          }()));
  }

  directory_use = io::DirectoryUse{};
  directory_use.overwrite = options.overwrite;
  if (restarting) {
    // A restart continues in the directory that holds its checkpoint, unless -o says where.
    std::filesystem::path checkpoint_dir = std::filesystem::path(options.restart).parent_path();
    if (checkpoint_dir.empty()) checkpoint_dir = ".";
    if (!options.overrides.output_dir) c.output.directory = checkpoint_dir.string();
    std::error_code ec;
    directory_use.restarting = std::filesystem::equivalent(checkpoint_dir, c.output.directory, ec);
    // In the checkpoint's directory the run replaces the later outputs of the run it continues,
    // which it finds by that run's output.name: under another name they would stay beside the
    // new series.
    const std::string written_name = io::case_output_name(restart.meta.case_yaml);
    if (directory_use.restarting && !written_name.empty() && written_name != c.output.name)
      refuse_alike(fmt::format(
          "{}: output.name is '{}' but the run that wrote the checkpoint named its outputs '{}': "
          "continuing in {} would split the run's series between two names (and leave any of "
          "its outputs after step {} beside the new ones). Keep output.name: {}, or restart "
          "into another directory with -o DIR",
          options.restart, c.output.name, written_name, c.output.directory, step0, written_name));
    directory_use.restart_step = step0;
    directory_use.checkpoint = options.restart;
    directory_use.lineage = c.run_digest;
    directory_use.branching = c.run_digest != io::run_lineage(restart.meta);
  }
  // The directory's rules before any work: a run that would be refused there is refused now.
  if (options.write_files) {
    try {
      io::check_output_directory(c, directory_use);
    } catch (const std::runtime_error& e) {
      refuse_alike(case_changed.empty()
                       ? std::string(e.what())
                       : fmt::format("{} (the case differs from the one that wrote {}: {})",
                                     e.what(), options.restart, case_changed));
    }
  }
  // materials.h5 describes the fields the directory keeps up to step0 (the index lists it at
  // every step): a branch in place whose materials, conductivities or sources differ would
  // relabel them. Refused before anything is written, and before a steady solve releases the
  // fields it compares.
  if (options.write_files && directory_use.restarting && directory_use.branching &&
      prepared.fields) {
    const std::string materials = io::material_file_path(c);
    if (io::is_material_file(materials) &&
        !io::material_file_matches(materials, c, prepared.material_ids, *prepared.fields)) {
      std::vector<io::RunFile> kept;
      for (const io::RunFile& f : io::find_run_files(c))
        if (f.kind == io::RunFile::Kind::field && f.step <= step0) kept.push_back(f);
      if (!kept.empty())
        refuse_alike(fmt::format(
            "output directory '{}': the case's materials, conductivities or sources "
            "differ from those of the run whose fields the directory keeps up to step "
            "{} ({} file(s), {} first), and {} describes those fields: writing this "
            "case's there would relabel them. Restart into another directory with -o "
            "DIR (the checkpoint stays where it is)",
            c.output.directory, step0, kept.size(),
            std::filesystem::path(kept.front().path).filename().string(), io::kMaterialFileName));
    }
  }

  // A case with materials, sources or convective faces steps with the coefficient fields
  // prepare_run built (once: the time plan, the backend and materials.h5 share them).
  problem = prepared.fields ? solver::make_problem(c, plan.dt, prepared.fields)
                            : solver::make_problem(c, plan.dt);
  // `fusion: auto` on a restart continues at the depth of the run that wrote the checkpoint:
  // the choice may come out differently now (a new tuning cache, another measured bandwidth),
  // and only the same depth continues the run bit for bit.
  resume_depth = restarting && c.fusion == 0 && restart.meta.fusion > 0;
  if (resume_depth) problem.fusion_depth = restart.meta.fusion;
  // One rank per GPU: the ranks of a node take its visible devices in turn (node-local rank
  // modulo the count), before any backend exists. A node without GPUs runs the CPU backend
  // under `backend: auto`.
  if (parallel::size() > 1) {
    // The ranks of a node share its cores: each runs at most cores / ranks-on-the-node OpenMP
    // threads, and no more than the cores it is bound to, unless OMP_NUM_THREADS says
    // otherwise (results do not depend on the thread count). One OpenMP team per core on a
    // node unbound, instead of ranks times cores threads contending.
    if (!std::getenv("OMP_NUM_THREADS")) {
      const long online = sysconf(_SC_NPROCESSORS_ONLN);
      const int cores = online > 0 ? static_cast<int>(online) : omp_get_num_procs();
      omp_set_num_threads(std::max(
          1, std::min(omp_get_num_procs(), cores / std::max(1, parallel::node_size()))));
    }
    const int gpus = kernels::cuda_device_count();
    if (gpus > 0) {
      try {
        kernels::use_cuda_device(parallel::node_rank() % gpus);
      } catch (const std::exception& e) {
        refuse(fmt::format("rank {}: {}", parallel::rank(), e.what()));
      }
    }
  }
  end_phase("checkpoint, output directory and problem");
  // An implicit run on one process: its hierarchy now, on the host, while CUDA starts beside
  // it (where a GPU backend is asked for, or `auto` may choose one); the backend's choice
  // below waits for CUDA as it would have started it itself. Only where the host has the
  // memory for the set-up whatever the backend, so that a case too large for it is still
  // refused before anything is built.
  if (c.time.method != solver::TimeMethod::explicit_euler && parallel::size() == 1 &&
      host_memory_suffices(prepared)) {
    const kernels::BackendEntry* asked = kernels::find_backend(c.backend);
    if (c.backend == "auto" || (asked && asked->needs_gpu))
      cuda_start = JoiningThread([] { kernels::start_cuda(0); });
    // A steady solve asked for on the CPU whose coefficient fields go before its levels are
    // built (below): the backend's choice waits for nothing there, so the coarse levels are
    // built after it and after the fields' release, and take the fields' pages rather than new
    // ones (kernels/kept_blocks.hpp). Only where those are many (kReleasedFieldsBytes at least,
    // which the homogeneous shorthand's own k and rho c_p must reach too): elsewhere the
    // levels' staging, written in part, would take kept pages for little.
    const int fields_count =
        prepared.fields ? static_cast<int>(prepared.fields->sources.size()) : 0;
    const bool coarse_levels_later =
        c.backend == "cpu" && c.time.method == solver::TimeMethod::steady &&
        solver::steady_releases_fields(c, fields_count, false) &&
        (c.has_fields() ||
         16.0 * static_cast<double>(problem.points()) >= solver::kReleasedFieldsBytes);
    try {
      host_setup.emplace(prepare_implicit(c, problem, prepared.plan, !coarse_levels_later));
    } catch (const std::invalid_argument& e) {
      refuse(e.what());
    }
    end_phase("the multigrid hierarchy on the host");
  }
  try {
    const AutoInputs inputs = gather_auto_inputs(problem, c.backend == "auto" || c.fusion == 0);
    choice = solver::choose_backend(c.backend, problem, inputs.context());
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
  // `fusion: auto` runs at the depth the choice found fastest; an explicit `fusion: k` stays.
  if (c.fusion == 0 && choice.fusion_depth > 0) problem.fusion_depth = choice.fusion_depth;
  const int ghost = solver::scheme_radius(c.scheme) * std::max(1, problem.fusion_depth);
  // An explicit run over ranks keeps a block of the grid on each rank's GPU.
  const double share =
      parallel::size() > 1 && c.time.method == solver::TimeMethod::explicit_euler
          ? device_share(problem, parallel::size(),
                         solver::scheme_radius(c.scheme) *
                             std::max({1, problem.fusion_depth, c.parallel.exchange_every}),
                         c.parallel.decomposition, parallel::node_size(),
                         kernels::cuda_device_count())
          : 1.0;
  if (std::vector<std::string> short_of = check_resources(
          prepared, choice, ghost, options.write_files, share,
          parallel::size() > 1 ? parallel::node_size() : 1, disk_use(c, directory_use));
      !short_of.empty())
    throw RunError(Failure::invalid, std::move(short_of));
  // Under mpirun with several ranks: each steps its block of the grid (solver/parallel); rank
  // 0 alone writes files and prints.
  root = parallel::rank() == 0;
  if (parallel::size() > 1) {
    if (c.time.method == solver::TimeMethod::explicit_euler) {
      parallel::DecomposedOptions po;
      po.procs = c.parallel.decomposition;
      po.exchange_every = c.parallel.exchange_every;
      auto wrapped = std::make_unique<parallel::DecomposedBackend>(std::move(choice.backend), po);
      decomposed = wrapped.get();
      choice.backend = std::move(wrapped);
    }
  }
  cuda_start.join();
  end_phase("backend choice and resources");
  // A linear steady solve on one process lets large coefficient fields and the material ids go
  // before its levels are built and lays the body on the grid again after the solve, for the
  // output, the materials file and the heat flows (the same fields): they are not beside the
  // levels at the run's peak (solver::steady_releases_fields, which validate's estimate
  // follows). Where the levels live on a GPU the fields are not beside them in host memory, so
  // they stay (no second laying, no second upload).
  // (The homogeneous shorthand's fields are the solver's own: released, nothing to lay again.)
  const int source_fields = prepared.fields ? static_cast<int>(prepared.fields->sources.size()) : 0;
  keep_blocks.emplace();
  bool released = false;
  if (host_setup && !choice.backend->capabilities().gpu &&
      solver::steady_releases_fields(c, source_fields, false) && host_setup->release_fields()) {
    released = true;
    fields_released = prepared.fields != nullptr;
    prepared.fields.reset();
    std::vector<std::int32_t>().swap(prepared.material_ids);
    problem.coefficients.reset();
  }
  if (host_setup && !host_setup->coarse_levels_built) {
    // Blocks kept only where the fields went: the levels' staging, written in part, would
    // otherwise hold kept pages beside the fields.
    if (!released) keep_blocks.reset();
    try {
      host_setup->build_coarse_levels();
    } catch (const std::invalid_argument& e) {
      refuse(e.what());
    }
    if (!released) keep_blocks.emplace();
    end_phase("the multigrid hierarchy's coarse levels");
  }
  // The initial field before anything is written: an expression that is not finite at some
  // node refuses the case with nothing touched.
  // Built once in the run's precision where the field goes to one explicit backend as it is
  // (an fp32 run's floats: half the bytes, no zero fill, every thread); in doubles otherwise,
  // as the implicit solver and a decomposed run take it.
  kernels::HostField u0;
  // An implicit run on one process in fp64 writes an initial field it computes straight into
  // the solver's once the solver is built, where that lives in host memory (the CPU's level
  // operations): no second array of the grid's size beside the levels at the set-up's peak.
  const bool initial_in_place =
      !restarting && parallel::size() == 1 && c.time.method != solver::TimeMethod::explicit_euler &&
      c.precision == solver::Precision::fp64 && c.initial.kind != solver::InitialKind::file;
  if (!restarting && !initial_in_place) {
    const bool floats = c.precision == solver::Precision::fp32 &&
                        c.time.method == solver::TimeMethod::explicit_euler &&
                        parallel::size() == 1;
    try {
      if (c.initial.kind == solver::InitialKind::file) {
        u0 = kernels::HostField::from(io::read_initial_field(c), floats);
      } else {
        u0 = kernels::HostField(static_cast<std::size_t>(problem.points()), floats);
        if (floats)
          solver::fill_initial_field(c, u0.floats());
        else
          solver::fill_initial_field(c, u0.doubles());
      }
    } catch (const std::invalid_argument& e) {
      // Every rank fills or reads the whole field: found alike on each.
      refuse_alike(with_line(c, prepared.lines, e.what()));
    }
  }
  end_phase("initial field");
  spdlog::info("heatsim {}: {} ({}D, {} points, scheme {}, {})", version(), c.source_path,
               c.grid.dims, problem.points(), solver::to_string(c.scheme.kind),
               kernels::to_string(c.precision));
  const kernels::BackendEntry* chosen = kernels::find_backend(choice.name);
  if (parallel::size() == 1 && chosen && !chosen->needs_gpu) {
    // The CPU's level operations and sweeps are OpenMP loops: their threads meet at a barrier
    // after each one. Threads that wait there spinning (libgomp's default, which the heatsim
    // executable replaces by OMP_WAIT_POLICY=passive unless told otherwise) take the cores
    // from the threads they wait for on a machine already busy with other work, and each wait
    // can last a time slice: 10 bdf2 steps of a radiating PCB (84k nodes) on 2 cores beside
    // two other jobs took 10.7-11.5 s with 2 threads and 2.8 s with 1.
    const int threads = omp_get_max_threads();
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const bool asleep = policy && strcasecmp(policy, "passive") == 0;
    spdlog::info("backend {} ({}), {} thread{} (OMP_NUM_THREADS){}", choice.name, choice.reason,
                 threads, threads == 1 ? "" : "s",
                 threads == 1 ? ""
                 : asleep     ? ", waiting threads sleep (OMP_WAIT_POLICY=passive)"
                              : ", waiting threads spin");
    double load = 0.0;
    const int cores = omp_get_num_procs();
    if (threads > 1 && !asleep && getloadavg(&load, 1) == 1 && load >= cores)
      spdlog::info(
          "the machine is busy (load {:.1f} on {} cores): threads that spin while they wait for "
          "each other here may run this case several times slower than fewer threads would; "
          "OMP_WAIT_POLICY=passive lets them sleep, and to run cases side by side, give each "
          "OMP_NUM_THREADS = cores / cases",
          load, cores);
  } else {
    spdlog::info("backend {} ({})", choice.name, choice.reason);
  }
  if (parallel::size() > 1) {
    // Where each rank runs, gathered to rank 0: "rank 1: host node-a, GPU 1 (NVIDIA H100
    // ...), backend register-tiling".
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const int device = kernels::current_cuda_device();
    const bool on_gpu = chosen && chosen->needs_gpu && device >= 0;
    std::string where = "CPU";
    if (on_gpu)
      where = fmt::format("GPU {} ({})", device,
                          kernels::cuda_devices().at(static_cast<std::size_t>(device)).name);
    const int threads = omp_get_max_threads();
    const std::vector<std::string> all = parallel::gather_text_to_root(
        fmt::format("host {}, {}, backend {}, {} thread{}", host, where, choice.name, threads,
                    threads == 1 ? "" : "s"));
    for (std::size_t r = 0; r < all.size(); ++r) spdlog::info("rank {}: {}", r, all[r]);
    // mpirun binds each of a few ranks to one core: every rank then builds the case's fields
    // (and an implicit run's hierarchy) on one thread, while the host's other cores idle.
    const unsigned cores = std::thread::hardware_concurrency();
    if (threads == 1 && cores >= 2u * static_cast<unsigned>(parallel::size()))
      spdlog::info(
          "rank 0 runs one thread on a host of {} cores: the set-up builds the whole case on "
          "every rank, so `mpirun --bind-to none` (or `--map-by slot:PE=N` with "
          "OMP_NUM_THREADS=N) gives it more",
          cores);
    if (on_gpu)
      spdlog::info("halos between GPU ranks: through pinned host buffers ({})",
                   parallel::cuda_aware_mpi()
                       ? "the MPI library is CUDA-aware, which heatsim does not use yet"
                       : "the MPI library is not CUDA-aware");
  }
  steady = c.time.method == solver::TimeMethod::steady;
  if (steady)
    spdlog::info(
        "steady state to relative residual {:.3g}, written as step 0 with attribute "
        "steady = 1 (no time)",
        c.time.tolerance);
  else
    spdlog::info("dt {:.6g} ({}; explicit stability limit {}), {} steps to t = {:.6g}", plan.dt,
                 plan.dt_auto ? std::string("auto, 0.9 of the limit")
                 // A given dt that does not divide time.end is shortened so that the last
                 // step lands on it (as validate says).
                 : c.time.dt && std::abs(*c.time.dt - plan.dt) > 1e-12 * *c.time.dt
                     ? fmt::format("given {:.6g}, shortened to land on end", *c.time.dt)
                     : std::string("from the case"),
                 io::detail::format_number_down(plan.dt_limit), plan.steps,
                 plan.dt * static_cast<double>(plan.steps));

  // Implicit methods: the multigrid solver is built before any file, so one that cannot start
  // refuses the run with nothing written. Its field holder takes the explicit backend's place
  // (the backend chose the level operations it solves on).
  if (c.time.method != solver::TimeMethod::explicit_euler) {
    std::unique_ptr<solver::multigrid::ImplicitStepper> stepper;
    // Over several ranks the multigrid's fine levels are split with the grid and its
    // coarsest go to rank 0, on the CPU's level operations; on GPUs it goes whole to rank 0's
    // GPU instead (the run's resource check held the whole run to one GPU).
    // HEATSIM_MULTIGRID_GATHER=1 gathers on the CPU too (a test hook), =0 splits on GPUs too.
    parallel::DecomposedLevelOps* split = nullptr;
    try {
      std::unique_ptr<kernels::LevelOps> ops;
      if (parallel::size() > 1) {
        // Rank 0's backend decides for every rank (a rank without a GPU may run the CPU's).
        const char* gather = std::getenv("HEATSIM_MULTIGRID_GATHER");
        const bool rank0_gpu =
            parallel::gather_all(choice.backend->capabilities().gpu ? 1.0 : 0.0)[0] != 0.0;
        parallel::DecomposedLevelOps::Factory whole;
        const std::string asked = gather ? gather : "";
        if ((rank0_gpu && asked != "0") || asked == "1")
          whole = [name = choice.name, precision = c.precision] {
            return kernels::make_level_ops(name, precision);
          };
        auto decomposed_ops = std::make_unique<parallel::DecomposedLevelOps>(
            implicit_decomposition(c, problem),
            [] { return kernels::make_level_ops("cpu", kernels::Precision::fp64); },
            std::move(whole));
        split = decomposed_ops.get();
        ops = std::move(decomposed_ops);
      } else {
        ops = kernels::make_level_ops(choice.name, c.precision);
      }
      auto setup = host_setup ? std::move(*host_setup) : prepare_implicit(c, problem, plan);
      host_setup.reset();
      stepper = make_implicit_stepper(c, plan, std::move(setup), std::move(ops));
    } catch (const parallel::DecompositionError& e) {
      refuse_alike(e.what());
    } catch (const std::invalid_argument& e) {
      refuse(e.what());
    }
    for (const auto& p : stepper->setup_phases())
      spdlog::debug("set-up: multigrid: {} {:.3f} s (CPU {:.3f} s)", p.name, p.time.seconds,
                    p.time.cpu_seconds);
    end_phase("multigrid solver");
    auto held =
        std::make_unique<solver::multigrid::ImplicitBackend>(choice.name, std::move(stepper));
    implicit = &held->stepper();
    if (!steady) log_implicit_steps(*held, options.progress_seconds);
    choice.backend = std::move(held);
    if (split) {
      auto wrapped =
          std::make_unique<parallel::DecomposedImplicitBackend>(std::move(choice.backend), *split);
      decomposed = wrapped.get();
      choice.backend = std::move(wrapped);
    }
  }
  backend = choice.backend.get();
  try {
    backend->setup(problem);
  } catch (const parallel::DecompositionError& e) {  // a grid the ranks cannot split
    refuse_alike(e.what());
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
  if (initial_in_place) {
    double* values = implicit->field_values();
    try {
      if (values) {
        solver::fill_initial_field(c, values);
      } else {
        u0 = kernels::HostField(static_cast<std::size_t>(problem.points()), false);
        solver::fill_initial_field(c, u0.doubles());
      }
    } catch (const std::invalid_argument& e) {
      refuse(with_line(c, prepared.lines, e.what()));
    }
  }
  end_phase("backend set-up");
  // The set-up's freed blocks, kept for its later ones, go back now: the solve and the steps
  // take no large block, and a steady solve's resident set is the run's peak.
  keep_blocks.reset();
  if (decomposed) spdlog::info("decomposed: {}", decomposed->describe());
  if (backend->fusion_depth() > 1 || c.fusion != 1)
    spdlog::info("fusion: {} steps per pass (asked for {})", backend->fusion_depth(),
                 c.fusion == 0 ? (resume_depth ? "auto: " + std::to_string(restart.meta.fusion) +
                                                     ", the checkpoint's depth"
                                               : std::string("auto"))
                               : std::to_string(c.fusion));

  if (implicit && c.time.method == solver::TimeMethod::bdf2 && step0 > 0) {
    if (restart.previous.empty() && root)
      spdlog::warn(
          "{} holds no field of step {} (written by a run of another method): bdf2 "
          "starts again with a backward Euler step, so this is not the "
          "uninterrupted bdf2 run bit for bit",
          options.restart, step0 - 1);
    else if (!restart.previous.empty())
      implicit->set_previous_field(step0, restart.previous);
  }
  // The steady state is one solve, made before any file is written: a solve that stalls
  // leaves nothing behind (exit code 3), and the output holds the solution alone.
  if (steady) {
    // A signal stops the solve after the iteration it came in (every rank alike: the ranks
    // agree on it, since each iteration's sums are collective), with nothing written.
    const std::atomic<int>* stop = options.stop_flag;
    const bool ranks = parallel::size() > 1;
    implicit->options().on_iteration = [stop, ranks](int it, double r) {
      spdlog::info("  iteration {}: relative residual {:.3e}", it, r);
      std::vector<std::int64_t> signal{stop ? stop->load() : 0};
      if (ranks) parallel::max_all(signal);
      if (signal[0] != 0)
        throw Interrupted(static_cast<int>(signal[0]),
                          fmt::format("interrupted by signal {} during the steady solve, at "
                                      "iteration {} (relative residual {:.3e}); nothing "
                                      "written (a steady state has no checkpoint to continue "
                                      "from)",
                                      signal[0], it, r));
    };
    try {
      if (!u0.empty()) backend->upload_from(u0);
      u0 = kernels::HostField();  // the solver holds the field now
      steady_report = implicit->advance(0);
      const auto& t = implicit->timing();
      if (t.solves > 1)  // temperature-dependent materials or radiation: outer iterations
        spdlog::info(
            "steady: converged in {} outer iterations, {} multigrid iterations in all, "
            "solves {}; the last solve {}",
            t.solves, t.iterations, format_solve_seconds(t.solve_seconds),
            steady_report.describe());
      else
        spdlog::info("steady: {}; solve {}", steady_report.describe(),
                     format_solve_seconds(t.last_solve_seconds));
      if (steady_report.at_floor && steady_report.final_residual() > kRoundingLimited && root)
        spdlog::warn(
            "steady: the solve ended on fp64's rounding floor at {:.3g} of the load, far above "
            "the tolerance {:.3g}: at these temperatures the load (sources, and the faces' "
            "pull away from the field) is that small against the rounding of the flows between "
            "nodes, so the field is resolved to about that share only (the heat flows' "
            "imbalance shows how far). Conductivities many orders of magnitude apart do this (a "
            "perfect conductor given as k = 1e12: k 1e4 to 1e6 times its neighbours' models one "
            "as well), or a case with almost no load",
            steady_report.final_residual(), steady_report.tolerance);
    } catch (const solver::multigrid::SolveFailure& e) {
      throw RunError(Failure::diverged, e.what());
    }
    end_phase("the steady solve, not set-up");
    // The output needs the field alone: the levels go before the writer's staging, the
    // materials file and the heat flows take their memory (on one process; a decomposed
    // run's field lives in its level operations).
    // The levels' blocks, kept for the fields laid again.
    kernels::KeepFreedBlocks keep_levels_blocks;
    if (!decomposed) implicit->release_levels();
    const bool lay_again = fields_released;
    if (fields_released) {
      io::ResolvedBody body = io::resolve_body(c, {}, /*check_memory=*/false);
      if (!body.fields) fail(Failure::runtime, "the coefficient fields could not be laid again");
      prepared.material_ids = std::move(body.material_ids);
      prepared.fields = std::move(body.fields);
      problem.coefficients = prepared.fields;
      backend->setup(problem);
      fields_released = false;
    }
    // The levels' blocks that the fields did not take go back before the files' buffers.
    kernels::keep_freed_blocks(false);
    end_phase(lay_again ? "the levels released, the coefficient fields laid again"
                        : "the levels released");
  }
  if (decomposed && restarting && restart.field.empty()) {
    try {
      io::FieldPart part;
      part.lo = decomposed->decomposition().owned().lo;
      part.extent = decomposed->decomposition().owned().extent;
      io::read_field_file_collective(options.restart, restart.meta, part);
      decomposed->upload_owned(part.values);
    } catch (const std::runtime_error& e) {
      refuse(std::string("--restart: ") + e.what());
    }
  } else if (!steady) {
    if (restarting)
      backend->upload(restart.field);
    else if (!u0.empty())
      backend->upload_from(u0);
  }
  u0 = kernels::HostField();  // the backend holds the field now
  if (restarting)
    spdlog::info("restarting from {} at step {} (t = {:.6g})", options.restart, step0,
                 restart.meta.time);

  // Files from here on. A run that fails now marks its directory (failed_run.txt), so the
  // same command replaces what it left instead of being refused. Over several ranks, rank 0
  // writes only once every rank has checked the directory as it was.
  if (parallel::size() > 1) parallel::barrier();
  try {
    open_files();
    add_observers();
  } catch (const RunError&) {
    throw;
  } catch (const std::exception& e) {
    fail(Failure::runtime, e.what());
  }
  end_phase("probes and observers");
  wall.setup = seconds_since(run_start);
}

void Session::State::open_files() {
  const solver::Case& c = prepared.case_;
  const bool files = options.write_files && root;
  // The probes and the heat-flow meter come first: a restart in its checkpoint's directory
  // continues probes.csv and heat_flows.csv there, so their headers must be this run's, and
  // that is checked before the directory loses anything (a file after the restart step, say).
  if (!c.probes.points.empty()) {
    probes.emplace(solver::probe_stencils(c, prepared.fields ? &prepared.fields->capacity : nullptr,
                                          &prepared.material_ids));
    probe_rows.names = probes->names();
  }
  // output.fields: the heat flux, the conductivity and the liquid fraction beside u, computed
  // from the staged field on the writer thread (the coefficient fields do not change; where
  // properties vary with temperature they are evaluated at u); and the heat flows.
  flow_fields = problem.coefficients;
  if (!flow_fields && (c.output.any_field() || c.output.heat_flows))
    flow_fields =
        solver::multigrid::uniform_fields(problem.points(), c.physics.alpha, c.physics.source);
  if (root && flow_fields && (c.output.heat_flows || steady))
    meter.emplace(c, problem, flow_fields, prepared.surfaces,
                  implicit ? &implicit->heat_flow() : nullptr);
  if (files && directory_use.restarting) {
    try {
      if (probes) {
        io::check_step_csv_header(io::probes_csv_path(c), probes->names(), steady, "probes");
        // A probe moved under its name would go on in the column of its old point.
        std::error_code ec;
        const std::vector<std::string> moved =
            io::moved_probes(restart.meta.case_yaml, c.source_text);
        if (!moved.empty() && std::filesystem::exists(io::probes_csv_path(c), ec)) {
          std::string listed;
          for (const std::string& m : moved) listed += (listed.empty() ? "" : "; ") + m;
          throw std::runtime_error(fmt::format(
              "{}: probe(s) moved under the same name since the run that wrote {} ({}): their "
              "columns would join two points' readings. Restart into another directory with -o "
              "DIR, or give the moved probes new names and move the file away",
              io::probes_csv_path(c), options.restart, listed));
        }
      }
      if (meter && c.output.heat_flows)
        io::check_step_csv_header(io::heat_flows_csv_path(c),
                                  io::heat_flows_columns(meter->names(), c.grid.dims,
                                                         !c.materials.empty()),
                                  steady,
                                  "heat flows");
    } catch (const std::runtime_error& e) {
      throw RunError(Failure::invalid, e.what());
    }
  }
  if (!case_changed.empty() && root)
    spdlog::warn(
        "{}: the case differs from the one that wrote the checkpoint ({}); the run "
        "continues under this case from step {}",
        options.restart, case_changed, step0);
  // A restart in the directory of its checkpoint continues that run there: outputs and
  // checkpoints after step0 belong to the run being replaced and are removed. Anywhere else
  // it is a new run as far as the directory goes: another run's files there stay unless
  // --overwrite.
  if (files) {
    try {
      directory_lock = io::prepare_output_directory(c, directory_use);
    } catch (const std::runtime_error& e) {
      // Another run took the directory since the check before the setup (two runs started
      // together: the loser finds the winner's lock, or its files once it has ended): a
      // refusal like the check's (exit code 2, nothing written), not a failure of the run.
      bool refused = false;
      try {
        io::check_output_directory(c, directory_use);
      } catch (const std::runtime_error&) {
        refused = true;
      }
      if (refused) throw RunError(Failure::invalid, e.what());
      throw;
    }
    writing = true;
    // Room for failed_run.txt's message, set aside before the run's files can fill the disk.
    io::reserve_failed_run_mark(c);
    mark_reserved = true;
    series.emplace(c, prepared.plan.dt, choice.name);
  }
  // A continuation in place (the same case, in its checkpoint's directory) keeps `keep`
  // checkpoints of its run, counting those its run wrote there before under a checkpoint.keep
  // of its own (a run interrupted and continued again and again keeps `keep`, not `keep` per
  // process); those written keeping every one stay, as a branch's parent's (another run's) do.
  // Read before the writer's thread exists: HDF5 takes one thread at a time (read beside the
  // writer's materials.h5, a restart crashed or failed to create it).
  if (!options.restart.empty() && files && c.checkpoint.keep > 0 && directory_use.restarting &&
      !directory_use.branching) {
    std::vector<std::pair<std::int64_t, std::string>> found;
    for (const io::RunFile& f : io::find_run_files(c)) {
      if (f.kind != io::RunFile::Kind::checkpoint || f.step > step0) continue;
      try {
        const io::FieldMeta meta = io::read_checkpoint(f.path, false).meta;
        if (io::run_lineage(meta) == c.run_digest && io::case_checkpoint_keep(meta.case_yaml) > 0)
          found.emplace_back(f.step, f.path);
      } catch (const std::exception&) {
        // A checkpoint not readable is not counted (nor removed).
      }
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) kept_checkpoints.push_back(std::move(f.second));
  }
  if (!decomposed && options.write_files)
    writer.emplace(
        static_cast<std::size_t>(problem.points()), c.precision == solver::Precision::fp32,
        [this](std::size_t bytes) { return backend->allocate_host_staging(bytes); }, 2,
        options.progress_seconds,
        [](const io::WriterActivity& a) {
          spdlog::info("waiting for the writer: {}", describe_writer(a));
        },
        backend->capabilities().gpu ? 0 : 1);
  if (prepared.fields && files) {
    // Once per run (again on a restart: the same case gives the same file), before the first
    // output so the index lists it from the first step on. On the writer thread, the first of
    // its jobs, while the run goes on (the fields and ids do not change, and the writer ends
    // before them): a failure fails the run at its next file, as a failed output does, and
    // every job queued is written before the run ends, so the file is complete.
    const std::string path = io::material_file_path(c);
    if (writer)
      writer->submit(
          io::FileWriter::Kind::output, path,
          [&c, ids = &prepared.material_ids, fields = prepared.fields, path](io::WriteProgress&) {
            io::write_material_file(path, c, *ids, *fields);
            return file_bytes(path);
          });
    else
      io::write_material_file(path, c, prepared.material_ids, *prepared.fields);
    series->set_materials_file(io::kMaterialFileName);
  }
  end_phase(steady ? "output directory, materials file"
                   : "field upload, output directory, materials file");
  // Probes: the nodes around each point, gathered from the backend; probes.csv continues on
  // a restart from the rows up to the checkpoint's step.
  // A restart in place whose case no longer writes a series keeps that file's rows up to
  // step0 only: the later ones are the replaced run's, as its later fields were.
  if (files && root && directory_use.restarting) {
    const std::pair<bool, std::string> series[] = {
        {!probes, io::probes_csv_path(c)},
        {!(c.output.heat_flows && flow_fields && meter), io::heat_flows_csv_path(c)}};
    for (const auto& [dropped, path] : series)
      if (dropped) {
        const std::int64_t rows = io::keep_step_csv_rows(path, step0);
        if (rows > 0)
          spdlog::info("{}: the case writes it no more; its {} row(s) after step {} removed",
                       path, rows, step0);
      }
  }
  if (probes) {
    if (files)
      probes_csv.emplace(io::probes_csv_path(c), probes->names(),
                         options.restart.empty() ? -1 : step0, steady);
    const std::int64_t every = c.probes.every;
    const std::int64_t expected = every > 0 ? step0 / every * every : -1;
    if (probes_csv && directory_use.restarting) warn_rows_missing(*probes_csv, step0, expected);
  }
}

void Session::State::add_observers() {
  const solver::Case& c = prepared.case_;
  const solver::TimePlan& plan = prepared.plan;
  const bool restarting = !options.restart.empty();
  sim = std::make_unique<solver::Simulation>(c, plan, *backend, step0);
  solver::Simulation& loop = *sim;
  // A field without values (count 0: a decomposed run's ranks other than 0) gives the
  // fields' names and components alone.
  const auto extras = [&c, this, fields = flow_fields](const io::FieldValues& u) {
    std::vector<io::NodeField> out;
    const auto at_u = [&u](auto of) -> std::vector<double> {
      if (u.count == 0) return {};
      return u.floats ? of(u.floats) : of(u.doubles);
    };
    if (c.output.heat_flux)
      out.push_back({"heat_flux", 3, at_u([&](const auto* v) {
                       return solver::node_heat_flux(problem, fields.get(), c.physics.alpha, v);
                     })});
    if (c.output.conductivity)
      out.push_back({"conductivity", 1, at_u([&](const auto* v) {
                       return solver::node_conductivity(*fields, v);
                     })});
    if (c.output.liquid_fraction)
      out.push_back({"liquid_fraction", 1, at_u([&](const auto* v) {
                       return solver::node_liquid_fraction(*fields, v);
                     })});
    return out;
  };
  if (options.write_files)
    loop.add_observer({"output", c.output.every, !restarting, true,
                       [this, &c, extras, &plan, restarting](solver::StepState& s) {
                         // A restart that ends where it began (no step left, or stopped
                         // before its first) leaves the output of that step as it is: the
                         // same state, written by the run it continues (a branch's would
                         // replace its parent's file), and indexed from the start.
                         if (restarting && s.step() == step0 &&
                             std::filesystem::exists(io::output_path(c, s.step())))
                           return;
                         if (writer) {
                           const std::string path = io::output_path(c, s.step());
                           writer->submit(io::FileWriter::Kind::output, path,
                                          [series = &series, extras, f = staged(s), step = s.step(),
                                           time = s.time(), path](io::WriteProgress& progress) {
                                            (*series)->write(step, time, f->values, &progress,
                                                             extras(f->values));
                                            return file_bytes(path);
                                          });
                           return;
                         }
                         // A decomposed run: every rank gives its owned block
                         // (write_field_file_collective: collectively with a parallel HDF5,
                         // gathered to rank 0 in slabs with a serial one). output.fields:
                         // rank 0 forms them from the whole field, which every rank helps
                         // gather; the others name them alone.
                         std::vector<io::NodeField> more;
                         if (c.output.any_field()) {
                           const std::vector<double>& u = s.field();  // collective
                           std::vector<float> narrow;
                           io::FieldValues whole;
                           whole.count = u.size();
                           if (c.precision == solver::Precision::fp32) {
                             narrow.assign(u.begin(), u.end());  // exact: fp32 values
                             whole.floats = narrow.data();
                           } else {
                             whole.doubles = u.data();
                           }
                           more = extras(whole);
                         }
                         io::write_field_file_collective(
                             io::output_path(c, s.step()),
                             io::output_meta(c, plan.dt, choice.name, s.step(), s.time()),
                             owned_part(), io::FieldFileKind::output, more);
                         if (series) series->add_to_index(s.step(), s.time());
                         if (root) wall.output_bytes += file_bytes(io::output_path(c, s.step()));
                       }});
  if (probes) {
    // Rows at step 0, every probes.every steps and at the last step; not at a step where a
    // signal stopped the run, so that a restart from there writes the rows the
    // uninterrupted run would have. Added before the checkpoint observer: a due row is in
    // the file before the checkpoint flushes it.
    // The rows need no check of the whole field first (Observer::needs_check): a sampled value
    // that is not finite writes no row, nor does any after it, and has the loop check the
    // field, which stops the run. They are sampled without waiting for the device
    // (Backend::sample_later) and written where the loop next waits for it, before any other
    // observer fires there (Observer::collect).
    const std::int64_t every = c.probes.every;
    solver::Observer rows{"probes", every, !restarting && every > 0, true,
                          [this, every, &plan](solver::StepState& s) {
                            const bool due =
                                (every > 0 && s.step() % every == 0) || s.step() == plan.steps;
                            if (!due) return;
                            backend->sample_later(probes->nodes());
                            probes_queued.push_back({s.step(), s.time()});
                          }};
    rows.collect = [this](solver::StepState& s) {
      if (probes_queued.empty()) return;
      std::vector<std::vector<double>> samples;
      backend->collect_samples(samples);
      for (std::size_t k = 0; k < samples.size() && k < probes_queued.size(); ++k) {
        const std::vector<double>& gathered = samples[k];
        const bool finite = std::all_of(gathered.begin(), gathered.end(),
                                        [](double v) { return std::isfinite(v); });
        if (!finite) {
          if (root)
            spdlog::warn("probes: a value that is not finite at step {} (t = {:.6g}): no row "
                         "from there on",
                         probes_queued[k].first, probes_queued[k].second);
          s.report_non_finite();
          break;
        }
        const auto [step, time] = probes_queued[k];
        probe_values = probes->values(gathered);
        probe_time = time;
        if (probes_csv) probes_csv->write(step, time, probe_values);
        if (options.keep_rows) {
          probe_rows.steps.push_back(step);
          probe_rows.times.push_back(time);
          probe_rows.values.push_back(probe_values);
        }
      }
      probes_queued.clear();
    };
    rows.needs_check = false;
    loop.add_observer(std::move(rows));
  }
  // Heat flows: for the summary of a steady state, and with output.heat_flows a row into
  // heat_flows.csv at every output (steady: its one row), each the balance of the step that
  // ends there (solver/heat_flows.hpp), so the observer takes the field of the step or two
  // before each output as well. The file continues on a restart as probes.csv does; a bdf2
  // restart knows the step before its own from the checkpoint. Added before the checkpoint
  // observer, which flushes the rows. Over MPI ranks rank 0 alone measures, from the whole
  // field, which the other ranks help gather (StepState::field(), collective) at the steps
  // the rows need: the same rows, bit for bit, as one process's.
  if (c.output.heat_flows && flow_fields) {
    if (meter) {
      flow_rows.emplace(*meter, c.time.method, plan.dt);
      // Named as heat_flows.csv's columns are, with their unit.
      heat_flow_rows.names =
          io::heat_flows_columns(meter->names(), c.grid.dims, !c.materials.empty());
    }
    if (meter && options.write_files)
      flows_csv.emplace(io::heat_flows_csv_path(c), meter->names(), c.grid.dims,
                        restarting ? step0 : -1, steady, !c.materials.empty());
    // Its rows: step 0, every output.every steps and the last step's.
    if (flows_csv && restarting && directory_use.restarting && !steady)
      warn_rows_missing(*flows_csv, step0,
                        c.output.every > 0 ? step0 / c.output.every * c.output.every : 0);
    if (flow_rows && c.time.method == solver::TimeMethod::bdf2 && step0 > 0 &&
        !restart.previous.empty())
      flow_rows->take(step0 - 1, restart.previous, false);
    const std::int64_t every = c.output.every;
    // A restart's first row is the one after its step: the row at the step itself, which the
    // run being continued wrote, may need fields the checkpoint does not hold (bdf2's storage
    // reads two steps back); the step still primes the rows after it.
    const std::int64_t first_row = restarting ? step0 + 1 : 0;
    solver::Observer rows{
        "heat flows", every, true, true, [this, every, first_row, &plan](solver::StepState& s) {
          // Rows where outputs are due (step 0, every output.every steps, the last step), not
          // where a signal stopped the run, so that its restart writes what the uninterrupted
          // run would have.
          const bool due =
              s.step() == 0 || (every > 0 && s.step() % every == 0) || s.step() == plan.steps;
          const std::vector<double>& u = s.field();  // every rank takes part in the gather
          if (!flow_rows) return;                    // ranks other than 0
          const std::optional<solver::HeatFlowRow> row =
              flow_rows->take(s.step(), u, due && s.step() >= first_row);
          if (!row) return;
          last_flow_row = row;
          last_flow_time = s.time();
          std::vector<double> values = row->flows;
          values.push_back(row->storage);
          values.push_back(row->imbalance);
          if (flows_csv) flows_csv->write(s.step(), s.time(), values);
          if (options.keep_rows) {
            heat_flow_rows.steps.push_back(s.step());
            heat_flow_rows.times.push_back(s.time());
            heat_flow_rows.values.push_back(std::move(values));
          }
        }};
    rows.lead = solver::HeatFlowRows::lead(c.time.method);
    loop.add_observer(std::move(rows));
  }
  // A steady state has nothing to continue: its output is the whole result.
  rotation =
      std::make_shared<CheckpointRotation>(c.checkpoint.keep, options.restart, kept_checkpoints);
  if (!steady && options.write_files)
    loop.add_observer(
        {"checkpoint", c.checkpoint.every, false, true,
         [this, &c, &plan, restarting](solver::StepState& s) {
           // Nor the checkpoint of that step: it is the one the restart read, or its run's.
           if (restarting && s.step() == step0 &&
               std::filesystem::exists(io::checkpoint_path(c, s.step()))) {
             last_checkpoint = io::checkpoint_path(c, s.step());
             return;
           }
           // The probe rows up to this step reach the disk before the checkpoint
           // that a restart would continue them from.
           if (probes_csv) probes_csv->flush();
           if (flows_csv) flows_csv->flush();
           last_checkpoint = io::checkpoint_path(c, s.step());
           io::FieldMeta meta = io::make_meta(c, plan.dt, choice.name, s.step(), s.time());
           meta.fusion = backend->fusion_depth();
           if (writer) {
             // bdf2 continues from the field of the step before as well.
             std::optional<std::vector<double>> previous =
                 implicit ? implicit->previous_field(s.step()) : std::nullopt;
             writer->submit(io::FileWriter::Kind::checkpoint, last_checkpoint,
                            [f = staged(s), meta, path = last_checkpoint, rotation = rotation,
                             previous = previous ? std::move(*previous) : std::vector<double>()](
                                io::WriteProgress& progress) {
                              io::write_checkpoint(path, meta, f->values, previous, &progress);
                              rotation->written(path, meta.step, value_range(f->values));
                              return file_bytes(path);
                            });
             return;
           }
           // bdf2 over ranks: the checkpoint carries the step before, which the collective
           // files do not; every rank holds both fields whole (a decomposed implicit run's
           // downloads give every rank the field), and rank 0 writes the file one process
           // writes.
           if (std::optional<std::vector<double>> previous =
                   implicit ? implicit->previous_field(s.step()) : std::nullopt) {
             std::vector<double> field;
             backend->download(field);
             if (root) io::write_checkpoint(last_checkpoint, meta, field, *previous);
           } else {
             io::write_field_file_collective(last_checkpoint, meta, owned_part(),
                                             io::FieldFileKind::checkpoint);
           }
           if (root) {
             wall.checkpoint_bytes += file_bytes(last_checkpoint);
             rotation->written(last_checkpoint, s.step());
           }
         }});
  const double cell = solver::cell_volume(c);
  if (!steady)  // no steps to report on
    loop.on_progress(
        [this, cell](const solver::ProgressReport& r) {
          // GStencil/s measures stencil sweeps: an implicit step is a solve, not one sweep.
          const std::string activity = writer ? describe_writer(writer->activity()) : "";
          spdlog::info(
              "step {}/{} ({:.0f}%) t={:.6g} {}ETA {} | min {:.6g} max {:.6g} heat {:.10g}{}",
              r.step, r.total_steps,
              r.total_steps ? 100.0 * static_cast<double>(r.step) / r.total_steps : 100.0, r.time,
              implicit ? std::string() : fmt::format("{:.3f} GStencil/s ", r.gstencils_per_second),
              format_seconds(r.eta_seconds), r.stats.min, r.stats.max, r.stats.total_heat * cell,
              activity.empty() ? activity : " | " + activity);
        },
        options.progress_seconds);
  loop.stop_when(options.stop_flag);
  if (decomposed) loop.agree_with([](std::vector<std::int64_t>& v) { parallel::max_all(v); });
}

void Session::State::advance_to(std::int64_t target) {
  if (finished) {
    if (target > sim->step())
      throw std::logic_error(fmt::format("the run has ended, at step {}{}", sim->step(),
                                         summary.interrupted ? " (interrupted)" : ""));
    return;
  }
  if (target > prepared.plan.steps)
    throw std::invalid_argument(fmt::format(
        "step {} is past the case's last step {} (time.steps or time.end; the steps override "
        "sets it)",
        target, prepared.plan.steps));
  solver::RunResult result;
  try {
    result = sim->run_to(target);
  } catch (const solver::multigrid::SolveFailure& e) {
    fail(Failure::diverged, e.what());
  } catch (const std::exception& e) {
    fail(Failure::runtime, e.what());
  }
  if (sim->finished()) finish(result);
}

void Session::State::finish(const solver::RunResult& result) {
  finished = true;
  try {
    // Every file the run queued is on the disk before it says anything about them (a
    // signal's checkpoint, the output directory); a write that failed fails the run here.
    double finishing = 0.0;
    if (writer) {
      const auto t0 = Clock::now();
      writer->finish();
      finishing = seconds_since(t0);
    }
    // The index lists every output written (it is rewritten at a spacing, not at each).
    if (series) series->flush_index();
    if (implicit && implicit->timing().solves > 0 && !steady)
      spdlog::info("{}", describe_solves(implicit->timing()));
    summary.backend = choice.name;
    summary.first_step = result.first_step;
    summary.last_step = result.last_step;
    summary.time = result.time;
    switch (result.status) {
      case solver::RunResult::Status::diverged:
        fail(Failure::diverged,
             result.message +
                 (prepared.case_.time.method == solver::TimeMethod::explicit_euler
                      ? "; an explicit step is stable only below its limit (`heatsim validate` "
                        "prints it), which radiation hotter than every temperature the case "
                        "names, or a source heating the body far above them, lowers: give a "
                        "smaller time.dt, or run time.method: backward-euler or bdf2 (stable at "
                        "any dt)"
                      : std::string()));
      case solver::RunResult::Status::interrupted:
        summary.interrupted = true;
        summary.signal = result.signal;
        release_mark();
        directory_lock.release();
        return;
      case solver::RunResult::Status::completed:
        break;
    }
    // Every file is on the disk: the index records that the run reached its end, so that a
    // restart there from an earlier checkpoint does not discard its results unasked.
    if (series) {
      try {
        series->mark_finished(result.last_step);
      } catch (const std::exception& e) {
        spdlog::warn("{}: could not record the run's end there: {}", series->xdmf_path(), e.what());
      }
    }
    summarize(result, finishing);
    release_mark();
    directory_lock.release();
  } catch (const RunError&) {
    throw;
  } catch (const std::exception& e) {
    fail(Failure::runtime, e.what());
  }
}

void Session::State::summarize(const solver::RunResult& result, double finishing) {
  const solver::Case& c = prepared.case_;
  wall.stepping = result.stepping_seconds;
  if (steady) {
    wall.stepping_name = "solve";
    wall.writes_checkpoints = false;
    wall.stepping = implicit->timing().step_seconds;
    wall.setup = std::max(0.0, wall.setup - wall.stepping);
  }
  for (const auto& [name, seconds] : result.observer_seconds) {
    if (name == "output") wall.output += seconds;
    if (name == "checkpoint") wall.checkpoints += seconds;
  }
  wall.files = wall.output + wall.checkpoints + finishing;
  wall.waited = wall.files;
  if (writer) {
    const io::FileWriter::Stats w = writer->stats();
    wall.waited = w.waiting_seconds;
    wall.output = w.seconds[0];
    wall.checkpoints = w.seconds[1];
    wall.output_bytes = w.bytes[0];
    wall.checkpoint_bytes = w.bytes[1];
  }
  const double cell = solver::cell_volume(c);
  Summary& s = summary;
  s.wall_seconds = result.wall_seconds;
  s.gstencils_per_second = result.gstencils_per_second;
  s.min = result.final_stats.min;
  s.max = result.final_stats.max;
  s.total_heat = result.final_stats.total_heat * cell;
  if (implicit) {
    s.solves = implicit->timing().solves;
    s.iterations = implicit->timing().iterations;
    s.solve_seconds = implicit->timing().solve_seconds;
    if (steady) s.residual = steady_report.final_residual();
  }
  if (series) s.output = series->xdmf_path();
  std::vector<std::string>& lines = s.lines;
  std::vector<double> final_u;  // for the material summaries
  if (decomposed) {
    // Collective: every rank takes part in the gather; rank 0 prints.
    if (prepared.fields || (steady && flow_fields)) backend->download(final_u);
    if (!root) return;
    // An implicit or steady run's line gives its solves (rank 0 holds the stepper's timing and
    // the steady report, as one process does), an explicit one's its rate.
    lines.push_back(done_line(result, fmt::format("{} x {}", parallel::size(), choice.name),
                              implicit, steady ? &steady_report : nullptr,
                              [] { return std::string(); }));
    const std::string halo = decomposed->exchange_summary();
    if (!halo.empty()) lines.push_back("rank 0: " + halo);
  } else {
    lines.push_back(
        done_line(result, choice.name, implicit, steady ? &steady_report : nullptr,
                  [&] { return bound_summary(problem, *backend, result.gstencils_per_second); }));
  }
  s.total_seconds = seconds_since(run_start);
  lines.push_back(describe_wall_time(wall, s.total_seconds));
  // The set-up's multigrid hierarchy apart, the part a multigrid library's set-up is compared
  // with (scripts/hypre-vs-heatsim: PFMG's, given the assembled matrix).
  if (implicit) {
    const double hierarchy = implicit->hierarchy_setup().seconds;
    lines.push_back(fmt::format(
        "setup: multigrid hierarchy {:.3f} s (coarse levels, level operations and vectors), "
        "the rest {:.3f} s (case, fields, operator, loads, files)",
        hierarchy, std::max(0.0, wall.setup - hierarchy)));
  }
  lines.push_back(fmt::format("final field: min {:.6g} max {:.6g} total heat {:.10g}", s.min, s.max,
                              s.total_heat));
  // With materials every temperature is in kelvin: a field far above where any solid melts or
  // sublimes (about 4000 K), or a total heat past what a double holds, is most often a unit slip
  // in a source or a property. Said, not refused: the numbers are the case's.
  if (prepared.fields && (s.max > kImplausibleKelvin || !std::isfinite(s.total_heat)) && root)
    spdlog::warn(
        "the final field reaches {:.3g} K (total heat {:.3g}), far above where any solid melts "
        "(about 4000 K): check the units of the sources (W/m^3, W/m^2, W) and of the "
        "materials' properties (SI: W/(m K), kg/m^3, J/(kg K))",
        s.max, s.total_heat);
  // Below 0 K no temperature exists: a sink whose sign slipped, or one larger than the faces
  // can feed at any temperature (the solve is linear and goes on past absolute zero). Where
  // nothing takes heat out, the time method's own error: Crank-Nicolson's swings at steps far
  // beyond the explicit limit, BDF2's overshoot at steps past the body's time constants.
  // Rounding's -1e-24 K beside a 0 K face is not worth a line.
  if (prepared.fields && s.min < kBelowZeroNoise && root) {
    const solver::TimeMethod m = c.time.method;
    if (may_take_heat_out(c))
      spdlog::warn(
          "the final field falls to {:.3g} K, below absolute zero: a sink (a negative power, "
          "power_density or heat_flux) takes out more heat than the faces and sources bring "
          "in; check the signs and units of the sources and faces",
          s.min);
    else if (m == solver::TimeMethod::crank_nicolson)
      spdlog::warn(
          "the final field falls to {:.3g} K, below absolute zero, though nothing in the case "
          "takes heat out: Crank-Nicolson swings from step to step where the field changes "
          "sharply at steps far beyond the explicit limit (see the ringing warning); take "
          "time.method: bdf2 or backward-euler, or a dt nearer the explicit limit",
          s.min);
    else if (m == solver::TimeMethod::bdf2)
      spdlog::warn(
          "the final field falls to {:.3g} K, below absolute zero, though nothing in the case "
          "takes heat out: BDF2 overshoots a decay at steps longer than the body's time "
          "constants; take time.method: backward-euler (which never overshoots), or a smaller "
          "dt",
          s.min);
    else
      spdlog::warn(
          "the final field falls to {:.3g} K, below absolute zero, though nothing in the case "
          "takes heat out: the field's error, not the case's physics (check the solve's "
          "warnings: a rounding floor, or steps too long for the method)",
          s.min);
  }
  if (series) lines.push_back(fmt::format("output: {}", series->xdmf_path()));
  if (prepared.fields) {
    if (!decomposed) backend->download(final_u);
    for (const solver::MaterialSummary& m :
         solver::summarize_materials(c, prepared.material_ids, final_u))
      if (m.nodes > 0)
        lines.push_back(fmt::format("material {}: {} nodes, min {:.6g} max {:.6g} mean {:.6g}",
                                    m.name, m.nodes, m.min, m.max, m.mean));
    if (options.write_files)
      lines.push_back(fmt::format("materials: {}", io::material_file_path(c)));
  }
  // Where the heat goes (steady states: the stored heat does not change); a case without
  // fields is metered with the shorthand's (k = alpha, rho c_p = 1).
  if (steady && meter) {
    if (final_u.empty()) backend->download(final_u);
    const solver::HeatFlowReport flows = meter->report(final_u, 0.0);
    // A flow the solve's tolerance on the field does not resolve is rounding; where every
    // flow is (a body, or its pieces, with no load), the balance has no scale to be off by.
    const double resolution = c.time.tolerance * flows.gross;
    if (!add_heat_flow_lines(lines, c, "at the steady state", flows, resolution))
      warn_unbalanced(c, flows, true, 0.0);
  }
  if (last_flow_row && !steady) {
    // The last row of heat_flows.csv: the last step's balance.
    solver::HeatFlowReport flows;
    for (std::size_t k = 0; k < last_flow_row->flows.size(); ++k) {
      flows.flows.push_back({meter->names()[k], last_flow_row->flows[k]});
      flows.largest = std::max(flows.largest, std::abs(last_flow_row->flows[k]));
    }
    flows.flows.push_back({"storage (the stored heat's growth)", last_flow_row->storage});
    flows.imbalance = last_flow_row->imbalance;
    // What the step resolves: an implicit solve's tolerance, an explicit step's rounding, on
    // the magnitudes the row adds; a row whose every rate (the storage's too) is below it has
    // no load left to be off by (a body settled at its faces' own temperatures).
    const bool implicit = c.time.method != solver::TimeMethod::explicit_euler;
    const double resolution =
        (implicit ? c.time.tolerance : 64.0 * std::numeric_limits<double>::epsilon()) *
        last_flow_row->gross;
    const bool settled = add_heat_flow_lines(
        lines, c, fmt::format("over the last step, to t = {:.6g}", last_flow_time), flows,
        c.precision != solver::Precision::fp32 ? resolution : 0.0);
    // In fp32 a step's change near a large temperature can fall below what a float holds
    // there (3.05e-5 K at 300 K): the field then lags and the balance shows it. A balance off
    // by more than a percent of its largest flow is not rounding the user should accept.
    const double off = flows.largest > 0.0 ? std::abs(flows.imbalance) / flows.largest : 0.0;
    const double u_large = std::max(std::abs(s.min), std::abs(s.max));
    if (c.precision != solver::Precision::fp32 && !settled)
      warn_unbalanced(c, flows, false, prepared.plan.dt);
    if (c.precision == solver::Precision::fp32 && off > 1e-2)
      spdlog::warn(
          "the last step's heat balance is off by {:.2g} of its largest flow in fp32: a step's "
          "change is near the spacing of floats at these temperatures ({:.3g} at {:.4g}), so the "
          "field lags the heat put in; run it in fp64 (precision: fp64)",
          off, u_large > 0.0 ? std::ldexp(1.0, std::ilogb(u_large) - 23) : 0.0, u_large);
  }
  if (flows_csv) {
    flows_csv->flush();
    lines.push_back(fmt::format("heat flows: {}", flows_csv->path()));
  }
  if (probes) {
    if (probes_csv) probes_csv->flush();
    std::string values;
    const std::vector<std::string> names = probes->names();
    for (std::size_t i = 0; i < names.size() && i < probe_values.size(); ++i)
      values += fmt::format("{}{} {:.6g}", i ? ", " : "", names[i], probe_values[i]);
    if (!values.empty())
      lines.push_back(fmt::format(
          "probes {}: {}",
          steady ? std::string("at the steady state") : fmt::format("at t = {:.6g}", probe_time),
          values));
    if (probes_csv) lines.push_back(fmt::format("probes: {}", probes_csv->path()));
  }
}

Session::Session(SessionOptions options) : state_(std::make_unique<State>(std::move(options))) {
  state_->set_up();
}

Session::~Session() = default;

void Session::advance(std::int64_t steps) {
  if (steps < 0) throw std::invalid_argument("steps must be >= 0");
  state_->advance_to(step() + steps);
}

void Session::advance_to_step(std::int64_t step) {
  state_->advance_to(std::max(step, this->step()));
}

void Session::advance_to_time(double time) {
  if (!std::isfinite(time))
    throw std::invalid_argument(fmt::format("{} must be a finite time", time));
  // The first step at or after `time`, with a little room for the rounding of time / dt.
  const double steps = time / plan().dt;
  const double nearest = std::round(steps);
  const double first =
      std::abs(steps - nearest) <= 1e-9 * std::max(1.0, nearest) ? nearest : std::ceil(steps);
  // Checked as a double: a step past the integers' range has no conversion.
  if (first > static_cast<double>(last_step()))
    throw std::invalid_argument(fmt::format(
        "t = {} lies at step {:g}, past the case's last step {} (time.steps or time.end; the "
        "steps override sets it)",
        time, first, last_step()));
  advance_to_step(static_cast<std::int64_t>(std::max(first, 0.0)));
}

const Summary& Session::run() {
  state_->advance_to(last_step());
  return state_->summary;
}

bool Session::finished() const { return state_->finished; }
const Summary& Session::summary() const { return state_->summary; }
std::int64_t Session::step() const { return state_->sim->step(); }
double Session::time() const { return state_->sim->time(); }
std::int64_t Session::last_step() const { return state_->prepared.plan.steps; }
const solver::Case& Session::run_case() const { return state_->prepared.case_; }
const solver::TimePlan& Session::plan() const { return state_->prepared.plan; }
const std::string& Session::backend_name() const { return state_->choice.name; }
bool Session::fp32() const { return state_->prepared.case_.precision == solver::Precision::fp32; }
const std::string& Session::last_checkpoint() const { return state_->last_checkpoint; }
const Rows& Session::probe_rows() const { return state_->probe_rows; }
const Rows& Session::heat_flow_rows() const { return state_->heat_flow_rows; }

std::vector<std::int64_t> Session::shape() const {
  const solver::GridSpec& g = state_->prepared.case_.grid;
  std::vector<std::int64_t> shape;
  for (int a = g.dims - 1; a >= 0; --a) shape.push_back(g.n[a]);
  return shape;
}

void Session::field(double* out) const { state_->backend->download_to(out); }
void Session::field(float* out) const { state_->backend->download_to(out); }

void Session::set_field(std::vector<double> values) {
  // The end's files and summary are made: a field set now would go nowhere, yet read back.
  if (state_->finished)
    throw std::logic_error(
        fmt::format("the run has ended, at step {}{}: its field can no longer be set", step(),
                    state_->summary.interrupted ? " (interrupted)" : ""));
  if (static_cast<std::int64_t>(values.size()) != state_->problem.points())
    throw std::invalid_argument(
        fmt::format("the field needs {} values, not {}", state_->problem.points(), values.size()));
  // As an initial field from a file: a value that is not finite would be written and stepped
  // into NaN, and the run's later check would say its last check was finite. In the run's
  // precision: an fp32 run rounds 1e39 to inf.
  const bool narrow = fp32();
  const auto finite = [narrow](double v) {
    return narrow ? std::isfinite(static_cast<float>(v)) : std::isfinite(v);
  };
  std::int64_t bad = 0, first = -1;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!finite(values[i]) && bad++ == 0) first = static_cast<std::int64_t>(i);
  if (bad > 0)
    throw std::invalid_argument(fmt::format(
        "the field holds {} value{} that {} not finite{} (the first at index {} of the [z][y][x] "
        "order): nothing was set",
        bad, bad == 1 ? "" : "s", bad == 1 ? "is" : "are", narrow ? " in fp32, the run's precision" : "",
        first));
  // The Dirichlet nodes hold their faces' values at every step; a field set between steps
  // holds them too (the command line's initial field from a file alike, at g(0)).
  solver::set_dirichlet_nodes(run_case(), values, time());
  state_->backend->upload(values);
  state_->last_staged.reset();  // a field staged at this step is the old one
}

void Session::write_checkpoint(const std::string& path) {
  State& s = *state_;
  // Never over a file that is not a checkpoint this run wrote (another run's output or
  // checkpoint, of this case too, the case file): those are the user's, and a checkpoint
  // written over them loses them (a later step of another session's run, replaced by step 0).
  // Absolute first: weakly_canonical leaves a relative path relative while the file does not
  // exist and makes it absolute once it does, so "a.h5" written once never matched itself.
  std::error_code ec, canonical;
  const auto resolved = [](const std::string& p, std::error_code& e) {
    const std::filesystem::path absolute = std::filesystem::absolute(p, e);
    return e ? std::filesystem::path() : std::filesystem::weakly_canonical(absolute, e);
  };
  const std::filesystem::path where = resolved(path, canonical);
  if (std::filesystem::exists(path, ec)) {
    const auto same = [&](const std::string& p) {
      std::error_code e;
      return !p.empty() && resolved(p, e) == where && !e;
    };
    bool ours = same(s.last_checkpoint) ||
                std::find(s.written_checkpoints.begin(), s.written_checkpoints.end(), where) !=
                    s.written_checkpoints.end();
    if (ours) {
      try {  // and still a checkpoint of this case (not replaced since)
        const io::FieldFile header = io::read_field_header(path);
        const solver::Case& c = s.prepared.case_;
        const std::string lineage =
            c.run_digest.empty() ? io::case_digest(c.source_text) : c.run_digest;
        ours = header.kind == io::FieldFileKind::checkpoint &&
               io::lineage_head(io::run_lineage(header.meta)) == io::lineage_head(lineage);
      } catch (const std::exception&) {
        ours = false;
      }
    }
    if (!ours)
      throw std::invalid_argument(
          path + " exists and is not a checkpoint this run wrote: a checkpoint is not written "
                 "over another file (another run's checkpoint included); choose another path, "
                 "or remove the file first");
  }
  io::FieldMeta meta =
      io::make_meta(s.prepared.case_, s.prepared.plan.dt, s.choice.name, step(), time());
  meta.fusion = s.backend->fusion_depth();
  std::vector<double> u;
  s.backend->download(u);
  const std::optional<std::vector<double>> previous =
      s.implicit ? s.implicit->previous_field(step()) : std::nullopt;
  io::write_checkpoint(path, meta, u, previous ? *previous : std::vector<double>());
  if (!canonical && std::find(s.written_checkpoints.begin(), s.written_checkpoints.end(), where) ==
                 s.written_checkpoints.end())
    s.written_checkpoints.push_back(where);
}

}  // namespace heatsim::run
