// The semantic checks of real problems: materials and the regions that place them, heat
// sources and their schedules, probes, convective and heat-flux faces, the order2 scheme they
// need, and dt against the stability limit of the coefficient fields.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "case_check.hpp"
#include "field_inputs.hpp"
#include "kernels/boundary_rules.hpp"
#include "solver/expression.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::io::check {

using detail::format_number;
using detail::format_number_down;
using detail::nearest_suffix;
using detail::quote;
using solver::BoundaryKind;
using solver::Case;
using solver::ShapeKind;

int Report::line_of(std::string path) const {
  while (!path.empty()) {
    const auto it = lines_.find(path);
    if (it != lines_.end()) return it->second;
    const std::size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) break;
    path.resize(cut);
  }
  return 0;
}

bool Report::finite(const std::string& path, double v) {
  if (std::isfinite(v)) return true;
  error(path, "must be a finite number (got " + format_number(v) + ")");
  return false;
}

bool Report::positive(const std::string& path, double v) {
  if (!finite(path, v)) return false;
  if (v >= std::numeric_limits<double>::min()) return true;
  if (v > 0.0)  // subnormal: it keeps few digits, and products with it underflow to 0
    error(path, format_number(v) +
                    " is below the smallest normal double (2.2e-308) and keeps few digits; "
                    "express the case in other units");
  else
    error(path, "must be > 0 (got " + format_number(v) + ")");
  return false;
}

namespace {

const char* const kAxisNames[3] = {"x", "y", "z"};
const char* const kFaceNames[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

// Grids up to this many nodes have their `where` shapes evaluated at every node to find one
// that holds none (a warning); larger ones are left to the run.
constexpr double kMaxWhereScan = 1 << 22;
// More steps than this cannot be meant (as case_check.cpp).
constexpr double kMaxSteps = 1e15;

std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string names_of(const Case& c) {
  std::string out;
  for (std::size_t m = 0; m < c.materials.size(); ++m) out += (m ? ", " : "") + c.materials[m].name;
  return out;
}

bool known_material(const Case& c, const std::string& name) {
  return std::any_of(c.materials.begin(), c.materials.end(),
                     [&](const solver::MaterialSpec& m) { return m.name == name; });
}

// "[0, 1] x [0, 0.5]": the domain of the active axes.
std::string domain(const Case& c) {
  std::string out;
  for (int a = 0; a < c.grid.dims; ++a)
    out +=
        (a ? " x [0, " : "[0, ") + format_number(c.grid.length[static_cast<std::size_t>(a)]) + "]";
  return out;
}

class FieldChecks {
 public:
  FieldChecks(const Case& c, Report& r) : c_(c), r_(r) {}

  void run() {
    check_scheme();
    check_nonlinear_method();
    check_materials();
    check_regions();
    check_sources();
    check_faces();
    check_probes();
    check_temperature_units();
    for (const FieldInputProblem& p : field_input_problems(c_)) r_.error(p.key, p.message);
  }

 private:
  int dims() const { return c_.grid.dims; }
  double h(int a) const { return solver::spacing(c_, a); }

  // Temperature-dependent materials and radiation iterate around backward Euler's, BDF2's or
  // the steady state's solve; the trapezoidal method does not.
  void check_nonlinear_method() {
    const solver::TimeMethod m = c_.time.method;
    if (m != solver::TimeMethod::crank_nicolson) return;
    const std::string what = c_.temperature_dependence();
    if (!what.empty())
      r_.error("time.method", what +
                                  ": such cases run explicit, backward-euler, bdf2 or steady, "
                                  "not crank-nicolson");
  }

  // The coefficient fields come with the conservative second-order form only.
  void check_scheme() {
    if (!c_.has_fields() || c_.scheme.kind == solver::SchemeKind::order2) return;
    std::string what = "convective and heat_flux faces";
    if (!c_.materials.empty())
      what = "materials";
    else if (!c_.sources.empty())
      what = "sources";
    r_.error("scheme", what +
                           " need the order2 scheme (the variable-coefficient update is the "
                           "conservative second-order form); scheme is " +
                           solver::to_string(c_.scheme.kind));
  }

  void check_materials() {
    for (const solver::MaterialSpec& m : c_.materials) {
      const std::string p = "materials." + m.name;
      if (r_.given(p + ".diffusivity")) {
        r_.positive(p + ".diffusivity", m.conductivity);
        continue;
      }
      r_.positive(p + ".conductivity", m.conductivity);
      r_.positive(p + ".density", m.density);
      r_.positive(p + ".specific_heat", m.specific_heat);
    }
    for (const solver::MaterialSpec& m : c_.materials) {
      bool used = false;
      for (const solver::RegionSpec& region : c_.regions) {
        used = used || region.material == m.name;
        for (const auto& [id, name] : region.ids) used = used || name == m.name;
      }
      if (!used) r_.warning("materials." + m.name, "is not used by any region");
    }
    check_conductivity_span();
  }

  // Conductivities more than kConductivitySpan apart in a solve (steady or implicit): at 300 K
  // the rounding of the largest conductances' flows then reaches the load (a copper inclusion
  // given k = 1e12 in epoxy, as a perfect conductor: its field 0.2 K off, its heat flows 1.4%
  // out of balance; at 1e9 both fine). Their tables and every axis count.
  void check_conductivity_span() {
    if (c_.time.method == solver::TimeMethod::explicit_euler || c_.materials.size() < 2) return;
    constexpr double kConductivitySpan = 1e10;
    const solver::MaterialSpec *low = nullptr, *high = nullptr;
    double lo = 0.0, hi = 0.0;
    for (const solver::MaterialSpec& m : c_.materials) {
      std::vector<double> ks;
      for (int a = 0; a < dims(); ++a) ks.push_back(m.conductivity_along(a));
      for (const auto& e : m.conductivity_table) ks.push_back(e[1]);
      for (double k : ks) {
        if (!(k > 0.0) || !std::isfinite(k)) continue;
        if (!low || k < lo) low = &m, lo = k;
        if (!high || k > hi) high = &m, hi = k;
      }
    }
    if (!low || !high || low == high || hi < kConductivitySpan * lo) return;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g", hi / lo);
    r_.warning("materials." + high->name + ".conductivity",
               "is " + std::string(ratio) + " times " + low->name +
                   "'s: conductivities this far apart can leave the solve's answer to fp64's "
                   "rounding (the flows through the largest conductances round to more than "
                   "the load); a body meant as a perfect conductor is modelled as well by k 1e4 "
                   "to 1e6 times its neighbours'");
  }

  void material_name(const std::string& path, const std::string& name) {
    if (known_material(c_, name)) return;
    std::vector<std::string> names;
    for (const auto& m : c_.materials) names.push_back(m.name);
    r_.error(path, "unknown material " + quote(name) + nearest_suffix(name, names) +
                       (names.empty() ? "; the case has no materials section"
                                      : "; materials: " + names_of(c_)));
  }

  // Whether the shape holds part of the domain's volume: a box or ball whose overlap with the
  // domain has a positive size on every active axis (a face or a point is none); nullopt for
  // the other shapes.
  std::optional<bool> holds_volume(const solver::ShapeSpec& s) const {
    if (s.kind == ShapeKind::box) {
      for (int a = 0; a < dims(); ++a) {
        const auto i = static_cast<std::size_t>(a);
        if (!(std::min(s.upper[i], c_.grid.length[i]) > std::max(s.lower[i], 0.0))) return false;
      }
      return true;
    }
    if (s.kind == ShapeKind::ball) {
      // The domain's nearest point to the centre is nearest on every axis at once.
      double r2 = 0.0;
      for (int a = 0; a < dims(); ++a) {
        const auto i = static_cast<std::size_t>(a);
        const double gap = s.center[i] - std::clamp(s.center[i], 0.0, c_.grid.length[i]);
        r2 += gap * gap;
      }
      return r2 < s.radius * s.radius;
    }
    return std::nullopt;
  }

  // Whether a region's shape (source: a source's) has any effect. Without sampling below the
  // grid (solver::samples_source_shapes) that is holding a node. With it, a box or ball takes
  // the share of each node's control volume it holds: a box's share is exact (its bounds cut
  // the sub-cells), so a box source has an effect exactly when it holds volume, and a box
  // region when it holds volume or a node (the node's material); a ball that holds volume
  // has one if a sub-cell's centre falls inside (nullopt: the run finds out), or, a region,
  // if it holds a node. A `where` shape is found through the nodes it holds, sampled or not.
  std::optional<bool> has_effect(const solver::ShapeSpec& s, bool source) const {
    const std::optional<bool> node = holds_a_node(s);
    if (!solver::samples_source_shapes(c_) || s.kind == ShapeKind::where ||
        s.kind == ShapeKind::everywhere || s.kind == ShapeKind::file)
      return node;
    const std::optional<bool> volume = holds_volume(s);
    if (!source && node == true) return true;
    if (s.kind == ShapeKind::box || volume == false) return volume;
    return std::nullopt;
  }

  // Whether a shape without effect is said to hold no volume of the domain (boxes and balls
  // sampled below the grid) rather than no node of the grid.
  bool by_volume(const solver::ShapeSpec& s) const {
    return solver::samples_source_shapes(c_) &&
           (s.kind == ShapeKind::box || s.kind == ShapeKind::ball);
  }
  std::string holds_nothing(const solver::ShapeSpec& s) const {
    return std::string(by_volume(s) ? "holds no volume of the domain"
                                    : "holds no node of the grid") +
           " (the domain is " + domain(c_) + ")";
  }

  // Whether any node lies inside the shape (box and ball bounds with the solver's tolerance of
  // 1e-9 of a spacing); nullopt when that is not looked at (a `where` on a large grid).
  std::optional<bool> holds_a_node(const solver::ShapeSpec& s) const {
    switch (s.kind) {
      case ShapeKind::everywhere:
        return true;
      case ShapeKind::file:
        return std::nullopt;
      case ShapeKind::box:
        // Axes are independent: a node inside on every axis exists when each axis has one.
        for (int a = 0; a < dims(); ++a) {
          const auto i = static_cast<std::size_t>(a);
          const double tol = 1e-9 * h(a);
          const double first = std::max(0.0, std::ceil((s.lower[i] - tol) / h(a)));
          const double last = std::min(static_cast<double>(c_.grid.n[i] - 1),
                                       std::floor((s.upper[i] + tol) / h(a)));
          if (first > last) return false;
        }
        return true;
      case ShapeKind::ball: {
        // The nearest node is nearest on every axis at once (the distance adds up by axis).
        double r2 = 0.0, h_min = h(0);
        for (int a = 0; a < dims(); ++a) {
          const auto i = static_cast<std::size_t>(a);
          const double k = std::clamp(std::round(s.center[i] / h(a)), 0.0,
                                      static_cast<double>(c_.grid.n[i] - 1));
          r2 += (k * h(a) - s.center[i]) * (k * h(a) - s.center[i]);
          h_min = std::min(h_min, h(a));
        }
        return std::sqrt(r2) <= s.radius + 1e-9 * h_min;
      }
      case ShapeKind::where: {
        double points = 1.0;
        for (int a = 0; a < dims(); ++a)
          points *= static_cast<double>(c_.grid.n[static_cast<std::size_t>(a)]);
        if (points > kMaxWhereScan) return std::nullopt;
        const solver::Expression e =
            solver::Expression::compile(s.where, solver::expression_variables(dims()));
        const auto n = c_.grid.n;
        for (std::int64_t k = 0; k < (dims() > 2 ? n[2] : 1); ++k)
          for (std::int64_t j = 0; j < (dims() > 1 ? n[1] : 1); ++j)
            for (std::int64_t i = 0; i < n[0]; ++i) {
              const double x[3] = {static_cast<double>(i) * h(0),
                                   dims() > 1 ? static_cast<double>(j) * h(1) : 0.0,
                                   dims() > 2 ? static_cast<double>(k) * h(2) : 0.0};
              const double v = e.eval(x);
              if (v != 0.0 && !std::isnan(v)) return true;
            }
        return false;
      }
    }
    return std::nullopt;
  }

  // The shape's numbers and formula; true when it is well formed.
  bool check_shape(const std::string& path, const solver::ShapeSpec& s) {
    bool ok = true;
    switch (s.kind) {
      case ShapeKind::everywhere:
      case ShapeKind::file:
        break;
      case ShapeKind::box:
        for (int a = 0; a < dims(); ++a) {
          const auto i = static_cast<std::size_t>(a);
          const bool lower_ok = r_.finite(indexed(path + ".box.lower", i), s.lower[i]);
          const bool upper_ok = r_.finite(indexed(path + ".box.upper", i), s.upper[i]);
          ok = ok && lower_ok && upper_ok;
          if (lower_ok && upper_ok && s.lower[i] > s.upper[i]) {
            r_.error(indexed(path + ".box.upper", i),
                     "must be >= box.lower[" + std::to_string(a) + "] (" +
                         format_number(s.lower[i]) + "; got " + format_number(s.upper[i]) + ")");
            ok = false;
          }
        }
        break;
      case ShapeKind::ball:
        for (int a = 0; a < dims(); ++a)
          ok = r_.finite(indexed(path + ".ball.center", static_cast<std::size_t>(a)),
                         s.center[static_cast<std::size_t>(a)]) &&
               ok;
        ok = r_.positive(path + ".ball.radius", s.radius) && ok;
        break;
      case ShapeKind::where:
        // The column is where the formula goes wrong (as initial.value reports it).
        try {
          solver::Expression::compile(s.where, solver::expression_variables(dims()));
        } catch (const solver::ExpressionError& e) {
          r_.error(path + ".where", e.what());
          ok = false;
        }
        break;
    }
    return ok;
  }

  // The first axis along which a box has no thickness (lower = upper), or -1.
  int flat_axis(const solver::ShapeSpec& s) const {
    if (s.kind != ShapeKind::box) return -1;
    for (int a = 0; a < dims(); ++a)
      if (s.lower[static_cast<std::size_t>(a)] == s.upper[static_cast<std::size_t>(a)]) return a;
    return -1;
  }

  static const char* shape_key(ShapeKind k) {
    switch (k) {
      case ShapeKind::box:
        return ".box";
      case ShapeKind::ball:
        return ".ball";
      case ShapeKind::where:
        return ".where";
      default:
        return "";
    }
  }

  void check_regions() {
    if (c_.materials.empty() && !c_.regions.empty())
      r_.error("regions", "regions name materials; give a materials section");
    for (std::size_t i = 0; i < c_.regions.size(); ++i) {
      const solver::RegionSpec& region = c_.regions[i];
      const std::string p = indexed("regions", i);
      if (region.shape.kind == ShapeKind::file) {
        for (const auto& [id, name] : region.ids)
          material_name(p + ".file.ids." + std::to_string(id), name);
        continue;
      }
      if (region.is_void) {
        check_void(p, i);
        continue;
      }
      material_name(p + ".material", region.material);
      const bool formed = check_shape(p, region.shape);
      if (formed && flat_axis(region.shape) >= 0) {
        // The geometry takes a region by its volume: a box of no thickness holds no material,
        // however many node planes it lies on, and its nodes' faces conduct as before.
        const int a = flat_axis(region.shape);
        const auto i = static_cast<std::size_t>(a);
        r_.error(indexed(p + ".box.upper", i),
                 std::string("the box has no thickness along ") + "xyz"[a] + " (lower = upper = " +
                     format_number(region.shape.upper[i]) +
                     "): a region of no volume holds no material and changes nothing. Give the "
                     "layer its thickness (one thinner than a spacing still counts, by its share "
                     "of each face it crosses), or model a thin resistive layer as a contact "
                     "(contacts: R'' between two materials)");
      } else if (formed && has_effect(region.shape, false) == false) {
        r_.warning(p + shape_key(region.shape.kind),
                   holds_nothing(region.shape) + "; the region has no effect");
      } else if (formed) {
        check_layer_formula(p, region.shape);
      }
    }
  }

  // A `where` region of one coordinate alone (x < 0.2, or stripes of x) is a layer across the
  // domain. Heat crossing it sees its bounds exactly, but along an axis only box bounds split a
  // face's cross-section: heat running along such a layer sees it on the lines through the
  // nodes only (first order; layers two to three spacings thick passed 13% too little along them in
  // a trial). A box with the same bounds is exact both ways.
  void check_layer_formula(const std::string& p, const solver::ShapeSpec& shape) {
    if (shape.kind != ShapeKind::where || dims() < 2) return;
    try {
      const solver::Expression e =
          solver::Expression::compile(shape.where, solver::expression_variables(dims()));
      int read = -1, count = 0;
      for (int a = 0; a < dims(); ++a)
        if (e.reads(a)) {
          read = a;
          ++count;
        }
      if (count != 1) return;
      const char axis = "xyz"[read];
      std::string along;
      for (int a = 0; a < dims(); ++a)
        if (a != read) along += std::string(along.empty() ? "" : " or ") + "xyz"[a];
      r_.warning(p + ".where", std::string("depends on ") + axis +
                                   " alone: a layer across the domain, whose bounds heat "
                                   "flowing along it (along " +
                                   along +
                                   ") sees only on the lines through the nodes (first order); a "
                                   "box with the same bounds along " +
                                   axis + " is exact both ways: write the layer as a box");
    } catch (const solver::ExpressionError&) {
      // check_shape reported it.
    }
  }

  // A void region: a shape that removes part of the body, and its surface's condition, whose
  // area comes from the geometry (boxes and balls).
  // Whether the regions after void `r` put body over all of its part of the face (axis a,
  // side): boxes of a material that reach the face and cover, together, the void's footprint on
  // it (the cells between all their bounds on the face's axes, each tested at its centre), or a
  // material everywhere. A ball's footprint is covered only by the latter.
  bool painted_over(std::size_t r, int a, int side) const {
    const solver::ShapeSpec& sh = c_.regions[r].shape;
    const double plane = side == 0 ? 0.0 : c_.grid.length[static_cast<std::size_t>(a)];
    std::vector<const solver::ShapeSpec*> paint;
    for (std::size_t k = r + 1; k < c_.regions.size(); ++k) {
      const solver::RegionSpec& later = c_.regions[k];
      if (later.is_void) continue;
      if (later.shape.kind == ShapeKind::everywhere) return true;
      const std::size_t ai = static_cast<std::size_t>(a);
      if (later.shape.kind == ShapeKind::box &&
          (side == 0 ? later.shape.lower[ai] <= plane : later.shape.upper[ai] >= plane))
        paint.push_back(&later.shape);
    }
    if (sh.kind != ShapeKind::box || paint.empty()) return false;
    // The footprint's cells per axis of the face: its bounds and the boxes' inside them.
    std::array<std::vector<double>, 3> at;
    for (int b = 0; b < c_.grid.dims; ++b) {
      if (b == a) continue;
      const std::size_t bi = static_cast<std::size_t>(b);
      const double lo = std::max(sh.lower[bi], 0.0),
                   hi = std::min(sh.upper[bi], c_.grid.length[bi]);
      std::vector<double>& cut = at[bi];
      cut = {lo, hi};
      for (const solver::ShapeSpec* q : paint)
        for (double x : {q->lower[bi], q->upper[bi]})
          if (x > lo && x < hi) cut.push_back(x);
      std::sort(cut.begin(), cut.end());
    }
    const auto covered = [&](const double* x) {
      return std::any_of(paint.begin(), paint.end(), [&](const solver::ShapeSpec* q) {
        for (int b = 0; b < c_.grid.dims; ++b) {
          const std::size_t bi = static_cast<std::size_t>(b);
          if (b != a && (x[b] < q->lower[bi] || x[b] > q->upper[bi])) return false;
        }
        return true;
      });
    };
    // Every cell's centre (on the face's own axis and the axes the grid lacks: one cell).
    const auto pieces = [&](int b) {
      return at[static_cast<std::size_t>(b)].size() < 2
                 ? std::size_t{1}
                 : at[static_cast<std::size_t>(b)].size() - 1;
    };
    for (std::size_t k2 = 0; k2 < pieces(2); ++k2)
      for (std::size_t k1 = 0; k1 < pieces(1); ++k1)
        for (std::size_t k0 = 0; k0 < pieces(0); ++k0) {
          const std::size_t k[3] = {k0, k1, k2};
          double x[3] = {0, 0, 0};
          for (int b = 0; b < 3; ++b) {
            const std::vector<double>& cut = at[static_cast<std::size_t>(b)];
            if (cut.size() >= 2) x[b] = 0.5 * (cut[k[b]] + cut[k[b] + 1]);
          }
          if (!covered(x)) return false;
        }
    return true;
  }

  void check_void(const std::string& p, std::size_t r) {
    const solver::RegionSpec& region = c_.regions[r];
    if (region.shape.kind == ShapeKind::everywhere) {
      r_.error(p, "a void needs a shape (box, ball or where); as it stands it removes every node");
      return;
    }
    check_shape(p, region.shape);
    // A void reaching a Dirichlet face: the face would fix nodes that are no part of the body.
    const solver::ShapeSpec& sh = region.shape;
    const char* face_names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
    for (int a = 0; a < c_.grid.dims; ++a)
      for (int side = 0; side < 2; ++side) {
        if (c_.boundary[2 * a + side].kind != BoundaryKind::dirichlet) continue;
        const double plane = side == 0 ? 0.0 : c_.grid.length[a];
        bool touches = false;
        if (sh.kind == ShapeKind::box) {
          touches = side == 0 ? sh.lower[a] <= plane : sh.upper[a] >= plane;
          for (int b = 0; b < c_.grid.dims; ++b)
            if (b != a && (sh.upper[b] < 0.0 || sh.lower[b] > c_.grid.length[b])) touches = false;
        } else if (sh.kind == ShapeKind::ball) {
          touches = std::abs(sh.center[a] - plane) <= sh.radius;
        }
        // Later regions that put body over all of that part of the face leave no void there.
        if (touches && !painted_over(r, a, side))
          r_.error(p + shape_key(sh.kind),
                   std::string("the void reaches the Dirichlet face ") + face_names[2 * a + side] +
                       ", whose nodes would hold a temperature in no body; end the void inside "
                       "the domain, or make that face neumann or convective (a convective face "
                       "of large h holds the body's part at its ambient: h = 1e9 W/(m^2 K) to "
                       "q''/h, 1e-4 K at 1e5 W/m^2)");
      }
    const kernels::BoundaryFace& s = region.surface;
    const bool conditioned = kernels::needs_coefficients(s);  // convective or heat flux
    if (conditioned && region.shape.kind == ShapeKind::where)
      r_.error(p + ".surface",
               "a surface condition needs the void's surface area, which boxes and balls give; "
               "a where shape's void is insulated (remove surface, or give the void as boxes "
               "and balls)");
    if (s.kind == BoundaryKind::convective) {
      if (r_.finite(p + ".surface.h", s.transfer) && s.transfer < 0.0)
        r_.error(p + ".surface.h", "must be >= 0 (got " + format_number(s.transfer) +
                                       "); h is the heat transfer coefficient, W/(m^2 K)");
      check_schedule(p + ".surface.ambient", s.schedule());
      check_ambient(p + ".surface.ambient", s.schedule(), s.radiates());
    } else if (s.heat_flux) {
      r_.finite(p + ".surface.heat_flux", s.value);
    }
  }

  void check_schedule(const std::string& path, const kernels::Schedule& s) {
    steady_takes_start(path, s);
    if (s.table.empty()) {
      if (s.amplitude == 0.0 && s.frequency == 0.0) {
        r_.finite(path, s.value);
      } else {
        r_.finite(path + ".value", s.value);
        const bool amplitude = r_.finite(path + ".amplitude", s.amplitude);
        const bool frequency = r_.finite(path + ".frequency", s.frequency);
        if (amplitude && frequency) sine_without_effect(path, s);
      }
      return;
    }
    bool sorted = true;
    for (std::size_t k = 0; k < s.table.size(); ++k) {
      const std::string p = indexed(path, k);
      const bool time_ok = r_.finite(indexed(p, 0), s.table[k][0]);
      r_.finite(indexed(p, 1), s.table[k][1]);
      if (sorted && time_ok && k > 0 && std::isfinite(s.table[k - 1][0]) &&
          !(s.table[k][0] > s.table[k - 1][0])) {
        r_.error(indexed(p, 0),
                 "the table is not sorted by time: t = " + format_number(s.table[k][0]) +
                     " follows t = " + format_number(s.table[k - 1][0]) + " (times must increase)");
        sorted = false;
      }
    }
    // Times before 0 are allowed (a pair there sets the value at t = 0 by interpolation), but
    // a table whose times all lie at or before the start is the constant of its last pair.
    const double last = s.table.back()[0];
    if (sorted && s.table.size() > 1 && std::isfinite(last) && last <= 0.0)
      r_.warning(indexed(indexed(path, s.table.size() - 1), 0),
                 "every time of the table lies at or before t = 0 (the run starts at t = 0), so "
                 "the value is " +
                     format_number(s.table.back()[1]) +
                     " throughout; give times from 0 on for it to vary during the run");
  }

  // A source's schedule that is 0 from t = 0 to the run's end adds no heat: most likely its
  // times are in other units than the run's seconds, or the run ends before the source starts.
  // Said where the end is known before the run (time.end, or steps of a given dt).
  void off_for_the_run(const std::string& path, const kernels::Schedule& s) {
    const auto& t = c_.time;
    if (t.method == solver::TimeMethod::steady) return;
    double end = 0.0;
    if (t.end_time && std::isfinite(*t.end_time))
      end = *t.end_time;
    else if (t.steps && t.dt && std::isfinite(*t.dt))
      end = static_cast<double>(*t.steps) * *t.dt;
    if (!(end > 0.0)) return;
    for (std::size_t k = 0; k < s.table.size(); ++k)
      if (!std::isfinite(s.table[k][0]) || !std::isfinite(s.table[k][1]) ||
          (k > 0 && !(s.table[k][0] > s.table[k - 1][0])))
        return;  // an error of its own
    if (s.table.empty() && !(s.value == 0.0 && s.amplitude == 0.0)) return;
    if (!s.table.empty()) {
      if (s.table.back()[0] <= 0.0) return;  // a constant, warned of as such
      if (s.at(0.0) != 0.0 || s.at(end) != 0.0) return;
      for (const auto& pair : s.table)
        if (pair[0] > 0.0 && pair[0] < end && pair[1] != 0.0) return;
    }
    // Where it first leaves 0: the table is linear between its pairs, so right after the pair
    // before its first nonzero one (a ramp from 0 at t = 50 to 1 at t = 100 heats from t = 50).
    std::string first;
    for (std::size_t k = 0; k < s.table.size(); ++k)
      if (s.table[k][0] > 0.0 && s.table[k][1] != 0.0) {
        const double from = k > 0 ? std::max(s.table[k - 1][0], 0.0) : 0.0;
        first = " (it rises from 0 after t = " + format_number(from) + ", to " +
                format_number(s.table[k][1]) + " at t = " + format_number(s.table[k][0]) + ")";
        break;
      }
    r_.warning(path, "is 0 from t = 0 to the run's end at t = " + format_number(end) + first +
                         ", so the source adds no heat; schedule times are seconds of simulated "
                         "time");
  }

  // value + amplitude * sin(2 pi frequency t) with one of amplitude and frequency 0 is the
  // constant `value`: the other key was given for nothing.
  void sine_without_effect(const std::string& path, const kernels::Schedule& s) {
    // 2 pi frequency t must stay finite over the run (at least to t = 1), or the sine is NaN.
    const auto& t = c_.time;
    double horizon = 1.0;
    if (t.end_time && std::isfinite(*t.end_time)) horizon = std::max(horizon, *t.end_time);
    if (t.steps && t.dt && std::isfinite(*t.dt))
      horizon = std::max(horizon, static_cast<double>(*t.steps) * *t.dt);
    if (s.amplitude != 0.0 && !std::isfinite(2.0 * M_PI * std::abs(s.frequency) * horizon)) {
      r_.error(path + ".frequency", format_number(s.frequency) +
                                        " Hz is too large: 2 pi frequency t overflows before t = " +
                                        format_number(horizon) +
                                        ", so the sine has no value there");
      return;
    }
    if (s.amplitude == 0.0 && s.frequency != 0.0)
      r_.warning(path + ".frequency",
                 "has no effect: the amplitude is 0 (or not given), so value + amplitude * "
                 "sin(2 pi frequency t) stays " +
                     format_number(s.value) + "; give amplitude for it to vary");
    else if (s.amplitude != 0.0 && s.frequency == 0.0)
      r_.warning(path + ".amplitude",
                 "has no effect: the frequency is 0 (or not given), so value + amplitude * "
                 "sin(2 pi frequency t) stays " +
                     format_number(s.value) + "; give frequency (in Hz) for it to vary");
  }

  // A `power` is spread over the part of its shape inside the domain, so a box or ball that
  // reaches past a face puts all of it into that part: a heater centred on a symmetry plane
  // then heats the half modelled with the whole heater's power. Said, since the case most
  // likely meant the power of the whole shape (power_density delivers the part inside).
  void power_partly_outside(const std::string& at, const solver::ShapeSpec& s) {
    if (holds_volume(s) != true) return;
    double inside = 1.0;  // a box's fraction of its volume inside the domain
    bool outside = false;
    for (int a = 0; a < dims(); ++a) {
      const auto i = static_cast<std::size_t>(a);
      const double tol = 1e-9 * h(a), length = c_.grid.length[i];
      const double lo = s.kind == ShapeKind::box ? s.lower[i] : s.center[i] - s.radius;
      const double hi = s.kind == ShapeKind::box ? s.upper[i] : s.center[i] + s.radius;
      if (!(lo < -tol || hi > length + tol)) continue;
      outside = true;
      if (s.kind == ShapeKind::box && hi > lo)
        inside *= (std::min(hi, length) - std::max(lo, 0.0)) / (hi - lo);
    }
    if (!outside) return;
    const std::string part = s.kind == ShapeKind::box
                                 ? format_number(inside) + " of the box's volume"
                                 : "part of the ball";
    // Across a periodic axis's seam the part outside is not the other side's: shapes do not
    // wrap, which a unit cell's case would otherwise take them to.
    std::string periodic;
    for (int a = 0; a < dims(); ++a) {
      const auto i = static_cast<std::size_t>(a);
      const double lo = s.kind == ShapeKind::box ? s.lower[i] : s.center[i] - s.radius;
      const double hi = s.kind == ShapeKind::box ? s.upper[i] : s.center[i] + s.radius;
      const double tol = 1e-9 * h(a);
      if (c_.boundary[2 * i].kind == BoundaryKind::periodic &&
          (lo < -tol || hi > c_.grid.length[i] + tol))
        periodic += std::string(periodic.empty() ? "" : ", ") + "xyz"[a];
    }
    if (!periodic.empty()) {
      r_.warning(at, "reaches outside the domain (the domain is " + domain(c_) +
                         ") across the periodic axis " + periodic +
                         ": shapes do not wrap around a periodic axis, so the part outside is "
                         "cut off, not placed on the other side, and its power is spread over "
                         "the part inside (" + part +
                         "); give the shape twice, once shifted by the period, each with its "
                         "share of the power");
      return;
    }
    r_.warning(at, "reaches outside the domain (the domain is " + domain(c_) +
                       "): its power is spread over the part inside (" + part +
                       "), which takes all of it; give the power of that part (on a symmetry "
                       "plane, the heater's share), or a power_density");
  }

  void check_sources() {
    std::vector<const kernels::Schedule*> distinct;
    const kernels::Schedule constant{1.0, 0.0, 0.0, {}};
    const auto same = [](const kernels::Schedule& a, const kernels::Schedule& b) {
      return a.value == b.value && a.amplitude == b.amplitude && a.frequency == b.frequency &&
             a.table == b.table;
    };
    // physics.source is a source field of factor 1 too.
    if (c_.physics.source != 0.0 && c_.has_fields()) distinct.push_back(&constant);
    for (std::size_t i = 0; i < c_.sources.size(); ++i) {
      const solver::SourceSpec& s = c_.sources[i];
      const std::string p = indexed("sources", i);
      bool shape_ok = true;
      if (s.shape.kind == ShapeKind::file) {
        for (const char* key : {"power", "power_density"})
          if (key == std::string("power") ? s.power.has_value() : s.power_density.has_value())
            r_.error(p + "." + key,
                     "a file source gives the density (W/m^3) of every node; "
                     "it takes neither power nor power_density");
      } else {
        if (s.power && s.power_density)
          r_.error(p + ".power_density",
                   "give exactly one of power (W) and power_density (W/m^3), not both");
        else if (!s.power && !s.power_density)
          r_.error(p,
                   "give one of power (W, spread over the shape's nodes) and power_density "
                   "(W/m^3)");
        if (s.power) r_.finite(p + ".power", *s.power);
        if (s.power_density) r_.finite(p + ".power_density", *s.power_density);
        shape_ok = check_shape(p, s.shape);
      }
      check_schedule(p + ".schedule", s.schedule);
      off_for_the_run(p + ".schedule", s.schedule);
      if (shape_ok && has_effect(s.shape, true) == false) {
        const std::string at = p + shape_key(s.shape.kind);
        const std::string why = holds_nothing(s.shape);
        if (s.power)
          r_.error(at, why + "; its power cannot be spread over no " +
                           (by_volume(s.shape) ? "volume" : "node"));
        else
          r_.warning(at, why + "; the source has no effect");
      } else if (shape_ok && s.power) {
        power_partly_outside(p + shape_key(s.shape.kind), s.shape);
      }
      const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                    [&](const auto* d) { return same(*d, s.schedule); });
      if (!seen) {
        distinct.push_back(&s.schedule);
        if (static_cast<int>(distinct.size()) == kernels::kMaxSourceFields + 1)
          r_.error(p + ".schedule",
                   "at most " + std::to_string(kernels::kMaxSourceFields) +
                       " different source schedules are supported (sources with the same "
                       "schedule share one field" +
                       (c_.physics.source != 0.0 ? "; physics.source counts as one" : "") +
                       "); this source brings the " +
                       std::to_string(kernels::kMaxSourceFields + 1) + "th");
      }
    }
  }

  void check_faces() {
    for (int f = 0; f < 2 * dims(); ++f) {
      const solver::BoundaryFace& face = c_.boundary[static_cast<std::size_t>(f)];
      const std::string p = std::string("boundary.") + kFaceNames[f];
      if (face.kind == BoundaryKind::dirichlet && !face.table.empty()) {
        check_schedule(p + ".value", face.schedule());
      } else if (face.kind == BoundaryKind::dirichlet) {
        steady_takes_start(p + ".amplitude", face.schedule());
        if (std::isfinite(face.amplitude) && std::isfinite(face.frequency))
          sine_without_effect(p, face.schedule());
      } else if (face.kind == BoundaryKind::convective) {
        if (r_.finite(p + ".h", face.transfer) && face.transfer < 0.0)
          r_.error(p + ".h", "must be >= 0 (got " + format_number(face.transfer) +
                                 "); h is the heat transfer coefficient, W/(m^2 K)");
        check_schedule(p + ".ambient", face.schedule());
        check_ambient(p + ".ambient", face.schedule(), face.radiates());
      }
    }
  }

  // A steady state is one solve at t = 0: a schedule that changes in time is taken at its start
  // (docs/case-format.md), which the case may not mean.
  void steady_takes_start(const std::string& path, const kernels::Schedule& s) {
    if (c_.time.method != solver::TimeMethod::steady || s.constant()) return;
    if (s.table.empty() && s.frequency == 0.0) return;  // constant: sine_without_effect says so
    // A table wholly at or before t = 0 is the constant of its last pair from the start on:
    // check_schedule warns of it as such.
    if (!s.table.empty() && !(s.table.back()[0] > 0.0)) return;
    const double start = s.at(0.0);
    if (!std::isfinite(start)) return;  // check_schedule says why
    r_.warning(path, "varies in time, and a steady solve takes it at t = 0 (" +
                         format_number(start) +
                         ") only; for its later values run a transient (time.method: "
                         "backward-euler or bdf2 with an end time)");
  }

  // The lowest and highest value a schedule takes: value -+ amplitude, or its table's.
  static std::pair<double, double> schedule_range(const kernels::Schedule& s) {
    double low = s.value - std::abs(s.amplitude), high = s.value + std::abs(s.amplitude);
    for (const auto& e : s.table) {
      low = std::min(low, e[1]);
      high = std::max(high, e[1]);
    }
    return {low, high};
  }

  // A sine-form ambient ({amplitude, frequency} without value) varies about 0, its documented
  // default: the messages that quote its range name the key the case left out.
  bool sine_value_defaulted(const std::string& path, const kernels::Schedule& s) const {
    return s.table.empty() && (s.amplitude != 0.0 || s.frequency != 0.0) && !r_.lines().empty() &&
           r_.given(path) && !r_.given(path + ".value");
  }
  static std::string sine_default_note() {
    return " (value not given: a sine ambient varies about 0 by default; give value, its mean)";
  }

  // An ambient temperature's range over the run. eps sigma (u^4 - ambient^4) needs absolute
  // temperatures whose fourth power is a number; an ambient past 1e5 K (twenty times the sun's
  // surface) is a slip of units or exponent on any face.
  void check_ambient(const std::string& path, const kernels::Schedule& s, bool radiates) {
    const auto [low, high] = schedule_range(s);
    if (!std::isfinite(low) || !std::isfinite(high)) return;  // check_schedule said so
    constexpr double kStefanBoltzmann = 5.670374419e-8;
    const bool defaulted = sine_value_defaulted(path, s);
    // T^4 itself (the steps form u^4 - ambient^4 before sigma scales it): sigma first would
    // keep the product finite up to about 6.5e78 K, past which the run's T^4 has overflowed.
    if (radiates && (!std::isfinite(high * high * high * high) ||
                     !std::isfinite(kStefanBoltzmann * high * high * high * high)))
      r_.error(path, "an ambient of " + format_number(high) +
                         " K has no finite radiated power (sigma T^4 overflows); radiation "
                         "uses absolute temperatures in kelvin");
    else if (std::max(std::abs(low), std::abs(high)) > 1e5)
      r_.warning(path, "an ambient of " +
                           format_number(std::abs(high) > std::abs(low) ? high : low) +
                           " K is far beyond any solid's range: check its units and exponent");
    if (radiates)
      radiating_ambient(defaulted ? path + ".value" : path, low, !s.constant(),
                        defaulted ? sine_default_note() : std::string());
  }

  // eps sigma (u^4 - ambient^4) needs absolute temperatures. An ambient up to kColdSink is
  // taken as meant: a cold sink such as deep space (about 3 K) or liquid helium (4.2 K).
  static constexpr double kColdSink = 5.0;
  void radiating_ambient(const std::string& path, double low, bool varies,
                         const std::string& note) {
    if (low < 0.0)
      r_.error(path, "a radiating face needs its ambient in kelvin (got " + format_number(low) +
                         " K" + (varies ? " at its lowest" : "") + ", below absolute zero)" + note);
    else if (low > kColdSink && low < 150.0)
      r_.warning(path, "a radiating face's ambient of " + format_number(low) +
                           " K looks like degrees Celsius (an ambient up to 5 K is taken as a "
                           "cold sink such as deep space); radiation uses absolute "
                           "temperatures (K = degrees C + 273.15)" +
                           note);
  }

  // Kelvin and degrees Celsius mixed. A case with materials is in SI units, its temperatures
  // in kelvin; one that names a temperature below 150 K (or below zero) beside one above 250 K
  // has most likely written one of them in degrees Celsius (an ambient of 25 beside an initial
  // 293.15), which a linear case computes without complaint. A cryogenic case can mean it, so
  // this is a warning, at the colder temperature; a radiating ambient's own warning (above)
  // comes first.
  void check_temperature_units() {
    if (c_.materials.empty()) return;
    struct Named {
      double value;
      std::string path;
      bool warned;  // a radiating ambient, which radiating_ambient() flags on its own
    };
    std::vector<Named> named;
    auto add = [&](double v, const std::string& path, bool warned = false) {
      if (std::isfinite(v)) named.push_back({v, path, warned});
    };
    // `ambient`: the schedule may be a sine map of its own, whose left-out value the warning
    // names; a Dirichlet face's sine is written on the face, its value at `path` itself.
    auto add_schedule = [&](const std::string& path, const kernels::Schedule& s, bool warned,
                            bool ambient) {
      // An ambient the case does not give (left out, or its key misspelt) is reported as
      // missing or unknown; its default says nothing of the case's units.
      if (ambient && !r_.lines().empty() && !r_.given(path)) return;
      const auto [low, high] = schedule_range(s);
      // A sine ambient without value: the warning names that key.
      const std::string at = ambient && sine_value_defaulted(path, s) ? path + ".value" : path;
      add(low, at, warned);
      add(high, at, warned);
    };
    const solver::InitialSpec& ic = c_.initial;
    if (ic.kind == solver::InitialKind::constant) add(ic.value, "initial.value");
    if (ic.kind == solver::InitialKind::box) {
      add(ic.value, "initial.value");
      add(ic.background, "initial.background");
    }
    if (ic.kind == solver::InitialKind::gaussian) add(ic.background, "initial.background");
    for (int f = 0; f < 2 * dims(); ++f) {
      const solver::BoundaryFace& face = c_.boundary[static_cast<std::size_t>(f)];
      if (!face.names_temperature()) continue;
      const bool dirichlet = face.kind == BoundaryKind::dirichlet;
      const std::string p =
          std::string("boundary.") + kFaceNames[f] + (dirichlet ? ".value" : ".ambient");
      add_schedule(p, face.schedule(), face.radiates(), !dirichlet);
    }
    for (std::size_t i = 0; i < c_.regions.size(); ++i) {
      const solver::RegionSpec& region = c_.regions[i];
      if (region.is_void && region.surface.kind == BoundaryKind::convective)
        add_schedule(indexed("regions", i) + ".surface.ambient", region.surface.schedule(),
                     region.surface.radiates(), true);
    }
    for (const solver::MaterialSpec& m : c_.materials) {
      const std::string p = "materials." + m.name;
      for (const auto& e : m.conductivity_table) add(e[0], p + ".conductivity");
      for (const auto& e : m.specific_heat_table) add(e[0], p + ".specific_heat");
      if (m.phase_change) {
        add(m.phase_change->solidus, p + ".phase_change.solidus");
        add(m.phase_change->liquidus, p + ".phase_change.liquidus");
      }
    }
    if (named.empty()) return;
    const auto by_value = [](const Named& a, const Named& b) { return a.value < b.value; };
    const Named& cold = *std::min_element(named.begin(), named.end(), by_value);
    const Named& warm = *std::max_element(named.begin(), named.end(), by_value);
    if (cold.warned || !(cold.value < 150.0 && warm.value > 250.0)) return;
    // A Dirichlet face without `value` holds 0 K, a constant initial condition without it is
    // 0 K: say so, since the case never wrote the 0.
    const bool unwritten = !r_.lines().empty() && !r_.given(cold.path);
    const bool ends_in_value =
        cold.path.size() > 6 && cold.path.compare(cold.path.size() - 6, 6, ".value") == 0;
    std::string defaulted;
    const std::string ambient_value = ".ambient.value";
    if (unwritten && cold.path.size() > ambient_value.size() &&
        cold.path.compare(cold.path.size() - ambient_value.size(), ambient_value.size(),
                          ambient_value) == 0)
      defaulted = sine_default_note();
    else if (unwritten && ends_in_value && cold.path.rfind("boundary.", 0) == 0)
      defaulted = " (value not given: a Dirichlet face holds 0 by default)";
    else if (unwritten && cold.path == "initial.value" && ic.kind == solver::InitialKind::constant)
      defaulted = " (initial.value not given: a constant initial condition is 0 by default)";
    r_.warning(cold.path, "a temperature of " + format_number(cold.value) + " K" + defaulted +
                              " beside " + format_number(warm.value) + " K (" + warm.path +
                              "): one of them looks like degrees Celsius; with materials every "
                              "temperature is in kelvin (K = degrees C + 273.15), unless the "
                              "case does span a cryogenic range");
  }

  void check_probes() {
    const solver::ProbeSpec& pr = c_.probes;
    if (pr.every < 0)
      r_.error("probes.every", "must be >= 0 (got " + std::to_string(pr.every) + ")");
    for (const auto& [name, x] : pr.points) {
      const std::string p = "probes.points." + name;
      // The name is a column of probes.csv.
      if (name.find_first_of(",\"") != std::string::npos ||
          std::any_of(name.begin(), name.end(),
                      [](char ch) { return static_cast<unsigned char>(ch) < 0x20; }))
        r_.error(p,
                 "a probe name is a column of probes.csv and must not hold commas, quotes or "
                 "control characters");
      // Nor be one of the columns before the probes' (a script's r["time"] would read a probe).
      else if (name == "step" || name == "time" || name == "state")
        r_.error(p, "'" + name +
                        "' is a column of probes.csv before the probes' (step, time; state in a "
                        "steady run): give the probe another name");
      for (int a = 0; a < dims(); ++a) {
        const auto i = static_cast<std::size_t>(a);
        const std::string pa = indexed(p, i);
        if (!r_.finite(pa, x[i])) continue;
        const double tol = 1e-9 * h(a);
        if (x[i] < -tol || x[i] > c_.grid.length[i] + tol)
          r_.error(pa, std::string("lies outside the domain: ") + kAxisNames[a] + " = " +
                           format_apart(x[i], x[i] < 0.0 ? 0.0 : c_.grid.length[i]) +
                           " but the domain is [0, " + format_number(c_.grid.length[i]) + "] on " +
                           kAxisNames[a]);
      }
    }
  }

  // v with as many digits as it takes to tell it from `bound` (1.0000000001, not 1, beside 1).
  static std::string format_apart(double v, double bound) {
    std::string text = format_number(v);
    if (text != format_number(bound)) return text;
    char buf[32];
    for (int digits = 7; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v);
      if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
  }

  const Case& c_;
  Report& r_;
};

}  // namespace

void check_fields(const Case& c, Report& r) { FieldChecks(c, r).run(); }

void check_fields_stable(const Case& c, Report& r, ResolvedBody* kept) {
  solver::FieldStability limit;
  try {
    Case filled = c;
    read_field_inputs(filled);
    // The fields, and what laying the body on the grid finds wrong (its warnings go with the
    // body to the run, which says them).
    ResolvedBody body = resolve_body(filled, r.lines());
    if (!body.errors.empty()) {
      r.errors.insert(r.errors.end(), body.errors.begin(), body.errors.end());
      return;
    }
    limit = solver::field_stability(filled, *body.fields);
    if (kept) *kept = std::move(body);
  } catch (const std::exception& e) {
    // Nodes without a material, a file that changed since it was checked, ...: the message
    // starts with its key path when it has one.
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    const bool keyed = colon != std::string::npos &&
                       (what.rfind("regions", 0) == 0 || what.rfind("sources", 0) == 0 ||
                        what.rfind("physics", 0) == 0 || what.rfind("materials", 0) == 0);
    if (keyed)
      r.error(what.substr(0, colon), what.substr(colon + 2));
    else
      r.error("regions", what);
    return;
  }
  if (!c.time.dt && !std::isfinite(limit.dt_limit)) {
    r.error("time.dt",
            "no node sets a stability limit (every node is a Dirichlet node), so "
            "dt: auto has nothing to follow; give dt");
    return;
  }
  const double dt = c.time.dt ? *c.time.dt : 0.9 * limit.dt_limit;
  if (c.time.dt && dt > limit.dt_limit * (1.0 + 1e-12)) {
    r.error("time.dt", format_number(dt) +
                           " is unstable for these materials and faces; the largest stable dt "
                           "is " +
                           format_number_down(limit.dt_limit) + ", set by the node at " +
                           solver::node_location(c, limit.node));
    return;
  }
  if (c.time.end_time && *c.time.end_time / dt > kMaxSteps)
    r.error("time.end", "needs more than 1e15 steps of dt = " + format_number(dt));
}

}  // namespace heatsim::io::check
