// Field operations every CUDA backend shares: the ghost fill of one axis, the Dirichlet
// boundary nodes, and the statistics reduction. Same rules as the CPU reference
// (layout.hpp, cpu_backend.cpp); launchers check every launch.
#pragma once

#include <cstdint>
#include <vector>

#include "../host_staging.hpp"
#include "device_memory.cuh"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// One face's ghost rule at the current time: kind, g(t) (Dirichlet) or the flux (Neumann).
struct GhostFace {
  int kind = 0;  // BoundaryKind
  double value = 0.0;
};

// Fills the ghost layers of `axis` on both faces, over the padded extent of the earlier axes
// and the interior of the later ones (so box-stencil corners compose the reflections).
template <typename T>
void launch_fill_ghosts(T* field, const DeviceGrid& grid, int axis, GhostFace lo, GhostFace hi,
                        double spacing, cudaStream_t stream);

// Sets every boundary node of the listed Dirichlet faces to its value. Faces are listed in
// the order x-, x+, y-, y+, z-, z+; a node on several faces takes the last one's value.
struct DirichletFaces {
  int count = 0;
  int axis[kFaces] = {};
  int side[kFaces] = {};
  double value[kFaces] = {};
};
template <typename T>
void launch_set_dirichlet(T* field, const DeviceGrid& grid, const DirichletFaces& faces,
                          cudaStream_t stream);

// The boundary work between two sweeps, in one launch: optionally set every Dirichlet node
// to g(t) (a node on several faces takes the last face's value in the order x-, x+, y-, ...),
// then fill every ghost layer from the result (axis by axis, the earlier axes' ghosts
// included, as launch_fill_ghosts does for x, y, z in turn). Each written node is computed
// from one interior node: a Dirichlet node is g, a ghost node is the interior node it mirrors
// (a Dirichlet node again if it lies on a face) with the ghost rules of its axes applied in
// the order x, y, z, which is the arithmetic of the axis-by-axis fill.
struct BoundaryFaces {
  int kind[kFaces] = {};        // BoundaryKind; faces of inactive axes are ignored
  double value[kFaces] = {};    // g(t) (Dirichlet) or the flux (Neumann) at this pass's time
  double spacing[3] = {1.0, 1.0, 1.0};
};
template <typename T>
void launch_boundary_pass(T* field, const DeviceGrid& grid, const BoundaryFaces& faces,
                          bool set_dirichlet, bool fill_ghosts, cudaStream_t stream);

// Whether launch_boundary_pass takes this grid with its ghosts filled (value_bytes: the field's
// element size): the nodes it writes at each end of a row (the ghosts, a Dirichlet node and
// the pads that complete their 32-byte sectors) fit one warp.
bool boundary_pass_fills(const DeviceGrid& grid, std::size_t value_bytes);

// Every face at time t, for launch_boundary_pass: of a field's faces and spacing, or of the
// problem's.
inline BoundaryFaces boundary_faces_at(const std::array<BoundaryFace, kFaces>& faces,
                                       const std::array<double, kMaxDims>& h, double t) {
  BoundaryFaces f;
  for (int i = 0; i < kFaces; ++i) {
    f.kind[i] = static_cast<int>(faces[i].kind);
    f.value[i] = faces[i].at(t);
  }
  for (int a = 0; a < kMaxDims; ++a) f.spacing[a] = h[a];
  return f;
}
inline BoundaryFaces boundary_faces_at(const StencilProblem& p, double t) {
  return boundary_faces_at(p.faces, p.h, t);
}

// Per-block partial statistics; the host combines them in block order (deterministic).
struct StatsPartial {
  double min;
  double max;
  double total;
  long long non_finite;
};
constexpr int kStatsMaxBlocks = 1024;
// trapezoid[axis]: the axis is active and not periodic (half weight on its two end nodes).
// `capacity`, when not null, weighs each node by its rho*c_p as well (device, compact
// [z][y][x] doubles): the heat content of a problem with coefficient fields.
// Returns the number of partials written to `partials` (device, kStatsMaxBlocks entries).
template <typename T>
int launch_stats(const T* field, const DeviceGrid& grid, const bool trapezoid[3],
                 StatsPartial* partials, int multiprocessors, cudaStream_t stream,
                 const double* capacity = nullptr);

// Backend::stats on the device: launch_stats over `field`, the trapezoid's half weights at the
// ends of `problem`'s active, non-periodic axes; the partials copied back and added on the host
// in block order, so that the result does not depend on timing. Waits for `stream`.
template <typename T>
FieldStats device_field_stats(const T* field, const DeviceGrid& grid, const StencilProblem& problem,
                              StatsPartial* partials, int multiprocessors, cudaStream_t stream,
                              const double* capacity = nullptr);

// What a backend keeps between samples: the nodes on the device as last uploaded (a run samples
// the same probes every time), room for the values, and pinned slots they come back through,
// one per sample queued and not yet collected. Allocated on the first sample and when the node
// list grows: no allocation, free or upload of the list per sample after that (each of those
// waits on the device).
struct SampleBuffers {
  DeviceArray device;  // the nodes (int64), then the values (double)
  HostStaging host;    // `slots` slots of `capacity` doubles, pinned
  std::vector<std::int64_t> nodes;  // what `device` holds
  std::size_t capacity = 0;         // nodes `device` and each slot have room for
  std::size_t slots = 0;
  std::vector<std::size_t> queued;  // per slot in use, in order: its sample's node count
  cudaStream_t stream = nullptr;    // where the queued samples were queued
  std::vector<std::vector<double>> ready;  // samples already out of their slots, in order
};

// Backend::sample_later on the device: the values of the given nodes (compact indices in memory
// order [z][y][x], checked against the grid) gathered by one small kernel on `stream`, behind
// what is queued there, and copied to a pinned slot, without waiting.
template <typename T>
void queue_sample(const T* field, const DeviceGrid& grid, const std::vector<std::int64_t>& nodes,
                  cudaStream_t stream, SampleBuffers& buffers);
// Backend::collect_samples: waits for the queued samples and moves them out, in order.
void collect_queued_samples(SampleBuffers& buffers, std::vector<std::vector<double>>& samples);
// Backend::sample on the device: queue_sample, then its values (the samples queued before it
// stay queued).
template <typename T>
void sample_nodes(const T* field, const DeviceGrid& grid, const std::vector<std::int64_t>& nodes,
                  std::vector<double>& values, cudaStream_t stream, SampleBuffers& buffers);

}  // namespace heatsim::kernels::cuda
