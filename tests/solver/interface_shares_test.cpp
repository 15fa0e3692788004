// Control volumes that a material interface cuts (solver/subgrid.hpp): the part of a node's
// control volume beyond an interface, the other material's, holds its capacity and its share of
// the sources for the node across the interface whose material it is, so that a heated layer's
// heat enters that layer at its own temperature instead of crossing its neighbour's material.
// Checked on a composite wall (insulation | heated steel | contact | copper | brick, Dirichlet
// and convective faces) against its closed form: second order with the steel's bounds anywhere
// in their cells, the source's power exactly the density times the steel's volume; a transient of
// the same wall against an independent fine-grid finite-volume reference; a node on the
// interface plane keeping both halves; and the shares moved in 2D.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/heat_flows.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"

namespace heatsim_tests {
namespace {

using heatsim::kernels::BoundaryKind;
using heatsim::solver::Case;
namespace mg = heatsim::solver::multigrid;

// The wall, from x = 0: its layers' conductivity, rho c_p, upper bound and source density; the
// contact R'' at each layer's upper bound (to the next layer).
struct Layer {
  const char* name;
  double k, rho, cp, upper, q, contact;
};
constexpr double kLength = 0.05, kHot = 400.0, kAmbient = 300.0, kTransfer = 10.0;
constexpr double kSource = 1e6;
const std::array<Layer, 4> kLayers{{{"insulation", 0.04, 30, 1400, 0.02, 0.0, 0.0},
                                    {"steel", 50.0, 7800, 470, 0.03, kSource, 1e-3},
                                    {"copper", 400.0, 8900, 385, 0.04, 0.0, 0.0},
                                    {"brick", 2.0, 1920, 835, 0.05, 0.0, 0.0}}};

// The wall at n nodes: insulation over the domain, the other layers painted as boxes over it;
// the source a box that covers the steel exactly; 400 K at x = 0, h = 10 W/(m^2 K) to 300 K at
// x = L; steady. `dims` 2: the layers along y, 4 nodes across x (insulated faces). `contact`
// false: the steel and the copper in perfect contact.
Case composite_wall(int n, int dims = 1, bool contact = true) {
  Case c;
  c.grid.dims = dims;
  const int axis = dims - 1;
  c.grid.n = {dims == 2 ? 4 : n, dims == 2 ? n : 1, 1};
  c.grid.length = {dims == 2 ? 0.003 : kLength, dims == 2 ? kLength : 1.0, 1.0};
  double lower = 0.0;
  for (const Layer& l : kLayers) {
    std::array<double, 3> lo{0, 0, 0}, hi{1, 1, 0};
    lo[axis] = lower;
    hi[axis] = l.upper;
    c.materials.push_back(material(l.name, l.k, l.rho, l.cp));
    c.regions.push_back(lower == 0.0 ? region(l.name) : region(l.name, box(lo, hi)));
    if (l.q != 0.0) {
      heatsim::solver::SourceSpec s;
      s.shape = box(lo, hi);
      s.power_density = l.q;
      c.sources.push_back(s);
    }
    lower = l.upper;
  }
  if (contact) c.contacts = {{{"steel", "copper"}, 1e-3}};
  for (int f = 0; f < 2 * dims; ++f) c.boundary[f].kind = BoundaryKind::neumann;
  c.boundary[2 * axis].kind = BoundaryKind::dirichlet;
  c.boundary[2 * axis].value = kHot;
  c.boundary[2 * axis + 1].kind = BoundaryKind::convective;
  c.boundary[2 * axis + 1].transfer = kTransfer;
  c.boundary[2 * axis + 1].value = kAmbient;
  c.time.method = heatsim::solver::TimeMethod::steady;
  c.time.tolerance = 1e-13;
  return c;
}

// The closed form: the flux f(x) = f0 + the heat released before x; T falls by f / k across the
// layers and by f R'' at each contact. f0 (into the wall at x = 0) makes f(L) = h (T(L) - T_a);
// T(x) is linear in f0.
double closed_form(double x, bool contact = true) {
  const auto temperature = [contact](double f0, double at) {
    double T = kHot, f = f0, lower = 0.0;
    for (const Layer& l : kLayers) {
      const double d = std::min(at, l.upper) - lower;
      if (d <= 0.0) break;
      T -= (f * d + l.q * d * d / 2.0) / l.k;
      f += l.q * d;
      // A node on a contact's plane is the next layer's (painted after): past the contact.
      if (at > l.upper - 1e-12 && contact) T -= f * l.contact;
      lower = l.upper;
    }
    return std::make_pair(T, f);
  };
  // f(L) - h (T(L) - T_a) = a + b f0.
  const auto residual = [&](double f0) {
    const auto [T, f] = temperature(f0, kLength);
    return f - kTransfer * (T - kAmbient);
  };
  const double a = residual(0.0), b = residual(1.0) - a;
  return temperature(-a / b, x).first;
}

// Backward Euler steps of dt from `u` (steps 0: the steady state), on the CPU's multigrid.
std::vector<double> solve(const Case& c, std::vector<double> u, double dt, int steps) {
  auto fields = heatsim::solver::coefficient_fields(c);
  const auto p = heatsim::solver::make_problem(c, dt > 0.0 ? dt : 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-13;
  mg::ImplicitStepper stepper(p, fields,
                              steps > 0 ? mg::TimeMethod::backward_euler : mg::TimeMethod::steady,
                              dt, heatsim::kernels::make_level_ops("cpu", p.precision), options);
  heatsim::solver::set_dirichlet_nodes(c, u);
  for (int s = 0; s < std::max(steps, 1); ++s) stepper.advance(u, s);
  return u;
}

// The first node at or past the steel's lower bound (0.02) lies d past it: the profile between
// the bound and that node is the steel's parabola, which the series conductance of the face
// from the insulation node (a straight line in each material) does not see. So that node, and
// the nearly isothermal steel with it, sits up to S d^2 / (2 k_steel) above the closed form
// once the steel's heat enters the steel (less where part of the heat in the steel node's own
// control volume would, by the resistances, reach the insulation node): second order, the
// steel's own constant.
double steel_offset(int n) {
  const double h = kLength / (n - 1), d = std::ceil(0.02 / h - 1e-9) * h - 0.02;
  return kSource * d * d / (2.0 * kLayers[1].k);
}

double largest_error(const std::vector<double>& u, const std::vector<double>& exact) {
  double worst = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) worst = std::max(worst, std::abs(u[i] - exact[i]));
  return worst;
}

std::vector<double> closed_form_nodes(int n) {
  std::vector<double> exact(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    exact[static_cast<std::size_t>(i)] = closed_form(i * kLength / (n - 1));
  return exact;
}

double largest_steady_error(int n) {
  const Case c = composite_wall(n);
  return largest_error(solve(c, std::vector<double>(n, kAmbient), 0.0, 0), closed_form_nodes(n));
}

// The steel begins 0.4, 0.2, 0.6, 0.2 and 0.4 of a spacing past a node at 12, 23, 45, 89 and
// 177 nodes: the sliver of heated steel in the insulation node's control volume at 12, 89 and
// 177 heated that node (15.5, 0.40 and 0.066 K off), none forms at 23 and 45 (2.07e-3 K). Now
// each error is within the steel's own S d^2 / (2 k) (0.9 of it or more): 0.0704, 2.07e-3,
// 2.07e-3, 1.85e-3 (d = 0.4545 mm at 23, 45 and 89 nodes) and 2.75e-4 K, falling 256-fold from
// 12 to 177 nodes with the bound at the same place in its cell.
TEST(InterfaceShares, HeatedLayerBesideAnInsulatorConvergesAtSecondOrder) {
  double e12 = 0.0, e177 = 0.0;
  for (int n : {12, 23, 45, 89, 177}) {
    const double e = largest_steady_error(n), offset = steel_offset(n);
    std::printf("%d nodes: largest node error %.4g K (S d^2 / 2k: %.4g K)\n", n, e, offset);
    EXPECT_LE(e, offset * (1.0 + 1e-3) + 1e-8) << n << " nodes";
    EXPECT_GE(e, 0.85 * offset) << n << " nodes";
    if (n == 12) e12 = e;
    if (n == 177) e177 = e;
  }
  EXPECT_GT(e12 / e177, 250.0);
  EXPECT_LT(e12 / e177, 262.0);
}

// The source's power is exactly the density times the steel's volume (1e4 W/m^2), in the fields
// and in the heat-flow report, while the insulation node beside the steel keeps only the share
// of the steel's sliver that the resistances give it (0.1 %); the total capacity is the
// layers'.
TEST(InterfaceShares, SourcePowerAndCapacityStayTheIntegrals) {
  for (int n : {12, 89}) {
    SCOPED_TRACE(n);
    const Case c = composite_wall(n);
    const auto ids = heatsim::solver::material_ids(c);
    const auto fields = heatsim::solver::coefficient_fields(c, ids);
    ASSERT_EQ(fields->sources.size(), 1u);
    const std::vector<double>& q = fields->sources[0].density;
    const double h = kLength / (n - 1);
    double power = 0.0, capacity = 0.0;
    for (int i = 0; i < n; ++i) {
      power += q[i] * heatsim::solver::node_weight(c, i) * h;
      capacity += fields->capacity[i] * heatsim::solver::node_weight(c, i) * h;
      // The other nodes take a thousandth of the density at most.
      if (c.materials[static_cast<std::size_t>(ids[i])].name != "steel") {
        EXPECT_LT(q[i], 1e-3 * kSource) << i;
      }
    }
    EXPECT_NEAR(power, kSource * 0.01, 1e-12 * kSource * 0.01);
    double layers = 0.0, lower = 0.0;
    for (const Layer& l : kLayers) {
      layers += l.rho * l.cp * (l.upper - lower);
      lower = l.upper;
    }
    EXPECT_NEAR(capacity, layers, 1e-12 * layers);
    // At 12 nodes the first steel node (5) takes the share w of the sliver before it (from the
    // bound, 0.02, to its control volume, from 4.5 h): the resistance from node 4 to the
    // sliver's centre over that from node 4 to node 5.
    if (n == 12) {
      const double centre = (0.02 + 4.5 * h) / 2.0;
      const double Ri = (0.02 - 4 * h) / 0.04 + (centre - 0.02) / 50.0,
                   Rj = (5 * h - centre) / 50.0;
      const double w = Ri / (Ri + Rj), sliver = (4.5 * h - 0.02) / h;
      EXPECT_GT(w, 0.998);
      EXPECT_NEAR(q[4], kSource * sliver * (1.0 - w), 1e-9 * kSource);
      EXPECT_NEAR(q[5], kSource * (1.0 + sliver * w), 1e-9 * kSource);
    }
    const std::vector<double> u = solve(c, std::vector<double>(n, kAmbient), 0.0, 0);
    const auto p = heatsim::solver::make_problem(c, 1.0, fields);
    const heatsim::solver::HeatFlowMeter meter(c, p, fields,
                                               heatsim::solver::void_surfaces(c, ids));
    const auto report = meter.report(u, 0.0);
    bool found = false;
    for (const auto& f : report.flows)
      if (f.what == "sources[0]") {
        found = true;
        EXPECT_NEAR(f.rate, kSource * 0.01, 1e-12 * kSource * 0.01);
      }
    EXPECT_TRUE(found);
    EXPECT_LT(std::abs(report.imbalance), 1e-8 * report.largest);
  }
}

// An independent reference for the transient: cell-centred finite volumes with the cells'
// faces on the layers' bounds (no control volume cut), `per_mm` cells per millimetre, backward
// Euler steps of dt from 300 K; the temperature at x interpolated between cell centres (the
// Dirichlet face and the convective surface at the ends).
std::vector<double> reference_transient(const std::vector<double>& at, double dt, int steps,
                                        int per_mm) {
  std::vector<double> dx, k, C, q, contact;  // contact: R'' at each cell's upper face
  double lower = 0.0;
  for (const Layer& l : kLayers) {
    const int m = static_cast<int>(std::lround((l.upper - lower) * 1e3 * per_mm));
    for (int j = 0; j < m; ++j) {
      dx.push_back((l.upper - lower) / m);
      k.push_back(l.k);
      C.push_back(l.rho * l.cp);
      q.push_back(l.q);
      contact.push_back(j == m - 1 ? l.contact : 0.0);
    }
    lower = l.upper;
  }
  const std::size_t cells = dx.size();
  // G[j]: the conductance between cell j - 1 and j (G[0] to the Dirichlet face, G[cells] to the
  // ambient through the convective surface).
  std::vector<double> G(cells + 1);
  G[0] = 2.0 * k[0] / dx[0];
  for (std::size_t j = 1; j < cells; ++j)
    G[j] = 1.0 / (dx[j - 1] / (2.0 * k[j - 1]) + contact[j - 1] + dx[j] / (2.0 * k[j]));
  G[cells] = 1.0 / (dx[cells - 1] / (2.0 * k[cells - 1]) + 1.0 / kTransfer);
  std::vector<double> T(cells, kAmbient), a(cells), b(cells), c(cells), r(cells);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t j = 0; j < cells; ++j) {
      const double m = C[j] * dx[j] / dt;
      a[j] = -G[j];
      c[j] = -G[j + 1];
      b[j] = m + G[j] + G[j + 1];
      r[j] = m * T[j] + q[j] * dx[j];
    }
    r[0] += G[0] * kHot;
    r[cells - 1] += G[cells] * kAmbient;
    a[0] = c[cells - 1] = 0.0;
    for (std::size_t j = 1; j < cells; ++j) {  // Thomas
      const double w = a[j] / b[j - 1];
      b[j] -= w * c[j - 1];
      r[j] -= w * r[j - 1];
    }
    T[cells - 1] = r[cells - 1] / b[cells - 1];
    for (std::size_t j = cells - 1; j-- > 0;) T[j] = (r[j] - c[j] * T[j + 1]) / b[j];
  }
  // Positions and values: the faces' ends, then the cell centres.
  std::vector<double> x{0.0}, v{kHot};
  double left = 0.0;
  for (std::size_t j = 0; j < cells; ++j) {
    x.push_back(left + 0.5 * dx[j]);
    v.push_back(T[j]);
    left += dx[j];
  }
  const double inner = 2.0 * k[cells - 1] / dx[cells - 1];
  x.push_back(kLength);
  v.push_back((inner * T[cells - 1] + kTransfer * kAmbient) / (inner + kTransfer));
  std::vector<double> out;
  for (double p : at) {
    const std::size_t j =
        static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), p) - x.begin());
    const std::size_t hi = std::min(std::max<std::size_t>(j, 1), x.size() - 1), lo = hi - 1;
    const double t = (p - x[lo]) / (x[hi] - x[lo]);
    out.push_back(v[lo] + t * (v[hi] - v[lo]));
  }
  return out;
}

double largest_transient_error(int n) {
  Case c = composite_wall(n);
  c.time.method = heatsim::solver::TimeMethod::backward_euler;
  const double dt = 0.5;
  const int steps = 240;
  c.time.dt = dt;
  const std::vector<double> u = solve(c, std::vector<double>(n, kAmbient), dt, steps);
  std::vector<double> at;
  for (int i = 0; i < n; ++i) at.push_back(i * kLength / (n - 1));
  return largest_error(u, reference_transient(at, dt, steps, 200));
}

// 120 s of the wall heating from 300 K (the steel about 18 K up, the insulation's front 10 mm
// in), backward Euler steps of 0.5 s, against the fine reference (5 um cells; 2.5 um moves it
// by 2e-5 K) at the same steps, so that the steps' error cancels. Largest node errors 0.361,
// 0.0283 and 0.0016 K at 12, 45 and 177 nodes (4.52, 0.0285 and 0.0433 K while the steel's
// slivers heated and weighed on the insulation's nodes; 0.367, 0.0315 and 0.0016 K with every
// part beyond an interface moved whole).
TEST(InterfaceShares, TransientMatchesAFineGridReference) {
  const double e12 = largest_transient_error(12), e45 = largest_transient_error(45),
               e177 = largest_transient_error(177);
  std::printf("largest node errors %.4g, %.4g, %.4g K\n", e12, e45, e177);
  EXPECT_LT(e12, 0.4);
  EXPECT_LT(e45, 0.0285);
  EXPECT_LT(e177, 2.5e-3);
  EXPECT_GT(e12 / e177, 100.0);  // 256 at second order
}

// Bounds on node planes (11 nodes, h = 5 mm), steel and copper in perfect contact: the node on
// an interface is the interface's, both halves of its control volume stay with it, and the
// steady temperatures are exact at the nodes whichever material the node test gives it (the
// insulation painted last over [0, 20 mm] makes the node at 20 mm insulation).
TEST(InterfaceShares, ANodeOnAnInterfaceKeepsBothHalves) {
  for (bool insulation_last : {false, true}) {
    SCOPED_TRACE(insulation_last);
    Case c = composite_wall(11, 1, false);
    if (insulation_last) c.regions.push_back(region("insulation", box({0, 0, 0}, {0.02, 0, 0})));
    const auto ids = heatsim::solver::material_ids(c);
    ASSERT_EQ(c.materials[static_cast<std::size_t>(ids[4])].name,
              insulation_last ? "insulation" : "steel");
    const std::vector<double> u = solve(c, std::vector<double>(11, kAmbient), 0.0, 0);
    for (int i = 0; i < 11; ++i) EXPECT_NEAR(u[i], closed_form(i * 0.005, false), 1e-8) << i;
    // Node 4's capacity is the mean of its halves; its source share the steel half's.
    const auto fields = heatsim::solver::coefficient_fields(c, ids);
    EXPECT_NEAR(fields->capacity[4], 0.5 * (30.0 * 1400 + 7800.0 * 470), 1e-6);
    EXPECT_NEAR(fields->sources[0].density[4], 0.5 * kSource, 1e-6);
  }
}

// The wall along y of a 2D plate: every column has the 1D field to the solves' tolerance (the
// parts beyond the interfaces go along y, the axis they lie farthest along); the power is the
// density times the steel's area.
TEST(InterfaceShares, TheWallAlongYOfAPlateIsTheLine) {
  const int n = 12;
  const std::vector<double> line =
      solve(composite_wall(n), std::vector<double>(n, kAmbient), 0.0, 0);
  const Case c = composite_wall(n, 2);
  const std::vector<double> u = solve(c, std::vector<double>(4 * n, kAmbient), 0.0, 0);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_NEAR(u[static_cast<std::size_t>(y * 4 + x)], line[static_cast<std::size_t>(y)], 1e-7)
          << x << ", " << y;
  const auto fields = heatsim::solver::coefficient_fields(c);
  double power = 0.0;
  for (std::int64_t i = 0; i < 4 * n; ++i)
    power += fields->sources[0].density[static_cast<std::size_t>(i)] *
             heatsim::solver::node_weight(c, i);
  power *= heatsim::solver::cell_volume(c);
  EXPECT_NEAR(power, kSource * 0.01 * 0.003, 1e-12 * kSource * 0.01 * 0.003);
}

}  // namespace
}  // namespace heatsim_tests
