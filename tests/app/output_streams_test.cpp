// What goes where: the log's warnings and errors on stderr, its other lines, the summary and
// what the commands print on stdout, as `heatsim run case.yaml > run.log` keeps them apart;
// neither stream in colour when it is not a terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::read_text;

// What a run printed on each stream, as `heatsim ARGS > out 2> err` keeps them.
struct Streams {
  int code = -1;  // exit status; -1 when it did not exit normally
  std::string out;
  std::string err;
};

bool holds(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

class OutputStreams : public heatsim_tests::ScratchTest {
 protected:
  // heatsim ARGS under `environment` (NAME=value ..., or ""), stdout and stderr into files.
  Streams heatsim(const std::string& args, const std::string& environment = "") {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = "env " + environment + " " + std::string(HEATSIM_BINARY) + " " + args +
                            " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    Streams r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  // A 2D case into dir_/out with `time` as its time section.
  std::string write_case(const std::string& name, const std::string& time,
                         const std::string& extra = "") {
    return write_file(name,
                      "grid: {dims: 2, n: [33, 33], length: [1.0, 1.0]}\n"
                      "physics: {alpha: 1.0}\n"
                      "boundary: {all: {type: dirichlet, value: 0}}\n"
                      "initial: {type: gaussian, center: [0.5, 0.5], width: 0.1}\n"
                      "time: " +
                          time +
                          "\n"
                          "backend: cpu\n"
                          "output: {directory: " +
                          (dir_ / "out").string() + ", every: 0}\n" + extra);
  }
};

// A run refused (its directory holds an earlier run's files): the error on stderr alone,
// nothing on stdout that a program reading it would take for data.
TEST_F(OutputStreams, ARefusedRunsErrorIsOnStderrOnly) {
  const std::string c = write_case("c.yaml", "{dt: auto, steps: 20}");
  const Streams first = heatsim("run " + c);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  // The log's information and the summary are stdout's.
  EXPECT_TRUE(holds(first.out, "info: backend cpu")) << first.out;
  EXPECT_TRUE(holds(first.out, "done: 20 steps")) << first.out;
  EXPECT_FALSE(holds(first.err, "info:")) << first.err;
  EXPECT_FALSE(holds(first.err, "done:")) << first.err;

  const Streams again = heatsim("run " + c);
  EXPECT_EQ(again.code, 2) << again.out << again.err;
  EXPECT_TRUE(holds(again.err, "error: ")) << again.err;
  EXPECT_TRUE(holds(again.err, "already holds a run's files")) << again.err;
  EXPECT_FALSE(holds(again.out, "error")) << again.out;
  EXPECT_FALSE(holds(again.out, "already holds")) << again.out;
}

// A warning of the set-up (an implicit method at the explicit limit's dt) is stderr's; the run
// goes on, its log and summary on stdout.
TEST_F(OutputStreams, AWarningIsOnStderrAndTheRunsLogOnStdout) {
  const std::string c = write_case("c.yaml", "{method: backward-euler, steps: 3}");
  const Streams r = heatsim("run " + c);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(holds(r.err, "warning: ")) << r.err;
  EXPECT_TRUE(holds(r.err, "time.dt: auto with backward-euler")) << r.err;
  EXPECT_FALSE(holds(r.out, "warning")) << r.out;
  EXPECT_TRUE(holds(r.out, "info: backend cpu")) << r.out;
  EXPECT_TRUE(holds(r.out, "time: setup ")) << r.out;
  // A transient run's time line has its checkpoints item (the last step's checkpoint).
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(time: setup .*, checkpoints [0-9.]+ s \()")))
      << r.out;
}

// A colour terminal named in TERM does not colour a stream that is a file: no escape codes in
// either, and the level words are there as plain text.
TEST_F(OutputStreams, NeitherStreamIsColouredIntoAFile) {
  const std::string c = write_case("c.yaml", "{method: backward-euler, steps: 2}");
  const Streams r = heatsim("run " + c, "TERM=xterm-256color");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(holds(r.out, "] info: ")) << r.out;
  EXPECT_TRUE(holds(r.err, "] warning: ")) << r.err;
  EXPECT_FALSE(holds(r.out, "\x1b[")) << r.out;
  EXPECT_FALSE(holds(r.err, "\x1b[")) << r.err;
}

// inspect of a file that is not there: its error on stderr, exit 2.
TEST_F(OutputStreams, InspectsErrorIsOnStderr) {
  const Streams r = heatsim("inspect " + (dir_ / "missing.h5").string());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(holds(r.err, "error: ")) << r.err;
  EXPECT_TRUE(holds(r.err, "missing.h5")) << r.err;
  EXPECT_EQ(r.out, "");
}

// A run stopped by SIGINT: the acknowledgement the signal handler writes and the line that
// says how to continue are warnings, on stderr; stdout has the log's information only.
TEST_F(OutputStreams, AnInterruptedRunsWarningsAreOnStderr) {
  const std::string c = write_case("long.yaml", "{dt: auto, steps: 100000000}",
                                   "checkpoint: {every: 200, keep: 2}\n");
  const fs::path out = dir_ / "run.out";
  const fs::path err = dir_ / "run.err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    execl(HEATSIM_BINARY, HEATSIM_BINARY, "run", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  const fs::path ready = dir_ / "out" / "checkpoint_00000200.h5";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  bool ended = false;
  while (!fs::exists(ready) && std::chrono::steady_clock::now() < give_up &&
         !(ended = waitpid(pid, &status, WNOHANG) == pid))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!ended) {
    kill(pid, SIGINT);
    waitpid(pid, &status, 0);
  }
  const std::string o = read_text(out);
  const std::string e = read_text(err);
  ASSERT_TRUE(WIFEXITED(status)) << o << e;
  EXPECT_EQ(WEXITSTATUS(status), 130) << o << e;
  EXPECT_TRUE(holds(e, "warning: signal received: stopping at the next chunk of steps")) << e;
  // Stamped as the log's lines are ([HH:MM:SS] level: text), though written by the handler.
  EXPECT_TRUE(std::regex_search(
      e, std::regex(R"((^|\n)\[[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\] warning: signal received: )")))
      << e;
  EXPECT_TRUE(holds(e, "interrupted by signal 2 at step ")) << e;
  EXPECT_TRUE(holds(e, "continue with: ")) << e;
  EXPECT_FALSE(holds(o, "signal")) << o;
  EXPECT_FALSE(holds(o, "warning")) << o;
  EXPECT_TRUE(holds(o, "info: backend cpu")) << o;
}

}  // namespace
