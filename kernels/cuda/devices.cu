#include "../registry.hpp"
#include "check.cuh"

namespace heatsim::kernels {

bool cuda_compiled() { return true; }

std::vector<DeviceInfo> cuda_devices() {
  int count = 0;
  // No driver or no device is an answer here ("no GPU"), not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    HEATSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.total_memory = prop.totalGlobalMem;
    d.major = prop.major;
    d.minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute stays.
    HEATSIM_CUDA_CHECK(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, i));
    int current = 0;
    HEATSIM_CUDA_CHECK(cudaGetDevice(&current));
    HEATSIM_CUDA_CHECK(cudaSetDevice(i));
    size_t free_b = 0, total_b = 0;
    HEATSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    HEATSIM_CUDA_CHECK(cudaSetDevice(current));
    d.free_memory = free_b;
    devices.push_back(d);
  }
  return devices;
}

}  // namespace heatsim::kernels
