#include "perf_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "kernels/cuda/convstencil/fusion_plan.hpp"
#include "roofline.hpp"
#include "stencil.hpp"

namespace heatsim::solver {
namespace {

struct NamedModel {
  const char* name;
  BackendModel model;
};

// Calibration (docs/performance.md, "The model behind `auto`"): `heatsim bench` on an H100
// 80GB HBM3 at commit e289f0b, fp64, copy bandwidth 2981 GB/s. e_bw[d] is the median over the
// suite shapes of dimension d of measured / bandwidth roof at k = 1; e_c the largest fraction
// of the CUDA-core peak (33.45 TFLOP/s) any measured row reached (Box-2D49P for the sweeps), for
// convstencil the largest fraction of the tensor-core peak (66.9 TFLOP/s) in MMA flops
// (tensor_core_flops_per_point_step) any measured row reached: in 2D Box-2D49P at k = 3 (0.48;
// 1D takes it too, its rows are bandwidth-bound), in 3D Box-3D27P at k = 2 (0.40). Tiles
// are the kernels' output tiles (docs/backends.md, fusion_plan.cpp): register-tiling marches
// along the slowest axis, cuda-naive leaves its halo to L1/L2.
const NamedModel kModels[] = {
    {"register-tiling",
     {{{{0, 0, 0}, {256, 0, 0}, {32, 8, 0}}}, {0.5, 0.91, 1.00}, {0.44, 0.44, 0.44}, false}},
    {"shared-tiling",
     {{{{1024, 0, 0}, {32, 16, 0}, {32, 4, 4}}}, {0.80, 0.45, 0.62}, {0.11, 0.11, 0.11}, false}},
    {"cuda-naive",
     {{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}, {0.60, 0.75, 0.70}, {0.20, 0.20, 0.20}, false}},
    {"convstencil",
     {{{{2048, 0, 0}, {64, 32, 0}, {64, 16, 0}}}, {0.86, 0.88, 0.60}, {0.48, 0.48, 0.40}, true}},
};

}  // namespace

std::optional<BackendModel> backend_model(const std::string& name, bool gpu) {
  for (const NamedModel& m : kModels)
    if (name == m.name) return m.model;
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
    if (t > 0) f *= static_cast<double>(t + 2 * fused_radius) / t;
  }
  return f;
}

Prediction predict(const kernels::StencilProblem& p, const BackendModel& m, int k,
                   const DeviceRates& device) {
  Prediction out;
  if (device.bandwidth <= 0 || k < 1) return out;
  const std::size_t d = static_cast<std::size_t>(std::clamp(p.dims, 1, 3) - 1);
  out.halo = halo_factor(m, p.dims, k * p.stencil.radius);
  out.bandwidth_roof = device.bandwidth / (bytes_per_point_step(p.precision, k) * out.halo) / 1e9;
  const double peak = m.tensor_cores ? device.tensor_peak_flops : device.core_peak_flops;
  if (peak > 0)
    out.compute_roof = peak /
                       (m.tensor_cores ? tensor_core_flops_per_point_step(p.stencil, k)
                                       : executed_flops_per_point_step(p.stencil, k, true)) /
                       1e9;
  const double bandwidth_rate = m.bandwidth_efficiency[d] * out.bandwidth_roof;
  const double compute_rate = m.compute_efficiency[d] * out.compute_roof;
  out.compute_binds = out.compute_roof > 0 && compute_rate < bandwidth_rate;
  out.gstencils = out.compute_binds ? compute_rate : bandwidth_rate;
  return out;
}

}  // namespace heatsim::solver
