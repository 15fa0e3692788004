// physics: {alpha, source} (source only, with materials) and scheme: a name or {type,
// radius, weights}.
#include "case_parse.hpp"

namespace heatsim::io::parse {

void Reader::read_physics(const YAML::Node& n, Case& c) {
  const auto f = read_map(n, "physics", {"alpha", "source"});
  if (!f) return;
  if (has_materials_) {
    if (f->count("alpha"))
      error("physics.alpha", f->at("alpha").key,
            "is not used with materials (each material gives its conductivity, density and "
            "specific_heat); remove it");
  } else {
    require(*f, "physics", "alpha", n, " (the diffusivity, > 0)");
    if (auto v = field(*f, "alpha")) read_number(*v, "physics.alpha", c.physics.alpha);
  }
  if (auto v = field(*f, "source")) read_number(*v, "physics.source", c.physics.source);
}

void Reader::read_scheme(const YAML::Node& n, Case& c) {
  const Names names{"order2", "order4", "order6", "isotropic", "custom"};
  std::string kind;
  if (n.IsScalar()) {
    if (!read_choice(n, "scheme", names, kind)) return;
    if (kind == "custom") {
      error("scheme", n, "custom needs a map {type: custom, radius: r, weights: [...]}");
      return;
    }
    c.scheme.kind = *solver::scheme_from_string(kind);
    return;
  }
  const auto f = read_map(n, "scheme", {"type", "radius", "weights"});
  if (!f) return;
  require(*f, "scheme", "type", n);
  const auto type = field(*f, "type");
  if (!type || !read_choice(*type, "scheme.type", names, kind)) return;
  c.scheme.kind = *solver::scheme_from_string(kind);
  if (kind != "custom") {
    for (const char* key : {"radius", "weights"})
      if (f->count(key))
        error(join("scheme", key), f->at(key).key,
              "only a custom scheme takes " + std::string(key));
    return;
  }
  require(*f, "scheme", "radius", n, " (1, 2 or 3)");
  require(*f, "scheme", "weights", n, " ((2*radius+1)^dims numbers)");
  if (auto v = field(*f, "radius")) read_int(*v, "scheme.radius", c.scheme.radius);
  if (auto v = field(*f, "weights")) {
    if (!v->IsSequence()) {
      error("scheme.weights", *v, "expected a flat list of numbers, got " + describe(*v));
      return;
    }
    // At most 7^3 weights exist; a longer list is refused without reading it all.
    const std::size_t size = v->size();
    if (size > 343) {
      error("scheme.weights", *v,
            "expected at most 343 weights (radius 3 in 3D), got " + std::to_string(size));
      return;
    }
    std::vector<double> w(size, 0.0);
    bool ok = true;
    for (std::size_t i = 0; i < size; ++i) {
      const YAML::Node item = (*v)[i];
      const std::string p = indexed("scheme.weights", i);
      lines[p] = line_of(item);
      if (item.IsSequence()) {
        error(p, item,
              "expected a number, got a list (give the weights as one flat list, "
              "ordered [z][y][x] with x fastest)");
        ok = false;
        continue;
      }
      ok = read_number(item, p, w[i]) && ok;
    }
    if (ok) c.scheme.weights = std::move(w);
  }
}

}  // namespace heatsim::io::parse
