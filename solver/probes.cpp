#include "probes.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "stencil.hpp"
#include "subgrid.hpp"

namespace heatsim::solver {

namespace {

std::string describe_point(const Case& c, const std::array<double, 3>& p) {
  std::ostringstream s;
  s.precision(10);
  s << "(";
  for (int a = 0; a < c.grid.dims; ++a) s << (a ? ", " : "") << p[static_cast<std::size_t>(a)];
  s << ")";
  return s.str();
}

std::string describe_domain(const Case& c) {
  std::ostringstream s;
  s.precision(10);
  for (int a = 0; a < c.grid.dims; ++a)
    s << (a ? " x " : "") << "[0, " << c.grid.length[static_cast<std::size_t>(a)] << "]";
  return s.str();
}

// The cell of a coordinate on one axis: its lower node and the fraction t in [0, 1] of the
// way to the upper node (which is node 0 again past the last node of a periodic axis).
struct AxisCell {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  double t = 0.0;
};

// The stencil's fractions across its cell, and its corners' weights from them: products of
// (1 - f) and f, corner c taking f on axis a where bit a of c is set.
void set_fractions(ProbeStencil& s, int dims, const std::array<double, 3>& f) {
  s.fraction = f;
  s.weights.assign(s.nodes.size(), 1.0);
  for (std::size_t k = 0; k < s.nodes.size(); ++k)
    for (int a = 0; a < dims; ++a)
      s.weights[k] *=
          (k >> a) & 1 ? f[static_cast<std::size_t>(a)] : 1.0 - f[static_cast<std::size_t>(a)];
}

}  // namespace

ProbeStencil probe_stencil(const Case& c, const std::string& name,
                           const std::array<double, 3>& point) {
  const int dims = c.grid.dims;
  std::array<AxisCell, 3> cells{};
  for (int a = 0; a < dims; ++a) {
    const auto ua = static_cast<std::size_t>(a);
    const double length = c.grid.length[ua];
    const double x = point[ua];
    // A rounding's worth beyond a face (a point typed as the face's coordinate) is the face.
    const double slack = 1e-12 * length;
    if (!std::isfinite(x) || x < -slack || x > length + slack)
      throw std::invalid_argument("probes.points." + name + ": " + describe_point(c, point) +
                                  " is outside the domain " + describe_domain(c));
    const std::int64_t n = c.grid.n[ua];
    const bool periodic = c.boundary[2 * ua].kind == BoundaryKind::periodic;
    const double s = std::clamp(x, 0.0, length) / spacing(c, a);
    // Cells run from node i to i + 1: n - 1 of them, or n on a periodic axis (the last one
    // closes the period).
    const std::int64_t last_cell = periodic ? n - 1 : n - 2;
    const std::int64_t i =
        std::clamp(static_cast<std::int64_t>(std::floor(s)), std::int64_t{0}, last_cell);
    AxisCell& cell = cells[ua];
    cell.lower = i;
    cell.upper = periodic ? (i + 1) % n : i + 1;
    cell.t = std::clamp(s - static_cast<double>(i), 0.0, 1.0);
  }

  ProbeStencil out;
  out.name = name;
  out.point = point;
  const std::int64_t nx = c.grid.n[0];
  const std::int64_t ny = dims > 1 ? c.grid.n[1] : 1;
  const int corners = 1 << dims;
  for (int corner = 0; corner < corners; ++corner) {
    std::array<std::int64_t, 3> idx{0, 0, 0};
    for (int a = 0; a < dims; ++a) {
      const AxisCell& cell = cells[static_cast<std::size_t>(a)];
      idx[static_cast<std::size_t>(a)] = (corner >> a) & 1 ? cell.upper : cell.lower;
    }
    out.nodes.push_back(idx[0] + nx * (idx[1] + ny * idx[2]));
  }
  std::array<double, 3> t{0, 0, 0};
  for (int a = 0; a < dims; ++a)
    t[static_cast<std::size_t>(a)] = cells[static_cast<std::size_t>(a)].t;
  set_fractions(out, dims, t);
  return out;
}

namespace {

std::string joined(const std::vector<std::pair<std::string, std::string>>& errors) {
  std::string text;
  for (const auto& [key, what] : errors) text += (text.empty() ? "" : "; ") + key + ": " + what;
  return text;
}

// "probes.points.<name>: what" as (key, what).
std::pair<std::string, std::string> keyed(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos) return {"", message};
  return {message.substr(0, colon), message.substr(colon + 2)};
}

}  // namespace

ProbeErrors::ProbeErrors(std::vector<std::pair<std::string, std::string>> errors)
    : std::invalid_argument(joined(errors)), all(std::move(errors)) {}

std::vector<ProbeStencil> probe_stencils(const Case& c, const std::vector<double>* capacity,
                                         const std::vector<std::int32_t>* ids) {
  std::vector<ProbeStencil> out;
  out.reserve(c.probes.points.size());
  // Every point's problem at once, as the case's checks report theirs.
  std::vector<std::pair<std::string, std::string>> errors;
  for (const auto& [name, point] : c.probes.points) {
    try {
      out.push_back(probe_stencil(c, name, point));
    } catch (const std::invalid_argument& e) {
      errors.push_back(keyed(e.what()));
    }
  }
  if (!errors.empty()) throw ProbeErrors(std::move(errors));
  if (ids && !ids->empty()) {
    // The fractions by resistance, every point's at once; corner 0 is the cell's lower corner.
    std::vector<std::array<double, 3>> points, t;
    std::vector<std::int64_t> lower;
    for (const ProbeStencil& s : out) {
      points.push_back(s.point);
      lower.push_back(s.nodes[0]);
      t.push_back(s.fraction);
    }
    const std::vector<std::array<double, 3>> f = resistance_fractions(c, *ids, points, lower, t);
    for (std::size_t p = 0; p < out.size(); ++p)
      if (f[p] != out[p].fraction) set_fractions(out[p], c.grid.dims, f[p]);
  }
  for (ProbeStencil& s : out) {
    const std::string& name = s.name;
    const std::array<double, 3>& point = s.point;
    if (capacity && !capacity->empty()) {
      double body = 0.0;
      for (std::size_t k = 0; k < s.nodes.size(); ++k) {
        if (capacity->at(static_cast<std::size_t>(s.nodes[k])) > 0.0)
          body += s.weights[k];
        else if (s.weights[k] > 0.0)
          s.partial = true;
      }
      if (s.partial) {
        if (!(body > 0.0)) {
          errors.push_back({"probes.points." + name,
                            describe_point(c, point) +
                                " lies in a void (no corner of its cell is in the body)"});
          continue;
        }
        for (std::size_t k = 0; k < s.nodes.size(); ++k)
          s.weights[k] =
              capacity->at(static_cast<std::size_t>(s.nodes[k])) > 0.0 ? s.weights[k] / body : 0.0;
      }
    }
  }
  if (!errors.empty()) throw ProbeErrors(std::move(errors));
  return out;
}

namespace {

// Multilinear interpolation of the corner values (corner order of ProbeStencil) by linear
// interpolation along x between corner pairs, then along y, then z.
double combine(const ProbeStencil& s, std::array<double, 8> v) {
  if (s.partial) {  // the body corners' weighted sum (a void corner's value is never read)
    double sum = 0.0;
    for (std::size_t k = 0; k < s.nodes.size(); ++k)
      if (s.weights[k] > 0.0) sum += s.weights[k] * v[k];
    return sum;
  }
  std::size_t count = s.nodes.size();
  for (int a = 0; count > 1; ++a) {
    const double t = s.fraction[static_cast<std::size_t>(a)];
    count /= 2;
    for (std::size_t k = 0; k < count; ++k) v[k] = v[2 * k] + t * (v[2 * k + 1] - v[2 * k]);
  }
  return v[0];
}

}  // namespace

double interpolate(const ProbeStencil& stencil, const std::vector<double>& field) {
  std::array<double, 8> v{};
  for (std::size_t k = 0; k < stencil.nodes.size(); ++k)
    v[k] = field.at(static_cast<std::size_t>(stencil.nodes[k]));
  return combine(stencil, v);
}

ProbeSampler::ProbeSampler(std::vector<ProbeStencil> stencils) : stencils_(std::move(stencils)) {
  for (const ProbeStencil& s : stencils_)
    nodes_.insert(nodes_.end(), s.nodes.begin(), s.nodes.end());
  std::sort(nodes_.begin(), nodes_.end());
  nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());
  for (const ProbeStencil& s : stencils_) {
    std::vector<std::size_t> slots;
    for (std::int64_t node : s.nodes)
      slots.push_back(static_cast<std::size_t>(
          std::lower_bound(nodes_.begin(), nodes_.end(), node) - nodes_.begin()));
    slots_.push_back(std::move(slots));
  }
}

std::vector<std::string> ProbeSampler::names() const {
  std::vector<std::string> out;
  for (const ProbeStencil& s : stencils_) out.push_back(s.name);
  return out;
}

std::vector<double> ProbeSampler::values(const std::vector<double>& node_values) const {
  if (node_values.size() != nodes_.size())
    throw std::invalid_argument("probe sampling: " + std::to_string(node_values.size()) +
                                " values for " + std::to_string(nodes_.size()) + " nodes");
  std::vector<double> out;
  out.reserve(stencils_.size());
  for (std::size_t p = 0; p < stencils_.size(); ++p) {
    std::array<double, 8> v{};
    for (std::size_t k = 0; k < slots_[p].size(); ++k) v[k] = node_values[slots_[p][k]];
    out.push_back(combine(stencils_[p], v));
  }
  return out;
}

}  // namespace heatsim::solver
