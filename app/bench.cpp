// Placeholder until the benchmark suite lands: refuses to run.
#include <spdlog/spdlog.h>

#include "bench.hpp"

namespace heatsim::app {

int run_bench(const BenchOptions&) {
  spdlog::error("bench: not built in this version");
  return 1;
}

}  // namespace heatsim::app
