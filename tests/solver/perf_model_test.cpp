// The performance model behind `auto` (solver/perf_model.hpp): fusion limits, executed flops,
// halo factors and the predictions, with exact expectations.
#include "solver/perf_model.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "solver/backend_choice.hpp"
#include "solver/stencil.hpp"

namespace heatsim::solver {
namespace {

using kernels::Capabilities;
using kernels::Precision;
using kernels::Stencil;
using kernels::StencilProblem;

// Radius-r star or box with every weight of its shape nonzero.
Stencil shape(int dims, int radius, bool box) {
  Stencil s;
  s.dims = dims;
  s.radius = radius;
  s.weights.assign(s.size(), 0.0);
  const int ry = dims > 1 ? radius : 0, rz = dims > 2 ? radius : 0;
  for (int z = -rz; z <= rz; ++z)
    for (int y = -ry; y <= ry; ++y)
      for (int x = -radius; x <= radius; ++x)
        if (box || (x != 0) + (y != 0) + (z != 0) <= 1) s.at(x, y, z) = 0.1;
  return s;
}

StencilProblem problem(int dims, int radius, bool box, std::int64_t n = 4096) {
  StencilProblem p;
  p.dims = dims;
  for (int a = 0; a < dims; ++a) p.n[static_cast<std::size_t>(a)] = n;
  p.stencil = shape(dims, radius, box);
  p.precision = Precision::fp64;
  return p;
}

Capabilities caps(int max_radius, int max_fusion) {
  Capabilities c;
  c.max_radius = max_radius;
  c.max_fusion_depth = max_fusion;
  c.gpu = true;
  return c;
}

TEST(PerfModel, FusionLimitFollowsCapabilitiesRadiusAndGrid) {
  // CUDA-core sweeps: k*r <= 3.
  EXPECT_EQ(model_fusion_limit(caps(3, 3), problem(2, 1, false)), 3);
  EXPECT_EQ(model_fusion_limit(caps(3, 3), problem(1, 2, false)), 1);
  EXPECT_EQ(model_fusion_limit(caps(3, 3), problem(2, 3, true)), 1);
  // Tensor cores: k <= 12 and k*r <= 12.
  EXPECT_EQ(model_fusion_limit(caps(3, 12), problem(1, 1, false)), 12);
  EXPECT_EQ(model_fusion_limit(caps(3, 12), problem(2, 3, false)), 4);
  EXPECT_EQ(model_fusion_limit(caps(3, 12), problem(1, 2, false)), 6);
  // No fusion.
  EXPECT_EQ(model_fusion_limit(caps(3, 1), problem(2, 1, false)), 1);
  // Every axis must be longer than k*r nodes: n = 5 takes k*r <= 4.
  EXPECT_EQ(model_fusion_limit(caps(3, 12), problem(2, 1, false, 5)), 4);
}

TEST(PerfModel, ExecutedFlopsCountTheWholeWindowOfABoxShapedPower) {
  const Stencil heat2d = shape(2, 1, false);
  EXPECT_EQ(executed_flops_per_point_step(heat2d, 1), 10.0);  // the 5 star taps
  // S^2 of the 2D star is box-shaped (off-axis taps): the 5x5 window, 2 * 25 / 2.
  EXPECT_EQ(executed_flops_per_point_step(heat2d, 2), 25.0);
  EXPECT_DOUBLE_EQ(executed_flops_per_point_step(heat2d, 3), 2.0 * 49 / 3);
  // 1D stays a star: nnz(S^3) = 7.
  EXPECT_DOUBLE_EQ(executed_flops_per_point_step(shape(1, 1, false), 3), 14.0 / 3);
  EXPECT_EQ(executed_flops_per_point_step(shape(3, 1, true), 1), 54.0);
  EXPECT_EQ(executed_flops_per_point_step(shape(3, 1, false), 2), 125.0);  // 5^3 window, / 2 * 2
  EXPECT_THROW(executed_flops_per_point_step(heat2d, 0), std::invalid_argument);
}

TEST(PerfModel, DiamondTapsCountOnlyTheL1BallOfAFusedStar) {
  const Stencil heat2d = shape(2, 1, false);
  // |dx| + |dy| <= 2: 13 taps; <= 3: 25 taps (of 25 and 49 in the window).
  EXPECT_EQ(executed_flops_per_point_step(heat2d, 2, true), 13.0);
  EXPECT_DOUBLE_EQ(executed_flops_per_point_step(heat2d, 3, true), 2.0 * 25 / 3);
  // 3D at k = 2: 25 of the 125 window taps.
  EXPECT_EQ(executed_flops_per_point_step(shape(3, 1, false), 2, true), 25.0);
  // A box's power has nonzeros outside the diamond: the whole window stays.
  EXPECT_EQ(executed_flops_per_point_step(shape(2, 1, true), 2, true), 25.0);
  // One step of a star is the star either way.
  EXPECT_EQ(executed_flops_per_point_step(heat2d, 1, true), 10.0);
  // A radius-3 star fused twice: 61 offsets two steps of at most 3 reach (axes to 6, and the
  // 6 x 6 off-axis square), not the 85 of the diamond of radius 6.
  EXPECT_EQ(executed_flops_per_point_step(shape(2, 3, false), 2, true), 61.0);
}

TEST(PerfModel, TensorCoreFlopsCountTheTilePlansChunks) {
  // 8 flops per output per chunk; a band of extent w along x is ceil((w + 7) / 4) chunks; up to
  // 64 chunks are padded to a multiple of 4.
  const Stencil heat2d = shape(2, 1, false);
  EXPECT_EQ(tensor_core_flops_per_point_step(heat2d, 1), 64.0);  // 2 + 3 + 2 -> 8 chunks
  // k = 4: the diamond of radius 4, bands of 1, 3, 5, 7, 9, 7, 5, 3, 1: 28 chunks.
  EXPECT_EQ(tensor_core_flops_per_point_step(heat2d, 4), 8.0 * 28 / 4);
  // The 9x9 box of Box-2D9P at k = 4: 9 bands of 4 chunks.
  EXPECT_EQ(tensor_core_flops_per_point_step(shape(2, 1, true), 4), 8.0 * 36 / 4);
  // Heat-1D at k = 12: one band of 25 taps, 8 chunks.
  EXPECT_DOUBLE_EQ(tensor_core_flops_per_point_step(shape(1, 1, false), 12), 8.0 * 8 / 12);
  // Heat-3D at k = 2: 1 band of 5, 4 of 3 and 8 of 1: 3 + 12 + 16 = 31, padded to 32.
  EXPECT_EQ(tensor_core_flops_per_point_step(shape(3, 1, false), 2), 8.0 * 32 / 2);
  // Box-3D27P at k = 2: 25 bands of 3 chunks, 75: past 64, not padded.
  EXPECT_EQ(tensor_core_flops_per_point_step(shape(3, 1, true), 2), 8.0 * 75 / 2);
  EXPECT_THROW(tensor_core_flops_per_point_step(heat2d, 0), std::invalid_argument);
}

TEST(PerfModel, HaloFactorOfTheTiledAxes) {
  BackendModel m;
  m.tile[1] = {64, 32, 0};
  m.tile[2] = {32, 8, 0};  // marches along z: no z halo
  EXPECT_DOUBLE_EQ(halo_factor(m, 2, 1), 66.0 * 34.0 / (64.0 * 32.0));
  EXPECT_DOUBLE_EQ(halo_factor(m, 2, 4), 72.0 * 40.0 / (64.0 * 32.0));
  EXPECT_DOUBLE_EQ(halo_factor(m, 3, 1), 34.0 * 10.0 / (32.0 * 8.0));
  EXPECT_EQ(halo_factor(m, 1, 3), 1.0);  // no 1D tile: nothing re-read
}

TEST(PerfModel, PredictionIsTheSmallerScaledRoof) {
  BackendModel m;
  m.tile[1] = {64, 32, 0};
  m.bandwidth_efficiency = {0.5, 0.5, 0.5};
  m.compute_efficiency = {0.25, 0.25, 0.25};
  DeviceRates d;
  d.bandwidth = 3e12;
  d.core_peak_flops = 32e12;
  d.tensor_peak_flops = 64e12;

  const StencilProblem heat2d = problem(2, 1, false);
  const double halo1 = 66.0 * 34.0 / 2048.0;
  Prediction p = predict(heat2d, m, 1, d);
  EXPECT_DOUBLE_EQ(p.halo, halo1);
  EXPECT_DOUBLE_EQ(p.bandwidth_roof, 3e12 / (16.0 * halo1) / 1e9);
  EXPECT_DOUBLE_EQ(p.compute_roof, 3200.0);  // 32e12 / 10 flops
  EXPECT_FALSE(p.compute_binds);
  EXPECT_DOUBLE_EQ(p.gstencils, 0.5 * p.bandwidth_roof);

  // Fused 3 times: 16/3 bytes, radius-3 halo, 2*25/3 flops per point and step (the diamond
  // taps of S^3 on CUDA cores).
  const double halo3 = 70.0 * 38.0 / 2048.0;
  p = predict(heat2d, m, 3, d);
  EXPECT_DOUBLE_EQ(p.bandwidth_roof, 3e12 / (16.0 / 3 * halo3) / 1e9);
  EXPECT_DOUBLE_EQ(p.compute_roof, 32e12 / (2.0 * 25 / 3) / 1e9);
  EXPECT_DOUBLE_EQ(p.gstencils, std::min(0.5 * p.bandwidth_roof, 0.25 * p.compute_roof));

  // A dense 7x7 box on a slow device: the compute roof binds.
  DeviceRates slow = d;
  slow.core_peak_flops = 1e12;
  p = predict(problem(2, 3, true), m, 1, slow);
  EXPECT_DOUBLE_EQ(p.compute_roof, 1e12 / 98.0 / 1e9);
  EXPECT_TRUE(p.compute_binds);
  EXPECT_DOUBLE_EQ(p.gstencils, 0.25 * 1e12 / 98.0 / 1e9);

  // Tensor cores use their own peak; fp32 moves half the bytes.
  m.tensor_cores = true;
  // (the 7x7 box: 7 bands of 4 chunks, 224 MMA flops per point)
  EXPECT_DOUBLE_EQ(predict(problem(2, 3, true), m, 1, slow).compute_roof, 64e12 / 224.0 / 1e9);
  m.tensor_cores = false;
  StencilProblem fp32 = heat2d;
  fp32.precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(predict(fp32, m, 1, d).bandwidth_roof, 3e12 / (8.0 * halo1) / 1e9);

  // Without a bandwidth the model predicts nothing.
  EXPECT_EQ(predict(heat2d, m, 1, DeviceRates{}).gstencils, 0.0);
}

// The calibrations are declared by the CUDA backends' registry entries: without CUDA compiled
// there is none to read.
#define SKIP_WITHOUT_CUDA_ENTRIES()                                                          \
  if (!kernels::find_backend("register-tiling") || !kernels::find_backend("convstencil"))    \
  GTEST_SKIP() << "the CUDA backends are not compiled in"

TEST(PerfModel, CalibratedDefaultAndHostBackends) {
  // A made-up entry: its declared model, the default for a GPU one without, none for a host one.
  kernels::BackendEntry made_up{"made-up", "test", true, {}, {}, BackendModel{}};
  made_up.model->tile[1][0] = 77;
  EXPECT_EQ(backend_model(made_up)->tile[1][0], 77);
  made_up.model.reset();
  ASSERT_TRUE(backend_model(made_up).has_value());
  EXPECT_EQ(backend_model(made_up)->compute_efficiency[2], 0.1);
  made_up.needs_gpu = false;
  EXPECT_FALSE(backend_model(made_up).has_value());
  EXPECT_FALSE(backend_model("cpu", false).has_value());

  SKIP_WITHOUT_CUDA_ENTRIES();
  const auto reg = backend_model("register-tiling", true);
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(reg->tile[2][0], 32);
  EXPECT_FALSE(reg->tensor_cores);
  const auto conv = backend_model("convstencil", true);
  ASSERT_TRUE(conv.has_value());
  EXPECT_TRUE(conv->tensor_cores);
  const auto other = backend_model("some-new-gpu-backend", true);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->bandwidth_efficiency[1], 0.5);
  EXPECT_EQ(halo_factor(*other, 3, 3), 1.0);
}

// Numbers docs/performance.md quotes: Heat-2D on register-tiling, one step and fused three
// times, on an H100 (2988 GB/s, 33.45 TFLOP/s FP64 CUDA cores).
TEST(PerfModel, H100RegisterTilingHeat2D) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  DeviceRates h100;
  h100.bandwidth = 2988e9;
  h100.core_peak_flops = 33.45e12;
  h100.tensor_peak_flops = 66.9e12;
  const BackendModel m = *backend_model("register-tiling", true);
  const StencilProblem heat2d = problem(2, 1, false);
  EXPECT_DOUBLE_EQ(predict(heat2d, m, 1, h100).gstencils, 0.91 * 2988.0 / (16.0 * 258 / 256));
  // Fused 3 times the sweep multiplies the diamond of 25 taps, not the 7x7 window: the
  // bandwidth roof (16/3 bytes per point and step, halo 262/256) still binds.
  const Prediction fused = predict(heat2d, m, 3, h100);
  EXPECT_FALSE(fused.compute_binds);
  EXPECT_DOUBLE_EQ(fused.gstencils, 0.91 * 2988.0 / (16.0 / 3 * 262 / 256));
  EXPECT_DOUBLE_EQ(fused.compute_roof, 33.45e12 / (2.0 * 25 / 3) / 1e9);
  // A box's power keeps the whole window and binds on compute.
  const Prediction box = predict(problem(2, 1, true), m, 3, h100);
  EXPECT_TRUE(box.compute_binds);
  EXPECT_DOUBLE_EQ(box.gstencils, 0.44 * 33.45e12 / (2.0 * 49 / 3) / 1e9);
}

// What `fusion: auto` picks without a tuning cache on an H100 (the rates of the test above):
// Box-2D9P on register-tiling at k = 3 (measured 426.7 GStencil/s) over convstencil at any
// depth (best measured: 378.5 at k = 4), whose band MMAs grow with the 9x9 box.
TEST(PerfModel, H100Box2D9PGoesToRegisterTilingFusedThreeTimes) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  DeviceRates h100;
  h100.bandwidth = 2988e9;
  h100.core_peak_flops = 33.45e12;
  h100.tensor_peak_flops = 66.9e12;
  const StencilProblem box = problem(2, 1, true, 8192);
  const double reg3 = predict(box, *backend_model("register-tiling", true), 3, h100).gstencils;
  const BackendModel conv = *backend_model("convstencil", true);
  double conv_best = 0;
  for (int k = 1; k <= model_fusion_limit(caps(3, 12), box); ++k)
    conv_best = std::max(conv_best, predict(box, conv, k, h100).gstencils);
  EXPECT_GT(conv_best, 0.0);
  EXPECT_GT(reg3, conv_best);
  // Heat-2D still fuses deepest on register-tiling: at k = 4 it beats convstencil's best.
  const StencilProblem heat = problem(2, 1, false, 8192);
  double conv_heat = 0;
  for (int k = 1; k <= model_fusion_limit(caps(3, 12), heat); ++k)
    conv_heat = std::max(conv_heat, predict(heat, conv, k, h100).gstencils);
  EXPECT_GT(predict(heat, *backend_model("register-tiling", true), 4, h100).gstencils, conv_heat);
}

// temporal-blocking's model: k single steps per pass over a fixed block tile, so both roofs
// carry t / (t - 2R) per tiled axis, and the work per step is S's (its 3D tile 64 x 32, Heat-3D
// at k = 4 on an H200: 4233 GB/s, 33.45 TFLOP/s).
TEST(PerfModel, TemporalBlockingTakesSingleStepsOverAFixedTile) {
  BackendModel m;
  m.tile[2] = {64, 32, 0};
  m.steps_in_pass = true;
  m.bandwidth_efficiency = {0.9, 0.74, 0.52};
  m.compute_efficiency = {0.17, 0.43, 0.416};
  m.max_depth_radius1 = {0, 8, 4};
  m.max_depth_wider = {0, 1, 1};
  DeviceRates h200;
  h200.bandwidth = 4233e9;
  h200.core_peak_flops = 33.45e12;
  const StencilProblem heat3d = problem(3, 1, false, 512);
  const double f4 = 64.0 / 56 * 32.0 / 24;
  EXPECT_DOUBLE_EQ(halo_factor(m, 3, 4), f4);
  const Prediction p = predict(heat3d, m, 4, h200);
  EXPECT_DOUBLE_EQ(p.bandwidth_roof, 4233.0 / (16.0 / 4 * f4));
  EXPECT_DOUBLE_EQ(p.compute_roof, 33.45e12 / (14.0 * f4) / 1e9);
  EXPECT_FALSE(p.compute_binds);
  EXPECT_NEAR(p.gstencils, 361.1, 0.1);  // measured 364.8
  // Box-3D27P at k = 2: its 27 taps on every node of the tile bind (measured 211.6).
  const Prediction box = predict(problem(3, 1, true, 512), m, 2, h200);
  EXPECT_TRUE(box.compute_binds);
  EXPECT_NEAR(box.gstencils, 0.416 * 33.45e12 / (54.0 * 64 / 60 * 32 / 28) / 1e9, 1e-9);
  // A depth whose halos eat the tile predicts nothing.
  EXPECT_EQ(halo_factor(m, 3, 16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(predict(heat3d, m, 16, h200).gstencils, 0.0);
  EXPECT_EQ(model_depth_limit(m, heat3d), 4);
  EXPECT_EQ(model_depth_limit(m, problem(2, 3, false)), 1);
  EXPECT_EQ(model_depth_limit(m, problem(1, 1, false)), 0);
}

// What `auto` takes without a tuning cache on an H200, over the compiled backends' models, at
// the bench's sizes: the measured fastest (heatsim bench, 2026-11-28, fp64: the temporal-blocking
// marches at Heat-2D 930.0 against register-tiling's 634.3, Box-2D9P 774.1 against 465.8,
// Heat-3D 364.6 against 288.2, Box-3D27P 211.4 against 163.9, Star-2D13P 409.8 (the row
// march of radius 3, k = 4) against register-tiling's 250.7; Box-2D49P one step either way (the same
// sweep: register-tiling 155.9, temporal-blocking's single steps 156.4), register-tiling by its
// model; convstencil's Heat-1D 1938.5; one step of Heat-2D: register-tiling 220.9, whose
// sweep temporal-blocking's single steps are).
TEST(PerfModel, H200AutoTakesTheMeasuredFastest) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  if (!kernels::find_backend("temporal-blocking")) GTEST_SKIP() << "no temporal-blocking";
  ChoiceContext ctx;
  ctx.have_gpu = true;
  ctx.device.bandwidth = 4233e9;
  ctx.device.core_peak_flops = 33.45e12;
  ctx.device.tensor_peak_flops = 66.9e12;
  auto pick = [&](StencilProblem p, int fusion) {
    p.fusion_depth = fusion;
    const BackendChoice c = choose_backend("auto", p, ctx);
    return c.name + " " + std::to_string(c.fusion_depth);
  };
  // temporal-blocking runs at its own depth (0 here: the backend's auto_depth, 8 in 2D radius
  // 1, 4 for 2D wider stars and 3D stars, 2 for 3D boxes), which its model only ranks.
  EXPECT_EQ(pick(problem(2, 1, false, 8192), 0), "temporal-blocking 0");
  EXPECT_EQ(pick(problem(2, 1, true, 8192), 0), "temporal-blocking 0");
  EXPECT_EQ(pick(problem(3, 1, false, 512), 0), "temporal-blocking 0");
  EXPECT_EQ(pick(problem(3, 1, true, 512), 0), "temporal-blocking 0");
  EXPECT_EQ(pick(problem(2, 3, false, 8192), 0), "temporal-blocking 0");
  EXPECT_EQ(pick(problem(2, 3, true, 8192), 0), "register-tiling 1");
  EXPECT_EQ(pick(problem(1, 1, false, 1 << 26), 0), "convstencil 12");
  EXPECT_EQ(pick(problem(2, 1, false, 8192), 1), "register-tiling 1");
  // Named with `fusion: auto`, its own depth too; a depth asked is kept.
  StencilProblem heat1d = problem(1, 1, false, 1 << 26);
  heat1d.fusion_depth = 0;
  EXPECT_EQ(choose_backend("temporal-blocking", heat1d, ctx).fusion_depth, 0);
  heat1d.fusion_depth = 3;
  EXPECT_EQ(choose_backend("temporal-blocking", heat1d, ctx).fusion_depth, 3);
}

}  // namespace
}  // namespace heatsim::solver
