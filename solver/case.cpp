#include "case.hpp"

#include "version.hpp"

namespace heatsim {

const char* version() { return HEATSIM_VERSION_STRING; }

namespace solver {

const char* to_string(SchemeKind k) {
  switch (k) {
    case SchemeKind::order2: return "order2";
    case SchemeKind::order4: return "order4";
    case SchemeKind::order6: return "order6";
    case SchemeKind::isotropic: return "isotropic";
    case SchemeKind::custom: return "custom";
  }
  return "?";
}

std::optional<SchemeKind> scheme_from_string(const std::string& s) {
  for (SchemeKind k : {SchemeKind::order2, SchemeKind::order4, SchemeKind::order6,
                       SchemeKind::isotropic, SchemeKind::custom})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

double spacing(const Case& c, int axis) {
  if (axis >= c.grid.dims) return 1.0;
  const double n = static_cast<double>(c.grid.n[axis]);
  const bool periodic = c.boundary[2 * axis].kind == BoundaryKind::periodic;
  return c.grid.length[axis] / (periodic ? n : n - 1.0);
}

}  // namespace solver
}  // namespace heatsim
