#include "inspect.hpp"

#include <spdlog/fmt/fmt.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "field_file.hpp"
#include "material_output.hpp"
#include "solver/materials.hpp"

namespace heatsim::io {

namespace {

// The shortest text that reads back to the same double (0.00025, not 0.00025000000000000001).
std::string number(double v) { return fmt::format("{}", v); }

// Whether the case text names materials: then physics.alpha (the file's `alpha`) is not what
// the run used; conductivity and capacity per node are in materials.h5.
bool case_has_materials(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    return root.IsMap() && root["materials"];
  } catch (const std::exception&) {
    return false;
  }
}

// Whether the case text has void regions ({void: true, ...}): their nodes are no part of the
// body, and the field's statistics leave them out.
bool case_has_voids(const std::string& text) {
  try {
    const YAML::Node regions = YAML::Load(text)["regions"];
    if (!regions.IsSequence()) return false;
    for (const YAML::Node& r : regions)
      if (r.IsMap() && r["void"] && r["void"].IsScalar() && r["void"].Scalar() == "true")
        return true;
  } catch (const std::exception&) {
  }
  return false;
}

// The run's materials.h5 describes this field when it has the same grid and case text.
bool same_run(const FieldMeta& field, const FieldMeta& materials) {
  return field.dims == materials.dims && field.n == materials.n &&
         field.spacing == materials.spacing && field.origin == materials.origin &&
         field.case_yaml == materials.case_yaml;
}

// A material property as the case gave it (0.72, not 0.71999999999999997).
std::string property(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

template <class T, class Format>
std::string axes(const T& v, int dims, Format format, const char* sep) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? sep : "") + format(v[a]);
  return s;
}

void print_case_text(const std::string& text, std::ostream& out) {
  // The case text as given, indented so it stands apart from the fields above.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out << "  | " << text.substr(start, end - start) << "\n";
    start = end + 1;
  }
  if (text.empty()) out << "  (not recorded)\n";
}

template <class T>
std::string range(const std::vector<T>& v) {
  if (v.empty()) return "(empty)";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return number(static_cast<double>(*lo)) + " / " + number(static_cast<double>(*hi));
}

// materials.h5: the materials with their properties and node counts, the coefficient ranges.
void inspect_materials(const std::string& path, std::ostream& out) {
  const MaterialFile f = read_material_file(path);
  const FieldMeta& m = f.grid;
  const auto integer = [](std::int64_t v) { return std::to_string(v); };
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t id : f.material) ++count[id];
  out << "file:       " << path << "\n"
      << "kind:       materials (material ids and coefficient fields of the run)\n"
      << "grid:       " << m.dims << "D, " << axes(m.n, m.dims, integer, " x ") << " ("
      << m.points() << " points)\n"
      << "spacing:    " << axes(m.spacing, m.dims, number, " ") << "\n"
      << "origin:     " << axes(m.origin, m.dims, number, " ") << "\n"
      << "materials:  " << f.names.size() << "\n";
  for (std::size_t id = 0; id < f.names.size(); ++id) {
    const auto it = count.find(static_cast<std::int32_t>(id));
    out << "  " << id << " " << f.names[id] << ": conductivity "
        << property(f.material_conductivity[id]) << ", capacity "
        << property(f.material_capacity[id])
        << ", " << (it == count.end() ? 0 : it->second) << " nodes\n";
  }
  for (const auto& [id, nodes] : count)
    if (id < 0 || static_cast<std::size_t>(id) >= f.names.size())
      out << "  " << id << (id == solver::kVoid ? " (void)" : " (no name)") << ": " << nodes
          << " nodes\n";
  out << "conductivity min/max:   " << range(f.conductivity) << "\n"
      << "capacity min/max:       " << range(f.capacity) << "\n"
      << "source_density min/max: " << range(f.source_density) << "\n"
      << "version:    heatsim " << m.version << "\n"
      << "case:\n";
  print_case_text(m.case_yaml, out);
}

}  // namespace

void inspect_file(const std::string& path, std::ostream& out) {
  if (is_material_file(path)) {
    inspect_materials(path, out);
    return;
  }
  const FieldFile f = read_field_file(path);
  const FieldMeta& m = f.meta;

  // The run's materials file beside it: what the XDMF index shows with every step, and which
  // nodes are the body's. A node of capacity 0 lies in a void (or was folded into the body
  // beside it): the run's statistics leave it out (kernels::CoefficientFields::transfer), and so
  // do these.
  const std::filesystem::path beside =
      std::filesystem::path(path).parent_path() / kMaterialFileName;
  std::optional<MaterialFile> materials;
  std::string materials_error;
  if (is_material_file(beside.string())) {
    try {
      materials = read_material_file(beside.string());
    } catch (const std::exception& e) {
      materials_error = e.what();
    }
  }
  const bool knows_body =
      materials && same_run(m, materials->grid) && materials->capacity.size() == f.field.size();
  std::int64_t void_nodes = 0;
  double lo = INFINITY, hi = -INFINITY;
  std::int64_t non_finite = 0;
  for (std::size_t i = 0; i < f.field.size(); ++i) {
    if (knows_body && materials->capacity[i] == 0.0) {
      ++void_nodes;
      continue;
    }
    const double v = f.field[i];
    if (!std::isfinite(v)) {
      ++non_finite;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const auto integer = [](std::int64_t v) { return std::to_string(v); };

  out << "file:       " << path << "\n"
      << "kind:       " << to_string(f.kind)
      << (f.checksummed ? " (Fletcher32 checksum verified)" : "") << "\n"
      << (m.steady ? "state:      steady (no time: step, time and dt are 0)\n"
                   : "step:       " + std::to_string(m.step) + "\n" + "time:       " +
                         number(m.time) + "\n" + "dt:         " + number(m.dt) + "\n")
      << "grid:       " << m.dims << "D, " << axes(m.n, m.dims, integer, " x ") << " ("
      << m.points() << " points)\n"
      << "spacing:    " << axes(m.spacing, m.dims, number, " ") << "\n"
      << "origin:     " << axes(m.origin, m.dims, number, " ") << "\n";
  std::string over;  // which nodes the min/max is over, where voids make it a question
  if (void_nodes > 0)
    over = " (the body's nodes: " + std::to_string(void_nodes) +
           " void nodes left out, as materials.h5 beside the file marks them)";
  else if (!knows_body && case_has_voids(m.case_yaml))
    over =
        " (every node, void nodes included: the case has voids, but no materials.h5 of this "
        "run lies beside the file to tell them apart)";
  if (lo <= hi)
    out << "min/max:    " << number(lo) << " / " << number(hi) << over << "\n";
  else
    out << "min/max:    (no finite values)" << over << "\n";
  if (non_finite > 0) out << "non-finite: " << non_finite << " values (NaN/Inf)\n";
  if (!f.previous.empty())
    out << "previous:   the field of step " << m.step - 1 << " (dataset " << kPreviousFieldDataset
        << ", fp64), which bdf2 continues from\n";
  const double raw_bytes =
      static_cast<double>(m.points()) * (m.precision == "fp32" ? 4.0 : 8.0);
  out << "precision:  " << m.precision << "\n";
  if (f.deflate > 0)
    out << "storage:    deflate level " << f.deflate << " with shuffle, chunked; "
        << f.stored_bytes << " bytes, "
        << fmt::format("{:.1f}", 100.0 * static_cast<double>(f.stored_bytes) / raw_bytes)
        << "% of " << static_cast<std::uint64_t>(raw_bytes) << "\n";
  out << "scheme:     " << m.scheme << "\n"
      << "alpha:      "
      << (case_has_materials(m.case_yaml)
              ? std::string("not used: the case has materials (k and rho c_p per node in "
                            "materials.h5)")
              : number(m.alpha))
      << "\n"
      << "backend:    " << m.backend << "\n"
      << "version:    heatsim " << m.version << "\n";
  if (materials) {
    out << "materials:  " << beside.string() << " (";
    for (std::size_t i = 0; i < materials->names.size(); ++i)
      out << (i ? ", " : "") << materials->names[i];
    out << "; datasets material, conductivity, capacity, source_density)"
        << (same_run(m, materials->grid) ? "" : ", of another grid or case than this file") << "\n";
  } else if (!materials_error.empty()) {
    out << "materials:  " << materials_error << "\n";
  }
  out << "case:\n";
  print_case_text(m.case_yaml, out);
}

}  // namespace heatsim::io
