#include "subgrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "contacts.hpp"
#include "expression.hpp"
#include "kernels/boundary_rules.hpp"
#include "materials.hpp"
#include "stencil.hpp"

namespace heatsim::solver {
namespace {

// Sub-cells per axis of a control volume, before box bounds refine them; pieces per spacing
// along a segment through a `where` shape.
constexpr int kSplit = 4;
constexpr int kWhereSteps = 8;
// How closely a `where` shape's surface is found along a line between two samples that differ
// (Materials::find_where_crossings), in spacings: far below what a solve's tolerance resolves,
// and below the 1e-9 of a spacing within which a piece counts as none.
constexpr double kWhereCrossing = 1e-11;

// Points gathered to be tested together, as columns: a `where` shape is evaluated over them
// in blocks (Expression::eval_block, eval()'s bits) rather than point by point. One per thread.
struct Points {
  std::array<std::vector<double>, 3> x;
  std::vector<double> values, scratch;  // the blocks' values and the evaluation's scratch
  std::vector<char> in;                 // Shape::contains_all's answers
  // A formula that leaves some coordinate unread (Shape::reads): the points that differ from
  // the one before only there, evaluated once (their distinct ones as columns) and each
  // point's index among them.
  std::array<std::vector<double>, 3> distinct;
  std::vector<std::uint32_t> distinct_of;
  std::vector<std::int32_t> material;   // Materials::classify's answers
  // Cut points, reused from node to node: per axis a control volume's (for_sub_cells) or a
  // face's cross-section (Materials::face), and a segment's (Materials::line_conductance).
  std::array<std::vector<double>, 3> cuts;
  std::vector<double> line_cuts;
  std::vector<double> piece_at;  // a segment's pieces' lower ends (Materials::line_conductance)
  // Materials::find_where_crossings': the pieces' lower ends' indices, the exact cuts.
  std::vector<std::size_t> lower;
  std::vector<double> exact;
  // Materials::line_conductance's answers where every line along an axis is alike (Materials::
  // lines_alike): per (axis, the line's start on it, the bits; the node's material), the
  // conductance.
  std::map<std::tuple<int, std::uint64_t, std::int32_t>, double> line_k;
  void clear() {
    for (auto& v : x) v.clear();
  }
  void add(const double* p) {
    for (int a = 0; a < 3; ++a) x[a].push_back(p[a]);
  }
  std::size_t size() const { return x[0].size(); }
};

// A shape ready for point and neighbourhood tests.
struct Shape {
  const ShapeSpec* spec = nullptr;
  std::optional<Expression> formula;
  std::vector<char> node_inside;  // where: the node test, for the neighbourhood rule
  // where: the coordinates the formula reads (Expression::reads); `all_read` where it reads
  // every one of the grid's. A formula in z alone has one value per z.
  std::array<bool, 3> reads{false, false, false};
  bool all_read = true;

  // Whether every point of a line along axis a (the same coordinates but that one) gives the
  // same answer: everywhere, and a formula that does not read the axis's coordinate.
  bool uniform_along(int a) const {
    return spec->kind == ShapeKind::everywhere || (formula && !reads[a]);
  }
  // box: per axis and coordinate, whether a node's neighbourhood (one spacing each way) meets
  // the box's extent on that axis, and whether it lies within it (crosses(): meets on every
  // axis, within not on every one).
  std::array<std::vector<char>, 3> meets, within;

  // `tol` (per axis, or null for none): how far outside a box's bounds a point still counts
  // as inside, and a ball's surface (the smallest of them): the node test's tolerance
  // (materials.cpp), for points on node planes.
  bool contains(const double* x, int dims, const double* tol = nullptr) const {
    const ShapeSpec& s = *spec;
    switch (s.kind) {
      case ShapeKind::everywhere:
        return true;
      case ShapeKind::box:
        for (int a = 0; a < dims; ++a) {
          const double t = tol ? tol[a] : 0.0;
          if (x[a] < s.lower[a] - t || x[a] > s.upper[a] + t) return false;
        }
        return true;
      case ShapeKind::ball: {
        double r2 = 0.0;
        for (int a = 0; a < dims; ++a) r2 += (x[a] - s.center[a]) * (x[a] - s.center[a]);
        if (tol) {
          double t = tol[0];
          for (int a = 1; a < dims; ++a) t = std::min(t, tol[a]);
          return std::sqrt(r2) <= s.radius + t;
        }
        return r2 <= s.radius * s.radius;
      }
      case ShapeKind::where: {
        const double v = formula->eval(x);
        return v != 0.0 && !std::isnan(v);
      }
      case ShapeKind::file:
        break;
    }
    return false;
  }
  // Whether the shape holds none of the points within [lo, hi] (per axis, the first `dims`),
  // as contains() without a tolerance answers: a box that the bounds do not meet on some axis,
  // a ball farther from them than its radius (with room for contains()' rounding). Not known
  // for the other kinds (false).
  bool misses(const double* lo, const double* hi, int dims) const {
    const ShapeSpec& s = *spec;
    if (s.kind == ShapeKind::box) {
      for (int a = 0; a < dims; ++a)
        if (hi[a] < s.lower[a] || lo[a] > s.upper[a]) return true;
      return false;
    }
    if (s.kind == ShapeKind::ball) {
      double d2 = 0.0;
      for (int a = 0; a < dims; ++a) {
        const double d = std::max({lo[a] - s.center[a], s.center[a] - hi[a], 0.0});
        d2 += d * d;
      }
      return d2 > 1.000001 * s.radius * s.radius;
    }
    return false;
  }
  // contains() for every point of `p`, into p.in.
  void contains_all(Points& p, int dims) const {
    const std::size_t count = p.size();
    p.in.assign(count, 0);
    if (spec->kind == ShapeKind::everywhere) {
      p.in.assign(count, 1);
      return;
    }
    if (!formula) {
      for (std::size_t k = 0; k < count; ++k) {
        const double x[3] = {p.x[0][k], p.x[1][k], p.x[2][k]};
        p.in[k] = contains(x, dims);
      }
      return;
    }
    p.scratch.resize(formula->block_scratch());
    if (all_read) {
      p.values.resize(count);
      evaluate(p.x, count, p.values.data(), p.scratch.data());
      for (std::size_t k = 0; k < count; ++k)
        p.in[k] = p.values[k] != 0.0 && !std::isnan(p.values[k]);
      return;
    }
    // A point whose read coordinates are those of the point before, bit for bit, has its
    // value: only the others are evaluated.
    const double* read[3] = {nullptr, nullptr, nullptr};
    int read_count = 0;
    for (int a = 0; a < dims; ++a)
      if (reads[a]) read[read_count++] = p.x[a].data();
    const auto bits = [](double v) {
      std::uint64_t u;
      std::memcpy(&u, &v, sizeof u);
      return u;
    };
    for (auto& column : p.distinct) column.resize(count);
    p.distinct_of.resize(count);
    const double* x[3] = {p.x[0].data(), p.x[1].data(), p.x[2].data()};
    double* to[3] = {p.distinct[0].data(), p.distinct[1].data(), p.distinct[2].data()};
    std::uint32_t* of = p.distinct_of.data();
    std::size_t distinct = 0;
    for (std::size_t k = 0; k < count; ++k) {
      bool same = k > 0;
      for (int r = 0; r < read_count && same; ++r) same = bits(read[r][k]) == bits(read[r][k - 1]);
      if (!same) {
        for (int a = 0; a < 3; ++a) to[a][distinct] = x[a][k];
        ++distinct;
      }
      of[k] = static_cast<std::uint32_t>(distinct - 1);
    }
    p.values.resize(distinct);
    evaluate(p.distinct, distinct, p.values.data(), p.scratch.data());
    for (std::size_t k = 0; k < count; ++k) {
      const double v = p.values[p.distinct_of[k]];
      p.in[k] = v != 0.0 && !std::isnan(v);
    }
  }
  // The formula at `count` points (columns x) in blocks, into out.
  void evaluate(const std::array<std::vector<double>, 3>& x, std::size_t count, double* out,
                double* scratch) const {
    for (std::size_t b = 0; b < count; b += Expression::kBlock) {
      const double* columns[3] = {x[0].data() + b, x[1].data() + b, x[2].data() + b};
      const int n = static_cast<int>(std::min<std::size_t>(Expression::kBlock, count - b));
      formula->eval_block(columns, n, out + b, scratch);
    }
  }
};

// Shapes whose box bounds cut lines and control volumes into pieces (Sampler::cuts,
// element_cuts): the list, and per axis the box bounds among them, sorted and distinct, so that
// the bounds inside an interval are found by bisection rather than by asking every shape (a
// heat sink's tens of fins or voids, each far from most nodes).
struct ShapeList {
  std::vector<const Shape*> shapes;
  std::array<std::vector<double>, 3> box_bounds;

  ShapeList() = default;
  explicit ShapeList(std::vector<const Shape*> list) : shapes(std::move(list)) {
    for (const Shape* sh : shapes)
      if (sh->spec->kind == ShapeKind::box)
        for (int a = 0; a < 3; ++a) {
          box_bounds[a].push_back(sh->spec->lower[a]);
          box_bounds[a].push_back(sh->spec->upper[a]);
        }
    for (auto& b : box_bounds) {
      std::sort(b.begin(), b.end());
      b.erase(std::unique(b.begin(), b.end()), b.end());
    }
  }
  // The box bounds on axis a strictly between lo and hi, appended to `at`.
  void add_bounds_within(int a, double lo, double hi, std::vector<double>& at) const {
    const std::vector<double>& b = box_bounds[static_cast<std::size_t>(a)];
    for (auto it = std::upper_bound(b.begin(), b.end(), lo); it != b.end() && *it < hi; ++it)
      at.push_back(*it);
  }
};

struct Sampler {
  const Case& c;
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<double, 3> h{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};
  bool any_where = false;

  explicit Sampler(const Case& cs) : c(cs), dims(cs.grid.dims) {
    for (int a = 0; a < 3; ++a) {
      n[a] = a < dims ? cs.grid.n[a] : 1;
      h[a] = spacing(cs, a);
      periodic[a] = a < dims && cs.boundary[2 * a].kind == BoundaryKind::periodic;
    }
  }
  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  std::array<std::int64_t, 3> coords(std::int64_t i) const {
    return {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
  }

  Shape prepare(const ShapeSpec& s, const std::string& key) {
    Shape out;
    out.spec = &s;
    if (s.kind == ShapeKind::where) {
      any_where = true;
      try {
        out.formula = Expression::compile(s.where, expression_variables(dims));
      } catch (const ExpressionError& e) {
        throw std::invalid_argument(key + ".where: " + e.what());
      }
      for (int a = 0; a < dims; ++a) {
        out.reads[a] = out.formula->reads(a);
        out.all_read = out.all_read && out.reads[a];
      }
      // The node test material_ids uses (1e-9 spacing tolerance does not apply to where).
      out.node_inside.assign(static_cast<std::size_t>(points()), 0);
      out.formula->node_test(
          dims, n.data(),
          [&](int a, std::int64_t index) { return static_cast<double>(index) * h[a]; },
          out.node_inside.data());
    }
    if (s.kind == ShapeKind::box)
      for (int a = 0; a < dims; ++a) {
        out.meets[a].assign(static_cast<std::size_t>(n[a]), 0);
        out.within[a].assign(static_cast<std::size_t>(n[a]), 0);
        // A bound on the next node's plane meets the neighbourhood, however x + h rounds
        // (0.012 against 35 h + h = 0.011999999999999999 at h = 0.03 / 90): the face to that
        // node crosses it (a contact there), within the node test's tolerance.
        const double tol = 1e-9 * h[a];
        for (std::int64_t q = 0; q < n[a]; ++q) {
          const double x = static_cast<double>(q) * h[a], lo = x - h[a], hi = x + h[a];
          out.meets[a][q] = !(hi < s.lower[a] - tol || lo > s.upper[a] + tol);
          out.within[a][q] = !(lo < s.lower[a] || hi > s.upper[a]);
        }
      }
    return out;
  }

  // A coordinate on a periodic axis brought into [0, n h).
  double wrap(int a, double x) const {
    if (!periodic[a]) return x;
    const double period = static_cast<double>(n[a]) * h[a];
    if (x < 0.0) return x + period;
    if (x >= period) return x - period;
    return x;
  }

  // Whether the surface of `s` may cross node i's neighbourhood (one spacing each way).
  bool crosses(const Shape& s, std::int64_t i) const { return crosses(s, i, coords(i)); }
  bool crosses(const Shape& s, std::int64_t i, const std::array<std::int64_t, 3>& ic) const {
    for (int a = 0; a < dims; ++a)
      if (periodic[a] && (ic[a] == 0 || ic[a] == n[a] - 1)) return true;  // the seam: sample
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
      const double x = static_cast<double>(ic[a]) * h[a];
      lo[a] = x - h[a];
      hi[a] = x + h[a];
    }
    const ShapeSpec& sp = *s.spec;
    switch (sp.kind) {
      case ShapeKind::everywhere:
      case ShapeKind::file:
        return false;
      case ShapeKind::box: {
        bool meets = true, within = true;
        for (int a = 0; a < dims; ++a) {
          meets = meets && s.meets[a][ic[a]];
          within = within && s.within[a][ic[a]];
        }
        return meets && !within;
      }
      case ShapeKind::ball: {
        double near = 0.0, far = 0.0;
        for (int a = 0; a < dims; ++a) {
          const double d_lo = sp.center[a] - lo[a], d_hi = hi[a] - sp.center[a];
          const double gap = std::max({0.0, -d_lo, -d_hi});  // outside the box on this axis
          near += gap * gap;
          const double reach = std::max(std::abs(d_lo), std::abs(d_hi));
          far += reach * reach;
        }
        // Within the node test's tolerance (1e-9 of a spacing) of the neighbourhood: a surface
        // through a node's coordinate up to the rounding (a disc of radius 8 h centred on a
        // node, written as 0.004 (1 - 1e-12)) puts that node inside, and its neighbour's face
        // toward it must take the contact (the surface 4e-15 m beyond the neighbourhood, the
        // neighbour was not sampled: its face held no contact on one side of the disc and did
        // on the other, 1.4e-3 K from symmetric).
        double h_max = h[0];
        for (int a = 1; a < dims; ++a) h_max = std::max(h_max, h[a]);
        const double slack = 1e-9 * h_max;
        const double r_out = sp.radius + slack, r_in = std::max(0.0, sp.radius - slack);
        return near <= r_out * r_out && r_in * r_in <= far;
      }
      case ShapeKind::where: {
        const char inside = s.node_inside[static_cast<std::size_t>(i)];
        const std::int64_t st[3] = {1, n[0], n[0] * n[1]};
        for (int dz = dims > 2 ? -1 : 0; dz <= (dims > 2 ? 1 : 0); ++dz)
          for (int dy = dims > 1 ? -1 : 0; dy <= (dims > 1 ? 1 : 0); ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const std::int64_t d[3] = {dx, dy, dz};
              std::int64_t j = 0;
              for (int a = 0; a < 3; ++a) {
                std::int64_t q = ic[a] + d[a];
                if (q < 0 || q >= n[a]) q = ic[a];  // beyond a face: the node itself
                j += q * st[a];
              }
              if (s.node_inside[static_cast<std::size_t>(j)] != inside) return true;
            }
        return false;
      }
    }
    return true;
  }

  // False where crosses(s, i) is false for every node i of the row (y, z) along x: a box the
  // row's neighbourhood does not meet on y or z, or a shape without a surface. Rows that
  // cannot be ruled out so (balls, `where` shapes, periodic axes' seams) answer true.
  bool row_may_cross(const Shape& s, std::int64_t y, std::int64_t z) const {
    for (int a = 0; a < dims; ++a)
      if (periodic[a]) return true;
    switch (s.spec->kind) {
      case ShapeKind::everywhere:
      case ShapeKind::file:
        return false;
      case ShapeKind::box:
        return (dims < 2 || s.meets[1][y]) && (dims < 3 || s.meets[2][z]);
      case ShapeKind::ball:
      case ShapeKind::where:
        break;
    }
    return true;
  }

  // Cut points of [lo, hi] on axis a into `at`: `parts` equal parts, refined at the box
  // bounds inside.
  void cuts(int a, double lo, double hi, const ShapeList& shapes, int parts,
            std::vector<double>& at) const {
    at.clear();
    for (int k = 0; k <= parts; ++k)
      at.push_back(k == parts ? hi : lo + (hi - lo) * static_cast<double>(k) / parts);
    shapes.add_bounds_within(a, lo, hi, at);
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
  }

  // Whether `s` is a box none of whose bounds lies strictly inside node ic's control volume,
  // on any axis, and no axis is periodic: the centres of the node's sub-cells (for_sub_cells),
  // strictly inside the control volume, then lie on the same side of every bound.
  bool box_bounds_outside_cell(const Shape& s, const std::array<std::int64_t, 3>& ic) const {
    if (s.spec->kind != ShapeKind::box) return false;
    for (int a = 0; a < dims; ++a) {
      if (periodic[a]) return false;
      const auto [lo, hi] = cell(a, ic[a]);
      for (double b : {s.spec->lower[a], s.spec->upper[a]})
        if (b > lo && b < hi) return false;
    }
    return true;
  }

  // The volume of node i's control volume (its area in 2D, its length in 1D).
  double cell_volume(std::int64_t i) const {
    const auto ic = coords(i);
    double v = 1.0;
    for (int a = 0; a < dims; ++a) {
      const auto [lo, hi] = cell(a, ic[a]);
      v *= hi - lo;
    }
    return v;
  }

  // The area of node i's control volume across axis a (its extent on the other axes; 1 in 1D):
  // the cross-section of its faces along a.
  double cross_section(int a, std::int64_t i) const {
    const auto ic = coords(i);
    double area = 1.0;
    for (int b = 0; b < dims; ++b) {
      if (b == a) continue;
      const auto [lo, hi] = cell(b, ic[b]);
      area *= hi - lo;
    }
    return area;
  }

  // The control volume of node i on axis a: half a spacing each way, clipped to the domain
  // on a non-periodic axis.
  std::pair<double, double> cell(int a, std::int64_t c) const {
    const double x = static_cast<double>(c) * h[a];
    double lo = x - 0.5 * h[a], hi = x + 0.5 * h[a];
    if (!periodic[a]) {
      lo = std::max(lo, 0.0);
      hi = std::min(hi, static_cast<double>(n[a] - 1) * h[a]);
    }
    return {lo, hi};
  }
};

// The materials' geometry: regions as shapes, their materials' k and rho c_p.
// A part of node `from`'s field that goes to node `to`: a part of its control volume beyond
// an interface (interface_targets), `amount` of a per-volume field times the part's volume; or
// a line of a face beyond a contact (Materials::face), its conductance times its part of the
// face's cross-section.
struct ShareMove {
  std::int64_t to = 0, from = 0;
  double amount = 0.0;
};

// A per-node field that only the nodes near one surface hold (a void's surface shares, an
// outer face's excess): the values of the nodes written, so that folding it, listing it and
// clearing it for the next surface cost those nodes, not the grid's (a heat sink's voids each
// took four passes over every node). Indexed as a std::vector<double> is, an unwritten node
// reading 0, so that the folds below take either. A hash map rather than dense arrays: a
// surface's nodes lie a row or a plane apart, one or two to a page, so dense arrays touched
// nearly every page of the grid (populated and cleared, or each faulted in on its first write:
// on a virtual machine the faults cost more than the surface's arithmetic).
class NodeShares {
 public:
  double& operator[](std::size_t i) {
    const auto [at, fresh] = value_.try_emplace(static_cast<std::int64_t>(i), 0.0);
    if (fresh) nodes_.push_back(static_cast<std::int64_t>(i));
    return at->second;
  }
  double get(std::int64_t i) const {
    const auto at = value_.find(i);
    return at == value_.end() ? 0.0 : at->second;
  }
  // The nodes written, ascending.
  const std::vector<std::int64_t>& nodes() {
    std::sort(nodes_.begin(), nodes_.end());
    return nodes_;
  }
  void clear() {
    value_.clear();
    nodes_.clear();
  }

 private:
  std::unordered_map<std::int64_t, double> value_;
  std::vector<std::int64_t> nodes_;
};

// The moves of every thread, added to the receiving nodes in the order of (to, from), so that
// the fields do not depend on the threads' split: amount / per(to) (the node's control volume,
// or its cross-section across a face's axis).
template <typename Per>
void apply_moves(std::vector<ShareMove>& moves, std::vector<double>& out, Per&& per) {
  std::stable_sort(moves.begin(), moves.end(), [](const ShareMove& a, const ShareMove& b) {
    return a.to != b.to ? a.to < b.to : a.from < b.from;
  });
  for (const ShareMove& mv : moves) out[static_cast<std::size_t>(mv.to)] += mv.amount / per(mv.to);
}

struct Materials {
  Sampler& s;
  const std::vector<std::int32_t>& ids;
  std::vector<Shape> shapes;
  ShapeList shape_list;
  // one_material_cell: whether it can hold at all, and per axis and node whether a box bound
  // lies strictly inside the node's control volume.
  bool plain_cells = false;
  std::array<std::vector<char>, 3> bound_in_cell;
  std::vector<std::int32_t> material;  // per shape
  bool any_void = false;               // some region is a void
  bool several_materials = false;      // the regions hold two materials or more: interfaces
  ContactTable contacts;               // R'' between materials (contacts.hpp)
  // Per axis: every shape is the same along it (Shape::uniform_along), so a line along it
  // holds one material.
  std::array<bool, 3> uniform_along{false, false, false};
  // Per axis: every shape is the same along every other axis, so every line along it is the
  // line through any other point with its coordinate on it (layers written as a formula of
  // that coordinate alone).
  std::array<bool, 3> lines_alike{false, false, false};

  Materials(Sampler& sampler, const std::vector<std::int32_t>& node_ids)
      : s(sampler), ids(node_ids), contacts(sampler.c) {
    const Case& c = s.c;
    shapes.reserve(c.regions.size());
    for (std::size_t r = 0; r < c.regions.size(); ++r) {
      const RegionSpec& region = c.regions[r];
      shapes.push_back(s.prepare(region.shape, "regions[" + std::to_string(r) + "]"));
      std::int32_t m = -1;
      for (std::size_t k = 0; k < c.materials.size(); ++k)
        if (c.materials[k].name == region.material) m = static_cast<std::int32_t>(k);
      if (region.is_void) m = kVoid;
      if (m == -1)
        throw std::invalid_argument("regions[" + std::to_string(r) + "].material: unknown");
      material.push_back(m);
    }
    std::vector<const Shape*> list;
    for (const Shape& sh : shapes) list.push_back(&sh);
    shape_list = ShapeList(std::move(list));
    // one_material_cell's tables: no periodic axis and boxes alone (else never), and per axis
    // and node whether a box bound lies strictly inside its control volume.
    plain_cells = std::all_of(shapes.begin(), shapes.end(), [](const Shape& sh) {
      return sh.spec->kind == ShapeKind::everywhere || sh.spec->kind == ShapeKind::box;
    });
    for (int a = 0; a < s.dims; ++a) plain_cells = plain_cells && !s.periodic[a];
    for (int a = 0; a < s.dims; ++a) {
      std::vector<char>& in = bound_in_cell[static_cast<std::size_t>(a)];
      in.assign(static_cast<std::size_t>(s.n[a]), 0);
      const std::vector<double>& b = shape_list.box_bounds[static_cast<std::size_t>(a)];
      for (std::int64_t q = 0; q < s.n[a]; ++q) {
        const auto [lo, hi] = s.cell(a, q);
        const auto it = std::upper_bound(b.begin(), b.end(), lo);
        in[static_cast<std::size_t>(q)] = it != b.end() && *it < hi;
      }
    }
    for (int a = 0; a < s.dims; ++a)
      uniform_along[a] = std::all_of(shapes.begin(), shapes.end(),
                                     [&](const Shape& sh) { return sh.uniform_along(a); });
    for (int a = 0; a < s.dims; ++a) {
      lines_alike[a] = true;
      for (int b = 0; b < s.dims; ++b)
        if (b != a) lines_alike[a] = lines_alike[a] && uniform_along[b];
    }
    any_void = std::find(material.begin(), material.end(), kVoid) != material.end();
    std::int32_t first = -1;
    for (std::int32_t m : material) {
      if (m == kVoid) continue;
      if (first == -1) first = m;
      if (m != first) several_materials = true;
    }
  }

  // The material at point x (coordinates wrapped on periodic axes), else node `fallback`'s.
  std::int32_t at(const double* x, std::int64_t fallback) const {
    // The last region that holds x wins: the first found from the end.
    for (std::size_t r = shapes.size(); r-- > 0;)
      if (shapes[r].contains(x, s.dims)) return material[r];
    return ids[static_cast<std::size_t>(fallback)];
  }
  // The material at point x on a node plane as the node test gives it (materials.cpp: a box
  // bound or ball surface within 1e-9 of a spacing counts as through the point), else node
  // `fallback`'s: so that a line's end on an interface written at a node's coordinate takes
  // the side the node takes, whatever the rounding of the coordinates.
  std::int32_t at_node_plane(const double* x, std::int64_t fallback) const {
    double tol[3] = {0, 0, 0};
    for (int a = 0; a < s.dims; ++a) tol[a] = 1e-9 * s.h[a];
    std::int32_t m = -1;
    for (std::size_t r = 0; r < shapes.size(); ++r)
      if (shapes[r].contains(x, s.dims, tol)) m = material[r];
    return m != -1 ? m : ids[static_cast<std::size_t>(fallback)];
  }
  // at() for every point of `b`, into b.material.
  void classify(Points& b, std::int64_t fallback) const {
    b.material.assign(b.size(), -1);
    // The points' bounds: a shape that misses them all (Shape::misses) is not tested point by
    // point (a heat sink's tens of fins or voids, each far from most control volumes).
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < s.dims && b.size() > 0; ++a) {
      const auto [least, most] = std::minmax_element(b.x[a].begin(), b.x[a].end());
      lo[a] = *least;
      hi[a] = *most;
    }
    for (std::size_t r = 0; r < shapes.size(); ++r) {
      if (b.size() == 0 || shapes[r].misses(lo, hi, s.dims)) continue;
      shapes[r].contains_all(b, s.dims);
      for (std::size_t k = 0; k < b.size(); ++k)
        if (b.in[k]) b.material[k] = material[r];
    }
    for (std::int32_t& m : b.material)
      if (m == -1) m = ids[static_cast<std::size_t>(fallback)];
  }

  // A void conducts nothing and holds no heat: a line through it has no conductance (its
  // resistance is infinite), and its share of a control volume no capacity.
  double k(std::int32_t m, int axis) const {
    return m == kVoid ? 0.0 : s.c.materials[static_cast<std::size_t>(m)].conductivity_along(axis);
  }
  double capacity(std::int32_t m) const {
    return m == kVoid ? 0.0 : s.c.materials[static_cast<std::size_t>(m)].capacity();
  }

  bool near_surface(std::int64_t i) const { return near_surface(i, s.coords(i)); }
  // Whether every sub-cell of node ic's control volume (for_sub_cells) holds one material,
  // seen without classifying them: the regions are boxes (or everywhere), no axis is
  // periodic, and no box bound lies strictly inside the control volume on any axis. The
  // sub-cells' centres then lie on the same side of every bound.
  // (Sampler::box_bounds_outside_cell for every shape but everywhere, from per-axis tables.)
  bool one_material_cell(const std::array<std::int64_t, 3>& ic) const {
    if (!plain_cells) return false;
    for (int a = 0; a < s.dims; ++a)
      if (bound_in_cell[static_cast<std::size_t>(a)][static_cast<std::size_t>(ic[a])]) return false;
    return true;
  }
  // Whether near_surface may hold for some node of the row (y, z): Sampler::row_may_cross.
  bool row_near_surface(std::int64_t y, std::int64_t z) const {
    for (const Shape& sh : shapes)
      if (s.row_may_cross(sh, y, z)) return true;
    return false;
  }
  // The shapes whose surface may cross a node of the row (y, z) (Sampler::row_may_cross), into
  // `out`: near_surface's among them alone.
  void row_shapes(std::int64_t y, std::int64_t z, std::vector<const Shape*>& out) const {
    out.clear();
    for (const Shape& sh : shapes)
      if (s.row_may_cross(sh, y, z)) out.push_back(&sh);
  }
  bool near_surface(std::int64_t i, const std::array<std::int64_t, 3>& ic) const {
    for (const Shape& sh : shapes)
      if (s.crosses(sh, i, ic)) return true;
    return false;
  }
  // near_surface() for a node of a row whose row_shapes are `row`.
  bool near_surface(std::int64_t i, const std::array<std::int64_t, 3>& ic,
                    const std::vector<const Shape*>& row) const {
    for (const Shape* sh : row)
      if (s.crosses(*sh, i, ic)) return true;
    return false;
  }

  // Where the line along axis a through y (y[a] aside) crosses the balls' surfaces strictly
  // between lo and hi, found exactly, appended to `at`. A line tangent to a ball to within the
  // rounding of r^2 - d^2 (a ball centred on a node whose radius is a whole number of spacings:
  // 0.7 - 0.5 rounds below 0.2 where 0.5 - 0.3 does not) crosses it nowhere: a chord of some
  // 1e-8 r there, through an inclusion of k 1e-6 beside k 1, took a third more resistance on
  // one face and not on its mirror image (fields 3e-3 from symmetric).
  void add_ball_crossings(int a, const double* y, double lo, double hi,
                          std::vector<double>& at) const {
    for (const Shape& sh : shapes) {
      if (sh.spec->kind != ShapeKind::ball) continue;
      const double r2 = sh.spec->radius * sh.spec->radius;
      double off2 = 0.0;
      for (int b = 0; b < s.dims; ++b)
        if (b != a) off2 += (y[b] - sh.spec->center[b]) * (y[b] - sh.spec->center[b]);
      const double d2 = r2 - off2;
      if (d2 <= 16.0 * std::numeric_limits<double>::epsilon() * (r2 + off2)) continue;
      for (double t : {sh.spec->center[a] - std::sqrt(d2), sh.spec->center[a] + std::sqrt(d2)})
        if (t > lo && t < hi) at.push_back(t);
    }
  }

  // The cut points of a line along axis a from `from` to `to` through y (y[a] aside), for a
  // path's resistance (PathSum over its pieces), sorted: box bounds and ball surfaces found
  // exactly, `where` shapes sampled 8 times per spacing.
  void path_cuts(int a, const double* y, double from, double to,
                 std::vector<double>& at_cut) const {
    const double lo = std::min(from, to), hi = std::max(from, to);
    const int parts =
        s.any_where ? std::max(1, static_cast<int>(std::ceil(kWhereSteps * (hi - lo) / s.h[a])))
                    : 1;
    s.cuts(a, lo, hi, shape_list, parts, at_cut);
    add_ball_crossings(a, y, lo, hi, at_cut);
    std::sort(at_cut.begin(), at_cut.end());
  }
  // Calls f(len, x) for the pieces of a line between its cut points, in order: their lengths
  // and their midpoints (wrapped), pieces of no length skipped.
  template <typename F>
  void for_pieces(int a, const double* y, const std::vector<double>& at_cut, F&& f) const {
    for (std::size_t p = 0; p + 1 < at_cut.size(); ++p) {
      const double len = at_cut[p + 1] - at_cut[p];
      if (len <= 1e-9 * s.h[a]) continue;
      double x[3] = {y[0], y[1], y[2]};
      for (int b = 0; b < s.dims; ++b) x[b] = s.wrap(b, x[b]);
      x[a] = s.wrap(a, 0.5 * (at_cut[p] + at_cut[p + 1]));
      f(len, x);
    }
  }
  // A path's resistance summed piece by piece in order (the integral of dx / k, and R'' at
  // each change between two materials of a contact); infinite through a void.
  struct PathSum {
    const Materials& m;
    int a;
    double r = 0.0;
    std::int32_t prev = -1;
    bool cut = false;
    void add(double len, std::int32_t mat) {
      if (mat == kVoid) cut = true;
      if (cut) return;
      r += len / m.k(mat, a);
      if (prev >= 0 && mat != prev) r += m.contacts.resistance(prev, mat);
      prev = mat;
    }
    double value() const { return cut ? std::numeric_limits<double>::infinity() : r; }
  };

  // A sub-cell's way across an interface (interface_targets): the neighbour `to` (-1: none),
  // the axis, the sub-cell's offset d from the node, and whether a contact takes it whole.
  struct Crossing {
    std::int64_t to = -1;
    int axis = 0;
    double d[3] = {0, 0, 0};
    bool whole = false;
  };
  // The most ways across of one sub-cell (crossings): three axes, or three edges' diagonals.
  static constexpr int kMaxCrossings = 4;
  // The offset d of point x from node ic along axis b (wrapped on a periodic axis) and the step
  // of the index to the neighbour that way; false where d is 0 or there is no such neighbour.
  bool toward(int b, const std::array<std::int64_t, 3>& ic, const double* x, double& d,
              std::int64_t& step) const {
    d = x[b] - static_cast<double>(ic[b]) * s.h[b];
    if (s.periodic[b]) {
      const double period = static_cast<double>(s.n[b]) * s.h[b];
      if (d > 0.5 * period) d -= period;
      if (d < -0.5 * period) d += period;
    }
    if (d == 0.0) return false;
    std::int64_t q = ic[b] + (d > 0.0 ? 1 : -1);
    if (s.periodic[b]) q = (q + s.n[b]) % s.n[b];
    if (q < 0 || q >= s.n[b]) return false;
    const std::int64_t stride = b == 0 ? 1 : b == 1 ? s.n[0] : s.n[0] * s.n[1];
    step = (q - ic[b]) * stride;
    return true;
  }
  // The largest of the values offered, those equal to it within 1e-9 kept beside it: offer(v)
  // says where v goes among them (-1: smaller, left out), count how many there are.
  struct Largest {
    double best = 0.0;
    int count = 0;
    int offer(double v) {
      if (count > 0 && v < best * (1.0 - 1e-9)) return -1;
      if (count == 0 || v > best * (1.0 + 1e-9)) {
        best = v;
        count = 0;
      }
      return count++;
    }
  };

  // The ways across of a sub-cell at x holding `mat` in node i's control volume: the neighbour
  // along the axis of its largest offset (in spacings) that holds `mat`, or every one of those
  // whose offsets are equal to within 1e-9 (the sub-cell then goes in equal parts: a choice of
  // one by the axes' order, or by the rounding of the offsets, broke the symmetry of a ball, or
  // of a cube's corner, between the axes), into `out`; the count (0: it stays). With no such
  // neighbour along an axis (the corner of a copper square whose node planes are the
  // aluminium's: its quarter of the corner node's control volume), the nearest diagonal
  // neighbour toward it that holds `mat` (across an edge before a corner; equal ones in equal
  // parts), which takes the part whole, with or without a contact: left at a node of another
  // material (a die's corner piece and its source at the air node outside the corner, whose
  // lines ending in the die go to the die's nodes) its heat had no way out but that node's
  // (543.68 K there beside the die's 488.10 K).
  int crossings(std::int64_t i, const std::array<std::int64_t, 3>& ic, const double* x,
                std::int32_t mat, Crossing* out) const {
    const std::int32_t own = ids[static_cast<std::size_t>(i)];
    if (mat == own || mat == kVoid || own == kVoid) return 0;
    double d[3] = {0, 0, 0}, off[3] = {0, 0, 0};
    std::int64_t step[3] = {0, 0, 0};  // toward the sub-cell, per axis (0: none that way)
    for (int a = 0; a < s.dims; ++a)
      if (toward(a, ic, x, d[a], step[a])) off[a] = std::abs(d[a]) / s.h[a];
    const bool contact = contacts.resistance(own, mat) > 0.0;
    const auto holds = [&](std::int64_t j) { return ids[static_cast<std::size_t>(j)] == mat; };
    int count = 0;
    // The candidates of `axes` axes at once (1: along an axis; 2, 3: diagonals), the one of the
    // largest least offset, ties kept.
    for (int axes = 1; axes <= s.dims && count == 0; ++axes) {
      Largest largest;
      for (int mask = 1; mask < (1 << s.dims); ++mask) {
        int bits = 0, first = -1;
        double least = std::numeric_limits<double>::infinity();
        std::int64_t j = i;
        bool ok = true;
        for (int a = 0; a < s.dims; ++a) {
          if (!(mask & (1 << a))) continue;
          ++bits;
          if (step[a] == 0) ok = false;
          if (first < 0) first = a;
          least = std::min(least, off[a]);
          j += step[a];
        }
        if (bits != axes || !ok || !holds(j)) continue;
        const int at = largest.offer(least);
        if (at < 0) continue;
        count = largest.count;
        Crossing& c = out[at];
        c = Crossing{};
        c.to = j;
        c.axis = first;
        for (int a = 0; a < 3; ++a) c.d[a] = d[a];
        c.whole = contact || axes > 1;
      }
    }
    return count;
  }
  // The first of crossings(), or none.
  Crossing crossing(std::int64_t i, const std::array<std::int64_t, 3>& ic, const double* x,
                    std::int32_t mat) const {
    Crossing c[kMaxCrossings];
    return crossings(i, ic, x, mat, c) > 0 ? c[0] : Crossing{};
  }
  // For a crossing without a contact: the point a hundred-thousandth of the way from the node
  // toward the sub-cell (a millionth of a spacing or more: far beyond the node test's 1e-9,
  // which puts a bound written at a node's coordinate through the node), where `mat` means the
  // interface passes through the node.
  void crossing_test_point(const Crossing& c, const std::array<std::int64_t, 3>& ic,
                           double* y) const {
    for (int a = 0; a < 3; ++a) y[a] = 0.0;
    for (int a = 0; a < s.dims; ++a)
      y[a] = s.wrap(a, static_cast<double>(ic[a]) * s.h[a] + 1e-5 * c.d[a]);
  }
  // The cuts of its paths along the axis from the node to the part (R_i) and from the part to
  // the node across (R_j).
  void crossing_paths(const Crossing& c, const std::array<std::int64_t, 3>& ic, const double* x,
                      std::vector<double>& cuts_i, std::vector<double>& cuts_j) const {
    const int axis = c.axis;
    const double node = static_cast<double>(ic[axis]) * s.h[axis], part = node + c.d[axis];
    const double other = node + (c.d[axis] > 0.0 ? s.h[axis] : -s.h[axis]);
    path_cuts(axis, x, node, part, cuts_i);
    path_cuts(axis, x, part, other, cuts_j);
  }
  // The share R_i / (R_i + R_j) of the part that goes across.
  static double crossing_weight(double Ri, double Rj) {
    return std::isinf(Ri) ? 1.0 : std::isinf(Rj) ? 0.0 : Ri / (Ri + Rj);
  }

  // Per node, whether it is a sliver (find_slivers): null until found.
  const char* sliver = nullptr;

  // The body nodes whose own point lies inside a void, away from its surface (the void holds
  // every point within 1e-9 of a spacing of the node, inside the domain: the pieces' own
  // tolerance, so a bound written to ten digits just short of a node plane still makes the
  // node a sliver and not a body cut off by a void piece): nodes whose control
  // volume the void holds only in part, so the strict node test leaves them body, their body
  // a sliver beyond the void's surface. Every line from such a node starts in the void. Such a
  // node lies within half a spacing of a void's bound: only the nodes near_surface are tested.
  std::vector<char> find_slivers() const {
    const std::int64_t np = s.points();
    std::vector<char> out(static_cast<std::size_t>(np), 0);
    if (!any_void) return out;
    double end[3] = {0, 0, 0};
    for (int a = 0; a < s.dims; ++a) end[a] = static_cast<double>(s.n[a] - 1) * s.h[a];
    const int reach[3] = {1, s.dims > 1 ? 1 : 0, s.dims > 2 ? 1 : 0};
#pragma omp parallel for schedule(dynamic, 4096) if (np >= 32768)
    for (std::int64_t i = 0; i < np; ++i) {
      if (ids[static_cast<std::size_t>(i)] == kVoid) continue;
      const auto ic = s.coords(i);
      if (!row_near_surface(ic[1], ic[2]) || !near_surface(i, ic)) continue;
      double x[3] = {0, 0, 0};
      for (int a = 0; a < s.dims; ++a) x[a] = static_cast<double>(ic[a]) * s.h[a];
      if (at(x, i) != kVoid) continue;
      bool inside = true;
      for (int dz = -reach[2]; dz <= reach[2] && inside; ++dz)
        for (int dy = -reach[1]; dy <= reach[1] && inside; ++dy)
          for (int dx = -reach[0]; dx <= reach[0] && inside; ++dx) {
            const int d[3] = {dx, dy, dz};
            double y[3] = {x[0], x[1], x[2]};
            bool in_domain = true;
            for (int a = 0; a < s.dims; ++a) {
              y[a] = s.wrap(a, x[a] + 1e-9 * s.h[a] * d[a]);
              if (!s.periodic[a] && (y[a] < 0.0 || y[a] > end[a])) in_domain = false;
            }
            if (in_domain && at(y, i) != kVoid) inside = false;
          }
      out[static_cast<std::size_t>(i)] = inside ? 1 : 0;
    }
    return out;
  }

  // The share (contacts.hpp) of a contact met along axis a at coordinate t of the line through
  // x, between the material at coordinate `before` and that at `after` (either taken as the
  // node test takes it, within 1e-9 of a spacing, where `*_plane`): the surface of the last
  // region that holds one of the two points and not the other is the interface. A ball's
  // normal is radial at the crossing, a `where` shape's is its indicator's
  // (indicator_contact_share, over a ball of the smallest spacing's radius); a box's bounds
  // take the contact whole (share 1).
  double crossing_share(int a, const double* x, double t, double before, bool before_plane,
                        double after, bool after_plane) const {
    double tol[3] = {0, 0, 0};
    for (int b = 0; b < s.dims; ++b) tol[b] = 1e-9 * s.h[b];
    double yb[3] = {x[0], x[1], x[2]}, ya[3] = {x[0], x[1], x[2]};
    for (int b = 0; b < s.dims; ++b) yb[b] = ya[b] = s.wrap(b, x[b]);
    yb[a] = s.wrap(a, before);
    ya[a] = s.wrap(a, after);
    for (std::size_t r = shapes.size(); r-- > 0;) {
      const Shape& sh = shapes[r];
      if (sh.contains(yb, s.dims, before_plane ? tol : nullptr) ==
          sh.contains(ya, s.dims, after_plane ? tol : nullptr))
        continue;
      if (sh.spec->kind == ShapeKind::where) {
        // Between the two sides' points (a piece's midpoint is the sampling's: the surface
        // lies anywhere between them), in the wrapped coordinates the formula sees.
        double h_min = s.h[0];
        for (int b = 1; b < s.dims; ++b) h_min = std::min(h_min, s.h[b]);
        const auto inside = [&](const double* p) {
          double w[3] = {p[0], p[1], p[2]};
          for (int b = 0; b < s.dims; ++b) w[b] = s.wrap(b, w[b]);
          return sh.contains(w, s.dims);
        };
        return indicator_contact_share(inside, s.dims, yb, a, before, after, h_min);
      }
      if (sh.spec->kind != ShapeKind::ball) return 1.0;
      double y[3] = {x[0], x[1], x[2]};
      y[a] = t;
      return ball_contact_share(*sh.spec, s.dims, y, a);
    }
    return 1.0;
  }

  // The surface between coordinate `in` (holding m_in) and `out` (holding m_out) of the line
  // along axis a through y (y[a] aside), found by bisection to kWhereCrossing of a spacing;
  // NaN where a point between holds a third material.
  double bisect_surface(int a, double* y, std::int64_t node, double in, std::int32_t m_in,
                        double out, std::int32_t m_out) const {
    for (int it = 0; it < 60 && std::abs(out - in) > kWhereCrossing * s.h[a]; ++it) {
      const double mid = 0.5 * (in + out);
      y[a] = s.wrap(a, mid);
      const std::int32_t m = at(y, node);
      if (m == m_in)
        in = mid;
      else if (m == m_out)
        out = mid;
      else
        return std::numeric_limits<double>::quiet_NaN();
    }
    return 0.5 * (in + out);
  }

  // Where two neighbouring pieces of a line (line_conductance: `at` its cuts, `batch` its
  // pieces classified) hold different materials, neither a void, and the cut between them is
  // one of the samples a `where` shape takes (kWhereSteps per spacing), not a box bound or a
  // ball's surface (found exactly), the surface between them is found by bisection between the
  // pieces' midpoints and the cut moved there: so a formula's plane surface is as exact as a
  // box's bound (it lay on the nearest sample, the face's resistance off by up to half a sample
  // of the poorer material); so is one between a line's end and its first or last sample, where
  // that piece is split. A piece keeps at least what the 1e-9 of a spacing that counts as no
  // piece would leave; where the bisection meets a third material the cut stays.
  void find_where_crossings(int a, const double* x, std::int64_t node, std::vector<double>& cut,
                            Points& batch) const {
    std::vector<std::size_t>& lower = batch.lower;  // the index in `cut` of each piece's lower end
    lower.clear();
    for (std::size_t p = 0; p + 1 < cut.size(); ++p)
      if (cut[p + 1] - cut[p] > 1e-9 * s.h[a]) lower.push_back(p);
    if (lower.empty()) return;
    std::vector<double>& exact = batch.exact;
    exact = shape_list.box_bounds[static_cast<std::size_t>(a)];
    add_ball_crossings(a, x, cut.front(), cut.back(), exact);
    double y[3] = {x[0], x[1], x[2]};
    for (int b = 0; b < s.dims; ++b) y[b] = s.wrap(b, y[b]);
    for (std::size_t k = 0; k + 1 < lower.size(); ++k) {
      const std::int32_t m0 = batch.material[k], m1 = batch.material[k + 1];
      const std::size_t c = lower[k + 1];
      if (m0 == m1 || m0 == kVoid || m1 == kVoid || c != lower[k] + 1) continue;
      if (std::find(exact.begin(), exact.end(), cut[c]) != exact.end()) continue;
      // A surface on the sample itself (within kWhereCrossing of a spacing): nothing to move.
      y[a] = s.wrap(a, cut[c] - kWhereCrossing * s.h[a]);
      const bool before = at(y, node) == m0;
      y[a] = s.wrap(a, cut[c] + kWhereCrossing * s.h[a]);
      if (before && at(y, node) == m1) continue;
      const double t = bisect_surface(a, y, node, 0.5 * (cut[c - 1] + cut[c]), m0,
                                      0.5 * (cut[c] + cut[c + 1]), m1);
      if (std::isnan(t) || t - cut[c - 1] <= 2e-9 * s.h[a] || cut[c + 1] - t <= 2e-9 * s.h[a])
        continue;
      cut[c] = t;
      batch.piece_at[k + 1] = t;
    }
    // A surface between a line's end (a node's plane) and its first or last piece's midpoint:
    // the end's material differs from the piece's, which is split there (the upper end first,
    // so that the lower one's indices still hold).
    for (const bool upper : {true, false}) {
      const std::size_t k = upper ? lower.size() - 1 : 0;
      const std::size_t c = lower[k];
      const double end = upper ? cut[c + 1] : cut[c], middle = 0.5 * (cut[c] + cut[c + 1]);
      y[a] = s.wrap(a, end);
      const std::int32_t m_end = at(y, node), m = batch.material[k];
      if (m_end == m || m_end == kVoid || m == kVoid) continue;
      if (std::find(exact.begin(), exact.end(), end) != exact.end()) continue;
      // A surface through the node's plane (within kWhereCrossing of a spacing): no piece.
      y[a] = s.wrap(a, upper ? end - kWhereCrossing * s.h[a] : end + kWhereCrossing * s.h[a]);
      if (at(y, node) == m) continue;
      const double t = bisect_surface(a, y, node, end, m_end, middle, m);
      if (std::isnan(t) || std::abs(t - end) <= 2e-9 * s.h[a]) continue;
      const auto to = [](std::size_t i) { return static_cast<std::ptrdiff_t>(i); };
      cut.insert(cut.begin() + to(c + 1), t);
      batch.piece_at.insert(batch.piece_at.begin() + to(k + 1), t);
      batch.material.insert(batch.material.begin() + to(upper ? k + 1 : k), m_end);
    }
  }

  // The segment from x to x + h e_a laid into pieces (batch.line_cuts: their ends, a piece
  // being one longer than 1e-9 of a spacing) and their materials (batch.material, in order).
  void lay_line(int a, double* x, std::int64_t node, Points& batch) const {
    const double x0 = x[a], x1 = x0 + s.h[a];
    std::vector<double>& at = batch.line_cuts;
    s.cuts(a, x0, x1, shape_list, s.any_where ? kWhereSteps : 1, at);
    add_ball_crossings(a, x, x0, x1, at);
    std::sort(at.begin(), at.end());
    // The pieces' midpoints, classified together.
    batch.clear();
    batch.piece_at.clear();
    for (std::size_t p = 0; p + 1 < at.size(); ++p) {
      // A piece shorter than the tolerance that puts a node on a bound (1e-9 of a spacing) is
      // the rounding of a bound written as a node's coordinate (26 * h = 0.013000000000000001
      // against a box from 0.013): a void there would cut the face off entirely.
      if (at[p + 1] - at[p] <= 1e-9 * s.h[a]) continue;
      double y[3] = {x[0], x[1], x[2]};
      for (int b = 0; b < s.dims; ++b) y[b] = s.wrap(b, y[b]);
      y[a] = s.wrap(a, 0.5 * (at[p] + at[p + 1]));
      batch.add(y);
      batch.piece_at.push_back(at[p]);
    }
    batch.piece_at.push_back(x1);
    classify(batch, node);
    // Shapes that do not change along the axis (Shape::uniform_along): every point of the
    // line holds one material, no surface to find.
    if (s.any_where && !uniform_along[a]) find_where_crossings(a, x, node, at, batch);
  }

  // The share of the series resistance of the segment from x to x + h e_a (its materials'
  // integral of dx/k, and the contacts' R'' where its material changes) that lies before
  // x + t h e_a: where a probe's temperature lies between the two nodes' if the heat flows
  // along the segment. t itself where the segment is one material or holds a void.
  double resistance_fraction(int a, double* x, std::int64_t node, double t, Points& batch) const {
    if (!(t > 0.0 && t < 1.0) || uniform_along[a]) return t;
    lay_line(a, x, node, batch);
    const std::vector<double>& at = batch.line_cuts;
    const double xp = x[a] + t * s.h[a];
    // A contact on a node plane at either end (an interface there: the nodes' materials against
    // the pieces beside them, as line_conductance counts it) lies before the point (the lower
    // end) or after it (the upper): a probe beside a contact on a node plane read the distance's
    // share, the contact's drop left out.
    std::int32_t ends[2] = {-1, -1};
    if (contacts.any()) line_ends(a, x, node, ends);
    double before = 0.0, total = 0.0;
    std::int32_t prev = ends[0];
    bool one = true;
    std::size_t piece = 0;
    for (std::size_t p = 0; p + 1 < at.size(); ++p) {
      if (at[p + 1] - at[p] <= 1e-9 * s.h[a]) continue;
      const std::int32_t m = batch.material[piece++];
      if (m == kVoid) return t;
      const double contact = prev >= 0 && m != prev ? contacts.resistance(prev, m) : 0.0;
      one = one && contact == 0.0 && (piece == 1 || m == prev);
      prev = m;
      const double r = contact + (at[p + 1] - at[p]) / k(m, a);
      total += r;
      if (at[p + 1] <= xp)
        before += r;
      else if (at[p] < xp)
        before += contact + (xp - at[p]) / k(m, a);
    }
    if (ends[1] >= 0 && prev >= 0 && ends[1] != prev) {
      const double contact = contacts.resistance(prev, ends[1]);
      one = one && contact == 0.0;
      total += contact;
    }
    if (one || !(total > 0.0)) return t;
    return std::clamp(before / total, 0.0, 1.0);
  }

  // The materials at the two ends of the line along axis a from point x (x[a] the lower node
  // `node`'s coordinate) to the next node: the nodes' own where the line runs through the nodes,
  // else the node planes' at the line's points (at_node_plane), for the contacts on those
  // planes.
  void line_ends(int a, const double* x, std::int64_t node, std::int32_t* ends) const {
    const auto ic = s.coords(node);
    bool through = true;
    for (int b = 0; b < s.dims; ++b)
      if (b != a && x[b] != static_cast<double>(ic[b]) * s.h[b]) through = false;
    std::int64_t stride = 1;
    for (int b = 0; b < a; ++b) stride *= s.n[b];
    const std::int64_t upper = ic[a] + 1 < s.n[a] ? node + stride : node - (s.n[a] - 1) * stride;
    double y[3] = {x[0], x[1], x[2]};
    for (int b = 0; b < s.dims; ++b) y[b] = s.wrap(b, y[b]);
    ends[0] = through ? ids[static_cast<std::size_t>(node)] : at_node_plane(y, node);
    // The upper node's coordinate as the node test computes it (not x0 + h, which rounds).
    y[a] = static_cast<double>(s.coords(upper)[a]) * s.h[a];
    ends[1] = through ? ids[static_cast<std::size_t>(upper)] : at_node_plane(y, upper);
  }

  // h_a / integral of dx / k along axis a from point x (x[a] the lower node) to x[a] + h_a.
  // `strip_lo` (`strip_hi`): the lower (upper) node is a sliver (find_slivers), whose body lies
  // beyond the void it stands in: the void at that end of the line, where it ends inside the
  // node's control volume, is not counted (the node stands for the body next to the surface),
  // so that the sliver's body conducts to its neighbour through the body alone. A void further
  // along, or one reaching past the control volume, still cuts the line.
  double line_conductance(int a, double* x, std::int64_t node, Points& batch, bool strip_lo = false,
                          bool strip_hi = false) const {
    // Every point of the line holds one material (uniform_along), and no contact or sliver's
    // void counts: its k, as the pieces' sum gives it (one material: that k exactly).
    if (uniform_along[a] && !contacts.any() && !strip_lo && !strip_hi) {
      double y[3] = {x[0], x[1], x[2]};
      for (int b = 0; b < s.dims; ++b) y[b] = s.wrap(b, y[b]);
      return k(this->at(y, node), a);
    }
    const double x0 = x[a], x1 = x0 + s.h[a];
    lay_line(a, x, node, batch);
    const std::vector<double>& at = batch.line_cuts;
    // Contacts: R'' at every change between two materials of a contact along the line,
    // its ends included: the material at each end (the node's own where the line runs through
    // the nodes, else the point's) against the piece beside it, so that an interface on a node
    // plane counts on the one face that crosses it.
    std::int32_t ends[2] = {-1, -1};
    if (contacts.any()) line_ends(a, x, node, ends);
    // The sum of the contacts met from `from` through pieces [lo, hi) to `to` (-1: no end),
    // each over its share (crossing_share): an end's material is the node plane's, a piece's
    // that of its midpoint.
    const std::vector<double>& cut = batch.piece_at;
    const auto middle = [&](std::size_t p) { return 0.5 * (cut[p] + cut[p + 1]); };
    const auto contact_sum = [&](std::int32_t from, std::size_t lo, std::size_t hi,
                                 std::int32_t to) {
      double r = 0.0;
      std::int32_t prev = from;
      for (std::size_t p = lo; p < hi; ++p) {
        const std::int32_t m = batch.material[p];
        if (prev >= 0 && m != prev) {
          const double R = contacts.resistance(prev, m);
          if (R > 0.0) {
            // The first piece meets the line's start, on the node plane.
            const bool start = p == 0;
            r += R /
                 crossing_share(a, x, cut[p], start ? x0 : middle(p - 1), start, middle(p), false);
          }
        }
        prev = m;
      }
      if (to >= 0 && prev >= 0 && to != prev) {
        const double R = contacts.resistance(prev, to);
        // The line's end, on the upper node's plane.
        if (R > 0.0 && hi > 0)
          r += R / crossing_share(a, x, x1, middle(hi - 1), false, x1, true);
        else if (R > 0.0)
          r += R;
      }
      return r;
    };
    if (strip_lo || strip_hi) {
      // The pieces that count: from the first to the last that is not the end's void.
      std::vector<double> lengths;
      for (std::size_t p = 0; p + 1 < at.size(); ++p)
        if (at[p + 1] - at[p] > 1e-9 * s.h[a]) lengths.push_back(at[p + 1] - at[p]);
      std::size_t lo = 0, hi = lengths.size();
      // Only a void that ends inside the node's control volume (the body beyond it is the
      // node's sliver): one reaching further holds body that is not the node's, or none.
      const double reach = (0.5 - 1e-9) * s.h[a];
      double length = 0.0;
      if (strip_lo)
        while (lo < hi && batch.material[lo] == kVoid) length += lengths[lo++];
      if (length >= reach) return 0.0;
      length = 0.0;
      if (strip_hi)
        while (hi > lo && batch.material[hi - 1] == kVoid) length += lengths[--hi];
      if (length >= reach || lo == hi) return 0.0;
      double r = 0.0;
      for (std::size_t p = lo; p < hi; ++p) {
        if (batch.material[p] == kVoid) return 0.0;  // a void between: no conduction
        r += lengths[p] / k(batch.material[p], a);
      }
      // A stripped end is the void's, which has no contact: only the ends kept count.
      if (contacts.any())
        r += contact_sum(strip_lo ? -1 : ends[0], lo, hi, strip_hi ? -1 : ends[1]);
      return s.h[a] / r;
    }
    double resistance = 0.0;
    std::int32_t first = -1;
    bool have = false;
    bool one = true;  // one material along the whole segment: its k exactly
    std::size_t piece = 0;
    for (std::size_t p = 0; p + 1 < at.size(); ++p) {
      const double len = at[p + 1] - at[p];
      if (len <= 1e-9 * s.h[a]) continue;
      const std::int32_t m = batch.material[piece++];
      if (!have) {
        first = m;
        have = true;
      }
      one = one && m == first;
      resistance += len / k(m, a);
    }
    const double contact = contacts.any() ? contact_sum(ends[0], 0, piece, ends[1]) : 0.0;
    if (contact > 0.0)
      return with_contact(one ? k(first, a) : s.h[a] / resistance, s.h[a], contact);
    return one ? k(first, a) : s.h[a] / resistance;
  }

  // A line of a face (Materials::face) whose end lies in material `end` (line_ends) beside a
  // piece of `mat` (the line counts the contact between the two): whether node material `o`
  // takes the line at that end, so that the line's conductance is the one between the node and
  // the line's far end. It does where it is the end's material, or in perfect contact with it
  // where the line counts at least the contact between `o` and `mat` there; not where a contact
  // lies between the node and the line that the line does not count (the node's material ends
  // within its control volume and the line starts beyond it).
  bool joins(std::int32_t o, std::int32_t end, std::int32_t mat) const {
    if (o == kVoid) return false;
    if (o == end) return true;
    return !(contacts.resistance(o, end) > 0.0) &&
           contacts.resistance(end, mat) >= contacts.resistance(o, mat);
  }
  // Where node i or node j does not join the line of face (i, j = i + e_a) at x (joins; its
  // first and last pieces' materials `pieces`, its ends' `ends`, no void on it): the lower node
  // i + d of the face whose nodes both join it, one spacing across along the axis of the line's
  // largest offset from the nodes (in spacings), as a part of a control volume beyond a contact
  // goes with its capacity, into `to` (two such axes at equal offsets: both, the line in halves);
  // the count (0: the line stays).
  // A layer on a base along their contact: the strip of the base that a layer node's face
  // crosses conducts on the face of the base's nodes, at the base's side of the contact's jump
  // (left at the layer's nodes, heat along the interface converged at first order). Beside a
  // third material (an aluminium strip under a copper block's corner node, beside it a filler
  // with no contact to the aluminium): the strip goes to the face of the aluminium and the
  // filler's nodes, which join it. At a square's corner whose node planes are the other
  // material's: the copper strip along the square's side, on the face of the aluminium nodes
  // on the planes through the corner, goes to the face from the copper node to the aluminium
  // node beyond the square's top, whose contact the line counts at its end.
  int line_beyond_contact(int a, std::int64_t i, std::int64_t j,
                          const std::array<std::int64_t, 3>& ic, const double* x,
                          const std::int32_t* pieces, const std::int32_t* ends,
                          std::int64_t* to) const {
    if (!contacts.any()) return 0;
    if (joins(ids[static_cast<std::size_t>(i)], ends[0], pieces[0]) &&
        joins(ids[static_cast<std::size_t>(j)], ends[1], pieces[1]))
      return 0;
    Largest largest;
    for (int b = 0; b < s.dims; ++b) {
      double d = 0.0;
      std::int64_t step = 0;
      if (b == a || !toward(b, ic, x, d, step)) continue;
      if (!joins(ids[static_cast<std::size_t>(i + step)], ends[0], pieces[0]) ||
          !joins(ids[static_cast<std::size_t>(j + step)], ends[1], pieces[1]))
        continue;
      const int at = largest.offer(std::abs(d) / s.h[b]);
      if (at >= 0) to[at] = i + step;
    }
    return largest.count > 0 ? largest.count : -1;
  }
  // A line of face (i, j = i + e_a) at x wholly in one material that no face across joins
  // (line_beyond_contact gave -1: a foil thinner than a spacing between two other materials,
  // with a contact on either side, in node i's control volume): the share of it that goes to
  // the face one spacing across along the axis of its largest offset (its lower node), the
  // rest staying, as if the foil's temperature lay between the two sides' nodes':
  // R_i / (R_i + R_j), the resistances along that axis from node i to the line and from
  // the line to the node across, each contact on the way counted (Materials::PathSum); at
  // equal offsets on two axes, each takes half the line so. Into `across` and `share`, the
  // count (0: no such face). Left whole on one side, the foil spread heat at that side's
  // temperature, past its contact.
  int line_share_across(int a, std::int64_t i, std::int64_t j,
                        const std::array<std::int64_t, 3>& ic, const double* x,
                        std::int64_t* across, double* share) const {
    int axes[2] = {-1, -1};
    double offsets[2] = {0, 0};
    std::int64_t steps[2] = {0, 0};
    Largest largest;
    for (int b = 0; b < s.dims; ++b) {
      double d = 0.0;
      std::int64_t k = 0;
      if (b == a || !toward(b, ic, x, d, k)) continue;
      if (ids[static_cast<std::size_t>(i + k)] == kVoid ||
          ids[static_cast<std::size_t>(j + k)] == kVoid)
        continue;
      const int at = largest.offer(std::abs(d) / s.h[b]);
      if (at < 0) continue;
      axes[at] = b;
      offsets[at] = d;
      steps[at] = k;
    }
    const int count = largest.count;
    for (int c = 0; c < count; ++c) {
      const int axis = axes[c];
      // Along the axis through the line's middle: node, line, node across (crossing_paths, the
      // line as the part).
      double y[3] = {x[0], x[1], x[2]};
      y[a] = s.wrap(a, x[a] + 0.5 * s.h[a]);
      Crossing way;
      way.axis = axis;
      way.d[axis] = offsets[c];
      std::vector<double> cuts_i, cuts_j, length;
      crossing_paths(way, ic, y, cuts_i, cuts_j);
      Points p;
      const auto piece = [&](double len, const double* at) {
        p.add(at);
        length.push_back(len);
      };
      for_pieces(axis, y, cuts_i, piece);
      const std::size_t middle = p.size();
      for_pieces(axis, y, cuts_j, piece);
      share[c] = 0.0;
      across[c] = i + steps[c];
      if (middle == 0 || middle == p.size()) continue;
      classify(p, i);
      PathSum ri{*this, axis}, rj{*this, axis};
      for (std::size_t k = 0; k < p.size(); ++k)
        (k < middle ? ri : rj).add(length[k], p.material[k]);
      share[c] = crossing_weight(ri.value(), rj.value());
    }
    return count;
  }

  // line_conductance, where every line along a is alike and no contact or sliver's void enters
  // remembered per thread: the answer of the line with this start and node material, computed
  // once (the same arithmetic on the same values; the other coordinates are read by no shape).
  double face_line(int a, double* x, std::int64_t node, Points& batch, bool strip_lo,
                   bool strip_hi) const {
    if (!lines_alike[a] || uniform_along[a] || contacts.any() || strip_lo || strip_hi)
      return line_conductance(a, x, node, batch, strip_lo, strip_hi);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x[a], sizeof bits);
    const auto key = std::make_tuple(a, bits, ids[static_cast<std::size_t>(node)]);
    const auto known = batch.line_k.find(key);
    if (known != batch.line_k.end()) return known->second;
    const double K = line_conductance(a, x, node, batch);
    batch.line_k.emplace(key, K);
    return K;
  }

  // The face between node i and i + e_a (or the wrap), sampled. With `moves`, the lines beyond
  // a contact (line_beyond_contact) leave the face and are appended there.
  double face(int a, std::int64_t i, Points& batch, std::vector<ShareMove>* moves = nullptr) const {
    const auto ic = s.coords(i);
    // The cross-section's cuts per other active axis.
    std::array<std::vector<double>, 3>& across = batch.cuts;
    for (int b = 0; b < 3; ++b) {
      if (b == a || b >= s.dims) {
        across[b] = {0.0, 0.0};  // one "piece" of zero width: weight 1 below
        continue;
      }
      const auto [lo, hi] = s.cell(b, ic[b]);
      s.cuts(b, lo, hi, shape_list, 1, across[b]);
      // Unsplit: the segment between the nodes itself (the line through the node even where
      // a face of the domain clips the cell). On such a face the line lies kFaceInset of a
      // spacing inside: a surface on the domain's face itself (a layer of no thickness, as
      // floor(x / c) makes at x = L) does not decide the face.
      if (across[b].size() == 2) {
        double x = static_cast<double>(ic[b]) * s.h[b];
        if (lo > x - 0.5 * s.h[b])
          x += kFaceInset * s.h[b];
        else if (hi < x + 0.5 * s.h[b])
          x -= kFaceInset * s.h[b];
        across[b] = {x - 0.5 * s.h[b], x + 0.5 * s.h[b]};
      }
    }
    // A sliver at either end (find_slivers) conducts through the body beyond its void.
    bool strip[2] = {false, false};
    if (sliver) {
      std::int64_t j = i + (a == 0 ? 1 : a == 1 ? s.n[0] : s.n[0] * s.n[1]);
      if (ic[a] == s.n[a] - 1) j -= s.n[a] * (a == 0 ? 1 : a == 1 ? s.n[0] : s.n[0] * s.n[1]);
      strip[0] = sliver[static_cast<std::size_t>(i)] != 0;
      strip[1] = sliver[static_cast<std::size_t>(j)] != 0;
    }
    double sum = 0.0, weight = 0.0, first = -1.0;
    bool one = true;  // every line alike (one material throughout): that value exactly
    // The lines beyond a contact: their lower node across, conductance and width (its share).
    struct Gone {
      std::int64_t to;
      double K, w;
    };
    std::vector<Gone> gone;
    std::int64_t j = -1;
    if (moves && contacts.any()) {
      std::int64_t stride = 1;
      for (int b = 0; b < a; ++b) stride *= s.n[b];
      j = ic[a] + 1 < s.n[a] ? i + stride : i - (s.n[a] - 1) * stride;
    }
    const auto pieces = [&](int b) { return std::max<std::size_t>(across[b].size() - 1, 1); };
    for (std::size_t pz = 0; pz < pieces(2); ++pz)
      for (std::size_t py = 0; py < pieces(1); ++py)
        for (std::size_t px = 0; px < pieces(0); ++px) {
          const std::size_t p[3] = {px, py, pz};
          double x[3] = {0, 0, 0}, w = 1.0;
          for (int b = 0; b < 3; ++b) {
            if (b == a) {
              x[b] = static_cast<double>(ic[b]) * s.h[b];
            } else if (b < s.dims) {
              x[b] = 0.5 * (across[b][p[b]] + across[b][p[b] + 1]);
              w *= across[b][p[b] + 1] - across[b][p[b]];
            }
          }
          if (w <= 0.0) continue;
          const double K = face_line(a, x, i, batch, strip[0], strip[1]);
          weight += w;
          if (j >= 0 && !batch.material.empty() &&
              std::none_of(batch.material.begin(), batch.material.end(),
                           [](std::int32_t mat) { return mat == kVoid; })) {
            std::int32_t ends[2] = {-1, -1};
            line_ends(a, x, i, ends);
            const std::int32_t pieces[2] = {batch.material.front(), batch.material.back()};
            std::int64_t to[2] = {-1, -1};
            const int ways = line_beyond_contact(a, i, j, ic, x, pieces, ends, to);
            if (ways > 0) {
              for (int k = 0; k < ways; ++k) gone.push_back({to[k], K, w / ways});
              one = false;
              continue;
            }
            if (ways < 0 && std::all_of(batch.material.begin(), batch.material.end(),
                                        [&](std::int32_t mat) { return mat == pieces[0]; })) {
              std::int64_t across[2] = {-1, -1};
              double share[2] = {0.0, 0.0};
              const int axes = line_share_across(a, i, j, ic, x, across, share);
              if (axes > 0) {
                for (int k = 0; k < axes; ++k) {
                  const double part = w / axes;
                  if (share[k] > 0.0) gone.push_back({across[k], K, part * share[k]});
                  sum += part * (1.0 - share[k]) * K;
                }
                one = false;
                continue;
              }
            }
          }
          if (first < 0.0) first = K;
          one = one && K == first;
          sum += w * K;
        }
    if (moves && !gone.empty()) {
      const double area = s.cross_section(a, i);
      for (const Gone& g : gone) moves->push_back({g.to, i, g.K * g.w / weight * area});
    }
    return one ? first : sum / weight;
  }
};

// A node keeps its parts beyond an interface unless that would leave it less than this
// fraction of its control volume (a node on a face whose material is thinner there than a
// quarter of a spacing, or a layer thinner than that around the node): its capacity would then
// be next to nothing. An inner node keeps at least half in 1D (the interface lies past it).
constexpr double kLeastKept = 0.25;

// The points a node's crossings without a contact are tested at (interface_targets), in two
// batches: their node-side test points, then for those that go on, per sub-cell the pieces of
// its path from the node to the part (R_i), then those from the part to the node across (R_j).
// One per thread.
struct CrossingPoints {
  Points points;
  std::vector<double> length;  // per piece: its length
  // Per sub-cell: its test point, then its first piece, its first of R_j's, its end.
  std::vector<std::size_t> first, middle, last;
  std::vector<Materials::Crossing> crossing;  // per sub-cell
  std::vector<std::int32_t> tested;           // the test points' materials
  std::vector<double> cuts_i, cuts_j;
};

// interface_targets' end: true when some sub-cell goes and node i keeps at least kLeastKept of
// its control volume, else every target cleared.
bool finish_targets(const std::vector<double>& volumes, std::vector<std::int64_t>& to,
                    std::vector<double>& share) {
  double kept = 0.0, volume = 0.0;
  bool any = false;
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    volume += volumes[k];
    if (to[k] >= 0) any = true;
    kept += volumes[k] * (to[k] >= 0 ? 1.0 - share[k] : 1.0);
  }
  if (any && kept >= kLeastKept * volume) return true;
  to.assign(volumes.size(), -1);
  share.assign(volumes.size(), 0.0);
  return false;
}

// Where a sub-cell of node i's control volume holds material `mat` beyond an
// interface from the node (another material than the node's, not a void): the neighbour node
// that holds `mat` along the axis of the sub-cell's largest offset from the node (in
// spacings), which takes the share `share` of its heat capacity and its share of a source,
// so that their heat enters `mat` at its own temperature (a heated layer's sliver in a poor
// conductor's control volume heated that node, the heat then crossing the poor conductor),
// and crosses a contact on the way to node i as it does in the body. -1: it stays at node i,
// also where the interface passes through the node's own point without a contact (the node
// is the interface's: both sides reach it directly, as the node test's choice of side must
// not matter). Beyond a contact the whole part goes; without one, the part's temperature
// lies between the two nodes' as the resistances from them to it along the axis put it
// (R_i from node i, R_j from node j: T_i + (T_j - T_i) R_i / (R_i + R_j) in a steady line),
// so node j takes R_i / (R_i + R_j) of it: a heated sliver beside a poor conductor goes
// almost whole, a poor conductor's sliver beside a good one mostly stays.
// For the sub-cells of node i (centres in `b`, materials classified, volumes `volumes`): the
// neighbour each goes to across an interface (-1: it stays) and the share of it that goes
// (`share`), all -1 when node i keeps them all (one material, or too little of the node would
// be left). True when some sub-cell goes. The points the shares need are classified together
// (Materials::classify: a `where` shape evaluated in blocks, the bits of Materials::at).
bool interface_targets(const Materials& m, std::int64_t i, const std::array<std::int64_t, 3>& ic,
                       Points& b, std::vector<double>& volumes, std::vector<std::int64_t>& to,
                       std::vector<double>& share, CrossingPoints& cp) {
  to.assign(volumes.size(), -1);
  share.assign(volumes.size(), 0.0);
  if (!m.several_materials) return false;
  // Every sub-cell the node's material (or a void's, or the node a void): no crossing
  // (Materials::crossing), nothing goes.
  const std::int32_t own = m.ids[static_cast<std::size_t>(i)];
  if (own == kVoid || std::all_of(b.material.begin(), b.material.end(),
                                  [&](std::int32_t mat) { return mat == own || mat == kVoid; }))
    return false;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  Points& p = cp.points;
  p.clear();
  cp.length.clear();
  std::vector<Materials::Crossing>& crossing = cp.crossing;
  crossing.assign(volumes.size(), Materials::Crossing{});
  // Each sub-cell's ways across (Materials::crossings); one with several goes in equal parts:
  // its copies, a part each, are appended to the sub-cells (b, volumes) with their ways.
  const std::size_t given = volumes.size();
  for (std::size_t k = 0; k < given; ++k) {
    const double x[3] = {b.x[0][k], b.x[1][k], b.x[2][k]};
    Materials::Crossing ways[Materials::kMaxCrossings];
    const int count = m.crossings(i, ic, x, b.material[k], ways);
    if (count == 0) continue;
    crossing[k] = ways[0];
    if (count == 1) continue;
    volumes[k] /= count;
    for (int w = 1; w < count; ++w) {
      b.add(x);
      b.material.push_back(b.material[k]);
      volumes.push_back(volumes[k]);
      crossing.push_back(ways[w]);
    }
  }
  to.assign(volumes.size(), -1);
  share.assign(volumes.size(), 0.0);
  cp.first.assign(volumes.size(), kNone);
  cp.middle.assign(volumes.size(), 0);
  cp.last.assign(volumes.size(), 0);
  // First the node-side test points: a crossing whose point holds `mat` stays at node i.
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    const Materials::Crossing& c = crossing[k];
    if (c.to < 0) continue;
    if (c.whole) {
      to[k] = c.to;
      share[k] = 1.0;
      continue;
    }
    double y[3];
    m.crossing_test_point(c, ic, y);
    cp.first[k] = p.size();
    p.add(y);
  }
  if (p.size() == 0) return finish_targets(volumes, to, share);
  m.classify(p, i);
  // Then the pieces of the paths of the others, from the node to the part and on to the node
  // across.
  std::vector<std::int32_t>& tested = cp.tested;
  tested.swap(p.material);  // classify lays p.material afresh
  p.clear();
  cp.length.clear();
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    if (cp.first[k] == kNone) continue;
    if (tested[cp.first[k]] == b.material[k]) {
      cp.first[k] = kNone;
      continue;
    }
    const double x[3] = {b.x[0][k], b.x[1][k], b.x[2][k]};
    m.crossing_paths(crossing[k], ic, x, cp.cuts_i, cp.cuts_j);
    const auto piece = [&](double len, const double* at) {
      p.add(at);
      cp.length.push_back(len);
    };
    cp.first[k] = p.size();
    m.for_pieces(crossing[k].axis, x, cp.cuts_i, piece);
    cp.middle[k] = p.size();
    m.for_pieces(crossing[k].axis, x, cp.cuts_j, piece);
    cp.last[k] = p.size();
  }
  if (p.size() > 0) m.classify(p, i);
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    if (cp.first[k] == kNone) continue;
    Materials::PathSum ri{m, crossing[k].axis}, rj{m, crossing[k].axis};
    for (std::size_t q = cp.first[k]; q < cp.middle[k]; ++q) ri.add(cp.length[q], p.material[q]);
    for (std::size_t q = cp.middle[k]; q < cp.last[k]; ++q) rj.add(cp.length[q], p.material[q]);
    share[k] = Materials::crossing_weight(ri.value(), rj.value());
    to[k] = share[k] > 0.0 ? crossing[k].to : -1;
  }
  return finish_targets(volumes, to, share);
}

// Calls f(x, volume) for the sub-cells of node i's control volume; `at` holds the cut points
// per axis (Points::cuts).
// `first_only` (per axis, or null): the axes on which only the first part is taken.
template <typename F>
void for_sub_cells(const Sampler& s, const ShapeList& shapes, std::int64_t i,
                   std::array<std::vector<double>, 3>& at, F&& f,
                   const bool* first_only = nullptr) {
  const auto ic = s.coords(i);
  for (int a = 0; a < 3; ++a) {
    if (a >= s.dims) {
      at[a] = {0.0, 1.0};
      continue;
    }
    const auto [lo, hi] = s.cell(a, ic[a]);
    s.cuts(a, lo, hi, shapes, kSplit, at[a]);
    if (first_only && first_only[a]) at[a].resize(2);
  }
  for (std::size_t pz = 0; pz + 1 < at[2].size(); ++pz)
    for (std::size_t py = 0; py + 1 < at[1].size(); ++py)
      for (std::size_t px = 0; px + 1 < at[0].size(); ++px) {
        const std::size_t p[3] = {px, py, pz};
        double x[3] = {0, 0, 0}, v = 1.0;
        for (int a = 0; a < 3; ++a) {
          const double lo = at[a][p[a]], hi = at[a][p[a] + 1];
          if (a < s.dims) {
            x[a] = s.wrap(a, 0.5 * (lo + hi));
            v *= hi - lo;
          }
        }
        if (v > 0.0) f(x, v);
      }
}

// The first sub-cell of node i's control volume that for_sub_cells gives, where no box bound of
// its shapes lies strictly inside the control volume on any axis (the sub-cells are then the
// equal parts): its centre into x and its volume into v, as for_sub_cells computes them. False
// (nothing found) where the first part has no extent on some axis; for_sub_cells decides then.
bool first_sub_cell(const Sampler& s, const std::array<std::int64_t, 3>& ic, double* x, double& v) {
  v = 1.0;
  for (int a = 0; a < 3; ++a) {
    x[a] = 0.0;
    if (a >= s.dims) continue;
    const auto [lo, hi] = s.cell(a, ic[a]);
    // cuts()'s first two points: lo and lo + (hi - lo) * 1 / kSplit, the smallest two.
    const double next = lo + (hi - lo) * static_cast<double>(1) / kSplit;
    if (!(next > lo)) return false;
    x[a] = s.wrap(a, 0.5 * (lo + next));
    v *= next - lo;
  }
  return v > 0.0;
}

// The nodes a void node's body share goes to (fold_void_nodes): its body neighbours along the
// axes, or, when it has none, the nearest body nodes among its 3^d neighbours.
std::vector<std::int64_t> void_node_takers(const Case& c, const std::vector<std::int32_t>& ids,
                                           std::int64_t i) {
  const std::array<std::int64_t, 3> n = c.grid.n;
  std::array<bool, 3> periodic{};
  for (int a = 0; a < c.grid.dims; ++a)
    periodic[a] = c.boundary[2 * a].kind == kernels::BoundaryKind::periodic;
  const auto body = [&](std::int64_t j) { return ids[static_cast<std::size_t>(j)] != kVoid; };
  const std::int64_t ic[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
  // The neighbour at offset d (-1, 0, 1 per axis), or -1 beyond a non-periodic face.
  const auto neighbour = [&](const int* d) -> std::int64_t {
    std::int64_t j = 0, stride = 1;
    for (int a = 0; a < 3; ++a) {
      std::int64_t q = ic[a] + d[a];
      if (q < 0 || q >= n[a]) {
        if (!periodic[a]) return -1;
        q = (q + n[a]) % n[a];
      }
      j += q * stride;
      stride *= n[a];
    }
    return j;
  };
  std::vector<std::int64_t> takers;
  for (int a = 0; a < c.grid.dims; ++a)
    for (int side = -1; side <= 1; side += 2) {
      int d[3] = {0, 0, 0};
      d[a] = side;
      const std::int64_t j = neighbour(d);
      if (j >= 0 && body(j)) takers.push_back(j);
    }
  // Else the nearest diagonal ones: across an edge (two axes) before across a corner (three),
  // so that a corner of the body that is the same along an axis goes along it alike at every
  // node (a fin's tip extruded in z: taken across the corner, the nodes on the faces of z, with
  // fewer neighbours, took more per node).
  const int reach[3] = {1, c.grid.dims > 1 ? 1 : 0, c.grid.dims > 2 ? 1 : 0};
  for (int axes = 2; axes <= c.grid.dims && takers.empty(); ++axes)
    for (int dz = -reach[2]; dz <= reach[2]; ++dz)
      for (int dy = -reach[1]; dy <= reach[1]; ++dy)
        for (int dx = -reach[0]; dx <= reach[0]; ++dx) {
          const int d[3] = {dx, dy, dz};
          if ((dx != 0) + (dy != 0) + (dz != 0) != axes) continue;
          const std::int64_t j = neighbour(d);
          if (j >= 0 && body(j)) takers.push_back(j);
        }
  return takers;
}

// A node that lies inside a void and whose control volume reaches into the body holds part of
// the body's volume (its capacity, a source's share, a surface's elements), but every segment
// from it crosses the void, so no face conducts to it: left there, that part would be cut off
// (a steady solve singular, an explicit step heating it without end). Its share, times its
// weight, goes in equal parts to its body neighbours along the axes (or, when it has none, to
// the nearest body nodes among its 3^d neighbours: across an edge before across a corner), so
// that every total stays as sampled. A node with
// no body neighbour at all keeps nothing: the body there is thinner than a spacing.
template <class Field>
void fold_void_node(const Case& c, const std::vector<std::int32_t>& ids, std::int64_t i,
                    Field& per_volume) {
  const std::size_t at = static_cast<std::size_t>(i);
  if (ids[at] != kVoid || per_volume[at] == 0.0) return;
  const std::vector<std::int64_t> takers = void_node_takers(c, ids, i);
  const double held = per_volume[at] * node_weight(c, i);
  per_volume[at] = 0.0;
  for (std::int64_t j : takers)
    per_volume[static_cast<std::size_t>(j)] +=
        held / static_cast<double>(takers.size()) / node_weight(c, j);
}
void fold_void_nodes(const Case& c, const std::vector<std::int32_t>& ids,
                     std::vector<double>& per_volume) {
  const std::array<std::int64_t, 3> n = c.grid.n;
  const std::int64_t np = n[0] * n[1] * n[2];
  for (std::int64_t i = 0; i < np; ++i) fold_void_node(c, ids, i, per_volume);
}
// The same over the nodes written, in the same order (ascending; the takers are body nodes,
// never folded themselves), so the same sums.
void fold_void_nodes(const Case& c, const std::vector<std::int32_t>& ids, NodeShares& per_volume) {
  const std::vector<std::int64_t> written = per_volume.nodes();
  for (std::int64_t i : written) fold_void_node(c, ids, i, per_volume);
}

// The node at offset d (-1, 0, 1 per axis) from ic, or -1 beyond a non-periodic face.
std::int64_t offset_node(const Sampler& s, std::array<std::int64_t, 3> ic, const int* d) {
  std::int64_t j = 0, stride = 1;
  for (int a = 0; a < 3; ++a) {
    std::int64_t q = ic[a] + d[a];
    if (q < 0 || q >= s.n[a]) {
      if (!s.periodic[a]) return -1;
      q = (q + s.n[a]) % s.n[a];
    }
    j += q * stride;
    stride *= s.n[a];
  }
  return j;
}

// The slivers and where each goes: to its neighbours along the axes that are body (not void,
// not slivers) and that its body conducts to, the void at its end of their lines not counted
// (Materials::line_conductance), in proportion to those conductances. A sliver joined only to
// other slivers (a corner's, between two sides' slivers) goes where they go; one joined to none
// (its body thinner than the void between) stays as it is.
std::vector<SliverFold> find_sliver_folds(Materials& m) {
  const Sampler& s = m.s;
  std::vector<SliverFold> out;
  if (!m.any_void) return out;
  const std::vector<char> slivers = m.find_slivers();
  if (std::find(slivers.begin(), slivers.end(), 1) == slivers.end()) return out;
  m.sliver = slivers.data();
  Points batch;
  // Slivers joined only to other slivers (a corner's, between two sides' slivers), with those.
  std::vector<SliverFold> chained;
  std::vector<std::int64_t> fold_of(static_cast<std::size_t>(s.points()), -1);
  for (std::int64_t i = 0; i < s.points(); ++i) {
    if (!slivers[static_cast<std::size_t>(i)]) continue;
    const auto ic = s.coords(i);
    SliverFold f, via;
    f.node = via.node = i;
    double total = 0.0, via_total = 0.0;
    for (int a = 0; a < s.dims; ++a)
      for (int side = -1; side <= 1; side += 2) {
        int d[3] = {0, 0, 0};
        d[a] = side;
        const std::int64_t j = offset_node(s, ic, d);
        if (j < 0 || m.ids[static_cast<std::size_t>(j)] == kVoid) continue;
        const double K = m.face(a, side > 0 ? i : j, batch);
        if (!(K > 0.0)) continue;
        if (slivers[static_cast<std::size_t>(j)]) {
          via.takers.emplace_back(j, K);
          via_total += K;
        } else {
          f.takers.emplace_back(j, K);
          total += K;
        }
      }
    if (f.takers.empty()) {
      for (auto& t : via.takers) t.second /= via_total;
      if (!via.takers.empty()) chained.push_back(std::move(via));
      continue;
    }
    for (auto& t : f.takers) t.second /= total;
    fold_of[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(out.size());
    out.push_back(std::move(f));
  }
  // Those go where the slivers they are joined to go.
  for (const SliverFold& v : chained) {
    SliverFold f;
    f.node = v.node;
    for (const auto& [j, share] : v.takers) {
      const std::int64_t k = fold_of[static_cast<std::size_t>(j)];
      if (k < 0) continue;
      for (const auto& [t, w] : out[static_cast<std::size_t>(k)].takers) {
        const auto taker = t;  // a structured binding is not captured before C++20
        auto at = std::find_if(f.takers.begin(), f.takers.end(),
                               [&](const auto& e) { return e.first == taker; });
        if (at == f.takers.end()) {
          f.takers.emplace_back(t, share * w);
        } else {
          at->second += share * w;
        }
      }
    }
    double total = 0.0;
    for (const auto& t : f.takers) total += t.second;
    if (f.takers.empty() || !(total > 0.0)) continue;
    for (auto& t : f.takers) t.second /= total;
    out.push_back(std::move(f));
  }
  m.sliver = nullptr;
  return out;
}

// The slivers' folds `given` (sliver_folds), or else those found in `m`, kept in `found`.
const std::vector<SliverFold>& slivers_of(Materials& m, const std::vector<SliverFold>* given,
                                          std::vector<SliverFold>& found) {
  if (given) return *given;
  found = find_sliver_folds(m);
  return found;
}

// Moves each folded sliver's share of a per-volume field (its capacity, a surface's area, a
// source's share), times its weight, to the nodes it goes to: every total stays as sampled.
template <class Field>
void fold_slivers(const Case& c, const std::vector<SliverFold>& folds, Field& per_volume) {
  for (const SliverFold& f : folds) {
    const std::size_t at = static_cast<std::size_t>(f.node);
    if (per_volume[at] == 0.0) continue;
    const double held = per_volume[at] * node_weight(c, f.node);
    per_volume[at] = 0.0;
    for (const auto& [j, share] : f.takers)
      per_volume[static_cast<std::size_t>(j)] += held * share / node_weight(c, j);
  }
}

// Moves each folded sliver's faces (the conduction of its body along the surface) to the node
// it goes to: the face between the sliver and a neighbour n becomes the face between the taker
// and n moved as the taker is from the sliver (the strip of body shifted by a node), its
// conductance split by the shares of the takers beside the sliver across the face's axis (a
// taker along it would move the face onto the sliver or inside the merged node: its share
// was lost, the sliver's strip at a fin's root conducting 2% less along the fin). Its faces to
// the taker itself are inside the merged node; a moved face that would reach a void or a
// sliver is dropped. The sliver keeps no face.
void fold_sliver_faces(const Sampler& s, const std::vector<std::int32_t>& ids,
                       const std::vector<SliverFold>& folds,
                       std::array<std::vector<double>, 3>& faces, int only_axis = -1) {
  if (folds.empty()) return;
  std::vector<char> sliver(static_cast<std::size_t>(s.points()), 0);
  for (const SliverFold& f : folds) sliver[static_cast<std::size_t>(f.node)] = 1;
  const auto regular = [&](std::int64_t j) {
    return j >= 0 && ids[static_cast<std::size_t>(j)] != kVoid &&
           !sliver[static_cast<std::size_t>(j)];
  };
  // Every sliver's faces as they were, read before any is moved: a face between two slivers
  // goes half with each one's takers (moved by the first one alone, it went where that one's
  // takers lie, and the grid's order decided: a pin's sides 0.4 of a spacing off the node
  // planes on a base whose top lay off them too gave mirror images 0.13 apart in a face's
  // conductance, 1.2e-3 K in a 473 K rise).
  struct Held {
    int axis;
    int side;
    std::int64_t neighbour;
    double K;
  };
  std::vector<std::vector<Held>> held(folds.size());
  for (std::size_t q = 0; q < folds.size(); ++q) {
    const auto ic = s.coords(folds[q].node);
    for (int b = 0; b < s.dims; ++b) {
      if (only_axis >= 0 && b != only_axis) continue;
      for (int side = -1; side <= 1; side += 2) {
        int d[3] = {0, 0, 0};
        d[b] = side;
        const std::int64_t n = offset_node(s, ic, d);
        if (n < 0) continue;
        const double K = faces[static_cast<std::size_t>(b)]
                              [static_cast<std::size_t>(side > 0 ? folds[q].node : n)];
        if (K > 0.0) held[q].push_back({b, side, n, K});
      }
    }
  }
  for (std::size_t q = 0; q < folds.size(); ++q)
    for (const Held& h : held[q])
      faces[static_cast<std::size_t>(h.axis)]
           [static_cast<std::size_t>(h.side > 0 ? folds[q].node : h.neighbour)] = 0.0;
  for (std::size_t q = 0; q < folds.size(); ++q) {
    const SliverFold& f = folds[q];
    const auto ic = s.coords(f.node);
    for (const Held& h : held[q]) {
      const int b = h.axis;
      const std::int64_t n = h.neighbour;
      const double K = sliver[static_cast<std::size_t>(n)] ? 0.5 * h.K : h.K;
      // The shares of the takers beside the sliver across axis b.
      double across = 0.0;
      for (const auto& [t, share] : f.takers)
        if (s.coords(t)[b] == ic[b]) across += share;
      for (const auto& [t, share] : f.takers) {
        if (t == n) continue;  // inside the merged node
        if (across > 0.0 && s.coords(t)[b] != ic[b]) continue;
        // The taker's offset from the sliver, and n moved by it.
        const auto tc = s.coords(t);
        int shift[3] = {0, 0, 0};
        for (int a = 0; a < s.dims; ++a) {
          std::int64_t delta = tc[a] - ic[a];
          if (delta > 1) delta -= s.n[a];  // across a periodic seam
          if (delta < -1) delta += s.n[a];
          shift[a] = static_cast<int>(delta);
        }
        const std::int64_t moved = offset_node(s, s.coords(n), shift);
        if (!regular(t) || !regular(moved) || moved == t) continue;
        faces[static_cast<std::size_t>(b)][static_cast<std::size_t>(h.side > 0 ? t : moved)] +=
            (across > 0.0 ? share / across : share) * K;
      }
    }
  }
}

// The void nodes whose faces along axis b hold body (a fin painted over an air void, its side
// off the node planes: the strip of fin inside the void node's control volume conducts along
// the fin), as folds to the body nodes beside them across b, in equal shares: its body
// neighbours along the other axes, or where it has none (a corner's strip, or one at the fin's
// root beside the base), those diagonal to it in the plane across b. fold_sliver_faces then
// moves that conduction to them, as a sliver's. Cut at the void instead, the strip's
// conduction was lost (a 2 mm bar painted 0.1 mm off the planes carried 5% less, 10% in 3D;
// the same bar between two gap voids, whose bounds leave those nodes body slivers, did not).
std::vector<SliverFold> void_node_face_folds(const Sampler& s, const std::vector<std::int32_t>& ids,
                                             const std::vector<double>& K, int b) {
  std::vector<SliverFold> out;
  const auto body = [&](std::int64_t j) {
    return j >= 0 && ids[static_cast<std::size_t>(j)] != kVoid;
  };
  for (std::int64_t i = 0; i < s.points(); ++i) {
    if (ids[static_cast<std::size_t>(i)] != kVoid) continue;
    const auto ic = s.coords(i);
    bool holds = false;
    for (int side = -1; side <= 1 && !holds; side += 2) {
      int d[3] = {0, 0, 0};
      d[b] = side;
      const std::int64_t n = offset_node(s, ic, d);
      if (n >= 0) holds = K[static_cast<std::size_t>(side > 0 ? i : n)] > 0.0;
    }
    if (!holds) continue;
    std::vector<std::int64_t> takers;
    for (int a = 0; a < s.dims; ++a)
      for (int side = -1; side <= 1 && a != b; side += 2) {
        int d[3] = {0, 0, 0};
        d[a] = side;
        const std::int64_t j = offset_node(s, ic, d);
        if (body(j)) takers.push_back(j);
      }
    if (takers.empty())  // diagonal in the plane across b
      for (int da = -1; da <= 1; ++da)
        for (int db = -1; db <= 1; ++db) {
          int d[3] = {0, 0, 0};
          const int a1 = (b + 1) % 3, a2 = (b + 2) % 3;
          if (a1 >= s.dims || a2 >= s.dims || da == 0 || db == 0) continue;
          d[a1] = da;
          d[a2] = db;
          const std::int64_t j = offset_node(s, ic, d);
          if (body(j)) takers.push_back(j);
        }
    if (takers.empty()) continue;
    SliverFold f;
    f.node = i;
    for (std::int64_t t : takers) f.takers.push_back({t, 1.0 / static_cast<double>(takers.size())});
    out.push_back(std::move(f));
  }
  return out;
}

// A void node is not stepped (its value stays; fold_void_nodes gave its body share to its
// neighbours), so no face may conduct to it: one that did would hold its neighbour toward the
// void's initial value, a sink no report sees. A face's lines through its cross-section miss
// the void where a box's bound splits the cross-section beside a ball's edge (the line through
// the split's outer part passes the ball), so the face is cut here, after the sampling.
void cut_faces_to_voids(const Sampler& s, const std::vector<std::int32_t>& ids,
                        std::array<std::vector<double>, 3>& faces) {
  for (int a = 0; a < s.dims; ++a) {
    std::vector<double>& K = faces[static_cast<std::size_t>(a)];
    if (K.empty()) continue;
    const std::int64_t stride = a == 0 ? 1 : a == 1 ? s.n[0] : s.n[0] * s.n[1];
#pragma omp parallel for collapse(2) if (s.points() >= 4096)
    for (std::int64_t z = 0; z < s.n[2]; ++z)
      for (std::int64_t y = 0; y < s.n[1]; ++y)
        for (std::int64_t x = 0; x < s.n[0]; ++x) {
          const std::int64_t ic[3] = {x, y, z};
          const std::int64_t i = (z * s.n[1] + y) * s.n[0] + x;
          std::int64_t j = i + stride;
          if (ic[a] == s.n[a] - 1) {
            if (!s.periodic[a]) continue;  // no face beyond the last node
            j -= s.n[a] * stride;
          }
          if (ids[static_cast<std::size_t>(i)] == kVoid ||
              ids[static_cast<std::size_t>(j)] == kVoid)
            K[static_cast<std::size_t>(i)] = 0.0;
        }
  }
}

}  // namespace

bool samples_subgrid(const Case& c) {
  if (c.materials.empty()) return false;
  bool shaped = false;
  for (const RegionSpec& r : c.regions) {
    if (r.shape.kind == ShapeKind::file) return false;
    if (r.shape.kind != ShapeKind::everywhere) shaped = true;
  }
  return shaped;
}

bool samples_source_shapes(const Case& c) {
  if (c.materials.empty()) return false;
  return std::none_of(c.regions.begin(), c.regions.end(),
                      [](const RegionSpec& r) { return r.shape.kind == ShapeKind::file; });
}

std::vector<std::array<double, 3>> resistance_fractions(
    const Case& c, const std::vector<std::int32_t>& ids,
    const std::vector<std::array<double, 3>>& points, const std::vector<std::int64_t>& lower,
    const std::vector<std::array<double, 3>>& t) {
  std::vector<std::array<double, 3>> out = t;
  if (!samples_subgrid(c) || points.empty()) return out;
  // The shapes prepared once (a `where` shape's node test covers the grid) for every point.
  Sampler s(c);
  Materials m(s, ids);
  Points batch;
  for (std::size_t p = 0; p < points.size(); ++p) {
    const auto corner = s.coords(lower[p]);
    for (int a = 0; a < s.dims; ++a) {
      double x[3] = {points[p][0], points[p][1], points[p][2]};
      x[a] = static_cast<double>(corner[static_cast<std::size_t>(a)]) * s.h[a];
      out[p][static_cast<std::size_t>(a)] =
          m.resistance_fraction(a, x, lower[p], t[p][static_cast<std::size_t>(a)], batch);
    }
  }
  return out;
}

std::vector<SliverFold> sliver_folds(const Case& c, const std::vector<std::int32_t>& ids) {
  Sampler s(c);
  Materials m(s, ids);
  return find_sliver_folds(m);
}

SubgridMaterials subgrid_materials(const Case& c, const std::vector<std::int32_t>& ids,
                                   const std::vector<SliverFold>* slivers) {
  Sampler s(c);
  Materials m(s, ids);
  const std::int64_t np = s.points();
  SubgridMaterials out;
  out.capacity.resize(static_cast<std::size_t>(np));
  std::vector<char> near(static_cast<std::size_t>(np), 0);
  std::int64_t near_count = 0;
  // One material and no void: every node's capacity is that one, sampled or not. (Materials of
  // one heat capacity are sampled too: a part beyond an interface moves to the node across it.)
  const bool one_capacity =
      !m.any_void && !m.several_materials &&
      std::all_of(c.materials.begin(), c.materials.end(), [&](const MaterialSpec& mat) {
        return mat.capacity() == c.materials.front().capacity();
      });
  // Some axis along which every shape is the same (Materials::uniform_along).
  bool uniform_cells = false;
  for (int a = 0; a < s.dims; ++a) uniform_cells = uniform_cells || m.uniform_along[a];
  // Row by row: a row no surface can cross takes its nodes' capacities in a plain loop, and
  // the others find their nodes' coordinates without dividing the index.
  std::vector<ShareMove> moves;  // parts of control volumes beyond an interface
#pragma omp parallel reduction(+ : near_count) if (np >= 4096)
  {
    std::vector<const Shape*> near_row;  // Materials::row_shapes
    Points batch;
    CrossingPoints crossings;
    std::vector<double> volumes;
    std::vector<std::int64_t> to;
    std::vector<double> share;
    std::vector<ShareMove> mine;
#pragma omp for collapse(2) schedule(dynamic, 16) nowait
    for (std::int64_t z = 0; z < s.n[2]; ++z)
      for (std::int64_t y = 0; y < s.n[1]; ++y) {
        const std::int64_t row = (z * s.n[1] + y) * s.n[0];
        if (!m.row_near_surface(y, z)) {
          const std::int32_t* id = ids.data() + row;
          double* capacity = out.capacity.data() + row;
          for (std::int64_t x = 0; x < s.n[0]; ++x) capacity[x] = m.capacity(id[x]);
          continue;
        }
        m.row_shapes(y, z, near_row);
        for (std::int64_t xi = 0; xi < s.n[0]; ++xi) {
          const std::int64_t i = row + xi;
          const std::size_t at = static_cast<std::size_t>(i);
          if (!m.near_surface(i, {xi, y, z}, near_row)) {
            out.capacity[at] = m.capacity(ids[at]);
            continue;
          }
          near[at] = 1;
          ++near_count;
          if (one_capacity) {
            out.capacity[at] = c.materials.front().capacity();
            continue;
          }
          batch.clear();
          volumes.clear();
          // One material throughout, known beforehand: the first sub-cell's is everyone's (the
          // others are not made).
          double first[3], first_volume = 0.0;
          if (m.one_material_cell({xi, y, z}) &&
              first_sub_cell(s, {xi, y, z}, first, first_volume)) {
            batch.add(first);
            volumes.push_back(first_volume);
          } else {
            // Every shape the same along some axes (Materials::uniform_along): the sub-cells
            // that differ only there hold one material, so those of the first part along them
            // show every material the control volume holds. All the node's: its capacity
            // exactly, as the sum below gives it (nothing moves, one material).
            if (uniform_cells) {
              for_sub_cells(
                  s, m.shape_list, i, batch.cuts, [&](const double* x, double) { batch.add(x); },
                  m.uniform_along.data());
              if (batch.size() > 0) {
                m.classify(batch, i);
                const std::int32_t own = ids[at];
                if (std::all_of(batch.material.begin(), batch.material.end(),
                                [&](std::int32_t mat) { return mat == own; })) {
                  out.capacity[at] = m.capacity(own);
                  continue;
                }
              }
              batch.clear();
            }
            for_sub_cells(s, m.shape_list, i, batch.cuts, [&](const double* x, double v) {
              batch.add(x);
              volumes.push_back(v);
            });
            if (volumes.empty()) {  // a control volume of no extent
              out.capacity[at] = m.capacity(ids[at]);
              continue;
            }
            if (m.one_material_cell({xi, y, z})) {
              for (auto& column : batch.x) column.resize(1);
              volumes.resize(1);
            }
          }
          m.classify(batch, i);
          // Parts beyond an interface hold their heat for the node across it.
          const bool moving =
              interface_targets(m, i, {xi, y, z}, batch, volumes, to, share, crossings);
          double sum = 0.0, volume = 0.0;
          bool one = !moving;  // one material throughout: its capacity exactly
          for (std::size_t k = 0; k < volumes.size(); ++k) {
            one = one && batch.material[k] == batch.material[0];
            const double heat = volumes[k] * m.capacity(batch.material[k]);
            volume += volumes[k];
            if (to[k] < 0) {
              sum += heat;
              continue;
            }
            const double going = share[k] == 1.0 ? heat : heat * share[k];
            sum += heat - going;
            if (!mine.empty() && mine.back().from == i && mine.back().to == to[k])
              mine.back().amount += going;
            else
              mine.push_back({to[k], i, going});
          }
          out.capacity[at] = one ? m.capacity(batch.material[0]) : sum / volume;
        }
      }
#pragma omp critical
    moves.insert(moves.end(), mine.begin(), mine.end());
  }
  apply_moves(moves, out.capacity, [&](std::int64_t to) { return s.cell_volume(to); });
  // Without a void region no node is a void: nothing to fold, no face to cut (passes over
  // every node, left out).
  if (m.any_void) fold_void_nodes(c, ids, out.capacity);
  std::vector<SliverFold> found;  // none without a node near a surface
  const std::vector<SliverFold>& folds = near_count > 0 ? slivers_of(m, slivers, found) : found;
  fold_slivers(c, folds, out.capacity);
  bool anisotropic = false;
  for (const MaterialSpec& mat : c.materials) anisotropic = anisotropic || mat.anisotropic();
  if (near_count == 0 && !anisotropic) return out;
  for (int a = 0; a < s.dims; ++a) {
    std::vector<double>& K = out.faces[static_cast<std::size_t>(a)];
    K.assign(static_cast<std::size_t>(np), 0.0);
    // Each material's conductivity along the axis (the void's 0 last), looked up per node.
    std::vector<double> k_of(c.materials.size() + 1);
    for (std::size_t mat = 0; mat < c.materials.size(); ++mat)
      k_of[mat] = m.k(static_cast<std::int32_t>(mat), a);
    k_of.back() = m.k(kVoid, a);
    // The arrays as pointers: through the references the loop would load each again after
    // every store to K.
    const double* k_table = k_of.data();
    const double k_void = k_of.back();
    const std::int32_t* id = ids.data();
    const char* near_node = near.data();
    double* face = K.data();
    // Row by row: a row with no node near a surface (Materials::row_near_surface) is the
    // materials' values in a plain loop; the last node of a non-periodic axis has no face
    // beyond it (its entry stays 0).
    const std::int64_t nx = s.n[0], ny = s.n[1], nz = s.n[2];
    const bool open = !s.periodic[a];
    const std::int64_t x_end = a == 0 && open ? nx - 1 : nx;
    // The lines beyond a contact (Materials::face), moved to their faces after the sweep.
    std::vector<ShareMove> line_moves;
#pragma omp parallel if (np >= 4096)
    {
      Points batch;
      std::vector<ShareMove> mine;
#pragma omp for collapse(2) schedule(dynamic, 16) nowait
      for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y) {
          if (open && ((a == 1 && y == ny - 1) || (a == 2 && z == nz - 1))) continue;
          const std::int64_t row = (z * ny + y) * nx;
          const std::int32_t* row_id = id + row;
          double* row_face = face + row;
          if (!m.row_near_surface(y, z)) {
            for (std::int64_t x = 0; x < x_end; ++x) {
              const std::int32_t mat = row_id[x];
              row_face[x] = mat == kVoid ? k_void : k_table[static_cast<std::size_t>(mat)];
            }
            continue;
          }
          for (std::int64_t x = 0; x < x_end; ++x) {
            const std::int32_t mat = row_id[x];
            row_face[x] = near_node[row + x]
                              ? m.face(a, row + x, batch, &mine)
                              : (mat == kVoid ? k_void : k_table[static_cast<std::size_t>(mat)]);
          }
        }
#pragma omp critical
      line_moves.insert(line_moves.end(), mine.begin(), mine.end());
    }
    apply_moves(line_moves, K, [&](std::int64_t to) { return s.cross_section(a, to); });
  }
  fold_sliver_faces(s, ids, folds, out.faces);
  if (m.any_void) {
    for (int b = 0; b < s.dims; ++b)
      fold_sliver_faces(s, ids,
                        void_node_face_folds(s, ids, out.faces[static_cast<std::size_t>(b)], b),
                        out.faces, b);
    cut_faces_to_voids(s, ids, out.faces);
  }
  return out;
}

namespace {

// The cut points of [lo, hi] on axis a for surface elements: the multiples of an eighth of the
// axis's spacing (so that no element straddles the boundary between two control volumes, which
// lie halfway between nodes), or where `halves`, those halfway planes alone, and the box bounds
// of `shapes` inside, with the ends; points closer than a millionth of an eighth merged.
void element_cuts(const Sampler& s, int a, double lo, double hi, const ShapeList& shapes,
                  bool halves, std::vector<double>& at) {
  const double eighth = s.h[a] / 8.0, tiny = 1e-6 * eighth;
  at.clear();
  at.push_back(lo);
  if (halves) {
    for (double k = std::ceil(lo / s.h[a] - 0.5); (k + 0.5) * s.h[a] < hi; k += 1.0)
      at.push_back((k + 0.5) * s.h[a]);
  } else {
    for (double k = std::ceil(lo / eighth); k * eighth < hi; k += 1.0) at.push_back(k * eighth);
  }
  shapes.add_bounds_within(a, lo, hi, at);
  std::sort(at.begin(), at.end());
  std::vector<double> kept{lo};
  for (double x : at)
    if (x - kept.back() > tiny && hi - x > tiny) kept.push_back(x);
  kept.push_back(hi);
  at.swap(kept);
}

// k rounded up to a multiple of 4.
std::int64_t round_up_4(std::int64_t k) { return (k + 3) / 4 * 4; }

// The surface elements of box or ball `shape`: each face of a box cut at element_cuts over its
// rectangle (active axes), clipped on the axes along the face to [lo, hi] (a face whose plane
// lies outside [lo, hi] too, where `clip_planes`); a ball's sphere in rings of elements about
// `step` across (its area exactly). add(x, out, dA): the element's centre, its outward normal
// and its area. `halves`: a box's faces cut at element_cuts' halves, each element then in
// eighths where refine(x, out) holds at its centre.
template <class Add, class Refine>
void for_surface_elements(const Sampler& s, const ShapeList& shapes, const ShapeSpec& shape,
                          const double* lo, const double* hi, bool clip_planes, double step,
                          bool halves, Refine&& refine, Add&& add) {
  if (shape.kind == ShapeKind::box) {
    std::array<std::vector<double>, 2> cut, fine;
    for (int a = 0; a < s.dims; ++a)
      for (int side = 0; side < 2; ++side) {
        const double plane = side == 0 ? shape.lower[a] : shape.upper[a];
        if (clip_planes && (plane < lo[a] || plane > hi[a])) continue;
        double out[3] = {0, 0, 0};
        out[a] = side == 0 ? -1.0 : 1.0;
        int other[2] = {-1, -1}, count = 0;
        for (int b = 0; b < s.dims; ++b)
          if (b != a) other[count++] = b;
        bool empty = false;
        for (int o = 0; o < 2; ++o) {
          std::vector<double>& at = cut[static_cast<std::size_t>(o)];
          if (o >= count) {
            at = {0.0, 1.0};  // an axis the grid lacks: one piece of unit extent
            continue;
          }
          const int b = other[o];
          const double start = std::max(shape.lower[b], lo[b]);
          const double end = std::min(shape.upper[b], hi[b]);
          if (end <= start)
            empty = true;
          else
            element_cuts(s, b, start, end, shapes, halves, at);
        }
        if (empty) continue;
        // The elements between the cuts `at` (per axis along the face), given to add(), or
        // where `coarse` and refine() asks, each in eighths.
        const auto elements = [&](const std::array<std::vector<double>, 2>& at, bool coarse,
                                  auto&& self) -> void {
          for (std::size_t p = 0; p + 1 < at[0].size(); ++p)
            for (std::size_t q = 0; q + 1 < at[1].size(); ++q) {
              double x[3] = {0, 0, 0};
              x[a] = plane;
              const std::size_t pq[2] = {p, q};
              for (int o = 0; o < count; ++o) {
                const std::vector<double>& c = at[static_cast<std::size_t>(o)];
                x[other[o]] = 0.5 * (c[pq[o]] + c[pq[o] + 1]);
              }
              if (coarse &&
                  refine(static_cast<const double*>(x), static_cast<const double*>(out))) {
                for (int o = 0; o < 2; ++o) {
                  std::vector<double>& f = fine[static_cast<std::size_t>(o)];
                  if (o >= count) {
                    f = {0.0, 1.0};
                    continue;
                  }
                  const std::vector<double>& c = at[static_cast<std::size_t>(o)];
                  element_cuts(s, other[o], c[pq[o]], c[pq[o] + 1], shapes, false, f);
                }
                self(fine, false, self);
                continue;
              }
              const double dA = (at[0][p + 1] - at[0][p]) * (at[1][q + 1] - at[1][q]);
              add(x, out, dA);
            }
        };
        elements(cut, halves, elements);
      }
    return;
  }
  const double r0 = shape.radius;
  const double* c0 = shape.center.data();
  if (s.dims == 1) {
    for (double sign : {-1.0, 1.0}) {
      double x[3] = {c0[0] + sign * r0, 0, 0}, out[3] = {sign, 0, 0};
      add(x, out, 1.0);
    }
  } else if (s.dims == 2) {
    // A multiple of 4 elements, so that the circle's elements mirror across both axes through
    // its centre (an odd count mirrored across the vertical one put its elements between the
    // others: a hole in a mirror-symmetric plate gave a field 6.8e-4 K from symmetric).
    const std::int64_t k = std::max<std::int64_t>(
        16, round_up_4(static_cast<std::int64_t>(std::ceil(2.0 * M_PI * r0 / step))));
    for (std::int64_t j = 0; j < k; ++j) {
      const double t = 2.0 * M_PI * (static_cast<double>(j) + 0.5) / static_cast<double>(k);
      double out[3] = {std::cos(t), std::sin(t), 0};
      double x[3] = {c0[0] + r0 * out[0], c0[1] + r0 * out[1], 0};
      add(x, out, 2.0 * M_PI * r0 / static_cast<double>(k));
    }
  } else {
    // Rings of equal height in z (each of area 2 pi r^2 (cos t1 - cos t2)), split into
    // elements about `step` long: the sum is 4 pi r^2 exactly.
    const std::int64_t rings =
        std::max<std::int64_t>(8, static_cast<std::int64_t>(std::ceil(M_PI * r0 / step)));
    for (std::int64_t j = 0; j < rings; ++j) {
      const double z1 = -1.0 + 2.0 * static_cast<double>(j) / static_cast<double>(rings);
      const double z2 = -1.0 + 2.0 * static_cast<double>(j + 1) / static_cast<double>(rings);
      const double zc = 0.5 * (z1 + z2), rho = std::sqrt(std::max(0.0, 1.0 - zc * zc));
      const double ring_area = 2.0 * M_PI * r0 * r0 * (z2 - z1);
      const std::int64_t k = std::max<std::int64_t>(
          8, round_up_4(static_cast<std::int64_t>(std::ceil(2.0 * M_PI * r0 * rho / step))));
      for (std::int64_t q = 0; q < k; ++q) {
        const double t = 2.0 * M_PI * (static_cast<double>(q) + 0.5) / static_cast<double>(k);
        double out[3] = {rho * std::cos(t), rho * std::sin(t), zc};
        double x[3] = {c0[0] + r0 * out[0], c0[1] + r0 * out[1], c0[2] + r0 * out[2]};
        add(x, out, ring_area / static_cast<double>(k));
      }
    }
  }
}

}  // namespace

namespace {

// surface_per_volume's shares of void `region` of m's case into `area` (per unit volume, folded,
// not snapped); with `held` and `sum` (both or neither), per node the area of its elements and
// that area times the resistance to them, whose ratio is surface_per_volume's `resistance`.
void surface_shares(Materials& m, std::size_t region, const std::vector<SliverFold>* slivers,
                    NodeShares& area, NodeShares* held, NodeShares* sum) {
  const Sampler& s = m.s;
  const Case& c = s.c;
  const std::vector<std::int32_t>& ids = m.ids;
  const RegionSpec& r = c.regions.at(region);
  const ShapeSpec& shape = r.shape;
  const std::string key = "regions[" + std::to_string(region) + "]";
  if (shape.kind != ShapeKind::box && shape.kind != ShapeKind::ball)
    throw std::invalid_argument(key + ".surface: a surface condition needs a box or ball void");
  double domain[3] = {0, 0, 0};
  for (int a = 0; a < s.dims; ++a)
    domain[a] = static_cast<double>(s.periodic[a] ? s.n[a] : s.n[a] - 1) * s.h[a];
  // The smallest spacing: points a ten-millionth of it off a surface are on its sides.
  double hmin = s.h[0];
  for (int a = 1; a < s.dims; ++a) hmin = std::min(hmin, s.h[a]);
  // The node whose control volume holds point x (the nearest), or -1 outside the domain.
  const auto node_of = [&](const double* x) -> std::int64_t {
    std::int64_t i = 0, stride = 1;
    for (int a = 0; a < s.dims; ++a) {
      const double xa = s.wrap(a, x[a]);
      if (xa < 0.0 || xa > domain[a]) return -1;
      std::int64_t q = static_cast<std::int64_t>(std::floor(xa / s.h[a] + 0.5));
      if (q >= s.n[a]) q = s.periodic[a] ? 0 : s.n[a] - 1;
      i += q * stride;
      stride *= s.n[a];
    }
    return i;
  };
  // The node whose control volume holds the point just outside the surface at x (outward
  // direction `out`) when that point is body: inside the domain and of a material, not of this
  // or another void; else -1. The body's side decides, so that a surface on the boundary
  // between two control volumes goes to the body's node, not to the void's.
  // Where the body at point y (wrapped) of node `node`'s control volume lies beyond a contact
  // from the node (a layered wall's interface meeting the void's surface), its strip of surface
  // goes with that part's capacity to the node across the contact (interface_targets), so that
  // it passes heat at its own side's temperature (left at the node: a first-order error, the
  // contact's jump over half a spacing of surface, as at the domain's faces).
  const auto across_contact = [&](std::int64_t node, const double* y, std::int32_t mat) {
    if (!m.contacts.any()) return node;
    const Materials::Crossing cr = m.crossing(node, s.coords(node), y, mat);
    return cr.to >= 0 && cr.whole ? cr.to : node;
  };
  // The point just off the surface at x on the side `sign` of `out` (wrapped), into y: the node
  // whose control volume holds it (-1 outside the domain) and, inside, its material.
  const auto beside = [&](const double* x, const double* out, double sign,
                          double* y) -> std::pair<std::int64_t, std::int32_t> {
    for (int a = 0; a < 3; ++a) y[a] = x[a];
    for (int a = 0; a < s.dims; ++a) y[a] += sign * 1e-7 * hmin * out[a];
    const std::int64_t node = node_of(y);
    if (node < 0) return {-1, kVoid};
    for (int a = 0; a < s.dims; ++a) y[a] = s.wrap(a, y[a]);
    return {node, m.at(y, node)};
  };
  const auto body_beyond = [&](const double* x, const double* out) -> std::int64_t {
    double y[3];
    const auto [node, mat] = beside(x, out, 1.0, y);
    return node >= 0 && mat != kVoid ? across_contact(node, y, mat) : -1;
  };
  // Whether a later region holds the point just behind the surface at x (inside this void). A
  // later void's: the element lies on that void's surface too and is that void's (regions are
  // painted in order, the last one wins), so that a stretch of wall two overlapping voids share
  // counts once, with the later void's condition. A later material's: the point is body painted
  // inside the void (a fin over an "air" void), so the element lies between body and body and
  // is no surface.
  const auto later_region_behind = [&](const double* x, const double* out) {
    double y[3] = {x[0], x[1], x[2]};
    for (int a = 0; a < s.dims; ++a) y[a] = s.wrap(a, y[a] - 1e-7 * hmin * out[a]);
    for (std::size_t later = c.regions.size(); later-- > region + 1;)
      if (m.shapes[later].contains(y, s.dims)) return true;
    return false;
  };
  // With `resistance`: per node, the area of its elements (held) and their area times the
  // resistance of the body between the node and each element along the element's normal into
  // the body (sum): each element counted at the node its area ends at, after the folds below
  // (a void node's share to its body neighbours, then a sliver's to its takers), and measured
  // from there.
  std::vector<SliverFold> found_early;
  std::unordered_map<std::int64_t, const SliverFold*> sliver_at;
  if (held)
    for (const SliverFold& f : slivers_of(m, slivers, found_early)) sliver_at[f.node] = &f;
  // A material's conductivity along unit direction v (weighted by its squares); 0 for a void
  // and for one whose conductivity varies with temperature (not known at set-up).
  const auto conductivity_along = [&](std::int32_t mat, const double* v) -> double {
    if (c.materials.empty()) return c.physics.alpha;
    if (mat < 0) return 0.0;
    const MaterialSpec& spec = c.materials[static_cast<std::size_t>(mat)];
    if (spec.conductivity_table.size() > 1) return 0.0;
    double k = 0.0;
    for (int a = 0; a < s.dims; ++a) k += v[a] * v[a] * spec.conductivity_along(a);
    return k;
  };
  double hmin_path = s.h[0];
  for (int a = 1; a < s.dims; ++a) hmin_path = std::min(hmin_path, s.h[a]);
  // The resistance (m^2 K/W) from node j to the element at x along its normal `into`: the
  // distance over the node's conductivity, or where other materials lie on the way (a coating
  // thinner than the distance), the path sampled through them; 0 where the node lies beyond
  // the element, and where a conductivity is not known (a void on the way, or one that varies
  // with temperature).
  const auto path_resistance = [&](std::int64_t j, const double* x, const double* into) {
    const auto jc = s.coords(j);
    double d = 0.0;
    for (int a = 0; a < s.dims; ++a) {
      double dx = static_cast<double>(jc[a]) * s.h[a] - s.wrap(a, x[a]);
      if (s.periodic[a]) {
        const double period = static_cast<double>(s.n[a]) * s.h[a];
        if (dx > 0.5 * period) dx -= period;
        if (dx < -0.5 * period) dx += period;
      }
      d += dx * into[a];
    }
    if (!(d > 0.0)) return 0.0;
    const double own = conductivity_along(ids[static_cast<std::size_t>(j)], into);
    if (!(own > 0.0)) return 0.0;
    if (!m.several_materials) return d / own;
    // The material at distance t from the element, toward the node.
    const auto at = [&](double t) {
      double y[3] = {0, 0, 0};
      for (int a = 0; a < s.dims; ++a) y[a] = s.wrap(a, x[a] + t * into[a]);
      return m.at(y, j);
    };
    // Sampled at 16 points a spacing; where two neighbouring samples differ, the interface
    // between them found by bisection, so that a box's layer counts its exact thickness.
    const int samples = std::clamp(static_cast<int>(std::ceil(16.0 * d / hmin_path)), 2, 64);
    double path = 0.0, from = 0.0, t_before = 0.5 * d / samples;
    std::int32_t mat = at(t_before);
    for (int k = 1; k < samples; ++k) {
      const double t = d * (static_cast<double>(k) + 0.5) / samples;
      const std::int32_t next = at(t);
      if (next != mat) {
        double lo = t_before, hi = t;
        for (int it = 0; it < 40; ++it) {
          const double mid = 0.5 * (lo + hi);
          (at(mid) == mat ? lo : hi) = mid;
        }
        const double k_mat = conductivity_along(mat, into);
        if (!(k_mat > 0.0)) return d / own;
        path += (hi - from) / k_mat;
        from = hi;
        mat = next;
      }
      t_before = t;
    }
    const double k_mat = conductivity_along(mat, into);
    if (!(k_mat > 0.0)) return d / own;
    path += (d - from) / k_mat;
    return path;
  };
  const auto settle = [&](std::int64_t j, double share, const double* x, const double* into,
                          double dA) {
    const auto count = [&](std::int64_t t, double part) {
      (*held)[static_cast<std::size_t>(t)] += part * dA;
      (*sum)[static_cast<std::size_t>(t)] += part * dA * path_resistance(t, x, into);
    };
    const auto f = sliver_at.find(j);
    if (f != sliver_at.end())
      for (const auto& [t, part] : f->second->takers) count(t, share * part);
    else
      count(j, share);
  };
  const auto record = [&](std::int64_t node, const double* x, const double* into, double dA) {
    area[static_cast<std::size_t>(node)] += dA;
    if (!held) return;
    if (ids[static_cast<std::size_t>(node)] == kVoid) {
      const std::vector<std::int64_t> takers = void_node_takers(c, ids, node);
      for (std::int64_t t : takers)
        settle(t, 1.0 / static_cast<double>(takers.size()), x, into, dA);
    } else {
      settle(node, 1.0, x, into, dA);
    }
  };
  const auto add = [&](const double* x, const double* out, double dA) {
    const std::int64_t node = body_beyond(x, out);
    if (node >= 0 && !later_region_behind(x, out)) record(node, x, out, dA);
  };
  // A ball's surface elements about an eighth of the smallest spacing across.
  const double step = hmin / 8.0;
  // Where every shape is a box (or the whole domain), whatever lies on either side of an element
  // of a box's face is the same over the element once it is cut at the control volumes' bounds
  // and the boxes': the node beyond it, the regions behind it and the materials along its
  // normal (whose distance to the node is the same over a plane). Its eighths then only repeat
  // one element's answer 64 times (a heat sink of six gaps at 5.6M nodes spent 3 s on them).
  // All but where the body on a side is another material than its node's and a contact may
  // move it across (across_contact: which node takes it depends on where in the control
  // volume it lies): such an element is taken in eighths.
  const bool halves = std::all_of(m.shapes.begin(), m.shapes.end(), [](const Shape& sh) {
    return sh.spec->kind == ShapeKind::box || sh.spec->kind == ShapeKind::everywhere;
  });
  const auto beside_interface = [&](const double* x, const double* out) {
    if (!m.contacts.any()) return false;
    for (const double sign : {1.0, -1.0}) {
      double y[3];
      const auto [node, mat] = beside(x, out, sign, y);
      if (node >= 0 && mat != kVoid && mat != ids[static_cast<std::size_t>(node)]) return true;
    }
    return false;
  };
  const double origin[3] = {0, 0, 0};
  for_surface_elements(s, m.shape_list, shape, origin, domain, false, step, halves,
                       beside_interface, add);

  // The sides of the box and ball materials painted after the void inside it: the body's
  // surface facing the void. An element counts where the point just outside the painted shape
  // is inside the domain and really this void's (no region after the void holds it), and the
  // point just inside it lies inside the void's shape too (painted over the void: a side of
  // the painted shape on the void's own surface, a box only touching the void, is an element
  // of the void's surface, counted above), and goes to the node whose control volume holds the
  // point just inside it, where that is body.
  const auto add_painted = [&](const double* x, const double* out, double dA) {
    double beyond[3] = {x[0], x[1], x[2]}, behind[3] = {x[0], x[1], x[2]};
    for (int a = 0; a < s.dims; ++a) {
      beyond[a] += 1e-7 * hmin * out[a];
      behind[a] -= 1e-7 * hmin * out[a];
    }
    if (node_of(beyond) < 0) return;
    for (int a = 0; a < s.dims; ++a) beyond[a] = s.wrap(a, beyond[a]);
    if (!m.shapes[region].contains(beyond, s.dims)) return;
    for (std::size_t later = c.regions.size(); later-- > region + 1;)
      if (m.shapes[later].contains(beyond, s.dims)) return;
    const std::int64_t node = node_of(behind);
    if (node < 0) return;
    for (int a = 0; a < s.dims; ++a) behind[a] = s.wrap(a, behind[a]);
    if (!m.shapes[region].contains(behind, s.dims)) return;
    const std::int32_t mat = m.at(behind, node);
    if (mat == kVoid) return;
    const double into[3] = {-out[0], -out[1], -out[2]};  // the body lies behind
    record(across_contact(node, behind, mat), x, into, dA);
  };
  // The void's extent within the domain: the painted boxes' faces are cut at its bounds.
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int a = 0; a < s.dims; ++a) {
    lo[a] = shape.kind == ShapeKind::box ? shape.lower[a] : shape.center[a] - shape.radius;
    hi[a] = shape.kind == ShapeKind::box ? shape.upper[a] : shape.center[a] + shape.radius;
    lo[a] = std::max(lo[a], 0.0);
    hi[a] = std::min(hi[a], domain[a]);
  }
  for (std::size_t k = region + 1; k < c.regions.size(); ++k) {
    const ShapeSpec& painted = c.regions[k].shape;
    if (m.material[k] == kVoid ||
        (painted.kind != ShapeKind::box && painted.kind != ShapeKind::ball))
      continue;
    bool meets = true;
    for (int a = 0; a < s.dims; ++a) {
      const double plo =
          painted.kind == ShapeKind::box ? painted.lower[a] : painted.center[a] - painted.radius;
      const double phi =
          painted.kind == ShapeKind::box ? painted.upper[a] : painted.center[a] + painted.radius;
      meets = meets && plo <= hi[a] && phi >= lo[a];
    }
    if (meets)
      for_surface_elements(s, m.shape_list, painted, lo, hi, true, step, halves, beside_interface,
                           add_painted);
  }
  // Per unit of each control volume's volume.
  for (std::int64_t i : area.nodes()) {
    if (area[static_cast<std::size_t>(i)] == 0.0) continue;
    const auto ic = s.coords(i);
    double volume = 1.0;
    for (int a = 0; a < s.dims; ++a) {
      const auto [lo, hi] = s.cell(a, ic[a]);
      volume *= hi - lo;
    }
    area[static_cast<std::size_t>(i)] /= volume;
  }
  fold_void_nodes(c, ids, area);
  std::vector<SliverFold> found;
  fold_slivers(c, slivers_of(m, slivers, found), area);
}

}  // namespace

std::vector<double> surface_per_volume(const Case& c, const std::vector<std::int32_t>& ids,
                                       std::size_t region, const std::vector<SliverFold>* slivers,
                                       std::vector<double>* resistance) {
  Sampler s(c);
  Materials m(s, ids);
  const std::int64_t np = s.points();
  NodeShares area, held, sum;
  surface_shares(m, region, slivers, area, resistance ? &held : nullptr,
                 resistance ? &sum : nullptr);
  std::vector<double> out(static_cast<std::size_t>(np), 0.0);
  for (std::int64_t i : area.nodes()) out[static_cast<std::size_t>(i)] = area.get(i);
  if (resistance) {
    resistance->assign(static_cast<std::size_t>(np), 0.0);
    for (std::int64_t i : held.nodes())
      if (held.get(i) > 0.0) (*resistance)[static_cast<std::size_t>(i)] = sum.get(i) / held.get(i);
  }
  return out;
}

namespace {

// Areas per volume are sums of a node's parts of a surface, each a product of the cells'
// bounds: where a sum should be 0 (a face's part beyond the body taken back) it leaves a
// residue of about 1e-14 of 1/h, and equal shares differ in their last bits. Each value is
// rounded to 2^-40 of the grid's largest 1/h (a relative change below 1e-12, far under the
// sampling's own error): the residues become 0 and equal shares equal, so that the nodes'
// laws (h A/V, its source, eps sigma A/V) come in a handful of values a compact sweep can
// hold. Every user of the shares (the fields, the heat flows, the reported areas) reads the
// rounded values.
double share_quantum(const Case& c) {
  double smallest = spacing(c, 0);
  for (int a = 1; a < c.grid.dims; ++a) smallest = std::min(smallest, spacing(c, a));
  return std::ldexp(1.0, std::ilogb(1.0 / smallest) - 40);
}
void snap_shares(const Case& c, std::vector<double>& per_volume) {
  const double quantum = share_quantum(c);
  for (double& v : per_volume) v = std::nearbyint(v / quantum) * quantum;
}
void snap_shares(const Case& c, NodeShares& per_volume) {
  const double quantum = share_quantum(c);
  for (std::int64_t i : per_volume.nodes()) {
    double& v = per_volume[static_cast<std::size_t>(i)];
    v = std::nearbyint(v / quantum) * quantum;
  }
}

// Whether void shape `sh` may hold a point of the rectangle [lo, hi] (on the plane
// lo[a] = hi[a] of a face): a box or a ball's bounding box that meets it; a `where` shape may.
bool may_hold(const Shape& sh, int dims, const double* lo, const double* hi) {
  const ShapeSpec& sp = *sh.spec;
  switch (sp.kind) {
    case ShapeKind::box:
      for (int a = 0; a < dims; ++a)
        if (sp.upper[a] < lo[a] || sp.lower[a] > hi[a]) return false;
      return true;
    case ShapeKind::ball: {
      double d2 = 0.0;
      for (int a = 0; a < dims; ++a) {
        const double gap = std::max({0.0, lo[a] - sp.center[a], sp.center[a] - hi[a]});
        d2 += gap * gap;
      }
      return d2 <= sp.radius * sp.radius;
    }
    case ShapeKind::everywhere:
    case ShapeKind::where:
    case ShapeKind::file:
      break;
  }
  return true;
}

// The area of node i's face on the plane x_a = at_plane (its control volume's extent on the
// other axes; 1 in 1D), and the voids' part of it: the face cut in eighths of a spacing and at
// the boxes' bounds, each piece taking the material at its centre. (0, 0) for a node that no
// surface passes near (its face is then all body, or all void at a node the step leaves out)
// or that no void reaches.
std::pair<double, double> face_share(const Materials& m, const std::vector<const Shape*>& voids,
                                     int a, double at_plane, std::int64_t i,
                                     const std::array<std::int64_t, 3>& ic, Points& batch) {
  const Sampler& s = m.s;
  if (!m.near_surface(i, ic)) return {0.0, 0.0};
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  lo[a] = hi[a] = at_plane;
  for (int b = 0; b < s.dims; ++b)
    if (b != a) std::tie(lo[b], hi[b]) = s.cell(b, ic[b]);
  if (std::none_of(voids.begin(), voids.end(),
                   [&](const Shape* v) { return may_hold(*v, s.dims, lo, hi); }))
    return {0.0, 0.0};
  int other[2] = {-1, -1}, count = 0;
  for (int b = 0; b < s.dims; ++b)
    if (b != a) {
      s.cuts(b, lo[b], hi[b], m.shape_list, 8, batch.cuts[static_cast<std::size_t>(count)]);
      other[count++] = b;
    }
  const std::size_t pieces[2] = {count > 0 ? batch.cuts[0].size() - 1 : 1,
                                 count > 1 ? batch.cuts[1].size() - 1 : 1};
  double area = 0.0, held = 0.0;
  for (std::size_t p = 0; p < pieces[0]; ++p)
    for (std::size_t q = 0; q < pieces[1]; ++q) {
      double x[3] = {0, 0, 0};
      x[a] = at_plane;
      double dA = 1.0;
      const std::size_t pq[2] = {p, q};
      for (int o = 0; o < count; ++o) {
        const std::vector<double>& cut = batch.cuts[static_cast<std::size_t>(o)];
        x[other[o]] = s.wrap(other[o], 0.5 * (cut[pq[o]] + cut[pq[o] + 1]));
        dA *= cut[pq[o] + 1] - cut[pq[o]];
      }
      area += dA;
      if (m.at(x, i) == kVoid) held += dA;
    }
  return {area, held};
}

// The parts of the outer face (axis a, side, node plane `plane`) that lie beyond a contact
// from their node: where a contact's interface meets the face (a layered wall's interface
// reaching a convective side face, on a node plane or not), the control volume of a node on
// the face holds a part of the other material beyond the contact, whose heat capacity goes to
// the node across it (interface_targets); the strip of the face over that part goes with it,
// so that it passes heat at the temperature of its own side of the contact. Left at the node,
// the strip passed heat at the other side's temperature, a first-order error (the contact's
// jump times half a spacing of face). Into `excess` (per unit volume, as FaceCut's): minus the
// strip's area at the node, plus it at the node across. The face's strip over a sub-cell is the
// sub-cell's volume over its extent along a, for the sub-cells of the layer at the face. True
// when something moved.
bool contact_face_moves(const Materials& m, int a, int side, std::int64_t plane,
                        NodeShares& excess) {
  const Sampler& s = m.s;
  bool any = false;
  Points batch;
  CrossingPoints crossings;
  std::vector<double> volumes;
  std::vector<std::int64_t> to;
  std::vector<double> share;
  std::int64_t first[3] = {0, 0, 0}, end[3] = {s.n[0], s.n[1], s.n[2]};
  first[a] = plane;
  end[a] = plane + 1;
  std::vector<const Shape*> near_row;  // Materials::row_shapes
  for (std::int64_t z = first[2]; z < end[2]; ++z)
    for (std::int64_t y = first[1]; y < end[1]; ++y) {
      m.row_shapes(y, z, near_row);
      for (std::int64_t xi = first[0]; xi < end[0]; ++xi) {
        const std::int64_t i = (z * s.n[1] + y) * s.n[0] + xi;
        const std::array<std::int64_t, 3> ic{xi, y, z};
        if (m.ids[static_cast<std::size_t>(i)] == kVoid || !m.near_surface(i, ic, near_row))
          continue;
        // One material throughout, the node's own (Materials::one_material_cell, its first
        // sub-cell's): no part crosses (interface_targets), nothing moves.
        double first[3], first_volume = 0.0;
        if (m.one_material_cell(ic) && first_sub_cell(s, ic, first, first_volume)) {
          const std::int32_t mat = m.at(first, i);
          if (mat == m.ids[static_cast<std::size_t>(i)] || mat == kVoid) continue;
        }
        batch.clear();
        volumes.clear();
        for_sub_cells(s, m.shape_list, i, batch.cuts, [&](const double* x, double v) {
          batch.add(x);
          volumes.push_back(v);
        });
        if (volumes.empty()) continue;
        m.classify(batch, i);
        if (!interface_targets(m, i, ic, batch, volumes, to, share, crossings)) continue;
        // The layer of sub-cells at the face: its centre and thickness along a.
        const std::vector<double>& cut = batch.cuts[static_cast<std::size_t>(a)];
        const std::size_t last = cut.size() - 1;
        const double lo = side == 0 ? cut[0] : cut[last - 1], hi = side == 0 ? cut[1] : cut[last];
        const double centre = 0.5 * (lo + hi), thickness = hi - lo;
        if (!(thickness > 0.0)) continue;
        const double volume_i = s.cell_volume(i);
        for (std::size_t k = 0; k < volumes.size(); ++k) {
          if (to[k] < 0 || !crossings.crossing[k].whole || batch.x[a][k] != centre) continue;
          const double strip = volumes[k] / thickness * share[k];
          excess[static_cast<std::size_t>(i)] -= strip / volume_i;
          excess[static_cast<std::size_t>(to[k])] += strip / s.cell_volume(to[k]);
          any = true;
        }
      }
    }
  return any;
}

// The FaceCut of every outer face that passes heat and that a void reaches (VoidSurfaces), for
// m's case where it samples below the grid.
std::vector<FaceCut> face_cuts(Materials& m, const std::vector<SliverFold>* slivers) {
  std::vector<FaceCut> out;
  const Sampler& s = m.s;
  const Case& c = s.c;
  const std::vector<std::int32_t>& ids = m.ids;
  bool heat = false;
  for (int face = 0; face < 2 * s.dims; ++face)
    heat = heat || (!s.periodic[face / 2] &&
                    kernels::passes_heat(c.boundary[static_cast<std::size_t>(face)]));
  if (!heat || (!m.any_void && !m.contacts.any())) return out;
  std::vector<const Shape*> voids;
  for (std::size_t r = 0; r < m.shapes.size(); ++r)
    if (m.material[r] == kVoid) voids.push_back(&m.shapes[r]);
  const std::int64_t np = s.points();
  // The folded slivers hand their face over with the rest of them: the ghost rule counts
  // nothing at them (no capacity), as at the nodes inside a void.
  std::vector<SliverFold> found;
  const std::vector<SliverFold>& folds = slivers_of(m, slivers, found);
  std::vector<char> folded(static_cast<std::size_t>(np), 0);
  for (const SliverFold& f : folds) folded[static_cast<std::size_t>(f.node)] = 1;
  Points batch;
  NodeShares excess;
  for (int face = 0; face < 2 * s.dims; ++face) {
    const int a = face / 2, side = face % 2;
    const kernels::BoundaryFace& f = c.boundary[static_cast<std::size_t>(face)];
    if (s.periodic[a] || !kernels::passes_heat(f)) continue;
    const std::int64_t plane = side == 0 ? 0 : s.n[a] - 1;
    // Just inside the domain, so that a void touching the face from outside holds none of it.
    const double at_plane =
        static_cast<double>(plane) * s.h[a] + (side == 0 ? 1e-7 : -1e-7) * s.h[a];
    excess.clear();
    bool any = false;
    std::int64_t first[3] = {0, 0, 0}, end[3] = {s.n[0], s.n[1], s.n[2]};
    first[a] = plane;
    end[a] = plane + 1;
    if (m.contacts.any() && contact_face_moves(m, a, side, plane, excess)) any = true;
    if (m.any_void) {
      for (std::int64_t z = first[2]; z < end[2]; ++z)
        for (std::int64_t y = first[1]; y < end[1]; ++y)
          for (std::int64_t xi = first[0]; xi < end[0]; ++xi) {
            const std::int64_t i = (z * s.n[1] + y) * s.n[0] + xi;
            const std::array<std::int64_t, 3> ic{xi, y, z};
            const auto [area, held] = face_share(m, voids, a, at_plane, i, ic, batch);
            if (held == 0.0) continue;
            double volume = 1.0;
            for (int b = 0; b < s.dims; ++b) {
              const auto [lo, hi] = s.cell(b, ic[b]);
              volume *= hi - lo;
            }
            // A node the step does not step (inside a void, or a folded sliver) hands the body's
            // part of its face on with its capacity; the ghost rule counts the whole face at the
            // rest.
            const std::size_t at = static_cast<std::size_t>(i);
            const bool stepped = ids[at] != kVoid && !folded[at];
            excess[at] += stepped ? -held / volume : (area - held) / volume;
            any = true;
          }
    }
    if (!any) continue;
    if (m.any_void) fold_void_nodes(c, ids, excess);
    fold_slivers(c, folds, excess);
    snap_shares(c, excess);
    FaceCut cut;
    cut.face = face;
    for (std::int64_t i : excess.nodes())
      if (excess.get(i) != 0.0) {
        cut.nodes.push_back(i);
        cut.excess.push_back(excess.get(i));
      }
    if (!cut.nodes.empty()) out.push_back(std::move(cut));
  }
  return out;
}

}  // namespace

const VoidSurface* VoidSurfaces::find(std::size_t region) const {
  for (const VoidSurface& v : voids)
    if (v.region == region) return &v;
  return nullptr;
}

VoidSurfaces void_surfaces(const Case& c, const std::vector<std::int32_t>& ids) {
  VoidSurfaces out;
  const bool subgrid = samples_subgrid(c);
  const auto has_surface = [](const RegionSpec& r) {
    return r.is_void && (r.shape.kind == ShapeKind::box || r.shape.kind == ShapeKind::ball);
  };
  if (!subgrid && std::none_of(c.regions.begin(), c.regions.end(), has_surface)) return out;
  // One geometry for the slivers, every void's surface and the outer faces (each `where`
  // shape's node test is a pass over the grid).
  Sampler s(c);
  Materials m(s, ids);
  // The slivers once, for the surfaces here and for the capacities and the sources' shares.
  if (subgrid && m.any_void) out.slivers = find_sliver_folds(m);
  const double cell = cell_volume(c);
  NodeShares area, held, sum;
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    if (!has_surface(region)) continue;
    const double h = kernels::face_transfer(region.surface);
    area.clear();
    held.clear();
    sum.clear();
    surface_shares(m, r, out.folds(), area, h > 0.0 ? &held : nullptr, h > 0.0 ? &sum : nullptr);
    snap_shares(c, area);
    VoidSurface v;
    v.region = r;
    for (std::int64_t i : area.nodes()) {
      const double per_volume = area.get(i);
      if (per_volume == 0.0) continue;
      v.nodes.push_back(i);
      v.per_volume.push_back(per_volume);
      // The resistance to the node's part of the surface (0 where it holds none).
      const double resistance = h > 0.0 && held.get(i) > 0.0 ? sum.get(i) / held.get(i) : 0.0;
      v.convective_per_volume.push_back(h > 0.0 ? per_volume / (1.0 + h * resistance) : per_volume);
      v.area += per_volume * node_weight(c, i) * cell;
    }
    snap_shares(c, v.convective_per_volume);
    out.voids.push_back(std::move(v));
  }
  if (subgrid) out.faces = face_cuts(m, out.folds());
  return out;
}

std::vector<double> subgrid_fractions(const Case& c, const ShapeSpec& shape,
                                      const std::vector<std::int32_t>& ids,
                                      const std::vector<SliverFold>* slivers) {
  Sampler s(c);
  Materials m(s, ids);
  const Shape sh = s.prepare(shape, "sources");
  std::vector<const Shape*> shapes = m.shape_list.shapes;
  shapes.push_back(&sh);
  const ShapeList list(std::move(shapes));
  const std::int64_t np = s.points();
  std::vector<double> out(static_cast<std::size_t>(np), 0.0);
  // Voids and interfaces make the regions' surfaces matter too: a void's part of a control
  // volume is no body, a part beyond an interface goes to the node across it.
  const bool regions_matter = m.any_void || m.several_materials;
  std::vector<ShareMove> moves;  // parts of control volumes beyond an interface
#pragma omp parallel if (np >= 4096)
  {
    // The shape is tested on a node's sub-cells together (Shape::contains_all), the sums then
    // taken in the sub-cells' order.
    std::vector<const Shape*> near_row;  // Materials::row_shapes
    Points cells;
    CrossingPoints crossings;
    std::vector<double> volumes;
    std::vector<std::int64_t> to;
    std::vector<double> share;
    std::vector<ShareMove> mine;
#pragma omp for collapse(2) schedule(dynamic, 16) nowait
    for (std::int64_t z = 0; z < s.n[2]; ++z)
      for (std::int64_t y = 0; y < s.n[1]; ++y) {
        // A row neither the shape's surface nor (with voids or interfaces) a region's can cross:
        // no node of it is tested for crossing.
        const bool row_shape = s.row_may_cross(sh, y, z);
        // A box that does not meet the row's neighbourhood on y or z holds none of its nodes:
        // their shares stay 0.
        if (!row_shape && sh.spec->kind == ShapeKind::box) continue;
        if (regions_matter) m.row_shapes(y, z, near_row);
        const bool row_regions = regions_matter && !near_row.empty();
        for (std::int64_t xi = 0; xi < s.n[0]; ++xi) {
          const std::int64_t i = (z * s.n[1] + y) * s.n[0] + xi;
          const std::array<std::int64_t, 3> ic{xi, y, z};
          // A control volume the shape's surface does not cut is inside it or outside it
          // whole: outside, the share is 0 (nothing to keep or to move); inside, the regions'
          // surfaces matter where they pass (a void's part is no body, a part beyond an
          // interface goes across it), else the share is the node's.
          if (!row_shape || !s.crosses(sh, i, ic)) {
            double x[3] = {0, 0, 0};
            for (int a = 0; a < s.dims; ++a) x[a] = static_cast<double>(ic[a]) * s.h[a];
            const bool body = ids[static_cast<std::size_t>(i)] != kVoid;
            const bool holds = sh.formula ? sh.node_inside[static_cast<std::size_t>(i)] != 0
                                          : sh.contains(x, s.dims);
            if (!holds || !row_regions || !m.near_surface(i, ic, near_row)) {
              out[static_cast<std::size_t>(i)] = body && holds ? 1.0 : 0.0;
              continue;
            }
          }
          // Without voids, where no bound of the box or of a region's box enters the control
          // volume, the first sub-cell's test is everyone's (below): the others not made.
          if (!m.any_void && s.box_bounds_outside_cell(sh, ic) && m.one_material_cell(ic)) {
            double first[3], first_volume = 0.0;
            if (first_sub_cell(s, ic, first, first_volume)) {
              out[static_cast<std::size_t>(i)] = sh.contains(first, s.dims) ? 1.0 : 0.0;
              continue;
            }
          }
          cells.clear();
          volumes.clear();
          for_sub_cells(s, list, i, cells.cuts, [&](const double* x, double v) {
            cells.add(x);
            volumes.push_back(v);
          });
          // Without voids, where no bound of the box or of a region's box enters the control
          // volume (so its sub-cells are the equal parts, each centre strictly inside), the box
          // holds all of the sub-cells or none: the first one's test is everyone's, and the
          // sums below give inside = volume (the same additions) or 0, so 1 or 0 exactly.
          if (!m.any_void && !volumes.empty() && s.box_bounds_outside_cell(sh, ic) &&
              m.one_material_cell(ic)) {
            for (auto& column : cells.x) column.resize(1);
            sh.contains_all(cells, s.dims);
            out[static_cast<std::size_t>(i)] = cells.in[0] ? 1.0 : 0.0;
            continue;
          }
          // The sub-cells beyond an interface (classify first: it uses cells.in too).
          bool moving = false;
          if (m.several_materials) {
            m.classify(cells, i);
            moving = interface_targets(m, i, ic, cells, volumes, to, share, crossings);
          }
          sh.contains_all(cells, s.dims);
          double inside = 0.0, volume = 0.0;
          for (std::size_t k = 0; k < volumes.size(); ++k) {
            const double x[3] = {cells.x[0][k], cells.x[1][k], cells.x[2][k]};
            volume += volumes[k];
            // Without voids every sub-cell is body (Materials::at never answers kVoid).
            if (!cells.in[k] || (m.any_void && m.at(x, i) == kVoid)) continue;
            if (!moving || to[k] < 0) {
              inside += volumes[k];
              continue;
            }
            const double going = share[k] == 1.0 ? volumes[k] : volumes[k] * share[k];
            inside += volumes[k] - going;
            if (!mine.empty() && mine.back().from == i && mine.back().to == to[k])
              mine.back().amount += going;
            else
              mine.push_back({to[k], i, going});
          }
          out[static_cast<std::size_t>(i)] = inside / volume;
        }
      }
#pragma omp critical
    moves.insert(moves.end(), mine.begin(), mine.end());
  }
  apply_moves(moves, out, [&](std::int64_t to) { return s.cell_volume(to); });
  if (m.any_void) fold_void_nodes(c, ids, out);
  std::vector<SliverFold> found;
  fold_slivers(c, slivers_of(m, slivers, found), out);
  return out;
}

}  // namespace heatsim::solver
