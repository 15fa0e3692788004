// Semantic checks of a filled Case: ranges, sizes, consistency between sections and the
// stability of dt. They know nothing of YAML, so the CLI runs them again after overrides.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "case_check.hpp"
#include "case_loader.hpp"
#include "initial_file.hpp"
#include "kernels/registry.hpp"
#include "solver/expression.hpp"
#include "solver/heat_flows.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"

namespace heatsim::io {

using solver::BoundaryKind;
using solver::Case;
using solver::InitialKind;
using solver::SchemeKind;
using detail::format_number;
using detail::format_number_down;
using detail::nearest_suffix;
using detail::quote;

namespace {

const char* const kAxisNames[3] = {"x", "y", "z"};
const char* const kFaceNames[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

// The largest grid a case may ask for: 2^34 points (128 GiB of fp64 per field copy).
constexpr double kMaxPoints = 17179869184.0;
// More steps than this cannot be meant: the run would never finish.
constexpr double kMaxSteps = 1e15;
// The grid spacings whose 1/h^2 and (1/h^2)^2 are normal doubles with room for any diffusivity.
constexpr double kMinSpacing = 1e-60;
constexpr double kMaxSpacing = 1e60;

std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class Checker {
 public:
  Checker(const Case& c, const std::map<std::string, int>& lines) : c_(c), lines_(lines) {}

  std::vector<CaseError> run(bool check_stability, ResolvedBody* body = nullptr) {
    const bool dims_ok = c_.grid.dims >= 1 && c_.grid.dims <= 3;
    check::Report fields(lines_);
    if (!dims_ok) error("grid.dims", "must be 1, 2 or 3 (got " + std::to_string(c_.grid.dims) + ")");
    check_physics();
    check_scheme(dims_ok);
    if (dims_ok) {
      check_grid();
      check_boundary();
      check_initial();
      check::check_fields(c_, fields);
    }
    check_time();
    check_run_options();
    errors_.insert(errors_.end(), fields.errors.begin(), fields.errors.end());
    warnings_ = std::move(fields.warnings);
    warnings_.insert(warnings_.end(), own_warnings_.begin(), own_warnings_.end());
    if (check_stability && errors_.empty()) {
      if (c_.has_fields() && c_.time.method == solver::TimeMethod::explicit_euler) {
        check::Report stable(lines_);
        check::check_fields_stable(c_, stable, body);
        errors_ = std::move(stable.errors);
      } else {
        check_stable();
      }
    }
    return std::move(errors_);
  }

  // Set by run().
  std::vector<CaseError> warnings_;

 private:
  std::vector<CaseError> own_warnings_;  // this checker's own, joined to warnings_ by run()
  int dims() const { return c_.grid.dims; }

  void error(const std::string& path, const std::string& message) {
    errors_.push_back(CaseError{path, line_of(path), message});
  }
  void warning(const std::string& path, const std::string& message) {
    own_warnings_.push_back(CaseError{path, line_of(path), message});
  }

  // The line of `path`, or of the nearest enclosing key that has one.
  int line_of(std::string path) const {
    while (!path.empty()) {
      const auto it = lines_.find(path);
      if (it != lines_.end()) return it->second;
      const std::size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos) break;
      path.resize(cut);
    }
    return 0;
  }

  bool finite(const std::string& path, double v) {
    if (std::isfinite(v)) return true;
    error(path, "must be a finite number (got " + format_number(v) + ")");
    return false;
  }

  void positive(const std::string& path, double v) {
    if (!finite(path, v)) return;
    if (!(v > 0.0)) error(path, "must be > 0 (got " + format_number(v) + ")");
  }

  int radius() const {
    const int r = solver::scheme_radius(c_.scheme);
    return std::clamp(r, 1, 3);
  }

  void check_grid() {
    const int r = radius();
    const std::int64_t min_n = std::max(3, 2 * r + 1);
    double points = 1.0;
    for (int a = 0; a < dims(); ++a) {
      const std::string p = indexed("grid.n", static_cast<std::size_t>(a));
      const std::int64_t n = c_.grid.n[static_cast<std::size_t>(a)];
      if (n < min_n) {
        std::string why = "must be >= " + std::to_string(min_n);
        if (min_n > 3)
          why += std::string(" for scheme ") + solver::to_string(c_.scheme.kind) + " (radius " +
                 std::to_string(r) + ")";
        error(p, why + " (got " + std::to_string(n) + ")");
      }
      points *= static_cast<double>(std::max<std::int64_t>(n, 1));
      const std::string pl = indexed("grid.length", static_cast<std::size_t>(a));
      const double length = c_.grid.length[static_cast<std::size_t>(a)];
      positive(pl, length);
      // The weights go as 1/h^2 and the stability limit squares them: outside this range of h
      // they overflow or vanish, and the case would be refused for its scheme, not its grid.
      const double h = solver::spacing(c_, a);
      if (n >= min_n && std::isfinite(length) && length > 0.0 &&
          !(h >= kMinSpacing && h <= kMaxSpacing)) {
        error(pl, "gives a spacing h = " + format_number(h) + ", outside " +
                      format_number(kMinSpacing) + " to " + format_number(kMaxSpacing) +
                      " where the steps' 1/h^2 stays within double precision; express the case "
                      "in other units");
      }
    }
    check_metres();
    if (points > kMaxPoints) {
      std::ostringstream msg;
      msg << "the grid has " << format_number(points)
          << " points, more than the limit of 2^34 (17179869184)";
      error("grid.n", msg.str());
    }
  }

  // Lengths are in metres. A case whose materials are metals in SI units (k >= 20 W/(m K),
  // rho >= 500 kg/m^3) over a domain of 5 m or more is most likely drawn in millimetres (a
  // 40 mm heat sink written as 40): its answer would be a thousand times off in size, silently.
  void check_metres() {
    double largest = 0.0;
    for (int a = 0; a < dims(); ++a)
      largest = std::max(largest, c_.grid.length[static_cast<std::size_t>(a)]);
    if (!(largest >= 5.0) || !std::isfinite(largest)) return;
    const solver::MaterialSpec* metal = nullptr;
    for (const auto& m : c_.materials) {
      double k = m.conductivity;
      for (int a = 0; a < 3 && m.anisotropic(); ++a) k = std::max(k, m.conductivity_along(a));
      if (k >= 20.0 && m.density >= 500.0) metal = &m;
      if (metal) break;
    }
    if (!metal) return;
    std::string size;
    for (int a = 0; a < dims(); ++a)
      size += (a ? " x " : "") + format_number(c_.grid.length[static_cast<std::size_t>(a)]);
    warning("grid.length", "the domain is " + size + " m of " + metal->name +
                               " (k = " + format_number(metal->conductivity) +
                               " W/(m K)): lengths are in metres; a case drawn in millimetres "
                               "needs every length, box, ball and probe divided by 1000");
  }

  void check_physics() {
    positive("physics.alpha", c_.physics.alpha);
    finite("physics.source", c_.physics.source);
  }

  void check_scheme(bool dims_ok) {
    const auto& s = c_.scheme;
    if (s.kind == SchemeKind::isotropic && dims_ok && dims() == 1)
      error("scheme", "isotropic is a box stencil for 2D and 3D grids; use order2 in 1D");
    // A Dirichlet face's ghosts are the odd reflection about its value, exact to every order
    // only where u_xx = 0 on the face: a value that varies in time (u_t = alpha u_xx there) or
    // a source makes it second order, and the wider stencils' ghosts two and three spacings out
    // then err more than order2's (a steady x (1 - x) with source 2: order4 1.7e-3 at n = 11,
    // order2 exact).
    if (s.kind == SchemeKind::order4 || s.kind == SchemeKind::order6) {
      std::string why;
      bool dirichlet = false;
      const int faces = 2 * std::max(1, std::min(dims(), 3));
      for (int f = 0; f < faces; ++f) {
        const kernels::BoundaryFace& b = c_.boundary[static_cast<std::size_t>(f)];
        if (b.kind != BoundaryKind::dirichlet) continue;
        dirichlet = true;
        if (why.empty() && b.time_dependent())
          why = std::string("the Dirichlet value of boundary.") + kFaceNames[f] +
                " varies in time";
      }
      if (why.empty() && dirichlet && c_.physics.source != 0.0)
        why = "physics.source is not 0 beside a Dirichlet face";
      if (!why.empty())
        warning("scheme", std::string(s.kind == SchemeKind::order4 ? "order4" : "order6") +
                              " is of its order away from the faces, but " + why +
                              ": the ghosts' odd reflection there is only second order, and "
                              "near that face this scheme errs more than order2 does; use "
                              "order2 (or keep the face's value constant and the source 0)");
    }
    if (s.kind != SchemeKind::custom) return;
    if (s.radius < 1 || s.radius > 3) {
      error("scheme.radius", "must be between 1 and 3 (got " + std::to_string(s.radius) + ")");
      return;
    }
    if (!dims_ok) return;
    std::size_t expected = 1;
    const std::size_t extent = static_cast<std::size_t>(2 * s.radius + 1);
    for (int a = 0; a < dims(); ++a) expected *= extent;
    if (s.weights.size() != expected) {
      std::ostringstream msg;
      msg << "expected " << expected << " weights ((2*" << s.radius << "+1)^" << dims()
          << " for radius " << s.radius << " in " << dims() << "D), got " << s.weights.size();
      error("scheme.weights", msg.str());
      return;
    }
    bool all_finite = true;
    double sum = 0.0, largest = 0.0;
    for (std::size_t i = 0; i < s.weights.size(); ++i) {
      all_finite = finite(indexed("scheme.weights", i), s.weights[i]) && all_finite;
      sum += s.weights[i];
      largest = std::max(largest, std::abs(s.weights[i]));
    }
    if (!all_finite) return;
    // A Laplacian annihilates constants; weights that do not sum to zero add a reaction term.
    if (std::abs(sum) > 1e-10 * largest)
      error("scheme.weights",
            "weights must sum to zero (consistency); they sum to " + format_number(sum));
    // Custom weights are given times h^2 for one h: every axis must share it.
    for (int a = 1; a < dims(); ++a) {
      const double h0 = solver::spacing(c_, 0), ha = solver::spacing(c_, a);
      if (std::isfinite(h0) && std::isfinite(ha) && h0 > 0 &&
          std::abs(ha - h0) > 1e-12 * std::abs(h0)) {
        std::ostringstream msg;
        msg << "a custom scheme needs equal spacing on every axis; h_x = " << format_number(h0)
            << " but h_" << kAxisNames[a] << " = " << format_number(ha)
            << " (spacing is L/(n-1), or L/n on periodic axes)";
        error("scheme", msg.str());
        break;
      }
    }
  }

  void check_boundary() {
    for (int a = 0; a < dims(); ++a) {
      const auto& lo = c_.boundary[static_cast<std::size_t>(2 * a)];
      const auto& hi = c_.boundary[static_cast<std::size_t>(2 * a + 1)];
      const bool plo = lo.kind == BoundaryKind::periodic, phi = hi.kind == BoundaryKind::periodic;
      if (plo != phi) {
        const int bad = plo ? 2 * a + 1 : 2 * a;
        const int good = plo ? 2 * a : 2 * a + 1;
        error(std::string("boundary.") + kFaceNames[bad],
              std::string("inconsistent periodic faces: ") + kFaceNames[good] +
                  " is periodic but " + kFaceNames[bad] + " is " +
                  kernels::to_string(c_.boundary[static_cast<std::size_t>(bad)].kind) +
                  " (an axis is periodic on both faces or neither)");
      }
    }
    for (int f = 0; f < 2 * dims(); ++f) {
      const auto& face = c_.boundary[static_cast<std::size_t>(f)];
      const std::string p = std::string("boundary.") + kFaceNames[f];
      if (face.kind == BoundaryKind::dirichlet && face.table.empty()) {
        finite(p + ".value", face.value);
        finite(p + ".amplitude", face.amplitude);
        finite(p + ".frequency", face.frequency);
      } else if (face.kind == BoundaryKind::neumann) {
        finite(p + (face.heat_flux ? ".heat_flux" : ".flux"), face.value);
      }
    }
  }

  bool periodic(int axis) const {
    return c_.boundary[static_cast<std::size_t>(2 * axis)].kind == BoundaryKind::periodic;
  }

  void check_initial() {
    const auto& ic = c_.initial;
    switch (ic.kind) {
      case InitialKind::constant: finite("initial.value", ic.value); break;
      case InitialKind::gaussian:
        finite("initial.amplitude", ic.amplitude);
        finite("initial.background", ic.background);
        positive("initial.width", ic.width);
        for (int a = 0; a < dims(); ++a)
          finite(indexed("initial.center", static_cast<std::size_t>(a)),
                 ic.center[static_cast<std::size_t>(a)]);
        break;
      case InitialKind::box:
        finite("initial.value", ic.value);
        finite("initial.background", ic.background);
        for (int a = 0; a < dims(); ++a) {
          const auto i = static_cast<std::size_t>(a);
          // Both corners are checked, so both are reported when both are bad.
          const bool lower_ok = finite(indexed("initial.lower", i), ic.lower[i]);
          const bool ok = finite(indexed("initial.upper", i), ic.upper[i]) && lower_ok;
          if (ok && !(ic.lower[i] < ic.upper[i]))
            error(indexed("initial.upper", i),
                  "must be greater than initial.lower[" + std::to_string(a) + "] (" +
                      format_number(ic.lower[i]) + "; got " + format_number(ic.upper[i]) + ")");
        }
        break;
      case InitialKind::file: {
        // The file's structure: it opens, holds the dataset, of the grid's dimensions. The
        // values are read (and checked finite) when the run starts.
        // A dataset the case does not name (the default) is the file's: keyed at initial.path.
        const InitialFileProblem problem = initial_file_problem(c_);
        if (!problem.message.empty())
          error(problem.key == "initial.dataset" && !lines_.count("initial.dataset")
                    ? "initial.path"
                    : problem.key,
                problem.message);
        break;
      }
      case InitialKind::expression:
        // Compiles over the active axes, and is finite at the domain's corners, face centres
        // and centre (every node is checked when the run makes the field).
        try {
          const std::string problem = solver::expression_sample_problem(c_);
          if (!problem.empty()) error("initial.value", "the expression is " + problem);
        } catch (const solver::ExpressionError& e) {
          error("initial.value", e.what());
        }
        break;
      case InitialKind::modes:
        if (ic.modes.empty()) error("initial.terms", "needs at least one term");
        for (std::size_t t = 0; t < ic.modes.size(); ++t) {
          const std::string p = indexed("initial.terms", t);
          finite(p + ".amplitude", ic.modes[t].amplitude);
          for (int a = 0; a < dims(); ++a) {
            const int k = ic.modes[t].k[static_cast<std::size_t>(a)];
            const std::string pk = indexed(p + ".k", static_cast<std::size_t>(a));
            if (k < 0) {
              error(pk, "must be >= 0 (got " + std::to_string(k) + ")");
            } else if (periodic(a) && k % 2 != 0) {
              // sin/cos(pi k x / L) has period L only for even k.
              error(pk, std::string("must be even on the periodic ") + kAxisNames[a] +
                            " axis (got " + std::to_string(k) + ")");
            }
          }
        }
        break;
    }
  }

  void check_time() {
    const auto& t = c_.time;
    if (t.dt) positive("time.dt", *t.dt);
    if (!(t.tolerance > 0.0 && t.tolerance < 1.0))
      error("time.tolerance",
            "must lie strictly between 0 and 1, in (0, 1) (a relative residual; got " +
                format_number(t.tolerance) + ")");
    // The implicit solves discretise the second-order flux form (solver/multigrid), whatever
    // the scheme says.
    if (t.method != solver::TimeMethod::explicit_euler && c_.scheme.kind != SchemeKind::order2)
      error("time.method", std::string(solver::multigrid::to_string(t.method)) +
                               " needs scheme order2, not " + solver::to_string(c_.scheme.kind));
    // A steady state is one solve: no step count or end time; a dt, steps or end given are
    // not used, which the case should know.
    if (t.method == solver::TimeMethod::steady) {
      for (const auto& [given, key] : {std::pair<bool, const char*>{t.dt.has_value(), "time.dt"},
                                       {t.steps.has_value(), "time.steps"},
                                       {t.end_time.has_value(), "time.end"}})
        if (given)
          warning(key, "a steady state is one solve with no time steps: this key is not used");
      return;
    }
    // Explicit steps solve nothing: a tolerance given for them is not used either.
    if (t.method == solver::TimeMethod::explicit_euler && lines_.count("time.tolerance"))
      warning("time.tolerance",
              "explicit steps solve no system: this key (the implicit and steady solves' "
              "relative residual) is not used");
    if (t.steps && t.end_time) {
      error("time", "give exactly one of 'steps' and 'end', not both");
    } else if (!t.steps && !t.end_time) {
      error("time", "give exactly one of 'steps' (a step count) or 'end' (a simulated time)");
    }
    if (t.steps && *t.steps < 0)
      error("time.steps", "must be >= 0 (got " + std::to_string(*t.steps) + ")");
    else if (t.steps && static_cast<double>(*t.steps) > kMaxSteps)
      error("time.steps", "must be at most 1e15 (got " + std::to_string(*t.steps) + ")");
    if (t.end_time) positive("time.end", *t.end_time);
    // A given dt longer than the whole run is cut to one step of the run's length: most likely
    // one of the two is in other units (milliseconds for seconds).
    if (t.end_time && t.dt && std::isfinite(*t.dt) && std::isfinite(*t.end_time) &&
        *t.end_time > 0.0 && *t.dt > *t.end_time * (1.0 + 1e-12))
      warning("time.dt", format_number(*t.dt) + " is longer than the whole run (time.end " +
                             format_number(*t.end_time) +
                             "), so the run is one step of " + format_number(*t.end_time) +
                             "; time.dt and time.end are both seconds of simulated time");
  }

  void check_run_options() {
    if (c_.backend != "auto") {
      const std::vector<std::string> names = kernels::backend_names();
      if (std::find(names.begin(), names.end(), c_.backend) == names.end()) {
        std::vector<std::string> known{"auto"};
        known.insert(known.end(), names.begin(), names.end());
        std::string msg = "unknown backend " + quote(c_.backend) + nearest_suffix(c_.backend, known) +
                          "; known: ";
        for (std::size_t i = 0; i < known.size(); ++i) msg += (i ? ", " : "") + known[i];
        error("backend", msg + kernels::unknown_backend_note());
      }
    }
    if (c_.output.directory.empty()) error("output.directory", "must not be empty");
    for (const auto& [path, value] : {std::pair<const char*, const std::string&>{
                                          "output.directory", c_.output.directory},
                                      {"output.name", c_.output.name}})
      if (std::any_of(value.begin(), value.end(),
                      [](char ch) { return static_cast<unsigned char>(ch) < 0x20; }))
        error(path, "must not contain line breaks or control characters (an unclosed quote?)");
    if (c_.output.every < 0)
      error("output.every", "must be >= 0 (got " + std::to_string(c_.output.every) + ")");
    if (c_.output.name.empty())
      error("output.name", "must not be empty");
    else if (c_.output.name.find('/') != std::string::npos)
      error("output.name", "is a file name prefix and must not contain '/' (use output.directory)");
    // The index names each file as FILE:/DATASET, and XDMF readers split a heavy-data
    // reference at '|' and at the first ':'.
    else if (c_.output.name.find_first_of(":|") != std::string::npos)
      error("output.name",
            "must not contain ':' or '|': the index (<name>.xmf) refers to <name>_<step>.h5:/u, "
            "and XDMF readers split such a reference at those characters");
    // XDMF readers trim a heavy-data reference's leading white space: " a" is read as "a".
    else if (c_.output.name.front() == ' ' || c_.output.name.front() == '\t')
      error("output.name",
            "must not begin with a space: XDMF readers trim the index's file references "
            "(<name>_<step>.h5:/u) and would look for a file without it");
    // Output files <name>_<step>.h5 would be the checkpoints' own names: a checkpoint would
    // replace an output, and checkpoint.keep remove the outputs the index lists.
    else if (c_.output.name == "checkpoint")
      error("output.name",
            "'checkpoint' names the checkpoints (checkpoint_<step>.h5); choose another prefix");
    // A float widened to double holds nothing more: an fp32 run's files stay fp32.
    if (c_.output.precision == solver::Precision::fp64 && c_.precision == solver::Precision::fp32)
      error("output.precision",
            "fp64 output of an fp32 run would only widen its floats; leave it out (the output "
            "is fp32 like the run) or run with precision: fp64");
    if (c_.checkpoint.every < 0)
      error("checkpoint.every", "must be >= 0 (got " + std::to_string(c_.checkpoint.every) + ")");
    if (c_.checkpoint.keep < 0)
      error("checkpoint.keep",
            "must be >= 0 (got " + std::to_string(c_.checkpoint.keep) + "; 0 keeps every one)");
    // The heat flows are those of the conservative second-order form the steps take.
    if (c_.output.heat_flows && c_.scheme.kind != SchemeKind::order2)
      error("output.heat_flows",
            std::string("the heat flows are those of the order2 scheme's flux form; scheme is ") +
                solver::to_string(c_.scheme.kind));
    // A phase_change given but refused by the reader (its own error says why) counts as one.
    const bool phase_change_given =
        std::any_of(lines_.begin(), lines_.end(), [](const auto& key_line) {
          const std::string& key = key_line.first;
          const std::string tail = ".phase_change";
          return key.rfind("materials.", 0) == 0 && key.size() > tail.size() &&
                 key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
        });
    if (c_.output.liquid_fraction && !phase_change_given &&
        std::none_of(c_.materials.begin(), c_.materials.end(),
                     [](const solver::MaterialSpec& m) { return m.phase_change.has_value(); }))
      error("output.fields",
            "liquid_fraction is written for materials with a phase_change, and none has one "
            "(leave it out)");
  }

  // Needs a case that is otherwise valid: the stencil is built from it.
  void check_stable() {
    // Implicit methods take any dt; a steady run takes none.
    if (c_.time.method != solver::TimeMethod::explicit_euler) return;
    double limit = 0.0;
    try {
      limit = solver::max_stable_dt(solver::laplacian(c_), c_.physics.alpha);
    } catch (const std::exception& e) {
      error("scheme", std::string("cannot build the stencil: ") + e.what());
      return;
    }
    const char* where = c_.scheme.kind == SchemeKind::custom ? "scheme.weights" : "scheme";
    // A named scheme's weights are stable and, with h in range (check_grid), finite: no finite
    // limit then means alpha itself is out of range (a subnormal alpha makes h^2 / alpha inf).
    if (c_.scheme.kind != SchemeKind::custom && !(limit > 0.0 && std::isfinite(limit))) {
      error("physics.alpha", format_number(c_.physics.alpha) +
                                 " gives no finite stability limit on this grid (h^2 / alpha "
                                 "is outside double precision); express the case in other units");
      return;
    }
    if (!(limit > 0.0)) {
      error(where, "the stencil amplifies some frequency for every dt > 0 (unstable operator; "
                   "the centre weight must be negative and dominate)");
      return;
    }
    if (!c_.time.dt && !std::isfinite(limit)) {
      error(where, "all weights are zero, so dt: auto has no stability limit to follow");
      return;
    }
    const double dt = c_.time.dt ? *c_.time.dt : 0.9 * limit;
    if (c_.time.dt && dt > limit * (1.0 + 1e-12)) {
      error("time.dt", format_number(dt) + " is unstable for this scheme; the largest stable dt is " +
                           format_number_down(limit));
      return;
    }
    if (c_.time.end_time && *c_.time.end_time / dt > kMaxSteps)
      error("time.end", "needs more than 1e15 steps of dt = " + format_number(dt));
  }

  const Case& c_;
  const std::map<std::string, int>& lines_;
  std::vector<CaseError> errors_;
};

}  // namespace

namespace check {

std::vector<CaseError> run_checks(const Case& c, const std::map<std::string, int>& lines,
                                  bool check_stability, std::vector<CaseError>* warnings,
                                  ResolvedBody* body) {
  Checker checker(c, lines);
  std::vector<CaseError> errors = checker.run(check_stability, body);
  if (warnings) *warnings = std::move(checker.warnings_);
  return errors;
}

}  // namespace check

std::vector<CaseError> check_case(const Case& c, const std::map<std::string, int>& lines,
                                  bool check_stability) {
  return check::run_checks(c, lines, check_stability, nullptr);
}

std::vector<CaseError> check_case(const Case& c) {
  static const std::map<std::string, int> no_lines;
  return check_case(c, no_lines, true);
}

std::vector<CaseError> case_warnings(const Case& c, const std::map<std::string, int>& lines) {
  std::vector<CaseError> warnings;
  if (!check::run_checks(c, lines, false, &warnings).empty()) return {};
  return warnings;
}

std::vector<CaseError> case_warnings(const Case& c) {
  static const std::map<std::string, int> no_lines;
  return case_warnings(c, no_lines);
}

}  // namespace heatsim::io
