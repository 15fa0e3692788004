#include <string>

#include "check.cuh"
#include "host_staging.hpp"

namespace heatsim::kernels::cuda {

namespace {

// A destructor's release: nothing to throw to, and a failed free leaves nothing to undo.
void release_pinned(void* p) { (void)cudaFreeHost(p); }
void release_registered(void* p) { (void)cudaHostUnregister(p); }

}  // namespace

HostStaging allocate_pinned_staging(std::size_t bytes) {
  void* p = nullptr;
  HEATSIM_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return HostStaging(p, bytes, release_pinned);
}

HostStaging pin_host_memory(void* p, std::size_t bytes, std::string& why_not) {
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    why_not = std::string("cudaHostRegister: ") + cudaGetErrorString(e);
    (void)cudaGetLastError();  // reported through why_not; clear it for the next check
    return HostStaging();
  }
  return HostStaging(p, bytes, release_registered);
}

}  // namespace heatsim::kernels::cuda
