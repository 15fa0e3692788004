// Host memory a field is staged in on its way to a file. A device backend's is page-locked
// (cudaMallocHost), so that the download runs at the bus's full speed straight into it and a
// writer thread can read it while the device steps on; the host's is plain memory. Callers
// above kernels/ hold it without knowing which (Backend::allocate_host_staging).
#pragma once

#include <cstddef>
#include <utility>

namespace heatsim::kernels {

class HostStaging {
 public:
  using Release = void (*)(double*);
  HostStaging() = default;
  HostStaging(double* data, std::size_t values, Release release)
      : data_(data), values_(values), release_(release) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  HostStaging(HostStaging&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        values_(std::exchange(o.values_, 0)),
        release_(o.release_) {}
  HostStaging& operator=(HostStaging&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      values_ = std::exchange(o.values_, 0);
      release_ = o.release_;
    }
    return *this;
  }
  ~HostStaging() { reset(); }

  double* data() const { return data_; }
  std::size_t size() const { return values_; }

 private:
  void reset() {
    if (data_ && release_) release_(data_);
    data_ = nullptr;
    values_ = 0;
  }
  double* data_ = nullptr;
  std::size_t values_ = 0;
  Release release_ = nullptr;
};

// `values` doubles of staging, never zero-filled: pinned when `pinned` is set and this build
// has CUDA, plain malloc otherwise. Throws std::bad_alloc (or the CUDA error) when the memory
// cannot be had.
HostStaging allocate_host_staging(std::size_t values, bool pinned);

}  // namespace heatsim::kernels
