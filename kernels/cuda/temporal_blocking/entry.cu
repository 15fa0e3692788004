// The temporal-blocking backend's registry entry: the rates `auto` ranks it by; no performance
// model of its own (the model's default for a GPU backend).
#include "../backend_entry.hpp"
#include "temporal_backend.hpp"

namespace heatsim::kernels {
namespace {

// temporal-blocking at depths 1-6 (and at its `fusion: auto` depth: 1D 16): heatsim bench on
// the H100, fp64 (docs/performance.md, "Temporal blocking"): depth 1 and the auto depth from
// scripts/gpu-check at 2fdbf71 (single steps through the fused-pass driver), the other depths
// from the first version's sweep (d15c4cb). The 3D star row is the register march's, measured
// on an H200 (2026-11-28, the same run: register-tiling's S^3 264.0, its table's 236.8 on
// the H100).
constexpr MeasuredRow kTemporalBlocking[] = {
    {1, false, 1, {179.1, 0, 0, 0, 0, 0}, 942.7},
    {1, false, 2, {178.9, 0, 0, 0, 0, 0}, 641.0},
    {2, false, 1, {161.1, 181.7, 0, 311.4, 0, 179.3}, 311.4},
    {2, true, 1, {160.7, 167.4, 0, 235.5, 0, 152.3}, 235.5},
    {2, false, 3, {158.3, 101.8, 0, 0, 0, 0}, 158.3},
    {2, true, 3, {142.2, 0, 0, 0, 0, 0}, 142.2},
    {3, false, 1, {151.5, 254.7, 310.2, 335.4, 0, 0}, 335.4},
    {3, true, 1, {114.2, 87.0, 78.4, 70.7, 0, 0}, 114.2}};

}  // namespace

BackendEntry temporal_blocking_entry() {
  BackendEntry e;
  e.name = "temporal-blocking";
  e.description =
      "CUDA: k single steps per pass, each block streaming its tile through all k (3D radius-1 "
      "stars at k = 2-4: the march axis's neighbours of every step in registers; otherwise "
      "plane queues per step in shared memory); 1D-3D, star and box, radius <= 3, fp64/fp32, "
      "depth <= 16 where the tile keeps an output";
  e.needs_gpu = true;
  e.create = [](Precision p) { return make_temporal_blocking_backend(p); };
  e.expected_rate = measured_rate(kTemporalBlocking);
  return e;
}

}  // namespace heatsim::kernels
