// materials.h5's `capacity` is the heat capacity each node holds in the steps, rho c_p of its
// control volume: its material's where one material fills it, and where an interface cuts it,
// the average over it with the part beyond the interface going to the node across it by the
// resistances' share (docs/case-format.md, "Geometry below the grid"). `conductivity` stays
// the node's own material's k. Checked on a two-layer wall whose interface lies a quarter
// spacing before a node, against the rule worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "io/material_output.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::ScratchTest;

using MaterialsFileCapacity = ScratchTest;

TEST_F(MaterialsFileCapacity, IsWhatEachNodeHoldsBesideAnInterface) {
  // 21 nodes over 0.2 m: h = 0.01 m. Brick (k 0.7, rho c_p 1.62e6) up to x = 0.1075, wool
  // (k 0.04, rho c_p 3e4) beyond: the interface a quarter spacing before node 11 (x = 0.11).
  const double h = 0.01, xi = 0.1075;
  const double k_brick = 0.7, k_wool = 0.04, c_brick = 1800.0 * 900.0, c_wool = 30.0 * 1000.0;
  const fs::path out = dir_ / "out";
  const std::string text =
      "grid: {dims: 1, n: [21], length: [0.2]}\n"
      "materials:\n"
      "  brick: {conductivity: 0.7, density: 1800, specific_heat: 900}\n"
      "  wool: {conductivity: 0.04, density: 30, specific_heat: 1000}\n"
      "regions:\n"
      "  - {material: brick}\n"
      "  - {material: wool, box: {lower: [0.1075], upper: [0.2]}}\n"
      "boundary:\n"
      "  x-: {type: dirichlet, value: 300}\n"
      "  x+: {type: convective, h: 8, ambient: 293}\n"
      "initial: {type: constant, value: 293}\n"
      "time: {method: steady}\n"
      "output: {directory: " +
      out.string() + "}\n";
  const auto r = heatsim_tests::run_heatsim("run -q " + write_file("wall.yaml", text));
  ASSERT_EQ(r.code, 0) << r.output;
  const heatsim::io::MaterialFile m =
      heatsim::io::read_material_file((out / heatsim::io::kMaterialFileName).string());
  ASSERT_EQ(m.capacity.size(), 21u);

  // Node 11 (wool, x = 0.11): its control volume [0.105, 0.115] holds brick on [0.105, 0.1075].
  // That part's centre c = 0.10625; the resistance from node 11 to it R_11 = (0.11 - xi) /
  // k_wool + (xi - c) / k_brick, from node 10 (x = 0.1) R_10 = (c - 0.1) / k_brick. Node 10
  // takes R_11 / (R_10 + R_11) of the part's capacity, node 11 keeps the rest.
  const double part = (xi - 0.105) * c_brick, c = 0.5 * (0.105 + xi);
  const double r11 = (0.11 - xi) / k_wool + (xi - c) / k_brick, r10 = (c - 0.1) / k_brick;
  const double to_10 = r11 / (r10 + r11);
  const double expected_10 = (h * c_brick + to_10 * part) / h;
  const double expected_11 = ((0.115 - xi) * c_wool + (1.0 - to_10) * part) / h;
  EXPECT_NEAR(m.capacity[10], expected_10, 1e-9 * expected_10);
  EXPECT_NEAR(m.capacity[11], expected_11, 1e-9 * expected_11);
  // Nodes one material fills hold that material's rho c_p; so do the attributes.
  EXPECT_DOUBLE_EQ(m.capacity[5], c_brick);
  EXPECT_DOUBLE_EQ(m.capacity[15], c_wool);
  ASSERT_EQ(m.material_capacity.size(), 2u);
  EXPECT_DOUBLE_EQ(m.material_capacity[0], c_brick);
  EXPECT_DOUBLE_EQ(m.material_capacity[1], c_wool);
  // The conductivity is the node's own material's.
  EXPECT_DOUBLE_EQ(m.conductivity[10], k_brick);
  EXPECT_DOUBLE_EQ(m.conductivity[11], k_wool);
  // The boundary nodes hold half cells of one material: their material's rho c_p per volume.
  EXPECT_DOUBLE_EQ(m.capacity[0], c_brick);
  EXPECT_DOUBLE_EQ(m.capacity[20], c_wool);
}

}  // namespace
