// time: {method, dt, steps | end, tolerance}, fusion, output: {directory, every, name,
// precision, compression, heat_flows, fields}.
#include "case_parse.hpp"
#include "solver/multigrid/implicit_stepper.hpp"

namespace heatsim::io::parse {

void Reader::read_time(const YAML::Node& n, Case& c) {
  const auto f = read_map(n, "time", {"method", "dt", "steps", "end", "tolerance"});
  if (!f) {
    error_suppressed_.push_back("time");
    return;
  }
  if (auto v = field(*f, "dt")) {
    double dt = 0.0;
    if (v->IsScalar() && v->Scalar() == "auto") {
      if (quote_closed(*v, "time.dt")) c.time.dt.reset();
    } else if (v->IsScalar() && (quoted(*v) || !parse_number(v->Scalar()))) {
      error("time.dt", *v,
            "expected a number or 'auto', got " + describe(*v) +
                detail::nearest_suffix(v->Scalar(), {"auto"}));
    } else if (read_number(*v, "time.dt", dt)) {
      c.time.dt = dt;
    }
  }
  if (auto v = field(*f, "steps")) {
    std::int64_t steps = 0;
    c.time.steps = read_int(*v, "time.steps", steps) ? steps : 0;
  }
  if (auto v = field(*f, "end")) {
    double end = 1.0;
    read_number(*v, "time.end", end);
    c.time.end_time = end;
  }
  if (auto v = field(*f, "method")) {
    std::string name;
    if (read_string(*v, "time.method", name)) {
      if (auto m = solver::multigrid::time_method_from_string(name))
        c.time.method = *m;
      else
        error("time.method", *v,
              "expected explicit, backward-euler, crank-nicolson, bdf2 or steady, got '" + name +
                  "'" +
                  detail::nearest_suffix(
                      name, {"explicit", "backward-euler", "crank-nicolson", "bdf2", "steady"}));
    }
  }
  if (auto v = field(*f, "tolerance")) {
    double tol = 0.0;
    if (read_number(*v, "time.tolerance", tol)) {
      if (!(tol > 0.0 && tol < 1.0))
        error("time.tolerance", *v,
              "must lie strictly between 0 and 1, in (0, 1) (a relative residual; got " +
                  v->Scalar() + ")");
      else
        c.time.tolerance = tol;
    }
  }
}

// `fusion: k` (steps per pass, 1..kMaxFusion) or `fusion: auto` (stored as 0).
void Reader::read_fusion(const YAML::Node& v, Case& c) {
  if (v.IsScalar() && v.Scalar() == "auto") {
    if (quote_closed(v, "fusion")) c.fusion = 0;
    return;
  }
  if (v.IsScalar() && (quoted(v) || !parse_number(v.Scalar()))) {
    error("fusion", v,
          "expected a step count or 'auto', got " + describe(v) +
              detail::nearest_suffix(v.Scalar(), {"auto"}));
    return;
  }
  int k = 1;
  if (!read_int(v, "fusion", k)) return;
  if (k < 1 || k > 16)
    error("fusion", v, "must be between 1 and 16, or auto (got " + std::to_string(k) + ")");
  else
    c.fusion = k;
}

void Reader::read_output(const YAML::Node& n, Case& c) {
  const auto f =
      read_map(n, "output",
               {"directory", "every", "name", "precision", "compression", "heat_flows", "fields"});
  if (!f) return;
  if (auto v = field(*f, "heat_flows")) read_bool(*v, "output.heat_flows", c.output.heat_flows);
  if (auto v = field(*f, "fields")) read_output_fields(*v, c);
  if (auto v = field(*f, "directory")) read_string(*v, "output.directory", c.output.directory);
  if (auto v = field(*f, "every")) read_int(*v, "output.every", c.output.every);
  if (auto v = field(*f, "name")) read_string(*v, "output.name", c.output.name);
  if (auto v = field(*f, "precision")) {
    std::string s;
    if (read_choice(*v, "output.precision", {"fp64", "fp32"}, s))
      c.output.precision = s == "fp32" ? solver::Precision::fp32 : solver::Precision::fp64;
  }
  if (auto v = field(*f, "compression")) {
    int level = 0;
    if (read_int(*v, "output.compression", level)) {
      if (level < 0 || level > 9)
        error("output.compression", *v,
              "must be a deflate level from 1 (fastest) to 9 (smallest), or 0 for none (got " +
                  std::to_string(level) + ")");
      else
        c.output.compression = level;
    }
  }
}

// `fields: [temperature, heat_flux, conductivity, liquid_fraction]`: what the output files
// hold. The temperature is always written; the list may name it or not.
void Reader::read_output_fields(const YAML::Node& n, Case& c) {
  const Names known{"temperature", "heat_flux", "conductivity", "liquid_fraction"};
  if (!n.IsSequence()) {
    error("output.fields", n,
          "expected a list of fields (" + list_names(known) + "), got " + describe(n));
    return;
  }
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node item = n[i];
    const std::string p = indexed("output.fields", i);
    lines[p] = line_of(item);
    std::string name;
    if (!read_choice(item, p, known, name)) continue;
    const auto first = seen.find(name);
    if (first != seen.end()) {
      error(p, item,
            detail::quote(name) + " is listed twice (first on line " +
                std::to_string(first->second) + ")");
      continue;
    }
    seen.emplace(name, line_of(item));
    if (name == "heat_flux") c.output.heat_flux = true;
    if (name == "conductivity") c.output.conductivity = true;
    if (name == "liquid_fraction") c.output.liquid_fraction = true;
  }
}

}  // namespace heatsim::io::parse
