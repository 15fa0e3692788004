#include "registry.hpp"

#include <stdexcept>

#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_level_ops.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "cuda/cuda_backends.hpp"
#include "cuda/level_ops.cuh"
#endif

namespace heatsim::kernels {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> registry = [] {
    std::vector<BackendEntry> r;
#ifdef HEATSIM_HAVE_CUDA
    for (auto& e : cuda_backend_entries()) r.push_back(e);
#endif
    r.push_back({"cpu", "CPU reference, OpenMP; every shape, boundary and precision", false,
                 [](Precision p) { return make_cpu_backend(p); }, {}, std::nullopt});
    return r;
  }();
  return registry;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& e : backend_registry()) names.push_back(e.name);
  return names;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const auto& e : backend_registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::string unknown_backend_note() {
  return cuda_compiled() ? std::string()
                         : " (this heatsim was built without CUDA, so no GPU backend is compiled "
                           "in: the build takes them where it finds nvcc, README.md)";
}

std::unique_ptr<Backend> create_backend(const std::string& name, Precision precision) {
  const BackendEntry* e = find_backend(name);
  if (!e) {
    std::string known;
    for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::runtime_error("unknown backend '" + name + "' (compiled: " + known + ")" +
                             unknown_backend_note());
  }
  if (e->needs_gpu && cuda_devices().empty())
    throw std::runtime_error("backend '" + name + "' needs a CUDA GPU, and none is visible" +
                             (cuda_compiled() ? "" : " (this build has no CUDA support)"));
  return e->create(precision);
}

std::unique_ptr<LevelOps> make_level_ops(const std::string& name, Precision /*precision*/) {
  const BackendEntry* e = name == "auto" ? nullptr : find_backend(name);
  if (name != "auto" && !e)
    throw std::runtime_error("unknown backend '" + name + "' for the multigrid level operations");
#ifdef HEATSIM_HAVE_CUDA
  // Every GPU backend solves on the device it steps on (the level operations are fp64 CUDA
  // cores whatever the backend's own kernels are).
  if (e && e->needs_gpu && !cuda_devices().empty()) return make_cuda_level_ops();
#endif
  (void)e;
  return make_cpu_level_ops();
}

#ifndef HEATSIM_HAVE_CUDA
std::vector<DeviceInfo> cuda_devices() { return {}; }
bool cuda_compiled() { return false; }
int cuda_device_count() { return 0; }
void use_cuda_device(int) {}
int current_cuda_device() { return -1; }
void start_cuda(int) {}
std::int64_t cuda_graph_replays() { return 0; }
std::int64_t cuda_class_uploads() { return 0; }
std::array<std::int64_t, 2> cuda_uniform_tiles() { return {0, 0}; }
#endif

}  // namespace heatsim::kernels
