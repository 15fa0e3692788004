// The CUDA-core backends against the CPU reference on cases whose voids reach the outer faces
// (solver/subgrid.hpp, the fields built by the solver as a run builds them): a void over part of
// a convective-and-radiating face's nodes, and one that ends between another face's nodes and
// the nodes inside them (a heat flux and a convective face), so that the ghost face carries the
// condition alone (kernels/boundary_rules.hpp, coefficient_ghost). With and without a conductivity
// that varies with temperature (the faces re-evaluated on the device each step, the ghost faces
// kept). 2D and 3D at sizes that are not tile multiples, fp64 within 1e-12 and fp32 within 1e-5
// of max |u|, the buffers poisoned with NaN first; no node non-finite.
#include <cmath>
#include <random>
#include <sstream>

#include "case_on_gpu.hpp"
#include "gpu_test_support.hpp"
#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryKind;
using kernels::Precision;

solver::Case voids_at_faces(int dims, const std::array<std::int64_t, 3>& n, bool laws) {
  solver::Case c;
  c.grid.dims = dims;
  c.grid.n = {n[0], n[1], dims > 2 ? n[2] : 1};
  c.grid.length = {0.1, 0.05, 0.04};
  solver::MaterialSpec steel = heatsim_tests::material("steel", 45.0, 7800.0, 470.0);
  if (laws) steel.conductivity_table = {{280.0, 45.0}, {340.0, 60.0}, {400.0, 35.0}};
  c.materials = {steel};
  solver::RegionSpec on_face;
  on_face.is_void = true;
  on_face.shape = heatsim_tests::box({0.0803, 0.0149, -1.0}, {0.2, 0.0301, 0.0251});
  // Ends between the y+ face's nodes and the ones below them, whatever the spacing.
  const double hy = 0.05 / static_cast<double>(n[1] - 1);
  solver::RegionSpec under_face;
  under_face.is_void = true;
  under_face.shape =
      heatsim_tests::box({0.0201, 0.05 - 3.3 * hy, 0.0103}, {0.0502, 0.05 - 0.5 * hy, 1.0});
  c.regions = {heatsim_tests::region("steel"), on_face, under_face};
  c.boundary[0].kind = BoundaryKind::dirichlet;
  c.boundary[0].value = 350.0;
  c.boundary[1].kind = BoundaryKind::convective;
  c.boundary[1].transfer = 50.0;
  c.boundary[1].value = 290.0;
  c.boundary[1].emissivity = 0.6;
  c.boundary[2].kind = BoundaryKind::convective;
  c.boundary[2].transfer = 20.0;
  c.boundary[2].value = 300.0;
  c.boundary[3] = solver::RegionSpec::insulated();
  c.boundary[3].heat_flux = true;
  c.boundary[3].value = 2000.0;
  c.boundary[4].kind = BoundaryKind::convective;
  c.boundary[4].transfer = 10.0;
  c.boundary[4].value = 310.0;
  c.boundary[5] = solver::RegionSpec::insulated();
  c.boundary[5].value = 40.0;  // du/dn: passes K_bm du/dn, nothing where K_bm is 0
  return c;
}

struct Size {
  int dims;
  std::array<std::int64_t, 3> n;
};

class VoidsAtFaces : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(VoidsAtFaces, MatchCpu) {
  const BackendCase bc = GetParam();
  const std::vector<Size> sizes = bc.dims == 2
                                      ? std::vector<Size>{{2, {41, 21, 1}}, {2, {67, 35, 1}}}
                                      : std::vector<Size>{{3, {41, 21, 17}}, {3, {37, 19, 13}}};
  std::mt19937_64 rng(77 + 13 * bc.dims + (bc.precision == Precision::fp32 ? 5 : 0));
  int runs = 0;
  for (const Size& s : sizes)
    for (bool laws : {false, true}) {
      CaseOnGpu run;
      run.c = voids_at_faces(s.dims, s.n, laws);
      run.laws = laws;
      if (!case_steps_match_cpu(run, bc, rng)) continue;
      ++runs;
    }
  EXPECT_GT(runs, 0);
}

// temporal-blocking on the same voids without radiation (its passes take no temperature-
// dependent face) and with convective surfaces on the voids: passes of 2 and 3 steps, the runs split off the passes' multiples, 2D and
// 3D, fp64 and fp32, against the CPU.
class VoidsAtFacesBlocked : public GpuTest {};

TEST_F(VoidsAtFacesBlocked, TemporalBlockingMatchesCpuAtDepth) {
  if (!kernels::find_backend("temporal-blocking")) GTEST_SKIP() << "no temporal-blocking";
  int runs = 0, blocked = 0;
  for (Precision precision : {Precision::fp64, Precision::fp32})
    for (const Size& s : {Size{2, {67, 35, 1}}, Size{3, {41, 21, 17}}, Size{3, {70, 37, 13}}})
      for (int depth : {2, 3}) {
        const double tol = precision == Precision::fp64 ? 1e-12 : 1e-5;
        solver::Case c = voids_at_faces(s.dims, s.n, false);
        c.boundary[1].emissivity = 0.0;
        for (std::size_t r : {1, 2}) {  // the voids' surfaces convective: H u in the update
          c.regions[r].surface.kind = BoundaryKind::convective;
          c.regions[r].surface.transfer = r == 1 ? 30.0 : 80.0;
          c.regions[r].surface.value = r == 1 ? 295.0 : 330.0;
        }
        c.precision = precision;
        std::ostringstream what;
        what << kernels::to_string(precision) << " " << s.dims << "D n=" << s.n[0] << "x"
             << s.n[1] << "x" << s.n[2] << " depth " << depth;
        SCOPED_TRACE(what.str());
        const auto ids = solver::material_ids(c);
        const auto fields = solver::coefficient_fields(c, ids, solver::void_surfaces(c, ids));
        ASSERT_FALSE(fields->transfer.empty());
        ASSERT_TRUE(fields->has_faces());
        const double dt = 0.9 * solver::field_stability(c, *fields).dt_limit;
        kernels::StencilProblem p = solver::make_problem(c, dt, fields);
        p.fusion_depth = depth;
        auto gpu = kernels::create_backend("temporal-blocking", precision);
        ASSERT_EQ(gpu->unsupported_reason(p), "");
        std::mt19937_64 rng(91 + depth + 7 * s.dims);
        std::vector<double> u0(static_cast<std::size_t>(p.points()));
        std::uniform_real_distribution<double> temperature(300.0, 340.0);
        for (double& v : u0) v = temperature(rng);
        solver::set_dirichlet_nodes(c, u0);
        const StepsOnBoth both = step_on_cpu_and(*gpu, p, u0, 40, 17);
        blocked += gpu->fusion_depth() == depth;
        std::int64_t bad = -1;
        EXPECT_LE(relative_difference(both.gpu, both.cpu, &bad), tol) << "worst node " << bad;
        EXPECT_GT(relative_difference(both.cpu, u0), 1e-4);
        EXPECT_EQ(both.gpu_stats.non_finite, 0);
        ++runs;
      }
  EXPECT_EQ(runs, 12);
  EXPECT_GE(blocked, 6) << "the passes were not taken at the depth asked";
}

// The voids are 2D and 3D.
std::vector<BackendCase> cases_2d_3d() {
  std::vector<BackendCase> out;
  for (const BackendCase& c : backend_cases())
    if (c.dims >= 2) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, VoidsAtFaces, ::testing::ValuesIn(cases_2d_3d()), backend_case_name);
// A build without CUDA has no GPU backend to give it cases.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VoidsAtFaces);

}  // namespace
}  // namespace heatsim::test
