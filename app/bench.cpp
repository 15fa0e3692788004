// `heatsim bench`: the eight-shape stencil suite, and the varying-coefficient Heat-3D-mat row
// (two materials), on every available backend. For each shape and
// backend: GStencil/s (points x steps / seconds, median of repeats after a warm-up, device
// time from CUDA events on GPUs), the fraction of the memory-bandwidth limit
// bandwidth / (2 sizeof(T)) (a material row: its own bytes per point, bytes_per_point)
// with the bandwidth measured in the same run (device-to-device
// copy), and a correctness check against the CPU backend at a small size. Random data,
// Dirichlet-zero faces, S = I + 0.9 dt_max L. Every backend runs one step per pass; backends
// that fuse steps get a second row at the fusion depth asked for (--fusion, default auto),
// with GStencil/s counting every step and the FP64 FLOP/s of the fused stencil they apply
// (2 flops per nonzero weight of S^k per point and pass, divided by k per step).
#include "bench.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "bench_suite.hpp"
#include "commands.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"
#include "solver/stencil.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/timing.hpp"
#endif

namespace heatsim::app {
namespace {

using kernels::Precision;
using kernels::StencilProblem;

struct Row {
  std::string shape, backend;
  int fusion = 1;            // steps per pass the backend used
  double gflops = -1.0;      // FP64/FP32 GFLOP/s of the applied stencil; < 0 when not counted
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::int64_t steps = 0;
  double median_ms = 0.0;
  double gstencils = 0.0;
  double fraction = -1.0;  // of the bandwidth limit; < 0 when not measured
  std::size_t bytes = 0;   // per point and step: the row's bandwidth limit is bandwidth / bytes
  std::string check;       // pass / FAIL / ref / -
  double check_error = -1.0;
  std::string note;        // why a row did not run
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

}  // namespace

int run_bench(const BenchOptions& options) {
  const Precision precision = options.precision == "fp32" ? Precision::fp32 : Precision::fp64;
  if (options.precision != "fp32" && options.precision != "fp64") {
    spdlog::error("bench: precision must be fp64 or fp32, not '{}'", options.precision);
    return kExitBadInput;
  }
  if (options.size < 0 || options.steps < 0 || options.repeats < 1) {
    spdlog::error("bench: --size and --steps must be >= 0 and --repeats >= 1");
    return kExitBadInput;
  }
  if (options.tune) return run_tune(options);

  int fusion_request = 0;  // 0: auto
  if (options.fusion != "auto") {
    try {
      fusion_request = std::stoi(options.fusion);
    } catch (const std::exception&) {
      fusion_request = -1;
    }
    if (fusion_request < 1 || fusion_request > 16) {
      spdlog::error("bench: --fusion must be auto or 1..16, not '{}'", options.fusion);
      return kExitBadInput;
    }
  }

  // Shapes: the whole suite, or the ones named (case-insensitive).
  std::vector<BenchShape> shapes;
  std::string shape_error;
  if (!select_shapes(options.shapes, shapes, shape_error, true)) {
    spdlog::error("bench: {}", shape_error);
    return kExitBadInput;
  }

  // Backends: the ones named, or every available one. A host backend (cpu) runs by default
  // only where the grid is small (up to 2^22 points); name one to run host backends at any size.
  const bool have_gpu = !kernels::cuda_devices().empty();
  std::vector<std::string> backends = options.backends;
  bool host_asked = false;
  for (const auto& b : backends) {
    const kernels::BackendEntry* e = kernels::find_backend(b);
    if (!e) {
      spdlog::error("bench: unknown backend '{}'{}", b, kernels::unknown_backend_note());
      return kExitBadInput;
    }
    host_asked = host_asked || !e->needs_gpu;
    if (e->needs_gpu && !have_gpu) {
      spdlog::error("bench: backend '{}' needs a CUDA GPU, and none is visible", b);
      return kExitFailure;
    }
  }
  if (backends.empty())
    for (const auto& e : kernels::backend_registry())
      if (!e.needs_gpu || have_gpu) backends.push_back(e.name);

  std::string device = "cpu only";
  double bandwidth = 0.0;  // bytes/s
#ifdef HEATSIM_HAVE_CUDA
  if (have_gpu) {
    device = kernels::cuda_devices().front().name;
    bandwidth = kernels::cuda::copy_bandwidth(std::size_t{1} << 30, 9);
  }
#endif
  const std::size_t value_bytes = precision == Precision::fp64 ? 8 : 4;
  const double limit_gst = bandwidth / (2.0 * static_cast<double>(value_bytes)) / 1e9;
  if (bandwidth > 0.0)
    std::printf("heatsim bench: %s, %s, device copy bandwidth %.0f GB/s -> limit %.1f GStencil/s\n",
                device.c_str(), kernels::to_string(precision), bandwidth / 1e9, limit_gst);
  else  // a copy timed on the host measures its caches as much as its memory: no bound
    std::printf("heatsim bench: %s, %s, no bandwidth bound (measured on a GPU only)\n",
                device.c_str(), kernels::to_string(precision));
  std::fflush(stdout);

  // The material rows move more than u per point (a material byte, or dt/C and the faces): their
  // own limit.
  for (const BenchShape& shape : shapes)
    if (shape.materials && bandwidth > 0.0) {
      const std::size_t bytes = bytes_per_point(shape, precision);
      std::printf("heatsim bench: %s reads %s too, %zu bytes per point -> limit %.1f "
                  "GStencil/s\n",
                  shape.name.c_str(),
                  shape.temperature ? "dt/C and the faces, and re-evaluates the faces and the "
                                      "enthalpy"
                  : shape.faces     ? "each node's material and each face's conductance (bytes)"
                                    : "each node's material (a byte)",
                  bytes, bandwidth / static_cast<double>(bytes) / 1e9);
    }
  std::fflush(stdout);

  std::vector<Row> rows;
  bool failed = false;
  for (const BenchShape& shape : shapes) {
    const std::size_t shape_bytes = bytes_per_point(shape, precision);
    const double shape_limit = bandwidth / static_cast<double>(shape_bytes) / 1e9;
    const std::int64_t size = options.size > 0 ? options.size : default_size(shape.dims);
    const std::array<std::int64_t, 3> n = bench_grid(shape, size);
    const StencilProblem problem = make_bench_problem(shape, n, precision);
    const StencilProblem small = make_bench_problem(shape, check_size(shape.dims), precision);
    const std::vector<double> small_u0 = random_field(small.points(), 7);
    const std::int64_t check_steps = 12;  // covers fused passes of depth up to 4 after the first
    std::vector<double> reference;  // cpu result on the small grid
    {
      auto cpu = kernels::make_cpu_backend(precision);
      cpu->setup(small);
      cpu->upload(small_u0);
      cpu->advance(check_steps, 0);
      cpu->download(reference);
    }
    // Each backend at one step per pass, and fusing backends once more at the asked depth.
    std::vector<std::pair<std::string, int>> variants;
    for (const std::string& name : backends) {
      variants.push_back({name, 1});
      const auto caps = kernels::create_backend(name, precision)->capabilities();
      // A material row is fused only by a backend that fuses coefficient fields.
      if (caps.max_fusion_depth > 1 && fusion_request != 1 &&
          (!shape.materials || caps.fuses_coefficients))
        variants.push_back({name, fusion_request});
    }
    std::vector<double> u0;  // the big field, made once per shape when needed
    for (const auto& [name, fusion] : variants) {
      Row row;
      row.shape = shape.name;
      row.backend = name;
      row.dims = shape.dims;
      row.n = n;
      row.bytes = shape_bytes;
      const kernels::BackendEntry* entry = kernels::find_backend(name);
      const bool on_host = entry && !entry->needs_gpu;
      if (on_host && !host_asked && problem.points() > (std::int64_t{1} << 22)) {
        // Without a GPU said in the table, so that the bench is not an empty table.
        if (!have_gpu) {
          row.fusion = fusion;
          row.note = "over 2^22 points: --backend " + name + ", or --size";
          rows.push_back(row);
        }
        continue;
      }
      StencilProblem fused_small = small, fused_problem = problem;
      fused_small.fusion_depth = fused_problem.fusion_depth = fusion;
      try {
        auto backend = kernels::create_backend(name, precision);
        const std::string why = backend->unsupported_reason(problem);
        if (!why.empty()) {
          row.note = why;
          rows.push_back(row);
          continue;
        }
        // Correctness at the small size.
        if (on_host) {
          row.check = "ref";
        } else {
          backend->setup(fused_small);
          backend->upload(small_u0);
          backend->advance(check_steps, 0);
          std::vector<double> got;
          backend->download(got);
          double scale = 0.0, err = 0.0;
          for (double v : reference) scale = std::max(scale, std::abs(v));
          for (std::size_t i = 0; i < got.size() && i < reference.size(); ++i)
            err = std::max(err, std::isfinite(got[i]) ? std::abs(got[i] - reference[i]) : INFINITY);
          row.check_error = err / std::max(scale, 1e-300);
          const double tol = precision == Precision::fp64 ? 1e-12 : 1e-5;
          const bool ok = got.size() == reference.size() && row.check_error <= tol;
          row.check = ok ? "pass" : "FAIL";
          failed = failed || !ok;
        }
        // Throughput at the bench size.
        if (u0.empty()) u0 = random_field(problem.points(), 42);
        backend->setup(fused_problem);
        backend->upload(u0);
        row.fusion = backend->fusion_depth();
        if (fusion != 1 && row.fusion == 1) continue;  // takes no fusion here: the row above
        // A whole number of passes per repeat (24 divides by 1, 2, 3, 4), so every timed
        // repeat starts on a pass boundary.
        row.steps = options.steps > 0 ? options.steps : (on_host ? 3 : 24);
        if (row.fusion > 1) row.steps = (row.steps + row.fusion - 1) / row.fusion * row.fusion;
        std::int64_t step0 = 0;
        time_advance_ms(*backend, row.steps, step0);  // warm-up
        step0 += row.steps;
        std::vector<double> ms;
        for (int r = 0; r < options.repeats; ++r) {
          ms.push_back(time_advance_ms(*backend, row.steps, step0));
          step0 += row.steps;
        }
        std::sort(ms.begin(), ms.end());
        row.median_ms = ms[ms.size() / 2];
        row.gstencils = static_cast<double>(problem.points()) * static_cast<double>(row.steps) /
                        (row.median_ms * 1e-3) / 1e9;
        if (!on_host && shape_limit > 0.0) row.fraction = row.gstencils / shape_limit;
        if (!shape.materials) {  // the flops of a constant stencil; a material row: not counted
          const double nnz =
              static_cast<double>(solver::stencil_power(problem.stencil, row.fusion).nonzeros());
          row.gflops = row.gstencils * 2.0 * nnz / row.fusion;
        }
      } catch (const std::exception& e) {
        row.note = e.what();
        row.check = row.check.empty() ? "FAIL" : row.check;
        failed = true;
      }
      rows.push_back(row);
      const Row& r = rows.back();
      if (r.note.empty())
        spdlog::info("{} {} (fusion {}): {:.2f} GStencil/s, check {}", r.shape, r.backend, r.fusion,
                     r.gstencils, r.check);
      else
        spdlog::warn("{} {}: {}", r.shape, r.backend, r.note);
    }
  }

  // Table.
  std::printf("\n%-11s %-16s %2s %-14s %6s %9s %11s %8s %9s %7s\n", "shape", "backend", "k",
              "grid", "steps", "ms/step", "GStencil/s", "%limit", "GFLOP/s", "check");
  for (const Row& r : rows) {
    const std::string grid = grid_label(r.dims, r.n);
    if (!r.note.empty()) {
      std::printf("%-11s %-16s %2s %-14s %s\n", r.shape.c_str(), r.backend.c_str(), "-",
                  grid.c_str(), ("not run: " + r.note).substr(0, 60).c_str());
      continue;
    }
    std::printf("%-11s %-16s %2d %-14s %6lld %9s %11s %8s %9s %7s\n", r.shape.c_str(),
                r.backend.c_str(), r.fusion, grid.c_str(), static_cast<long long>(r.steps),
                fmt("%.3f", r.median_ms / static_cast<double>(r.steps)).c_str(),
                fmt("%.2f", r.gstencils).c_str(),
                r.fraction >= 0 ? fmt("%.1f%%", 100.0 * r.fraction).c_str() : "-",
                r.gflops >= 0 ? fmt("%.0f", r.gflops).c_str() : "-", r.check.c_str());
  }
  std::fflush(stdout);

  // JSON.
  std::ostringstream js;
  js << "{\n  \"device\": \"" << json_escape(device) << "\",\n  \"precision\": \""
     << kernels::to_string(precision) << "\",\n  \"copy_bandwidth_GBps\": " << bandwidth / 1e9
     << ",\n  \"limit_gstencil_per_s\": " << limit_gst << ",\n  \"repeats\": " << options.repeats
     << ",\n  \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << (i ? "," : "") << "\n    {\"shape\": \"" << r.shape << "\", \"backend\": \"" << r.backend
       << "\", \"fusion\": " << r.fusion << ", \"gflop_per_s\": " << r.gflops
       << ", \"dims\": " << r.dims << ", \"n\": [" << r.n[0] << ", " << r.n[1] << ", " << r.n[2]
       << "], \"steps\": " << r.steps << ", \"median_ms\": " << r.median_ms
       << ", \"gstencil_per_s\": " << r.gstencils << ", \"bytes_per_point\": " << r.bytes
       << ", \"bandwidth_fraction\": ";
    if (r.fraction >= 0) js << r.fraction; else js << "null";
    js << ", \"check\": \"" << (r.check.empty() ? "-" : r.check) << "\", \"check_error\": ";
    if (r.check_error >= 0 && std::isfinite(r.check_error)) js << r.check_error; else js << "null";
    js << ", \"note\": \"" << json_escape(r.note) << "\"}";
  }
  js << "\n  ]\n}\n";
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    out << js.str();
    if (!out) {
      spdlog::error("bench: cannot write {}", options.json_path);
      return kExitFailure;
    }
    std::printf("results written to %s\n", options.json_path.c_str());
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace heatsim::app
