#include "backend.hpp"

#include <cmath>
#include <sstream>

namespace heatsim::kernels {

const char* to_string(Precision p) { return p == Precision::fp64 ? "fp64" : "fp32"; }

const char* to_string(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::dirichlet: return "dirichlet";
    case BoundaryKind::neumann: return "neumann";
    case BoundaryKind::periodic: return "periodic";
  }
  return "?";
}

double BoundaryFace::at(double t) const {
  if (kind != BoundaryKind::dirichlet || amplitude == 0.0) return value;
  return value + amplitude * std::sin(2.0 * M_PI * frequency * t);
}

std::size_t Stencil::size() const {
  std::size_t s = 1;
  for (int d = 0; d < dims; ++d) s *= static_cast<std::size_t>(extent());
  return s;
}

static std::size_t stencil_index(const Stencil& s, int dx, int dy, int dz) {
  const std::size_t e = static_cast<std::size_t>(s.extent());
  const std::size_t ix = static_cast<std::size_t>(dx + s.radius);
  const std::size_t iy = s.dims > 1 ? static_cast<std::size_t>(dy + s.radius) : 0;
  const std::size_t iz = s.dims > 2 ? static_cast<std::size_t>(dz + s.radius) : 0;
  return (iz * (s.dims > 1 ? e : 1) + iy) * e + ix;
}

double Stencil::at(int dx, int dy, int dz) const { return weights.at(stencil_index(*this, dx, dy, dz)); }
double& Stencil::at(int dx, int dy, int dz) { return weights.at(stencil_index(*this, dx, dy, dz)); }

bool Stencil::is_star() const {
  const int r = radius;
  const int ry = dims > 1 ? r : 0, rz = dims > 2 ? r : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int axes = (dx != 0) + (dy != 0) + (dz != 0);
        if (axes > 1 && at(dx, dy, dz) != 0.0) return false;
      }
  return true;
}

bool Stencil::is_mirror_symmetric() const {
  const int r = radius;
  const int ry = dims > 1 ? r : 0, rz = dims > 2 ? r : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const double w = at(dx, dy, dz);
        if (at(-dx, dy, dz) != w || at(dx, -dy, dz) != w || at(dx, dy, -dz) != w) return false;
      }
  return true;
}

std::size_t Stencil::nonzeros() const {
  std::size_t c = 0;
  for (double w : weights) c += (w != 0.0);
  return c;
}

std::string Backend::unsupported_reason(const StencilProblem& problem) const {
  return check_capabilities(capabilities(), problem);
}

std::string check_capabilities(const Capabilities& caps, const StencilProblem& problem) {
  std::ostringstream why;
  if (problem.dims < caps.min_dims || problem.dims > caps.max_dims)
    why << "supports " << caps.min_dims << "D to " << caps.max_dims << "D, not " << problem.dims
        << "D";
  else if (problem.stencil.radius > caps.max_radius)
    why << "supports stencil radius up to " << caps.max_radius << ", not "
        << problem.stencil.radius;
  else if (!caps.box && !problem.stencil.is_star())
    why << "supports star stencils only";
  else if (problem.precision == Precision::fp64 && !caps.fp64)
    why << "does not support fp64";
  else if (problem.precision == Precision::fp32 && !caps.fp32)
    why << "does not support fp32";
  return why.str();
}

}  // namespace heatsim::kernels
