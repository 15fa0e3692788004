// Device memory the CUDA backends share: an owned cudaMalloc'ed array, and the copies of a
// field's interior between a compact host array [z][y][x] of doubles and a padded device
// buffer (DeviceGrid), converting to and from the backend's precision T.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "check.cuh"
#include "kernels/host_copy.hpp"
#include "kernels/host_field.hpp"
#include "kernels/host_staging.hpp"
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
    bytes_ = 0;
    HEATSIM_CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 16)));
    bytes_ = bytes;
  }
  // The bytes asked of the last allocate (0 before any).
  std::size_t bytes() const { return bytes_; }
  template <typename U>
  U* as() const {
    return static_cast<U*>(ptr_);
  }
  void swap(DeviceArray& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
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

// The field (grid.n[0] * n[1] * n[2] values of Src, double or float) into the interior of
// `device`, converted to T as a static_cast does. Small fields go in one copy (through a
// converted host copy where Src is not T). A large one goes in pieces of whole planes, whole
// rows of one plane or parts of one row, each contiguous in `host`: a piece is converted or
// copied on every core into one of two pinned buffers (host_copy.hpp) and copied to the
// device asynchronously while the next piece fills the other, so no host copy of the whole
// field is made and the bus runs at its pinned speed. Returns when the field is on the device.
template <typename T, typename Src>
void upload_interior(const Src* host, T* device, const DeviceGrid& g) {
  const std::size_t nx = static_cast<std::size_t>(g.n[0]);
  const std::size_t ny = static_cast<std::size_t>(g.n[1]);
  const std::size_t nz = static_cast<std::size_t>(g.n[2]);
  const std::size_t count = nx * ny * nz;
  constexpr std::size_t kPieceBytes = std::size_t{64} << 20;
  if (count * sizeof(T) <= kPieceBytes) {
    if constexpr (std::is_same_v<T, Src>) {
      copy_interior(const_cast<T*>(host), device, g, cudaMemcpyHostToDevice);
    } else {
      std::vector<T> converted(host, host + count);
      copy_interior(converted.data(), device, g, cudaMemcpyHostToDevice);
    }
    return;
  }
  const std::size_t piece = kPieceBytes / sizeof(T);  // values per piece
  HostStaging buffers[2];
  for (HostStaging& b : buffers) {
    try {
      b = allocate_host_staging(kPieceBytes, true);
    } catch (const std::exception&) {  // no pinned memory to be had: pageable, still correct
      b = allocate_host_staging(kPieceBytes, false);
    }
  }
  cudaEvent_t done[2] = {nullptr, nullptr};
  for (cudaEvent_t& e : done) HEATSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const std::size_t rows = static_cast<std::size_t>(g.pitch_z / g.pitch_y);  // per padded plane
  const std::size_t plane = nx * ny;
  int turn = 0;
  bool used[2] = {false, false};
  // One piece: `depth` planes from z of `height` rows from y of `width` values from x.
  auto send = [&](std::size_t x, std::size_t y, std::size_t z, std::size_t width,
                  std::size_t height, std::size_t depth) {
    if (used[turn]) HEATSIM_CUDA_CHECK(cudaEventSynchronize(done[turn]));
    T* staged = static_cast<T*>(buffers[turn].data());
    const Src* from = host + z * plane + y * nx + x;
    const std::size_t values = width * height * depth;
    if constexpr (std::is_same_v<T, Src>) {
      if constexpr (std::is_same_v<T, double>)
        copy_doubles(from, values, staged);
      else
        copy_floats(from, values, staged);
    } else if constexpr (std::is_same_v<T, float>) {
      narrow_to_float(from, values, staged);
    } else {
      widen_to_double(from, values, staged);
    }
    T* to = device + g.index(static_cast<std::int64_t>(x), static_cast<std::int64_t>(y),
                             static_cast<std::int64_t>(z));
    if (height * depth == 1) {  // part of one row: a plain copy (no pitch limits)
      HEATSIM_CUDA_CHECK(
          cudaMemcpyAsync(to, staged, width * sizeof(T), cudaMemcpyHostToDevice, nullptr));
    } else {
      cudaMemcpy3DParms m{};
      m.srcPtr = make_cudaPitchedPtr(staged, width * sizeof(T), width, height);
      m.dstPtr = make_cudaPitchedPtr(to, static_cast<std::size_t>(g.pitch_y) * sizeof(T),
                                     static_cast<std::size_t>(g.pitch_y), rows);
      m.extent = make_cudaExtent(width * sizeof(T), height, depth);
      m.kind = cudaMemcpyHostToDevice;
      HEATSIM_CUDA_CHECK(cudaMemcpy3DAsync(&m, nullptr));
    }
    HEATSIM_CUDA_CHECK(cudaEventRecord(done[turn], nullptr));
    used[turn] = true;
    turn = 1 - turn;
  };
  if (plane <= piece) {  // whole planes
    const std::size_t planes = piece / plane;
    for (std::size_t z = 0; z < nz; z += planes) send(0, 0, z, nx, ny, std::min(planes, nz - z));
  } else if (nx <= piece) {  // whole rows of one plane
    const std::size_t height = piece / nx;
    for (std::size_t z = 0; z < nz; ++z)
      for (std::size_t y = 0; y < ny; y += height) send(0, y, z, nx, std::min(height, ny - y), 1);
  } else {  // parts of one row
    for (std::size_t z = 0; z < nz; ++z)
      for (std::size_t y = 0; y < ny; ++y)
        for (std::size_t x = 0; x < nx; x += piece) send(x, y, z, std::min(piece, nx - x), 1, 1);
  }
  HEATSIM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  for (cudaEvent_t e : done) HEATSIM_CUDA_CHECK(cudaEventDestroy(e));
}

template <typename T>
void upload_interior(const std::vector<double>& field, T* device, const DeviceGrid& g) {
  upload_interior(field.data(), device, g);
}

// A HostField (doubles or floats) into the interior of `device`.
template <typename T>
void upload_interior(const HostField& field, T* device, const DeviceGrid& g) {
  if (field.floats())
    upload_interior(field.floats(), device, g);
  else
    upload_interior(field.doubles(), device, g);
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
