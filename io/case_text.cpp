// Checks on the raw text of a case before the YAML parser sees it (size, encoding, nesting),
// and the small formatting helpers the loader's messages share.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "case_loader.hpp"

namespace heatsim::io {
namespace detail {

std::string quote(const std::string& text) {
  constexpr std::size_t kShown = 48;
  std::size_t end = std::min(text.size(), kShown);
  // Never cut a UTF-8 sequence in half: back up to the start of the character.
  while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  std::string out = "'";
  for (std::size_t i = 0; i < end; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    out += (ch < 0x20 || ch == 0x7F) ? '?' : text[i];
  }
  if (end < text.size()) out += "...";
  return out + "'";
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string format_number_down(double v) {
  if (!std::isfinite(v) || v == 0.0) return format_number(v);
  const int exponent = static_cast<int>(std::floor(std::log10(std::abs(v))));
  // 10^(5 - exponent) overflows for v below about 1e-303 (the cut was nan): there in two
  // factors, each in range.
  const int shift = 5 - exponent;
  const int first = shift > 300 ? shift / 2 : shift;
  const double scale_a = std::pow(10.0, first), scale_b = std::pow(10.0, shift - first);
  const double cut = std::trunc(v * scale_a * scale_b) / scale_b / scale_a;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", cut);
  return buf;
}

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Optimal string alignment distance: edits plus swaps of neighbours ("alpah" -> "alpha" is 1).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::string nearest_suffix(const std::string& word, const std::vector<std::string>& candidates) {
  // Long words are not typos of our short names; skip the quadratic distance for them.
  if (word.empty() || word.size() > 64) return "";
  const std::string w = lower(word);
  std::size_t best = std::string::npos;
  std::string best_name;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(w, lower(c));
    if (d < best) {
      best = d;
      best_name = c;
    }
  }
  const std::size_t allowed = std::min<std::size_t>(2, std::max<std::size_t>(1, w.size() / 3));
  if (best <= allowed && best < w.size()) return " (did you mean '" + best_name + "'?)";
  // A cut-short name: "gauss" for "gaussian".
  if (w.size() >= 3)
    for (const std::string& c : candidates)
      if (lower(c).rfind(w, 0) == 0) return " (did you mean '" + c + "'?)";
  return "";
}

namespace {

int line_at(const std::string& text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is malformed
// (overlong forms, surrogates and code points above U+10FFFF included).
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

// An upper bound on how deeply collections nest, from indentation, block indicators ("- ",
// "? ") and flow brackets. The YAML parser recurses once per level, so a document like
// "[[[[..." a hundred thousand deep must be refused before it is parsed. The scan is
// deliberately approximate in the safe direction: it may count a level too many (a '[' inside
// a plain scalar), which only matters for files no case needs.
struct NestingScan {
  int limit;
  int deepest = 0;
  int deepest_line = 0;

  bool exceeded() const { return deepest > limit; }

  void run(const std::string& text) {
    std::vector<std::size_t> indents;  // columns of the open block collections
    int flow = 0;                      // open [ and {
    char in_quote = 0;                 // ' or " while inside a quoted scalar
    long block_scalar_parent = -1;     // indentation of a | or > header's line
    std::size_t pos = 0;
    int line = 0;
    while (pos < text.size() && !exceeded()) {
      std::size_t eol = text.find('\n', pos);
      if (eol == std::string::npos) eol = text.size();
      ++line;
      const std::string_view s(text.data() + pos, eol - pos);
      pos = eol + 1;

      std::size_t col = 0;
      while (col < s.size() && s[col] == ' ') ++col;
      const bool blank = col == s.size() || s[col] == '\r' || s[col] == '#';
      if (block_scalar_parent >= 0) {
        if (blank || static_cast<long>(col) > block_scalar_parent) continue;
        block_scalar_parent = -1;
      }
      std::size_t i = col;
      if (!in_quote && flow == 0) {
        if (blank) continue;
        while (!indents.empty() && indents.back() > col) indents.pop_back();
        if (indents.empty() || indents.back() < col) indents.push_back(col);
        // "- - - x" opens one sequence per indicator on a single line.
        while (i < s.size() && (s[i] == '-' || s[i] == '?') &&
               (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\r')) {
          ++i;
          while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
          indents.push_back(i);
          note(static_cast<int>(indents.size()), line);
        }
        note(static_cast<int>(indents.size()), line);
      }
      scan_line(s, i, line, static_cast<int>(indents.size()), flow, in_quote);
      if (!in_quote && flow == 0 && ends_with_block_scalar_header(s))
        block_scalar_parent = static_cast<long>(col);
    }
  }

  void note(int depth, int line) {
    if (depth > deepest) {
      deepest = depth;
      deepest_line = line;
    }
  }

  void scan_line(std::string_view s, std::size_t i, int line, int block_depth, int& flow,
                 char& in_quote) {
    for (; i < s.size() && !exceeded(); ++i) {
      const char ch = s[i];
      const char prev = i == 0 ? ' ' : s[i - 1];
      if (in_quote) {
        if (in_quote == '"' && ch == '\\') {
          ++i;
        } else if (ch == in_quote) {
          in_quote = 0;
        }
        continue;
      }
      const bool after_space = prev == ' ' || prev == '\t' || i == 0;
      const bool node_start =
          after_space || (flow > 0 && (prev == '[' || prev == '{' || prev == ',' || prev == ':'));
      if (ch == '#' && after_space) return;
      if ((ch == '\'' || ch == '"') && node_start) {
        in_quote = ch;
      } else if ((ch == '[' || ch == '{') && node_start) {
        ++flow;
        note(block_depth + flow, line);
      } else if ((ch == ']' || ch == '}') && flow > 0) {
        --flow;
      }
    }
  }

  static bool ends_with_block_scalar_header(std::string_view s) {
    std::size_t end = s.size();
    const std::size_t hash = s.find(" #");
    if (hash != std::string_view::npos) end = hash;
    while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r')) --end;
    std::size_t i = end;
    while (i > 0 && (std::isdigit(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '+' ||
                     s[i - 1] == '-'))
      --i;
    if (i == 0 || (s[i - 1] != '|' && s[i - 1] != '>')) return false;
    return i == 1 || s[i - 2] == ' ' || s[i - 2] == '\t';
  }
};

}  // namespace

std::vector<CaseError> check_text(const std::string& text) {
  std::vector<CaseError> errors;
  if (text.size() > kMaxCaseBytes) {
    errors.push_back({"", 0,
                      "the case is " + std::to_string(text.size()) +
                          " bytes; the limit is 1 MiB (1048576 bytes)"});
    return errors;
  }
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    errors.push_back({"", line_at(text, nul),
                      "the case contains NUL bytes; it looks like a binary file, not YAML text"});
    return errors;
  }
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if ((ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7F) {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "the case contains the control character 0x%02X; it is not YAML text", ch);
      errors.push_back({"", line_at(text, i), buf});
      return errors;
    }
    const std::size_t len = utf8_sequence(text, i);
    if (len == 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "the case is not valid UTF-8 text (byte 0x%02X)", ch);
      errors.push_back({"", line_at(text, i), buf});
      return errors;
    }
    i += len;
  }
  NestingScan scan{kMaxCaseNesting};
  scan.run(text);
  if (scan.exceeded())
    errors.push_back({"", scan.deepest_line,
                      "the case nests lists and maps more than " +
                          std::to_string(kMaxCaseNesting) +
                          " levels deep; a case needs at most a few"});
  return errors;
}

}  // namespace detail
}  // namespace heatsim::io
