// The driver every CUDA backend shares: field on the device for the whole run (padded
// layout, two buffers ping-pong), ghost fill, sweep, Dirichlet nodes, statistics. A backend
// is this driver plus its sweep launcher; see naive/, shared_tiling/, register_tiling/.
#pragma once

#include <memory>
#include <string>

#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
using SweepLauncher = void (*)(const SweepArgs<T>& args, const SweepShape& shape,
                               const LaunchContext& context);

struct SweepBackendSpec {
  std::string name;
  Capabilities capabilities;  // gpu is set by the driver
  SweepLauncher<float> sweep_fp32 = nullptr;
  SweepLauncher<double> sweep_fp64 = nullptr;
  // `fusion: auto` for a star in 2D and 3D: the fused radius k*r it fuses to (k = 1 where r is
  // larger); 1D stencils and 2D boxes fuse at the deepest depth (k*r <= 3), 3D boxes not at all.
  int auto_radius_2d = 3;
  int auto_radius_3d = 1;
};

std::unique_ptr<Backend> make_sweep_backend(const SweepBackendSpec& spec, Precision precision);

// The stream every CUDA backend queues its work on (the legacy default stream), so that
// events recorded around advance() time it.
inline cudaStream_t backend_stream() { return nullptr; }

}  // namespace heatsim::kernels::cuda
