// `heatsim run`: load and validate the case, check resources, pick the backend, run the time
// loop with output, checkpoint and progress observers, and print a summary.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "auto_choice.hpp"
#include "commands.hpp"
#include "io/case_loader.hpp"
#include "io/checkpoint.hpp"
#include "io/file_writer.hpp"
#include "io/heat_flows_csv.hpp"
#include "io/initial_file.hpp"
#include "io/material_output.hpp"
#include "io/output.hpp"
#include "io/probes_csv.hpp"
#include "kernels/registry.hpp"
#include "run_setup.hpp"
#include "solver/backend_choice.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_backend.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposed_backend.hpp"
#include "solver/probes.hpp"
#include "solver/roofline.hpp"
#include "solver/simulation.hpp"
#include "solver/version.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/timing.hpp"
#endif

namespace heatsim::app {
namespace {

std::atomic<int> g_signal{0};
// CLOCK_MONOTONIC nanoseconds (plus one, so never 0) of the first signal; 0: none yet.
std::atomic<std::int64_t> g_first_signal_ns{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free,
              "the handler needs a lock-free clock");

// Signals within this many seconds of the first are the same request: `timeout` and a shell's
// Ctrl-C signal the process and its group, mpirun forwards what it receives, a scheduler sends
// TERM to every process of a job, so one request often arrives two or three times at once.
constexpr std::int64_t kSameRequestNs = 2'000'000'000;

// First SIGINT/SIGTERM (and any within kSameRequestNs of it): ask the loop to stop (it
// checkpoints and exits 128+signal). A later one: abort at once. Only atomics, clock_gettime
// and _exit, all async-signal-safe.
extern "C" void on_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::int64_t ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec + 1;
  std::int64_t first = 0;
  if (g_first_signal_ns.compare_exchange_strong(first, ns)) {
    g_signal.store(sig);
    return;
  }
  if (ns - first > kSameRequestNs) _exit(128 + sig);
}

// A word for a POSIX shell: as it is when it holds only characters no shell treats
// specially, else in single quotes.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                       "qrstuvwxyz0123456789_-+=.,:/@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// The command that continues this run from `checkpoint`: the program as it was called, the
// case, and every override the run was given, so that it continues exactly this run.
std::string continue_command(const RunOptions& o, const std::string& checkpoint) {
  std::string cmd =
      shell_word(o.program.empty() ? "heatsim" : o.program) + " run " + shell_word(o.case_path);
  const RunOverrides& v = o.overrides;
  if (v.output_dir) cmd += " -o " + shell_word(*v.output_dir);
  if (v.backend) cmd += " --backend " + shell_word(*v.backend);
  if (v.precision) cmd += " --precision " + shell_word(*v.precision);
  if (v.steps) cmd += " --steps " + std::to_string(*v.steps);
  return cmd + " --restart " + shell_word(checkpoint);
}

std::string format_seconds(double s) {
  char buf[64];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600,
                  (static_cast<int>(s) / 60) % 60);
  return buf;
}

// A solve's time: milliseconds below a second, three digits.
std::string format_solve_seconds(double s) {
  return s < 1.0    ? fmt::format("{:.3g} ms", 1e3 * s)
         : s < 60.0 ? fmt::format("{:.3g} s", s)
                    : format_seconds(s);
}

// What the summary says after the achieved rate on a GPU: the fraction of the binding limit
// (solver/roofline.hpp), ": 41% of the memory-bandwidth bound ...". The copy bandwidth is
// measured after the run with CUDA events, the median of 5 copies of 64-256 MiB (longer than a
// launch, larger than the L2 cache). Nothing is said on the CPU: a copy timed on the host beside
// other work is not a measurement (one 2-core machine gave 0.72 to 166 GB/s from run to run),
// and `heatsim bench` is the place for bounds. Nor is anything said when the measured bound is
// below what the run reached: a fraction above 100% would only show the measurement was off.
std::string bound_summary(const kernels::StencilProblem& problem, kernels::Backend& backend,
                          [[maybe_unused]] const std::string& backend_name,
                          double achieved_gstencils) {
  if (achieved_gstencils <= 0 || !backend.capabilities().gpu) return "";
#ifdef HEATSIM_HAVE_CUDA
  constexpr double kMiB = 1 << 20;
  const double value_bytes = problem.precision == kernels::Precision::fp64 ? 8.0 : 4.0;
  const double field_bytes = static_cast<double>(problem.points()) * value_bytes;
  double bandwidth = 0.0, peak_flops = 0.0;
  std::string peak_name;
  try {
    const kernels::DeviceInfo device =
        kernels::cuda_devices().at(static_cast<std::size_t>(kernels::current_cuda_device()));
    const double bytes = std::min(std::clamp(field_bytes, 64 * kMiB, 256 * kMiB),
                                  static_cast<double>(device.free_memory) / 4);
    bandwidth = kernels::cuda::copy_bandwidth(static_cast<std::size_t>(bytes), 5);
    const bool tensor_cores = backend_name == "convstencil";
    peak_flops = solver::device_peak_flops(device, problem.precision, tensor_cores);
    peak_name = std::string(problem.precision == kernels::Precision::fp64 ? "FP64" : "FP32") +
                (tensor_cores ? " tensor-core peak" : " CUDA-core peak");
  } catch (const std::exception& e) {
    return std::string(" (bound not measured: ") + e.what() + ")";
  }
  if (bandwidth <= 0) return "";
  const solver::Roofline r =
      problem.coefficients
          ? solver::coefficient_roofline(
                problem.precision, static_cast<int>(problem.coefficients->sources.size()),
                bandwidth, problem.coefficients->has_faces() ? problem.dims : 0)
          : solver::roofline(problem.stencil, problem.precision, backend.fusion_depth(),
                             bandwidth, peak_flops);
  if (r.fraction(achieved_gstencils) > 1.0) return "";
  return ": " + solver::describe(r, achieved_gstencils, peak_name);
#else
  (void)problem;
  return "";
#endif
}

// Where the run's wall time went, the summary's `time:` line. Output and checkpoints carry
// what they wrote (the files' sizes, in GB of 1e9 bytes as dd counts them) and the rate, so a
// run's writing can be held against the disk's sequential speed (scripts/io-speed).
struct WallTime {
  const char* stepping_name = "stepping";  // "solve" for a steady state
  double setup = 0.0;        // case, fields, initial field, backend, materials file
  double stepping = 0.0;     // advancing the backend (a steady state: its solve)
  // The run's own thread on files: staging fields and waiting for the writer thread (a
  // decomposed run, which writes on its own thread: all of its writing).
  double files = 0.0;
  double waited = 0.0;       // of `files`, waiting for the writing to finish
  double output = 0.0;       // writing output files and the index (the writer's time)
  double checkpoints = 0.0;  // writing checkpoint files
  double output_bytes = 0.0;
  double checkpoint_bytes = 0.0;
};

std::string describe_writes(const char* what, double seconds, double bytes) {
  return fmt::format("{} {:.3f} s ({:.3f} GB, {:.3g} GB/s)", what, seconds, bytes / 1e9,
                     seconds > 0 ? bytes / 1e9 / seconds : 0.0);
}

// "time: setup 1.204 s, stepping 0.200 s, files 0.402 s, other 0.310 s; total 2.1 s; output
// 3.114 s (17.180 GB, 5.52 GB/s), checkpoints ...; 3.7 of 4.1 s of writing hidden (90%)": the
// parts before `total` add up to it, `other` being the rest (NaN checks, progress, probes, the
// bound's copy measurement, the summary); the writing after it ran on the writer thread, and
// what of it the run did not wait for (it stepped or did other work meanwhile) was hidden.
std::string describe_wall_time(const WallTime& t, double total) {
  const double other = std::max(0.0, total - t.setup - t.stepping - t.files);
  const double writing = t.output + t.checkpoints;
  const double hidden = std::max(0.0, writing - t.waited);
  return fmt::format(
      "time: setup {:.3f} s, {} {:.3f} s, files {:.3f} s, other {:.3f} s; total {:.3f} s; {}, "
      "{}; {:.3f} of {:.3f} s of writing hidden ({:.0f}%)",
      t.setup, t.stepping_name, t.stepping, t.files, other, total,
      describe_writes("output", t.output, t.output_bytes),
      describe_writes("checkpoints", t.checkpoints, t.checkpoint_bytes), hidden, writing,
      writing > 0 ? 100.0 * hidden / writing : 0.0);
}

// What the writer thread does, for the progress line: "writing field_00000100.h5 (0.53 of
// 1.07 GB, 0.45 GB/s)", or "building ..." before the file's bytes go out.
std::string describe_writer(const io::WriterActivity& a) {
  if (!a.busy) return "";
  const std::string file = std::filesystem::path(a.file).filename().string();
  const std::string queued = a.queued > 0 ? fmt::format(", {} more queued", a.queued) : "";
  if (a.bytes <= 0) return fmt::format("building {} ({}){}", file, format_seconds(a.seconds), queued);
  if (a.bytes_done <= 0) return fmt::format("writing {} ({:.2f} GB){}", file, a.bytes / 1e9, queued);
  // The rate over the job so far, its building included: what the file costs the run.
  return fmt::format("writing {} ({:.2f} of {:.2f} GB, {:.3g} GB/s){}", file, a.bytes_done / 1e9,
                     a.bytes / 1e9, a.seconds > 0 ? a.bytes_done / 1e9 / a.seconds : 0.0, queued);
}

double file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0.0 : static_cast<double>(size);
}

// The multigrid stepper of an implicit or steady case. Throws std::invalid_argument for a
// case it cannot solve (prepare_run refuses those already; this is the solver's own word).
std::unique_ptr<solver::multigrid::ImplicitStepper> make_implicit_stepper(
    const solver::Case& c, const kernels::StencilProblem& problem, const solver::TimePlan& plan,
    const std::string& backend_name) {
  namespace mg = solver::multigrid;
  auto fields = problem.coefficients
                    ? problem.coefficients
                    : mg::uniform_fields(problem.points(), c.physics.alpha, c.physics.source);
  mg::SolveOptions options;
  options.tolerance = c.time.tolerance;
  // Temperature-dependent materials and radiation: each outer iteration of a steady solve is
  // worth a line; a transient's, at debug level.
  const bool steady = c.time.method == solver::TimeMethod::steady;
  options.on_outer_iteration = [steady](int outer, double change, const mg::SolveReport& r) {
    spdlog::log(steady ? spdlog::level::info : spdlog::level::debug,
                "nonlinear iteration {}: largest change {:.3g} K ({} multigrid iterations)",
                outer, change, r.iterations);
  };
  const auto start = std::chrono::steady_clock::now();
  auto stepper = std::make_unique<mg::ImplicitStepper>(
      problem, fields, c.time.method, plan.dt, kernels::make_level_ops(backend_name, c.precision),
      options);
  // The heat-flow operator, the hierarchy and the level operations' copy of it.
  const std::string levels = fmt::format(
      "{} levels, set up in {}", stepper->levels(),
      format_solve_seconds(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
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

// Logs each implicit step's solve, at most every `progress_seconds` (every step with 0), with
// the mean over the steps since the last line.
void log_implicit_steps(solver::multigrid::ImplicitBackend& implicit, double progress_seconds) {
  implicit.on_step([&stepper = implicit.stepper(), progress_seconds,
                    last_line = std::chrono::steady_clock::time_point(), unlogged = std::int64_t{0},
                    unlogged_seconds = 0.0](std::int64_t step,
                                            const solver::multigrid::SolveReport& r) mutable {
    const double solve = stepper.timing().last_solve_seconds;
    ++unlogged;
    unlogged_seconds += solve;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_line).count() < progress_seconds) return;
    spdlog::info("step {}: {}; solve {}{}", step, r.describe(), format_solve_seconds(solve),
                 unlogged > 1
                     ? fmt::format(" (mean {} over the last {} steps)",
                                   format_solve_seconds(unlogged_seconds /
                                                        static_cast<double>(unlogged)),
                                   unlogged)
                     : std::string());
    last_line = now;
    unlogged = 0;
    unlogged_seconds = 0.0;
  });
}

// "multigrid: 20 solves, 104 iterations (5.2 per solve); solve 278 ms in total, ...".
std::string describe_solves(const solver::multigrid::ImplicitStepper::Timing& t) {
  return fmt::format(
      "multigrid: {} solve{}, {} iterations ({:.3g} per solve); solve {} in total, {} per solve; "
      "right-hand sides and the rest of the steps {}",
      t.solves, t.solves == 1 ? "" : "s", t.iterations,
      static_cast<double>(t.iterations) / static_cast<double>(t.solves),
      format_solve_seconds(t.solve_seconds),
      format_solve_seconds(t.solve_seconds / static_cast<double>(t.solves)),
      format_solve_seconds(std::max(0.0, t.step_seconds - t.solve_seconds)));
}

// The summary's first line. Explicit steps: the steps, the time reached, the rate and
// `bound()` (what bound_summary says); implicit steps: their multigrid iterations and solve
// time; a steady state (`steady`): its iterations, residuals and solve time. No GStencil/s for
// a solve: it is not a stencil sweep.
std::string done_line(const solver::RunResult& result, const std::string& where,
                      const solver::multigrid::ImplicitStepper* implicit,
                      const solver::multigrid::SolveReport* steady,
                      const std::function<std::string()>& bound) {
  if (steady && implicit->timing().solves > 1)
    return fmt::format(
        "done: steady state in {} outer iterations ({} multigrid iterations), the last to "
        "relative residual {:.3g}, solves {} on {}",
        implicit->timing().solves, implicit->timing().iterations, steady->final_residual(),
        format_solve_seconds(implicit->timing().solve_seconds), where);
  if (steady)
    return fmt::format(
        "done: steady state in {} iteration{} to relative residual {:.3g} (from {:.3g}), solve "
        "{} on {}",
        steady->iterations, steady->iterations == 1 ? "" : "s", steady->final_residual(),
        steady->residuals.empty() ? 0.0 : steady->residuals.front(),
        format_solve_seconds(implicit->timing().solve_seconds), where);
  const std::string steps = fmt::format("done: {} steps to step {} (t = {:.6g}) in {} wall",
                                        result.last_step - result.first_step, result.last_step,
                                        result.time, format_seconds(result.wall_seconds));
  if (implicit)
    return fmt::format("{} on {}: {} multigrid iterations, {} solving", steps, where,
                       implicit->timing().iterations,
                       format_solve_seconds(implicit->timing().solve_seconds));
  return fmt::format("{}, {:.3f} GStencil/s on {}{}", steps, result.gstencils_per_second, where,
                     bound());
}

// "heat flows into the body at the steady state (W per metre of depth):", a line per flow,
// and the imbalance against the largest flow.
void print_heat_flows(const solver::Case& c, const std::string& when,
                      const solver::HeatFlowReport& flows) {
  fmt::print("heat flows into the body {} ({}):\n", when,
             c.grid.dims == 3   ? "W"
             : c.grid.dims == 2 ? "W per metre of depth"
                                : "W/m^2");
  for (const solver::HeatFlow& f : flows.flows) fmt::print("  {}: {:.6g}\n", f.what, f.rate);
  fmt::print("  imbalance: {:.3g} ({:.2g} of the largest flow)\n", flows.imbalance,
             flows.largest > 0.0 ? std::abs(flows.imbalance) / flows.largest : 0.0);
}

}  // namespace

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // Interrupted system calls resume: a file being written when the signal comes is finished.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int run_case(const RunOptions& options) {
  const auto run_start = std::chrono::steady_clock::now();
  if (options.quiet) spdlog::set_level(spdlog::level::warn);
  if (options.verbose) {
    spdlog::set_level(spdlog::level::debug);
    spdlog::set_pattern("[%T.%e] %^%l%$: %v");
  }
  // The set-up's phases at debug level, each with the wall and process CPU time (all threads)
  // since the one before: on a shared machine the CPU time is the steadier figure.
  auto phase_start = run_start;
  std::clock_t phase_cpu_start = std::clock();
  const auto end_phase = [&phase_start, &phase_cpu_start](const char* what) {
    const auto now = std::chrono::steady_clock::now();
    const std::clock_t cpu_now = std::clock();
    spdlog::debug("set-up: {} {:.3f} s (CPU {:.3f} s)", what,
                  std::chrono::duration<double>(now - phase_start).count(),
                  static_cast<double>(cpu_now - phase_cpu_start) / CLOCKS_PER_SEC);
    phase_start = now;
    phase_cpu_start = cpu_now;
  };
  // main installed them before MPI's start-up; again for a caller that did not. A signal
  // during the setup stops the run before its first step, with a checkpoint of the initial
  // field, as one during the steps does.
  catch_stop_signals();
  std::optional<PreparedRun> prepared = prepare_run(options.case_path, options.overrides);
  if (!prepared) return kExitBadInput;
  end_phase("case, materials and coefficient fields");
  solver::Case& c = prepared->case_;
  const solver::TimePlan& plan = prepared->plan;

  // Restart: the checkpoint must match the case before anything is written.
  io::Checkpoint restart;
  std::int64_t step0 = 0;
  if (!options.restart.empty()) {
    if (c.time.method == solver::TimeMethod::steady) {
      spdlog::error(
          "--restart: a steady state is one solve with nothing to continue; run the "
          "case without --restart");
      return kExitBadInput;
    }
    // A checkpoint that is missing, corrupt or not a checkpoint is a mistake on the command
    // line: exit code 2, nothing run. Ranks of a decomposed run read the attributes here and
    // their parts of the field at the upload.
    try {
      restart = io::read_checkpoint(options.restart, solver::parallel::size() == 1);
    } catch (const std::runtime_error& e) {
      spdlog::error("--restart: {}", e.what());
      return kExitBadInput;
    }
    const std::string mismatch = io::checkpoint_mismatch(restart, c, plan.dt);
    if (!mismatch.empty()) {
      spdlog::error("{}: does not match the case: {}", options.restart, mismatch);
      return kExitBadInput;
    }
    step0 = restart.meta.step;
    if (step0 > plan.steps) {
      spdlog::error("{}: checkpoint is at step {}, past the case's last step {}", options.restart,
                    step0, plan.steps);
      return kExitBadInput;
    }
  }

  io::DirectoryUse directory_use{options.overwrite, false, -1};
  if (!options.restart.empty()) {
    // A restart continues in the directory that holds its checkpoint, unless -o says where.
    std::filesystem::path checkpoint_dir = std::filesystem::path(options.restart).parent_path();
    if (checkpoint_dir.empty()) checkpoint_dir = ".";
    if (!options.overrides.output_dir) c.output.directory = checkpoint_dir.string();
    std::error_code ec;
    directory_use.restarting = std::filesystem::equivalent(checkpoint_dir, c.output.directory, ec);
    directory_use.restart_step = step0;
  }
  // The directory's rules before any work: a run that would be refused there is refused now.
  try {
    io::check_output_directory(c, directory_use);
  } catch (const std::runtime_error& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }

  // A case with materials, sources or convective faces steps with the coefficient fields
  // prepare_run built (once: the time plan, the backend and materials.h5 share them).
  kernels::StencilProblem problem = prepared->fields
                                        ? solver::make_problem(c, plan.dt, prepared->fields)
                                        : solver::make_problem(c, plan.dt);
  // `fusion: auto` on a restart continues at the depth of the run that wrote the checkpoint:
  // the choice may come out differently now (a new tuning cache, another measured bandwidth),
  // and only the same depth continues the run bit for bit.
  const bool resume_depth = !options.restart.empty() && c.fusion == 0 && restart.meta.fusion > 0;
  if (resume_depth) problem.fusion_depth = restart.meta.fusion;
  namespace parallel = solver::parallel;
  // One rank per GPU: the ranks of a node take its visible devices in turn (node-local rank
  // modulo the count), before any backend exists. A node without GPUs runs the CPU backend
  // under `backend: auto`.
  if (parallel::size() > 1) {
    const int gpus = kernels::cuda_device_count();
    if (gpus > 0) {
      try {
        kernels::use_cuda_device(parallel::node_rank() % gpus);
      } catch (const std::exception& e) {
        spdlog::error("rank {}: {}", parallel::rank(), e.what());
        return kExitBadInput;
      }
    }
  }
  end_phase("checkpoint, output directory and problem");
  solver::BackendChoice choice;
  try {
    const AutoInputs inputs = gather_auto_inputs(problem, c.backend == "auto" || c.fusion == 0);
    choice = solver::choose_backend(c.backend, problem, inputs.context());
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
  // `fusion: auto` runs at the depth the choice found fastest; an explicit `fusion: k` stays.
  if (c.fusion == 0 && choice.fusion_depth > 0) problem.fusion_depth = choice.fusion_depth;
  if (!check_resources(*prepared, choice,
                       solver::scheme_radius(c.scheme) * std::max(1, problem.fusion_depth)))
    return kExitBadInput;
  // Under mpirun with several ranks: each steps its block of the grid (solver/parallel); rank
  // 0 alone writes files and prints.
  const bool root = parallel::rank() == 0;
  parallel::DecomposedBackend* decomposed = nullptr;
  if (parallel::size() > 1) {
    if (c.time.method != solver::TimeMethod::explicit_euler) {
      spdlog::error("time.method: {} runs on one rank; run it without mpirun",
                    solver::multigrid::to_string(c.time.method));
      return kExitBadInput;
    }
    if (c.output.heat_flows || c.output.any_field()) {
      spdlog::error(
          "output.{}: written by runs on one process; run the case without mpirun, or leave "
          "it out",
          c.output.heat_flows ? "heat_flows" : "fields");
      return kExitBadInput;
    }
    parallel::DecomposedOptions po;
    po.procs = c.parallel.decomposition;
    po.exchange_every = c.parallel.exchange_every;
    auto wrapped = std::make_unique<parallel::DecomposedBackend>(std::move(choice.backend), po);
    decomposed = wrapped.get();
    choice.backend = std::move(wrapped);
  }
  end_phase("backend choice and resources");
  // The initial field before anything is written: an expression that is not finite at some
  // node refuses the case with nothing touched.
  std::vector<double> u0;
  if (options.restart.empty()) {
    try {
      u0 = c.initial.kind == solver::InitialKind::file ? io::read_initial_field(c)
                                                       : solver::initial_field(c);
    } catch (const std::invalid_argument& e) {
      spdlog::error("{}", e.what());
      return kExitBadInput;
    }
  }
  end_phase("initial field");
  spdlog::info("heatsim {}: {} ({}D, {} points, scheme {}, {})", version(), c.source_path,
               c.grid.dims, problem.points(), solver::to_string(c.scheme.kind),
               kernels::to_string(c.precision));
  spdlog::info("backend {} ({})", choice.name, choice.reason);
  if (decomposed) {
    // Where each rank runs, gathered to rank 0: "rank 1: host node-a, GPU 1 (NVIDIA H100
    // ...), backend register-tiling".
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const kernels::BackendEntry* entry = kernels::find_backend(choice.name);
    std::string where = "CPU";
    const int device = kernels::current_cuda_device();
    if (entry && entry->needs_gpu && device >= 0)
      where = fmt::format("GPU {} ({})", device,
                          kernels::cuda_devices().at(static_cast<std::size_t>(device)).name);
    const std::vector<std::string> all = parallel::gather_text_to_root(
        fmt::format("host {}, {}, backend {}", host, where, choice.name));
    for (std::size_t r = 0; r < all.size(); ++r) spdlog::info("rank {}: {}", r, all[r]);
  }
  const bool steady = c.time.method == solver::TimeMethod::steady;
  if (steady)
    spdlog::info(
        "steady state to relative residual {:.3g}, written as step 0 with attribute "
        "steady = 1 (no time)",
        c.time.tolerance);
  else
    spdlog::info("dt {:.6g} ({}; explicit stability limit {:.6g}), {} steps to t = {:.6g}",
                 plan.dt, plan.dt_auto ? "auto, 0.9 of the limit" : "from the case",
                 plan.dt_limit, plan.steps, plan.dt * static_cast<double>(plan.steps));

  // Implicit methods: the multigrid solver is built before any file, so one that cannot start
  // refuses the run with nothing written. Its field holder takes the explicit backend's place
  // (the backend chose the level operations it solves on).
  solver::multigrid::ImplicitStepper* implicit = nullptr;
  if (c.time.method != solver::TimeMethod::explicit_euler) {
    std::unique_ptr<solver::multigrid::ImplicitStepper> stepper;
    try {
      stepper = make_implicit_stepper(c, problem, plan, choice.name);
    } catch (const std::invalid_argument& e) {
      spdlog::error("{}", e.what());
      return kExitBadInput;
    }
    for (const auto& p : stepper->setup_phases())
      spdlog::debug("set-up: multigrid: {} {:.3f} s (CPU {:.3f} s)", p.name, p.time.seconds,
                    p.time.cpu_seconds);
    end_phase("multigrid solver");
    auto held = std::make_unique<solver::multigrid::ImplicitBackend>(choice.name, std::move(stepper));
    implicit = &held->stepper();
    if (!steady) log_implicit_steps(*held, options.progress_seconds);
    choice.backend = std::move(held);
  }
  kernels::Backend& backend = *choice.backend;
  try {
    backend.setup(problem);
  } catch (const std::invalid_argument& e) {  // a grid the ranks cannot split
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
  end_phase("backend set-up");
  if (decomposed) spdlog::info("decomposed: {}", decomposed->describe());
  if (backend.fusion_depth() > 1 || c.fusion != 1)
    spdlog::info("fusion: {} steps per pass (asked for {})", backend.fusion_depth(),
                 c.fusion == 0 ? (resume_depth ? "auto: " + std::to_string(restart.meta.fusion) +
                                                     ", the checkpoint's depth"
                                               : std::string("auto"))
                               : std::to_string(c.fusion));

  if (implicit) {
    if (c.time.method == solver::TimeMethod::bdf2 && step0 > 0) {
      if (restart.previous.empty())
        spdlog::warn(
            "{} holds no field of step {} (written by a run of another method): bdf2 "
            "starts again with a backward Euler step, so this is not the "
            "uninterrupted bdf2 run bit for bit",
            options.restart, step0 - 1);
      else
        implicit->set_previous_field(step0, restart.previous);
    }
  }
  // The steady state is one solve, made before any file is written: a solve that stalls
  // leaves nothing behind (exit code 3), and the output holds the solution alone.
  solver::multigrid::SolveReport steady_report;
  if (steady) {
    implicit->options().on_iteration = [](int it, double r) {
      spdlog::info("  iteration {}: relative residual {:.3e}", it, r);
    };
    try {
      backend.upload(u0);
      steady_report = implicit->advance(0);
      const auto& t = implicit->timing();
      if (t.solves > 1)  // temperature-dependent materials or radiation: outer iterations
        spdlog::info("steady: converged in {} outer iterations, {} multigrid iterations in all, "
                     "solves {}; the last solve {}",
                     t.solves, t.iterations, format_solve_seconds(t.solve_seconds),
                     steady_report.describe());
      else
        spdlog::info("steady: {}; solve {}", steady_report.describe(),
                     format_solve_seconds(t.last_solve_seconds));
    } catch (const solver::multigrid::SolveFailure& e) {
      spdlog::error("{}", e.what());
      return kExitDiverged;
    }
    end_phase("the steady solve, not set-up");
  }
  if (decomposed && !options.restart.empty()) {
    try {
      io::FieldPart part;
      part.lo = decomposed->decomposition().owned().lo;
      part.extent = decomposed->decomposition().owned().extent;
      io::read_field_file_collective(options.restart, restart.meta, part);
      decomposed->upload_owned(part.values);
    } catch (const std::runtime_error& e) {
      spdlog::error("--restart: {}", e.what());
      return kExitBadInput;
    }
  } else if (!steady) {
    backend.upload(options.restart.empty() ? u0 : restart.field);
  }
  u0 = std::vector<double>();  // the backend holds the field now
  if (!options.restart.empty())
    spdlog::info("restarting from {} at step {} (t = {:.6g})", options.restart, step0,
                 restart.meta.time);

  // Files from here on. A run that fails now marks its directory (failed_run.txt), so the
  // same command replaces what it left instead of being refused.
  bool writing = false;
  const auto failed = [&](int code, const std::string& message) {
    spdlog::error("{}", message);
    if (root && writing) io::mark_failed_run(c, code, message);
    return code;
  };
  try {
    // A restart in the directory of its checkpoint continues that run there: outputs and
    // checkpoints after step0 belong to the run being replaced and are removed. Anywhere else
    // it is a new run as far as the directory goes: another run's files there stay unless
    // --overwrite.
    std::optional<io::OutputSeries> series;
    if (root) {
      io::prepare_output_directory(c, directory_use);
      writing = true;
      series.emplace(c, plan.dt, choice.name);
    }
    if (prepared->fields && root) {
      // Once per run (again on a restart: the same case gives the same file), before the first
      // output so the index lists it from the first step on.
      io::write_material_file(io::material_file_path(c), c, prepared->material_ids,
                              *prepared->fields);
      series->set_materials_file(io::kMaterialFileName);
    }
    end_phase(steady ? "output directory, materials file"
                     : "field upload, output directory, materials file");
    // Probes: the nodes around each point, gathered from the backend; probes.csv continues on
    // a restart from the rows up to the checkpoint's step.
    std::optional<solver::ProbeSampler> probes;
    std::optional<io::ProbesCsv> probes_csv;
    if (!c.probes.points.empty()) {
      probes.emplace(solver::probe_stencils(c));
      if (root)
        probes_csv.emplace(io::probes_csv_path(c), probes->names(),
                           options.restart.empty() ? -1 : step0, steady);
      const std::int64_t every = c.probes.every;
      const std::int64_t expected = every > 0 ? step0 / every * every : -1;
      if (probes_csv && !options.restart.empty() && probes_csv->last_step() < expected)
        spdlog::warn(
            "{} ends at step {}, before the restart step's last row {}: rows in "
            "between are missing",
            probes_csv->path(), probes_csv->last_step(), expected);
    }

    solver::Simulation sim(c, plan, backend, step0);
    // A decomposed run writes every output file and checkpoint with all ranks, each giving its
    // owned block (write_field_file_collective): collectively with a parallel HDF5, gathered
    // to rank 0 in slabs with a serial one. No rank holds the whole field.
    const auto owned_part = [&] {
      io::FieldPart part;
      const parallel::Box owned = decomposed->decomposition().owned();
      part.lo = owned.lo;
      part.extent = owned.extent;
      decomposed->download_owned(part.values);
      return part;
    };
    WallTime wall;
    // A run on one process writes its output and checkpoints on a writer thread, from two
    // staging buffers the backend allocates (pinned on a GPU), while it steps on; the field is
    // staged once per step for both. A decomposed run writes on its own thread as before.
    // Declared after everything its jobs use, so it finishes them first.
    std::optional<io::FileWriter> writer;
    // An fp32 run stages its floats (half the bytes, nothing widened); an fp64 run its doubles.
    const bool fp32_staging = c.precision == solver::Precision::fp32;
    std::weak_ptr<const io::StagedField> last_staged;
    const auto staged = [&](solver::StepState& s) {
      std::shared_ptr<const io::StagedField> f = last_staged.lock();
      if (!f || f->step != s.step()) {
        f = writer->stage(s.step(), [&](void* out) {
          if (fp32_staging)
            backend.download_to(static_cast<float*>(out));
          else
            backend.download_to(static_cast<double*>(out));
        });
        last_staged = f;
      }
      return f;
    };
    if (!decomposed)
      writer.emplace(
          static_cast<std::size_t>(problem.points()), fp32_staging,
          [&backend](std::size_t bytes) { return backend.allocate_host_staging(bytes); }, 2,
          options.progress_seconds,
          [](const io::WriterActivity& a) {
            spdlog::info("waiting for the writer: {}", describe_writer(a));
          },
          backend.capabilities().gpu ? 0 : 1);
    // output.fields: the heat flux, the conductivity and the liquid fraction beside u, computed
    // from the staged field on the writer thread (the coefficient fields do not change; where
    // properties vary with temperature they are evaluated at u).
    // The shorthand's fields (k = alpha, rho c_p = 1) stand in for a case without fields.
    std::shared_ptr<const kernels::CoefficientFields> flow_fields = problem.coefficients;
    if (!flow_fields && (c.output.any_field() || c.output.heat_flows))
      flow_fields =
          solver::multigrid::uniform_fields(problem.points(), c.physics.alpha, c.physics.source);
    const auto extras = [&c, &problem, flow_fields](const io::FieldValues& u) {
      std::vector<io::NodeField> out;
      if (c.output.heat_flux)
        out.push_back(
            {"heat_flux", 3,
             u.floats
                 ? solver::node_heat_flux(problem, flow_fields.get(), c.physics.alpha, u.floats)
                 : solver::node_heat_flux(problem, flow_fields.get(), c.physics.alpha, u.doubles)});
      const auto at_u = [&u](auto of) { return u.floats ? of(u.floats) : of(u.doubles); };
      if (c.output.conductivity)
        out.push_back({"conductivity", 1, at_u([&](const auto* v) {
                         return solver::node_conductivity(*flow_fields, v);
                       })});
      if (c.output.liquid_fraction)
        out.push_back({"liquid_fraction", 1, at_u([&](const auto* v) {
                         return solver::node_liquid_fraction(*flow_fields, v);
                       })});
      return out;
    };
    sim.add_observer(
        {"output", c.output.every, options.restart.empty(), true, [&](solver::StepState& s) {
           if (writer) {
             const std::string path = io::output_path(c, s.step());
             writer->submit(io::FileWriter::Kind::output, path,
                            [&series, extras, f = staged(s), step = s.step(), time = s.time(),
                             path](io::WriteProgress& progress) {
                              series->write(step, time, f->values, &progress, extras(f->values));
                              return file_bytes(path);
                            });
             return;
           }
           io::write_field_file_collective(
               io::output_path(c, s.step()),
               io::output_meta(c, plan.dt, choice.name, s.step(), s.time()), owned_part(),
               io::FieldFileKind::output);
           if (series) series->add_to_index(s.step(), s.time());
           if (root) wall.output_bytes += file_bytes(io::output_path(c, s.step()));
         }});
    std::vector<double> probe_values;  // the last row written
    double probe_time = 0.0;
    if (probes) {
      // Rows at step 0, every probes.every steps and at the last step; not at a step where a
      // signal stopped the run, so that a restart from there writes the rows the
      // uninterrupted run would have. Added before the checkpoint observer: a due row is in
      // the file before the checkpoint flushes it.
      const std::int64_t every = c.probes.every;
      sim.add_observer({"probes", every, options.restart.empty() && every > 0, true,
                        [&, every](solver::StepState& s) {
                          const bool due =
                              (every > 0 && s.step() % every == 0) || s.step() == plan.steps;
                          if (!due) return;
                          std::vector<double> gathered;
                          backend.sample(probes->nodes(), gathered);
                          probe_values = probes->values(gathered);
                          probe_time = s.time();
                          if (probes_csv) probes_csv->write(s.step(), s.time(), probe_values);
                        }});
    }
    // Heat flows: for the summary of a steady state, and with output.heat_flows a row into
    // heat_flows.csv at every output (steady: its one row), each the balance of the step that
    // ends there (solver/heat_flows.hpp), so the observer takes the field of the step or two
    // before each output as well. The file continues on a restart as probes.csv does; a bdf2
    // restart knows the step before its own from the checkpoint. Added before the checkpoint
    // observer, which flushes the rows.
    std::optional<solver::HeatFlowMeter> meter;
    std::optional<solver::HeatFlowRows> flow_rows;
    std::optional<io::HeatFlowsCsv> flows_csv;
    std::optional<solver::HeatFlowRow> last_flow_row;
    double last_flow_time = 0.0;
    if (!decomposed && flow_fields && (c.output.heat_flows || steady))
      meter.emplace(c, problem, flow_fields, prepared->surfaces,
                    implicit ? &implicit->heat_flow() : nullptr);
    if (c.output.heat_flows && meter) {
      flow_rows.emplace(*meter, c.time.method, plan.dt);
      if (root)
        flows_csv.emplace(io::heat_flows_csv_path(c), meter->names(), c.grid.dims,
                          options.restart.empty() ? -1 : step0, steady);
      if (c.time.method == solver::TimeMethod::bdf2 && step0 > 0 && !restart.previous.empty())
        flow_rows->take(step0 - 1, restart.previous, false);
      const std::int64_t every = c.output.every;
      solver::Observer rows{"heat flows", every, true, true, [&, every](solver::StepState& s) {
                              // Rows where outputs are due (step 0, every output.every steps, the
                              // last step), not where a signal stopped the run, so that its restart
                              // writes what the uninterrupted run would have.
                              const bool due = s.step() == 0 ||
                                               (every > 0 && s.step() % every == 0) ||
                                               s.step() == plan.steps;
                              const std::optional<solver::HeatFlowRow> row =
                                  flow_rows->take(s.step(), s.field(), due);
                              if (!row) return;
                              last_flow_row = row;
                              last_flow_time = s.time();
                              std::vector<double> values = row->flows;
                              values.push_back(row->storage);
                              values.push_back(row->imbalance);
                              if (flows_csv) flows_csv->write(s.step(), s.time(), values);
                            }};
      rows.lead = flow_rows->lead();
      sim.add_observer(std::move(rows));
    }
    // A steady state has nothing to continue: its output is the whole result.
    std::string last_checkpoint;
    if (!steady)
      sim.add_observer({"checkpoint", c.checkpoint.every, false, true, [&](solver::StepState& s) {
                          // The probe rows up to this step reach the disk before the checkpoint
                          // that a restart would continue them from.
                          if (probes_csv) probes_csv->flush();
                          if (flows_csv) flows_csv->flush();
                          last_checkpoint = io::checkpoint_path(c, s.step());
                          io::FieldMeta meta =
                              io::make_meta(c, plan.dt, choice.name, s.step(), s.time());
                          meta.fusion = backend.fusion_depth();
                          if (writer) {
                            // bdf2 continues from the field of the step before as well.
                            std::optional<std::vector<double>> previous =
                                implicit ? implicit->previous_field(s.step()) : std::nullopt;
                            writer->submit(
                                io::FileWriter::Kind::checkpoint, last_checkpoint,
                                [f = staged(s), meta, path = last_checkpoint,
                                 previous = previous ? std::move(*previous)
                                                     : std::vector<double>()](
                                    io::WriteProgress& progress) {
                                  io::write_checkpoint(path, meta, f->values, previous, &progress);
                                  return file_bytes(path);
                                });
                            return;
                          }
                          io::write_field_file_collective(last_checkpoint, meta, owned_part(),
                                                          io::FieldFileKind::checkpoint);
                          if (root) wall.checkpoint_bytes += file_bytes(last_checkpoint);
                        }});
    const double cell = solver::cell_volume(c);
    if (!steady)  // no steps to report on
      sim.on_progress(
          [&](const solver::ProgressReport& r) {
            // GStencil/s measures stencil sweeps: an implicit step is a solve, not one sweep.
            const std::string writing = writer ? describe_writer(writer->activity()) : "";
            spdlog::info(
                "step {}/{} ({:.0f}%) t={:.6g} {}ETA {} | min {:.6g} max {:.6g} heat {:.10g}{}",
                r.step, r.total_steps,
                r.total_steps ? 100.0 * static_cast<double>(r.step) / r.total_steps : 100.0, r.time,
                implicit ? std::string()
                         : fmt::format("{:.3f} GStencil/s ", r.gstencils_per_second),
                format_seconds(r.eta_seconds), r.stats.min, r.stats.max, r.stats.total_heat * cell,
                writing.empty() ? writing : " | " + writing);
          },
          options.progress_seconds);
    sim.stop_when(&g_signal);
    if (decomposed) sim.agree_with([](std::vector<std::int64_t>& v) { parallel::max_all(v); });

    end_phase("probes and observers");
    solver::RunResult result;
    wall.setup =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    try {
      result = sim.run();
    } catch (const solver::multigrid::SolveFailure& e) {
      return failed(kExitDiverged, e.what());
    }
    // Every file the run queued is on the disk before it says anything about them (a signal's
    // checkpoint, the output directory); a write that failed fails the run here.
    double finishing = 0.0;
    if (writer) {
      const auto t0 = std::chrono::steady_clock::now();
      writer->finish();
      finishing = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (implicit && implicit->timing().solves > 0 && !steady)
      spdlog::info("{}", describe_solves(implicit->timing()));
    switch (result.status) {
      case solver::RunResult::Status::diverged:
        return failed(kExitDiverged, result.message);
      case solver::RunResult::Status::interrupted:
        spdlog::warn("interrupted by signal {} at step {}; checkpoint {}; continue with: {}",
                     result.signal, result.last_step, last_checkpoint,
                     continue_command(options, last_checkpoint));
        return 128 + result.signal;
      case solver::RunResult::Status::completed:
        break;
    }
    wall.stepping = result.stepping_seconds;
    if (steady) {
      wall.stepping_name = "solve";
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
    const auto total_seconds = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    };
    std::vector<double> final_u;  // for the material summaries
    if (decomposed) {
      // Collective: every rank takes part in the gather; rank 0 prints.
      if (prepared->fields) backend.download(final_u);
      if (!root) return kExitOk;
      fmt::print("{}\n", done_line(result, fmt::format("{} x {}", parallel::size(), choice.name),
                                   nullptr, nullptr, [] { return std::string(); }));
    } else {
      fmt::print(
          "{}\n",
          done_line(result, choice.name, implicit, steady ? &steady_report : nullptr, [&] {
            return bound_summary(problem, backend, choice.name, result.gstencils_per_second);
          }));
    }
    fmt::print("{}\n", describe_wall_time(wall, total_seconds()));
    fmt::print("final field: min {:.6g} max {:.6g} total heat {:.10g}\noutput: {}\n",
               result.final_stats.min, result.final_stats.max, result.final_stats.total_heat * cell,
               series->xdmf_path());
    if (prepared->fields) {
      if (!decomposed) backend.download(final_u);
      for (const solver::MaterialSummary& m :
           solver::summarize_materials(c, prepared->material_ids, final_u))
        if (m.nodes > 0)
          fmt::print("material {}: {} nodes, min {:.6g} max {:.6g} mean {:.6g}\n", m.name, m.nodes,
                     m.min, m.max, m.mean);
      fmt::print("materials: {}\n", io::material_file_path(c));
      // Where the heat goes (steady states: the stored heat does not change).
      if (steady && meter) print_heat_flows(c, "at the steady state", meter->report(final_u, 0.0));
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
      print_heat_flows(c, fmt::format("over the last step, to t = {:.6g}", last_flow_time), flows);
    }
    if (flows_csv) {
      flows_csv->flush();
      fmt::print("heat flows: {}\n", flows_csv->path());
    }
    if (probes) {
      probes_csv->flush();
      std::string values;
      const std::vector<std::string> names = probes->names();
      for (std::size_t i = 0; i < names.size() && i < probe_values.size(); ++i)
        values += fmt::format("{}{} {:.6g}", i ? ", " : "", names[i], probe_values[i]);
      if (!values.empty())
        fmt::print(
            "probes {}: {}\n",
            steady ? std::string("at the steady state") : fmt::format("at t = {:.6g}", probe_time),
            values);
      fmt::print("probes: {}\n", probes_csv->path());
    }
    std::fflush(stdout);
    return kExitOk;
  } catch (const std::exception& e) {
    return failed(kExitFailure, e.what());
  }
}

}  // namespace heatsim::app
