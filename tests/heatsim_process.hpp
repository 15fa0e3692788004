// Runs the heatsim executable (HEATSIM_BINARY, set by tests/CMakeLists.txt) the way a user
// does and captures what it prints, stdout and stderr together.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

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

// A run stopped by a signal, as a user's Ctrl-C stops it: `heatsim run -q case` in a child
// (its output to /dev/null), `sig` sent once `ready` exists (or after 120 s), then waited
// for. `code`: its exit status (0: it finished before the signal; -1: it did not exit
// normally); `newest`: the newest checkpoint_*.h5 in `out` afterwards, empty if none.
struct StoppedRun {
  int code = -1;
  std::filesystem::path newest;
};
// `heatsim run -q case` started in a child, its output to /dev/null: the child's pid (-1 when
// it could not be started).
inline pid_t start_quiet_run(const std::string& case_path) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
    _exit(126);
  execl(HEATSIM_BINARY, HEATSIM_BINARY, "run", "-q", case_path.c_str(),
        static_cast<char*>(nullptr));
  _exit(127);
}

inline StoppedRun stop_run_when(const std::string& case_path, const std::filesystem::path& out,
                                const std::filesystem::path& ready, int sig = SIGINT) {
  namespace fs = std::filesystem;
  StoppedRun r;
  const pid_t pid = start_quiet_run(case_path);
  if (pid < 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(ready) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint_", 0) == 0 && e.path().extension() == ".h5" &&
        (r.newest.empty() || name > r.newest.filename().string()))
      r.newest = e.path();
  }
  return r;
}

}  // namespace heatsim_tests
