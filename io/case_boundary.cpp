// boundary: a condition per face of the active axes, or `all` for the faces not named.
#include "case_parse.hpp"

namespace heatsim::io::parse {

using solver::BoundaryKind;

// One face's condition into `face`; path is boundary.<face> (or boundary.all), or a void
// region's surface (`surface`: the types offered leave out dirichlet and periodic, which
// read_materials refuses there with its own reason).
void Reader::unread_face(solver::BoundaryFace& face) {
  face = solver::BoundaryFace{};
  face.kind = BoundaryKind::neumann;
}

bool Reader::read_face(const YAML::Node& n, const std::string& path, solver::BoundaryFace& face,
                       bool surface, bool* typed) {
  const Names types{"dirichlet", "neumann", "insulated", "periodic", "convective", "radiative"};
  const Names surface_types{"neumann", "insulated", "convective", "radiative"};
  const Names& offered = surface ? surface_types : types;
  if (!n.IsMap()) {
    std::string alternatives;
    for (const std::string& t : offered) alternatives += (alternatives.empty() ? "" : "|") + t;
    error(path, n, "expected a map {type: " + alternatives + ", ...}, got " + describe(n));
    return false;
  }
  // The type decides which keys are allowed, so find it first.
  std::string kind;
  bool has_type = false;
  for (auto it = n.begin(); it != n.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "type") {
      has_type = true;
      const YAML::Node v = it->second;
      const bool known =
          v.IsScalar() && std::find(types.begin(), types.end(), v.Scalar()) != types.end();
      if (!read_choice(v, join(path, "type"), known ? types : offered, kind)) return false;
      break;
    }
  if (!has_type) {
    error(join(path, "type"), n, "missing required key (" + list_names(offered) + ")");
    return false;
  }
  Names known{"type"};
  if (kind == "dirichlet") known = {"type", "value", "amplitude", "frequency"};
  if (kind == "neumann") known = {"type", "flux", "heat_flux"};
  if (kind == "convective") known = {"type", "h", "ambient", "emissivity"};
  if (kind == "radiative") known = {"type", "emissivity", "ambient"};
  const auto f =
      read_map(n, path, known, (kind == "insulated" ? " for an " : " for a ") + kind + " face");
  if (!f) return false;
  bool ok = true;
  face = solver::BoundaryFace{};
  if (typed) *typed = true;
  if (kind == "dirichlet") {
    face.kind = BoundaryKind::dirichlet;
    if (auto v = field(*f, "value"); v && v->IsSequence()) {
      // A [[t, g], ...] table: g(t) piecewise linear, constant beyond its ends.
      kernels::Schedule s;
      ok = read_schedule(*v, join(path, "value"), 0.0, s) && ok;
      face.value = s.value;
      face.table = s.table;
      for (const char* key : {"amplitude", "frequency"})
        if (f->count(key)) {
          error(join(path, key), f->at(key).key,
                "a table value takes no " + std::string(key) +
                    " (give the table or value + amplitude * sin(2 pi frequency t))");
          ok = false;
        }
    } else if (v && v->IsMap()) {
      // The sine form of a schedule ({value, amplitude, frequency}) is written on the face
      // itself here, so a map is refused with the forms a Dirichlet value takes.
      error(join(path, "value"), *v,
            "expected a number (the temperature held) or a [[t, g], ...] table, got " +
                describe_value(*v) +
                "; a value varying as value + amplitude * sin(2 pi frequency t) gives its keys "
                "on the face: {type: dirichlet, value: 300, amplitude: 10, frequency: 0.5}");
      ok = false;
    } else if (v) {
      ok = read_number(*v, join(path, "value"), face.value,
                       "a number (the temperature held) or a [[t, g], ...] table") &&
           ok;
    }
    if (auto v = field(*f, "amplitude"))
      ok = read_number(*v, join(path, "amplitude"), face.amplitude,
                       "a number (g(t) = value + amplitude * sin(2 pi frequency t))") &&
           ok;
    if (auto v = field(*f, "frequency"))
      ok = read_number(*v, join(path, "frequency"), face.frequency,
                       "a number (in Hz: g(t) = value + amplitude * sin(2 pi frequency t))") &&
           ok;
  } else if (kind == "neumann") {
    face.kind = BoundaryKind::neumann;
    if (f->count("flux") && f->count("heat_flux")) {
      error(join(path, "heat_flux"), f->at("heat_flux").key,
            "give one of flux (du/dn) and heat_flux (W/m^2 into the body), not both");
      return false;
    }
    if (auto v = field(*f, "flux"))
      ok = read_number(*v, join(path, "flux"), face.value,
                       "a number (the outward normal derivative du/dn; 0: insulated)") &&
           ok;
    if (auto v = field(*f, "heat_flux")) {
      face.heat_flux = true;
      ok = read_number(*v, join(path, "heat_flux"), face.value,
                       "a number (W/m^2 flowing into the body)") &&
           ok;
    }
  } else if (kind == "insulated") {
    face.kind = BoundaryKind::neumann;  // no heat crosses: du/dn = 0
  } else if (kind == "convective" || kind == "radiative") {
    // -k du/dn = h (u - ambient(t)) + eps sigma (u^4 - ambient(t)^4); radiative: h = 0.
    face.kind = BoundaryKind::convective;
    if (kind == "convective")
      require(*f, path, "h", n, " (the heat transfer coefficient, W/(m^2 K), >= 0)");
    else
      require(*f, path, "emissivity", n, " (the surface's emissivity, in [0, 1])");
    require(*f, path, "ambient", n,
            " (the temperature outside, K: a number, table or sine form)");
    if ((kind == "convective" && !f->count("h")) || !f->count("ambient")) ok = false;
    if (auto v = field(*f, "h"))
      ok = read_number(*v, join(path, "h"), face.transfer,
                       "a number (the heat transfer coefficient, W/(m^2 K), >= 0)") &&
           ok;
    if (auto v = field(*f, "emissivity")) {
      // 0 is no radiation (as leaving the key out), so that a sweep of emissivities may start
      // there.
      if (!read_number(*v, join(path, "emissivity"), face.emissivity,
                       "a number in [0, 1] (the surface's emissivity)")) {
        ok = false;
      } else if (!(face.emissivity >= 0.0 && face.emissivity <= 1.0)) {
        error(join(path, "emissivity"), *v,
              "must lie in [0, 1] (got " + v->Scalar() +
                  "): the fraction of a black body's radiation the surface emits (0: none)");
        ok = false;
      }
    } else if (kind == "radiative") {
      ok = false;
    }
    if (auto v = field(*f, "ambient")) {
      kernels::Schedule s;
      ok = read_schedule(*v, join(path, "ambient"), 0.0, s) && ok;
      face.value = s.value;
      face.amplitude = s.amplitude;
      face.frequency = s.frequency;
      face.table = s.table;
    }
  } else {
    face.kind = BoundaryKind::periodic;
  }
  return ok;
}

void Reader::read_boundary(const YAML::Node& n, Case& c) {
  Names known{"all"};
  for (const char* face : kFaceNames) known.push_back(face);
  const auto f = read_map(n, "boundary", known);
  if (!f) {
    for (solver::BoundaryFace& face : c.boundary) unread_face(face);
    return;
  }
  // A face that fails to read still counts as given: one error per problem.
  std::array<bool, 6> given{};
  const bool has_all = f->count("all") > 0;
  solver::BoundaryFace all_face;
  bool all_ok = false, all_typed = false;
  if (has_all) all_ok = read_face(f->at("all").value, "boundary.all", all_face, false, &all_typed);
  // A broken `all` whose type was read still gives its faces that type for the checks.
  if (has_all && !all_typed) unread_face(all_face);
  for (int face = 0; face < 6; ++face) {
    const std::string p = std::string("boundary.") + kFaceNames[face];
    const auto it = f->find(kFaceNames[face]);
    if (it != f->end()) {
      if (dims_ > 0 && face >= 2 * dims_) {
        error(
            p, it->second.key,
            "the grid is " + std::to_string(dims_) + "D; it has no " + kFaceNames[face] + " face");
        continue;
      }
      given[static_cast<std::size_t>(face)] = true;
      // Read in place: a face whose type was read keeps what it gives even where a key is
      // missing or wrong, so that its other values are checked too (the broken key's own checks
      // are left out, as for every value that failed to read).
      bool typed = false;
      read_face(it->second.value, p, c.boundary[static_cast<std::size_t>(face)], false, &typed);
      if (!typed) unread_face(c.boundary[static_cast<std::size_t>(face)]);
    } else if (has_all) {
      given[static_cast<std::size_t>(face)] = true;
      faces_from_all.push_back(kFaceNames[face]);
      c.boundary[static_cast<std::size_t>(face)] = all_face;
      // Checks of this face point at the lines of `all`.
      for (const auto& [key, line] : std::map<std::string, int>(lines))
        if (key.rfind("boundary.all", 0) == 0) lines.emplace(p + key.substr(12), line);
    }
  }
  for (int face = 0; face < 2 * std::max(dims_, 0); ++face)
    if (!given[static_cast<std::size_t>(face)]) {
      unread_face(c.boundary[static_cast<std::size_t>(face)]);
      error(std::string("boundary.") + kFaceNames[face], n,
            "missing: give a condition for every face of the active axes (or 'all')");
    }
  if (has_all && !all_ok) {
    // Faces taken from a broken 'all' keep defaults; their checks must not add noise.
    for (int face = 0; face < 6; ++face)
      if (!f->count(kFaceNames[face]))
        error_suppressed_.push_back(std::string("boundary.") + kFaceNames[face]);
  }
}

}  // namespace heatsim::io::parse
