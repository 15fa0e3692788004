#include "tune_cache.hpp"

#include <cstdlib>

namespace heatsim::solver {

void merge_entry(TuneCache& cache, const TuneEntry& e) {
  for (TuneEntry& old : cache.entries)
    if (old.dims == e.dims && old.box == e.box && old.radius == e.radius &&
        old.precision == e.precision && old.backend == e.backend &&
        old.fusion_depth == e.fusion_depth) {
      old = e;
      return;
    }
  cache.entries.push_back(e);
}

std::vector<const TuneEntry*> class_entries(const TuneCache& cache,
                                            const kernels::StencilProblem& p) {
  const bool box = !p.stencil.is_star();
  int best_radius = -1;
  for (const TuneEntry& e : cache.entries) {
    if (e.dims != p.dims || e.box != box || e.precision != p.precision) continue;
    const int d = std::abs(e.radius - p.stencil.radius);
    const int best = std::abs(best_radius - p.stencil.radius);
    if (best_radius < 0 || d < best || (d == best && e.radius > best_radius)) best_radius = e.radius;
  }
  std::vector<const TuneEntry*> out;
  for (const TuneEntry& e : cache.entries)
    if (e.dims == p.dims && e.box == box && e.precision == p.precision && e.radius == best_radius)
      out.push_back(&e);
  return out;
}

}  // namespace heatsim::solver
