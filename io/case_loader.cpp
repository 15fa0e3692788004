// YAML -> solver::Case. The reader walks only the keys it knows (so aliases are never expanded
// and no recursion follows the document), reports every problem with its key path and line,
// and leaves ranges and cross-section consistency to check_case().
#include "case_loader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace heatsim::io {

using detail::quote;
using solver::BoundaryKind;
using solver::Case;
using solver::InitialKind;
using solver::SchemeKind;

std::string CaseError::to_string() const {
  std::string out = path.empty() ? message : path + ": " + message;
  if (line > 0) out += " (line " + std::to_string(line) + ")";
  return out;
}

std::string format_errors(const std::vector<CaseError>& errors) {
  std::string out;
  for (const CaseError& e : errors) out += e.to_string() + "\n";
  return out;
}

namespace {

const char* const kFaceNames[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

using Names = std::vector<std::string>;

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string list_names(const Names& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

int line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return quote(n.Scalar());
    default: return "nothing";
  }
}

// Quoted and block scalars are strings even when they read like numbers.
bool quoted(const YAML::Node& n) { return n.Tag() == "!"; }

// YAML 1.2 core-schema floats: [-+]digits[.digits][e[-+]digits], and .inf/.nan (also "inf",
// "nan"), which parse here so that the message can say "must be finite".
std::optional<double> parse_number(const std::string& s) {
  std::string body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.erase(0, 1);
  }
  std::string word = body;
  if (!word.empty() && word[0] == '.') word.erase(0, 1);
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (word == "inf" || word == "infinity")
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
  std::size_t i = 0, digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  // strtod gives +-HUGE_VAL on overflow, which the range checks then call non-finite.
  return std::strtod(s.c_str(), nullptr);
}

struct Field {
  YAML::Node key;
  YAML::Node value;
};
using Fields = std::map<std::string, Field>;

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  std::vector<CaseError> errors;
  std::map<std::string, int> lines;

  void read_case(const YAML::Node& root, Case& c) {
    const auto top = read_map(root, "", {"grid", "physics", "scheme", "boundary", "initial",
                                         "time", "precision", "backend", "fusion", "output",
                                         "checkpoint"});
    if (!top) return;
    const int root_line = line_of(root);
    for (const char* required : {"grid", "physics", "boundary", "initial", "time"})
      if (!top->count(required)) error_at(required, root_line, "missing required section");
    if (!top->count("grid")) c.grid.dims = 0;  // unknown: checks that need it are skipped
    if (auto f = field(*top, "grid")) read_grid(*f, c);
    if (auto f = field(*top, "physics")) read_physics(*f, c);
    if (auto f = field(*top, "scheme")) read_scheme(*f, c);
    if (auto f = field(*top, "boundary")) read_boundary(*f, c);
    if (auto f = field(*top, "initial")) read_initial(*f, c);
    if (auto f = field(*top, "time")) read_time(*f, c);
    if (auto f = field(*top, "precision")) {
      std::string s;
      if (read_choice(*f, "precision", {"fp64", "fp32"}, s))
        c.precision = s == "fp32" ? solver::Precision::fp32 : solver::Precision::fp64;
    }
    if (auto f = field(*top, "backend")) read_string(*f, "backend", c.backend);
    if (auto f = field(*top, "fusion")) read_fusion(*f, c);
    if (auto f = field(*top, "output")) read_output(*f, c);
    if (auto f = field(*top, "checkpoint")) {
      if (const auto m = read_map(*f, "checkpoint", {"every"}))
        if (auto e = field(*m, "every")) read_int(*e, "checkpoint.every", c.checkpoint.every);
    }
  }

 private:
  void error(const std::string& path, const YAML::Node& at, const std::string& message) {
    error_at(path, line_of(at), message);
  }
  void error_at(const std::string& path, int line, const std::string& message) {
    errors.push_back(CaseError{path, line, message});
  }

  static std::optional<YAML::Node> field(const Fields& f, const std::string& key) {
    const auto it = f.find(key);
    if (it == f.end()) return std::nullopt;
    return it->second.value;
  }

  // The entries of a map whose keys are among `known`. Reports a value that is not a map,
  // keys that are not names, duplicate keys (the parser keeps both silently) and unknown keys
  // with the nearest known one.
  std::optional<Fields> read_map(const YAML::Node& n, const std::string& path, const Names& known,
                                 const std::string& context = "") {
    if (!n.IsMap()) {
      error(path, n, "expected a map with keys " + list_names(known) + ", got " + describe(n));
      return std::nullopt;
    }
    Fields fields;
    std::map<std::string, int> first_line;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        error(path, key, "keys must be names, got " + describe(key) + " as a key");
        continue;
      }
      const std::string& name = key.Scalar();
      const std::string p = join(path, name);
      const auto seen = first_line.find(name);
      if (seen != first_line.end()) {
        error(p, key,
              "duplicate key " + quote(name) + " (first given on line " +
                  std::to_string(seen->second) + ")");
        continue;
      }
      first_line.emplace(name, line_of(key));
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        error(p, key,
              "unknown key " + quote(name) + context + detail::nearest_suffix(name, known) +
                  "; known keys: " + list_names(known));
        continue;
      }
      lines[p] = line_of(key);
      fields.emplace(name, Field{key, it->second});
    }
    return fields;
  }

  void require(const Fields& f, const std::string& path, const std::string& key,
               const YAML::Node& parent, const std::string& context = "") {
    if (!f.count(key)) error(join(path, key), parent, "missing required key" + context);
  }

  bool scalar(const YAML::Node& n, const std::string& path, const char* what) {
    if (n.IsScalar()) return true;
    error(path, n, std::string("expected ") + what + ", got " + describe(n));
    return false;
  }

  bool read_number(const YAML::Node& n, const std::string& path, double& out) {
    if (!scalar(n, path, "a number")) return false;
    const std::optional<double> v = quoted(n) ? std::nullopt : parse_number(n.Scalar());
    if (!v) {
      error(path, n,
            std::string("expected a number, got ") + (quoted(n) ? "the string " : "") +
                quote(n.Scalar()));
      return false;
    }
    out = *v;
    return true;
  }

  template <typename Int>
  bool read_int(const YAML::Node& n, const std::string& path, Int& out) {
    if (!scalar(n, path, "an integer")) return false;
    const std::string& s = n.Scalar();
    std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    const bool digits_only =
        i < s.size() && std::all_of(s.begin() + static_cast<long>(i), s.end(),
                                    [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (quoted(n) || !digits_only) {
      error(path, n,
            std::string("expected an integer, got ") + (quoted(n) ? "the string " : "") +
                quote(s));
      return false;
    }
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE || v < static_cast<long long>(std::numeric_limits<Int>::min()) ||
        v > static_cast<long long>(std::numeric_limits<Int>::max())) {
      error(path, n, "integer " + quote(s) + " is out of range");
      return false;
    }
    out = static_cast<Int>(v);
    return true;
  }

  bool read_string(const YAML::Node& n, const std::string& path, std::string& out) {
    if (!scalar(n, path, "a string") || !quote_closed(n, path)) return false;
    out = n.Scalar();
    return true;
  }

  // The parser lets a quoted scalar run to the end of the text when its closing quote is
  // missing, swallowing the keys after it; find the closing quote ourselves.
  bool quote_closed(const YAML::Node& n, const std::string& path) {
    const YAML::Mark m = n.Mark();
    if (!quoted(n) || m.is_null() || m.pos < 0) return true;
    std::size_t i = static_cast<std::size_t>(m.pos);
    if (i >= text_.size() || (text_[i] != '"' && text_[i] != '\'')) return true;
    const char q = text_[i];
    for (++i; i < text_.size(); ++i) {
      if (q == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == q) {
        if (q == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is an escaped quote
          continue;
        }
        return true;
      }
    }
    error(path, n, "the quoted string that starts here is never closed");
    return false;
  }

  bool read_choice(const YAML::Node& n, const std::string& path, const Names& choices,
                   std::string& out) {
    if (!scalar(n, path, ("one of " + list_names(choices)).c_str()) || !quote_closed(n, path))
      return false;
    const std::string& s = n.Scalar();
    if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
      error(path, n,
            "unknown value " + quote(s) + detail::nearest_suffix(s, choices) + "; expected " +
                list_names(choices));
      return false;
    }
    out = s;
    return true;
  }

  // A list with one entry per axis. `dims` 0 when the grid's dimension is not known; a scalar
  // is accepted for every axis when `broadcast` is set.
  template <typename T, typename ReadOne>
  bool read_axis_list(const YAML::Node& n, const std::string& path, bool broadcast,
                      std::array<T, 3>& out, ReadOne read_one) {
    if (broadcast && n.IsScalar()) {
      T v{};
      if (!read_one(n, path, v)) return false;
      out.fill(v);
      return true;
    }
    if (!n.IsSequence()) {
      error(path, n,
            "expected a list with one value per axis" +
                (dims_ > 0 ? " (" + std::to_string(dims_) + " for a " + std::to_string(dims_) +
                                 "D grid)"
                           : std::string()) +
                ", got " + describe(n));
      return false;
    }
    const std::size_t size = n.size();
    if (dims_ > 0 && size != static_cast<std::size_t>(dims_)) {
      error(path, n,
            "expected " + std::to_string(dims_) + " values (one per axis of the " +
                std::to_string(dims_) + "D grid, grid.dims is " + std::to_string(dims_) +
                "), got " + std::to_string(size));
      return false;
    }
    if (size < 1 || size > 3) {
      error(path, n, "expected 1 to 3 values (one per axis), got " + std::to_string(size));
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < size; ++i) {
      const YAML::Node item = n[i];
      lines[indexed(path, i)] = line_of(item);
      ok = read_one(item, indexed(path, i), out[i]) && ok;
    }
    // The list keeps its defaults, so checks of its other entries would only add noise.
    if (!ok) error_suppressed_.push_back(path);
    return ok;
  }

  bool read_numbers(const YAML::Node& n, const std::string& path, bool broadcast,
                    std::array<double, 3>& out) {
    return read_axis_list(n, path, broadcast, out,
                          [this](const YAML::Node& m, const std::string& p, double& v) {
                            return read_number(m, p, v);
                          });
  }

  void read_grid(const YAML::Node& n, Case& c) {
    const auto f = read_map(n, "grid", {"dims", "n", "length"});
    if (!f) {
      c.grid.dims = 0;  // unknown: the checks that depend on it are skipped
      return;
    }
    require(*f, "grid", "dims", n, " (1, 2 or 3)");
    require(*f, "grid", "n", n, " (points per axis)");
    int dims = 0;
    if (auto d = field(*f, "dims"); d && read_int(*d, "grid.dims", dims)) {
      if (dims < 1 || dims > 3) {
        error("grid.dims", *d, "must be 1, 2 or 3 (got " + std::to_string(dims) + ")");
        dims = 0;
      }
    }
    dims_ = dims;
    c.grid.dims = dims;
    if (auto v = field(*f, "n")) {
      std::array<std::int64_t, 3> points{1, 1, 1};
      if (read_axis_list(*v, "grid.n", false, points,
                         [this](const YAML::Node& m, const std::string& p, std::int64_t& out) {
                           return read_int(m, p, out);
                         }))
        c.grid.n = points;
    }
    if (auto v = field(*f, "length")) read_numbers(*v, "grid.length", true, c.grid.length);
    for (int a = std::max(dims, 1); a < 3; ++a) {
      c.grid.n[static_cast<std::size_t>(a)] = 1;
      if (dims > 0) c.grid.length[static_cast<std::size_t>(a)] = 1.0;
    }
  }

  void read_physics(const YAML::Node& n, Case& c) {
    const auto f = read_map(n, "physics", {"alpha", "source"});
    if (!f) return;
    require(*f, "physics", "alpha", n, " (the diffusivity, > 0)");
    if (auto v = field(*f, "alpha")) read_number(*v, "physics.alpha", c.physics.alpha);
    if (auto v = field(*f, "source")) read_number(*v, "physics.source", c.physics.source);
  }

  void read_scheme(const YAML::Node& n, Case& c) {
    const Names names{"order2", "order4", "order6", "isotropic", "custom"};
    std::string kind;
    if (n.IsScalar()) {
      if (!read_choice(n, "scheme", names, kind)) return;
      if (kind == "custom") {
        error("scheme", n, "custom needs a map {type: custom, radius: r, weights: [...]}");
        return;
      }
      c.scheme.kind = *solver::scheme_from_string(kind);
      return;
    }
    const auto f = read_map(n, "scheme", {"type", "radius", "weights"});
    if (!f) return;
    require(*f, "scheme", "type", n);
    const auto type = field(*f, "type");
    if (!type || !read_choice(*type, "scheme.type", names, kind)) return;
    c.scheme.kind = *solver::scheme_from_string(kind);
    if (kind != "custom") {
      for (const char* key : {"radius", "weights"})
        if (f->count(key))
          error(join("scheme", key), f->at(key).key,
                "only a custom scheme takes " + std::string(key));
      return;
    }
    require(*f, "scheme", "radius", n, " (1, 2 or 3)");
    require(*f, "scheme", "weights", n, " ((2*radius+1)^dims numbers)");
    if (auto v = field(*f, "radius")) read_int(*v, "scheme.radius", c.scheme.radius);
    if (auto v = field(*f, "weights")) {
      if (!v->IsSequence()) {
        error("scheme.weights", *v, "expected a flat list of numbers, got " + describe(*v));
        return;
      }
      // At most 7^3 weights exist; a longer list is refused without reading it all.
      const std::size_t size = v->size();
      if (size > 343) {
        error("scheme.weights", *v,
              "expected at most 343 weights (radius 3 in 3D), got " + std::to_string(size));
        return;
      }
      std::vector<double> w(size, 0.0);
      bool ok = true;
      for (std::size_t i = 0; i < size; ++i) {
        const YAML::Node item = (*v)[i];
        const std::string p = indexed("scheme.weights", i);
        lines[p] = line_of(item);
        if (item.IsSequence()) {
          error(p, item, "expected a number, got a list (give the weights as one flat list, "
                         "ordered [z][y][x] with x fastest)");
          ok = false;
          continue;
        }
        ok = read_number(item, p, w[i]) && ok;
      }
      if (ok) c.scheme.weights = std::move(w);
    }
  }

  // One face's condition into `face`; path is boundary.<face> (or boundary.all).
  bool read_face(const YAML::Node& n, const std::string& path, solver::BoundaryFace& face) {
    const Names types{"dirichlet", "neumann", "periodic"};
    if (!n.IsMap()) {
      error(path, n, "expected a map {type: dirichlet|neumann|periodic, ...}, got " + describe(n));
      return false;
    }
    // The type decides which keys are allowed, so find it first.
    std::string kind;
    bool has_type = false;
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "type") {
        has_type = true;
        if (!read_choice(it->second, join(path, "type"), types, kind)) return false;
        break;
      }
    if (!has_type) {
      error(join(path, "type"), n, "missing required key (dirichlet, neumann or periodic)");
      return false;
    }
    Names known{"type"};
    if (kind == "dirichlet") known = {"type", "value", "amplitude", "frequency"};
    if (kind == "neumann") known = {"type", "flux"};
    const auto f = read_map(n, path, known, " for a " + kind + " face");
    if (!f) return false;
    bool ok = true;
    face = solver::BoundaryFace{};
    if (kind == "dirichlet") {
      face.kind = BoundaryKind::dirichlet;
      if (auto v = field(*f, "value")) ok = read_number(*v, join(path, "value"), face.value) && ok;
      if (auto v = field(*f, "amplitude"))
        ok = read_number(*v, join(path, "amplitude"), face.amplitude) && ok;
      if (auto v = field(*f, "frequency"))
        ok = read_number(*v, join(path, "frequency"), face.frequency) && ok;
    } else if (kind == "neumann") {
      face.kind = BoundaryKind::neumann;
      if (auto v = field(*f, "flux")) ok = read_number(*v, join(path, "flux"), face.value) && ok;
    } else {
      face.kind = BoundaryKind::periodic;
    }
    return ok;
  }

  void read_boundary(const YAML::Node& n, Case& c) {
    Names known{"all"};
    for (const char* face : kFaceNames) known.push_back(face);
    const auto f = read_map(n, "boundary", known);
    if (!f) return;
    // A face that fails to read still counts as given: one error per problem.
    std::array<bool, 6> given{};
    const bool has_all = f->count("all") > 0;
    solver::BoundaryFace all_face;
    bool all_ok = false;
    if (has_all) all_ok = read_face(f->at("all").value, "boundary.all", all_face);
    for (int face = 0; face < 6; ++face) {
      const std::string p = std::string("boundary.") + kFaceNames[face];
      const auto it = f->find(kFaceNames[face]);
      if (it != f->end()) {
        if (dims_ > 0 && face >= 2 * dims_) {
          error(p, it->second.key,
                "the grid is " + std::to_string(dims_) + "D; it has no " + kFaceNames[face] +
                    " face");
          continue;
        }
        given[static_cast<std::size_t>(face)] = true;
        solver::BoundaryFace bf;
        if (read_face(it->second.value, p, bf)) c.boundary[static_cast<std::size_t>(face)] = bf;
      } else if (has_all) {
        given[static_cast<std::size_t>(face)] = true;
        faces_from_all.push_back(kFaceNames[face]);
        if (all_ok) c.boundary[static_cast<std::size_t>(face)] = all_face;
        // Checks of this face point at the lines of `all`.
        for (const auto& [key, line] : std::map<std::string, int>(lines))
          if (key.rfind("boundary.all", 0) == 0) lines.emplace(p + key.substr(12), line);
      }
    }
    for (int face = 0; face < 2 * std::max(dims_, 0); ++face)
      if (!given[static_cast<std::size_t>(face)])
        error(std::string("boundary.") + kFaceNames[face], n,
              "missing: give a condition for every face of the active axes (or 'all')");
    if (has_all && !all_ok) {
      // Faces taken from a broken 'all' keep defaults; their checks must not add noise.
      for (int face = 0; face < 6; ++face)
        if (!f->count(kFaceNames[face]))
          error_suppressed_.push_back(std::string("boundary.") + kFaceNames[face]);
    }
  }

  void read_initial(const YAML::Node& n, Case& c) {
    const Names types{"constant", "gaussian", "modes", "box", "expression", "file"};
    if (!n.IsMap()) {
      error("initial", n,
            "expected a map {type: constant|gaussian|modes|box|expression|file, ...}, got " +
                describe(n));
      return;
    }
    std::string kind;
    bool has_type = false;
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "type") {
        has_type = true;
        if (!read_choice(it->second, "initial.type", types, kind)) {
          error_suppressed_.push_back("initial");
          return;
        }
        break;
      }
    if (!has_type) {
      error("initial.type", n,
            "missing required key (constant, gaussian, modes, box, expression or file)");
      error_suppressed_.push_back("initial");
      return;
    }
    auto& ic = c.initial;
    const std::string ctx = " for a " + kind + " initial condition";
    if (kind == "constant") {
      ic.kind = InitialKind::constant;
      const auto f = read_map(n, "initial", {"type", "value"}, ctx);
      if (!f) return;
      if (auto v = field(*f, "value")) read_number(*v, "initial.value", ic.value);
    } else if (kind == "gaussian") {
      ic.kind = InitialKind::gaussian;
      const auto f =
          read_map(n, "initial", {"type", "amplitude", "center", "width", "background"}, ctx);
      if (!f) return;
      require(*f, "initial", "width", n, " (the standard deviation, > 0)");
      if (auto v = field(*f, "amplitude")) read_number(*v, "initial.amplitude", ic.amplitude);
      if (auto v = field(*f, "background")) read_number(*v, "initial.background", ic.background);
      if (auto v = field(*f, "width")) read_number(*v, "initial.width", ic.width);
      // Default centre: the middle of the domain.
      for (std::size_t a = 0; a < 3; ++a) ic.center[a] = 0.5 * c.grid.length[a];
      if (auto v = field(*f, "center")) read_numbers(*v, "initial.center", false, ic.center);
    } else if (kind == "box") {
      ic.kind = InitialKind::box;
      const auto f =
          read_map(n, "initial", {"type", "lower", "upper", "value", "background"}, ctx);
      if (!f) return;
      require(*f, "initial", "lower", n, " (the box's lower corner)");
      require(*f, "initial", "upper", n, " (the box's upper corner)");
      ic.value = 1.0;
      if (auto v = field(*f, "value")) read_number(*v, "initial.value", ic.value);
      if (auto v = field(*f, "background")) read_number(*v, "initial.background", ic.background);
      bool corners = true;
      if (auto v = field(*f, "lower")) corners = read_numbers(*v, "initial.lower", false, ic.lower) && corners;
      if (auto v = field(*f, "upper")) corners = read_numbers(*v, "initial.upper", false, ic.upper) && corners;
      if (!corners || !f->count("lower") || !f->count("upper")) {
        error_suppressed_.push_back("initial.lower");
        error_suppressed_.push_back("initial.upper");
      }
    } else if (kind == "expression") {
      ic.kind = InitialKind::expression;
      const auto f = read_map(n, "initial", {"type", "value"}, ctx);
      if (!f) return;
      require(*f, "initial", "value", n,
              " (u at t = 0 as a formula of x, y, z, e.g. \"sin(pi*x)\")");
      if (auto v = field(*f, "value")) read_string(*v, "initial.value", ic.expression);
    } else if (kind == "file") {
      ic.kind = InitialKind::file;
      const auto f = read_map(n, "initial", {"type", "path", "dataset"}, ctx);
      if (!f) return;
      require(*f, "initial", "path", n, " (an HDF5 file, e.g. out/run/field_00001000.h5)");
      if (auto v = field(*f, "path")) read_string(*v, "initial.path", ic.path);
      if (auto v = field(*f, "dataset")) read_string(*v, "initial.dataset", ic.dataset);
    } else {
      ic.kind = InitialKind::modes;
      const auto f = read_map(n, "initial", {"type", "terms"}, ctx);
      if (!f) return;
      require(*f, "initial", "terms", n, " (a list of {amplitude, k, functions})");
      if (auto v = field(*f, "terms")) read_terms(*v, ic);
    }
  }

  void read_terms(const YAML::Node& n, solver::InitialSpec& ic) {
    if (!n.IsSequence()) {
      error("initial.terms", n, "expected a list of {amplitude, k, functions}, got " + describe(n));
      return;
    }
    // Terms are few; a long list is a mistake and is not walked.
    constexpr std::size_t kMaxTerms = 1000;
    if (n.size() > kMaxTerms) {
      error("initial.terms", n,
            "expected at most " + std::to_string(kMaxTerms) + " terms, got " +
                std::to_string(n.size()));
      return;
    }
    if (n.size() == 0) error("initial.terms", n, "needs at least one term");
    for (std::size_t t = 0; t < n.size(); ++t) {
      const std::string p = indexed("initial.terms", t);
      const YAML::Node item = n[t];
      lines[p] = line_of(item);
      const auto f = read_map(item, p, {"amplitude", "k", "functions"});
      if (!f) continue;
      require(*f, p, "k", item, " (one wave number per axis)");
      solver::ModeTerm term;
      if (auto v = field(*f, "amplitude")) read_number(*v, p + ".amplitude", term.amplitude);
      if (auto v = field(*f, "k"))
        read_axis_list(*v, p + ".k", false, term.k,
                       [this](const YAML::Node& m, const std::string& q, int& out) {
                         return read_int(m, q, out);
                       });
      if (auto v = field(*f, "functions")) {
        std::array<std::string, 3> names{"sin", "sin", "sin"};
        if (read_axis_list(*v, p + ".functions", false, names,
                           [this](const YAML::Node& m, const std::string& q, std::string& out) {
                             return read_choice(m, q, {"sin", "cos"}, out);
                           }))
          for (std::size_t a = 0; a < 3; ++a) term.cosine[a] = names[a] == "cos";
      }
      ic.modes.push_back(term);
    }
  }

  void read_time(const YAML::Node& n, Case& c) {
    const auto f = read_map(n, "time", {"dt", "steps", "end"});
    if (!f) {
      error_suppressed_.push_back("time");
      return;
    }
    if (auto v = field(*f, "dt")) {
      double dt = 0.0;
      if (v->IsScalar() && v->Scalar() == "auto") {
        if (quote_closed(*v, "time.dt")) c.time.dt.reset();
      } else if (v->IsScalar() && (quoted(*v) || !parse_number(v->Scalar()))) {
        error("time.dt", *v, "expected a number or 'auto', got " + describe(*v) +
                                 detail::nearest_suffix(v->Scalar(), {"auto"}));
      } else if (read_number(*v, "time.dt", dt)) {
        c.time.dt = dt;
      }
    }
    if (auto v = field(*f, "steps")) {
      std::int64_t steps = 0;
      c.time.steps = read_int(*v, "time.steps", steps) ? steps : 0;
    }
    if (auto v = field(*f, "end")) {
      double end = 1.0;
      read_number(*v, "time.end", end);
      c.time.end_time = end;
    }
  }

  // `fusion: k` (steps per pass, 1..kMaxFusion) or `fusion: auto` (stored as 0).
  void read_fusion(const YAML::Node& v, Case& c) {
    if (v.IsScalar() && v.Scalar() == "auto") {
      if (quote_closed(v, "fusion")) c.fusion = 0;
      return;
    }
    if (v.IsScalar() && (quoted(v) || !parse_number(v.Scalar()))) {
      error("fusion", v, "expected a step count or 'auto', got " + describe(v) +
                             detail::nearest_suffix(v.Scalar(), {"auto"}));
      return;
    }
    int k = 1;
    if (!read_int(v, "fusion", k)) return;
    if (k < 1 || k > 16)
      error("fusion", v, "must be between 1 and 16, or auto (got " + std::to_string(k) + ")");
    else
      c.fusion = k;
  }

  void read_output(const YAML::Node& n, Case& c) {
    const auto f = read_map(n, "output", {"directory", "every", "name"});
    if (!f) return;
    if (auto v = field(*f, "directory")) read_string(*v, "output.directory", c.output.directory);
    if (auto v = field(*f, "every")) read_int(*v, "output.every", c.output.every);
    if (auto v = field(*f, "name")) read_string(*v, "output.name", c.output.name);
  }

  const std::string& text_;
  int dims_ = 0;

 public:
  // Paths whose semantic checks would only repeat or follow from an error already reported.
  std::vector<std::string> error_suppressed_;
  // Faces that took their condition from boundary.all; their errors are reported there.
  std::vector<std::string> faces_from_all;
};

// boundary.x-.value -> boundary.all.value when x- came from 'all'.
void point_at_all(std::vector<CaseError>& errors, const std::vector<std::string>& faces) {
  std::vector<CaseError> kept;
  for (CaseError& e : errors) {
    for (const std::string& face : faces) {
      const std::string prefix = "boundary." + face + ".";
      if (e.path.rfind(prefix, 0) == 0) e.path = "boundary.all." + e.path.substr(prefix.size());
    }
    const bool repeat = std::any_of(kept.begin(), kept.end(), [&](const CaseError& k) {
      return k.path == e.path && k.message == e.message;
    });
    if (!repeat) kept.push_back(std::move(e));
  }
  errors = std::move(kept);
}

// Counts the documents without building them. YAML::LoadAll cannot be used: yaml-cpp 0.7 leaves
// a ',' at the top level of a block document unconsumed and then returns empty documents
// forever from the same place, so a document that starts where the previous one started
// means the parser is stuck there.
struct DocumentScan {
  int documents = 0;
  int second_line = 0;
  int stuck_line = -1;
};

class DocumentCounter : public YAML::EventHandler {
 public:
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

DocumentScan scan_documents(const std::string& text) {
  DocumentScan scan;
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  int previous_pos = -1;
  // Two documents are enough to refuse the text; the third tells a stuck parser from them.
  while (scan.documents < 3 && parser.HandleNextDocument(counter)) {
    if (counter.start.pos == previous_pos) {
      scan.stuck_line = counter.start.line + 1;
      return scan;
    }
    previous_pos = counter.start.pos;
    if (++scan.documents == 2) scan.second_line = counter.start.line + 1;
  }
  return scan;
}

// `a` lies inside `b` or `b` inside `a` (whole path components).
bool overlaps(const std::string& a, const std::string& b) {
  const auto inside = [](const std::string& p, const std::string& q) {
    return p.size() >= q.size() && p.compare(0, q.size(), q) == 0 &&
           (p.size() == q.size() || p[q.size()] == '.' || p[q.size()] == '[');
  };
  return inside(a, b) || inside(b, a);
}

void cap_errors(std::vector<CaseError>& errors) {
  if (errors.size() <= kMaxReportedErrors) return;
  const std::size_t more = errors.size() - kMaxReportedErrors;
  errors.resize(kMaxReportedErrors);
  errors.push_back({"", 0, "... and " + std::to_string(more) + " more errors"});
}

}  // namespace

LoadResult load_case_text(const std::string& text, const std::string& origin) {
  LoadResult result;
  result.errors = detail::check_text(text);
  if (!result.errors.empty()) return result;

  YAML::Node root;
  try {
    const DocumentScan scan = scan_documents(text);
    if (scan.stuck_line >= 0) {
      result.errors.push_back({"", scan.stuck_line,
                               "the case is not valid YAML: a ',' outside [ ] or { } cannot "
                               "start a value"});
      return result;
    }
    if (scan.documents > 1) {
      result.errors.push_back({"", scan.second_line,
                               "the case holds more than one YAML document ('---'); a case is "
                               "a single document"});
      return result;
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    result.errors.push_back({"", line, "the case is not valid YAML: " + e.msg});
    return result;
  } catch (const std::exception& e) {
    result.errors.push_back({"", 0, std::string("the case could not be parsed: ") + e.what()});
    return result;
  }
  if (!root.IsDefined() || root.IsNull()) {
    result.errors.push_back(
        {"", 0, "the case is empty; expected a map with sections grid, physics, boundary, "
                "initial and time"});
    return result;
  }
  if (!root.IsMap()) {
    result.errors.push_back({"", line_of(root),
                             "the top level must be a map of sections (grid, physics, boundary, "
                             "initial, time, ...), got " + describe(root)});
    return result;
  }

  Case c;
  Reader reader(text);
  try {
    reader.read_case(root, c);
  } catch (const YAML::Exception& e) {
    reader.errors.push_back({"", e.mark.is_null() ? 0 : e.mark.line + 1,
                             "the case could not be read: " + e.msg});
  } catch (const std::exception& e) {
    reader.errors.push_back({"", 0, std::string("the case could not be read: ") + e.what()});
  }
  const bool structure_ok = reader.errors.empty();
  std::vector<CaseError> semantic;
  try {
    semantic = check_case(c, reader.lines, structure_ok);
  } catch (const std::exception& e) {
    semantic.push_back({"", 0, std::string("the case could not be checked: ") + e.what()});
  }
  point_at_all(semantic, reader.faces_from_all);
  // A value that failed to read keeps its default; checks on it would only add noise.
  std::vector<std::string> suppressed = reader.error_suppressed_;
  for (const CaseError& e : reader.errors) suppressed.push_back(e.path);
  for (CaseError& e : semantic) {
    const bool repeat = std::any_of(suppressed.begin(), suppressed.end(), [&](const std::string& p) {
      return !p.empty() && overlaps(e.path, p);
    });
    if (!repeat) reader.errors.push_back(std::move(e));
  }
  result.errors = std::move(reader.errors);
  std::stable_sort(result.errors.begin(), result.errors.end(),
                   [](const CaseError& a, const CaseError& b) {
                     const int la = a.line > 0 ? a.line : INT_MAX;
                     const int lb = b.line > 0 ? b.line : INT_MAX;
                     return la < lb;
                   });
  cap_errors(result.errors);
  if (result.errors.empty()) {
    c.source_text = text;
    c.source_path = origin;
    result.value = std::move(c);
  }
  return result;
}

LoadResult load_case_file(const std::string& path) {
  LoadResult result;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    result.errors.push_back({"", 0, "cannot open the case file '" + path + "': " +
                                        std::strerror(errno)});
    return result;
  }
  if (S_ISDIR(info.st_mode)) {
    result.errors.push_back({"", 0, "'" + path + "' is a directory, not a case file"});
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    result.errors.push_back({"", 0, "cannot open the case file '" + path + "'"});
    return result;
  }
  // Read at most one byte past the limit: enough to refuse a large file without loading it.
  std::string text(kMaxCaseBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    result.errors.push_back({"", 0, "error reading the case file '" + path + "'"});
    return result;
  }
  if (text.size() > kMaxCaseBytes) {
    result.errors.push_back({"", 0, "the case file '" + path +
                                        "' is larger than the limit of 1 MiB (1048576 bytes)"});
    return result;
  }
  result = load_case_text(text, path);
  return result;
}

}  // namespace heatsim::io
