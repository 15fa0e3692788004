// What the performance model (solver/perf_model.hpp) knows of a backend, declared by the
// backend's registry entry beside its factory: the output tiles that cost halo traffic and the
// fractions of the bandwidth and compute roofs the backend reaches, per dimension.
#pragma once

#include <array>

namespace heatsim::kernels {

// How a GPU sweep holds a varying-coefficient problem (node_classes.hpp, coefficient_traffic):
// per node fields (k, dt/C, each source density), the faces' conductances as arrays with dt/C
// and the sources per node, a class byte per node and a small table (at most kPairClasses
// classes), or with the faces given a class byte per node and per face.
enum class CoefficientLayout { fields, faces, classes, face_classes };

// Per dimension d (index d-1).
struct PerformanceModel {
  // Output tile per axis (x, y, z); 0: the axis is not tiled (marched through, or the halo is
  // left to the caches), so it adds no halo traffic.
  std::array<std::array<int, 3>, 3> tile{};
  std::array<double, 3> bandwidth_efficiency{0.5, 0.5, 0.5};
  std::array<double, 3> compute_efficiency{0.1, 0.1, 0.1};
  bool tensor_cores = false;  // the compute roof is the FP64 tensor-core peak
  // k single steps per pass (temporal blocking) rather than one sweep of S^k: the work per
  // point and step is S's, and `tile` is the block's tile, fixed in size, whose output shrinks
  // by the fused radius R on each side, so that both the input re-read and the nodes computed
  // per output node grow by T / (T - 2R) per tiled axis.
  bool steps_in_pass = false;
  // The deepest fusion depth the model rates, per dimension, for radius-1 stencils and for
  // wider ones; 0: only the capabilities limit it (past the depths a backend was measured
  // at, its registers and shared memory bind, which the two roofs do not see).
  std::array<int, 3> max_depth_radius1{};
  std::array<int, 3> max_depth_wider{};
  // `fusion: auto` runs at the backend's own depth (measured per shape), the model only ranks
  // the backend: where its rates of nearby depths lie within a few percent, the backend knows
  // better which is fastest.
  bool own_depth = false;
  // Per CoefficientLayout (in its order), the fraction of the copy bandwidth the backend's
  // one-step sweep of that layout reaches, its bytes per node as coefficient_traffic counts
  // them; 0: not measured, such a problem is rated as the constant stencil.
  std::array<double, 4> coefficient_efficiency{};
};

}  // namespace heatsim::kernels
