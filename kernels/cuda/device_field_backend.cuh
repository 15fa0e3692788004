// The field I/O every CUDA backend shares. A backend keeps its field on the device in the padded
// layout of stencil_common.cuh and says where it is now (field_now(): its current buffer, the
// layout, the stream its work goes on); this base moves it to and from the host (upload and
// download, converting to and from the backend's precision, samples, boxes), each checked
// against setup and the grid's size, and waits for the stream. What differs between backends
// (how they step, their statistics, what they note at an upload) stays theirs.
//
// setup() calls not_ready() first and ready(points) once the field is there: a setup that throws
// leaves the backend refusing every call instead of working on a half-made field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../backend.hpp"
#include "box_transfer.cuh"
#include "check.cuh"
#include "device_memory.cuh"
#include "field_kernels.cuh"

namespace heatsim::kernels::cuda {

template <typename T>
class DeviceFieldBackend : public Backend {
 public:
  void upload(const std::vector<double>& field) override {
    check_ready_and_size(field.size());
    const FieldNow f = field_now();
    upload_interior(field, f.cur, f.grid);
  }

  void upload_from(const HostField& field) override {
    check_ready_and_size(field.size());
    const FieldNow f = field_now();
    upload_interior(field, f.cur, f.grid);
  }

  void download(std::vector<double>& field) override {
    check_ready_and_size(static_cast<std::size_t>(points_));
    field.resize(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    download_interior(field, f.cur, f.grid);
  }

  void download_to(double* out) override { download_staged(out); }
  void download_to(float* out) override { download_staged(out); }

  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    check_ready_and_size(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    sample_nodes<T>(f.cur, f.grid, nodes, values, f.stream, samples_);
  }

  void sample_later(const std::vector<std::int64_t>& nodes) override {
    check_ready_and_size(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    queue_sample<T>(f.cur, f.grid, nodes, f.stream, samples_);
  }

  bool queues_samples() const override { return true; }

  void collect_samples(std::vector<std::vector<double>>& samples) override {
    collect_queued_samples(samples_, samples);
  }

  void read_box(const FieldBox& box, double* values) override {
    check_ready_and_size(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    read_device_box<T>(f.cur, f.grid, box, values, staging_, boxes_aside_ ? aside_ : f.stream,
                       boxes_aside_ && direct_beside_sweep());
  }

  void write_box(const FieldBox& box, const double* values) override {
    check_ready_and_size(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    write_device_box<T>(f.cur, f.grid, box, values, staging_, boxes_aside_ ? aside_ : f.stream,
                        boxes_aside_ && direct_beside_sweep());
  }

  ~DeviceFieldBackend() override {
    if (aside_) cudaStreamDestroy(aside_);  // nothing to report from a destructor
  }

  void synchronize() override { HEATSIM_CUDA_CHECK(cudaStreamSynchronize(field_now().stream)); }

 protected:
  struct FieldNow {
    T* cur;
    const DeviceGrid& grid;
    cudaStream_t stream;
  };
  // Where the field is now. Called once the backend is ready, except by synchronize(), which
  // only takes the stream: before setup an implementation returns its empty buffers.
  virtual FieldNow field_now() = 0;

  // Calls between() with read_box and write_box on a stream of their own, which does not wait
  // for the work queued on the field's stream (a split pass's interior sweep, advance_around),
  // then waits for that stream: the boxes between() writes are in place when it returns.
  // between() must touch only nodes the queued work does not. The stream has the device's
  // highest priority (a packing kernel's blocks go before the sweep's waiting ones), and boxes
  // of long rows skip the kernels (box_transfer.cuh) unless HEATSIM_HALO_COPY=kernel.
  void with_boxes_aside(const std::function<void()>& between) {
    if (!aside_) {
      int least = 0, greatest = 0;
      HEATSIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      HEATSIM_CUDA_CHECK(cudaStreamCreateWithPriority(&aside_, cudaStreamNonBlocking, greatest));
    }
    struct Aside {
      bool& on;
      ~Aside() { on = false; }
    } aside{boxes_aside_};
    boxes_aside_ = true;
    between();
    HEATSIM_CUDA_CHECK(cudaStreamSynchronize(aside_));
  }

  void not_ready() { ready_ = false; }
  void ready(std::int64_t points) {
    points_ = points;
    ready_ = true;
  }
  bool is_ready() const { return ready_; }

  // `what` (advance(), stats(), ...) needs a set-up backend.
  void check_ready(const char* what) const {
    if (!ready_) throw std::logic_error(name() + " backend: " + what + " before setup()");
  }
  void check_ready_and_size(std::size_t size) const {
    if (!ready_) throw std::logic_error(name() + " backend: used before setup()");
    if (size != static_cast<std::size_t>(points_))
      throw std::invalid_argument(name() + " backend: field has " + std::to_string(size) +
                                  " values, the grid " + std::to_string(points_));
  }

 private:
  template <typename Out>
  void download_staged(Out* out) {
    check_ready_and_size(static_cast<std::size_t>(points_));
    const FieldNow f = field_now();
    download_interior(out, static_cast<std::size_t>(points_), f.cur, f.grid);
  }

  // Whether boxes beside a sweep may go straight by the copy engines (HEATSIM_HALO_COPY=kernel
  // in the environment packs them all, for measuring the two ways).
  static bool direct_beside_sweep() {
    static const bool direct = [] {
      const char* v = std::getenv("HEATSIM_HALO_COPY");
      return !(v && std::string(v) == "kernel");
    }();
    return direct;
  }

  BoxStaging staging_;  // read_box / write_box
  SampleBuffers samples_;  // sample
  cudaStream_t aside_ = nullptr;  // with_boxes_aside's stream, made on first use
  bool boxes_aside_ = false;
  std::int64_t points_ = 0;
  bool ready_ = false;
};

}  // namespace heatsim::kernels::cuda
