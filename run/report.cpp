// The text a run logs and prints: durations, the writer's activity, the summary's lines.
#include "run/report.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "solver/roofline.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/timing.hpp"
#endif

namespace heatsim::run {
namespace {

std::string describe_writes(const char* what, double seconds, double bytes) {
  return fmt::format("{} {:.3f} s ({:.3f} GB, {:.3g} GB/s)", what, seconds, bytes / 1e9,
                     seconds > 0 ? bytes / 1e9 / seconds : 0.0);
}

}  // namespace

std::string format_seconds(double s) {
  char buf[64];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600,
                  (static_cast<int>(s) / 60) % 60);
  return buf;
}

std::string format_solve_seconds(double s) {
  return s < 1.0    ? fmt::format("{:.3g} ms", 1e3 * s)
         : s < 60.0 ? fmt::format("{:.3g} s", s)
                    : format_seconds(s);
}

std::string bound_summary(const kernels::StencilProblem& problem, kernels::Backend& backend,
                          double achieved_gstencils) {
  if (achieved_gstencils <= 0 || !backend.capabilities().gpu) return "";
#ifdef HEATSIM_HAVE_CUDA
  constexpr double kMiB = 1 << 20;
  const double value_bytes = problem.precision == kernels::Precision::fp64 ? 8.0 : 4.0;
  const double field_bytes = static_cast<double>(problem.points()) * value_bytes;
  double bandwidth = 0.0, peak_flops = 0.0;
  std::string peak_name;
  try {
    const kernels::DeviceInfo device =
        kernels::cuda_devices().at(static_cast<std::size_t>(kernels::current_cuda_device()));
    const double bytes = std::min(std::clamp(field_bytes, 64 * kMiB, 256 * kMiB),
                                  static_cast<double>(device.free_memory) / 4);
    bandwidth = kernels::cuda::copy_bandwidth(static_cast<std::size_t>(bytes), 5);
    const bool tensor_cores = backend.capabilities().tensor_cores;
    peak_flops = solver::device_peak_flops(device, problem.precision, tensor_cores);
    peak_name = std::string(problem.precision == kernels::Precision::fp64 ? "FP64" : "FP32") +
                (tensor_cores ? " tensor-core peak" : " CUDA-core peak");
  } catch (const std::exception& e) {
    return std::string(" (bound not measured: ") + e.what() + ")";
  }
  if (bandwidth <= 0) return "";
  const solver::Roofline r =
      problem.coefficients
          ? solver::coefficient_roofline(
                problem.precision, static_cast<int>(problem.coefficients->sources.size()),
                bandwidth, problem.coefficients->has_faces() ? problem.dims : 0,
                backend.bytes_per_point_step())
          : solver::roofline(problem.stencil, problem.precision, backend.fusion_depth(), bandwidth,
                             peak_flops);
  if (r.fraction(achieved_gstencils) > 1.0) return "";
  return ": " + solver::describe(r, achieved_gstencils, peak_name);
#else
  (void)problem;
  return "";
#endif
}

std::string describe_wall_time(const WallTime& t, double total) {
  const double other = std::max(0.0, total - t.setup - t.stepping - t.files);
  const double writing = t.output + t.checkpoints;
  const double hidden = std::max(0.0, writing - t.waited);
  std::string writes = describe_writes("output", t.output, t.output_bytes);
  if (t.writes_checkpoints)
    writes += ", " + describe_writes("checkpoints", t.checkpoints, t.checkpoint_bytes);
  return fmt::format(
      "time: setup {:.3f} s, {} {:.3f} s, files {:.3f} s, other {:.3f} s; total {:.3f} s; {}; "
      "{:.3f} of {:.3f} s of writing hidden ({:.0f}%)",
      t.setup, t.stepping_name, t.stepping, t.files, other, total, writes, hidden, writing,
      writing > 0 ? 100.0 * hidden / writing : 0.0);
}

std::string describe_writer(const io::WriterActivity& a) {
  if (!a.busy) return "";
  const std::string file = std::filesystem::path(a.file).filename().string();
  const std::string queued = a.queued > 0 ? fmt::format(", {} more queued", a.queued) : "";
  if (a.bytes <= 0)
    return fmt::format("building {} ({}){}", file, format_seconds(a.seconds), queued);
  // Sizes in GB from 1 GB up, in MB below (a file of a few MB read "0.00 of 0.00 GB").
  const bool gb = a.bytes >= 1e9;
  const double unit = gb ? 1e9 : 1e6;
  const char* name = gb ? "GB" : "MB";
  if (a.bytes_done <= 0)
    return fmt::format("writing {} ({:.2f} {}){}", file, a.bytes / unit, name, queued);
  // The rate over the job so far, its building included: what the file costs the run.
  return fmt::format("writing {} ({:.2f} of {:.2f} {}, {:.3g} GB/s){}", file, a.bytes_done / unit,
                     a.bytes / unit, name, a.seconds > 0 ? a.bytes_done / 1e9 / a.seconds : 0.0,
                     queued);
}

std::string describe_solves(const solver::multigrid::ImplicitStepper::Timing& t) {
  return fmt::format(
             "multigrid: {} solve{}, {} iterations ({:.3g} per solve); solve {} in total, {} per "
             "solve; "
             "right-hand sides and the rest of the steps {}",
             t.solves, t.solves == 1 ? "" : "s", t.iterations,
             static_cast<double>(t.iterations) / static_cast<double>(t.solves),
             format_solve_seconds(t.solve_seconds),
             format_solve_seconds(t.solve_seconds / static_cast<double>(t.solves)),
             format_solve_seconds(std::max(0.0, t.step_seconds - t.solve_seconds))) +
         (t.split_steps > 0
              ? fmt::format("; {} step{} converged only in backward-Euler parts (the shortest "
                            "1/{:.0f} of a step)",
                            t.split_steps, t.split_steps == 1 ? "" : "s", 1.0 / t.shortest_part)
              : std::string());
}

std::string done_line(const solver::RunResult& result, const std::string& where,
                      const solver::multigrid::ImplicitStepper* implicit,
                      const solver::multigrid::SolveReport* steady,
                      const std::function<std::string()>& bound) {
  if (steady && implicit->timing().solves > 1) {
    // The outer iteration converged (it throws otherwise); the last linear solve's residual is
    // relative to its own right-hand side, and one that needed no iteration started at fp64's
    // rounding floor (an answer that had stopped moving), above the tolerance as it may be.
    const std::string last =
        steady->iterations == 0 && steady->at_floor
            ? fmt::format(
                  "needed no iteration: it started within fp64's rounding floor ({:.3g} "
                  "of its right-hand side, floor {:.3g})",
                  steady->final_residual(), steady->floor)
            : fmt::format("ended at {:.3g} of its right-hand side", steady->final_residual());
    return fmt::format(
        "done: steady state in {} outer iterations ({} multigrid iterations), converged: the "
        "last changed no node by more than 1e-10 of the largest temperature, and its linear "
        "solve {}; solves {} on {}",
        implicit->timing().solves, implicit->timing().iterations, last,
        format_solve_seconds(implicit->timing().solve_seconds), where);
  }
  if (steady) {
    // A solve that ended on the rounding floor, above the tolerance asked for, says so here
    // too: the solver's own line is info, which --quiet leaves out.
    const std::string floor =
        steady->at_floor ? fmt::format(
                               ", within the rounding floor of fp64 for these values ({:.3g}): "
                               "the tolerance {:.3g} is out of reach",
                               steady->floor, steady->tolerance)
                         : std::string();
    return fmt::format(
        "done: steady state in {} iteration{} to relative residual {:.3g} (from {:.3g}){}, "
        "solve {} on {}",
        steady->iterations, steady->iterations == 1 ? "" : "s", steady->final_residual(),
        steady->residuals.empty() ? 0.0 : steady->residuals.front(), floor,
        format_solve_seconds(implicit->timing().solve_seconds), where);
  }
  const std::string steps = fmt::format("done: {} steps to step {} (t = {:.6g}) in {} wall",
                                        result.last_step - result.first_step, result.last_step,
                                        result.time, format_seconds(result.wall_seconds));
  if (implicit)
    return fmt::format("{} on {}: {} multigrid iterations, {} solving", steps, where,
                       implicit->timing().iterations,
                       format_solve_seconds(implicit->timing().solve_seconds));
  return fmt::format("{}, {:.3f} GStencil/s on {}{}", steps, result.gstencils_per_second, where,
                     bound());
}

bool add_heat_flow_lines(std::vector<std::string>& lines, const solver::Case& c,
                         const std::string& when, const solver::HeatFlowReport& flows,
                         double resolution) {
  // Without materials the shorthand's coefficients (k = physics.alpha, rho c_p = 1) make the
  // rates u times a volume per unit time, not watts.
  const char* unit = c.grid.dims == 3 ? "W" : c.grid.dims == 2 ? "W per metre of depth" : "W/m^2";
  if (c.materials.empty())
    unit = c.grid.dims == 3   ? "u times volume per unit time: k = physics.alpha, rho c_p = 1"
           : c.grid.dims == 2 ? "u times area per unit time, per unit of depth: k = physics.alpha, "
                                "rho c_p = 1"
                              : "u times length per unit time, per unit of cross-section: k = "
                                "physics.alpha, rho c_p = 1";
  lines.push_back(fmt::format("heat flows into the body {} ({}):", when, unit));
  for (const solver::HeatFlow& f : flows.flows)
    lines.push_back(fmt::format("  {}: {:.6g}", f.what, f.rate));
  double largest = 0.0;  // every rate's, the storage's among them
  for (const solver::HeatFlow& f : flows.flows) largest = std::max(largest, std::abs(f.rate));
  if (resolution > 0.0 && largest <= resolution) {
    lines.push_back(fmt::format(
        "  imbalance: {:.3g} (every rate is within what the field resolves, about {:.2g} here: no "
        "heat crosses the body)",
        flows.imbalance, resolution));
    return true;
  }
  lines.push_back(
      fmt::format("  imbalance: {:.3g} ({:.2g} of the largest flow)", flows.imbalance,
                  flows.largest > 0.0 ? std::abs(flows.imbalance) / flows.largest : 0.0));
  return false;
}

}  // namespace heatsim::run
