#include "materials.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "contacts.hpp"
#include "expression.hpp"
#include "kernels/boundary_rules.hpp"
#include "kernels/face_conductance.hpp"
#include "stencil.hpp"
#include "subgrid.hpp"

namespace heatsim::solver {

using kernels::face_conductance;

namespace {

// The grid as the node loops here see it: points per axis (1 on unused axes).
struct NodeGrid {
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<double, 3> h{1.0, 1.0, 1.0};

  explicit NodeGrid(const Case& c) : dims(c.grid.dims) {
    for (int a = 0; a < 3; ++a) {
      n[a] = a < dims ? c.grid.n[a] : 1;
      h[a] = spacing(c, a);
    }
  }
  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  std::array<std::int64_t, 3> index(std::int64_t i) const {
    return {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
  }
  // Node coordinates (origin 0), 0 on unused axes.
  std::array<double, 3> position(std::int64_t i) const {
    const auto idx = index(i);
    std::array<double, 3> x{0, 0, 0};
    for (int a = 0; a < dims; ++a) x[a] = static_cast<double>(idx[a]) * h[a];
    return x;
  }
};

// Trapezoidal weight of node i on an axis: 1/2 on the two end nodes of a non-periodic active
// axis, else 1 (the weights of FieldStats::total_heat).
double trapezoid_weight(const Case& c, int axis, std::int64_t i) {
  if (axis >= c.grid.dims || c.boundary[2 * axis].kind == BoundaryKind::periodic) return 1.0;
  return (i == 0 || i == c.grid.n[axis] - 1) ? 0.5 : 1.0;
}

double node_weight(const Case& c, const NodeGrid& g, std::int64_t i) {
  const auto idx = g.index(i);
  return trapezoid_weight(c, 0, idx[0]) * trapezoid_weight(c, 1, idx[1]) *
         trapezoid_weight(c, 2, idx[2]);
}

double cell_volume(const NodeGrid& g) {
  double v = 1.0;
  for (int a = 0; a < g.dims; ++a) v *= g.h[a];
  return v;
}

std::string location(const NodeGrid& g, std::int64_t i) {
  const auto x = g.position(i);
  const char* names[3] = {"x", "y", "z"};
  std::ostringstream s;
  for (int a = 0; a < g.dims; ++a) s << (a ? ", " : "") << names[a] << " = " << x[a];
  return s.str();
}

// Which nodes lie inside a box, ball or `where` shape (`key` names the shape in messages).
// Bounds are inclusive, and a node within 1e-9 of a spacing of a bound counts as on it, so a
// bound written as a node's decimal coordinate (0.3 for 3 * 0.1) takes that node in.
// `strict` (voids): a box holds a node when it holds the node's whole control volume (half a
// spacing each way, clipped to the domain), a ball when the node lies inside its surface by more
// than 1e-9 of a spacing; so a node whose control volume the body shares stays the body's (its
// capacity is not 0).
std::vector<char> inside_shape(const Case& c, const ShapeSpec& shape, const std::string& key,
                               bool strict = false) {
  const NodeGrid g(c);
  std::vector<char> inside(static_cast<std::size_t>(g.points()), 0);
  std::optional<Expression> formula;
  if (shape.kind == ShapeKind::where) {
    try {
      formula = Expression::compile(shape.where, expression_variables(g.dims));
    } catch (const ExpressionError& e) {
      throw std::invalid_argument(key + ".where: " + e.what());
    }
  }
  if (shape.kind == ShapeKind::file)
    throw std::invalid_argument(key + ": a file shape has no node test");
  if (shape.kind == ShapeKind::everywhere) {  // no node's position needed
    std::fill(inside.begin(), inside.end(), 1);
    return inside;
  }
  if (formula) {  // nonzero = inside; NaN is no answer, so outside
    // A node on a face of the domain is tested kFaceInset of a spacing inside it.
    std::array<bool, 3> periodic{};
    for (int a = 0; a < g.dims; ++a) periodic[a] = c.boundary[2 * a].kind == BoundaryKind::periodic;
    formula->node_test(
        g.dims, g.n.data(),
        [&](int a, std::int64_t index) {
          const double x = static_cast<double>(index) * g.h[a];
          if (periodic[a] || g.n[a] < 2) return x;
          if (index == 0) return x + kFaceInset * g.h[a];
          return index == g.n[a] - 1 ? x - kFaceInset * g.h[a] : x;
        },
        inside.data());
    return inside;
  }
  if (shape.kind == ShapeKind::box) {
    // A box's test is one per axis, each of the node's coordinate on that axis alone: found
    // once per coordinate, then a row (y, z) outside on y or z holds no node and one inside
    // takes the x axis's answers.
    std::array<std::vector<char>, 3> within;
    for (int a = 0; a < 3; ++a) {
      std::vector<char>& w = within[static_cast<std::size_t>(a)];
      w.assign(static_cast<std::size_t>(g.n[a]), 1);
      if (a >= g.dims) continue;
      const double tol = 1e-9 * g.h[a];
      const bool periodic = c.boundary[2 * a].kind == BoundaryKind::periodic;
      const double end = static_cast<double>(g.n[a] - 1) * g.h[a];
      for (std::int64_t q = 0; q < g.n[a]; ++q) {
        const double x = static_cast<double>(q) * g.h[a];
        double lo = x, hi = x;
        if (strict) {
          lo = periodic ? x - 0.5 * g.h[a] : std::max(x - 0.5 * g.h[a], 0.0);
          hi = periodic ? x + 0.5 * g.h[a] : std::min(x + 0.5 * g.h[a], end);
        }
        w[static_cast<std::size_t>(q)] = !(lo < shape.lower[a] - tol || hi > shape.upper[a] + tol);
      }
    }
    const std::int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
#pragma omp parallel for collapse(2) if (g.points() >= 32768)
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y) {
        if (!within[1][static_cast<std::size_t>(y)] || !within[2][static_cast<std::size_t>(z)])
          continue;
        std::copy(within[0].begin(), within[0].end(),
                  inside.begin() + static_cast<std::ptrdiff_t>((z * ny + y) * nx));
      }
    return inside;
  }
  double h_min = g.h[0];
  for (int a = 1; a < g.dims; ++a) h_min = std::min(h_min, g.h[a]);
#pragma omp parallel for if (g.points() >= 32768)
  for (std::int64_t i = 0; i < g.points(); ++i) {
    const auto x = g.position(i);
    bool in = true;
    switch (shape.kind) {
      case ShapeKind::everywhere:
      case ShapeKind::where:  // both answered above
        break;
      case ShapeKind::box:
        for (int a = 0; a < g.dims; ++a) {
          const double tol = 1e-9 * g.h[a];
          double lo = x[a], hi = x[a];
          if (strict) {
            const bool periodic = c.boundary[2 * a].kind == BoundaryKind::periodic;
            const double end = static_cast<double>(g.n[a] - 1) * g.h[a];
            lo = periodic ? x[a] - 0.5 * g.h[a] : std::max(x[a] - 0.5 * g.h[a], 0.0);
            hi = periodic ? x[a] + 0.5 * g.h[a] : std::min(x[a] + 0.5 * g.h[a], end);
          }
          if (lo < shape.lower[a] - tol || hi > shape.upper[a] + tol) in = false;
        }
        break;
      case ShapeKind::ball: {
        double r2 = 0.0;
        for (int a = 0; a < g.dims; ++a) r2 += (x[a] - shape.center[a]) * (x[a] - shape.center[a]);
        in = strict ? std::sqrt(r2) < shape.radius - 1e-9 * h_min
                    : std::sqrt(r2) <= shape.radius + 1e-9 * h_min;
        break;
      }
      case ShapeKind::file:
        break;
    }
    inside[static_cast<std::size_t>(i)] = in ? 1 : 0;
  }
  return inside;
}

std::int32_t material_index(const Case& c, const std::string& name, const std::string& key) {
  for (std::size_t m = 0; m < c.materials.size(); ++m)
    if (c.materials[m].name == name) return static_cast<std::int32_t>(m);
  throw std::invalid_argument(key + ": unknown material '" + name + "'");
}

const char* const kFaceKeys[kernels::kFaces] = {"x-", "x+", "y-", "y+", "z-", "z+"};

bool same_schedule(const kernels::Schedule& a, const kernels::Schedule& b) {
  return a.value == b.value && a.amplitude == b.amplitude && a.frequency == b.frequency &&
         a.table == b.table;
}

// Why a box or ball that reaches into the domain holds no share of any node: it is narrower
// than a spacing along some axis ("the ball (diameter 2e-05) is smaller than the grid resolves
// (spacing 0.001): no node holds a share of it"). Empty when that is not the reason (the shape
// lies outside the domain, or is a spacing across or more: then it lies in voids).
std::string unresolved_shape(const NodeGrid& g, const ShapeSpec& shape) {
  if (shape.kind != ShapeKind::box && shape.kind != ShapeKind::ball) return "";
  const char* names[3] = {"x", "y", "z"};
  bool reaches = true;
  int narrow = -1;
  double narrowest = 1.0;  // the shape's extent over the spacing, along the narrowest axis
  for (int a = 0; a < g.dims; ++a) {
    const double end = static_cast<double>(g.n[a] - 1) * g.h[a];
    const double lo =
        shape.kind == ShapeKind::box ? shape.lower[a] : shape.center[a] - shape.radius;
    const double hi =
        shape.kind == ShapeKind::box ? shape.upper[a] : shape.center[a] + shape.radius;
    if (hi < 0.0 || lo > end) reaches = false;
    if ((hi - lo) / g.h[a] < narrowest) {
      narrowest = (hi - lo) / g.h[a];
      narrow = a;
    }
  }
  if (!reaches || narrow < 0) return "";
  std::ostringstream s;
  if (shape.kind == ShapeKind::ball)
    s << "the ball (diameter " << 2.0 * shape.radius << ") is smaller than the grid resolves";
  else
    s << "the box (" << shape.upper[narrow] - shape.lower[narrow] << " across along "
      << names[narrow] << ") is thinner than the grid resolves";
  s << " (spacing " << g.h[narrow] << "): no node holds a share of it";
  return s.str();
}

// The density field of one source at factor 1 (W/m^3 per node).
std::vector<double> source_density(const Case& c, const SourceSpec& s, const std::string& key,
                                   const std::vector<std::int32_t>& ids,
                                   const std::vector<SliverFold>* slivers) {
  const NodeGrid g(c);
  const std::size_t points = static_cast<std::size_t>(g.points());
  if (s.shape.kind == ShapeKind::file) {
    if (s.density.size() != points)
      throw std::invalid_argument(key + ".file: " + std::to_string(s.density.size()) +
                                  " values for a grid of " + std::to_string(points) + " nodes");
    return s.density;
  }
  if (s.power.has_value() == s.power_density.has_value())
    throw std::invalid_argument(key + ": give exactly one of power and power_density");
  // The share of each node's control volume the shape holds: below the grid wherever the case
  // has materials and no file region (subgrid.hpp), else 1 at the nodes inside.
  const bool sampled = samples_source_shapes(c);
  std::vector<double> share;
  if (sampled) {
    share = subgrid_fractions(c, s.shape, ids, slivers);
  } else {
    const std::vector<char> inside = inside_shape(c, s.shape, key);
    share.assign(inside.begin(), inside.end());
  }
  double q = 0.0;
  if (s.power_density) {
    q = *s.power_density;
  } else {
    // Spread `power` so that the heat the total integrates, sum_i w_i q_i * cell volume (the
    // capacity cancels: C_i du_i/dt = q_i), grows by exactly power per unit time.
    // Node weights are products of 1 and 1/2, so with whole shares every partial sum is a
    // multiple of 1/8 far below 2^53: exact in any order. Sampled shares are summed in node
    // order, so the threads' split cannot change the total either.
    double weighted = 0.0;
    for (std::int64_t i = 0; i < g.points(); ++i)
      weighted += share[static_cast<std::size_t>(i)] * node_weight(c, g, i);
    if (weighted == 0.0) {
      const std::string unresolved = unresolved_shape(g, s.shape);
      if (!unresolved.empty())
        throw std::invalid_argument(key + ": " + unresolved +
                                    ", so its power cannot be spread; enlarge the shape to about "
                                    "a spacing or refine the grid");
      throw std::invalid_argument(key + (sampled ? ": the shape holds no part of the body, so "
                                                   "its power cannot be spread"
                                                 : ": the shape holds no node"));
    }
    q = *s.power / (weighted * cell_volume(g));
  }
  // The density in the shares' array: no second array of the grid's size, zero-filled on one
  // thread first.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < g.points(); ++i)
    share[static_cast<std::size_t>(i)] = q * share[static_cast<std::size_t>(i)];
  return share;
}

}  // namespace

std::string node_location(const Case& c, std::int64_t node) { return location(NodeGrid(c), node); }
double cell_volume(const Case& c) { return cell_volume(NodeGrid(c)); }
double node_weight(const Case& c, std::int64_t node) { return node_weight(c, NodeGrid(c), node); }

std::vector<std::int32_t> material_ids(const Case& c) {
  const NodeGrid g(c);
  const std::size_t points = static_cast<std::size_t>(g.points());
  if (c.materials.empty() && c.regions.empty()) return std::vector<std::int32_t>(points, 0);
  std::vector<std::int32_t> ids(points, -1);
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    const std::string key = "regions[" + std::to_string(r) + "]";
    if (region.shape.kind == ShapeKind::file) {
      if (region.map.size() != points)
        throw std::invalid_argument(key + ".file: " + std::to_string(region.map.size()) +
                                    " values for a grid of " + std::to_string(points) + " nodes");
      std::vector<std::pair<std::int64_t, std::int32_t>> table;
      for (const auto& [id, name] : region.ids)
        table.emplace_back(id, material_index(c, name, key + ".file.ids"));
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < g.points(); ++i) {
        const std::size_t at = static_cast<std::size_t>(i);
        for (const auto& [id, m] : table)
          if (region.map[at] == id) {
            ids[at] = m;
            break;
          }
      }
      continue;
    }
    const std::int32_t m =
        region.is_void ? kVoid : material_index(c, region.material, key + ".material");
    const std::vector<char> inside = inside_shape(c, region.shape, key, region.is_void);
    // Regions are applied one after the other (a later one wins); within one, nodes are
    // independent.
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < g.points(); ++i)
      if (inside[static_cast<std::size_t>(i)]) ids[static_cast<std::size_t>(i)] = m;
  }
  // An integer count, and the smallest index: the same whatever the threads' split.
  std::int64_t unassigned = 0, first = g.points();
#pragma omp parallel for reduction(+ : unassigned) reduction(min : first) schedule(static)
  for (std::int64_t i = 0; i < g.points(); ++i)
    if (ids[static_cast<std::size_t>(i)] == -1) {
      ++unassigned;
      first = std::min(first, i);
    }
  if (unassigned > 0) {
    std::ostringstream msg;
    msg << unassigned << (unassigned == 1 ? " node has" : " nodes have")
        << " no material, e.g. the node at " << location(g, first)
        << " (add a region, e.g. {material: name} with no shape for the whole domain)";
    throw std::invalid_argument(msg.str());
  }
  return ids;
}

namespace {

// The index of node i's neighbour one step up `axis` (the wrap on a periodic axis), or -1 past
// the last node of a non-periodic one.
std::int64_t upper_neighbour(const Case& c, const NodeGrid& g, int axis, std::int64_t i) {
  const auto idx = g.index(i);
  std::int64_t stride = 1;
  for (int b = 0; b < axis; ++b) stride *= g.n[b];
  if (idx[axis] + 1 < g.n[axis]) return i + stride;
  if (c.boundary[2 * axis].kind != BoundaryKind::periodic) return -1;
  return i - (g.n[axis] - 1) * stride;
}

// Per axis and face (node i to its upper neighbour, the index of i), the share of the contact
// between the two nodes' materials (contacts.hpp): the surface of the last region that holds
// one of the two nodes and not the other is their interface; a ball's normal is radial where
// the segment between the nodes crosses its surface (ball_crossing), a `where` shape's is its
// indicator's (indicator_contact_share); 1 elsewhere (boxes, maps). Empty (1 throughout)
// without a ball or `where` region or a contact; 1 on faces without a contact.
std::array<std::vector<double>, 3> contact_shares(const Case& c, const NodeGrid& g,
                                                  const std::vector<std::int32_t>& ids,
                                                  const ContactTable& contacts) {
  std::array<std::vector<double>, 3> shares;
  const bool curved = std::any_of(c.regions.begin(), c.regions.end(), [](const RegionSpec& r) {
    return r.shape.kind == ShapeKind::ball || r.shape.kind == ShapeKind::where;
  });
  if (!contacts.any() || !curved) return shares;
  std::vector<std::optional<Expression>> formulas(c.regions.size());
  for (std::size_t r = 0; r < c.regions.size(); ++r)
    if (c.regions[r].shape.kind == ShapeKind::where)
      formulas[r] = Expression::compile(c.regions[r].shape.where, expression_variables(g.dims));
  double h_min = g.h[0];
  for (int a = 1; a < g.dims; ++a) h_min = std::min(h_min, g.h[a]);
  const std::int64_t points = g.points();
  // Per region, the nodes it holds, as material_ids tests them.
  std::vector<std::vector<char>> holds(c.regions.size());
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    if (region.shape.kind != ShapeKind::file) {
      holds[r] =
          inside_shape(c, region.shape, "regions[" + std::to_string(r) + "]", region.is_void);
      continue;
    }
    holds[r].assign(static_cast<std::size_t>(points), 0);
    for (std::size_t i = 0; i < region.map.size() && i < holds[r].size(); ++i)
      for (const auto& entry : region.ids)
        if (region.map[i] == entry.first) holds[r][i] = 1;
  }
  for (int a = 0; a < g.dims; ++a) {
    std::vector<double>& share = shares[static_cast<std::size_t>(a)];
    share.assign(static_cast<std::size_t>(points), 1.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < points; ++i) {
      const std::int64_t j = upper_neighbour(c, g, a, i);
      if (j < 0) continue;
      const std::size_t si = static_cast<std::size_t>(i), sj = static_cast<std::size_t>(j);
      if (!(contacts.resistance(ids[si], ids[sj]) > 0.0)) continue;
      for (std::size_t r = c.regions.size(); r-- > 0;) {
        if (holds[r][si] == holds[r][sj]) continue;
        const ShapeSpec& shape = c.regions[r].shape;
        const auto p = g.position(i);
        double x[3] = {p[0], p[1], p[2]};
        if (shape.kind == ShapeKind::ball) {
          x[a] = ball_crossing(shape, g.dims, x, a, g.h[a]);
          share[si] = ball_contact_share(shape, g.dims, x, a);
        } else if (shape.kind == ShapeKind::where) {
          // Between the two nodes (the upper one's coordinate past a periodic axis's seam),
          // in the wrapped coordinates the formula sees.
          const Expression& f = *formulas[r];
          const auto inside = [&](const double* q) {
            double w[3] = {q[0], q[1], q[2]};
            for (int b = 0; b < g.dims; ++b) {
              const double period = static_cast<double>(g.n[b]) * g.h[b];
              if (c.boundary[2 * b].kind == BoundaryKind::periodic && w[b] >= period)
                w[b] -= period;
            }
            const double v = f.eval(w);
            return v != 0.0 && !std::isnan(v);
          };
          share[si] = indicator_contact_share(inside, g.dims, x, a, x[a], x[a] + g.h[a], h_min);
        }
        break;
      }
    }
  }
  return shares;
}

// The share of face i along axis a (contact_shares), 1 where none were found.
double share_at(const std::array<std::vector<double>, 3>& shares, int a, std::int64_t i) {
  const std::vector<double>& s = shares[static_cast<std::size_t>(a)];
  return s.empty() ? 1.0 : s[static_cast<std::size_t>(i)];
}

// Faces from the nodes' own materials: the harmonic mean of the two nodes' conductivities
// along the axis (face_conductance.hpp), what the backends form from k alone, with a contact
// between the two nodes' materials in series (the interface halfway between them).
std::array<std::vector<double>, 3> node_faces(const Case& c, const NodeGrid& g,
                                              const std::vector<std::int32_t>& ids,
                                              const std::vector<double>& k,
                                              const ContactTable& contacts,
                                              const std::array<std::vector<double>, 3>& shares) {
  const auto along = [&](std::int64_t i, int axis) {
    const std::int32_t m = ids[static_cast<std::size_t>(i)];
    if (m < 0 || c.materials.empty()) return k[static_cast<std::size_t>(i)];
    return c.materials[static_cast<std::size_t>(m)].conductivity_along(axis);
  };
  std::array<std::vector<double>, 3> faces;
  const std::int64_t points = g.points();
  for (int a = 0; a < g.dims; ++a) {
    std::vector<double>& K = faces[static_cast<std::size_t>(a)];
    K.assign(static_cast<std::size_t>(points), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < points; ++i) {
      const std::int64_t j = upper_neighbour(c, g, a, i);
      if (j < 0) continue;
      const double Kij = kernels::face_conductance(along(i, a), along(j, a));
      const double R =
          contacts.resistance(ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(j)]);
      K[static_cast<std::size_t>(i)] =
          with_contact(Kij, g.h[a], R > 0.0 ? R / share_at(shares, a, i) : R);
    }
  }
  return faces;
}

// The laws of the case's temperature-dependent materials as ratios to their reference values
// (kernels/temperature_laws.hpp), each node's law, and each face's share of its reference
// resistance in the lower node's material: for materials m_i, m_j with reference k_i != k_j
// along the axis and a face of reference K, the segment's parts a_i + a_j = 1 with
// a_i/k_i + a_j/k_j = 1/K (exact where the faces are a series of the two), share = a_i K/k_i;
// 1/2 within one material.
// The part a_i of a segment of conductance K in the material of k_i, the rest in k_j's
// (a_i / k_i + (1 - a_i) / k_j = 1 / K; k_i != k_j), and the lower node's share of the face's
// resistance, a_i K / k_i.
double series_part(double K, double ki, double kj) {
  return std::clamp((1.0 / K - 1.0 / kj) / (1.0 / ki - 1.0 / kj), 0.0, 1.0);
}
// A face that conducts less than even its poorer material over the whole segment (a strip cut
// or moved at a corner) leaves series_part at 1: its resistance is then all the lower node's
// material's, 1 - contact, not ai K / ki, which left the rest to the other material's k(T) (a
// brick square in insulation: the faces on one side of its corner rows scaled with the brick's
// law, on the other with the insulation's, 0.75 K between mirrored points).
double lower_share(double ai, double K, double ki, double contact) {
  return ai >= 1.0 ? 1.0 - contact : std::clamp(ai * K / ki, 0.0, 1.0 - contact);
}

std::shared_ptr<const kernels::TemperatureDependence> temperature_dependence(
    const Case& c, const NodeGrid& g, const std::vector<std::int32_t>& ids,
    const kernels::CoefficientFields& fields, const std::array<std::vector<double>, 3>& shares) {
  auto out = std::make_shared<kernels::TemperatureDependence>();
  std::vector<std::int32_t> law_of(c.materials.size(), -1);
  for (std::size_t m = 0; m < c.materials.size(); ++m) {
    const MaterialSpec& spec = c.materials[m];
    if (!spec.temperature_dependent()) continue;
    kernels::TemperatureLaw law;
    for (const auto& e : spec.conductivity_table)
      law.conductivity.push_back({e[0], e[1] / spec.conductivity});
    for (const auto& e : spec.specific_heat_table)
      law.capacity.push_back({e[0], e[1] / spec.specific_heat});
    if (spec.phase_change) {
      law.solidus = spec.phase_change->solidus;
      law.liquidus = spec.phase_change->liquidus;
      law.latent = spec.phase_change->latent_heat / spec.specific_heat;  // (rho L) / (rho c_ref)
    }
    law.prepare();
    law_of[m] = static_cast<std::int32_t>(out->laws.size());
    out->laws.push_back(std::move(law));
  }
  const std::int64_t points = g.points();
  out->law.assign(static_cast<std::size_t>(points), -1);
  for (std::int64_t i = 0; i < points; ++i) {
    const std::int32_t m = ids[static_cast<std::size_t>(i)];
    if (m >= 0 && fields.capacity[static_cast<std::size_t>(i)] > 0.0)
      out->law[static_cast<std::size_t>(i)] = law_of[static_cast<std::size_t>(m)];
  }
  // A contact R'' between the two nodes' materials is the part c = R'' K / h of the face's
  // reference resistance h / K that stays constant; the materials' parts are those of the face
  // without it, K' = 1 / (1/K - R''/h), as fractions of the whole (share + upper + c = 1). On a
  // curved interface the face takes R'' over its share (contact_shares).
  const ContactTable contacts(c);
  const auto contact_part = [&](std::int32_t mi, std::int32_t mj, double Kij, int a,
                                std::int64_t i) {
    const double R = contacts.resistance(mi, mj);
    return std::clamp((R > 0.0 ? R / share_at(shares, a, i) : R) * Kij / g.h[a], 0.0, 1.0);
  };
  const auto without_contact = [&](double Kij, double part) { return Kij / (1.0 - part); };
  std::array<char, 3> tied{};  // an axis with faces between materials of one reference k
  for (int a = 0; a < g.dims; ++a) {
    std::vector<double>& share = out->share[static_cast<std::size_t>(a)];
    share.assign(static_cast<std::size_t>(points), 0.5);
    std::vector<double>& contact = out->contact[static_cast<std::size_t>(a)];
    if (contacts.any()) contact.assign(static_cast<std::size_t>(points), 0.0);
    const std::vector<double>& K = fields.faces[static_cast<std::size_t>(a)];
    int tied_here = 0;
#pragma omp parallel for schedule(static) reduction(| : tied_here)
    for (std::int64_t i = 0; i < points; ++i) {
      const std::int64_t j = upper_neighbour(c, g, a, i);
      if (j < 0) continue;
      const std::int32_t mi = ids[static_cast<std::size_t>(i)], mj = ids[static_cast<std::size_t>(j)];
      const double Kij = K[static_cast<std::size_t>(i)];
      if (mi < 0 || mj < 0 || mi == mj || !(Kij > 0.0)) continue;
      const double ki = c.materials[static_cast<std::size_t>(mi)].conductivity_along(a);
      const double kj = c.materials[static_cast<std::size_t>(mj)].conductivity_along(a);
      const double part = contacts.any() ? contact_part(mi, mj, Kij, a, i) : 0.0;
      if (part > 0.0) contact[static_cast<std::size_t>(i)] = part;
      if (ki == kj) {
        share[static_cast<std::size_t>(i)] = 0.5 * (1.0 - part);
        tied_here = 1;
        continue;
      }
      // A contact that is the whole reference resistance (a face whose strips include a path
      // beside the contact, moved onto it from a line beyond the contact, conducts more than
      // the contact alone): the face is the contact's, constant in temperature. Its materials'
      // parts are 0, not the default halves: share + contact + upper = 1 keeps the face's
      // reference conductance at every temperature (with the halves a silicon face at 700 K
      // took -593 W/(m K) and the solve stalled).
      if (part >= 1.0) {
        share[static_cast<std::size_t>(i)] = 0.0;
        continue;
      }
      share[static_cast<std::size_t>(i)] =
          lower_share(series_part(without_contact(Kij, part), ki, kj), Kij, ki, part);
    }
    tied[static_cast<std::size_t>(a)] = static_cast<char>(tied_here);
  }
  // Two materials of one reference conductivity along an axis leave the face's conductance
  // the same wherever their interface lies, so it cannot tell each one's part of the segment.
  // Below the grid the interface may lie anywhere (a face wholly in one of them: share 0 or 1,
  // not 1/2): the parts come from the faces sampled again with every material's conductivity
  // scaled by its own factor, which tells the two apart. Without sampling, interfaces lie
  // halfway between nodes and 1/2 is exact.
  if (std::any_of(tied.begin(), tied.end(), [](char t) { return t != 0; }) &&
      !fields.faces[0].empty()) {
    Case apart = c;
    for (std::size_t m = 0; m < apart.materials.size(); ++m) {
      const double f = 1.0 + 0.25 * static_cast<double>(m + 1);
      apart.materials[m].conductivity *= f;
      for (double& k : apart.materials[m].axes) k *= f;
    }
    const SubgridMaterials sampled = subgrid_materials(apart, ids);
    for (int a = 0; a < g.dims; ++a) {
      if (!tied[static_cast<std::size_t>(a)] || sampled.faces[static_cast<std::size_t>(a)].empty())
        continue;
      std::vector<double>& share = out->share[static_cast<std::size_t>(a)];
      const std::vector<double>& K = fields.faces[static_cast<std::size_t>(a)];
      const std::vector<double>& Kf = sampled.faces[static_cast<std::size_t>(a)];
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < points; ++i) {
        const std::int64_t j = upper_neighbour(c, g, a, i);
        if (j < 0) continue;
        const std::int32_t mi = ids[static_cast<std::size_t>(i)];
        const std::int32_t mj = ids[static_cast<std::size_t>(j)];
        const double Kij = K[static_cast<std::size_t>(i)], Kf_ij = Kf[static_cast<std::size_t>(i)];
        if (mi < 0 || mj < 0 || mi == mj || !(Kij > 0.0) || !(Kf_ij > 0.0)) continue;
        const double ki = c.materials[static_cast<std::size_t>(mi)].conductivity_along(a);
        const double kj = c.materials[static_cast<std::size_t>(mj)].conductivity_along(a);
        if (ki != kj) continue;
        const double fi = apart.materials[static_cast<std::size_t>(mi)].conductivity_along(a);
        const double fj = apart.materials[static_cast<std::size_t>(mj)].conductivity_along(a);
        // The scaled faces hold the contact too: the materials' parts are those without it.
        const double part = contacts.any() ? contact_part(mi, mj, Kij, a, i) : 0.0;
        const double part_f = contacts.any() ? contact_part(mi, mj, Kf_ij, a, i) : 0.0;
        if (part >= 1.0 || part_f >= 1.0) continue;
        share[static_cast<std::size_t>(i)] =
            lower_share(series_part(without_contact(Kf_ij, part_f), fi, fj), Kij, ki, part);
      }
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(const Case& c) {
  return coefficient_fields(c, material_ids(c));
}

std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(
    const Case& c, const std::vector<std::int32_t>& ids) {
  return coefficient_fields(c, ids, void_surfaces(c, ids));
}

std::shared_ptr<const kernels::CoefficientFields> coefficient_fields(
    const Case& c, const std::vector<std::int32_t>& ids, const VoidSurfaces& surfaces) {
  const NodeGrid g(c);
  const std::size_t points = static_cast<std::size_t>(g.points());
  if (ids.size() != points)
    throw std::invalid_argument("material ids: " + std::to_string(ids.size()) +
                                " values for a grid of " + std::to_string(points) + " nodes");
  auto fields = std::make_shared<kernels::CoefficientFields>();
  // Below the grid the capacities come from the geometry (subgrid_materials): not set here.
  const bool sampled = samples_subgrid(c);
  fields->conductivity.resize(points);
  if (!sampled) fields->capacity.resize(points);
  double* const capacity = sampled ? nullptr : fields->capacity.data();
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < points; ++i) {
    if (c.materials.empty()) {
      fields->conductivity[i] = c.physics.alpha;  // the shorthand: k = alpha, rho*c_p = 1
      if (capacity) capacity[i] = 1.0;
    } else {
      if (ids[i] == kVoid) {
        fields->conductivity[i] = 0.0;
        if (capacity) capacity[i] = 0.0;
        continue;
      }
      const MaterialSpec& m = c.materials.at(static_cast<std::size_t>(ids[i]));
      fields->conductivity[i] = m.conductivity;
      if (capacity) capacity[i] = m.capacity();
    }
  }
  // Interfaces between nodes: the faces' conductances and the capacities from the geometry.
  if (sampled) {
    SubgridMaterials sub = subgrid_materials(c, ids, surfaces.folds());
    fields->capacity = std::move(sub.capacity);
    fields->faces = std::move(sub.faces);
    if (std::all_of(fields->capacity.begin(), fields->capacity.end(),
                    [](double C) { return C == 0.0; }))
      throw std::invalid_argument("regions: the voids remove every node; nothing is left to solve");
  }
  bool anisotropic = false, temperature = false;
  for (const MaterialSpec& m : c.materials) {
    anisotropic = anisotropic || m.anisotropic();
    temperature = temperature || m.temperature_dependent();
  }
  // An anisotropic conductivity, laws that scale the faces, or contacts between materials
  // need the faces written out. Below the grid the lines took the contacts already.
  const ContactTable contacts(c);
  const bool node_based = !fields->has_faces() && (anisotropic || temperature || contacts.any());
  const std::array<std::vector<double>, 3> shares = node_based || temperature
                                                        ? contact_shares(c, g, ids, contacts)
                                                        : std::array<std::vector<double>, 3>{};
  if (node_based) fields->faces = node_faces(c, g, ids, fields->conductivity, contacts, shares);
  if (temperature) fields->temperature = temperature_dependence(c, g, ids, *fields, shares);

  // Sources with equal schedules share one field (their densities add up, in case order); the
  // voids' surfaces share fields among themselves, apart from the case's sources.
  // The field that a source of `schedule` joins (the case's sources or the surfaces'), or -1
  // where it takes a new one.
  const auto field_of = [&](const kernels::Schedule& schedule, bool surface) -> int {
    for (std::size_t f = 0; f < fields->sources.size(); ++f)
      if (fields->sources[f].surface == surface &&
          same_schedule(fields->sources[f].schedule, schedule))
        return static_cast<int>(f);
    return -1;
  };
  const auto check_room = [&](const std::string& key) {
    if (static_cast<int>(fields->sources.size()) == kernels::kMaxSourceFields)
      throw std::invalid_argument(
          key + ": more than " + std::to_string(kernels::kMaxSourceFields) +
          " different source schedules (sources with the same schedule share one field; a "
          "void's convective surface, or a convective outer face that a void reaches, takes one "
          "for its ambient, a heat flux one of factor 1)");
  };
  auto add = [&](std::vector<double> density, const kernels::Schedule& schedule,
                 const std::string& key, bool surface) {
    const int f = field_of(schedule, surface);
    if (f >= 0) {
      std::vector<double>& into = fields->sources[static_cast<std::size_t>(f)].density;
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < points; ++i) into[i] += density[i];
      return;
    }
    check_room(key);
    fields->sources.push_back({std::move(density), schedule, surface});
  };
  // A void surface's density, given at its nodes alone (nodes[k] takes value(k), each node
  // once), added to its schedule's field: no array over the grid per void (a heat sink's
  // tens of voids each cleared and summed one).
  const auto add_at_nodes = [&](const std::vector<std::int64_t>& nodes, const auto& value,
                                const kernels::Schedule& schedule, const std::string& key) {
    int f = field_of(schedule, true);
    if (f < 0) {
      check_room(key);
      fields->sources.push_back({std::vector<double>(points, 0.0), schedule, true});
      f = static_cast<int>(fields->sources.size()) - 1;
    }
    std::vector<double>& into = fields->sources[static_cast<std::size_t>(f)].density;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      into[static_cast<std::size_t>(nodes[k])] += value(k);
  };
  // physics.source f keeps its meaning u_t = ... + f in every material: q = f * rho*c_p
  // (q = f in the shorthand, where rho*c_p = 1), with a constant factor 1.
  if (c.physics.source != 0.0) {
    std::vector<double> q(points);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < points; ++i) q[i] = c.physics.source * fields->capacity[i];
    add(std::move(q), kernels::Schedule{1.0, 0.0, 0.0, {}}, "physics.source", false);
  }
  for (std::size_t s = 0; s < c.sources.size(); ++s) {
    const std::string key = "sources[" + std::to_string(s) + "]";
    add(source_density(c, c.sources[s], key, ids, surfaces.folds()), c.sources[s].schedule, key,
        false);
  }
  // Void surfaces: a convective one loses H (u - ambient(t)) per unit volume, H = h A / V of
  // each node's share of the surface (in series with the body between the node and the
  // surface: VoidSurface::convective_per_volume): H u joins the nodes' transfer and H ambient(t) is
  // a source with the ambient's schedule; a heat flux q enters as the source q A / V. The radiation
  // coefficients of an ambient's schedule (surfaces of the same ambient share one group), made on
  // first use.
  const auto radiation_of = [&](const kernels::Schedule& ambient) -> std::vector<double>& {
    auto group = std::find_if(fields->radiation.begin(), fields->radiation.end(),
                              [&](const auto& g) { return same_schedule(g.ambient, ambient); });
    if (group != fields->radiation.end()) return group->coefficient;
    fields->radiation.push_back({std::vector<double>(points, 0.0), ambient});
    return fields->radiation.back().coefficient;
  };
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    const kernels::BoundaryFace& f = region.surface;
    if (!region.is_void || !kernels::passes_heat(f)) continue;
    const double transfer = kernels::face_transfer(f);
    const bool convective = transfer != 0.0;
    const std::string key = "regions[" + std::to_string(r) + "].surface";
    const VoidSurface* surface = surfaces.find(r);
    if (!surface)
      throw std::invalid_argument(key + ": a surface condition needs a box or ball void");
    // A radiating surface: R = eps sigma A / V, grouped with others of the same ambient.
    if (f.radiates()) {
      std::vector<double>& coefficient = radiation_of(f.schedule());
      for (std::size_t k = 0; k < surface->nodes.size(); ++k)
        coefficient[static_cast<std::size_t>(surface->nodes[k])] +=
            f.emissivity * kernels::kStefanBoltzmann * surface->per_volume[k];
      if (!convective) continue;
    }
    if (convective) {
      if (fields->transfer.empty()) fields->transfer.assign(points, 0.0);
      const auto H = [&](std::size_t k) { return transfer * surface->convective_per_volume[k]; };
      for (std::size_t k = 0; k < surface->nodes.size(); ++k)
        fields->transfer[static_cast<std::size_t>(surface->nodes[k])] += H(k);
      add_at_nodes(surface->nodes, H, f.schedule(), key);
    } else {
      const double flux = kernels::face_flux(f);
      add_at_nodes(
          surface->nodes, [&](std::size_t k) { return flux * surface->per_volume[k]; },
          kernels::Schedule{1.0, 0.0, 0.0, {}}, key);
    }
  }
  // Outer faces that a void reaches (VoidSurfaces::faces): the ghost rule acts on the whole face
  // of each boundary node, the body holds only part of it. The difference E (area per volume,
  // negative beside the void) joins the node's laws as a void's surface does: transfer h E and
  // the source h E ambient(t), the source q E, radiation eps sigma E. Beside a void the node's
  // loss stays h (2/h_a + E) >= 0, so the step's bound and the implicit operator's diagonal
  // dominance hold. A constant source goes into a surfaces' field of a constant schedule where
  // there is one (its density scaled), so that it takes no field of its own.
  const auto add_surface = [&](std::vector<double> density, const kernels::Schedule& schedule,
                               const std::string& key) {
    for (int pass = 0; pass < 2; ++pass)
      for (auto& s : fields->sources) {
        if (!s.surface) continue;
        double scale = 0.0;
        if (same_schedule(s.schedule, schedule))
          scale = 1.0;
        else if (pass == 1 && schedule.constant() && s.schedule.constant() &&
                 s.schedule.at(0.0) != 0.0)
          scale = schedule.at(0.0) / s.schedule.at(0.0);
        if (scale == 0.0) continue;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < points; ++i) s.density[i] += scale * density[i];
        return;
      }
    add(std::move(density), schedule, key, true);
  };
  for (const FaceCut& cut : surfaces.faces) {
    const kernels::BoundaryFace& f = c.boundary[static_cast<std::size_t>(cut.face)];
    const std::string key = std::string("boundary.") + kFaceKeys[cut.face];
    if (f.radiates()) {
      std::vector<double>& coefficient = radiation_of(f.schedule());
      for (std::size_t k = 0; k < cut.nodes.size(); ++k)
        coefficient[static_cast<std::size_t>(cut.nodes[k])] +=
            f.emissivity * kernels::kStefanBoltzmann * cut.excess[k];
    }
    const double transfer = kernels::face_transfer(f), flux = kernels::face_flux(f);
    if (transfer != 0.0) {
      if (fields->transfer.empty()) fields->transfer.assign(points, 0.0);
      std::vector<double> density(points, 0.0);
      for (std::size_t k = 0; k < cut.nodes.size(); ++k) {
        const std::size_t i = static_cast<std::size_t>(cut.nodes[k]);
        density[i] = transfer * cut.excess[k];
        fields->transfer[i] += density[i];
      }
      add_surface(std::move(density), f.schedule(), key);
    }
    if (flux != 0.0) {
      std::vector<double> density(points, 0.0);
      for (std::size_t k = 0; k < cut.nodes.size(); ++k)
        density[static_cast<std::size_t>(cut.nodes[k])] = flux * cut.excess[k];
      add_surface(std::move(density), kernels::Schedule{1.0, 0.0, 0.0, {}}, key);
    }
  }
  return fields;
}

double hottest_named_temperature(const Case& c) {
  double hot = 0.0;
  for (int f = 0; f < 2 * c.grid.dims; ++f) {
    const BoundaryFace& face = c.boundary[static_cast<std::size_t>(f)];
    if (!face.names_temperature()) continue;
    hot = std::max(hot, face.value + std::abs(face.amplitude));
    for (const auto& e : face.table) hot = std::max(hot, e[1]);
  }
  // The voids' surfaces: their ambients are temperatures the case names too.
  for (const RegionSpec& r : c.regions) {
    if (!r.is_void || !r.surface.names_temperature()) continue;
    hot = std::max(hot, r.surface.value + std::abs(r.surface.amplitude));
    for (const auto& e : r.surface.table) hot = std::max(hot, e[1]);
  }
  // The initial field where its largest value is known without laying it (an expression or a
  // file is not looked at): a body that starts hot radiates at that temperature first.
  const InitialSpec& init = c.initial;
  switch (init.kind) {
    case InitialKind::constant:
      hot = std::max(hot, init.value);
      break;
    case InitialKind::box:
      hot = std::max({hot, init.value, init.background});
      break;
    case InitialKind::gaussian:
      hot = std::max(hot, init.background + std::max(init.amplitude, 0.0));
      break;
    case InitialKind::modes: {
      double sum = 0.0;
      for (const ModeTerm& m : init.modes) sum += std::abs(m.amplitude);
      hot = std::max(hot, sum);
      break;
    }
    case InitialKind::expression:
    case InitialKind::file:
      break;
  }
  for (const MaterialSpec& m : c.materials) {
    for (const auto& e : m.conductivity_table) hot = std::max(hot, e[0]);
    for (const auto& e : m.specific_heat_table) hot = std::max(hot, e[0]);
    if (m.phase_change) hot = std::max(hot, m.phase_change->liquidus);
  }
  return hot;
}

FieldStability field_stability(const Case& c, const kernels::CoefficientFields& fields) {
  const NodeGrid g(c);
  // Temperature-dependent laws: their worst case over the tables, the largest conductivity
  // ratio on each face (max of the two nodes', an upper bound of the face's series form) and
  // the smallest capacity ratio (latent heat only adds). Radiating faces: the linearised
  // coefficient 4 eps sigma T^3 at the hottest temperature the case names.
  const kernels::TemperatureDependence* laws = fields.temperature.get();
  const auto k_ratio = [&](std::int64_t i) {
    if (!laws) return 1.0;
    const std::int32_t l = laws->law[static_cast<std::size_t>(i)];
    return l < 0 ? 1.0 : laws->laws[static_cast<std::size_t>(l)].largest_conductivity()[1];
  };
  const double hot = hottest_named_temperature(c);
  FieldStability best;
  best.dt_limit = std::numeric_limits<double>::infinity();
  const auto stride = [&](int axis) {
    return axis == 0 ? std::int64_t{1} : axis == 1 ? g.n[0] : g.n[0] * g.n[1];
  };
  double inv_h2[3] = {0.0, 0.0, 0.0};
  bool dirichlet[6] = {false, false, false, false, false, false};
  for (int a = 0; a < g.dims; ++a) {
    inv_h2[a] = 1.0 / (g.h[a] * g.h[a]);
    for (int side = 0; side < 2; ++side)
      dirichlet[2 * a + side] = c.boundary[2 * a + side].kind == BoundaryKind::dirichlet;
  }
  // Each thread keeps the first node of its share with the smallest limit; the shares are
  // merged by (limit, node), so the node is the serial loop's: the first with the minimum.
#pragma omp parallel
  {
    FieldStability mine;
    mine.dt_limit = std::numeric_limits<double>::infinity();
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < g.points(); ++i) {
      const auto idx = g.index(i);
      // Dirichlet nodes are reset after every step: they set no limit.
      bool fixed = false;
      for (int a = 0; a < g.dims; ++a)
        for (int side = 0; side < 2; ++side)
          if (dirichlet[2 * a + side] && idx[a] == (side == 0 ? 0 : g.n[a] - 1)) fixed = true;
      // Nor do nodes inside a void (no capacity), which are not stepped: a convective face
      // beside one would otherwise give it a limit of 0.
      if (fixed || fields.capacity[static_cast<std::size_t>(i)] == 0.0) continue;
      // Gershgorin: the update u_i += dt/C_i * (sum_j K_ij (u_j - u_i) / h^2 + ...) keeps every
      // eigenvalue of the step in [-1, 1] when dt * D_i / C_i <= 1, D_i the node's diagonal:
      // the sum of its conductances over h^2. A ghost neighbour (Neumann, heat-flux, convective
      // face) is the mirror node again, so its conductance counts twice; a convective face adds
      // 2 h_c / h through the ghost's -2 h h_c u_b / K term (counted in full, which is safe).
      double diagonal = 0.0;
      for (int a = 0; a < g.dims; ++a) {
        const std::int64_t st = stride(a);
        for (int side = 0; side < 2; ++side) {
          const BoundaryFace& f = c.boundary[2 * a + side];
          const bool at_face = idx[a] == (side == 0 ? 0 : g.n[a] - 1);
          std::int64_t j = side == 0 ? i - st : i + st;
          bool mirror = false;
          if (at_face) {
            if (f.kind == BoundaryKind::periodic) {
              j = side == 0 ? i + (g.n[a] - 1) * st : i - (g.n[a] - 1) * st;
            } else {
              j = side == 0 ? i + st : i - st;  // the mirror node
              mirror = true;
            }
            // The face's law on the diagonal: its transfer and its radiation's slope at `hot`
            // (nothing for a face without either).
            const double radiated =
                f.radiates() ? 4.0 * f.emissivity * kernels::kStefanBoltzmann * hot * hot * hot
                             : 0.0;
            diagonal += 2.0 * (kernels::face_transfer(f) + radiated) / g.h[a];
          }
          // The face's lower node (the one whose entry in fields.faces holds it).
          const bool j_lower = (side == 0) != mirror;
          diagonal += fields.face(a, j_lower ? j : i, j_lower ? i : j) * inv_h2[a] *
                      std::max(k_ratio(i), k_ratio(j));
        }
      }
      // A surface inside the body adds its H (the H u it loses per unit volume), a radiating
      // one 4 R T^3.
      if (!fields.transfer.empty()) diagonal += fields.transfer[static_cast<std::size_t>(i)];
      for (const auto& r : fields.radiation)
        diagonal += 4.0 * r.coefficient[static_cast<std::size_t>(i)] * hot * hot * hot;
      if (!(diagonal > 0.0)) continue;
      double capacity = fields.capacity[static_cast<std::size_t>(i)];
      if (laws && laws->law[static_cast<std::size_t>(i)] >= 0)
        capacity *= laws->laws[static_cast<std::size_t>(laws->law[static_cast<std::size_t>(i)])]
                        .smallest_capacity()[1];
      const double limit = capacity / diagonal;
      if (limit < mine.dt_limit) {
        mine.dt_limit = limit;
        mine.node = i;
      }
    }
#pragma omp critical(heatsim_field_stability)
    if (mine.dt_limit < best.dt_limit || (mine.dt_limit == best.dt_limit && mine.node < best.node))
      best = mine;
  }
  return best;
}

std::vector<MaterialSummary> summarize_materials(const Case& c,
                                                 const std::vector<std::int32_t>& ids,
                                                 const std::vector<double>& u) {
  const NodeGrid g(c);
  std::vector<MaterialSummary> out;
  if (c.materials.empty()) {
    out.push_back({"physics", 0, 0.0, 0.0, 0.0});
  } else {
    for (const MaterialSpec& m : c.materials) out.push_back({m.name, 0, 0.0, 0.0, 0.0});
  }
  std::vector<double> weights(out.size(), 0.0), sums(out.size(), 0.0);
  const std::size_t points = std::min(ids.size(), u.size());
  for (std::size_t i = 0; i < points; ++i) {
    const std::size_t m = static_cast<std::size_t>(ids[i]);
    if (m >= out.size()) continue;
    MaterialSummary& s = out[m];
    const double v = u[i];
    if (s.nodes == 0) {
      s.min = v;
      s.max = v;
    } else {
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
    }
    ++s.nodes;
    const double w = node_weight(c, g, static_cast<std::int64_t>(i));
    weights[m] += w;
    sums[m] += w * v;
  }
  for (std::size_t m = 0; m < out.size(); ++m)
    if (out[m].nodes > 0) out[m].mean = sums[m] / weights[m];
  return out;
}

}  // namespace heatsim::solver
