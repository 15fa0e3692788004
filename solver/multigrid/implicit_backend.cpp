#include "implicit_backend.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/threads.hpp"

namespace heatsim::solver::multigrid {

ImplicitBackend::ImplicitBackend(std::string name, std::unique_ptr<ImplicitStepper> stepper)
    : name_(std::move(name)), stepper_(std::move(stepper)) {
  if (!stepper_) throw std::invalid_argument("implicit backend: no stepper");
}

kernels::Capabilities ImplicitBackend::capabilities() const {
  kernels::Capabilities caps;
  caps.max_radius = 1;
  caps.box = false;
  return caps;
}

void ImplicitBackend::setup(const kernels::StencilProblem& problem) {
  if (problem.points() != stepper_->heat_flow().points())
    throw std::invalid_argument("implicit backend: the problem's grid is not the stepper's");
  problem_ = problem;
  stepper_->set_round_to_fp32(problem.precision == kernels::Precision::fp32);
}

void ImplicitBackend::upload(const std::vector<double>& field) {
  if (problem_.precision != kernels::Precision::fp32) return stepper_->set_field(field);
  std::vector<double> rounded(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) rounded[i] = static_cast<float>(field[i]);
  stepper_->set_field(rounded);
}

void ImplicitBackend::download(std::vector<double>& field) { stepper_->field(field); }

void ImplicitBackend::upload_from(const kernels::HostField& field) {
  if (problem_.precision == kernels::Precision::fp32 || !field.doubles())
    return kernels::Backend::upload_from(field);
  stepper_->set_field(field.doubles(), field.size());
}

void ImplicitBackend::download_to(double* out) {
  stepper_->field_to(out, static_cast<std::size_t>(problem_.points()));
  stats_ = stats_of(out);
  stats_version_ = stepper_->field_version();
}

void ImplicitBackend::advance(std::int64_t steps, std::int64_t step0) {
  for (std::int64_t s = 0; s < steps; ++s) {
    const SolveReport report = stepper_->advance(step0 + s);
    if (on_step_) on_step_(step0 + s + 1, report);
  }
}

kernels::FieldStats ImplicitBackend::stats() {
  if (stats_ && stats_version_ == stepper_->field_version()) return *stats_;
  std::vector<double> u;
  stepper_->field(u);
  stats_ = stats_of(u.data());
  stats_version_ = stepper_->field_version();
  return *stats_;
}

kernels::FieldStats ImplicitBackend::stats_of(const double* u) const {
  const auto& n = problem_.n;
  const auto weight = [&](int a, std::int64_t i) {
    if (a >= problem_.dims || problem_.periodic(a)) return 1.0;
    return (i == 0 || i == n[a] - 1) ? 0.5 : 1.0;
  };
  const double* capacity =
      problem_.coefficients ? problem_.coefficients->capacity.data() : nullptr;
  const kernels::TemperatureDependence* laws =
      problem_.coefficients ? problem_.coefficients->temperature.get() : nullptr;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, total = 0.0;
  std::int64_t bad = 0;
#pragma omp parallel for collapse(2) reduction(min : mn) reduction(max : mx) reduction(+ : total, bad) if (kernels::worth_threads(problem_.points()))
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y) {
      const double wzy = weight(2, z) * weight(1, y);
      for (std::int64_t x = 0; x < n[0]; ++x) {
        const std::int64_t i = (z * n[1] + y) * n[0] + x;
        const double v = u[i];
        if (capacity && capacity[i] == 0.0) continue;  // inside a void: no part of the body
        if (!std::isfinite(v)) {
          ++bad;
          continue;
        }
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        // A law of varying capacity holds C_ref h(u) (temperature_laws.hpp), as the explicit
        // backends count it: the latent heat and the c_p table's heat are part of the total.
        const std::int32_t l = laws ? laws->law[static_cast<std::size_t>(i)] : -1;
        const kernels::TemperatureLaw* law =
            l >= 0 && laws->laws[static_cast<std::size_t>(l)].varying_capacity()
                ? &laws->laws[static_cast<std::size_t>(l)]
                : nullptr;
        total +=
            wzy * weight(0, x) * (capacity ? capacity[i] : 1.0) * (law ? law->enthalpy(v) : v);
      }
    }
  kernels::FieldStats st;
  st.min = mn;
  st.max = mx;
  st.total_heat = total;
  st.non_finite = bad;
  return st;
}

}  // namespace heatsim::solver::multigrid
