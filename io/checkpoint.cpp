#include "checkpoint.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace heatsim::io {

namespace {

// dt and alpha are recomputed from the case on restart; `dt: auto` may differ in the last bit
// between builds, which is no reason to refuse.
bool close_enough(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

template <class T>
std::string join_axes(const T& v, int dims) {
  std::ostringstream s;
  s.precision(17);
  for (int a = 0; a < dims; ++a) s << (a ? "x" : "") << v[a];
  return s.str();
}

// The shortest digits that read back as v (0.00018, not 0.00018000000000000001).
std::string number(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string checkpoint_path(const solver::Case& c, std::int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint_%08lld.h5", static_cast<long long>(step));
  return (std::filesystem::path(c.output.directory) / name).string();
}

void write_checkpoint(const std::string& path, const FieldMeta& meta,
                      const std::vector<double>& field, const std::vector<double>& previous) {
  write_field_file(path, meta, field, FieldFileKind::checkpoint, previous);
}

void write_checkpoint(const std::string& path, const FieldMeta& meta, const FieldValues& field,
                      const std::vector<double>& previous, WriteProgress* progress) {
  write_field_file(path, meta, field, FieldFileKind::checkpoint, previous, progress);
}

Checkpoint read_checkpoint(const std::string& path, bool with_field) {
  FieldFile f = with_field ? read_field_file(path) : read_field_header(path);
  if (f.kind != FieldFileKind::checkpoint)
    throw std::runtime_error(path + ": not a checkpoint (an output file; restart from a "
                                    "checkpoint_*.h5 file)");
  if (!f.checksummed) throw std::runtime_error(path + ": checkpoint has no checksum");
  return Checkpoint{std::move(f.meta), std::move(f.field), std::move(f.previous)};
}

std::string checkpoint_mismatch(const Checkpoint& ckpt, const solver::Case& c, double dt) {
  const FieldMeta expected = make_meta(c, dt, "", 0, 0.0);
  const FieldMeta& got = ckpt.meta;
  std::vector<std::string> problems;
  if (got.dims != expected.dims) {
    problems.push_back("grid.dims: checkpoint " + std::to_string(got.dims) + ", case " +
                       std::to_string(expected.dims));
  } else {
    // Spacing follows from n and the lengths; report it only when n agrees.
    const bool n_ok = got.n == expected.n;
    if (!n_ok)
      problems.push_back("grid.n: checkpoint " + join_axes(got.n, got.dims) + ", case " +
                         join_axes(expected.n, expected.dims));
    bool spacing_ok = n_ok;
    for (int a = 0; a < got.dims; ++a)
      spacing_ok = spacing_ok && close_enough(got.spacing[a], expected.spacing[a]);
    if (n_ok && !spacing_ok)
      problems.push_back("grid spacing: checkpoint " + join_axes(got.spacing, got.dims) +
                         ", case " + join_axes(expected.spacing, expected.dims));
  }
  if (got.scheme != expected.scheme)
    problems.push_back("scheme: checkpoint " + got.scheme + ", case " + expected.scheme);
  if (got.precision != expected.precision)
    problems.push_back("precision: checkpoint " + got.precision + ", case " +
                       expected.precision);
  if (!close_enough(got.alpha, expected.alpha))
    problems.push_back("physics.alpha: checkpoint " + number(got.alpha) + ", case " +
                       number(expected.alpha));
  if (!close_enough(got.dt, dt))
    problems.push_back("time.dt: checkpoint " + number(got.dt) + ", case " + number(dt));
  if (!ckpt.field.empty() && ckpt.field.size() != static_cast<std::size_t>(got.points()))
    problems.push_back("field: " + std::to_string(ckpt.field.size()) + " values for " +
                       std::to_string(got.points()) + " points");
  std::string out;
  for (const std::string& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

namespace {

// A scalar's text, or its value when it reads as a number (so that 0.72 and 7.2e-1 agree).
bool same_scalar(const YAML::Node& a, const YAML::Node& b) {
  const std::string x = a.Scalar(), y = b.Scalar();
  if (x == y) return true;
  char* end_x = nullptr;
  char* end_y = nullptr;
  const double u = std::strtod(x.c_str(), &end_x), v = std::strtod(y.c_str(), &end_y);
  return !x.empty() && !y.empty() && *end_x == '\0' && *end_y == '\0' && u == v;
}

// A node as one line of YAML, shortened.
std::string shown(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  std::string s = e.c_str();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// A contacts list as what it means: each pair's names in order and its resistance (a
// conductance as 1/conductance), the entries sorted; nullopt where an entry is not of that form.
std::optional<std::vector<std::tuple<std::string, std::string, double>>> contacts_meaning(
    const YAML::Node& list) {
  if (!list.IsSequence()) return std::nullopt;
  std::vector<std::tuple<std::string, std::string, double>> out;
  for (const auto& e : list) {
    if (!e.IsMap() || !e["between"] || !e["between"].IsSequence() || e["between"].size() != 2)
      return std::nullopt;
    std::string p = e["between"][0].Scalar(), q = e["between"][1].Scalar();
    if (q < p) std::swap(p, q);
    char* end = nullptr;
    double r = 0.0;
    if (e["resistance"] && e["resistance"].IsScalar()) {
      r = std::strtod(e["resistance"].Scalar().c_str(), &end);
    } else if (e["conductance"] && e["conductance"].IsScalar()) {
      r = 1.0 / std::strtod(e["conductance"].Scalar().c_str(), &end);
    } else {
      return std::nullopt;
    }
    if (end == nullptr || *end != '\0') return std::nullopt;
    out.emplace_back(p, q, r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void collect_changes(const YAML::Node& a, const YAML::Node& b, const std::string& path,
                     std::vector<std::string>& out) {
  // Contacts written otherwise (a pair's names swapped, a conductance for its resistance,
  // another order of entries) are the same contacts.
  if (path == "contacts" && a.IsDefined() && b.IsDefined()) {
    const auto x = contacts_meaning(a), y = contacts_meaning(b);
    if (x && y && *x == *y) return;
  }
  // time.dt too: a restart whose dt differs is refused (checkpoint_mismatch), so one that
  // passes has the checkpoint's dt, given or `auto`.
  static const char* const kNotPhysics[] = {"time.end", "time.steps", "time.dt",
                                            "output",   "probes",     "checkpoint",
                                            "backend",  "fusion",     "parallel"};
  for (const char* key : kNotPhysics)
    if (path == key) return;
  // A key that one side lacks reads as an invalid node there, which only IsDefined may ask.
  const bool had = a.IsDefined() && !a.IsNull(), has = b.IsDefined() && !b.IsNull();
  if (!had && !has) return;
  if (had && has && a.IsMap() && b.IsMap()) {
    std::vector<std::string> keys;
    for (const auto& kv : a) keys.push_back(kv.first.as<std::string>());
    for (const auto& kv : b) {
      const std::string k = kv.first.as<std::string>();
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    for (const std::string& k : keys)
      collect_changes(a[k], b[k], path.empty() ? k : path + "." + k, out);
    return;
  }
  // A list of numbers or words (a grid's n, a box's corner) is one setting.
  const auto scalars = [](const YAML::Node& n) {
    for (const auto& e : n)
      if (!e.IsScalar()) return false;
    return true;
  };
  if (had && has && a.IsSequence() && b.IsSequence() && scalars(a) && scalars(b)) {
    bool same = a.size() == b.size();
    for (std::size_t i = 0; same && i < a.size(); ++i) same = same_scalar(a[i], b[i]);
    if (!same) out.push_back(path + ": " + shown(a) + " -> " + shown(b));
    return;
  }
  if (had && has && a.IsSequence() && b.IsSequence() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      collect_changes(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (!had) {
    out.push_back(path + ": added (" + shown(b) + ")");
  } else if (!has) {
    out.push_back(path + ": removed (was " + shown(a) + ")");
  } else if (!(a.IsScalar() && b.IsScalar() && same_scalar(a, b))) {
    out.push_back(path + ": " + shown(a) + " -> " + shown(b));
  }
}

}  // namespace

std::int64_t case_checkpoint_keep(const std::string& case_text) {
  if (case_text.empty()) return 0;
  try {
    const YAML::Node root = YAML::Load(case_text);
    const YAML::Node ckpt = root.IsMap() ? root["checkpoint"] : YAML::Node();
    if (ckpt.IsMap() && ckpt["keep"] && ckpt["keep"].IsScalar())
      return std::max<std::int64_t>(0, ckpt["keep"].as<std::int64_t>());
  } catch (const YAML::Exception&) {
  }
  return 0;
}

std::string case_output_name(const std::string& case_text) {
  if (case_text.empty()) return "";
  try {
    const YAML::Node root = YAML::Load(case_text);
    const YAML::Node output = root.IsMap() ? root["output"] : YAML::Node();
    if (output.IsMap() && output["name"] && output["name"].IsScalar())
      return output["name"].Scalar();
    return solver::OutputSpec{}.name;
  } catch (const YAML::Exception&) {
    return "";
  }
}

std::vector<std::string> moved_probes(const std::string& written, const std::string& now) {
  std::vector<std::string> out;
  if (written.empty() || now.empty()) return out;
  try {
    const YAML::Node a = YAML::Load(written), b = YAML::Load(now);
    const auto points = [](const YAML::Node& root) {
      const YAML::Node probes = root.IsMap() ? root["probes"] : YAML::Node();
      return probes.IsMap() && probes["points"].IsMap() ? probes["points"] : YAML::Node();
    };
    const YAML::Node was = points(a), is = points(b);
    if (!was.IsMap() || !is.IsMap()) return out;
    for (const auto& kv : is) {
      if (!kv.first.IsScalar()) continue;
      const YAML::Node before = was[kv.first.Scalar()];
      const YAML::Node& after = kv.second;
      if (!before.IsDefined() || !before.IsSequence() || !after.IsSequence()) continue;
      bool same = before.size() == after.size();
      for (std::size_t i = 0; same && i < after.size(); ++i)
        same = before[i].IsScalar() && after[i].IsScalar() && same_scalar(before[i], after[i]);
      if (!same) out.push_back(kv.first.Scalar() + ": " + shown(before) + " -> " + shown(after));
    }
  } catch (const YAML::Exception&) {
    out.clear();
  }
  return out;
}

std::vector<std::string> case_changes(const std::string& written, const std::string& now) {
  std::vector<std::string> out;
  if (written.empty() || now.empty()) return out;
  try {
    collect_changes(YAML::Load(written), YAML::Load(now), "", out);
  } catch (const YAML::Exception&) {
    out.clear();
  }
  return out;
}

}  // namespace heatsim::io
