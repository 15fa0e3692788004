// Thermal contact resistance on a curved interface (solver/contacts.hpp): a link along axis a
// that crosses a surface of normal n takes the contact over its share |n_a|, so that the
// staircase of faces a ball's surface crosses conducts as the surface itself does.
//
// The check: a copper disc (2D) or ball (3D) of radius r0 in a plate, with a uniform source q
// inside, every outer face held at a fixed temperature. In the steady state the heat
// Q = q |disc| crosses the interface, so the mean normal flux over it is Q / |surface|, and the
// temperature jump the contact makes, R'' q_n, averages R'' q r0 / 2 over a circle and
// R'' q r0 / 3 over a sphere, whatever the (square) outer boundary does to its distribution.
//
// How the jump is read: the steady fields with the contact (u_R) and without it (u_0) solve
// the same equation on either side, so their difference is harmonic inside the disc and
// outside it, and inside its mean over a concentric disc is its mean over the interface (the
// mean-value property): there it is the mean of the inner side's rise, the jump plus the
// outer side's rise. The outer side's rise (the flux redistributed) is small and is read on a
// ring just outside (one to two spacings), and taken off. The nodes used lie a spacing or more
// from the surface, in one material each.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/contacts.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"
#include "tests/kirchhoff_series.hpp"

namespace heatsim_tests {
namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::solver::Case;
namespace mg = heatsim::solver::multigrid;

constexpr double kSide = 0.04, kAmbient = 300.0, kQ = 1e7;
constexpr double kCentre[3] = {0.0201, 0.0197, 0.0203};  // off the nodes' planes

heatsim::solver::ShapeSpec ball(double radius) {
  heatsim::solver::ShapeSpec s;
  s.kind = heatsim::solver::ShapeKind::ball;
  s.center = {kCentre[0], kCentre[1], kCentre[2]};
  s.radius = radius;
  return s;
}

// The ball as a `where` formula.
heatsim::solver::ShapeSpec where_ball(int dims, double radius) {
  heatsim::solver::ShapeSpec s;
  s.kind = heatsim::solver::ShapeKind::where;
  const char* names[3] = {"x", "y", "z"};
  for (int a = 0; a < dims; ++a) {
    char term[64];
    std::snprintf(term, sizeof term, "%s(%s - %.17g)^2", a ? " + " : "", names[a], kCentre[a]);
    s.where += term;
  }
  char bound[48];
  std::snprintf(bound, sizeof bound, " <= %.17g", radius * radius);
  s.where += bound;
  return s;
}

enum class Geometry { ball, where, map };

// n nodes per axis over kSide; copper (400) in a ball of radius r0, plate (20) around it. The
// ball given as a ball, as a `where` formula, or over a per-node map of plate (so that the
// materials are per node, not sampled below the grid).
Case disc(int dims, int n, double r0, double R, Geometry geometry = Geometry::ball) {
  Case c;
  c.grid.dims = dims;
  c.grid.n = {n, dims > 1 ? n : 1, dims > 2 ? n : 1};
  c.grid.length = {kSide, dims > 1 ? kSide : 1.0, dims > 2 ? kSide : 1.0};
  c.materials = {material("plate", 20.0, 7800, 500), material("copper", 400.0, 8900, 385)};
  c.regions = {region("plate"),
               region("copper", geometry == Geometry::where ? where_ball(dims, r0) : ball(r0))};
  if (geometry == Geometry::map) {
    heatsim::solver::RegionSpec m;
    m.shape.kind = heatsim::solver::ShapeKind::file;
    m.ids = {{1, "plate"}};
    m.map.assign(static_cast<std::size_t>(c.grid.n[0] * c.grid.n[1] * c.grid.n[2]), 1.0);
    c.regions[0] = m;
  }
  heatsim::solver::SourceSpec q;
  q.shape = ball(r0);
  q.power_density = kQ;
  c.sources = {q};
  if (R > 0.0) c.contacts = {{{"copper", "plate"}, R}};
  for (int f = 0; f < 2 * dims; ++f) {
    c.boundary[f].kind = BoundaryKind::dirichlet;
    c.boundary[f].value = kAmbient;
  }
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

std::vector<double> steady_field(const Case& c) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, 0.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  mg::ImplicitStepper stepper(p, fields, heatsim::solver::TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", p.precision), options);
  std::vector<double> u(static_cast<std::size_t>(p.points()), kAmbient);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.advance(u, 0);
  return u;
}

// The mean jump read as above, at n nodes per axis.
double measured_jump(int dims, int n, double r0, double R, Geometry geometry) {
  const Case with = disc(dims, n, r0, R, geometry), without = disc(dims, n, r0, 0.0, geometry);
  const std::vector<double> uR = steady_field(with), u0 = steady_field(without);
  const double h = kSide / (n - 1);
  double inside = 0.0, outside = 0.0;
  int n_in = 0, n_out = 0;
  const int nz = dims > 2 ? n : 1, ny = dims > 1 ? n : 1;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < n; ++x) {
        const int q[3] = {x, y, z};
        double d2 = 0.0;
        for (int a = 0; a < dims; ++a) d2 += (q[a] * h - kCentre[a]) * (q[a] * h - kCentre[a]);
        const double rho = std::sqrt(d2);
        const std::size_t i = (static_cast<std::size_t>(z) * ny + y) * n + x;
        const double rise = uR[i] - u0[i];
        if (rho < r0 - h) {
          inside += rise;
          ++n_in;
        } else if (rho > r0 + h && rho < r0 + 2.0 * h) {
          outside += rise;
          ++n_out;
        }
      }
  return inside / n_in - outside / n_out;
}

struct Row {
  int n;
  double jump, error;
};

std::vector<Row> convergence(int dims, const std::vector<int>& ns, double r0, double R,
                             Geometry geometry = Geometry::ball) {
  const double exact = R * kQ * r0 / dims;  // Q R'' / |surface|: q r0 / 2 (circle), / 3 (sphere)
  std::vector<Row> rows;
  for (int n : ns) {
    const double jump = measured_jump(dims, n, r0, R, geometry);
    rows.push_back({n, jump, jump / exact - 1.0});
    std::printf("%dD n=%d h=%.4g mm: jump %.6g K, analytic %.6g K, relative error %+.3e\n", dims, n,
                1e3 * kSide / (n - 1), jump, exact, jump / exact - 1.0);
  }
  return rows;
}

// The error falls with every halving of the spacing and lies within `coarsest` of the analytic
// jump at the first spacing and `finest` at the last. The parts of the nodes' control volumes
// beyond the contact go with their source to the node across it (subgrid.hpp), so the source's
// heat crosses the contact: before, a node outside the disc took its part of the disc's source
// on the wrong side of the contact, and the error was first order (-3.1 %, -1.5 %, -0.76 % for
// the disc at n = 41, 81, 161; -6.9 %, -3.5 % for the sphere at n = 21, 41); with the contact
// taken whole on every face the jump converged to pi/4 of it (-21.5 %: 61.0, 62.1, 62.4 K).
// Both fields move the parts (with R'' = 0 too: the disc's parts in the plate's control volumes
// go to the disc's nodes, by the share of the resistances), so an error that changes sign
// between two spacings may stay as large (2 % less at the disc's first halving): within 5 % of
// the one before.
void expect_converges(const std::vector<Row>& rows, double coarsest, double finest) {
  for (std::size_t k = 1; k < rows.size(); ++k)
    EXPECT_LT(std::abs(rows[k].error), 1.05 * std::abs(rows[k - 1].error)) << "n " << rows[k].n;
  EXPECT_LT(std::abs(rows.front().error), coarsest);
  EXPECT_LT(std::abs(rows.back().error), finest);
}

TEST(CurvedContacts, DiscJumpConvergesToTheFluxThroughTheCircle) {
  // 80.088, 79.914, 79.974 K of 80 K: +0.110 %, -0.108 %, -0.033 % (80.099, 79.916, 79.974
  // while the R'' = 0 field kept the parts at the plate's nodes).
  expect_converges(convergence(2, {41, 81, 161}, 0.008, 2e-3), 0.002, 5e-4);
}

// The same disc as a `where` formula: its normal from the indicator's moment (+0.16 %, -0.092 %,
// -0.038 %).
TEST(CurvedContacts, WhereDiscJumpConverges) {
  expect_converges(convergence(2, {41, 81, 161}, 0.008, 2e-3, Geometry::where), 0.002, 5e-4);
}

// Per-node materials (a map under the ball): the faces between the nodes take the share too.
// The interface is the nodes' staircase here (and the source the nodes inside, not the disc),
// so the error does not fall steadily: within 0.5 % at each spacing (+0.13 %, +0.06 %,
// -0.007 %), against -21 % with the contact whole on every face.
TEST(CurvedContacts, NodeMaterialsDiscJumpMatches) {
  for (const Row& row : convergence(2, {41, 81, 161}, 0.008, 2e-3, Geometry::map))
    EXPECT_LT(std::abs(row.error), 0.005) << "n " << row.n;
}

// A sphere: with the contact whole on every face the jump converged to 2/3 of the analytic
// one (-34 %: 41.7, 43.0, 43.7 K at n = 21, 41, 81).
TEST(CurvedContacts, BallJumpConvergesToTheFluxThroughTheSphere) {
  // 67.34, 66.66 K of 66.67 K: +1.0 %, -0.006 %.
  expect_converges(convergence(3, {21, 41}, 0.01, 2e-3), 0.015, 0.002);
}

// The contact's conductance summed over the faces (each face's R''_eff = h / K_R - h / K_0, the
// faces with and without the contact; its share R'' / R''_eff times its area) is the surface's
// area over R'': the staircase of faces it acts on is 4/pi of a circle's length (3/2 of a
// sphere's area), the shares bring it back to the surface's (0.99934, 1.00081, 1.00029 of a
// circle's at 41, 81, 161 nodes; 0.9907, 1.0003 of a sphere's at 21, 41; 1.0006 for the sphere
// as a `where` formula at 41).
double contact_area_ratio(int dims, int n, double r0, double* staircase,
                          Geometry geometry = Geometry::ball) {
  const double R = 2e-3, h = kSide / (n - 1);
  const auto fR = heatsim::solver::coefficient_fields(disc(dims, n, r0, R, geometry));
  const auto f0 = heatsim::solver::coefficient_fields(disc(dims, n, r0, 0.0, geometry));
  const double cell = dims == 2 ? h : h * h;
  double sum = 0.0, whole = 0.0;
  const int nz = dims > 2 ? n : 1;
  for (int a = 0; a < dims; ++a)
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          const int q[3] = {x, y, z};
          if (q[a] == n - 1) continue;
          const std::int64_t stride = a == 0 ? 1 : a == 1 ? n : static_cast<std::int64_t>(n) * n;
          const std::int64_t i = (static_cast<std::int64_t>(z) * n + y) * n + x, j = i + stride;
          const double KR = fR->face(a, i, j), K0 = f0->face(a, i, j);
          if (KR == K0) continue;
          sum += R / (h / KR - h / K0) * cell;
          whole += cell;
        }
  const double area = dims == 2 ? 2.0 * M_PI * r0 : 4.0 * M_PI * r0 * r0;
  *staircase = whole / area;
  std::printf("%dD n=%d: contact conductance x R'' / area %.6f, faces' area / area %.6f\n", dims, n,
              sum / area, whole / area);
  return sum / area;
}

TEST(CurvedContacts, ContactConductanceAddsUpToTheSurfaces) {
  double staircase = 0.0;
  for (int n : {41, 81, 161}) {
    EXPECT_NEAR(contact_area_ratio(2, n, 0.008, &staircase), 1.0, 1e-3) << n;
    EXPECT_NEAR(staircase, 4.0 / M_PI, 0.01) << n;
  }
  for (int n : {21, 41}) {
    EXPECT_NEAR(contact_area_ratio(3, n, 0.01, &staircase), 1.0, 0.01) << n;
    EXPECT_NEAR(staircase, 1.5, 0.05) << n;
  }
  // The sphere as a `where` formula: the normals from the indicator's moment.
  EXPECT_NEAR(contact_area_ratio(3, 41, 0.01, &staircase, Geometry::where), 1.0, 0.01);
  EXPECT_NEAR(contact_area_ratio(2, 81, 0.008, &staircase, Geometry::where), 1.0, 2e-3);
}

// One face the circle crosses, by hand: the line from copper into plate, the contact in series
// over the x component of the radial normal where the line crosses.
TEST(CurvedContacts, FaceTakesTheContactOverTheNormalsShare) {
  const double R = 2e-3, r0 = 0.008;
  const Case c = disc(2, 41, r0, R);
  const auto fields = heatsim::solver::coefficient_fields(c);
  const double h = kSide / 40;
  // Row y = 23 h (0.023): the circle's right crossing, between nodes 27 and 28.
  const int y = 23;
  const double dy = y * h - kCentre[1];
  const double t = kCentre[0] + std::sqrt(r0 * r0 - dy * dy);
  const int x = static_cast<int>(std::floor(t / h));
  ASSERT_EQ(x, 27);
  const double line = h / ((t - x * h) / 400.0 + ((x + 1) * h - t) / 20.0);
  const double share = (t - kCentre[0]) / r0;
  const std::int64_t i = static_cast<std::int64_t>(y) * 41 + x;
  EXPECT_NEAR(fields->face(0, i, i + 1), h / (h / line + R / share), 1e-12 * 400.0);
  // Not the whole contact (the test tells the two apart).
  EXPECT_GT(std::abs(fields->face(0, i, i + 1) - h / (h / line + R)), 1e-3 * line);
}

// With a temperature-dependent conductivity (copper's k falls linearly from 400 at 300 K to 300
// at 400 K) the face's contact part is the same R'' over the share: the materials' parts scale
// with their k, the contact's stays (the closed form along the line, the copper part by its
// Kirchhoff transform between the temperatures at its ends), on the CPU backend's and the GPU's
// one path (TemperatureDependence).
TEST(CurvedContacts, TemperatureDependentFaceKeepsTheShare) {
  const double R = 2e-3, r0 = 0.008;
  Case c = disc(2, 41, r0, R);
  c.materials[1].conductivity_table = {{300.0, 400.0}, {400.0, 300.0}};
  const auto fields = heatsim::solver::coefficient_fields(c);
  ASSERT_TRUE(fields->temperature);
  const double h = kSide / 40;
  const int y = 23, x = 27;  // as above: the circle between nodes 27 and 28 on row 23
  const double dy = y * h - kCentre[1];
  const double t = kCentre[0] + std::sqrt(r0 * r0 - dy * dy);
  const double share = (t - kCentre[0]) / r0;
  const std::int64_t i = static_cast<std::int64_t>(y) * 41 + x;
  const double reference = fields->face(0, i, i + 1);
  for (double T : {300.0, 350.0, 390.0}) {
    const double exact = series_face_reference(t - x * h, 400.0, -1.0, 300.0, R / share,
                                               (x + 1) * h - t, 20.0, T, 320.0);
    EXPECT_NEAR(fields->temperature->face(0, i, i + 1, reference, T, 320.0), exact, 1e-9 * exact)
        << T;
  }
}

// R'' = 0 on a curved interface is no contact, bit for bit, with k(T) too: the faces, the laws'
// shares and the steady field.
TEST(CurvedContacts, ZeroResistanceIsBitIdenticalToNone) {
  for (Geometry geometry : {Geometry::ball, Geometry::where, Geometry::map})
    for (bool laws : {false, true}) {
      SCOPED_TRACE(testing::Message() << static_cast<int>(geometry) << (laws ? ", k(T)" : ""));
      Case zero = disc(2, 41, 0.008, 0.0, geometry), none = disc(2, 41, 0.008, -1.0, geometry);
      zero.contacts = {{{"copper", "plate"}, 0.0}};
      for (Case* c : {&zero, &none})
        if (laws) c->materials[1].conductivity_table = {{300.0, 400.0}, {400.0, 300.0}};
      const auto fz = heatsim::solver::coefficient_fields(zero);
      const auto fn = heatsim::solver::coefficient_fields(none);
      for (int a = 0; a < 3; ++a) EXPECT_EQ(fz->faces[a], fn->faces[a]) << "axis " << a;
      if (laws) {
        ASSERT_TRUE(fz->temperature && fn->temperature);
        for (int a = 0; a < 3; ++a) EXPECT_EQ(fz->temperature->share[a], fn->temperature->share[a]);
      }
      if (!laws) {
        EXPECT_EQ(steady_field(zero), steady_field(none));
      }
    }
}

// A surface almost along a link: the share is held at kLeastContactShare, and the face stays
// finite and positive.
TEST(CurvedContacts, ShareNearZeroStaysFiniteAndPositive) {
  using heatsim::solver::contact_share;
  using heatsim::solver::kLeastContactShare;
  const double along[2] = {1e-12, 1.0}, across[3] = {0.0, 0.0, -2.0}, none[3] = {0, 0, 0};
  EXPECT_EQ(contact_share(along, 2, 0), kLeastContactShare);
  EXPECT_EQ(contact_share(along, 2, 1), 1.0);
  EXPECT_EQ(contact_share(across, 3, 2), 1.0);
  EXPECT_EQ(contact_share(none, 3, 0), 1.0);
  const double diagonal[2] = {1.0, 1.0};
  EXPECT_NEAR(contact_share(diagonal, 2, 0), std::sqrt(0.5), 1e-15);
  const double K = heatsim::solver::with_contact(400.0, 1e-3, 2e-3 / kLeastContactShare);
  EXPECT_TRUE(std::isfinite(K));
  EXPECT_GT(K, 0.0);
  EXPECT_NEAR(K, 1e-3 / (1e-3 / 400.0 + 2.0), 1e-15);
}

}  // namespace
}  // namespace heatsim_tests
