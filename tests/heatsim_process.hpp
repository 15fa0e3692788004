// Runs the heatsim executable (HEATSIM_BINARY, set by tests/CMakeLists.txt) the way a user
// does and captures what it prints, stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace heatsim_tests {

struct ProcessResult {
  int code = -1;  // exit status; -1 when it did not exit normally
  std::string output;
};

// Runs heatsim with `args` under `environment`, assignments (NAME=value ...) added to this
// process's environment ("" for none).
inline ProcessResult run_heatsim_with(const std::string& environment, const std::string& args) {
  const std::string cmd = "env " + environment + " " + std::string(HEATSIM_BINARY) + " " + args +
                          " 2>&1";
  ProcessResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline ProcessResult run_heatsim(const std::string& args) { return run_heatsim_with("", args); }

}  // namespace heatsim_tests
