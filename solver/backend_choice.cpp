#include "backend_choice.hpp"

#include <cstdio>
#include <stdexcept>

#include "kernels/registry.hpp"

namespace heatsim::solver {

BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem) {
  BackendChoice choice;
  if (requested != "auto") {
    if (!kernels::find_backend(requested)) {
      std::string known;
      for (const auto& n : kernels::backend_names()) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("backend: unknown backend '" + requested + "' (compiled: " +
                                  known + ", or auto)");
    }
    choice.backend = kernels::create_backend(requested, problem.precision);
    const std::string why = choice.backend->unsupported_reason(problem);
    if (!why.empty())
      throw std::invalid_argument("backend: '" + requested + "' cannot run this case: " + why);
    choice.name = requested;
    choice.reason = "requested";
    return choice;
  }
  const bool have_gpu = !kernels::cuda_devices().empty();
  std::string skipped;
  // Among the backends that are available and support the problem: the highest expected
  // rate; those without a table follow in registry order.
  const kernels::BackendEntry* best = nullptr;
  double best_rate = -1.0;
  std::string considered;
  for (const auto& entry : kernels::backend_registry()) {
    if (entry.needs_gpu && !have_gpu) {
      skipped += " " + entry.name + " (no GPU);";
      continue;
    }
    const std::string why = entry.create(problem.precision)->unsupported_reason(problem);
    if (!why.empty()) {
      skipped += " " + entry.name + " (" + why + ");";
      continue;
    }
    const double rate = entry.expected_rate ? entry.expected_rate(problem) : 0.0;
    if (entry.expected_rate) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.0f;", entry.name.c_str(), rate);
      considered += buf;
    }
    if (rate > best_rate) {
      best = &entry;
      best_rate = rate;
    }
  }
  if (best) {
    choice.backend = best->create(problem.precision);
    choice.name = best->name;
    choice.reason = considered.empty()
                        ? "auto: the first available backend"
                        : "auto: highest expected GStencil/s from the measured table:" +
                              considered.substr(0, considered.size() - 1);
    if (!skipped.empty()) choice.reason += "; not usable:" + skipped.substr(0, skipped.size() - 1);
    return choice;
  }
  throw std::invalid_argument("backend: no compiled backend can run this case;" + skipped);
}

}  // namespace heatsim::solver
