// A run of steps of a small grid in one cooperative launch. On a grid of a few hundred thousand
// nodes a step is a microsecond or two of work for the device, and a launch per step (even
// replayed from a graph) costs more than that. Here every block stays resident for the whole
// run: each step is a grid-stride pass of the flux operator (point_operators.cuh: cuda-naive's
// arithmetic, the faces' rules in the sweep, the step's row of source factors), the Dirichlet
// nodes written with their value in the same pass, and a grid-wide barrier before the next step.
#pragma once

#include <cuda_runtime.h>

#include "coefficient_sweep.cuh"
#include "field_kernels.cuh"

namespace heatsim::kernels::cuda {

// Steps `steps` steps from a.in (the run's first field) alternating between a.in and a.out;
// step s reads its source factors from row s of a.factor (kMaxSourceFields each) and sets the
// Dirichlet faces `dirichlet` (values constant over the run, the later face owning an edge) as
// set_dirichlet does. a.rules must apply on every face (no periodic axis). Returns false,
// launching nothing, when the device cannot launch cooperatively or the grid has 2^31 nodes or
// more. As many blocks as fit the device at once, at most one node per thread and step (on an
// H200, 4 blocks of 256 per SM; capped at 2 or 1 per SM the chip example ran at 29.9 and 19.7
// GStencil/s against 34.8).
template <typename T>
bool launch_persistent_steps(const CoefficientArgs<T>& a, int dims, int steps,
                             const DirichletFaces& dirichlet, cudaStream_t stream);

}  // namespace heatsim::kernels::cuda
