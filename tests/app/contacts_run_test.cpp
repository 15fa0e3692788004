// Contact resistances through the heatsim executable: inputs/composite_wall_contact.yaml (a die
// soldered to a copper spreader greased onto an aluminium heat sink) run steady gives the
// closed form's temperatures at its probes, its heat flux through every node and a balanced
// heat_flows.csv; run explicitly with dt: auto, every row of heat_flows.csv balances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::lines;
using heatsim_tests::read_text;

// The numbers of a CSV row after its first `skip` cells.
std::vector<double> numbers(const std::string& line, int skip) {
  std::vector<double> out;
  std::istringstream in(line);
  int cell = 0;
  for (std::string s; std::getline(in, s, ','); ++cell)
    if (cell >= skip) out.push_back(std::stod(s));
  return out;
}

// The example case with its time section replaced by `time` and its output into `out`.
std::string example(const fs::path& out, const std::string& time) {
  std::string text = read_text(fs::path(HEATSIM_SOURCE_DIR) / "inputs/composite_wall_contact.yaml");
  const std::size_t t = text.find("time:\n  method: steady\n");
  const std::size_t o = text.find("output:\n");
  EXPECT_NE(t, std::string::npos);
  EXPECT_NE(o, std::string::npos);
  text.replace(o, std::string::npos,
               "output: {directory: " + out.string() +
                   ", every: 200, heat_flows: true, fields: [temperature, heat_flux]}\n");
  text.replace(t, std::string("time:\n  method: steady\n").size(), "time: " + time + "\n");
  return text;
}

class ContactsRun : public heatsim_tests::ScratchTest {};

TEST_F(ContactsRun, ExampleStackMatchesTheClosedForm) {
  const fs::path out = dir_ / "out";
  const heatsim_tests::ProcessResult r = heatsim_tests::run_heatsim(
      "run " + write_file("stack.yaml", example(out, "{method: steady, tolerance: 1e-13}")));
  ASSERT_EQ(r.code, 0) << r.output;
  const double q = 1e6;
  // Coolant, aluminium, grease, copper, solder, silicon: the series resistances.
  const double sink = 300.0 + q / 5000.0;
  const double spreader = sink + q * (0.005 / 237.0 + 1.0 / 2.0e4);
  const double die_back = spreader + q * (0.003 / 401.0 + 1.0e-5);
  const double die_face = die_back + q * 0.0005 / 148.0;
  const std::vector<std::string> probes = lines(read_text(out / "probes.csv"));
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(probes[0], "state,die_face,die_back,spreader_bottom,sink_bottom");
  const std::vector<double> v = numbers(probes[1], 1);
  ASSERT_EQ(v.size(), 4u);
  const double exact[4] = {die_face, die_back, spreader, sink};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(v[k], exact[k], 1e-9 * (die_face - 300.0)) << k;

  const std::vector<std::string> flows = lines(read_text(out / "heat_flows.csv"));
  ASSERT_EQ(flows.size(), 2u);
  const std::vector<double> f = numbers(flows[1], 1);
  ASSERT_GE(f.size(), 2u);
  EXPECT_NEAR(f[0], q, 1e-9 * q) << flows[0];
  EXPECT_NEAR(f[1], -q, 1e-9 * q) << flows[0];
  EXPECT_LT(std::abs(f.back()), 1e-9 * q) << "imbalance";

  // The heat flux at every node (the faces either side, the contacts' included): q.
  const heatsim::io::Dataset flux =
      heatsim::io::read_dataset((out / "field_00000000.h5").string(), "heat_flux", true);
  ASSERT_EQ(flux.values.size(), 86u * 3u);
  for (int i = 0; i < 86; ++i) EXPECT_NEAR(flux.values[3 * i], q, 1e-8 * q) << "node " << i;
}

TEST_F(ContactsRun, ExplicitRowsBalance) {
  const fs::path out = dir_ / "out";
  const heatsim_tests::ProcessResult r = heatsim_tests::run_heatsim(
      "run " + write_file("stack.yaml", example(out, "{dt: auto, end: 0.05}")));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<std::string> rows = lines(read_text(out / "heat_flows.csv"));
  ASSERT_GE(rows.size(), 4u);
  EXPECT_NE(rows[0].find("imbalance"), std::string::npos) << rows[0];
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::vector<double> v = numbers(rows[k], 2);  // step, time
    ASSERT_EQ(v.size(), 4u) << rows[k];
    double largest = 0.0;
    for (std::size_t j = 0; j + 1 < v.size(); ++j) largest = std::max(largest, std::abs(v[j]));
    EXPECT_LT(std::abs(v.back()), 1e-10 * largest) << rows[k];
  }
}

}  // namespace
