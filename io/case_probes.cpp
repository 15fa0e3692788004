// probes: {every, points: {name: [x, y, z]}}: values at named points over the run.
#include "case_parse.hpp"

namespace heatsim::io::parse {

void Reader::read_probes(const YAML::Node& n, Case& c) {
  const auto f = read_map(n, "probes", {"every", "points"});
  if (!f) {
    error_suppressed_.push_back("probes");
    return;
  }
  require(*f, "probes", "points", n, " (name: [coordinates of the active axes])");
  if (auto v = field(*f, "every")) read_int(*v, "probes.every", c.probes.every);
  const auto points = field(*f, "points");
  if (!points) return;
  const auto entries = read_entries(*points, "probes.points", "probe points");
  if (!entries) return;
  if (entries->empty()) error("probes.points", *points, "needs at least one point");
  for (const auto& [name, entry] : *entries) {
    std::array<double, 3> x{0.0, 0.0, 0.0};
    if (read_numbers(entry.value, join("probes.points", name), false, x))
      c.probes.points.emplace_back(name, x);
  }
}

}  // namespace heatsim::io::parse
