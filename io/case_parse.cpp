// The case reader's generic helpers: maps with known keys, numbers, integers, strings,
// choices and per-axis lists, each reporting its problems with key path and line.
#include "case_parse.hpp"

#include <cctype>
#include <cstdlib>

namespace heatsim::io::parse {

using detail::quote;

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
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return quote(n.Scalar());
    default:
      return "nothing";
  }
}

namespace {

// The node as flow-style text into `out`, stopping once it is `limit` characters long (so an
// alias-heavy document costs no more than that).
void render(const YAML::Node& n, std::string& out, std::size_t limit) {
  if (out.size() > limit) return;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      out += n.Scalar();
      return;
    case YAML::NodeType::Sequence: {
      out += "[";
      bool first = true;
      for (auto it = n.begin(); it != n.end() && out.size() <= limit; ++it) {
        if (!first) out += ", ";
        first = false;
        render(*it, out, limit);
      }
      out += "]";
      return;
    }
    case YAML::NodeType::Map: {
      out += "{";
      bool first = true;
      for (auto it = n.begin(); it != n.end() && out.size() <= limit; ++it) {
        if (!first) out += ", ";
        first = false;
        render(it->first, out, limit);
        out += ": ";
        render(it->second, out, limit);
      }
      out += "}";
      return;
    }
    default:
      return;
  }
}

}  // namespace

std::string describe_value(const YAML::Node& n) {
  if (n.IsScalar()) return (quoted(n) ? "the string " : "") + quote(n.Scalar());
  if (!n.IsMap() && !n.IsSequence()) return describe(n);
  constexpr std::size_t kLimit = 40;
  std::string text;
  render(n, text, kLimit);
  if (text.size() > kLimit) {
    // Cut at the last separator before the limit, never inside a value ("frequency: 0.5" cut
    // after its 0 would read as another number).
    std::size_t cut = kLimit;
    while (cut > 0 && text[cut] != ',' && text[cut] != ' ' && text[cut - 1] != ',' &&
           text[cut - 1] != ' ')
      --cut;
    if (cut == 0) cut = kLimit;
    text.resize(cut);
    while (!text.empty() && (text.back() == ' ' || text.back() == ',')) text.pop_back();
    text += " ...";
  }
  return describe(n) + " " + text;
}

// [-+]digits[.digits][e[-+]digits]; inf and nan as the header says.
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

std::optional<Fields> Reader::read_map(const YAML::Node& n, const std::string& path,
                                       const Names& known, const std::string& context) {
  if (!n.IsMap()) {
    error(path, n, "expected a map with keys " + list_names(known) + ", got " + describe(n));
    return std::nullopt;
  }
  Fields fields;
  for_each_key(n, path, true, [&](const std::string& name, const std::string& p, Field f) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string suggestion = detail::nearest_suffix(name, known);
      // {alpha: 1,5e-4}: a decimal comma ends the value at the comma, and the digits after it
      // come as a key of no value.
      if (suggestion.empty() && parse_number(name) && (!f.value || f.value.IsNull()))
        suggestion =
            " (a number as a key: a decimal comma? In YAML a comma ends the value before it and "
            "the digits after it come as a key; write numbers with a decimal point)";
      // {type: convective, h: 25, ambient: 283, amplitude: 8, ...}: a Dirichlet face's sine
      // keys, where the ambient takes the sine itself.
      if (suggestion.empty() && (name == "amplitude" || name == "frequency") &&
          std::find(known.begin(), known.end(), "ambient") != known.end())
        suggestion =
            " (an ambient that varies is written in `ambient` itself: ambient: {value: 283, "
            "amplitude: 8, frequency: 1.16e-5}, or a [[t, T], ...] table)";
      error(p, f.key,
            "unknown key " + quote(name) + context + suggestion +
                "; known keys: " + list_names(known));
      // " (did you mean 'conductivity'?)": that key, if required, is not reported missing too.
      const std::size_t open = suggestion.find('\'');
      const std::size_t close = suggestion.find('\'', open + 1);
      if (open != std::string::npos && close != std::string::npos)
        suggested_.push_back(join(path, suggestion.substr(open + 1, close - open - 1)));
      return;
    }
    lines[p] = line_of(f.key);
    fields.emplace(name, std::move(f));
  });
  return fields;
}

void Reader::require(const Fields& f, const std::string& path, const std::string& key,
                     const YAML::Node& parent, const std::string& context) {
  const std::string p = join(path, key);
  if (f.count(key) || std::find(suggested_.begin(), suggested_.end(), p) != suggested_.end())
    return;  // a near-miss of it was reported as an unknown key, with this one as its fix
  error(p, parent, "missing required key" + context);
}

bool Reader::scalar(const YAML::Node& n, const std::string& path, const char* what) {
  if (n.IsScalar()) return true;
  error(path, n, std::string("expected ") + what + ", got " + describe(n));
  return false;
}

namespace {

// A number with a unit after it ("200 mm", "10 W/m2K", "20 C"): the hint that the case's
// numbers are SI and bare. Empty for anything else.
std::string unit_hint(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  std::strtod(begin, &end);
  if (end == begin) return {};
  while (*end == ' ') ++end;
  if (!std::isalpha(static_cast<unsigned char>(*end)) && *end != '%') return {};
  return " (numbers are bare, in SI units: metres, W/(m K), W/(m^2 K), kelvin; 200 mm is 0.2, "
         "20 C is 293.15)";
}

}  // namespace

bool Reader::read_number(const YAML::Node& n, const std::string& path, double& out,
                         const std::string& expected) {
  if (!quote_closed(n, path)) return false;
  const std::optional<double> v =
      n.IsScalar() && !quoted(n) ? parse_number(n.Scalar()) : std::nullopt;
  if (!v) {
    error(path, n,
          "expected " + expected + ", got " + describe_value(n) +
              (n.IsScalar() && !quoted(n) ? unit_hint(n.Scalar()) : std::string()));
    return false;
  }
  out = *v;
  return true;
}

bool Reader::read_string(const YAML::Node& n, const std::string& path, std::string& out) {
  if (!scalar(n, path, "a string") || !quote_closed(n, path)) return false;
  out = n.Scalar();
  return true;
}

bool Reader::read_bool(const YAML::Node& n, const std::string& path, bool& out) {
  if (!quote_closed(n, path)) return false;
  if (!n.IsScalar() || quoted(n) || (n.Scalar() != "true" && n.Scalar() != "false")) {
    error(path, n, "expected true or false, got " + describe(n));
    return false;
  }
  out = n.Scalar() == "true";
  return true;
}

bool Reader::quote_closed(const YAML::Node& n, const std::string& path) {
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
  if (unclosed_quote_line == 0) unclosed_quote_line = line_of(n);
  return false;
}

bool Reader::read_choice(const YAML::Node& n, const std::string& path, const Names& choices,
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

bool Reader::read_numbers(const YAML::Node& n, const std::string& path, bool broadcast,
                          std::array<double, 3>& out) {
  return read_axis_list(n, path, broadcast, out,
                        [this](const YAML::Node& m, const std::string& p, double& v) {
                          return read_number(m, p, v);
                        });
}

}  // namespace heatsim::io::parse
