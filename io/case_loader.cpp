// YAML -> solver::Case: the text's checks, the parse, the top level of the case, then the
// semantic checks. Each section is read in its own file (case_parse.hpp lists them); ranges
// and cross-section consistency are left to check_case().
#include "case_loader.hpp"

#include <sys/stat.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include "case_check.hpp"
#include "case_parse.hpp"

namespace heatsim::io {

using solver::Case;

std::string CaseError::to_string() const {
  std::string out = path.empty() ? message : path + ": " + message;
  if (line > 0) out += " (line " + std::to_string(line) + ")";
  return out;
}

std::size_t count_problems(const std::vector<CaseError>& errors) {
  std::size_t count = 0;
  for (const CaseError& e : errors) count += e.unlisted > 0 ? e.unlisted : 1;
  return count;
}

std::string format_errors(const std::vector<CaseError>& errors) {
  std::string out;
  for (const CaseError& e : errors) out += e.to_string() + "\n";
  return out;
}

namespace parse {

void read_parallel(Reader& r, const YAML::Node& n, Case& c);  // case_parallel.cpp

// The top level: which sections there are, each read by its own file.
void Reader::read_case(const YAML::Node& root, Case& c) {
  const auto top = read_map(root, "",
                            {"grid", "physics", "materials", "regions", "contacts", "scheme",
                             "boundary", "initial", "sources", "time", "probes", "precision",
                             "backend", "fusion", "output", "checkpoint", "parallel"});
  if (!top) return;
  const int root_line = line_of(root);
  // With materials, physics is optional: each material gives its own coefficients.
  has_materials_ = top->count("materials") > 0;
  for (const char* required : {"grid", "physics", "boundary", "initial", "time"})
    if (!top->count(required) && !(has_materials_ && std::string(required) == "physics"))
      error_at(required, root_line, "missing required section");
  if (top->count("regions") && !has_materials_)
    error("regions", top->at("regions").key, "regions name materials; give a materials section");
  if (has_materials_ && !top->count("regions"))
    error("materials", top->at("materials").key,
          "give regions too: every node needs a material ({material: name} alone covers the "
          "whole domain)");
  if (!top->count("grid")) c.grid.dims = 0;  // unknown: checks that need it are skipped
  if (auto f = field(*top, "grid")) read_grid(*f, c);
  if (auto f = field(*top, "materials")) read_materials(*f, c);
  if (auto f = field(*top, "regions")) read_regions(*f, c);
  if (top->count("contacts") && !has_materials_)
    error("contacts", top->at("contacts").key,
          "contacts lie between materials; give a materials section");
  else if (auto f = field(*top, "contacts"))
    read_contacts(*f, c);
  if (auto f = field(*top, "sources")) read_sources(*f, c);
  if (auto f = field(*top, "probes")) read_probes(*f, c);
  if (auto f = field(*top, "physics")) read_physics(*f, c);
  if (auto f = field(*top, "scheme")) read_scheme(*f, c);
  if (auto f = field(*top, "boundary"))
    read_boundary(*f, c);
  else
    for (solver::BoundaryFace& face : c.boundary) unread_face(face);
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
  if (auto f = field(*top, "parallel")) read_parallel(*this, *f, c);
  if (auto f = field(*top, "checkpoint")) {
    if (const auto m = read_map(*f, "checkpoint", {"every", "keep"})) {
      if (auto e = field(*m, "every")) read_int(*e, "checkpoint.every", c.checkpoint.every);
      if (auto k = field(*m, "keep")) read_int(*k, "checkpoint.keep", c.checkpoint.keep);
    }
  }
}

}  // namespace parse

namespace {

// The first line (1-based) whose indentation holds a tab; 0 when none does.
int first_tab_indented_line(const std::string& text) {
  int line = 1;
  bool indent = true;
  for (char ch : text) {
    if (ch == '\n') {
      ++line;
      indent = true;
    } else if (indent && ch == '\t') {
      return line;
    } else if (ch != ' ') {
      indent = false;
    }
  }
  return 0;
}

using parse::describe;
using parse::line_of;

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

// The flow collections ('{' and '[') of `text` up to byte `end`, quoted scalars and comments
// skipped: the line (1-based) of the innermost one still open there (0 when none is), the line
// of a quote still open there (0 when none is), and the first closing bracket of the other kind
// than the collection it closes ("[21, 21, length: [...]}": the '}' closes a '['), with both
// lines. yaml-cpp marks an unclosed flow collection where it gave up looking for its end, often
// a later line than the one that opened it, and a mismatched end as "illegal flow end".
struct FlowScan {
  int open_line = 0, quote_line = 0;
  char mismatched_open = 0, mismatched_close = 0;
  int mismatched_open_line = 0, mismatched_close_line = 0;
};

FlowScan scan_flow(const std::string& text, std::size_t end) {
  FlowScan out;
  std::vector<std::pair<char, int>> open;
  int line = 1, quote_line = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < std::min(end, text.size()); ++i) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (quote == '"' && ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    const char before = i > 0 ? text[i - 1] : '\n';
    const bool starts = std::isspace(static_cast<unsigned char>(before)) || before == '{' ||
                        before == '[' || before == ',' || before == ':';
    if (ch == '#' && std::isspace(static_cast<unsigned char>(before))) {
      comment = true;
    } else if ((ch == '"' || ch == '\'') && starts) {
      quote = ch;
      quote_line = line;
    } else if (ch == '{' || ch == '[') {
      open.push_back({ch, line});
    } else if ((ch == '}' || ch == ']') && !open.empty()) {
      if (!out.mismatched_close && (open.back().first == '{') != (ch == '}')) {
        out.mismatched_open = open.back().first;
        out.mismatched_open_line = open.back().second;
        out.mismatched_close = ch;
        out.mismatched_close_line = line;
      }
      open.pop_back();
    }
  }
  // A quote still open at `end` swallowed what followed it, the collection's end among it.
  out.quote_line = quote ? quote_line : 0;
  out.open_line = open.empty() ? 0 : open.back().second;
  return out;
}

// Where yaml-cpp finds no map value or no map end, a line indented unlike the lines around it
// is the likely cause: "; line L is indented ..." naming it, else nothing. Nothing nests under
// a key that holds a value, and a line must line up with a key of an enclosing map.
std::string indentation_hint(const std::string& text, int error_line) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (error_line < 1 || error_line > static_cast<int>(lines.size())) return {};
  const auto significant = [](const std::string& l) {
    const std::size_t at = l.find_first_not_of(' ');
    return at != std::string::npos && l[at] != '#' && l[at] != '\t';
  };
  const auto indent = [](const std::string& l) {
    return static_cast<int>(l.find_first_not_of(' '));
  };
  const std::string& here = lines[static_cast<std::size_t>(error_line - 1)];
  if (!significant(here)) return {};
  int prev = error_line - 1;
  while (prev >= 1 && !significant(lines[static_cast<std::size_t>(prev - 1)])) --prev;
  if (prev < 1) return {};
  const std::string& above = lines[static_cast<std::size_t>(prev - 1)];
  const int i_here = indent(here), i_above = indent(above);
  if (i_here > i_above) {
    // Deeper than the line before: right only under a key that opens a block ("key:" alone).
    const std::size_t colon = above.find(": ");
    const bool holds_value = colon != std::string::npos &&
                             above.find_first_not_of(' ', colon + 1) != std::string::npos &&
                             above[above.find_first_not_of(' ', colon + 1)] != '#';
    if (!holds_value) return {};
    return "; line " + std::to_string(error_line) + " is indented by " + std::to_string(i_here) +
           " spaces, more than line " + std::to_string(prev) + " above it (" +
           std::to_string(i_above) + "), whose key holds a value, so nothing nests under it: " +
           "the keys of one map line up";
  }
  if (i_here < i_above) {
    // Shallower: it must line up with a key of an enclosing block above.
    for (int k = prev; k >= 1; --k) {
      const std::string& l = lines[static_cast<std::size_t>(k - 1)];
      if (!significant(l)) continue;
      if (indent(l) == i_here) return {};
      if (indent(l) < i_here) break;
    }
    return "; line " + std::to_string(error_line) + " is indented by " + std::to_string(i_here) +
           " spaces, which lines it up with no key above it (line " + std::to_string(prev) +
           " has " + std::to_string(i_above) + "): the keys of one map line up";
  }
  return {};
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
  errors.push_back({"", 0, "... and " + std::to_string(more) + " more errors", more});
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
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    // An unclosed '{' or '[': yaml-cpp's mark is where it stopped looking for the end; the
    // line that opened it is the one to fix.
    std::string where;
    if (e.msg.find("flow not found") != std::string::npos && !e.mark.is_null()) {
      const std::size_t end =
          e.mark.pos >= 0 ? static_cast<std::size_t>(e.mark.pos) + 1 : text.size();
      const FlowScan flow = scan_flow(text, end);
      const int quote = flow.quote_line;
      if (const int opened = flow.open_line; opened > 0) {
        const char* bracket = e.msg.find("map") != std::string::npos ? "'{'" : "'['";
        if (quote >= opened) {
          // The quote took the bracket's end into its string: the quote is what to fix.
          where = "; the quoted string that starts on line " + std::to_string(quote) +
                  " is never closed, so the " + bracket + " opened on line " +
                  std::to_string(opened) + " finds no end";
          line = quote;
        } else {
          where = std::string("; the ") + bracket + " opened on line " + std::to_string(opened) +
                  " is never closed (the parser gave up near line " + std::to_string(line) + ")";
          line = opened;
        }
      }
    }
    // A closing bracket of the other kind than the collection it ends.
    if (e.msg.find("illegal flow end") != std::string::npos && !e.mark.is_null()) {
      const FlowScan flow = scan_flow(
          text, e.mark.pos >= 0 ? static_cast<std::size_t>(e.mark.pos) + 1 : text.size());
      if (flow.mismatched_close) {
        where = std::string("; the '") + flow.mismatched_open + "' opened on line " +
                std::to_string(flow.mismatched_open_line) + " is not closed before the '" +
                flow.mismatched_close + "' on line " + std::to_string(flow.mismatched_close_line);
        line = flow.mismatched_open_line;
      }
    }
    // yaml-cpp says "illegal map value" or the like for a tab in the indentation: name it.
    const int tab = first_tab_indented_line(text);
    std::string hint = tab > 0 && (line == 0 || tab <= line)
                           ? "; line " + std::to_string(tab) +
                                 " is indented with a tab, and YAML indents with spaces only"
                           : std::string();
    if (hint.empty() && where.empty() && (e.msg.find("map value") != std::string::npos ||
                                          e.msg.find("end of map") != std::string::npos))
      hint = indentation_hint(text, line);
    result.errors.push_back({"", line, "the case is not valid YAML: " + e.msg + where + hint});
    return result;
  } catch (const std::exception& e) {
    result.errors.push_back({"", 0, std::string("the case could not be parsed: ") + e.what()});
    return result;
  }
  if (!root.IsDefined() || root.IsNull()) {
    result.errors.push_back(
        {"", 0,
         "the case is empty; expected a map with sections grid, physics, boundary, "
         "initial and time"});
    return result;
  }
  if (!root.IsMap()) {
    result.errors.push_back({"", line_of(root),
                             "the top level must be a map of sections (grid, physics, boundary, "
                             "initial, time, ...), got " +
                                 describe(root)});
    return result;
  }

  Case c;
  parse::Reader reader(text);
  try {
    reader.read_case(root, c);
  } catch (const YAML::Exception& e) {
    reader.errors.push_back(
        {"", e.mark.is_null() ? 0 : e.mark.line + 1, "the case could not be read: " + e.msg});
  } catch (const std::exception& e) {
    reader.errors.push_back({"", 0, std::string("the case could not be read: ") + e.what()});
  }
  const bool structure_ok = reader.errors.empty();
  // Before the checks, which resolve the body with these bounds.
  solver::snap_bounds_to_far_faces(c);
  std::vector<CaseError> semantic;
  std::vector<CaseError> warnings;
  try {
    semantic = check::run_checks(c, reader.lines, structure_ok, &warnings, &result.body);
  } catch (const std::exception& e) {
    semantic.push_back({"", 0, std::string("the case could not be checked: ") + e.what()});
  }
  if (const int quote = reader.unclosed_quote_line; quote > 0) {
    // The quote swallowed the rest of the text: what is missing may lie inside it, and only
    // the checks of values written before it judge what the case says.
    const auto swallowed = [](const CaseError& e) { return e.message.rfind("missing", 0) == 0; };
    reader.errors.erase(std::remove_if(reader.errors.begin(), reader.errors.end(), swallowed),
                        reader.errors.end());
    semantic.erase(
        std::remove_if(semantic.begin(), semantic.end(),
                       [&](const CaseError& e) { return e.line <= 0 || e.line >= quote; }),
        semantic.end());
  }
  point_at_all(semantic, reader.faces_from_all);
  point_at_all(warnings, reader.faces_from_all);
  // A value that failed to read keeps its default; checks on it would only add noise.
  std::vector<std::string> suppressed = reader.error_suppressed_;
  for (const CaseError& e : reader.errors) suppressed.push_back(e.path);
  for (CaseError& e : semantic) {
    const bool repeat =
        std::any_of(suppressed.begin(), suppressed.end(),
                    [&](const std::string& p) { return !p.empty() && overlaps(e.path, p); });
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
  // Warnings on values read as given are true whatever else failed to read (every problem at
  // once: a schedule written wrong hid four true warnings until it was mended); those on a
  // value that failed to read, which keeps its default, are left out as its errors' checks are.
  // So are those inside a map where a key was misspelt (an unknown key offered as a known
  // one): the key meant kept its default there, and a warning on the map's other keys most
  // likely follows from it (`{amplitud: 0.5, frequency: 1}`: "frequency has no effect, the
  // amplitude is 0").
  for (const std::string& meant : reader.suggested_) {
    const std::size_t dot = meant.rfind('.');
    if (dot != std::string::npos && dot > 0) suppressed.push_back(meant.substr(0, dot));
  }
  for (CaseError& w : warnings) {
    const bool on_default =
        std::any_of(suppressed.begin(), suppressed.end(),
                    [&](const std::string& p) { return p.empty() || overlaps(w.path, p); });
    if (structure_ok || !on_default) result.warnings.push_back(std::move(w));
  }
  std::stable_sort(result.warnings.begin(), result.warnings.end(),
                   [](const CaseError& a, const CaseError& b) { return a.line < b.line; });
  result.lines = reader.lines;
  if (!result.errors.empty()) result.body = ResolvedBody();
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
    result.errors.push_back(
        {"", 0, "cannot open the case file '" + path + "': " + std::strerror(errno)});
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
    result.errors.push_back(
        {"", 0, "the case file '" + path + "' is larger than the limit of 1 MiB (1048576 bytes)"});
    return result;
  }
  result = load_case_text(text, path);
  return result;
}

}  // namespace heatsim::io
