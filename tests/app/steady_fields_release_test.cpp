// A linear steady solve on the CPU may let the case's coefficient fields go before its levels
// are built and lay the body on the grid again after the solve (solver::steady_releases_fields:
// where they are large and the machine's memory short). Both paths, chosen by
// HEATSIM_RELEASE_FIELDS, give the same files bit for bit (the field, the heat flux and
// conductivity outputs, materials.h5 and heat_flows.csv) and the same summary, and the log says
// which one ran.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "io/field_file.hpp"
#include "io/material_output.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::read_text;
using heatsim_tests::ScratchTest;

using SteadyFieldsRelease = ScratchTest;

TEST_F(SteadyFieldsRelease, LaidAgainAfterTheSolveTheyGiveTheKeptFieldsFiles) {
  // A copper block with a source in epoxy, between node planes, a held face and convective
  // ones, on a grid of odd sizes.
  const std::string text =
      "grid: {dims: 3, n: [25, 21, 19], length: [0.05, 0.04, 0.036]}\n"
      "materials:\n"
      "  copper: {conductivity: 390, density: 8960, specific_heat: 385}\n"
      "  epoxy: {conductivity: 0.2, density: 1200, specific_heat: 1100}\n"
      "regions:\n"
      "  - {material: epoxy}\n"
      "  - {material: copper, box: {lower: [0.0113, 0.0091, 0.0077], upper: [0.0337, 0.0289, "
      "0.0251]}}\n"
      "sources:\n"
      "  - {box: {lower: [0.02, 0.015, 0.012], upper: [0.03, 0.025, 0.02]}, power: 3.0}\n"
      "boundary:\n"
      "  all: {type: convective, h: 25, ambient: 300}\n"
      "  x-: {type: dirichlet, value: 310}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady}\n"
      "output: {heat_flows: true, fields: [temperature, heat_flux, conductivity]}\n";
  const std::string path = write_file("block.yaml", text);
  const fs::path kept = dir_ / "kept", released = dir_ / "released";
  const auto k = heatsim_tests::run_heatsim_with("HEATSIM_RELEASE_FIELDS=0",
                                                 "run -v " + path + " -o " + kept.string());
  ASSERT_EQ(k.code, 0) << k.output;
  const auto r = heatsim_tests::run_heatsim_with("HEATSIM_RELEASE_FIELDS=1",
                                                 "run -v " + path + " -o " + released.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("set-up: the levels released, the coefficient fields laid again"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(k.output.find("the coefficient fields laid again"), std::string::npos) << k.output;
  EXPECT_NE(k.output.find("set-up: the levels released "), std::string::npos) << k.output;

  const std::string field = "field_00000000.h5";
  for (const char* name : {"u", "heat_flux", "conductivity"}) {
    const heatsim::io::Dataset a = heatsim::io::read_dataset((kept / field).string(), name, true);
    const heatsim::io::Dataset b =
        heatsim::io::read_dataset((released / field).string(), name, true);
    EXPECT_EQ(a.dims, b.dims) << name;
    EXPECT_EQ(a.values, b.values) << name;
    EXPECT_FALSE(a.values.empty()) << name;
  }
  const auto ma = heatsim::io::read_material_file((kept / heatsim::io::kMaterialFileName).string());
  const auto mb =
      heatsim::io::read_material_file((released / heatsim::io::kMaterialFileName).string());
  EXPECT_EQ(ma.material, mb.material);
  EXPECT_EQ(ma.conductivity, mb.conductivity);
  EXPECT_EQ(ma.capacity, mb.capacity);
  EXPECT_EQ(ma.source_density, mb.source_density);
  EXPECT_EQ(read_text(kept / "heat_flows.csv"), read_text(released / "heat_flows.csv"));
  // The summary's heat flows and final field, which are read from the fields laid again.
  const auto summary = [](const std::string& out) {
    const auto at = out.find("final field:");
    return at == std::string::npos ? std::string() : out.substr(at);
  };
  std::string sk = summary(k.output), sr = summary(r.output);
  ASSERT_FALSE(sk.empty()) << k.output;
  // The output paths differ by the directory's name alone.
  for (std::string* s : {&sk, &sr})
    for (const std::string& dir : {kept.string(), released.string()})
      for (auto at = s->find(dir); at != std::string::npos; at = s->find(dir))
        s->replace(at, dir.size(), "OUT");
  EXPECT_EQ(sk, sr);
}

}  // namespace
