// `heatsim bench`: the stencil suite on every available backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heatsim::app {

struct BenchOptions {
  std::vector<std::string> shapes;    // empty: the whole suite
  std::vector<std::string> backends;  // empty: every available backend
  std::string precision = "fp64";
  std::int64_t size = 0;   // points per axis; 0: the defaults (1D 2^26, 2D 8192, 3D 512)
  std::int64_t steps = 0;  // 0: a default per shape
  int repeats = 5;
  // Fusion depth for backends that fuse time steps ("auto" or a number); they get a second
  // row at this depth beside the one-step-per-pass row. "1": no fused rows.
  std::string fusion = "auto";
  std::string json_path = "bench.json";
  // Measure for the tuning cache instead (tune.cpp): smaller default sizes, every backend at
  // every fusion depth it takes, results written to the device's cache, no JSON.
  bool tune = false;
};

// Prints the table on stdout, writes the JSON file; returns the process exit code.
int run_bench(const BenchOptions& options);

// `heatsim bench --tune` (run_bench calls it once the options are checked). Without a CUDA
// GPU it says there is nothing to tune, writes nothing and returns kExitFailure.
int run_tune(const BenchOptions& options);

}  // namespace heatsim::app
