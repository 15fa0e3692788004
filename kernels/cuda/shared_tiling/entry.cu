// The shared-tiling backend's registry entry: its sweep, capabilities, the rates `auto` ranks it
// by and its performance model.
#include "../backend_entry.hpp"
#include "shared_sweep.hpp"

namespace heatsim::kernels {
namespace {

using cuda::SweepBackendSpec;

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

// heatsim bench on the H100 (backend_entry.hpp, MeasuredRow).
constexpr MeasuredRow kSharedTiling[] = {
    {1, false, 1, {149.6, 290.8, 429.6}, 429.6},
    {1, false, 2, {147.6}, 147.6},
    {2, false, 1, {77.4, 112.2, 146.3, 164.6, 165.2, 163.8}, 165.2},
    {2, true, 1, {61.2, 98.8, 114.7}, 114.7},
    {2, false, 3, {69.7, 64.9}, 69.7},
    {2, true, 3, {38.7}, 38.7},
    {3, false, 1, {51.0, 70.0, 63.2}, 70.0},
    {3, true, 1, {46.5, 46.8, 32.8}, 46.5}};

// Its coefficient sweeps' fractions of the copy bandwidth per layout (fields, faces, classes,
// face_classes; PerformanceModel::coefficient_efficiency), H200, 512^3 fp64, heatsim bench's
// Heat-3D-mat and Heat-3D-faces (HEATSIM_CUDA_CLASSES=0 for the fields and the faces' arrays)
// at 4182-4194 GB/s: 36.1 GStencil/s at 32 bytes a node, 44.7 at 48 (it reads neither compact
// form).
PerformanceModel shared_model() {
  PerformanceModel m{
      {{{1024, 0, 0}, {32, 16, 0}, {32, 4, 4}}}, {0.80, 0.45, 0.62}, {0.11, 0.11, 0.11}};
  m.coefficient_efficiency = {0.276, 0.513, 0.0, 0.0};
  return m;
}

}  // namespace

// Its performance model (backend_entry.hpp): its output tile.
BackendEntry shared_tiling_entry() {
  return sweep_entry(
      shared_spec(),
      "CUDA: input tile with halo in shared memory; 1D-3D, star and box, radius <= 3, "
      "fp64/fp32, fusion k*r <= 3 (2D stars 6)",
      measured_rate(kSharedTiling), shared_model());
}

}  // namespace heatsim::kernels
