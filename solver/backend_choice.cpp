#include "backend_choice.hpp"

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
  for (const auto& entry : kernels::backend_registry()) {
    if (entry.needs_gpu && !have_gpu) {
      skipped += " " + entry.name + " (no GPU);";
      continue;
    }
    auto backend = entry.create(problem.precision);
    const std::string why = backend->unsupported_reason(problem);
    if (!why.empty()) {
      skipped += " " + entry.name + " (" + why + ");";
      continue;
    }
    choice.backend = std::move(backend);
    choice.name = entry.name;
    choice.reason = "auto: first available backend in preference order" +
                    (skipped.empty() ? std::string() : "; skipped" + skipped);
    return choice;
  }
  throw std::invalid_argument("backend: no compiled backend can run this case;" + skipped);
}

}  // namespace heatsim::solver
