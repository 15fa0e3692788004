// Every CUDA call is checked: HEATSIM_CUDA_CHECK names the call, file and line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace heatsim::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(err) + " (" +
                           cudaGetErrorName(err) + ") in " + call + " at " + file + ":" +
                           std::to_string(line));
}

}  // namespace heatsim::kernels::cuda

#define HEATSIM_CUDA_CHECK(call)                                                  \
  do {                                                                            \
    cudaError_t heatsim_err_ = (call);                                            \
    if (heatsim_err_ != cudaSuccess)                                              \
      ::heatsim::kernels::cuda::throw_cuda_error(heatsim_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define HEATSIM_CUDA_CHECK_LAUNCH() HEATSIM_CUDA_CHECK(cudaGetLastError())
