#include "perf_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "kernels/cuda/convstencil/fusion_plan.hpp"
#include "roofline.hpp"
#include "stencil.hpp"

namespace heatsim::solver {

std::optional<BackendModel> backend_model(const kernels::BackendEntry& entry) {
  if (entry.model) return entry.model;
  if (entry.needs_gpu) return BackendModel{};
  return std::nullopt;
}

std::optional<BackendModel> backend_model(const std::string& name, bool gpu) {
  if (const kernels::BackendEntry* entry = kernels::find_backend(name)) return backend_model(*entry);
  if (gpu) return BackendModel{};
  return std::nullopt;
}

int model_fusion_limit(const kernels::Capabilities& caps, const kernels::StencilProblem& p) {
  const int r = std::max(1, p.stencil.radius);
  const int max_radius = std::max(caps.max_radius, caps.max_fusion_depth);
  int k = std::max(1, caps.max_fusion_depth);
  auto fits = [&](int depth) {
    if (depth * r > max_radius) return false;
    for (int a = 0; a < p.dims; ++a)
      if (depth * r > p.n[static_cast<std::size_t>(a)] - 1) return false;
    return true;
  };
  while (k > 1 && !fits(k)) --k;
  return k;
}

double executed_flops_per_point_step(const kernels::Stencil& s, int fusion_depth,
                                     bool diamond_taps) {
  if (fusion_depth < 1) throw std::invalid_argument("fusion depth must be >= 1");
  const kernels::Stencil fused = stencil_power(s, fusion_depth);
  if (fused.is_star()) return 2.0 * static_cast<double>(fused.nonzeros()) / fusion_depth;
  if (!diamond_taps || !s.is_star()) return 2.0 * static_cast<double>(fused.size()) / fusion_depth;
  // The fused-star taps: offsets reached by k steps of at most q = r along one axis each.
  const int q = s.radius, r = fused.radius;
  const int rz = fused.dims > 2 ? r : 0, ry = fused.dims > 1 ? r : 0;
  auto steps = [q](int d) { return (std::abs(d) + q - 1) / q; };
  double taps = 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -r; dx <= r; ++dx)
        if (steps(dx) + steps(dy) + steps(dz) <= fusion_depth) taps += 1;
  return 2.0 * taps / fusion_depth;
}

double tensor_core_flops_per_point_step(const kernels::Stencil& s, int fusion_depth) {
  if (fusion_depth < 1) throw std::invalid_argument("fusion depth must be >= 1");
  const auto plan =
      kernels::convstencil::plan_for(kernels::convstencil::fuse_stencil(s, fusion_depth));
  return 8.0 * plan.chunks / fusion_depth;
}

double halo_factor(const BackendModel& m, int dims, int fused_radius) {
  const auto& tile = m.tile[static_cast<std::size_t>(std::clamp(dims, 1, 3) - 1)];
  double f = 1.0;
  for (int a = 0; a < dims; ++a) {
    const int t = tile[static_cast<std::size_t>(a)];
    if (t <= 0) continue;
    if (!m.steps_in_pass) {
      f *= static_cast<double>(t + 2 * fused_radius) / t;
    } else if (t > 2 * fused_radius) {
      f *= static_cast<double>(t) / (t - 2 * fused_radius);
    } else {
      return std::numeric_limits<double>::infinity();
    }
  }
  return f;
}

int model_depth_limit(const BackendModel& m, const kernels::StencilProblem& p) {
  const std::size_t d = static_cast<std::size_t>(std::clamp(p.dims, 1, 3) - 1);
  return p.stencil.radius <= 1 ? m.max_depth_radius1[d] : m.max_depth_wider[d];
}

Prediction predict(const kernels::StencilProblem& p, const BackendModel& m, int k,
                   const DeviceRates& device) {
  Prediction out;
  if (device.bandwidth <= 0 || k < 1) return out;
  const std::size_t d = static_cast<std::size_t>(std::clamp(p.dims, 1, 3) - 1);
  out.halo = halo_factor(m, p.dims, k * p.stencil.radius);
  out.bandwidth_roof = device.bandwidth / (bytes_per_point_step(p.precision, k) * out.halo) / 1e9;
  if (!std::isfinite(out.halo)) return out;  // the block's tile keeps no output at this depth
  const double peak = m.tensor_cores ? device.tensor_peak_flops : device.core_peak_flops;
  // k single steps per pass: S's flops on every node of the block's tile at every step.
  const double flops = m.tensor_cores    ? tensor_core_flops_per_point_step(p.stencil, k)
                       : m.steps_in_pass ? executed_flops_per_point_step(p.stencil, 1) * out.halo
                                         : executed_flops_per_point_step(p.stencil, k, true);
  if (peak > 0) out.compute_roof = peak / flops / 1e9;
  const double bandwidth_rate = m.bandwidth_efficiency[d] * out.bandwidth_roof;
  const double compute_rate = m.compute_efficiency[d] * out.compute_roof;
  out.compute_binds = out.compute_roof > 0 && compute_rate < bandwidth_rate;
  out.gstencils = out.compute_binds ? compute_rate : bandwidth_rate;
  return out;
}

double coefficient_rate(const BackendModel& m, const kernels::CoefficientTraffic& traffic,
                        const DeviceRates& device) {
  const double e = m.coefficient_efficiency[static_cast<std::size_t>(traffic.layout)];
  if (e <= 0 || device.bandwidth <= 0 || traffic.bytes <= 0) return 0.0;
  return e * device.bandwidth / traffic.bytes / 1e9;
}

}  // namespace heatsim::solver
