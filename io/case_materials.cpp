// materials: name -> {conductivity, density, specific_heat} or {diffusivity}, regions: the
// list that gives every node its material (a shape or a file's integer map each), and
// contacts: the thermal contact resistances between materials.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "case_parse.hpp"

namespace heatsim::io::parse {

using detail::quote;

namespace {
// More regions than this are a generated file gone wrong; refused without being walked.
constexpr std::size_t kMaxRegions = 10000;
// A property table longer than this is a generated file gone wrong.
constexpr std::size_t kMaxEntries = 100000;
}  // namespace

void Reader::read_materials(const YAML::Node& n, Case& c) {
  const auto entries = read_entries(n, "materials", "materials");
  if (!entries) return;
  if (entries->empty()) error("materials", n, "needs at least one material");
  for (const auto& [name, entry] : *entries) {
    const std::string p = join("materials", name);
    const auto f = read_map(entry.value, p,
                            {"conductivity", "density", "specific_heat", "diffusivity",
                             "phase_change"});
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
        read_property(*v, join(p, "conductivity"), "conductivity", m.conductivity,
                      m.conductivity_table, &m.axes);
      if (auto v = field(*f, "density")) read_number(*v, join(p, "density"), m.density);
      if (auto v = field(*f, "specific_heat"))
        read_property(*v, join(p, "specific_heat"), "specific heat", m.specific_heat,
                      m.specific_heat_table, nullptr);
      if (auto v = field(*f, "phase_change")) read_phase_change(*v, join(p, "phase_change"), m);
    }
    if (f && f->count("diffusivity") && f->count("phase_change"))
      error(join(p, "phase_change"), f->at("phase_change").key,
            "a phase change needs conductivity, density and specific_heat (J/(kg K)), not "
            "diffusivity");
    c.materials.push_back(m);
  }
}

// Below this no material's conductivity or specific heat lies (aerogels conduct about 0.01
// W/(m K)); there the squares of the flows underflow fp64 (k = 1e-200 gave "converged in 0
// iterations" and a field that was its start): refused, where a void or an insulated face
// models no conduction.
constexpr double kSmallestProperty = 1e-30;

static std::string too_small(const char* what, const std::string& got) {
  return std::string("must be at least 1e-30 (got ") + got + "): no material's " + what +
         " is that small, and fp64 cannot solve with it (the flows' squares underflow); a void "
         "or an insulated face models a body that takes no heat";
}

bool Reader::read_property(const YAML::Node& n, const std::string& path, const char* what,
                           double& value, std::vector<std::array<double, 2>>& table,
                           std::array<double, 3>* axes) {
  if (!n.IsSequence()) {
    // Anything but a number or a list: name every form the property takes.
    const std::string forms = std::string("a number (or a table [[T, ") + what + "], ...], T in K" +
                              (axes ? "; or one value per axis" : "") + ")";
    if (!read_number(n, path, value, forms)) return false;
    if (std::isfinite(value) && value <= 0.0) {
      error(path, n, "must be > 0 (got " + n.Scalar() + ")");
      return false;
    }
    if (std::isfinite(value) && value < kSmallestProperty) {
      error(path, n, too_small(what, n.Scalar()));
      return false;
    }
    return true;
  }
  const std::string table_form = std::string("[[T, ") + what + "], ...] (T in K)";
  if (n.size() == 0) {
    error(path, n, "expected a number or a table " + table_form + ", got an empty list");
    return false;
  }
  if (n.size() > kMaxEntries) {
    error(path, n, "expected at most " + std::to_string(kMaxEntries) + " pairs, got " +
                       std::to_string(n.size()));
    return false;
  }
  if (!n[0].IsSequence()) {
    // A list of numbers: one conductivity per axis.
    // dims_ is 0 when the grid's dimension is unknown (its own error is reported).
    const int dims = dims_ > 0 ? dims_ : static_cast<int>(n.size());
    if (!axes) {
      error(path, n, "expected a number or a table " + table_form + ", got a list of numbers");
      return false;
    }
    if (dims < 2 || dims > 3 || static_cast<int>(n.size()) != dims) {
      error(path, n,
            "an anisotropic conductivity lists one value per axis of the " +
                std::to_string(dims) + "D grid (" +
                (dims == 3 ? "[kx, ky, kz]" : dims == 2 ? "[kx, ky]" : "a 1D grid takes one number") +
                "), got " + std::to_string(n.size()) + " values");
      return false;
    }
    bool ok = true;
    std::array<double, 3> k{0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string p = indexed(path, i);
      lines[p] = line_of(n[i]);
      if (!read_number(n[i], p, k[i])) {
        ok = false;
      } else if (std::isfinite(k[i]) && k[i] <= 0.0) {
        error(p, n[i], "must be > 0 (got " + n[i].Scalar() + ")");
        ok = false;
      } else if (std::isfinite(k[i]) && k[i] < kSmallestProperty) {
        error(p, n[i], too_small(what, n[i].Scalar()));
        ok = false;
      }
    }
    if (!ok) return false;
    // A 2D grid's z entry is never read; kx stands for the material in summaries.
    if (dims == 2) k[2] = k[0];
    *axes = k;
    value = k[0];
    return true;
  }
  // A list mixing tables and numbers, or a table per axis ([[[300, 10], [900, 100]], 5, 5]):
  // neither form, said once rather than item by item as a malformed table.
  if (axes) {
    bool numbers = false, nested = false;
    for (std::size_t i = 0; i < n.size(); ++i) {
      numbers = numbers || n[i].IsScalar();
      nested = nested || (n[i].IsSequence() && n[i].size() > 0 && n[i][0].IsSequence());
    }
    if (numbers || nested) {
      error(path, n,
            "expected a table " + table_form +
                " or one number per axis ([kx, ky] in 2D, [kx, ky, kz] in 3D), got a list "
                "mixing tables and numbers; a conductivity is either anisotropic and "
                "constant or isotropic and a table of T, not a table per axis");
      error_suppressed_.push_back(path);
      return false;
    }
  }
  bool ok = true;
  table.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node item = n[i];
    const std::string p = indexed(path, i);
    lines[p] = line_of(item);
    if (!item.IsSequence() || item.size() != 2) {
      error(p, item,
            std::string("expected a [T, ") + what + "] pair, got " +
                (item.IsSequence() ? "a list of " + std::to_string(item.size()) +
                                         (item.size() == 1 ? " value" : " values")
                                   : describe(item)));
      ok = false;
      continue;
    }
    std::array<double, 2> e{0.0, 0.0};
    if (!read_number(item[0], indexed(p, 0), e[0]) || !read_number(item[1], indexed(p, 1), e[1])) {
      ok = false;
      continue;
    }
    // As every number of the case: a table entry that is not finite (.nan, .inf, 1e400) ran
    // into NaN under the wrong message, or under backward Euler let no heat in, exit 0.
    bool finite = true;
    for (int k = 0; k < 2; ++k)
      if (!std::isfinite(e[static_cast<std::size_t>(k)])) {
        error(indexed(p, k), item[k],
              "must be a finite number (got " + detail::format_number(e[static_cast<std::size_t>(k)]) + ")");
        finite = ok = false;
      }
    if (!finite) continue;
    if (std::isfinite(e[0]) && e[0] <= 0.0) {
      error(indexed(p, 0), item[0],
            "a table's temperatures are absolute (K) and must be > 0 (got " + item[0].Scalar() +
                ")");
      ok = false;
    } else if (!table.empty() && !(e[0] > table.back()[0])) {
      error(indexed(p, 0), item[0],
            "the temperatures must increase strictly (got " + item[0].Scalar() + " after " +
                n[i - 1][0].Scalar() + ")");
      ok = false;
    }
    if (std::isfinite(e[1]) && e[1] <= 0.0) {
      error(indexed(p, 1), item[1],
            std::string("the ") + what + " must be > 0 at every temperature (got " +
                item[1].Scalar() + ")");
      ok = false;
    } else if (std::isfinite(e[1]) && e[1] < kSmallestProperty) {
      error(indexed(p, 1), item[1], too_small(what, item[1].Scalar()));
      ok = false;
    }
    table.push_back(e);
  }
  if (!ok) {
    error_suppressed_.push_back(path);
    table.clear();
    return false;
  }
  value = table.front()[1];
  if (table.size() == 1) table.clear();  // one pair: a constant
  return true;
}

// The narrowest melting range taken, as a share of the liquidus (about 4e6 units in the last
// place; the Stefan front is right to 1e-4 at 1e-8 K of 300 K).
constexpr double kNarrowestMelting = 1e-9;

void Reader::read_phase_change(const YAML::Node& n, const std::string& path,
                               solver::MaterialSpec& m) {
  const auto f = read_map(n, path, {"solidus", "liquidus", "latent_heat"});
  if (!f) return;
  require(*f, path, "solidus", n, " (K: where melting starts)");
  require(*f, path, "liquidus", n, " (K: where melting ends, > solidus)");
  require(*f, path, "latent_heat", n, " (J/kg, > 0)");
  solver::PhaseChangeSpec pc;
  bool ok = f->count("solidus") && f->count("liquidus") && f->count("latent_heat");
  if (auto v = field(*f, "solidus")) ok = read_number(*v, join(path, "solidus"), pc.solidus) && ok;
  if (auto v = field(*f, "liquidus"))
    ok = read_number(*v, join(path, "liquidus"), pc.liquidus) && ok;
  if (auto v = field(*f, "latent_heat"))
    ok = read_number(*v, join(path, "latent_heat"), pc.latent_heat) && ok;
  if (!ok) return;
  if (!(pc.latent_heat > 0.0)) {
    error(join(path, "latent_heat"), f->at("latent_heat").value,
          "must be > 0 (J/kg; got " + f->at("latent_heat").value.Scalar() + ")");
    ok = false;
  }
  if (!(pc.solidus > 0.0)) {
    error(join(path, "solidus"), f->at("solidus").value,
          "must be > 0 (an absolute temperature, K; got " + f->at("solidus").value.Scalar() + ")");
    ok = false;
  } else if (!(pc.solidus < pc.liquidus)) {
    error(join(path, "liquidus"), f->at("liquidus").value,
          "must be above the solidus (got solidus " + f->at("solidus").value.Scalar() +
              ", liquidus " + f->at("liquidus").value.Scalar() +
              "); a pure substance melting at Tm takes a narrow range, e.g. Tm - 0.5 to Tm + 0.5");
    ok = false;
  } else if (pc.liquidus - pc.solidus < kNarrowestMelting * pc.liquidus) {
    // The enthalpy steps across the range on temperatures a few units in the last place apart:
    // a range of 1e-11 K at 300 K put the Stefan front 3% short, 1e-12 K 70%, one unit in the
    // last place melted the slab as if there were no latent heat.
    char range[160];
    std::snprintf(range, sizeof range,
                  "must lie at least %.3g K above the solidus (1e-9 of the temperature; got a "
                  "range of %.3g K, which fp64 does not resolve at these temperatures)",
                  kNarrowestMelting * pc.liquidus, pc.liquidus - pc.solidus);
    error(join(path, "liquidus"), f->at("liquidus").value,
          std::string(range) + "; a pure substance melting at Tm takes a narrow range, e.g. "
                               "Tm - 0.5 to Tm + 0.5");
    ok = false;
  }
  if (ok) m.phase_change = pc;
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
    bool void_read = true;
    if (auto v = field(*f, "void")) {
      if (!v->IsScalar() || (v->Scalar() != "true" && v->Scalar() != "false")) {
        error(join(p, "void"), *v, "expected true or false, got " + describe(*v));
        void_read = false;
      } else {
        r.is_void = v->Scalar() == "true";
      }
    }
    // A void's name shows in messages, validate's list and the heat-flow report; nothing
    // would show a material region's.
    if (auto v = field(*f, "name")) {
      if (r.is_void)
        read_string(*v, join(p, "name"), r.name);
      else if (void_read)
        error(join(p, "name"), f->at("name").key,
              "only a void region ({void: true, ...}) has a name (it names the void in messages "
              "and reports); remove it");
    }
    if (auto v = field(*f, "surface")) {
      if (!r.is_void) {
        error(join(p, "surface"), f->at("surface").key,
              "only a void region ({void: true, ...}) has a surface condition");
      } else if (read_face(*v, join(p, "surface"), r.surface, /*surface=*/true)) {
        const bool flux = r.surface.kind == solver::BoundaryKind::neumann && !r.surface.heat_flux;
        const YAML::Node gradient = v->IsMap() ? (*v)["flux"] : YAML::Node();
        if (flux && r.surface.value != 0.0 && gradient)
          error(join(p, "surface.flux"), gradient,
                "a void's surface takes its heat flux as heat_flux (W/m^2 into the body: "
                "{type: neumann, heat_flux: 100}); flux (du/dn, K/m) is for the domain's faces");
        else if (r.surface.kind == solver::BoundaryKind::dirichlet)
          error(join(p, "surface.type"), *v,
                "a void's surface cannot hold a temperature (dirichlet); give it a convective "
                "surface with a large h ({type: convective, h: 1e6, ambient: T}), or paint the "
                "void's shape as a material region and hold a domain face at T");
        else if (r.surface.kind == solver::BoundaryKind::periodic ||
                 (flux && r.surface.value != 0.0))
          error(join(p, "surface.type"), *v,
                "a void's surface is convective ({type: convective, h, ambient}, optionally with "
                "emissivity), radiative ({type: radiative, emissivity, ambient}), a heat flux "
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

// contacts: [{between: [a, b], resistance: R''}] (m^2 K/W, >= 0) or conductance: 1/R''
// (W/(m^2 K), > 0), exactly one of the two; each pair of two different materials once.
void Reader::read_contacts(const YAML::Node& n, Case& c) {
  if (!n.IsSequence()) {
    error("contacts", n,
          "expected a list of contacts ({between: [material, material], resistance: m^2 K/W} "
          "or with conductance: W/(m^2 K)), got " +
              describe(n));
    return;
  }
  if (n.size() > kMaxRegions) {
    error("contacts", n,
          "expected at most " + std::to_string(kMaxRegions) + " contacts, got " +
              std::to_string(n.size()));
    return;
  }
  if (n.size() == 0) error("contacts", n, "needs at least one contact (or leave the key out)");
  Names materials;
  for (const solver::MaterialSpec& m : c.materials) materials.push_back(m.name);
  std::string names;
  for (std::size_t m = 0; m < materials.size(); ++m) names += (m ? ", " : "") + materials[m];
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string p = indexed("contacts", i);
    const YAML::Node item = n[i];
    lines[p] = line_of(item);
    const auto f = read_map(item, p, {"between", "resistance", "conductance"});
    if (!f) {
      error_suppressed_.push_back(p);
      continue;
    }
    solver::ContactSpec contact;
    bool ok = true;
    require(*f, p, "between", item, " (the two materials, [name, name])");
    if (auto v = field(*f, "between")) {
      const std::string bp = join(p, "between");
      if (!v->IsSequence() || v->size() != 2) {
        error(bp, *v,
              "expected two material names [name, name], got " +
                  (v->IsSequence() ? "a list of " + std::to_string(v->size()) +
                                         (v->size() == 1 ? " item" : " items") +
                                         (v->size() > 2 ? " (a contact is between two "
                                                          "materials: give one entry per pair)"
                                                        : "")
                                   : describe(*v)));
        ok = false;
      } else {
        for (std::size_t s = 0; s < 2; ++s) {
          const std::string sp = indexed(bp, s);
          const YAML::Node name = (*v)[s];
          lines[sp] = line_of(name);
          if (!read_string(name, sp, contact.between[s])) {
            ok = false;
          } else if (std::find(materials.begin(), materials.end(), contact.between[s]) ==
                     materials.end()) {
            error(sp, name,
                  "unknown material " + quote(contact.between[s]) +
                      detail::nearest_suffix(contact.between[s], materials) +
                      "; materials: " + names);
            ok = false;
          }
        }
        if (ok && contact.between[0] == contact.between[1]) {
          error(bp, *v,
                "a contact lies between two materials, not " + quote(contact.between[0]) +
                    " and itself");
          ok = false;
        }
        if (ok)
          for (std::size_t k = 0; k < c.contacts.size(); ++k) {
            const auto& other = c.contacts[k].between;
            if ((other[0] == contact.between[0] && other[1] == contact.between[1]) ||
                (other[0] == contact.between[1] && other[1] == contact.between[0])) {
              const std::string first = indexed("contacts", k);
              const auto at = lines.find(first);
              error(bp, *v,
                    "the pair " + quote(contact.between[0]) + ", " + quote(contact.between[1]) +
                        " is given twice (first at " + first +
                        (at != lines.end() ? ", line " + std::to_string(at->second) : "") + ")");
              ok = false;
            }
          }
      }
    }
    const bool resistance = f->count("resistance") > 0, conductance = f->count("conductance") > 0;
    if (resistance == conductance) {
      if (resistance)
        error(join(p, "conductance"), f->at("conductance").key,
              "give either resistance (m^2 K/W) or conductance (W/(m^2 K)), not both");
      else
        error(p, item, "needs resistance (m^2 K/W, >= 0) or conductance (W/(m^2 K), > 0)");
      ok = false;
    } else if (resistance) {
      const std::string rp = join(p, "resistance");
      const YAML::Node v = f->at("resistance").value;
      if (!read_number(v, rp, contact.resistance)) {
        ok = false;
      } else if (!std::isfinite(contact.resistance) || contact.resistance < 0.0) {
        error(rp, v, "must be finite and >= 0 (m^2 K/W), got " + v.Scalar());
        ok = false;
      }
    } else {
      const std::string gp = join(p, "conductance");
      const YAML::Node v = f->at("conductance").value;
      double g = 0.0;
      if (!read_number(v, gp, g)) {
        ok = false;
      } else if (!std::isfinite(g) || g <= 0.0) {
        error(gp, v,
              "must be finite and > 0 (W/(m^2 K); a perfect contact is no contact entry, a joint "
              "that passes no heat a void between the materials), got " +
                  v.Scalar());
        ok = false;
      } else if (!std::isfinite(1.0 / g)) {
        error(gp, v,
              "is so small that its resistance 1/conductance is not a finite number, got " +
                  v.Scalar() + "; materials that exchange no heat are separated by a void");
        ok = false;
      } else {
        contact.resistance = 1.0 / g;
      }
    }
    // Entries with errors are left out, so that the pair checks above see only good ones.
    if (ok) c.contacts.push_back(std::move(contact));
  }
}

}  // namespace heatsim::io::parse
