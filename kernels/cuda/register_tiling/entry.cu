// The register-tiling backend's registry entry: its sweep, capabilities, the rates `auto` ranks it
// by and its performance model.
#include "../backend_entry.hpp"
#include "register_sweep.hpp"

namespace heatsim::kernels {
namespace {

using cuda::SweepBackendSpec;

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
  // Fixed Dirichlet faces without the boundary pass (H200, 512^3 fp64, one step):
  // Heat-3D 190.6 -> 205.2 GStencil/s, Box-3D27P 169.7 -> 180.0, Heat-2D 220.4 -> 224.6.
  // (shared-tiling keeps the pass: with the stores masked its Heat-2D fell 80.4 -> 64.1.)
  s.stores_x = true;
  return s;
}

// heatsim bench on the H100 (backend_entry.hpp, MeasuredRow).
constexpr MeasuredRow kRegisterTiling[] = {
    {2, false, 1, {168.9, 309.1, 482.4, 588.5, 609.3, 619.2}, 619.2},
    {2, true, 1, {168.4, 288.9, 424.7}, 424.7},
    {2, false, 3, {166.4, 247.4}, 247.4},
    {2, true, 3, {148.8}, 148.8},
    {3, false, 1, {143.0, 209.2, 236.8}, 236.8},
    {3, true, 1, {139.7, 96.3, 37.0}, 139.7}};

// Its coefficient sweeps' fractions of the copy bandwidth per layout (fields, faces, classes,
// face_classes; PerformanceModel::coefficient_efficiency), H200, 512^3 fp64, heatsim bench's
// Heat-3D-mat and Heat-3D-faces (HEATSIM_CUDA_CLASSES=0 for the fields and the faces' arrays)
// at 4182-4194 GB/s: 59.4 GStencil/s at 32 bytes a node, 52.5 at 48, 158.2 at 17, 142.3 at
// 20.
PerformanceModel register_model() {
  PerformanceModel m{{{{0, 0, 0}, {256, 0, 0}, {32, 8, 0}}}, {0.5, 0.91, 1.00}, {0.44, 0.44, 0.44}};
  m.coefficient_efficiency = {0.455, 0.602, 0.643, 0.681};
  return m;
}

}  // namespace

// Its performance model (backend_entry.hpp): the tile of the plane it marches with (no extent
// along the march).
BackendEntry register_tiling_entry() {
  return sweep_entry(
      register_spec(),
      "CUDA: 2D blocks march along the slowest axis, plane in shared memory, neighbours in "
      "registers; 2D/3D, star and box, radius <= 3, fp64/fp32, fusion k*r <= 3 (2D stars 6)",
      measured_rate(kRegisterTiling), register_model());
}

}  // namespace heatsim::kernels
