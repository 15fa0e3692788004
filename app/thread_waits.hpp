// How the executable's idle OpenMP threads wait (thread_waits.cpp).
#pragma once

namespace heatsim::app {

// Where neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set and the run has more than one
// thread: runs this executable again (same arguments, same process) with
// OMP_WAIT_POLICY=passive, so that threads waiting at a barrier sleep rather than spin. Returns
// when nothing is to change or the executable cannot be run again. Call it first in main.
void wait_asleep_by_default(char** argv);

}  // namespace heatsim::app
