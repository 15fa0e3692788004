// Validation of real problems: every new key's problems are reported with key path and line
// (materials, regions, sources, schedules, convective and heat-flux faces, probes), warnings
// are kept apart from errors, and the files a case names (material maps, source densities) are
// checked and read by io/field_inputs.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "io/case_loader.hpp"
#include "io/field_inputs.hpp"
#include "solver/materials.hpp"
#include "solver/memory_estimate.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

// A valid 2D case of real problems; tests replace one piece of it. Nodes sit at x = 0, 0.1,
// ..., 1 and y = 0, 0.1, ..., 0.5.
const std::string kBase =
    "grid: {dims: 2, n: [11, 6], length: [1.0, 0.5]}\n"                          // 1
    "materials:\n"                                                               // 2
    "  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n"         // 3
    "  mold: {diffusivity: 0.5}\n"                                               // 4
    "regions:\n"                                                                 // 5
    "  - {material: mold}\n"                                                     // 6
    "  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}\n"          // 7
    "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n"                    // 8
    "sources:\n"                                                                 // 9
    "  - {box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}\n"            // 10
    "  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}\n"  // 11
    "boundary:\n"                                                                // 12
    "  all: {type: neumann, flux: 0}\n"                                          // 13
    "  x+: {type: convective, h: 25.0, ambient: 300.0}\n"                        // 14
    "initial: {type: constant, value: 300}\n"                                    // 15
    "time: {steps: 10}\n"                                                        // 16
    "probes:\n"                                                                  // 17
    "  every: 5\n"                                                               // 18
    "  points: {center: [0.5, 0.25], corner: [1, 0.5]}\n";                       // 19

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

const CaseError* find(const std::vector<CaseError>& errors, const std::string& path) {
  for (const CaseError& e : errors)
    if (e.path == path) return &e;
  return nullptr;
}

// The one error at `path`: its line and that its message holds `text`.
void expect_error(const std::string& text_of_case, const std::string& path, int line,
                  const std::string& text) {
  const LoadResult r = load_case_text(text_of_case);
  EXPECT_FALSE(r.ok());
  const CaseError* e = find(r.errors, path);
  ASSERT_NE(e, nullptr) << "no error at " << path << " in:\n" << format_errors(r.errors);
  EXPECT_EQ(e->line, line) << e->to_string();
  EXPECT_NE(e->message.find(text), std::string::npos) << e->to_string();
}

// The case loads, with a warning at `path` on `line` whose message holds `text`.
void expect_warning(const std::string& text_of_case, const std::string& path, int line,
                    const std::string& text) {
  const LoadResult r = load_case_text(text_of_case);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const CaseError* w = find(r.warnings, path);
  ASSERT_NE(w, nullptr) << format_errors(r.warnings);
  EXPECT_EQ(w->line, line);
  EXPECT_NE(w->message.find(text), std::string::npos) << w->to_string();
}

TEST(RealCase, BaseLoadsWithoutWarnings) {
  const LoadResult r = load_case_text(kBase);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << format_errors(r.warnings);
  EXPECT_TRUE(check_case(*r.value).empty());
}

// A steady state takes no dt, steps or end: given, they are not used, and the case is told so.
TEST(RealCase, ASteadyStateSaysItsTimeStepsAreNotUsed) {
  expect_warning(replace(kBase, "time: {steps: 10}", "time: {method: steady, dt: 1}"), "time.dt",
                 16, "not used");
  expect_warning(replace(kBase, "time: {steps: 10}", "time: {method: steady, steps: 10}"),
                 "time.steps", 16, "not used");
  const LoadResult r =
      load_case_text(replace(kBase, "time: {steps: 10}", "time: {method: steady}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  for (const CaseError& w : r.warnings) EXPECT_NE(w.path.rfind("time", 0), 0u) << w.to_string();
}

// Explicit steps solve no system: a tolerance given for them is not used, and the case is told
// so; an implicit method's is used, without a word.
TEST(RealCase, ExplicitStepsSayTheirToleranceIsNotUsed) {
  expect_warning(replace(kBase, "time: {steps: 10}", "time: {steps: 10, tolerance: 1e-8}"),
                 "time.tolerance", 16, "not used");
  const LoadResult r = load_case_text(
      replace(kBase, "time: {steps: 10}", "time: {method: backward-euler, dt: 1, steps: 10, "
                                          "tolerance: 1e-8}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  for (const CaseError& w : r.warnings) EXPECT_NE(w.path, "time.tolerance") << w.to_string();
}

// Conductivities more than 1e10 apart in a solve leave its answer to fp64's rounding at 300 K
// (a perfect conductor given k = 1e12): warned at the larger, naming the smaller; explicit steps
// solve nothing and are not warned.
TEST(RealCase, ConductivitiesFarApartInASolveAreWarnedOf) {
  const std::string far = replace(kBase, "conductivity: 401,", "conductivity: 1e12,");
  expect_warning(replace(far, "time: {steps: 10}", "time: {method: steady}"),
                 "materials.copper.conductivity", 3,
                 "is 2e+12 times mold's: conductivities this far apart can leave the solve's "
                 "answer to fp64's rounding");
  const LoadResult r = load_case_text(
      replace(replace(kBase, "conductivity: 401,", "conductivity: 4e9,"), "time: {steps: 10}",
              "time: {method: steady}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(find(r.warnings, "materials.copper.conductivity"), nullptr)
      << format_errors(r.warnings);
  const LoadResult explicit_steps = load_case_text(far);
  ASSERT_TRUE(explicit_steps.ok()) << format_errors(explicit_steps.errors);
  EXPECT_EQ(find(explicit_steps.warnings, "materials.copper.conductivity"), nullptr);
}

TEST(RealCase, UnknownMaterialSuggestsTheNearest) {
  expect_error(replace(kBase, "{material: copper, box", "{material: coper, box"),
               "regions[1].material", 7, "unknown material 'coper' (did you mean 'copper'?)");
}

TEST(RealCase, UnusedMaterialIsAWarning) {
  const std::string text =
      replace(kBase, "  mold: {diffusivity: 0.5}\n",
              "  mold: {diffusivity: 0.5}\n  silicon: {conductivity: 148, density: 2329, "
              "specific_heat: 700}\n");
  const LoadResult r = load_case_text(text);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
  EXPECT_EQ(r.warnings[0].to_string(), "materials.silicon: is not used by any region (line 5)");
  EXPECT_EQ(case_warnings(*r.value).size(), 1u);
}

TEST(RealCase, PropertiesMustBePositiveAndFinite) {
  expect_error(replace(kBase, "conductivity: 401", "conductivity: -1"),
               "materials.copper.conductivity", 3, "must be > 0");
  expect_error(replace(kBase, "density: 8960", "density: 0"), "materials.copper.density", 3,
               "must be > 0");
  expect_error(replace(kBase, "specific_heat: 385", "specific_heat: .nan"),
               "materials.copper.specific_heat", 3, "must be a finite number");
  expect_error(replace(kBase, "diffusivity: 0.5", "diffusivity: 0"), "materials.mold.diffusivity",
               4, "must be > 0");
}

TEST(RealCase, DiffusivityStandsAlone) {
  expect_error(replace(kBase, "{diffusivity: 0.5}", "{diffusivity: 0.5, density: 2}"),
               "materials.mold.density", 4, "either diffusivity alone");
  expect_error(replace(kBase, "specific_heat: 385}", "}"), "materials.copper.specific_heat", 3,
               "missing required key");
  expect_error(replace(kBase, "conductivity: 401,", "conductivty: 401,"),
               "materials.copper.conductivty", 3, "did you mean 'conductivity'?");
}

// An ambient past any solid's range is a slip of units or exponent: a warning on any face, and
// on a radiating face whose sigma T^4 overflows, an error (its flux would not be a number).
TEST(RealCase, AnAmbientBeyondAnySolidsRangeIsFlagged) {
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: 3.0e5"), "boundary.x+.ambient", 14,
                 "far beyond any solid's range");
  // 2000 K (a furnace) is not flagged.
  EXPECT_TRUE(load_case_text(replace(kBase, "ambient: 300.0", "ambient: 2000.0")).warnings.empty());
  expect_error(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                       "{type: radiative, emissivity: 0.8, ambient: 1.5e308}"),
               "boundary.x+.ambient", 14, "sigma T^4 overflows");
  // The largest of a table counts.
  expect_error(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                       "{type: radiative, emissivity: 0.8, ambient: [[0, 300], [1, 1e80]]}"),
               "boundary.x+.ambient", 14, "sigma T^4 overflows");
  // T^4 overflows above about 1.34e77 K, where sigma T^4 taken left to right does not yet
  // (up to about 6.5e78 K): the run's u^4 - ambient^4 would be NaN.
  expect_error(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                       "{type: radiative, emissivity: 0.8, ambient: 1e78}"),
               "boundary.x+.ambient", 14, "sigma T^4 overflows");
  EXPECT_TRUE(load_case_text(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                                     "{type: radiative, emissivity: 0.8, ambient: 1e76}"))
                  .errors.empty());
}

// With materials every temperature is in kelvin: one that looks like degrees Celsius beside
// the others is a warning at the colder one (a linear case would compute it without complaint).
TEST(RealCase, KelvinBesideCelsiusIsAWarning) {
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: 25.0"), "boundary.x+.ambient", 14,
                 "a temperature of 25 K beside 300 K (initial.value): one of them looks like "
                 "degrees Celsius");
  expect_warning(replace(kBase, "value: 300}", "value: -5}"), "initial.value", 15,
                 "beside 300 K (boundary.x+.ambient)");
  // A table's temperatures and a schedule's lowest value count.
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: {value: 200, amplitude: 80}"),
                 "boundary.x+.ambient", 14, "a temperature of 120 K");
  expect_warning(replace(kBase, "conductivity: 401,", "conductivity: [[20, 401], [100, 390]],"),
                 "materials.copper.conductivity", 3, "a temperature of 20 K beside 300 K");
  // One unit throughout, degrees Celsius or kelvin, is not flagged; nor a radiating ambient
  // twice (its own warning names the unit).
  EXPECT_TRUE(load_case_text(replace(replace(kBase, "ambient: 300.0", "ambient: 25.0"),
                                     "value: 300}", "value: 20}"))
                  .warnings.empty());
  EXPECT_TRUE(load_case_text(replace(kBase, "ambient: 300.0", "ambient: 180.0")).warnings.empty());
  const LoadResult r =
      load_case_text(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                             "{type: convective, h: 25.0, emissivity: 0.8, ambient: 25.0}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
  EXPECT_NE(r.warnings[0].message.find("radiating face's ambient"), std::string::npos);
}

// Conditions set through `all` are reported once, as boundary.all.<key>, warnings as errors;
// a radiating ambient up to 5 K is a cold sink (deep space), not degrees Celsius.
TEST(RealCase, RadiatingAmbientThroughAllIsWarnedOnceAndACold3KSinkNotAtAll) {
  const std::string all25 = replace(kBase, "  all: {type: neumann, flux: 0}\n",
                                    "  all: {type: radiative, emissivity: 0.8, ambient: 25}\n");
  const LoadResult r = load_case_text(all25);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
  EXPECT_EQ(r.warnings[0].path, "boundary.all.ambient");
  EXPECT_EQ(r.warnings[0].line, 13);
  EXPECT_NE(r.warnings[0].message.find("ambient of 25 K looks like degrees Celsius"),
            std::string::npos)
      << r.warnings[0].to_string();
  const LoadResult space = load_case_text(replace(all25, "ambient: 25}", "ambient: 3}"));
  ASSERT_TRUE(space.ok()) << format_errors(space.errors);
  EXPECT_TRUE(space.warnings.empty()) << format_errors(space.warnings);
}

// A void's surface takes neumann, insulated, convective or radiative: a typo's list offers
// only those (dirichlet and periodic, refused there, are not offered).
TEST(RealCase, AVoidSurfaceTypoOffersTheSurfaceTypesOnly) {
  const std::string voided =
      replace(kBase, "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n",
              "  - {void: true, box: {lower: [0.7, 0], upper: [0.9, 0.2]}, surface: {type: "
              "convection, h: 25, ambient: 300}}\n");
  expect_error(voided, "regions[2].surface.type", 8,
               "unknown value 'convection' (did you mean 'convective'?); expected neumann, "
               "insulated, convective or radiative");
  // dirichlet is still refused, with what to do instead.
  expect_error(
      replace(voided, "type: convection, h: 25, ambient: 300", "type: dirichlet, value: 3"),
      "regions[2].surface.type", 8,
      "a void's surface cannot hold a temperature (dirichlet); give it a convective surface with "
      "a large h");
  // A gradient (flux, the domain faces' du/dn) is named, with the key a surface takes.
  expect_error(replace(voided, "type: convection, h: 25, ambient: 300", "type: neumann, flux: 100"),
               "regions[2].surface.flux", 8,
               "a void's surface takes its heat flux as heat_flux (W/m^2 into the body");
}

// An emissivity of 0 is no radiation, as leaving the key out (a sweep of emissivities may
// start there), on a face and on a void's surface; below 0 or above 1 is refused.
TEST(RealCase, AnEmissivityOfZeroIsNoRadiation) {
  const std::string voided =
      replace(kBase, "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n",
              "  - {void: true, box: {lower: [0.7, 0], upper: [0.9, 0.2]}, surface: {type: "
              "convective, h: 25, ambient: 300}}\n");
  const LoadResult plain = load_case_text(voided);
  ASSERT_TRUE(plain.ok()) << format_errors(plain.errors);
  const LoadResult zero = load_case_text(
      replace(replace(voided, "h: 25, ambient: 300}", "h: 25, ambient: 300, emissivity: 0}"),
              "h: 25.0,", "h: 25.0, emissivity: 0,"));
  ASSERT_TRUE(zero.ok()) << format_errors(zero.errors);
  EXPECT_TRUE(zero.warnings.empty()) << format_errors(zero.warnings);
  const kernels::BoundaryFace& face = zero.value->boundary[1];
  EXPECT_EQ(face.kind, kernels::BoundaryKind::convective);
  EXPECT_FALSE(face.radiates());
  EXPECT_EQ(face.transfer, plain.value->boundary[1].transfer);
  EXPECT_FALSE(zero.value->regions[2].surface.radiates());
  EXPECT_EQ(zero.value->regions[2].surface.transfer, 25.0);
  expect_error(replace(kBase, "h: 25.0,", "h: 25.0, emissivity: -0.1,"), "boundary.x+.emissivity",
               14, "must lie in [0, 1] (got -0.1)");
}

// Lengths are in metres: a metal over a domain of metres (a sink drawn in millimetres) is
// warned of, with the size and what to do; a 1000 m domain of soil-like material is not.
TEST(RealCase, AMetalDomainMetresWideAsksWhetherItWasDrawnInMillimetres) {
  const std::string wide = replace(kBase, "length: [1.0, 0.5]", "length: [1000, 500]");
  expect_warning(wide, "grid.length", 1,
                 "the domain is 1000 x 500 m of copper (k = 401 W/(m K)): lengths are in metres; "
                 "a case drawn in millimetres needs every length, box, ball and probe divided by "
                 "1000");
  const LoadResult soil = load_case_text(replace(wide, "conductivity: 401", "conductivity: 1.5"));
  ASSERT_TRUE(soil.ok()) << format_errors(soil.errors);
  EXPECT_EQ(find(soil.warnings, "grid.length"), nullptr) << format_errors(soil.warnings);
  const LoadResult metre = load_case_text(kBase);
  ASSERT_TRUE(metre.ok());
  EXPECT_EQ(find(metre.warnings, "grid.length"), nullptr);
}

// A convective face's misspelt ambient is reported as an unknown key, and only so: the default
// it leaves (0 K) is no sign of degrees Celsius in the case.
TEST(RealCase, AMisspeltAmbientIsAnUnknownKeyAndNotACelsiusWarning) {
  const LoadResult r =
      load_case_text(replace(kBase, "h: 25.0, ambient: 300.0}", "h: 25.0, ambeint: 300.0}"));
  EXPECT_FALSE(r.ok());
  const CaseError* e = find(r.errors, "boundary.x+.ambeint");
  ASSERT_NE(e, nullptr) << format_errors(r.errors);
  EXPECT_NE(e->message.find("did you mean 'ambient'?"), std::string::npos) << e->to_string();
  for (const CaseError& w : r.warnings)
    EXPECT_EQ(w.message.find("Celsius"), std::string::npos) << w.to_string();
  // Written, an ambient of 25 beside 300 K is still warned of.
  expect_warning(replace(kBase, "h: 25.0, ambient: 300.0}", "h: 25.0, ambient: 25.0}"),
                 "boundary.x+.ambient", 14, "looks like degrees Celsius");
}

// A `where` region of one coordinate is a layer across the domain: heat along it sees its
// bounds only on the nodes' lines, so the case is told to write it as a box; a formula of two
// coordinates (kBase's corner) is not.
TEST(RealCase, AWhereLayerOfOneCoordinateIsAdvisedToBeABox) {
  expect_warning(replace(kBase, "where: \"x > 0.7 && y < 0.2\"", "where: \"y < 0.2\""),
                 "regions[2].where", 8,
                 "depends on y alone: a layer across the domain, whose bounds heat flowing along "
                 "it (along x) sees only on the lines through the nodes (first order); a box with "
                 "the same bounds along y is exact both ways: write the layer as a box");
  const LoadResult r = load_case_text(kBase);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(find(r.warnings, "regions[2].where"), nullptr);
}

// Every range check says what it got.
TEST(RealCase, RangeChecksSayWhatTheyGot) {
  const std::string voided =
      replace(kBase, "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n",
              "  - {void: true, box: {lower: [0.7, 0], upper: [0.9, 0.2]}, surface: {type: "
              "convective, h: -25, ambient: 300}}\n");
  expect_error(voided, "regions[2].surface.h", 8, "must be >= 0 (got -25)");
  expect_error(replace(kBase, "upper: [0.5, 0.5]}}", "upper: [0.5, -0.5]}}"),
               "regions[1].box.upper[1]", 7, "must be >= box.lower[1] (0; got -0.5)");
  expect_error(replace(kBase, "time: {steps: 10}", "time: {steps: 10, tolerance: 2}"),
               "time.tolerance", 16, "(a relative residual; got 2)");
  expect_error(kBase + "parallel: {exchange_every: -2}\n", "parallel.exchange_every", 20,
               "must be >= 0 (got -2; 0: the fusion depth)");
  expect_error(kBase + "parallel: {decomposition: [2, -1]}\n", "parallel.decomposition[1]", 20,
               "must be >= 0 (got -1;");
}

// A typo of a required key is one error, the unknown key with its fix, not also the required
// key as missing.
TEST(RealCase, ATypoOfARequiredKeyIsOneError) {
  const LoadResult r = load_case_text(replace(kBase, "conductivity: 401,", "conductivty: 401,"));
  ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
  EXPECT_EQ(r.errors[0].path, "materials.copper.conductivty");
  EXPECT_NE(r.errors[0].message.find("(did you mean 'conductivity'?)"), std::string::npos)
      << r.errors[0].to_string();
  // A key missing without a near-miss is still reported.
  expect_error(replace(kBase, "conductivity: 401,", "colour: 401,"),
               "materials.copper.conductivity", 3, "missing required key");
}

// An empty key (a null value) is reported at the key's own line, not at the next key's.
TEST(RealCase, AnEmptyKeyIsReportedAtItsOwnLine) {
  expect_error(replace(kBase,
                       "  - {material: mold}\n"
                       "  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}\n"
                       "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n",
                       ""),
               "regions", 5, "got nothing");
  expect_error(replace(kBase,
                       "  - {box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}\n"
                       "  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}\n",
                       "\n\n"),
               "sources", 9, "got nothing");
  expect_error(
      replace(kBase, "  every: 5\n  points: {center: [0.5, 0.25], corner: [1, 0.5]}\n", "\n"),
      "probes", 17, "got nothing");
}

// A steady solve takes every schedule at t = 0; one that varies is named (a transient would
// follow it).
TEST(RealCase, ASteadySolveSaysItTakesSchedulesAtTheStart) {
  const std::string steady = replace(kBase, "time: {steps: 10}", "time: {method: steady}");
  expect_warning(steady, "sources[1].schedule", 11, "a steady solve takes it at t = 0 (0) only");
  expect_warning(replace(steady, "ambient: 300.0", "ambient: [[0, 300], [60, 320]]"),
                 "boundary.x+.ambient", 14, "a steady solve takes it at t = 0 (300) only");
  // Constant schedules say nothing.
  EXPECT_TRUE(
      load_case_text(replace(steady, ", schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]", ""))
          .warnings.empty());
}

// A `power` source whose box or ball reaches past a face puts its whole power into the part
// inside (the power is spread over the shape's shares in the domain): a heater centred on a
// symmetry plane heats the modelled half with the whole heater's power. That is warned of,
// with the part of the box inside; a box ending on the face, a power_density (which delivers
// the part inside) and a shape wholly inside are not.
TEST(RealCase, APowerSourceReachingOutsideTheDomainIsAWarning) {
  const std::string box = "{lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}";
  expect_warning(replace(kBase, box, "{lower: [0.9, 0.1], upper: [1.1, 0.3]}, power: 2.5}"),
                 "sources[0].box", 10,
                 "reaches outside the domain (the domain is [0, 1] x [0, 0.5]): its power is "
                 "spread over the part inside (0.5 of the box's volume)");
  // Past two faces (a corner): a quarter of it inside.
  expect_warning(replace(kBase, box, "{lower: [0.9, -0.1], upper: [1.1, 0.1]}, power: 2.5}"),
                 "sources[0].box", 10, "(0.25 of the box's volume)");
  expect_warning(
      replace(kBase, "{box: " + box, "{ball: {center: [0, 0.25], radius: 0.15}, power: 2.5}"),
      "sources[0].ball", 10, "its power is spread over the part inside (part of the ball)");
  // Across a periodic axis's seam: shapes do not wrap, said as such.
  expect_warning(
      replace(replace(kBase, "{box: " + box, "{ball: {center: [0.5, 0.02], radius: 0.1}, power: 2.5}"),
              "  all: {type: neumann, flux: 0}\n",
              "  all: {type: neumann, flux: 0}\n  y-: {type: periodic}\n  y+: {type: periodic}\n"),
      "sources[0].ball", 10,
      "across the periodic axis y: shapes do not wrap around a periodic axis, so the part "
      "outside is cut off");
  for (const std::string& inside :
       {std::string("{lower: [0.8, 0.1], upper: [1, 0.3]}, power: 2.5}"),
        std::string("{lower: [0.9, 0.1], upper: [1.1, 0.3]}, power_density: 2.5}"),
        std::string("{ball: {center: [0.5, 0.25], radius: 0.25}, power: 2.5}")}) {
    const std::string text = inside.rfind("{ball", 0) == 0 ? replace(kBase, "{box: " + box, inside)
                                                           : replace(kBase, box, inside);
    const LoadResult r = load_case_text(text);
    ASSERT_TRUE(r.ok()) << format_errors(r.errors);
    EXPECT_TRUE(r.warnings.empty()) << inside << "\n" << format_errors(r.warnings);
  }
}

TEST(RealCase, RegionOutsideTheDomainIsAWarning) {
  expect_warning(
      replace(kBase, "{lower: [0, 0], upper: [0.5, 0.5]}", "{lower: [2, 0], upper: [3, 0.5]}"),
      "regions[1].box", 7, "holds no volume of the domain");
  // A box flat on an axis holds no volume, between two nodes or on a node row: an error (on
  // a node row it was taken silently and changed nothing); a ball outside the domain a warning.
  for (const char* flat : {"{lower: [0.11, 0], upper: [0.11, 0.5]}",
                           "{lower: [0.1, 0], upper: [0.1, 0.5]}"})
    expect_error(replace(kBase, "{lower: [0, 0], upper: [0.5, 0.5]}", flat),
                 "regions[1].box.upper[0]", 7, "the box has no thickness along x");
  expect_warning(replace(kBase, "box: {lower: [0, 0], upper: [0.5, 0.5]}",
                         "ball: {center: [1.5, 0.25], radius: 0.2}"),
                 "regions[1].ball", 7, "holds no volume of the domain");
  // The geometry below the grid takes a box between two nodes, and a ball around no node, for
  // the part of the control volumes they hold: they are no warnings. (Before the sampling was
  // looked at, both were warned "holds no node ... no effect" though they changed the step.)
  for (const char* shape : {"box: {lower: [0.11, 0], upper: [0.19, 0.5]}",
                            "ball: {center: [0.55, 0.25], radius: 0.04}"}) {
    const LoadResult r =
        load_case_text(replace(kBase, "box: {lower: [0, 0], upper: [0.5, 0.5]}", shape));
    ASSERT_TRUE(r.ok()) << format_errors(r.errors);
    EXPECT_TRUE(r.warnings.empty()) << shape << "\n" << format_errors(r.warnings);
  }
  // A `where` true at no node (it is found through the nodes it holds).
  const LoadResult where = load_case_text(replace(kBase, "x > 0.7 && y < 0.2", "x > 2"));
  ASSERT_TRUE(where.ok()) << format_errors(where.errors);
  EXPECT_NE(find(where.warnings, "regions[2].where"), nullptr) << format_errors(where.warnings);
  // Touching a node by its decimal coordinate counts (0.3 is 3 * 0.1 to rounding).
  EXPECT_TRUE(load_case_text(replace(kBase, "{lower: [0, 0], upper: [0.5, 0.5]}",
                                     "{lower: [0.3, 0.3], upper: [0.3, 0.3]}"))
                  .warnings.empty());
}

// Without materials (the shorthand) shapes keep node shares: a source between two nodes holds
// none, a power there cannot be spread.
TEST(RealCase, ShorthandSourceBetweenNodesHoldsNoNode) {
  const std::string text =
      "grid: {dims: 1, n: [11], length: [1.0]}\n"
      "physics: {alpha: 1}\n"
      "sources:\n"
      "  - {box: {lower: [0.53], upper: [0.5301]}, power: 50}\n"
      "boundary: {all: {type: dirichlet, value: 0}}\n"
      "initial: {type: constant, value: 0}\n"
      "time: {method: steady}\n";
  expect_error(text, "sources[0].box", 4, "holds no node of the grid");
  expect_error(text, "sources[0].box", 4, "cannot be spread over no node");
  expect_warning(replace(text, "power: 50", "power_density: 50"), "sources[0].box", 4,
                 "the source has no effect");
}

TEST(RealCase, ShapeNumbersAndFormulas) {
  expect_error(replace(kBase, "upper: [0.5, 0.5]}}", "upper: [0.5, -0.1]}}"),
               "regions[1].box.upper[1]", 7, "must be >= box.lower[1]");
  expect_error(replace(kBase, "{lower: [0, 0], upper: [0.5, 0.5]}", "{lower: [0, 0]}"),
               "regions[1].box.upper", 7, "missing required key");
  expect_error(replace(kBase, "box: {lower: [0, 0], upper: [0.5, 0.5]}",
                       "ball: {center: [0.5, 0.2], radius: -1}"),
               "regions[1].ball.radius", 7, "must be > 0");
  expect_error(replace(kBase, "box: {lower: [0, 0], upper: [0.5, 0.5]}",
                       "box: {lower: [0, 0], upper: [0.5, 0.5]}, where: \"x > 0\""),
               "regions[1].where", 7, "give at most one shape");
  expect_error(replace(kBase, "upper: [0.5, 0.5]}}", "upper: [0.5]}}"), "regions[1].box.upper", 7,
               "expected 2 values");
  // The column of a formula's mistake, as initial.value reports it.
  expect_error(replace(kBase, "x > 0.7 && y < 0.2", "x > 0.7 && q < 0.2"), "regions[2].where", 8,
               "column 12");
  expect_error(replace(kBase, "x > 0.7 && y < 0.2", "x > 0.7 && z < 0.2"), "regions[2].where", 8,
               "'z'");
}

TEST(RealCase, RegionsNeedMaterialsAndMaterialsRegions) {
  expect_error(replace(kBase, "regions:\n  - {material: mold}\n",
                       "regions:\n  - {box: {lower: "
                       "[0, 0], upper: [1, 1]}}\n"),
               "regions[0].material", 6, "missing required key");
  const std::string no_regions =
      kBase.substr(0, kBase.find("regions:")) + kBase.substr(kBase.find("sources:"));
  expect_error(no_regions, "materials", 2, "give regions too");
  const std::string no_materials = "physics: {alpha: 1}\n" +
                                   kBase.substr(0, kBase.find("materials:")) +
                                   kBase.substr(kBase.find("regions:"));
  expect_error(no_materials, "regions", 3, "give a materials section");
  expect_error(replace(kBase, "materials:\n", "physics: {alpha: 2}\nmaterials:\n"), "physics.alpha",
               2, "is not used with materials");
  expect_error(kBase.substr(0, kBase.find("regions:")) + "regions: {material: mold}\n" +
                   kBase.substr(kBase.find("sources:")),
               "regions", 5, "expected a list of regions");
}

TEST(RealCase, MaterialsNeedOrder2) {
  expect_error(kBase + "scheme: order4\n", "scheme", 20, "materials need the order2 scheme");
  // Sources and convective faces alone need it too.
  const std::string shorthand =
      "grid: {dims: 1, n: [9]}\nphysics: {alpha: 1}\nscheme: isotropic\n"
      "boundary: {all: {type: convective, h: 1, ambient: 0}}\n"
      "initial: {type: constant, value: 0}\ntime: {steps: 1}\n";
  const LoadResult r = load_case_text(replace(shorthand, "isotropic", "order6"));
  const CaseError* e = find(r.errors, "scheme");
  ASSERT_NE(e, nullptr) << format_errors(r.errors);
  EXPECT_NE(e->message.find("convective and heat_flux faces need the order2 scheme"),
            std::string::npos);
}

TEST(RealCase, PowerOrPowerDensityExactlyOne) {
  expect_error(replace(kBase, "power: 2.5}", "power: 2.5, power_density: 3}"),
               "sources[0].power_density", 10, "give exactly one of power");
  expect_error(replace(kBase, ", power: 2.5}", "}"), "sources[0]", 10, "give one of power");
  expect_error(replace(kBase, "power: 2.5}", "power: .inf}"), "sources[0].power", 10,
               "must be a finite number");
  expect_error(replace(kBase, "power_density: 10,", "power_density: hot,"),
               "sources[1].power_density", 11, "expected a number");
  // A power spread over no volume of the domain cannot be; a density on none is a warning.
  expect_error(
      replace(kBase, "{lower: [0.1, 0.1], upper: [0.3, 0.3]}", "{lower: [5, 5], upper: [6, 6]}"),
      "sources[0].box", 10, "cannot be spread over no volume");
  const LoadResult density =
      load_case_text(replace(kBase, "{lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5",
                             "{lower: [5, 5], upper: [6, 6]}, power_density: 2.5"));
  ASSERT_TRUE(density.ok()) << format_errors(density.errors);
  EXPECT_NE(find(density.warnings, "sources[0].box"), nullptr);
  // A box between two nodes holds part of their control volumes, sampled below the grid: its
  // power is spread there, and a density there is no warning. (Both were refused or warned
  // "holds no node" before.)
  for (const char* amount : {"power: 2.5", "power_density: 2.5"}) {
    const LoadResult thin = load_case_text(
        replace(kBase, "{lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5",
                std::string("{lower: [0.11, 0.11], upper: [0.15, 0.15]}, ") + amount));
    ASSERT_TRUE(thin.ok()) << amount << "\n" << format_errors(thin.errors);
    EXPECT_TRUE(thin.warnings.empty()) << amount << "\n" << format_errors(thin.warnings);
  }
  // A ball far smaller than a spacing holds volume but no sub-cell's centre: its power is
  // refused when the body is laid on the grid, naming its size against the spacing and the
  // remedy (it said "the shape holds no part of the body", which reads as lying outside it).
  expect_error(replace(kBase, "box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}",
                       "ball: {center: [0.15, 0.15], radius: 1e-6}"),
               "sources[0]", 10,
               "the ball (diameter 2e-06) is smaller than the grid resolves (spacing 0.1)");
  expect_error(replace(kBase, "box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}",
                       "ball: {center: [0.15, 0.15], radius: 1e-6}"),
               "sources[0]", 10, "enlarge the shape to about a spacing or refine the grid");
}

TEST(RealCase, SchedulesSortedAndWellFormed) {
  expect_error(replace(kBase, "[2, 1], [2.1, 0]", "[2.1, 1], [2, 0]"), "sources[1].schedule[3][0]",
               11, "not sorted by time: t = 2 follows t = 2.1");
  expect_error(replace(kBase, "[0.1, 1], [2, 1]", "[0.1, 1], [0.1, 1]"),
               "sources[1].schedule[2][0]", 11, "times must increase");
  expect_error(replace(kBase, "[0.1, 1],", "[0.1, 1, 2],"), "sources[1].schedule[1]", 11,
               "expected a [time, value] pair");
  expect_error(replace(kBase, "[[0, 0], [0.1, 1], [2, 1], [2.1, 0]]", "[]"), "sources[1].schedule",
               11, "needs at least one [time, value] pair");
  expect_error(replace(kBase, "[[0, 0], [0.1, 1], [2, 1], [2.1, 0]]", "{value: 1, amplitde: 2}"),
               "sources[1].schedule.amplitde", 11, "did you mean 'amplitude'?");
  expect_error(replace(kBase, "[2.1, 0]", "[.nan, 0]"), "sources[1].schedule[3][0]", 11,
               "must be a finite number");
}

TEST(RealCase, AtMostFourSourceSchedules) {
  std::string sources;
  for (int k = 1; k <= 5; ++k)
    sources += "  - {power_density: 1, schedule: " + std::to_string(k) + "}\n";
  const std::string text = replace(
      kBase, "  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}\n", sources);
  // sources[0] (no schedule) + factors 1 (the same as none), 2, 3, 4, 5: five distinct.
  expect_error(text, "sources[5].schedule", 15, "at most 4 different source schedules");
  // Equal schedules share a field: four distinct load.
  EXPECT_TRUE(load_case_text(replace(text, "schedule: 5}", "schedule: 4}")).ok());
}

TEST(RealCase, ConvectiveAndHeatFluxFaces) {
  expect_error(replace(kBase, "h: 25.0", "h: -1"), "boundary.x+.h", 14, "must be >= 0");
  expect_error(replace(kBase, ", h: 25.0", ""), "boundary.x+.h", 14, "missing required key");
  expect_error(replace(kBase, ", ambient: 300.0", ""), "boundary.x+.ambient", 14,
               "missing required key");
  expect_error(replace(kBase, "ambient: 300.0", "ambient: [[1, 300], [0, 310]]"),
               "boundary.x+.ambient[1][0]", 14, "not sorted by time");
  expect_error(replace(kBase, "ambient: 300.0", "ambient: .nan"), "boundary.x+.ambient", 14,
               "must be a finite number");
  expect_error(replace(kBase, "h: 25.0", "h: 25.0, flux: 1"), "boundary.x+.flux", 14,
               "unknown key 'flux' for a convective face");
  expect_error(replace(kBase, "{type: neumann, flux: 0}", "{type: neumann, flux: 0, heat_flux: 3}"),
               "boundary.all.heat_flux", 13, "not both");
  expect_error(replace(kBase, "{type: neumann, flux: 0}", "{type: neumann, heat_flux: .inf}"),
               "boundary.all.heat_flux", 13, "must be a finite number");
  expect_error(replace(kBase, "{type: neumann, flux: 0}",
                       "{type: dirichlet, value: [[0, 1]], amplitude: 2}"),
               "boundary.all.amplitude", 13, "a table value takes no amplitude");
  expect_error(replace(kBase, "{type: neumann, flux: 0}", "{type: convecitve, h: 1}"),
               "boundary.all.type", 13, "did you mean 'convective'?");
}

TEST(RealCase, ProbesInsideTheDomain) {
  expect_error(replace(kBase, "corner: [1, 0.5]", "corner: [1.2, 0.5]"), "probes.points.corner[0]",
               19, "lies outside the domain: x = 1.2");
  expect_error(replace(kBase, "corner: [1, 0.5]", "corner: [1, -0.01]"), "probes.points.corner[1]",
               19, "lies outside the domain");
  expect_error(replace(kBase, "corner: [1, 0.5]", "corner: [1]"), "probes.points.corner", 19,
               "expected 2 values");
  expect_error(replace(kBase, "every: 5", "every: -1"), "probes.every", 18, "must be >= 0");
  expect_error(replace(kBase, "corner: [1, 0.5]", "center: [1, 0.5]"), "probes.points.center", 19,
               "duplicate key 'center'");
  expect_error(replace(kBase, "corner: [1, 0.5]", "\"a,b\": [1, 0.5]"), "probes.points.a,b", 19,
               "column of probes.csv");
  expect_error(replace(kBase, "  every: 5\n", "  evrey: 5\n"), "probes.evrey", 18,
               "did you mean 'every'?");
  expect_error(replace(kBase, "  points: {center: [0.5, 0.25], corner: [1, 0.5]}\n", ""),
               "probes.points", 18, "missing required key");
}

TEST(RealCase, UnknownKeysNameTheNearest) {
  expect_error(replace(kBase, "{material: mold}", "{materal: mold}"), "regions[0].materal", 6,
               "did you mean 'material'?");
  expect_error(replace(kBase, "power: 2.5}", "pwoer: 2.5}"), "sources[0].pwoer", 10,
               "did you mean 'power'?");
  expect_error(replace(kBase, "probes:", "probe:"), "probe", 17, "did you mean 'probes'?");
}

TEST(RealCase, DtAgainstTheFieldsLimitNamesTheNode) {
  // mold (k = 0.5, rho c_p = 1) with h = 0.1 sets the limit near 1/(4 * 0.5 / 0.01) = 0.005.
  const LoadResult r = load_case_text(replace(kBase, "steps: 10}", "steps: 10, dt: 1}"));
  const CaseError* e = find(r.errors, "time.dt");
  ASSERT_NE(e, nullptr) << format_errors(r.errors);
  EXPECT_EQ(e->line, 16);
  EXPECT_NE(e->message.find("unstable for these materials and faces"), std::string::npos);
  EXPECT_NE(e->message.find("set by the node at x = "), std::string::npos) << e->message;
  EXPECT_TRUE(load_case_text(replace(kBase, "steps: 10}", "steps: 10, dt: 1e-4}")).ok());
}

TEST(RealCase, NodesWithoutAMaterialAreAnError) {
  const LoadResult r = load_case_text(replace(kBase, "  - {material: mold}\n", ""));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(format_errors(r.errors).find("no material"), std::string::npos)
      << format_errors(r.errors);
}

// ---- files named by the case ----------------------------------------------------------------

class RealCaseFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("real_case"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A plain dataset `name` at the root of `file` (dimensions slowest first).
  static void write(const std::string& file, const char* name, std::vector<hsize_t> dims,
                    hid_t file_type, const std::vector<double>& values) {
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t d = H5Dcreate2(f, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Fclose(f);
  }

  // The base case with a file region (line 9) after the others, and a file source (line 12).
  std::string with_files(const std::string& map_path, const std::string& source_path) const {
    std::string text = replace(kBase, "sources:\n",
                               "  - {file: {path: " + map_path +
                                   ", dataset: material, ids: {1: copper, 2: mold}}}\nsources:\n");
    return replace(text, "boundary:\n",
                   "  - {file: {path: " + source_path + ", dataset: q}}\nboundary:\n");
  }

  // A 6 x 11 map (y, x) of ids 1 and 2, and a density of the same shape.
  void write_good(std::vector<double>& ids, std::vector<double>& q) const {
    ids.assign(66, 1.0);
    q.assign(66, 0.0);
    for (int i = 0; i < 66; ++i) {
      if (i % 11 > 5) ids[static_cast<std::size_t>(i)] = 2.0;
      q[static_cast<std::size_t>(i)] = 0.5 * i;
    }
    write(path("map.h5"), "material", {6, 11}, H5T_STD_I32LE, ids);
    write(path("q.h5"), "q", {1, 6, 11}, H5T_IEEE_F64LE, q);
  }

  fs::path dir_;
};

TEST_F(RealCaseFiles, FileRegionAndSourceAreParsedCheckedAndRead) {
  std::vector<double> ids, q;
  write_good(ids, q);
  const LoadResult r = load_case_text(with_files(path("map.h5"), path("q.h5")));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  solver::Case c = *r.value;
  ASSERT_EQ(c.regions.size(), 4u);
  const solver::RegionSpec& region = c.regions[3];
  EXPECT_EQ(region.shape.kind, solver::ShapeKind::file);
  EXPECT_EQ(region.shape.path, path("map.h5"));
  EXPECT_EQ(region.shape.dataset, "material");
  ASSERT_EQ(region.ids.size(), 2u);
  EXPECT_EQ(region.ids[0], (std::pair<std::int64_t, std::string>{1, "copper"}));
  EXPECT_EQ(region.ids[1], (std::pair<std::int64_t, std::string>{2, "mold"}));
  EXPECT_TRUE(region.map.empty());  // read by read_field_inputs
  ASSERT_EQ(c.sources.size(), 3u);
  EXPECT_EQ(c.sources[2].shape.kind, solver::ShapeKind::file);
  EXPECT_EQ(c.sources[2].shape.dataset, "q");
  EXPECT_FALSE(c.sources[2].power || c.sources[2].power_density);

  read_field_inputs(c);
  ASSERT_EQ(c.regions[3].map.size(), 66u);
  for (std::size_t i = 0; i < 66; ++i)
    EXPECT_EQ(c.regions[3].map[i], static_cast<std::int64_t>(ids[i])) << i;
  EXPECT_EQ(c.sources[2].density, q);  // the leading 1 is ignored
}

// The map and the density read from files stay in the case for the whole run: the memory
// estimate counts the bytes they hold once read (8 a node each), for any backend.
TEST_F(RealCaseFiles, TheMemoryEstimateCountsWhatTheFilesBring) {
  std::vector<double> ids, q;
  write_good(ids, q);
  solver::Case c = load_case_text(with_files(path("map.h5"), path("q.h5"))).value.value();
  read_field_inputs(c);
  const double read = static_cast<double>(c.regions[3].map.capacity() * sizeof(std::int64_t) +
                                          c.sources[2].density.capacity() * sizeof(double));
  EXPECT_EQ(read, 2 * 66 * 8.0);
  for (bool on_gpu : {false, true}) {
    const solver::MemoryEstimate e = solver::estimate_memory(c, 3, on_gpu, 1);
    double counted = -1.0;
    for (const solver::MemoryPart& p : e.host)
      if (p.what == "material maps and source densities read from files") counted = p.bytes;
    EXPECT_EQ(counted, read) << (on_gpu ? "gpu" : "cpu");
  }
}

// Materials from a map (no sub-grid sampling) with a contact between them: the coefficient
// fields carry the faces' conductances, which a device takes beside k and the capacity, one
// array per axis padded by a node each side in the run's precision, and the compact form a
// class per face (kernels/cuda/coefficient_fields.cu). The device estimate counts them.
TEST_F(RealCaseFiles, TheDeviceEstimateCountsTheFacesAContactBrings) {
  std::vector<double> ids, q;
  write_good(ids, q);
  const std::string text =
      replace(with_files(path("map.h5"), path("q.h5")), "mold: {diffusivity: 0.5}",
              "mold: {conductivity: 2, density: 1000, specific_heat: 1000}");
  const auto device_fields = [](const solver::Case& c) {
    for (const solver::MemoryPart& p : solver::estimate_memory(c, 3, true, 1).device)
      if (p.what == "coefficient fields in the device") return p.bytes;
    return -1.0;
  };
  solver::Case plain = load_case_text(text).value.value();
  solver::Case contact =
      load_case_text(
          replace(text, "boundary:\n",
                  "contacts: [{between: [copper, mold], resistance: 1e-4}]\nboundary:\n"))
          .value.value();
  ASSERT_EQ(contact.contacts.size(), 1u);
  read_field_inputs(plain);
  read_field_inputs(contact);
  EXPECT_TRUE(solver::coefficient_fields(contact)->has_faces());
  EXPECT_FALSE(solver::coefficient_fields(plain)->has_faces());
  // 2 axes of (11 + 2) x (6 + 2) padded nodes: 8 bytes a face and 1 for its class.
  const double faces = 2 * (13 * 8) * (8.0 + 1.0);
  EXPECT_EQ(device_fields(contact) - device_fields(plain), faces);
}

TEST_F(RealCaseFiles, MissingFileAndDatasetNameTheirKeys) {
  std::vector<double> ids, q;
  write_good(ids, q);
  expect_error(with_files(path("none.h5"), path("q.h5")), "regions[3].file.path", 9,
               "no such file");
  expect_error(replace(with_files(path("map.h5"), path("q.h5")), "dataset: q}", "dataset: w}"),
               "sources[2].file.dataset", 13, "no dataset 'w'");
  solver::Case c = load_case_text(with_files(path("map.h5"), path("q.h5"))).value.value();
  c.sources[2].shape.path = path("gone.h5");
  try {
    read_field_inputs(c);
    FAIL() << "a missing file must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sources[2].file.path: "), std::string::npos) << e.what();
  }
}

TEST_F(RealCaseFiles, WrongShapeAndWrongType) {
  std::vector<double> ids, q;
  write_good(ids, q);
  write(path("t.h5"), "material", {11, 6}, H5T_STD_I32LE, ids);
  expect_error(with_files(path("t.h5"), path("q.h5")), "regions[3].file.dataset", 9,
               "has dimensions [11, 6]; the grid needs [6, 11] (y, x)");
  write(path("f.h5"), "material", {6, 11}, H5T_IEEE_F64LE, ids);
  expect_error(with_files(path("f.h5"), path("q.h5")), "regions[3].file.dataset", 9,
               "holds floating-point numbers; a material map holds integers");
  write(path("q3.h5"), "q", {2, 3, 11}, H5T_IEEE_F64LE, q);
  expect_error(with_files(path("map.h5"), path("q3.h5")), "sources[2].file.dataset", 13,
               "has dimensions [2, 3, 11]");
}

TEST_F(RealCaseFiles, AnIdWithoutANameIsNamed) {
  std::vector<double> ids, q;
  write_good(ids, q);
  ids[14] = 7.0;  // x = 0.3, y = 0.1
  ids[20] = 9.0;
  write(path("map.h5"), "material", {6, 11}, H5T_STD_I32LE, ids);
  expect_error(with_files(path("map.h5"), path("q.h5")), "regions[3].file.ids", 9,
               "the map holds id 7 (first at x = 0.3, y = 0.1) that ids does not name (and 1 "
               "more unnamed id: 9)");
}

TEST_F(RealCaseFiles, IdsAreIntegersNamingMaterials) {
  std::vector<double> ids, q;
  write_good(ids, q);
  const std::string text = with_files(path("map.h5"), path("q.h5"));
  expect_error(replace(text, "2: mold}", "2: mould}"), "regions[3].file.ids.2", 9,
               "unknown material 'mould' (did you mean 'mold'?)");
  expect_error(replace(text, "2: mold}", "two: mold}"), "regions[3].file.ids.two", 9,
               "expected an integer");
  expect_error(replace(text, "2: mold}", "01: mold}"), "regions[3].file.ids.1", 9,
               "duplicate id 1");
  expect_error(replace(text, ", ids: {1: copper, 2: mold}", ""), "regions[3].file.ids", 9,
               "missing required key");
  expect_error(replace(text, "{file: {path", "{material: mold, file: {path"), "regions[3].material",
               9, "a file region takes its materials from file.ids");
  expect_error(replace(text, "dataset: q}}", "dataset: q}, power: 1}"), "sources[2].power", 13,
               "a file source gives the density");
}

TEST_F(RealCaseFiles, NonFiniteDensityIsRefused) {
  std::vector<double> ids, q;
  write_good(ids, q);
  const LoadResult good = load_case_text(with_files(path("map.h5"), path("q.h5")));
  ASSERT_TRUE(good.ok()) << format_errors(good.errors);
  q[12] = std::numeric_limits<double>::quiet_NaN();  // x = 0.1, y = 0.1
  write(path("q.h5"), "q", {6, 11}, H5T_IEEE_F64LE, q);
  // Validation reads the densities when it builds the fields for the stability limit.
  expect_error(with_files(path("map.h5"), path("q.h5")), "sources[2].file.dataset", 13,
               "is not finite at x = 0.1, y = 0.1");
  solver::Case c = *good.value;
  try {
    read_field_inputs(c);
    FAIL() << "a NaN density must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sources[2].file.dataset: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("x = 0.1, y = 0.1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heatsim::io
