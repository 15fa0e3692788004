// The contacts list of a case (io/case_materials.cpp): what it reads into Case::contacts, and
// every mistake reported with its key path and line; materials that never touch warned of.
#include <gtest/gtest.h>

#include <string>

#include "io/case_loader.hpp"

namespace heatsim_tests {
namespace {

using heatsim::io::CaseError;
using heatsim::io::format_errors;
using heatsim::io::load_case_text;
using heatsim::io::LoadResult;

// A copper/silicon wall; `contacts` goes in from line 8 on.
std::string wall(const std::string& contacts, const std::string& copper_k = "400") {
  return "grid: {dims: 1, n: [31], length: [0.03]}\n"  // 1
         "materials:\n"                                // 2
         "  copper: {conductivity: " +
         copper_k +
         ", density: 8900, specific_heat: 385}\n"                               // 3
         "  silicon: {conductivity: 150, density: 2330, specific_heat: 700}\n"  // 4
         "regions:\n"                                                           // 5
         "  - {material: silicon}\n"                                            // 6
         "  - {material: copper, box: {lower: [0], upper: [0.0105]}}\n" +       // 7
         contacts +                                                             // 8...
         "boundary:\n"
         "  x-: {type: dirichlet, value: 350}\n"
         "  x+: {type: dirichlet, value: 300}\n"
         "initial: {type: constant, value: 300}\n"
         "time: {method: steady}\n";
}

const CaseError* find(const std::vector<CaseError>& list, const std::string& path) {
  for (const CaseError& e : list)
    if (e.path == path) return &e;
  return nullptr;
}

// The error at `path`: on `line`, its message holding `words`.
void expect_error(const std::string& contacts, const std::string& path, int line,
                  const std::string& words) {
  const LoadResult r = load_case_text(wall(contacts));
  EXPECT_FALSE(r.ok()) << contacts;
  const CaseError* e = find(r.errors, path);
  ASSERT_NE(e, nullptr) << "no error at " << path << " in:\n" << format_errors(r.errors);
  EXPECT_EQ(e->line, line) << e->to_string();
  EXPECT_NE(e->message.find(words), std::string::npos) << e->to_string();
}

TEST(ContactsCase, ReadsResistanceAndConductance) {
  LoadResult r =
      load_case_text(wall("contacts:\n  - {between: [copper, silicon], resistance: 2.0e-5}\n"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.value->contacts.size(), 1u);
  EXPECT_EQ(r.value->contacts[0].between[0], "copper");
  EXPECT_EQ(r.value->contacts[0].between[1], "silicon");
  EXPECT_EQ(r.value->contacts[0].resistance, 2.0e-5);
  EXPECT_TRUE(r.warnings.empty()) << format_errors(r.warnings);
  r = load_case_text(wall("contacts:\n  - {between: [silicon, copper], conductance: 4.0e4}\n"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(r.value->contacts.at(0).resistance, 1.0 / 4.0e4);
  // The body resolves with it, and a contact of 0 is allowed.
  r = load_case_text(wall("contacts:\n  - {between: [copper, silicon], resistance: 0}\n"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto body = heatsim::io::resolve_body(*r.value, r.lines);
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  EXPECT_NE(body.fields, nullptr);
}

TEST(ContactsCase, MistakesNameTheirKeyAndLine) {
  expect_error("contacts:\n  - {between: [copper, silcon], resistance: 1e-5}\n",
               "contacts[0].between[1]", 9, "unknown material 'silcon'");
  expect_error("contacts:\n  - {between: [copper, copper], resistance: 1e-5}\n",
               "contacts[0].between", 9, "'copper' and itself");
  expect_error(
      "contacts:\n"
      "  - {between: [copper, silicon], resistance: 1e-5}\n"
      "  - {between: [silicon, copper], resistance: 2e-5}\n",
      "contacts[1].between", 10, "given twice (first at contacts[0], line 9)");
  expect_error("contacts:\n  - {between: [copper, silicon], resistance: -1e-5}\n",
               "contacts[0].resistance", 9, "must be finite and >= 0");
  expect_error("contacts:\n  - {between: [copper, silicon], resistance: .nan}\n",
               "contacts[0].resistance", 9, "must be finite and >= 0");
  // 0 is a joint that passes no heat, not a perfect one: the message says what to write.
  expect_error("contacts:\n  - {between: [copper, silicon], conductance: 0}\n",
               "contacts[0].conductance", 9,
               "must be finite and > 0 (W/(m^2 K); a perfect contact is no contact entry, a "
               "joint that passes no heat a void between the materials), got 0");
  expect_error(
      "contacts:\n  - {between: [copper, silicon],\n     resistance: 1e-5, conductance: 1e5}\n",
      "contacts[0].conductance", 10, "not both");
  expect_error("contacts:\n  - {between: [copper, silicon]}\n", "contacts[0]", 9,
               "needs resistance");
  expect_error("contacts:\n  - {between: [copper], resistance: 1e-5}\n", "contacts[0].between", 9,
               "two material names");
  expect_error("contacts:\n  - {between: [copper, silicon], resistence: 1e-5}\n",
               "contacts[0].resistence", 9, "resistance");
  // A conductance whose inverse overflows is named at the key the case wrote.
  expect_error("contacts:\n  - {between: [copper, silicon], conductance: 1e-310}\n",
               "contacts[0].conductance", 9, "not a finite number");
}

// A resistance that dwarfs the materials' over a spacing by more than 1e8 is warned of (its
// solves end on the rounding floor); a physical one is not.
TEST(ContactsCase, AResistanceBeyondWhatTheSolvesResolveIsWarnedOf) {
  for (const double r : {1e-5, 1e12}) {
    const LoadResult loaded = load_case_text(wall(
        "contacts:\n  - {between: [copper, silicon], resistance: " + std::to_string(r) + "}\n"));
    ASSERT_TRUE(loaded.ok()) << format_errors(loaded.errors);
    const auto body = heatsim::io::resolve_body(*loaded.value, loaded.lines);
    const CaseError* w = find(body.warnings, "contacts[0]");
    if (r < 1.0) {
      EXPECT_EQ(w, nullptr) << format_errors(body.warnings);
    } else {
      ASSERT_NE(w, nullptr) << format_errors(body.warnings);
      EXPECT_NE(w->message.find("times the materials' over a spacing"), std::string::npos)
          << w->to_string();
    }
  }
}

// The resistance is judged against the weaker side: 1 m^2 K/W between k = 0.04 and k = 1e6
// (1e9 times the conductor's resistance over a 1 mm spacing, 40 times the insulation's) is a
// contact fp64 resolves (its wall's steady flux comes out to 3e-8 of its balance), not warned.
TEST(ContactsCase, AContactIsJudgedAgainstItsWeakerSide) {
  const std::string text =
      "grid: {dims: 1, n: [101], length: [0.1]}\n"
      "materials:\n"
      "  a: {conductivity: 0.04, density: 1000, specific_heat: 1000}\n"
      "  b: {conductivity: 1.0e6, density: 1000, specific_heat: 1000}\n"
      "regions:\n"
      "  - {material: a}\n"
      "  - {material: b, box: {lower: [0.0505], upper: [0.1]}}\n"
      "contacts:\n"
      "  - {between: [a, b], resistance: RES}\n"
      "boundary: {x-: {type: dirichlet, value: 1000}, x+: {type: dirichlet, value: 300}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady}\n";
  for (const char* r : {"1", "1.0e8"}) {
    std::string t = text;
    t.replace(t.find("RES"), 3, r);
    const LoadResult loaded = load_case_text(t);
    ASSERT_TRUE(loaded.ok()) << format_errors(loaded.errors);
    const auto body = heatsim::io::resolve_body(*loaded.value, loaded.lines);
    const CaseError* w = find(body.warnings, "contacts[0]");
    if (std::string(r) == "1")
      EXPECT_EQ(w, nullptr) << format_errors(body.warnings);
    else
      EXPECT_NE(w, nullptr) << format_errors(body.warnings);
  }
}

TEST(ContactsCase, ContactsWithoutMaterialsAreRefused) {
  const LoadResult r = load_case_text(
      "grid: {dims: 1, n: [11], length: [1]}\n"
      "physics: {alpha: 1}\n"
      "contacts:\n"
      "  - {between: [a, b], resistance: 1}\n"
      "boundary: {x-: {type: dirichlet, value: 0}, x+: {type: dirichlet, value: 1}}\n"
      "initial: {type: constant, value: 0}\n"
      "time: {method: steady}\n");
  EXPECT_FALSE(r.ok());
  const CaseError* e = find(r.errors, "contacts");
  ASSERT_NE(e, nullptr) << format_errors(r.errors);
  EXPECT_EQ(e->line, 3);
  EXPECT_NE(e->message.find("give a materials section"), std::string::npos) << e->to_string();
}

// Two materials no neighbouring nodes hold: a warning at the pair, the case still runs.
TEST(ContactsCase, MaterialsThatNeverTouchAreWarnedOf) {
  const std::string text =
      "grid: {dims: 1, n: [31], length: [0.03]}\n"
      "materials:\n"
      "  copper: {conductivity: 400, density: 8900, specific_heat: 385}\n"
      "  silicon: {conductivity: 150, density: 2330, specific_heat: 700}\n"
      "  solder: {conductivity: 50, density: 7400, specific_heat: 230}\n"
      "regions:\n"
      "  - {material: silicon}\n"
      "  - {material: solder, box: {lower: [0], upper: [0.02]}}\n"
      "  - {material: copper, box: {lower: [0], upper: [0.0105]}}\n"
      "contacts:\n"
      "  - {between: [copper, solder], resistance: 1e-5}\n"
      "  - {between: [copper, silicon], resistance: 1e-5}\n"  // line 12
      "boundary: {x-: {type: dirichlet, value: 350}, x+: {type: dirichlet, value: 300}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady}\n";
  const LoadResult r = load_case_text(text);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto body = heatsim::io::resolve_body(*r.value, r.lines);
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  EXPECT_EQ(find(body.warnings, "contacts[0].between"), nullptr) << format_errors(body.warnings);
  const CaseError* w = find(body.warnings, "contacts[1].between");
  ASSERT_NE(w, nullptr) << format_errors(body.warnings);
  EXPECT_EQ(w->line, 12);
  EXPECT_NE(w->message.find("no node of 'copper' neighbours a node of 'silicon'"),
            std::string::npos)
      << w->to_string();
  // Both materials hold nodes: nothing said of a layer without one.
  EXPECT_EQ(w->message.find("holds no node"), std::string::npos) << w->to_string();
}

// A foil thinner than a spacing between two contacts, holding no node: the warning says its
// spreading along itself is only approximate and how to make it exact.
TEST(ContactsCase, AFoilThatHoldsNoNodeIsNamed) {
  const std::string text =
      "grid: {dims: 2, n: [21, 9], length: [0.01, 0.004]}\n"
      "materials:\n"
      "  lower: {conductivity: 5, density: 1000, specific_heat: 1000}\n"
      "  foil: {conductivity: 400, density: 1000, specific_heat: 1000}\n"
      "  upper: {conductivity: 5, density: 1000, specific_heat: 1000}\n"
      "regions:\n"
      "  - {material: lower}\n"
      "  - {material: foil, box: {lower: [0, 0.00202], upper: [0.01, 0.00208]}}\n"
      "  - {material: upper, box: {lower: [0, 0.00208], upper: [0.01, 0.004]}}\n"
      "contacts:\n"
      "  - {between: [lower, foil], resistance: 1e-4}\n"  // line 11
      "  - {between: [foil, upper], resistance: 2e-4}\n"
      "boundary: {all: {type: insulated}, y+: {type: convective, h: 2000, ambient: 300}}\n"
      "sources:\n"
      "  - {box: {lower: [0, 0], upper: [0.002, 0.00202]}, power: 50}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady}\n";
  const LoadResult r = load_case_text(text);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto body = heatsim::io::resolve_body(*r.value, r.lines);
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  const CaseError* w = find(body.warnings, "contacts[0].between");
  ASSERT_NE(w, nullptr) << format_errors(body.warnings);
  EXPECT_EQ(w->line, 11);
  EXPECT_NE(w->message.find("'foil' holds no node, so a layer of it conducts along itself only "
                            "approximately"),
            std::string::npos)
      << w->to_string();
  EXPECT_NE(w->message.find("put a node plane inside it"), std::string::npos) << w->to_string();
}

// A contact at a material a ball or `where` region places is no longer warned of: each face
// the surface crosses takes it over its share of the normal (solver/contacts.hpp), so the
// staircase no longer overstates the surface. Nor is a box's.
TEST(ContactsCase, ContactsOnCurvedInterfacesAreNotWarnedOf) {
  const std::string text =
      "grid: {dims: 2, n: [21, 21], length: [0.04, 0.04]}\n"
      "materials:\n"
      "  a: {conductivity: 100, density: 1000, specific_heat: 1000}\n"
      "  b: {conductivity: 5, density: 1000, specific_heat: 1000}\n"
      "  c: {conductivity: 50, density: 1000, specific_heat: 1000}\n"
      "regions:\n"
      "  - {material: b}\n"
      "  - {material: a, ball: {center: [0.02, 0.02], radius: 0.008}}\n"
      "  - {material: c, box: {lower: [0, 0], upper: [0.04, 0.0051]}}\n"
      "contacts:\n"
      "  - {between: [a, b], resistance: 2e-3}\n"
      "  - {between: [b, c], resistance: 2e-3}\n"
      "boundary: {all: {type: convective, h: 500, ambient: 300}}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady}\n";
  const LoadResult r = load_case_text(text);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto body = heatsim::io::resolve_body(*r.value, r.lines);
  EXPECT_EQ(find(body.warnings, "contacts[0]"), nullptr) << format_errors(body.warnings);
  EXPECT_EQ(find(body.warnings, "contacts[1]"), nullptr) << format_errors(body.warnings);
}

// A temperature-dependent conductivity takes a contact (its part scales, the contact's stays).
TEST(ContactsCase, TemperatureDependentConductivityTakesAContact) {
  const LoadResult r =
      load_case_text(wall("contacts:\n  - {between: [copper, silicon], resistance: 1e-5}\n",
                          "[[300, 400], [400, 390]]"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto body = heatsim::io::resolve_body(*r.value, r.lines);
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  ASSERT_NE(body.fields, nullptr);
  ASSERT_TRUE(body.fields->temperature);
  EXPECT_FALSE(body.fields->temperature->contact[0].empty());
}

}  // namespace
}  // namespace heatsim_tests
