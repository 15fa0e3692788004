// Backend::upload_from: a HostField of doubles or floats reaches every CUDA backend's device
// field exactly, in both precisions, at sizes that take each of the chunked upload's paths
// (whole planes, rows of one plane, parts of one row: fields above 64 MiB) and a small one
// (one copy); the device field is poisoned beforehand by an upload of another value, and the
// result is the same as upload() of the same values as doubles.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/host_field.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryKind;
using kernels::HostField;
using kernels::Precision;
using kernels::StencilProblem;

StencilProblem problem_of(int dims, std::array<std::int64_t, 3> n, Precision precision) {
  StencilProblem p;
  p.dims = dims;
  p.n = n;
  for (int a = 0; a < 3; ++a) p.h[a] = 1.0 / static_cast<double>(std::max<std::int64_t>(2, n[a]) - 1);
  p.stencil.dims = dims;
  p.stencil.radius = 1;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  p.stencil.at(0, 0, 0) = 0.4;
  p.stencil.at(-1, 0, 0) = p.stencil.at(1, 0, 0) = 0.3 / dims;
  if (dims > 1) p.stencil.at(0, -1, 0) = p.stencil.at(0, 1, 0) = 0.3 / dims;
  if (dims > 2) p.stencil.at(0, 0, -1) = p.stencil.at(0, 0, 1) = 0.3 / dims;
  for (auto& f : p.faces) f.kind = BoundaryKind::neumann;
  p.faces[0].kind = BoundaryKind::dirichlet;
  p.faces[0].value = 1.5;
  p.precision = precision;
  p.dt = 1e-3;
  return p;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

class HostFieldUpload : public GpuTest {};

TEST_F(HostFieldUpload, EveryCudaBackendHoldsTheValuesExactly) {
  struct Shape {
    int dims;
    std::array<std::int64_t, 3> n;
    const char* path;
  };
  // fp64 pieces of 64 MiB are 2^23 values, fp32 ones 2^24: these shapes are larger than one
  // piece in both precisions, each in a different way; the first fits in one piece.
  const Shape shapes[] = {{3, {37, 29, 23}, "one copy"},
                          {3, {331, 263, 211}, "whole planes"},
                          {2, {4099, 4513, 1}, "rows of one plane"},
                          {1, {18500003, 1, 1}, "parts of one row"}};
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> value(1.0, 3.0);
  int checked = 0;
  for (const Shape& shape : shapes) {
    const std::int64_t points = shape.n[0] * shape.n[1] * shape.n[2];
    std::vector<double> values(static_cast<std::size_t>(points));
    for (double& v : values) v = value(rng);
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const StencilProblem p = problem_of(shape.dims, shape.n, precision);
      // What the device should hold: the values as the backend's precision rounds them.
      std::vector<double> expected = values;
      if (precision == Precision::fp32)
        for (double& v : expected) v = static_cast<double>(static_cast<float>(v));
      for (const kernels::BackendEntry& entry : kernels::backend_registry()) {
        if (!entry.needs_gpu) continue;
        auto backend = entry.create(precision);
        if (!backend->unsupported_reason(p).empty()) continue;
        backend->setup(p);
        for (bool floats : {false, true}) {
          SCOPED_TRACE(std::string(shape.path) + ", " + entry.name + " " +
                       kernels::to_string(precision) + (floats ? ", floats" : ", doubles"));
          backend->upload(std::vector<double>(values.size(), -123.0));
          backend->upload_from(HostField::from(values, floats));
          std::vector<double> got(values.size(), -7.0);
          backend->download(got);
          // Floats from the host hold the values rounded whatever the backend's precision.
          std::vector<double> want = expected;
          if (floats)
            for (double& v : want) v = static_cast<double>(static_cast<float>(v));
          std::int64_t bad = -1;
          EXPECT_TRUE(same_bits(got, want))
              << "relative difference " << relative_difference(got, want, &bad) << " at " << bad;
          ++checked;
        }
        // upload() of the same doubles gives the same field.
        backend->upload(values);
        std::vector<double> through_vector(values.size(), -7.0);
        backend->download(through_vector);
        EXPECT_TRUE(same_bits(through_vector, expected)) << entry.name << " upload()";
      }
    }
  }
  EXPECT_GE(checked, 4 * 2 * 2 * 3);  // every shape and precision, at least the three CUDA cores
}

}  // namespace
}  // namespace heatsim::test
