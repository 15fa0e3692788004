// What `auto` needs from this machine at run start: the GPU's tuning cache (when there is
// one) and the device's copy bandwidth and peak FLOP/s for the performance model. Nothing is
// read or measured without a GPU, or when the case names its backend and fusion depth.
#pragma once

#include <optional>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/registry.hpp"
#include "solver/backend_choice.hpp"

namespace heatsim::run {

struct AutoInputs {
  bool have_gpu = false;
  std::optional<solver::TuneCache> cache;
  std::string cache_path;
  solver::DeviceRates device;

  // Points into this object's cache: keep it alive while the context is used.
  solver::ChoiceContext context() const;
};

// The model's numbers for `device`: the peaks from its SM count, clock and architecture.
solver::DeviceRates device_rates(const kernels::DeviceInfo& device, kernels::Precision precision,
                                 double bandwidth);

// `choosing`: the backend or the fusion depth is `auto`. Warns (and goes on without it) when
// the cache cannot be used; measures the copy bandwidth (well under a second) when the cache
// does not give it.
AutoInputs gather_auto_inputs(const kernels::StencilProblem& problem, bool choosing);

}  // namespace heatsim::run
