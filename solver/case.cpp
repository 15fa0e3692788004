#include "case.hpp"

#include <cmath>
#include <sstream>

#include "kernels/boundary_rules.hpp"
#include "version.hpp"

namespace heatsim {

const char* version() { return HEATSIM_VERSION_STRING; }

namespace solver {

const char* to_string(SchemeKind k) {
  switch (k) {
    case SchemeKind::order2: return "order2";
    case SchemeKind::order4: return "order4";
    case SchemeKind::order6: return "order6";
    case SchemeKind::isotropic: return "isotropic";
    case SchemeKind::custom: return "custom";
  }
  return "?";
}

std::optional<SchemeKind> scheme_from_string(const std::string& s) {
  for (SchemeKind k : {SchemeKind::order2, SchemeKind::order4, SchemeKind::order6,
                       SchemeKind::isotropic, SchemeKind::custom})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::string describe_initial(const Case& c) {
  const InitialSpec& ic = c.initial;
  std::ostringstream s;
  s.precision(6);
  auto point = [&](const std::array<double, 3>& p) {
    s << "(";
    for (int a = 0; a < c.grid.dims; ++a) s << (a ? ", " : "") << p[static_cast<std::size_t>(a)];
    s << ")";
  };
  switch (ic.kind) {
    case InitialKind::constant:
      s << "constant " << ic.value;
      break;
    case InitialKind::gaussian:
      s << "gaussian, amplitude " << ic.amplitude << " at ";
      point(ic.center);
      s << ", width " << ic.width << ", background " << ic.background;
      break;
    case InitialKind::box:
      s << "box, " << ic.value << " on ";
      point(ic.lower);
      s << " - ";
      point(ic.upper);
      s << ", background " << ic.background;
      break;
    case InitialKind::modes:
      s << "modes, " << ic.modes.size() << (ic.modes.size() == 1 ? " term" : " terms");
      break;
    case InitialKind::expression:
      s << "expression " << ic.expression;
      break;
    case InitialKind::file:
      s << "file " << ic.path << ", dataset " << ic.dataset;
      break;
  }
  return s.str();
}

double spacing(const Case& c, int axis) {
  if (axis >= c.grid.dims) return 1.0;
  const double n = static_cast<double>(c.grid.n[axis]);
  const bool periodic = c.boundary[2 * axis].kind == BoundaryKind::periodic;
  return c.grid.length[axis] / (periodic ? n : n - 1.0);
}

void snap_bounds_to_far_faces(Case& c) {
  for (int a = 0; a < c.grid.dims && a < 3; ++a) {
    if (c.boundary[2 * a].kind == BoundaryKind::periodic || c.grid.n[a] < 2) continue;
    const double h = spacing(c, a);
    if (!(h > 0.0) || !std::isfinite(h)) continue;
    const double end = static_cast<double>(c.grid.n[a] - 1) * h, tol = 1e-9 * h;
    const auto snap = [&](ShapeSpec& shape) {
      if (shape.kind != ShapeKind::box) return;
      for (double* bound : {&shape.lower[a], &shape.upper[a]})
        if (std::abs(*bound - end) <= tol) *bound = end;
    };
    for (RegionSpec& r : c.regions) snap(r.shape);
    for (SourceSpec& s : c.sources) snap(s.shape);
  }
}

}  // namespace solver
}  // namespace heatsim

namespace heatsim::solver {

bool Case::has_fields() const {
  if (!materials.empty() || !sources.empty()) return true;
  for (const auto& f : boundary)
    if (kernels::needs_coefficients(f)) return true;
  return false;
}

std::string Case::temperature_dependence() const {
  // Every one, so that a refusal names them all at once.
  static const char* const kFaces[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  std::string out;
  const auto add = [&](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  for (const MaterialSpec& m : materials)
    if (m.temperature_dependent()) add("materials." + m.name + " depends on temperature");
  for (int f = 0; f < 2 * grid.dims; ++f)
    if (boundary[static_cast<std::size_t>(f)].radiates())
      add(std::string("boundary.") + kFaces[f] + " radiates");
  for (std::size_t r = 0; r < regions.size(); ++r)
    if (regions[r].is_void && regions[r].surface.radiates())
      add("regions[" + std::to_string(r) + "].surface radiates");
  return out;
}

}  // namespace heatsim::solver
