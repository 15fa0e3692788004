#include "check.cuh"
#include "host_staging.hpp"

namespace heatsim::kernels::cuda {

namespace {

// A destructor's release: nothing to throw to, and a failed free leaves nothing to undo.
void release_pinned(double* p) { (void)cudaFreeHost(p); }

}  // namespace

HostStaging allocate_pinned_staging(std::size_t values) {
  void* p = nullptr;
  HEATSIM_CUDA_CHECK(cudaMallocHost(&p, values * sizeof(double)));
  return HostStaging(static_cast<double*>(p), values, release_pinned);
}

}  // namespace heatsim::kernels::cuda
