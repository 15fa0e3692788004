#include "roofline.hpp"

#include <cstdio>
#include <stdexcept>

#include "stencil.hpp"

namespace heatsim::solver {
namespace {

struct Lanes {
  int fp64 = 0;
  int fp32 = 0;
};

// FMA results per clock and SM (CUDA C++ programming guide, "Arithmetic Instructions",
// 64- and 32-bit floating-point add, multiply, multiply-add). {0, 0}: not in the table here.
Lanes fma_lanes(int major, int minor) {
  const int cc = 10 * major + minor;
  switch (cc) {
    case 60: return {32, 64};
    case 61: case 62: return {4, 128};
    case 70: case 72: return {32, 64};
    case 75: return {2, 64};
    case 80: return {32, 64};
    case 86: case 87: case 89: return {2, 128};
    case 90: return {64, 128};
    case 100: return {64, 128};
    case 120: return {2, 128};
    default: return {};
  }
}

// "0.80", "12.8", "187": three significant digits without an exponent.
std::string rate(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
  return buf;
}

std::string percent(double fraction) {
  const double p = 100.0 * fraction;
  char buf[64];
  std::snprintf(buf, sizeof buf, p >= 10 ? "%.0f%%" : "%.2g%%", p);
  return buf;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

double bytes_per_point_step(kernels::Precision precision, int fusion_depth) {
  if (fusion_depth < 1) throw std::invalid_argument("fusion depth must be >= 1");
  const double value_bytes = precision == kernels::Precision::fp64 ? 8.0 : 4.0;
  return 2.0 * value_bytes / fusion_depth;
}

double flops_per_point_step(const kernels::Stencil& s, int fusion_depth) {
  const auto nnz = static_cast<double>(stencil_power(s, fusion_depth).nonzeros());
  return 2.0 * nnz / fusion_depth;
}

double device_peak_flops(const kernels::DeviceInfo& device, kernels::Precision precision,
                         bool tensor_cores) {
  const Lanes lanes = fma_lanes(device.major, device.minor);
  const int cc = 10 * device.major + device.minor;
  int per_sm = precision == kernels::Precision::fp64 ? lanes.fp64 : lanes.fp32;
  if (tensor_cores) {
    // FP64 DMMA peak is known here for A100 and H100 class parts only.
    if (precision != kernels::Precision::fp64 || (cc != 80 && cc != 90)) return 0.0;
    per_sm *= 2;
  }
  return 2.0 * per_sm * device.multiprocessors * (device.clock_khz * 1e3);
}

double Roofline::fraction(double achieved_gstencils) const {
  const double bound = bound_gstencils();
  return bound > 0 ? achieved_gstencils / bound : 0.0;
}

Roofline roofline(const kernels::Stencil& s, kernels::Precision precision, int fusion_depth,
                  double bandwidth, double peak_flops) {
  Roofline r;
  r.bandwidth = bandwidth;
  r.peak_flops = peak_flops;
  r.bytes_per_point_step = bytes_per_point_step(precision, fusion_depth);
  r.flops_per_point_step = flops_per_point_step(s, fusion_depth);
  r.bandwidth_gstencils = bandwidth / r.bytes_per_point_step / 1e9;
  if (peak_flops > 0 && r.flops_per_point_step > 0)
    r.compute_gstencils = peak_flops / r.flops_per_point_step / 1e9;
  r.binding = r.compute_gstencils > 0 && r.compute_gstencils < r.bandwidth_gstencils
                  ? Roofline::Binding::compute
                  : Roofline::Binding::bandwidth;
  return r;
}

Roofline coefficient_roofline(kernels::Precision precision, int source_fields, double bandwidth,
                              int face_axes, double bytes_per_point) {
  Roofline r;
  const double value_bytes = precision == kernels::Precision::fp64 ? 8.0 : 4.0;
  r.bandwidth = bandwidth;
  // u in and out, dt/C, the sources, and k or one face array per axis.
  r.bytes_per_point_step =
      bytes_per_point > 0 ? bytes_per_point
                          : (3.0 + source_fields + (face_axes > 0 ? face_axes : 1)) * value_bytes;
  r.bandwidth_gstencils = bandwidth / r.bytes_per_point_step / 1e9;
  r.no_compute_reason = "not modelled for varying coefficients";
  return r;
}

std::string describe(const Roofline& r, double achieved_gstencils, const std::string& peak_name) {
  const std::string memory = rate(r.bandwidth / 1e9) + " GB/s measured copy bandwidth, " +
                             number(r.bytes_per_point_step) + " B per point and step";
  const std::string compute = number(r.peak_flops / 1e12) + " TFLOP/s " + peak_name + ", " +
                              number(r.flops_per_point_step) + " flops per point and step";
  std::string s = percent(r.fraction(achieved_gstencils));
  if (r.binding == Roofline::Binding::compute)
    return s + " of the compute bound " + rate(r.compute_gstencils) + " GStencil/s (" + compute +
           "; memory-bandwidth bound " + rate(r.bandwidth_gstencils) + " GStencil/s from " +
           memory + ")";
  s += " of the memory-bandwidth bound " + rate(r.bandwidth_gstencils) + " GStencil/s (" + memory;
  if (r.compute_gstencils > 0)
    s += "; compute bound " + rate(r.compute_gstencils) + " GStencil/s from " + compute;
  else
    s += "; no compute bound: " + r.no_compute_reason;
  return s + ")";
}

}  // namespace heatsim::solver
