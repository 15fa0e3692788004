// The convstencil sweep: out <- S in + source over every interior node, S applied as fp64
// tensor-core MMAs from a stencil2row tile in shared memory (see fusion_plan.hpp for the
// method, docs/convstencil.md for the whole backend).
#pragma once

#include <cuda_runtime.h>

#include "../stencil_common.cuh"
#include "fusion_plan.hpp"

namespace heatsim::kernels::convstencil {

// A plan's tables on the device, uploaded once by the backend.
struct DevicePlan {
  TilePlan plan;
  const int* offsets = nullptr;       // [slots][chunks]
  const double* fragments = nullptr;  // [chunks][32]
  int blocks_per_multiprocessor = 1;  // resident blocks of this plan's kernel
};

// Extra elements a field buffer needs past DeviceGrid::total: tiles load whole padded rows
// (and, in 1D, whole stencil2row segments) without bounds checks, and the last ones run past
// the grid's end into this finite, zeroed slack.
std::int64_t slack_elements(const TilePlan& plan);

// Raises the kernel's dynamic shared-memory limit for this plan and returns how many of its
// blocks are resident per multiprocessor; throws when the device cannot give the memory.
int prepare_plan(const TilePlan& plan);

// Queues one sweep on `stream`.
void launch_sweep(const DevicePlan& plan, const double* in, double* out, const cuda::DeviceGrid& grid,
                  double source, int multiprocessors, cudaStream_t stream);

}  // namespace heatsim::kernels::convstencil
