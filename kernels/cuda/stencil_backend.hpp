// The driver every CUDA backend shares: field on the device for the whole run (padded
// layout, two buffers ping-pong), ghost fill, sweep, Dirichlet nodes, statistics. A backend
// is this driver plus its sweep launcher; see naive/, shared_tiling/, register_tiling/.
#pragma once

#include <memory>
#include <string>

#include "coefficient_sweep.cuh"
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
  // The varying-coefficient step (StencilProblem::coefficients), one step per pass.
  CoefficientLauncher<float> coefficient_fp32 = nullptr;
  CoefficientLauncher<double> coefficient_fp64 = nullptr;
  // `fusion: auto` for a star in 2D and 3D: the fused radius k*r it fuses to (k = 1 where r is
  // larger); 1D stencils and 2D boxes fuse at the deepest depth (k*r <= 3), 3D boxes not at all.
  int auto_radius_2d = 3;
  int auto_radius_3d = 1;
  // The sweep stores only the nodes in SweepArgs::store_x of its rows, so that steps between
  // Dirichlet faces that never change need no boundary pass (the driver's fixed faces).
  bool stores_x = false;
};

std::unique_ptr<Backend> make_sweep_backend(const SweepBackendSpec& spec, Precision precision);

// Why a constant-weight driver cannot run `problem` on account of its coefficients, empty when
// it can: a problem with coefficient fields, or with a convective or heat-flux face (whose
// ghost needs the conductances), is not one constant stencil.
std::string constant_weights_reason(const StencilProblem& problem);

// The stream every CUDA backend queues its work on (the legacy default stream), so that
// events recorded around advance() time it.
inline cudaStream_t backend_stream() { return nullptr; }

}  // namespace heatsim::kernels::cuda
