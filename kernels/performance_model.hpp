// What the performance model (solver/perf_model.hpp) knows of a backend, declared by the
// backend's registry entry beside its factory: the output tiles that cost halo traffic and the
// fractions of the bandwidth and compute roofs the backend reaches, per dimension.
#pragma once

#include <array>

namespace heatsim::kernels {

// Per dimension d (index d-1).
struct PerformanceModel {
  // Output tile per axis (x, y, z); 0: the axis is not tiled (marched through, or the halo is
  // left to the caches), so it adds no halo traffic.
  std::array<std::array<int, 3>, 3> tile{};
  std::array<double, 3> bandwidth_efficiency{0.5, 0.5, 0.5};
  std::array<double, 3> compute_efficiency{0.1, 0.1, 0.1};
  bool tensor_cores = false;  // the compute roof is the FP64 tensor-core peak
};

}  // namespace heatsim::kernels
