// Runs of time steps replayed as CUDA graphs. A step of a grid of a few hundred thousand nodes
// takes a few microseconds on the device, about what launching its kernels costs the host, so
// on such grids the launches, not the bytes, bound a run. StepGraphs captures the launches of a
// run of `steps` steps once (on a stream of its own) and replays them as one graph whenever a
// run of that length starts from the same buffer. What changes from step to step (the sources'
// factors) is not baked into the graph: the kernels read it from a StepTable on the device,
// which every run of steps refills in stream order before its launches. A replay issues the
// same kernels with the same arguments as the launches it captured, so its results are theirs
// bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "../registry.hpp"  // cuda_graph_replays()
#include "check.cuh"
#include "device_memory.cuh"

namespace heatsim::kernels::cuda {

// A switch of the step paths in the environment (HEATSIM_CUDA_GRAPHS, _FACE_RULES,
// _PERSISTENT): 0 or 1 where `name` is set to "0" or "1", else -1 (the default path). Read at
// each call, so a test can compare both ways in one process.
int environment_switch(const char* name);

class StepGraphs {
 public:
  StepGraphs() = default;
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;
  ~StepGraphs();

  // Forgets every graph (their buffers were reallocated).
  void clear();

  // Runs `steps` steps starting from buffer `start` on `stream`: the graph kept for (steps,
  // start), captured first by enqueue(capture_stream), which must issue the steps' work on that
  // stream only (kernel launches and device-to-device copies; nothing that waits on the host).
  template <typename Enqueue>
  void run(std::int64_t steps, const void* start, cudaStream_t stream, Enqueue&& enqueue) {
    cudaGraphExec_t exec = find(steps, start);
    if (!exec) {
      begin_capture();
      enqueue(capture_);
      exec = end_capture(steps, start);
    }
    replay(exec, stream);
  }

 private:
  struct Entry {
    std::int64_t steps = 0;
    const void* start = nullptr;
    cudaGraphExec_t exec = nullptr;
  };
  cudaGraphExec_t find(std::int64_t steps, const void* start) const;
  void begin_capture();
  cudaGraphExec_t end_capture(std::int64_t steps, const void* start);
  void replay(cudaGraphExec_t exec, cudaStream_t stream);

  std::vector<Entry> entries_;
  cudaStream_t capture_ = nullptr;
};

// Per-step values of up to `rows` steps, `width` T each, on the device: filled on the host into
// one of two pinned halves and copied in stream order, so that kernels queued (or replayed)
// after the copy read this run's rows and kernels queued before it still read the last run's.
// A half is refilled only once its previous copy has left it.
template <typename T>
class StepTable {
 public:
  StepTable() = default;
  StepTable(const StepTable&) = delete;
  StepTable& operator=(const StepTable&) = delete;
  ~StepTable();

  void setup(int rows, int width);
  int rows() const { return rows_; }
  // fill(row, values) writes `width` values of each row 0 .. steps - 1; the rows are copied
  // to the device on `stream`. Returns the device table (row r at r * width).
  template <typename Fill>
  const T* stage(int steps, cudaStream_t stream, Fill&& fill) {
    T* host = claim_half();
    for (int r = 0; r < steps; ++r) fill(r, host + static_cast<std::size_t>(r) * width_);
    copy_half(host, steps, stream);
    return device_.as<T>();
  }
  const T* device() const { return device_.as<T>(); }

 private:
  T* claim_half();
  void copy_half(const T* host, int steps, cudaStream_t stream);
  void release();

  int rows_ = 0, width_ = 0, half_ = 0;
  DeviceArray device_;
  T* host_ = nullptr;  // 2 * rows * width, pinned
  cudaEvent_t copied_[2] = {nullptr, nullptr};
  bool pending_[2] = {false, false};
};

}  // namespace heatsim::kernels::cuda
