// The CPU backend copies just a box in read_box / write_box (a decomposed run's halo
// exchange): the same values as the whole-field download, and a write changes the box alone.
#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/cpu_backend.hpp"
#include "tests/box_copy_check.hpp"
#include "tests/box_problems.hpp"

namespace heatsim::kernels {
namespace {

TEST(CpuBackendBoxes, ReadAndWriteJustTheBox) {
  for (Precision precision : {Precision::fp64, Precision::fp32})
    for (int dims = 1; dims <= 3; ++dims)
      for (bool fields : {false, true}) {
        const StencilProblem p = heatsim_tests::box_test_problem(dims, fields);
        auto backend = make_cpu_backend(precision);
        backend->setup(p);
        heatsim_tests::expect_box_copies_match(*backend, p,
                                               std::string("cpu ") + to_string(precision) + " " +
                                                   std::to_string(dims) + "D" +
                                                   (fields ? " with fields" : ""));
      }
}

}  // namespace
}  // namespace heatsim::kernels
