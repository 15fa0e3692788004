// How the executable's idle OpenMP threads wait: asleep, unless the user says otherwise.
//
// The CPU backend's loops and the multigrid's level operations are OpenMP regions whose threads
// meet at a barrier at each end. GCC's runtime (libgomp) lets a thread that waits there spin
// for a while (GOMP_SPINCOUNT, 300000 rounds, several milliseconds here) before it sleeps. On a
// machine whose cores are busy with other work that spin takes a core from the thread the
// waiter waits for, and each barrier can last a time slice: beside two busy loops on 2 cores,
// a 49x49x33 steady solve took 1.49 s on 2 spinning threads against 0.20 s on 1, and 1000
// explicit steps of 513^2 took 22.3 s against 2.1 s; with waits asleep, 0.13 s and 1.0 s
// (docs/performance.md, "Idle threads asleep by default"). Running again costs about 5-10 ms.
//
// The runtime reads its environment when it is loaded, before main and before any constructor
// of the executable (even a pre-initialiser's setenv is undone by the C library's start-up), so
// the default is given by running the executable once more, with the variable set, at the top
// of main. Either variable set by the user is left as it is, and so is a run on one thread.
#include "thread_waits.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace heatsim::app {

namespace {

// Set across the run again while the stop signals are held (blocked): the run after it lets them
// go once its handlers are in place.
constexpr const char* kHeld = "HEATSIM_STOP_SIGNALS_HELD";

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

}  // namespace

void wait_asleep_by_default(char** argv) {
#ifdef _OPENMP
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (omp_get_max_threads() < 2) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  // A stop signal while the program loads again would end it with nothing said: held (a
  // blocked signal stays pending across execv, and the mask with it) until the handlers are in
  // place (release_stop_signals).
  // Only where none of them is blocked already (a mask the caller set stays as it was).
  const sigset_t stop = stop_signals();
  sigset_t before;
  bool held = sigprocmask(SIG_BLOCK, nullptr, &before) == 0 && !sigismember(&before, SIGINT) &&
              !sigismember(&before, SIGTERM) && !sigismember(&before, SIGUSR1);
  held = held && setenv(kHeld, "1", 1) == 0;
  if (held && sigprocmask(SIG_BLOCK, &stop, nullptr) != 0) {
    unsetenv(kHeld);
    held = false;
  }
  execv("/proc/self/exe", argv);
  // Not replaced (no /proc): the run goes on with the runtime's own policy.
  unsetenv("OMP_WAIT_POLICY");
  if (held) {
    unsetenv(kHeld);
    sigprocmask(SIG_SETMASK, &before, nullptr);
  }
#else
  (void)argv;
#endif
}

void release_stop_signals() {
  if (!std::getenv(kHeld)) return;
  unsetenv(kHeld);
  const sigset_t stop = stop_signals();
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
}

}  // namespace heatsim::app
