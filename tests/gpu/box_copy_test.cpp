// Every CUDA backend copies just a box in read_box / write_box (packed on the device): the
// same values as the whole-field download, and a write changes the box alone; single-step,
// fused and varying-coefficient drivers, fp64 and fp32.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "gpu_test_support.hpp"
#include "tests/box_copy_check.hpp"
#include "tests/box_problems.hpp"

namespace heatsim::kernels {
namespace {

class CudaBackendBoxes : public test::GpuTest {};

TEST_F(CudaBackendBoxes, ReadAndWriteJustTheBox) {
  for (const BackendEntry& entry : backend_registry()) {
    if (!entry.needs_gpu) continue;
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 1; dims <= 3; ++dims)
        for (int variant = 0; variant < 3; ++variant) {  // single step, fused, coefficients
          const StencilProblem p =
              heatsim_tests::box_test_problem(dims, variant == 2, variant == 1 ? 2 : 1);
          std::unique_ptr<Backend> backend;
          try {
            backend = entry.create(precision);
          } catch (const std::runtime_error&) {  // no kernels in this precision
            continue;
          }
          if (!backend->unsupported_reason(p).empty()) continue;
          backend->setup(p);
          heatsim_tests::expect_box_copies_match(*backend, p,
                                                 entry.name + " " + to_string(precision) + " " +
                                                     std::to_string(dims) + "D" +
                                                     (variant == 1   ? " fused"
                                                      : variant == 2 ? " with fields"
                                                                     : ""));
        }
  }
}

}  // namespace
}  // namespace heatsim::kernels
