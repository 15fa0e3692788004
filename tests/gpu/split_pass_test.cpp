// Every CUDA backend's split pass (Backend::advance_around: a decomposed run's interior stepped
// while its halo travels, the boxes moved on a stream of their own) gives the bits of the halo
// written first and the pass taken whole, on random fields at sizes that are no tile multiple:
// one step per pass and fused passes of 2 (radius 2: reach 4) and 3 steps, fp64 and fp32, 2D
// and 3D, and the varying coefficients (the faces' ghosts filled, or their rules in the sweep).
// Every CUDA backend must split these passes; tests/advance_around_check.hpp also holds a
// backend that does not split to leaving the field untouched and not calling between().
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "gpu_test_support.hpp"
#include "tests/advance_around_check.hpp"
#include "tests/box_problems.hpp"

namespace heatsim::kernels {
namespace {

class CudaSplitPass : public test::GpuTest {};

// The explicit 5- or 7-point heat step of weight 0.1 per neighbour.
Stencil radius_one_star(int dims) {
  Stencil s;
  s.dims = dims;
  s.radius = 1;
  s.weights.assign(s.size(), 0.0);
  s.at(0, 0, 0) = 1.0 - 2 * dims * 0.1;
  for (int a = 0; a < dims; ++a)
    for (int side : {-1, 1}) {
      int off[3] = {0, 0, 0};
      off[a] = side;
      s.at(off[0], off[1], off[2]) = 0.1;
    }
  return s;
}

TEST_F(CudaSplitPass, EqualsTheHaloFirstThenTheWholePass) {
  for (const BackendEntry& entry : backend_registry()) {
    if (!entry.needs_gpu) continue;
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 2; dims <= 3; ++dims)
        // One step per pass, fused passes of 2 and 3 steps (radius 2, and the same at radius
        // 1 as variants 4 and 5, which 3D fuses too), and the coefficient fields.
        // Variant 6: the fields without a periodic axis, whose small grid applies the faces'
        // rules in the sweep (and a split sweep only at the grid's own faces). Variant 7: the
        // fields asked to fuse 2 steps (temporal-blocking's blocked coefficient pass; the
        // CUDA-core tilings take them one step per pass).
        for (int variant = 0; variant < 8; ++variant) {
          const int depth = variant == 1 || variant == 4 || variant == 7 ? 2
                            : variant == 2 || variant == 5               ? 3
                                                                         : 1;
          StencilProblem p = heatsim_tests::box_test_problem(
              dims, variant == 3 || variant == 6 || variant == 7, depth);
          if (variant == 6) {
            p.faces[2].kind = BoundaryKind::neumann;
            p.faces[2].value = 0.0;
            p.faces[3].kind = BoundaryKind::dirichlet;
            p.faces[3].value = 0.3;
          }
          if (variant >= 4) p.stencil = radius_one_star(dims);
          // Longer than box_test_problem's 13 x 9 x 7, so that a fused pass leaves an interior.
          if (!p.coefficients) p.n = {37, 29, dims == 3 ? 23 : 1};
          const auto make = [&]() -> std::unique_ptr<Backend> { return entry.create(precision); };
          try {
            make();
          } catch (const std::runtime_error&) {  // no kernels in this precision
            continue;
          }
          if (!make()->unsupported_reason(p).empty()) continue;
          const std::string label = entry.name + " " + to_string(precision) + " " +
                                    std::to_string(dims) + "D, variant " + std::to_string(variant);
          EXPECT_GT(heatsim_tests::expect_split_passes_match(make, p, 6, label), 0)
              << label << ": the pass did not split";
        }
  }
}

// Rows long enough (131 values: 1048 bytes in fp64, 524 in fp32) that the boxes read and written
// beside the interior's sweep go straight by the copy engines (box_transfer.cuh,
// kDirectRowBytes), the slabs normal to y and z whole rows: one step per pass, a fused pass, and
// the coefficient fields, fp64 and fp32, 2D and 3D.
TEST_F(CudaSplitPass, LongRowsBesideTheSweepMoveExactly) {
  for (const BackendEntry& entry : backend_registry()) {
    if (!entry.needs_gpu) continue;
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 2; dims <= 3; ++dims)
        for (int variant : {0, 4, 3}) {
          StencilProblem p =
              heatsim_tests::box_test_problem(dims, variant == 3, variant == 4 ? 2 : 1);
          if (variant == 4) p.stencil = radius_one_star(dims);
          p.n = {131, dims == 3 ? 21 : 37, dims == 3 ? 13 : 1};
          if (p.coefficients) {  // box_test_problem's fields again at this size
            auto f = std::make_shared<CoefficientFields>(*p.coefficients);
            f->conductivity.assign(static_cast<std::size_t>(p.points()), 1.0);
            f->capacity.assign(f->conductivity.size(), 50.0);
            for (std::size_t i = 0; i < f->conductivity.size(); i += 3) f->conductivity[i] = 2.0;
            p.coefficients = f;
          }
          const auto make = [&]() -> std::unique_ptr<Backend> { return entry.create(precision); };
          try {
            make();
          } catch (const std::runtime_error&) {
            continue;
          }
          if (!make()->unsupported_reason(p).empty()) continue;
          const std::string label = entry.name + " " + to_string(precision) + " " +
                                    std::to_string(dims) + "D, variant " + std::to_string(variant);
          EXPECT_GT(heatsim_tests::expect_split_passes_match(make, p, 6, label), 0)
              << label << ": the pass did not split";
        }
  }
}

}  // namespace
}  // namespace heatsim::kernels
