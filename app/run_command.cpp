// `heatsim run`: the command line's side of a run (run/session.hpp does the run): the log's
// level, signals, exit codes, the summary on stdout and the command that continues a stopped
// run.
#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>

#include "commands.hpp"
#include "io/case_loader.hpp"
#include "run/errors.hpp"
#include "run/session.hpp"
#include "solver/parallel/comm.hpp"

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

// Whether this process says what a signal does (rank 0 of an MPI run speaks for the ranks).
std::atomic<bool> g_speak{true};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler reads it");

// Whether the last failure reported was one rank 0 alone reports for every rank.
bool g_reported_by_rank_0 = false;

// The local time's offset from UTC (seconds) when the handlers were installed, so that the
// handler stamps its lines as the log does without localtime(), which is not
// async-signal-safe.
std::atomic<std::int64_t> g_utc_offset_s{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the handler reads it");

// A warning line on stderr, where the log's warnings go, stamped "[HH:MM:SS] " (local time) as
// the log's lines are, with clock_gettime and write(2) alone.
template <std::size_t N>
void say(const char (&line)[N]) {
  if (!g_speak.load()) return;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::int64_t s = (static_cast<std::int64_t>(now.tv_sec) + g_utc_offset_s.load()) % 86400;
  if (s < 0) s += 86400;
  char text[N + 11] = "[00:00:00] ";
  const std::int64_t parts[3] = {s / 3600, s / 60 % 60, s % 60};
  for (int k = 0; k < 3; ++k) {
    text[1 + 3 * k] = static_cast<char>('0' + parts[k] / 10);
    text[2 + 3 * k] = static_cast<char>('0' + parts[k] % 10);
  }
  for (std::size_t i = 0; i + 1 < N; ++i) text[11 + i] = line[i];
  const ssize_t ignored = write(STDERR_FILENO, text, N + 10);
  (void)ignored;
}

// First SIGINT/SIGTERM/SIGUSR1 (and any within kSameRequestNs of it): ask the loop to stop (it
// checkpoints and exits 128+signal), saying so at once: a large run's checkpoint takes a while,
// and a user who sees nothing presses Ctrl-C again. A later one: abort at once, saying that no
// checkpoint was written. Only atomics, clock_gettime, write and _exit, all
// async-signal-safe.
extern "C" void on_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::int64_t ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec + 1;
  std::int64_t first = 0;
  if (g_first_signal_ns.compare_exchange_strong(first, ns)) {
    g_signal.store(sig);
    say("warning: signal received: stopping at the next chunk of steps (a transient run writes a "
        "checkpoint first); a signal more than 2 s from now stops at once, without it\n");
    return;
  }
  if (ns - first > kSameRequestNs) {
    say("warning: second signal: stopped at once, with no checkpoint of this step; continue "
        "from the newest checkpoint in the output directory (a run into it names it)\n");
    _exit(128 + sig);
  }
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
// case, and every override the run was given, so that it continues exactly this run; under
// mpirun on as many ranks (any number gives the same results). The launcher's own options
// (--oversubscribe, -x VAR, a host file) never reach the ranks' command lines, and the
// variables it sets do not name them all, so they are not guessed: the message says to add
// them (continue_words).
std::string continue_command(const RunOptions& o, const std::string& checkpoint) {
  const int ranks = solver::parallel::size();
  std::string cmd = ranks > 1 ? "mpirun -np " + std::to_string(ranks) + " " : std::string();
  cmd += shell_word(o.program.empty() ? "heatsim" : o.program) + " run " + shell_word(o.case_path);
  const RunOverrides& v = o.overrides;
  if (v.output_dir) cmd += " -o " + shell_word(*v.output_dir);
  if (v.backend) cmd += " --backend " + shell_word(*v.backend);
  if (v.precision) cmd += " --precision " + shell_word(*v.precision);
  if (v.steps) cmd += " --steps " + std::to_string(*v.steps);
  return cmd + " --restart " + shell_word(checkpoint);
}

// What comes before the command in "continue with: COMMAND", which ends the line so that it
// pastes as it is.
std::string continue_words() {
  return solver::parallel::size() > 1
             ? "continue with (adding the options you gave mpirun, which heatsim cannot see)"
             : "continue with";
}

// The exit code of a run's failure, its messages logged (a case's problems printed as a
// report on stderr, as `validate` prints them). Every rank of an MPI run reads the same case
// and finds the same problems: rank 0 alone reports them, and the refusals every rank reaches
// alike (RefusedOnEveryRank). Other failures may be one rank's own (its part of a checkpoint,
// its device, its memory), so each rank reports its own.
int report_failure(const run::RunError& e, const RunOptions& options) {
  if (const auto* stopped = dynamic_cast<const run::Interrupted*>(&e)) {
    if (solver::parallel::rank() == 0) spdlog::warn("{}", e.what());
    return 128 + stopped->signal();
  }
  g_reported_by_rank_0 =
      dynamic_cast<const run::InvalidCase*>(&e) || dynamic_cast<const run::RefusedOnEveryRank*>(&e);
  // A field that became NaN or a solve that stopped converging is found by every rank together
  // (from the whole field's statistics, or a solve they make together): rank 0 says it.
  const bool everyone = g_reported_by_rank_0 || e.failure() == run::Failure::diverged;
  if (dynamic_cast<const run::InvalidCase*>(&e)) {
    if (solver::parallel::rank() == 0) fmt::print(stderr, "{}\n", e.what());
  } else if (!everyone || solver::parallel::rank() == 0) {
    for (const std::string& m : e.messages()) spdlog::error("{}", m);
  }
  // A run that failed after a checkpoint: the command that continues it, once the cause is
  // mended (space freed, the device back), as an interrupted run's.
  if (!e.checkpoint().empty() && solver::parallel::rank() == 0)
    spdlog::warn("{}: {}", continue_words(), continue_command(options, e.checkpoint()));
  return run::exit_code(e.failure());
}

}  // namespace

void catch_stop_signals() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  if (localtime_r(&now, &local)) g_utc_offset_s.store(local.tm_gmtoff);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // Interrupted system calls resume: a file being written when the signal comes is finished.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // mpirun forwards SIGUSR1 to every rank and leaves them be, where it follows a forwarded
  // SIGINT or SIGTERM with SIGKILL a second later; schedulers send it ahead of a time limit.
  sigaction(SIGUSR1, &sa, nullptr);
}

void silence_stop_signals() { g_speak.store(false); }

bool failure_reported_by_rank_0() { return g_reported_by_rank_0; }

void speak_through_rank_0() {
  if (solver::parallel::rank() == 0) return;
  g_reported_by_rank_0 = true;
  spdlog::set_level(spdlog::level::off);
  std::fflush(stdout);
  std::fflush(stderr);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) return;
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
}

int run_case(const RunOptions& options) {
  if (options.quiet && spdlog::get_level() < spdlog::level::warn)
    spdlog::set_level(spdlog::level::warn);
  if (options.verbose) {
    // Rank 0 speaks for an MPI run (main left the others at warnings).
    if (solver::parallel::rank() == 0) spdlog::set_level(spdlog::level::debug);
    spdlog::set_pattern("[%T.%e] %^%l%$: %v");
  }
  // main installed them before MPI's start-up; again for a caller that did not. A signal
  // during the setup stops the run before its first step, with a checkpoint of the initial
  // field, as one during the steps does.
  catch_stop_signals();
  g_speak.store(solver::parallel::rank() == 0);
  run::SessionOptions setup;
  setup.source = run::CaseSource::file(options.case_path);
  setup.overrides = options.overrides;
  setup.restart = options.restart;
  setup.overwrite = options.overwrite;
  setup.progress_seconds = options.progress_seconds;
  setup.stop_flag = &g_signal;
  try {
    // A negative or NaN interval would print a line at every step without a word.
    if (!(options.progress_seconds >= 0) || !std::isfinite(options.progress_seconds))
      throw run::InvalidCase(options.case_path,
                             {{"--progress-seconds", 0,
                               "must be a number of seconds >= 0 (0: a line at every step), got " +
                                   io::detail::format_number(options.progress_seconds)}});
    run::Session session(std::move(setup));
    const run::Summary& summary = session.run();
    if (summary.interrupted) {
      // Every rank stops at the same step, with one checkpoint between them: rank 0 says so.
      if (solver::parallel::rank() == 0)
        spdlog::warn("interrupted by signal {} at step {}; checkpoint {}; {}: {}", summary.signal,
                     summary.last_step, session.last_checkpoint(), continue_words(),
                     continue_command(options, session.last_checkpoint()));
      return 128 + summary.signal;
    }
    for (const std::string& line : summary.lines) fmt::print("{}\n", line);
    std::fflush(stdout);
    return kExitOk;
  } catch (const run::RunError& e) {
    return report_failure(e, options);
  }
}

}  // namespace heatsim::app
