// Host memory a field is staged in on its way to a file. A device backend's is page-locked
// (cudaMallocHost), so that the download runs at the bus's full speed straight into it and a
// writer thread can read it while the device steps on; the host's is plain memory. Callers
// above kernels/ hold it without knowing which (Backend::allocate_host_staging).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace heatsim::kernels {

class HostStaging {
 public:
  using Release = void (*)(void*);
  HostStaging() = default;
  HostStaging(void* data, std::size_t bytes, Release release)
      : data_(data), bytes_(bytes), release_(release) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  HostStaging(HostStaging&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        release_(o.release_) {}
  HostStaging& operator=(HostStaging&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      release_ = o.release_;
    }
    return *this;
  }
  ~HostStaging() { reset(); }

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void reset() {
    if (data_ && release_) release_(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Release release_ = nullptr;
};

// `bytes` of staging, never zero-filled, aligned for doubles: pinned when `pinned` is set and
// this build has CUDA, plain malloc otherwise. Throws std::bad_alloc (or the CUDA error) when
// the memory cannot be had.
HostStaging allocate_host_staging(std::size_t bytes, bool pinned);

// Pins `bytes` of host memory the caller owns at `p` (page-aligned) for a device's copies, when
// `pinned` is set and this build has CUDA: the result unpins it when released. Empty where
// nothing is pinned: `pinned` unset, no CUDA, or CUDA refusing (why in `why_not`; the memory
// still serves, its copies then through the driver's staging).
HostStaging pin_host_memory(void* p, std::size_t bytes, bool pinned, std::string& why_not);

}  // namespace heatsim::kernels
