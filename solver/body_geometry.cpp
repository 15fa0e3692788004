#include "body_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "expression.hpp"
#include "kernels/boundary_rules.hpp"
#include "kernels/face_conductance.hpp"
#include "materials.hpp"
#include "stencil.hpp"

namespace heatsim::solver {

namespace {

struct Grid {
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<double, 3> h{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};

  explicit Grid(const Case& c) : dims(c.grid.dims) {
    for (int a = 0; a < 3; ++a) {
      n[a] = a < dims ? c.grid.n[a] : 1;
      h[a] = spacing(c, a);
      periodic[a] = a < dims && c.boundary[2 * a].kind == BoundaryKind::periodic;
    }
  }
  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  std::array<std::int64_t, 3> coords(std::int64_t i) const {
    return {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
  }
  std::array<double, 3> position(std::int64_t i) const {
    const auto ic = coords(i);
    std::array<double, 3> x{0, 0, 0};
    for (int a = 0; a < dims; ++a) x[a] = static_cast<double>(ic[a]) * h[a];
    return x;
  }
};

// A shape's test of a point (boxes and balls closed, within 1e-9 of a spacing as the nodes'
// test in materials.cpp; `where` nonzero and not NaN).
class PointTest {
 public:
  PointTest(const Case& c, const ShapeSpec& s) : s_(s), dims_(c.grid.dims) {
    tol_ = 1e-9 * spacing(c, 0);
    for (int a = 1; a < dims_; ++a) tol_ = std::min(tol_, 1e-9 * spacing(c, a));
    if (s.kind == ShapeKind::where)
      formula_ = Expression::compile(s.where, expression_variables(dims_));
  }
  bool operator()(const double* x) const {
    switch (s_.kind) {
      case ShapeKind::everywhere:
        return true;
      case ShapeKind::box:
        for (int a = 0; a < dims_; ++a)
          if (x[a] < s_.lower[a] - tol_ || x[a] > s_.upper[a] + tol_) return false;
        return true;
      case ShapeKind::ball: {
        double r2 = 0.0;
        for (int a = 0; a < dims_; ++a) r2 += (x[a] - s_.center[a]) * (x[a] - s_.center[a]);
        return std::sqrt(r2) <= s_.radius + tol_;
      }
      case ShapeKind::where: {
        const double v = formula_->eval(x);
        return v != 0.0 && !std::isnan(v);
      }
      case ShapeKind::file:
        break;
    }
    return false;
  }

 private:
  const ShapeSpec& s_;
  int dims_;
  double tol_ = 0.0;
  std::optional<Expression> formula_;
};

}  // namespace

std::vector<BodyPiece> body_pieces(const Case& c, const kernels::CoefficientFields& fields,
                                   const std::vector<std::int32_t>& ids) {
  const Grid g(c);
  const std::int64_t np = g.points();
  const std::int64_t stride[3] = {1, g.n[0], g.n[0] * g.n[1]};
  const auto body = [&](std::int64_t i) {
    return fields.capacity[static_cast<std::size_t>(i)] > 0.0;
  };
  // A node whose capacity is its material's holds no void.
  const auto whole_node = [&](std::int64_t i) {
    const std::int32_t m = ids[static_cast<std::size_t>(i)];
    return m < 0 || static_cast<std::size_t>(m) >= c.materials.size() ||
           fields.capacity[static_cast<std::size_t>(i)] >=
               (1.0 - 1e-9) * c.materials[static_cast<std::size_t>(m)].capacity();
  };
  const auto conducts = [&](int a, std::int64_t lower, std::int64_t upper) {
    return fields.face(a, lower, upper) > 0.0;
  };

  // Most cases: every node is body and every face conducts, so the body is one piece, which
  // the search below would find node by node (a third of a 129^3 run's case set-up). Found in
  // one pass instead, with what the search would say of it.
  // Rows on every thread (the answers are ands: the same in any order), the faces read in
  // place: one pass over the faces of a 257^3 grid took 0.3 s of one core through
  // CoefficientFields::face.
  {
    const bool given = fields.has_faces();
    const double* const k = fields.conductivity.data();
    const auto conducts_here = [&](int a, std::int64_t lower, std::int64_t upper) {
      return (given ? fields.faces[static_cast<std::size_t>(a)][static_cast<std::size_t>(lower)]
                    : kernels::face_conductance(k[lower], k[upper])) > 0.0;
    };
    bool one = np > 0, partial = true;
    const std::int64_t rows = g.n[1] * g.n[2];
#pragma omp parallel for reduction(&& : one, partial) schedule(static) if (np >= 32768)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t y = r % g.n[1], z = r / g.n[1];
      for (std::int64_t x = 0, i = r * g.n[0]; x < g.n[0] && one; ++x, ++i) {
        one = body(i);
        partial = partial && !whole_node(i);
        const std::int64_t at[3] = {x, y, z};
        for (int a = 0; a < g.dims && one; ++a) {
          // The face toward the next node along a (across the seam of a periodic axis).
          const std::int64_t j = at[a] + 1 < g.n[a] ? i + stride[a]
                                 : g.periodic[a]    ? i - (g.n[a] - 1) * stride[a]
                                                    : -1;
          if (j >= 0 && j != i) one = conducts_here(a, i, j);
        }
      }
    }
    if (one) {
      BodyPiece p;
      p.nodes = np;
      p.first = 0;
      p.slivers = partial;
      for (int a = 0; a < g.dims && !p.anchored; ++a)
        if (!g.periodic[a])
          p.anchored =
              kernels::anchors(c.boundary[2 * a]) || kernels::anchors(c.boundary[2 * a + 1]);
      for (std::size_t i = 0; i < fields.transfer.size() && !p.anchored; ++i)
        p.anchored = fields.transfer[i] > 0.0;
      for (const auto& r : fields.radiation)
        for (std::size_t i = 0; i < r.coefficient.size() && !p.anchored; ++i)
          p.anchored = r.coefficient[i] > 0.0;
      return {p};
    }
  }

  // The void region of a void node, found when first asked for.
  std::vector<PointTest> tests;
  std::vector<std::size_t> void_regions;
  for (std::size_t r = 0; r < c.regions.size(); ++r)
    if (c.regions[r].is_void && c.regions[r].shape.kind != ShapeKind::file) {
      tests.emplace_back(c, c.regions[r].shape);
      void_regions.push_back(r);
    }
  std::vector<std::int32_t> region_of(static_cast<std::size_t>(np), -2);
  const auto void_region = [&](std::int64_t j) {
    std::int32_t& r = region_of[static_cast<std::size_t>(j)];
    if (r == -2) {
      r = -1;
      if (ids[static_cast<std::size_t>(j)] == kVoid) {
        const auto x = g.position(j);
        for (std::size_t k = 0; k < tests.size(); ++k)
          if (tests[k](x.data())) r = static_cast<std::int32_t>(void_regions[k]);
      }
    }
    return r;
  };

  // Whether a face of the domain that node i lies on has `what`.
  const auto on_face = [&](std::int64_t i, auto what) {
    const auto ic = g.coords(i);
    for (int a = 0; a < g.dims; ++a) {
      if (g.periodic[a]) continue;
      for (int side = 0; side < 2; ++side)
        if (ic[a] == (side == 0 ? 0 : g.n[a] - 1) && what(c.boundary[2 * a + side])) return true;
    }
    return false;
  };
  // Tied to something outside the body by such a face; taking a heat flux through one.
  const auto on_anchoring_face = [&](std::int64_t i) {
    return on_face(i, [](const BoundaryFace& f) { return kernels::anchors(f); });
  };
  const auto on_heated_face = [&](std::int64_t i) {
    return on_face(i, [](const BoundaryFace& f) {
      return f.heat_flux && (f.value != 0.0 || f.time_dependent());
    });
  };

  std::vector<std::int32_t> piece(static_cast<std::size_t>(np), -1);
  std::vector<BodyPiece> pieces;
  std::vector<std::int64_t> stack;
  for (std::int64_t start = 0; start < np; ++start) {
    if (!body(start) || piece[static_cast<std::size_t>(start)] >= 0) continue;
    const std::int32_t label = static_cast<std::int32_t>(pieces.size());
    pieces.push_back(BodyPiece{});
    BodyPiece& p = pieces.back();
    p.first = start;
    piece[static_cast<std::size_t>(start)] = label;
    stack.assign(1, start);
    bool partial = true;
    while (!stack.empty()) {
      const std::int64_t i = stack.back();
      stack.pop_back();
      ++p.nodes;
      if (whole_node(i)) partial = false;
      if (!p.heated)
        p.heated = on_heated_face(i) ||
                   std::any_of(fields.sources.begin(), fields.sources.end(), [&](const auto& s) {
                     return s.density[static_cast<std::size_t>(i)] != 0.0;
                   });
      if (!p.anchored &&
          (on_anchoring_face(i) ||
           (!fields.transfer.empty() && fields.transfer[static_cast<std::size_t>(i)] > 0.0) ||
           std::any_of(fields.radiation.begin(), fields.radiation.end(), [&](const auto& r) {
             return r.coefficient[static_cast<std::size_t>(i)] > 0.0;
           })))
        p.anchored = true;
      const auto ic = g.coords(i);
      for (int a = 0; a < g.dims; ++a)
        for (int side = 0; side < 2; ++side) {
          std::int64_t j = -1;
          const bool first = ic[a] == 0, last = ic[a] == g.n[a] - 1;
          if (side == 0)
            j = !first ? i - stride[a] : g.periodic[a] ? i + (g.n[a] - 1) * stride[a] : -1;
          if (side == 1)
            j = !last ? i + stride[a] : g.periodic[a] ? i - (g.n[a] - 1) * stride[a] : -1;
          if (j < 0 || j == i) continue;
          if (!body(j)) {
            const std::int32_t r = void_region(j);
            if (r >= 0 && std::find(p.voids.begin(), p.voids.end(), static_cast<std::size_t>(r)) ==
                              p.voids.end())
              p.voids.push_back(static_cast<std::size_t>(r));
            continue;
          }
          if (piece[static_cast<std::size_t>(j)] >= 0) continue;
          const std::int64_t lower = side == 0 ? j : i, upper = side == 0 ? i : j;
          if (!conducts(a, lower, upper)) continue;
          piece[static_cast<std::size_t>(j)] = label;
          stack.push_back(j);
        }
    }
    std::sort(p.voids.begin(), p.voids.end());
    p.slivers = partial;
  }
  return pieces;
}

bool shapes_overlap(const Case& c, const ShapeSpec& a, const ShapeSpec& b) {
  if (a.kind == ShapeKind::file || b.kind == ShapeKind::file) return false;
  const Grid g(c);
  const int dims = c.grid.dims;
  // The domain as a box; the whole domain as a box too.
  ShapeSpec domain;
  domain.kind = ShapeKind::box;
  for (int k = 0; k < dims; ++k) {
    domain.lower[k] = 0.0;
    domain.upper[k] = static_cast<double>(g.periodic[k] ? g.n[k] : g.n[k] - 1) * g.h[k];
  }
  const auto as_shape = [&](const ShapeSpec& s) {
    return s.kind == ShapeKind::everywhere ? domain : s;
  };
  const ShapeSpec A = as_shape(a), B = as_shape(b);
  if (A.kind == ShapeKind::where || B.kind == ShapeKind::where) {
    const PointTest ta(c, A), tb(c, B);
    for (std::int64_t i = 0; i < g.points(); ++i) {
      const auto x = g.position(i);
      if (ta(x.data()) && tb(x.data())) return true;
    }
    return false;
  }
  // A box clipped to the domain and another box: an overlap of positive length on every axis.
  const auto clip = [&](const ShapeSpec& s) {
    ShapeSpec out = s;
    for (int k = 0; k < dims; ++k) {
      out.lower[k] = std::max(s.lower[k], domain.lower[k]);
      out.upper[k] = std::min(s.upper[k], domain.upper[k]);
    }
    return out;
  };
  // The squared distance from point p to box s.
  const auto distance2 = [&](const ShapeSpec& s, const std::array<double, 3>& p) {
    double d2 = 0.0;
    for (int k = 0; k < dims; ++k) {
      const double d = std::max({s.lower[k] - p[k], 0.0, p[k] - s.upper[k]});
      d2 += d * d;
    }
    return d2;
  };
  if (A.kind == ShapeKind::box && B.kind == ShapeKind::box) {
    const ShapeSpec ca = clip(A), cb = clip(B);
    for (int k = 0; k < dims; ++k)
      if (!(std::min(ca.upper[k], cb.upper[k]) > std::max(ca.lower[k], cb.lower[k]))) return false;
    return true;
  }
  if (A.kind == ShapeKind::ball && B.kind == ShapeKind::ball) {
    double d2 = 0.0;
    for (int k = 0; k < dims; ++k) d2 += (A.center[k] - B.center[k]) * (A.center[k] - B.center[k]);
    return std::sqrt(d2) < A.radius + B.radius &&
           distance2(domain, A.center) < A.radius * A.radius &&
           distance2(domain, B.center) < B.radius * B.radius;
  }
  const ShapeSpec& box = A.kind == ShapeKind::box ? A : B;
  const ShapeSpec& ball = A.kind == ShapeKind::ball ? A : B;
  const ShapeSpec clipped = clip(box);
  for (int k = 0; k < dims; ++k)
    if (!(clipped.upper[k] > clipped.lower[k])) return false;
  return distance2(clipped, ball.center) < ball.radius * ball.radius;
}

}  // namespace heatsim::solver
