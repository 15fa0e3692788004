// The CUDA backends' registry entries.
//
// `auto` runs the available backend that supports the problem with the highest expected
// GStencil/s, looked up in the table below: `heatsim bench` on an H100, fp64, default sizes
// (docs/backends.md, docs/convstencil.md). A problem outside the suite takes the suite row of
// the same dimension and shape (star/box) with the nearest radius, the larger on a tie. The
// table ranks; fp32 runs use the same ranking (convstencil is fp64 only). cpu, appended by the
// registry, has no row and is the fallback. Registry order is the tie-break.
#include "cuda_backends.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "convstencil/convstencil_backend.hpp"
#include "naive/naive_sweep.hpp"
#include "register_tiling/register_sweep.hpp"
#include "shared_tiling/shared_sweep.hpp"
#include "stencil_backend.hpp"
#include "temporal_blocking/temporal_backend.hpp"

namespace heatsim::kernels {
namespace {

using cuda::SweepBackendSpec;

SweepBackendSpec naive_spec() {
  SweepBackendSpec s;
  s.name = "cuda-naive";
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.capabilities.temperature_dependence = true;
  s.sweep_fp32 = &cuda::launch_naive_sweep<float>;
  s.sweep_fp64 = &cuda::launch_naive_sweep<double>;
  s.coefficient_fp32 = &cuda::launch_naive_coefficient_sweep<float>;
  s.coefficient_fp64 = &cuda::launch_naive_coefficient_sweep<double>;
  // Materials as a byte per node; the faces given from their arrays (naive_sweep.cu).
  s.capabilities.compact_materials = true;
  // Heat-2D: 133.4 / 230.7 / 215.9 / 175.9 / 208.5 / 211.2 GStencil/s at k = 1..6;
  // Star-2D13P 144.5 / 92.4; Heat-3D: 142.1 / 164.9 / 45.6.
  s.auto_radius_2d = 2;
  s.auto_radius_3d = 2;
  return s;
}

SweepBackendSpec shared_spec() {
  SweepBackendSpec s;
  s.name = "shared-tiling";
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.capabilities.temperature_dependence = true;
  s.sweep_fp32 = &cuda::launch_shared_sweep<float>;
  s.sweep_fp64 = &cuda::launch_shared_sweep<double>;
  s.coefficient_fp32 = &cuda::launch_shared_coefficient_sweep<float>;
  s.coefficient_fp64 = &cuda::launch_shared_coefficient_sweep<double>;
  // Heat-2D: 77.4 / 112.2 / 146.3 / 164.6 / 165.2 / 163.8; Heat-3D: 51.0 / 70.0 / 63.2.
  s.auto_radius_2d = 5;
  s.auto_radius_3d = 2;
  return s;
}

SweepBackendSpec register_spec() {
  SweepBackendSpec s;
  s.name = "register-tiling";
  s.capabilities.min_dims = 2;
  s.capabilities.max_radius = cuda::kMaxRadius;
  s.capabilities.temperature_dependence = true;
  s.sweep_fp32 = &cuda::launch_register_sweep<float>;
  s.sweep_fp64 = &cuda::launch_register_sweep<double>;
  s.coefficient_fp32 = &cuda::launch_register_coefficient_sweep<float>;
  s.coefficient_fp64 = &cuda::launch_register_coefficient_sweep<double>;
  s.capabilities.compact_materials = true;
  s.capabilities.compact_faces = true;
  // Heat-2D: 168.9 / 309.1 / 482.4 / 588.5 / 609.3 / 619.2; Star-2D13P: 166.4 / 247.4;
  // Heat-3D: 143.0 / 209.2 / 236.8.
  s.auto_radius_2d = 6;
  s.auto_radius_3d = 3;
  return s;
}

// One suite shape: GStencil/s per fusion depth 1..4 (0: the backend does not take that
// depth) and at the depth `fusion: auto` takes.
struct MeasuredRow {
  int dims;
  bool box;
  int radius;
  double rate[6];  // k = 1 .. 6; 0: not measured
  double auto_rate = 0.0;
};

// heatsim bench, NVIDIA H100 80GB HBM3, fp64, 2^26 / 8192^2 / 512^3 points. The CUDA-core
// backends fuse up to k*r <= 3 (2D stars k*r <= 6; fusing_backend.cuh), a fused star on its
// fused-star tap set; `fusion: auto` takes stars in 2D and 3D to SweepBackendSpec's radii, 1D
// and 2D boxes to the deepest, 3D boxes not at all.
constexpr MeasuredRow kRegisterTiling[] = {
    {2, false, 1, {168.9, 309.1, 482.4, 588.5, 609.3, 619.2}, 619.2},
    {2, true, 1, {168.4, 288.9, 424.7}, 424.7},
    {2, false, 3, {166.4, 247.4}, 247.4},        {2, true, 3, {148.8}, 148.8},
    {3, false, 1, {143.0, 209.2, 236.8}, 236.8}, {3, true, 1, {139.7, 96.3, 37.0}, 139.7}};
constexpr MeasuredRow kSharedTiling[] = {
    {1, false, 1, {149.6, 290.8, 429.6}, 429.6}, {1, false, 2, {147.6}, 147.6},
    {2, false, 1, {77.4, 112.2, 146.3, 164.6, 165.2, 163.8}, 165.2},
    {2, true, 1, {61.2, 98.8, 114.7}, 114.7},
    {2, false, 3, {69.7, 64.9}, 69.7},           {2, true, 3, {38.7}, 38.7},
    {3, false, 1, {51.0, 70.0, 63.2}, 70.0},     {3, true, 1, {46.5, 46.8, 32.8}, 46.5}};
constexpr MeasuredRow kNaive[] = {
    {1, false, 1, {122.3, 201.2, 300.6}, 300.6}, {1, false, 2, {101.7}, 101.7},
    {2, false, 1, {133.4, 230.7, 215.9, 175.9, 208.5, 211.2}, 230.7},
    {2, true, 1, {144.1, 182.4, 172.7}, 172.7},
    {2, false, 3, {144.5, 92.4}, 144.5},         {2, true, 3, {58.6}, 58.6},
    {3, false, 1, {142.1, 164.9, 45.6}, 164.9},  {3, true, 1, {121.6, 74.2, 48.0}, 121.6}};
constexpr MeasuredRow kConvStencil[] = {
    {1, false, 1, {161.9, 329.1, 488.1, 653.8}, 1274.1},
    {1, false, 2, {161.9, 327.4, 485.1, 645.7}, 645.7},
    {2, false, 1, {151.1, 290.0, 393.4, 415.9}, 450.1},
    {2, true, 1, {150.0, 293.2, 318.8, 378.5}, 378.5},
    {2, false, 3, {137.3, 130.4, 148.4, 100.8}, 148.4},
    {2, true, 3, {104.5, 113.2, 91.3, 67.0}, 113.2},
    {3, false, 1, {110.3, 169.1, 124.0, 54.6}, 169.1},
    {3, true, 1, {84.3, 89.6, 27.8, 24.8}, 84.3}};

// temporal-blocking at depths 1-6 (and at its `fusion: auto` depth: 1D 16): heatsim bench on
// the H100, fp64 (docs/performance.md, "Temporal blocking"): depth 1 and the auto depth from
// scripts/gpu-check at 2fdbf71 (single steps through the fused-pass driver), the other depths
// from the first version's sweep (d15c4cb).
constexpr MeasuredRow kTemporalBlocking[] = {
    {1, false, 1, {179.1, 0, 0, 0, 0, 0}, 942.7},
    {1, false, 2, {178.9, 0, 0, 0, 0, 0}, 641.0},
    {2, false, 1, {161.1, 181.7, 0, 311.4, 0, 179.3}, 311.4},
    {2, true, 1, {160.7, 167.4, 0, 235.5, 0, 152.3}, 235.5},
    {2, false, 3, {158.3, 101.8, 0, 0, 0, 0}, 158.3},
    {2, true, 3, {142.2, 0, 0, 0, 0, 0}, 142.2},
    {3, false, 1, {116.7, 178.0, 146.2, 136.8, 0, 0}, 178.0},
    {3, true, 1, {114.2, 87.0, 78.4, 70.7, 0, 0}, 114.2}};

template <std::size_t N>
const MeasuredRow* nearest_row(const MeasuredRow (&table)[N], const StencilProblem& p) {
  const bool box = !p.stencil.is_star();
  const MeasuredRow* best = nullptr;
  for (const MeasuredRow& row : table) {
    if (row.dims != p.dims || row.box != box) continue;
    const int d = std::abs(row.radius - p.stencil.radius);
    if (!best || d < std::abs(best->radius - p.stencil.radius) ||
        (d == std::abs(best->radius - p.stencil.radius) && row.radius > best->radius))
      best = &row;
  }
  return best;
}

// The rate at the problem's fusion depth: auto (0) at the auto depth; a depth the backend
// does not take at the deepest it takes below it (what it runs).
template <std::size_t N>
std::function<double(const StencilProblem&)> measured_rate(const MeasuredRow (&table)[N]) {
  return [&table](const StencilProblem& p) {
    const MeasuredRow* row = nearest_row(table, p);
    if (!row) return 0.0;
    if (p.fusion_depth == 0) return row->auto_rate;
    for (int k = std::min(std::max(p.fusion_depth, 1), 6); k >= 1; --k)
      if (row->rate[k - 1] > 0.0) return row->rate[k - 1];
    return 0.0;
  };
}

}  // namespace

// The performance model's calibration of each backend (solver/perf_model.hpp; docs/performance.md,
// "The model behind `auto`"): `heatsim bench` on an H100 80GB HBM3 at commit e289f0b, fp64, copy
// bandwidth 2981 GB/s. e_bw[d] is the median over the suite shapes of dimension d of measured /
// bandwidth roof at k = 1; e_c the largest fraction of the CUDA-core peak (33.45 TFLOP/s) any
// measured row reached (Box-2D49P for the sweeps), for convstencil the largest fraction of the
// tensor-core peak (66.9 TFLOP/s) in MMA flops (tensor_core_flops_per_point_step) any measured
// row reached: in 2D Box-2D49P at k = 3 (0.48; 1D takes it too, its rows are bandwidth-bound),
// in 3D Box-3D27P at k = 2 (0.40). Tiles are the kernels' output tiles (docs/backends.md,
// fusion_plan.cpp): register-tiling marches along the slowest axis, cuda-naive leaves its halo
// to L1/L2 (each entry's PerformanceModel). temporal-blocking declares none: the model's
// default.
std::vector<BackendEntry> cuda_backend_entries() {
  return {
      {"temporal-blocking",
       "CUDA: k single steps per pass, each block streaming its tile through all k in shared "
       "memory (plane queues per step); 1D-3D, star and box, radius <= 3, fp64/fp32, depth "
       "<= 16 where the tile keeps an output",
       true, [](Precision p) { return make_temporal_blocking_backend(p); },
       measured_rate(kTemporalBlocking), std::nullopt},  // the model's default
      {"register-tiling",
       "CUDA: 2D blocks march along the slowest axis, plane in shared memory, neighbours in "
       "registers; 2D/3D, star and box, radius <= 3, fp64/fp32, fusion k*r <= 3 (2D stars 6)",
       true, [](Precision p) { return cuda::make_sweep_backend(register_spec(), p); },
       measured_rate(kRegisterTiling),
       PerformanceModel{{{{0, 0, 0}, {256, 0, 0}, {32, 8, 0}}}, {0.5, 0.91, 1.00},
                        {0.44, 0.44, 0.44}}},
      {"shared-tiling",
       "CUDA: input tile with halo in shared memory; 1D-3D, star and box, radius <= 3, "
       "fp64/fp32, fusion k*r <= 3 (2D stars 6)",
       true, [](Precision p) { return cuda::make_sweep_backend(shared_spec(), p); },
       measured_rate(kSharedTiling),
       PerformanceModel{{{{1024, 0, 0}, {32, 16, 0}, {32, 4, 4}}}, {0.80, 0.45, 0.62},
                        {0.11, 0.11, 0.11}}},
      {"cuda-naive",
       "CUDA: one thread per node from global memory (baseline); 1D-3D, star and box, "
       "radius <= 3, fp64/fp32, fusion k*r <= 3 (2D stars 6)",
       true, [](Precision p) { return cuda::make_sweep_backend(naive_spec(), p); },
       measured_rate(kNaive),
       PerformanceModel{{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}, {0.60, 0.75, 0.70},
                        {0.20, 0.20, 0.20}}},
      {"convstencil",
       "CUDA: fp64 tensor-core MMAs from a stencil2row tile, exact temporal fusion "
       "(fusion_depth); 1D-3D, star and box, radius <= 3, fp64 only",
       true, [](Precision p) { return make_convstencil_backend(p); }, measured_rate(kConvStencil),
       PerformanceModel{{{{2048, 0, 0}, {64, 32, 0}, {64, 16, 0}}}, {0.86, 0.88, 0.60},
                        {0.48, 0.48, 0.40}, true}},
  };
}

}  // namespace heatsim::kernels
