// How a run fails, for the command line's exit codes and the Python module's exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "io/case_loader.hpp"

namespace heatsim::run {

// What went wrong, as the documented exit codes tell it apart.
enum class Failure {
  invalid,   // the case, an override or a restart checkpoint is refused: nothing was run
  runtime,   // I/O, device or another runtime failure
  diverged,  // the field became NaN/Inf, or a solve stopped converging
};

// The command line's exit code for `failure` (README.md): 2, 1, 3; failed_run.txt records it.
int exit_code(Failure failure);

// A run's failure with its messages (most hold one; a resource check may give several). The
// command line logs each as an error line.
class RunError : public std::runtime_error {
 public:
  RunError(Failure failure, const std::string& message)
      : RunError(failure, std::vector<std::string>{message}) {}
  RunError(Failure failure, std::vector<std::string> messages);
  Failure failure() const { return failure_; }
  const std::vector<std::string>& messages() const { return messages_; }
  // The checkpoint that continues a run which failed after writing it (its newest, complete),
  // for the command line's "continue with" line; empty where there is none.
  const std::string& checkpoint() const { return checkpoint_; }
  void set_checkpoint(std::string path) { checkpoint_ = std::move(path); }

 private:
  Failure failure_;
  std::vector<std::string> messages_;
  std::string checkpoint_;
};

// A refusal every rank of an MPI run reaches alike, from what they all read the same (the case,
// the command line, a checkpoint's attributes, the output directory): rank 0 alone reports it.
class RefusedOnEveryRank : public RunError {
 public:
  explicit RefusedOnEveryRank(const std::string& message) : RunError(Failure::invalid, message) {}
};

// A steady solve stopped by a signal (SIGINT, SIGTERM) before it converged. Nothing is written:
// a steady state has no checkpoint to continue from. The command line exits 128 + signal.
class Interrupted : public RunError {
 public:
  Interrupted(int signal, const std::string& message)
      : RunError(Failure::runtime, message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// A case that cannot run: every problem with its key path and line. what() is the report the
// command line prints: "case.yaml: 2 problems:" and a line per problem.
class InvalidCase : public RunError {
 public:
  InvalidCase(std::string origin, std::vector<io::CaseError> errors);
  const std::string& origin() const { return origin_; }
  const std::vector<io::CaseError>& errors() const { return errors_; }

 private:
  std::string origin_;
  std::vector<io::CaseError> errors_;
};

}  // namespace heatsim::run
