// The body on the grid (io::resolve_body): what the voids do, said with key paths and lines.
// Errors: a surface condition on a void that faces no body, a source wholly inside a void, a
// steady piece nothing determines. Warnings: a void that changes nothing, a source partly in a
// void, a transient piece cut off from the rest; none for a sound case.
#include <gtest/gtest.h>

#include <string>

#include "io/case_loader.hpp"
#include "solver/materials.hpp"

namespace heatsim::io {
namespace {

// A steel plate 0.1 x 0.05 m, x- at 300 K, and `regions` / `sources` / `time` lines added.
std::string plate(const std::string& regions, const std::string& sources,
                  const std::string& time = "{steps: 10}") {
  return "grid: {dims: 2, n: [41, 21], length: [0.1, 0.05]}\n"               // 1
         "materials:\n"                                                      // 2
         "  steel: {conductivity: 45, density: 7800, specific_heat: 470}\n"  // 3
         "regions:\n"                                                        // 4
         "  - {material: steel}\n" +                                         // 5
         regions +                                                           // 6...
         (sources.empty() ? "" : "sources:\n" + sources) +
         "boundary:\n"
         "  all: {type: neumann, flux: 0}\n"
         "  x-: {type: dirichlet, value: 300}\n"
         "initial: {type: constant, value: 300}\n"
         "time: " +
         time + "\n";
}

// The body of the case in `text`; an explicit case's errors come when it loads (the stability
// check lays the body on the grid first).
ResolvedBody resolve(const std::string& text) {
  const LoadResult r = load_case_text(text);
  if (!r.ok()) {
    ResolvedBody refused;
    refused.errors = r.errors;
    return refused;
  }
  return resolve_body(*r.value, r.lines);
}

const CaseError* find(const std::vector<CaseError>& list, const std::string& path) {
  for (const CaseError& e : list)
    if (e.path == path) return &e;
  return nullptr;
}

// Two void boxes meeting on a node plane (x = 0.05): the nodes on it lie in both, in neither
// alone, and are no part of the body; their material id says so (the summaries, the material
// map and the probes read it), as the nodes inside either box.
TEST(ResolveBody, NodesSeveralVoidsCoverTogetherAreVoid) {
  const ResolvedBody b = resolve(plate(
      "  - {void: true, box: {lower: [0.04, 0.02], upper: [0.05, 1]}}\n"
      "  - {void: true, box: {lower: [0.05, 0.02], upper: [0.06, 1]}}\n",
      "", "{method: steady}"));
  ASSERT_NE(b.fields, nullptr) << format_errors(b.errors);
  int seam = 0;
  for (std::size_t i = 0; i < b.material_ids.size(); ++i) {
    EXPECT_EQ(b.fields->capacity[i] == 0.0, b.material_ids[i] == solver::kVoid) << "node " << i;
    const std::int64_t x = static_cast<std::int64_t>(i) % 41, y = static_cast<std::int64_t>(i) / 41;
    if (x == 20 && y >= 10) seam += b.material_ids[i] == solver::kVoid;  // x = 0.05, y >= 0.025
  }
  EXPECT_EQ(seam, 11);
}

TEST(ResolveBody, ASoundCaseHasNothingToSay) {
  const ResolvedBody b = resolve(plate(
      "  - {void: true, name: slot, box: {lower: [0.04, 0.01], upper: [0.06, 0.04]},\n"
      "     surface: {type: convective, h: 25, ambient: 290}}\n",
      "  - {box: {lower: [0.01, 0.01], upper: [0.02, 0.02]}, power: 10}\n", "{method: steady}"));
  EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
  EXPECT_TRUE(b.warnings.empty()) << format_errors(b.warnings);
  ASSERT_NE(b.fields, nullptr);
  ASSERT_EQ(b.surfaces.voids.size(), 1u);
  EXPECT_NEAR(b.surfaces.voids[0].area, 2 * 0.02 + 2 * 0.03, 1e-12);  // the slot's four walls
}

TEST(ResolveBody, WarningsNameTheVoidWithKeyPathAndLine) {
  const ResolvedBody b = resolve(
      plate("  - {void: true, name: cut, box: {lower: [0.05, -1], upper: [0.06, 1]}}\n"  // 6
            "  - {void: true, box: {lower: [0.2, 0], upper: [0.3, 0.05]}}\n",            // 7
            "  - {box: {lower: [0.04, 0.01], upper: [0.055, 0.02]}, power: 10}\n"));     // 9
  EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
  const CaseError* cut = find(b.warnings, "regions[1].box");
  ASSERT_NE(cut, nullptr) << format_errors(b.warnings);
  EXPECT_EQ(cut->line, 6);
  EXPECT_NE(cut->message.find("the voids cut the body into 2 pieces that exchange no heat; the "
                              "piece of 357 nodes at x = 0.06, y = 0 (beside regions[1] (cut)) "
                              "is cut off from the rest"),
            std::string::npos)
      << cut->message;
  const CaseError* outside = find(b.warnings, "regions[2].box");
  ASSERT_NE(outside, nullptr) << format_errors(b.warnings);
  EXPECT_EQ(outside->line, 7);
  EXPECT_NE(outside->message.find("faces no node of the body"), std::string::npos);
  const CaseError* source = find(b.warnings, "sources[0].box");
  ASSERT_NE(source, nullptr) << format_errors(b.warnings);
  EXPECT_EQ(source->line, 9);
  EXPECT_NE(source->message.find("overlaps the void regions[1] (cut, line 6): the source heats "
                                 "only the body's part of its shape (its power is spread over "
                                 "that part)"),
            std::string::npos)
      << source->message;
}

// A source inside a material painted over a void (a chip painted in an "air" void, fins painted
// over one) heats all of its shape: no warning. One that reaches past the painted box into the
// void is still warned of, and the body keeps only its part.
TEST(ResolveBody, ASourceInsideBodyPaintedOverAVoidIsNoWarning) {
  const std::string air =
      "  - {void: true, name: air, box: {lower: [0.01, 0.02], upper: [0.1, 0.05]},\n"  // 6
      "     surface: {type: convective, h: 25, ambient: 290}}\n"                       // 7
      "  - {material: steel, box: {lower: [0.03, 0.02], upper: [0.07, 0.035]}}\n";     // 8
  for (const char* source :
       {"  - {box: {lower: [0.04, 0.025], upper: [0.06, 0.03]}, power: 10}\n",
        "  - {ball: {center: [0.05, 0.028], radius: 0.0047}, power: 10}\n",
        "  - {where: \"abs(x - 0.05) < 0.012 && abs(y - 0.027) < 0.006\", power: 10}\n"}) {
    const ResolvedBody b = resolve(plate(air, source, "{method: steady}"));
    EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
    EXPECT_TRUE(b.warnings.empty()) << source << format_errors(b.warnings);
  }
  // Past the painted box's top (y = 0.035) into the air.
  const ResolvedBody past =
      resolve(plate(air, "  - {box: {lower: [0.04, 0.025], upper: [0.06, 0.04]}, power: 10}\n",
                    "{method: steady}"));
  EXPECT_TRUE(past.errors.empty()) << format_errors(past.errors);
  const CaseError* w = find(past.warnings, "sources[0].box");
  ASSERT_NE(w, nullptr) << format_errors(past.warnings);
  EXPECT_NE(w->message.find("overlaps the void regions[1] (air, line 6)"), std::string::npos)
      << w->message;
}

TEST(ResolveBody, ErrorsNameTheKeyAndLineAndLeaveNoFields) {
  // A steady state whose cut-off piece nothing determines.
  const ResolvedBody cut =
      resolve(plate("  - {void: true, name: cut, box: {lower: [0.05, -1], upper: [0.06, 1]}}\n", "",
                    "{method: steady}"));
  const CaseError* e = find(cut.errors, "regions[1].box");
  ASSERT_NE(e, nullptr) << format_errors(cut.errors);
  EXPECT_EQ(e->line, 6);
  EXPECT_NE(e->message.find("its steady temperature is not determined"), std::string::npos);
  EXPECT_EQ(cut.fields, nullptr);
  // Convection on the far piece determines it: a warning, no error.
  std::string text =
      plate("  - {void: true, name: cut, box: {lower: [0.05, -1], upper: [0.06, 1]}}\n", "",
            "{method: steady}");
  text.replace(text.find("  x-: {type: dirichlet, value: 300}\n"), 0,
               "  x+: {type: convective, h: 5, ambient: 290}\n");
  const ResolvedBody anchored = resolve(text);
  EXPECT_TRUE(anchored.errors.empty()) << format_errors(anchored.errors);
  EXPECT_NE(find(anchored.warnings, "regions[1].box"), nullptr);
  // A surface condition on a void beyond the domain.
  const ResolvedBody far =
      resolve(plate("  - {void: true, box: {lower: [0.2, 0], upper: [0.3, 0.05]},\n"
                    "     surface: {type: neumann, heat_flux: 100}}\n",
                    ""));
  e = find(far.errors, "regions[1].surface");
  ASSERT_NE(e, nullptr) << format_errors(far.errors);
  EXPECT_EQ(e->line, 7);
  EXPECT_NE(e->message.find("its surface condition applies nowhere"), std::string::npos);
  // A source wholly inside a void.
  const ResolvedBody buried =
      resolve(plate("  - {void: true, name: hole, ball: {center: [0.05, 0.025], radius: 0.01}}\n",
                    "  - {ball: {center: [0.05, 0.025], radius: 0.004}, power_density: 1e6}\n"));
  e = find(buried.errors, "sources[0].ball");
  ASSERT_NE(e, nullptr) << format_errors(buried.errors);
  EXPECT_EQ(e->line, 8);
  EXPECT_NE(e->message.find("lies wholly inside the void regions[1] (hole, line 6)"),
            std::string::npos)
      << e->message;
}

// A void across the plate whose bound lies less than half a spacing past a node column: the
// column's slivers of steel are folded into the column beside them (they were joined to nothing
// and said apart). A strip of steel thinner than a spacing between two voids, between two node
// columns both inside the voids, is joined to no whole node: its slivers are said apart.
TEST(ResolveBody, SliversAVoidLeavesAreSaidApart) {
  const std::string cut =
      "  - {void: true, name: cut, box: {lower: [0.05, -1], upper: [0.0585, 1]}}\n";
  const ResolvedBody b = resolve(plate(cut, ""));
  EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
  ASSERT_EQ(b.warnings.size(), 1u) << format_errors(b.warnings);
  EXPECT_NE(b.warnings[0].message.find("the voids cut the body into 2 pieces"), std::string::npos)
      << b.warnings[0].message;
  const std::string strip =
      cut + "  - {void: true, name: beyond, box: {lower: [0.059, -1], upper: [0.07, 1]}}\n";
  const ResolvedBody thin = resolve(plate(strip, ""));
  EXPECT_TRUE(thin.errors.empty()) << format_errors(thin.errors);
  bool said = false;
  for (const CaseError& w : thin.warnings)
    said = said || w.message.find(
                       "hold slivers of the body whose faces all cross a void, so "
                       "they conduct to no other node") != std::string::npos;
  EXPECT_TRUE(said) << format_errors(thin.warnings);
  // Steady, with nothing to fix the slivers' temperature: an error.
  const ResolvedBody steady = resolve(plate(strip, "", "{method: steady}"));
  ASSERT_FALSE(steady.errors.empty());
  bool slivers = false;
  for (const CaseError& e : steady.errors)
    slivers =
        slivers || e.message.find("nothing fixes their steady temperature") != std::string::npos;
  EXPECT_TRUE(slivers) << format_errors(steady.errors);
}

// A void reaching a convective face is taken by every time method (explicit steps pass the
// face's condition through the ghost alone where the face into the body conducts nothing).
TEST(ResolveBody, AVoidOnAConvectiveFaceIsTakenByEveryMethod) {
  const std::string slot =
      "  - {void: true, name: slot, box: {lower: [0.04, 0.03], upper: [0.06, 0.05]}}\n";
  std::string text = plate(slot, "");
  text.replace(text.find("  x-: {type: dirichlet"), 0,
               "  y+: {type: convective, h: 10, ambient: 300}\n");
  EXPECT_TRUE(resolve(text).errors.empty()) << format_errors(resolve(text).errors);
  text.replace(text.find("{steps: 10}"), std::string("{steps: 10}").size(),
               "{method: backward-euler, dt: 1, steps: 10}");
  EXPECT_TRUE(resolve(text).errors.empty());
}

// A material painted inside a void that has a surface condition: a box's or ball's sides
// facing the void take the void's condition (fins written as boxes over an "air" void), so
// nothing is said of them; a `where` shape's do not, and stay insulated: said as a warning at
// the painting region, naming the void. Not for a void without a condition (insulated sides
// are what it means).
TEST(ResolveBody, AWhereMaterialPaintedInsideAConditionedVoidIsWarnedOf) {
  const std::string air =
      "  - {void: true, name: air, box: {lower: [0.05, 0], upper: [0.1, 0.05]},\n"  // 6
      "     surface: {type: convective, h: 25, ambient: 300}}\n";                   // 7
  const std::string fin_box =
      "  - {material: steel, box: {lower: [0.05, 0.02], upper: [0.1, 0.03]}}\n";
  const std::string fin_ball =
      "  - {material: steel, ball: {center: [0.05, 0.025], radius: 0.01}}\n";
  const std::string fin_where = "  - {material: steel, where: \"y > 0.02 && y < 0.03\"}\n";  // 8

  // Boxes and balls: their sides are the void's surface.
  for (const std::string& fin : {fin_box, fin_ball}) {
    const ResolvedBody body = resolve(plate(air + fin, ""));
    EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
    EXPECT_TRUE(body.warnings.empty()) << fin << format_errors(body.warnings);
  }

  ResolvedBody body = resolve(plate(air + fin_where, ""));
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  const CaseError* w = find(body.warnings, "regions[2].where");
  ASSERT_NE(w, nullptr) << format_errors(body.warnings);
  EXPECT_EQ(w->line, 8);
  EXPECT_NE(w->message.find("inside the void regions[1] (air, line 6)"), std::string::npos)
      << w->message;
  EXPECT_NE(w->message.find("insulated"), std::string::npos) << w->message;

  // The same void insulated: nothing to say.
  std::string insulated = air;
  insulated.replace(insulated.find(",\n     surface"),
                    std::string(",\n     surface: {type: convective, h: 25, ambient: 300}}").size(),
                    "}\n");
  body = resolve(plate(insulated + fin_where, ""));
  EXPECT_TRUE(body.errors.empty()) << format_errors(body.errors);
  EXPECT_EQ(find(body.warnings, "regions[2].where"), nullptr) << format_errors(body.warnings);
}

// Regions are painted in order: one that a later region paints over entirely has no effect (a
// small part listed before the block around it). Warned at the earlier region, naming the later
// one; a region only partly covered, the same material over it, or one listed after is not.
TEST(ResolveBody, ARegionALaterOnePaintsOverEntirelyIsWarnedOf) {
  std::string text = plate(
      "  - {material: steel, box: {lower: [0.0, 0.0], upper: [0.01, 0.01]}}\n"  // 8
      "  - {material: copper, box: {lower: [0.02, 0.01], upper: [0.03, 0.02]}}\n"            // 9
      "  - {material: copper, box: {lower: [0.05, 0.0], upper: [0.07, 0.03]}}\n"             // 10
      "  - {material: air, ball: {center: [0.09, 0.04], radius: 0.005}}\n"                   // 11
      "  - {material: steel, box: {lower: [0.015, 0.005], upper: [0.035, 0.025]}}\n"         // 12
      "  - {material: steel, box: {lower: [0.06, -1], upper: [1, 1]}}\n"                     // 13
      "  - {material: steel, box: {lower: [0.0, 0.0], upper: [0.005, 0.005]}}\n",            // 14
      "", "{method: steady}");
  const std::string steel = "  steel: {conductivity: 45, density: 7800, specific_heat: 470}\n";
  text.replace(text.find(steel), steel.size(),
               steel + "  copper: {conductivity: 390, density: 8900, specific_heat: 385}\n" +
                   "  air: {conductivity: 0.026, density: 1.2, specific_heat: 1005}\n");
  const ResolvedBody b = resolve(text);
  EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
  const CaseError* copper = find(b.warnings, "regions[2].box");
  ASSERT_NE(copper, nullptr) << format_errors(b.warnings);
  EXPECT_EQ(copper->line, 9);
  EXPECT_NE(copper->message.find("paints material copper where regions[5] (line 12), material "
                                 "steel, paints over all of it later"),
            std::string::npos)
      << copper->message;
  EXPECT_NE(copper->message.find("list it after regions[5]"), std::string::npos);
  // The ball inside the box of regions[6], which reaches past the domain.
  const CaseError* air = find(b.warnings, "regions[4].ball");
  ASSERT_NE(air, nullptr) << format_errors(b.warnings);
  EXPECT_EQ(air->line, 11);
  EXPECT_EQ(find(b.warnings, "regions[1].box"), nullptr);  // steel over steel
  EXPECT_EQ(find(b.warnings, "regions[3].box"), nullptr);  // only partly covered
  EXPECT_EQ(find(b.warnings, "regions[7].box"), nullptr);  // the last
}

// A void that a later void paints over entirely is warned of with the advice to remove it
// (listing a void later would not make it part of the body).
TEST(ResolveBody, AVoidALaterVoidPaintsOverIsToBeRemoved) {
  const std::string text = plate(
      "  - {void: true, name: inner, box: {lower: [0.02, 0.0], upper: [0.03, 0.01]}}\n"   // 6
      "  - {void: true, name: gap, box: {lower: [0.015, -1], upper: [0.035, 0.015]}}\n",  // 7
      "", "{method: steady}");
  const ResolvedBody b = resolve(text);
  EXPECT_TRUE(b.errors.empty()) << format_errors(b.errors);
  const CaseError* inner = find(b.warnings, "regions[1].box");
  ASSERT_NE(inner, nullptr) << format_errors(b.warnings);
  EXPECT_NE(inner->message.find("paints a void where the void regions[2] (gap, line 7) paints "
                                "over all of it later"),
            std::string::npos)
      << inner->message;
  EXPECT_NE(inner->message.find("remove it (the later void cuts out its shape"), std::string::npos)
      << inner->message;
  EXPECT_EQ(inner->message.find("list it after"), std::string::npos) << inner->message;
}

// A piece the voids cut off with nothing to take its heat away: with a source in it no steady
// state exists, and the refusal says so (and what to do) rather than "not determined".
TEST(ResolveBody, AHeatedIslandHasNoSteadyStateAndSaysSo) {
  const std::string cut = "  - {void: true, name: cut, box: {lower: [0.05, -1], upper: [0.06, 1]}}\n";
  const ResolvedBody heated =
      resolve(plate(cut, "  - {box: {lower: [0.07, 0.01], upper: [0.08, 0.02]}, power: 10}\n",
                    "{method: steady}"));
  const CaseError* e = find(heated.errors, "regions[1].box");
  ASSERT_NE(e, nullptr) << format_errors(heated.errors);
  EXPECT_EQ(e->line, 6);
  EXPECT_NE(e->message.find("to take away the heat a source or a heat flux puts into it, so no "
                            "steady state exists"),
            std::string::npos)
      << e->message;
  const ResolvedBody cold = resolve(plate(cut, "", "{method: steady}"));
  const CaseError* u = find(cold.errors, "regions[1].box");
  ASSERT_NE(u, nullptr) << format_errors(cold.errors);
  EXPECT_NE(u->message.find("so its steady temperature is not determined"), std::string::npos)
      << u->message;
}

// A fin painted over a void and holding no node (0.3 mm between node planes 0.5 mm apart)
// conducts nothing: warned, naming the void, the thickness and what to do. A fin that takes a
// node plane is not.
TEST(ResolveBody, AFinPaintedOverAVoidHoldingNoNodeIsWarnedOf) {
  const std::string air =
      "  - {void: true, name: air, box: {lower: [0.02, 0.03], upper: [0.08, 1]},\n"  // 6
      "     surface: {type: convective, h: 50, ambient: 300}}\n";                // 7
  const ResolvedBody thin = resolve(plate(
      air + "  - {material: steel, box: {lower: [0.0501, 0.03], upper: [0.0524, 0.05]}}\n",  // 8
      "", "{method: steady}"));
  const CaseError* w = find(thin.warnings, "regions[2].box");
  ASSERT_NE(w, nullptr) << format_errors(thin.warnings);
  EXPECT_EQ(w->line, 8);
  EXPECT_NE(w->message.find("paints steel inside the void regions[1] (air, line 6) but holds no "
                            "node (0.0023 m thick between node planes 0.0025 m apart)"),
            std::string::npos)
      << w->message;
  const ResolvedBody taking = resolve(plate(
      air + "  - {material: steel, box: {lower: [0.0490, 0.03], upper: [0.0513, 0.05]}}\n", "",
      "{method: steady}"));
  EXPECT_EQ(find(taking.warnings, "regions[2].box"), nullptr) << format_errors(taking.warnings);
}

}  // namespace
}  // namespace heatsim::io
