#include "check.cuh"
#include "host_staging.hpp"

namespace heatsim::kernels::cuda {

namespace {

// A destructor's release: nothing to throw to, and a failed free leaves nothing to undo.
void release_pinned(void* p) { (void)cudaFreeHost(p); }

}  // namespace

HostStaging allocate_pinned_staging(std::size_t bytes) {
  void* p = nullptr;
  HEATSIM_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return HostStaging(p, bytes, release_pinned);
}

}  // namespace heatsim::kernels::cuda
