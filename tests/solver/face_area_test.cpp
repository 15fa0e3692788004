// An outer face's condition beside a void that reaches it acts on the body's part of each
// boundary node's face only (solver/subgrid.hpp, FaceCut): the heat flow through a convective
// or heat-flux face that a void partly covers, steady and explicit, against the exact value
// and the grid cut at the void's bound, with the heat-flow balance closing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/boundary_rules.hpp"
#include "kernels/cpu/cpu_backend.hpp"
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
using heatsim::solver::TimeMethod;
namespace mg = heatsim::solver::multigrid;

// A plate 10 mm square (k = 2) whose part beyond x = `edge` (and above y = `notch`) is a void,
// its surface insulated: the y+ face convects (h = 200 at 300 K) over [0, edge] alone. Either
// the y- face is held at 400 K (a profile linear in y, 10 kW/m^2 through the body: 50 W/m at
// edge = 5 mm), or the body is heated inside (1e6 W/m^3) and the x- face convects as well
// (h = 50 at 300 K), y- insulated: a field of two dimensions.
Case plate(std::int64_t n, double edge, double notch, bool heated) {
  Case c;
  c.grid.dims = 2;
  c.grid.n = {n, n, 1};
  c.grid.length = {0.01, 0.01, 1.0};
  c.materials = {material("solid", 2.0, 1000.0, 10.0)};
  heatsim::solver::RegionSpec gap;
  gap.is_void = true;
  gap.name = "gap";
  gap.shape = box({edge, notch, 0}, {1.0, 1.0, 0});
  c.regions = {region("solid"), gap};
  for (auto& f : c.boundary) f = heatsim::solver::RegionSpec::insulated();
  c.boundary[3].kind = BoundaryKind::convective;
  c.boundary[3].transfer = 200.0;
  c.boundary[3].value = 300.0;
  if (heated) {
    c.boundary[0].kind = BoundaryKind::convective;
    c.boundary[0].transfer = 50.0;
    c.boundary[0].value = 300.0;
    heatsim::solver::SourceSpec s;
    s.power_density = 1e6;
    c.sources = {s};
  } else {
    c.boundary[2].kind = BoundaryKind::dirichlet;
    c.boundary[2].value = 400.0;
  }
  c.time.method = TimeMethod::steady;
  return c;
}

struct Flows {
  double face = 0.0;  // into the body through y+
  heatsim::solver::HeatFlowReport report;
};

// The steady state's flows; `uncut`: the fields without the faces' cuts (every boundary node's
// whole face, as before the cuts were taken).
Flows steady(const Case& c, bool uncut = false) {
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
  if (uncut) surfaces.faces.clear();
  const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
  const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
  mg::SolveOptions options;
  options.tolerance = 1e-12;
  mg::ImplicitStepper stepper(problem, fields, TimeMethod::steady, 0.0,
                              heatsim::kernels::make_level_ops("cpu", problem.precision), options);
  std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  heatsim::solver::set_dirichlet_nodes(c, u);
  stepper.advance(u, 0);
  const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces, &stepper.heat_flow());
  Flows out;
  out.report = meter.report(u, 0.0);
  for (const auto& f : out.report.flows)
    if (f.what == "face y+ (convective)") out.face = f.rate;
  return out;
}

// The linear profile: the y+ face passes exactly 10 kW/m^2 over [0, edge] wherever the void's
// bound lies (a box's share of a face is exact, and the ghost rule exact for a linear profile),
// and the y- face takes it in. Before the cuts the node at the bound counted its whole face:
// 52.25, 51.17, 50.60, 50.31 W/m out at 11 to 81 nodes with the bound on a node plane (the
// error halving with the spacing, first order).
TEST(FaceArea, AConvectiveFaceBesideAVoidPassesTheBodysShareExactly) {
  for (const double edge : {0.005, 0.0053, 0.00371}) {
    for (const std::int64_t n : {11, 21, 41, 81}) {
      SCOPED_TRACE("edge " + std::to_string(edge) + ", " + std::to_string(n) + " nodes");
      const Case c = plate(n, edge, -1.0, false);
      const Flows after = steady(c);
      const double exact = -1e4 * edge;  // W/m, out of the body
      EXPECT_NEAR(after.face, exact, 1e-8 * std::abs(exact));
      EXPECT_LT(std::abs(after.report.imbalance), 1e-8 * after.report.largest);
      if (edge == 0.005) {
        const Flows before = steady(c, true);
        const double h = 0.01 / static_cast<double>(n - 1);
        // The node at the bound took q over half a spacing more (less its own column's cooling).
        EXPECT_LT(before.face, exact - 0.2 * 1e4 * 0.5 * h);
      }
    }
  }
}

// A void bounded by a node plane equals cutting the grid there: the plate with the void beyond
// x = 5 mm and the plate 5 mm wide give the same flows (to the solves), heated inside and
// cooled through two faces, steady.
TEST(FaceArea, AVoidOnANodePlaneEqualsTheCutGrid) {
  for (const std::int64_t n : {11, 21, 41}) {
    SCOPED_TRACE(std::to_string(n) + " nodes");
    const Flows with_void = steady(plate(n, 0.005, -1.0, true));
    Case cut = plate(n, 1.0, -1.0, true);
    cut.grid.n[0] = (n - 1) / 2 + 1;
    cut.grid.length[0] = 0.005;
    const Flows narrow = steady(cut);
    EXPECT_NEAR(with_void.face, narrow.face, 1e-9 * std::abs(narrow.face));
    EXPECT_LT(std::abs(with_void.report.imbalance), 1e-8 * with_void.report.largest);
  }
}

// The heated plate, its field of two dimensions, converges at second order in the y+ face's flow
// toward a fine grid's (641 nodes), the void's bound on a node plane or off one: errors 4.5e-3,
// 1.1e-3, 2.8e-4, 6.9e-5 W/m of 30.6 at 11 to 81 nodes (bound on a plane); before, at first
// order, 0.78, 0.41, 0.21, 0.11.
TEST(FaceArea, AFaceBesideAVoidConvergesAtSecondOrder) {
  for (const double edge : {0.005, 0.0053}) {
    SCOPED_TRACE("edge " + std::to_string(edge));
    const double fine = steady(plate(641, edge, -1.0, true)).face;
    std::vector<double> after, before;
    for (const std::int64_t n : {11, 21, 41, 81}) {
      const Case c = plate(n, edge, -1.0, true);
      after.push_back(std::abs(steady(c).face - fine));
      before.push_back(std::abs(steady(c, true).face - fine));
    }
    for (std::size_t k = 1; k < after.size(); ++k) {
      EXPECT_GT(after[k - 1] / after[k], 3.5) << k;  // measured 3.9 to 4.0
      EXPECT_LT(after[k], 0.05 * before[k]) << k;
    }
  }
}

// The heated plate stepped explicitly on the CPU to its steady state: the y+ face's flow as the
// steady solve's, and every step's heat-flow row balanced to rounding.
TEST(FaceArea, ExplicitStepsAgreeWithTheSteadyStateAndBalance) {
  Case c = plate(21, 0.0053, -1.0, true);
  const Flows target = steady(c);
  c.time.method = TimeMethod::explicit_euler;
  const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
  const heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
  ASSERT_EQ(surfaces.faces.size(), 1u);  // y+; x+ is insulated, y- too
  const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
  const double dt = 0.9 * heatsim::solver::field_stability(c, *fields).dt_limit;
  const auto problem = heatsim::solver::make_problem(c, dt, fields);
  const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces);
  heatsim::solver::HeatFlowRows rows(meter, TimeMethod::explicit_euler, dt);
  auto backend = heatsim::kernels::make_cpu_backend(problem.precision);
  backend->setup(problem);
  std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
  backend->upload(u);
  const std::int64_t steps = static_cast<std::int64_t>(std::ceil(10.0 / dt));
  for (std::int64_t step = 0; step <= steps; ++step) {
    if (step > 0) backend->advance(1, step - 1);
    const bool row = step % 1000 == 0 || step == steps;
    if (row || step == steps - 1) backend->download(u);
    if (!row && step != steps - 1) continue;
    const auto r = rows.take(step, u, row);
    if (!r || step == 0) continue;
    double largest = std::abs(r->storage);
    for (double f : r->flows) largest = std::max(largest, std::abs(f));
    EXPECT_LT(std::abs(r->imbalance), 1e-11 * largest) << "step " << step;
  }
  double face = 0.0;
  const auto report = meter.report(u, 0.0);
  for (const auto& f : report.flows)
    if (f.what == "face y+ (convective)") face = f.rate;
  EXPECT_NEAR(face, target.face, 1e-6 * std::abs(target.face));
}

// A body of nearly one temperature (k = 1e7) with voids at its edges and corners, every outer
// face passing heat (convective, radiating, a heat flux): each face passes its law at the
// body's temperature times the body's exact share of the face, in 1D, 2D and 3D, steady.
TEST(FaceArea, EveryFacePassesHeatOverTheBodysShareOnly) {
  constexpr double kSigma = heatsim::kernels::kStefanBoltzmann;
  for (const int dims : {1, 2, 3}) {
    for (const std::int64_t n : {11, 21}) {
      SCOPED_TRACE(std::to_string(dims) + "D, " + std::to_string(n) + " nodes");
      Case c;
      c.grid.dims = dims;
      c.grid.n = {n, dims > 1 ? n : 1, dims > 2 ? n : 1};
      c.grid.length = {0.01, 0.01, 0.01};
      c.materials = {material("solid", 1e6, 1000.0, 10.0)};
      heatsim::solver::RegionSpec v1, v2;
      v1.is_void = v2.is_void = true;
      // Over the x+, y+ edge (and through z: the z faces' corners), a sliver at 11 nodes.
      v1.shape = box({0.0057, 0.0053, -1.0}, {1.0, 1.0, 1.0});
      // The x-, y-, z- corner.
      v2.shape = box({-1.0, -1.0, -1.0}, {0.0022, 0.0017, 0.0031});
      c.regions = {region("solid"), v1, v2};
      if (dims == 1) c.regions.pop_back();  // x- stays the body's: the heat leaves there
      heatsim::solver::SourceSpec heat;
      heat.power_density = 1e6;
      c.sources = {heat};
      const double h[6] = {100.0, 50.0, 0.0, 200.0, 80.0, 30.0};
      for (int f = 0; f < 6; ++f) {
        c.boundary[f].kind = BoundaryKind::convective;
        c.boundary[f].transfer = h[f];
        c.boundary[f].value = 300.0;
      }
      c.boundary[1].emissivity = 0.5;  // convective and radiating
      c.boundary[2] = heatsim::solver::RegionSpec::insulated();
      c.boundary[2].heat_flux = true;
      c.boundary[2].value = 2e4;
      c.boundary[5].emissivity = 0.8;
      c.boundary[5].transfer = 0.0;  // radiative alone
      c.time.method = TimeMethod::steady;

      const std::vector<std::int32_t> ids = heatsim::solver::material_ids(c);
      const heatsim::solver::VoidSurfaces surfaces = heatsim::solver::void_surfaces(c, ids);
      const auto fields = heatsim::solver::coefficient_fields(c, ids, surfaces);
      const auto problem = heatsim::solver::make_problem(c, 1.0, fields);
      mg::SolveOptions options;
      options.tolerance = 1e-12;
      mg::ImplicitStepper stepper(problem, fields, TimeMethod::steady, 1.0,
                                  heatsim::kernels::make_level_ops("cpu", problem.precision),
                                  options);
      std::vector<double> u(static_cast<std::size_t>(problem.points()), 300.0);
      stepper.advance(u, 0);
      const heatsim::solver::HeatFlowMeter meter(c, problem, fields, surfaces);
      const auto report = meter.report(u, 0.0);
      // The solve's residual on so stiff a body (k / h^2 against h) and its outer iteration
      // (radiation): measured 2e-7 of the largest flow at most, as without the faces' cuts
      // (1e-10 at k = 1e4).
      EXPECT_LT(std::abs(report.imbalance), 1e-6 * report.largest);
      // The body's temperature (it varies by 1e-8 K or so).
      double T = 0.0;
      for (std::size_t i = 0; i < u.size(); ++i)
        if (fields->capacity[i] > 0.0) T = u[i];
      // The body's share of each face (m^2, m per metre of depth, 1 per m^2 of section).
      const double L = 0.01;
      const auto cut = [&](int axis, double lo, double hi) {
        return axis < dims ? std::max(0.0, std::min(hi, L) - std::max(lo, 0.0)) : 1.0;
      };
      const auto whole = [&](int a, int b) { return cut(a, 0, L) * cut(b, 0, L); };
      // Per face: the whole face less each void's rectangle on it (where the void reaches it).
      const double v1_yz = cut(1, 0.0053, L) * cut(2, 0, L),
                   v1_xz = cut(0, 0.0057, L) * cut(2, 0, L),
                   v1_xy = cut(0, 0.0057, L) * cut(1, 0.0053, L);
      const double w2 = dims > 1 ? 1.0 : 0.0;  // 1D: v1 alone
      const double v2_yz = w2 * cut(1, 0, 0.0017) * cut(2, 0, 0.0031),
                   v2_xz = w2 * cut(0, 0, 0.0022) * cut(2, 0, 0.0031),
                   v2_xy = w2 * cut(0, 0, 0.0022) * cut(1, 0, 0.0017);
      const double area[6] = {whole(1, 2) - v2_yz,         whole(1, 2) - v1_yz,
                              whole(0, 2) - v2_xz,         whole(0, 2) - v1_xz,
                              whole(0, 1) - v1_xy - v2_xy, whole(0, 1) - v1_xy};
      for (int f = 0; f < 2 * dims; ++f) {
        const auto& b = c.boundary[f];
        const double law = heatsim::kernels::face_transfer(b) * (300.0 - T) +
                           heatsim::kernels::face_flux(b) +
                           b.emissivity * kSigma * (std::pow(300.0, 4) - std::pow(T, 4));
        const char* names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
        double rate = 0.0;
        for (const auto& flow : report.flows)
          if (flow.what.rfind(std::string("face ") + names[f] + " ", 0) == 0) rate = flow.rate;
        // 1D: the x+ face lies in the void (a sliver at 11 nodes): nothing crosses it.
        const double expected = area[f] * law;
        if (expected == 0.0) {
          EXPECT_EQ(rate, 0.0) << "face " << names[f];
        }
        EXPECT_NEAR(rate, expected, 1e-5 * report.largest) << "face " << names[f];
      }
    }
  }
}

// The faces' shares are source fields of the voids' surfaces: a constant ambient's joins a
// void's field of a constant schedule (its density scaled), a heat flux's the factor-1 one, so
// they take no field of their own; an ambient that varies in time, unlike every void's, takes
// one, and one too many is an error naming the face.
TEST(FaceArea, TheFacesSharesJoinTheVoidsSourceFields) {
  Case c = plate(21, 0.0053, -1.0, true);
  c.regions[1].surface.kind = BoundaryKind::convective;  // the gap's side convects to 290 K
  c.regions[1].surface.transfer = 10.0;
  c.regions[1].surface.value = 290.0;
  c.boundary[1].kind = BoundaryKind::neumann;  // x+ lies in the void: nothing to take off
  c.boundary[1].heat_flux = true;
  c.boundary[1].value = 1e3;
  c.boundary[2] = heatsim::solver::RegionSpec::insulated();  // y- a heat flux
  c.boundary[2].heat_flux = true;
  c.boundary[2].value = 1e3;
  const auto fields = heatsim::solver::coefficient_fields(c);
  // The source, and the gap's surface with the y+ face's share.
  ASSERT_EQ(fields->sources.size(), 2u);
  EXPECT_TRUE(fields->sources[1].surface);
  const Flows flows = steady(c);
  EXPECT_LT(std::abs(flows.report.imbalance), 1e-8 * flows.report.largest);

  // Schedules of their own: the source's, two more sources', the gap's and the y+ face's.
  c.boundary[3].table = {{0.0, 300.0}, {10.0, 310.0}};
  heatsim::solver::SourceSpec more = c.sources[0];
  more.schedule.value = 0.5;
  c.sources.push_back(more);
  more.schedule.value = 0.25;
  c.sources.push_back(more);
  try {
    heatsim::solver::coefficient_fields(c);
    FAIL() << "five source schedules were taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("boundary.y+"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heatsim_tests
