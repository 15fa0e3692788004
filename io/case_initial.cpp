// initial: the field at t = 0 (constant, gaussian, modes, box, expression or file).
#include "case_parse.hpp"

namespace heatsim::io::parse {

using solver::InitialKind;

void Reader::read_initial(const YAML::Node& n, Case& c) {
  const Names types{"constant", "gaussian", "modes", "box", "expression", "file"};
  if (!n.IsMap()) {
    error("initial", n,
          "expected a map {type: constant|gaussian|modes|box|expression|file, ...}, got " +
              describe(n));
    return;
  }
  std::string kind;
  bool has_type = false;
  for (auto it = n.begin(); it != n.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "type") {
      has_type = true;
      if (!read_choice(it->second, "initial.type", types, kind)) {
        error_suppressed_.push_back("initial");
        return;
      }
      break;
    }
  if (!has_type) {
    error("initial.type", n,
          "missing required key (constant, gaussian, modes, box, expression or file)");
    error_suppressed_.push_back("initial");
    return;
  }
  auto& ic = c.initial;
  const std::string ctx = " for a " + kind + " initial condition";
  if (kind == "constant") {
    ic.kind = InitialKind::constant;
    const auto f = read_map(n, "initial", {"type", "value"}, ctx);
    if (!f) return;
    if (auto v = field(*f, "value")) read_number(*v, "initial.value", ic.value);
  } else if (kind == "gaussian") {
    ic.kind = InitialKind::gaussian;
    const auto f =
        read_map(n, "initial", {"type", "amplitude", "center", "width", "background"}, ctx);
    if (!f) return;
    require(*f, "initial", "width", n, " (the standard deviation, > 0)");
    if (auto v = field(*f, "amplitude")) read_number(*v, "initial.amplitude", ic.amplitude);
    if (auto v = field(*f, "background")) read_number(*v, "initial.background", ic.background);
    if (auto v = field(*f, "width")) read_number(*v, "initial.width", ic.width);
    // Default centre: the middle of the domain.
    for (std::size_t a = 0; a < 3; ++a) ic.center[a] = 0.5 * c.grid.length[a];
    if (auto v = field(*f, "center")) read_numbers(*v, "initial.center", false, ic.center);
  } else if (kind == "box") {
    ic.kind = InitialKind::box;
    const auto f = read_map(n, "initial", {"type", "lower", "upper", "value", "background"}, ctx);
    if (!f) return;
    require(*f, "initial", "lower", n, " (the box's lower corner)");
    require(*f, "initial", "upper", n, " (the box's upper corner)");
    ic.value = 1.0;
    if (auto v = field(*f, "value")) read_number(*v, "initial.value", ic.value);
    if (auto v = field(*f, "background")) read_number(*v, "initial.background", ic.background);
    bool corners = true;
    if (auto v = field(*f, "lower"))
      corners = read_numbers(*v, "initial.lower", false, ic.lower) && corners;
    if (auto v = field(*f, "upper"))
      corners = read_numbers(*v, "initial.upper", false, ic.upper) && corners;
    if (!corners || !f->count("lower") || !f->count("upper")) {
      error_suppressed_.push_back("initial.lower");
      error_suppressed_.push_back("initial.upper");
    }
  } else if (kind == "expression") {
    ic.kind = InitialKind::expression;
    const auto f = read_map(n, "initial", {"type", "value"}, ctx);
    if (!f) return;
    require(*f, "initial", "value", n, " (u at t = 0 as a formula of x, y, z, e.g. \"sin(pi*x)\")");
    if (auto v = field(*f, "value")) read_string(*v, "initial.value", ic.expression);
  } else if (kind == "file") {
    ic.kind = InitialKind::file;
    const auto f = read_map(n, "initial", {"type", "path", "dataset"}, ctx);
    if (!f) return;
    require(*f, "initial", "path", n, " (an HDF5 file, e.g. out/run/field_00001000.h5)");
    if (auto v = field(*f, "path")) read_string(*v, "initial.path", ic.path);
    if (auto v = field(*f, "dataset")) read_string(*v, "initial.dataset", ic.dataset);
  } else {
    ic.kind = InitialKind::modes;
    const auto f = read_map(n, "initial", {"type", "terms"}, ctx);
    if (!f) return;
    require(*f, "initial", "terms", n, " (a list of {amplitude, k, functions})");
    if (auto v = field(*f, "terms")) read_terms(*v, ic);
  }
}

void Reader::read_terms(const YAML::Node& n, solver::InitialSpec& ic) {
  if (!n.IsSequence()) {
    error("initial.terms", n, "expected a list of {amplitude, k, functions}, got " + describe(n));
    return;
  }
  // Terms are few; a long list is a mistake and is not walked.
  constexpr std::size_t kMaxTerms = 1000;
  if (n.size() > kMaxTerms) {
    error("initial.terms", n,
          "expected at most " + std::to_string(kMaxTerms) + " terms, got " +
              std::to_string(n.size()));
    return;
  }
  if (n.size() == 0) error("initial.terms", n, "needs at least one term");
  for (std::size_t t = 0; t < n.size(); ++t) {
    const std::string p = indexed("initial.terms", t);
    const YAML::Node item = n[t];
    lines[p] = line_of(item);
    const auto f = read_map(item, p, {"amplitude", "k", "functions"});
    if (!f) continue;
    require(*f, p, "k", item, " (one wave number per axis)");
    solver::ModeTerm term;
    if (auto v = field(*f, "amplitude")) read_number(*v, p + ".amplitude", term.amplitude);
    if (auto v = field(*f, "k"))
      read_axis_list(*v, p + ".k", false, term.k,
                     [this](const YAML::Node& m, const std::string& q, int& out) {
                       return read_int(m, q, out);
                     });
    if (auto v = field(*f, "functions")) {
      std::array<std::string, 3> names{"sin", "sin", "sin"};
      if (read_axis_list(*v, p + ".functions", false, names,
                         [this](const YAML::Node& m, const std::string& q, std::string& out) {
                           return read_choice(m, q, {"sin", "cos"}, out);
                         }))
        for (std::size_t a = 0; a < 3; ++a) term.cosine[a] = names[a] == "cos";
    }
    ic.modes.push_back(term);
  }
}

}  // namespace heatsim::io::parse
