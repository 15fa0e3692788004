// When a loop over nodes is worth sharing among OpenMP threads.
#pragma once

#include <cstdint>

namespace heatsim::kernels {

// Nodes below which a loop over them runs on the calling thread (an OpenMP `if` clause, or a
// level's or backend's `parallel` flag): the threads' start and their barrier at the end cost
// microseconds on an idle machine, about what one core takes for a few thousand nodes, and
// far more on a busy one. The multigrid's coarse levels thus run on one thread. The level
// operations' results do not depend on it (their sums are formed per row, in row order).
constexpr std::int64_t kThreadedNodes = 32768;

constexpr bool worth_threads(std::int64_t nodes) { return nodes >= kThreadedNodes; }

}  // namespace heatsim::kernels
