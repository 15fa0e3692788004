// The CUDA-core backends on varying-coefficient problems (StencilProblem::coefficients)
// against the CPU reference: random material maps (k in [0.5, 50], rho*c_p in [0.5, 4], per
// node and in blocks), up to three source fields with schedules (tables and sine forms), every
// face kind at random per face (Dirichlet constant, sine and table in time, Neumann flux and
// heat flux, convective with a constant and a scheduled ambient, periodic axes), 1D to 3D at
// sizes that are not multiples of any tile, fp64 and fp32. The backend's buffers are poisoned
// with NaN first; the data are random and never zero. fp64 within 1e-12, fp32 within 1e-5,
// relative to max |value|; stats() (the capacity-weighted heat) as the CPU's; sample() equal to
// the downloaded field at the sampled nodes. And: convstencil refuses such problems with the
// reason, `auto` passes it over, and fusion requests step one at a time.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "gpu_test_support.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "solver/backend_choice.hpp"

namespace heatsim::test {
namespace {

using kernels::BoundaryFace;
using kernels::BoundaryKind;
using kernels::CoefficientFields;
using kernels::Precision;
using kernels::Schedule;
using kernels::StencilProblem;

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// A schedule whose changes fall inside the few steps a test runs (times are multiples of dt).
Schedule random_schedule(double dt, std::mt19937_64& rng) {
  Schedule s;
  switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
    case 0:
      s.value = uniform(rng, 0.5, 1.5);
      break;
    case 1:
      s.value = uniform(rng, 0.5, 1.5);
      s.amplitude = uniform(rng, 0.2, 0.8);
      s.frequency = 1.0 / (uniform(rng, 3.0, 9.0) * dt);
      break;
    default: {
      double t = uniform(rng, 0.0, 2.0) * dt;
      for (int i = 0; i < 4; ++i) {
        s.table.push_back({t, uniform(rng, 0.0, 2.0)});
        t += uniform(rng, 0.3, 2.5) * dt;
      }
      break;
    }
  }
  return s;
}

void set_schedule(BoundaryFace& f, const Schedule& s) {
  f.value = s.value;
  f.amplitude = s.amplitude;
  f.frequency = s.frequency;
  f.table = s.table;
}

// A face condition of a non-periodic axis; values keep u of order 1..3.
BoundaryFace random_face(double dt, std::mt19937_64& rng) {
  BoundaryFace f;
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0:  // Dirichlet, constant
      f.kind = BoundaryKind::dirichlet;
      f.value = uniform(rng, 1.0, 3.0);
      break;
    case 1: {  // Dirichlet in time (sine or table)
      f.kind = BoundaryKind::dirichlet;
      Schedule s = random_schedule(dt, rng);
      if (s.constant()) {
        s.amplitude = 0.5;
        s.frequency = 1.0 / (5.0 * dt);
      }
      s.value += 1.0;
      for (auto& p : s.table) p[1] += 1.0;
      set_schedule(f, s);
      break;
    }
    case 2:  // Neumann: du/dn, or a heat flux
      f.kind = BoundaryKind::neumann;
      f.heat_flux = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      f.value = uniform(rng, -2.0, 2.0);
      break;
    default: {  // convective, ambient constant or scheduled
      f.kind = BoundaryKind::convective;
      f.transfer = uniform(rng, 0.5, 40.0);
      Schedule s = random_schedule(dt, rng);
      s.value += 1.0;
      for (auto& p : s.table) p[1] += 1.0;
      set_schedule(f, s);
      break;
    }
  }
  return f;
}

// The heat content of a field as FieldStats::total_heat weighs it (trapezoid weights on the
// non-periodic axes, times rho c_p), summed on the host in node order.
double heat_content(const StencilProblem& p, const std::vector<double>& u) {
  const auto weight = [&](int a, std::int64_t i) {
    return a < p.dims && !p.periodic(a) && (i == 0 || i == p.n[a] - 1) ? 0.5 : 1.0;
  };
  double total = 0.0;
  for (std::int64_t z = 0; z < p.n[2]; ++z)
    for (std::int64_t y = 0; y < p.n[1]; ++y)
      for (std::int64_t x = 0; x < p.n[0]; ++x) {
        const std::size_t i = static_cast<std::size_t>((z * p.n[1] + y) * p.n[0] + x);
        total += weight(0, x) * weight(1, y) * weight(2, z) * p.coefficients->capacity[i] * u[i];
      }
  return total;
}

struct Built {
  StencilProblem problem;
  std::string faces;  // for messages
};

// A random problem on grid n: material map, sources, faces; dt at 0.4 of the Gershgorin limit.
// With `sub_grid`, every face also gets its own conductance (CoefficientFields::faces, random
// in the range of k, unrelated to the nodes' k), as sub-grid geometry gives, a third of the
// nodes a surface's transfer H (CoefficientFields::transfer), and about one node in 30 lies
// inside a void (capacity 0: not stepped, not counted).
Built random_problem(int dims, const std::array<std::int64_t, 3>& n, Precision precision,
                     std::mt19937_64& rng, bool sub_grid = false) {
  Built b;
  StencilProblem& p = b.problem;
  p.dims = dims;
  for (int a = 0; a < 3; ++a) p.n[a] = a < dims ? n[a] : 1;
  p.h = {0.1, 0.07, 0.13};
  p.stencil.dims = dims;
  p.stencil.radius = 1;
  p.stencil.weights.assign(p.stencil.size(), 0.0);  // unused with coefficients
  p.precision = precision;
  const std::int64_t points = p.points();

  auto fields = std::make_shared<CoefficientFields>();
  fields->conductivity.resize(static_cast<std::size_t>(points));
  fields->capacity.resize(static_cast<std::size_t>(points));
  // Half the cases: k and C per node; the other half: three materials in random slabs.
  const bool per_node = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  std::array<double, 3> mk{}, mc{};
  for (int m = 0; m < 3; ++m) {
    mk[m] = std::exp(uniform(rng, std::log(0.5), std::log(50.0)));
    mc[m] = uniform(rng, 0.5, 4.0);
  }
  const int split_axis = std::uniform_int_distribution<int>(0, dims - 1)(rng);
  const std::int64_t cut1 =
      std::uniform_int_distribution<std::int64_t>(0, p.n[split_axis] - 1)(rng);
  const std::int64_t cut2 =
      std::uniform_int_distribution<std::int64_t>(0, p.n[split_axis] - 1)(rng);
  for (std::int64_t z = 0; z < p.n[2]; ++z)
    for (std::int64_t y = 0; y < p.n[1]; ++y)
      for (std::int64_t x = 0; x < p.n[0]; ++x) {
        const std::size_t i = static_cast<std::size_t>((z * p.n[1] + y) * p.n[0] + x);
        if (per_node) {
          fields->conductivity[i] = std::exp(uniform(rng, std::log(0.5), std::log(50.0)));
          fields->capacity[i] = uniform(rng, 0.5, 4.0);
        } else {
          const std::int64_t c[3] = {x, y, z};
          const int m = (c[split_axis] >= cut1) + (c[split_axis] >= cut2);
          fields->conductivity[i] = mk[m];
          fields->capacity[i] = mc[m];
        }
      }

  if (sub_grid)
    for (int a = 0; a < dims; ++a) {
      fields->faces[static_cast<std::size_t>(a)].resize(static_cast<std::size_t>(points));
      for (double& K : fields->faces[static_cast<std::size_t>(a)])
        K = std::exp(uniform(rng, std::log(0.5), std::log(50.0)));
    }

  // Faces: each axis periodic with probability 1/4, else a random condition per face.
  double convective = 0.0;  // sum of 2 H / h over convective faces, for the stability limit
  std::ostringstream faces;
  double k_max = 0.0, c_min = 1e300;
  for (std::size_t i = 0; i < fields->conductivity.size(); ++i) {
    k_max = std::max(k_max, fields->conductivity[i]);
    c_min = std::min(c_min, fields->capacity[i]);
  }
  for (const auto& K : fields->faces)  // the faces given set the limit too
    for (double v : K) k_max = std::max(k_max, v);
  double diag = 0.0;
  for (int a = 0; a < dims; ++a) diag += 4.0 * k_max / (p.h[a] * p.h[a]);
  // dt first from the conduction alone; the faces' schedules are set relative to it.
  double dt = 0.4 * c_min / diag;
  for (int a = 0; a < dims; ++a) {
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
      p.faces[2 * a].kind = p.faces[2 * a + 1].kind = BoundaryKind::periodic;
    } else {
      for (int s = 0; s < 2; ++s) {
        p.faces[2 * a + s] = random_face(dt, rng);
        if (p.faces[2 * a + s].kind == BoundaryKind::convective)
          convective += 2.0 * p.faces[2 * a + s].transfer / p.h[a];
      }
    }
    for (int s = 0; s < 2; ++s) {
      const BoundaryFace& f = p.faces[2 * a + s];
      faces << (a || s ? "," : "") << kernels::to_string(f.kind) << (f.heat_flux ? "(flux)" : "")
            << (f.time_dependent() ? "(t)" : "");
    }
  }
  // Surfaces inside the body: H up to a tenth of the conduction's diagonal (per capacity 1).
  double h_max = 0.0;
  if (sub_grid) {
    fields->transfer.assign(static_cast<std::size_t>(points), 0.0);
    for (std::size_t i = 0; i < fields->transfer.size(); ++i) {
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
        fields->transfer[i] = uniform(rng, 0.0, 0.1 * diag);
      h_max = std::max(h_max, fields->transfer[i]);
      if (std::uniform_int_distribution<int>(0, 29)(rng) == 0) fields->capacity[i] = 0.0;
    }
  }
  p.dt = 0.4 * c_min / (diag + convective + h_max);
  // Keep the schedules' times on the steps: rescale them to the final dt.
  for (auto& f : p.faces) {
    for (auto& q : f.table) q[0] *= p.dt / dt;
    f.frequency *= dt / p.dt;
  }
  dt = p.dt;

  // Up to three sources, each over a random box of the grid, with a schedule.
  const int sources = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int s = 0; s < sources; ++s) {
    CoefficientFields::Source src;
    src.density.assign(static_cast<std::size_t>(points), 0.0);
    std::array<std::int64_t, 3> lo{0, 0, 0}, hi{1, 1, 1};
    for (int a = 0; a < dims; ++a) {
      lo[a] = std::uniform_int_distribution<std::int64_t>(0, p.n[a] - 1)(rng);
      hi[a] = std::uniform_int_distribution<std::int64_t>(lo[a] + 1, p.n[a])(rng);
    }
    for (std::int64_t z = lo[2]; z < hi[2]; ++z)
      for (std::int64_t y = lo[1]; y < hi[1]; ++y)
        for (std::int64_t x = lo[0]; x < hi[0]; ++x)
          src.density[static_cast<std::size_t>((z * p.n[1] + y) * p.n[0] + x)] =
              uniform(rng, 1.0, 400.0);
    src.schedule = random_schedule(dt, rng);
    fields->sources.push_back(std::move(src));
  }
  faces << " sources=" << sources << (per_node ? " k per node" : " 3 materials")
        << (sub_grid ? " face conductances" : "");
  p.coefficients = fields;
  b.faces = faces.str();
  return b;
}

std::vector<std::array<std::int64_t, 3>> sizes(int dims) {
  switch (dims) {
    case 1:
      return {{2, 1, 1}, {1237, 1, 1}, {3001, 1, 1}};
    case 2:
      return {{2, 2, 1}, {300, 37, 1}, {45, 7, 1}, {33, 130, 1}};
    default:
      return {{2, 2, 2}, {37, 19, 13}, {33, 9, 70}, {70, 11, 5}};
  }
}

using Case = BackendCase;

class CoefficientAgreement : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(CoefficientAgreement, MatchesCpuOnRandomMaterialsSourcesAndFaces) {
  const Case c = GetParam();
  std::mt19937_64 rng(4321 + 31 * c.dims + (c.precision == Precision::fp32 ? 7 : 0) +
                      static_cast<std::uint64_t>(c.backend.size()));
  const double tol = c.precision == Precision::fp64 ? 1e-12 : 1e-5;
  int runs = 0, changed = 0;
  for (int repeat = 0; repeat < 4; ++repeat)
    for (const auto& n : sizes(c.dims)) {
      // Odd repeats: sub-grid face conductances, which a backend steps with or refuses by
      // its capabilities.
      const bool sub_grid = repeat % 2 == 1;
      const Built built = random_problem(c.dims, n, c.precision, rng, sub_grid);
      const StencilProblem& p = built.problem;
      std::ostringstream what;
      what << c.backend << " " << kernels::to_string(c.precision) << " " << c.dims << "D n=" << n[0]
           << "x" << n[1] << "x" << n[2] << " faces " << built.faces;
      SCOPED_TRACE(what.str());
      auto gpu = kernels::create_backend(c.backend, c.precision);
      const std::string why = gpu->unsupported_reason(p);
      if (!steps_dims(c.backend, c.dims)) {
        EXPECT_FALSE(why.empty());
        continue;
      }
      if (sub_grid && !gpu->capabilities().face_conductances) {
        EXPECT_NE(why.find("face conductances"), std::string::npos) << why;
        continue;
      }
      ASSERT_TRUE(why.empty()) << why;
      const std::vector<double> u0 = random_field(p.points(), rng);

      const StepsOnBoth both = step_on_cpu_and(*gpu, p, u0, 7, 3);
      EXPECT_EQ(gpu->fusion_depth(), 1);
      const std::vector<double>& want = both.cpu;
      const std::vector<double>& got = both.gpu;
      const kernels::FieldStats& cs = both.cpu_stats;
      std::int64_t bad = -1;
      const double diff = relative_difference(got, want, &bad);
      EXPECT_LE(diff, tol) << "worst node " << bad;
      // The run changed the field (the comparison is not of two copies of u0).
      EXPECT_GT(relative_difference(want, u0), 100 * tol);

      const kernels::FieldStats& gs = both.gpu_stats;
      EXPECT_EQ(gs.non_finite, 0);
      EXPECT_NEAR(gs.min, cs.min, tol * std::abs(cs.max));
      EXPECT_NEAR(gs.max, cs.max, tol * std::abs(cs.max));
      EXPECT_NEAR(gs.total_heat, cs.total_heat, 10 * tol * std::abs(cs.total_heat))
          << "field difference " << diff << " at node " << bad << "; the downloaded field's heat "
          << heat_content(p, got) << ", the CPU field's " << heat_content(p, want);

      // sample(): the downloaded values at random nodes (and the first and last), repeats
      // allowed, in the order asked.
      std::vector<std::int64_t> nodes{0, p.points() - 1};
      std::uniform_int_distribution<std::int64_t> node(0, p.points() - 1);
      for (int j = 0; j < 40; ++j) nodes.push_back(node(rng));
      nodes.push_back(nodes[2]);
      std::vector<double> sampled;
      gpu->sample(nodes, sampled);
      ASSERT_EQ(sampled.size(), nodes.size());
      for (std::size_t j = 0; j < nodes.size(); ++j)
        EXPECT_EQ(sampled[j], got[static_cast<std::size_t>(nodes[j])]) << "node " << nodes[j];
      EXPECT_THROW(gpu->sample({p.points()}, sampled), std::out_of_range);

      // sample_later(): queued behind the steps that follow, collected in the order taken, each
      // the field of its own step; a longer node list in between (a new upload and slots).
      EXPECT_TRUE(gpu->queues_samples());
      std::vector<std::int64_t> longer = nodes;
      for (int j = 0; j < 300; ++j) longer.push_back(node(rng));
      gpu->sample_later(nodes);
      gpu->advance(2, 10);
      gpu->sample_later(longer);
      gpu->sample_later(nodes);
      std::vector<std::vector<double>> later;
      gpu->collect_samples(later);
      std::vector<double> after;
      gpu->download(after);
      changed += after != got;  // (on the smallest grids every node may be fixed)
      ASSERT_EQ(later.size(), 3u);
      const std::pair<const std::vector<double>*, const std::vector<std::int64_t>*> expect[3] = {
          {&got, &nodes}, {&after, &longer}, {&after, &nodes}};
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(later[k].size(), expect[k].second->size()) << "sample " << k;
        for (std::size_t j = 0; j < later[k].size(); ++j)
          EXPECT_EQ(later[k][j], (*expect[k].first)[static_cast<std::size_t>((*expect[k].second)[j])])
              << "sample " << k << " node " << (*expect[k].second)[j];
      }
      gpu->collect_samples(later);
      EXPECT_TRUE(later.empty()) << "collected twice";
      ++runs;
    }
  if (steps_dims(c.backend, c.dims)) {
    EXPECT_GT(runs, 0);
    EXPECT_GT(changed, 0) << "no run's steps between the queued samples changed the field";
  }
}

// Every face Dirichlet at a constant value: the steps sweep only the nodes inside the Dirichlet
// nodes, with no boundary pass between them (the driver's fixed faces). The field given holds
// other values on the Dirichlet nodes (random, as u0 is), which the first step must read, and
// both buffers were NaN before it: the Dirichlet nodes of both must be set. With the faces'
// rules out of the sweep (small grids take them in it) and as chosen.
TEST_P(CoefficientAgreement, FixedDirichletFacesMatchTheCpu) {
  const Case c = GetParam();
  std::mt19937_64 rng(777 + 13 * c.dims + (c.precision == Precision::fp32 ? 3 : 0));
  if (!steps_dims(c.backend, c.dims)) {  // a backend that does not step these dims refuses
    const Built built = random_problem(c.dims, sizes(c.dims).front(), c.precision, rng);
    EXPECT_FALSE(
        kernels::create_backend(c.backend, c.precision)->unsupported_reason(built.problem).empty());
    return;
  }
  const double tol = c.precision == Precision::fp64 ? 1e-12 : 1e-5;
  int runs = 0;
  for (const char* rules : {"0", ""})
    for (const auto& n : sizes(c.dims)) {
      if (*rules)
        setenv("HEATSIM_CUDA_FACE_RULES", rules, 1);
      else
        unsetenv("HEATSIM_CUDA_FACE_RULES");
      Built built = random_problem(c.dims, n, c.precision, rng);
      StencilProblem& p = built.problem;
      for (int f = 0; f < 2 * c.dims; ++f) {
        p.faces[f] = BoundaryFace{};
        p.faces[f].kind = BoundaryKind::dirichlet;
        p.faces[f].value = uniform(rng, 1.0, 3.0);
      }
      std::ostringstream what;
      what << c.backend << " " << kernels::to_string(c.precision) << " " << c.dims << "D n=" << n[0]
           << "x" << n[1] << "x" << n[2]
           << " rules in the sweep: " << (*rules ? "no" : "as chosen");
      SCOPED_TRACE(what.str());
      auto gpu = kernels::create_backend(c.backend, c.precision);
      ASSERT_TRUE(gpu->unsupported_reason(p).empty()) << gpu->unsupported_reason(p);
      const std::vector<double> u0 = random_field(p.points(), rng);
      const StepsOnBoth both = step_on_cpu_and(*gpu, p, u0, 7, 3);
      std::int64_t bad = -1;
      EXPECT_LE(relative_difference(both.gpu, both.cpu, &bad), tol) << "worst node " << bad;
      EXPECT_EQ(both.gpu_stats.non_finite, 0);
      EXPECT_NEAR(both.gpu_stats.total_heat, both.cpu_stats.total_heat,
                  10 * tol * std::abs(both.cpu_stats.total_heat));
      if (p.points() > 8) {
        EXPECT_GT(relative_difference(both.cpu, u0), 100 * tol);
      }
      ++runs;
    }
  unsetenv("HEATSIM_CUDA_FACE_RULES");
  EXPECT_EQ(runs, 2 * static_cast<int>(sizes(c.dims).size()));
}

INSTANTIATE_TEST_SUITE_P(All, CoefficientAgreement, ::testing::ValuesIn(backend_cases()),
                         backend_case_name);
// A build without CUDA has no GPU backend to give it cases.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CoefficientAgreement);

// temporal-blocking on the same random problems: passes of 2 to 16 coefficient steps (lowered
// where the tile or the grid is too small), with sizes past one tile (1D 2048, 2D 1024 along x,
// 3D 64 x 32 in xy) and steps before and after the passes, against the CPU; the stats and
// samples as above, and the depth taken never deeper than asked. The third repeat gives the
// faces' own conductances, surfaces' transfer and voids (sub-grid geometry), which the passes
// read per level instead of staging k.
struct BlockedCase {
  Precision precision;
  int dims;
};

class BlockedCoefficientAgreement : public ::testing::TestWithParam<BlockedCase> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

TEST_P(BlockedCoefficientAgreement, MatchesCpuAtEveryDepth) {
  const BlockedCase c = GetParam();
  std::mt19937_64 rng(777 + 13 * c.dims + (c.precision == Precision::fp32 ? 5 : 0));
  const double tol = c.precision == Precision::fp64 ? 1e-12 : 1e-5;
  std::vector<std::array<std::int64_t, 3>> grids = sizes(c.dims);
  grids.push_back(c.dims == 1   ? std::array<std::int64_t, 3>{5001, 1, 1}
                  : c.dims == 2 ? std::array<std::int64_t, 3>{1100, 23, 1}
                                : std::array<std::int64_t, 3>{131, 67, 19});
  int deepest_taken = 1, deepest_with_faces = 1;
  for (int repeat = 0; repeat < 3; ++repeat)
    for (const auto& n : grids)
      for (int k : {2, 3, 5, 16}) {
        const bool sub_grid = repeat == 2;
        const Built built = random_problem(c.dims, n, c.precision, rng, sub_grid);
        StencilProblem p = built.problem;
        p.fusion_depth = k;
        std::ostringstream what;
        what << kernels::to_string(c.precision) << " " << c.dims << "D n=" << n[0] << "x" << n[1]
             << "x" << n[2] << " depth " << k << " faces " << built.faces;
        SCOPED_TRACE(what.str());
        const std::vector<double> u0 = random_field(p.points(), rng);
        const std::int64_t steps = 2 * k + 9, step0 = 5;

        auto cpu = kernels::make_cpu_backend(c.precision);
        cpu->setup(p);
        cpu->upload(u0);
        cpu->advance(steps, step0);
        std::vector<double> want;
        cpu->download(want);
        const kernels::FieldStats cs = cpu->stats();

        auto gpu = kernels::create_backend("temporal-blocking", c.precision);
        ASSERT_TRUE(gpu->unsupported_reason(p).empty()) << gpu->unsupported_reason(p);
        gpu->setup(p);
        EXPECT_GE(gpu->fusion_depth(), 1);
        EXPECT_LE(gpu->fusion_depth(), k);
        deepest_taken = std::max(deepest_taken, gpu->fusion_depth());
        if (sub_grid) deepest_with_faces = std::max(deepest_with_faces, gpu->fusion_depth());
        gpu->upload(std::vector<double>(u0.size(), std::numeric_limits<double>::quiet_NaN()));
        gpu->advance(2 * k, 0);
        gpu->upload(u0);
        gpu->advance(steps - 4, step0);  // split: passes must not depend on how a run is cut
        gpu->advance(4, step0 + steps - 4);
        std::vector<double> got;
        gpu->download(got);
        std::int64_t bad = -1;
        EXPECT_LE(relative_difference(got, want, &bad), tol) << "worst node " << bad;
        EXPECT_GT(relative_difference(want, u0), 100 * tol);
        const kernels::FieldStats gs = gpu->stats();
        EXPECT_EQ(gs.non_finite, 0);
        EXPECT_NEAR(gs.total_heat, cs.total_heat, 10 * tol * std::abs(cs.total_heat));
        std::vector<std::int64_t> nodes{0, p.points() / 2, p.points() - 1};
        std::vector<double> sampled;
        gpu->sample(nodes, sampled);
        for (std::size_t j = 0; j < nodes.size(); ++j)
          EXPECT_EQ(sampled[j], got[static_cast<std::size_t>(nodes[j])]);
      }
  EXPECT_GE(deepest_taken, 2) << "no pass was blocked";
  EXPECT_GE(deepest_with_faces, 2) << "no pass with the faces' conductances was blocked";
}

std::vector<BlockedCase> blocked_cases() {
  std::vector<BlockedCase> cases;
  for (Precision p : {Precision::fp64, Precision::fp32})
    for (int d = 1; d <= 3; ++d) cases.push_back({p, d});
  return cases;
}

std::string blocked_case_name(const ::testing::TestParamInfo<BlockedCase>& info) {
  return std::string(kernels::to_string(info.param.precision)) + "_" +
         std::to_string(info.param.dims) + "D";
}

INSTANTIATE_TEST_SUITE_P(All, BlockedCoefficientAgreement, ::testing::ValuesIn(blocked_cases()),
                         blocked_case_name);

class CoefficientBasics : public GpuTest {};

// A fusion request (a depth, or auto) on a coefficient problem steps one at a time, with the
// same result as fusion 1, on every CUDA-core backend.
TEST_F(CoefficientBasics, FusionRequestsStepOneAtATime) {
  std::mt19937_64 rng(99);
  const Built built = random_problem(3, {29, 17, 23}, Precision::fp64, rng);
  const std::vector<double> u0 = random_field(built.problem.points(), rng);
  for (const auto& name : cuda_backend_names()) {
    SCOPED_TRACE(name);
    std::vector<double> one, fused;
    for (int depth : {1, 3, 0}) {
      StencilProblem p = built.problem;
      p.fusion_depth = depth;
      auto b = kernels::create_backend(name, Precision::fp64);
      ASSERT_TRUE(b->unsupported_reason(p).empty()) << b->unsupported_reason(p);
      b->setup(p);
      EXPECT_EQ(b->fusion_depth(), 1) << "requested " << depth;
      b->upload(u0);
      b->advance(6, 0);
      b->download(depth == 1 ? one : fused);
      if (depth != 1) {
        EXPECT_EQ(fused, one) << "requested " << depth;
      }
    }
  }
}

// convstencil multiplies one constant stencil (its fused S^k): it refuses coefficient problems
// and faces that need the fields, saying why, and setup() throws; `auto` passes it over.
TEST_F(CoefficientBasics, ConvstencilRefusesAndAutoSkipsIt) {
  if (!kernels::find_backend("convstencil")) GTEST_SKIP() << "no convstencil in this build";
  std::mt19937_64 rng(5);
  const Built built = random_problem(3, {40, 40, 40}, Precision::fp64, rng);
  auto conv = kernels::create_backend("convstencil", Precision::fp64);
  const std::string why = conv->unsupported_reason(built.problem);
  EXPECT_NE(why.find("constant"), std::string::npos) << why;
  EXPECT_THROW(conv->setup(built.problem), std::runtime_error);

  // A convective face on a constant-weight problem needs the fields too.
  StencilProblem plain = built.problem;
  plain.coefficients.reset();
  plain.stencil.weights.assign(plain.stencil.size(), 0.0);
  plain.stencil.at(0, 0, 0) = 1.0;
  for (auto& f : plain.faces) f = BoundaryFace{};
  plain.faces[5].kind = BoundaryKind::convective;
  plain.faces[5].transfer = 3.0;
  EXPECT_FALSE(conv->unsupported_reason(plain).empty());
  for (const auto& name : cuda_backend_names())
    EXPECT_FALSE(kernels::create_backend(name, Precision::fp64)->unsupported_reason(plain).empty())
        << name;

  const solver::BackendChoice choice = solver::choose_backend("auto", built.problem);
  EXPECT_NE(choice.name, "convstencil");
  EXPECT_NE(choice.name, "cpu") << choice.reason;
  EXPECT_NE(choice.reason.find("convstencil ("), std::string::npos) << choice.reason;
  EXPECT_THROW(solver::choose_backend("convstencil", built.problem), std::invalid_argument);
}

// Sub-grid face conductances on temporal-blocking: taken at the depth asked (3D fp64, depth 4
// fits the tile without a ring of k), bit for bit the register-tiling steps at depth 1 (both
// run the same single-step sweep), and `auto` takes a GPU backend.
TEST_F(CoefficientBasics, TemporalBlockingStepsFaceConductances) {
  if (!kernels::find_backend("temporal-blocking")) GTEST_SKIP() << "no temporal-blocking";
  std::mt19937_64 rng(17);
  const Built built = random_problem(3, {40, 33, 21}, Precision::fp64, rng, true);
  const std::vector<double> u0 = random_field(built.problem.points(), rng);
  auto blocked = kernels::create_backend("temporal-blocking", Precision::fp64);
  EXPECT_TRUE(blocked->capabilities().face_conductances);
  StencilProblem deep = built.problem;
  deep.fusion_depth = 4;
  ASSERT_EQ(blocked->unsupported_reason(deep), "");
  blocked->setup(deep);
  EXPECT_EQ(blocked->fusion_depth(), 4);

  std::vector<double> one, reg;
  StencilProblem single = built.problem;
  single.fusion_depth = 1;
  blocked->setup(single);
  EXPECT_EQ(blocked->fusion_depth(), 1);
  blocked->upload(u0);
  blocked->advance(9, 3);
  blocked->download(one);
  auto registers = kernels::create_backend("register-tiling", Precision::fp64);
  registers->setup(single);
  registers->upload(u0);
  registers->advance(9, 3);
  registers->download(reg);
  EXPECT_EQ(one, reg);
  EXPECT_GT(relative_difference(one, u0), 1e-6);

  const solver::BackendChoice choice = solver::choose_backend("auto", built.problem);
  EXPECT_NE(choice.name, "cpu") << choice.reason;
}

// The field after `backend` stepped `p` from u0 in the given runs from step0, and the graphs it
// replayed meanwhile (kernels::cuda_graph_replays).
struct Stepped {
  std::vector<double> field;
  std::int64_t replays = 0;
};
Stepped step_in_runs(const std::string& backend, const StencilProblem& p,
                     const std::vector<double>& u0, const std::vector<std::int64_t>& runs,
                     std::int64_t step0) {
  Stepped out;
  auto gpu = kernels::create_backend(backend, p.precision);
  gpu->setup(p);
  EXPECT_EQ(gpu->fusion_depth(), 1);
  gpu->upload(u0);
  const std::int64_t before = kernels::cuda_graph_replays();
  std::int64_t step = step0;
  for (std::int64_t r : runs) {
    gpu->advance(r, step);
    step += r;
  }
  gpu->download(out.field);
  out.replays = kernels::cuda_graph_replays() - before;
  return out;
}

// The CPU reference's field after `steps` steps of `p` from u0 at step0.
std::vector<double> cpu_steps(const StencilProblem& p, const std::vector<double>& u0,
                              std::int64_t steps, std::int64_t step0) {
  auto cpu = kernels::make_cpu_backend(p.precision);
  cpu->setup(p);
  cpu->upload(u0);
  cpu->advance(steps, step0);
  std::vector<double> want;
  cpu->download(want);
  return want;
}

// Nodes whose values differ in any bit (-1 when the sizes differ).
std::int64_t differing_nodes(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return -1;
  std::int64_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    differ += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return differ;
}

// Every face of `p` held at its value (no table, no sine).
void hold_faces_constant(StencilProblem& p) {
  for (auto& f : p.faces) {
    f.table.clear();
    f.amplitude = 0.0;
  }
}

// Runs of steps replayed as CUDA graphs (kernels/cuda/step_graphs.cuh) give the launches'
// results bit for bit, with the sources' schedules changing every step: each CUDA-core backend
// and temporal-blocking at depth 1, fp64 and fp32, random problems (half with the faces'
// conductances and surfaces inside the body), runs cut as a run's observers cut them (300 =
// 256 + 44, 50, 50, then 9, 3 and 7: graphs of 256, 44, 50 and 9 steps, odd lengths among
// them, and launches below the graphs' shortest), with HEATSIM_CUDA_GRAPHS unset and =0; and
// both within the CPU's tolerance. Faces whose values change in time are stepped by launches
// (no replay counted), every other problem by replays.
class CoefficientGraphs : public GpuTest {
 protected:
  // Graphs are what small grids step by when their runs are not one cooperative launch.
  void SetUp() override {
    GpuTest::SetUp();
    setenv("HEATSIM_CUDA_PERSISTENT", "0", 1);
  }
  void TearDown() override {
    unsetenv("HEATSIM_CUDA_GRAPHS");
    unsetenv("HEATSIM_CUDA_PERSISTENT");
  }
};

TEST_F(CoefficientGraphs, ReplaysMatchLaunchesBitForBit) {
  std::mt19937_64 rng(2718);
  const std::vector<std::int64_t> runs{300, 50, 50, 9, 3, 7};
  const std::int64_t step0 = 2;
  std::int64_t total = 0;
  for (std::int64_t r : runs) total += r;
  int replayed = 0, launched = 0, with_sources = 0;
  std::vector<std::string> names = cuda_backend_names();
  names.push_back("temporal-blocking");
  for (const std::string& name : names)
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int repeat = 0; repeat < 4; ++repeat) {
        const std::array<std::int64_t, 3> n = repeat < 2 ? std::array<std::int64_t, 3>{37, 19, 13}
                                                         : std::array<std::int64_t, 3>{21, 9, 30};
        Built built = random_problem(3, n, precision, rng, repeat % 2 == 1);
        StencilProblem& p = built.problem;
        // The first two repeats hold every face's value constant in time (replayed), the
        // others keep their random schedules (some launched).
        if (repeat < 2) hold_faces_constant(p);
        SCOPED_TRACE(name + " " + kernels::to_string(precision) + " faces " + built.faces +
                     (repeat < 2 ? " (held constant)" : ""));
        if (!kernels::create_backend(name, precision)->unsupported_reason(p).empty()) continue;
        const std::vector<double> u0 = random_field(p.points(), rng);
        bool time_dependent = false;
        for (int f = 0; f < 6; ++f) time_dependent = time_dependent || p.faces[f].time_dependent();

        Stepped run[2];
        for (int graphs = 0; graphs < 2; ++graphs) {
          setenv("HEATSIM_CUDA_GRAPHS", graphs ? "1" : "0", 1);
          run[graphs] = step_in_runs(name, p, u0, runs, step0);
        }
        EXPECT_EQ(run[0].replays, 0);
        if (time_dependent) {
          EXPECT_EQ(run[1].replays, 0);
          ++launched;
        } else {
          EXPECT_EQ(run[1].replays, 5) << "graphs of 256, 44, 50, 50 and 9 steps";
          ++replayed;
        }
        with_sources += !p.coefficients->sources.empty();
        EXPECT_EQ(differing_nodes(run[0].field, run[1].field), 0)
            << "nodes that differ between replays and launches";

        const std::vector<double> want = cpu_steps(p, u0, total, step0);
        const double tol = precision == Precision::fp64 ? 1e-11 : 1e-4;
        std::int64_t bad = -1;
        EXPECT_LE(relative_difference(run[1].field, want, &bad), tol) << "worst node " << bad;
        EXPECT_GT(relative_difference(want, u0), 100 * tol);
      }
  EXPECT_GE(replayed, 12);
  EXPECT_GT(launched, 0);
  EXPECT_GT(with_sources, 8);
}

// The faces' rules applied in the sweep (CoefficientArgs::rules, small grids by default) and
// the ghost launch (HEATSIM_CUDA_FACE_RULES=0) give the CPU's result, each CUDA-core backend and
// temporal-blocking at depth 1, 1D to 3D, fp64 and fp32, every face kind at random (constant
// and scheduled, with and without the faces' own conductances), 23 steps (a graph and single
// launches). The two are the same rule on the same operands: they agree to the CPU's tolerance.
class CoefficientFaceRules : public GpuTest {
 protected:
  void TearDown() override { unsetenv("HEATSIM_CUDA_FACE_RULES"); }
};

TEST_F(CoefficientFaceRules, RulesInTheSweepAndTheGhostLaunchAgreeWithTheCpu) {
  std::mt19937_64 rng(1618);
  std::vector<std::string> names = cuda_backend_names();
  names.push_back("temporal-blocking");
  int compared = 0;
  for (const std::string& name : names)
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 1; dims <= 3; ++dims)
        for (int repeat = 0; repeat < 2; ++repeat) {
          const std::array<std::int64_t, 3> n = dims == 1 ? std::array<std::int64_t, 3>{301, 1, 1}
                                                : dims == 2
                                                    ? std::array<std::int64_t, 3>{45, 37, 1}
                                                    : std::array<std::int64_t, 3>{33, 9, 19};
          const Built built = random_problem(dims, n, precision, rng, repeat == 1);
          const StencilProblem& p = built.problem;
          SCOPED_TRACE(name + " " + kernels::to_string(precision) + " " + std::to_string(dims) +
                       "D faces " + built.faces);
          if (!kernels::create_backend(name, precision)->unsupported_reason(p).empty()) continue;
          const std::vector<double> u0 = random_field(p.points(), rng);
          const std::vector<double> want = cpu_steps(p, u0, 23, 4);
          const double tol = precision == Precision::fp64 ? 1e-12 : 2e-5;
          std::vector<double> got[2];
          for (int rules = 0; rules < 2; ++rules) {
            setenv("HEATSIM_CUDA_FACE_RULES", rules ? "1" : "0", 1);
            got[rules] = step_in_runs(name, p, u0, {20, 3}, 4).field;
            std::int64_t bad = -1;
            EXPECT_LE(relative_difference(got[rules], want, &bad), tol)
                << (rules ? "rules in the sweep" : "ghost launch") << ", worst node " << bad;
          }
          EXPECT_LE(relative_difference(got[1], got[0]), tol);
          EXPECT_GT(relative_difference(want, u0), 100 * tol);
          ++compared;
        }
  EXPECT_GE(compared, 30);
}

// Small grids with faces constant in time step whole runs in one cooperative launch
// (kernels/cuda/persistent_steps.cuh): against the per-step launches (HEATSIM_CUDA_PERSISTENT=0,
// replayed from graphs) and the CPU, each CUDA-core backend and temporal-blocking at depth 1,
// fp64 and fp32, 2D and 3D, Dirichlet faces among the random kinds, runs of 300, 50, 9, 3 and 1
// steps. The cooperative steps replay no graph; cuda-naive's per-step sweep is the same
// arithmetic node for node, so it agrees bit for bit.
class CoefficientPersistent : public GpuTest {
 protected:
  void TearDown() override { unsetenv("HEATSIM_CUDA_PERSISTENT"); }
};

TEST_F(CoefficientPersistent, CooperativeRunsMatchPerStepLaunches) {
  std::mt19937_64 rng(3141);
  const std::vector<std::int64_t> runs{300, 50, 9, 3, 1};
  const std::int64_t step0 = 7;
  std::int64_t total = 0;
  for (std::int64_t r : runs) total += r;
  std::vector<std::string> names = cuda_backend_names();
  names.push_back("temporal-blocking");
  int compared = 0, dirichlet = 0;
  for (const std::string& name : names)
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 2; dims <= 3; ++dims)
        for (int repeat = 0; repeat < 2; ++repeat) {
          const std::array<std::int64_t, 3> n = dims == 2 ? std::array<std::int64_t, 3>{61, 23, 1}
                                                          : std::array<std::int64_t, 3>{35, 17, 11};
          Built built = random_problem(dims, n, precision, rng, repeat == 1);
          StencilProblem& p = built.problem;
          hold_faces_constant(p);
          for (auto& f : p.faces)
            if (f.kind == BoundaryKind::periodic) f.kind = BoundaryKind::neumann;  // no images
          SCOPED_TRACE(name + " " + kernels::to_string(precision) + " " + std::to_string(dims) +
                       "D faces " + built.faces);
          if (!kernels::create_backend(name, precision)->unsupported_reason(p).empty()) continue;
          for (int f = 0; f < 2 * dims; ++f)
            dirichlet += p.faces[f].kind == BoundaryKind::dirichlet;
          const std::vector<double> u0 = random_field(p.points(), rng);
          Stepped run[2];
          for (int persistent = 0; persistent < 2; ++persistent) {
            setenv("HEATSIM_CUDA_PERSISTENT", persistent ? "1" : "0", 1);
            run[persistent] = step_in_runs(name, p, u0, runs, step0);
          }
          EXPECT_EQ(run[1].replays, 0) << "the cooperative runs replayed graphs";
          EXPECT_EQ(run[0].replays, 4) << "graphs of 256, 44, 50 and 9 steps";
          const std::vector<double> want = cpu_steps(p, u0, total, step0);
          const double tol = precision == Precision::fp64 ? 1e-11 : 1e-4;
          for (int persistent = 0; persistent < 2; ++persistent) {
            std::int64_t bad = -1;
            EXPECT_LE(relative_difference(run[persistent].field, want, &bad), tol)
                << (persistent ? "cooperative" : "per step") << ", worst node " << bad;
          }
          EXPECT_GT(relative_difference(want, u0), 100 * tol);
          if (name == "cuda-naive") {
            EXPECT_EQ(differing_nodes(run[0].field, run[1].field), 0)
                << "nodes where cuda-naive's steps and the cooperative ones differ";
          }
          ++compared;
        }
  EXPECT_GE(compared, 24);
  EXPECT_GT(dirichlet, 0);
}

}  // namespace
}  // namespace heatsim::test

namespace heatsim::test {
namespace {

// Materials from regions in the compact form (kernels/node_classes.hpp: a class per node and a
// table, HEATSIM_CUDA_CLASSES unset) against the fields (=0): bit for bit, each CUDA-core backend
// and temporal-blocking at depth 1, fp64 and fp32, 1D to 3D, three materials in random slabs and
// up to two sources each uniform over its box (at most 12 classes), every face kind at random,
// the conductances from the pairs' table, and with the faces' conductances given (each of 9 values
// per axis: the faces compacted per axis), stepped three ways: whole runs in one cooperative
// launch, per-step sweeps with the faces' rules (graphs), and the ghost launch
// (HEATSIM_CUDA_FACE_RULES=0). Each within the CPU's tolerance, and the compact form asserted taken
// where the backend reads it and left on the host where it does not
// (Capabilities::compact_materials, compact_faces; kernels::cuda_class_uploads).
class CoefficientClasses : public GpuTest {
 protected:
  void TearDown() override {
    unsetenv("HEATSIM_CUDA_CLASSES");
    unsetenv("HEATSIM_CUDA_PERSISTENT");
    unsetenv("HEATSIM_CUDA_FACE_RULES");
  }
};

TEST_F(CoefficientClasses, ClassesMatchTheFieldsBitForBit) {
  std::mt19937_64 rng(1729);
  const std::vector<std::int64_t> runs{300, 50, 9, 3, 1};
  const std::int64_t step0 = 5;
  std::int64_t total = 0;
  for (std::int64_t r : runs) total += r;
  std::vector<std::string> names = cuda_backend_names();
  names.push_back("temporal-blocking");
  int compared = 0, with_sources = 0, with_faces = 0, compact = 0;
  for (const std::string& name : names)
    for (Precision precision : {Precision::fp64, Precision::fp32})
      for (int dims = 1; dims <= 3; ++dims)
        for (int mode = 0; mode < 6; ++mode) {
          const bool given = mode >= 3;  // the faces' conductances given
          const std::array<std::int64_t, 3> n = dims == 1 ? std::array<std::int64_t, 3>{301, 1, 1}
                                                : dims == 2
                                                    ? std::array<std::int64_t, 3>{61, 23, 1}
                                                    : std::array<std::int64_t, 3>{35, 17, 11};
          Built built;
          do {  // three materials in slabs (random_problem's other half: k per node)
            built = random_problem(dims, n, precision, rng);
          } while (built.faces.find("3 materials") == std::string::npos);
          StencilProblem& p = built.problem;
          auto fields = std::make_shared<CoefficientFields>(*p.coefficients);
          if (fields->sources.size() > 2) fields->sources.resize(2);
          if (given) {  // each face one of 9 values at most k's largest (dt stays stable)
            double k_max = 0.0;
            for (double k : fields->conductivity) k_max = std::max(k_max, k);
            for (int a = 0; a < dims; ++a) {
              std::vector<double> values;
              for (int v = 0; v < 9; ++v) values.push_back(uniform(rng, 0.05, 1.0) * k_max);
              auto& K = fields->faces[static_cast<std::size_t>(a)];
              K.resize(fields->conductivity.size());
              for (double& f : K) f = values[std::uniform_int_distribution<std::size_t>(0, 8)(rng)];
            }
          }
          for (auto& s : fields->sources) {
            const double q = uniform(rng, 1.0, 400.0);
            for (double& v : s.density)
              if (v != 0.0) v = q;
          }
          p.coefficients = fields;
          if (mode % 3 == 0) {  // a cooperative run needs faces constant in time, no images
            hold_faces_constant(p);
            for (auto& f : p.faces)
              if (f.kind == BoundaryKind::periodic) f.kind = BoundaryKind::neumann;
          }
          setenv("HEATSIM_CUDA_PERSISTENT", mode % 3 == 0 ? "1" : "0", 1);
          setenv("HEATSIM_CUDA_FACE_RULES", mode % 3 == 2 ? "0" : "1", 1);
          SCOPED_TRACE(name + " " + kernels::to_string(precision) + " " + std::to_string(dims) +
                       "D mode " + std::to_string(mode) + " faces " + built.faces);
          const auto backend = kernels::create_backend(name, precision);
          if (!backend->unsupported_reason(p).empty()) continue;
          const std::vector<double> u0 = random_field(p.points(), rng);
          // 0: the fields; 1: the classes (the pairs' conductances, or the faces' classes).
          Stepped run[2];
          std::int64_t uploads[2];
          for (int form = 0; form < 2; ++form) {
            setenv("HEATSIM_CUDA_CLASSES", form > 0 ? "1" : "0", 1);
            const std::int64_t before = kernels::cuda_class_uploads();
            run[form] = step_in_runs(name, p, u0, runs, step0);
            uploads[form] = kernels::cuda_class_uploads() - before;
          }
          // The device holds the compact form only where the backend's sweep reads it.
          const kernels::Capabilities caps = backend->capabilities();
          const bool reads = caps.compact_materials && (!given || caps.compact_faces);
          EXPECT_EQ(uploads[0], 0) << "HEATSIM_CUDA_CLASSES=0 took the compact form";
          if (reads) {
            EXPECT_GE(uploads[1], 1) << "the compact form was not taken";
            compact += 1;
          } else {
            EXPECT_EQ(uploads[1], 0) << "a form the sweep does not read was uploaded";
          }
          EXPECT_EQ(differing_nodes(run[0].field, run[1].field), 0)
              << "nodes where the classes and the fields differ";
          const std::vector<double> want = cpu_steps(p, u0, total, step0);
          const double tol = precision == Precision::fp64 ? 1e-11 : 1e-4;
          std::int64_t bad = -1;
          EXPECT_LE(relative_difference(run[1].field, want, &bad), tol) << "worst node " << bad;
          EXPECT_GT(relative_difference(want, u0), 100 * tol);
          with_sources += !fields->sources.empty();
          with_faces += given;
          ++compared;
        }
  EXPECT_GE(compared, 72);
  EXPECT_GT(with_sources, 20);
  EXPECT_GE(with_faces, 36);
  EXPECT_GE(compact, 36);  // register-tiling, temporal-blocking and cuda-naive's own maps
}

// cuda-naive's 3D kernel of the compact forms (its tables in the kernel's parameters, one kernel
// per number of sources, with and without the surfaces' transfer): the materials as classes,
// with the faces' conductances given (as classes) or not, a transfer field of a few values or
// none, zero to four source fields over one box, stepped with the ghost launch (the faces'
// rules not in the sweep), against the fields bit for bit and against the CPU, fp64 and fp32,
// at a size that is no multiple of its 64 x 4 x 4 block.
TEST_F(CoefficientClasses, CudaNaivesCompactKernelMatchesTheFieldsBitForBit) {
  std::mt19937_64 rng(8128);
  const std::array<std::int64_t, 3> n{67, 9, 10};
  int compared = 0, with_transfer = 0, with_faces = 0;
  for (Precision precision : {Precision::fp64, Precision::fp32})
    for (int variant = 0; variant < 4; ++variant)
      for (int sources = 0; sources <= kernels::kMaxSourceFields; ++sources) {
        const bool given = variant & 1, transfer = variant & 2;
        Built built;
        do {
          built = random_problem(3, n, precision, rng);
        } while (built.faces.find("3 materials") == std::string::npos);
        StencilProblem& p = built.problem;
        auto fields = std::make_shared<CoefficientFields>(*p.coefficients);
        fields->sources.clear();
        const auto node = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
          return static_cast<std::size_t>((z * n[1] + y) * n[0] + x);
        };
        // One box for every source (so that the classes stay few), each its own density.
        const std::array<std::int64_t, 3> lo{3, 1, 2}, hi{50, 7, 9};
        for (int s = 0; s < sources; ++s) {
          CoefficientFields::Source src;
          src.density.assign(static_cast<std::size_t>(p.points()), 0.0);
          const double q = uniform(rng, 1.0, 400.0);
          for (std::int64_t z = lo[2]; z < hi[2]; ++z)
            for (std::int64_t y = lo[1]; y < hi[1]; ++y)
              for (std::int64_t x = lo[0]; x < hi[0]; ++x) src.density[node(x, y, z)] = q;
          src.schedule = random_schedule(p.dt, rng);
          fields->sources.push_back(std::move(src));
        }
        if (given) {  // each face one of 9 values at most k's largest (dt stays stable)
          double k_max = 0.0;
          for (double k : fields->conductivity) k_max = std::max(k_max, k);
          std::vector<double> values;
          for (int v = 0; v < 9; ++v) values.push_back(uniform(rng, 0.05, 1.0) * k_max);
          for (auto& K : fields->faces) {
            K.resize(fields->conductivity.size());
            for (double& f : K) f = values[std::uniform_int_distribution<std::size_t>(0, 8)(rng)];
          }
        }
        if (transfer) {  // two values of H over two slabs, a tenth of the stable step's bound
          double c_min = fields->capacity[0];
          for (double c : fields->capacity) c_min = std::min(c_min, c);
          const double H = 0.1 * c_min / p.dt;
          fields->transfer.assign(static_cast<std::size_t>(p.points()), 0.0);
          for (std::int64_t z = 0; z < n[2]; ++z)
            for (std::int64_t y = 0; y < n[1]; ++y)
              for (std::int64_t x = 0; x < 5; ++x) {
                fields->transfer[node(x, y, z)] = H;
                fields->transfer[node(n[0] - 1 - x, y, z)] = 0.5 * H;
              }
        }
        p.coefficients = fields;
        SCOPED_TRACE(std::string(kernels::to_string(precision)) + " sources " +
                     std::to_string(sources) + (given ? " faces given" : "") +
                     (transfer ? " transfer" : "") + " faces " + built.faces);
        if (!kernels::create_backend("cuda-naive", precision)->unsupported_reason(p).empty())
          continue;
        setenv("HEATSIM_CUDA_PERSISTENT", "0", 1);
        setenv("HEATSIM_CUDA_FACE_RULES", "0", 1);
        const std::vector<double> u0 = random_field(p.points(), rng);
        const std::vector<std::int64_t> runs{40, 7, 1};
        Stepped run[2];
        for (int form = 0; form < 2; ++form) {
          setenv("HEATSIM_CUDA_CLASSES", form > 0 ? "1" : "0", 1);
          const std::int64_t before = kernels::cuda_class_uploads();
          run[form] = step_in_runs("cuda-naive", p, u0, runs, 3);
          const std::int64_t uploads = kernels::cuda_class_uploads() - before;
          if (form == 0)
            EXPECT_EQ(uploads, 0) << "HEATSIM_CUDA_CLASSES=0 took the compact form";
          else
            EXPECT_GE(uploads, 1) << "the compact form was not taken";
        }
        EXPECT_EQ(differing_nodes(run[0].field, run[1].field), 0)
            << "nodes where the classes and the fields differ";
        const std::vector<double> want = cpu_steps(p, u0, 48, 3);
        const double tol = precision == Precision::fp64 ? 1e-11 : 1e-4;
        std::int64_t bad = -1;
        EXPECT_LE(relative_difference(run[1].field, want, &bad), tol) << "worst node " << bad;
        EXPECT_GT(relative_difference(want, u0), 100 * tol);
        ++compared;
        with_transfer += transfer;
        with_faces += given;
      }
  EXPECT_EQ(compared, 40);
  EXPECT_EQ(with_transfer, 20);
  EXPECT_EQ(with_faces, 20);
}

// cuda-naive's uniform tiles (64 x 4 x 4 nodes whose compact bytes are all one value: the
// sweep reads no class byte there): materials, sources and a transfer in blocks larger than a
// tile, so that some tiles are uniform and some are not, at a size that is no multiple of a
// tile, with the faces given (their classes uniform inside each block) or not, against the
// fields bit for bit and against the CPU, fp64 and fp32.
TEST_F(CoefficientClasses, CudaNaivesUniformTilesMatchTheFieldsBitForBit) {
  std::mt19937_64 rng(4096);
  const std::array<std::int64_t, 3> n{150, 13, 19};
  int compared = 0;
  for (Precision precision : {Precision::fp64, Precision::fp32})
    for (int variant = 0; variant < 4; ++variant) {
      const bool given = variant & 1, extra = variant & 2;  // extra: a transfer and two sources
      Built built;
      do {
        built = random_problem(3, n, precision, rng);
      } while (built.faces.find("3 materials") == std::string::npos);
      StencilProblem& p = built.problem;
      auto fields = std::make_shared<CoefficientFields>(*p.coefficients);
      // The built problem's materials (its dt is stable for each), laid out in blocks: x < 70,
      // the rest, and z >= 12 with y < 6 over both.
      std::vector<std::pair<double, double>> materials;
      for (std::size_t i = 0; i < fields->conductivity.size(); ++i) {
        const std::pair<double, double> m{fields->conductivity[i], fields->capacity[i]};
        if (std::find(materials.begin(), materials.end(), m) == materials.end())
          materials.push_back(m);
      }
      ASSERT_GE(materials.size(), 2u);
      const auto node = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        return static_cast<std::size_t>((z * n[1] + y) * n[0] + x);
      };
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t y = 0; y < n[1]; ++y)
          for (std::int64_t x = 0; x < n[0]; ++x) {
            const std::size_t m = std::min<std::size_t>(z >= 12 && y < 6 ? 2
                                                        : x >= 70        ? 1
                                                                         : 0,
                                                        materials.size() - 1);
            fields->conductivity[node(x, y, z)] = materials[m].first;
            fields->capacity[node(x, y, z)] = materials[m].second;
          }
      fields->sources.clear();
      for (int s = 0; s < (extra ? 2 : 0); ++s) {
        CoefficientFields::Source src;
        src.density.assign(static_cast<std::size_t>(p.points()), 0.0);
        const double q = uniform(rng, 1.0, 400.0);
        for (std::int64_t z = 0; z < 8; ++z)
          for (std::int64_t y = 0; y < n[1]; ++y)
            for (std::int64_t x = 0; x < 100 + 20 * s; ++x) src.density[node(x, y, z)] = q;
        src.schedule = random_schedule(p.dt, rng);
        fields->sources.push_back(std::move(src));
      }
      if (extra) {  // H over z < 5 and x >= 64, a tenth of the stable step's bound
        double c_min = fields->capacity[0];
        for (double c : fields->capacity) c_min = std::min(c_min, c);
        fields->transfer.assign(static_cast<std::size_t>(p.points()), 0.0);
        for (std::int64_t z = 0; z < 5; ++z)
          for (std::int64_t y = 0; y < n[1]; ++y)
            for (std::int64_t x = 64; x < n[0]; ++x)
              fields->transfer[node(x, y, z)] = 0.1 * c_min / p.dt;
      }
      if (given)  // the harmonic means, given: a few values, one inside each block
        for (int a = 0; a < 3; ++a) {
          auto& K = fields->faces[static_cast<std::size_t>(a)];
          K.assign(fields->conductivity.size(), 0.0);
          const std::int64_t step[3] = {1, n[0], n[0] * n[1]};
          for (std::int64_t z = 0; z < n[2]; ++z)
            for (std::int64_t y = 0; y < n[1]; ++y)
              for (std::int64_t x = 0; x < n[0]; ++x) {
                const std::int64_t c[3] = {x, y, z};
                const std::size_t i = node(x, y, z);
                const std::size_t j = c[a] + 1 < n[static_cast<std::size_t>(a)]
                                          ? i + static_cast<std::size_t>(step[a])
                                          : i;
                K[i] = kernels::face_conductance(fields->conductivity[i], fields->conductivity[j]);
              }
        }
      p.coefficients = fields;
      // A periodic axis's ghosts hold the far side's classes, which would leave too few uniform
      // tiles to test.
      for (auto& f : p.faces)
        if (f.kind == BoundaryKind::periodic) f.kind = BoundaryKind::neumann;
      SCOPED_TRACE(std::string(kernels::to_string(precision)) + (given ? " faces given" : "") +
                   (extra ? " sources and transfer" : "") + " faces " + built.faces);
      if (!kernels::create_backend("cuda-naive", precision)->unsupported_reason(p).empty())
        continue;
      setenv("HEATSIM_CUDA_PERSISTENT", "0", 1);
      setenv("HEATSIM_CUDA_FACE_RULES", "0", 1);
      const std::vector<double> u0 = random_field(p.points(), rng);
      const std::vector<std::int64_t> runs{40, 7, 1};
      Stepped run[2];
      for (int form = 0; form < 2; ++form) {
        setenv("HEATSIM_CUDA_CLASSES", form > 0 ? "1" : "0", 1);
        run[form] = step_in_runs("cuda-naive", p, u0, runs, 3);
      }
      // 3 x 4 x 5 tiles (3 x 3 x 5 over the nodes inside fixed faces); uniform: those inside
      // one block of materials, sources and transfer.
      const std::array<std::int64_t, 2> tiles = kernels::cuda_uniform_tiles();
      EXPECT_TRUE(tiles[1] == 60 || tiles[1] == 45) << tiles[1] << " tiles";
      EXPECT_GE(tiles[0], 8) << "too few uniform tiles to test them";
      EXPECT_LE(tiles[0], 40) << "too few mixed tiles to test them";
      EXPECT_EQ(differing_nodes(run[0].field, run[1].field), 0)
          << "nodes where the classes and the fields differ";
      const std::vector<double> want = cpu_steps(p, u0, 48, 3);
      const double tol = precision == Precision::fp64 ? 1e-11 : 1e-4;
      std::int64_t bad = -1;
      EXPECT_LE(relative_difference(run[1].field, want, &bad), tol) << "worst node " << bad;
      EXPECT_GT(relative_difference(want, u0), 100 * tol);
      ++compared;
    }
  EXPECT_EQ(compared, 8);
}

// More materials than the pairs' table holds (kPairClasses, 16), the faces not given: the
// problem keeps its fields (no compact form on the device) and steps as the CPU does.
TEST_F(CoefficientClasses, MoreClassesThanThePairsTableKeepTheFields) {
  std::mt19937_64 rng(4242);
  const std::array<std::int64_t, 3> n{41, 19, 13};
  Built built;
  do {
    built = random_problem(3, n, Precision::fp64, rng);
  } while (built.faces.find("3 materials") == std::string::npos);
  StencilProblem& p = built.problem;
  auto fields = std::make_shared<CoefficientFields>(*p.coefficients);
  fields->sources.clear();
  // 20 materials in slabs along x: k and rho c_p one pair per slab, within the random
  // problem's ranges (its dt stays stable).
  const double k_max = *std::max_element(fields->conductivity.begin(), fields->conductivity.end());
  const double c_min = *std::min_element(fields->capacity.begin(), fields->capacity.end());
  for (std::int64_t i = 0; i < p.points(); ++i) {
    const int slab = static_cast<int>((i % n[0]) * 20 / n[0]);
    fields->conductivity[static_cast<std::size_t>(i)] = k_max * (0.3 + 0.035 * slab);
    fields->capacity[static_cast<std::size_t>(i)] = c_min * (1.0 + 0.05 * slab);
  }
  p.coefficients = fields;
  const std::vector<double> u0 = random_field(p.points(), rng);
  const std::vector<std::int64_t> runs{20, 7};
  const std::vector<double> want = cpu_steps(p, u0, 27, 0);
  for (const std::string name : {"register-tiling", "cuda-naive"}) {
    SCOPED_TRACE(name);
    setenv("HEATSIM_CUDA_CLASSES", "1", 1);
    const std::int64_t before = kernels::cuda_class_uploads();
    const Stepped got = step_in_runs(name, p, u0, runs, 0);
    EXPECT_EQ(kernels::cuda_class_uploads() - before, 0) << "20 classes took the pairs' form";
    std::int64_t bad = -1;
    EXPECT_LE(relative_difference(got.field, want, &bad), 1e-11) << "worst node " << bad;
    EXPECT_GT(relative_difference(want, u0), 1e-9);
  }
}

}  // namespace
}  // namespace heatsim::test
