// The driver of a CUDA-core backend on a varying-coefficient problem (StencilProblem::
// coefficients): u, k, dt/C and the source densities live on the device for the whole run,
// and each step is, as on the CPU, the ghost fill of u at time t, the backend's coefficient
// sweep cur -> next with the sources' factors Schedule::mean(t, t + dt) (evaluated on the host
// per step and passed by value), swap, and the Dirichlet nodes set to g(t + dt). Without a
// convective or heat-flux face the Dirichlet nodes and the next ghosts are the constant-weight
// driver's one boundary pass (the rules agree at width 1); with one, the coefficient ghost fill
// (coefficient_fields.cuh) and a Dirichlet launch. One step per pass: S changes from node to
// node, so there is no S^k to fuse.
#pragma once

#include <memory>
#include <string>

#include "coefficient_sweep.cuh"

namespace heatsim::kernels::cuda {

// Why a CUDA-core backend with `caps` cannot run a coefficient problem, empty when it can:
// the capability checks, then radius 1 and the sizes of the fields.
std::string coefficient_unsupported_reason(const Capabilities& caps, const StencilProblem& problem);

template <typename T>
std::unique_ptr<Backend> make_coefficient_backend(const std::string& name, const Capabilities& caps,
                                                  CoefficientLauncher<T> sweep);

}  // namespace heatsim::kernels::cuda
