// Reading a case: YAML text -> validated solver::Case. Every problem in the file is reported at
// once, each with its key path (`grid.n[2]`) and 1-based line. No YAML type appears here: the
// parser stays inside io/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solver/case.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::io {

struct CaseError {
  std::string path;  // key path such as "grid.n[2]"; empty for problems of the whole file
  int line = 0;      // 1-based; 0 when unknown (e.g. after command-line overrides)
  std::string message;
  // The problems this entry stands for without listing them: the last line of a list cut at
  // kMaxReportedErrors ("... and 300 more errors") holds their number; 0 for a problem itself.
  std::size_t unlisted = 0;
  // "grid.n[2]: must be >= 3 (line 7)"; the path and line parts are left out when empty.
  std::string to_string() const;
};

// How many problems `errors` reports: one per entry, the unlisted ones of a cut list included.
std::size_t count_problems(const std::vector<CaseError>& errors);

// A case's body laid on the grid (resolve_body below): the material of every node, the voids'
// surfaces, the coefficient fields (null when there are errors), and what the checks found.
struct ResolvedBody {
  std::vector<std::int32_t> material_ids;
  solver::VoidSurfaces surfaces;
  std::shared_ptr<const kernels::CoefficientFields> fields;
  std::vector<CaseError> errors;
  std::vector<CaseError> warnings;
};

struct LoadResult {
  std::optional<solver::Case> value;  // set only when there are no errors
  std::vector<CaseError> errors;
  // Things that run but are likely mistakes (a material no region uses, a region that holds
  // no node); they never stop a run. Beside errors too, but none on a value that failed to
  // read (it keeps its default).
  std::vector<CaseError> warnings;
  // The 1-based line of every key path the text gave, for checks made later (resolve_body).
  std::map<std::string, int> lines;
  // An explicit case with coefficient fields: the body its stability check laid on the grid,
  // so that the run need not lay it again (its fields null otherwise).
  ResolvedBody body;
  bool ok() const { return value.has_value() && errors.empty(); }
};

// Limits on the text itself, checked before it is parsed.
constexpr std::size_t kMaxCaseBytes = 1u << 20;  // 1 MiB
constexpr int kMaxCaseNesting = 64;              // collections inside collections
constexpr std::size_t kMaxReportedErrors = 200;  // further errors are counted, not listed

// Reads and validates a case file; sets Case::source_text and Case::source_path.
LoadResult load_case_file(const std::string& path);
// Validates YAML text; `origin` names it in messages and becomes Case::source_path.
LoadResult load_case_text(const std::string& text, const std::string& origin = "<text>");

// Semantic checks of a filled case (ranges, sizes, consistency, stability), run again after
// command-line overrides. Errors carry no line numbers.
std::vector<CaseError> check_case(const solver::Case& c);
// The same, with lines looked up by key path (the nearest enclosing path that has one). The
// stability check builds the stencil, so the loader skips it while other errors stand.
std::vector<CaseError> check_case(const solver::Case& c, const std::map<std::string, int>& lines,
                                  bool check_stability = true);

// The warnings of a filled case (LoadResult::warnings), with lines looked up as check_case does.
std::vector<CaseError> case_warnings(const solver::Case& c);
std::vector<CaseError> case_warnings(const solver::Case& c,
                                     const std::map<std::string, int>& lines);

// The body of a case with coefficient fields (Case::has_fields()) laid on the grid, with the
// checks that need it, for a case whose field inputs were read (read_field_inputs): the material
// of every node, the voids' surfaces, the coefficient fields, and as errors or warnings with key
// paths and `lines` (LoadResult::lines; lines of a parent key path when the path has none):
// - errors: a void with a convective or heat-flux surface that faces no node of the body (it
//   lies outside the domain, or inside other voids); a source that lies wholly inside voids; a
//   steady state with a piece of the body the voids cut off that has no Dirichlet node and no
//   convection (its temperature is not determined); and what building the fields refuses
//   (nodes without a material, the voids removing every node, ...);
// - warnings: a void without a surface condition that changes nothing; a source part of whose
//   shape lies in a void (the source heats the body's part alone); a transient run with pieces
//   the voids cut off from the rest of the body; slivers of the body a void's bound leaves in
//   nodes whose faces all cross it (errors in a steady state when nothing fixes them).
// `check_memory`: first refuse, at grid.n, a case whose run needs more memory than the host has
// available (the body alone takes several bytes a node, so a grid far too large would fail
// while being laid, or be killed); false where a run that passed that check lays it again.
ResolvedBody resolve_body(const solver::Case& c, const std::map<std::string, int>& lines,
                          bool check_memory = true);

// One error per line, as to_string() gives them.
std::string format_errors(const std::vector<CaseError>& errors);

// Message helpers shared by the loader's sources.
namespace detail {
// 'text' in single quotes, cut to a readable length, control characters replaced.
std::string quote(const std::string& text);
// Six significant digits; "nan", "inf", "-inf" for the non-finite values.
std::string format_number(double v);
// Six significant digits rounded toward zero, so that a printed limit is itself within it.
std::string format_number_down(double v);
// " (did you mean 'x'?)" for the candidate nearest to `word`, or "" when none is close.
std::string nearest_suffix(const std::string& word, const std::vector<std::string>& candidates);
// Problems of the raw text (size, NUL bytes, control characters, invalid UTF-8, nesting
// deeper than kMaxCaseNesting), found before the text is parsed.
std::vector<CaseError> check_text(const std::string& text);
}  // namespace detail

}  // namespace heatsim::io
