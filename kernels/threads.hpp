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

// f() on every thread of an OpenMP team where `threads`, else once on the calling thread
// without entering a parallel region. A region its `if` clause keeps to one thread is still
// a team to libgomp, whose start and end wake its barrier by a system call: about 300 calls an
// outer iteration of a small nonlinear solve, where the coarse levels and a small grid's every
// level run on one thread (docs/performance.md, "Parallel regions that stay on one thread").
// f may hold orphaned worksharing and barriers: on one thread, outside a region, they are
// no-ops, and omp_get_num_threads() is 1.
template <typename F>
void in_team(bool threads, F&& f) {
  if (!threads) {
    f();
    return;
  }
#pragma omp parallel
  f();
}

// f(i) for i in [begin, end): shared among a team in static chunks where `threads`, else in
// order on the calling thread without entering a parallel region (in_team's reason).
template <typename F>
void for_each_index(std::int64_t begin, std::int64_t end, bool threads, F&& f) {
  if (!threads) {
    for (std::int64_t i = begin; i < end; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = begin; i < end; ++i) f(i);
}

}  // namespace heatsim::kernels
