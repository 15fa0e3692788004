// Backend::read_box / write_box against the whole-field download and upload, for any backend:
// the box's values come out in the box's own order, and a write changes exactly the box.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim_tests {

// Values exactly representable in fp32, so fp32 backends hand them back unchanged.
inline std::vector<double> float_values(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 3.0f);
  std::vector<double> v(count);
  for (double& x : v) x = static_cast<double>(u(rng));
  return v;
}

// Boxes of a grid: the whole grid, single layers next to every face, an inner box.
inline std::vector<heatsim::kernels::FieldBox> test_boxes(
    const heatsim::kernels::StencilProblem& p) {
  using heatsim::kernels::FieldBox;
  std::vector<FieldBox> boxes;
  FieldBox whole;
  whole.grid = p.n;
  whole.extent = p.n;
  boxes.push_back(whole);
  for (int a = 0; a < p.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      FieldBox b = whole;
      const std::int64_t w = std::min<std::int64_t>(2, p.n[a]);
      b.extent[a] = w;
      b.lo[a] = side == 0 ? 0 : p.n[a] - w;
      boxes.push_back(b);
    }
  FieldBox inner = whole;
  for (int a = 0; a < p.dims; ++a) {
    inner.lo[a] = 1;
    inner.extent[a] = std::max<std::int64_t>(1, p.n[a] - 3);
  }
  boxes.push_back(inner);
  return boxes;
}

inline void expect_box_copies_match(heatsim::kernels::Backend& backend,
                                    const heatsim::kernels::StencilProblem& p,
                                    const std::string& what) {
  using heatsim::kernels::FieldBox;
  std::mt19937_64 rng(17);
  std::vector<double> field = float_values(static_cast<std::size_t>(p.points()), rng);
  backend.upload(field);
  backend.advance(2, 0);  // ghosts filled and swapped buffers: the state a run reads from
  backend.download(field);
  for (const FieldBox& b : test_boxes(p)) {
    const std::string where = what + " box lo (" + std::to_string(b.lo[0]) + "," +
                              std::to_string(b.lo[1]) + "," + std::to_string(b.lo[2]) +
                              ") extent (" + std::to_string(b.extent[0]) + "," +
                              std::to_string(b.extent[1]) + "," + std::to_string(b.extent[2]) + ")";
    std::vector<double> got, want;
    backend.read_box(b, got);
    for (std::int64_t z = 0; z < b.extent[2]; ++z)
      for (std::int64_t y = 0; y < b.extent[1]; ++y)
        for (std::int64_t x = 0; x < b.extent[0]; ++x)
          want.push_back(field[static_cast<std::size_t>(
              ((b.lo[2] + z) * p.n[1] + b.lo[1] + y) * p.n[0] + b.lo[0] + x)]);
    ASSERT_EQ(got.size(), want.size()) << where;
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(double))) << where;

    const std::vector<double> values = float_values(want.size(), rng);
    backend.write_box(b, values);
    std::size_t k = 0;
    for (std::int64_t z = 0; z < b.extent[2]; ++z)
      for (std::int64_t y = 0; y < b.extent[1]; ++y)
        for (std::int64_t x = 0; x < b.extent[0]; ++x)
          field[static_cast<std::size_t>(((b.lo[2] + z) * p.n[1] + b.lo[1] + y) * p.n[0] + b.lo[0] +
                                         x)] = values[k++];
    std::vector<double> after;
    backend.download(after);
    ASSERT_EQ(after.size(), field.size()) << where;
    EXPECT_EQ(0, std::memcmp(after.data(), field.data(), field.size() * sizeof(double))) << where;
  }
  FieldBox outside;
  outside.grid = p.n;
  outside.lo[0] = 1;
  outside.extent[0] = p.n[0];
  std::vector<double> v;
  EXPECT_THROW(backend.read_box(outside, v), std::invalid_argument) << what;
  v.assign(static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]) + 1, 0.0);
  FieldBox whole;
  whole.grid = p.n;
  whole.extent = p.n;
  EXPECT_THROW(backend.write_box(whole, v), std::invalid_argument) << what;
}

}  // namespace heatsim_tests
