// What a CUDA backend's folder needs to declare its registry entry (registry.hpp): the
// measured rates `auto` ranks by, and the entry of a tiling built on the sweep driver.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>

#include "../registry.hpp"
#include "stencil_backend.hpp"

namespace heatsim::kernels {

// One suite shape: GStencil/s per fusion depth 1..6 (0: the backend does not take that depth,
// or it was not measured) and at the depth `fusion: auto` takes. Each backend's table is
// `heatsim bench` on an NVIDIA H100 80GB HBM3, fp64, 2^26 / 8192^2 / 512^3 points (the entry
// says at which commits). The CUDA-core tilings fuse up to k*r <= 3 (2D stars k*r <= 6;
// fusing_backend.cuh), a fused star on its fused-star tap set; `fusion: auto` takes stars in 2D
// and 3D to SweepBackendSpec's radii, 1D and 2D boxes to the deepest, 3D boxes not at all.
struct MeasuredRow {
  int dims;
  bool box;
  int radius;
  double rate[6];  // k = 1 .. 6; 0: not measured
  double auto_rate = 0.0;
};

// The row of the problem's dimension and shape (star/box) with the nearest radius, the larger
// on a tie; nullptr when there is none.
template <std::size_t N>
const MeasuredRow* nearest_row(const MeasuredRow (&table)[N], const StencilProblem& p) {
  const bool box = !p.stencil.is_star();
  const MeasuredRow* best = nullptr;
  for (const MeasuredRow& row : table) {
    if (row.dims != p.dims || row.box != box) continue;
    const int d = std::abs(row.radius - p.stencil.radius);
    if (!best || d < std::abs(best->radius - p.stencil.radius) ||
        (d == std::abs(best->radius - p.stencil.radius) && row.radius > best->radius))
      best = &row;
  }
  return best;
}

// The rate at the problem's fusion depth: auto (0) at the auto depth; a depth the backend
// does not take at the deepest it takes below it (what it runs).
template <std::size_t N>
std::function<double(const StencilProblem&)> measured_rate(const MeasuredRow (&table)[N]) {
  return [&table](const StencilProblem& p) {
    const MeasuredRow* row = nearest_row(table, p);
    if (!row) return 0.0;
    if (p.fusion_depth == 0) return row->auto_rate;
    for (int k = std::min(std::max(p.fusion_depth, 1), 6); k >= 1; --k)
      if (row->rate[k - 1] > 0.0) return row->rate[k - 1];
    return 0.0;
  };
}

// Performance models (BackendEntry::model; solver/perf_model.hpp, docs/performance.md, "The
// model behind `auto`") are calibrated by `heatsim bench` on an H100 80GB HBM3 at commit
// e289f0b, fp64, copy bandwidth 2981 GB/s: e_bw[d] the median over the suite shapes of
// dimension d of measured / bandwidth roof at k = 1; e_c the largest fraction of the compute
// peak any measured row reached (CUDA cores, 33.45 TFLOP/s: Box-2D49P for the tilings); tiles
// the kernels' output tiles (docs/backends.md, fusion_plan.cpp).

// The entry of a CUDA-core tiling on the sweep driver (cuda::make_sweep_backend): one step per
// pass of its kernel over the point operators, fused passes by the fusing driver.
inline BackendEntry sweep_entry(const cuda::SweepBackendSpec& spec, std::string description,
                                std::function<double(const StencilProblem&)> rate,
                                std::optional<PerformanceModel> model) {
  BackendEntry e;
  e.name = spec.name;
  e.description = std::move(description);
  e.needs_gpu = true;
  e.create = [spec](Precision p) { return cuda::make_sweep_backend(spec, p); };
  e.expected_rate = std::move(rate);
  e.model = std::move(model);
  e.point_sweep = true;
  e.min_dims = spec.capabilities.min_dims;
  e.max_dims = spec.capabilities.max_dims;
  return e;
}

// Each folder's entry (its entry.cu).
BackendEntry temporal_blocking_entry();
BackendEntry register_tiling_entry();
BackendEntry shared_tiling_entry();
BackendEntry cuda_naive_entry();
BackendEntry convstencil_entry();

}  // namespace heatsim::kernels
