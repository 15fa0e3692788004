#include "host_field.hpp"

#include <cstdint>
#include <cstring>

#include "host_copy.hpp"

namespace heatsim::kernels {

HostField::HostField(std::size_t values, bool floats) : size_(values) {
  // new T[n] of a scalar type leaves the values uninitialised: no page is touched here.
  if (floats)
    floats_.reset(new float[values]);
  else
    doubles_.reset(new double[values]);
}

HostField HostField::from(const std::vector<double>& field, bool floats) {
  HostField f(field.size(), floats);
  if (floats)
    narrow_to_float(field.data(), field.size(), f.floats());
  else
    copy_doubles(field.data(), field.size(), f.doubles());
  return f;
}

std::vector<double> HostField::to_doubles() const {
  std::vector<double> out(size_);
  if (floats_)
    widen_to_double(floats_.get(), size_, out.data());
  else
    copy_doubles(doubles_.get(), size_, out.data());
  return out;
}

}  // namespace heatsim::kernels
