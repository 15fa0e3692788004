// sources: a list of heat sources that add up: a shape (or the whole domain) with power (W) or
// power_density (W/m^3), or a file's density field; each with an optional schedule.
#include "case_parse.hpp"

namespace heatsim::io::parse {

using detail::quote;

namespace {
constexpr std::size_t kMaxSources = 10000;
}  // namespace

void Reader::read_sources(const YAML::Node& n, Case& c) {
  if (!n.IsSequence()) {
    error("sources", n,
          "expected a list of sources ({box|ball|where, power|power_density, schedule} or "
          "{file: {path, dataset}, schedule}), got " +
              describe(n));
    return;
  }
  if (n.size() > kMaxSources) {
    error("sources", n,
          "expected at most " + std::to_string(kMaxSources) + " sources, got " +
              std::to_string(n.size()));
    return;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string p = indexed("sources", i);
    const YAML::Node item = n[i];
    lines[p] = line_of(item);
    const auto f =
        read_map(item, p, {"box", "ball", "where", "file", "power", "power_density", "schedule"});
    if (!f) {
      error_suppressed_.push_back(p);
      continue;
    }
    solver::SourceSpec s;
    if (auto file = field(*f, "file")) {
      s.shape.kind = solver::ShapeKind::file;
      for (const char* key : {"box", "ball", "where", "power", "power_density"})
        if (f->count(key))
          error(join(p, key), f->at(key).key,
                std::string("a file source gives the density (W/m^3) of every node; remove ") +
                    quote(key));
      const std::string fp = join(p, "file");
      if (const auto m = read_map(*file, fp, {"path", "dataset"})) {
        require(*m, fp, "path", *file, " (an HDF5 file holding the density, W/m^3 per node)");
        require(*m, fp, "dataset", *file, " (a numeric dataset of the grid's shape, z, y, x)");
        if (auto v = field(*m, "path")) read_string(*v, join(fp, "path"), s.shape.path);
        if (auto v = field(*m, "dataset")) read_string(*v, join(fp, "dataset"), s.shape.dataset);
      } else {
        error_suppressed_.push_back(fp);
      }
    } else {
      read_shape(*f, p, s.shape);
      double v = 0.0;
      // Exactly one of the two is checked by check_case, which also sees overrides.
      if (auto power = field(*f, "power");
          power && read_number(*power, join(p, "power"), v,
                               "a number (the power in W; in 2D W/m, in 1D W/m^2)"))
        s.power = v;
      if (auto density = field(*f, "power_density");
          density && read_number(*density, join(p, "power_density"), v, "a number (W/m^3)"))
        s.power_density = v;
      if ((f->count("power") && !s.power) || (f->count("power_density") && !s.power_density))
        error_suppressed_.push_back(p + ".power");  // keeps "give one of" quiet
    }
    if (auto v = field(*f, "schedule")) read_schedule(*v, join(p, "schedule"), 1.0, s.schedule);
    c.sources.push_back(std::move(s));
  }
}

}  // namespace heatsim::io::parse
