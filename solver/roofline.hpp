// The two limits of a stencil run (docs/performance.md, "The two numbers per shape") and which
// of them binds. One pass of k fused steps reads and writes every point once, so a step moves
// 2*sizeof(T)/k bytes per point; it does one multiply-add per nonzero weight of S^k per pass,
// 2*nnz(S^k)/k flops per point and step. Measuring the bandwidth and knowing the peak FLOP/s
// are the caller's part; this is the arithmetic.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/registry.hpp"

namespace heatsim::solver {

// Bytes per point and step: 2*sizeof(T)/k (T = double for fp64, float for fp32).
double bytes_per_point_step(kernels::Precision precision, int fusion_depth);
// Flops per point and step: 2*nnz(S^k)/k.
double flops_per_point_step(const kernels::Stencil& s, int fusion_depth);

// Peak FLOP/s of a CUDA device from its SM count, clock and the FMA lanes per SM of its
// compute capability (CUDA programming guide, arithmetic instruction throughput), counting an
// FMA as 2 flops. tensor_cores: the FP64 tensor-core peak (mma.sync DMMA: twice the CUDA-core
// rate on sm_80 and sm_90). 0 when the architecture, precision or clock is not known.
double device_peak_flops(const kernels::DeviceInfo& device, kernels::Precision precision,
                         bool tensor_cores);

// The limits in GStencil/s and the smaller one. compute_gstencils is 0 when the peak FLOP/s is
// not known (the CPU); then the bandwidth bound is the only one and binds.
struct Roofline {
  enum class Binding { bandwidth, compute };
  double bandwidth = 0.0;   // measured copy bandwidth, bytes/s
  double peak_flops = 0.0;  // 0: not known
  double bytes_per_point_step = 0.0;
  double flops_per_point_step = 0.0;
  double bandwidth_gstencils = 0.0;
  double compute_gstencils = 0.0;
  Binding binding = Binding::bandwidth;
  // Why there is no compute bound, when compute_gstencils is 0.
  std::string no_compute_reason = "peak FLOP/s not known";

  double bound_gstencils() const {
    return binding == Binding::compute ? compute_gstencils : bandwidth_gstencils;
  }
  // achieved / the binding bound.
  double fraction(double achieved_gstencils) const;
};

Roofline roofline(const kernels::Stencil& s, kernels::Precision precision, int fusion_depth,
                  double bandwidth, double peak_flops);

// A varying-coefficient step (kernels::CoefficientFields, one step per pass): it reads u, k, the
// heat capacity (or dt / rho*c_p) and each of `source_fields` densities, and writes u, so
// (4 + source_fields) * sizeof(T) bytes per point and step; with the faces' conductances given
// (`face_axes` arrays, geometry below the grid) it reads those instead of k. Its arithmetic
// (harmonic means, their divisions) is not modelled: the bandwidth bound is the only one.
// bytes_per_point, where the backend knows better (Backend::bytes_per_point_step: a material
// map read as a byte per node), replaces the count.
Roofline coefficient_roofline(kernels::Precision precision, int source_fields, double bandwidth,
                              int face_axes = 0, double bytes_per_point = 0.0);

// "41% of the memory-bandwidth bound 0.80 GStencil/s (12.8 GB/s measured copy bandwidth,
// 16 B per point and step; ...)": what the run summary prints after the achieved rate.
// peak_name says where the peak comes from ("FP64 CUDA-core peak").
std::string describe(const Roofline& r, double achieved_gstencils, const std::string& peak_name);

}  // namespace heatsim::solver
