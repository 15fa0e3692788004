// `heatsim validate` and `heatsim info`.
#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "commands.hpp"
#include "io/case_loader.hpp"
#include "io/field_file.hpp"
#include "kernels/boundary_rules.hpp"
#include "kernels/registry.hpp"
#include "run/prepare.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/probes.hpp"
#include "solver/subgrid.hpp"
#include "solver/version.hpp"

namespace heatsim::app {

using run::format_bytes;
using run::PreparedRun;

namespace {

std::string point_text(const solver::Case& c, const std::array<double, 3>& p) {
  std::string s = "(";
  for (int a = 0; a < c.grid.dims; ++a) s += fmt::format("{}{:.6g}", a ? ", " : "", p[a]);
  return s + ")";
}

const char* shape_name(solver::ShapeKind k) {
  switch (k) {
    case solver::ShapeKind::everywhere:
      return "everywhere";
    case solver::ShapeKind::box:
      return "box";
    case solver::ShapeKind::ball:
      return "ball";
    case solver::ShapeKind::where:
      return "where";
    case solver::ShapeKind::file:
      return "file";
  }
  return "?";
}

std::string schedule_text(const kernels::Schedule& s) {
  if (!s.table.empty()) return fmt::format("schedule table of {} points", s.table.size());
  if (s.amplitude != 0.0)
    return fmt::format("schedule {:.6g} + {:.6g} sin(2 pi {:.6g} t)", s.value, s.amplitude,
                       s.frequency);
  return s.value == 1.0 ? "constant" : fmt::format("factor {:.6g}", s.value);
}

// The unit of a power (a heat rate) on a grid of `dims` dimensions: a 2D grid is a slice of a
// body one metre deep, a 1D grid a bar of one square metre of cross-section.
const char* power_unit(int dims) {
  return dims == 3   ? "W"
         : dims == 2 ? "W/m (per metre of depth)"
                     : "W/m^2 (per m^2 of cross-section)";
}

// The unit of a thermal conductance (a heat rate per kelvin) on a grid of `dims` dimensions.
const char* conductance_unit(int dims) {
  return dims == 3   ? "W/K"
         : dims == 2 ? "W/(m K) (per metre of depth)"
                     : "W/(m^2 K) (per m^2 of cross-section)";
}

// The real-problem lines of `validate`: materials with their node counts, sources with the
// power they put in at factor 1, the faces with heat transfer, and the probes.
void print_real_problem(const PreparedRun& run) {
  const solver::Case& c = run.case_;
  if (run.fields) {
    std::map<std::int32_t, std::int64_t> count;
    for (std::int32_t id : run.material_ids) ++count[id];
    if (c.materials.empty()) {
      fmt::print("  materials: none (physics.alpha = {:.6g} everywhere)\n", c.physics.alpha);
    } else {
      fmt::print("  materials: {}\n", c.materials.size());
      for (std::size_t i = 0; i < c.materials.size(); ++i) {
        const solver::MaterialSpec& m = c.materials[i];
        fmt::print("    {}: conductivity {:.6g}, capacity {:.6g} (diffusivity {:.6g}), {} nodes\n",
                   m.name, m.conductivity, m.capacity(), m.conductivity / m.capacity(),
                   count[static_cast<std::int32_t>(i)]);
      }
    }
    // Contacts: R'' in series at every face between the two materials.
    if (!c.contacts.empty()) fmt::print("  contacts: {}\n", c.contacts.size());
    for (const solver::ContactSpec& contact : c.contacts)
      fmt::print("    {} | {}: resistance {:.6g} m^2 K/W (conductance {:.6g} W/(m^2 K))\n",
                 contact.between[0], contact.between[1], contact.resistance,
                 1.0 / contact.resistance);
    // Voids: nodes removed, and each surface's condition and area (from the geometry).
    const double cell = solver::cell_volume(c);
    if (count.count(solver::kVoid))
      fmt::print("  voids: {} nodes inside them, no part of the body\n", count[solver::kVoid]);
    for (std::size_t r = 0; r < c.regions.size(); ++r) {
      const solver::RegionSpec& region = c.regions[r];
      if (!region.is_void) continue;
      const kernels::BoundaryFace& s = region.surface;
      std::string condition = "insulated";
      const std::string ambient =
          s.time_dependent() ? schedule_text(s.schedule()) : fmt::format("{:.6g}", s.value);
      if (s.radiates() && s.transfer == 0.0)
        condition = fmt::format("radiative, emissivity {:.6g}, ambient {}", s.emissivity, ambient);
      else if (s.kind == kernels::BoundaryKind::convective)
        condition = fmt::format(
            "convective, h {:.6g}, ambient {}{}", s.transfer, ambient,
            s.radiates() ? fmt::format(", emissivity {:.6g}", s.emissivity) : std::string());
      else if (s.heat_flux)
        condition = fmt::format("heat flux {:.6g} W/m^2 into the body", s.value);
      std::string area;
      if (const solver::VoidSurface* surface = run.surfaces.find(r))
        area = fmt::format(", surface {:.6g} {} facing the body", surface->area,
                           c.grid.dims == 3   ? "m^2"
                           : c.grid.dims == 2 ? "m (per metre of depth)"
                                              : "(per m^2 of section)");
      fmt::print("  void regions[{}]{}: {}, {}{}\n", r,
                 region.name.empty() ? "" : " (" + region.name + ")", shape_name(region.shape.kind),
                 condition, area);
    }
    // The power each source field puts in at factor 1, with the total heat's node weights (a
    // convective surface's h A ambient(t) is a field too, with the ambient as its schedule).
    if (!run.fields->sources.empty())
      fmt::print("  sources: {} in the case, {} field{}\n", c.sources.size(),
                 run.fields->sources.size(), run.fields->sources.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < c.sources.size(); ++i) {
      const solver::SourceSpec& s = c.sources[i];
      std::string amount =
          s.power           ? fmt::format("power {:.6g} {}", *s.power, power_unit(c.grid.dims))
          : s.power_density ? fmt::format("power density {:.6g} W/m^3", *s.power_density)
                            : std::string("density from ") + s.shape.path;
      fmt::print("    sources[{}]: {}, {}, {}\n", i, shape_name(s.shape.kind), amount,
                 schedule_text(s.schedule));
    }
    for (std::size_t f = 0; f < run.fields->sources.size(); ++f) {
      const auto& field = run.fields->sources[f];
      double power = 0.0;
      for (std::size_t n = 0; n < field.density.size(); ++n)
        power += field.density[n] * solver::node_weight(c, static_cast<std::int64_t>(n));
      // A factor other than 1 (a surface's ambient, a schedule): the power at t = 0 too.
      const double factor = field.schedule.at(0.0);
      const std::string at_start =
          factor == 1.0 && field.schedule.constant()
              ? std::string()
              : fmt::format(": {:.6g} {} at t = 0", power * cell * factor, power_unit(c.grid.dims));
      // A convective surface's field is h A / V with the ambient as its schedule: the ambient's
      // side of the exchange h A (T_ambient - T), no heat of its own. Its h A, then.
      bool convective = false;
      if (field.surface && !run.fields->transfer.empty())
        for (std::size_t n = 0; n < field.density.size() && !convective; ++n)
          convective = field.density[n] != 0.0 && run.fields->transfer[n] != 0.0;
      if (convective) {
        const std::string ambient = field.schedule.constant()
                                        ? fmt::format("{:.6g} K", field.schedule.at(0.0))
                                        : schedule_text(field.schedule);
        // Outer faces that a void reaches join its field with the part of their h A that a void
        // covers on the boundary nodes beside it taken off (solver/materials.cpp, FaceCut): the
        // field's h A is then the void surfaces' less that, which the line tells apart.
        double own = 0.0;
        for (std::size_t r = 0; r < c.regions.size(); ++r) {
          const kernels::BoundaryFace& s = c.regions[r].surface;
          const solver::VoidSurface* surface = run.surfaces.find(r);
          if (!c.regions[r].is_void || !surface || kernels::face_transfer(s) == 0.0) continue;
          const kernels::Schedule sched = s.schedule();
          if (sched.constant() == field.schedule.constant() &&
              sched.at(0.0) == field.schedule.at(0.0))
            own += kernels::face_transfer(s) * surface->area;
        }
        bool faces_joined = false;
        for (const solver::FaceCut& cut : run.surfaces.faces) {
          const kernels::BoundaryFace& face = c.boundary[static_cast<std::size_t>(cut.face)];
          faces_joined = faces_joined || kernels::face_transfer(face) != 0.0;
        }
        const double net = power * cell;
        const std::string split =
            faces_joined && std::abs(net - own) > 1e-9 * std::abs(own)
                ? fmt::format(" (the void surfaces' {:.6g}, less {:.6g} taken off the outer "
                              "faces' condition where a void covers part of a boundary node's "
                              "face)",
                              own, own - net)
                : std::string();
        fmt::print(
            "    field {} (void surfaces): convection h A {:.6g} {}{} toward the ambient, {}: they "
            "exchange h A (T_ambient - T), not a heat source (h A T_ambient is {:.6g} {} at t = "
            "0)\n",
            f, net, conductance_unit(c.grid.dims), split, ambient, net * factor,
            power_unit(c.grid.dims));
        continue;
      }
      fmt::print("    field {}{}: {:.6g} {} at factor 1, {}{}\n", f,
                 field.surface ? " (void surfaces)" : "", power * cell, power_unit(c.grid.dims),
                 schedule_text(field.schedule), at_start);
    }
  }
  static const char* face_names[] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  for (int f = 0; f < 2 * c.grid.dims; ++f) {
    const kernels::BoundaryFace& b = c.boundary[f];
    const std::string ambient =
        b.time_dependent() ? schedule_text(b.schedule()) : fmt::format("{:.6g}", b.value);
    if (b.kind == kernels::BoundaryKind::convective && b.radiates() && b.transfer == 0.0)
      fmt::print("  face {}: radiative, emissivity {:.6g}, ambient {}\n", face_names[f],
                 b.emissivity, ambient);
    else if (b.kind == kernels::BoundaryKind::convective)
      fmt::print("  face {}: convective, h {:.6g}, ambient {}{}\n", face_names[f], b.transfer,
                 ambient,
                 b.radiates() ? fmt::format(", radiating with emissivity {:.6g}", b.emissivity)
                              : std::string());
    else if (b.kind == kernels::BoundaryKind::neumann && b.heat_flux)
      fmt::print("  face {}: heat flux {:.6g} W/m^2 into the body\n", face_names[f], b.value);
    else if (b.kind == kernels::BoundaryKind::neumann && b.value == 0.0 && !b.time_dependent())
      fmt::print("  face {}: insulated (no heat crosses it)\n", face_names[f]);
    else if (b.kind == kernels::BoundaryKind::neumann)
      fmt::print("  face {}: neumann, outward du/dn {}\n", face_names[f], ambient);
    else if (b.kind == kernels::BoundaryKind::dirichlet)
      fmt::print("  face {}: fixed temperature {}\n", face_names[f], ambient);
    else if (b.kind == kernels::BoundaryKind::periodic)
      fmt::print("  face {}: periodic (wraps to {})\n", face_names[f], face_names[f ^ 1]);
  }
  if (!c.probes.points.empty()) {
    fmt::print("  probes: {} ({}) into {}/probes.csv\n", c.probes.points.size(),
               c.probes.every > 0 ? fmt::format("every {} steps and at the end", c.probes.every)
                                  : std::string("at the end"),
               c.output.directory);
    for (const solver::ProbeStencil& p :
         solver::probe_stencils(c, run.fields ? &run.fields->capacity : nullptr)) {
      std::string where;
      if (!run.material_ids.empty()) {
        // The material of the nearest corner node (the largest weight).
        std::size_t best = 0;
        for (std::size_t k = 1; k < p.weights.size(); ++k)
          if (p.weights[k] > p.weights[best]) best = k;
        const std::int32_t id = run.material_ids[static_cast<std::size_t>(p.nodes[best])];
        if (id >= 0 && static_cast<std::size_t>(id) < c.materials.size())
          where = ", nearest node in " + c.materials[static_cast<std::size_t>(id)].name;
      }
      fmt::print("    {} at {}{}\n", p.name, point_text(c, p.point), where);
    }
  }
}

// The backend the run would take (auto: a GPU's when one is visible).
std::string likely_backend(const solver::Case& c) {
  std::string backend = c.backend;
  if (backend == "auto") {
    backend = kernels::backend_registry().back().name;  // the host fallback, registered last
    for (const auto& e : kernels::backend_registry())
      if (e.needs_gpu && !kernels::cuda_devices().empty()) {
        backend = e.name;
        break;
      }
  }
  return backend;
}

// What the run needs in memory on the backend it would take, host and device apart, each part
// on a line.
void print_memory(const PreparedRun& run) {
  const std::string backend = likely_backend(run.case_);
  const solver::MemoryEstimate m = run::estimate_run_memory(run, backend);
  const bool gpu = !m.device.empty();
  fmt::print("  memory on the host: {} ({}; the largest parts that come and go count once)\n",
             format_bytes(m.host_bytes()), gpu ? "a GPU backend" : "the cpu backend");
  for (const solver::MemoryPart& p : m.host)
    fmt::print("    {}: {}\n", p.what, format_bytes(p.bytes));
  fmt::print("    at most at once, {}: {}\n", m.host_transient.what,
             format_bytes(m.host_transient.bytes));
  for (const solver::MemoryPart& p : m.host_transient_parts)
    fmt::print("      {}: {}\n", p.what, format_bytes(p.bytes));
  if (!gpu) return;
  fmt::print("  memory on the device: {}\n", format_bytes(m.device_bytes()));
  for (const solver::MemoryPart& p : m.device)
    fmt::print("    {}: {}\n", p.what, format_bytes(p.bytes));
}

// The files the run leaves in output.directory at most at once (run::estimate_files).
void print_files(const PreparedRun& run) {
  const solver::Case& c = run.case_;
  const run::FilesEstimate f = run::estimate_files(run);
  std::string checkpoints;
  if (f.checkpoints > 0) {
    const std::string kept =
        c.checkpoint.keep > 0 ? fmt::format("the newest {} kept", c.checkpoint.keep)
        : c.checkpoint.every > 0
            ? std::string("every one kept; checkpoint.keep: N keeps the newest N")
            : std::string("at the end");
    checkpoints =
        fmt::format(" and {} checkpoint{} of {} ({})", f.checkpoints, f.checkpoints == 1 ? "" : "s",
                    format_bytes(f.checkpoint_bytes), kept);
  }
  fmt::print("  files in {}: about {} at most: {} output file{} of {}{}{}\n", c.output.directory,
             format_bytes(f.bytes()), f.outputs, f.outputs == 1 ? "" : "s",
             format_bytes(f.output_bytes), checkpoints,
             f.materials_bytes > 0.0
                 ? fmt::format(", materials.h5 of {}", format_bytes(f.materials_bytes))
                 : std::string());
}

// The time method, and for the implicit ones how each step or the steady state is solved.
void print_time_method(const solver::Case& c) {
  const char* name = solver::multigrid::to_string(c.time.method);
  // How each step, or the steady state, is solved.
  char solved[300];
  if (!c.temperature_dependence().empty())
    std::snprintf(solved, sizeof solved,
                  "iterating on the temperature-dependent properties (at most 50 outer "
                  "iterations, until no node changes by more than 1e-10 of the largest "
                  "temperature), one multigrid solve per outer iteration to relative residual "
                  "%.3g",
                  c.time.tolerance);
  else
    std::snprintf(solved, sizeof solved, "one multigrid solve%s to relative residual %.3g",
                  c.time.method == solver::TimeMethod::steady ? "" : " per step", c.time.tolerance);
  switch (c.time.method) {
    case solver::TimeMethod::explicit_euler:
      fmt::print("  time: {} (forward Euler, dt within the stability limit)\n", name);
      break;
    case solver::TimeMethod::backward_euler:
    case solver::TimeMethod::crank_nicolson:
    case solver::TimeMethod::bdf2:
      fmt::print("  time: {} ({}), {}\n", name,
                 c.time.method == solver::TimeMethod::backward_euler ? "first order"
                 : c.time.method == solver::TimeMethod::crank_nicolson
                     ? "second order"
                     : "second order, L-stable; the first step backward Euler",
                 solved);
      break;
    case solver::TimeMethod::steady:
      if (!c.temperature_dependence().empty())
        fmt::print(
            "  time: steady, div(k grad T) + q = 0 {}, written as step 0 with attribute steady "
            "= 1 (no time)\n",
            solved);
      else
        fmt::print(
            "  time: steady, one multigrid solve of div(k grad T) + q = 0 to relative "
            "residual {:.3g}, written as step 0 with attribute steady = 1 (no time)\n",
            c.time.tolerance);
      break;
  }
}

}  // namespace

int validate_case_file(const std::string& path, const RunOverrides& overrides) {
  std::optional<PreparedRun> run;
  try {
    run = run::prepare_run(run::CaseSource::file(path), overrides);
  } catch (const run::InvalidCase& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kExitBadInput;
  }
  // What the run would refuse around the case (its output directory, the memory and disk it
  // needs), by the run's own rules.
  if (std::vector<io::CaseError> refused =
          run::check_surroundings(*run, likely_backend(run->case_));
      !refused.empty()) {
    fmt::print(stderr, "{}\n", run::InvalidCase(path, std::move(refused)).what());
    return kExitBadInput;
  }
  const solver::Case& c = run->case_;
  double points = 1.0;
  for (int a = 0; a < c.grid.dims; ++a) points *= static_cast<double>(c.grid.n[a]);
  fmt::print("{}: valid\n", path);
  // The extent and spacing (metres where the case has materials, whose properties are SI): a
  // case written in millimetres shows it here.
  std::string extent, spacing;
  for (int a = 0; a < c.grid.dims; ++a) {
    const char* sep = a == 0 ? "" : " x ";
    extent += fmt::format("{}{:.6g}", sep, c.grid.length[static_cast<std::size_t>(a)]);
    spacing += fmt::format("{}{:.6g}", sep, solver::spacing(c, a));
  }
  const char* unit = c.materials.empty() ? "" : " m";  // the shorthand's lengths have no unit
  fmt::print("  grid: {}D, {} points, {}{}, spacing {}{}\n", c.grid.dims,
             static_cast<std::int64_t>(points), extent, unit, spacing, unit);
  fmt::print("  scheme: {} (radius {})\n", solver::to_string(c.scheme.kind),
             solver::scheme_radius(c.scheme));
  // initial: {type: constant} alone is 0 (docs/case-format.md): say that the case left it out.
  const bool initial_defaulted =
      c.initial.kind == solver::InitialKind::constant && !run->lines.count("initial.value");
  fmt::print("  initial: {}{}\n", solver::describe_initial(c),
             initial_defaulted ? " (initial.value not given: 0 by default)" : "");
  print_time_method(c);
  // A given dt that does not divide time.end is shortened so that the last step lands on it
  // (by more than the rounding of end / steps, which moves it in its last bits only).
  const std::string dt_origin =
      run->plan.dt_auto ? std::string("auto")
      : c.time.dt && std::abs(*c.time.dt - run->plan.dt) > 1e-12 * *c.time.dt
          ? fmt::format("given {:.6g}, shortened to land on end", *c.time.dt)
          : std::string("given");
  if (c.time.method == solver::TimeMethod::steady) {
    // One solve: no dt, no stability limit, no step count.
  } else if (c.time.method == solver::TimeMethod::explicit_euler) {
    // The limit rounded down, as the refusal of a larger dt prints it: a dt copied from here is
    // accepted.
    fmt::print("  dt: {:.6g} ({}); largest stable dt {}\n", run->plan.dt, dt_origin,
               io::detail::format_number_down(run->plan.dt_limit));
  } else {
    // Implicit steps take any dt; how far past the explicit limit it is says how much work
    // one solve per step saves (and, far past it, how fast modes Crank-Nicolson damps only
    // slowly are resolved in time).
    fmt::print("  dt: {:.6g} ({}) = {:.3g}x the explicit limit {:.6g}\n", run->plan.dt, dt_origin,
               run->plan.dt / run->plan.dt_limit, run->plan.dt_limit);
  }
  if (run->plan.limit_node >= 0 && c.time.method != solver::TimeMethod::steady) {
    // The coefficient fields' limit (Gershgorin): the node whose conductances over its
    // capacity are largest.
    const auto node = static_cast<std::size_t>(run->plan.limit_node);
    const std::int32_t id = node < run->material_ids.size() ? run->material_ids[node] : -1;
    std::string what;
    if (id >= 0 && static_cast<std::size_t>(id) < c.materials.size()) {
      const solver::MaterialSpec& m = c.materials[static_cast<std::size_t>(id)];
      what = " (" + m.name;
      // A table's worst case: where its conductivity peaks and its specific heat dips.
      std::vector<std::string> worst;
      if (m.conductivity_table.size() > 1) {
        auto peak = m.conductivity_table.front();
        for (const auto& e : m.conductivity_table)
          if (e[1] > peak[1]) peak = e;
        worst.push_back(fmt::format("conductivity {:.6g} at {:.6g} K", peak[1], peak[0]));
      }
      if (m.specific_heat_table.size() > 1) {
        auto dip = m.specific_heat_table.front();
        for (const auto& e : m.specific_heat_table)
          if (e[1] < dip[1]) dip = e;
        worst.push_back(fmt::format("specific heat {:.6g} at {:.6g} K", dip[1], dip[0]));
      }
      for (std::size_t w = 0; w < worst.size(); ++w)
        what += (w == 0 ? ", its worst case: " : " and ") + worst[w];
      what += ")";
    }
    fmt::print("  stability limit set by the node at {}{}\n",
               solver::node_location(c, run->plan.limit_node), what);
  }
  if (c.time.method != solver::TimeMethod::steady)
    fmt::print("  steps: {} to t = {:.6g}\n", run->plan.steps,
               run->plan.dt * static_cast<double>(run->plan.steps));
  print_memory(*run);
  print_files(*run);
  print_real_problem(*run);
  return kExitOk;
}

int print_info() {
  fmt::print("heatsim {}\n", version());
  fmt::print("backends:\n");
  for (const auto& e : kernels::backend_registry())
    fmt::print("  {:<16} {}{}\n", e.name, e.description, e.needs_gpu ? " [GPU]" : "");
  fmt::print("CUDA support: {}\n", kernels::cuda_compiled() ? "compiled" : "not compiled");
  if (solver::parallel::mpi_built())
    fmt::print("MPI: {} (decomposed runs under its mpirun; files: {}; CUDA-aware: {})\n",
               solver::parallel::mpi_library(), io::field_file_layout(),
               solver::parallel::cuda_aware_mpi() ? "yes, halos still staged on the host"
                                                  : "no, halos staged on the host");
  else
    fmt::print("MPI: not built (one process; under mpirun heatsim refuses to start)\n");
  const auto devices = kernels::cuda_devices();
  if (devices.empty()) fmt::print("GPUs: none visible\n");
  for (const auto& d : devices)
    fmt::print("GPU {}: {}, {} total ({} free), compute capability {}.{}, {} SMs\n", d.index,
               d.name, format_bytes(static_cast<double>(d.total_memory)),
               format_bytes(static_cast<double>(d.free_memory)), d.major, d.minor,
               d.multiprocessors);
  return kExitOk;
}

}  // namespace heatsim::app
