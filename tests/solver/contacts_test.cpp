// Thermal contact resistance between materials (Case::contacts, solver/contacts.hpp): a layered
// wall of copper and silicon between two Dirichlet faces passes q = dT / (L1/k1 + R'' + L2/k2)
// and its temperature jumps by q R'' at the interface, exactly at the nodes in the steady state
// (each segment's series resistance is exact for piecewise-linear profiles), whether the
// interface lies halfway between two nodes, elsewhere between them or on a node, and whether
// the geometry is sampled below the grid (a box region) or given per node (a material map);
// along y as along x, with an anisotropic material; explicit steps and backward Euler settle
// on the same field; the heat-flow report balances; a contact of 0 changes nothing, bit for
// bit; and the explicit stability limit does not shrink.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/registry.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"
#include "tests/kirchhoff_series.hpp"

namespace heatsim_tests {
namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::solver::Case;
namespace mg = heatsim::solver::multigrid;

constexpr double kLength = 0.03, kHot = 350.0, kCold = 300.0;
constexpr double kCopper = 400.0, kSilicon = 150.0;

// Copper on [0, interface], silicon beyond, along `axis` of a `dims`-D grid (31 nodes along
// it, h = 1 mm; 5 across, insulated); Dirichlet kHot at the axis's lower face, kCold at the
// upper one. `map`: the materials as a per-node map (interface halfway between the nodes
// either side of `interface`) instead of a box. Silicon is anisotropic in 2D (k across 30).
Case wall(double interface, double R, int dims = 1, int axis = 0, bool map = false) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = {5, 5, dims == 3 ? 5 : 1};
  c.grid.length = {0.004, 0.004, dims == 3 ? 0.004 : 1.0};
  c.grid.n[axis] = 31;
  c.grid.length[axis] = kLength;
  if (dims == 1) c.grid.n[1] = 1;
  c.materials = {material("copper", kCopper, 8900, 385), material("silicon", kSilicon, 2330, 700)};
  if (dims >= 2) {
    c.materials[1].axes = {30.0, 30.0, 30.0};
    c.materials[1].axes[axis] = kSilicon;
  }
  if (map) {
    heatsim::solver::RegionSpec r;
    r.shape.kind = heatsim::solver::ShapeKind::file;
    r.ids = {{1, "copper"}, {2, "silicon"}};
    const std::int64_t points = c.grid.n[0] * c.grid.n[1] * c.grid.n[2];
    for (std::int64_t i = 0; i < points; ++i) {
      const std::int64_t along = axis == 0   ? i % c.grid.n[0]
                                 : axis == 1 ? i / c.grid.n[0] % c.grid.n[1]
                                             : i / (c.grid.n[0] * c.grid.n[1]);
      r.map.push_back(static_cast<double>(along) * 1e-3 < interface ? 1 : 2);
    }
    c.regions = {r};
  } else {
    std::array<double, 3> upper{1.0, 1.0, 1.0};
    upper[axis] = interface;
    c.regions = {region("silicon"), region("copper", box({0, 0, 0}, upper))};
  }
  if (R >= 0.0) c.contacts = {{{"copper", "silicon"}, R}};
  for (int f = 0; f < 2 * dims; ++f) c.boundary[f].kind = BoundaryKind::neumann;
  c.boundary[2 * axis].kind = BoundaryKind::dirichlet;
  c.boundary[2 * axis].value = kHot;
  c.boundary[2 * axis + 1].kind = BoundaryKind::dirichlet;
  c.boundary[2 * axis + 1].value = kCold;
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

double flux(double interface, double R) {
  return (kHot - kCold) / (interface / kCopper + R + (kLength - interface) / kSilicon);
}

std::vector<double> implicit_field(const Case& c, heatsim::solver::TimeMethod method, double dt,
                                   int steps) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, dt, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  mg::ImplicitStepper stepper(p, fields, method, dt,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  std::vector<double> u(static_cast<std::size_t>(p.points()), kCold);
  heatsim::solver::set_dirichlet_nodes(c, u);
  for (int s = 0; s < std::max(steps, 1); ++s) stepper.advance(u, s);
  return u;
}

std::vector<double> steady_field(const Case& c) {
  return implicit_field(c, heatsim::solver::TimeMethod::steady, 0.0, 1);
}

// The node index of position `q` along `axis` on the middle line across it (in 1D, q).
std::size_t node(const Case& c, int axis, int q) {
  std::array<std::int64_t, 3> at{0, 0, 0};
  for (int a = 0; a < c.grid.dims; ++a) at[a] = a == axis ? q : 2;
  return static_cast<std::size_t>((at[2] * c.grid.n[1] + at[1]) * c.grid.n[0] + at[0]);
}

// The exact profile at every node, and the jump extrapolated from the nodes either side.
void expect_exact(const Case& c, const std::vector<double>& u, double interface, double R, int axis,
                  bool node_on_copper_side) {
  const double q = flux(interface, R), h = 1e-3;
  for (int k = 0; k < 31; ++k) {
    const double x = k * h;
    const bool copper = x < interface - 1e-12 || (node_on_copper_side && x <= interface + 1e-12);
    const double exact = copper ? kHot - q * x / kCopper : kCold + q * (kLength - x) / kSilicon;
    EXPECT_NEAR(u[node(c, axis, k)], exact, 1e-9 * (kHot - kCold)) << "node " << k;
  }
  // Flux through the first segment (all copper), and the jump at the interface.
  const double q_nodes = kCopper * (u[node(c, axis, 0)] - u[node(c, axis, 1)]) / h;
  EXPECT_NEAR(q_nodes, q, 1e-9 * q);
  int last = 0;  // the last copper node
  while ((last + 1) * h < interface - 1e-12 ||
         (node_on_copper_side && (last + 1) * h <= interface + 1e-12))
    ++last;
  const double left = u[node(c, axis, last)] - q * (interface - last * h) / kCopper;
  const double right = u[node(c, axis, last + 1)] + q * ((last + 1) * h - interface) / kSilicon;
  EXPECT_NEAR(left - right, q * R, 1e-9 * std::max(q * R, kHot - kCold));
}

TEST(Contacts, SteadyWallMatchesTheSeriesResistanceAndJump) {
  const double R = 1e-4;
  // Halfway between nodes 10 and 11, a third of the way from 10 to 11, and on node 10 (which
  // the copper box holds: the contact lies on the face toward silicon).
  for (double interface : {0.0105, 0.0103, 0.010}) {
    SCOPED_TRACE(interface);
    const Case c = wall(interface, R);
    expect_exact(c, steady_field(c), interface, R, 0, true);
  }
  // A material map: the interface halfway between nodes.
  const Case m = wall(0.0105, R, 1, 0, true);
  expect_exact(m, steady_field(m), 0.0105, R, 0, false);
  // Without the contact the same wall gives q without R'' (the test can tell them apart).
  const Case none = wall(0.0105, -1.0);
  expect_exact(none, steady_field(none), 0.0105, 0.0, 0, false);
}

// The interface on a node plane that the silicon box's lower bound puts there (the node is
// silicon's), at spacings where the lower node's x + h rounds below the bound (0.012 against
// 35 h + h = 0.011999999999999999 at 91 nodes over 30 mm, and at 271): the face between the
// two still takes the contact. It was left out there (the lower node, its neighbourhood judged
// clear of the box, kept its own k): 1211 W/m through a composite wall where 671 was right.
TEST(Contacts, AContactOnANodePlaneHoldsWhereverTheSpacingRounds) {
  const double R = 1e-3, interface = 0.012;
  for (int n : {31, 91, 271, 811}) {
    SCOPED_TRACE(n);
    Case c = wall(interface, R);
    c.grid.n[0] = n;
    c.regions = {region("copper"), region("silicon", box({interface, 0, 0}, {kLength, 1, 1}))};
    const std::vector<double> u = steady_field(c);
    const double h = kLength / (n - 1);
    const double q = flux(interface, R);
    EXPECT_NEAR(kCopper * (u[0] - u[1]) / h, q, 1e-9 * q);
    // The silicon node on the plane: kCold plus the silicon's drop.
    const int on = static_cast<int>(std::lround(interface / h));
    EXPECT_NEAR(u[static_cast<std::size_t>(on)], kCold + q * (kLength - interface) / kSilicon,
                1e-9 * (kHot - kCold));
  }
}

// A wall of steel (k = 15) and aluminium (k = 200), 30 x 10 mm, 400 K and 300 K at its ends,
// R'' = 1e-3 between the two at x = 12.5 mm, both sides convective (h = 100 to 300 K): the
// interface meets the convective faces. Spacing h along both axes, the interface on a node plane
// (h = 0.5 mm / k) or halfway between two (h = 1 mm / k).
// `voids`: the same wall between two void layers 1 mm thick whose surfaces are convective
// (the domain 12 mm high, its y faces insulated, the x faces convective at h = 1e9, which the
// voids reaching them need).
Case side_cooled_wall(double h, bool voids = false) {
  Case c;
  c.grid.dims = 2;
  const double height = voids ? 0.012 : 0.01;
  c.grid.length = {0.03, height, 1.0};
  c.grid.n = {std::lround(0.03 / h) + 1, std::lround(height / h) + 1, 1};
  c.materials = {material("steel", 15, 7900, 500), material("aluminium", 200, 2700, 900)};
  c.regions = {region("steel"), region("aluminium", box({0.0125, 0, 0}, {0.03, height, 1}))};
  c.contacts = {{{"steel", "aluminium"}, 1e-3}};
  c.boundary[0].kind = c.boundary[1].kind =
      voids ? BoundaryKind::convective : BoundaryKind::dirichlet;
  c.boundary[0].transfer = c.boundary[1].transfer = 1e9;
  c.boundary[0].value = 400.0;
  c.boundary[1].value = 300.0;
  for (int f : {2, 3}) {
    c.boundary[f].kind = voids ? BoundaryKind::neumann : BoundaryKind::convective;
    c.boundary[f].transfer = voids ? 0.0 : 100.0;
    c.boundary[f].value = voids ? 0.0 : 300.0;
  }
  if (voids)
    for (const auto& [lo, hi] : {std::pair<double, double>{0.0, 0.001}, {0.011, 0.012}}) {
      heatsim::solver::RegionSpec v;
      v.is_void = true;
      v.surface.kind = BoundaryKind::convective;
      v.surface.transfer = 100.0;
      v.surface.value = 300.0;
      v.shape = box({0, lo, 0}, {0.03, hi, 1});
      c.regions.push_back(v);
    }
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

// The side-cooled wall with its interface on a node plane: the strip of the convective faces
// over the steel part of the interface nodes' control volumes passes heat at the steel's side
// of the contact (it goes with that part's capacity to the steel node across). The temperature
// on the face 5 mm into the steel converges at second order toward the halfway grids' answer
// (errors 8.2e-4, 1.1e-4 K at h = 0.5 and 0.167 mm); left at the aluminium node the strip
// made it first order (0.049, 0.015 K; the wall's heat flow 1.33, 0.45, 0.15 W/m off at 0.5,
// 0.167, 0.056 mm, now 0.10, 0.009, 0.0001).
// The same with the faces given as voids' surfaces (their strips assigned the same way): 0.049
// and 0.015 K before, as at the outer faces.
TEST(Contacts, AContactMeetingAConvectiveFaceOnANodePlaneConvergesAtSecondOrder) {
  for (bool voids : {false, true}) {
    SCOPED_TRACE(voids ? "void surfaces" : "outer faces");
    const auto face_temperature = [&](double h) {
      const Case c = side_cooled_wall(h, voids);
      const std::vector<double> u = steady_field(c);
      // (5 mm, 0) on the outer face (y = 0's row), (5 mm, 1 mm) on the void's surface.
      const std::int64_t row = voids ? std::lround(0.001 / h) : 0;
      return u[static_cast<std::size_t>(row * c.grid.n[0] + std::lround(0.005 / h))];
    };
    const double reference = face_temperature(1e-3 / 27);  // halfway, second order
    const double e1 = std::abs(face_temperature(0.5e-3) - reference);
    const double e3 = std::abs(face_temperature(0.5e-3 / 3) - reference);
    EXPECT_LT(e1, 2e-3);
    EXPECT_GT(e1 / e3, 6.0) << e1 << " " << e3;
  }
}

// A silicon layer over an aluminium base, 30 x 10 mm, the interface at `interface` with R'' =
// 1e-4 between, heated in the silicon over x in [10, 20] mm (100 W/m), cooled below (h = 1000)
// and above (h = 10) and at x = 0 (h = 500): heat flows along the interface into the base and
// out to the side. `al_first`: the base over everywhere and the layer a box over it; else the
// layer over everywhere and the base a box. h in mm = 1 / 3^level.
Case layer_on_base(double interface, int level, bool al_first) {
  Case c;
  c.grid.dims = 2;
  const std::int64_t n = 30 * static_cast<std::int64_t>(std::pow(3, level)) + 1;
  c.grid.n = {n, (n - 1) / 3 + 1, 1};
  c.grid.length = {0.03, 0.01, 1.0};
  c.materials = {material("al", 200, 2700, 900), material("si", 20, 2330, 700)};
  if (al_first)
    c.regions = {region("al"), region("si", box({0, interface, 0}, {0.03, 0.01, 1}))};
  else
    c.regions = {region("si"), region("al", box({0, 0, 0}, {0.03, interface, 1}))};
  c.contacts = {{{"si", "al"}, 1e-4}};
  heatsim::solver::SourceSpec src;
  src.shape = box({0.01, interface, 0}, {0.02, 0.01, 1});
  src.power_density = 100.0 / (0.01 * (0.01 - interface));
  c.sources = {src};
  const std::array<std::pair<int, double>, 3> cooled{{{0, 500.0}, {2, 1000.0}, {3, 10.0}}};
  for (const auto& [f, transfer] : cooled) {
    c.boundary[f].kind = BoundaryKind::convective;
    c.boundary[f].transfer = transfer;
    c.boundary[f].value = 300.0;
  }
  c.boundary[1].kind = BoundaryKind::neumann;
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

// Heat carried along a contact's interface on a node plane: the strip of each face along it
// that lies beyond the contact from the face's nodes (the base's half of a layer node's control
// volume) conducts at its own side's temperature, on the face of the nodes across the contact,
// as its heat capacity does. Left on the layer's face it conducted at the layer's temperature
// across the contact's jump: the temperature at (15, 8) mm converged at first order (304.1611,
// 304.2351, 304.2689 K at h = 1, 1/3, 1/9 mm; now 304.28946, 304.28847, 304.28834), and the
// regions listed in the other order, the node on the interface then the base's, met it from
// the other side (0.17, 0.058 K apart at 1, 1/3 mm; now 0.024, 0.0028).
TEST(Contacts, HeatAlongAContactOnANodePlaneConvergesAtSecondOrder) {
  const auto at_probe = [](int level, bool al_first) {
    const Case c = layer_on_base(0.006, level, al_first);
    const std::vector<double> u = steady_field(c);
    const std::int64_t per_mm = static_cast<std::int64_t>(std::pow(3, level));
    return u[static_cast<std::size_t>(8 * per_mm * c.grid.n[0] + 15 * per_mm)];
  };
  const double reference = at_probe(2, true);
  const double coarse = at_probe(0, true), fine = at_probe(1, true);
  const double e0 = std::abs(coarse - reference), e1 = std::abs(fine - reference);
  EXPECT_LT(e0, 5e-3);
  EXPECT_GT(e0 / e1, 6.0) << e0 << " " << e1;
  const double d0 = std::abs(coarse - at_probe(0, false)), d1 = std::abs(fine - at_probe(1, false));
  EXPECT_LT(d0, 0.05);
  EXPECT_GT(d0 / d1, 6.0) << d0 << " " << d1;
}

// A copper block (x < 6 mm, 2 < y < 4 mm, 100 W/m) on an aluminium base with R'' = 5e-5
// between, cooled below (h = 3000); beside the block a filler of k = 1e-6 with no contact to
// the aluminium, or a void. The interface lies on a node plane, whose nodes beyond the block are
// the filler's: the aluminium strips under the block's corner node and under the filler's nodes
// conducted from the copper's node to the filler's (at the aluminium's temperature) past the
// contact. Now the near-insulating filler gives the void's answer.
TEST(Contacts, AContactEndingBesideAFillerIsNotShortCircuited) {
  const auto block_top = [](double h, bool filler) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {std::lround(0.01 / h) + 1, std::lround(0.004 / h) + 1, 1};
    c.grid.length = {0.01, 0.004, 1.0};
    c.materials = {material("al", 237, 2700, 900), material("cu", 401, 8960, 385),
                   material("fill", 1e-6, 1900, 900)};
    heatsim::solver::RegionSpec beside = region("fill", box({0, 0.002, 0}, {0.01, 0.004, 1}));
    beside.is_void = !filler;
    const auto block = box({0, 0.002, 0}, {0.006, 0.004, 1});
    c.regions = {region("al"), beside, region("cu", block)};
    c.contacts = {{{"cu", "al"}, 5e-5}};
    heatsim::solver::SourceSpec src;
    src.shape = block;
    src.power = 100.0;
    c.sources = {src};
    for (auto& f : c.boundary) f.kind = BoundaryKind::neumann;
    c.boundary[2].kind = BoundaryKind::convective;
    c.boundary[2].transfer = 3000.0;
    c.boundary[2].value = 300.0;
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-13;
    const std::vector<double> u = steady_field(c);
    return u[static_cast<std::size_t>((c.grid.n[1] - 1) * c.grid.n[0])];  // (0, 4 mm)
  };
  for (double h : {0.5e-3, 0.25e-3}) {
    SCOPED_TRACE(h);
    const double filled = block_top(h, true), open = block_top(h, false);
    EXPECT_GT(open, 304.0);
    // 0.44 and 0.39 K apart before.
    EXPECT_NEAR(filled, open, 1e-4) << "K";
  }
}

// A copper square (or cube) [0, 6 mm]^d in aluminium (k = 20) with R'' = 1e-4 between, heated
// in the copper, cooled on the upper faces (h = 3000): its bounds on node planes, the regions
// listed so that those planes are the copper's (copper last) or the aluminium's (aluminium
// boxes last). The temperature at the origin.
double corner_case(int dims, double h, bool copper_last) {
  Case c;
  c.grid.dims = dims;
  const std::int64_t n = std::lround(0.01 / h) + 1;
  c.grid.n = {n, n, dims == 3 ? n : 1};
  c.grid.length = {0.01, 0.01, dims == 3 ? 0.01 : 1.0};
  c.materials = {material("al", 20, 2700, 900), material("cu", 401, 8960, 385)};
  const double top = dims == 3 ? 0.006 : 1.0;
  const auto square = box({0, 0, 0}, {0.006, 0.006, top});
  if (copper_last) {
    c.regions = {region("al"), region("cu", square)};
  } else {
    c.regions = {region("cu"), region("al", box({0.006, 0, 0}, {0.01, 0.01, 1})),
                 region("al", box({0, 0.006, 0}, {0.01, 0.01, 1}))};
    if (dims == 3) c.regions.push_back(region("al", box({0, 0, 0.006}, {0.01, 0.01, 0.01})));
  }
  c.contacts = {{{"cu", "al"}, 1e-4}};
  heatsim::solver::SourceSpec src;
  src.shape = square;
  src.power = dims == 3 ? 1.0 : 100.0;
  c.sources = {src};
  for (auto& f : c.boundary) f.kind = BoundaryKind::neumann;
  for (int a = 0; a < dims; ++a) {
    c.boundary[2 * a + 1].kind = BoundaryKind::convective;
    c.boundary[2 * a + 1].transfer = 3000.0;
    c.boundary[2 * a + 1].value = 300.0;
  }
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  const std::vector<double> u = steady_field(c);
  if (dims == 3) {  // the cube's field is the same under every swap of two axes
    double apart = 0.0;
    for (std::int64_t z = 0; z < n; ++z)
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) {
          const auto at = [&](std::int64_t a, std::int64_t b, std::int64_t d) {
            return static_cast<std::size_t>((d * n + b) * n + a);
          };
          for (const std::size_t j : {at(y, x, z), at(z, y, x), at(x, z, y)})
            apart = std::max(apart, std::abs(u[at(x, y, z)] - u[j]));
        }
    EXPECT_LT(apart, 1e-8) << "K from symmetric, h = " << h;
  }
  return u[0];
}

// The square's corner node on the aluminium's planes: the copper strip along the square's side
// in the aluminium nodes' control volumes conducted between aluminium nodes past the contact
// (first order, 304.2217, 304.1849, 304.1671 K at h = 0.5, 0.25, 0.125 mm against the copper's
// planes' 304.1545, 304.1512, 304.1505); it now goes to the copper node's face with the
// contact at its end, and both orders converge at second order to one answer. The cube: the
// aluminium's planes 0.13 K from the copper's at 0.5 mm (now 0.03), and the copper's planes'
// field 8.5e-3 K from symmetric under a swap of axes (a line at equal offsets across two
// axes went to the first one's face; now to both in halves).
TEST(Contacts, ACornerOnTheOtherMaterialsNodePlanesConvergesAtSecondOrder) {
  const double copper[3] = {corner_case(2, 0.5e-3, true), corner_case(2, 0.25e-3, true),
                            corner_case(2, 0.125e-3, true)};
  const double al[3] = {corner_case(2, 0.5e-3, false), corner_case(2, 0.25e-3, false),
                        corner_case(2, 0.125e-3, false)};
  for (const double* v : {copper, al}) {
    const double d1 = v[0] - v[1], d2 = v[1] - v[2];
    EXPECT_GT(d1 / d2, 3.0) << v[0] << " " << v[1] << " " << v[2];
  }
  EXPECT_LT(std::abs(copper[2] - al[2]), 3e-3);
  const double cube_copper = corner_case(3, 0.5e-3, true), cube_al = corner_case(3, 0.5e-3, false);
  EXPECT_LT(std::abs(cube_copper - cube_al), 0.05);
}

// A copper foil (k = 400, 0.06 mm at y = 2.02 mm) between two k = 5 layers of a 10 x 4 mm
// plate, R'' = 1e-4 below it and 2e-4 above, heated below at one end (50 W/m), cooled on top:
// the foil spreads the heat. With no node in it, its lines lay on the lower layer's faces and
// spread heat at the lower nodes' temperature, past the lower contact; they now go in part to
// the upper layer's faces, as the resistances from the nodes either side put the foil's
// temperature. The hot spot, against a grid with a node in the foil (h = 1/16 mm): 0.60 and
// 0.58 K low at h = 0.5 and 0.25 mm before, 0.38 and 0.33 now (exact only with a node in it).
TEST(Contacts, AFoilBetweenTwoContactsSpreadsHeatBetweenItsSides) {
  const auto hot = [](double h) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {std::lround(0.01 / h) + 1, std::lround(0.004 / h) + 1, 1};
    c.grid.length = {0.01, 0.004, 1.0};
    c.materials = {material("lower", 5, 1000, 1000), material("foil", 400, 1000, 1000),
                   material("upper", 5, 1000, 1000)};
    c.regions = {region("lower"), region("foil", box({0, 0.00202, 0}, {0.01, 0.00208, 1})),
                 region("upper", box({0, 0.00208, 0}, {0.01, 0.004, 1}))};
    c.contacts = {{{"lower", "foil"}, 1e-4}, {{"foil", "upper"}, 2e-4}};
    heatsim::solver::SourceSpec src;
    src.shape = box({0, 0, 0}, {0.002, 0.00202, 1});
    src.power = 50.0;
    c.sources = {src};
    for (auto& f : c.boundary) f.kind = BoundaryKind::neumann;
    c.boundary[3].kind = BoundaryKind::convective;
    c.boundary[3].transfer = 2000.0;
    c.boundary[3].value = 300.0;
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-13;
    return steady_field(c)[0];
  };
  const double resolved = hot(0.0625e-3);
  EXPECT_GT(resolved, 312.0);
  for (double h : {0.5e-3, 0.25e-3}) EXPECT_LT(std::abs(hot(h) - resolved), 0.45) << "h = " << h;
}

// A copper disc of radius 8 spacings centred on a node in epoxy, R'' = 1e-4 at its surface, so
// that the surface passes through the four pole nodes: written as 0.004 or as 0.004 (1 - 1e-12)
// (the rounding of a radius computed from other numbers), the field is the same and
// mirror-symmetric. With the smaller radius the surface lay 4e-15 m beyond the neighbourhood of
// the node before the -x pole, which was therefore not sampled: its face to the pole node held
// no contact, the +x one's did (1.4e-3 K from symmetric, at every grid size).
TEST(Contacts, ADiscThroughItsPoleNodesTakesTheContactOnEverySide) {
  const auto field = [](double radius) {
    Case c;
    c.grid.dims = 2;
    c.grid.n = {41, 41, 1};
    c.grid.length = {0.02, 0.02, 1.0};
    c.materials = {material("epoxy", 1.0, 1200, 1000), material("cu", 400, 8960, 385)};
    heatsim::solver::RegionSpec disc = region("cu");
    disc.shape.kind = heatsim::solver::ShapeKind::ball;
    disc.shape.center = {0.01, 0.01, 0};
    disc.shape.radius = radius;
    c.regions = {region("epoxy"), disc};
    c.contacts = {{{"cu", "epoxy"}, 1e-4}};
    heatsim::solver::SourceSpec src;
    src.shape = disc.shape;
    src.power = 1.0;
    c.sources = {src};
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::dirichlet;
      f.value = 300.0;
    }
    c.time.method = heatsim::solver::TimeMethod::steady;
    c.time.tolerance = 1e-13;
    return steady_field(c);
  };
  const std::vector<double> exact = field(0.004), rounded = field(0.004 * (1 - 1e-12));
  double apart = 0.0, mirror = 0.0;
  for (std::int64_t y = 0; y < 41; ++y)
    for (std::int64_t x = 0; x < 41; ++x) {
      const std::size_t i = static_cast<std::size_t>(y * 41 + x);
      apart = std::max(apart, std::abs(exact[i] - rounded[i]));
      mirror = std::max(mirror,
                        std::abs(rounded[i] - rounded[static_cast<std::size_t>(y * 41 + 40 - x)]));
    }
  EXPECT_GT(exact[20 * 41 + 20], 300.1);
  EXPECT_LT(apart, 1e-9) << "K";
  EXPECT_LT(mirror, 1e-9) << "K";
}

// The wall with a source q in its copper, the contact R'' at `interface`, at n nodes: the
// largest node error against the closed form. Copper: T = kHot + A x - q x^2 / (2 k_c); the flux
// f(s) = q s - k_c A crosses R'' and the silicon to kCold: T_c(s) = kCold + f(s) (R'' + (L - s)
// / k_s).
double largest_error_with_source(double interface, double R, double q, int n) {
  const double s = interface, r = R + (kLength - s) / kSilicon;
  const double A = (kCold + q * s * r - kHot + q * s * s / (2 * kCopper)) / (s + kCopper * r);
  const double f = q * s - kCopper * A;
  const auto exact = [&](double x) {
    return x < s ? kHot + A * x - q * x * x / (2 * kCopper) : kCold + f * (kLength - x) / kSilicon;
  };
  Case c = wall(s, R);
  c.grid.n[0] = n;
  heatsim::solver::SourceSpec src;
  src.shape = box({0, 0, 0}, {s, 1, 1});
  src.power_density = q;
  c.sources = {src};
  const std::vector<double> u = steady_field(c);
  const double h = kLength / (n - 1);
  double worst = 0.0;
  for (int k = 0; k < n; ++k) worst = std::max(worst, std::abs(u[k] - exact(k * h)));
  return worst;
}

// A source in the copper beside the contact: the profile is quadratic there, so the nodes are
// no longer exact, but with the interface halfway between two nodes (no control volume cut by
// it, docs/case-format.md "contacts") the error falls at second order: 31 and 91 nodes (h = 1
// and 1/3 mm, the interface at 10.5 and 31.5 spacings) against the closed form.
TEST(Contacts, SourceBesideAHalfwayContactConvergesAtSecondOrder) {
  const double e31 = largest_error_with_source(0.0105, 2e-4, 2e9, 31);
  const double e91 = largest_error_with_source(0.0105, 2e-4, 2e9, 91);
  // The jump f R'' is 183 K: errors of 0.22 and 0.025 K, falling ninefold.
  EXPECT_GT(e31, 1e-3);
  EXPECT_LT(e31, 0.5);
  EXPECT_GT(e31 / e91, 8.0) << e31 << " " << e91;
  EXPECT_LT(e31 / e91, 10.0) << e31 << " " << e91;
}

// A control volume the interface cuts: the part beyond the contact holds its heat for the node
// across it, so that heat crosses R'' as it does in the body. The interface a quarter spacing
// past node 10 (copper): node 10 keeps its copper three quarters, node 11 (silicon) takes the
// silicon quarter beside its own whole volume; the total stays. Without the contact (and with
// R'' = 0) node 11 takes the share w of the part that its resistance from node 10 (0.25 mm of
// copper, 0.125 of silicon to its centre) is of the whole (0.625 mm of silicon more to node 11).
TEST(Contacts, APartBeyondTheContactGoesToTheNodeAcrossIt) {
  const double copper = 8900.0 * 385, silicon = 2330.0 * 700;
  for (double R : {1e-4, 0.0, -1.0}) {
    SCOPED_TRACE(R);
    const Case c = wall(0.01025, R);
    const auto ids = heatsim::solver::material_ids(c);
    const auto sampled = heatsim::solver::subgrid_materials(c, ids);
    const std::vector<double>& C = sampled.capacity;
    const double Ri = 0.25 / kCopper + 0.125 / kSilicon, Rj = 0.625 / kSilicon;
    const double w = R > 0.0 ? 1.0 : Ri / (Ri + Rj);
    EXPECT_NEAR(C[10], 0.75 * copper + 0.25 * (1.0 - w) * silicon, 1e-9 * copper);
    EXPECT_NEAR(C[11], (1.0 + 0.25 * w) * silicon, 1e-9 * silicon);
    EXPECT_NEAR(C[9], copper, 1e-9 * copper);
    EXPECT_NEAR(C[12], silicon, 1e-9 * silicon);
  }
}

// A source in the copper beside a contact a quarter spacing before a node (silicon) at 31 and
// 151 nodes (10.75 and 53.75 spacings), so that the node's control volume holds a part of the
// heated copper: second order, the error falling 25-fold (it fell 5-fold, first order, while
// that part heated the silicon node without crossing R'': 35.8 and 7.2 K; now 0.50 and
// 0.020 K).
TEST(Contacts, SourceBesideAContactBetweenNodesConvergesAtSecondOrder) {
  const double e31 = largest_error_with_source(0.01075, 2e-4, 2e9, 31);
  const double e151 = largest_error_with_source(0.01075, 2e-4, 2e9, 151);
  std::printf("largest node errors %.4g K (31 nodes), %.4g K (151 nodes)\n", e31, e151);
  EXPECT_LT(e31, 1.0);
  EXPECT_GT(e31 / e151, 20.0) << e31 << " " << e151;
  EXPECT_LT(e31 / e151, 30.0) << e31 << " " << e151;
}

// 2D and 3D: the wall along x, y and z, silicon anisotropic (30 across), the interface halfway
// between nodes and on a node plane; every line along the axis has the 1D profile.
TEST(Contacts, SteadyWallAlongEveryAxis) {
  const double R = 2e-5;
  for (int dims : {2, 3})
    for (int axis = 0; axis < dims; ++axis)
      for (double interface : {0.0105, 0.010})
        for (bool map : {false, true}) {
          if (map && interface == 0.010) continue;  // a map's interface lies between nodes
          SCOPED_TRACE(testing::Message() << dims << "D, axis " << axis << ", interface "
                                          << interface << (map ? ", map" : ", box"));
          const Case c = wall(interface, R, dims, axis, map);
          const std::vector<double> u = steady_field(c);
          expect_exact(c, u, interface, R, axis, !map);
          // Every node equals the middle line's at its position along the axis (insulated
          // sides, a planar interface).
          const std::int64_t n0 = c.grid.n[0], n1 = c.grid.n[1];
          for (std::size_t i = 0; i < u.size(); ++i) {
            const std::int64_t at[3] = {static_cast<std::int64_t>(i) % n0,
                                        static_cast<std::int64_t>(i) / n0 % n1,
                                        static_cast<std::int64_t>(i) / (n0 * n1)};
            EXPECT_NEAR(u[i], u[node(c, axis, static_cast<int>(at[axis]))], 1e-10 * (kHot - kCold))
                << "node " << i;
          }
        }
}

// Where a box bound splits a face's cross-section, each piece takes the contacts its own line
// crosses: copper over x <= b, y <= 1.2 mm on silicon (2D, h = 1 mm). The x face from node
// (10, 1) (copper) to (11, 1) (silicon) has 0.7 mm of its 1 mm cross-section beside the copper
// (a line copper then silicon: the contact in series) and 0.3 mm above it (silicon alone).
TEST(Contacts, SplitFaceTakesTheContactPieceByPiece) {
  const double R = 1e-4, h = 1e-3;
  for (double b : {0.0105, 0.010}) {
    SCOPED_TRACE(b);
    Case c = wall(b, R, 2, 0, false);
    c.materials[1].axes = {0.0, 0.0, 0.0};  // isotropic silicon
    c.regions[1].shape.upper[1] = 0.0012;
    const auto ids = heatsim::solver::material_ids(c);
    const auto fields = heatsim::solver::coefficient_fields(c, ids);
    const std::int64_t n0 = c.grid.n[0], i = 1 * n0 + 10;
    ASSERT_EQ(ids[static_cast<std::size_t>(i)], 0);      // copper
    ASSERT_EQ(ids[static_cast<std::size_t>(i + 1)], 1);  // silicon
    // The line beside the copper: copper from x = 10 h to b, silicon to 11 h, R'' between.
    // The silicon above the box (1.2 to 1.5 h) lies beyond the box's contact from node i: its
    // strip conducts at the silicon's temperature, on the face of the nodes above (1.3 spacings
    // of silicon there).
    const double beside = h / ((b - 10 * h) / kCopper + (11 * h - b) / kSilicon + R);
    EXPECT_NEAR(fields->face(0, i, i + 1), 0.7 * beside, 1e-12 * kCopper);
    EXPECT_NEAR(fields->face(0, i + n0, i + n0 + 1), 1.3 * kSilicon, 1e-12 * kCopper);
    // The face before it: copper throughout beside the box, its silicon strip above too.
    EXPECT_NEAR(fields->face(0, i - 1, i), 0.7 * kCopper, 1e-12 * kCopper);
    EXPECT_NEAR(fields->face(0, i + n0 - 1, i + n0), 1.3 * kSilicon, 1e-12 * kCopper);
    // Along y from (10, 1) to (10, 2): copper to 1.2 mm, silicon beyond, R'' between, over the
    // cross-section [9.5, min(b, 10.5)] x of copper. The rest, silicon throughout, lies beyond
    // the wall's contact from node i: on the face beside, from (11, 1) to (11, 2).
    const double copper_width = std::min(b, 10.5 * h) - 9.5 * h;
    const double up = h / (0.2 * h / kCopper + 0.8 * h / kSilicon + R);
    EXPECT_NEAR(fields->face(1, i, i + n0), copper_width * up / h, 1e-12 * kCopper);
    EXPECT_NEAR(fields->face(1, i + 1, i + 1 + n0), (2 * h - copper_width) * kSilicon / h,
                1e-12 * kCopper);
  }
}

// Explicit steps (dt a little under the limit) and backward Euler both settle on the steady
// field; the limit with a contact is no smaller than without (R'' only lowers conductance).
TEST(Contacts, TransientRunsSettleOnTheSteadyField) {
  const double R = 1e-4;
  for (bool map : {false, true}) {
    SCOPED_TRACE(map ? "map" : "box");
    Case c = wall(0.0105, R, 1, 0, map);
    const std::vector<double> steady = steady_field(c);
    auto fields = heatsim::solver::coefficient_fields(c);
    const double limit = heatsim::solver::field_stability(c, *fields).dt_limit;
    const Case plain = wall(0.0105, -1.0, 1, 0, map);
    const double plain_limit =
        heatsim::solver::field_stability(plain, *heatsim::solver::coefficient_fields(plain))
            .dt_limit;
    EXPECT_GE(limit, plain_limit);
    ASSERT_TRUE(std::isfinite(limit) && limit > 0.0);

    c.time.method = heatsim::solver::TimeMethod::explicit_euler;
    const double dt = 0.9 * limit;
    const auto p = heatsim::solver::make_problem(c, dt, fields);
    auto backend = heatsim::kernels::make_cpu_backend(p.precision);
    backend->setup(p);
    std::vector<double> u(steady.size(), kCold);
    heatsim::solver::set_dirichlet_nodes(c, u);
    backend->upload(u);
    backend->advance(static_cast<std::int64_t>(300.0 / dt), 0);  // many time constants
    backend->download(u);
    for (std::size_t i = 0; i < u.size(); ++i)
      EXPECT_NEAR(u[i], steady[i], 1e-9 * (kHot - kCold)) << "node " << i;

    // Backward Euler and BDF2 with steps far beyond the time constants; Crank-Nicolson (not
    // L-stable) with steps that damp its stiffest mode by 0.84 a step, over 300 s.
    using heatsim::solver::TimeMethod;
    const struct {
      TimeMethod method;
      double dt;
      int steps;
    } runs[] = {{TimeMethod::backward_euler, 1e6, 4},
                {TimeMethod::bdf2, 1e6, 4},
                {TimeMethod::crank_nicolson, 0.05, 6000}};
    for (const auto& run : runs) {
      c.time.method = run.method;
      const std::vector<double> v = implicit_field(c, run.method, run.dt, run.steps);
      for (std::size_t i = 0; i < v.size(); ++i)
        EXPECT_NEAR(v[i], steady[i], 1e-9 * (kHot - kCold))
            << "node " << i << ", method " << static_cast<int>(run.method);
    }
  }
}

// The heat-flow report at the steady state: q in at x-, q out at x+, balanced.
TEST(Contacts, HeatFlowsBalance) {
  const double R = 1e-4;
  const Case c = wall(0.0103, R, 2, 0, false);
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, 1.0, fields);
  const std::vector<double> u = steady_field(c);
  const auto surfaces = heatsim::solver::void_surfaces(c, heatsim::solver::material_ids(c));
  const heatsim::solver::HeatFlowMeter meter(c, p, fields, surfaces);
  const heatsim::solver::HeatFlowReport flows = meter.report(u, 0.0);
  const double q = flux(0.0103, R) * 0.004;  // W per metre of depth over the 4 mm face
  ASSERT_GE(flows.flows.size(), 2u);
  EXPECT_NEAR(flows.flows[0].rate, q, 1e-9 * q) << flows.flows[0].what;
  EXPECT_NEAR(flows.flows[1].rate, -q, 1e-9 * q) << flows.flows[1].what;
  EXPECT_LT(std::abs(flows.imbalance), 1e-10 * flows.largest);
}

// A contact of 0 is no contact: the same fields and the same steady and explicit results, bit
// for bit, with the geometry sampled or mapped.
TEST(Contacts, ZeroResistanceIsBitIdenticalToNone) {
  for (bool map : {false, true}) {
    SCOPED_TRACE(map ? "map" : "box");
    Case zero = wall(0.0103, 0.0, 2, 0, map), none = wall(0.0103, -1.0, 2, 0, map);
    const auto fz = heatsim::solver::coefficient_fields(zero);
    const auto fn = heatsim::solver::coefficient_fields(none);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(fz->faces[a], fn->faces[a]) << "axis " << a;
    EXPECT_EQ(steady_field(zero), steady_field(none));
    std::vector<double> out[2];
    int k = 0;
    for (Case* c : {&zero, &none}) {
      c->time.method = heatsim::solver::TimeMethod::explicit_euler;
      auto f = heatsim::solver::coefficient_fields(*c);
      const auto p = heatsim::solver::make_problem(*c, 1e-3, f);
      auto backend = heatsim::kernels::make_cpu_backend(p.precision);
      backend->setup(p);
      std::vector<double> u(static_cast<std::size_t>(p.points()), kCold);
      heatsim::solver::set_dirichlet_nodes(*c, u);
      backend->upload(u);
      backend->advance(500, 0);
      backend->download(out[k++]);
    }
    EXPECT_EQ(out[0], out[1]);
  }
}

// What the solver refuses itself (io/ reports the same with lines first).
TEST(Contacts, TableRefusesBadPairs) {
  Case c = wall(0.0105, 1e-4);
  c.contacts.push_back({{"silicon", "copper"}, 2e-4});
  EXPECT_THROW(heatsim::solver::coefficient_fields(c), std::invalid_argument);
  c = wall(0.0105, 1e-4);
  c.contacts[0].between[1] = "copper";
  EXPECT_THROW(heatsim::solver::coefficient_fields(c), std::invalid_argument);
  c = wall(0.0105, -2.0);
  c.contacts = {{{"copper", "silicon"}, -1e-4}};
  EXPECT_THROW(heatsim::solver::coefficient_fields(c), std::invalid_argument);
}

// A temperature-dependent conductivity: each material's part of a contact face conducts by its
// own k(T) between the temperatures at its ends (its Kirchhoff transform), the contact's part
// stays (kernels::series_face; at equal node temperatures the parts scale with k(T)/k_ref).
// Copper's k falls from 400 at 300 K to 200 at 400 K.
Case hot_wall(double interface, double R) {
  Case c = wall(interface, R);
  c.materials[0].conductivity_table = {{300.0, 400.0}, {400.0, 200.0}};
  c.boundary[0].value = 400.0;
  return c;
}
double copper_k(double T) { return 400.0 - 2.0 * (std::clamp(T, 300.0, 400.0) - 300.0); }

TEST(Contacts, TemperatureDependentPartsScaleAndTheContactStays) {
  const double R = 1e-4, h = 1e-3;
  for (double interface : {0.0105, 0.0103}) {
    SCOPED_TRACE(interface);
    const Case c = hot_wall(interface, R);
    const auto fields = heatsim::solver::coefficient_fields(c);
    ASSERT_TRUE(fields->temperature);
    const auto& laws = *fields->temperature;
    const double copper = interface - 10 * h, silicon = 11 * h - interface;
    const double reference = fields->face(0, 10, 11);
    EXPECT_NEAR(reference, h / (copper / 400.0 + R + silicon / kSilicon), 1e-12 * reference);
    for (double T : {300.0, 350.0, 390.0}) {
      const double exact =
          series_face_reference(copper, 400.0, -2.0, 300.0, R, silicon, kSilicon, T, 320.0);
      EXPECT_NEAR(laws.face(0, 10, 11, reference, T, 320.0), exact, 1e-9 * exact) << T;
    }
    // At equal temperatures, the parts at that temperature's k.
    const double level = h / (copper / copper_k(350.0) + R + silicon / kSilicon);
    EXPECT_NEAR(laws.face(0, 10, 11, reference, 350.0, 350.0), level, 1e-12 * level);
    // Steady (Picard iterations on the multigrid solve): the flux through the contact face
    // equals silicon's and copper's beside it.
    const std::vector<double> u = steady_field(c);
    const double q_silicon = kSilicon * (u[12] - u[13]) / h;
    const double q_contact = series_face_reference(copper, 400.0, -2.0, 300.0, R, silicon,
                                                   kSilicon, u[10], u[11]) *
                             (u[10] - u[11]) / h;
    EXPECT_NEAR(q_contact, q_silicon, 1e-8 * q_silicon);
    const double q_copper =
        laws.face(0, 9, 10, fields->face(0, 9, 10), u[9], u[10]) * (u[9] - u[10]) / h;
    EXPECT_NEAR(q_copper, q_silicon, 1e-8 * q_silicon);
    // The copper side is hotter than a constant 400 would leave it (k falls with T).
    const std::vector<double> constant = steady_field(wall(interface, R));
    EXPECT_GT(u[5], constant[5]);
  }
}

// Explicit steps evaluate the same contact face: one step from a field across the interface.
TEST(Contacts, TemperatureDependentExplicitStep) {
  const double R = 1e-4, h = 1e-3;
  Case c = hot_wall(0.0105, R);
  c.time.method = heatsim::solver::TimeMethod::explicit_euler;
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double dt = 0.5 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const auto p = heatsim::solver::make_problem(c, dt, fields);
  auto backend = heatsim::kernels::make_cpu_backend(p.precision);
  backend->setup(p);
  std::vector<double> u(31);
  for (int k = 0; k < 31; ++k) u[k] = 400.0 - 3.0 * k - (k > 10 ? 20.0 : 0.0);
  backend->upload(u);
  backend->advance(1, 0);
  std::vector<double> next;
  backend->download(next);
  const auto& laws = *fields->temperature;
  const double left = laws.face(0, 9, 10, fields->face(0, 9, 10), u[9], u[10]);
  const double contact =
      series_face_reference(0.5 * h, 400.0, -2.0, 300.0, R, 0.5 * h, kSilicon, u[10], u[11]);
  const double change =
      dt / (8900.0 * 385.0) * (left * (u[9] - u[10]) + contact * (u[11] - u[10])) / (h * h);
  EXPECT_NEAR(next[10] - u[10], change, 1e-10 * std::abs(change));
  const double right = kSilicon;
  const double change11 =
      dt / (2330.0 * 700.0) * (contact * (u[10] - u[11]) + right * (u[12] - u[11])) / (h * h);
  EXPECT_NEAR(next[11] - u[11], change11, 1e-10 * std::abs(change11));
}

// A 10 x 10 mm silicon die (60 W) in air on a copper base behind a contact, its box 0.13 of a
// spacing off the node planes in x and in y: the air node just outside the die's corner holds
// a corner piece of silicon (and its source) in its control volume, with no axis neighbour of
// silicon and no contact between air and silicon. The piece stayed with the air node while the
// lines ending in silicon moved away: that node reached 543.68 K against the die's 488.10 K.
// Such a piece goes whole to the diagonal silicon node, as it does beyond a contact: no air
// node is hotter than the die, and the die's peak is the unshifted die's to 0.1 K.
TEST(Contacts, ADieCornerPieceInAnAirNodeGoesToTheDieDiagonally) {
  const auto peaks = [](double shift) {
    Case c;
    c.grid.dims = 3;
    c.grid.n = {41, 41, 21};
    c.grid.length = {0.02, 0.02, 0.005};
    c.materials = {material("cu", 400, 8960, 385), material("si", 62, 2329, 700),
                   material("air", 0.03, 1.2, 1000)};
    const double lo = 0.005 + shift * 0.0005, hi = lo + 0.01;
    c.regions = {region("air"), region("cu", box({0, 0, 0}, {0.02, 0.02, 0.003})),
                 region("si", box({lo, lo, 0.003}, {hi, hi, 0.0035}))};
    c.contacts = {{{"si", "cu"}, 5e-5}};
    heatsim::solver::SourceSpec q;
    q.shape = box({lo, lo, 0.003}, {hi, hi, 0.0035});
    q.power = 60.0;
    c.sources = {q};
    for (auto& f : c.boundary) {
      f.kind = BoundaryKind::neumann;
      f.value = 0.0;
    }
    c.boundary[4].kind = BoundaryKind::convective;
    c.boundary[4].transfer = 1000.0;
    c.boundary[4].value = 300.0;
    const std::vector<double> u = steady_field(c);
    const auto ids = heatsim::solver::material_ids(c);
    double air = 0.0, si = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (ids[i] == 1) si = std::max(si, u[i]);
      if (ids[i] == 2) air = std::max(air, u[i]);
    }
    return std::array<double, 2>{si, air};
  };
  const std::array<double, 2> on = peaks(0.0), off = peaks(0.13);
  EXPECT_LE(off[1], off[0]) << "an air node hotter than the die";
  EXPECT_NEAR(off[0], on[0], 0.1);
}

}  // namespace
}  // namespace heatsim_tests
