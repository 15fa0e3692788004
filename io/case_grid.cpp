// grid: {dims, n, length}.
#include "case_parse.hpp"

namespace heatsim::io::parse {

void Reader::read_grid(const YAML::Node& n, Case& c) {
  const auto f = read_map(n, "grid", {"dims", "n", "length"});
  if (!f) {
    c.grid.dims = 0;  // unknown: the checks that depend on it are skipped
    return;
  }
  require(*f, "grid", "dims", n, " (1, 2 or 3)");
  require(*f, "grid", "n", n, " (points per axis)");
  int dims = 0;
  if (auto d = field(*f, "dims"); d && read_int(*d, "grid.dims", dims)) {
    if (dims < 1 || dims > 3) {
      error("grid.dims", *d, "must be 1, 2 or 3 (got " + std::to_string(dims) + ")");
      dims = 0;
    }
  }
  dims_ = dims;
  c.grid.dims = dims;
  if (auto v = field(*f, "n")) {
    std::array<std::int64_t, 3> points{1, 1, 1};
    if (read_axis_list(*v, "grid.n", false, points,
                       [this](const YAML::Node& m, const std::string& p, std::int64_t& out) {
                         return read_int(m, p, out);
                       }))
      c.grid.n = points;
  }
  if (auto v = field(*f, "length")) read_numbers(*v, "grid.length", true, c.grid.length);
  for (int a = std::max(dims, 1); a < 3; ++a) {
    c.grid.n[static_cast<std::size_t>(a)] = 1;
    if (dims > 0) c.grid.length[static_cast<std::size_t>(a)] = 1.0;
  }
}

}  // namespace heatsim::io::parse
