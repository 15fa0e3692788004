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

#include <cstdlib>

namespace heatsim::app {

void wait_asleep_by_default(char** argv) {
#ifdef _OPENMP
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (omp_get_max_threads() < 2) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Not replaced (no /proc): the run goes on with the runtime's own policy.
  unsetenv("OMP_WAIT_POLICY");
#else
  (void)argv;
#endif
}

}  // namespace heatsim::app
