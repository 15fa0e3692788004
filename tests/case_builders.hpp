// Small builders for the real-problem parts of a solver::Case, shared by the tests that fill
// cases in C++ rather than from YAML.
#pragma once

#include <array>
#include <string>

#include "solver/case.hpp"

namespace heatsim_tests {

inline heatsim::solver::MaterialSpec material(const std::string& name, double k, double rho,
                                              double cp) {
  heatsim::solver::MaterialSpec m;
  m.name = name;
  m.conductivity = k;
  m.density = rho;
  m.specific_heat = cp;
  return m;
}

inline heatsim::solver::RegionSpec region(const std::string& material,
                                          heatsim::solver::ShapeSpec shape = {}) {
  heatsim::solver::RegionSpec r;
  r.material = material;
  r.shape = shape;
  return r;
}

inline heatsim::solver::ShapeSpec box(std::array<double, 3> lower, std::array<double, 3> upper) {
  heatsim::solver::ShapeSpec s;
  s.kind = heatsim::solver::ShapeKind::box;
  s.lower = lower;
  s.upper = upper;
  return s;
}

// Every face of `c` convective (h toward `ambient`), but `insulated` (a face index 0-5: x-, x+,
// y-, ...; -1 for none), which is neumann with no flux.
inline void convective_faces(heatsim::solver::Case& c, double h, double ambient,
                             int insulated = -1) {
  for (auto& f : c.boundary) {
    f.kind = heatsim::kernels::BoundaryKind::convective;
    f.transfer = h;
    f.value = ambient;
  }
  if (insulated < 0) return;
  auto& f = c.boundary[static_cast<std::size_t>(insulated)];
  f.kind = heatsim::kernels::BoundaryKind::neumann;
  f.transfer = 0.0;
  f.value = 0.0;
}

}  // namespace heatsim_tests
