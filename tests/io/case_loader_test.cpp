// The case loader on valid input: every example in inputs/ loads, values land in the right
// fields, defaults apply, and errors carry key paths, lines and useful messages.
#include "io/case_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>

#include "io/field_file.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;
using solver::BoundaryKind;
using solver::InitialKind;
using solver::SchemeKind;

const fs::path kSource = HEATSIM_SOURCE_DIR;

solver::Case load_ok(const std::string& text) {
  const LoadResult r = load_case_text(text);
  EXPECT_TRUE(r.ok()) << format_errors(r.errors);
  return r.value.value_or(solver::Case{});
}

solver::Case load_input(const std::string& relative) {
  const LoadResult r = load_case_file((kSource / "inputs" / relative).string());
  EXPECT_TRUE(r.ok()) << relative << ":\n" << format_errors(r.errors);
  return r.value.value_or(solver::Case{});
}

std::string all_errors(const LoadResult& r) { return format_errors(r.errors); }

const CaseError* find_error(const LoadResult& r, const std::string& path) {
  for (const CaseError& e : r.errors)
    if (e.path == path) return &e;
  return nullptr;
}

// A small valid case; tests replace one line of it.
const std::string kMinimal =
    "grid:\n"                               // 1
    "  dims: 2\n"                           // 2
    "  n: [16, 12]\n"                       // 3
    "physics:\n"                            // 4
    "  alpha: 2.0\n"                        // 5
    "boundary:\n"                           // 6
    "  all: {type: dirichlet, value: 0}\n"  // 7
    "initial:\n"                            // 8
    "  type: constant\n"                    // 9
    "  value: 3.5\n"                        // 10
    "time:\n"                               // 11
    "  steps: 10\n";                        // 12

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(CaseLoader, EveryExampleInputLoads) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "inputs")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    const LoadResult r = load_case_file(entry.path().string());
    EXPECT_TRUE(r.ok()) << entry.path() << ":\n" << all_errors(r);
    // An example is what a user copies: nothing in it is warned of.
    EXPECT_TRUE(r.warnings.empty()) << entry.path() << ":\n" << format_errors(r.warnings);
    if (r.ok()) {
      EXPECT_EQ(r.value->source_path, entry.path().string());
      EXPECT_FALSE(r.value->source_text.empty());
      EXPECT_TRUE(check_case(*r.value).empty()) << entry.path();
    }
  }
  EXPECT_GE(count, 8 + 8);  // 3 examples, 5 analytic cases, 8 benchmark shapes
}

TEST(CaseLoader, Heat2dExample) {
  const solver::Case c = load_input("heat2d.yaml");
  EXPECT_EQ(c.grid.dims, 2);
  EXPECT_EQ(c.grid.n[0], 256);
  EXPECT_EQ(c.grid.n[1], 256);
  EXPECT_EQ(c.grid.n[2], 1);
  EXPECT_DOUBLE_EQ(c.grid.length[0], 1.0);
  EXPECT_DOUBLE_EQ(c.physics.alpha, 1.0);
  EXPECT_EQ(c.scheme.kind, SchemeKind::order2);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(c.boundary[f].kind, BoundaryKind::dirichlet);
    EXPECT_DOUBLE_EQ(c.boundary[f].value, 0.0);
  }
  EXPECT_EQ(c.initial.kind, InitialKind::gaussian);
  EXPECT_DOUBLE_EQ(c.initial.center[0], 0.5);
  EXPECT_DOUBLE_EQ(c.initial.center[1], 0.5);
  EXPECT_DOUBLE_EQ(c.initial.width, 0.05);
  EXPECT_FALSE(c.time.dt.has_value());  // auto
  ASSERT_TRUE(c.time.steps.has_value());
  EXPECT_EQ(*c.time.steps, 2000);
  EXPECT_FALSE(c.time.end_time.has_value());
  EXPECT_EQ(c.output.directory, "out/heat2d");
  EXPECT_EQ(c.output.every, 200);
  EXPECT_EQ(c.checkpoint.every, 1000);
  EXPECT_NE(c.source_text.find("gaussian"), std::string::npos);
  // dt: auto resolves to 0.9 of the limit h^2 / (4 alpha) of the 5-point Laplacian.
  const solver::TimePlan plan = solver::plan_time(c);
  const double h = 1.0 / 255.0;
  EXPECT_NEAR(plan.dt, 0.9 * h * h / 4.0, 1e-6 * plan.dt);
  EXPECT_EQ(plan.steps, 2000);
}

TEST(CaseLoader, Heat1dExampleWithScalarLengthAndMixedFaces) {
  const solver::Case c = load_input("heat1d.yaml");
  EXPECT_EQ(c.grid.dims, 1);
  EXPECT_EQ(c.grid.n[0], 401);
  EXPECT_DOUBLE_EQ(c.grid.length[0], 2.0);
  EXPECT_DOUBLE_EQ(c.physics.alpha, 0.5);
  // order2: beside its oscillating Dirichlet face order4 would be second order too (below).
  EXPECT_EQ(c.scheme.kind, SchemeKind::order2);
  EXPECT_EQ(c.boundary[0].kind, BoundaryKind::dirichlet);
  EXPECT_DOUBLE_EQ(c.boundary[0].amplitude, 1.0);
  EXPECT_DOUBLE_EQ(c.boundary[0].frequency, 5.0);
  EXPECT_EQ(c.boundary[1].kind, BoundaryKind::neumann);
  EXPECT_DOUBLE_EQ(c.boundary[1].value, 0.0);
  EXPECT_EQ(c.initial.kind, InitialKind::box);
  EXPECT_DOUBLE_EQ(c.initial.lower[0], 0.75);
  EXPECT_DOUBLE_EQ(c.initial.upper[0], 1.25);
  EXPECT_DOUBLE_EQ(c.initial.value, 1.0);
  EXPECT_FALSE(c.time.steps.has_value());
  ASSERT_TRUE(c.time.end_time.has_value());
  EXPECT_DOUBLE_EQ(*c.time.end_time, 0.1);
}

TEST(CaseLoader, Heat3dExampleSpecificFacesOverrideAll) {
  const solver::Case c = load_input("heat3d.yaml");
  EXPECT_EQ(c.grid.dims, 3);
  EXPECT_EQ(c.scheme.kind, SchemeKind::isotropic);
  for (int f = 0; f < 4; ++f) EXPECT_EQ(c.boundary[f].kind, BoundaryKind::neumann) << f;
  EXPECT_EQ(c.boundary[4].kind, BoundaryKind::dirichlet);
  EXPECT_DOUBLE_EQ(c.boundary[4].value, 1.0);
  EXPECT_EQ(c.boundary[5].kind, BoundaryKind::dirichlet);
  EXPECT_DOUBLE_EQ(c.boundary[5].value, 0.0);
}

TEST(CaseLoader, PeriodicModesExample) {
  const solver::Case c = load_input("analytic/periodic_fourier_2d.yaml");
  for (int f = 0; f < 4; ++f) EXPECT_EQ(c.boundary[f].kind, BoundaryKind::periodic);
  ASSERT_EQ(c.initial.modes.size(), 2u);
  EXPECT_EQ(c.initial.modes[0].k[0], 2);
  EXPECT_EQ(c.initial.modes[0].k[1], 4);
  EXPECT_FALSE(c.initial.modes[0].cosine[0]);
  EXPECT_TRUE(c.initial.modes[0].cosine[1]);
  EXPECT_DOUBLE_EQ(c.initial.modes[1].amplitude, 0.5);
  EXPECT_TRUE(c.initial.modes[1].cosine[0]);
}

TEST(CaseLoader, CustomBox49Weights) {
  const solver::Case c = load_input("bench/box_2d49p.yaml");
  EXPECT_EQ(c.scheme.kind, SchemeKind::custom);
  EXPECT_EQ(c.scheme.radius, 3);
  ASSERT_EQ(c.scheme.weights.size(), 49u);
  EXPECT_NEAR(c.scheme.weights[24], -1.7013888888888888, 1e-15);  // the centre
  double sum = 0.0;
  for (double w : c.scheme.weights) sum += w;
  EXPECT_NEAR(sum, 0.0, 1e-12);
  EXPECT_GT(solver::plan_time(c).dt, 0.0);
}

TEST(CaseLoader, DefaultsApply) {
  const solver::Case c = load_ok(kMinimal);
  EXPECT_EQ(c.scheme.kind, SchemeKind::order2);
  EXPECT_EQ(c.precision, solver::Precision::fp64);
  EXPECT_EQ(c.backend, "auto");
  EXPECT_DOUBLE_EQ(c.physics.source, 0.0);
  EXPECT_DOUBLE_EQ(c.grid.length[0], 1.0);
  EXPECT_DOUBLE_EQ(c.grid.length[1], 1.0);
  EXPECT_FALSE(c.time.dt.has_value());
  EXPECT_EQ(c.output.directory, "out");
  EXPECT_EQ(c.output.every, 0);
  EXPECT_EQ(c.output.name, "field");
  EXPECT_EQ(c.checkpoint.every, 0);
  EXPECT_EQ(c.checkpoint.keep, 0);
  EXPECT_DOUBLE_EQ(c.initial.value, 3.5);
  EXPECT_EQ(c.source_path, "<text>");
  EXPECT_EQ(c.source_text, kMinimal);
}

TEST(CaseLoader, GaussianCentreDefaultsToTheMiddleAndBoxValueToOne) {
  const std::string gaussian =
      replace(replace(kMinimal, "type: constant", "type: gaussian"), "value: 3.5", "width: 0.1");
  const solver::Case g =
      load_ok(replace(gaussian, "  n: [16, 12]\n", "  n: [16, 12]\n  length: [2.0, 4.0]\n"));
  EXPECT_DOUBLE_EQ(g.initial.center[0], 1.0);
  EXPECT_DOUBLE_EQ(g.initial.center[1], 2.0);
  EXPECT_DOUBLE_EQ(g.initial.amplitude, 1.0);

  const solver::Case b = load_ok(replace(replace(kMinimal, "type: constant", "type: box"),
                                         "value: 3.5", "lower: [0.2, 0.2]\n  upper: [0.4, 0.5]"));
  EXPECT_DOUBLE_EQ(b.initial.value, 1.0);
  EXPECT_DOUBLE_EQ(b.initial.background, 0.0);
  EXPECT_DOUBLE_EQ(b.initial.upper[1], 0.5);
}

TEST(CaseLoader, ExpressionInitialCondition) {
  const std::string expr = replace(kMinimal, "type: constant", "type: expression");
  const solver::Case c =
      load_ok(replace(expr, "value: 3.5", "value: \"exp(-((x - 0.5)^2 + y^2) / 0.01)\""));
  EXPECT_EQ(c.initial.kind, InitialKind::expression);
  EXPECT_EQ(c.initial.expression, "exp(-((x - 0.5)^2 + y^2) / 0.01)");
  // Unquoted, and a bare number, are formulas too.
  EXPECT_EQ(load_ok(replace(expr, "value: 3.5", "value: 2*x")).initial.expression, "2*x");
  EXPECT_EQ(load_ok(expr).initial.expression, "3.5");

  // What does not compile is reported with the column, on the value's line.
  LoadResult r = load_case_text(replace(expr, "value: 3.5", "value: \"sin(pi*z)\""));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "initial.value: unknown name 'z' (variables: x, y, constants: pi, e) at column 8 "
            "(line 10)");
  r = load_case_text(replace(expr, "value: 3.5", "value: \"1 +\""));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("unexpected end"), std::string::npos) << all_errors(r);

  // Not finite where the samples look (here x = 0 off the Dirichlet faces: there are none).
  const std::string neumann =
      replace(expr, "all: {type: dirichlet, value: 0}", "all: {type: neumann, flux: 0}");
  r = load_case_text(replace(neumann, "value: 3.5", "value: \"1 / x\""));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "initial.value: the expression is inf at node (0, 0): x = 0, y = 0 (line 10)");
  // On a Dirichlet face the node takes g(0): no error.
  EXPECT_TRUE(load_case_text(replace(expr, "value: 3.5", "value: \"1 / x\"")).ok());

  // The value is required, and nothing else is taken.
  r = load_case_text(replace(expr, "  value: 3.5\n", "  width: 2\n"));
  EXPECT_NE(find_error(r, "initial.value"), nullptr) << all_errors(r);
  EXPECT_NE(find_error(r, "initial.width"), nullptr) << all_errors(r);
}

TEST(CaseLoader, FileInitialConditionIsCheckedAgainstTheFile) {
  const std::string file = replace(kMinimal, "type: constant", "type: file");
  LoadResult r = load_case_text(replace(file, "value: 3.5", "path: /nonexistent/u.h5"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(), "initial.path: /nonexistent/u.h5: no such file (line 10)");
  r = load_case_text(file);
  EXPECT_NE(find_error(r, "initial.path"), nullptr) << all_errors(r);   // required
  EXPECT_NE(find_error(r, "initial.value"), nullptr) << all_errors(r);  // not a key of file
  // A heatsim output of the grid's dimensions (16 x 12) loads; dataset defaults to u.
  const fs::path dir =
      fs::temp_directory_path() / ("heatsim_loader_file_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  FieldMeta m;
  m.dims = 2;
  m.n = {16, 12, 1};
  m.precision = "fp32";
  write_field_file((dir / "u.h5").string(), m, std::vector<double>(192, 0.5));
  const solver::Case c = load_ok(replace(file, "value: 3.5", "path: " + (dir / "u.h5").string()));
  EXPECT_EQ(c.initial.kind, InitialKind::file);
  EXPECT_EQ(c.initial.dataset, "u");
  r = load_case_text(
      replace(file, "value: 3.5", "path: " + (dir / "u.h5").string() + "\n  dataset: w"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "initial.dataset");
  EXPECT_EQ(r.errors[0].line, 11);
  // A file of another grid, the dataset not named: the key the case wrote, initial.path.
  r = load_case_text(replace(replace(file, "value: 3.5", "path: " + (dir / "u.h5").string()),
                             "n: [16, 12]", "n: [16, 13]"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "initial.path") << all_errors(r);
  EXPECT_EQ(r.errors[0].line, 10);
  EXPECT_NE(r.errors[0].message.find("dataset 'u' has dimensions [12, 16]"), std::string::npos)
      << all_errors(r);
  // Named: its own key.
  r = load_case_text(
      replace(replace(file, "value: 3.5", "path: " + (dir / "u.h5").string() + "\n  dataset: u"),
              "n: [16, 12]", "n: [16, 13]"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "initial.dataset") << all_errors(r);
  EXPECT_EQ(r.errors[0].line, 11);
  fs::remove_all(dir);
}

// A face with a key missing still has its other values checked: every problem at once.
TEST(CaseLoader, AFaceMissingAKeyHasItsOtherValuesCheckedToo) {
  const LoadResult r = load_case_text(
      replace(kMinimal, "  all: {type: dirichlet, value: 0}\n",
              "  all: {type: dirichlet, value: 0}\n  x-: {type: convective, h: -5}\n"));
  ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
  const CaseError* ambient = find_error(r, "boundary.x-.ambient");
  ASSERT_NE(ambient, nullptr) << all_errors(r);
  EXPECT_EQ(ambient->line, 8);
  const CaseError* h = find_error(r, "boundary.x-.h");
  ASSERT_NE(h, nullptr) << all_errors(r);
  EXPECT_EQ(h->line, 8);
  EXPECT_EQ(h->message.rfind("must be >= 0 (got -5)", 0), 0u) << h->message;
}

// An unclosed '{' or '[' is reported at the line that opened it, not where the parser gave up.
TEST(CaseLoader, AnUnclosedFlowCollectionNamesTheLineThatOpenedIt) {
  LoadResult r = load_case_text(
      replace(kMinimal, "  all: {type: dirichlet, value: 0}\n", "  all: {type: dirichlet\n"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].line, 7) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("the '{' opened on line 7 is never closed"), std::string::npos)
      << all_errors(r);
  r = load_case_text("grid: {dims: 1, n: [11], length: [1.0]\nphysics: {alpha: 2}\n");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].line, 1) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("the '{' opened on line 1 is never closed"), std::string::npos)
      << all_errors(r);
}

TEST(CaseLoader, ExplicitOptions) {
  const std::string text = kMinimal +
                           "precision: fp32\n"
                           "backend: cpu\n"
                           "output: {directory: results, every: 5, name: temp}\n"
                           "checkpoint: {every: 7, keep: 3}\n"
                           "scheme: order6\n";
  const solver::Case c = load_ok(replace(replace(text, "steps: 10", "steps: 10\n  dt: 1e-4"),
                                         "n: [16, 12]", "n: [16, 12]\n  length: 2"));
  EXPECT_EQ(c.precision, solver::Precision::fp32);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.output.directory, "results");
  EXPECT_EQ(c.output.every, 5);
  EXPECT_EQ(c.output.name, "temp");
  EXPECT_EQ(c.checkpoint.every, 7);
  EXPECT_EQ(c.checkpoint.keep, 3);
  EXPECT_EQ(c.scheme.kind, SchemeKind::order6);
  ASSERT_TRUE(c.time.dt.has_value());
  EXPECT_DOUBLE_EQ(*c.time.dt, 1e-4);
  EXPECT_DOUBLE_EQ(c.grid.length[1], 2.0);
}

TEST(CaseLoader, DtAutoSpelledOutAndQuoted) {
  EXPECT_FALSE(load_ok(replace(kMinimal, "steps: 10", "steps: 10\n  dt: auto")).time.dt);
  EXPECT_FALSE(load_ok(replace(kMinimal, "steps: 10", "steps: 10\n  dt: \"auto\"")).time.dt);
}

// The implicit time methods by name; a misspelt one names every method. The implicit ones
// (multigrid on the second-order flux form) refuse another scheme at time.method's line.
TEST(CaseLoader, TimeMethodsAndTheSchemeTheImplicitOnesNeed) {
  const std::string implicit = replace(kMinimal, "steps: 10", "steps: 10\n  dt: 0.5\n  method: M");
  for (const auto& [name, method] :
       {std::pair{"backward-euler", solver::TimeMethod::backward_euler},
        std::pair{"crank-nicolson", solver::TimeMethod::crank_nicolson},
        std::pair{"bdf2", solver::TimeMethod::bdf2}}) {
    EXPECT_EQ(load_ok(replace(implicit, "method: M", std::string("method: ") + name)).time.method,
              method)
        << name;
    const LoadResult r = load_case_text(
        replace(implicit, "method: M", std::string("method: ") + name) + "scheme: order4\n");
    ASSERT_FALSE(r.ok()) << name;
    const CaseError* e = find_error(r, "time.method");
    ASSERT_NE(e, nullptr) << all_errors(r);
    EXPECT_EQ(e->to_string(),
              std::string("time.method: ") + name + " needs scheme order2, not order4 (line 14)");
  }
  const LoadResult typo = load_case_text(replace(implicit, "method: M", "method: bdf-2"));
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(all_errors(typo).find("expected explicit, backward-euler, crank-nicolson, bdf2 or "
                                  "steady, got 'bdf-2' (did you mean 'bdf2'?) (line 14)"),
            std::string::npos)
      << all_errors(typo);
}

TEST(CaseLoader, ErrorToString) {
  EXPECT_EQ((CaseError{"grid.n[2]", 7, "must be >= 3"}).to_string(),
            "grid.n[2]: must be >= 3 (line 7)");
  EXPECT_EQ((CaseError{"grid.n[2]", 0, "must be >= 3"}).to_string(), "grid.n[2]: must be >= 3");
  EXPECT_EQ((CaseError{"", 3, "bad"}).to_string(), "bad (line 3)");
}

TEST(CaseLoader, EveryErrorAtOnceWithPathsAndLines) {
  std::string text = replace(kMinimal, "n: [16, 12]", "n: [16, 2]");
  text = replace(text, "alpha: 2.0", "alpha: -1");
  text = replace(text, "value: 3.5", "value: .nan");
  const LoadResult r = load_case_text(text);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(r.value.has_value());
  ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(), "grid.n[1]: must be >= 3 (got 2) (line 3)");
  EXPECT_EQ(r.errors[1].path, "physics.alpha");
  EXPECT_EQ(r.errors[1].line, 5);
  EXPECT_EQ(r.errors[2].path, "initial.value");
  EXPECT_EQ(r.errors[2].line, 10);
  EXPECT_NE(r.errors[2].message.find("finite"), std::string::npos);
}

TEST(CaseLoader, TypoSuggestsNearestKey) {
  const LoadResult r = load_case_text(replace(kMinimal, "alpha: 2.0", "alpah: 2.0"));
  const CaseError* typo = find_error(r, "physics.alpah");
  ASSERT_NE(typo, nullptr) << all_errors(r);
  EXPECT_NE(typo->message.find("unknown key 'alpah' (did you mean 'alpha'?)"), std::string::npos)
      << typo->message;
  EXPECT_EQ(typo->line, 5);
  // The required key the typo names is not reported missing as well: one mistake, one error.
  EXPECT_EQ(find_error(r, "physics.alpha"), nullptr) << all_errors(r);
  EXPECT_EQ(r.errors.size(), 1u) << all_errors(r);
}

TEST(CaseLoader, DuplicateKeyNamesTheFirstLine) {
  const LoadResult r = load_case_text(kMinimal + "time:\n  steps: 3\n");
  const CaseError* dup = find_error(r, "time");
  ASSERT_NE(dup, nullptr) << all_errors(r);
  EXPECT_NE(dup->message.find("duplicate key 'time' (first given on line 11)"), std::string::npos);
  EXPECT_EQ(dup->line, 13);
}

TEST(CaseLoader, UnstableDtNamesTheLimitRoundedDown) {
  // 1D order2, h = 0.01, alpha = 1: the limit is h^2 / 2 = 5e-5.
  const std::string text =
      "grid: {dims: 1, n: [101]}\nphysics: {alpha: 1}\nboundary: {all: {type: neumann}}\n"
      "initial: {type: constant}\ntime:\n  dt: 1e-4\n  steps: 10\n";
  const LoadResult r = load_case_text(text);
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  const CaseError& e = r.errors[0];
  EXPECT_EQ(e.path, "time.dt");
  EXPECT_EQ(e.line, 6);
  const std::string prefix = "0.0001 is unstable for this scheme; the largest stable dt is ";
  ASSERT_EQ(e.message.rfind(prefix, 0), 0u) << e.message;
  const double printed = std::strtod(e.message.c_str() + prefix.size(), nullptr);
  EXPECT_NEAR(printed, 5e-5, 1e-10);
  // The printed limit is itself accepted.
  EXPECT_TRUE(load_case_text(replace(text, "1e-4", e.message.substr(prefix.size()))).ok());
}

TEST(CaseLoader, StabilityNotCheckedWhileOtherErrorsStand) {
  std::string text = replace(kMinimal, "steps: 10", "steps: 10\n  dt: 1.0");
  text = replace(text, "value: 3.5", "value: [1]");
  const LoadResult r = load_case_text(text);
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "initial.value");
}

TEST(CaseLoader, CheckCaseAfterOverridesHasNoLines) {
  solver::Case c = load_ok(kMinimal);
  c.grid.n[1] = 2;
  c.backend = "cdu";
  const std::vector<CaseError> errors = check_case(c);
  ASSERT_EQ(errors.size(), 2u) << format_errors(errors);
  EXPECT_EQ(errors[0].to_string(), "grid.n[1]: must be >= 3 (got 2)");
  EXPECT_EQ(errors[1].path, "backend");
  EXPECT_NE(errors[1].message.find("unknown backend 'cdu' (did you mean 'cpu'?)"),
            std::string::npos)
      << errors[1].message;
  // The list names auto and every compiled backend (cpu always, CUDA ones when built).
  EXPECT_NE(errors[1].message.find("known: auto, "), std::string::npos) << errors[1].message;
  EXPECT_NE(errors[1].message.find("cpu"), std::string::npos) << errors[1].message;
  // A build without CUDA says why a GPU backend's name is unknown to it.
  EXPECT_EQ(errors[1].message.find("built without CUDA") != std::string::npos,
            !kernels::cuda_compiled())
      << errors[1].message;

  c = load_ok(kMinimal);
  c.time.dt = 10.0;
  const std::vector<CaseError> unstable = check_case(c);
  ASSERT_EQ(unstable.size(), 1u);
  EXPECT_EQ(unstable[0].path, "time.dt");
  EXPECT_EQ(unstable[0].line, 0);
}

// A length whose spacing's 1/h^2 overflows (or vanishes) is the grid's error, at its line,
// not an unstable scheme's.
TEST(CaseLoader, AbsurdLengthsAreTheGridsErrorAtTheirLine) {
  const auto with_length = [](const std::string& length) {
    return load_case_text(
        replace(kMinimal, "  n: [16, 12]\n", "  n: [16, 12]\n  length: " + length + "\n"));
  };
  // One number is every axis's length: both are named.
  for (const char* length : {"1e-300", "1e300"}) {
    const LoadResult r = with_length(length);
    ASSERT_EQ(r.errors.size(), 2u) << length << ": " << all_errors(r);
    for (std::size_t a = 0; a < 2; ++a) {
      EXPECT_EQ(r.errors[a].path, "grid.length[" + std::to_string(a) + "]") << all_errors(r);
      EXPECT_EQ(r.errors[a].line, 4) << all_errors(r);
      EXPECT_NE(r.errors[a].message.find("gives a spacing h = "), std::string::npos)
          << all_errors(r);
    }
  }
  const LoadResult x = with_length("[1e-100, 1.0]");
  ASSERT_EQ(x.errors.size(), 1u) << all_errors(x);
  EXPECT_EQ(x.errors[0].to_string(),
            "grid.length[0]: gives a spacing h = 6.66667e-102, outside 1e-60 to 1e+60 where the "
            "steps' 1/h^2 stays within double precision; express the case in other units (line 4)");
  // The y axis is named when it is the one.
  const LoadResult y = with_length("[1, 1e70]");
  ASSERT_EQ(y.errors.size(), 1u) << all_errors(y);
  EXPECT_EQ(y.errors[0].path, "grid.length[1]");
  // Small and large lengths in other units still load: h = 1e-12 / 15 and 1e40 / 11.
  EXPECT_TRUE(with_length("[1e-12, 1e-12]").ok()) << all_errors(with_length("[1e-12, 1e-12]"));
  EXPECT_TRUE(with_length("[1e40, 1e40]").ok()) << all_errors(with_length("[1e40, 1e40]"));
}

// A subnormal alpha made h^2 / alpha inf: reported as "scheme: all weights are zero" without a
// line; it is alpha's error, at its line.
TEST(CaseLoader, AnAlphaWithNoFiniteLimitIsAlphasErrorAtItsLine) {
  const LoadResult r = load_case_text(replace(kMinimal, "alpha: 2.0", "alpha: 1e-320"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "physics.alpha") << all_errors(r);
  EXPECT_EQ(r.errors[0].line, 5) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("gives no finite stability limit"), std::string::npos)
      << all_errors(r);
  // A small alpha with a finite limit is a case like any other.
  EXPECT_TRUE(load_case_text(replace(kMinimal, "alpha: 2.0", "alpha: 1e-300")).ok());
}

TEST(CaseLoader, RadiusRaisesTheMinimumPoints) {
  const LoadResult r = load_case_text(kMinimal + "scheme: order6\n");
  ASSERT_EQ(r.errors.size(), 0u) << all_errors(r);
  const LoadResult small =
      load_case_text(replace(kMinimal, "n: [16, 12]", "n: [16, 5]") + "scheme: order6\n");
  const CaseError* e = find_error(small, "grid.n[1]");
  ASSERT_NE(e, nullptr) << all_errors(small);
  EXPECT_NE(e->message.find("must be >= 7"), std::string::npos);
}

TEST(CaseLoader, CustomSchemeNeedsEqualSpacing) {
  const std::string scheme =
      "scheme:\n  type: custom\n  radius: 1\n  weights: [0, 1, 0, 1, -4, 1, 0, 1, 0]\n";
  EXPECT_TRUE(load_case_text(replace(kMinimal, "n: [16, 12]", "n: [16, 16]") + scheme).ok());
  const LoadResult r = load_case_text(kMinimal + scheme);  // h_x = 1/15, h_y = 1/11
  const CaseError* e = find_error(r, "scheme");
  ASSERT_NE(e, nullptr) << all_errors(r);
  EXPECT_NE(e->message.find("equal spacing"), std::string::npos);
}

TEST(CaseLoader, FacesFromAllPointAtTheLineOfAll) {
  const LoadResult r = load_case_text(
      replace(kMinimal, "{type: dirichlet, value: 0}", "{type: dirichlet, value: .inf}"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);  // reported once, for 'all'
  EXPECT_EQ(r.errors[0].path, "boundary.all.value");
  EXPECT_EQ(r.errors[0].line, 7);
}

TEST(CaseLoader, ManyErrorsAreCapped) {
  std::string text = kMinimal + "output:\n";
  for (int i = 0; i < 500; ++i) text += "  key" + std::to_string(i) + ": 1\n";
  const LoadResult r = load_case_text(text);
  ASSERT_EQ(r.errors.size(), kMaxReportedErrors + 1);
  EXPECT_EQ(r.errors.back().message, "... and 300 more errors");
}

TEST(CaseLoader, MissingFileAndDirectory) {
  const LoadResult missing = load_case_file((kSource / "inputs" / "no-such-case.yaml").string());
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].message.find("cannot open"), std::string::npos);
  const LoadResult dir = load_case_file((kSource / "inputs").string());
  ASSERT_EQ(dir.errors.size(), 1u);
  EXPECT_NE(dir.errors[0].message.find("directory"), std::string::npos);
}

TEST(CaseLoader, PathologicalTextFailsCleanly) {
  const std::string deep_flow(100000, '[');
  std::string deep_block;
  for (int i = 0; i < 100000; ++i) deep_block += "- ";
  std::string deep_indent;
  for (int i = 0; i < 200; ++i)
    deep_indent += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  for (const std::string& text : {deep_flow, deep_block + "x\n", deep_indent}) {
    const LoadResult r = load_case_text(text);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("nests"), std::string::npos) << r.errors[0].message;
  }
  // Billion laughs: aliases are never expanded, so this is quick and reports unknown keys.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    bomb += std::string(1, c) + ": &" + c + " [*" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
            static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + "]\n";
  bomb += "grid: *j\nphysics: *j\n";
  const LoadResult r = load_case_text(bomb);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(all_errors(r).find("unknown key 'a'"), std::string::npos) << all_errors(r);
  EXPECT_NE(all_errors(r).find("grid: expected a map"), std::string::npos);
}

TEST(CaseLoader, QuotedNumbersAreStrings) {
  const LoadResult r = load_case_text(replace(kMinimal, "alpha: 2.0", "alpha: \"2.0\""));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "physics.alpha: expected a number, got the string '2.0' (line 5)");
}

// A quote never closed runs to the end of the text, swallowing every key after it: one error at
// its key, not "missing required section" for the sections it swallowed nor "expected a number"
// with the rest of the file as the string.
TEST(CaseLoader, AnUnclosedQuoteIsOneErrorAtItsKey) {
  const std::string unclosed = "the quoted string that starts here is never closed";
  const LoadResult number = load_case_text(replace(kMinimal, "alpha: 2.0", "alpha: \"2.0"));
  ASSERT_EQ(number.errors.size(), 1u) << all_errors(number);
  EXPECT_EQ(number.errors[0].to_string(), "physics.alpha: " + unclosed + " (line 5)");
  const LoadResult choice = load_case_text(replace(kMinimal, "type: constant", "type: 'constant"));
  ASSERT_EQ(choice.errors.size(), 1u) << all_errors(choice);
  EXPECT_EQ(choice.errors[0].to_string(), "initial.type: " + unclosed + " (line 9)");
  // Problems before the quote are still reported.
  const LoadResult before = load_case_text(
      replace(replace(kMinimal, "n: [16, 12]", "n: [2, 12]"), "alpha: 2.0", "alpha: \"2.0"));
  EXPECT_TRUE(find_error(before, "physics.alpha")) << all_errors(before);
  EXPECT_EQ(before.errors.size(), 2u) << all_errors(before);
}

}  // namespace
}  // namespace heatsim::io

namespace heatsim::io {
namespace {

TEST(CaseLoader, FusionDepthOrAuto) {
  EXPECT_EQ(load_ok(kMinimal).fusion, 1);
  EXPECT_EQ(load_ok(kMinimal + "fusion: 3\n").fusion, 3);
  EXPECT_EQ(load_ok(kMinimal + "fusion: auto\n").fusion, 0);
  for (const char* bad : {"fusion: 0\n", "fusion: 17\n", "fusion: fast\n", "fusion: 2.5\n"}) {
    const LoadResult r = load_case_text(kMinimal + bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(find_error(r, "fusion"), nullptr) << bad << all_errors(r);
  }
}

}  // namespace
}  // namespace heatsim::io

// Real problems: materials, regions, sources, schedules, convective and heat-flux faces,
// probes (tests/io/real_case_test.cpp checks their validation).
namespace heatsim::io {
namespace {

const std::string kReal =
    "grid: {dims: 2, n: [11, 6], length: [1.0, 0.5]}\n"                   // 1
    "materials:\n"                                                        // 2
    "  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n"  // 3
    "  mold: {diffusivity: 0.5}\n"                                        // 4
    "regions:\n"                                                          // 5
    "  - {material: mold}\n"                                              // 6
    "  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}\n"   // 7
    "  - {material: copper, ball: {center: [0.8, 0.25], radius: 0.1}}\n"  // 8
    "  - {material: mold, where: \"x > 0.9 && y < 0.2\"}\n"               // 9
    "sources:\n"                                                          // 10
    "  - {box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}\n"     // 11
    "  - {where: \"y > 0.4\", power_density: 1.0e3, schedule: [[0, 0], [0.1, 1], [2, 1]]}\n"
    "  - {power_density: 5, schedule: {value: 1, amplitude: 0.5, frequency: 2}}\n"  // 13
    "boundary:\n"                                                                   // 14
    "  x-: {type: dirichlet, value: [[0, 300], [1, 310]]}\n"                        // 15
    "  x+: {type: convective, h: 25.0, ambient: 300.0}\n"                           // 16
    "  y-: {type: neumann, heat_flux: 100}\n"                                       // 17
    "  y+: {type: convective, h: 5, ambient: {value: 290, amplitude: 5, frequency: 0.1}}\n"
    "initial: {type: constant, value: 300}\n"             // 19
    "time: {steps: 10}\n"                                 // 20
    "probes:\n"                                           // 21
    "  every: 5\n"                                        // 22
    "  points: {center: [0.5, 0.25], corner: [0, 0]}\n";  // 23

TEST(CaseLoaderReal, APropertyThatIsNotANumberNamesItsForms) {
  const LoadResult r =
      load_case_text(replace(replace(kReal, "conductivity: 401", "conductivity: high"),
                             "specific_heat: 385", "specific_heat: {T: 300}"));
  ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "materials.copper.conductivity: expected a number (or a table [[T, conductivity], "
            "...], T in K; or one value per axis), got 'high' (line 3)");
  EXPECT_EQ(r.errors[1].to_string(),
            "materials.copper.specific_heat: expected a number (or a table [[T, specific heat], "
            "...], T in K), got a map {T: 300} (line 3)");
}

// A subnormal property (below 2.2e-308) is its own error at its line, not "every node is a
// Dirichlet node" from the stability check, whose limit it made infinite. A conductivity or
// specific heat below 1e-30 is refused as no material's (fp64 cannot solve with it); a density
// that small is still a case (the capacity's other factor keeps it normal).
TEST(CaseLoaderReal, ASubnormalPropertyIsItsOwnErrorAtItsLine) {
  const std::tuple<std::string, std::string, std::string> given[] = {
      {"conductivity", ": 401", "must be at least 1e-30 (got 1e-320)"},
      {"density", ": 8960", "below the smallest normal double"},
      {"specific_heat", ": 385", "must be at least 1e-30 (got 1e-320)"}};
  for (const auto& [key, value, says] : given) {
    const LoadResult r = load_case_text(replace(kReal, key + value, key + ": 1e-320"));
    ASSERT_EQ(r.errors.size(), 1u) << key << "\n" << all_errors(r);
    EXPECT_EQ(r.errors[0].path, std::string("materials.copper.") + key) << all_errors(r);
    EXPECT_EQ(r.errors[0].line, 3) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find(says), std::string::npos) << all_errors(r);
  }
  for (const char* key : {"conductivity", "specific_heat"}) {
    const std::string given_value = std::string(key) + (key[0] == 'c' ? ": 401" : ": 385");
    const LoadResult r = load_case_text(replace(kReal, given_value, std::string(key) + ": 1e-31"));
    ASSERT_EQ(r.errors.size(), 1u) << key << "\n" << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("must be at least 1e-30"), std::string::npos)
        << all_errors(r);
  }
  EXPECT_TRUE(load_case_text(replace(kReal, "conductivity: 401", "conductivity: 1e-30")).ok());
  EXPECT_TRUE(load_case_text(replace(kReal, "density: 8960", "density: 1e-300")).ok());
}

// A table per axis (or a list mixing tables and numbers) is neither form a conductivity takes:
// one error naming both, not one per item as if it were a broken table.
TEST(CaseLoaderReal, AConductivityTablePerAxisIsOneError) {
  for (const char* k : {"[[[300, 10], [900, 100]], 5]", "[[300, 10], 5]"}) {
    const LoadResult r =
        load_case_text(replace(kReal, "conductivity: 401", std::string("conductivity: ") + k));
    ASSERT_EQ(r.errors.size(), 1u) << k << "\n" << all_errors(r);
    EXPECT_EQ(r.errors[0].to_string(),
              "materials.copper.conductivity: expected a table [[T, conductivity], ...] (T in K) "
              "or one number per axis ([kx, ky] in 2D, [kx, ky, kz] in 3D), got a list mixing "
              "tables and numbers; a conductivity is either anisotropic and constant or "
              "isotropic and a table of T, not a table per axis (line 3)")
        << k;
  }
}

TEST(CaseLoaderReal, MaterialsInTheOrderWritten) {
  const solver::Case c = load_ok(kReal);
  ASSERT_EQ(c.materials.size(), 2u);
  EXPECT_EQ(c.materials[0].name, "copper");
  EXPECT_EQ(c.materials[0].conductivity, 401.0);
  EXPECT_EQ(c.materials[0].density, 8960.0);
  EXPECT_EQ(c.materials[0].specific_heat, 385.0);
  EXPECT_EQ(c.materials[0].capacity(), 8960.0 * 385.0);
  // diffusivity alone: k = a, rho = c_p = 1.
  EXPECT_EQ(c.materials[1].name, "mold");
  EXPECT_EQ(c.materials[1].conductivity, 0.5);
  EXPECT_EQ(c.materials[1].density, 1.0);
  EXPECT_EQ(c.materials[1].specific_heat, 1.0);
  EXPECT_TRUE(c.has_fields());
  // physics is optional with materials.
  EXPECT_EQ(c.physics.source, 0.0);
}

TEST(CaseLoaderReal, RegionShapes) {
  const solver::Case c = load_ok(kReal);
  ASSERT_EQ(c.regions.size(), 4u);
  EXPECT_EQ(c.regions[0].material, "mold");
  EXPECT_EQ(c.regions[0].shape.kind, solver::ShapeKind::everywhere);
  EXPECT_EQ(c.regions[1].material, "copper");
  EXPECT_EQ(c.regions[1].shape.kind, solver::ShapeKind::box);
  EXPECT_EQ(c.regions[1].shape.lower[0], 0.0);
  EXPECT_EQ(c.regions[1].shape.upper[0], 0.5);
  EXPECT_EQ(c.regions[1].shape.upper[1], 0.5);
  EXPECT_EQ(c.regions[2].shape.kind, solver::ShapeKind::ball);
  EXPECT_EQ(c.regions[2].shape.center[0], 0.8);
  EXPECT_EQ(c.regions[2].shape.center[1], 0.25);
  EXPECT_EQ(c.regions[2].shape.radius, 0.1);
  EXPECT_EQ(c.regions[3].shape.kind, solver::ShapeKind::where);
  EXPECT_EQ(c.regions[3].shape.where, "x > 0.9 && y < 0.2");
  EXPECT_EQ(c.regions[3].material, "mold");
}

// `name` names a void in messages, validate's list and the heat-flow report; on a material
// region nothing would show it, so it is refused there as `surface` is, not dropped unseen.
TEST(CaseLoaderReal, ANameOnAMaterialRegionIsAnError) {
  const LoadResult r = load_case_text(
      replace(kReal, "{material: copper, box:", "{material: copper, name: pad, box:"));
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].path, "regions[1].name");
  EXPECT_EQ(r.errors[0].line, 7);
  EXPECT_NE(r.errors[0].message.find("only a void region"), std::string::npos)
      << r.errors[0].message;
  // A void keeps its name.
  const solver::Case c =
      load_ok(replace(kReal, "{material: copper, ball:", "{void: true, name: gap, ball:"));
  ASSERT_EQ(c.regions.size(), 4u);
  EXPECT_EQ(c.regions[2].name, "gap");
}

TEST(CaseLoaderReal, SourcesAndSchedules) {
  const solver::Case c = load_ok(kReal);
  ASSERT_EQ(c.sources.size(), 3u);
  const auto& box = c.sources[0];
  EXPECT_EQ(box.shape.kind, solver::ShapeKind::box);
  ASSERT_TRUE(box.power.has_value());
  EXPECT_EQ(*box.power, 2.5);
  EXPECT_FALSE(box.power_density.has_value());
  EXPECT_TRUE(box.schedule.constant());  // no schedule: factor 1
  EXPECT_EQ(box.schedule.at(7.0), 1.0);
  const auto& where = c.sources[1];
  EXPECT_EQ(where.shape.kind, solver::ShapeKind::where);
  EXPECT_EQ(where.shape.where, "y > 0.4");
  ASSERT_TRUE(where.power_density.has_value());
  EXPECT_EQ(*where.power_density, 1.0e3);
  ASSERT_EQ(where.schedule.table.size(), 3u);
  EXPECT_EQ(where.schedule.table[1][0], 0.1);
  EXPECT_EQ(where.schedule.table[1][1], 1.0);
  EXPECT_DOUBLE_EQ(where.schedule.at(0.05), 0.5);
  const auto& everywhere = c.sources[2];
  EXPECT_EQ(everywhere.shape.kind, solver::ShapeKind::everywhere);
  EXPECT_TRUE(everywhere.schedule.table.empty());
  EXPECT_EQ(everywhere.schedule.value, 1.0);
  EXPECT_EQ(everywhere.schedule.amplitude, 0.5);
  EXPECT_EQ(everywhere.schedule.frequency, 2.0);
  // A number is a constant factor.
  const solver::Case half = load_ok(replace(kReal, "power: 2.5}", "power: 2.5, schedule: 0.5}"));
  EXPECT_EQ(half.sources[0].schedule.at(3.0), 0.5);
}

TEST(CaseLoaderReal, ConvectiveHeatFluxAndTableFaces) {
  const solver::Case c = load_ok(kReal);
  const auto& dirichlet = c.boundary[0];
  EXPECT_EQ(dirichlet.kind, BoundaryKind::dirichlet);
  ASSERT_EQ(dirichlet.table.size(), 2u);
  EXPECT_DOUBLE_EQ(dirichlet.at(0.5), 305.0);
  EXPECT_TRUE(dirichlet.time_dependent());
  const auto& conv = c.boundary[1];
  EXPECT_EQ(conv.kind, BoundaryKind::convective);
  EXPECT_EQ(conv.transfer, 25.0);
  EXPECT_EQ(conv.value, 300.0);
  EXPECT_FALSE(conv.time_dependent());
  const auto& flux = c.boundary[2];
  EXPECT_EQ(flux.kind, BoundaryKind::neumann);
  EXPECT_TRUE(flux.heat_flux);
  EXPECT_EQ(flux.value, 100.0);
  const auto& sine = c.boundary[3];
  EXPECT_EQ(sine.kind, BoundaryKind::convective);
  EXPECT_EQ(sine.transfer, 5.0);
  EXPECT_EQ(sine.value, 290.0);
  EXPECT_EQ(sine.amplitude, 5.0);
  EXPECT_EQ(sine.frequency, 0.1);
  // A convective ambient may be a table too; plain flux stays du/dn.
  const solver::Case t =
      load_ok(replace(replace(kReal, "ambient: 300.0", "ambient: [[0, 280], [10, 300]]"),
                      "heat_flux: 100", "flux: 2"));
  ASSERT_EQ(t.boundary[1].table.size(), 2u);
  EXPECT_DOUBLE_EQ(t.boundary[1].at(5.0), 290.0);
  EXPECT_FALSE(t.boundary[2].heat_flux);
  EXPECT_EQ(t.boundary[2].value, 2.0);
}

// `insulated` is a Neumann face with no flux (COMSOL's thermal insulation), on a face and as a
// void's surface; it takes no other key.
TEST(CaseLoaderReal, InsulatedFaces) {
  const solver::Case c =
      load_ok(replace(kMinimal, "all: {type: dirichlet, value: 0}",
                      "all: {type: dirichlet, value: 0}\n  x-: {type: insulated}"));
  EXPECT_EQ(c.boundary[0].kind, BoundaryKind::neumann);
  EXPECT_EQ(c.boundary[0].value, 0.0);
  EXPECT_FALSE(c.boundary[0].heat_flux);
  EXPECT_EQ(c.boundary[1].kind, BoundaryKind::dirichlet);
  const LoadResult bad = load_case_text(
      replace(kMinimal, "all: {type: dirichlet, value: 0}", "all: {type: insulated, flux: 2}"));
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.errors.size(), 1u) << format_errors(bad.errors);
  EXPECT_EQ(bad.errors[0].path, "boundary.all.flux") << format_errors(bad.errors);
}

TEST(CaseLoaderReal, Probes) {
  const solver::Case c = load_ok(kReal);
  EXPECT_EQ(c.probes.every, 5);
  ASSERT_EQ(c.probes.points.size(), 2u);
  EXPECT_EQ(c.probes.points[0].first, "center");
  EXPECT_EQ(c.probes.points[0].second[0], 0.5);
  EXPECT_EQ(c.probes.points[0].second[1], 0.25);
  EXPECT_EQ(c.probes.points[1].first, "corner");
  // every defaults to 0 (the end only).
  EXPECT_EQ(load_ok(replace(kReal, "  every: 5\n", "")).probes.every, 0);
}

TEST(CaseLoaderReal, ShorthandCasesHaveNoFields) {
  const solver::Case c = load_ok(kMinimal);
  EXPECT_TRUE(c.materials.empty());
  EXPECT_TRUE(c.regions.empty());
  EXPECT_TRUE(c.sources.empty());
  EXPECT_TRUE(c.probes.points.empty());
  EXPECT_FALSE(c.has_fields());
  // A convective face alone needs the fields (k = physics.alpha).
  EXPECT_TRUE(load_ok(replace(kMinimal, "all: {type: dirichlet, value: 0}",
                              "all: {type: convective, h: 1, ambient: 0}"))
                  .has_fields());
  // A source with the shorthand physics.
  const solver::Case s = load_ok(kMinimal + "sources:\n  - {power: 1}\n");
  ASSERT_EQ(s.sources.size(), 1u);
  EXPECT_TRUE(s.has_fields());
}

}  // namespace
}  // namespace heatsim::io

namespace heatsim::io {
namespace {

TEST(CaseLoader, OutputPrecisionAndCompression) {
  const solver::Case c =
      load_ok(kMinimal + "output: {directory: o, precision: fp32, compression: 4}\n");
  ASSERT_TRUE(c.output.precision.has_value());
  EXPECT_EQ(*c.output.precision, solver::Precision::fp32);
  EXPECT_EQ(c.output.compression, 4);
  const solver::Case d = load_ok(kMinimal);
  EXPECT_FALSE(d.output.precision.has_value());
  EXPECT_EQ(d.output.compression, 0);
}

TEST(CaseLoader, OutputPrecisionAndCompressionErrorsNameKeyAndLine) {
  const LoadResult r = load_case_text(kMinimal + "output:\n  precision: fp16\n  compression: 12\n");
  const CaseError* precision = find_error(r, "output.precision");
  ASSERT_NE(precision, nullptr) << all_errors(r);
  EXPECT_EQ(precision->line, 14);
  const CaseError* level = find_error(r, "output.compression");
  ASSERT_NE(level, nullptr) << all_errors(r);
  EXPECT_EQ(level->line, 15);
  EXPECT_NE(level->message.find("from 1 (fastest) to 9 (smallest), or 0 for none (got 12)"),
            std::string::npos)
      << level->message;
  // An fp32 run's output cannot be finer than the run.
  const LoadResult widened =
      load_case_text(kMinimal + "precision: fp32\noutput:\n  precision: fp64\n");
  const CaseError* wide = find_error(widened, "output.precision");
  ASSERT_NE(wide, nullptr) << all_errors(widened);
  EXPECT_EQ(wide->line, 15);
  EXPECT_NE(wide->message.find("would only widen its floats"), std::string::npos) << wide->message;
}

TEST(CaseLoader, OutputHeatFlowsAndFields) {
  const solver::Case c = load_ok(
      kMinimal + "output: {heat_flows: true, fields: [temperature, heat_flux, conductivity]}\n");
  EXPECT_TRUE(c.output.heat_flows);
  EXPECT_TRUE(c.output.heat_flux);
  EXPECT_TRUE(c.output.conductivity);
  // The temperature is always written: the list may leave it out.
  const solver::Case d = load_ok(kMinimal + "output: {fields: [conductivity]}\n");
  EXPECT_FALSE(d.output.heat_flux);
  EXPECT_TRUE(d.output.conductivity);
  const solver::Case e = load_ok(kMinimal);
  EXPECT_FALSE(e.output.heat_flows);
  EXPECT_FALSE(e.output.heat_flux);
  EXPECT_FALSE(e.output.conductivity);
}

// liquid_fraction asked for with a phase change the reader refused: that refusal is the
// error; "none has one" would only repeat it. Without any phase change it is the error.
TEST(CaseLoader, LiquidFractionBesideARefusedPhaseChangeIsNoSecondError) {
  const std::string body =
      "grid: {dims: 1, n: [21], length: 0.1}\n"
      "materials:\n"
      "  wax: {conductivity: 0.2, density: 800, specific_heat: 2000%s}\n"
      "regions:\n  - {material: wax}\n"
      "boundary: {all: {type: dirichlet, value: 300}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {steps: 10}\n"
      "output: {fields: [temperature, liquid_fraction]}\n";
  const auto with = [&](const std::string& extra) {
    std::string text = body;
    text.replace(text.find("%s"), 2, extra);
    return load_case_text(text);
  };
  const LoadResult refused =
      with(", phase_change: {solidus: 318, liquidus: 310, latent_heat: 2.0e5}");
  EXPECT_NE(find_error(refused, "materials.wax.phase_change.liquidus"), nullptr)
      << all_errors(refused);
  EXPECT_EQ(find_error(refused, "output.fields"), nullptr) << all_errors(refused);
  const LoadResult none = with("");
  const CaseError* fields = find_error(none, "output.fields");
  ASSERT_NE(fields, nullptr) << all_errors(none);
  EXPECT_NE(fields->message.find("none has one"), std::string::npos) << fields->message;
}

TEST(CaseLoader, OutputHeatFlowsAndFieldsErrorsNameKeyAndLine) {
  const LoadResult r = load_case_text(kMinimal +
                                      "output:\n"
                                      "  heat_flows: yes\n"
                                      "  fields:\n"
                                      "    - temperature\n"
                                      "    - heat_flx\n"
                                      "    - temperature\n"
                                      "  field: [u]\n");
  const CaseError* flows = find_error(r, "output.heat_flows");
  ASSERT_NE(flows, nullptr) << all_errors(r);
  EXPECT_EQ(flows->line, 14);
  EXPECT_NE(flows->message.find("expected true or false"), std::string::npos) << flows->message;
  const CaseError* name = find_error(r, "output.fields[1]");
  ASSERT_NE(name, nullptr) << all_errors(r);
  EXPECT_EQ(name->line, 17);
  EXPECT_NE(name->message.find("unknown value 'heat_flx' (did you mean 'heat_flux'?)"),
            std::string::npos)
      << name->message;
  const CaseError* twice = find_error(r, "output.fields[2]");
  ASSERT_NE(twice, nullptr) << all_errors(r);
  EXPECT_EQ(twice->line, 18);
  EXPECT_NE(twice->message.find("listed twice (first on line 16)"), std::string::npos)
      << twice->message;
  // An unknown key under output still names the known ones, the new ones among them.
  const CaseError* unknown = find_error(r, "output.field");
  ASSERT_NE(unknown, nullptr) << all_errors(r);
  EXPECT_EQ(unknown->line, 19);
  EXPECT_NE(unknown->message.find("did you mean 'fields'?"), std::string::npos) << unknown->message;
  EXPECT_NE(unknown->message.find("heat_flows or fields"), std::string::npos) << unknown->message;
  // Not a list.
  const LoadResult scalar = load_case_text(kMinimal + "output: {fields: heat_flux}\n");
  const CaseError* list = find_error(scalar, "output.fields");
  ASSERT_NE(list, nullptr) << all_errors(scalar);
  EXPECT_NE(list->message.find("expected a list of fields"), std::string::npos) << list->message;
  // The heat flows are the order2 flux form's.
  const LoadResult order4 =
      load_case_text(kMinimal + "scheme: order4\noutput: {heat_flows: true}\n");
  const CaseError* scheme = find_error(order4, "output.heat_flows");
  ASSERT_NE(scheme, nullptr) << all_errors(order4);
  EXPECT_EQ(scheme->line, 14);
  EXPECT_NE(scheme->message.find("scheme is order4"), std::string::npos) << scheme->message;
}

}  // namespace
}  // namespace heatsim::io

// A face whose condition could not be read (a missing boundary section, a broken `all`, a face
// of unknown type) reports its own error only: the void checks that look at the faces' kinds
// must not see it as the default Dirichlet face ("the void reaches the Dirichlet face").
namespace heatsim::io {
namespace {

const std::string kFinsOnTop =
    "grid: {dims: 2, n: [21, 11], length: [0.02, 0.01]}\n"
    "materials:\n"
    "  aluminium: {conductivity: 200, density: 2700, specific_heat: 900}\n"
    "regions:\n"
    "  - {material: aluminium}\n"
    "  - {void: true, box: {lower: [0.005, 0.004], upper: [0.015, 0.01]},\n"
    "     surface: {type: convective, h: 25, ambient: 298.15}}\n"
    "BOUNDARY"
    "initial: {type: constant, value: 298.15}\n"
    "time: {method: steady}\n";

std::string fins_case(const std::string& boundary) {
  std::string text = kFinsOnTop;
  text.replace(text.find("BOUNDARY"), 8, boundary);
  return text;
}

// A void over the whole domain with the body painted over it (a heat sink written as air with
// its base and fins drawn on): where later material boxes cover all of the void's part of a
// Dirichlet face, its nodes are body, and nothing is refused; a gap left in the cover, or the
// cover listed before the void, is refused as before.
TEST(CaseLoader, AVoidPaintedOverAtADirichletFaceIsNoVoidThere) {
  const auto text = [](const std::string& regions) {
    return "grid: {dims: 2, n: [31, 21], length: [0.03, 0.02]}\n"
           "materials:\n"
           "  al: {conductivity: 200, density: 2700, specific_heat: 900}\n"
           "regions:\n" +
           regions +
           "boundary:\n"
           "  all: {type: convective, h: 25, ambient: 298.15}\n"
           "  x+: {type: dirichlet, value: 310}\n"
           "initial: {type: constant, value: 298.15}\n"
           "time: {method: steady}\n";
  };
  const std::string air =
      "  - {material: al}\n"
      "  - {void: true, box: {lower: [0, 0], upper: [0.03, 0.02]},\n"
      "     surface: {type: convective, h: 50, ambient: 300}}\n";
  const std::string base = "  - {material: al, box: {lower: [0, 0], upper: [0.03, 0.005]}}\n";
  const std::string wall =
      "  - {material: al, box: {lower: [0.028, 0.005], upper: [0.03, 0.02]}}\n";
  const std::string short_wall =
      "  - {material: al, box: {lower: [0.028, 0.005], upper: [0.03, 0.015]}}\n";
  LoadResult ok = load_case_text(text(air + base + wall));
  EXPECT_TRUE(ok.errors.empty()) << format_errors(ok.errors);
  for (const std::string& regions : {air + base + short_wall, base + wall + air}) {
    LoadResult r = load_case_text(text(regions));
    ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
    EXPECT_NE(r.errors[0].message.find("the void reaches the Dirichlet face x+"), std::string::npos)
        << format_errors(r.errors);
  }
}

TEST(CaseLoader, AFaceNotReadIsNoDirichletFaceForTheVoidChecks) {
  // The control: a Dirichlet face the void reaches is an error.
  LoadResult r =
      load_case_text(fins_case("boundary:\n  all: {type: convective, h: 25, ambient: 298.15}\n"
                               "  y+: {type: dirichlet, value: 300}\n"));
  ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
  EXPECT_NE(r.errors[0].message.find("the void reaches the Dirichlet face y+"), std::string::npos)
      << format_errors(r.errors);
  // The way to hold the body's part of such a face at a temperature is named.
  EXPECT_NE(r.errors[0].message.find("a convective face of large h holds the body's part at its "
                                     "ambient"),
            std::string::npos)
      << format_errors(r.errors);

  const struct {
    std::string boundary, path, says;
  } broken[] = {
      {"", "boundary", "missing required section"},
      {"boundary:\n  all: {type: convective, h: 25, ambeint: 298.15}\n", "boundary.all.ambeint",
       "did you mean 'ambient'"},
      {"boundary:\n  all: {type: convective, h: 25, ambient: 298.15}\n"
       "  y+: {type: convection, h: 25, ambient: 298.15}\n",
       "boundary.y+.type", "did you mean 'convective'"},
      {"boundary:\n  all: {type: convective, h: 25, ambient: 298.15}\n  y+: 300\n", "boundary.y+",
       "expected a map"},
  };
  for (const auto& b : broken) {
    SCOPED_TRACE(b.boundary);
    r = load_case_text(fins_case(b.boundary));
    ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
    EXPECT_EQ(r.errors[0].path, b.path) << format_errors(r.errors);
    EXPECT_NE(r.errors[0].message.find(b.says), std::string::npos) << format_errors(r.errors);
  }
}

// order4 and order6 beside a Dirichlet face whose value varies in time, or with a source beside
// a Dirichlet face, are second order near it: warned of at `scheme`; with a constant value and
// no source they are not.
TEST(CaseLoader, WideSchemesBesideAVaryingDirichletFaceAreWarnedOf) {
  const std::string text =
      "grid: {dims: 1, n: [41], length: 1.0}\n"
      "physics: {alpha: 1.0, source: SOURCE}\n"
      "scheme: SCHEME\n"
      "boundary:\n"
      "  x-: {type: dirichlet, value: 0.0AMPLITUDE}\n"
      "  x+: {type: neumann, flux: 0.0}\n"
      "initial: {type: constant, value: 0}\n"
      "time: {dt: auto, end: 0.01}\n";
  const auto load = [&](const std::string& scheme, const std::string& source,
                        const std::string& amplitude) {
    std::string t = text;
    t.replace(t.find("SOURCE"), 6, source);
    t.replace(t.find("SCHEME"), 6, scheme);
    t.replace(t.find("AMPLITUDE"), 9, amplitude);
    return load_case_text(t);
  };
  const auto warned = [](const LoadResult& r) {
    for (const CaseError& w : r.warnings)
      if (w.path == "scheme" && w.message.find("only second order") != std::string::npos)
        return true;
    return false;
  };
  const LoadResult sine = load("order4", "0", ", amplitude: 1.0, frequency: 5.0");
  ASSERT_TRUE(sine.ok()) << all_errors(sine);
  EXPECT_TRUE(warned(sine)) << format_errors(sine.warnings);
  EXPECT_NE(sine.warnings[0].message.find("boundary.x- varies in time"), std::string::npos);
  EXPECT_TRUE(warned(load("order6", "2", "")));
  EXPECT_FALSE(warned(load("order4", "0", "")));
  EXPECT_FALSE(warned(load("order2", "0", ", amplitude: 1.0, frequency: 5.0")));
}

// A void box whose upper bounds are written as the domain's length reaches the far faces as one
// written past them does, also where (n - 1) * (L / (n - 1)) rounds above L (n = 14, L =
// 0.0065 m: 0.006500000000000001): the bounds are moved onto the last node's coordinate, and the
// body (capacities, faces, the void surface's transfer) is the same bits. Before, the last
// node's control volume kept a sliver of body 1e-18 m thick past the box and the node stayed
// body: the heat flow of this case was 6.8% low.
TEST(CaseLoader, AVoidBoxEndingAtTheDomainsLengthReachesTheFace) {
  const auto text = [](const std::string& upper) {
    return "grid: {dims: 2, n: [14, 14], length: [0.0065, 0.0065]}\n"
           "materials:\n  al: {conductivity: 200, density: 2700, specific_heat: 900}\n"
           "regions:\n  - {material: al}\n"
           "  - {void: true, name: corner, box: {lower: [0.00335, 0.0051], upper: " +
           upper +
           "}, surface: {type: convective, h: 25, ambient: 298.15}}\n"
           "sources:\n  - {box: {lower: [0.005, 0.0], upper: " + upper +
           "}, power: 1}\n"
           "boundary:\n  all: {type: insulated}\n  x-: {type: dirichlet, value: 398.15}\n"
           "initial: {type: constant, value: 298.15}\ntime: {method: steady}\n";
  };
  const LoadResult at_length = load_case_text(text("[0.0065, 0.0065]"));
  const LoadResult past = load_case_text(text("[0.007, 0.007]"));
  ASSERT_TRUE(at_length.value) << format_errors(at_length.errors);
  ASSERT_TRUE(past.value) << format_errors(past.errors);
  const solver::Case& a = *at_length.value;
  const double end = 13.0 * solver::spacing(a, 1);
  ASSERT_GT(end, 0.0065);  // the rounding this is about
  EXPECT_EQ(a.regions[1].shape.upper[0], end);
  EXPECT_EQ(a.regions[1].shape.upper[1], end);
  EXPECT_EQ(a.sources[0].shape.upper[1], end);
  EXPECT_EQ(a.regions[1].shape.lower[1], 0.0051);  // bounds inside the domain stay as written
  const auto fa = solver::coefficient_fields(a);
  const auto fp = solver::coefficient_fields(*past.value);
  EXPECT_EQ(fa->capacity, fp->capacity);
  EXPECT_EQ(std::count(fa->capacity.begin(), fa->capacity.end(), 0.0), 21);
  for (int axis = 0; axis < 2; ++axis) EXPECT_EQ(fa->faces[axis], fp->faces[axis]);
  EXPECT_EQ(fa->transfer, fp->transfer);
  ASSERT_EQ(fa->sources.size(), fp->sources.size());
  // The source's power spread over the same nodes (its volume in the domain the same to a
  // rounding).
  for (std::size_t s = 0; s < fa->sources.size(); ++s) {
    ASSERT_EQ(fa->sources[s].density.size(), fp->sources[s].density.size());
    for (std::size_t i = 0; i < fa->sources[s].density.size(); ++i)
      EXPECT_NEAR(fa->sources[s].density[i], fp->sources[s].density[i],
                  1e-12 * std::abs(fp->sources[s].density[i]));
  }
}

}  // namespace
}  // namespace heatsim::io
