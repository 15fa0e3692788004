#include "run/prepare.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <set>
#include <string>
#include <utility>

#include "io/case_loader.hpp"
#include "io/case_parse.hpp"
#include "io/field_inputs.hpp"
#include "kernels/boundary_rules.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/probes.hpp"
#include "solver/stencil.hpp"

namespace heatsim::run {

std::string format_bytes(double bytes) { return solver::format_bytes(bytes); }

namespace {

using solver::host_memory_available;

// What the implicit and steady solvers refuse, found before anything is built or written
// (empty: nothing). The multigrid stepper refuses the same cases (solver/multigrid), but only
// once the run has been set up.
std::string implicit_refusal(const solver::Case& c) {
  if (c.time.method == solver::TimeMethod::explicit_euler) return {};
  if (c.scheme.kind != solver::SchemeKind::order2)
    return std::string(solver::multigrid::to_string(c.time.method)) + " needs scheme order2, not " +
           solver::to_string(c.scheme.kind);
  if (c.time.method != solver::TimeMethod::steady) return {};
  // A void surface that passes heat toward its ambient ties the temperature as a face does; which
  // pieces of the body it reaches, io::resolve_body checks.
  for (const solver::RegionSpec& r : c.regions)
    if (r.is_void && kernels::anchors(r.surface)) return {};
  static const char* face_names[] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  std::string insulated;  // convective faces with h = 0 and no emissivity
  for (int f = 0; f < 2 * c.grid.dims; ++f) {
    const kernels::BoundaryFace& b = c.boundary[f];
    if (kernels::anchors(b)) return {};  // Dirichlet, h > 0, or radiating
    if (b.names_temperature())  // an ambient, but neither h nor an emissivity
      insulated += std::string(insulated.empty() ? "" : ", ") + face_names[f];
  }
  return std::string("steady: no face is Dirichlet, convective with h > 0 or radiating") +
         (insulated.empty() ? std::string()
                            : " (" + insulated + (insulated.size() > 2 ? " are" : " is") +
                                  " convective with h = 0, which is insulated)") +
         ", so the temperature is fixed only up to a constant (a steady state exists only if "
         "the sources and boundary fluxes balance exactly); make a face dirichlet, "
         "convective with h > 0 or radiative, or run the transient with backward-euler";
}

// The case as its source gives it, checked as the loader checks a file (a case made in memory:
// its warnings; prepare_run checks the rest).
io::LoadResult load(const CaseSource& source) {
  switch (source.kind) {
    case CaseSource::Kind::file:
      return io::load_case_file(source.path);
    case CaseSource::Kind::text:
      return io::load_case_text(source.text, source.path);
    case CaseSource::Kind::value:
      break;
  }
  io::LoadResult loaded;
  loaded.value = *source.value;
  if (loaded.value->source_path.empty()) loaded.value->source_path = source.path;
  loaded.warnings = io::case_warnings(*loaded.value);
  return loaded;
}

}  // namespace

CaseSource CaseSource::file(std::string path) { return {Kind::file, std::move(path), {}, {}}; }

CaseSource CaseSource::yaml(std::string text, std::string origin) {
  return {Kind::text, std::move(origin), std::move(text), {}};
}

CaseSource CaseSource::in_memory(solver::Case c, std::string origin) {
  return {Kind::value, std::move(origin), {}, std::make_shared<const solver::Case>(std::move(c))};
}

namespace {

// Where a CollectWarnings lives in this thread: the warnings said, kept.
thread_local std::vector<io::CaseError>* t_collected = nullptr;

// A warning about the case (`source` names it), said once: every rank of an MPI run reads the
// same case and finds the same things, and rank 0 speaks for them; and kept where a
// CollectWarnings asks.
void say(const std::string& source, io::CaseError w) {
  if (solver::parallel::rank() == 0) spdlog::warn("{}: {}", source, w.to_string());
  if (t_collected != nullptr) t_collected->push_back(std::move(w));
}

// The line of a key path the case gives, else 0.
int line_number(const std::map<std::string, int>& lines, const std::string& key) {
  const auto at = lines.find(key);
  return at != lines.end() ? at->second : 0;
}

// The key as the case gave it: boundary.x-.<rest> is boundary.all.<rest> where the face took
// its condition from `all` (the two keys then share all's line), as the case's checks name it.
std::string as_given(const std::map<std::string, int>& lines, const std::string& key) {
  if (key.rfind("boundary.", 0) != 0) return key;
  const std::size_t dot = key.find('.', 9);
  if (dot == std::string::npos) return key;
  const std::string all = "boundary.all" + key.substr(dot);
  const auto face = lines.find(key), given = lines.find(all);
  return face != lines.end() && given != lines.end() && face->second == given->second ? all : key;
}

// Each sine schedule of the case (faces' values and ambients, void surfaces', sources'), with
// the key path of its frequency: visit(key, amplitude, frequency, is_table).
template <class Visit>
void each_sine(const solver::Case& c, Visit visit) {
  // A Dirichlet value's sine is written on the face, an ambient's in its map.
  const auto frequency_key = [](const kernels::BoundaryFace& b) {
    return b.kind == kernels::BoundaryKind::convective ? ".ambient.frequency" : ".frequency";
  };
  for (int f = 0; f < 2 * c.grid.dims; ++f) {
    const kernels::BoundaryFace& b = c.boundary[static_cast<std::size_t>(f)];
    if (b.names_temperature())
      visit(std::string("boundary.") + io::parse::kFaceNames[f] + frequency_key(b), b.amplitude,
            b.frequency, b.table.size() > 1);
  }
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const kernels::BoundaryFace& b = c.regions[r].surface;
    if (c.regions[r].is_void && b.names_temperature())
      visit("regions[" + std::to_string(r) + "].surface" + frequency_key(b), b.amplitude,
            b.frequency, b.table.size() > 1);
  }
  for (std::size_t k = 0; k < c.sources.size(); ++k) {
    const kernels::Schedule& s = c.sources[k].schedule;
    visit("sources[" + std::to_string(k) + "].schedule.frequency", s.amplitude, s.frequency,
          s.table.size() > 1);
  }
}

// The sine schedules whose period the steps do not resolve: at two steps a period or fewer the
// steps sample the sine at points that say nothing of it (at its zeros, a constant). Key path
// and message for each. Faces' values and ambients only: a source is scaled by its schedule's
// mean over each step, which puts in the sine's heat exactly whatever the step. A negative
// frequency is the sine of |frequency| (of the other sign).
std::vector<std::pair<std::string, std::string>> unresolved_sines(const solver::Case& c,
                                                                  double dt) {
  std::vector<std::pair<std::string, std::string>> out;
  if (c.time.method == solver::TimeMethod::steady || !(dt > 0.0)) return out;
  each_sine(c, [&](const std::string& key, double amplitude, double frequency, bool table) {
    if (table || amplitude == 0.0 || !(frequency != 0.0) || key.rfind("sources[", 0) == 0)
      return;
    frequency = std::abs(frequency);
    const double per_period = 1.0 / (frequency * dt);
    if (per_period > 2.0) return;
    // 0.05 / frequency, not 1 / (20 frequency): 20 frequency overflows above 9e306 Hz, and
    // the advice would read 0 s. Rounded down, so the dt printed is one that follows it.
    using io::detail::format_number;
    out.emplace_back(key, fmt::format("the sine of frequency {} (period {} s) is sampled by "
                                      "steps of {} s, {:.3g} a period: the run does not see it "
                                      "(sampled at its zeros it is a constant); take dt at most "
                                      "1/(20 frequency) = {} s to follow it",
                                      format_number(frequency), format_number(1.0 / frequency),
                                      format_number(dt), per_period,
                                      io::detail::format_number_down(0.05 / frequency)));
  });
  return out;
}

// The tables of faces' values and ambients (void surfaces' too) with a peak or a dip shorter
// than the step: a breakpoint above or below both its neighbours, the neighbours less than dt
// apart, inside the run's time. The steps sample such a value at their ends and may step over
// the feature whole (a 0.2 s pulse under steps of 0.5 s left the field as it was). Sources are
// not among them: their mean over each step is exact. Key path and message for each.
std::vector<std::pair<std::string, std::string>> unresolved_tables(const solver::Case& c,
                                                                   const solver::TimePlan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  if (c.time.method == solver::TimeMethod::steady || !(plan.dt > 0.0)) return out;
  const double end = plan.dt * static_cast<double>(plan.steps);
  const auto check = [&](const std::string& key, const kernels::BoundaryFace& b) {
    if (!b.names_temperature()) return;
    const auto& t = b.table;
    for (std::size_t i = 1; i + 1 < t.size(); ++i) {
      const double before = t[i - 1][1], at = t[i][1], after = t[i + 1][1];
      const bool peak = at > before && at > after, dip = at < before && at < after;
      const double width = t[i + 1][0] - t[i - 1][0];
      if (!(peak || dip) || !(width < plan.dt) || t[i + 1][0] <= 0.0 || t[i - 1][0] >= end)
        continue;
      using io::detail::format_number;
      out.emplace_back(
          key, fmt::format("the table's {} at t = {} s (from t = {} to {} s) is shorter than the "
                           "step, dt = {} s: the steps take the value at their ends and may step "
                           "over it whole; take dt at most {} s to follow it",
                           peak ? "peak" : "dip", format_number(t[i][0]),
                           format_number(t[i - 1][0]), format_number(t[i + 1][0]),
                           format_number(plan.dt), io::detail::format_number_down(width / 4.0)));
      return;  // one message a table
    }
  };
  const auto value_key = [](const kernels::BoundaryFace& b) {
    return b.kind == kernels::BoundaryKind::convective ? ".ambient" : ".value";
  };
  for (int f = 0; f < 2 * c.grid.dims; ++f) {
    const kernels::BoundaryFace& b = c.boundary[static_cast<std::size_t>(f)];
    check(std::string("boundary.") + io::parse::kFaceNames[f] + value_key(b), b);
  }
  for (std::size_t r = 0; r < c.regions.size(); ++r)
    if (c.regions[r].is_void)
      check("regions[" + std::to_string(r) + "].surface" + value_key(c.regions[r].surface),
            c.regions[r].surface);
  return out;
}

// The case's parallel section as far as it is known without the ranks (a validate on one
// process) and, under mpirun, with them: what every launch, or this one, would refuse is
// refused before the run, at parallel.decomposition's line. exchange_every on an implicit run
// (whose every solve exchanges) is warned of as ignored.
void check_parallel(const solver::Case& c, const std::string& path,
                    const std::map<std::string, int>& lines) {
  const solver::ParallelSpec& p = c.parallel;
  const bool implicit = c.time.method != solver::TimeMethod::explicit_euler;
  const std::string key = "parallel.decomposition";
  const auto at = lines.find(key);
  const int line = at != lines.end() ? at->second : 0;
  static const char* const axis[3] = {"x", "y", "z"};
  // Nodes a block must hold: the overlap, steps per exchange times the stencil's radius.
  const int halo = implicit ? 1 : std::max(1, p.exchange_every) * solver::scheme_radius(c.scheme);
  std::vector<io::CaseError> errors;
  for (int a = 0; a < std::min(c.grid.dims, 3); ++a) {
    const int count = p.decomposition[static_cast<std::size_t>(a)];
    if (count <= 1) continue;
    const bool periodic = c.boundary[static_cast<std::size_t>(2 * a)].kind ==
                          solver::BoundaryKind::periodic;
    if (implicit && periodic)
      errors.push_back({key, line,
                        fmt::format("implicit and steady runs keep a periodic axis on one rank, "
                                    "but {} is periodic and split {} ways: give it 1",
                                    axis[a], count)});
    else if (c.grid.n[a] / count < halo)
      errors.push_back(
          {key, line,
           fmt::format("{} ways along {} splits its {} nodes into blocks of {}, thinner than the "
                       "overlap of {} layers on any number of ranks: split it fewer ways",
                       count, axis[a], c.grid.n[a], c.grid.n[a] / count, halo)});
  }
  if (errors.empty() && solver::parallel::size() > 1) {
    try {
      const kernels::StencilProblem problem = solver::make_problem(c, 1.0);
      solver::parallel::Decomposition(problem, solver::parallel::size(),
                                      solver::parallel::rank(), halo, p.decomposition);
    } catch (const solver::parallel::DecompositionError& e) {
      std::string why = e.what();
      if (why.rfind(key + ": ", 0) == 0) why = why.substr(key.size() + 2);
      errors.push_back({key, line,
                        fmt::format("{} (on the {} ranks of this launch)", why,
                                    solver::parallel::size())});
    }
  }
  if (!errors.empty()) throw InvalidCase(path, errors);
  if (implicit && p.exchange_every > 1)
    say(path, {"parallel.exchange_every", line_number(lines, "parallel.exchange_every"),
               fmt::format("{} runs exchange at every multigrid operation; exchange_every is "
                           "for the explicit method and is ignored here",
                           solver::multigrid::to_string(c.time.method))});
}

// The sines whose phase 2 pi frequency t overflows before the run's end: NaN from there on.
// The case's checks refuse them where the end is known from the case; with time.dt: auto and
// steps it is known once the plan has its dt.
std::vector<io::CaseError> overflowing_sines(const solver::Case& c, const solver::TimePlan& plan,
                                             const std::map<std::string, int>& lines) {
  std::vector<io::CaseError> out;
  if (c.time.method == solver::TimeMethod::steady) return out;
  const double end = plan.dt * static_cast<double>(plan.steps);
  if (!std::isfinite(end) || !(end > 0.0)) return out;
  each_sine(c, [&](const std::string& key, double amplitude, double frequency, bool table) {
    if (table || amplitude == 0.0 || std::isfinite(2.0 * M_PI * std::abs(frequency) * end)) return;
    int line = 0;  // the frequency's line, or the nearest enclosing key's
    for (std::string k = key; !k.empty() && line == 0;) {
      const auto at = lines.find(k);
      if (at != lines.end()) line = at->second;
      const std::size_t dot = k.find_last_of('.');
      k = dot == std::string::npos ? std::string() : k.substr(0, dot);
    }
    out.push_back({key, line,
                   io::detail::format_number(frequency) +
                       " Hz is too large: 2 pi frequency t overflows before t = " +
                       io::detail::format_number(end) + " (the run's end, " +
                       std::to_string(plan.steps) + " steps of dt " +
                       io::detail::format_number(plan.dt) + "), so the sine has no value there"});
  });
  return out;
}

}  // namespace

CollectWarnings::CollectWarnings(std::vector<io::CaseError>& into) : previous_(t_collected) {
  t_collected = &into;
}
CollectWarnings::~CollectWarnings() { t_collected = previous_; }

PreparedRun prepare_run(const CaseSource& source, const Overrides& o) {
  const std::string& path = source.name();
  io::LoadResult loaded = load(source);
  // Warnings (a material no region uses, a region or source holding no node) do not stop the
  // run, but are said before anything else; beside a refusal's errors too, so that every
  // problem is known at once.
  for (const auto& w : loaded.warnings) say(path, w);
  // The overrides' problems, all of them, and beside the case's own.
  std::vector<io::CaseError> refused;
  if (o.steps) {
    if (*o.steps < 0)
      refused.push_back({"--steps", 0, "must be >= 0 (got " + std::to_string(*o.steps) + ")"});
    // time.steps' own limit (the case's checks): a count past it overflows the step numbers
    // the files carry long before it ends.
    else if (static_cast<double>(*o.steps) > 1e15)
      refused.push_back(
          {"--steps", 0, "must be at most 1e15 (got " + std::to_string(*o.steps) + ")"});
  }
  // An empty directory would be output.directory's own error, with the case's line for a key
  // the override replaced.
  if (o.output_dir && o.output_dir->empty())
    refused.push_back({"--output-dir", 0, "must not be empty"});
  if (o.precision && *o.precision != "fp64" && *o.precision != "fp32")
    refused.push_back({"--precision", 0, "must be fp64 or fp32, not '" + *o.precision + "'"});
  if (!loaded.ok() || !refused.empty()) {
    std::vector<io::CaseError> all = loaded.ok() ? std::vector<io::CaseError>{} : loaded.errors;
    all.insert(all.end(), refused.begin(), refused.end());
    throw InvalidCase(path, std::move(all));
  }
  solver::Case c = *loaded.value;
  if (o.backend) c.backend = *o.backend;
  if (o.steps) c.time.steps_override = *o.steps;
  if (o.output_dir) c.output.directory = *o.output_dir;
  if (o.precision)
    c.precision = *o.precision == "fp32" ? solver::Precision::fp32 : solver::Precision::fp64;
  // Again after the overrides, which change nothing the stability depends on (the steps, the
  // backend, the output, the precision): plan_time below holds dt to the limit as well. A case
  // made in memory has not been checked at all: its stability is checked here.
  std::vector<io::CaseError> errors =
      io::check_case(c, loaded.lines, source.kind == CaseSource::Kind::value);
  if (errors.empty())
    if (std::string refused = implicit_refusal(c); !refused.empty())
      errors.push_back({"time.method",
                        loaded.lines.count("time.method") ? loaded.lines.at("time.method") : 0,
                        std::move(refused)});
  if (!errors.empty()) throw InvalidCase(path, std::move(errors));
  PreparedRun run{c, {}, {}, {}, {}, loaded.lines};
  if (o.output_dir) run.lines.erase("output.directory");
  try {
    if (run.case_.has_fields()) {
      // Material maps and source fields from HDF5 files, before the fields are built; then the
      // body on the grid and the checks that need it (voids, surfaces, pieces), with lines.
      io::read_field_inputs(run.case_);
      io::ResolvedBody body =
          loaded.body.fields ? std::move(loaded.body) : io::resolve_body(run.case_, loaded.lines);
      for (const auto& w : body.warnings) say(path, w);
      if (!body.errors.empty()) throw InvalidCase(path, std::move(body.errors));
      run.material_ids = std::move(body.material_ids);
      run.surfaces = std::move(body.surfaces);
      run.fields = std::move(body.fields);
      run.plan = solver::plan_time(run.case_, *run.fields);
    } else {
      run.plan = solver::plan_time(run.case_);
    }
    // A point outside the domain or in a void: its key and line.
    try {
      solver::probe_stencils(run.case_, run.fields ? &run.fields->capacity : nullptr,
                             &run.material_ids);
    } catch (const solver::ProbeErrors& e) {  // every point refused, each at its line
      std::vector<io::CaseError> errors;
      for (const auto& [key, what] : e.all) {
        const auto line = loaded.lines.find(key);
        errors.push_back({key, line != loaded.lines.end() ? line->second : 0, what});
      }
      throw InvalidCase(path, std::move(errors));
    }
  } catch (const InvalidCase&) {
    throw;
  } catch (const std::exception& e) {
    throw InvalidCase(path, {{"", 0, e.what()}});
  }
  if (std::vector<io::CaseError> overflowing = overflowing_sines(run.case_, run.plan, run.lines);
      !overflowing.empty())
    throw InvalidCase(path, std::move(overflowing));
  // Crank-Nicolson far past the explicit limit rings; said by validate and before a run.
  const std::string ringing =
      solver::multigrid::large_step_warning(run.case_.time.method, run.plan.dt, run.plan.dt_limit);
  if (!ringing.empty()) say(path, {"time.dt", line_number(run.lines, "time.dt"), ringing});
  // An implicit method is stable at any dt, but `dt: auto` (dt left out) still takes 0.9 of
  // the explicit limit: as many solves as the explicit steps, each costing several sweeps.
  const solver::TimeMethod method = run.case_.time.method;
  if (run.plan.dt_auto && method != solver::TimeMethod::explicit_euler &&
      method != solver::TimeMethod::steady)
    say(path,
        {"time.dt", line_number(run.lines, run.lines.count("time.dt") ? "time.dt" : "time.method"),
         fmt::format(
             "auto with {} takes 0.9 of the explicit stability limit, dt = {}: {} steps, each a "
             "multigrid solve, to t = {}; an implicit method is stable at any dt, so give "
             "time.dt the step the accuracy needs (or use the explicit method at this dt)",
             solver::multigrid::to_string(method), io::detail::format_number(run.plan.dt),
             run.plan.steps,
             io::detail::format_number(run.case_.time.end_time && !run.case_.time.steps_override
                                           ? *run.case_.time.end_time
                                           : run.plan.dt * static_cast<double>(run.plan.steps)))});
  // A condition given once through `all` is warned of once, at boundary.all.
  std::set<std::string> said;
  const auto warn_key = [&](const std::string& key, const std::string& why) {
    const std::string given = as_given(run.lines, key);
    if (said.insert(given + why).second) say(path, {given, line_number(run.lines, given), why});
  };
  for (const auto& [key, why] : unresolved_sines(run.case_, run.plan.dt)) warn_key(key, why);
  for (const auto& [key, why] : unresolved_tables(run.case_, run.plan)) warn_key(key, why);
  check_parallel(run.case_, path, run.lines);
  return run;
}

namespace {

// estimate_run_memory with the deflation's memory counted as if the body formed strong pieces
// or not (`strong_pieces`; only an implicit run's counts).
solver::MemoryEstimate estimate_run_memory_with(const PreparedRun& run,
                                                const std::string& backend_name, int ghost,
                                                bool strong_pieces) {
  const solver::Case& c = run.case_;
  const kernels::BackendEntry* entry = kernels::find_backend(backend_name);
  const bool on_gpu = entry && entry->needs_gpu;
  const int source_fields = run.fields ? static_cast<int>(run.fields->sources.size()) : 0;
  const bool implicit = c.time.method != solver::TimeMethod::explicit_euler;
  return solver::estimate_memory(c, source_fields, on_gpu,
                                 ghost > 0 ? ghost : solver::scheme_radius(c.scheme),
                                 implicit && strong_pieces);
}

}  // namespace

solver::MemoryEstimate estimate_run_memory(const PreparedRun& run, const std::string& backend_name,
                                           int ghost) {
  // The deflation's memory only where the body forms strong pieces (an implicit run's).
  return estimate_run_memory_with(
      run, backend_name, ghost, run.fields && solver::forms_strong_pieces(run.case_, *run.fields));
}

bool host_memory_suffices(const PreparedRun& run) {
  const double have = host_memory_available();
  if (have <= 0) return true;
  const solver::Case& c = run.case_;
  const int source_fields = run.fields ? static_cast<int>(run.fields->sources.size()) : 0;
  const int radius = solver::scheme_radius(c.scheme);
  const double need =
      std::max(solver::estimate_memory(c, source_fields, false, radius).host_bytes(),
               solver::estimate_memory(c, source_fields, true, radius).host_bytes());
  return need <= have;
}

FilesEstimate estimate_files(const PreparedRun& run, std::int64_t first_step) {
  const solver::Case& c = run.case_;
  double points = 1.0;
  for (int a = 0; a < c.grid.dims; ++a) points *= static_cast<double>(c.grid.n[a]);
  // A checkpoint holds the run's precision (bdf2: two fields), an output file
  // output.precision's (the temperature and output.fields: the heat flux's components, the
  // conductivity, the liquid fraction); each a header besides. materials.h5: the material ids
  // (4 bytes a node), the conductivity, the capacity and the source density (8 each). The
  // header: HDF5's metadata and the attributes, the case's text among them (measured: 8.1 KiB
  // beside a case of 206 bytes for an output file, 11.4 KiB for a checkpoint; 64 KiB counted
  // before put 2001 outputs of 11 nodes at 125 MiB against their 16 MiB).
  const double header = 16.0 * 1024 + 2.0 * static_cast<double>(c.source_text.size());
  FilesEstimate e;
  // The heat flux has 3 components whatever the dimension (0 on the unused axes).
  const double per_output = 1.0 + (c.output.heat_flux ? 3 : 0) +
                            (c.output.conductivity ? 1 : 0) + (c.output.liquid_fraction ? 1 : 0);
  e.output_bytes =
      points * per_output *
          (c.output.precision.value_or(c.precision) == solver::Precision::fp32 ? 4.0 : 8.0) +
      header;
  if (c.has_fields()) e.materials_bytes = points * (4.0 + 3 * 8.0) + header;
  e.checkpoint_bytes = points * (c.precision == solver::Precision::fp32 ? 4.0 : 8.0) *
                           (c.time.method == solver::TimeMethod::bdf2 ? 2.0 : 1.0) +
                       header;
  // Outputs at step 0, every output.every steps, and at the last step; a restart's after its
  // step only.
  const std::int64_t steps = run.plan.steps, every = c.output.every;
  const std::int64_t first = std::clamp<std::int64_t>(first_step, 0, steps);
  if (first == 0) {
    e.outputs = 1 + (every > 0 ? steps / every : 0);
    if (steps > 0 && (every == 0 || steps % every != 0)) ++e.outputs;
  } else {
    e.outputs = every > 0 ? steps / every - first / every : 0;
    if (steps > first && (every == 0 || steps % every != 0)) ++e.outputs;
  }
  // Checkpoints every checkpoint.every steps and one at the end (counted once more where the
  // end is on the schedule: an upper bound).
  const std::int64_t cp_every = c.checkpoint.every;
  if (c.time.method != solver::TimeMethod::steady && (first == 0 || steps > first))
    e.checkpoints = 1 + (cp_every > 0 ? steps / cp_every - first / cp_every : 0);
  if (c.checkpoint.keep > 0) e.checkpoints = std::min(e.checkpoints, c.checkpoint.keep + 1);
  return e;
}

DiskUse disk_use(const solver::Case& c, const io::DirectoryUse& use) {
  DiskUse d;
  d.first_step = std::max<std::int64_t>(0, use.restart_step);
  for (const io::RunFile& f : io::files_removed_first(c, use)) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(f.path, ec);
    if (!ec) d.removed_bytes += static_cast<double>(size);
  }
  return d;
}

double device_share(const kernels::StencilProblem& problem, int ranks, int halo,
                    const std::array<int, 3>& procs, int node_ranks, int gpus) {
  if (ranks <= 1) return 1.0;
  std::int64_t largest = 0;
  try {
    const solver::parallel::Decomposition d(problem, ranks, 0, halo, procs);
    for (int r = 0; r < ranks; ++r) largest = std::max(largest, d.local(r).points());
  } catch (const std::invalid_argument&) {
    return 1.0;
  }
  const int sharing = (std::max(1, node_ranks) + std::max(1, gpus) - 1) / std::max(1, gpus);
  return std::min(1.0, static_cast<double>(largest) * sharing /
                           static_cast<double>(std::max<std::int64_t>(1, problem.points())));
}

std::vector<std::string> check_resources(const PreparedRun& run,
                                         const solver::BackendChoice& choice, int ghost, bool files,
                                         double device_share, int host_ranks, const DiskUse& use) {
  const solver::Case& c = run.case_;
  std::vector<std::string> short_of;
  const int sharing = std::max(1, host_ranks);
  const double host_have = host_memory_available();
  // First the larger estimate, the deflation's memory counted (as if the body formed strong
  // pieces): where the memory suffices for it, it suffices for the run, and
  // forms_strong_pieces (one thread's pass over every face, 0.5 s at 257^3) is not needed.
  solver::MemoryEstimate need = estimate_run_memory_with(run, choice.name, ghost, true);
  const auto suffices = [&](const solver::MemoryEstimate& e) {
    if (host_have > 0 && e.host_bytes() * sharing > host_have) return false;
    if (e.device.empty()) return true;
    const auto devices = kernels::cuda_devices();
    for (const auto& d : devices)
      if (e.device_bytes() * device_share > static_cast<double>(d.free_memory)) return false;
    return true;
  };
  if (!suffices(need)) need = estimate_run_memory(run, choice.name, ghost);
  const double host_need = need.host_bytes();
  if (host_have > 0 && host_need * sharing > host_have) {
    if (sharing == 1)
      short_of.push_back(fmt::format("not enough host memory: the run needs {} and {} is available",
                                     format_bytes(host_need), format_bytes(host_have)));
    else
      short_of.push_back(fmt::format(
          "not enough host memory: each of the {} ranks on this host builds the whole case, {} "
          "each, {} in all, and {} is available; start fewer ranks per host",
          sharing, format_bytes(host_need), format_bytes(host_need * sharing),
          format_bytes(host_have)));
  }
  if (!need.device.empty()) {
    auto devices = kernels::cuda_devices();
    // The device the backend runs on (a decomposed run's rank: its own) first.
    const int current = kernels::current_cuda_device();
    if (current > 0 && current < static_cast<int>(devices.size()))
      std::swap(devices[0], devices[static_cast<std::size_t>(current)]);
    const double gpu_need = need.device_bytes() * device_share;
    if (!devices.empty() && gpu_need > static_cast<double>(devices[0].free_memory)) {
      short_of.push_back(fmt::format(
          "not enough GPU memory on {}: {} {} and {} is free of {}", devices[0].name,
          device_share < 1.0 ? "this rank's blocks of the grid need" : "the run needs",
          format_bytes(gpu_need), format_bytes(static_cast<double>(devices[0].free_memory)),
          format_bytes(static_cast<double>(devices[0].total_memory))));
    }
  }

  // HEATSIM_DISK_CHECK=off: no check of the disk (for a test that has the disk fill under a
  // running run, as another process's files would).
  const char* disk_check = std::getenv("HEATSIM_DISK_CHECK");
  if (!files || (disk_check && std::string(disk_check) == "off")) return short_of;
  const FilesEstimate disk = estimate_files(run, use.first_step);
  const std::int64_t outputs = disk.outputs, checkpoints = disk.checkpoints;
  const double disk_need = disk.bytes();
  std::filesystem::path dir = std::filesystem::absolute(c.output.directory);
  while (!dir.empty() && !std::filesystem::exists(dir) && dir != dir.root_path())
    dir = dir.parent_path();
  struct statvfs fs {};
  // A file system that reports no blocks at all (proc, sysfs) keeps no files: creating the
  // directory fails there with its own reason, which says more than "0 B is free".
  if (statvfs(dir.c_str(), &fs) == 0 && fs.f_blocks > 0) {
    const double free = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
    // The files the run removes before it writes give their space back first.
    const double disk_have = free + use.removed_bytes;
    if (disk_need > disk_have) {
      short_of.push_back(fmt::format(
          "not enough disk space in {}: {} output file{} and {} checkpoint{} at once "
          "{}need {}, {} is free{}{}",
          dir.string(), outputs, outputs == 1 ? "" : "s", checkpoints, checkpoints == 1 ? "" : "s",
          use.first_step > 0 ? fmt::format("after step {} ", use.first_step) : "",
          format_bytes(disk_need), format_bytes(free),
          use.removed_bytes > 0.0 ? fmt::format(" and the files the run removes first hold {}",
                                                format_bytes(use.removed_bytes))
                                  : "",
          c.checkpoint.every > 0 && c.checkpoint.keep == 0
              ? " (checkpoint.keep: N keeps only the newest N checkpoints)"
              : ""));
    }
  }
  return short_of;
}

std::vector<io::CaseError> check_surroundings(const PreparedRun& run,
                                              const std::string& backend_name) {
  const solver::Case& c = run.case_;
  const auto line = run.lines.find("output.directory");
  const int directory_line = line != run.lines.end() ? line->second : 0;
  try {
    io::check_output_name(c);
  } catch (const std::runtime_error& e) {
    const auto at = run.lines.find("output.name");
    return {{"output.name", at != run.lines.end() ? at->second : 0, e.what()}};
  }
  try {
    io::check_output_directory_usable(c.output.directory);
  } catch (const std::runtime_error& e) {
    // The directory's problem says everything; the disk behind it cannot be judged.
    return {{"output.directory", directory_line, e.what()}};
  }
  solver::BackendChoice choice;
  choice.name = backend_name;
  std::vector<io::CaseError> errors;
  io::DirectoryUse replacing;  // what is there is replaced
  replacing.overwrite = true;
  const DiskUse disk = disk_use(c, replacing);
  for (std::string& problem : check_resources(run, choice, 0, true, 1.0, 1, disk)) {
    const bool on_disk = problem.rfind("not enough disk space", 0) == 0;
    errors.push_back(
        {on_disk ? "output.directory" : "", on_disk ? directory_line : 0, std::move(problem)});
  }
  return errors;
}

}  // namespace heatsim::run
