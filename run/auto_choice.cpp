#include "run/auto_choice.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "io/tune_cache_file.hpp"
#include "solver/roofline.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/timing.hpp"
#endif

namespace heatsim::run {

solver::ChoiceContext AutoInputs::context() const {
  solver::ChoiceContext c;
  c.have_gpu = have_gpu;
  c.cache = cache ? &*cache : nullptr;
  c.cache_path = cache_path;
  c.device = device;
  return c;
}

solver::DeviceRates device_rates(const kernels::DeviceInfo& device, kernels::Precision precision,
                                 double bandwidth) {
  solver::DeviceRates r;
  r.bandwidth = bandwidth;
  r.core_peak_flops = solver::device_peak_flops(device, precision, false);
  r.tensor_peak_flops = solver::device_peak_flops(device, precision, true);
  return r;
}

AutoInputs gather_auto_inputs([[maybe_unused]] const kernels::StencilProblem& problem,
                              bool choosing) {
  AutoInputs in;
  const std::vector<kernels::DeviceInfo> devices = kernels::cuda_devices();
  in.have_gpu = !devices.empty();
  if (!choosing || !in.have_gpu) return in;
  // The one the CUDA backends run on (a decomposed run's rank: its own).
  const kernels::DeviceInfo& device =
      devices.at(static_cast<std::size_t>(std::max(0, kernels::current_cuda_device())));
  try {
    in.cache_path = io::tune_cache_path(device);
    io::LoadedTuneCache loaded = io::load_tune_cache(in.cache_path);
    if (!loaded.warning.empty()) spdlog::warn("{}", loaded.warning);
    if (loaded.cache && loaded.cache->device != device.name)
      spdlog::warn("tuning cache {}: measured on '{}', not on this '{}'; ignored", in.cache_path,
                   loaded.cache->device, device.name);
    else
      in.cache = std::move(loaded.cache);
  } catch (const std::exception& e) {
    spdlog::warn("tuning cache: {}; going on without it", e.what());
  }
  double bandwidth = in.cache ? in.cache->bandwidth : 0.0;
#ifdef HEATSIM_HAVE_CUDA
  if (bandwidth <= 0) {
    // A copy the size of the field, clamped as the run summary's is (64-256 MiB).
    constexpr double kMiB = 1 << 20;
    const double value = problem.precision == kernels::Precision::fp64 ? 8.0 : 4.0;
    const double bytes =
        std::min(std::clamp(static_cast<double>(problem.points()) * value, 64 * kMiB, 256 * kMiB),
                 static_cast<double>(device.free_memory) / 4);
    try {
      bandwidth = kernels::cuda::copy_bandwidth(static_cast<std::size_t>(bytes), 5);
    } catch (const std::exception& e) {
      spdlog::warn("copy bandwidth not measured ({}); `auto` without the performance model",
                   e.what());
    }
  }
#endif
  in.device = device_rates(device, problem.precision, bandwidth);
  return in;
}

}  // namespace heatsim::run
