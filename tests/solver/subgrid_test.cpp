// Geometry below the grid (solver/subgrid.hpp): faces' conductances from the series and
// parallel combination of the materials the geometry puts between nodes, capacities and
// sources averaged over control volumes. Checked against closed forms: a layered wall with its
// interfaces anywhere is exact at the nodes in steady state (the series resistance of each
// segment is exact), including interfaces on nodes and between them; a face inside one
// material keeps k; a face an interface cuts in half takes the harmonic mean; a layer parallel
// to a face's cross-section combines in parallel; capacities and a source's share are volume
// fractions; and a copper disc's steady temperature converges at second order.
#include "solver/subgrid.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/node_classes.hpp"
#include "kernels/registry.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim_tests {
namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::solver::Case;
using heatsim::solver::ShapeKind;
using heatsim::solver::ShapeSpec;

// A void region of `shape` whose surface is convective (h to `ambient`).
heatsim::solver::RegionSpec convective_void(const ShapeSpec& shape, double h, double ambient) {
  heatsim::solver::RegionSpec v;
  v.is_void = true;
  v.surface.kind = BoundaryKind::convective;
  v.surface.transfer = h;
  v.surface.value = ambient;
  v.shape = shape;
  return v;
}

// Three layers across x (gypsum 12.5 mm, mineral wool 80 mm, concrete 150 mm), 293.15 K inside,
// h = 25 W/m^2K to 263.15 K outside, n nodes.
Case wall(int n) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {n, 1, 1};
  c.grid.length = {0.2425, 1.0, 1.0};
  c.materials = {material("gypsum", 0.25, 900, 1000), material("wool", 0.035, 30, 840),
                 material("concrete", 1.4, 2300, 880)};
  c.regions = {region("gypsum"), region("wool", box({0.0125, 0, 0}, {0.0925, 0, 0})),
               region("concrete", box({0.0925, 0, 0}, {0.2425, 0, 0}))};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 293.15;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 25.0;
  c.boundary[1].value = 263.15;
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

// The wall's exact steady temperature at x.
double wall_exact(double x) {
  const double k[3] = {0.25, 0.035, 1.4}, edge[4] = {0.0, 0.0125, 0.0925, 0.2425};
  const double R = 0.0125 / k[0] + 0.08 / k[1] + 0.15 / k[2] + 1.0 / 25.0;
  const double q = 30.0 / R;
  double T = 293.15;
  for (int l = 0; l < 3; ++l) {
    const double end = std::min(x, edge[l + 1]);
    if (end > edge[l]) T -= q * (end - edge[l]) / k[l];
  }
  return T;
}

// The steady field of case c on the CPU's multigrid.
std::vector<double> steady_field(const Case& c) {
  namespace mg = heatsim::solver::multigrid;
  auto fields = heatsim::solver::coefficient_fields(c);
  const heatsim::kernels::StencilProblem p = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = c.time.tolerance;
  mg::ImplicitStepper stepper(p, fields, mg::TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  std::vector<double> u(static_cast<std::size_t>(p.points()), 280.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.set_field(u);
  stepper.advance(0);
  stepper.field(u);
  return u;
}

// The heat flows through every void's surface of `c` at `field`, summed (W).
double total_void_flow(const Case& c, const std::vector<double>& field) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, 1.0, fields);
  const auto ids = heatsim::solver::material_ids(c);
  const heatsim::solver::HeatFlowMeter meter(c, p, fields, heatsim::solver::void_surfaces(c, ids));
  double sum = 0.0;
  for (const auto& f : meter.report(field, 0.0).flows)
    if (f.what.rfind("void ", 0) == 0) sum += f.rate;
  return sum;
}

TEST(Subgrid, LayeredWallIsExactAtTheNodesWhereverTheInterfacesLie) {
  // 98 nodes: both interfaces on nodes; 100, 37, 1001: between nodes at arbitrary fractions.
  for (int n : {98, 100, 37, 1001}) {
    const Case c = wall(n);
    ASSERT_TRUE(heatsim::solver::samples_subgrid(c));
    const std::vector<double> u = steady_field(c);
    const double h = 0.2425 / (n - 1);
    double worst = 0.0;
    for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(u[i] - wall_exact(i * h)));
    EXPECT_LT(worst, 1e-9 * 30.0) << "n = " << n;  // of the 30 K across the wall
    // The heat leaving equals the wall's U-value times the difference.
    const double R = 0.0125 / 0.25 + 0.08 / 0.035 + 0.15 / 1.4 + 1.0 / 25.0;
    EXPECT_NEAR(25.0 * (u[n - 1] - 263.15), 30.0 / R, 1e-9 * 30.0 / R) << "n = " << n;
  }
}

// The same wall with its layers given as `where` formulas, not boxes: a face that a formula's
// surface crosses finds the crossing (it lay on the nearest eighth of a spacing, so the
// resistance of each cut face was off by up to a sixteenth of a spacing of the poorer material:
// 0.015 K of the 30 K at 100 nodes, 0.04 K at 37), and the steady temperatures are exact at the
// nodes as they are with boxes.
TEST(Subgrid, LayersGivenAsFormulasAreExactAtTheNodesToo) {
  for (int n : {100, 37, 1001}) {
    Case c = wall(n);
    ShapeSpec wool, concrete;
    wool.kind = concrete.kind = ShapeKind::where;
    wool.where = "x > 0.0125 && x < 0.0925";
    concrete.where = "x >= 0.0925";
    c.regions = {region("gypsum"), region("wool", wool), region("concrete", concrete)};
    ASSERT_TRUE(heatsim::solver::samples_subgrid(c));
    const std::vector<double> u = steady_field(c);
    const double h = 0.2425 / (n - 1);
    double worst = 0.0;
    for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(u[i] - wall_exact(i * h)));
    EXPECT_LT(worst, 1e-9 * 30.0) << "n = " << n;
    const double R = 0.0125 / 0.25 + 0.08 / 0.035 + 0.15 / 1.4 + 1.0 / 25.0;
    EXPECT_NEAR(25.0 * (u[n - 1] - 263.15), 30.0 / R, 1e-9 * 30.0 / R) << "n = " << n;
  }
}

// Thin `where` layers (32 of k = 1 and 1e6 on a line of 64 nodes, each about two spacings
// thick): every face takes the series conductance of the exact lengths, also where a surface
// lies between a node and the sample nearest to it (faces 1, 59 and 61 here took the one
// material's k).
TEST(Subgrid, FormulaLayersCutEveryFaceAtTheirSurfaces) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {64, 1, 1};
  c.grid.length = {1.0, 1.0, 1.0};
  c.materials = {material("lo", 1.0, 1, 1), material("hi", 1e6, 1, 1)};
  ShapeSpec layers;
  layers.kind = ShapeKind::where;
  layers.where = "floor(x * 32) - 2 * floor(x * 16) > 0.5";  // [j, j + 1) / 32 for odd j
  c.regions = {region("lo"), region("hi", layers)};
  for (auto& f : c.boundary) {
    f.kind = BoundaryKind::dirichlet;
    f.value = 1.0;
  }
  auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_FALSE(fields->faces[0].empty());
  const double h = 1.0 / 63;
  for (int i = 0; i < 63; ++i) {
    double hi = 0.0;  // the length of `hi` in [i h, (i + 1) h]
    for (int j = 1; j < 32; j += 2)
      hi += std::max(0.0, std::min((i + 1) * h, (j + 1) / 32.0) - std::max(i * h, j / 32.0));
    const double lo = h - hi < 1e-12 * h ? 0.0 : h - hi;  // a face inside one layer: its k
    const double exact = h / (lo / 1.0 + hi / 1e6);
    EXPECT_NEAR(fields->faces[0][i], exact, 1e-9 * exact) << "face " << i;
  }
}

// A surface on a face of the domain itself (a layer of no thickness: a checkerboard's square
// index floor(8 x) is 8 at x = 1) decides neither the nodes' materials on that face nor the
// links along it: they take the material of the squares beside the face, the same bits as with
// the index held to 0-7.
TEST(Subgrid, ALayerOfNoThicknessOnTheDomainsFaceIsNotSeen) {
  const auto board = [](bool held) {
    const auto index = [&](const char* v) {
      const std::string i = "floor(8 * " + std::string(v) + ")";
      return held ? "min(7, " + i + ")" : i;
    };
    Case c;
    c.grid.dims = 2;
    c.grid.n = {64, 64, 1};
    c.grid.length = {1.0, 1.0, 1.0};
    c.materials = {material("weak", 1.0, 1, 1), material("strong", 2000.0, 1, 1)};
    ShapeSpec where;
    where.kind = ShapeKind::where;
    const std::string cells = "(" + index("x") + " + " + index("y") + ")";
    where.where = cells + " - 2 * floor(" + cells + " / 2) > 0.5";
    c.regions = {region("weak"), region("strong", where)};
    return c;
  };
  const auto plain = heatsim::solver::coefficient_fields(board(false));
  const auto held = heatsim::solver::coefficient_fields(board(true));
  ASSERT_FALSE(plain->faces[0].empty());
  EXPECT_EQ(plain->faces, held->faces);
  EXPECT_EQ(plain->capacity, held->capacity);
  EXPECT_EQ(plain->conductivity, held->conductivity);
  EXPECT_EQ(heatsim::solver::material_ids(board(false)),
            heatsim::solver::material_ids(board(true)));
  // Along the face y = 1 (the last row), between two nodes of one square: that square's k
  // (strong where its index plus 7 is odd), not the other material of the layer on the face.
  const std::int64_t n = 64;
  int checked = 0;
  for (std::int64_t x = 0; x + 1 < n; ++x) {
    const int square = static_cast<int>(std::floor(8.0 * static_cast<double>(x) / 63.0));
    if (square != static_cast<int>(std::floor(8.0 * static_cast<double>(x + 1) / 63.0))) continue;
    const double face = plain->faces[0][static_cast<std::size_t>((n - 1) * n + x)];
    EXPECT_EQ(face, (square + 7) % 2 == 1 ? 2000.0 : 1.0) << "face " << x << " of the last row";
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

TEST(Subgrid, AFaceAnInterfaceCutsTakesTheSeriesConductance) {
  Case c = wall(100);
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  auto fields = heatsim::solver::coefficient_fields(c, ids);
  ASSERT_TRUE(fields->has_faces());
  heatsim::kernels::CoefficientFields node_only = *fields;
  for (auto& f : node_only.faces) f.clear();
  EXPECT_FALSE(node_only.has_faces());
  // The face that holds the gypsum-wool interface (x = 0.0125 between nodes 5 and 6 at
  // h = 2.449 mm) differs from the nodes' harmonic mean; a face inside wool does not.
  const double h = 0.2425 / 99;
  const int cut = static_cast<int>(0.0125 / h);
  EXPECT_NE(fields->faces[0][cut], node_only.face(0, cut, cut + 1));
  const double series = h / ((0.0125 - cut * h) / 0.25 + ((cut + 1) * h - 0.0125) / 0.035);
  EXPECT_NEAR(fields->faces[0][cut], series, 1e-14 * series);
  EXPECT_DOUBLE_EQ(fields->faces[0][20], 0.035);
}

// A 2D plate of two materials split by the line y = y_cut: faces along x at a node row
// straddling the cut combine in parallel over the cross-section; faces along y in series.
TEST(Subgrid, FacesCombineInSeriesAlongAndInParallelAcross) {
  Case c;
  c.grid.dims = 2;
  c.grid.n = {11, 11, 1};
  c.grid.length = {1.0, 1.0, 1.0};
  c.materials = {material("a", 2.0, 1, 1), material("b", 10.0, 3, 1)};
  const double y_cut = 0.43;  // between node rows 4 (0.4) and 5 (0.5)
  c.regions = {region("a"), region("b", box({0.0, y_cut, 0}, {1.0, 1.0, 0}))};
  for (auto& f : c.boundary) {
    f.kind = BoundaryKind::dirichlet;
    f.value = 1.0;
  }
  auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_TRUE(fields->has_faces());
  const auto at = [](int x, int y) { return static_cast<std::size_t>(y * 11 + x); };
  // Along x on row 4 (y in [0.35, 0.45]): 0.08 of a and 0.02 of b across, in parallel.
  EXPECT_NEAR(fields->faces[0][at(3, 4)], (0.08 * 2.0 + 0.02 * 10.0) / 0.1, 1e-12);
  // Along y between rows 4 and 5: 0.03 of a then 0.07 of b, in series.
  EXPECT_NEAR(fields->faces[1][at(3, 4)], 0.1 / (0.03 / 2.0 + 0.07 / 10.0), 1e-12);
  // Far from the cut: the material's own k.
  EXPECT_EQ(fields->faces[0][at(3, 1)], 2.0);
  EXPECT_EQ(fields->faces[1][at(3, 8)], 10.0);
  // Capacities: row 4's control volume holds 0.08 of a (C = 1) and 0.02 of b (C = 3), whose
  // part beyond the interface holds the share w of its capacity for row 5 (b), across it: its
  // resistance from row 4 (0.03 / 2 + 0.01 / 10 along y to its centre at 0.44) over the whole
  // (plus 0.06 / 10 on to row 5).
  const double w = (0.03 / 2.0 + 0.01 / 10.0) / (0.03 / 2.0 + 0.01 / 10.0 + 0.06 / 10.0);
  EXPECT_NEAR(fields->capacity[at(3, 4)], (0.08 * 1.0 + 0.02 * 3.0 * (1.0 - w)) / 0.1, 1e-12);
  EXPECT_NEAR(fields->capacity[at(3, 5)], (0.1 * 3.0 + 0.02 * 3.0 * w) / 0.1, 1e-12);
  EXPECT_EQ(fields->capacity[at(3, 1)], 1.0);
  // A boundary row's control volume is half a cell: row 0 is all a.
  EXPECT_EQ(fields->capacity[at(3, 0)], 1.0);
}

TEST(Subgrid, SourceSharesAreVolumeFractionsAndKeepThePower) {
  Case c = wall(100);
  heatsim::solver::SourceSpec s;
  s.shape = box({0.05, 0, 0}, {0.0601, 0, 0});
  s.power = 7.0;
  c.sources = {s};
  auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_EQ(fields->sources.size(), 1u);
  const auto& q = fields->sources[0].density;
  const double h = 0.2425 / 99;
  double total = 0.0;
  for (int i = 0; i < 100; ++i) total += q[i] * heatsim::solver::node_weight(c, i) * h;
  EXPECT_NEAR(total, 7.0, 1e-12);
  // The nodes the box covers in part take part of the density.
  const double density = 7.0 / 0.0101;
  for (int i = 0; i < 100; ++i) {
    const double lo = std::max(i * h - 0.5 * h, 0.05), hi = std::min(i * h + 0.5 * h, 0.0601);
    const double share = std::max(0.0, hi - lo) / h;
    EXPECT_NEAR(q[i], density * share, 1e-9 * density) << "node " << i;
  }
}

// The heat a source's density field delivers: sum of q_i times node i's weighted volume.
double delivered(const Case& c, const std::vector<double>& q) {
  double total = 0.0;
  for (std::size_t i = 0; i < q.size(); ++i)
    total += q[i] * heatsim::solver::node_weight(c, static_cast<std::int64_t>(i));
  return total * heatsim::solver::cell_volume(c);
}

// A source's share of each node is the volume fraction of its control volume whether or not
// some region is shaped: a case of one material over the whole domain samples its sources as
// one with a region box that changes nothing does (both give the box's exact volume times the
// density; node shares gave 1e5 W/m^2 for 1.2e5 in 1D, and nothing in 2D for a box between two
// node columns).
TEST(Subgrid, SourceSharesDoNotDependOnWhetherARegionIsShaped) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {11, 1, 1};
  c.grid.length = {1.0, 1.0, 1.0};
  c.materials = {material("a", 1.0, 1000, 1000)};
  c.regions = {region("a")};
  c.boundary[0].kind = c.boundary[1].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = c.boundary[1].value = 300.0;
  c.time.method = heatsim::solver::TimeMethod::steady;
  heatsim::solver::SourceSpec s;
  s.shape = box({0.23, 0, 0}, {0.47, 0, 0});
  s.power_density = 5.0e5;
  c.sources = {s};
  EXPECT_FALSE(heatsim::solver::samples_subgrid(c));
  EXPECT_TRUE(heatsim::solver::samples_source_shapes(c));
  const std::vector<double> plain = heatsim::solver::coefficient_fields(c)->sources[0].density;
  EXPECT_NEAR(delivered(c, plain), 0.24 * 5.0e5, 1e-9 * 5.0e5);
  Case shaped = c;
  shaped.regions.push_back(region("a", box({0.9, 0, 0}, {1.0, 0, 0})));
  ASSERT_TRUE(heatsim::solver::samples_subgrid(shaped));
  EXPECT_EQ(heatsim::solver::coefficient_fields(shaped)->sources[0].density, plain);

  // 2D: a box between two node columns (x in [0.0093, 0.0097], spacing 0.001), full height.
  Case flat;
  flat.grid.dims = 2;
  flat.grid.n = {21, 21, 1};
  flat.grid.length = {0.02, 0.02, 1.0};
  flat.materials = {material("a", 1.0, 1000, 1000)};
  flat.regions = {region("a")};
  for (int f = 0; f < 4; ++f) {
    flat.boundary[f].kind = BoundaryKind::dirichlet;
    flat.boundary[f].value = 300.0;
  }
  s.shape = box({0.0093, 0, 0}, {0.0097, 0.02, 0});
  s.power_density = 1.0e7;
  flat.sources = {s};
  const std::vector<double> thin = heatsim::solver::coefficient_fields(flat)->sources[0].density;
  EXPECT_NEAR(delivered(flat, thin), 0.0004 * 0.02 * 1.0e7, 1e-9 * 80.0);
  Case flat_shaped = flat;
  flat_shaped.regions.push_back(region("a", box({0.019, 0, 0}, {0.02, 0.02, 0})));
  EXPECT_EQ(heatsim::solver::coefficient_fields(flat_shaped)->sources[0].density, thin);

  // The same thin box as a power: spread over its shares, delivering exactly that.
  s.power_density.reset();
  s.power = 50.0;
  flat.sources = {s};
  EXPECT_NEAR(delivered(flat, heatsim::solver::coefficient_fields(flat)->sources[0].density), 50.0,
              1e-12 * 50.0);
}

// The shorthand without materials, and a case with a file region, keep node shares: a box
// between two nodes gives nothing there.
TEST(Subgrid, ShorthandSourcesKeepNodeShares) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {11, 1, 1};
  c.grid.length = {1.0, 1.0, 1.0};
  c.physics.alpha = 1.0;
  c.boundary[0].kind = c.boundary[1].kind = BoundaryKind::dirichlet;
  heatsim::solver::SourceSpec s;
  s.shape = box({0.23, 0, 0}, {0.47, 0, 0});
  s.power_density = 5.0e5;
  c.sources = {s};
  EXPECT_FALSE(heatsim::solver::samples_source_shapes(c));
  // Nodes 0.3 and 0.4, whole.
  EXPECT_NEAR(delivered(c, heatsim::solver::coefficient_fields(c)->sources[0].density), 0.2 * 5.0e5,
              1e-9 * 5.0e5);
}

// Sub-grid sampling of a box whose bounds fall on node planes reproduces the cut exactly: a
// region of k_b over x >= 0.5 on 11 nodes (0.1 apart) gives faces of a below node 5 and b from
// it on, and node 5's capacity the mean of the two halves.
TEST(Subgrid, InterfaceOnANodePlane) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {11, 1, 1};
  c.grid.length = {1.0, 1.0, 1.0};
  c.materials = {material("a", 2.0, 1, 1), material("b", 10.0, 3, 1)};
  c.regions = {region("a"), region("b", box({0.5, 0, 0}, {1.0, 0, 0}))};
  c.boundary[0].kind = c.boundary[1].kind = BoundaryKind::dirichlet;
  auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_TRUE(fields->has_faces());
  EXPECT_NEAR(fields->faces[0][4], 2.0, 1e-14);
  EXPECT_NEAR(fields->faces[0][5], 10.0, 1e-14);
  EXPECT_NEAR(fields->capacity[5], 2.0, 1e-14);
  EXPECT_EQ(fields->capacity[4], 1.0);
  EXPECT_EQ(fields->capacity[6], 3.0);
}

TEST(Subgrid, FileMapsAndSingleMaterialsStayPerNode) {
  Case c = wall(50);
  c.regions = {region("gypsum")};
  EXPECT_FALSE(heatsim::solver::samples_subgrid(c));
  EXPECT_FALSE(heatsim::solver::coefficient_fields(c)->has_faces());
  c.regions.push_back(region("wool", box({0.0125, 0, 0}, {0.0925, 0, 0})));
  EXPECT_TRUE(heatsim::solver::samples_subgrid(c));
  heatsim::solver::RegionSpec map;
  map.shape.kind = ShapeKind::file;
  c.regions.insert(c.regions.begin(), map);
  EXPECT_FALSE(heatsim::solver::samples_subgrid(c));
  EXPECT_FALSE(heatsim::solver::samples_source_shapes(c));
}

// A copper disc (k = 390, radius 15.1 mm, 5 W/m inside) in epoxy (k = 0.2), a 50 mm square at
// 300 K: the centre's steady temperature on 33^2 to 257^2 nodes against 513^2. The curved
// surface enters through the distances along the grid lines, so the error falls at second order:
// 8.98e-4, 9.86e-5, 4.26e-5 and 4.46e-6 K (9.1, 2.3 and 9.5 times per halving, as the circle
// cuts the cells at other places; 201 times over the three). While the disc's parts in the
// epoxy nodes' control volumes heated those nodes it was 9.52e-4, 2.28e-4, 5.14e-5 and
// 1.13e-5 K (84 times). With node materials alone it does not fall steadily.
TEST(Subgrid, DiscInclusionConvergesAtSecondOrder) {
  const auto centre = [](int n) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {n, n, 1};
    c.grid.length = {0.05, 0.05, 1.0};
    c.materials = {material("epoxy", 0.2, 1200, 1100), material("copper", 390, 8960, 385)};
    ShapeSpec disc;
    disc.kind = ShapeKind::ball;
    disc.center = {0.025, 0.025, 0};
    disc.radius = 0.0151;
    c.regions = {region("epoxy"), region("copper", disc)};
    heatsim::solver::SourceSpec q;
    q.shape = disc;
    q.power = 5.0;
    c.sources = {q};
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::dirichlet;
      f.value = 300.0;
    }
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-12;
    const std::vector<double> u = steady_field(c);
    return u[static_cast<std::size_t>((n / 2) * n + n / 2)];
  };
  const double reference = centre(513);
  std::vector<double> error;
  for (int n : {33, 65, 129, 257}) error.push_back(std::abs(centre(n) - reference));
  for (std::size_t j = 0; j + 1 < error.size(); ++j) {
    SCOPED_TRACE("halving " + std::to_string(j));
    EXPECT_GT(error[j] / error[j + 1], 2.0);  // order > 1 at every halving
  }
  EXPECT_GT(error.front() / error.back(), 64.0);  // order > 2 over the three
  EXPECT_LT(error.back(), 1e-5);                  // of a 2.3 K rise
}

// A plate (1D or 2D) of one material on [0, 1] x [0, 0.5], 300 K at x = 0, and a void over
// x >= 0.6 whose surface takes `surface`; and the same plate cut at x = 0.6 with that condition
// on its x+ face.
Case plate(int dims, bool cut, const heatsim::kernels::BoundaryFace& surface) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = {cut ? 7 : 11, dims > 1 ? 6 : 1, 1};
  c.grid.length = {cut ? 0.6 : 1.0, 0.5, 1.0};
  c.materials = {material("steel", 45.0, 7800, 470)};
  c.regions = {region("steel")};
  if (!cut) {
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.shape = box({0.6, -1.0, 0}, {2.0, 2.0, 0});
    v.surface = surface;
    c.regions.push_back(v);
  }
  for (auto& f : c.boundary) f = heatsim::solver::RegionSpec::insulated();
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 300.0;
  if (cut) c.boundary[1] = surface;
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

// The body's nodes of the void plate (x <= 0.6) in the cut plate's order.
std::vector<double> body_of(const std::vector<double>& u, int dims) {
  std::vector<double> out;
  for (int y = 0; y < (dims > 1 ? 6 : 1); ++y)
    for (int x = 0; x < 7; ++x) out.push_back(u[static_cast<std::size_t>(y * 11 + x)]);
  return out;
}

heatsim::kernels::BoundaryFace heat_flux_insulated() {
  return heatsim::solver::RegionSpec::insulated();
}

std::vector<heatsim::kernels::BoundaryFace> surfaces() {
  heatsim::kernels::BoundaryFace convective;
  convective.kind = BoundaryKind::convective;
  convective.transfer = 250.0;
  convective.value = 280.0;
  heatsim::kernels::BoundaryFace flux = heatsim::solver::RegionSpec::insulated();
  flux.heat_flux = true;
  flux.value = -4000.0;  // W/m^2 into the body: 4 kW/m^2 leave
  heatsim::kernels::BoundaryFace radiative;  // radiation alone
  radiative.kind = BoundaryKind::convective;
  radiative.emissivity = 0.9;
  radiative.value = 250.0;
  heatsim::kernels::BoundaryFace both = convective;  // convection and radiation
  both.emissivity = 0.6;
  return {convective, flux, heat_flux_insulated(), radiative, both};
}

TEST(Void, ASurfaceOnANodePlaneEqualsCuttingTheGridThere) {
  for (int dims : {1, 2})
    for (const auto& surface : surfaces()) {
      SCOPED_TRACE(std::to_string(dims) + "D, surface kind " +
                   std::string(heatsim::kernels::to_string(surface.kind)) +
                   (surface.heat_flux ? " (heat flux)" : "") +
                   (surface.radiates() ? " (radiating)" : ""));
      Case with_void = plate(dims, false, surface), cut = plate(dims, true, surface);
      if (surface.kind == BoundaryKind::neumann && surface.value == 0.0) {
        // Insulated throughout: give both a convective x- instead of the Dirichlet, so that a
        // steady state exists with the source below.
        for (Case* c : {&with_void, &cut}) {
          c->boundary[0].kind = BoundaryKind::convective;
          c->boundary[0].transfer = 10.0;
          c->boundary[0].value = 290.0;
          heatsim::solver::SourceSpec q;
          q.power_density = 2e5;
          c->sources = {q};
        }
      }
      // Steady: the same temperatures.
      const std::vector<double> a = body_of(steady_field(with_void), dims), b = steady_field(cut);
      ASSERT_EQ(a.size(), b.size());
      // To 1e-13 of the temperature: the two grids build different hierarchies, and their
      // solves end apart on fp64's rounding floor (1.8e-10 K of 12290 K where the insulated
      // case's source heats the plate).
      for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(a[i], b[i], 1e-13 * std::abs(b[i])) << "node " << i;
      // Explicit steps from 300 K: the same temperatures, on the same stability limit.
      const auto fa = heatsim::solver::coefficient_fields(with_void);
      const auto fb = heatsim::solver::coefficient_fields(cut);
      const double la = heatsim::solver::field_stability(with_void, *fa).dt_limit;
      const double lb = heatsim::solver::field_stability(cut, *fb).dt_limit;
      EXPECT_NEAR(la, lb, 1e-12 * lb);
      std::vector<double> ua, ub;
      for (auto [c, f, out] : {std::tuple{&with_void, fa, &ua}, std::tuple{&cut, fb, &ub}}) {
        const auto p = heatsim::solver::make_problem(*c, 0.9 * lb, f);
        auto backend = heatsim::kernels::make_cpu_backend(p.precision);
        backend->setup(p);
        backend->upload(std::vector<double>(static_cast<std::size_t>(p.points()), 300.0));
        backend->advance(200, 0);
        backend->download(*out);
      }
      const std::vector<double> va = body_of(ua, dims);
      for (std::size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], ub[i], 1e-10) << "node " << i;
      EXPECT_GT(std::abs(ub[6] - 300.0), 1e-3);  // the surface did something
    }
}

// A void ball's surface facing the body: 4 pi r^2 (3D), 2 pi r (2D) within 2% at 10 nodes per
// radius, from the elements the nodes' shares add up to.
TEST(Void, ABallsSurfaceAreaIsTheSpheres) {
  for (int dims : {2, 3}) {
    Case c;
    c.grid.dims = dims;
    c.grid.n = {41, 41, dims > 2 ? 41 : 1};
    c.grid.length = {0.04, 0.04, 0.04};  // h = 1 mm, r = 10 mm
    c.materials = {material("steel", 45.0, 7800, 470)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.shape.kind = ShapeKind::ball;
    v.shape.center = {0.0201, 0.0197, 0.0203};
    v.shape.radius = 0.01;
    c.regions = {region("steel"), v};
    const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
    const std::vector<double> per_volume = heatsim::solver::surface_per_volume(c, ids, 1);
    double area = 0.0;
    for (std::size_t i = 0; i < per_volume.size(); ++i)
      area += per_volume[i] * heatsim::solver::node_weight(c, static_cast<std::int64_t>(i)) *
              heatsim::solver::cell_volume(c);
    const double exact = dims > 2 ? 4.0 * M_PI * 1e-4 : 2.0 * M_PI * 0.01;
    EXPECT_NEAR(area, exact, 0.02 * exact) << dims << "D";
  }
}

// A box void whose faces all lie halfway between nodes (on the boundaries of control volumes):
// each face's area goes to the body's nodes beside it, none to the void's, so no surface
// condition is lost.
TEST(Void, ASurfaceHalfwayBetweenNodesGoesToTheBodysNodes) {
  Case c;
  c.grid.dims = 2;
  c.grid.n = {21, 13, 1};
  c.grid.length = {0.01, 0.006, 1.0};  // h = 0.5 mm
  c.materials = {material("aluminium", 200, 2700, 900)};
  heatsim::solver::RegionSpec v;
  v.is_void = true;
  v.shape = box({0.00225, 0.00125, 0}, {0.00775, 0.00475, 0});
  c.regions = {region("aluminium"), v};
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const std::vector<double> per_volume = heatsim::solver::surface_per_volume(c, ids, 1);
  double on_body = 0.0;
  for (std::size_t i = 0; i < per_volume.size(); ++i) {
    if (per_volume[i] == 0.0) continue;
    EXPECT_NE(ids[i], heatsim::solver::kVoid) << "node " << i;
    on_body += per_volume[i] * heatsim::solver::node_weight(c, static_cast<std::int64_t>(i)) *
               heatsim::solver::cell_volume(c);
  }
  EXPECT_NEAR(on_body, 2 * (0.0055 + 0.0035), 1e-12);
}

// A box void's surface among boxes is taken in elements the size of the control volumes' cuts
// (every shape a box: nothing varies across such an element) and where a ball is among the
// shapes in eighths of a spacing; an element beside a contact's interface is taken in eighths
// in both. The two give the same shares and the same resistances to the node behind each part
// of the surface: a steel block with a copper insert (a contact between them) and a convective
// box void whose faces lie off the node planes and cross the insert, with and without a steel
// ball far from both (which changes no material).
TEST(Void, ABoxSurfaceIsTheSameInElementsOfControlVolumesAndInEighths) {
  const auto make = [](bool with_ball) {
    Case c;
    c.grid.dims = 3;
    c.grid.n = {25, 21, 17};
    c.grid.length = {0.024, 0.020, 0.016};  // h = 1 mm
    c.materials = {material("steel", 45.0, 7800, 470), material("copper", 390.0, 8960, 385)};
    c.regions = {region("steel")};
    heatsim::solver::RegionSpec insert = region("copper");
    insert.shape = box({0.0043, 0.0, 0.0}, {0.0127, 0.020, 0.0088});
    c.regions.push_back(insert);
    if (with_ball) {
      heatsim::solver::RegionSpec ball = region("steel");
      ball.shape.kind = ShapeKind::ball;
      ball.shape.center = {0.021, 0.017, 0.013};
      ball.shape.radius = 0.0015;
      c.regions.push_back(ball);
    }
    c.regions.push_back(
        convective_void(box({0.0081, 0.0052, 0.0064}, {0.0183, 0.0147, 0.0121}), 200.0, 300.0));
    c.contacts.push_back({{"steel", "copper"}, 1e-4});
    return c;
  };
  const Case boxes = make(false), with_ball = make(true);
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(boxes);
  ASSERT_EQ(ids, heatsim::solver::material_ids(with_ball));
  std::vector<double> ra, rb;
  const std::vector<double> a = heatsim::solver::surface_per_volume(boxes, ids, 2, nullptr, &ra);
  const std::vector<double> b =
      heatsim::solver::surface_per_volume(with_ball, ids, 3, nullptr, &rb);
  double area = 0.0, largest = 0.0;
  int held = 0, beside_contact = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, a[i]);
    EXPECT_NEAR(a[i], b[i], 1e-12 * std::abs(b[i])) << "node " << i;
    EXPECT_NEAR(ra[i], rb[i], 1e-12 * std::abs(rb[i])) << "node " << i;
    if (a[i] == 0.0) continue;
    ++held;
    // A node of the insert beside steel on the surface: its resistance counts both materials.
    if (ids[i] == 1 && ra[i] > 0.0) ++beside_contact;
    area += a[i] * heatsim::solver::node_weight(boxes, static_cast<std::int64_t>(i)) *
            heatsim::solver::cell_volume(boxes);
  }
  // The void's box: 10.2 x 9.5 x 5.7 mm, wholly inside the body.
  const double exact = 2.0 * (0.0102 * 0.0095 + 0.0102 * 0.0057 + 0.0095 * 0.0057);
  EXPECT_NEAR(area, exact, 1e-12 * exact);
  EXPECT_GT(held, 100);
  EXPECT_GT(beside_contact, 0);
  EXPECT_GT(largest, 0.0);
}

// Two convective box voids that overlap, their bottoms on one line: the stretch of wall both
// bound counts once (the later void's), so their surfaces add up to the union's, and the
// steady field and the voids' heat flows are the union void's to the sampling's rounding.
TEST(Void, OverlappingVoidsCountTheirSharedSurfaceOnce) {
  const auto make = [](bool overlapping) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {51, 26, 1};
    c.grid.length = {0.05, 0.025, 1.0};
    c.materials = {material("al", 200, 2700, 900)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.surface.kind = BoundaryKind::convective;
    v.surface.transfer = 25.0;
    v.surface.value = 300.0;
    c.regions = {region("al")};
    if (overlapping) {
      v.name = "a";
      v.shape = box({0.01, 0.005, 0}, {0.02, 0.025, 0});
      c.regions.push_back(v);
      v.name = "b";
      v.shape = box({0.015, 0.005, 0}, {0.03, 0.025, 0});
      c.regions.push_back(v);
    } else {
      v.name = "union";
      v.shape = box({0.01, 0.005, 0}, {0.03, 0.025, 0});
      c.regions.push_back(v);
    }
    for (auto& f : c.boundary) f = heatsim::solver::RegionSpec::insulated();
    heatsim::solver::SourceSpec s;
    s.shape = box({0.0, 0.0, 0}, {0.01, 0.002, 0});
    s.power = 10.0;
    c.sources = {s};
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-13;
    return c;
  };
  const Case two = make(true), one = make(false);
  double area = 0.0, union_area = 0.0;
  for (const auto& v :
       heatsim::solver::void_surfaces(two, heatsim::solver::material_ids(two)).voids)
    area += v.area;
  for (const auto& v :
       heatsim::solver::void_surfaces(one, heatsim::solver::material_ids(one)).voids)
    union_area += v.area;
  EXPECT_NEAR(union_area, 0.06, 1e-14);
  EXPECT_NEAR(area, 0.06, 1e-14);  // 0.065 when the shared bottom counted twice

  const std::vector<double> u = steady_field(two), w = steady_field(one);
  double largest = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) largest = std::max(largest, std::abs(u[i] - w[i]));
  EXPECT_LT(largest, 1e-9) << "K";
  EXPECT_GT(w[0], 306.5);  // 306.09-306.24 K when the shared bottom counted twice

  const double flow = total_void_flow(two, u), union_flow = total_void_flow(one, w);
  EXPECT_NEAR(union_flow, -10.0, 1e-9);
  EXPECT_NEAR(flow, union_flow, 1e-9);
}

// Voids whose surfaces coincide (the same sphere, the same box) or whose surfaces cross: each
// piece of surface counts once, so the total is the union's.
TEST(Void, CoincidingSurfacesCountOnce) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    Case c;
    c.grid.dims = dims;
    c.grid.n = {41, 41, dims > 2 ? 41 : 1};
    c.grid.length = {0.04, 0.04, 0.04};
    c.materials = {material("steel", 45.0, 7800, 470)};
    heatsim::solver::RegionSpec ball;
    ball.is_void = true;
    ball.shape.kind = ShapeKind::ball;
    ball.shape.center = {0.0201, 0.0197, 0.0203};
    ball.shape.radius = 0.01;
    heatsim::solver::RegionSpec cube = ball;
    cube.shape = box({0.0101, 0.0103, 0.0107}, {0.0297, 0.0293, 0.0299});
    const auto total = [&](const std::vector<heatsim::solver::RegionSpec>& voids) {
      c.regions = {region("steel")};
      for (const auto& v : voids) c.regions.push_back(v);
      double area = 0.0;
      for (const auto& v :
           heatsim::solver::void_surfaces(c, heatsim::solver::material_ids(c)).voids)
        area += v.area;
      return area;
    };
    const double sphere = total({ball}), cube_area = total({cube});
    EXPECT_NEAR(total({ball, ball}), sphere, 1e-12 * sphere);
    EXPECT_NEAR(total({cube, cube}), cube_area, 1e-12 * cube_area);
    // A ball that pokes out of a box's face: the union's surface is the box's less the cap's
    // base, plus the cap; whichever comes first, the total is the same.
    heatsim::solver::RegionSpec poking = ball;
    poking.shape.center = {0.0301, 0.0197, 0.0203};
    poking.shape.radius = 0.005;
    EXPECT_NEAR(total({cube, poking}), total({poking, cube}), 1e-3 * cube_area);
  }
}

// Nodes inside a ball void whose control volumes reach into the body: their part of the body
// (capacity, surface) goes to body nodes, so every node that holds heat conducts to a
// neighbour, the totals stay, and a steady state with a heat flux through the ball's surface
// solves and balances (the stranded nodes had made it singular: no progress from residual 1).
TEST(Void, NoBodyVolumeIsStrandedInsideABall) {
  namespace mg = heatsim::solver::multigrid;
  for (int dims : {2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    Case c;
    c.grid.dims = dims;
    c.grid.n = {25, 21, dims > 2 ? 19 : 1};
    c.grid.length = {0.06, 0.05, 0.045};  // h = 2.5 mm; r = 7.1 mm, under 3 spacings
    c.materials = {material("steel", 45.0, 7800, 470)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.shape.kind = ShapeKind::ball;
    v.shape.center = {0.0303, 0.0251, 0.0219};
    v.shape.radius = 0.0071;
    v.surface = heatsim::solver::RegionSpec::insulated();
    v.surface.heat_flux = true;
    v.surface.value = 3000.0;
    c.regions = {region("steel"), v};
    c.boundary[0].kind = BoundaryKind::dirichlet;
    c.boundary[0].value = 300.0;
    c.boundary[1].kind = BoundaryKind::convective;
    c.boundary[1].transfer = 40.0;
    c.boundary[1].value = 290.0;
    c.time.method = heatsim::solver::TimeMethod::steady;
    const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
    const heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
    const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
    const std::int64_t np = static_cast<std::int64_t>(ids.size());
    const std::int64_t stride[3] = {1, c.grid.n[0], c.grid.n[0] * c.grid.n[1]};
    double heat_capacity = 0.0;
    int holding = 0;
    for (std::int64_t i = 0; i < np; ++i) {
      const double C = fields->capacity[static_cast<std::size_t>(i)];
      heat_capacity += C * heatsim::solver::node_weight(c, i) * heatsim::solver::cell_volume(c);
      if (C == 0.0) continue;
      ++holding;
      bool conducts = false;
      for (int a = 0; a < dims; ++a) {
        const std::int64_t ia = i / stride[a] % c.grid.n[a];
        if (ia > 0) conducts = conducts || fields->face(a, i - stride[a], i) > 0.0;
        if (ia < c.grid.n[a] - 1) conducts = conducts || fields->face(a, i, i + stride[a]) > 0.0;
      }
      EXPECT_TRUE(conducts) << "node " << i << " holds heat but conducts to no neighbour";
      EXPECT_NE(ids[static_cast<std::size_t>(i)], heatsim::solver::kVoid) << "node " << i;
    }
    double box = 1.0;
    for (int a = 0; a < dims; ++a) box *= c.grid.length[a];
    const double r = v.shape.radius;
    const double ball = dims > 2 ? 4.0 / 3.0 * M_PI * r * r * r : M_PI * r * r;
    EXPECT_NEAR(heat_capacity, 7800.0 * 470.0 * (box - ball), 0.01 * 7800.0 * 470.0 * ball);
    const double area = surfaces.voids.at(0).area;
    const double exact = dims > 2 ? 4.0 * M_PI * r * r : 2.0 * M_PI * r;
    EXPECT_NEAR(area, exact, 0.03 * exact);
    EXPECT_GT(holding, 0);

    const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
    mg::ImplicitStepper steady(problem, fields, heatsim::solver::TimeMethod::steady, 1.0,
                               heatsim::kernels::make_level_ops("cpu", problem.precision));
    std::vector<double> u(static_cast<std::size_t>(np), 300.0);
    heatsim::solver::set_dirichlet_nodes(c, u);
    const mg::SolveReport report = steady.advance(u, 0);
    EXPECT_LT(report.iterations, 30);
    const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces);
    const heatsim::solver::HeatFlowReport flows = meter.report(u, 0.0);
    // The surface lets 3 kW/m^2 times its area in, and the faces take it out.
    ASSERT_EQ(flows.flows.size(), 2u * dims + 1u);
    EXPECT_NEAR(flows.flows[2 * dims].rate, 3000.0 * area, 1e-9 * 3000.0 * area);
    EXPECT_LT(std::abs(flows.imbalance), 1e-7 * flows.largest);
  }
}

// A box void whose bound lies in the control volumes of the nodes beside a ball void's edge
// (apart along z): the box's bound splits those faces' cross-sections, and the line through
// the outer part passed beside the ball, so faces toward the ball's nodes conducted. Those
// nodes are not stepped: the steady state lost heat into them at their initial value, a sink
// no report saw (a heat sink's balance 5.4 W off of 10 W, 40 K too cold). No face conducts to
// a void node, and the balance closes.
TEST(Void, NoFaceConductsToAVoidNodeBesideAnotherVoidsBound) {
  namespace mg = heatsim::solver::multigrid;
  Case c;
  c.grid.dims = 3;
  c.grid.n = {41, 41, 25};
  c.grid.length = {0.02, 0.02, 0.012};  // h = 0.5 mm
  c.materials = {material("aluminium", 237.0, 2700, 900)};
  heatsim::solver::RegionSpec ball, gap;
  ball.is_void = gap.is_void = true;
  ball.shape.kind = ShapeKind::ball;
  ball.shape.center = {0.01, 0.01, 0.00207};
  ball.shape.radius = 0.00113;  // its edge at x = 0.01113, inside the cell of x = 0.011
  ball.surface = heatsim::solver::RegionSpec::insulated();
  gap.shape = box({0.01115, 0.0, 0.00415}, {0.018, 0.02, 0.012});  // its bound in that cell too
  gap.surface = heatsim::solver::RegionSpec::insulated();
  c.regions = {region("aluminium"), ball, gap};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 300.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 50.0;
  c.boundary[1].value = 290.0;
  c.time.method = heatsim::solver::TimeMethod::steady;
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
  const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
  ASSERT_TRUE(fields->has_faces());
  const std::int64_t np = static_cast<std::int64_t>(ids.size());
  const std::int64_t stride[3] = {1, c.grid.n[0], c.grid.n[0] * c.grid.n[1]};
  int void_nodes = 0;
  for (std::int64_t i = 0; i < np; ++i) {
    if (ids[static_cast<std::size_t>(i)] != heatsim::solver::kVoid) continue;
    ++void_nodes;
    for (int a = 0; a < 3; ++a) {
      const std::int64_t ia = i / stride[a] % c.grid.n[a];
      if (ia > 0) {
        EXPECT_EQ(fields->face(a, i - stride[a], i), 0.0) << "node " << i << " axis " << a;
      }
      if (ia < c.grid.n[a] - 1) {
        EXPECT_EQ(fields->face(a, i, i + stride[a]), 0.0) << "node " << i << " axis " << a;
      }
    }
  }
  EXPECT_GT(void_nodes, 0);

  const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
  mg::ImplicitStepper steady(problem, fields, heatsim::solver::TimeMethod::steady, 1.0,
                             heatsim::kernels::make_level_ops("cpu", problem.precision));
  // The void nodes keep 400 K: a face into them would show as heat the faces do not account.
  std::vector<double> u(static_cast<std::size_t>(np), 400.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  steady.advance(u, 0);
  const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces);
  const heatsim::solver::HeatFlowReport flows = meter.report(u, 0.0);
  EXPECT_LT(std::abs(flows.imbalance), 1e-7 * flows.largest);
  // Nothing heats the body, so it lies between the two faces' temperatures.
  for (std::int64_t i = 0; i < np; ++i) {
    if (ids[static_cast<std::size_t>(i)] == heatsim::solver::kVoid) continue;
    ASSERT_LE(u[static_cast<std::size_t>(i)], 300.0 + 1e-6) << "node " << i;
  }
}

// Explicit steps with voids that reach an outer face: one covers the x+ face's nodes
// (convective and radiating) over part of it; another ends between the y+ face's nodes and the
// ones inside them (a heat flux comes in there), so those face nodes conduct only along the
// face. The ghost rules pass each face's condition alone where the face toward the interior
// conducts nothing, as the implicit operator does: no NaN, the balance closes every step, and
// the steps settle on the steady solve's state.
TEST(Void, ExplicitStepsTakeVoidsThatReachConvectiveAndHeatFluxFaces) {
  namespace mg = heatsim::solver::multigrid;
  Case c;
  c.grid.dims = 2;
  c.grid.n = {41, 21, 1};
  c.grid.length = {0.1, 0.05, 1.0};  // h = 2.5 mm
  c.materials = {material("steel", 45.0, 7800, 470)};
  heatsim::solver::RegionSpec on_face;
  on_face.is_void = true;
  on_face.shape = box({0.0801, 0.0149, 0}, {0.2, 0.0301, 0});
  heatsim::solver::RegionSpec under_face;
  under_face.is_void = true;
  under_face.shape = box({0.0201, 0.0399, 0}, {0.0502, 0.049, 0});  // y = 0.0475 void, 0.05 body
  c.regions = {region("steel"), on_face, under_face};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 350.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 50.0;
  c.boundary[1].value = 290.0;
  c.boundary[1].emissivity = 0.6;
  c.boundary[2].kind = BoundaryKind::convective;
  c.boundary[2].transfer = 20.0;
  c.boundary[2].value = 300.0;
  c.boundary[3] = heat_flux_insulated();
  c.boundary[3].heat_flux = true;
  c.boundary[3].value = 2000.0;
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
  const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
  // The geometry is as described: x+ face nodes in the void, y+ face nodes cut off from below.
  const std::int64_t nx = c.grid.n[0], ny = c.grid.n[1];
  ASSERT_EQ(ids[static_cast<std::size_t>(8 * nx + nx - 1)], heatsim::solver::kVoid);
  const std::int64_t top = (ny - 1) * nx + 12;  // x = 0.03, y = 0.05
  ASSERT_NE(ids[static_cast<std::size_t>(top)], heatsim::solver::kVoid);
  ASSERT_EQ(ids[static_cast<std::size_t>(top - nx)], heatsim::solver::kVoid);
  ASSERT_EQ(fields->face(1, top - nx, top), 0.0);

  c.time.method = heatsim::solver::TimeMethod::steady;
  const auto steady_problem = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-12;
  mg::ImplicitStepper steady(steady_problem, fields, heatsim::solver::TimeMethod::steady, 1.0,
                             heatsim::kernels::make_level_ops("cpu", steady_problem.precision),
                             options);
  std::vector<double> settled(ids.size(), 320.0);
  heatsim::solver::set_dirichlet_nodes(c, settled);
  steady.advance(settled, 0);

  c.time.method = heatsim::solver::TimeMethod::explicit_euler;
  const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const auto problem = heatsim::solver::make_problem(c, dt, fields);
  const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces);
  heatsim::solver::HeatFlowRows rows(meter, heatsim::solver::TimeMethod::explicit_euler, dt);
  auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
  backend->setup(problem);
  std::vector<double> u(ids.size(), 320.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  backend->upload(u);
  const std::int64_t steps = static_cast<std::int64_t>(12000.0 / dt);  // about 15 time constants
  for (std::int64_t step = 0; step <= steps; step += 1) {
    if (step > 0) backend->advance(1, step - 1);
    const bool due = step % 2000 == 0 || step == steps || step == steps - 1;
    if (!due) continue;
    backend->download(u);
    const auto row = rows.take(step, u, step % 2000 == 0 || step == steps);
    if (!row) continue;
    double largest = std::abs(row->storage);
    for (double f : row->flows) largest = std::max(largest, std::abs(f));
    // Measured 1.05e-11 of the largest flow at the settled state, where the face flows are
    // small differences of the nodes' terms.
    EXPECT_LT(std::abs(row->imbalance), 1e-10 * largest) << "step " << step;
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    ASSERT_TRUE(std::isfinite(u[i])) << "node " << i;
    if (fields->capacity[i] > 0.0) worst = std::max(worst, std::abs(u[i] - settled[i]));
  }
  EXPECT_LT(worst, 1e-6) << "K from the steady state";
  // The heat flux into the sliver on y+ reaches the body: the top nodes over the void are
  // warmer than the ambient-side ones below the void.
  EXPECT_GT(u[static_cast<std::size_t>(top)], settled[static_cast<std::size_t>(8 * nx + 20)]);
}

// The heat-flow report of steady states: the wall passes its U-value times the difference in
// through the Dirichlet face and out through the convective one; the void plate's surface takes
// what its source puts in less what its x- face lets out; both balances close to the solve.
TEST(HeatFlows, SteadyBalancesCloseAndMatchTheClosedForms) {
  {
    const Case c = wall(100);
    auto fields = heatsim::solver::coefficient_fields(c);
    const auto p = heatsim::solver::make_problem(c, 1.0, fields);
    const std::vector<double> u = steady_field(c);
    const auto ids = heatsim::solver::material_ids(c);
    const heatsim::solver::HeatFlowMeter meter(c, p, fields,
                                               heatsim::solver::void_surfaces(c, ids));
    const auto report = meter.report(u, 0.0);
    const double R = 0.0125 / 0.25 + 0.08 / 0.035 + 0.15 / 1.4 + 1.0 / 25.0, q = 30.0 / R;
    ASSERT_EQ(report.flows.size(), 2u);  // the two faces of the 1D wall
    for (const auto& f : report.flows) {
      if (f.what == "face x- (dirichlet)") EXPECT_NEAR(f.rate, q, 1e-9 * q);
      else if (f.what == "face x+ (convective)") EXPECT_NEAR(f.rate, -q, 1e-9 * q);
      else ADD_FAILURE() << f.what;
    }
    EXPECT_LT(std::abs(report.imbalance), 1e-9 * report.largest);
  }
  {
    Case c = plate(2, false, surfaces()[0]);
    heatsim::solver::SourceSpec s;
    s.shape = box({0.1, 0.1, 0}, {0.3, 0.4, 0});
    s.power = 50.0;
    c.sources = {s};
    auto fields = heatsim::solver::coefficient_fields(c);
    const auto p = heatsim::solver::make_problem(c, 1.0, fields);
    const std::vector<double> u = steady_field(c);
    const auto ids = heatsim::solver::material_ids(c);
    const heatsim::solver::HeatFlowMeter meter(c, p, fields,
                                               heatsim::solver::void_surfaces(c, ids));
    const auto report = meter.report(u, 0.0);
    double sources = 0.0, surface = 0.0;
    for (const auto& f : report.flows) {
      if (f.what == "sources[0]") sources = f.rate;
      if (f.what == "void regions[1]") surface = f.rate;
    }
    EXPECT_NEAR(sources, 50.0, 1e-9);
    EXPECT_LT(surface, 0.0);  // the surface at 280 K cools the plate
    EXPECT_LT(std::abs(report.imbalance), 1e-9 * report.largest);
  }
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// Two materials of one heat capacity (a strong sphere and `where` layers in a weak block): the
// faces near the surfaces are sampled; the nodes away from surfaces keep the capacity, and the
// parts of control volumes beyond an interface move to the nodes across it, so the mixed nodes
// differ from it while the total stays the body's volume times it. With the layers' capacity
// changed, the total is the mixture's: the layers' volume (their source-share total) at 5e5.
TEST(Subgrid, MaterialsOfOneCapacityGiveItToEveryNode) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {23, 19, 17};
  c.grid.length = {0.022, 0.018, 0.016};
  c.materials = {material("weak", 1.0, 1000, 1000), material("strong", 1e4, 2000, 500),
                 material("layer", 50.0, 500, 2000)};
  ShapeSpec ball;
  ball.kind = ShapeKind::ball;
  ball.center = {0.011, 0.009, 0.008};
  ball.radius = 0.0043;
  ShapeSpec layers;
  layers.kind = ShapeKind::where;
  layers.where = "z - 0.004 * floor(z / 0.004) < 0.0013";
  c.regions = {region("weak"), region("strong", ball), region("layer", layers)};
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  // The weighted total of a per-node field, as a fraction of the domain's volume.
  const auto total = [&](const std::vector<double>& field) {
    double sum = 0.0;
    for (std::size_t i = 0; i < field.size(); ++i)
      sum += field[i] * heatsim::solver::node_weight(c, static_cast<std::int64_t>(i));
    return sum * heatsim::solver::cell_volume(c) / (0.022 * 0.018 * 0.016);
  };
  const auto one = heatsim::solver::subgrid_materials(c, ids);
  ASSERT_EQ(one.capacity.size(), ids.size());
  ASSERT_FALSE(one.faces[0].empty()) << "the faces near the surfaces are sampled";
  EXPECT_NEAR(total(one.capacity), 1e6, 1e-12 * 1e6);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) moved += one.capacity[i] != 1e6;
  EXPECT_GT(moved, 0u) << "parts beyond the interfaces went to the nodes across them";
  // Some faces take neither material's k: they were sampled across a surface.
  std::size_t mixed_faces = 0;
  for (const auto& axis : one.faces)
    for (double K : axis) mixed_faces += K != 0.0 && K != 1.0 && K != 1e4 && K != 50.0;
  EXPECT_GT(mixed_faces, 0u);

  c.materials[2] = material("layer", 50.0, 500, 1000);  // 5e5 against the others' 1e6
  const auto two = heatsim::solver::subgrid_materials(c, ids);
  const double layer_volume = total(heatsim::solver::subgrid_fractions(c, layers, ids));
  EXPECT_GT(layer_volume, 0.2);
  EXPECT_NEAR(total(two.capacity), 1e6 - 5e5 * layer_volume, 1e-12 * 1e6);
  // Far from the surfaces every node keeps its own material's.
  EXPECT_EQ(two.capacity[0], ids[0] == 2 ? 5e5 : 1e6);
}

// A disc centred on a node with a radius of 16 spacings: the grid lines y = 0.3 and y = 0.7
// are tangent to it, and 0.7 - 0.5 rounds below 0.2 where 0.5 - 0.3 does not. A chord of some
// 1e-8 found on one of them through an inclusion of k = 1e-6 gave that line's faces a third
// more resistance than their mirror images' (steady fields 3.3e-3 of the span from symmetric).
// Every face equals its mirror image about y = 0.5.
TEST(Subgrid, ADiscTangentToGridLinesGivesMirrorImageFaces) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE("dims " + std::to_string(dims));
    const std::int64_t n = dims == 2 ? 81 : 41;
    Case c;
    c.grid.dims = dims;
    c.grid.n = {static_cast<int>(n), static_cast<int>(n), dims == 3 ? static_cast<int>(n) : 1};
    c.grid.length = {1.0, 1.0, 1.0};
    c.materials = {material("matrix", 1.0, 1, 1), material("inclusion", 1e-6, 1, 1)};
    ShapeSpec disc;
    disc.kind = ShapeKind::ball;
    disc.center = {0.5, 0.5, 0.5};
    disc.radius = 0.2;
    c.regions = {region("matrix"), region("inclusion", disc)};
    const auto fields = heatsim::solver::coefficient_fields(c);
    ASSERT_TRUE(fields->has_faces());
    const std::int64_t nz = dims == 3 ? n : 1;
    int compared = 0;
    for (int a = 0; a < dims; ++a)
      for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < n; ++y)
          for (std::int64_t x = 0; x < n; ++x) {
            // The face from (x, y, z) toward +a and its mirror image about y = 0.5: along y the
            // face from y' - 1 to y', y' = n - 1 - y.
            std::int64_t my = n - 1 - y;
            if (a == 1) {
              if (y == n - 1) continue;
              my = n - 2 - y;
            }
            const auto at = [&](std::int64_t yy) {
              return static_cast<std::size_t>((z * n + yy) * n + x);
            };
            const double f = fields->faces[static_cast<std::size_t>(a)][at(y)];
            const double m = fields->faces[static_cast<std::size_t>(a)][at(my)];
            ASSERT_NEAR(f, m, 1e-9 * std::max(std::abs(f), 1e-300))
                << "axis " << a << " at (" << x << ", " << y << ", " << z << ")";
            ++compared;
          }
    EXPECT_GT(compared, 0);
  }
}

// A void box whose bound is written as a node's coordinate that the grid rounds a little
// past it (26 h = 0.013000000000000001 for h = 0.0005 against a box from 0.013): the face from
// the node before to the node on the bound lies in the body, its conductance k, not cut off
// by a void piece of rounding length.
TEST(Subgrid, ABoundOnANodeRoundedPastItCutsNoFace) {
  Case c;
  c.grid.dims = 1;
  c.grid.n = {81, 1, 1};
  c.grid.length = {0.04, 1.0, 1.0};
  c.materials = {material("aluminium", 205.0, 2700, 900)};
  c.regions = {region("aluminium")};
  heatsim::solver::RegionSpec v;
  v.is_void = true;
  v.shape = box({0.013, 0, 0}, {0.02, 0, 0});
  c.regions.push_back(v);
  for (auto& f : c.boundary) f = heatsim::solver::RegionSpec::insulated();
  const double h = 0.04 / 80;
  ASSERT_GT(26 * h, 0.013);  // the rounding this is about
  const auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_TRUE(fields->has_faces());
  EXPECT_NEAR(fields->faces[0][25], 205.0, 1e-9 * 205.0);
  EXPECT_EQ(fields->faces[0][26], 0.0);  // into the void
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// The total area of the voids' surfaces facing the body (VoidSurface::area).
double void_area(const Case& c) {
  double area = 0.0;
  for (const auto& v : heatsim::solver::void_surfaces(c, heatsim::solver::material_ids(c)).voids)
    area += v.area;
  return area;
}

// A square pin on a base, written as four gap voids, its sides 0.4 of a spacing off the node
// planes and the base's top 0.8 of one above a plane: the void nodes beside the pin's root hold
// strips of the base whose faces move to body nodes, and a face between two such void nodes
// went with the takers of whichever came first in the grid's order (0.13 of a face's
// conductance between mirror images, 1.2e-3 K in a 473 K rise). The faces, the capacities and
// the surfaces' transfer are mirror images along x and y.
TEST(Void, APinOffTheNodePlanesOnABaseOffThemKeepsItsMirrorSymmetry) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {29, 29, 21};
  c.grid.length = {0.007, 0.007, 0.005};  // h = 0.25 mm
  c.materials = {material("al", 200.0, 2700, 900)};
  const auto gap = [](std::array<double, 3> lo, std::array<double, 3> hi) {
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.surface.kind = BoundaryKind::convective;
    v.surface.transfer = 25.0;
    v.surface.value = 300.0;
    v.shape = box(lo, hi);
    return v;
  };
  const double top = 0.0017, a = 0.0026, b = 0.0044;  // the pin from a to b in x and y
  c.regions = {region("al"), gap({0, 0, top}, {a, 0.007, 0.005}),
               gap({b, 0, top}, {0.007, 0.007, 0.005}), gap({0, 0, top}, {0.007, a, 0.005}),
               gap({0, b, top}, {0.007, 0.007, 0.005})};
  heatsim::solver::SourceSpec heater;
  heater.shape = box({0.002, 0.002, 0.0}, {0.005, 0.005, 0.0005});
  heater.power = 2.0;
  c.sources = {heater};
  convective_faces(c, 25.0, 300.0, 4);  // z- insulated
  const auto fields = heatsim::solver::coefficient_fields(c);
  const std::int64_t nx = 29, ny = 29, nz = 21;
  const auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    return static_cast<std::size_t>((z * ny + y) * nx + x);
  };
  const auto worst_mirror = [&](const std::vector<double>& v, int axis, int face_axis) {
    double worst = 0.0;
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          // A face along the mirrored axis is between i and i + 1: its image is at n - 2 - i.
          const std::int64_t shift = face_axis == axis ? 1 : 0;
          const std::int64_t mx = axis == 0 ? nx - 1 - x - shift : x;
          const std::int64_t my = axis == 1 ? ny - 1 - y - shift : y;
          if (mx < 0 || my < 0) continue;
          const double p = v[at(x, y, z)], q = v[at(mx, my, z)];
          worst = std::max(worst, std::abs(p - q) / std::max({std::abs(p), std::abs(q), 1e-300}));
        }
    return worst;
  };
  for (int axis = 0; axis < 2; ++axis) {
    SCOPED_TRACE("mirror along " + std::to_string(axis));
    for (int f = 0; f < 3; ++f)
      EXPECT_LE(worst_mirror(fields->faces[static_cast<std::size_t>(f)], axis, f), 1e-12)
          << "faces along " << f;
    EXPECT_LE(worst_mirror(fields->capacity, axis, -1), 1e-12);
    EXPECT_LE(worst_mirror(fields->transfer, axis, -1), 1e-12);
  }
}

// A box of material painted after a void, inside it, its bottom sunk into the body below the
// void: the void's surface is the boundary between void and body, so the painted box's sides
// and top inside the void count (2 h (w_x + w_z) + w_x w_z in 3D) and the void's bottom under
// the box does not (- w_x w_z). With the bounds on node planes and off them (every bound then
// cuts control volumes, slivers included), in 2D and 3D, the total is the closed form.
TEST(Void, APaintedBoxsSidesInsideTheVoidAreItsSurface) {
  for (int dims : {2, 3})
    for (double d : {0.0, 0.00037}) {
      SCOPED_TRACE(std::to_string(dims) + "D, offset " + std::to_string(d));
      Case c;
      c.grid.dims = dims;
      c.grid.n = {41, 41, dims > 2 ? 41 : 1};
      c.grid.length = {0.04, 0.04, 0.04};  // h = 1 mm
      c.materials = {material("steel", 45.0, 7800, 470), material("copper", 400, 8900, 385)};
      heatsim::solver::RegionSpec v;
      v.is_void = true;
      v.surface.kind = BoundaryKind::convective;
      v.surface.transfer = 25.0;
      v.surface.value = 300.0;
      const std::array<double, 3> lo{0.010 + d, 0.010 + d, 0.011 + d},
          hi{0.029 + d, 0.030 + d, 0.028 + d};
      v.shape = box(lo, hi);
      // The fin: 7 x 15 (x 13) mm, 5 mm of it below the void's bottom.
      const std::array<double, 3> flo{0.015 + d, 0.005 + d, 0.013 + d},
          fhi{0.022 + d, 0.020 + d, 0.026 + d};
      c.regions = {region("steel"), v};
      double faces = 0.0;  // the void box's own surface
      if (dims == 2) {
        faces = 2.0 * ((hi[0] - lo[0]) + (hi[1] - lo[1]));
      } else {
        const double e[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
        faces = 2.0 * (e[0] * e[1] + e[1] * e[2] + e[0] * e[2]);
      }
      EXPECT_NEAR(void_area(c), faces, 1e-12);
      c.regions.push_back(region("copper", box(flo, fhi)));
      const double wx = fhi[0] - flo[0], wz = dims > 2 ? fhi[2] - flo[2] : 1.0;
      const double height = fhi[1] - lo[1];  // inside the void
      const double sides = dims > 2 ? 2.0 * height * (wx + wz) : 2.0 * height;
      // Bottom covered (- wx wz), top added (+ wx wz): the sides are the difference.
      EXPECT_NEAR(void_area(c), faces + sides, 1e-12);
      // Every node the surface reaches is body.
      const auto ids = heatsim::solver::material_ids(c);
      const auto surfaces = heatsim::solver::void_surfaces(c, ids);
      ASSERT_EQ(surfaces.voids.size(), 1u);
      for (std::int64_t node : surfaces.voids[0].nodes)
        EXPECT_NE(ids[static_cast<std::size_t>(node)], heatsim::solver::kVoid) << "node " << node;
      // A later void over the fin's top 3 mm takes it back: the fin's sides there face void on
      // both sides and count for neither void.
      heatsim::solver::RegionSpec cap = v;
      cap.shape = box({flo[0], fhi[1] - 0.003, flo[2]}, {fhi[0], fhi[1], fhi[2]});
      c.regions.push_back(cap);
      const double lost = dims > 2 ? 2.0 * 0.003 * (wx + wz) : 2.0 * 0.003;
      const auto with_cap = heatsim::solver::void_surfaces(c, heatsim::solver::material_ids(c));
      ASSERT_EQ(with_cap.voids.size(), 2u);
      // The first void keeps the fin's sides below the cap; the cap faces the fin's new top.
      EXPECT_NEAR(with_cap.voids[0].area, faces + sides - lost - wx * wz, 1e-12);
      EXPECT_NEAR(with_cap.voids[1].area, wx * wz, 1e-12);
    }
}

// A box of material listed after a void that only touches it (a copper base under an "air"
// void, the base's top on the void's bottom): the wall they share is the void's surface once.
// Its area is the void's bottom face whatever the order the two are listed in, node by node
// (it was counted twice when the box came second: once as the void's face, once as the painted
// box's). Also for a box under the void inside another material, on node planes and off them,
// in 2D and 3D.
TEST(Void, ABoxOnlyTouchingTheVoidAddsNoSurface) {
  for (int dims : {2, 3})
    for (double d : {0.0, 0.00037}) {
      SCOPED_TRACE(std::to_string(dims) + "D, offset " + std::to_string(d));
      Case c;
      c.grid.dims = dims;
      c.grid.n = {21, 35, dims > 2 ? 11 : 1};
      c.grid.length = {0.02, 0.034, 0.01};  // h = 1 mm
      c.materials = {material("aluminium", 237, 2700, 900), material("copper", 390, 8960, 385)};
      heatsim::solver::RegionSpec air;
      air.is_void = true;
      air.surface.kind = BoundaryKind::convective;
      air.surface.transfer = 50.0;
      air.surface.value = 300.0;
      air.shape = box({0.0, 0.004 + d, 0.0}, {0.02, 0.034, 0.01});
      const double depth = dims > 2 ? 0.01 : 1.0;
      for (const auto& [lo, hi] : {std::pair<std::array<double, 3>, std::array<double, 3>>{
                                       {0.0, 0.0, 0.0}, {0.02, 0.004 + d, 0.01}},
                                   {{0.005 + d, 0.0, 0.002}, {0.015 + d, 0.004 + d, 0.008}}}) {
        const auto base = region("copper", box(lo, hi));
        Case after = c, before = c;
        after.regions = {region("aluminium"), air, base};
        before.regions = {region("aluminium"), base, air};
        const auto a = heatsim::solver::void_surfaces(after, heatsim::solver::material_ids(after));
        const auto b =
            heatsim::solver::void_surfaces(before, heatsim::solver::material_ids(before));
        ASSERT_EQ(a.voids.size(), 1u);
        ASSERT_EQ(b.voids.size(), 1u);
        EXPECT_NEAR(a.voids[0].area, 0.02 * depth, 1e-12);
        EXPECT_NEAR(b.voids[0].area, 0.02 * depth, 1e-12);
        EXPECT_EQ(a.voids[0].nodes, b.voids[0].nodes);
        ASSERT_EQ(a.voids[0].per_volume.size(), b.voids[0].per_volume.size());
        for (std::size_t k = 0; k < a.voids[0].per_volume.size(); ++k)
          EXPECT_NEAR(a.voids[0].per_volume[k], b.voids[0].per_volume[k], 1e-9) << "node " << k;
      }
    }
}

// A painted ball inside a void: its sphere is the void's surface (within the sampling's 2% at
// 5 nodes per radius, as a void ball's), added to the void box's faces.
TEST(Void, APaintedBallsSphereInsideTheVoidIsItsSurface) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    Case c;
    c.grid.dims = dims;
    c.grid.n = {41, 41, dims > 2 ? 41 : 1};
    c.grid.length = {0.04, 0.04, 0.04};
    c.materials = {material("steel", 45.0, 7800, 470)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.shape = box({0.0051, 0.0053, 0.0047}, {0.0349, 0.0347, 0.0353});
    heatsim::solver::RegionSpec ball = region("steel");
    ball.shape.kind = ShapeKind::ball;
    ball.shape.center = {0.0201, 0.0197, 0.0203};
    ball.shape.radius = 0.005;
    c.regions = {region("steel"), v};
    const double faces = void_area(c);
    c.regions.push_back(ball);
    const double sphere = dims > 2 ? 4.0 * M_PI * 0.005 * 0.005 : 2.0 * M_PI * 0.005;
    EXPECT_NEAR(void_area(c) - faces, sphere, 0.02 * sphere);
  }
}

// A 2D heat sink (an aluminium base, five fins, h = 25 to 298.15 K on the fins and the base
// between them) written two ways: the gaps between the fins as voids, one box each, and the
// fins as boxes painted over one "air" void above the base. The same body, the same surfaces:
// the same area, steady field and heat through the voids' surfaces. With the bounds off the
// node planes (halfway between nodes) at this grid.
// A bar of aluminium painted over an air void, its sides 0.1 mm off the node planes (spacing
// 0.5 mm): the strip of bar inside the void nodes' control volumes beside it conducts along the
// bar through the body nodes beside it, as the same bar between two gap voids does (whose
// bounds leave those nodes body slivers). Its faces along the bar, summed across it, carry k
// times its cross-section exactly, in 2D (sides off along x) and 3D (along x and y: strips and
// corners), at the bar's root on the base too; the strips' conduction was dropped with the
// void nodes' faces (5% and 10% low), and the gap voids' slivers at the root gave part of
// theirs to the base node below, where it was lost (2%).
TEST(Void, ABarPaintedOverAVoidOffTheNodePlanesConductsItsWholeSection) {
  for (int dims : {2, 3})
  for (bool gaps : {false, true}) {
    if (gaps && dims == 3) continue;  // the gap voids' form in 2D
    SCOPED_TRACE("dims " + std::to_string(dims) + (gaps ? ", gap voids" : ", painted"));
    const int along = dims - 1;  // the bar's axis
    Case c;
    c.grid.dims = dims;
    c.grid.n = dims == 2 ? std::array<std::int64_t, 3>{21, 45, 1} : std::array<std::int64_t, 3>{21, 21, 45};
    c.grid.length = dims == 2 ? std::array<double, 3>{0.01, 0.022, 1.0}
                              : std::array<double, 3>{0.01, 0.01, 0.022};
    c.materials = {material("base", 1e7, 2700, 900), material("al", 200, 2700, 900)};
    std::array<double, 3> lo{0, 0, 0}, hi{0.01, 0.01, 0.01}, bar_lo{0.00415, 0.00415, 0},
        bar_hi{0.00615, 0.00615, 0};
    lo[along] = bar_lo[along] = 0.002;
    hi[along] = bar_hi[along] = 0.02;
    heatsim::solver::RegionSpec air;
    air.is_void = true;
    air.shape = box(lo, hi);
    c.regions = {region("base"), air, region("al", box(bar_lo, bar_hi))};
    if (gaps) {  // aluminium over the void's box, the gaps beside the bar voids of their own
      heatsim::solver::RegionSpec left = air, right = air;
      left.shape = box(lo, {bar_lo[0], hi[1], 0});
      right.shape = box({bar_hi[0], lo[1], 0}, hi);
      c.regions = {region("base"), region("al", box(lo, hi)), left, right};
    }
    const auto fields = heatsim::solver::coefficient_fields(c);
    ASSERT_TRUE(fields->has_faces());
    const double section = dims == 2 ? 0.002 : 0.002 * 0.002;
    const std::int64_t nx = 21, ny = dims == 2 ? 1 : 21;
    for (std::int64_t l : {4, 5, 10, 20, 30}) {  // planes across the bar: its root (node plane
                                                  // 4 at 2 mm on the base), and along it
      double sum = 0.0;
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          // A node's share of the plane: the cell's width along x (and y), halved at the edges.
          const double wx = (x == 0 || x == nx - 1 ? 0.5 : 1.0) * 0.0005;
          const double wy = dims == 2 ? 1.0 : (y == 0 || y == ny - 1 ? 0.5 : 1.0) * 0.0005;
          sum += fields->faces[static_cast<std::size_t>(along)]
                              [static_cast<std::size_t>((l * ny + y) * nx + x)] *
                 wx * wy;
        }
      EXPECT_NEAR(sum, 200.0 * section, 1e-9 * 200.0 * section) << "plane " << l;
    }
  }
}

// A copper fin painted over an air void, its tip's corner between node planes, extruded along
// z: the void node beyond the corner holds a piece of the fin, which it hands to the nearest
// body node, across the edge in its own z plane (taken across the corners, the nodes on the z
// faces, with fewer neighbours, took more each: 4.957e6 against 4.911e6 J/(m^3 K) in the
// middle, fields 5e-3 K apart between z planes). Every z plane's capacities are the 2D case's.
TEST(Void, AnExtrudedFinsCornerGoesAlikeInEveryZPlane) {
  const auto make = [](int dims) {
    Case c;
    c.grid.dims = dims;
    c.grid.n = {31, 31, dims == 3 ? 3 : 1};
    c.grid.length = {0.03, 0.03, dims == 3 ? 0.01 : 1.0};
    c.materials = {material("al", 200, 2700, 900), material("cu", 400, 8900, 385)};
    c.regions = {region("al"), convective_void(box({0, 0.01, 0}, {0.03, 0.03, 0.01}), 50.0, 300.0),
                 region("cu", box({0.0123, 0.01, 0}, {0.0177, 0.0217, 0.01}))};
    return c;
  };
  const auto flat = heatsim::solver::coefficient_fields(make(2));
  const auto deep = heatsim::solver::coefficient_fields(make(3));
  const std::size_t plane = 31 * 31;
  ASSERT_EQ(deep->capacity.size(), 3 * plane);
  double largest = 0.0;
  for (std::size_t z = 0; z < 3; ++z)
    for (std::size_t i = 0; i < plane; ++i)
      largest = std::max(largest, std::abs(deep->capacity[z * plane + i] - flat->capacity[i]));
  EXPECT_LT(largest, 1e-12 * 8900.0 * 385.0) << "J/(m^3 K)";
  // The corner's piece went to the fin's corner node (17, 21): more than copper's own.
  EXPECT_GT(flat->capacity[21 * 31 + 17], 8900.0 * 385.0);
}

TEST(Void, FinsPaintedOverAnAirVoidAreTheSinkWithGapVoids) {
  const double fins[5][2] = {
      {0.0, 0.002}, {0.0115, 0.0135}, {0.0235, 0.0255}, {0.0365, 0.0385}, {0.048, 0.05}};
  const auto make = [&](bool painted) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {51, 31, 1};
    c.grid.length = {0.05, 0.03, 1.0};  // h = 1 mm
    c.materials = {material("aluminium", 200, 2700, 900)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.surface.kind = BoundaryKind::convective;
    v.surface.transfer = 25.0;
    v.surface.value = 298.15;
    c.regions = {region("aluminium")};
    if (painted) {
      v.shape = box({0.0, 0.005, 0}, {0.05, 0.03, 0});
      c.regions.push_back(v);
      for (const auto& f : fins)
        c.regions.push_back(region("aluminium", box({f[0], 0.005, 0}, {f[1], 0.03, 0})));
    } else {
      for (int k = 0; k < 4; ++k) {
        v.shape = box({fins[k][1], 0.005, 0}, {fins[k + 1][0], 0.03, 0});
        c.regions.push_back(v);
      }
    }
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::convective;
      f.transfer = 25.0;
      f.value = 298.15;
    }
    c.boundary[2] = heatsim::solver::RegionSpec::insulated();  // y-
    heatsim::solver::SourceSpec s;
    s.shape = box({0.02, 0.0, 0}, {0.03, 0.001, 0});
    s.power = 50.0;
    c.sources = {s};
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-13;
    return c;
  };
  const Case gaps = make(false), air = make(true);
  // Four gaps' bottoms (40 mm) and eight fin sides of 25 mm.
  EXPECT_NEAR(void_area(gaps), 0.24, 1e-12);
  EXPECT_NEAR(void_area(air), 0.24, 1e-12);  // 0.05 (the void's bottom only) before

  const std::vector<double> u = steady_field(gaps), w = steady_field(air);
  const auto ids = heatsim::solver::material_ids(gaps);
  double largest = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i)
    if (ids[i] != heatsim::solver::kVoid) largest = std::max(largest, std::abs(u[i] - w[i]));
  EXPECT_LT(largest, 1e-6) << "K";
  const std::size_t base = 25;  // (0.025, 0)
  EXPECT_GT(u[base], 300.0);
  EXPECT_NEAR(w[base], u[base], 1e-6 * u[base]);

  const double gap_flow = total_void_flow(gaps, u), air_flow = total_void_flow(air, w);
  EXPECT_LT(gap_flow, -30.0);  // most of the 50 W/m leaves through the fins and gaps
  EXPECT_NEAR(air_flow, gap_flow, 1e-6 * std::abs(gap_flow));
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// The share of [lo, hi] (a box's extent on one axis) in node q's control volume on an axis of
// n nodes h apart (half a cell at either end), as a fraction of the control volume's length.
double overlap_1d(int q, int n, double h, double lo, double hi) {
  const double c_lo = std::max(q * h - 0.5 * h, 0.0), c_hi = std::min(q * h + 0.5 * h, (n - 1) * h);
  return std::max(0.0, std::min(hi, c_hi) - std::max(lo, c_lo)) / (c_hi - c_lo);
}

// One material with a shaped region (so the sources are sampled, no interface to move parts
// across): a box source's share of each node is the product of its overlaps with the control
// volume per axis, on a grid of odd sizes with the box's bounds on a node plane, halfway between
// two and anywhere; where no bound enters the control volume, 0 or 1 exactly.
TEST(Subgrid, ABoxsSharesAreTheProductsOfItsOverlapsPerAxis) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {21, 17, 15};
  c.grid.length = {0.02, 0.016, 0.014};  // h = 0.001 on every axis
  c.materials = {material("steel", 16.0, 8000, 500)};
  c.regions = {region("steel"), region("steel", box({0.002, 0.002, 0.002}, {0.009, 0.01, 0.008}))};
  const std::array<double, 3> lo{0.0045, 0.003, 0.00237}, hi{0.0155, 0.0111, 0.014};
  const ShapeSpec source = box(lo, hi);
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const std::vector<double> share = heatsim::solver::subgrid_fractions(c, source, ids);
  ASSERT_EQ(share.size(), ids.size());
  const double h = 0.001;
  std::size_t whole = 0, partial = 0;
  for (int z = 0; z < 15; ++z)
    for (int y = 0; y < 17; ++y)
      for (int x = 0; x < 21; ++x) {
        const int q[3] = {x, y, z};
        double expected = 1.0;
        bool bound_inside = false;
        for (int a = 0; a < 3; ++a) {
          const int n = c.grid.n[a];
          expected *= overlap_1d(q[a], n, h, lo[a], hi[a]);
          const double c_lo = std::max(q[a] * h - 0.5 * h, 0.0);
          const double c_hi = std::min(q[a] * h + 0.5 * h, (n - 1) * h);
          for (double b : {lo[a], hi[a]}) bound_inside = bound_inside || (b > c_lo && b < c_hi);
        }
        const double got = share[static_cast<std::size_t>((z * 17 + y) * 21 + x)];
        EXPECT_NEAR(got, expected, 1e-12) << "node " << x << " " << y << " " << z;
        if (!bound_inside) {
          EXPECT_TRUE(got == 0.0 || got == 1.0) << "node " << x << " " << y << " " << z;
          whole += got == 1.0;
        } else {
          partial += got > 0.0 && got < 1.0;
        }
      }
  EXPECT_GT(whole, 0u);
  EXPECT_GT(partial, 0u);
}

// The inclusion of scripts/hypre-vs-heatsim's cube case (a conductor whose box's bounds lie
// halfway between nodes, written as the centre plus or minus (m + 1/2) h) in a poor one: every
// node whose control volume no bound enters keeps its own material's capacity exactly, the
// source's share is 1 inside and 0 outside there, and the shares' weighted total is the box's
// volume.
TEST(Subgrid, AnInclusionHalfwayBetweenNodesKeepsEveryNodesOwnCapacity) {
  Case c;
  const int n = 21;
  c.grid.dims = 3;
  c.grid.n = {n, n, n};
  c.grid.length = {0.05, 0.05, 0.05};
  const double h = 0.05 / (n - 1), half = (3 * (n - 1) / 10 + 0.5) * h;
  c.materials = {material("copper", 390.0, 8960, 385), material("epoxy", 0.2, 1200, 1100)};
  const ShapeSpec cube =
      box({0.025 - half, 0.025 - half, 0.025 - half}, {0.025 + half, 0.025 + half, 0.025 + half});
  c.regions = {region("epoxy"), region("copper", cube)};
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const auto sampled = heatsim::solver::subgrid_materials(c, ids);
  const std::vector<double> share = heatsim::solver::subgrid_fractions(c, cube, ids);
  const double capacity[2] = {8960.0 * 385, 1200.0 * 1100};
  std::size_t checked = 0;
  double total = 0.0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int q[3] = {x, y, z};
        const std::size_t i = static_cast<std::size_t>((z * n + y) * n + x);
        total += share[i] * heatsim::solver::node_weight(c, static_cast<std::int64_t>(i));
        bool bound_inside = false, inside = true;
        for (int a = 0; a < 3; ++a) {
          const double at = q[a] * h;
          const double c_lo = std::max(at - 0.5 * h, 0.0), c_hi = std::min(at + 0.5 * h, 0.05);
          for (double b : {cube.lower[a], cube.upper[a]})
            bound_inside = bound_inside || (b > c_lo && b < c_hi);
          inside = inside && at >= cube.lower[a] && at <= cube.upper[a];
        }
        if (bound_inside) continue;
        ++checked;
        ASSERT_EQ(ids[i], inside ? 0 : 1);
        EXPECT_EQ(sampled.capacity[i], capacity[ids[i]]) << "node " << x << " " << y << " " << z;
        EXPECT_EQ(share[i], inside ? 1.0 : 0.0) << "node " << x << " " << y << " " << z;
      }
  EXPECT_GT(checked, static_cast<std::size_t>(n * n * n / 2));
  const double volume = std::pow(2.0 * half, 3);
  EXPECT_NEAR(total * heatsim::solver::cell_volume(c), volume, 1e-12 * volume);
}

// A `where` formula that leaves some coordinates unread is evaluated once per run of points
// alike in the others, and a line along an unread axis is taken as one material: the same
// formula written to read every coordinate (0 * (x + y + z) added to its left side, which
// changes no value compared) must give the same faces, capacities and shares, bit for bit.
// Layers in z alone and a cylinder in x and y on a 3D grid, stripes in x alone on a 2D one;
// their surfaces lie between the samples, so faces are cut and parts of control volumes move.
TEST(Subgrid, AFormulaInSomeCoordinatesIsLaidAsOneReadingThemAll) {
  struct Variant {
    int dims;
    std::string formula, all_read;
  };
  const std::vector<Variant> variants = {
      {3, "z - 0.0013 * floor(z / 0.0013) < 0.00047",
       "z - 0.0013 * floor(z / 0.0013) + 0 * (x + y + z) < 0.00047"},
      {3, "(x - 0.011)^2 + (y - 0.0093)^2 < 0.0061^2",
       "(x - 0.011)^2 + (y - 0.0093)^2 + 0 * (x + y + z) < 0.0061^2"},
      {2, "x - 0.0021 * floor(x / 0.0021) > 0.0013",
       "x - 0.0021 * floor(x / 0.0021) + 0 * (x + y) > 0.0013"}};
  for (const Variant& v : variants) {
    Case c;
    c.grid.dims = v.dims;
    c.grid.n = {23, 19, v.dims == 3 ? 17 : 1};
    c.grid.length = {0.022, 0.018, v.dims == 3 ? 0.016 : 1.0};
    c.materials = {material("weak", 1.0, 1000, 1000), material("strong", 1e3, 2000, 700)};
    ShapeSpec shape;
    shape.kind = ShapeKind::where;
    shape.where = v.formula;
    c.regions = {region("weak"), region("strong", shape)};
    const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
    const auto fast = heatsim::solver::subgrid_materials(c, ids);
    const std::vector<double> fast_share = heatsim::solver::subgrid_fractions(c, shape, ids);
    shape.where = v.all_read;
    c.regions[1] = region("strong", shape);
    ASSERT_EQ(heatsim::solver::material_ids(c), ids) << v.formula;
    const auto full = heatsim::solver::subgrid_materials(c, ids);
    const std::vector<double> full_share = heatsim::solver::subgrid_fractions(c, shape, ids);
    ASSERT_EQ(fast.capacity.size(), full.capacity.size());
    std::size_t mixed_faces = 0, mixed_capacities = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ASSERT_EQ(fast.capacity[i], full.capacity[i]) << v.formula << ", node " << i;
      ASSERT_EQ(fast_share[i], full_share[i]) << v.formula << ", node " << i;
      mixed_capacities += fast.capacity[i] != 1e6 && fast.capacity[i] != 1.4e6;
    }
    for (int a = 0; a < v.dims; ++a) {
      ASSERT_EQ(fast.faces[a].size(), ids.size()) << v.formula;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        ASSERT_EQ(fast.faces[a][i], full.faces[a][i]) << v.formula << ", axis " << a;
        mixed_faces +=
            fast.faces[a][i] != 0.0 && fast.faces[a][i] != 1.0 && fast.faces[a][i] != 1e3;
      }
    }
    EXPECT_GT(mixed_faces, 0u) << v.formula << ": some faces cut by the surfaces";
    EXPECT_GT(mixed_capacities, 0u) << v.formula << ": some control volumes mixed";
  }
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// A ball void in the middle of a plate, in 2D and 3D, at spacings that do not divide its radius:
// its surface's elements mirror across the planes through its centre (a multiple of 4 around
// every circle), so its convective transfer does too. With an odd count (2D, 91 x 31 nodes) the
// nodes on either side took different shares (4870 against 4495 m^2/m^3), the field 6.8e-4 K
// from mirror-symmetric.
TEST(Void, ABallsSurfaceMirrorsAcrossItsCentre) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    Case c;
    c.grid.dims = dims;
    c.grid.n = dims == 2 ? std::array<std::int64_t, 3>{91, 31, 1}
                         : std::array<std::int64_t, 3>{31, 31, 13};
    c.grid.length = dims == 2 ? std::array<double, 3>{0.03, 0.01, 1.0}
                              : std::array<double, 3>{0.01, 0.01, 0.004};
    c.materials = {material("al", 200, 2700, 900)};
    heatsim::solver::RegionSpec v;
    v.is_void = true;
    v.surface.kind = BoundaryKind::convective;
    v.surface.transfer = 300.0;
    v.surface.value = 290.0;
    v.shape.kind = heatsim::solver::ShapeKind::ball;
    v.shape.center = dims == 2 ? std::array<double, 3>{0.015, 0.0047, 0}
                               : std::array<double, 3>{0.005, 0.005, 0.0021};
    v.shape.radius = dims == 2 ? 0.0021 : 0.0017;
    c.regions = {region("al"), v};
    const auto f = heatsim::solver::coefficient_fields(c);
    ASSERT_FALSE(f->transfer.empty());
    const std::int64_t nx = c.grid.n[0], ny = c.grid.n[1], nz = c.grid.n[2];
    double largest = 0.0, total = 0.0;
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          const std::size_t i = static_cast<std::size_t>((z * ny + y) * nx + x);
          const std::size_t mx = static_cast<std::size_t>((z * ny + y) * nx + (nx - 1 - x));
          total += f->transfer[i];
          largest = std::max(largest, std::abs(f->transfer[i] - f->transfer[mx]));
          if (dims == 3) {  // and across y, the ball centred there too
            const std::size_t my = static_cast<std::size_t>((z * ny + (ny - 1 - y)) * nx + x);
            largest = std::max(largest, std::abs(f->transfer[i] - f->transfer[my]));
          }
        }
    EXPECT_GT(total, 0.0);
    EXPECT_LT(largest, 1e-9 * 300.0 / 0.001) << "W/(m^3 K)";
  }
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// A copper ball centred in an epoxy cube (25^3 nodes, its radius 12 spacings): a sub-cell
// beyond the interface whose offsets from its node are equal on two axes goes to both
// neighbours in equal parts. Taken along the first axis, or along the one whose offset rounded
// larger, the capacities were neither mirror-symmetric (3.2e5 of 5.2e6 J/(m^3 K) apart) nor
// the same under a swap of axes, and the field was 2e-3 K from symmetric at 65^3.
TEST(Subgrid, ABallsCapacitiesAndSourcesKeepTheCubesSymmetry) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {25, 25, 25};
  c.grid.length = {0.04, 0.04, 0.04};
  c.materials = {material("epoxy", 0.2, 1200, 1100), material("copper", 400, 8960, 385)};
  heatsim::solver::RegionSpec ball = region("copper");
  ball.shape.kind = heatsim::solver::ShapeKind::ball;
  ball.shape.center = {0.02, 0.02, 0.02};
  ball.shape.radius = 0.01;
  c.regions = {region("epoxy"), ball};
  heatsim::solver::SourceSpec s;
  s.shape = ball.shape;
  s.power = 1.0;
  c.sources = {s};
  const auto f = heatsim::solver::coefficient_fields(c);
  ASSERT_EQ(f->sources.size(), 1u);
  const std::vector<double>& q = f->sources[0].density;
  const std::int64_t n = 25;
  double cap = 0.0, src = 0.0;
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        const auto at = [&](std::int64_t a, std::int64_t b, std::int64_t c3) {
          return static_cast<std::size_t>((c3 * n + b) * n + a);
        };
        const std::size_t i = at(x, y, z);
        for (const std::size_t j : {at(n - 1 - x, y, z), at(z, y, x), at(y, x, z)}) {
          cap = std::max(cap, std::abs(f->capacity[i] - f->capacity[j]));
          src = std::max(src, std::abs(q[i] - q[j]));
        }
      }
  EXPECT_LT(cap, 1e-9 * 8960.0 * 385.0) << "J/(m^3 K)";
  EXPECT_LT(src, 1e-9 * *std::max_element(q.begin(), q.end())) << "W/m^3";
}

}  // namespace
}  // namespace heatsim_tests

namespace heatsim_tests {
namespace {

// A plate-fin sink (README's heat_sink_3d: four gap voids between five fins, convective gaps
// and faces): the surfaces' laws per node are sums of shares of faces, and sums that should be
// 0 or equal left residues and last-bit variants (90 distinct transfers where 4 are meant:
// 171 node classes, beyond what a compact sweep holds). The shares are rounded so that the
// transfer and the surface source take only the values the geometry means.
TEST(Void, APlateFinSinksSurfaceLawsComeInAHandfulOfValues) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {81, 81, 49};
  c.grid.length = {0.04, 0.04, 0.024};
  c.materials = {material("al", 237.0, 2700, 900)};
  c.regions = {region("al")};
  for (const double x : {0.002, 0.0115, 0.021, 0.0305}) {
    heatsim::solver::RegionSpec gap;
    gap.is_void = true;
    gap.surface.kind = BoundaryKind::convective;
    gap.surface.transfer = 25.0;
    gap.surface.value = 298.15;
    gap.shape = box({x, 0.0, 0.004}, {x + 0.0075, 0.04, 0.024});
    c.regions.push_back(gap);
  }
  heatsim::solver::SourceSpec chip;
  chip.shape = box({0.015, 0.015, 0.0}, {0.025, 0.025, 0.001});
  chip.power = 10.0;
  c.sources = {chip};
  convective_faces(c, 25.0, 298.15, 4);  // z- insulated
  const auto f = heatsim::solver::coefficient_fields(c);
  ASSERT_FALSE(f->transfer.empty());
  // h A/V of a node: 0; h/(h/2) = 5e4 on a gap's wall; 2.5e4 where the gap's floor meets a
  // domain face; and -5e4 where a domain face's node lies in a gap's wall (the face's part
  // beyond the body taken back).
  const std::set<double> transfer(f->transfer.begin(), f->transfer.end());
  EXPECT_EQ(transfer, (std::set<double>{-5e4, 0.0, 2.5e4, 5e4}));
  for (const auto& s : f->sources) {
    if (!s.surface) continue;
    const std::set<double> density(s.density.begin(), s.density.end());
    EXPECT_LE(density.size(), 4u) << "the surfaces' source takes h A/V times the ambient";
  }
  const auto classes = heatsim::kernels::find_node_classes(
      *f, static_cast<std::int64_t>(f->capacity.size()), heatsim::kernels::kMaxNodeClasses, true);
  ASSERT_TRUE(classes.has_value());
  EXPECT_LE(classes->count(), 40);
}

}  // namespace
}  // namespace heatsim_tests
