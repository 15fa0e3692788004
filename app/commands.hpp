// The subcommands of the heatsim executable and their documented exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "run/prepare.hpp"

namespace heatsim::app {

// Exit codes (documented in README.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // I/O, device or other runtime failure
  kExitBadInput = 2,      // invalid command line or case (nothing was run)
  kExitDiverged = 3,      // the field became NaN/Inf, or a solve stopped converging
  kExitInterrupted = 130  // 128 + signal: 130 for SIGINT, 143 for SIGTERM, 138 for SIGUSR1
};

// Command-line overrides of case keys.
using RunOverrides = run::Overrides;

struct RunOptions {
  std::string program;  // argv[0], for the command a stopped run prints to continue it
  std::string case_path;
  RunOverrides overrides;
  std::string restart;  // checkpoint file; empty: start from the initial condition
  bool overwrite = false;
  double progress_seconds = 2.0;
  bool quiet = false;
  bool verbose = false;  // debug lines too: the set-up's phases with their times
};

// SIGINT, SIGTERM and SIGUSR1 from now on ask a run to stop at its next step with a checkpoint (exit
// code 128 + signal); several within two seconds are one request, a later one aborts at once.
// Installed by main before anything else when the command is `run`, so that a signal during
// the start-up (MPI's included) is not lost.
void catch_stop_signals();
// No word of a signal any more, once a command has failed: under mpirun the SIGTERM that ends
// the other ranks after one's MPI_Abort is no stop request, and a run that never began has no
// next chunk of steps to stop at.
void silence_stop_signals();
// Whether the last failure was one every rank reaches alike, which rank 0 alone reports (a
// case's problems, a refusal of what every rank reads the same).
bool failure_reported_by_rank_0();
// A command whose every rank reaches the same result alike (`validate` under mpirun): the ranks
// other than 0 print nothing and leave a failure to rank 0 to report and end.
void speak_through_rank_0();
int run_case(const RunOptions& options);
int validate_case_file(const std::string& path, const RunOverrides& overrides);
int print_info();
int inspect_file_command(const std::string& path);

}  // namespace heatsim::app
