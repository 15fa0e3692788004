// `heatsim bench --tune`: the measured sweep behind `auto`. For every suite shape (or --shape),
// every available GPU backend (or --backend) and every distinct fusion depth it takes (asked
// for 1, 2, ... up to Capabilities::max_fusion_depth; the depth it reports after setup is what
// counts, and the first time it reports less than asked the deeper ones are skipped): the
// GStencil/s at a size small enough to keep the sweep short (1D 2^24, 2D 4096^2, 3D 256^3
// points: still several times the L2 cache of current GPUs), median of the repeats after a
// warm-up, device time from CUDA events. Printed beside the model's prediction, and written
// to the device's tuning cache (io/tune_cache_file.hpp), merged with what it held for other
// classes. No correctness check here: `heatsim bench` and the GPU tests do that.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <stdexcept>

#include "bench.hpp"
#include "bench_suite.hpp"
#include "commands.hpp"
#include "kernels/registry.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "io/tune_cache_file.hpp"
#include "kernels/cuda/timing.hpp"
#include "run/auto_choice.hpp"
#include "solver/perf_model.hpp"
#endif

namespace heatsim::app {
namespace {

#ifdef HEATSIM_HAVE_CUDA
std::int64_t tune_size(int dims) { return dims == 1 ? (std::int64_t{1} << 24) : dims == 2 ? 4096 : 256; }

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

struct TuneRow {
  std::string shape, backend, grid;
  int fusion = 1;
  double gstencils = 0.0;
  double predicted = 0.0;  // the model's; 0: no model
  std::string note;        // why it did not run
};
#endif

}  // namespace

int run_tune(const BenchOptions& options) {
  const std::vector<kernels::DeviceInfo> devices = kernels::cuda_devices();
  if (devices.empty()) {
    std::printf("heatsim bench --tune: no CUDA GPU is visible%s, so there is nothing to tune: "
                "without a GPU `auto` runs the cpu backend. No tuning cache written.\n",
                kernels::cuda_compiled() ? "" : " (this build has no CUDA support)");
    std::fflush(stdout);
    return kExitFailure;
  }
#ifndef HEATSIM_HAVE_CUDA
  (void)options;
  return kExitFailure;  // unreachable: without CUDA no device is listed
#else
  const kernels::Precision precision =
      options.precision == "fp32" ? kernels::Precision::fp32 : kernels::Precision::fp64;
  const kernels::DeviceInfo& device = devices.front();

  std::vector<BenchShape> shapes;
  std::string error;
  if (!select_shapes(options.shapes, shapes, error)) {
    spdlog::error("bench --tune: {}", error);
    return kExitBadInput;
  }
  // GPU backends only: the cache describes the GPU; without one `auto` has nothing to choose.
  std::vector<std::string> backends;
  for (const auto& name : options.backends) {
    const kernels::BackendEntry* e = kernels::find_backend(name);
    if (!e) {
      spdlog::error("bench --tune: unknown backend '{}'{}", name, kernels::unknown_backend_note());
      return kExitBadInput;
    }
    if (!e->needs_gpu) {
      spdlog::error("bench --tune: '{}' is not a GPU backend; the tuning cache is the GPU's", name);
      return kExitBadInput;
    }
    backends.push_back(name);
  }
  if (backends.empty())
    for (const auto& e : kernels::backend_registry())
      if (e.needs_gpu) backends.push_back(e.name);

  std::string path;
  try {
    path = io::tune_cache_path(device);
  } catch (const std::exception& e) {
    spdlog::error("bench --tune: {}", e.what());
    return kExitFailure;
  }
  // What the cache held for other classes (or from a --shape/--backend subset) stays.
  solver::TuneCache cache;
  const io::LoadedTuneCache old = io::load_tune_cache(path);
  if (!old.warning.empty()) spdlog::warn("{}", old.warning);
  if (old.cache && old.cache->device == device.name) cache = *old.cache;
  cache.device = device.name;
  cache.compute_capability = std::to_string(device.major) + "." + std::to_string(device.minor);
  cache.bandwidth = kernels::cuda::copy_bandwidth(std::size_t{1} << 30, 9);
  const solver::DeviceRates rates = run::device_rates(device, precision, cache.bandwidth);
  const std::string date = today();

  std::printf("heatsim bench --tune: %s (sm_%d%d), %s, copy bandwidth %.0f GB/s; %s\n",
              device.name.c_str(), device.major, device.minor, kernels::to_string(precision),
              cache.bandwidth / 1e9, path.c_str());
  std::fflush(stdout);

  std::vector<TuneRow> rows;
  bool failed = false;
  for (const BenchShape& shape : shapes) {
    const std::int64_t size = options.size > 0 ? options.size : tune_size(shape.dims);
    const std::array<std::int64_t, 3> n = bench_grid(shape, size);
    kernels::StencilProblem problem = make_bench_problem(shape, n, precision);
    const std::string grid = grid_label(shape.dims, n);
    std::vector<double> u0;
    for (const std::string& name : backends) {
      TuneRow row;
      row.shape = shape.name;
      row.backend = name;
      row.grid = grid;
      try {
        auto backend = kernels::create_backend(name, precision);
        const std::string why = backend->unsupported_reason(problem);
        if (!why.empty()) {
          row.note = why;
          rows.push_back(row);
          continue;
        }
        if (u0.empty()) u0 = random_field(problem.points(), 42);
        const auto model = solver::backend_model(name, true);
        const int max_depth = std::max(1, backend->capabilities().max_fusion_depth);
        std::set<int> done;
        for (int asked = 1; asked <= max_depth; ++asked) {
          problem.fusion_depth = asked;
          backend = kernels::create_backend(name, precision);  // a fresh one per depth
          backend->setup(problem);
          const int k = backend->fusion_depth();
          if (done.count(k)) {
            if (k < asked) break;  // lowered: every deeper request is lowered too
            continue;
          }
          done.insert(k);
          backend->upload(u0);
          std::int64_t steps = options.steps > 0 ? options.steps : 24;
          steps = (steps + k - 1) / k * k;  // whole passes, so each repeat starts on one
          std::int64_t step0 = 0;
          time_advance_ms(*backend, steps, step0);  // warm-up
          step0 += steps;
          std::vector<double> ms;
          for (int r = 0; r < options.repeats; ++r) {
            ms.push_back(time_advance_ms(*backend, steps, step0));
            step0 += steps;
          }
          std::sort(ms.begin(), ms.end());
          TuneRow measured = row;
          measured.fusion = k;
          measured.gstencils = static_cast<double>(problem.points()) * static_cast<double>(steps) /
                               (ms[ms.size() / 2] * 1e-3) / 1e9;
          if (model) measured.predicted = solver::predict(problem, *model, k, rates).gstencils;
          rows.push_back(measured);
          spdlog::info("{} {} k={}: {:.2f} GStencil/s", shape.name, name, k, measured.gstencils);

          solver::TuneEntry e;
          e.shape = shape.name;
          e.dims = shape.dims;
          e.box = !problem.stencil.is_star();
          e.radius = problem.stencil.radius;
          e.precision = precision;
          e.backend = name;
          e.fusion_depth = k;
          e.gstencils = measured.gstencils;
          e.size = size;
          e.date = date;
          solver::merge_entry(cache, e);
          if (k < asked) break;
        }
      } catch (const std::exception& e) {
        row.note = e.what();
        rows.push_back(row);
        failed = true;
        spdlog::warn("{} {}: {}", shape.name, name, e.what());
      }
    }
  }

  std::printf("\n%-11s %-16s %2s %-14s %11s %9s %s\n", "shape", "backend", "k", "grid",
              "GStencil/s", "model", "");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TuneRow& r = rows[i];
    if (!r.note.empty()) {
      std::printf("%-11s %-16s %2s %-14s %s\n", r.shape.c_str(), r.backend.c_str(), "-",
                  r.grid.c_str(), ("not run: " + r.note).substr(0, 60).c_str());
      continue;
    }
    double best = 0.0;  // the shape's fastest
    for (const TuneRow& o : rows)
      if (o.shape == r.shape && o.note.empty()) best = std::max(best, o.gstencils);
    std::printf("%-11s %-16s %2d %-14s %11.2f %9s %s\n", r.shape.c_str(), r.backend.c_str(),
                r.fusion, r.grid.c_str(), r.gstencils,
                r.predicted > 0 ? std::to_string(static_cast<long long>(r.predicted + 0.5)).c_str()
                                : "-",
                r.gstencils == best ? "<- fastest" : "");
  }
  try {
    io::write_tune_cache(path, cache);
  } catch (const std::exception& e) {
    spdlog::error("bench --tune: {}", e.what());
    return kExitFailure;
  }
  std::printf("tuning cache written to %s (%zu entries)\n", path.c_str(), cache.entries.size());
  std::fflush(stdout);
  return failed ? kExitFailure : kExitOk;
#endif
}

}  // namespace heatsim::app
