#include "../registry.hpp"
#include "check.cuh"

namespace heatsim::kernels {

bool cuda_compiled() { return true; }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void use_cuda_device(int index) { HEATSIM_CUDA_CHECK(cudaSetDevice(index)); }

int current_cuda_device() {
  if (cuda_device_count() == 0) return -1;
  int device = 0;
  HEATSIM_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void start_cuda(int index) {
  // The error state is this thread's own: cleared here, it reaches no other thread.
  if (cudaSetDevice(index) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) cudaGetLastError();
}

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
