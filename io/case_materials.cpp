// materials: name -> {conductivity, density, specific_heat} or {diffusivity}, and regions: the
// list that gives every node its material (a shape or a file's integer map each).
#include "case_parse.hpp"

namespace heatsim::io::parse {

using detail::quote;

namespace {
// More regions than this are a generated file gone wrong; refused without being walked.
constexpr std::size_t kMaxRegions = 10000;
}  // namespace

void Reader::read_materials(const YAML::Node& n, Case& c) {
  const auto entries = read_entries(n, "materials", "materials");
  if (!entries) return;
  if (entries->empty()) error("materials", n, "needs at least one material");
  for (const auto& [name, entry] : *entries) {
    const std::string p = join("materials", name);
    const auto f =
        read_map(entry.value, p, {"conductivity", "density", "specific_heat", "diffusivity"});
    solver::MaterialSpec m;
    m.name = name;
    if (f && f->count("diffusivity")) {
      // diffusivity a alone: k = a, rho = c_p = 1 (as physics.alpha).
      bool mixed = false;
      for (const char* key : {"conductivity", "density", "specific_heat"})
        if (f->count(key)) {
          error(join(p, key), f->at(key).key,
                "a material gives either diffusivity alone (k = a, density = specific_heat = "
                "1) or conductivity, density and specific_heat, not both");
          mixed = true;
        }
      if (!mixed) read_number(f->at("diffusivity").value, join(p, "diffusivity"), m.conductivity);
    } else if (f) {
      require(*f, p, "conductivity", entry.value, " (k, W/(m K), > 0; or diffusivity alone)");
      require(*f, p, "density", entry.value, " (rho, kg/m^3, > 0)");
      require(*f, p, "specific_heat", entry.value, " (c_p, J/(kg K), > 0)");
      if (auto v = field(*f, "conductivity"))
        read_number(*v, join(p, "conductivity"), m.conductivity);
      if (auto v = field(*f, "density")) read_number(*v, join(p, "density"), m.density);
      if (auto v = field(*f, "specific_heat"))
        read_number(*v, join(p, "specific_heat"), m.specific_heat);
    }
    c.materials.push_back(m);
  }
}

void Reader::read_region_file(const YAML::Node& n, const std::string& path, solver::RegionSpec& r) {
  r.shape.kind = solver::ShapeKind::file;
  const auto f = read_map(n, path, {"path", "dataset", "ids"});
  if (!f) {
    error_suppressed_.push_back(path);
    return;
  }
  require(*f, path, "path", n, " (an HDF5 file holding the material map)");
  require(*f, path, "dataset", n, " (an integer dataset of the grid's shape, z, y, x)");
  require(*f, path, "ids", n, " (a map from the map's integers to material names)");
  if (auto v = field(*f, "path")) read_string(*v, join(path, "path"), r.shape.path);
  if (auto v = field(*f, "dataset")) read_string(*v, join(path, "dataset"), r.shape.dataset);
  const auto ids = field(*f, "ids");
  if (!ids) return;
  const std::string ids_path = join(path, "ids");
  if (!ids->IsMap()) {
    error(ids_path, *ids,
          "expected a map from integers to material names ({1: copper, 2: silicon}), got " +
              describe(*ids));
    return;
  }
  if (ids->size() == 0) error(ids_path, *ids, "needs at least one id");
  std::map<std::int64_t, int> first_line;
  for (auto it = ids->begin(); it != ids->end(); ++it) {
    const YAML::Node key = it->first;
    std::int64_t id = 0;
    if (!key.IsScalar()) {
      error(ids_path, key, "keys must be integers, got " + describe(key) + " as a key");
      continue;
    }
    if (!read_int(key, join(ids_path, key.Scalar()), id)) continue;
    const std::string p = join(ids_path, std::to_string(id));
    const auto seen = first_line.find(id);
    if (seen != first_line.end()) {
      error(p, key,
            "duplicate id " + std::to_string(id) + " (first given on line " +
                std::to_string(seen->second) + ")");
      continue;
    }
    first_line.emplace(id, line_of(key));
    lines[p] = line_of(key);
    std::string name;
    if (read_string(it->second, p, name)) r.ids.emplace_back(id, name);
  }
}

void Reader::read_regions(const YAML::Node& n, Case& c) {
  if (!n.IsSequence()) {
    error("regions", n,
          "expected a list of regions ({material: name} with box, ball, where or nothing for "
          "the whole domain, or {file: {path, dataset, ids}}), got " +
              describe(n));
    return;
  }
  if (n.size() > kMaxRegions) {
    error("regions", n,
          "expected at most " + std::to_string(kMaxRegions) + " regions, got " +
              std::to_string(n.size()));
    return;
  }
  if (n.size() == 0) error("regions", n, "needs at least one region");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string p = indexed("regions", i);
    const YAML::Node item = n[i];
    lines[p] = line_of(item);
    const auto f =
        read_map(item, p, {"material", "box", "ball", "where", "file", "void", "surface", "name"});
    if (!f) {
      error_suppressed_.push_back(p);
      continue;
    }
    solver::RegionSpec r;
    if (auto v = field(*f, "name")) read_string(*v, join(p, "name"), r.name);
    if (auto v = field(*f, "void")) {
      if (!v->IsScalar() || (v->Scalar() != "true" && v->Scalar() != "false")) {
        error(join(p, "void"), *v, "expected true or false, got " + describe(*v));
      } else {
        r.is_void = v->Scalar() == "true";
      }
    }
    if (auto v = field(*f, "surface")) {
      if (!r.is_void) {
        error(join(p, "surface"), f->at("surface").key,
              "only a void region ({void: true, ...}) has a surface condition");
      } else if (read_face(*v, join(p, "surface"), r.surface)) {
        const bool flux = r.surface.kind == solver::BoundaryKind::neumann && !r.surface.heat_flux;
        if (r.surface.kind == solver::BoundaryKind::dirichlet ||
            r.surface.kind == solver::BoundaryKind::periodic ||
            (flux && r.surface.value != 0.0))
          error(join(p, "surface.type"), *v,
                "a void's surface is convective ({type: convective, h, ambient}), a heat flux "
                "({type: neumann, heat_flux: W/m^2 into the body}) or insulated (no surface "
                "key)");
      }
    }
    if (r.is_void) {
      for (const char* key : {"material", "file"})
        if (f->count(key))
          error(join(p, key), f->at(key).key,
                std::string("a void region holds no material; remove ") + quote(key));
      read_shape(*f, p, r.shape);
      c.regions.push_back(std::move(r));
      continue;
    }
    if (auto file = field(*f, "file")) {
      bool alone = true;
      for (const char* key : {"material", "box", "ball", "where"})
        if (f->count(key)) {
          error(join(p, key), f->at(key).key,
                std::string("a file region takes its materials from file.ids and its nodes "
                            "from the map; remove ") +
                    quote(key));
          alone = false;
        }
      if (alone) read_region_file(*file, join(p, "file"), r);
    } else {
      require(*f, p, "material", item, " (a name from materials)");
      if (auto v = field(*f, "material")) read_string(*v, join(p, "material"), r.material);
      read_shape(*f, p, r.shape);
    }
    c.regions.push_back(std::move(r));
  }
}

}  // namespace heatsim::io::parse
