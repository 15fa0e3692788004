// What regions, sources and faces share: maps of names the case chooses, shapes (box, ball,
// where) and schedules (a number, a [time, value] table or the sine form).
#include "case_parse.hpp"

namespace heatsim::io::parse {

using detail::quote;

namespace {
// Longer tables and name maps than this are mistakes; they are refused without being walked.
constexpr std::size_t kMaxEntries = 100000;
}  // namespace

std::optional<std::vector<std::pair<std::string, Field>>> Reader::read_entries(
    const YAML::Node& n, const std::string& path, const std::string& what) {
  if (!n.IsMap()) {
    error(path, n, "expected a map of " + what + " by name, got " + describe(n));
    return std::nullopt;
  }
  if (n.size() > kMaxEntries) {
    error(path, n,
          "expected at most " + std::to_string(kMaxEntries) + " " + what + ", got " +
              std::to_string(n.size()));
    return std::nullopt;
  }
  std::vector<std::pair<std::string, Field>> out;
  for_each_key(n, path, false, [&](const std::string& name, const std::string& p, Field f) {
    lines[p] = line_of(f.key);
    out.emplace_back(name, std::move(f));
  });
  return out;
}

bool Reader::read_shape(const Fields& f, const std::string& path, solver::ShapeSpec& shape) {
  Names given;
  for (const char* key : {"box", "ball", "where"})
    if (f.count(key)) given.push_back(key);
  if (given.size() > 1) {
    error(join(path, given[1]), f.at(given[1]).key,
          "give at most one shape (box, ball or where); " + quote(given[0]) + " is given too");
    error_suppressed_.push_back(path);
    return false;
  }
  if (auto v = field(f, "box")) {
    shape.kind = solver::ShapeKind::box;
    const std::string p = join(path, "box");
    const auto m = read_map(*v, p, {"lower", "upper"});
    if (!m) return false;
    require(*m, p, "lower", *v, " (the box's lower corner)");
    require(*m, p, "upper", *v, " (the box's upper corner)");
    bool ok = m->count("lower") && m->count("upper");
    if (auto c = field(*m, "lower"))
      ok = read_numbers(*c, join(p, "lower"), false, shape.lower) && ok;
    if (auto c = field(*m, "upper"))
      ok = read_numbers(*c, join(p, "upper"), false, shape.upper) && ok;
    if (!ok) error_suppressed_.push_back(p);
    return ok;
  }
  if (auto v = field(f, "ball")) {
    shape.kind = solver::ShapeKind::ball;
    const std::string p = join(path, "ball");
    const auto m = read_map(*v, p, {"center", "radius"});
    if (!m) return false;
    require(*m, p, "center", *v, " (one coordinate per axis)");
    require(*m, p, "radius", *v, " (> 0)");
    bool ok = m->count("center") && m->count("radius");
    if (auto c = field(*m, "center"))
      ok = read_numbers(*c, join(p, "center"), false, shape.center) && ok;
    if (auto r = field(*m, "radius")) ok = read_number(*r, join(p, "radius"), shape.radius) && ok;
    if (!ok) error_suppressed_.push_back(p);
    return ok;
  }
  if (auto v = field(f, "where")) {
    shape.kind = solver::ShapeKind::where;
    return read_string(*v, join(path, "where"), shape.where);
  }
  shape.kind = solver::ShapeKind::everywhere;
  return true;
}

bool Reader::read_schedule(const YAML::Node& n, const std::string& path, double default_value,
                           kernels::Schedule& out) {
  out = kernels::Schedule{default_value, 0.0, 0.0, {}};
  if (n.IsScalar() || !n.IsDefined() || n.IsNull())
    return read_number(n, path, out.value,
                       "a number, a [[time, value], ...] table or {value, amplitude, frequency}");
  if (n.IsSequence()) {
    const std::size_t size = n.size();
    if (size > kMaxEntries) {
      error(path, n,
            "expected at most " + std::to_string(kMaxEntries) + " [time, value] pairs, got " +
                std::to_string(size));
      return false;
    }
    if (size == 0) {
      error(path, n, "needs at least one [time, value] pair");
      return false;
    }
    // [300, 310]: numbers where pairs belong, one message for the list rather than one per
    // entry.
    bool all_scalars = true;
    for (std::size_t i = 0; i < size && all_scalars; ++i) all_scalars = n[i].IsScalar();
    if (all_scalars) {
      error(path, n,
            "expected a table of [time, value] pairs, got " + describe_value(n) +
                "; a table lists pairs ([[0, 300], [60, 310]]: 300 at t = 0, 310 from t = 60 "
                "on), a constant is one number");
      error_suppressed_.push_back(path);
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < size; ++i) {
      const YAML::Node item = n[i];
      const std::string p = indexed(path, i);
      lines[p] = line_of(item);
      if (!item.IsSequence() || item.size() != 2) {
        error(p, item,
              "expected a [time, value] pair, got " +
                  (item.IsSequence() ? "a list of " + std::to_string(item.size()) +
                                           (item.size() == 1 ? " value" : " values")
                                     : describe(item)));
        ok = false;
        continue;
      }
      std::array<double, 2> entry{0.0, 0.0};
      ok = read_number(item[0], indexed(p, 0), entry[0]) && ok;
      ok = read_number(item[1], indexed(p, 1), entry[1]) && ok;
      out.table.push_back(entry);
    }
    if (!ok) {
      error_suppressed_.push_back(path);
      out.table.clear();
      return false;
    }
    out.value = out.table.front()[1];
    return true;
  }
  const auto f = read_map(n, path, {"value", "amplitude", "frequency"});
  if (!f) {
    error_suppressed_.push_back(path);
    return false;
  }
  bool ok = true;
  if (auto v = field(*f, "value")) ok = read_number(*v, join(path, "value"), out.value) && ok;
  if (auto v = field(*f, "amplitude"))
    ok = read_number(*v, join(path, "amplitude"), out.amplitude) && ok;
  if (auto v = field(*f, "frequency"))
    ok = read_number(*v, join(path, "frequency"), out.frequency, "a number (in Hz)") && ok;
  return ok;
}

}  // namespace heatsim::io::parse
