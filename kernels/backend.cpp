#include "backend.hpp"

#include "face_conductance.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace heatsim::kernels {

const char* to_string(Precision p) { return p == Precision::fp64 ? "fp64" : "fp32"; }

const char* to_string(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::dirichlet: return "dirichlet";
    case BoundaryKind::neumann: return "neumann";
    case BoundaryKind::periodic: return "periodic";
    case BoundaryKind::convective: return "convective";
  }
  return "?";
}

double CoefficientFields::face(int axis, std::int64_t i, std::int64_t j) const {
  if (has_faces()) return faces[static_cast<std::size_t>(axis)][static_cast<std::size_t>(i)];
  return face_conductance(conductivity[static_cast<std::size_t>(i)],
                          conductivity[static_cast<std::size_t>(j)]);
}

double Schedule::at(double t) const {
  if (!table.empty()) return piecewise_linear(table, t);
  if (amplitude == 0.0) return value;
  return value + amplitude * std::sin(2.0 * M_PI * frequency * t);
}

double Schedule::mean(double t0, double t1) const {
  if (!(t1 > t0)) return at(t0);
  if (!table.empty()) {
    // Integral of the piecewise-linear function: trapezoids between t0, the table times
    // inside (t0, t1), and t1.
    double integral = 0.0, ta = t0, va = at(t0);
    for (const auto& p : table) {
      if (p[0] <= t0) continue;
      if (p[0] >= t1) break;
      integral += 0.5 * (va + p[1]) * (p[0] - ta);
      ta = p[0];
      va = p[1];
    }
    integral += 0.5 * (va + at(t1)) * (t1 - ta);
    return integral / (t1 - t0);
  }
  if (amplitude == 0.0 || frequency == 0.0) return at(t0);
  const double w = 2.0 * M_PI * frequency;
  return value + amplitude * (std::cos(w * t0) - std::cos(w * t1)) / (w * (t1 - t0));
}

double BoundaryFace::at(double t) const {
  if (!names_temperature()) return value;
  if (table.empty() && amplitude == 0.0) return value;
  return schedule().at(t);
}

Schedule BoundaryFace::schedule() const {
  Schedule s;
  s.value = value;
  s.amplitude = amplitude;
  s.frequency = frequency;
  s.table = table;
  return s;
}

void Backend::upload_from(const HostField& field) { upload(field.to_doubles()); }

void Backend::download_to(double* out) {
  std::vector<double> field;
  download(field);
  const std::int64_t n = static_cast<std::int64_t>(field.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = field[static_cast<std::size_t>(i)];
}

void Backend::download_to(float* out) {
  std::vector<double> field;
  download(field);
  const std::int64_t n = static_cast<std::int64_t>(field.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(field[static_cast<std::size_t>(i)]);
}

void Backend::sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) {
  std::vector<double> field;
  download(field);
  values.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) values[i] = field.at(static_cast<std::size_t>(nodes[i]));
}

void Backend::sample_later(const std::vector<std::int64_t>& nodes) {
  later_.emplace_back();
  sample(nodes, later_.back());
}

void Backend::collect_samples(std::vector<std::vector<double>>& samples) {
  samples = std::move(later_);
  later_.clear();
}

namespace {

// Calls f(index in the field, index in the box) for every node of the box.
template <typename F>
void for_box(const FieldBox& b, F&& f) {
  std::size_t k = 0;
  for (std::int64_t z = 0; z < b.extent[2]; ++z)
    for (std::int64_t y = 0; y < b.extent[1]; ++y) {
      const std::int64_t row = ((b.lo[2] + z) * b.grid[1] + b.lo[1] + y) * b.grid[0] + b.lo[0];
      for (std::int64_t x = 0; x < b.extent[0]; ++x) f(static_cast<std::size_t>(row + x), k++);
    }
}

}  // namespace

void Backend::read_box(const FieldBox& box, double* values) {
  std::vector<double> field;
  download(field);
  for_box(box, [&](std::size_t i, std::size_t k) { values[k] = field.at(i); });
}

void Backend::write_box(const FieldBox& box, const double* values) {
  std::vector<double> field;
  download(field);
  for_box(box, [&](std::size_t i, std::size_t k) { field.at(i) = values[k]; });
  upload(field);
}

std::vector<FieldBox> boxes_around(const FieldBox& inner) {
  std::vector<FieldBox> out;
  FieldBox span;  // what is left of the grid as the axes are taken from z down to x
  span.grid = inner.grid;
  span.extent = inner.grid;
  for (int a = kMaxDims - 1; a >= 0; --a) {
    const std::int64_t lo = inner.lo[a], hi = inner.lo[a] + inner.extent[a];
    for (int side = 0; side < 2; ++side) {
      FieldBox b = span;
      b.lo[a] = side == 0 ? 0 : hi;
      b.extent[a] = side == 0 ? lo : inner.grid[a] - hi;
      if (b.points() > 0) out.push_back(b);
    }
    span.lo[a] = lo;
    span.extent[a] = inner.extent[a];
  }
  return out;
}

void Backend::read_box(const FieldBox& box, std::vector<double>& values) {
  values.resize(static_cast<std::size_t>(std::max<std::int64_t>(0, box.points())));
  read_box(box, values.data());
}

void Backend::write_box(const FieldBox& box, const std::vector<double>& values) {
  if (values.size() != static_cast<std::size_t>(std::max<std::int64_t>(0, box.points())))
    throw std::invalid_argument(name() + ": write_box got " + std::to_string(values.size()) +
                                " values for a box of " + std::to_string(box.points()));
  write_box(box, values.data());
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
  if (!why.str().empty() || caps.temperature_dependence) return why.str();
  if (problem.coefficients && problem.coefficients->temperature)
    why << "does not re-evaluate temperature-dependent materials (tables, phase change) each "
           "step";
  else if (problem.coefficients && !problem.coefficients->radiation.empty())
    why << "does not radiate from surfaces inside the body";
  else
    for (int f = 0; f < 2 * problem.dims; ++f)
      if (problem.faces[f].radiates()) {
        why << "does not radiate from faces (emissivity)";
        break;
      }
  return why.str();
}

}  // namespace heatsim::kernels
