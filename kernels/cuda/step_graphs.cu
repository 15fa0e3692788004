// StepGraphs and StepTable of step_graphs.cuh.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "step_graphs.cuh"

namespace heatsim::kernels::cuda {

namespace {

std::atomic<std::int64_t> replays{0};

// Graphs kept per StepGraphs: a run asks for a handful of lengths (its observers' period, the
// remainder before an output, the last steps); past this many the cache starts again.
constexpr std::size_t kMaxGraphs = 8;

}  // namespace

int environment_switch(const char* name) {
  const char* v = std::getenv(name);
  if (v && std::strcmp(v, "0") == 0) return 0;
  if (v && std::strcmp(v, "1") == 0) return 1;
  return -1;
}


StepGraphs::~StepGraphs() {
  // No throw from destructors: a failed destroy leaks at worst.
  for (Entry& e : entries_) cudaGraphExecDestroy(e.exec);
  if (capture_) cudaStreamDestroy(capture_);
}

void StepGraphs::clear() {
  for (Entry& e : entries_) HEATSIM_CUDA_CHECK(cudaGraphExecDestroy(e.exec));
  entries_.clear();
}

cudaGraphExec_t StepGraphs::find(std::int64_t steps, const void* start) const {
  for (const Entry& e : entries_)
    if (e.steps == steps && e.start == start) return e.exec;
  return nullptr;
}

void StepGraphs::begin_capture() {
  if (!capture_) HEATSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_, cudaStreamNonBlocking));
  // Relaxed: the launchers may query function attributes while capturing; nothing else in
  // the process issues work on this stream.
  HEATSIM_CUDA_CHECK(cudaStreamBeginCapture(capture_, cudaStreamCaptureModeRelaxed));
}

cudaGraphExec_t StepGraphs::end_capture(std::int64_t steps, const void* start) {
  cudaGraph_t graph = nullptr;
  HEATSIM_CUDA_CHECK(cudaStreamEndCapture(capture_, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  HEATSIM_CUDA_CHECK(cudaGraphDestroy(graph));
  HEATSIM_CUDA_CHECK(made);
  if (entries_.size() >= kMaxGraphs) clear();
  entries_.push_back(Entry{steps, start, exec});
  return exec;
}

void StepGraphs::replay(cudaGraphExec_t exec, cudaStream_t stream) {
  HEATSIM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  replays.fetch_add(1);
}

template <typename T>
StepTable<T>::~StepTable() {
  if (host_) cudaFreeHost(host_);
  for (cudaEvent_t& e : copied_)
    if (e) cudaEventDestroy(e);
}

template <typename T>
void StepTable<T>::release() {
  for (int h = 0; h < 2; ++h)
    if (pending_[h]) HEATSIM_CUDA_CHECK(cudaEventSynchronize(copied_[h]));
  pending_[0] = pending_[1] = false;
  if (host_) HEATSIM_CUDA_CHECK(cudaFreeHost(host_));
  host_ = nullptr;
}

template <typename T>
void StepTable<T>::setup(int rows, int width) {
  release();
  rows_ = rows;
  width_ = width;
  half_ = 0;
  const std::size_t values = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
  device_.allocate(values * sizeof(T));
  void* host = nullptr;
  HEATSIM_CUDA_CHECK(cudaMallocHost(&host, std::max<std::size_t>(2 * values * sizeof(T), 16)));
  host_ = static_cast<T*>(host);
  for (cudaEvent_t& e : copied_)
    if (!e) HEATSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

template <typename T>
T* StepTable<T>::claim_half() {
  half_ ^= 1;
  if (pending_[half_]) HEATSIM_CUDA_CHECK(cudaEventSynchronize(copied_[half_]));
  pending_[half_] = false;
  return host_ + static_cast<std::size_t>(half_) * static_cast<std::size_t>(rows_) *
                     static_cast<std::size_t>(width_);
}

template <typename T>
void StepTable<T>::copy_half(const T* host, int steps, cudaStream_t stream) {
  const std::size_t bytes =
      static_cast<std::size_t>(steps) * static_cast<std::size_t>(width_) * sizeof(T);
  if (bytes == 0) return;
  HEATSIM_CUDA_CHECK(
      cudaMemcpyAsync(device_.as<T>(), host, bytes, cudaMemcpyHostToDevice, stream));
  HEATSIM_CUDA_CHECK(cudaEventRecord(copied_[half_], stream));
  pending_[half_] = true;
}

template class StepTable<float>;
template class StepTable<double>;

}  // namespace heatsim::kernels::cuda

namespace heatsim::kernels {

std::int64_t cuda_graph_replays() { return cuda::replays.load(); }

}  // namespace heatsim::kernels
