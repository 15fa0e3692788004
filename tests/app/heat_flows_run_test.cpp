// Heat-flow reports and output fields through the heatsim executable: heat_flows.csv has a row
// at every output with its units in the header and balances to rounding; a run interrupted
// (by a crash after a checkpoint, or by a signal) and restarted gives the file of the run that
// was never interrupted, byte for byte, for explicit and bdf2 steps; a steady state has one
// row. output.fields adds heat_flux and conductivity to the output files and the index.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/field_file.hpp"
#include "io/material_output.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::lines;
using heatsim_tests::read_text;
const auto heatsim = heatsim_tests::run_heatsim;

std::vector<double> numbers(const std::string& line) {
  std::vector<double> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(std::stod(cell));
  return out;
}

// Steel with a slot whose walls lose heat to air, a heater on a table schedule, a convective
// face; `time` the time section's body; `faces` more lines of the boundary section.
std::string slot_case(const fs::path& out, const std::string& time, int output_every,
                      int checkpoint_every, int n = 33, const std::string& faces = "") {
  return "grid: {dims: 2, n: [" + std::to_string(n) + ", " + std::to_string((n * 2) / 3) +
         "], length: [0.032, 0.02]}\n"
         "materials:\n"
         "  steel: {conductivity: 45, density: 7800, specific_heat: 470}\n"
         "regions:\n"
         "  - {material: steel}\n"
         "  - {void: true, name: slot, box: {lower: [0.0151, 0.0043], upper: [0.0203, 0.0157]},\n"
         "     surface: {type: convective, h: 60, ambient: 293}}\n"
         "sources:\n"
         "  - {ball: {center: [0.008, 0.01], radius: 0.003}, power: 2000.0,\n"
         "     schedule: [[0, 0], [0.5, 1], [2, 1], [2.5, 0]]}\n"
         "boundary:\n"
         "  all: {type: neumann, flux: 0}\n"
         "  y+: {type: convective, h: 100, ambient: 290}\n" +
         faces +
         "initial: {type: constant, value: 290}\n"
         "time: {" +
         time +
         "}\n"
         "backend: cpu\n"
         "output: {directory: " +
         out.string() + ", every: " + std::to_string(output_every) +
         ", heat_flows: true}\n"
         "checkpoint: {every: " +
         std::to_string(checkpoint_every) + "}\n";
}

class HeatFlowsRun : public heatsim_tests::ScratchTest {
 protected:
  fs::path write_case(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
};

// `validate` lists each source field's power at factor 1 and, where its factor is not 1 (a
// schedule), its power at t = 0 as well; the slot's convective surface, its h A and the
// ambient's side of its exchange, h A ambient(t), at t = 0.
TEST_F(HeatFlowsRun, ValidateGivesEachSourceFieldsPowerAtTheStart) {
  const heatsim_tests::ProcessResult r =
      heatsim("validate " +
              write_case("v.yaml", slot_case(dir_ / "out", "dt: auto, steps: 10", 5, 0)).string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("field 0: 2000 W/m (per metre of depth) at factor 1, schedule table of "
                          "4 points: 0 W/m (per metre of depth) at t = 0"),
            std::string::npos)
      << r.output;
  const std::regex surface(
      R"(field 1 \(void surfaces\): convection h A ([0-9.e+-]+) W/\(m K\) \(per metre of depth\) toward the ambient, 293 K: .* \(h A T_ambient is ([0-9.e+-]+) W/m)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, surface)) << r.output;
  const double per_kelvin = std::stod(m[1].str()), at_start = std::stod(m[2].str());
  // h times the slot's perimeter, 2 (0.0052 + 0.0114) m, to the geometry's sampling.
  EXPECT_NEAR(per_kelvin, 60.0 * 0.0332, 0.02 * 60.0 * 0.0332);
  EXPECT_NEAR(at_start, 293.0 * per_kelvin, 1e-5 * at_start);
}

// The materials file's source density is the case's sources alone: the slot's convective
// surface (h ambient A / V, a source field of the step's) is no source of the user's.
TEST_F(HeatFlowsRun, TheMaterialsFilesSourceDensityHoldsTheSourcesAlone) {
  const fs::path out = dir_ / "m";
  const fs::path c = write_case("m.yaml", slot_case(out, "dt: auto, steps: 2", 1, 0));
  ASSERT_EQ(heatsim("run -q " + c.string()).code, 0);
  const heatsim::io::MaterialFile m =
      heatsim::io::read_material_file((out / heatsim::io::kMaterialFileName).string());
  const int nx = 33, ny = 22;
  ASSERT_EQ(m.source_density.size(), static_cast<std::size_t>(nx * ny));
  int in_ball = 0;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      const double q = m.source_density[static_cast<std::size_t>(y * nx + x)];
      const double dx = x * 0.032 / (nx - 1) - 0.008, dy = y * 0.02 / (ny - 1) - 0.01;
      if (std::sqrt(dx * dx + dy * dy) > 0.003 + 0.0015)  // beyond the ball and its cells
        EXPECT_EQ(q, 0.0) << "node " << x << ", " << y;
      else
        in_ball += q > 0.0;
    }
  EXPECT_GT(in_ball, 20);
}

TEST_F(HeatFlowsRun, RowsAtEveryOutputWithTheirUnitsBalanceToRounding) {
  const fs::path out = dir_ / "out";
  const heatsim_tests::ProcessResult r = heatsim(
      "run " + write_case("a.yaml", slot_case(out, "dt: auto, steps: 130", 20, 0)).string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("heat flows into the body over the last step, to t = "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("heat flows: " + (out / "heat_flows.csv").string()), std::string::npos);
  const std::vector<std::string> rows = lines(read_text(out / "heat_flows.csv"));
  ASSERT_EQ(rows.size(), 9u);  // the header; steps 0, 20, ..., 120 and the last, 130
  EXPECT_EQ(
      rows[0],
      "step,time,face x- (insulated) [W/m],face x+ (insulated) [W/m],face y- (insulated) [W/m],"
      "face y+ (convective) [W/m],void regions[1] (slot) [W/m],sources[0] [W/m],"
      "storage [W/m],imbalance [W/m]");
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::vector<double> v = numbers(rows[k]);
    ASSERT_EQ(v.size(), 10u) << rows[k];
    EXPECT_EQ(v[0], k < 8 ? 20.0 * static_cast<double>(k - 1) : 130.0);
    double largest = 0.0, sum = 0.0;
    for (std::size_t c = 2; c < 8; ++c) {
      largest = std::max(largest, std::abs(v[c]));
      sum += v[c];
    }
    EXPECT_EQ(v[9], sum - v[8]) << rows[k];
    EXPECT_LT(std::abs(v[9]), 1e-10 * largest) << rows[k];
  }
}

// Also with x- a Dirichlet face on a table: its reaction holds its nodes' stored heat's rate,
// from the step before (two for bdf2), which the restart takes from the checkpoint.
TEST_F(HeatFlowsRun, RestartAfterACrashGivesTheUninterruptedFile) {
  const std::string dirichlet = "  x-: {type: dirichlet, value: [[0, 290], [1, 300], [3, 295]]}\n";
  const std::string explicit_steps = "dt: auto, steps: 150",
                    bdf2_steps = "method: bdf2, dt: 0.05, steps: 40";
  for (const auto& [time, faces] :
       std::vector<std::pair<std::string, std::string>>{{explicit_steps, ""},
                                                        {bdf2_steps, ""},
                                                        {explicit_steps, dirichlet},
                                                        {bdf2_steps, dirichlet}}) {
    SCOPED_TRACE(time + (faces.empty() ? "" : ", x- dirichlet"));
    const bool bdf2 = time.find("bdf2") != std::string::npos;
    const int every = bdf2 ? 6 : 20, checkpoints = bdf2 ? 13 : 45;
    const fs::path whole = dir_ / "whole", out = dir_ / "out";
    fs::remove_all(whole);
    fs::remove_all(out);
    ASSERT_EQ(
        heatsim(
            "run -q " +
            write_case("a.yaml", slot_case(whole, time, every, checkpoints, 33, faces)).string())
            .code,
        0);
    // The same run, then a crash after a checkpoint: rows past it and half a row at the end.
    // Restarting from the checkpoint (between two outputs) must give the same file (the run
    // finished, so its files after the checkpoint go only with --overwrite).
    const fs::path c = write_case("b.yaml", slot_case(out, time, every, checkpoints, 33, faces));
    ASSERT_EQ(heatsim("run -q " + c.string()).code, 0);
    std::ofstream(out / "heat_flows.csv", std::ios::app) << "157,3.1,290.5";
    for (const char* at : {bdf2 ? "checkpoint_00000013.h5" : "checkpoint_00000045.h5",
                           bdf2 ? "checkpoint_00000026.h5" : "checkpoint_00000090.h5"}) {
      const heatsim_tests::ProcessResult r =
          heatsim("run -q " + c.string() + " --restart " + (out / at).string() + " --overwrite");
      ASSERT_EQ(r.code, 0) << r.output;
      EXPECT_EQ(read_text(out / "heat_flows.csv"), read_text(whole / "heat_flows.csv")) << at;
    }
  }
}

// A restart into a directory of its own (-o) from a checkpoint at an output step: its file
// holds the uninterrupted run's rows after the restart step, bit for bit, and no row at the
// restart step itself (a bdf2 row there would need the field of two steps before, which the
// checkpoint does not hold: it came out 0.18 W/m off the balance).
TEST_F(HeatFlowsRun, RestartIntoANewDirectoryWritesTheUninterruptedRows) {
  for (const std::string time : {"dt: auto, steps: 150", "method: bdf2, dt: 0.05, steps: 40"}) {
    SCOPED_TRACE(time);
    const bool bdf2 = time.find("bdf2") != std::string::npos;
    const int every = bdf2 ? 4 : 20, checkpoints = bdf2 ? 8 : 40;
    const fs::path whole = dir_ / "whole", moved = dir_ / "moved";
    fs::remove_all(whole);
    fs::remove_all(moved);
    const fs::path c = write_case("a.yaml", slot_case(whole, time, every, checkpoints));
    ASSERT_EQ(heatsim("run -q " + c.string()).code, 0);
    const std::string at = bdf2 ? "checkpoint_00000016.h5" : "checkpoint_00000080.h5";
    const heatsim_tests::ProcessResult r = heatsim("run -q " + c.string() + " --restart " +
                                                   (whole / at).string() + " -o " + moved.string());
    ASSERT_EQ(r.code, 0) << r.output;
    const std::vector<std::string> all = lines(read_text(whole / "heat_flows.csv"));
    const std::vector<std::string> after = lines(read_text(moved / "heat_flows.csv"));
    const long restart_step = bdf2 ? 16 : 80;
    std::vector<std::string> expected{all.at(0)};  // the header
    for (std::size_t i = 1; i < all.size(); ++i)
      if (std::stol(all[i].substr(0, all[i].find(','))) > restart_step) expected.push_back(all[i]);
    ASSERT_GT(expected.size(), 2u);
    EXPECT_EQ(after, expected);
  }
}

TEST_F(HeatFlowsRun, RestartFromASignalsCheckpointGivesTheUninterruptedFile) {
  // Long enough that SIGINT lands mid-run, mostly between two rows, where none is written.
  const std::string time = "dt: auto, steps: 20000";
  const fs::path whole = dir_ / "whole", out = dir_ / "out";
  ASSERT_EQ(
      heatsim("run -q " + write_case("a.yaml", slot_case(whole, time, 1000, 300, 65)).string())
          .code,
      0);
  const fs::path c = write_case("b.yaml", slot_case(out, time, 1000, 300, 65));
  const heatsim_tests::StoppedRun stopped =
      heatsim_tests::stop_run_when(c.string(), out, out / "checkpoint_00000300.h5");
  if (stopped.code == 0) GTEST_SKIP() << "the run finished before the signal arrived";
  ASSERT_EQ(stopped.code, 130);
  const fs::path newest = stopped.newest;
  ASSERT_FALSE(newest.empty());
  const heatsim_tests::ProcessResult r =
      heatsim("run -q " + c.string() + " --restart " + newest.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_text(out / "heat_flows.csv"), read_text(whole / "heat_flows.csv"))
      << "restarted from " << newest;
}

// An aluminium sink heated slowly near 298 K at small explicit steps: in fp32 a step's change
// (about 2.7e-5 K) is near the spacing of floats there (3.05e-5 K), so the field lags the heat
// put in and the last step's balance is off by about a tenth of its largest flow. The run warns
// and says to run in fp64; the same case in fp64 balances to rounding and does not warn.
TEST_F(HeatFlowsRun, AnFp32RunWhoseBalanceIsOffByRoundingWarns) {
  const std::string text =
      "grid: {dims: 2, n: [101, 61], length: [0.05, 0.03]}\n"
      "materials:\n"
      "  aluminium: {conductivity: 200, density: 2700, specific_heat: 900}\n"
      "regions:\n"
      "  - {material: aluminium}\n"
      "sources:\n"
      "  - {box: {lower: [0.02, 0], upper: [0.03, 0.001]}, power: 50}\n"
      "boundary:\n"
      "  all: {type: convective, h: 25, ambient: 298.15}\n"
      "  y-: {type: insulated}\n"
      "initial: {type: constant, value: 298.15}\n"
      "time: {dt: auto, end: 10}\n"
      "backend: cpu\n"
      "output: {directory: " +
      (dir_ / "out").string() + ", every: 100000, heat_flows: true}\n";
  const fs::path c = write_case("sink.yaml", text);
  const heatsim_tests::ProcessResult f32 = heatsim("run " + c.string() + " --precision fp32");
  ASSERT_EQ(f32.code, 0) << f32.output;
  EXPECT_NE(f32.output.find("warning: the last step's heat balance is off by"), std::string::npos)
      << f32.output;
  EXPECT_NE(f32.output.find("run it in fp64 (precision: fp64)"), std::string::npos) << f32.output;
  const heatsim_tests::ProcessResult f64 = heatsim("run " + c.string() + " --overwrite");
  ASSERT_EQ(f64.code, 0) << f64.output;
  EXPECT_EQ(f64.output.find("heat balance is off"), std::string::npos) << f64.output;
  EXPECT_NE(f64.output.find("imbalance:"), std::string::npos) << f64.output;
}

// A steady state with no load (a wall cut by a void into two pieces, each held at its own
// temperature: a Dirichlet face on one, a convective face on the other) has only rounding for
// flows: the imbalance line says they are below what the field resolves, and the run does not
// warn that the balance is off "by 1.9 of its largest flow" (it did, of flows of 5e-12 W/m);
// nor does the same wall stepped by backward Euler until it settles (it warned "off by 1" of
// a convective face's 1.2e-6 W/m, the tail the step's solve no longer resolves). With a load
// through the wall (no void) the report compares the imbalance with the flows.
TEST_F(HeatFlowsRun, ASteadyStateWithNoLoadSaysItsFlowsAreRoundingAndDoesNotWarn) {
  const auto wall = [&](const std::string& name, const std::string& void_line,
                        const std::string& time = "{method: steady}") {
    return write_case(name,
                      "grid: {dims: 2, n: [101, 41], length: [0.1, 0.04]}\n"
                      "materials: {brick: {conductivity: 0.8, density: 1900, specific_heat: "
                      "840}}\n"
                      "regions:\n"
                      "  - {material: brick}\n" +
                          void_line +
                          "initial: {type: constant, value: 320}\n"
                          "boundary:\n"
                          "  x-: {type: dirichlet, value: 350}\n"
                          "  x+: {type: convective, h: 10, ambient: 300}\n"
                          "  all: {type: insulated}\n"
                          "time: " +
                          time +
                          "\n"
                          "backend: cpu\n"
                          "output: {directory: " +
                          (dir_ / "out").string() + ", every: 100000, heat_flows: true}\n");
  };
  const std::string gap =
      "  - {void: true, where: \"abs(x - 0.05) < 0.0033\", name: gap, surface: {type: "
      "insulated}}\n";
  const heatsim_tests::ProcessResult cut = heatsim("run " + wall("cut.yaml", gap).string());
  ASSERT_EQ(cut.code, 0) << cut.output;
  EXPECT_NE(cut.output.find("every rate is within what the field resolves"), std::string::npos)
      << cut.output;
  EXPECT_EQ(cut.output.find("heat balance is off"), std::string::npos) << cut.output;
  const heatsim_tests::ProcessResult settled = heatsim(
      "run " + wall("settled.yaml", gap, "{method: backward-euler, dt: 10, end: 200000}").string() +
      " --overwrite");
  ASSERT_EQ(settled.code, 0) << settled.output;
  EXPECT_NE(settled.output.find("over the last step"), std::string::npos) << settled.output;
  EXPECT_NE(settled.output.find("every rate is within what the field resolves"), std::string::npos)
      << settled.output;
  EXPECT_EQ(settled.output.find("heat balance is off"), std::string::npos) << settled.output;
  const heatsim_tests::ProcessResult whole =
      heatsim("run " + wall("whole.yaml", "").string() + " --overwrite");
  ASSERT_EQ(whole.code, 0) << whole.output;
  EXPECT_EQ(whole.output.find("within what the field resolves"), std::string::npos) << whole.output;
  EXPECT_NE(whole.output.find("of the largest flow)"), std::string::npos) << whole.output;
  EXPECT_EQ(whole.output.find("heat balance is off"), std::string::npos) << whole.output;
}

TEST_F(HeatFlowsRun, ASteadyStateHasOneRowThatBalances) {
  const fs::path out = dir_ / "out";
  const heatsim_tests::ProcessResult r = heatsim(
      "run " +
      write_case("a.yaml", slot_case(out, "method: steady, tolerance: 1e-12", 0, 0)).string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("heat flows into the body at the steady state"), std::string::npos);
  const std::vector<std::string> rows = lines(read_text(out / "heat_flows.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].rfind("state,face x- (insulated) [W/m],", 0), 0u) << rows[0];
  ASSERT_EQ(rows[1].rfind("steady,", 0), 0u) << rows[1];
  const std::vector<double> v = numbers(rows[1].substr(7));
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[5], 0.0);  // the source's schedule at t = 0
  EXPECT_EQ(v[6], 0.0);  // nothing stored
}

// The shorthand without materials (physics.alpha), steady: the summary prints the heat flows
// as a case with materials does, in the shorthand's units (k = alpha, rho c_p = 1). A bar of
// length 1 between u = 10 and u = 0 with alpha = 2 passes alpha * 10 / 1 = 20 from x- to x+.
TEST_F(HeatFlowsRun, ASteadyStateWithoutMaterialsPrintsItsFlowsInTheShorthandsUnits) {
  const fs::path out = dir_ / "out";
  const heatsim_tests::ProcessResult r =
      heatsim("run " + write_case("a.yaml",
                                  "grid: {dims: 1, n: [11], length: [1.0]}\n"
                                  "physics: {alpha: 2}\n"
                                  "boundary:\n"
                                  "  x-: {type: dirichlet, value: 10}\n"
                                  "  x+: {type: dirichlet, value: 0}\n"
                                  "initial: {type: constant, value: 0}\n"
                                  "time: {method: steady, tolerance: 1e-12}\n"
                                  "output: {directory: " +
                                      out.string() + ", heat_flows: true}\n")
                           .string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::size_t at = r.output.find(
      "heat flows into the body at the steady state (u times length per unit time, per unit of "
      "cross-section: k = physics.alpha, rho c_p = 1):");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::smatch m;
  const std::string block = r.output.substr(at);
  ASSERT_TRUE(std::regex_search(
      block, m, std::regex("face x- \\(dirichlet\\): (\\S+)\n  face x\\+ \\(dirichlet\\): (\\S+)")))
      << block;
  EXPECT_NEAR(std::stod(m[1]), 20.0, 1e-8);
  EXPECT_NEAR(std::stod(m[2]), -20.0, 1e-8);
  // heat_flows.csv's header says the same: not watts.
  const std::string csv = read_text(out / "heat_flows.csv");
  EXPECT_EQ(csv.rfind("state,face x- (dirichlet) [u*L/t],face x+ (dirichlet) [u*L/t],"
                      "storage [u*L/t],imbalance [u*L/t]\n",
                      0),
            0u)
      << csv;
}

// A 1D bar between two Dirichlet faces, steady: the linear profile's flux at every node, and
// the material's conductivity, in every output file, listed by the index (heat_flux as a
// Vector, the materials file's conductivity left out for the step's own).
TEST_F(HeatFlowsRun, OutputFieldsHoldTheHeatFluxAndTheConductivity) {
  const fs::path out = dir_ / "out";
  const std::string text =
      "grid: {dims: 1, n: [21], length: [0.4]}\n"
      "materials:\n"
      "  steel: {conductivity: 45, density: 7800, specific_heat: 470}\n"
      "regions: [{material: steel}]\n"
      "boundary:\n"
      "  x-: {type: dirichlet, value: 350}\n"
      "  x+: {type: dirichlet, value: 300}\n"
      "initial: {type: constant, value: 300}\n"
      "time: {method: steady, tolerance: 1e-13}\n"
      "output: {directory: " +
      out.string() + ", fields: [temperature, heat_flux, conductivity]}\n";
  const heatsim_tests::ProcessResult r = heatsim("run " + write_case("bar.yaml", text).string());
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path file = out / "field_00000000.h5";
  const heatsim::io::Dataset q = heatsim::io::read_dataset(file.string(), "heat_flux", true);
  EXPECT_EQ(q.dims, (std::vector<std::int64_t>{21, 3}));
  for (int i = 0; i < 21; ++i) {
    EXPECT_NEAR(q.values[3 * i], -45.0 * (300.0 - 350.0) / 0.4, 1e-8) << "node " << i;
    EXPECT_EQ(q.values[3 * i + 1], 0.0);
    EXPECT_EQ(q.values[3 * i + 2], 0.0);
  }
  const heatsim::io::Dataset k = heatsim::io::read_dataset(file.string(), "conductivity", true);
  EXPECT_EQ(k.dims, (std::vector<std::int64_t>{21}));
  EXPECT_EQ(k.values.front(), 45.0);
  const std::string xmf = read_text(out / "field.xmf");
  EXPECT_NE(xmf.find("<Attribute Name=\"heat_flux\" AttributeType=\"Vector\" Center=\"Node\">\n"
                     "          <DataItem Dimensions=\"1 1 21 3\" NumberType=\"Float\" "
                     "Precision=\"8\" Format=\"HDF\">field_00000000.h5:/heat_flux</DataItem>"),
            std::string::npos)
      << xmf;
  EXPECT_NE(xmf.find("field_00000000.h5:/conductivity"), std::string::npos) << xmf;
  EXPECT_EQ(xmf.find("materials.h5:/conductivity"), std::string::npos) << xmf;
  EXPECT_NE(xmf.find("materials.h5:/capacity"), std::string::npos) << xmf;
  // The field itself is still readable as before.
  EXPECT_EQ(heatsim::io::read_field_file(file.string()).field.size(), 21u);
}

// A case the body's checks refuse (a steady piece the voids cut off, determined by nothing)
// runs nothing and writes nothing; validate says the same with the key path and line, and
// every warning of a sound case first.
TEST_F(HeatFlowsRun, GeometryErrorsWriteNothing) {
  const fs::path out = dir_ / "out";
  std::string text = slot_case(out, "method: steady", 0, 0);
  const auto replace = [&text](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  };
  // The slot across the plate, insulated; the heater's side held at 290 K, the other side by
  // nothing.
  replace(
      "box: {lower: [0.0151, 0.0043], upper: [0.0203, 0.0157]},\n"
      "     surface: {type: convective, h: 60, ambient: 293}}",
      "box: {lower: [0.015, -1], upper: [0.02, 1]}}");
  replace("y+: {type: convective, h: 100, ambient: 290}", "x-: {type: dirichlet, value: 290}");
  const fs::path c = write_case("cut.yaml", text);
  const heatsim_tests::ProcessResult v = heatsim("validate " + c.string());
  EXPECT_EQ(v.code, 2) << v.output;
  EXPECT_NE(v.output.find("regions[1].box: the voids cut the body into 2 pieces that exchange no "
                          "heat; the piece of "),
            std::string::npos)
      << v.output;
  EXPECT_NE(v.output.find("so its steady temperature is not determined; join it to the rest, or "
                          "give it a condition (line 6)"),
            std::string::npos)
      << v.output;
  const heatsim_tests::ProcessResult r = heatsim("run " + c.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "refused before anything was written";
}

// A steady state whose only cooling is a void's surface: every face insulated, the slot's walls
// take out what the heater puts in.
TEST_F(HeatFlowsRun, ASteadyStateCooledOnlyThroughAVoidRuns) {
  const fs::path out = dir_ / "out";
  std::string text = slot_case(out, "method: steady, tolerance: 1e-12", 0, 0);
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"  y+: {type: convective, h: 100, ambient: 290}\n", ""},
        {",\n     schedule: [[0, 0], [0.5, 1], [2, 1], [2.5, 0]]", ""}}) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  }
  const heatsim_tests::ProcessResult r = heatsim("run " + write_case("a.yaml", text).string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<std::string> rows = lines(read_text(out / "heat_flows.csv"));
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<double> v = numbers(rows[1].substr(7));
  EXPECT_NEAR(v[4], -2000.0, 1e-6) << rows[1];  // the slot's walls
  EXPECT_NEAR(v[5], 2000.0, 1e-9) << rows[1];   // the heater
}

}  // namespace
