// The semantic checks' shared parts (internal to io/): a report that gives each problem the
// line of its key path, and the checks of real problems (materials, regions, sources, probes,
// convective and heat-flux faces) that case_check_fields.cpp holds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case_loader.hpp"

namespace heatsim::io::check {

class Report {
 public:
  explicit Report(const std::map<std::string, int>& lines) : lines_(lines) {}

  std::vector<CaseError> errors;
  std::vector<CaseError> warnings;

  void error(const std::string& path, const std::string& message) {
    errors.push_back(CaseError{path, line_of(path), message});
  }
  void warning(const std::string& path, const std::string& message) {
    warnings.push_back(CaseError{path, line_of(path), message});
  }
  // Whether the case gave `path` itself (it has a line).
  bool given(const std::string& path) const { return lines_.count(path) > 0; }
  // The line of `path`, or of the nearest enclosing key that has one.
  int line_of(std::string path) const;
  const std::map<std::string, int>& lines() const { return lines_; }
  // False (and an error) when v is NaN or infinite.
  bool finite(const std::string& path, double v);
  // False (and an error) unless v is finite and > 0.
  bool positive(const std::string& path, double v);

 private:
  const std::map<std::string, int>& lines_;
};

// check_case, with the warnings into `warnings` when it is not null.
// With `body` not null, the body the stability check laid on the grid goes there (fields null
// when it did not).
std::vector<CaseError> run_checks(const solver::Case& c, const std::map<std::string, int>& lines,
                                  bool check_stability, std::vector<CaseError>* warnings,
                                  ResolvedBody* body = nullptr);

// Materials, regions, sources, probes, the faces that need coefficient fields, and the
// scheme those need. Needs grid.dims 1..3.
void check_fields(const solver::Case& c, Report& r);
// dt against the coefficient fields' stability limit (cases with has_fields()); needs a case
// that is otherwise valid: the files are read and the body laid on the grid (resolve_body,
// whose errors come first).
void check_fields_stable(const solver::Case& c, Report& r, ResolvedBody* body = nullptr);

}  // namespace heatsim::io::check
