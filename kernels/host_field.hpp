// A whole field on the host in memory order [z][y][x], held in the run's precision (doubles,
// or an fp32 run's floats) and allocated without a zero fill: the initial field is evaluated
// straight into it on every thread (solver::fill_initial_field), so each page is first
// touched by the thread that computes it, and a backend uploads it as it is
// (Backend::upload_from). An fp32 field of 2^31 points is 8.6 GB here instead of 17 GB of
// doubles filled with zeros on one thread first.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace heatsim::kernels {

class HostField {
 public:
  HostField() = default;
  // `values` values, uninitialised: floats when `floats` is set, else doubles.
  HostField(std::size_t values, bool floats);
  // A copy of `field` (doubles), narrowed on every thread when `floats` is set.
  static HostField from(const std::vector<double>& field, bool floats);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The values: exactly one of the two is not null (unless empty).
  double* doubles() { return doubles_.get(); }
  const double* doubles() const { return doubles_.get(); }
  float* floats() { return floats_.get(); }
  const float* floats() const { return floats_.get(); }
  // The field as doubles (widened on every thread; every float is a double).
  std::vector<double> to_doubles() const;

 private:
  std::unique_ptr<double[]> doubles_;
  std::unique_ptr<float[]> floats_;
  std::size_t size_ = 0;
};

}  // namespace heatsim::kernels
