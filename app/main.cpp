// heatsim: command line. `heatsim case.yaml` is `heatsim run case.yaml`.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "commands.hpp"
#include "io/case_loader.hpp"
#include "run/log_streams.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/version.hpp"
#include "thread_waits.hpp"

namespace {

const std::vector<std::string> kSubcommands{"run", "validate", "info", "bench", "inspect"};

bool is_subcommand(const std::string& arg) {
  for (const std::string& name : kSubcommands)
    if (arg == name) return true;
  return false;
}

// A first word that is neither a command nor a file, where `heatsim CASE.yaml` would take it
// for the case: a mistyped command (`heatsim valdate case.yaml`), which the parser would
// otherwise report as "argument was not expected: case.yaml", blaming the case. Only a word
// followed by another positional (run takes one), or close to a command's name, is taken so;
// a missing case file alone keeps its own message. "" when `args` is not such a call.
std::string unknown_command(const std::vector<std::string>& args) {
  if (args.empty() || is_subcommand(args[0]) || args[0].rfind('-', 0) == 0) return "";
  std::error_code ec;
  if (std::filesystem::exists(args[0], ec)) return "";
  const std::string nearest = heatsim::io::detail::nearest_suffix(args[0], kSubcommands);
  const bool second_positional = args.size() > 1 && args[1].rfind('-', 0) != 0;
  if (!second_positional && nearest.empty()) return "";
  return "unknown command " + heatsim::io::detail::quote(args[0]) + nearest +
         "; the commands are run, validate, info, inspect and bench, and `heatsim CASE.yaml` "
         "runs a case (no file " +
         heatsim::io::detail::quote(args[0]) + " exists)";
}

// The first option of `args` that command `cmd` does not take, said with what it is: an option
// of another command (`heatsim validate CASE --restart F`: --restart is run's) or a near miss
// of one of its own (--output for --output-dir); "" where there is none such (the parser's own
// words then).
std::string misplaced_option(const CLI::App& cli, const CLI::App& cmd,
                             const std::vector<std::string>& args) {
  std::vector<std::string> own;
  for (const CLI::Option* o : cmd.get_options())
    for (const std::string& l : o->get_lnames()) own.push_back("--" + l);
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(own.begin(), own.end(), name) != own.end()) continue;
    for (const CLI::App* other : cli.get_subcommands({}))
      if (other != &cmd && other->get_option_no_throw(name) != nullptr)
        return "heatsim " + cmd.get_name() + " does not take " + name + ", an option of heatsim " +
               other->get_name() + " (heatsim " + cmd.get_name() + " --help lists its options)";
    std::string nearest = heatsim::io::detail::nearest_suffix(name, own);
    // An abbreviation of one of its own (--output for --output-dir).
    if (nearest.empty())
      for (const std::string& o : own)
        if (o.rfind(name, 0) == 0) nearest = " (did you mean '" + o + "'?)";
    if (!nearest.empty())
      return "heatsim " + cmd.get_name() + ": unknown option " + name + nearest + " (heatsim " +
             cmd.get_name() + " --help lists its options)";
  }
  return "";
}

void add_overrides(CLI::App* cmd, heatsim::app::RunOverrides& o) {
  cmd->add_option("--backend,-b", o.backend, "Backend name (overrides the case's backend)");
  cmd->add_option("--steps,-n", o.steps,
                  "Number of steps to run, at the case's dt (overrides time.steps/time.end)");
  cmd->add_option("--output-dir,-o", o.output_dir, "Output directory (overrides output.directory)");
  cmd->add_option("--precision", o.precision, "fp64 or fp32 (overrides precision)");
}

// How many processes an MPI launcher started this one among, from the variables launchers
// set (Open MPI, MPICH/Hydra and PMI-1/2, PMIx), and the variable that said so; 0 and empty
// when no launcher started it.
std::pair<int, std::string> launcher_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && n > 0) return {static_cast<int>(n), name};
    }
  return {0, ""};
}

// This process's rank among those an MPI launcher started, from the variables launchers set
// (Open MPI, MPICH/Hydra and PMI-1/2, PMIx); -1 when no launcher started it. Known before
// MPI's start-up, which takes a while.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (end != v && r >= 0) return static_cast<int>(r);
    }
  return -1;
}

}  // namespace

namespace {

int run_command(int argc, char** argv);

}  // namespace

// The log's warnings and errors go to stderr, the rest of it to stdout (run/log_streams.hpp).
// Under mpirun every rank runs the command; rank 0 prints the log (the others only warnings
// and errors). A rank that fails alone must not leave the others waiting in an exchange: a
// nonzero exit on one rank of several ends them all (MPI_Abort, with that exit code), except
// the outcomes every rank reaches together (diverged, interrupted by a signal); a refusal every
// rank reaches alike is ended by rank 0's MPI_Abort, after it has reported it.
int main(int argc, char** argv) {
  heatsim::app::wait_asleep_by_default(argv);
  heatsim::run::log_to_standard_streams();
  namespace parallel = heatsim::solver::parallel;
  if (argc > 1 &&
      (std::strcmp(argv[1], "run") == 0 || (!is_subcommand(argv[1]) && argv[1][0] != '-')))
    heatsim::app::catch_stop_signals();
  // Rank 0 alone says that a signal came (every rank gets it from mpirun), during MPI's
  // start-up too.
  if (launcher_rank() > 0) heatsim::app::silence_stop_signals();
  heatsim::app::release_stop_signals();
  parallel::Environment mpi(argc, argv);
  if (parallel::rank() != 0) heatsim::app::silence_stop_signals();
  // Started as one of several processes but alone in its world: a build without MPI (or with
  // another MPI than the launcher's) would run the whole case once per process, all writing
  // the same files. Refused before anything is read or written.
  if (const auto [launched, variable] = launcher_processes(); launched > 1 && parallel::size() == 1) {
    std::cerr << "heatsim: started as one of " << launched << " processes by an MPI launcher ("
              << variable << "=" << launched << "), but "
              << (parallel::mpi_built() ? "its MPI world holds this process alone (the launcher "
                                          "belongs to another MPI than heatsim's)"
                                        : "this heatsim was built without MPI")
              << ": each process would run the whole case and write the same files; run it "
                 "without mpirun, or with the mpirun of the MPI heatsim was built with ("
              << (parallel::mpi_built() ? "heatsim info names it" : "see docs/parallel.md")
              << ")\n";
    return heatsim::app::kExitBadInput;
  }
  if (parallel::rank() != 0) spdlog::set_level(spdlog::level::warn);
  // Under mpirun the ranks' output goes through the launcher, which gives them a terminal of
  // its own whatever its own output is: `mpirun ... > run.log` would fill the log with colour
  // codes. The log is plain there, on one rank (-np 1) too.
  if (parallel::size() > 1 || launcher_processes().first > 0) heatsim::run::plain_log();
  const int code = run_command(argc, argv);
  if (parallel::size() > 1 && code != heatsim::app::kExitOk &&
      code != heatsim::app::kExitDiverged && code < 128) {
    heatsim::app::silence_stop_signals();  // mpirun's SIGTERM to the ranks is no stop request
    // A refusal every rank reaches alike is rank 0's to report: the others wait for its
    // MPI_Abort (in MPI_Finalize) instead of aborting first, which ended rank 0 with a SIGTERM
    // before it had printed the refusal, or while it did.
    if (parallel::rank() != 0 && heatsim::app::failure_reported_by_rank_0()) return code;
    parallel::abort_all(code);
  }
  return code;
}

namespace {

int run_command(int argc, char** argv) {
  using namespace heatsim::app;
  // `heatsim case.yaml ...` means `heatsim run case.yaml ...`.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const std::string unknown = unknown_command(args); !unknown.empty()) {
    std::cerr << "heatsim: " << unknown << "\n";
    return kExitBadInput;
  }
  if (!args.empty() && !is_subcommand(args[0]) && args[0].rfind('-', 0) != 0)
    args.insert(args.begin(), "run");

  CLI::App cli{"heatsim: heat and diffusion simulator on CPUs and CUDA GPUs", "heatsim"};
  cli.set_version_flag("--version,-V", std::string("heatsim ") + heatsim::version());
  cli.require_subcommand(1);
  cli.footer(
      "Exit codes: 0 success, 1 runtime failure (I/O, device), 2 invalid case or command line\n"
      "(nothing run), 3 the field became NaN/Inf or an implicit or steady solve stopped\n"
      "converging, 130/143/138 interrupted by SIGINT/SIGTERM/SIGUSR1 (checkpoint written; a\n"
      "steady solve writes nothing).\n"
      "`heatsim CASE.yaml` is short for `heatsim run CASE.yaml`.");

  RunOptions run;
  run.program = argv[0];
  auto* run_cmd = cli.add_subcommand("run", "Run a case");
  run_cmd->add_option("case", run.case_path, "Case file (YAML)")->required();
  add_overrides(run_cmd, run.overrides);
  run_cmd
      ->add_option("--restart", run.restart,
                   "Continue from this checkpoint file, in its directory unless -o says "
                   "another")
      ->check(CLI::Validator(
          [](const std::string& path) {
            return path.empty() ? std::string("needs a checkpoint file, got an empty path")
                                : std::string();
          },
          "PATH"));
  run_cmd->add_flag("--overwrite", run.overwrite,
                    "Replace the files of an earlier run in the output directory");
  run_cmd->add_option("--progress-seconds", run.progress_seconds,
                      "Seconds between progress lines (default 2)");
  run_cmd->add_flag("--quiet,-q", run.quiet, "Only warnings, errors and the summary");
  run_cmd
      ->add_flag("--verbose,-v", run.verbose,
                 "Also debug lines: the set-up's phases timed, with milliseconds")
      ->excludes("--quiet");

  std::string validate_path;
  RunOverrides validate_overrides;
  auto* validate_cmd = cli.add_subcommand("validate", "Check a case and report every problem");
  validate_cmd->add_option("case", validate_path, "Case file (YAML)")->required();
  add_overrides(validate_cmd, validate_overrides);

  cli.add_subcommand("info", "Version, compiled backends, visible GPUs");

  std::string inspect_path;
  auto* inspect_cmd = cli.add_subcommand("inspect", "Show what an output or checkpoint file holds");
  inspect_cmd->add_option("file", inspect_path, "HDF5 file written by heatsim")->required();

  BenchOptions bench;
  auto* bench_cmd = cli.add_subcommand("bench", "Stencil suite on every available backend");
  bench_cmd->add_option("--shape", bench.shapes, "Shapes to run (default: the whole suite)");
  bench_cmd->add_option("--backend", bench.backends, "Backends to run (default: all available)");
  bench_cmd->add_option("--precision", bench.precision, "fp64 or fp32")
      ->check(CLI::IsMember({"fp64", "fp32"}));
  bench_cmd->add_option("--size", bench.size, "Points per axis (default: 1D 2^26, 2D 8192, 3D 512)");
  bench_cmd->add_option("--steps", bench.steps, "Steps per timed repeat");
  bench_cmd->add_option("--repeats", bench.repeats, "Timed repeats (the median is reported)");
  bench_cmd->add_option("--json", bench.json_path, "Where to write the JSON results");
  bench_cmd->add_option("--fusion", bench.fusion,
                        "Fusion depth for backends that fuse steps: auto (default), or k; 1: none");
  bench_cmd->add_flag("--tune", bench.tune,
                      "Measure every backend at every fusion depth it takes (smaller sizes: 1D "
                      "2^24, 2D 4096, 3D 256) and write the device's tuning cache for `auto`");

  spdlog::set_pattern("[%T] %^%l%$: %v");
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    cli.parse(reversed);
  } catch (const CLI::RequiredError& e) {
    // The parser's own words ("case is required", "A subcommand is required") name neither
    // the command nor what to type.
    for (CLI::App* cmd : {run_cmd, validate_cmd, inspect_cmd})
      if (cmd->parsed()) {
        const bool file = cmd == inspect_cmd;
        std::cerr << "heatsim " << cmd->get_name() << ": "
                  << (file ? "an output or checkpoint file" : "a case file")
                  << " is required: heatsim " << cmd->get_name()
                  << (file ? " FILE.h5" : " CASE.yaml") << " (heatsim " << cmd->get_name()
                  << " --help lists the options)\n";
        return kExitBadInput;
      }
    if (args.empty()) {
      std::cerr << "Usage: heatsim CASE.yaml [options], or heatsim COMMAND: run CASE.yaml, "
                   "validate CASE.yaml, info, inspect FILE.h5, bench (heatsim --help for "
                   "more; README.md to begin)\n";
      return kExitBadInput;
    }
    const int code = cli.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
      for (CLI::App* cmd : {run_cmd, validate_cmd, inspect_cmd, bench_cmd})
        if (cmd->parsed())
          if (const std::string why = misplaced_option(cli, *cmd, args); !why.empty()) {
            std::cerr << why << "\n";
            return kExitBadInput;
          }
    const int code = cli.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (run_cmd->parsed()) return run_case(run);
    if (validate_cmd->parsed()) {
      speak_through_rank_0();
      return validate_case_file(validate_path, validate_overrides);
    }
    if (cli.got_subcommand("info")) return print_info();
    if (inspect_cmd->parsed()) return inspect_file_command(inspect_path);
    if (bench_cmd->parsed()) return run_bench(bench);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitFailure;
  }
  return kExitBadInput;
}

}  // namespace
