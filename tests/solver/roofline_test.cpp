// The bound arithmetic of a run's summary: bytes and flops per point and step, nnz of S^k,
// device peaks, and which limit binds.
#include <gtest/gtest.h>

#include "solver/roofline.hpp"
#include "solver/stencil.hpp"

namespace heatsim::solver {
namespace {

using kernels::Precision;

// Radius-1 star or box with every weight of its shape nonzero (0.1; no cancellation in S^k).
Stencil unit_shape(int dims, bool box) {
  Stencil s;
  s.dims = dims;
  s.radius = 1;
  s.weights.assign(s.size(), 0.0);
  const int ry = dims > 1 ? 1 : 0, rz = dims > 2 ? 1 : 0;
  for (int z = -rz; z <= rz; ++z)
    for (int y = -ry; y <= ry; ++y)
      for (int x = -1; x <= 1; ++x)
        if (box || (x != 0) + (y != 0) + (z != 0) <= 1) s.at(x, y, z) = 0.1;
  return s;
}

TEST(Roofline, BytesPerPointAndStep) {
  EXPECT_EQ(bytes_per_point_step(Precision::fp64, 1), 16.0);
  EXPECT_EQ(bytes_per_point_step(Precision::fp32, 1), 8.0);
  EXPECT_EQ(bytes_per_point_step(Precision::fp64, 2), 8.0);
  EXPECT_EQ(bytes_per_point_step(Precision::fp64, 4), 4.0);
  EXPECT_DOUBLE_EQ(bytes_per_point_step(Precision::fp64, 3), 16.0 / 3);
  EXPECT_THROW(bytes_per_point_step(Precision::fp64, 0), std::invalid_argument);
}

TEST(Roofline, NonzerosOfTheFusedStencil) {
  const Stencil star2 = unit_shape(2, false);
  EXPECT_EQ(star2.nonzeros(), 5u);
  EXPECT_EQ(stencil_power(star2, 1).nonzeros(), 5u);
  // Radius-1 star in 2D: nnz(S^k) = 2k^2 + 2k + 1.
  EXPECT_EQ(stencil_power(star2, 2).nonzeros(), 13u);
  EXPECT_EQ(stencil_power(star2, 3).nonzeros(), 25u);
  EXPECT_EQ(stencil_power(star2, 2).radius, 2);
  // 3D seven-point fused twice: offsets with |x|+|y|+|z| <= 2, 1 + 6 + 18.
  EXPECT_EQ(stencil_power(unit_shape(3, false), 2).nonzeros(), 25u);
  // Box-2D9P fused twice is the full 5x5 box; Heat-1D fused k times has 2k+1 taps.
  EXPECT_EQ(stencil_power(unit_shape(2, true), 2).nonzeros(), 25u);
  EXPECT_EQ(stencil_power(unit_shape(1, false), 6).nonzeros(), 13u);

  EXPECT_EQ(flops_per_point_step(star2, 1), 10.0);
  EXPECT_EQ(flops_per_point_step(star2, 2), 13.0);  // 2 * 13 / 2
  EXPECT_DOUBLE_EQ(flops_per_point_step(star2, 3), 50.0 / 3);
}

TEST(Roofline, BandwidthBindsAStarAtOneStepPerPass) {
  // H100-like: 3 TB/s copy, 34 TFLOP/s FP64.
  const Roofline r = roofline(unit_shape(2, false), Precision::fp64, 1, 3e12, 34e12);
  EXPECT_DOUBLE_EQ(r.bandwidth_gstencils, 187.5);
  EXPECT_DOUBLE_EQ(r.compute_gstencils, 3400.0);
  EXPECT_EQ(r.binding, Roofline::Binding::bandwidth);
  EXPECT_DOUBLE_EQ(r.bound_gstencils(), 187.5);
  EXPECT_DOUBLE_EQ(r.fraction(150.0), 0.8);

  // Fused twice: half the bytes, 13 flops per point and step.
  const Roofline f = roofline(unit_shape(2, false), Precision::fp64, 2, 3e12, 34e12);
  EXPECT_DOUBLE_EQ(f.bandwidth_gstencils, 375.0);
  EXPECT_DOUBLE_EQ(f.compute_gstencils, 34e12 / 13.0 / 1e9);
  EXPECT_EQ(f.binding, Roofline::Binding::bandwidth);
}

TEST(Roofline, ComputeBindsWhenThePeakIsLow) {
  // Box-2D9P fused 4 times: 9x9 = 81 weights, 2 * 81 / 4 = 40.5 flops and 4 B per point and
  // step; at 1 TFLOP/s the compute bound 24.7 is below the bandwidth bound 250.
  const Roofline r = roofline(unit_shape(2, true), Precision::fp64, 4, 1e12, 1e12);
  EXPECT_DOUBLE_EQ(r.flops_per_point_step, 40.5);
  EXPECT_DOUBLE_EQ(r.bandwidth_gstencils, 250.0);
  EXPECT_DOUBLE_EQ(r.compute_gstencils, 1e12 / 40.5 / 1e9);
  EXPECT_EQ(r.binding, Roofline::Binding::compute);
  EXPECT_DOUBLE_EQ(r.bound_gstencils(), r.compute_gstencils);
  EXPECT_DOUBLE_EQ(r.fraction(r.compute_gstencils / 2), 0.5);
}

TEST(Roofline, WithoutAPeakOnlyTheBandwidthBoundIsStated) {
  const Roofline r = roofline(unit_shape(2, false), Precision::fp64, 1, 12.8e9, 0.0);
  EXPECT_DOUBLE_EQ(r.bandwidth_gstencils, 0.8);
  EXPECT_EQ(r.compute_gstencils, 0.0);
  EXPECT_EQ(r.binding, Roofline::Binding::bandwidth);
  EXPECT_EQ(describe(r, 0.328, ""),
            "41% of the memory-bandwidth bound 0.80 GStencil/s (12.8 GB/s measured copy "
            "bandwidth, 16 B per point and step; no compute bound: peak FLOP/s not known)");
  EXPECT_EQ(describe(r, 0.02, "").substr(0, 4), "2.5%");
}

TEST(Roofline, DescribeNamesTheBindingLimitFirst) {
  const Roofline bw = roofline(unit_shape(2, false), Precision::fp64, 1, 3e12, 34e12);
  EXPECT_EQ(describe(bw, 150.0, "FP64 CUDA-core peak"),
            "80% of the memory-bandwidth bound 188 GStencil/s (3000 GB/s measured copy "
            "bandwidth, 16 B per point and step; compute bound 3400 GStencil/s from 34 TFLOP/s "
            "FP64 CUDA-core peak, 10 flops per point and step)");
  const Roofline cb = roofline(unit_shape(2, true), Precision::fp64, 4, 1e12, 1e12);
  EXPECT_EQ(describe(cb, 12.0, "FP64 tensor-core peak"),
            "49% of the compute bound 24.7 GStencil/s (1 TFLOP/s FP64 tensor-core peak, 40.5 "
            "flops per point and step; memory-bandwidth bound 250 GStencil/s from 1000 GB/s "
            "measured copy bandwidth, 4 B per point and step)");
}

TEST(Roofline, DevicePeaks) {
  kernels::DeviceInfo h100;
  h100.major = 9;
  h100.minor = 0;
  h100.multiprocessors = 132;
  h100.clock_khz = 1980000;
  // 2 flops x 64 FP64 lanes x 132 SMs x 1.98 GHz = 33.45 TFLOP/s; tensor cores twice that.
  EXPECT_DOUBLE_EQ(device_peak_flops(h100, Precision::fp64, false), 2.0 * 64 * 132 * 1.98e9);
  EXPECT_DOUBLE_EQ(device_peak_flops(h100, Precision::fp64, true), 2.0 * 128 * 132 * 1.98e9);
  EXPECT_DOUBLE_EQ(device_peak_flops(h100, Precision::fp32, false), 2.0 * 128 * 132 * 1.98e9);
  EXPECT_EQ(device_peak_flops(h100, Precision::fp32, true), 0.0);

  kernels::DeviceInfo a100 = h100;
  a100.major = 8;
  a100.multiprocessors = 108;
  a100.clock_khz = 1410000;
  EXPECT_DOUBLE_EQ(device_peak_flops(a100, Precision::fp64, false), 2.0 * 32 * 108 * 1.41e9);
  EXPECT_DOUBLE_EQ(device_peak_flops(a100, Precision::fp64, true), 2.0 * 64 * 108 * 1.41e9);

  kernels::DeviceInfo ada = a100;  // sm_89: FP64 at 1/64 of FP32, no FP64 DMMA peak here
  ada.minor = 9;
  EXPECT_DOUBLE_EQ(device_peak_flops(ada, Precision::fp64, false), 2.0 * 2 * 108 * 1.41e9);
  EXPECT_EQ(device_peak_flops(ada, Precision::fp64, true), 0.0);

  kernels::DeviceInfo unknown = h100;
  unknown.major = 3;
  unknown.minor = 5;
  EXPECT_EQ(device_peak_flops(unknown, Precision::fp64, false), 0.0);
}

}  // namespace
}  // namespace heatsim::solver

namespace heatsim::solver {
namespace {

// A varying-coefficient step moves u twice, k, the capacity and each source field once; its
// arithmetic is not modelled, so the bandwidth binds and the summary says why no compute bound.
TEST(Roofline, VaryingCoefficientsMoveTheFieldsBytes) {
  const Roofline r = coefficient_roofline(kernels::Precision::fp64, 1, 2.0e12);
  EXPECT_DOUBLE_EQ(r.bytes_per_point_step, 40.0);
  EXPECT_DOUBLE_EQ(r.bandwidth_gstencils, 50.0);
  EXPECT_EQ(r.binding, Roofline::Binding::bandwidth);
  EXPECT_DOUBLE_EQ(coefficient_roofline(kernels::Precision::fp32, 0, 2.0e12).bytes_per_point_step,
                   16.0);
  const std::string text = describe(r, 25.0, "");
  EXPECT_NE(text.find("50% of the memory-bandwidth bound 50"), std::string::npos) << text;
  EXPECT_NE(text.find("40 B per point and step"), std::string::npos) << text;
  EXPECT_NE(text.find("not modelled for varying coefficients"), std::string::npos) << text;
}

// A backend that reads a material map as a byte per node says how many bytes it moves
// (Backend::bytes_per_point_step); the bound is then rated on those, not the fields' count.
TEST(Roofline, VaryingCoefficientsTakeTheBackendsBytes) {
  const Roofline r = coefficient_roofline(kernels::Precision::fp64, 1, 2.0e12, 0, 17.0);
  EXPECT_DOUBLE_EQ(r.bytes_per_point_step, 17.0);
  EXPECT_NEAR(r.bandwidth_gstencils, 2.0e12 / 17.0 / 1e9, 1e-9);
  const Roofline faces = coefficient_roofline(kernels::Precision::fp64, 0, 2.0e12, 3, 20.0);
  EXPECT_DOUBLE_EQ(faces.bytes_per_point_step, 20.0);
  // 0: the fields' count (u twice, dt/C, three face arrays).
  EXPECT_DOUBLE_EQ(coefficient_roofline(kernels::Precision::fp64, 0, 2.0e12, 3, 0.0)
                       .bytes_per_point_step,
                   48.0);
  const std::string text = describe(r, 58.8, "");
  EXPECT_NE(text.find("17 B per point and step"), std::string::npos) << text;
  EXPECT_NE(text.find("50% of the memory-bandwidth bound 118"), std::string::npos) << text;
}

}  // namespace
}  // namespace heatsim::solver
