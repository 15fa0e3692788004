// The multigrid solver on bodies with voids, steady, every face convective (a floating body:
// Biot numbers far below 1). A void's face within half a spacing of a node plane leaves the
// nodes beyond it a sliver of body coupled within their plane and to nothing across it; a fin
// between two voids becomes one coarse node wide; an FR4 board's top layer under a void is
// coupled 60 times more along it than across. Each must keep its coarse representation, or
// PCG needs 3-7 times the iterations and more at every refinement (a block with one slot: 10,
// 38 and 16 iterations at 33, 41 and 81 nodes across; a power module: 47, 65 and 80, stalled
// at the default stall window). The iteration counts must stay low and nearly the same across
// grid sizes, whatever fraction of a spacing the voids' faces fall at.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "solver/materials.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/stencil.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver::multigrid {
namespace {

using heatsim_tests::box;
using heatsim_tests::material;
using heatsim_tests::region;
using kernels::BoundaryFace;
using kernels::BoundaryKind;

BoundaryFace convective(double transfer) {
  BoundaryFace f;
  f.kind = BoundaryKind::convective;
  f.transfer = transfer;
  f.value = 298.15;
  return f;
}

RegionSpec void_box(std::array<double, 3> lower, std::array<double, 3> upper,
                    BoundaryFace surface = RegionSpec::insulated()) {
  RegionSpec v;
  v.is_void = true;
  v.shape = box(lower, upper);
  v.surface = surface;
  return v;
}

SourceSpec source(std::array<double, 3> lower, std::array<double, 3> upper, double power) {
  SourceSpec s;
  s.shape = box(lower, upper);
  s.power = power;
  return s;
}

// An aluminium block 32 x 32 x 16 mm with one slot 5 mm wide cut from its top down to 6 mm,
// 40 W on a patch of its bottom, h = 12 W/(m^2 K) on every face.
Case block_with_slot(std::array<std::int64_t, 3> n) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = n;
  c.grid.length = {0.032, 0.032, 0.016};
  c.materials = {material("aluminium", 205.0, 2700.0, 900.0)};
  c.regions = {region("aluminium"), void_box({0.004, -1, 0.006}, {0.009, 1, 1})};
  c.sources = {source({0.015, 0.015, 0.0}, {0.025, 0.025, 0.002}, 40.0)};
  for (auto& f : c.boundary) f = convective(12.0);
  c.time.method = TimeMethod::steady;
  return c;
}

// A power module (the steady example of the nonlinear-materials work, with constant
// conductivities): an FR4 board (k 20 along it, 0.3 across), an alumina substrate, a filler
// layer with a silicon die dissipating 40 W, and an aluminium sink whose base rests on the
// substrate, with insulated air around the substrate (rim voids) and four convective fin
// gaps. 40 x 40 x 12 mm.
Case power_module(std::array<std::int64_t, 3> n) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = n;
  c.grid.length = {0.04, 0.04, 0.012};
  MaterialSpec fr4 = material("fr4", 20.0, 1850.0, 1100.0);
  fr4.axes = {20.0, 20.0, 0.3};
  c.materials = {fr4, material("alumina", 30.0, 3900.0, 775.0),
                 material("silicon", 148.0, 2329.0, 705.0), material("filler", 3.0, 2500.0, 1000.0),
                 material("aluminium", 205.0, 2700.0, 900.0)};
  c.regions = {region("fr4"),
               region("alumina", box({0.005, 0.005, 0.0016}, {0.035, 0.035, 0.0026})),
               region("filler", box({0.005, 0.005, 0.0026}, {0.035, 0.035, 0.0031})),
               region("silicon", box({0.015, 0.015, 0.0026}, {0.025, 0.025, 0.0031})),
               region("aluminium", box({0.0, 0.0, 0.0031}, {0.04, 0.04, 0.012})),
               void_box({-1, -1, 0.0016}, {0.005, 1, 0.0031}),
               void_box({0.035, -1, 0.0016}, {1, 1, 0.0031}),
               void_box({0.005, -1, 0.0016}, {0.035, 0.005, 0.0031}),
               void_box({0.005, 0.035, 0.0016}, {0.035, 1, 0.0031})};
  for (double x : {0.004, 0.013, 0.022, 0.031})
    c.regions.push_back(void_box({x, -1, 0.006}, {x + 0.005, 1, 1}, convective(12.0)));
  c.sources = {source({0.015, 0.015, 0.0026}, {0.025, 0.025, 0.0031}, 40.0)};
  for (auto& f : c.boundary) f = convective(12.0);
  c.boundary[4] = convective(6.0);  // z-: the board's underside
  c.time.method = TimeMethod::steady;
  return c;
}

// The steady state from 320 K at the default tolerance and stall rule.
SolveReport steady(const Case& c) {
  const auto fields = coefficient_fields(c);
  const kernels::StencilProblem p = make_problem(c, 1.0, fields);
  ImplicitStepper stepper(p, fields, TimeMethod::steady, 0.0,
                          kernels::make_level_ops("cpu", kernels::Precision::fp64));
  std::vector<double> u(static_cast<std::size_t>(p.points()), 320.0);
  return stepper.advance(u, 0);
}

std::string size_name(const std::array<std::int64_t, 3>& n) {
  return std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " + std::to_string(n[2]);
}

void expect_few_iterations_at_every_size(const std::string& name,
                                         const std::vector<std::array<std::int64_t, 3>>& sizes,
                                         Case (*make)(std::array<std::int64_t, 3>), int most) {
  int smallest = 1 << 30, largest = 0;
  for (const auto& n : sizes) {
    const SolveReport r = steady(make(n));
    std::printf("%-14s %-14s %s\n", name.c_str(), size_name(n).c_str(), r.describe().c_str());
    EXPECT_EQ(r.reason, SolveReport::Reason::converged) << size_name(n) << ": " << r.describe();
    EXPECT_LE(r.iterations, most) << size_name(n) << ": " << r.describe();
    smallest = std::min(smallest, r.iterations);
    largest = std::max(largest, r.iterations);
  }
  EXPECT_LE(largest, smallest + 3)
      << name << ": " << smallest << " to " << largest << " iterations";
}

TEST(MultigridVoids, ABlockWithASlotConvergesInFewIterationsWhereverTheSlotsFacesFall) {
  // 33 x 33 x 17: the slot's faces on node planes (8 iterations); 41 x 41 x 21 and
  // 45 x 45 x 23: a sliver of body beside the slot's far face (9 and 9); 41 x 5 x 21: the
  // same, 5 nodes deep (10).
  expect_few_iterations_at_every_size(
      "slot", {{33, 33, 17}, {41, 41, 21}, {45, 45, 23}, {41, 5, 21}}, block_with_slot, 12);
}

TEST(MultigridVoids, APowerModuleConvergesInFewIterationsAtEverySize) {
  // 11 and 13 iterations (81 x 81 x 49: 12).
  expect_few_iterations_at_every_size("power module", {{41, 41, 25}, {61, 61, 37}}, power_module,
                                      15);
}

}  // namespace
}  // namespace heatsim::solver::multigrid
