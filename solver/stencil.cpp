#include "stencil.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "expression.hpp"
#include "materials.hpp"

namespace heatsim::solver {

int scheme_radius(const SchemeSpec& scheme) {
  switch (scheme.kind) {
    case SchemeKind::order2: return 1;
    case SchemeKind::order4: return 2;
    case SchemeKind::order6: return 3;
    case SchemeKind::isotropic: return 1;
    case SchemeKind::custom: return scheme.radius;
  }
  return 1;
}

std::vector<double> second_derivative_weights(SchemeKind kind) {
  switch (kind) {
    case SchemeKind::order4: return {-1.0 / 12, 4.0 / 3, -5.0 / 2, 4.0 / 3, -1.0 / 12};
    case SchemeKind::order6:
      return {1.0 / 90, -3.0 / 20, 3.0 / 2, -49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90};
    default: return {1.0, -2.0, 1.0};
  }
}

namespace {

Stencil empty_stencil(int dims, int radius) {
  Stencil s;
  s.dims = dims;
  s.radius = radius;
  s.weights.assign(s.size(), 0.0);
  return s;
}

// The isotropic (box, radius 1) Laplacians, written as products of the 1D second difference
// D = [1 -2 1]/h^2 so they hold for unequal spacing:
//   2D: Dxx + Dyy + (hx^2 + hy^2)/12 Dxx Dyy                       (the 9-point [1 4 1; 4 -20 4; 1 4 1]/6h^2)
//   3D: sum Dii + sum_{i<j} (hi^2 + hj^2)/12 Dii Djj
//       + (hx^2 hy^2 + hy^2 hz^2 + hz^2 hx^2)/90 Dxx Dyy Dzz       (the 27-point of weights 1/30,
//                                                                    1/10, 7/15, -64/15 for h=1)
// Both are second order; for equal spacing they reduce to the classic isotropic stencils.
Stencil isotropic_laplacian(int dims, const std::array<double, 3>& h) {
  Stencil s = empty_stencil(dims, 1);
  const double d[3] = {1.0, -2.0, 1.0};
  auto D = [&](int axis, int o) { return d[o + 1] / (h[axis] * h[axis]); };
  auto delta = [](int o) { return o == 0 ? 1.0 : 0.0; };
  const int ry = dims > 1 ? 1 : 0, rz = dims > 2 ? 1 : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int o[3] = {dx, dy, dz};
        double w = 0.0;
        for (int a = 0; a < dims; ++a) {
          double term = D(a, o[a]);
          for (int b = 0; b < dims; ++b)
            if (b != a) term *= delta(o[b]);
          w += term;
        }
        for (int a = 0; a < dims; ++a)
          for (int b = a + 1; b < dims; ++b) {
            double term = (h[a] * h[a] + h[b] * h[b]) / 12.0 * D(a, o[a]) * D(b, o[b]);
            for (int c = 0; c < dims; ++c)
              if (c != a && c != b) term *= delta(o[c]);
            w += term;
          }
        if (dims == 3) {
          const double c3 = (h[0] * h[0] * h[1] * h[1] + h[1] * h[1] * h[2] * h[2] +
                             h[2] * h[2] * h[0] * h[0]) / 90.0;
          w += c3 * D(0, o[0]) * D(1, o[1]) * D(2, o[2]);
        }
        s.at(dx, dy, dz) = w;
      }
  return s;
}

}  // namespace

Stencil laplacian(const Case& c) {
  const int dims = c.grid.dims;
  const std::array<double, 3> h{spacing(c, 0), spacing(c, 1), spacing(c, 2)};
  switch (c.scheme.kind) {
    case SchemeKind::isotropic: return isotropic_laplacian(dims, h);
    case SchemeKind::custom: {
      Stencil s = empty_stencil(dims, c.scheme.radius);
      if (c.scheme.weights.size() != s.size())
        throw std::invalid_argument("scheme.weights: expected " + std::to_string(s.size()) +
                                    " weights, got " + std::to_string(c.scheme.weights.size()));
      // Custom weights are given times h^2 for equal spacing on every axis.
      for (std::size_t i = 0; i < s.size(); ++i) s.weights[i] = c.scheme.weights[i] / (h[0] * h[0]);
      return s;
    }
    default: {
      const std::vector<double> w1 = second_derivative_weights(c.scheme.kind);
      const int r = static_cast<int>(w1.size() / 2);
      Stencil s = empty_stencil(dims, r);
      for (int a = 0; a < dims; ++a)
        for (int o = -r; o <= r; ++o) {
          int off[3] = {0, 0, 0};
          off[a] = o;
          s.at(off[0], off[1], off[2]) += w1[static_cast<std::size_t>(o + r)] / (h[a] * h[a]);
        }
      return s;
    }
  }
}

Stencil update_operator(const Stencil& lap, double alpha_dt) {
  Stencil s = lap;
  for (double& w : s.weights) w *= alpha_dt;
  s.at(0, 0, 0) += 1.0;
  return s;
}

Stencil stencil_power(const Stencil& s, int k) {
  if (k < 1) throw std::invalid_argument("stencil power: k must be >= 1");
  Stencil p = s;
  for (int i = 1; i < k; ++i) {
    Stencil q = empty_stencil(s.dims, p.radius + s.radius);
    const int ra = p.radius, rb = s.radius;
    const int ay = s.dims > 1 ? ra : 0, az = s.dims > 2 ? ra : 0;
    const int by = s.dims > 1 ? rb : 0, bz = s.dims > 2 ? rb : 0;
    for (int z = -az; z <= az; ++z)
      for (int y = -ay; y <= ay; ++y)
        for (int x = -ra; x <= ra; ++x) {
          const double a = p.at(x, y, z);
          if (a == 0.0) continue;
          for (int w = -bz; w <= bz; ++w)
            for (int v = -by; v <= by; ++v)
              for (int u = -rb; u <= rb; ++u) q.at(x + u, y + v, z + w) += a * s.at(u, v, w);
        }
    p = q;
  }
  return p;
}

std::array<double, 2> symbol(const Stencil& s, const std::array<double, 3>& theta) {
  const int r = s.radius;
  const int ry = s.dims > 1 ? r : 0, rz = s.dims > 2 ? r : 0;
  double re = 0.0, im = 0.0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const double w = s.at(dx, dy, dz);
        if (w == 0.0) continue;
        const double phase = dx * theta[0] + dy * theta[1] + dz * theta[2];
        re += w * std::cos(phase);
        im += w * std::sin(phase);
      }
  return {re, im};
}

namespace {

// The smallest of f(theta) over a grid on [-pi, pi]^dims that contains 0 and +-pi on every
// axis: the extremes of separable and symmetric stencils lie there, and a fine grid catches
// the rest. The samples are shared among the threads (a 3D grid has 274,625 of them, each a
// sum of sines and cosines); a minimum is exact in any order, so the result is the same on
// any number of threads.
template <typename F>
double min_over_frequencies(int dims, F&& f) {
  const int samples = dims == 1 ? 2048 : dims == 2 ? 128 : 32;  // even: includes 0 and pi
  const int sy = dims > 1 ? samples : 0, sz = dims > 2 ? samples : 0;
  double m = std::numeric_limits<double>::infinity();
#pragma omp parallel for collapse(2) reduction(min : m) schedule(static) if (dims > 1)
  for (int k = -sz; k <= sz; ++k)
    for (int j = -sy; j <= sy; ++j)
      for (int i = -samples; i <= samples; ++i) {
        const std::array<double, 3> th{M_PI * i / samples, M_PI * j / std::max(samples, 1),
                                       M_PI * k / std::max(samples, 1)};
        m = std::min(m, f(th));
      }
  return m;
}

}  // namespace

double max_symbol_magnitude(const Stencil& s) {
  return -min_over_frequencies(s.dims, [&](const std::array<double, 3>& th) {
    const auto z = symbol(s, th);
    return -std::hypot(z[0], z[1]);
  });
}

// |1 + c*lambda| <= 1 with lambda = symbol of L and c = alpha*dt holds iff
// c <= -2 Re(lambda) / |lambda|^2 (and needs Re(lambda) <= 0).
double max_stable_dt(const Stencil& lap, double alpha) {
  // Near theta = 0 the symbol is the weights' sum, zero up to rounding: skip those samples
  // rather than read the rounding as amplification.
  double scale = 0.0;
  for (double w : lap.weights) scale += std::abs(w);
  const double negligible = 1e-10 * scale;
  const double c_max = min_over_frequencies(lap.dims, [&](const std::array<double, 3>& th) {
    const auto z = symbol(lap, th);
    const double mag2 = z[0] * z[0] + z[1] * z[1];
    if (mag2 <= negligible * negligible) return std::numeric_limits<double>::infinity();
    return std::max(0.0, -2.0 * z[0] / mag2);
  });
  return c_max / alpha;
}

namespace {

// Materials, sources and convective or heat-flux faces use the conservative radius-1 form.
void require_order2(const Case& c) {
  if (c.scheme.kind != SchemeKind::order2)
    throw std::invalid_argument(std::string("scheme: materials, sources, convective and "
                                            "heat-flux faces need scheme order2, not ") +
                                to_string(c.scheme.kind));
}

// Resolves dt (auto, or checked against the limit) and the step count, plan.dt_limit set.
TimePlan finish_plan(const Case& c, TimePlan plan) {
  if (c.time.method == TimeMethod::steady) {
    // One solve of the steady state, made before the time loop, which then takes no step: the
    // result is step 0, and no time passes (dt 0).
    plan.dt = 0.0;
    plan.steps = 0;
    return plan;
  }
  plan.dt_auto = !c.time.dt.has_value();
  if (plan.dt_auto) {
    if (!std::isfinite(plan.dt_limit))
      throw std::invalid_argument("time.dt: auto needs a nonzero Laplacian");
    plan.dt = 0.9 * plan.dt_limit;
  } else {
    plan.dt = *c.time.dt;
    // Implicit steps take any dt; the limit only binds forward Euler.
    if (c.time.method == TimeMethod::explicit_euler && plan.dt > plan.dt_limit * (1.0 + 1e-12)) {
      std::ostringstream msg;
      msg.precision(6);
      if (plan.limit_node >= 0)
        msg << "time.dt: " << plan.dt << " is unstable for these materials and grid; the "
            << "largest stable dt is " << plan.dt_limit << ", set by the node at "
            << node_location(c, plan.limit_node);
      else
        msg << "time.dt: " << plan.dt << " is unstable for this scheme and grid; the largest "
            << "stable dt is " << plan.dt_limit;
      throw std::invalid_argument(msg.str());
    }
  }
  if (c.time.steps) {
    plan.steps = *c.time.steps;
  } else if (c.time.end_time) {
    const double end = *c.time.end_time;
    plan.steps = static_cast<std::int64_t>(std::ceil(end / plan.dt * (1.0 - 1e-12)));
    if (plan.steps < 1) plan.steps = 1;
    plan.dt = end / static_cast<double>(plan.steps);  // ends exactly at `end`, still stable
  }
  if (c.time.steps_override) plan.steps = *c.time.steps_override;
  return plan;
}

}  // namespace

TimePlan plan_time(const Case& c) {
  if (c.has_fields()) {
    require_order2(c);
    return plan_time(c, *coefficient_fields(c));
  }
  TimePlan plan;
  const Stencil lap = laplacian(c);
  plan.dt_limit = max_stable_dt(lap, c.physics.alpha);
  if (!(plan.dt_limit > 0.0))
    throw std::invalid_argument(
        "scheme: the stencil amplifies some frequency for every dt > 0 (unstable operator)");
  return finish_plan(c, plan);
}

TimePlan plan_time(const Case& c, const kernels::CoefficientFields& fields) {
  require_order2(c);
  TimePlan plan;
  // A steady state takes no step: no explicit limit to find (a pass over every node's faces).
  if (c.time.method == TimeMethod::steady) return finish_plan(c, plan);
  const FieldStability stability = field_stability(c, fields);
  plan.dt_limit = stability.dt_limit;
  plan.limit_node = stability.node;
  return finish_plan(c, plan);
}

kernels::StencilProblem make_problem(const Case& c, double dt) {
  if (c.has_fields()) {
    require_order2(c);
    return make_problem(c, dt, coefficient_fields(c));
  }
  return make_problem(c, dt, nullptr);
}

kernels::StencilProblem make_problem(const Case& c, double dt,
                                     std::shared_ptr<const kernels::CoefficientFields> fields) {
  if (fields) require_order2(c);
  kernels::StencilProblem p;
  p.dims = c.grid.dims;
  for (int a = 0; a < 3; ++a) {
    p.n[a] = a < c.grid.dims ? c.grid.n[a] : 1;
    p.h[a] = spacing(c, a);
  }
  p.stencil = update_operator(laplacian(c), c.physics.alpha * dt);
  p.faces = c.boundary;
  p.dt = dt;
  p.source_increment = dt * c.physics.source;
  p.precision = c.precision;
  p.fusion_depth = c.fusion;
  if (fields) {
    // The fields carry every source (physics.source included). There is no S^k to fuse: a
    // backend that blocks coefficient steps (temporal-blocking) takes `fusion: k` as k single
    // steps per pass, the others step one at a time. `auto` is one step per pass, which is
    // what measures fastest on these problems (docs/performance.md, Heat-3D-mat).
    p.coefficients = std::move(fields);
    p.source_increment = 0.0;
    if (p.fusion_depth == 0) p.fusion_depth = 1;
  }
  return p;
}

double coordinate(const Case& c, int axis, std::int64_t i) {
  return static_cast<double>(i) * spacing(c, axis);
}

namespace {

double initial_value(const InitialSpec& ic, const Case& c, const std::array<double, 3>& x) {
  const int dims = c.grid.dims;
  switch (ic.kind) {
    case InitialKind::constant: return ic.value;
    case InitialKind::gaussian: {
      double r2 = 0.0;
      for (int a = 0; a < dims; ++a) r2 += (x[a] - ic.center[a]) * (x[a] - ic.center[a]);
      return ic.background + ic.amplitude * std::exp(-0.5 * r2 / (ic.width * ic.width));
    }
    case InitialKind::box: {
      for (int a = 0; a < dims; ++a)
        if (x[a] < ic.lower[a] || x[a] > ic.upper[a]) return ic.background;
      return ic.value;
    }
    case InitialKind::expression:
      return 0.0;  // compiled once, in initial_field
    case InitialKind::file:
      return 0.0;  // read by io::read_initial_field
    case InitialKind::modes: {
      double v = 0.0;
      for (const ModeTerm& m : ic.modes) {
        double term = m.amplitude;
        for (int a = 0; a < dims; ++a) {
          const double arg = M_PI * m.k[a] * x[a] / c.grid.length[a];
          term *= m.cosine[a] ? std::cos(arg) : std::sin(arg);
        }
        v += term;
      }
      return v;
    }
  }
  return 0.0;
}

}  // namespace

std::vector<std::string> expression_variables(int dims) {
  const std::vector<std::string> xyz{"x", "y", "z"};
  return {xyz.begin(), xyz.begin() + std::clamp(dims, 1, 3)};
}

namespace {

bool on_dirichlet_face(const Case& c, const std::int64_t idx[3]) {
  for (int a = 0; a < c.grid.dims; ++a)
    for (int side = 0; side < 2; ++side)
      if (c.boundary[2 * a + side].kind == BoundaryKind::dirichlet &&
          idx[a] == (side == 0 ? 0 : c.grid.n[a] - 1))
        return true;
  return false;
}

// "nan at node (0, 4): x = 0, y = 0.5": a value that is not finite, and where.
std::string value_at(const Case& c, double v, const std::int64_t idx[3]) {
  std::ostringstream s;
  s << (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") << " at node (";
  for (int a = 0; a < c.grid.dims; ++a) s << (a ? ", " : "") << idx[a];
  s << "): ";
  const char* names[3] = {"x", "y", "z"};
  for (int a = 0; a < c.grid.dims; ++a)
    s << (a ? ", " : "") << names[a] << " = " << coordinate(c, a, idx[a]);
  return s.str();
}

}  // namespace

std::string expression_sample_problem(const Case& c) {
  const Expression e = Expression::compile(c.initial.expression, expression_variables(c.grid.dims));
  const int dims = std::clamp(c.grid.dims, 1, 3);
  int samples = 1;
  for (int a = 0; a < dims; ++a) samples *= 3;
  for (int s = 0; s < samples; ++s) {
    int code = s;  // base 3: per axis node 0, n/2 or n-1
    std::int64_t idx[3] = {0, 0, 0};
    std::array<double, 3> pos{0, 0, 0};
    for (int a = 0; a < dims; ++a, code /= 3) {
      const std::int64_t n = c.grid.n[a];
      idx[a] = code % 3 == 0 ? 0 : code % 3 == 1 ? n / 2 : n - 1;
      pos[a] = coordinate(c, a, idx[a]);
    }
    if (on_dirichlet_face(c, idx)) continue;
    const double v = e.eval(pos.data());
    if (!std::isfinite(v)) return value_at(c, v, idx);
  }
  return "";
}

namespace {

// Every node on a Dirichlet face takes g(t) (see set_dirichlet_nodes).
template <typename T>
void set_dirichlet_values(const Case& c, T* u, double t = 0.0) {
  const auto& n = c.grid.n;
  const std::int64_t nx = n[0], ny = c.grid.dims > 1 ? n[1] : 1;
  for (int a = 0; a < c.grid.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      const BoundaryFace& f = c.boundary[2 * a + side];
      if (f.kind != BoundaryKind::dirichlet) continue;
      const T g = static_cast<T>(f.at(t));
      // Every node whose coordinate on axis a is that face's: the other two axes run free.
      const int oa = (a + 1) % 3, ob = (a + 2) % 3;
      const std::int64_t na = oa < c.grid.dims ? n[oa] : 1, nb = ob < c.grid.dims ? n[ob] : 1;
      std::int64_t idx[3] = {0, 0, 0};
      idx[a] = side == 0 ? 0 : n[a] - 1;
      for (std::int64_t j = 0; j < nb; ++j)
        for (std::int64_t i = 0; i < na; ++i) {
          idx[oa] = i;
          idx[ob] = j;
          u[(idx[2] * ny + idx[1]) * nx + idx[0]] = g;
        }
    }
}

// The initial field into u (doubles, or floats rounded from the doubles as an upload rounds
// them). The grid is cut into pieces of up to Expression::kBlock nodes along x, and the
// pieces in memory order into one contiguous range per thread: each value is computed on its
// own, so the split cannot change one, and each page of u is first touched by the thread
// that fills it. An expression runs a block at a time (Expression::eval_block, bit for bit
// eval()'s).
template <typename T>
void fill_field(const Case& c, T* u) {
  if (c.initial.kind == InitialKind::file)
    throw std::invalid_argument("initial: a file's field is read by io::read_initial_field");
  std::optional<Expression> expression;
  if (c.initial.kind == InitialKind::expression) {
    try {
      expression = Expression::compile(c.initial.expression, expression_variables(c.grid.dims));
    } catch (const ExpressionError& e) {
      throw std::invalid_argument(std::string("initial.value: ") + e.what());
    }
  }
  const int dims = c.grid.dims;
  const std::int64_t nx = c.grid.n[0], ny = dims > 1 ? c.grid.n[1] : 1,
                     nz = dims > 2 ? c.grid.n[2] : 1;
  constexpr int kBlock = Expression::kBlock;
  const std::int64_t per_row = (nx + kBlock - 1) / kBlock;
  const std::int64_t pieces = nz * ny * per_row;
  const std::int64_t none = nx * ny * nz;
  std::int64_t first_bad = none;  // the first node, in memory order, not finite (expression)
#pragma omp parallel reduction(min : first_bad)
  {
    std::vector<double> scratch, coords[3], values(kBlock);
    if (expression) {
      scratch.resize(expression->block_scratch());
      for (int a = 0; a < dims; ++a) coords[a].resize(kBlock);
    }
    const double* columns[3] = {coords[0].data(), coords[1].data(), coords[2].data()};
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < pieces; ++w) {
      const std::int64_t row = w / per_row, x0 = w % per_row * kBlock;
      const std::int64_t y = row % ny, z = row / ny;
      const int count = static_cast<int>(std::min<std::int64_t>(kBlock, nx - x0));
      T* out = u + row * nx + x0;
      if (expression) {
        for (int j = 0; j < count; ++j) coords[0][j] = coordinate(c, 0, x0 + j);
        if (dims > 1) std::fill_n(coords[1].begin(), count, coordinate(c, 1, y));
        if (dims > 2) std::fill_n(coords[2].begin(), count, coordinate(c, 2, z));
        expression->eval_block(columns, count, values.data(), scratch.data());
        for (int j = 0; j < count; ++j) {
          out[j] = static_cast<T>(values[j]);
          if (!std::isfinite(values[j])) {
            const std::int64_t idx[3] = {x0 + j, y, z};
            if (!on_dirichlet_face(c, idx)) first_bad = std::min(first_bad, row * nx + x0 + j);
          }
        }
      } else {
        for (int j = 0; j < count; ++j) {
          const std::array<double, 3> pos{coordinate(c, 0, x0 + j), coordinate(c, 1, y),
                                          coordinate(c, 2, z)};
          out[j] = static_cast<T>(initial_value(c.initial, c, pos));
        }
      }
    }
  }
  set_dirichlet_values(c, u);
  if (first_bad < none) {
    const std::int64_t idx[3] = {first_bad % nx, first_bad / nx % ny, first_bad / (nx * ny)};
    const std::array<double, 3> pos{coordinate(c, 0, idx[0]), coordinate(c, 1, idx[1]),
                                    coordinate(c, 2, idx[2])};
    throw std::invalid_argument("initial.value: the expression is " +
                                value_at(c, expression->eval(pos.data()), idx) +
                                " (every node must be finite)");
  }
}

}  // namespace

std::vector<double> initial_field(const Case& c) {
  const std::int64_t nx = c.grid.n[0], ny = c.grid.dims > 1 ? c.grid.n[1] : 1,
                     nz = c.grid.dims > 2 ? c.grid.n[2] : 1;
  std::vector<double> u(static_cast<std::size_t>(nx * ny * nz));
  fill_field(c, u.data());
  return u;
}

void fill_initial_field(const Case& c, double* u) { fill_field(c, u); }
void fill_initial_field(const Case& c, float* u) { fill_field(c, u); }

void set_dirichlet_nodes(const Case& c, std::vector<double>& u, double t) {
  set_dirichlet_values(c, u.data(), t);
}

std::string first_non_finite(const Case& c, const std::vector<double>& u) {
  // The smallest index of a value that is not finite, whichever thread finds it: a min
  // reduction gives the same node as a serial search.
  const std::int64_t size = static_cast<std::int64_t>(u.size());
  std::int64_t first = size;
#pragma omp parallel for reduction(min : first) schedule(static)
  for (std::int64_t i = 0; i < size; ++i)
    if (!std::isfinite(u[static_cast<std::size_t>(i)])) first = std::min(first, i);
  if (first == size) return "";
  const std::int64_t nx = c.grid.n[0], ny = c.grid.dims > 1 ? c.grid.n[1] : 1;
  const std::int64_t idx[3] = {first % nx, first / nx % ny, first / (nx * ny)};
  return value_at(c, u[static_cast<std::size_t>(first)], idx);
}

std::int64_t host_bytes_needed(const Case& c) {
  std::int64_t points = 1;
  for (int a = 0; a < c.grid.dims; ++a) points *= c.grid.n[a];
  const std::int64_t value = c.precision == Precision::fp32 ? 4 : 8;
  // The fp64 field the solver keeps for output, plus the CPU backend's two padded buffers.
  return points * 8 + 2 * points * value + (points * 8) / 4;
}

}  // namespace heatsim::solver
