// Small problems for the read_box / write_box tests (tests/box_copy_check.hpp): every
// dimension, a radius-2 star with Dirichlet and Neumann faces and a periodic axis, and
// optionally the varying-coefficient form with a convective face.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim_tests {

inline heatsim::kernels::StencilProblem box_test_problem(int dims, bool coefficients,
                                                         int fusion_depth = 1) {
  using namespace heatsim::kernels;
  StencilProblem p;
  p.dims = dims;
  const int r = coefficients ? 1 : 2;
  p.stencil.dims = dims;
  p.stencil.radius = r;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  double centre = 1.0;
  for (int a = 0; a < dims; ++a)
    for (int d = 1; d <= r; ++d) {
      const double w = 0.05 / d;
      centre -= 4 * w;
      for (int s : {-d, d}) {
        int off[3] = {0, 0, 0};
        off[a] = s;
        p.stencil.at(off[0], off[1], off[2]) = w;
      }
    }
  p.stencil.at(0, 0, 0) = centre;
  const std::int64_t n[3] = {13, 9, 7};
  for (int a = 0; a < dims; ++a) {
    p.n[a] = n[a];
    p.h[a] = 0.1;
  }
  p.faces[0].kind = BoundaryKind::dirichlet;
  p.faces[0].value = 0.5;
  p.faces[1].kind = BoundaryKind::neumann;
  p.faces[1].value = 0.25;
  if (dims > 1) p.faces[2].kind = p.faces[3].kind = BoundaryKind::periodic;
  p.dt = 0.01;
  p.fusion_depth = fusion_depth;
  if (coefficients) {
    auto f = std::make_shared<CoefficientFields>();
    const std::size_t points = static_cast<std::size_t>(p.points());
    f->conductivity.assign(points, 1.0);
    f->capacity.assign(points, 50.0);
    for (std::size_t i = 0; i < points; i += 3) f->conductivity[i] = 2.0;
    p.coefficients = f;
    p.faces[1].kind = BoundaryKind::convective;
    p.faces[1].transfer = 5.0;
    p.faces[1].value = 1.0;
  }
  return p;
}

}  // namespace heatsim_tests
