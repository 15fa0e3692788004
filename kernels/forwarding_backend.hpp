// A backend that chooses, at setup(), another backend to do the work (by the problem: one step
// per pass, fused passes, varying coefficients) and forwards every call to it: the CUDA-core
// tilings' driver and temporal-blocking's. The forwarding is written once here, so that no
// call a chosen backend answers (its fusion depth, its bytes per point, its host staging) is
// lost on the way out.
#pragma once

#include <memory>
#include <stdexcept>
#include <utility>

#include "backend.hpp"

namespace heatsim::kernels {

class ForwardingBackend : public Backend {
 public:
  void upload(const std::vector<double>& field) override { ready().upload(field); }
  void upload_from(const HostField& field) override { ready().upload_from(field); }
  void download(std::vector<double>& field) override { ready().download(field); }
  void download_to(double* out) override { ready().download_to(out); }
  void download_to(float* out) override { ready().download_to(out); }
  HostStaging allocate_host_staging(std::size_t bytes) override {
    return inner_ ? inner_->allocate_host_staging(bytes) : Backend::allocate_host_staging(bytes);
  }
  void advance(std::int64_t steps, std::int64_t step0) override { ready().advance(steps, step0); }
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    return ready().advance_around(steps, step0, inner, between);
  }
  FieldStats stats() override { return ready().stats(); }
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    ready().sample(nodes, values);
  }
  void sample_later(const std::vector<std::int64_t>& nodes) override {
    ready().sample_later(nodes);
  }
  void collect_samples(std::vector<std::vector<double>>& samples) override {
    ready().collect_samples(samples);
  }
  bool queues_samples() const override { return inner_ && inner_->queues_samples(); }
  using Backend::read_box;
  using Backend::write_box;
  void read_box(const FieldBox& box, double* values) override { ready().read_box(box, values); }
  void write_box(const FieldBox& box, const double* values) override {
    ready().write_box(box, values);
  }
  void synchronize() override { ready().synchronize(); }
  int fusion_depth() const override { return inner_ ? inner_->fusion_depth() : 1; }
  bool first_step_single(std::int64_t step0) override { return ready().first_step_single(step0); }
  void set_first_step_single(bool single) override { ready().set_first_step_single(single); }
  double bytes_per_point_step() const override {
    return inner_ ? inner_->bytes_per_point_step() : 0.0;
  }

 protected:
  // The backend setup() chose (set up by it); the calls above throw std::logic_error before.
  void choose(std::unique_ptr<Backend> inner) { inner_ = std::move(inner); }
  void forget() { inner_.reset(); }
  bool chosen() const { return inner_ != nullptr; }

 private:
  Backend& ready() {
    if (!inner_) throw std::logic_error(name() + " backend: used before setup()");
    return *inner_;
  }

  std::unique_ptr<Backend> inner_;
};

}  // namespace heatsim::kernels
