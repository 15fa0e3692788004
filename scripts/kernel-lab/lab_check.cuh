// What the kernel lab's standalone drivers share (naive_lab.cu, flux_lab.cu): every CUDA call
// checked, and the grid-stride copy whose rate is a driver's bandwidth bound.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

template <typename V>
__global__ void copy_kernel(const V* __restrict__ in, V* __restrict__ out, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}
