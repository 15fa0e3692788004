// Copies of a sub-box of a padded device field to and from a compact host array (x fastest):
// what Backend::read_box / write_box do on the CUDA backends, so a decomposed run's halo
// exchange moves just the slabs it sends and receives instead of the whole field.
//
// A box is packed on the device into a contiguous staging buffer (one thread per node, the
// copy_box kernel of fusing_backend.cu) and moved in one cudaMemcpy; a write is the reverse.
// cudaMemcpy3D straight from the padded field would do the same with one call, but a slab
// normal to x is rows of only k*r values, and the copy engines move such narrow rows far
// below their bandwidth; the pack kernel reads them at memory speed. Every call is checked;
// both functions return when the host array is complete (read) or may be reused (write).
//
// Beside a sweep (a split pass's exchange, Backend::advance_around) a kernel has to wait for
// SMs the sweep holds, so there (`beside_sweep`) a box whose rows are long (kDirectRowBytes or
// more: the slabs normal to y and z) goes straight between the padded field and the host with
// cudaMemcpy3DAsync, on the copy engines alone; narrow rows are still packed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "device_memory.cuh"
#include "kernels/backend.hpp"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// A device buffer that grows to the largest box moved so far (halo slabs repeat every step).
class BoxStaging {
 public:
  void* reserve(std::size_t bytes) {
    if (bytes > capacity_) {
      buffer_.allocate(bytes);
      capacity_ = bytes;
    }
    return buffer_.as<void>();
  }

 private:
  DeviceArray buffer_;
  std::size_t capacity_ = 0;
};

// Throws std::invalid_argument when `box` is not inside a grid of `grid`'s interior size.
void check_box(const FieldBox& box, const DeviceGrid& grid, const char* who);

// `values`: box.points() doubles on the host (pinned staging moves at the bus's speed).
// The shortest row (x extent, bytes) a box copied beside a sweep moves by the copy engines.
constexpr std::size_t kDirectRowBytes = 512;

template <typename T>
void read_device_box(const T* field, const DeviceGrid& grid, const FieldBox& box, double* values,
                     BoxStaging& staging, cudaStream_t stream, bool beside_sweep = false);
template <typename T>
void write_device_box(T* field, const DeviceGrid& grid, const FieldBox& box, const double* values,
                      BoxStaging& staging, cudaStream_t stream, bool beside_sweep = false);

}  // namespace heatsim::kernels::cuda
