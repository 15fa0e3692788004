// `heatsim validate` and `heatsim info`.
#include <spdlog/fmt/fmt.h>

#include "commands.hpp"
#include "kernels/registry.hpp"
#include "run_setup.hpp"
#include "solver/version.hpp"

namespace heatsim::app {

int validate_case_file(const std::string& path, const RunOverrides& overrides) {
  const std::optional<PreparedRun> run = prepare_run(path, overrides);
  if (!run) return kExitBadInput;
  const solver::Case& c = run->case_;
  double points = 1.0;
  for (int a = 0; a < c.grid.dims; ++a) points *= static_cast<double>(c.grid.n[a]);
  const double value = c.precision == solver::Precision::fp32 ? 4.0 : 8.0;
  fmt::print("{}: valid\n", path);
  fmt::print("  grid: {}D, {} points\n", c.grid.dims, static_cast<std::int64_t>(points));
  fmt::print("  scheme: {} (radius {})\n", solver::to_string(c.scheme.kind),
             solver::scheme_radius(c.scheme));
  fmt::print("  initial: {}\n", solver::describe_initial(c));
  fmt::print("  dt: {:.6g} ({}); largest stable dt {:.6g}\n", run->plan.dt,
             run->plan.dt_auto ? "auto" : "given", run->plan.dt_limit);
  fmt::print("  steps: {} to t = {:.6g}\n", run->plan.steps,
             run->plan.dt * static_cast<double>(run->plan.steps));
  fmt::print("  memory: {} per field copy ({}), about {} on the device or host running it\n",
             format_bytes(points * value), kernels::to_string(c.precision),
             format_bytes(2.0 * points * value));
  return kExitOk;
}

int print_info() {
  fmt::print("heatsim {}\n", version());
  fmt::print("backends:\n");
  for (const auto& e : kernels::backend_registry())
    fmt::print("  {:<16} {}{}\n", e.name, e.description, e.needs_gpu ? " [GPU]" : "");
  fmt::print("CUDA support: {}\n", kernels::cuda_compiled() ? "compiled" : "not compiled");
  const auto devices = kernels::cuda_devices();
  if (devices.empty()) fmt::print("GPUs: none visible\n");
  for (const auto& d : devices)
    fmt::print("GPU {}: {}, {} total ({} free), compute capability {}.{}, {} SMs\n", d.index,
               d.name, format_bytes(static_cast<double>(d.total_memory)),
               format_bytes(static_cast<double>(d.free_memory)), d.major, d.minor,
               d.multiprocessors);
  return kExitOk;
}

}  // namespace heatsim::app
