// How the executable's idle OpenMP threads wait (thread_waits.cpp).
#pragma once

namespace heatsim::app {

// Where neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set and the run has more than one
// thread: runs this executable again (same arguments, same process) with
// OMP_WAIT_POLICY=passive, so that threads waiting at a barrier sleep rather than spin. Returns
// when nothing is to change or the executable cannot be run again. Call it first in main.
// SIGINT, SIGTERM and SIGUSR1 are held (blocked, and pending where they come) from just before
// it runs again until release_stop_signals().
void wait_asleep_by_default(char** argv);

// Lets the stop signals held across the run again go (those that came meanwhile are delivered
// now, to the handlers in place or with their default action); nothing where none were held.
void release_stop_signals();

}  // namespace heatsim::app
