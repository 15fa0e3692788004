// box_transfer.cuh: pack / unpack through the copy_box kernel and one checked cudaMemcpy, or
// beside a sweep a box of long rows straight by cudaMemcpy3DAsync.
#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "box_transfer.cuh"
#include "check.cuh"
#include "fusing_backend.cuh"

namespace heatsim::kernels::cuda {
namespace {

// The staging buffer seen as a field of the box's size without ghosts.
DeviceGrid compact_grid(const FieldBox& box, int dims) {
  DeviceGrid g;
  g.dims = dims;
  g.ghost = 0;
  for (int a = 0; a < 3; ++a) g.n[a] = box.extent[a];
  g.pitch_y = box.extent[0];
  g.pitch_z = box.extent[0] * box.extent[1];
  g.origin = 0;
  g.total = g.pitch_z * box.extent[2];
  return g;
}

std::size_t box_points(const FieldBox& box) {
  return static_cast<std::size_t>(box.extent[0] * box.extent[1] * box.extent[2]);
}

// Whether `box` moves straight between the field and the host (box_transfer.cuh).
template <typename T>
bool direct(const FieldBox& box, bool beside_sweep) {
  return beside_sweep && static_cast<std::size_t>(box.extent[0]) * sizeof(T) >= kDirectRowBytes;
}

// The copy of `box` between the padded field (its rows pitch_y apart, its planes pitch_z, a
// whole number of rows) and a compact host array, on the copy engines.
template <typename T>
void copy_direct(T* field, const DeviceGrid& grid, const FieldBox& box, void* host,
                 cudaMemcpyKind kind, cudaStream_t stream) {
  const std::size_t row = static_cast<std::size_t>(box.extent[0]) * sizeof(T);
  cudaMemcpy3DParms p{};
  const cudaPitchedPtr device = make_cudaPitchedPtr(
      field + grid.index(box.lo[0], box.lo[1], box.lo[2]),
      static_cast<std::size_t>(grid.pitch_y) * sizeof(T), row,
      static_cast<std::size_t>(grid.pitch_z / grid.pitch_y));
  const cudaPitchedPtr compact =
      make_cudaPitchedPtr(host, row, row, static_cast<std::size_t>(box.extent[1]));
  p.srcPtr = kind == cudaMemcpyDeviceToHost ? device : compact;
  p.dstPtr = kind == cudaMemcpyDeviceToHost ? compact : device;
  p.extent = make_cudaExtent(row, static_cast<std::size_t>(box.extent[1]),
                             static_cast<std::size_t>(box.extent[2]));
  p.kind = kind;
  HEATSIM_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
}

}  // namespace

void check_box(const FieldBox& box, const DeviceGrid& grid, const char* who) {
  for (int a = 0; a < 3; ++a)
    if (box.grid[a] != grid.n[a] || box.lo[a] < 0 || box.extent[a] < 0 ||
        box.lo[a] + box.extent[a] > grid.n[a])
      throw std::invalid_argument(std::string(who) + ": box outside the field along axis " +
                                  std::to_string(a));
}

template <typename T>
void read_device_box(const T* field, const DeviceGrid& grid, const FieldBox& box, double* values,
                     BoxStaging& staging, cudaStream_t stream, bool beside_sweep) {
  check_box(box, grid, "read_box");
  const std::size_t points = box_points(box);
  if (points == 0) return;
  if (direct<T>(box, beside_sweep)) {
    T* from = const_cast<T*>(field);  // read only: the copy's source
    if constexpr (std::is_same_v<T, double>) {
      copy_direct(from, grid, box, values, cudaMemcpyDeviceToHost, stream);
      HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    } else {
      std::vector<T> host(points);
      copy_direct(from, grid, box, host.data(), cudaMemcpyDeviceToHost, stream);
      HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (std::size_t i = 0; i < points; ++i) values[i] = static_cast<double>(host[i]);
    }
    return;
  }
  T* packed = static_cast<T*>(staging.reserve(points * sizeof(T)));
  const std::array<std::int64_t, 3> lo{box.lo[0], box.lo[1], box.lo[2]}, zero{0, 0, 0};
  const std::array<std::int64_t, 3> extent{box.extent[0], box.extent[1], box.extent[2]};
  copy_box<T>(field, grid, lo, packed, compact_grid(box, grid.dims), zero, extent, stream);
  if constexpr (std::is_same_v<T, double>) {
    HEATSIM_CUDA_CHECK(
        cudaMemcpyAsync(values, packed, points * sizeof(T), cudaMemcpyDeviceToHost, stream));
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    std::vector<T> host(points);
    HEATSIM_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), packed, points * sizeof(T), cudaMemcpyDeviceToHost, stream));
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < points; ++i) values[i] = static_cast<double>(host[i]);
  }
}

template <typename T>
void write_device_box(T* field, const DeviceGrid& grid, const FieldBox& box, const double* values,
                      BoxStaging& staging, cudaStream_t stream, bool beside_sweep) {
  check_box(box, grid, "write_box");
  const std::size_t points = box_points(box);
  if (points == 0) return;
  if (direct<T>(box, beside_sweep)) {
    if constexpr (std::is_same_v<T, double>) {
      copy_direct(field, grid, box, const_cast<double*>(values), cudaMemcpyHostToDevice, stream);
      HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host array may then be reused
    } else {
      std::vector<T> host(values, values + points);
      copy_direct(field, grid, box, host.data(), cudaMemcpyHostToDevice, stream);
      HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return;
  }
  T* packed = static_cast<T*>(staging.reserve(points * sizeof(T)));
  if constexpr (std::is_same_v<T, double>) {
    HEATSIM_CUDA_CHECK(
        cudaMemcpyAsync(packed, values, points * sizeof(T), cudaMemcpyHostToDevice, stream));
    // The host array may be reused (or freed) as soon as this returns.
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    const std::vector<T> host(values, values + points);
    HEATSIM_CUDA_CHECK(
        cudaMemcpyAsync(packed, host.data(), points * sizeof(T), cudaMemcpyHostToDevice, stream));
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  const std::array<std::int64_t, 3> lo{box.lo[0], box.lo[1], box.lo[2]}, zero{0, 0, 0};
  const std::array<std::int64_t, 3> extent{box.extent[0], box.extent[1], box.extent[2]};
  copy_box<T>(packed, compact_grid(box, grid.dims), zero, field, grid, lo, extent, stream);
}

template void read_device_box<float>(const float*, const DeviceGrid&, const FieldBox&, double*,
                                     BoxStaging&, cudaStream_t, bool);
template void read_device_box<double>(const double*, const DeviceGrid&, const FieldBox&, double*,
                                      BoxStaging&, cudaStream_t, bool);
template void write_device_box<float>(float*, const DeviceGrid&, const FieldBox&, const double*,
                                      BoxStaging&, cudaStream_t, bool);
template void write_device_box<double>(double*, const DeviceGrid&, const FieldBox&,
                                       const double*, BoxStaging&, cudaStream_t, bool);

}  // namespace heatsim::kernels::cuda
