// The subcommands of the heatsim executable and their documented exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace heatsim::app {

// Exit codes (documented in README.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // I/O, device or other runtime failure
  kExitBadInput = 2,     // invalid command line or case (nothing was run)
  kExitDiverged = 3,     // the field became NaN/Inf; the run stopped
  kExitInterrupted = 130 // 128 + signal: 130 for SIGINT, 143 for SIGTERM
};

// Command-line overrides of case keys.
struct RunOverrides {
  std::optional<std::string> backend;
  std::optional<std::int64_t> steps;
  std::optional<std::string> output_dir;
  std::optional<std::string> precision;
};

struct RunOptions {
  std::string case_path;
  RunOverrides overrides;
  std::string restart;  // checkpoint file; empty: start from the initial condition
  bool overwrite = false;
  double progress_seconds = 2.0;
  bool quiet = false;
};

int run_case(const RunOptions& options);
int validate_case_file(const std::string& path, const RunOverrides& overrides);
int print_info();
int inspect_file_command(const std::string& path);

}  // namespace heatsim::app
