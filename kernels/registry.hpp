// Backends by name. Each backend registers a factory; the solver asks for one by name and never
// knows which implementation runs.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "level_ops.hpp"
#include "performance_model.hpp"

namespace heatsim::kernels {

struct BackendEntry {
  std::string name;
  std::string description;
  bool needs_gpu = false;
  std::function<std::unique_ptr<Backend>(Precision)> create;
  // Expected GStencil/s on the problem (a table measured by `heatsim bench`), which `auto`
  // compares; empty: ranked by registry order after every backend that has one.
  std::function<double(const StencilProblem&)> expected_rate;
  // The performance model's calibration for this backend; empty: the model's default for a
  // GPU backend, none for a host one (solver/perf_model.hpp, backend_model).
  std::optional<PerformanceModel> model;
  // A CUDA-core tiling on the sweep driver: one kernel over the point operators per step, fused
  // passes by the fusing driver (cuda/backend_entry.hpp, sweep_entry). The GPU suites that
  // compare the tilings with the CPU run every such entry.
  bool point_sweep = false;
  // The dimensions it steps (its capabilities' min_dims and max_dims), known without a device.
  int min_dims = 1;
  int max_dims = 3;
};

// All compiled backends, in the order `auto` prefers them (fastest first); the host reference
// (cpu), which runs every problem, is the last: the fallback.
const std::vector<BackendEntry>& backend_registry();
// Names of all compiled backends.
std::vector<std::string> backend_names();
// nullptr when `name` is unknown.
const BackendEntry* find_backend(const std::string& name);
// What a message about an unknown backend adds: in a build without CUDA, that the GPU backends
// (whose names the docs list) are not compiled in; else nothing.
std::string unknown_backend_note();
// Creates the backend; throws std::runtime_error with a clear message when the name is
// unknown or the backend needs a GPU and none is present.
std::unique_ptr<Backend> create_backend(const std::string& name, Precision precision);
// The multigrid level operations (level_ops.hpp) that run beside backend `name`: the CUDA
// ones (cuda/level_ops.cuh, device-resident vectors) for every backend that needs a GPU when a
// device is visible, else the CPU's, which work on host copies; the arithmetic is fp64 whatever `precision` says. Throws std::runtime_error, as
// create_backend does, for an unknown name.
std::unique_ptr<LevelOps> make_level_ops(const std::string& name, Precision precision);

// GPUs visible to the process (empty without CUDA or without a device).
struct DeviceInfo {
  int index = 0;
  std::string name;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int major = 0;
  int minor = 0;
  int multiprocessors = 0;
  int clock_khz = 0;  // peak SM clock (cudaDevAttrClockRate)
};
std::vector<DeviceInfo> cuda_devices();
bool cuda_compiled();
// Visible GPUs, counted without touching any of them (no context is created); 0 without CUDA.
int cuda_device_count();
// Sends this process's CUDA work (every backend created afterwards) to visible device
// `index` (cudaSetDevice; a decomposed run gives each rank of a node its own). Throws
// std::runtime_error when it fails; without CUDA it does nothing.
void use_cuda_device(int index);
// The index of the device the CUDA backends run on; -1 without CUDA or without a device.
int current_cuda_device();
// Starts CUDA on device `index`: the driver and the device's context, a few tenths of a
// second that the first CUDA call would otherwise spend. Meant for a thread of its own while
// the host works (CUDA calls elsewhere meanwhile wait for it); never throws: without CUDA or
// the device it does nothing, and the backends report what is missing later.
void start_cuda(int index);
// Runs of steps the CUDA backends replayed as CUDA graphs so far in this process (0 without
// CUDA); HEATSIM_CUDA_GRAPHS=0 in the environment turns the replays off.
std::int64_t cuda_graph_replays();
// Coefficient fields the CUDA backends uploaded in the compact form (a class per node and a
// table: kernels/node_classes.hpp) so far in this process (0 without CUDA);
// HEATSIM_CUDA_CLASSES=0 in the environment keeps every problem on its fields.
std::int64_t cuda_class_uploads();
// Of the last such upload in 3D: its tiles whose compact sweep reads one class and one face
// class per axis (cuda-naive's uniform tiles: kernels/cuda/coefficient_sweep.cuh), and all its
// tiles; {0, 0} without CUDA or before any.
std::array<std::int64_t, 2> cuda_uniform_tiles();

}  // namespace heatsim::kernels
