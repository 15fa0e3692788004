// The temporal-blocking backend's registry entry: the rates `auto` ranks it by; no performance
// model of its own (the model's default for a GPU backend).
#include "../backend_entry.hpp"
#include "temporal_backend.hpp"

namespace heatsim::kernels {
namespace {

// temporal-blocking at depths 1-6 (and at its `fusion: auto` depth: 1D 16, 2D radius 1 8):
// heatsim bench, fp64. 1D and radius 2-3 on the H100 (docs/performance.md, "Temporal
// blocking"): depth 1 and the auto depth from scripts/gpu-check at 2fdbf71, the other depths
// from the first version's sweep (d15c4cb). The radius-1 rows on an H200 since the register
// marches (2026-11-28, "the register marches in the backend"): depth 1 and the 2D depths 2-6
// before the fused passes' boundary launch, 3D's depth 4, Box-3D27P's depths 2-3 and the 2D
// auto depth after it (register-tiling's Heat-3D S^3 there: 287.9, its table's 236.8 on the
// H100).
constexpr MeasuredRow kTemporalBlocking[] = {
    {1, false, 1, {179.1, 0, 0, 0, 0, 0}, 942.7},
    {1, false, 2, {178.9, 0, 0, 0, 0, 0}, 641.0},
    {2, false, 1, {212.9, 407.7, 0, 743.3, 0, 731.7}, 930.5},
    {2, true, 1, {212.8, 408.6, 0, 676.8, 0, 641.2}, 772.4},
    {2, false, 3, {158.3, 101.8, 0, 0, 0, 0}, 158.3},
    {2, true, 3, {142.2, 0, 0, 0, 0, 0}, 142.2},
    {3, false, 1, {156.0, 213.0, 314.2, 364.8, 0, 0}, 364.8},
    {3, true, 1, {142.1, 211.6, 198.7, 0, 0, 0}, 211.6}};

}  // namespace

BackendEntry temporal_blocking_entry() {
  BackendEntry e;
  e.name = "temporal-blocking";
  e.description =
      "CUDA: k single steps per pass, each block streaming its tile through all k (radius 1: "
      "3D stars at k = 2-4, 3D boxes at k = 2-3, 2D at k = 2-12, the march axis's neighbours "
      "of every step in registers; otherwise plane queues per step in shared memory); 1D-3D, "
      "star and box, radius <= 3, fp64/fp32, depth <= 16 where the tile keeps an output";
  e.needs_gpu = true;
  e.create = [](Precision p) { return make_temporal_blocking_backend(p); };
  e.expected_rate = measured_rate(kTemporalBlocking);
  return e;
}

}  // namespace heatsim::kernels
