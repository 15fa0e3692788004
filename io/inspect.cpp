#include "inspect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "field_file.hpp"

namespace heatsim::io {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <class T, class Format>
std::string axes(const T& v, int dims, Format format, const char* sep) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? sep : "") + format(v[a]);
  return s;
}

}  // namespace

void inspect_file(const std::string& path, std::ostream& out) {
  const FieldFile f = read_field_file(path);
  const FieldMeta& m = f.meta;

  double lo = INFINITY, hi = -INFINITY;
  std::int64_t non_finite = 0;
  for (double v : f.field) {
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
      << "step:       " << m.step << "\n"
      << "time:       " << number(m.time) << "\n"
      << "dt:         " << number(m.dt) << "\n"
      << "grid:       " << m.dims << "D, " << axes(m.n, m.dims, integer, " x ") << " ("
      << m.points() << " points)\n"
      << "spacing:    " << axes(m.spacing, m.dims, number, " ") << "\n"
      << "origin:     " << axes(m.origin, m.dims, number, " ") << "\n";
  if (lo <= hi)
    out << "min/max:    " << number(lo) << " / " << number(hi) << "\n";
  else
    out << "min/max:    (no finite values)\n";
  if (non_finite > 0) out << "non-finite: " << non_finite << " values (NaN/Inf)\n";
  out << "precision:  " << m.precision << "\n"
      << "scheme:     " << m.scheme << "\n"
      << "alpha:      " << number(m.alpha) << "\n"
      << "backend:    " << m.backend << "\n"
      << "version:    heatsim " << m.version << "\n"
      << "case:\n";
  // The case text as given, indented so it stands apart from the fields above.
  std::size_t start = 0;
  while (start < m.case_yaml.size()) {
    std::size_t end = m.case_yaml.find('\n', start);
    if (end == std::string::npos) end = m.case_yaml.size();
    out << "  | " << m.case_yaml.substr(start, end - start) << "\n";
    start = end + 1;
  }
  if (m.case_yaml.empty()) out << "  (not recorded)\n";
}

}  // namespace heatsim::io
