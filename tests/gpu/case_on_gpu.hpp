// A whole case's explicit steps on a CUDA-core backend against the CPU: the case's coefficient
// fields (materials, voids' surfaces, contacts) made by the solver as a run makes them, 40 steps
// from random temperatures on each, the device's field within a tolerance of the CPU's.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "gpu_test_support.hpp"
#include "solver/materials.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::test {

// What one agreement run is made of: the case, its name in failures, whether its material
// conductivities depend on T, whether its faces must come out given (contacts do), and the range
// the random start temperatures are drawn from.
struct CaseOnGpu {
  solver::Case c;
  bool laws = false;
  bool faces_given = false;
  double t_lo = 300.0, t_hi = 340.0;
};

// Steps `run.c` at 0.9 of its stable dt on `bc`'s backend and on the CPU (40 steps, split
// after 17), fp64 within 1e-12 and fp32 within 1e-5 of max |u|, the steps moving the field by
// more than 1e-4 and every value finite. Returns false where the backend refuses the case, as
// it must when it takes no given faces or does not re-evaluate temperature laws; true when it
// ran.
inline bool case_steps_match_cpu(CaseOnGpu run, const BackendCase& bc, std::mt19937_64& rng) {
  solver::Case& c = run.c;
  c.precision = bc.precision;
  std::ostringstream what;
  what << bc.backend << " " << kernels::to_string(bc.precision) << " " << c.grid.dims
       << "D n=" << c.grid.n[0] << "x" << c.grid.n[1] << "x" << c.grid.n[2]
       << (run.laws ? " k(T)" : "");
  SCOPED_TRACE(what.str());
  const auto ids = solver::material_ids(c);
  const auto fields = solver::coefficient_fields(c, ids, solver::void_surfaces(c, ids));
  if (run.faces_given) {
    EXPECT_TRUE(fields->has_faces()) << "the case's faces are given";
  }
  const double dt = 0.9 * solver::field_stability(c, *fields).dt_limit;
  const kernels::StencilProblem p = solver::make_problem(c, dt, fields);
  auto gpu = kernels::create_backend(bc.backend, bc.precision);
  const std::string why = gpu->unsupported_reason(p);
  if (!gpu->capabilities().face_conductances ||
      (run.laws && !gpu->capabilities().temperature_dependence)) {
    EXPECT_FALSE(why.empty());
    return false;
  }
  EXPECT_TRUE(why.empty()) << why;
  if (!why.empty()) return false;
  std::vector<double> u0(static_cast<std::size_t>(p.points()));
  std::uniform_real_distribution<double> temperature(run.t_lo, run.t_hi);
  for (double& v : u0) v = temperature(rng);
  solver::set_dirichlet_nodes(c, u0);
  const StepsOnBoth both = step_on_cpu_and(*gpu, p, u0, 40, 17);
  const double tol = bc.precision == kernels::Precision::fp64 ? 1e-12 : 1e-5;
  std::int64_t bad = -1;
  EXPECT_LE(relative_difference(both.gpu, both.cpu, &bad), tol) << "worst node " << bad;
  EXPECT_GT(relative_difference(both.cpu, u0), 1e-4);  // the steps changed the field
  EXPECT_EQ(both.gpu_stats.non_finite, 0);
  EXPECT_EQ(both.cpu_stats.non_finite, 0);
  return true;
}

}  // namespace heatsim::test
