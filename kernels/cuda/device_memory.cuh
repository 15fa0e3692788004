// Device memory the CUDA backends share: an owned cudaMalloc'ed array, and the copies of a
// field's interior between a compact host array [z][y][x] of doubles and a padded device
// buffer (DeviceGrid), converting to and from the backend's precision T.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "check.cuh"
#include "kernels/host_copy.hpp"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// Owns one cudaMalloc'ed array (at least 16 bytes, so that an empty one is a valid pointer).
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);  // no throw from destructors; a failed free leaks at worst
  }
  void allocate(std::size_t bytes) {
    if (ptr_) HEATSIM_CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
    HEATSIM_CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 16)));
  }
  template <typename U>
  U* as() const {
    return static_cast<U*>(ptr_);
  }
  void swap(DeviceArray& o) noexcept { std::swap(ptr_, o.ptr_); }

 private:
  void* ptr_ = nullptr;
};

// Copies the interior between a compact host array of T and the padded device buffer
// (synchronous: cudaMemcpy / cudaMemcpy3D).
template <typename T>
void copy_interior(T* host, T* device, const DeviceGrid& g, cudaMemcpyKind kind) {
  const std::size_t nx = static_cast<std::size_t>(g.n[0]);
  const std::size_t ny = static_cast<std::size_t>(g.n[1]);
  const std::size_t nz = static_cast<std::size_t>(g.n[2]);
  T* interior = device + g.origin;
  if (ny * nz == 1) {  // one row: a plain copy (no pitch limits)
    if (kind == cudaMemcpyHostToDevice)
      HEATSIM_CUDA_CHECK(cudaMemcpy(interior, host, nx * sizeof(T), kind));
    else
      HEATSIM_CUDA_CHECK(cudaMemcpy(host, interior, nx * sizeof(T), kind));
    return;
  }
  const std::size_t rows = static_cast<std::size_t>(g.pitch_z / g.pitch_y);
  cudaPitchedPtr dev = make_cudaPitchedPtr(interior, g.pitch_y * sizeof(T),
                                           static_cast<std::size_t>(g.pitch_y), rows);
  cudaPitchedPtr compact = make_cudaPitchedPtr(host, nx * sizeof(T), nx, ny);
  cudaMemcpy3DParms m{};
  m.srcPtr = kind == cudaMemcpyHostToDevice ? compact : dev;
  m.dstPtr = kind == cudaMemcpyHostToDevice ? dev : compact;
  m.extent = make_cudaExtent(nx * sizeof(T), ny, nz);
  m.kind = kind;
  HEATSIM_CUDA_CHECK(cudaMemcpy3D(&m));
}

// The field (grid.n[0] * n[1] * n[2] values) into the interior of `device`.
template <typename T>
void upload_interior(const std::vector<double>& field, T* device, const DeviceGrid& g) {
  if constexpr (std::is_same_v<T, double>) {
    copy_interior(const_cast<double*>(field.data()), device, g, cudaMemcpyHostToDevice);
  } else {
    std::vector<T> host(field.begin(), field.end());
    copy_interior(host.data(), device, g, cudaMemcpyHostToDevice);
  }
}

// The interior of `device` into `field`, `count` = grid.n[0] * n[1] * n[2] values of type Out
// (a writer's pinned staging: the backend's own type copies straight into it at the bus's
// speed).
template <typename T, typename Out>
void download_interior(Out* field, std::size_t count, T* device, const DeviceGrid& g) {
  if constexpr (std::is_same_v<T, Out>) {
    (void)count;
    copy_interior(field, device, g, cudaMemcpyDeviceToHost);
  } else {
    // Not zero-filled (the copy writes every value); an fp32 field widened on every core.
    const std::unique_ptr<T[]> host(new T[count]);
    copy_interior(host.get(), device, g, cudaMemcpyDeviceToHost);
    if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, double>) {
      widen_to_double(host.get(), count, field);
    } else {
      for (std::size_t i = 0; i < count; ++i) field[i] = static_cast<Out>(host[i]);
    }
  }
}

// The same into `field`, which must hold grid.n[0] * n[1] * n[2] values.
template <typename T>
void download_interior(std::vector<double>& field, T* device, const DeviceGrid& g) {
  download_interior(field.data(), field.size(), device, g);
}

}  // namespace heatsim::kernels::cuda
