#include "backend_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace heatsim::solver {
namespace {

enum class Source { cache, model, table, none };

struct Candidate {
  const kernels::BackendEntry* entry = nullptr;
  std::size_t order = 0;  // registry position
  int depth = 1;          // fusion depth rated (0: the backend's own `auto`)
  double rate = -1.0;     // GStencil/s; < 0: not known
  Source source = Source::none;
};

const char* source_word(Source s) {
  switch (s) {
    case Source::cache: return "measured";
    case Source::model: return "model";
    case Source::table: return "table";
    case Source::none: break;
  }
  return "no rate";
}

std::string depth_text(int depth) { return depth == 0 ? "auto" : std::to_string(depth); }

std::string rate_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, v < 100 ? "%.1f" : "%.0f", v);
  return buf;
}

// A problem's coefficient_traffic per backend capabilities, found once for backends that
// compact alike (the classes are a pass over every node).
class TrafficMemo {
 public:
  std::optional<kernels::CoefficientTraffic> of(const kernels::StencilProblem& p,
                                                const kernels::Capabilities& caps) {
    for (const Found& f : found_)
      if (f.materials == caps.compact_materials && f.faces == caps.compact_faces &&
          f.transfer == caps.compact_transfer)
        return f.traffic;
    found_.push_back({caps.compact_materials, caps.compact_faces, caps.compact_transfer,
                      kernels::coefficient_traffic(p, caps)});
    return found_.back().traffic;
  }

 private:
  struct Found {
    bool materials, faces, transfer;
    std::optional<kernels::CoefficientTraffic> traffic;
  };
  std::vector<Found> found_;
};

// The candidates of one backend (see backend_choice.hpp for the sources).
std::vector<Candidate> rate_backend(const kernels::BackendEntry& entry, std::size_t order,
                                    const kernels::Backend& backend,
                                    const kernels::StencilProblem& p, const ChoiceContext& ctx,
                                    TrafficMemo& traffic_of) {
  std::vector<Candidate> out;
  const int asked = p.fusion_depth;  // 0: auto
  Candidate c;
  c.entry = &entry;
  c.order = order;

  const auto model = backend.capabilities().gpu ? backend_model(entry) : std::nullopt;
  // A varying-coefficient problem on a backend measured on its sweep's layout: that rate, at
  // one step per pass (the cache's and the table's rates are the constant stencil's).
  if (model && p.coefficients && ctx.device.bandwidth > 0)
    if (const auto traffic = traffic_of.of(p, backend.capabilities()))
      if (const double rate = coefficient_rate(*model, *traffic, ctx.device); rate > 0) {
        c.depth = 1;
        c.rate = rate;
        c.source = Source::model;
        out.push_back(c);
        return out;
      }

  if (ctx.cache) {
    std::vector<const TuneEntry*> measured;
    for (const TuneEntry* e : class_entries(*ctx.cache, p))
      if (e->backend == entry.name) measured.push_back(e);
    if (asked > 0) {
      // The backend lowers k to a depth it takes; the deepest measured depth <= k is that one.
      const TuneEntry* best = nullptr;
      for (const TuneEntry* e : measured)
        if (e->fusion_depth <= asked && (!best || e->fusion_depth > best->fusion_depth)) best = e;
      measured.clear();
      if (best) measured.push_back(best);
    }
    std::sort(measured.begin(), measured.end(), [](const TuneEntry* a, const TuneEntry* b) {
      return a->fusion_depth < b->fusion_depth;
    });
    for (const TuneEntry* e : measured) {
      c.depth = e->fusion_depth;
      c.rate = e->gstencils;
      c.source = Source::cache;
      out.push_back(c);
    }
    if (!out.empty()) return out;
  }

  if (model && ctx.device.bandwidth > 0) {
    // The model knows single coefficient steps only (blocked coefficient passes measure slower
    // than one step per pass): a coefficient problem is rated at depth 1.
    int limit = p.coefficients ? 1 : model_fusion_limit(backend.capabilities(), p);
    if (const int own = model_depth_limit(*model, p); own > 0) limit = std::min(limit, own);
    const int first = asked > 0 ? std::min(asked, limit) : 1;
    const int last = asked > 0 ? first : limit;
    for (int k = first; k <= last; ++k) {
      c.depth = k;
      c.rate = predict(p, *model, k, ctx.device).gstencils;
      c.source = Source::model;
      out.push_back(c);
    }
    return out;
  }

  c.depth = asked;
  if (entry.expected_rate) {
    c.rate = entry.expected_rate(p);
    c.source = Source::table;
  }
  out.push_back(c);
  return out;
}

// Whether `fusion: auto` on this candidate runs at the backend's own depth rather than the one
// rated (a model that only ranks the backend: BackendModel::own_depth).
bool runs_own_depth(const Candidate& c) {
  if (c.source != Source::model) return false;
  const auto model = backend_model(*c.entry);
  return model && model->own_depth;
}

// Highest rate first; unknown rates last; registry order, then the smaller depth, on ties.
void rank(std::vector<Candidate>& cs) {
  std::stable_sort(cs.begin(), cs.end(), [](const Candidate& a, const Candidate& b) {
    if (a.rate != b.rate) return a.rate > b.rate;
    if (a.order != b.order) return a.order < b.order;
    return a.depth < b.depth;
  });
}

std::string where(const Candidate& c, const ChoiceContext& ctx) {
  switch (c.source) {
    case Source::cache: return "measured, tuning cache " + ctx.cache_path;
    case Source::model: {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "performance model: %.0f GB/s copy bandwidth, %.3g/%.3g TFLOP/s CUDA-core/"
                    "tensor-core peak",
                    ctx.device.bandwidth / 1e9, ctx.device.core_peak_flops / 1e12,
                    ctx.device.tensor_peak_flops / 1e12);
      return buf;
    }
    case Source::table: return "built-in table measured on an H100";
    case Source::none: break;
  }
  return "no rate";
}

// "its own fusion depth (the model's best: k=4, 361 GStencil/s, performance model: ...)": why a
// candidate that runs_own_depth() takes no depth of the model's.
std::string own_depth_text(const Candidate& c, const ChoiceContext& ctx) {
  return "its own fusion depth (the model's best: k=" + std::to_string(c.depth) + ", " +
         rate_text(c.rate) + " GStencil/s, " + where(c, ctx) + ")";
}

// "register-tiling k=3 461 measured, convstencil k=4 450 model": each backend's best
// candidate, best first, at most `limit` of them.
std::string top_candidates(const std::vector<Candidate>& ranked, std::size_t limit) {
  std::string s;
  std::vector<const kernels::BackendEntry*> seen;
  for (const Candidate& c : ranked) {
    if (c.rate < 0 || std::find(seen.begin(), seen.end(), c.entry) != seen.end()) continue;
    if (seen.size() == limit) break;
    seen.push_back(c.entry);
    s += (s.empty() ? "" : ", ") + c.entry->name + " k=" + depth_text(c.depth) + " " +
         rate_text(c.rate) + " " + source_word(c.source);
  }
  return s;
}

}  // namespace

ChoiceContext default_choice_context() {
  ChoiceContext ctx;
  ctx.have_gpu = !kernels::cuda_devices().empty();
  return ctx;
}

BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem) {
  return choose_backend(requested, problem, default_choice_context());
}

BackendChoice choose_backend(const std::string& requested, const kernels::StencilProblem& problem,
                             const ChoiceContext& ctx,
                             const std::vector<kernels::BackendEntry>& registry) {
  BackendChoice choice;
  choice.fusion_depth = problem.fusion_depth;

  if (requested != "auto") {
    const kernels::BackendEntry* entry = nullptr;
    std::size_t order = 0;
    for (std::size_t i = 0; i < registry.size(); ++i)
      if (registry[i].name == requested) {
        entry = &registry[i];
        order = i;
      }
    if (!entry) {
      std::string known;
      for (const auto& e : registry) known += (known.empty() ? "" : ", ") + e.name;
      throw std::invalid_argument("backend: unknown backend '" + requested + "' (compiled: " +
                                  known + ", or auto)" + kernels::unknown_backend_note());
    }
    if (entry->needs_gpu && !ctx.have_gpu)
      throw std::runtime_error("backend '" + requested + "' needs a CUDA GPU, and none is visible" +
                               (kernels::cuda_compiled() ? "" : " (this build has no CUDA support)"));
    choice.backend = entry->create(problem.precision);
    const std::string why = choice.backend->unsupported_reason(problem);
    if (!why.empty())
      throw std::invalid_argument("backend: '" + requested + "' cannot run this case: " + why);
    choice.name = requested;
    choice.reason = "requested";
    if (problem.fusion_depth == 0) {
      // `fusion: auto` on a named backend: its best depth where a rate says which.
      TrafficMemo traffic;
      std::vector<Candidate> cs =
          rate_backend(*entry, order, *choice.backend, problem, ctx, traffic);
      rank(cs);
      const Candidate& best = cs.front();
      if (best.rate >= 0 && runs_own_depth(best)) {
        choice.fusion_depth = 0;
        choice.reason += "; " + own_depth_text(best, ctx);
      } else if (best.rate >= 0 && (best.source == Source::cache || best.source == Source::model)) {
        choice.fusion_depth = best.depth;
        choice.reason += "; fusion depth " + std::to_string(best.depth) + " (" +
                         rate_text(best.rate) + " GStencil/s, " + where(best, ctx) + ")";
      }
    }
    return choice;
  }

  // A grid of fewer than kSmallGridPoints nodes: a host backend where one runs the problem.
  if (ctx.have_gpu && problem.points() < kSmallGridPoints)
    for (const kernels::BackendEntry& entry : registry) {
      if (entry.needs_gpu) continue;
      auto backend = entry.create(problem.precision);
      if (!backend->unsupported_reason(problem).empty()) continue;
      choice.backend = std::move(backend);
      choice.name = entry.name;
      choice.reason = "auto: " + entry.name + ", " + std::to_string(problem.points()) +
                      " nodes: below " + std::to_string(kSmallGridPoints) +
                      " a GPU's launches take longer than the host's whole step";
      return choice;
    }

  std::string skipped;
  std::vector<Candidate> candidates;
  TrafficMemo traffic;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const kernels::BackendEntry& entry = registry[i];
    if (entry.needs_gpu && !ctx.have_gpu) {
      skipped += " " + entry.name + " (no GPU);";
      continue;
    }
    const auto backend = entry.create(problem.precision);
    const std::string why = backend->unsupported_reason(problem);
    if (!why.empty()) {
      skipped += " " + entry.name + " (" + why + ");";
      continue;
    }
    for (const Candidate& c : rate_backend(entry, i, *backend, problem, ctx, traffic))
      candidates.push_back(c);
  }
  if (candidates.empty())
    throw std::invalid_argument("backend: no compiled backend can run this case;" + skipped);

  rank(candidates);
  const Candidate& best = candidates.front();
  choice.backend = best.entry->create(problem.precision);
  choice.name = best.entry->name;
  if (best.rate < 0) {
    choice.reason = "auto: the first available backend";
  } else if (best.source == Source::table) {
    choice.reason = "auto: highest expected GStencil/s (" + where(best, ctx) +
                    "): " + top_candidates(candidates, 4);
  } else if (problem.fusion_depth == 0 && runs_own_depth(best)) {
    choice.fusion_depth = 0;
    choice.reason = "auto: " + best.entry->name + " at " + own_depth_text(best, ctx) +
                    "; best per backend: " + top_candidates(candidates, 4);
  } else {
    if (problem.fusion_depth == 0) choice.fusion_depth = best.depth;
    choice.reason = "auto: " + best.entry->name + " at fusion depth " + std::to_string(best.depth) +
                    ", " + rate_text(best.rate) + " GStencil/s (" + where(best, ctx) +
                    "); best per backend: " + top_candidates(candidates, 4);
  }
  if (!skipped.empty()) choice.reason += "; not usable:" + skipped.substr(0, skipped.size() - 1);
  return choice;
}

}  // namespace heatsim::solver
