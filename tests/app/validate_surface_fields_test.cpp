// `validate` lists the source fields a case's void surfaces take. A convective surface's field
// is the ambient's side of its exchange, h A T_ambient, not heat put into the body: validate
// states its h A (from the surface's geometry: h times the void's perimeter in 2D) and says
// so, rather than printing h A T_ambient as a power beside the case's real sources.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using heatsim_tests::ScratchTest;

// A 100 x 50 mm aluminium plate, 100 W/m heated under it, a 20 x 10 mm hole in it whose
// surface (0.06 m of perimeter) convects at h = 25 W/(m^2 K) to `ambient`, the top face at
// h = 10 W/(m^2 K) to 300 K.
std::string plate(const std::string& ambient, const std::string& hole_surface = "") {
  const std::string surface =
      hole_surface.empty() ? "{type: convective, h: 25, ambient: " + ambient + "}" : hole_surface;
  return "grid: {dims: 2, n: [101, 51], length: [0.1, 0.05]}\n"
         "materials:\n"
         "  aluminium: {conductivity: 200, density: 2700, specific_heat: 900}\n"
         "regions:\n"
         "  - {material: aluminium}\n"
         "  - {void: true, name: hole, box: {lower: [0.04, 0.02], upper: [0.06, 0.03]},\n"
         "     surface: " +
         surface +
         "}\n"
         "sources:\n"
         "  - {box: {lower: [0.0, 0.0], upper: [0.1, 0.001]}, power: 100}\n"
         "boundary:\n"
         "  all: {type: insulated}\n"
         "  y+: {type: convective, h: 10, ambient: 300}\n"
         "initial: {type: constant, value: 300}\n"
         "time: {method: steady}\n";
}

// The line of `validate`'s output that begins with `prefix` (after blanks); "" if none.
std::string line_of(const std::string& output, const std::string& prefix) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(' ');
    if (b != std::string::npos && line.compare(b, prefix.size(), prefix) == 0)
      return line.substr(b);
  }
  return "";
}

using ValidateSurfaceFields = ScratchTest;

TEST_F(ValidateSurfaceFields, ConvectiveSurfaceStatesItsConductanceNotAPower) {
  const auto r = heatsim_tests::run_heatsim("validate " + write_file("c.yaml", plate("298.15")));
  ASSERT_EQ(r.code, 0) << r.output;
  // The case's own source: 100 W/m.
  EXPECT_EQ(line_of(r.output, "field 0: "),
            "field 0: 100 W/m (per metre of depth) at factor 1, "
            "constant")
      << r.output;
  const std::string surface = line_of(r.output, "field 1 (void surfaces): ");
  ASSERT_FALSE(surface.empty()) << r.output;
  // h A = 25 W/(m^2 K) x 0.06 m = 1.5 W/(m K), toward the ambient 298.15 K.
  EXPECT_EQ(surface,
            "field 1 (void surfaces): convection h A 1.5 W/(m K) (per metre of depth) toward the "
            "ambient, 298.15 K: they exchange h A (T_ambient - T), not a heat source (h A "
            "T_ambient is 447.225 W/m (per metre of depth) at t = 0)")
      << r.output;
}

TEST_F(ValidateSurfaceFields, HeatFluxSurfaceIsTheHeatItPutsIn) {
  // -500 W/m^2 over 0.06 m: -30 W/m, a real heat rate.
  const auto r = heatsim_tests::run_heatsim(
      "validate " + write_file("f.yaml", plate("", "{type: neumann, heat_flux: -500}")));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(line_of(r.output, "field 1 (void surfaces): "),
            "field 1 (void surfaces): -30 W/m (per metre of depth) at factor 1, constant")
      << r.output;
}

// A convective void that reaches convective outer faces: where it covers part of a boundary
// node's face, the face's rule (which acts on the whole face) is corrected in the void's field,
// so the field's h A is the void's less that part; the line tells the two apart. A 10 x 10 mm
// plate (11 x 11 nodes), a void 4 mm wide from y = 5 mm to the y+ face (x from 3 to 7 mm: 4 + 5
// + 5 mm of surface facing the body, 14 mm), every face and the void at h = 100 to 300 K: the
// void's 100 x 0.014 = 1.4 W/(m K), less the halves of the y+ faces of the body nodes at x = 3
// and 7 mm that the void covers (2 x 0.5 mm, 0.1).
TEST_F(ValidateSurfaceFields, AVoidReachingConvectiveFacesSaysWhatTheFacesTakeOff) {
  const std::string text =
      "grid: {dims: 2, n: [11, 11], length: [0.01, 0.01]}\n"
      "materials:\n  al: {conductivity: 200, density: 2700, specific_heat: 900}\n"
      "regions:\n  - {material: al}\n"
      "  - {void: true, name: slot, box: {lower: [0.003, 0.005], upper: [0.007, 0.01]},\n"
      "     surface: {type: convective, h: 100, ambient: 300}}\n"
      "sources: [{box: {lower: [0, 0], upper: [0.01, 0.001]}, power: 10}]\n"
      "boundary:\n  all: {type: convective, h: 100, ambient: 300}\n"
      "initial: {type: constant, value: 300}\ntime: {method: steady}\n";
  const auto r = heatsim_tests::run_heatsim("validate " + write_file("s.yaml", text));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string surface = line_of(r.output, "field 1 (void surfaces): ");
  EXPECT_NE(surface.find("convection h A 1.3 W/(m K) (per metre of depth) (the void surfaces' "
                         "1.4, less 0.1 taken off the outer faces' condition where a void covers "
                         "part of a boundary node's face)"),
            std::string::npos)
      << r.output;
}

// A body that voids keep from every face that would fix its temperature: one piece, not
// determined in a steady state; validate refuses it at the void, as it does where there are two.
TEST_F(ValidateSurfaceFields, ABodyInsideAnInsulatedVoidIsRefusedInASteadyState) {
  const std::string text =
      "grid: {dims: 3, n: [11, 11, 11], length: 0.01}\n"
      "materials:\n  al: {conductivity: 205, density: 2700, specific_heat: 900}\n"
      "regions:\n  - {void: true, box: {lower: [0, 0, 0], upper: [0.01, 0.01, 0.01]}}\n"
      "  - {material: al, box: {lower: [0.003, 0.003, 0.003], upper: [0.007, 0.007, 0.007]}}\n"
      "sources:\n  - {box: {lower: [0.004, 0.004, 0.004], upper: [0.006, 0.006, 0.006]}, "
      "power: 1}\n"
      "boundary:\n  all: {type: convective, h: 25, ambient: 300}\n"
      "initial: {type: constant, value: 300}\ntime: {method: steady}\n";
  const auto r = heatsim_tests::run_heatsim("validate " + write_file("f.yaml", text));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("regions[0].box: the body (125 nodes, beside regions[0]) touches no "
                          "Dirichlet, convective or radiating face"),
            std::string::npos)
      << r.output;
  // A transient of it is fine (its heat stays in it).
  std::string transient = text;
  transient.replace(transient.find("{method: steady}"), 16, "{steps: 5}");
  EXPECT_EQ(heatsim_tests::run_heatsim("validate " + write_file("t.yaml", transient)).code, 0);
}

}  // namespace
