// The CPU level operations (kernels/cpu/cpu_level_ops.cpp) take shortcuts for speed: both
// colours of a compact level in one pass over its planes, each thread a block of planes; the
// nodes away from the faces without neighbour tables; 27-point rows several nodes at a time;
// restriction one finer row at a time. Each must give the bits of the plain operation: the
// finest level's Gauss-Seidel sweeps against a two-pass sweep written here from the operator,
// and every operation on every level the same on 1, 2 and 3 threads. Random operators (positive
// conductances and node terms, Dirichlet nodes sprinkled in) and random data, never zero, at
// sizes large enough to share out to threads, with periodic axes of even length (which the
// one-pass sweep wraps around).
#include "kernels/cpu/cpu_level_ops.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "solver/multigrid/hierarchy.hpp"

namespace heatsim::kernels {
namespace {

struct Shape {
  std::string name;
  int dims;
  std::array<std::int64_t, 3> n;
  std::array<bool, 3> periodic;
};

std::vector<Shape> shapes() {
  return {{"3D, periodic z", 3, {37, 35, 34}, {false, false, true}},
          {"3D, periodic x and y", 3, {40, 36, 25}, {true, true, false}},
          {"2D, periodic y", 2, {211, 164, 1}, {false, true, false}},
          {"3D, small", 3, {13, 11, 9}, {false, false, false}}};
}

void PrintTo(const Shape& s, std::ostream* os) { *os << s.name; }

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// A compact operator: conductances in [0.5, 50] (0 past a non-periodic end), node terms in
// [0, 2], and every node of the x- face and 2% of the rest held.
LevelOperator random_operator(const Shape& s, std::mt19937_64& rng) {
  LevelOperator op;
  op.dims = s.dims;
  op.n = s.n;
  op.periodic = s.periodic;
  const std::int64_t np = op.points();
  op.node_term.resize(np);
  op.fixed.resize(np);
  for (int a = 0; a < s.dims; ++a) op.conductance[a].resize(np);
  for (std::int64_t i = 0; i < np; ++i) {
    const std::int64_t c[3] = {i % s.n[0], i / s.n[0] % s.n[1], i / (s.n[0] * s.n[1])};
    op.node_term[i] = uniform(rng, 0.0, 2.0);
    op.fixed[i] = (c[0] == 0 && !s.periodic[0]) || uniform(rng, 0.0, 1.0) < 0.02;
    for (int a = 0; a < s.dims; ++a)
      op.conductance[a][i] = c[a] + 1 < s.n[a] || s.periodic[a] ? uniform(rng, 0.5, 50.0) : 0.0;
  }
  return op;
}

std::vector<double> random_vector(std::int64_t np, std::mt19937_64& rng) {
  std::vector<double> v(static_cast<std::size_t>(np));
  for (double& x : v) x = uniform(rng, 1.0, 3.0) * (uniform(rng, 0.0, 1.0) < 0.5 ? -1.0 : 1.0);
  return v;
}

// Red-black Gauss-Seidel on the compact operator as level_ops.hpp defines it, colour by colour
// over the whole grid: the smoother's conductances rounded to fp32, the diagonal the node term
// plus them, each sum over the neighbours x-, x+, y-, y+, z-, z+.
void two_pass_sweeps(const LevelOperator& op, const std::vector<double>& b, std::vector<double>& x,
                     int sweeps, bool reverse, double omega) {
  const std::int64_t np = op.points();
  const std::int64_t stride[3] = {1, op.n[0], op.n[0] * op.n[1]};
  const auto g32 = [&](int a, std::int64_t i) {
    return static_cast<double>(static_cast<float>(op.conductance[a][i]));
  };
  for (int s = 0; s < sweeps; ++s)
    for (int pass = 0; pass < 2; ++pass) {
      const int colour = reverse ? 1 - pass : pass;
      for (std::int64_t i = 0; i < np; ++i) {
        const std::int64_t c[3] = {i % op.n[0], i / op.n[0] % op.n[1], i / stride[2]};
        if ((c[0] + c[1] + c[2]) % 2 != colour || op.fixed[i]) continue;
        double diagonal = op.node_term[i], sum = 0.0;
        for (int a = 0; a < op.dims; ++a) {
          const std::int64_t n = op.n[a], st = stride[a];
          if (c[a] > 0 || op.periodic[a]) {
            const std::int64_t j = c[a] > 0 ? i - st : i + (n - 1) * st;
            diagonal += g32(a, j);
            sum += g32(a, j) * x[j];
          }
          if (c[a] + 1 < n || op.periodic[a]) {
            const std::int64_t j = c[a] + 1 < n ? i + st : i - (n - 1) * st;
            diagonal += g32(a, i);
            sum += g32(a, i) * x[j];
          }
        }
        const double xo = x[i];
        x[i] = xo + omega * ((b[i] + sum) / diagonal - xo);
      }
    }
}

std::int64_t bits_differ(const std::vector<double>& a, const std::vector<double>& b) {
  std::int64_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    differ += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return differ;
}

// (A x)_i on a compact operator as level_ops.hpp defines it: the diagonal (the node term plus
// the node's conductances) times x_i less the neighbours' sum, both summed over x-, x+, y-, y+,
// z-, z+; rounded: with the conductances rounded to fp32 (the smoother's operator). magnitude:
// instead |b_i| + |diagonal x_i| + the sum of |G_ij x_j|, added in that order.
double compact_product(const LevelOperator& op, const std::vector<double>& x, std::int64_t i,
                       bool rounded, bool magnitude = false, double b = 0.0) {
  const std::int64_t stride[3] = {1, op.n[0], op.n[0] * op.n[1]};
  const std::int64_t c[3] = {i % op.n[0], i / op.n[0] % op.n[1], i / stride[2]};
  const auto g = [&](int a, std::int64_t j) {
    return rounded ? static_cast<double>(static_cast<float>(op.conductance[a][j]))
                   : op.conductance[a][j];
  };
  double diagonal = op.node_term[i], sum = 0.0;
  for (int a = 0; a < op.dims; ++a) {
    const std::int64_t n = op.n[a], st = stride[a];
    if (c[a] > 0 || op.periodic[a]) {
      const std::int64_t j = c[a] > 0 ? i - st : i + (n - 1) * st;
      diagonal += g(a, j);
      sum += g(a, j) * x[j];
    }
    if (c[a] + 1 < n || op.periodic[a]) {
      const std::int64_t j = c[a] + 1 < n ? i + st : i - (n - 1) * st;
      diagonal += g(a, i);
      sum += g(a, i) * x[j];
    }
  }
  if (!magnitude) return diagonal * x[i] - sum;
  double m = std::abs(b);
  m += std::abs(diagonal * x[i]);
  for (int a = 0; a < op.dims; ++a) {
    const std::int64_t n = op.n[a], st = stride[a];
    if (c[a] > 0 || op.periodic[a]) {
      const std::int64_t j = c[a] > 0 ? i - st : i + (n - 1) * st;
      m += std::abs(g(a, j) * x[j]);
    }
    if (c[a] + 1 < n || op.periodic[a])
      m += std::abs(g(a, i) * x[c[a] + 1 < n ? i + st : i - (n - 1) * st]);
  }
  return m;
}

class CpuLevelOpsTest : public ::testing::TestWithParam<Shape> {};

// A random operator of the shape on the CPU's level operations, b random and x a vector.
struct OneLevel {
  std::mt19937_64 rng;
  LevelOperator op;
  std::unique_ptr<LevelOps> ops = make_cpu_level_ops();
  std::int64_t np = 0;
  int b = -1, x = -1;
  std::vector<double> bv;

  OneLevel(const Shape& s, std::uint64_t seed) : rng(seed), op(random_operator(s, rng)) {
    ops->setup({op});
    np = op.points();
    b = ops->create_vector(0);
    x = ops->create_vector(0);
    bv = random_vector(np, rng);
    ops->upload(b, bv);
  }
};

TEST_P(CpuLevelOpsTest, TheFinestSweepsAreTheTwoPassSweepsBitForBit) {
  const Shape& s = GetParam();
  OneLevel one(s, std::hash<std::string>{}(s.name));
  auto& [rng, op, ops, np, b, x, bv] = one;
  for (const int threads : {1, 2, 3})
    for (const bool reverse : {false, true})
      for (const double omega : {1.0, 1.27}) {
        std::vector<double> want = random_vector(np, rng), got;
        ops->upload(x, want);
        omp_set_num_threads(threads);
        ops->smooth(0, b, x, 2, reverse, omega);
        ops->download(x, got);
        two_pass_sweeps(op, bv, want, 2, reverse, omega);
        std::int64_t differ = 0;
        for (std::int64_t i = 0; i < np; ++i) differ += got[i] != want[i];
        EXPECT_EQ(differ, 0) << s.name << ", " << threads << " threads, "
                             << (reverse ? "reverse" : "forward") << ", omega " << omega;
      }
  omp_set_num_threads(omp_get_num_procs());
}

// The finest level's residuals (exact and the smoother's), product and magnitude, taken two
// nodes at a time away from the faces, against the definitions node by node, bit for bit, 0
// (+0) on the held nodes; on 1 and 2 threads.
TEST_P(CpuLevelOpsTest, TheFinestResidualsAndProductAreTheDefinitionsBitForBit) {
  const Shape& s = GetParam();
  OneLevel one(s, std::hash<std::string>{}(s.name) + 3);
  auto& [rng, op, ops, np, b, x, bv] = one;
  const int out = ops->create_vector(0);
  const std::vector<double> xv = random_vector(np, rng);
  ops->upload(x, xv);
  for (const int threads : {1, 2})
    for (const int what : {0, 1, 2, 3}) {  // residual, cycle_residual, apply, magnitude
      ops->upload(out, random_vector(np, rng));
      omp_set_num_threads(threads);
      if (what == 0) ops->residual(0, b, x, out);
      if (what == 1) ops->cycle_residual(0, b, x, out);
      if (what == 2) ops->apply(0, x, out);
      if (what == 3) ops->magnitude(0, b, x, out);
      omp_set_num_threads(omp_get_num_procs());
      std::vector<double> got, want(static_cast<std::size_t>(np), 0.0);
      ops->download(out, got);
      for (std::int64_t i = 0; i < np; ++i) {
        if (op.fixed[i]) continue;
        const double ax = compact_product(op, xv, i, what == 1, what == 3, bv[i]);
        want[i] = what >= 2 ? ax : bv[i] - ax;
      }
      EXPECT_EQ(bits_differ(got, want), 0)
          << s.name << ", operation " << what << ", " << threads << " threads";
    }
}

// r . r as dot() sums it: each row of nx nodes in memory order, then the rows' sums in order.
double row_ordered_squares(const std::vector<double>& r, std::int64_t nx) {
  const std::size_t n = static_cast<std::size_t>(nx);
  double sum = 0.0;
  for (std::size_t row = 0; row * n < r.size(); ++row) {
    double s = 0.0;
    for (std::size_t i = row * n; i < (row + 1) * n; ++i) s += r[i] * r[i];
    sum += s;
  }
  return sum;
}

// The fused passes, cg_update (x += alpha p, r -= alpha q, r . r), residual_norm (b - A x, its
// r . r), apply_dot (A x, x . A x) and update_apply_dot (p = z + beta p, then as apply_dot),
// against the updates and the sums written here, bit for bit, and against the separate calls;
// on 1, 2 and 3 threads.
TEST_P(CpuLevelOpsTest, TheFusedUpdateAndResidualAreTheSeparateOperationsBitForBit) {
  const Shape& s = GetParam();
  OneLevel one(s, std::hash<std::string>{}(s.name) + 11);
  auto& [rng, op, ops, np, b, x, bv] = one;
  const int p = ops->create_vector(0), q = ops->create_vector(0), r = ops->create_vector(0);
  const std::vector<double> pv = random_vector(np, rng), qv = random_vector(np, rng);
  ops->upload(p, pv);
  ops->upload(q, qv);
  const double alpha = -0.3718;
  for (const int threads : {1, 2, 3}) {
    const std::vector<double> xv = random_vector(np, rng), rv = random_vector(np, rng);
    ops->upload(x, xv);
    ops->upload(r, rv);
    omp_set_num_threads(threads);
    const double rr = ops->cg_update(alpha, p, q, x, r);
    omp_set_num_threads(omp_get_num_procs());
    std::vector<double> got_x, got_r, want_x(xv), want_r(rv);
    for (std::int64_t i = 0; i < np; ++i) {
      want_x[i] = alpha * pv[i] + 1.0 * xv[i];
      want_r[i] = -alpha * qv[i] + 1.0 * rv[i];
    }
    ops->download(x, got_x);
    ops->download(r, got_r);
    EXPECT_EQ(bits_differ(got_x, want_x), 0) << s.name << ", " << threads << " threads";
    EXPECT_EQ(bits_differ(got_r, want_r), 0) << s.name << ", " << threads << " threads";
    EXPECT_EQ(rr, row_ordered_squares(want_r, s.n[0])) << s.name << ", " << threads << " threads";
    EXPECT_EQ(rr, ops->dot(r, r));

    omp_set_num_threads(threads);
    const double residual_rr = ops->residual_norm(0, b, x, r);
    omp_set_num_threads(omp_get_num_procs());
    std::vector<double> fused, separate;
    ops->download(r, fused);
    ops->residual(0, b, x, q);
    ops->download(q, separate);
    ops->upload(q, qv);
    EXPECT_EQ(bits_differ(fused, separate), 0) << s.name << ", " << threads << " threads";
    EXPECT_EQ(residual_rr, row_ordered_squares(separate, s.n[0]))
        << s.name << ", " << threads << " threads";
    EXPECT_GT(residual_rr, 0.0);

    omp_set_num_threads(threads);
    const double xy = ops->apply_dot(0, x, r);
    omp_set_num_threads(omp_get_num_procs());
    ops->download(r, fused);
    ops->apply(0, x, q);
    ops->download(q, separate);
    ops->upload(q, qv);
    EXPECT_EQ(bits_differ(fused, separate), 0) << s.name << ", " << threads << " threads";
    double want_xy = 0.0;
    for (std::int64_t row = 0; row * s.n[0] < np; ++row) {
      double part = 0.0;
      for (std::int64_t i = row * s.n[0]; i < (row + 1) * s.n[0]; ++i)
        part += want_x[i] * separate[i];
      want_xy += part;
    }
    EXPECT_EQ(xy, want_xy) << s.name << ", " << threads << " threads";

    // The next direction inside the product: p = z + beta p (beta 0: p = z), then as apply_dot.
    for (const double beta : {0.0, 0.81}) {
      const int z = b;
      ops->upload(p, pv);
      omp_set_num_threads(threads);
      const double pq = ops->update_apply_dot(0, z, beta, p, r);
      omp_set_num_threads(omp_get_num_procs());
      std::vector<double> got_p, got_q, want_p(pv);
      for (std::int64_t i = 0; i < np; ++i)
        want_p[i] = beta == 0.0 ? 1.0 * bv[i] : 1.0 * bv[i] + beta * pv[i];
      ops->download(p, got_p);
      ops->download(r, got_q);
      ops->upload(x, want_p);
      ops->apply(0, x, q);
      ops->download(q, separate);
      ops->upload(q, qv);
      EXPECT_EQ(bits_differ(got_p, want_p), 0) << s.name << ", beta " << beta << ", " << threads;
      EXPECT_EQ(bits_differ(got_q, separate), 0) << s.name << ", beta " << beta << ", " << threads;
      double want_pq = 0.0;
      for (std::int64_t row = 0; row * s.n[0] < np; ++row) {
        double part = 0.0;
        for (std::int64_t i = row * s.n[0]; i < (row + 1) * s.n[0]; ++i)
          part += want_p[i] * separate[i];
        want_pq += part;
      }
      EXPECT_EQ(pq, want_pq) << s.name << ", beta " << beta << ", " << threads << " threads";
    }
    ops->upload(p, pv);
  }
}

// smooth_from_zero: the sweeps from +0 on every node, whatever x held (NaN here), and zero()
// alone +0 everywhere (the sign too: 0 times a negative value would leave -0).
TEST_P(CpuLevelOpsTest, SmoothingFromZeroIsTheSweepsFromPlusZero) {
  const Shape& s = GetParam();
  OneLevel one(s, std::hash<std::string>{}(s.name) + 1);
  auto& [rng, op, ops, np, b, x, bv] = one;
  const std::vector<double> nan(static_cast<std::size_t>(np), std::nan(""));
  std::vector<double> got;
  ops->upload(x, random_vector(np, rng));
  ops->zero(x);
  ops->download(x, got);
  std::int64_t plus_zero = 0;
  for (double v : got) plus_zero += v == 0.0 && !std::signbit(v);
  EXPECT_EQ(plus_zero, np);
  for (const int sweeps : {1, 2})
    for (const bool reverse : {false, true}) {
      ops->upload(x, nan);
      ops->smooth_from_zero(0, b, x, sweeps, reverse, 1.27);
      ops->download(x, got);
      std::vector<double> want(static_cast<std::size_t>(np), 0.0);
      two_pass_sweeps(op, bv, want, sweeps, reverse, 1.27);
      std::int64_t differ = 0;
      for (std::int64_t i = 0; i < np; ++i)
        differ += std::memcmp(&got[i], &want[i], sizeof(double)) != 0;
      EXPECT_EQ(differ, 0) << s.name << ", " << sweeps << " sweeps "
                           << (reverse ? "reverse" : "forward");
    }
}

// A conductance past fp32's range (infinite once rounded) on one axis, in a row away from the
// faces or on a face row: smooth_from_zero must then sweep as the plain sweeps from +0 (0
// times the infinite conductance included), not take its shortcut.
TEST_P(CpuLevelOpsTest, SmoothingFromZeroWithAnInfiniteRoundedConductanceIsThePlainSweeps) {
  const Shape& s = GetParam();
  for (const bool face : {false, true})
    for (int a = 0; a < s.dims; ++a) {
      std::mt19937_64 rng(std::hash<std::string>{}(s.name) + 7);
      LevelOperator op = random_operator(s, rng);
      const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2];
      const std::int64_t i = ((face ? 0 : nz / 2) * ny + (face ? 0 : ny / 2)) * nx + nx / 2;
      op.fixed[i] = 0;
      op.conductance[a][i] = 1e300;
      auto ops = make_cpu_level_ops();
      ops->setup({op});
      const std::int64_t np = op.points();
      const int b = ops->create_vector(0), x = ops->create_vector(0);
      const std::vector<double> bv = random_vector(np, rng);
      ops->upload(b, bv);
      ops->upload(x, std::vector<double>(static_cast<std::size_t>(np), std::nan("")));
      ops->smooth_from_zero(0, b, x, 1, false, 1.27);
      std::vector<double> got, want(static_cast<std::size_t>(np), 0.0);
      ops->download(x, got);
      two_pass_sweeps(op, bv, want, 1, false, 1.27);
      EXPECT_EQ(bits_differ(got, want), 0) << s.name << ", axis " << a << (face ? ", face" : "");
    }
}

// Every operation of a V-cycle on every level of the hierarchy: the same bits on 1, 2 and 3
// threads.
TEST_P(CpuLevelOpsTest, EveryLevelsOperationsDoNotDependOnTheThreads) {
  const Shape& s = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(s.name) + 1);
  const std::vector<LevelOperator> levels =
      solver::multigrid::build_hierarchy(random_operator(s, rng), 8);
  ASSERT_GE(levels.size(), 3u);
  // The outputs of every operation on every level, on `threads` threads, from the same inputs.
  const auto run = [&](int threads) {
    std::mt19937_64 data(7);
    auto ops = make_cpu_level_ops();
    ops->setup(levels);
    omp_set_num_threads(threads);
    std::vector<std::vector<double>> out;
    for (int l = 0; l < static_cast<int>(levels.size()); ++l) {
      const std::int64_t np = levels[l].points();
      const int b = ops->create_vector(l), x = ops->create_vector(l), r = ops->create_vector(l);
      ops->upload(b, random_vector(np, data));
      ops->upload(x, random_vector(np, data));
      std::vector<double> v;
      for (const bool reverse : {false, true}) {
        ops->smooth(l, b, x, 2, reverse, 1.13);
        ops->download(x, v);
        out.push_back(v);
      }
      ops->cycle_residual(l, b, x, r);
      ops->download(r, v);
      out.push_back(v);
      ops->residual(l, b, x, r);
      ops->download(r, v);
      out.push_back(v);
      if (l + 1 < static_cast<int>(levels.size())) {
        const int coarse = ops->create_vector(l + 1);
        ops->restrict_residual(l, r, coarse);
        ops->download(coarse, v);
        out.push_back(v);
        ops->upload(coarse, random_vector(levels[l + 1].points(), data));
        ops->prolong_add(l, coarse, x);
        ops->download(x, v);
        out.push_back(v);
      }
    }
    omp_set_num_threads(omp_get_num_procs());
    return out;
  };
  const auto one = run(1);
  for (const int threads : {2, 3}) {
    const auto many = run(threads);
    ASSERT_EQ(many.size(), one.size());
    for (std::size_t k = 0; k < one.size(); ++k)
      EXPECT_EQ(many[k], one[k]) << s.name << ", output " << k << ", " << threads << " threads";
  }
}

// A stencil-form level as the hierarchy builds them below the finest: entries A(i, i + o_k)
// toward free neighbours symmetric to the last bit (A(j, i) the same bits), each in [-5, -0.1]
// (now and then 1e4 times weaker), the centres above the sum of the magnitudes; the entries
// toward held nodes drawn apart from their mirror, held nodes' rows random, 0 toward no node
// (past a non-periodic end). Every node of the x- face and 5% of the rest held.
LevelOperator random_stencil_level(const Shape& s, std::mt19937_64& rng) {
  LevelOperator op;
  op.dims = s.dims;
  op.n = s.n;
  op.periodic = s.periodic;
  const std::int64_t np = op.points();
  const int kp = stencil_points(s.dims), centre = stencil_centre(s.dims);
  op.fixed.resize(np);
  for (std::int64_t i = 0; i < np; ++i)
    op.fixed[i] = (i % s.n[0] == 0 && !s.periodic[0]) || uniform(rng, 0.0, 1.0) < 0.05;
  op.stencil.assign(static_cast<std::size_t>(kp * np), 0.0);
  // The neighbour of node i at offset k, or -1.
  const auto neighbour = [&](std::int64_t i, int k) -> std::int64_t {
    std::int64_t c[3] = {i % s.n[0], i / s.n[0] % s.n[1], i / (s.n[0] * s.n[1])};
    for (int a = 0; a < s.dims; ++a) {
      c[a] += stencil_offset(k, a);
      if (c[a] < 0 || c[a] >= s.n[a]) {
        if (!s.periodic[a]) return -1;
        c[a] = (c[a] + s.n[a]) % s.n[a];
      }
    }
    return (c[2] * s.n[1] + c[1]) * s.n[0] + c[0];
  };
  const auto coupling = [&] {
    return -uniform(rng, 0.1, 5.0) * (uniform(rng, 0.0, 1.0) < 0.05 ? 1e-4 : 1.0);
  };
  for (std::int64_t i = 0; i < np; ++i)
    for (int k = centre + 1; k < kp; ++k) {
      const std::int64_t j = neighbour(i, k);
      if (j < 0) continue;
      const double a = coupling();
      op.stencil[k * np + i] = a;
      op.stencil[(kp - 1 - k) * np + j] = op.fixed[i] || op.fixed[j] ? coupling() : a;
    }
  for (std::int64_t i = 0; i < np; ++i) {
    double sum = 0.0;
    for (int k = 0; k < kp; ++k)
      if (k != centre) sum += std::abs(op.stencil[k * np + i]);
    op.stencil[centre * np + i] = sum * uniform(rng, 1.0, 1.5) + uniform(rng, 0.0, 0.1);
  }
  return op;
}

// A stencil level's operator as the V-cycle uses it (level_ops.hpp): the entries off the centre
// rounded to fp32, the centre moved by what their rounding took from the row, in k order.
struct RoundedStencil {
  std::vector<double> entry;    // [k * np + i], the centre's moved
  std::vector<std::int64_t> j;  // [k * np + i]: the neighbour, or -1
};
RoundedStencil rounded_stencil(const LevelOperator& op) {
  const std::int64_t np = op.points();
  const int kp = stencil_points(op.dims), centre = stencil_centre(op.dims);
  RoundedStencil r;
  r.entry.resize(static_cast<std::size_t>(kp * np));
  r.j.resize(static_cast<std::size_t>(kp * np));
  for (std::int64_t i = 0; i < np; ++i) {
    double moved = 0.0;
    for (int k = 0; k < kp; ++k) {
      if (k == centre) continue;
      const double a = op.stencil[k * np + i], rounded = static_cast<float>(a);
      moved += a - rounded;
      r.entry[k * np + i] = rounded;
    }
    r.entry[centre * np + i] = op.stencil[centre * np + i] + moved;
    std::int64_t c[3] = {i % op.n[0], i / op.n[0] % op.n[1], i / (op.n[0] * op.n[1])};
    for (int k = 0; k < kp; ++k) {
      std::int64_t d[3] = {c[0], c[1], c[2]};
      bool there = true;
      for (int a = 0; a < op.dims; ++a) {
        d[a] += stencil_offset(k, a);
        if (d[a] < 0 || d[a] >= op.n[a]) {
          there = there && op.periodic[a];
          d[a] = (d[a] + op.n[a]) % op.n[a];
        }
      }
      r.j[k * np + i] = there ? (d[2] * op.n[1] + d[1]) * op.n[0] + d[0] : -1;
    }
  }
  return r;
}

// Multicolour Gauss-Seidel on a stencil level as level_ops.hpp defines it, colour by colour over
// the whole grid (colour x%2 + 2 (y%2) + 4 (z%2); reverse: from the last), each node from the
// values before its colour (the same as node by node where no colour joins itself, and what a
// periodic axis of odd length asks for), its sum over the offsets in k order.
void colour_sweeps(const LevelOperator& op, const RoundedStencil& A, const std::vector<double>& b,
                   std::vector<double>& x, int sweeps, bool reverse, double omega) {
  const std::int64_t np = op.points();
  const int kp = stencil_points(op.dims), centre = stencil_centre(op.dims);
  const int colours = 1 << op.dims;
  for (int s = 0; s < sweeps; ++s)
    for (int pass = 0; pass < colours; ++pass) {
      const int colour = reverse ? colours - 1 - pass : pass;
      const std::vector<double> old = x;
      for (std::int64_t i = 0; i < np; ++i) {
        const std::int64_t c[3] = {i % op.n[0], i / op.n[0] % op.n[1], i / (op.n[0] * op.n[1])};
        if ((c[0] & 1) + 2 * (c[1] & 1) + 4 * (c[2] & 1) != colour || op.fixed[i]) continue;
        double sum = 0.0;
        for (int k = 0; k < kp; ++k)
          if (k != centre && A.j[k * np + i] >= 0)
            sum += A.entry[k * np + i] * old[A.j[k * np + i]];
        x[i] = old[i] + omega * ((b[i] - sum) / A.entry[centre * np + i] - old[i]);
      }
    }
}

// b - A x on the free nodes (0 on the held ones), the products in k order.
// kind 0: b - A x; 1: A x; 2: the magnitude |b| + sum_j |A_ij x_j|; on the free nodes, 0 on the
// held ones, the terms in k order.
std::vector<double> stencil_operation(const LevelOperator& op, const RoundedStencil& A,
                                      const std::vector<double>& b, const std::vector<double>& x,
                                      int kind) {
  const std::int64_t np = op.points();
  const int kp = stencil_points(op.dims);
  std::vector<double> r(static_cast<std::size_t>(np), 0.0);
  for (std::int64_t i = 0; i < np; ++i) {
    if (op.fixed[i]) continue;
    double sum = kind == 2 ? std::abs(b[i]) : 0.0;
    for (int k = 0; k < kp; ++k)
      if (A.j[k * np + i] >= 0) {
        const double term = A.entry[k * np + i] * x[A.j[k * np + i]];
        sum += kind == 2 ? std::abs(term) : term;
      }
    r[i] = kind == 0 ? b[i] - sum : sum;
  }
  return r;
}

// The stencil levels' sweeps (a 3D level's colours in one pass over its planes; several nodes at
// a time), residuals, products and magnitudes against the colour-by-colour sweeps and the plain
// sums, bit for bit: on random symmetric levels of the shape and of the shape one node longer
// per axis (odd and even sizes, and a periodic axis of odd length), on one whose entries
// between two free nodes differ in the last bit of their fp32 rounding (which must keep every
// entry: a 3D level symmetric to the last bit keeps only half), and on the hierarchy's coarse
// levels, on 1, 2 and 3 threads.
TEST_P(CpuLevelOpsTest, StencilLevelsSweepAndResidualAsTheColourByColourDefinition) {
  const Shape& s = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(s.name) + 2);
  std::vector<LevelOperator> levels;
  for (int grow = 0; grow < 2; ++grow) {
    Shape t = s;
    for (int a = 0; a < s.dims; ++a) t.n[a] += grow;
    levels.push_back(random_stencil_level(t, rng));
  }
  {
    // A free node's entry toward a free neighbour one fp32 ulp off the neighbour's entry back.
    LevelOperator op = levels.front();
    const std::int64_t np = op.points();
    const std::int64_t i = np / 2 + op.n[0] / 2;
    const int k = stencil_points(op.dims) - 1;  // toward i + (1, 1, 1)
    op.fixed[i] = 0;
    op.fixed[(i + 1 + op.n[0] + op.n[0] * op.n[1]) % np] = 0;
    const float a = static_cast<float>(op.stencil[k * np + i]);
    op.stencil[k * np + i] = std::nextafter(a, 0.0f);
    levels.push_back(op);
  }
  if (s.dims == 3) {
    // The same one ulp off, mirrored from a node that the check takes apart from the rows'
    // branch-free runs: the last node of a row on the y- face, then of an inside row (both
    // nodes free as drawn, so that the level is otherwise symmetric).
    const LevelOperator& base = levels.front();
    const std::int64_t nx = base.n[0], ny = base.n[1], nz = base.n[2], np = base.points();
    for (const std::int64_t y : {std::int64_t{0}, ny / 2}) {
      std::int64_t j = -1;
      for (std::int64_t z = 1; z < nz && j < 0; ++z) {
        const std::int64_t i = (z * ny + y) * nx + nx - 1;
        if (!base.fixed[i] && !base.fixed[i - nx * ny]) j = i - nx * ny;
      }
      ASSERT_GE(j, 0);
      LevelOperator op = base;
      const int k = 22;  // toward j + (0, 0, 1)
      const float a = static_cast<float>(op.stencil[k * np + j]);
      op.stencil[k * np + j] = std::nextafter(a, 0.0f);
      levels.push_back(op);
    }
  }
  std::vector<LevelOperator> hierarchy =
      solver::multigrid::build_hierarchy(random_operator(s, rng), 8);
  for (std::size_t l = 1; l < hierarchy.size(); ++l) {
    hierarchy[l].prolongation = {};
    hierarchy[l].fine_index = {};
    levels.push_back(hierarchy[l]);
  }
  for (const LevelOperator& op : levels) {
    const RoundedStencil A = rounded_stencil(op);
    const std::int64_t np = op.points();
    const std::vector<double> b = random_vector(np, rng);
    auto ops = make_cpu_level_ops();
    ops->setup({op});
    const int bv = ops->create_vector(0), xv = ops->create_vector(0), rv = ops->create_vector(0);
    ops->upload(bv, b);
    const std::string name = s.name + ", " + std::to_string(op.n[0]) + " x " +
                             std::to_string(op.n[1]) + " x " + std::to_string(op.n[2]);
    for (const int threads : {1, 2, 3})
      for (const bool reverse : {false, true}) {
        std::vector<double> want = random_vector(np, rng), got;
        ops->upload(xv, want);
        omp_set_num_threads(threads);
        ops->smooth(0, bv, xv, 2, reverse, 1.13);
        ops->cycle_residual(0, bv, xv, rv);
        omp_set_num_threads(omp_get_num_procs());
        ops->download(xv, got);
        colour_sweeps(op, A, b, want, 2, reverse, 1.13);
        EXPECT_EQ(bits_differ(got, want), 0)
            << name << ", sweeps, " << threads << " threads, " << (reverse ? "reverse" : "forward");
        ops->download(rv, got);
        EXPECT_EQ(bits_differ(got, stencil_operation(op, A, b, want, 0)), 0)
            << name << ", residual, " << threads << " threads";
        omp_set_num_threads(threads);
        ops->apply(0, xv, rv);
        omp_set_num_threads(omp_get_num_procs());
        ops->download(rv, got);
        EXPECT_EQ(bits_differ(got, stencil_operation(op, A, b, want, 1)), 0)
            << name << ", product, " << threads << " threads";
        ops->magnitude(0, bv, xv, rv);
        ops->download(rv, got);
        EXPECT_EQ(bits_differ(got, stencil_operation(op, A, b, want, 2)), 0)
            << name << ", magnitude";
      }
  }
}

// prolong_add (finer rows whose coarse nodes are every other node along x taken without the
// tables, several nodes at a time) against x_fine += P x_coarse node by node, its terms in the
// order of the axes' transfer tables (z, then y, then x), the held finer nodes left alone; on
// every level of the hierarchy, on 1 and 2 threads.
TEST_P(CpuLevelOpsTest, ProlongationIsTheDefinitionBitForBit) {
  const Shape& s = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(s.name) + 4);
  // The random conductances' hierarchy keeps planes here and there; with every conductance 1,
  // no node term and the faces held, at odd sizes, its levels take every other node.
  LevelOperator uniform_op = random_operator(s, rng);
  for (int a = 0; a < s.dims; ++a) {
    uniform_op.n[a] |= 1;
    uniform_op.periodic[a] = false;
  }
  {
    const std::int64_t np = uniform_op.points();
    const auto& n = uniform_op.n;
    uniform_op.node_term.assign(np, 0.0);
    uniform_op.fixed.assign(np, 0);
    for (int a = 0; a < s.dims; ++a) uniform_op.conductance[a].assign(np, 0.0);
    for (std::int64_t i = 0; i < np; ++i) {
      const std::int64_t c[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
      for (int a = 0; a < s.dims; ++a) {
        uniform_op.fixed[i] |= c[a] == 0 || c[a] + 1 == n[a];
        if (c[a] + 1 < n[a]) uniform_op.conductance[a][i] = 1.0;
      }
    }
  }
  for (const LevelOperator& finest : {random_operator(s, rng), uniform_op}) {
    std::vector<LevelOperator> levels = solver::multigrid::build_hierarchy(finest, 8);
    ASSERT_GE(levels.size(), 2u);
    // Finer nodes held besides, which the weights reach.
    for (std::size_t l = 0; l + 1 < levels.size(); ++l)
      for (std::uint8_t& f : levels[l].fixed) f = f || uniform(rng, 0.0, 1.0) < 0.03;
    auto ops = make_cpu_level_ops();
    ops->setup(levels);
    for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
      const LevelOperator &F = levels[l], &C = levels[l + 1];
      const std::int64_t nf = F.points(), nc = C.points();
      std::array<AxisTransfer, 3> t;
      for (int a = 0; a < 3; ++a)
        t[a] = axis_transfer(F.n[a], a < F.dims && F.periodic[a],
                             a < C.dims ? C.fine_index[a] : std::vector<std::int64_t>{0});
      const std::vector<double> xc = random_vector(nc, rng), xf = random_vector(nf, rng);
      std::vector<double> want = xf;
      for (std::int64_t i = 0; i < nf; ++i) {
        if (F.fixed[i]) continue;
        const std::int64_t c[3] = {i % F.n[0], i / F.n[0] % F.n[1], i / (F.n[0] * F.n[1])};
        double sum = 0.0;
        for (const auto& tz : t[2].from[c[2]])
          for (const auto& ty : t[1].from[c[1]])
            for (const auto& tx : t[0].from[c[0]]) {
              if (tz.coarse < 0 || ty.coarse < 0 || tx.coarse < 0) continue;
              const int k = (C.dims > 2 ? 9 * (tz.offset + 1) : 0) +
                            (C.dims > 1 ? 3 * (ty.offset + 1) : 0) + tx.offset + 1;
              const std::int64_t J = (tz.coarse * C.n[1] + ty.coarse) * C.n[0] + tx.coarse;
              sum += C.prolongation[k * nc + J] * xc[J];
            }
        want[i] += sum;
      }
      const int cv = ops->create_vector(static_cast<int>(l + 1));
      const int fv = ops->create_vector(static_cast<int>(l));
      ops->upload(cv, xc);
      for (const int threads : {1, 2}) {
        ops->upload(fv, xf);
        omp_set_num_threads(threads);
        ops->prolong_add(static_cast<int>(l), cv, fv);
        omp_set_num_threads(omp_get_num_procs());
        std::vector<double> got;
        ops->download(fv, got);
        EXPECT_EQ(bits_differ(got, want), 0)
            << s.name << ", level " << l << ", " << threads << " threads";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuLevelOpsTest, ::testing::ValuesIn(shapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           std::string name;
                           for (const char ch : info.param.name)
                             if (std::isalnum(static_cast<unsigned char>(ch))) name += ch;
                           return name;
                         });

}  // namespace
}  // namespace heatsim::kernels
