// The temporal-blocking backend's registry entry: the rates `auto` ranks it by and its
// performance model.
#include "../backend_entry.hpp"
#include "temporal_backend.hpp"

namespace heatsim::kernels {
namespace {

// temporal-blocking at depths 1-6 (and at its `fusion: auto` depth: 1D 16, 2D radius 1 8,
// 2D radius-2-3 stars 4): heatsim bench, fp64. 1D on the H100 (docs/performance.md, "Temporal
// blocking"): depth 1 and the auto depth from scripts/gpu-check at 2fdbf71, the other depths
// from the first version's sweep (d15c4cb). The radius-1 rows on an H200 since the register
// marches (2026-11-28, "the register marches in the backend"): depth 1 and the 2D depths 2-6
// before the fused passes' boundary launch, 3D's depth 4, Box-3D27P's depths 2-3 and the 2D
// auto depth after it (register-tiling's Heat-3D S^3 there: 287.9, its table's 236.8 on the
// H100). The 2D radius-3 rows on an H200 with the row march of radius 2-3 ("the row march of
// radius 3"; Box-2D49P's k = 5 and 6 run at 4, its deepest march). Depth 1 of Heat-2D, Heat-3D,
// Box-3D27P and Box-2D49P since the single steps end with the boundary pass ("the fused
// driver's single steps"). Heat-3D's depths 3 and 4 since its depth 3 takes the march in sums
// (2026-11-29, "3D stars in sums at depth 3").
constexpr MeasuredRow kTemporalBlocking[] = {
    {1, false, 1, {179.1, 0, 0, 0, 0, 0}, 942.7},
    {1, false, 2, {178.9, 0, 0, 0, 0, 0}, 641.0},
    {2, false, 1, {219.6, 407.7, 0, 743.3, 0, 731.7}, 930.5},
    {2, true, 1, {212.8, 408.6, 0, 676.8, 0, 641.2}, 772.4},
    {2, false, 3, {217.3, 328.6, 389.7, 409.8, 376.6, 356.1}, 409.8},
    {2, true, 3, {156.4, 136.0, 141.5, 142.6, 0, 0}, 156.4},
    {3, false, 1, {187.2, 213.0, 369.0, 364.4, 0, 0}, 369.0},
    {3, true, 1, {166.9, 211.6, 198.7, 0, 0, 0}, 211.6}};

}  // namespace

BackendEntry temporal_blocking_entry() {
  BackendEntry e;
  e.name = "temporal-blocking";
  e.description =
      "CUDA: k single steps per pass, each block streaming its tile through all k (3D radius "
      "1 stars at k = 2-4 (fp64 k = 3 in sums) and boxes at k = 2-3, 2D radius 1 at k = 2-12, "
      "2D radius 2-3 stars at k = 2-6 and boxes at k = 2-4: the march axis's neighbours of "
      "every step in registers; otherwise plane queues per step in shared memory); 1D-3D, "
      "star and box, radius <= 3, fp64/fp32, depth <= 16 where the tile keeps an output";
  e.needs_gpu = true;
  e.create = [](Precision p) { return make_temporal_blocking_backend(p); };
  e.expected_rate = measured_rate(kTemporalBlocking);
  // Its performance model (docs/performance.md, "The model behind `auto`"): k single steps per
  // pass over a block tile of fixed size (1D 2048 nodes; 2D the row march's 512 along x; 3D
  // 64 x 32 in xy, marching along the last axis), calibrated on an H200 (copy bandwidth 4233
  // GB/s, FP64 33.45 TFLOP/s): e_bw the median of measured / bandwidth roof over the
  // bandwidth-bound rows (1D Heat-1D at k = 1; 2D Heat-2D and Box-2D9P at k = 2 and 4; 3D Heat-3D
  // at k = 2-4), e_c the largest fraction of the compute roof a row reached (Heat-1D at k = 16,
  // Box-2D9P at k = 8, Box-3D27P at k = 2). Depths past those measured fastest (2D radius 1: 8,
  // 2D radius 2-3: 4, 3D: 4) and radius 2-3 passes in 3D (the queue kernel: Star-2D13P's took
  // 102 at k = 2 against 218 at k = 1 before the row march) are not rated. The model ranks the
  // backend; `fusion: auto` runs at its own depth (auto_depth, measured per shape), since the
  // model's rates of the compute-bound depths lie within 1-2% of each other (Box-2D9P: 783 at k =
  // 5, 773 at k = 8; measured 676.8 at 4, 641.2 at 6, 774.1 at 8).
  PerformanceModel m;
  m.tile = {{{2048, 0, 0}, {512, 0, 0}, {64, 32, 0}}};
  m.bandwidth_efficiency = {0.90, 0.74, 0.52};
  m.compute_efficiency = {0.17, 0.43, 0.416};
  m.steps_in_pass = true;
  m.max_depth_radius1 = {0, 8, 4};
  m.max_depth_wider = {0, 4, 1};
  m.own_depth = true;
  // Its coefficient steps are single steps, register-tiling's sweep: H200, 512^3 fp64, heatsim
  // bench's Heat-3D-mat and Heat-3D-faces (HEATSIM_CUDA_CLASSES=0 for the fields and the faces'
  // arrays) at 4182-4194 GB/s: 59.5 GStencil/s at 32 bytes a node, 52.5 at 48, 158.9 at 17,
  // 142.3 at 20 (PerformanceModel::coefficient_efficiency: fields, faces, classes, face_classes).
  m.coefficient_efficiency = {0.454, 0.601, 0.646, 0.681};
  e.model = m;
  return e;
}

}  // namespace heatsim::kernels
