// The convstencil backend's registry entry: the rates `auto` ranks it by and its performance
// model.
#include "../backend_entry.hpp"
#include "convstencil_backend.hpp"

namespace heatsim::kernels {
namespace {

// heatsim bench on the H100 (backend_entry.hpp, MeasuredRow).
constexpr MeasuredRow kConvStencil[] = {{1, false, 1, {161.9, 329.1, 488.1, 653.8}, 1274.1},
                                        {1, false, 2, {161.9, 327.4, 485.1, 645.7}, 645.7},
                                        {2, false, 1, {151.1, 290.0, 393.4, 415.9}, 450.1},
                                        {2, true, 1, {150.0, 293.2, 318.8, 378.5}, 378.5},
                                        {2, false, 3, {137.3, 130.4, 148.4, 100.8}, 148.4},
                                        {2, true, 3, {104.5, 113.2, 91.3, 67.0}, 113.2},
                                        {3, false, 1, {110.3, 169.1, 124.0, 54.6}, 169.1},
                                        {3, true, 1, {84.3, 89.6, 27.8, 24.8}, 84.3}};

}  // namespace

// The performance model's calibration (solver/perf_model.hpp; docs/performance.md, "The model
// behind `auto`"): `heatsim bench` on an H100 80GB HBM3 at commit e289f0b, fp64, copy bandwidth
// 2981 GB/s. e_bw[d] is the median over the suite shapes of dimension d of measured / bandwidth
// roof at k = 1; e_c the largest fraction of the tensor-core peak (66.9 TFLOP/s) in MMA flops
// (tensor_core_flops_per_point_step) any measured row reached: in 2D Box-2D49P at k = 3 (0.48;
// 1D takes it too, its rows are bandwidth-bound), in 3D Box-3D27P at k = 2 (0.40). Tiles: the
// stencil2row tiles (fusion_plan.cpp).
BackendEntry convstencil_entry() {
  BackendEntry e;
  e.name = "convstencil";
  e.description =
      "CUDA: fp64 tensor-core MMAs from a stencil2row tile, exact temporal fusion "
      "(fusion_depth); 1D-3D, star and box, radius <= 3, fp64 only";
  e.needs_gpu = true;
  e.create = [](Precision p) { return make_convstencil_backend(p); };
  e.expected_rate = measured_rate(kConvStencil);
  e.model = PerformanceModel{
      {{{2048, 0, 0}, {64, 32, 0}, {64, 16, 0}}}, {0.86, 0.88, 0.60}, {0.48, 0.48, 0.40}, true};
  return e;
}

}  // namespace heatsim::kernels
