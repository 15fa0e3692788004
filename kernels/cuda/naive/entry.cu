// The cuda-naive backend's registry entry: its sweep, capabilities, the rates `auto` ranks it
// by and its performance model.
#include "../backend_entry.hpp"
#include "naive_sweep.hpp"

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
  // Materials as a byte per node, the faces given as a byte per face, the surfaces' transfer
  // per class: in 3D its classes kernel reads them (naive_sweep.cu).
  s.capabilities.compact_materials = true;
  s.capabilities.compact_faces = true;
  s.capabilities.compact_transfer = true;
  // Heat-2D: 133.4 / 230.7 / 215.9 / 175.9 / 208.5 / 211.2 GStencil/s at k = 1..6;
  // Star-2D13P 144.5 / 92.4; Heat-3D: 142.1 / 164.9 / 45.6.
  s.auto_radius_2d = 2;
  s.auto_radius_3d = 2;
  // Fixed Dirichlet faces without the boundary pass (H200, 512^3 fp64, one step):
  // Heat-3D 194.3 -> 212.3 GStencil/s, Heat-2D 199.1 -> 199.9, Box-3D27P 142.0 -> 138.9.
  s.stores_x = true;
  return s;
}

// heatsim bench on the H100 (backend_entry.hpp, MeasuredRow).
constexpr MeasuredRow kNaive[] = {{1, false, 1, {122.3, 201.2, 300.6}, 300.6},
                                  {1, false, 2, {101.7}, 101.7},
                                  {2, false, 1, {133.4, 230.7, 215.9, 175.9, 208.5, 211.2}, 230.7},
                                  {2, true, 1, {144.1, 182.4, 172.7}, 172.7},
                                  {2, false, 3, {144.5, 92.4}, 144.5},
                                  {2, true, 3, {58.6}, 58.6},
                                  {3, false, 1, {142.1, 164.9, 45.6}, 164.9},
                                  {3, true, 1, {121.6, 74.2, 48.0}, 121.6}};

// Its coefficient sweeps' fractions of the copy bandwidth per layout (fields, faces, classes,
// face_classes; PerformanceModel::coefficient_efficiency), H200, 512^3 fp64, heatsim bench's
// Heat-3D-mat and Heat-3D-faces (HEATSIM_CUDA_CLASSES=0 for the fields and the faces' arrays)
// at 4182-4194 GB/s: 70.4 GStencil/s at 32 bytes a node, 79.5 at 48; its 3D kernel of the
// compact forms with its uniform tiles at 4219-4229 GB/s: 185.7 at 17 (the classes), 184.8
// at 20 (the faces' classes; the bench's tiles are uniform but those beside x = 255.5).
PerformanceModel naive_model() {
  PerformanceModel m{{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}, {0.60, 0.75, 0.70}, {0.20, 0.20, 0.20}};
  m.coefficient_efficiency = {0.539, 0.912, 0.747, 0.875};
  return m;
}

}  // namespace

// Its performance model (backend_entry.hpp): cuda-naive leaves its halo to L1/L2 (no tile).
BackendEntry cuda_naive_entry() {
  return sweep_entry(
      naive_spec(),
      "CUDA: one thread per node from global memory (baseline); 1D-3D, star and box, "
      "radius <= 3, fp64/fp32, fusion k*r <= 3 (2D stars 6)",
      measured_rate(kNaive), naive_model());
}

}  // namespace heatsim::kernels
