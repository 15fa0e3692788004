// The field holder of an implicit or steady run: a kernels::Backend whose field is the
// ImplicitStepper's, where the level operations live (a GPU's memory for a GPU backend), and
// whose advance() is implicit steps. The time loop (solver/simulation.hpp) then runs an
// implicit case as it runs an explicit one, outputs, checkpoints, probes and statistics
// included, and no field crosses to the host inside a step: only what the loop asks for
// (statistics at progress lines, output, checkpoints, probes) is downloaded, between steps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "implicit_stepper.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver::multigrid {

class ImplicitBackend final : public kernels::Backend {
 public:
  // `name`: the backend whose level operations the stepper runs on (for messages).
  ImplicitBackend(std::string name, std::unique_ptr<ImplicitStepper> stepper);

  ImplicitStepper& stepper() { return *stepper_; }
  // Called after every step with the step reached (step0 + s + 1) and its solve's report.
  void on_step(std::function<void(std::int64_t, const SolveReport&)> f) { on_step_ = std::move(f); }

  std::string name() const override { return name_; }
  kernels::Capabilities capabilities() const override;
  // Takes the problem whose steps the stepper solves (the grid, the precision, the capacities
  // the total heat weighs by); throws std::invalid_argument for another grid.
  void setup(const kernels::StencilProblem& problem) override;
  // fp32 problems: the field is rounded to fp32, as an fp32 backend holds it.
  void upload(const std::vector<double>& field) override;
  void download(std::vector<double>& field) override;
  // Without a copy of the field between (an fp64 field of doubles goes as it is).
  void upload_from(const kernels::HostField& field) override;
  // Also takes the statistics of the field handed out, which stats() then gives until the
  // field changes (an output's download and the run's final statistics at the same step
  // download once).
  void download_to(double* out) override;
  using kernels::Backend::download_to;
  // Implicit steps; throws SolveFailure (the field as after the last step that converged).
  void advance(std::int64_t steps, std::int64_t step0) override;
  // From a download of the field, weighted as kernels::FieldStats says.
  kernels::FieldStats stats() override;

 private:
  std::string name_;
  std::unique_ptr<ImplicitStepper> stepper_;
  kernels::StencilProblem problem_;
  std::function<void(std::int64_t, const SolveReport&)> on_step_;
  // The statistics of the field at the stepper's field_version() `stats_version_`, if taken.
  std::optional<kernels::FieldStats> stats_;
  std::uint64_t stats_version_ = 0;

  kernels::FieldStats stats_of(const double* u) const;
};

}  // namespace heatsim::solver::multigrid
