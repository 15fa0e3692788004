// Picks and creates the backend for a problem: a named one (checked against the problem), or
// `auto`, which takes the fastest available backend that supports the problem, and with
// `fusion: auto` (StencilProblem::fusion_depth 0) also the fusion depth.
//
// Rates, per backend, from the first source that has one:
//   1. the tuning cache (`heatsim bench --tune` on this device), when it holds the problem's
//      class (dimensions, star/box, precision, nearest radius) for that backend: one
//      candidate per measured fusion depth;
//   2. the performance model (perf_model.hpp) with the device's bandwidth and peaks: one
//      candidate per depth 1..model_fusion_limit (and the model's own model_depth_limit); a
//      model that only ranks its backend (own_depth) leaves `fusion: auto` to the backend;
//   3. the built-in table of H100 rates (BackendEntry::expected_rate), at the problem's depth.
// The highest rate wins (registry order, then the smaller depth, on a tie); backends with no
// rate follow in registry order (without a GPU that leaves `cpu`). A case's explicit
// `fusion: k` is kept: each backend is rated at the depth it would use for k.
//
// Before any rate: a grid of fewer than kSmallGridPoints nodes runs on a host backend (the
// registry's first that takes it). There a GPU step is its launches: on an H200 beside 16
// cores, 2000 explicit steps of a 1D wall of 321 nodes took 7 ms against the CPU's 3, 100
// backward-Euler steps 131 ms against 46; at about 2000 nodes the two are even, and above it
// the GPU leads (docs/performance.md, "Small grids on the host").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/registry.hpp"
#include "perf_model.hpp"
#include "tune_cache.hpp"

namespace heatsim::solver {

inline constexpr std::int64_t kSmallGridPoints = 2048;

struct BackendChoice {
  std::unique_ptr<kernels::Backend> backend;
  std::string name;
  // The fusion depth to run: the chosen one when the problem asked for `auto` (0) and a rate
  // decided it, else the problem's own (0 then leaves the depth to the backend).
  int fusion_depth = 1;
  std::string reason;  // why this one, for the run log
};

// What `auto` knows of the machine besides the registry.
struct ChoiceContext {
  bool have_gpu = false;
  const TuneCache* cache = nullptr;  // measured on this machine's GPU; nullptr: none
  std::string cache_path;            // named in the reason
  DeviceRates device;                // bandwidth 0: the model is not used
};

// have_gpu from the registry (a visible CUDA device); no cache, no device rates.
ChoiceContext default_choice_context();

// Throws std::invalid_argument when the named backend is unknown or cannot run the problem,
// std::runtime_error when it needs a GPU that is not there.
BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem);
BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem,
                             const ChoiceContext& context,
                             const std::vector<kernels::BackendEntry>& registry =
                                 kernels::backend_registry());

}  // namespace heatsim::solver
