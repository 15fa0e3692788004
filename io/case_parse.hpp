// The case reader's shared parts (internal to io/): the Reader that walks a YAML case into a
// solver::Case, its generic helpers (maps with known keys, numbers, integers, strings, choices,
// per-axis lists) and the message helpers. Each section of the case is read in its own file
// (case_grid.cpp, case_boundary.cpp, ...); load_case_text in case_loader.cpp drives them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "case_loader.hpp"

namespace heatsim::io::parse {

using solver::Case;
using Names = std::vector<std::string>;

inline const char* const kFaceNames[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

// "a.b" (or "b" at the top level).
std::string join(const std::string& path, const std::string& key);
// "a[3]".
std::string indexed(const std::string& path, std::size_t i);
// "a, b or c".
std::string list_names(const Names& names);
// The node's 1-based line; 0 when unknown.
int line_of(const YAML::Node& n);
// "a map", "a list", "'text'" or "nothing", for "expected ..., got ..." messages.
std::string describe(const YAML::Node& n);
// describe() with a map's or list's text as written, cut at about 40 characters:
// "a map {T: 300}", "a list [300, 310]", "the string '300'" (quoted), "'abc'".
std::string describe_value(const YAML::Node& n);
// Quoted and block scalars are strings even when they read like numbers.
inline bool quoted(const YAML::Node& n) { return n.Tag() == "!"; }
// YAML 1.2 core-schema floats, and .inf/.nan (also "inf", "nan"), which parse here so that
// the message can say "must be finite"; nullopt for anything else.
std::optional<double> parse_number(const std::string& s);

struct Field {
  YAML::Node key;
  YAML::Node value;
};
using Fields = std::map<std::string, Field>;

// Walks only the keys it knows (so aliases are never expanded and no recursion follows the
// document) and reports every problem with its key path and line. Ranges and consistency
// between sections are left to check_case().
class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  std::vector<CaseError> errors;
  std::map<std::string, int> lines;
  // Paths whose semantic checks would only repeat or follow from an error already reported.
  std::vector<std::string> error_suppressed_;
  // Faces that took their condition from boundary.all; their errors are reported there.
  std::vector<std::string> faces_from_all;
  // The line of the first quoted string that is never closed (0: none). The parser runs it to
  // the end of the text, so nothing after it was read.
  int unclosed_quote_line = 0;
  // Keys an unknown key's error offered as its fix ("did you mean"): require() does not report
  // them missing as well.
  std::vector<std::string> suggested_;

  void read_case(const YAML::Node& root, solver::Case& c);  // case_loader.cpp

 private:
  // Sections, one file each.
  void read_grid(const YAML::Node& n, solver::Case& c);      // case_grid.cpp
  void read_physics(const YAML::Node& n, solver::Case& c);   // case_physics.cpp
  void read_scheme(const YAML::Node& n, solver::Case& c);    // case_physics.cpp
  void read_boundary(const YAML::Node& n, solver::Case& c);  // case_boundary.cpp
  // `typed`, when given, is set where the face's type was read (`face` then holds it).
  bool read_face(const YAML::Node& n, const std::string& path, solver::BoundaryFace& face,
                 bool surface = false, bool* typed = nullptr);
  // A face whose condition could not be read: insulated, so that the checks that look at the
  // faces' kinds (a void reaching a Dirichlet face) report nothing that only the default
  // Dirichlet face would cause. The case is refused for the face's own error anyway.
  static void unread_face(solver::BoundaryFace& face);
  void read_initial(const YAML::Node& n, solver::Case& c);  // case_initial.cpp
  void read_terms(const YAML::Node& n, solver::InitialSpec& ic);
  void read_time(const YAML::Node& n, solver::Case& c);  // case_run.cpp
  void read_fusion(const YAML::Node& v, solver::Case& c);
  void read_output(const YAML::Node& n, solver::Case& c);
  void read_output_fields(const YAML::Node& n, solver::Case& c);
  void read_materials(const YAML::Node& n, solver::Case& c);  // case_materials.cpp
  // A material property: a number, a [[T, value], ...] table, or (with `axes`) a list of one
  // value per active axis.
  bool read_property(const YAML::Node& n, const std::string& path, const char* what,
                     double& value, std::vector<std::array<double, 2>>& table,
                     std::array<double, 3>* axes);
  void read_phase_change(const YAML::Node& n, const std::string& path, solver::MaterialSpec& m);
  void read_regions(const YAML::Node& n, solver::Case& c);
  void read_contacts(const YAML::Node& n, solver::Case& c);
  void read_region_file(const YAML::Node& n, const std::string& path, solver::RegionSpec& r);
  void read_sources(const YAML::Node& n, solver::Case& c);  // case_sources.cpp
  void read_probes(const YAML::Node& n, solver::Case& c);   // case_probes.cpp

 public:
  // Generic helpers (case_parse.cpp), shared by the sections.
  // An empty value (`regions:` with nothing after it) is a null node whose mark is the next
  // token's, often a line or more below: its key's own line is the one to name.
  void error(const std::string& path, const YAML::Node& at, const std::string& message) {
    const auto key = at.IsNull() ? lines.find(path) : lines.end();
    error_at(path, key != lines.end() ? key->second : line_of(at), message);
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
                                 const std::string& context = "");

  void require(const Fields& f, const std::string& path, const std::string& key,
               const YAML::Node& parent, const std::string& context = "");

  bool scalar(const YAML::Node& n, const std::string& path, const char* what);

  // A finite or non-finite number (the range checks judge it). `expected` says what the key
  // takes when it is anything else ("a number (W/(m^2 K), >= 0)"); the message names what
  // was found: `expected a number, got a map {T: 300}`.
  bool read_number(const YAML::Node& n, const std::string& path, double& out,
                   const std::string& expected = "a number");

  template <typename Int>
  bool read_int(const YAML::Node& n, const std::string& path, Int& out) {
    if (!scalar(n, path, "an integer") || !quote_closed(n, path)) return false;
    const std::string& s = n.Scalar();
    std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    const bool digits_only =
        i < s.size() && std::all_of(s.begin() + static_cast<long>(i), s.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch));
        });
    if (quoted(n) || !digits_only) {
      error(path, n,
            std::string("expected an integer, got ") + (quoted(n) ? "the string " : "") +
                detail::quote(s));
      return false;
    }
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE || v < static_cast<long long>(std::numeric_limits<Int>::min()) ||
        v > static_cast<long long>(std::numeric_limits<Int>::max())) {
      error(path, n, "integer " + detail::quote(s) + " is out of range");
      return false;
    }
    out = static_cast<Int>(v);
    return true;
  }

  bool read_string(const YAML::Node& n, const std::string& path, std::string& out);

  // true or false, written so (YAML's yes/no/on/off are refused as ambiguous).
  bool read_bool(const YAML::Node& n, const std::string& path, bool& out);

  // The parser lets a quoted scalar run to the end of the text when its closing quote is
  // missing, swallowing the keys after it; find the closing quote ourselves.
  bool quote_closed(const YAML::Node& n, const std::string& path);

  bool read_choice(const YAML::Node& n, const std::string& path, const Names& choices,
                   std::string& out);

  // A list with one entry per axis. `dims_` 0 when the grid's dimension is not known; a
  // scalar is accepted for every axis when `broadcast` is set.
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
                (dims_ > 0
                     ? " (" + std::to_string(dims_) + " for a " + std::to_string(dims_) + "D grid)"
                     : std::string()) +
                ", got " + describe(n));
      return false;
    }
    const std::size_t size = n.size();
    if (dims_ > 0 && size != static_cast<std::size_t>(dims_)) {
      error(path, n,
            "expected " + std::to_string(dims_) + (dims_ == 1 ? " value" : " values") +
                " (one per axis of the " + std::to_string(dims_) + "D grid, grid.dims is " +
                std::to_string(dims_) + "), got " + std::to_string(size));
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
                    std::array<double, 3>& out);

  // The entries of a map whose keys are names the case chooses (materials, probe points), in
  // the order written. Reports a value that is not a map, keys that are not names (or empty)
  // and duplicate keys; `what` says what the map holds ("materials").
  std::optional<std::vector<std::pair<std::string, Field>>> read_entries(const YAML::Node& n,
                                                                         const std::string& path,
                                                                         const std::string& what);

  // The keys of map `n` in the order written: a key that is not a name (not a scalar, or empty
  // when `allow_empty` is false) or that repeats an earlier one is reported with its line; every
  // other one is handed to take(name, its key path, its Field).
  template <typename Take>
  void for_each_key(const YAML::Node& n, const std::string& path, bool allow_empty, Take take) {
    std::map<std::string, int> first_line;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar() || (!allow_empty && key.Scalar().empty())) {
        error(path, key, "keys must be names, got " + describe(key) + " as a key");
        continue;
      }
      const std::string& name = key.Scalar();
      const std::string p = join(path, name);
      const auto seen = first_line.find(name);
      if (seen != first_line.end()) {
        error(p, key,
              "duplicate key " + detail::quote(name) + " (first given on line " +
                  std::to_string(seen->second) + ")");
        continue;
      }
      first_line.emplace(name, line_of(key));
      take(name, p, Field{key, it->second});
    }
  }

  // Where a region or source applies (case_shape.cpp): at most one of `box`, `ball`, `where`
  // among `f` (none: the whole domain). `file` shapes are read by their owners. False when
  // a shape was given but could not be read.
  bool read_shape(const Fields& f, const std::string& path, solver::ShapeSpec& shape);

  // A value over time (case_shape.cpp): a number (constant), a list of [time, value] pairs
  // (a piecewise-linear table) or {value, amplitude, frequency} (value + amplitude *
  // sin(2 pi frequency t)); `value` defaults to `default_value` in the map form.
  bool read_schedule(const YAML::Node& n, const std::string& path, double default_value,
                     kernels::Schedule& out);

 private:
  const std::string& text_;
  int dims_ = 0;
  bool has_materials_ = false;  // physics.alpha is then not used
};

}  // namespace heatsim::io::parse
