#include "timing.hpp"

#include <algorithm>
#include <vector>

#include "check.cuh"
#include "stencil_backend.hpp"

namespace heatsim::kernels::cuda {
namespace {

// Two events, destroyed on every path.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    HEATSIM_CUDA_CHECK(cudaEventCreate(&start));
    HEATSIM_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  float elapsed_ms() const {
    HEATSIM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    HEATSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

}  // namespace

double time_advance_ms(Backend& backend, std::int64_t steps, std::int64_t step0) {
  EventPair ev;
  HEATSIM_CUDA_CHECK(cudaEventRecord(ev.start, backend_stream()));
  backend.advance(steps, step0);
  HEATSIM_CUDA_CHECK(cudaEventRecord(ev.stop, backend_stream()));
  return ev.elapsed_ms();
}

double copy_bandwidth(std::size_t bytes, int repeats) {
  void* a = nullptr;
  void* b = nullptr;
  HEATSIM_CUDA_CHECK(cudaMalloc(&a, bytes));
  if (cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    HEATSIM_CUDA_CHECK(cudaGetLastError());
  }
  std::vector<double> ms;
  try {
    HEATSIM_CUDA_CHECK(cudaMemset(a, 0, bytes));
    HEATSIM_CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));  // warm-up
    EventPair ev;
    for (int r = 0; r < std::max(repeats, 1); ++r) {
      HEATSIM_CUDA_CHECK(cudaEventRecord(ev.start, backend_stream()));
      HEATSIM_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, backend_stream()));
      HEATSIM_CUDA_CHECK(cudaEventRecord(ev.stop, backend_stream()));
      ms.push_back(ev.elapsed_ms());
    }
  } catch (...) {
    cudaFree(a);
    cudaFree(b);
    throw;
  }
  cudaFree(a);
  cudaFree(b);
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  return 2.0 * static_cast<double>(bytes) / (median * 1e-3);
}

}  // namespace heatsim::kernels::cuda
