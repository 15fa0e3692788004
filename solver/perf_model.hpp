// A performance model of the stencil backends on a GPU: for a problem and a candidate (backend,
// fusion depth k) the GStencil/s it should reach, from the device's measured copy bandwidth and
// peak FLOP/s (docs/performance.md, "The model behind `auto`").
//
//   bandwidth roof = B / (bytes(k) * halo(k*r))       bytes(k) = 2 sizeof(T) / k  (roofline.hpp)
//   compute roof   = P / flops(k)                      flops(k) = 2 taps(S^k) / k
//                                                      (tensor cores: the MMAs' flops)
//   prediction     = min(e_bw[d] * bandwidth roof, e_c[d] * compute roof)
//
// halo(R) = prod over the tiled axes of (t + 2R) / t: the input a tile of t nodes re-reads
// from its neighbours at fused radius R = k*r, counted as extra DRAM traffic. taps(S^k) is
// what the sweep multiplies: nnz(S^k) for a star-shaped S^k (the kernels take its axis taps
// only); for a box-shaped one the whole (2kr+1)^d window (box kernels multiply every weight,
// zeros included; S^k of a star is box-shaped for k > 1 in 2D and 3D), except on the CUDA
// cores, whose sweeps take S^k of a star S of radius r on its fused-star taps, the offsets k
// steps of at most r along one axis each reach (r = 1: the diamond |dx|+|dy|+|dz| <= k,
// 2k^2+2k+1 taps in 2D). P is the FP64
// (fp32: FP32) CUDA-core peak, or the FP64 tensor-core peak for a tensor-core backend. e_bw and
// e_c are the fractions of the two roofs each backend reaches, calibrated per dimension from
// `heatsim bench` on an H100. A backend that takes k single steps per pass (steps_in_pass:
// temporal-blocking) costs S's flops, not S^k's, on a block tile of fixed size t, and both its
// roofs carry prod t / (t - 2R) instead of the halo. The model ranks candidates where nothing
// was measured; a tuning cache (`heatsim bench --tune`) replaces it where something was.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/node_classes.hpp"
#include "kernels/registry.hpp"

namespace heatsim::solver {

// What the model knows of a backend (kernels/performance_model.hpp), declared by its entry.
using BackendModel = kernels::PerformanceModel;

// The model of a registered backend: the calibration its entry declares, else the default
// (no tiles, e_bw 0.5, e_c 0.1, CUDA cores) for a GPU backend, none for a host backend (its
// bandwidth and peak are not the device's).
std::optional<BackendModel> backend_model(const kernels::BackendEntry& entry);
// The same for the compiled backend `name`; an unknown name: the default when `gpu`, else none.
std::optional<BackendModel> backend_model(const std::string& name, bool gpu);

// The device's numbers the model needs. 0: not known (the model then predicts nothing).
struct DeviceRates {
  double bandwidth = 0.0;          // measured copy bandwidth, bytes/s (read + write counted)
  double core_peak_flops = 0.0;    // CUDA-core peak at the problem's precision
  double tensor_peak_flops = 0.0;  // FP64 tensor-core peak; 0: none
};

// The deepest fusion the model assumes a backend takes for the problem: k <= max_fusion_depth
// and a fused radius k*r <= max(max_radius, max_fusion_depth) (the CUDA-core sweeps take
// k*r <= 6 for 2D stars and 3 otherwise, convstencil k*r <= 12 and 4 in 3D; the lower limits
// are not in the capabilities, and the model's deeper candidates there are compute-bound and
// do not win), and every axis longer than k*r nodes. At least 1.
int model_fusion_limit(const kernels::Capabilities& caps, const kernels::StencilProblem& problem);

// The deepest depth the model itself rates for the problem (BackendModel::max_depth_*); 0: no
// limit of its own.
int model_depth_limit(const BackendModel& m, const kernels::StencilProblem& problem);

// Multiply-adds a sweep does per point and pass of S^k, times 2, divided by k (see above);
// diamond_taps: the sweep takes S^k of a star on its fused-star taps (the CUDA-core sweeps).
double executed_flops_per_point_step(const kernels::Stencil& s, int fusion_depth,
                                     bool diamond_taps = false);

// The same for the tensor-core sweep: the MMAs of convstencil's tile plan for S^k
// (kernels/cuda/convstencil/fusion_plan.hpp, plan_for). Each line (dz, dy) of S^k with a
// nonzero tap, dmin..dmax along x, is a band of ceil((dmax - dmin + 8) / 4) chunks; a chunk is
// one m8n8k4 MMA per 8 x 8 outputs (512 flops, 8 per output); up to 64 chunks are padded to a
// multiple of 4. Divided by k. Heat-2D at k = 4: 28 chunks, 56 flops per point and step;
// Box-2D9P at k = 4: 36 chunks, 72 (2 taps(S^k) / k counts 40.5 for both).
double tensor_core_flops_per_point_step(const kernels::Stencil& s, int fusion_depth);

// Halo factor of a tile at fused radius R, for a problem of `dims` dimensions: prod (t + 2R) / t
// over the tiled axes, or for a fixed block tile (steps_in_pass) prod t / (t - 2R), infinite
// where the tile keeps no output.
double halo_factor(const BackendModel& m, int dims, int fused_radius);

struct Prediction {
  double gstencils = 0.0;       // the prediction
  double bandwidth_roof = 0.0;  // B / (bytes(k) * halo), GStencil/s, before the efficiency
  double compute_roof = 0.0;    // P / flops(k), GStencil/s, before the efficiency; 0: no peak
  double halo = 1.0;
  bool compute_binds = false;
};

// Zero prediction when the bandwidth is not known.
Prediction predict(const kernels::StencilProblem& problem, const BackendModel& m, int fusion_depth,
                   const DeviceRates& device);

// A one-step sweep of a varying-coefficient problem whose layout and bytes per node are
// `traffic`: the backend's measured fraction of the copy bandwidth on that layout
// (BackendModel::coefficient_efficiency) times the bandwidth over the bytes, GStencil/s; 0 when
// the fraction or the bandwidth is not known.
double coefficient_rate(const BackendModel& m, const kernels::CoefficientTraffic& traffic,
                        const DeviceRates& device);

}  // namespace heatsim::solver
