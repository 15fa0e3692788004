// What `heatsim bench --tune` measured on one device, as plain data: GStencil/s per stencil
// class (dimensions, star or box, radius, precision), backend and fusion depth. `auto` takes a
// backend's rate from here when the problem's class was measured (io/tune_cache_file.hpp
// reads and writes the file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim::solver {

struct TuneEntry {
  std::string shape;  // the suite shape measured ("Heat-2D"); informative
  int dims = 1;
  bool box = false;
  int radius = 1;
  kernels::Precision precision = kernels::Precision::fp64;
  std::string backend;
  int fusion_depth = 1;  // the depth the backend used (Backend::fusion_depth() after setup)
  double gstencils = 0.0;
  std::int64_t size = 0;  // points per axis measured
  std::string date;       // YYYY-MM-DD
};

struct TuneCache {
  std::string device;          // cudaDeviceProp::name
  std::string compute_capability;  // "9.0"
  double bandwidth = 0.0;      // copy bandwidth measured by the tune run, bytes/s
  std::vector<TuneEntry> entries;
};

// Adds `e`, replacing an entry of the same class, backend and fusion depth.
void merge_entry(TuneCache& cache, const TuneEntry& e);

// The entries of the problem's class: same dimensions, star/box and precision, at the nearest
// measured radius (the larger on a tie), as the built-in table of measured rates does. Empty
// when the class was not measured.
std::vector<const TuneEntry*> class_entries(const TuneCache& cache,
                                            const kernels::StencilProblem& problem);

}  // namespace heatsim::solver
