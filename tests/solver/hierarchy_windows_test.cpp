// The windows along x and the repeating rows along y by which coarsen's Reuse::along_x copies a
// node's weights, A P row and coarse row from the node before (repeat_windows), against their
// definitions computed node by node here, and the levels built with the copies against those
// built without, on levels whose stretches of equal nodes end at varied places: single
// differing nodes at a row's first nodes, its middle and its last nodes, held nodes, rows that
// repeat the row two before, planes that repeat the plane before, odd and even sizes, both
// forms. The first catches a window one or two nodes wider or narrower than its definition
// along x, one shifted by a node, one whose box along y or z misses its far row or plane or
// stops a node short of the grid's end, and a last node taken as repeating along x or a last
// row along y; the second catches the windows' boxes one node short along y or z (where the
// copies then take a result computed from other values), not those along x one or two nodes
// wider (the copied results reach less far along x than the windows do); it fails with any of
// the copies' reaches (XRepeats: 2 for the weights, 3 for A P and the coarse rows) one smaller.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/level_ops.hpp"
#include "solver/multigrid/hierarchy.hpp"

namespace heatsim::solver::multigrid {
namespace {

using kernels::AxisTransfer;
using kernels::LevelOperator;

// Materials per node: conductances along x, y, z (of the link to the upper neighbour) and a
// node term. Beside the background (0), materials that differ from it in one value alone (the
// node term, the y or the z conductance), one that differs in all, and one that differs along
// x alone.
constexpr double kMaterials[][4] = {{1.0, 2.0, 3.0, 0.0},     {1.0, 2.0, 3.0, 0.25},
                                    {1.0, 6.0, 3.0, 0.0},     {1.0, 2.0, 15.0, 0.0},
                                    {40.0, 30.0, 20.0, 0.01}, {7.0, 2.0, 3.0, 0.0}};
constexpr int kMaterialCount = 6;

struct Layout {
  std::array<std::int64_t, 3> n;
  bool stencil = false;     // 27-point form
  bool held_face = false;   // every node of the x- face held
  bool weak_layer = false;  // a layer across x coupled a thousand times more weakly
  // Compact: the last node's conductance along each axis (unused) its material's rather than 0,
  // so that the last node can be the same bits as the node two before.
  bool unused_ends = false;
};

// Per node, a material (kMaterials) and whether it is held: each z plane the plane before (now
// and then), all background (`quiet` percent of the others) or rows in turn, each the row two
// before along y (now and then), background or a background stretch broken by one to three
// differing nodes, or a short run of them, at the row's first four nodes, around its middle, at
// its last four nodes or anywhere, now and then held. Sparse breaks (quiet planes) leave boxes
// wide enough for the widest window around a break; dense ones, all kinds of narrow ones.
struct Nodes {
  std::vector<int> material;
  std::vector<std::uint8_t> held;
};

Nodes broken_stretches(std::mt19937& rng, const std::array<std::int64_t, 3>& n, int quiet) {
  const std::int64_t nx = n[0], ny = n[1], nz = n[2], plane = nx * ny;
  Nodes out;
  out.material.assign(static_cast<std::size_t>(plane * nz), 0);
  out.held.assign(out.material.size(), 0);
  std::uniform_int_distribution<int> percent(0, 99), other(1, kMaterialCount - 1), breaks(1, 3),
      length(1, 3), place(0, 3);
  std::uniform_int_distribution<std::int64_t> anywhere(0, nx - 1), near_end(0, 3), middle(-2, 2);
  for (std::int64_t z = 0; z < nz; ++z) {
    if (z > 0 && percent(rng) < 30) {
      std::copy_n(&out.material[(z - 1) * plane], plane, &out.material[z * plane]);
      std::copy_n(&out.held[(z - 1) * plane], plane, &out.held[z * plane]);
      continue;
    }
    if (percent(rng) < quiet) continue;
    for (std::int64_t y = 0; y < ny; ++y) {
      const std::int64_t i0 = z * plane + y * nx;
      if (y >= 2 && percent(rng) < 40) {
        std::copy_n(&out.material[i0 - 2 * nx], nx, &out.material[i0]);
        std::copy_n(&out.held[i0 - 2 * nx], nx, &out.held[i0]);
        continue;
      }
      if (percent(rng) < 25 + quiet / 2) continue;  // background alone
      for (int b = breaks(rng); b > 0; --b) {
        const int where = place(rng);
        const std::int64_t x = where == 0   ? near_end(rng)
                               : where == 1 ? nx / 2 + middle(rng)
                               : where == 2 ? nx - 1 - near_end(rng)
                                            : anywhere(rng);
        const int m = other(rng);
        const bool held = percent(rng) < 15;
        for (std::int64_t e = x, end = std::min(nx, x + length(rng)); e < end; ++e) {
          out.material[i0 + e] = m;
          out.held[i0 + e] = held;
        }
      }
    }
  }
  return out;
}

// The level of those nodes: compact (each node's upper conductances and node term its
// material's) or 27-point (couplings -w_c sqrt(k_i k_j) between neighbours, k the mean of a
// material's conductances, w_c 1, 0.3, 0.1 for face, edge and corner neighbours: symmetric).
LevelOperator level_of(const Layout& layout, const Nodes& nodes) {
  LevelOperator op;
  op.dims = 3;
  op.n = layout.n;
  const std::array<std::int64_t, 3> n = layout.n;
  const std::int64_t np = op.points();
  op.fixed = nodes.held;
  for (std::int64_t i = 0; i < np; ++i)
    if (layout.held_face && i % n[0] == 0) op.fixed[i] = 1;
  const auto value = [&](std::int64_t i, int a) {
    const double v = kMaterials[nodes.material[i]][a];
    return layout.weak_layer && a == 0 && i % n[0] == n[0] / 3 ? 1e-3 * v : v;
  };
  if (!layout.stencil) {
    op.node_term.assign(np, 0.0);
    for (int a = 0; a < 3; ++a) op.conductance[a].assign(np, 0.0);
    for (std::int64_t i = 0; i < np; ++i) {
      const std::int64_t c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
      op.node_term[i] = value(i, 3);
      for (int a = 0; a < 3; ++a)
        if (c[a] + 1 < n[a] || layout.unused_ends) op.conductance[a][i] = value(i, a);
    }
    return op;
  }
  const int kp = kernels::stencil_points(3), centre = kernels::stencil_centre(3);
  const double w[3] = {1.0, 0.3, 0.1};
  op.stencil.assign(static_cast<std::size_t>(kp * np), 0.0);
  for (std::int64_t i = 0; i < np; ++i) {
    const std::int64_t c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
    const double ki = (value(i, 0) + value(i, 1) + value(i, 2)) / 3.0;
    double sum = value(i, 3);
    for (int k = 0; k < kp; ++k) {
      if (k == centre) continue;
      const std::int64_t place[3] = {1, n[0], n[0] * n[1]};
      std::int64_t j = 0;
      int moved = 0;
      bool inside = true;
      for (int a = 0; a < 3; ++a) {
        const std::int64_t d = kernels::stencil_offset(k, a);
        inside = inside && c[a] + d >= 0 && c[a] + d < n[a];
        j += (c[a] + d) * place[a];
        moved += d != 0;
      }
      if (!inside) continue;
      const double kj = (value(j, 0) + value(j, 1) + value(j, 2)) / 3.0;
      const double entry = -w[moved - 1] * std::sqrt(ki * kj);
      op.stencil[k * np + i] = entry;
      sum -= entry;
    }
    op.stencil[centre * np + i] = sum;
  }
  return op;
}

// The transfer along x at f is that at f - 2 moved up by one coarse node (f - 2 and f + 1 in
// the grid).
bool moved_up(const AxisTransfer& t, std::int64_t f) {
  if (f < 2 || f + 1 >= static_cast<std::int64_t>(t.from.size())) return false;
  for (int term = 0; term < 2; ++term) {
    const AxisTransfer::Term &a = t.from[f - 2][term], &b = t.from[f][term];
    if (a.offset != b.offset || (a.coarse < 0 ? b.coarse >= 0 : b.coarse != a.coarse + 1))
      return false;
  }
  return true;
}

// Node i's values (fixed, and the entries or node term and conductances) the same bits as node
// j's.
bool same_values(const LevelOperator& op, std::int64_t i, std::int64_t j) {
  const auto bits = [](const kernels::LevelWeights& v, std::int64_t a, std::int64_t b) {
    return std::memcmp(&v[a], &v[b], sizeof(double)) == 0;
  };
  if (op.fixed[i] != op.fixed[j]) return false;
  const std::int64_t np = op.points();
  if (op.stencil_form()) {
    for (int k = 0; k < kernels::stencil_points(3); ++k)
      if (!bits(op.stencil, k * np + i, k * np + j)) return false;
    return true;
  }
  return bits(op.node_term, i, j) && bits(op.conductance[0], i, j) &&
         bits(op.conductance[1], i, j) && bits(op.conductance[2], i, j);
}

// repeat_windows(op) as its definition says, node by node and row by row.
RepeatWindows windows_by_definition(const LevelOperator& op) {
  const std::array<std::int64_t, 3> n = op.n;
  const std::int64_t nx = n[0], ny = n[1], nz = n[2], np = op.points();
  const LevelOperator c = coarsen(op, Reuse::none);
  const AxisTransfer tx = kernels::axis_transfer(nx, false, c.fine_index[0]),
                     ty = kernels::axis_transfer(ny, false, c.fine_index[1]),
                     tz = kernels::axis_transfer(nz, false, c.fine_index[2]);
  std::vector<std::uint8_t> same(static_cast<std::size_t>(np), 0),
      row_same(static_cast<std::size_t>(ny * nz), 0);
  for (std::int64_t i = 0; i < np; ++i) same[i] = moved_up(tx, i % nx) && same_values(op, i, i - 2);
  for (std::int64_t line = 0; line < ny * nz; ++line) {
    const std::int64_t y = line % ny;
    bool all = moved_up(ty, y);
    for (std::int64_t x = 0; x < nx && all; ++x)
      all = same_values(op, line * nx + x, (line - 2) * nx + x);
    row_same[line] = all;
  }
  RepeatWindows out;
  out.windows.assign(static_cast<std::size_t>(np), 0);
  for (std::int64_t i = 0; i < np; ++i) {
    const std::int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    for (int r = 2; r <= 3; ++r) {
      bool all = x - r >= 0 && x + r < nx;
      for (std::int64_t q = std::max<std::int64_t>(z - r, 0); q <= std::min(z + r, nz - 1) && all;
           ++q)
        for (std::int64_t p = std::max<std::int64_t>(y - r, 0); p <= std::min(y + r, ny - 1) && all;
             ++p)
          for (std::int64_t e = x - r; e <= x + r && all; ++e) all = same[(q * ny + p) * nx + e];
      if (all) out.windows[i] |= static_cast<std::uint8_t>(1 << (r - 2));
    }
  }
  for (const int r : {2, 3}) {
    std::vector<std::uint8_t>& rows = r == 2 ? out.rows2 : out.rows3;
    rows.assign(static_cast<std::size_t>(ny * nz), 0);
    for (std::int64_t line = 0; line < ny * nz; ++line) {
      const std::int64_t y = line % ny, z = line / ny;
      bool all = y - r >= 0 && y + r < ny;
      for (std::int64_t q = std::max<std::int64_t>(z - r, 0); q <= std::min(z + r, nz - 1) && all;
           ++q)
        for (std::int64_t p = y - r; p <= y + r && all; ++p) all = row_same[q * ny + p];
      rows[line] = all;
    }
  }
  // Plane z and plane z - 1 each the same bits as the plane before, node by node.
  const std::int64_t plane = nx * ny;
  std::vector<std::uint8_t> plane_same(static_cast<std::size_t>(nz), 0);
  for (std::int64_t z = 2; z < nz; ++z) {
    bool all = moved_up(tz, z);
    for (std::int64_t i = (z - 1) * plane; i < (z + 1) * plane && all; ++i)
      all = same_values(op, i, i - plane);
    plane_same[z] = all;
  }
  for (const int r : {2, 3}) {
    std::vector<std::uint8_t>& planes = r == 2 ? out.planes2 : out.planes3;
    planes.assign(static_cast<std::size_t>(nz), 0);
    for (std::int64_t z = r; z + r < nz; ++z) {
      bool all = true;
      for (std::int64_t q = z - r; q <= z + r && all; ++q) all = plane_same[q];
      planes[z] = all;
    }
  }
  return out;
}

// The first node (x, y, z) where two byte arrays differ, or row (y, z, 0) given ny and nz for
// nx and ny, and both bytes.
std::string first_difference(const std::vector<std::uint8_t>& got,
                             const std::vector<std::uint8_t>& want, std::int64_t nx,
                             std::int64_t ny) {
  if (got.size() != want.size())
    return "sizes " + std::to_string(got.size()) + " and " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      const std::int64_t k = static_cast<std::int64_t>(i);
      return "at (" + std::to_string(k % nx) + ", " + std::to_string((k / nx) % ny) + ", " +
             std::to_string(k / (nx * ny)) + "): " + std::to_string(got[i]) + ", by definition " +
             std::to_string(want[i]);
    }
  return "";
}

template <typename T, typename Alloc>
bool same_bits(const std::vector<T, Alloc>& a, const std::vector<T, Alloc>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

const Layout kLayouts[] = {
    {{23, 14, 13}, false, false, false},       {{24, 15, 12}, false, true, false},
    {{31, 12, 16}, false, false, true},        {{26, 17, 11}, true, false, false},
    {{29, 16, 14}, true, true, true},          {{20, 13, 12}, false, true, true},
    {{25, 13, 15}, false, false, false, true}, {{27, 19, 12}, false, true, true, true},
};

std::string name(const Layout& layout, unsigned seed) {
  return std::to_string(layout.n[0]) + "x" + std::to_string(layout.n[1]) + "x" +
         std::to_string(layout.n[2]) + (layout.stencil ? " 27-point" : " compact") +
         (layout.held_face ? ", held x- face" : "") + (layout.weak_layer ? ", weak layer" : "") +
         (layout.unused_ends ? ", unused ends set" : "") + ", seed " + std::to_string(seed);
}

TEST(HierarchyWindows, WindowsAndRepeatingRowsAreTheirDefinitions) {
  // Every window found somewhere and missed somewhere, so that the comparison is not vacuous.
  std::array<std::int64_t, 2> set{}, clear{};
  std::int64_t rows_set = 0;
  for (const Layout& layout : kLayouts)
    for (unsigned seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(name(layout, seed));
      std::mt19937 rng(seed);
      const LevelOperator op = level_of(layout, broken_stretches(rng, layout.n, seed % 2 ? 0 : 70));
      const RepeatWindows got = repeat_windows(op), want = windows_by_definition(op);
      const std::int64_t nx = op.n[0], ny = op.n[1];
      ASSERT_EQ(first_difference(got.windows, want.windows, nx, ny), "");
      ASSERT_EQ(first_difference(got.rows2, want.rows2, ny, op.n[2]), "");
      ASSERT_EQ(first_difference(got.rows3, want.rows3, ny, op.n[2]), "");
      ASSERT_EQ(got.planes2, want.planes2);
      ASSERT_EQ(got.planes3, want.planes3);
      for (const std::uint8_t w : want.windows)
        for (int r = 0; r < 2; ++r) ((w >> r) & 1 ? set : clear)[r] += 1;
      rows_set += std::count(want.rows2.begin(), want.rows2.end(), 1);
    }
  for (int r = 0; r < 2; ++r) {
    EXPECT_GT(set[r], 100) << "window " << r + 2;
    EXPECT_GT(clear[r], 100) << "window " << r + 2;
  }
  EXPECT_GT(rows_set, 0);
}

// Where nothing can repeat (a 2D level, a periodic axis) nothing is marked.
TEST(HierarchyWindows, NoWindowsIn2DOrAlongAPeriodicAxis) {
  std::mt19937 rng(7);
  LevelOperator op =
      level_of({{23, 14, 13}, false, false, false}, broken_stretches(rng, {23, 14, 13}, 0));
  op.periodic[1] = true;
  const RepeatWindows periodic = repeat_windows(op);
  EXPECT_TRUE(periodic.windows.empty());
  EXPECT_TRUE(periodic.rows2.empty());
  LevelOperator flat;
  flat.dims = 2;
  flat.n = {24, 17, 1};
  flat.fixed.assign(24 * 17, 0);
  flat.node_term.assign(24 * 17, 0.0);
  for (int a = 0; a < 3; ++a) flat.conductance[a].assign(24 * 17, a < 2 ? 1.0 : 0.0);
  for (std::int64_t i = 0; i < 24 * 17; ++i) {
    if (i % 24 == 23) flat.conductance[0][i] = 0.0;
    if (i / 24 == 16) flat.conductance[1][i] = 0.0;
  }
  const RepeatWindows plane = repeat_windows(flat);
  EXPECT_TRUE(plane.windows.empty());
  EXPECT_TRUE(plane.rows3.empty());
}

// The levels below, built with the copies and without, to the bit: two levels down, so that
// the 27-point levels the first gives (whose repeats end where the coarsening's do) are tried
// as well; and one level large enough that whole coarse rows are copied along y.
void expect_reuse_changes_nothing(LevelOperator level, int depth) {
  for (int d = 1; d <= depth; ++d) {
    SCOPED_TRACE("level " + std::to_string(d));
    const LevelOperator reused = coarsen(level, Reuse::along_x);
    LevelOperator computed = coarsen(level, Reuse::none);
    ASSERT_EQ(reused.n, computed.n);
    EXPECT_EQ(reused.fixed, computed.fixed);
    EXPECT_TRUE(same_bits(reused.prolongation, computed.prolongation));
    EXPECT_TRUE(same_bits(reused.stencil, computed.stencil));
    level = std::move(computed);
  }
}

TEST(HierarchyWindows, CopiesGiveTheBitsOfComputingEveryNode) {
  for (const Layout& layout : kLayouts)
    for (unsigned seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(name(layout, seed));
      std::mt19937 rng(seed);
      expect_reuse_changes_nothing(
          level_of(layout, broken_stretches(rng, layout.n, seed % 2 ? 0 : 70)), 2);
    }
  for (const Layout layout :
       {Layout{{41, 30, 28}, false, true, true}, Layout{{40, 31, 27}, true, false, false}}) {
    SCOPED_TRACE(name(layout, 11));
    std::mt19937 rng(11);
    expect_reuse_changes_nothing(level_of(layout, broken_stretches(rng, layout.n, 70)), 1);
  }
}

// Planes in runs along z: each of `distinct` planes of broken stretches repeated 1 to 16 times,
// so that whole coarse planes repeat the one before (XRepeats::planes_repeat) in long runs and
// not in short ones, and the runs end at varied places among the finer planes.
Nodes planes_in_runs(std::mt19937& rng, const std::array<std::int64_t, 3>& n) {
  const std::int64_t plane = n[0] * n[1];
  const Nodes distinct = broken_stretches(rng, {n[0], n[1], n[2]}, 30);
  std::uniform_int_distribution<std::int64_t> run(1, 16), pick(0, n[2] - 1);
  Nodes out;
  out.material.assign(static_cast<std::size_t>(plane * n[2]), 0);
  out.held.assign(out.material.size(), 0);
  for (std::int64_t z = 0; z < n[2];) {
    const std::int64_t from = pick(rng);
    for (std::int64_t e = std::min(n[2], z + run(rng)); z < e; ++z) {
      std::copy_n(&distinct.material[from * plane], plane, &out.material[z * plane]);
      std::copy_n(&distinct.held[from * plane], plane, &out.held[z * plane]);
    }
  }
  return out;
}

// The repeating planes as their definition says, on levels whose planes repeat in runs (and,
// above, on the broken stretches' levels, where runs are short), and the windows and rows there.
TEST(HierarchyWindows, RepeatingPlanesAreTheirDefinition) {
  std::int64_t set = 0, clear = 0;
  for (const Layout layout :
       {Layout{{23, 14, 41}, false, false, false}, Layout{{24, 15, 40}, false, true, true},
        Layout{{21, 13, 39}, true, false, false}})
    for (unsigned seed = 31; seed <= 36; ++seed) {
      SCOPED_TRACE(name(layout, seed));
      std::mt19937 rng(seed);
      const LevelOperator op = level_of(layout, planes_in_runs(rng, layout.n));
      const RepeatWindows got = repeat_windows(op), want = windows_by_definition(op);
      EXPECT_EQ(got.planes2, want.planes2);
      EXPECT_EQ(got.planes3, want.planes3);
      // The windows and rows too, which long runs of planes take from the plane before.
      EXPECT_EQ(first_difference(got.windows, want.windows, op.n[0], op.n[1]), "");
      EXPECT_EQ(first_difference(got.rows2, want.rows2, op.n[1], op.n[2]), "");
      EXPECT_EQ(first_difference(got.rows3, want.rows3, op.n[1], op.n[2]), "");
      set += std::count(want.planes3.begin(), want.planes3.end(), 1);
      clear += std::count(want.planes2.begin(), want.planes2.end(), 0);
    }
  EXPECT_GT(set, 10);
  EXPECT_GT(clear, 10);
}

// Whole planes copied along z (the prolongation's weights and the Galerkin product's coarse
// planes) give the bits of computing every node, on levels whose planes repeat in runs, large
// enough that galerkin works by planes (one thread's block then holds several coarse planes).
TEST(HierarchyWindows, PlaneCopiesGiveTheBitsOfComputingEveryNode) {
  for (const Layout layout :
       {Layout{{33, 30, 61}, false, false, false}, Layout{{34, 29, 64}, false, true, true},
        Layout{{31, 30, 59}, true, false, false}, Layout{{30, 31, 62}, true, true, false}})
    for (unsigned seed = 21; seed <= 24; ++seed) {
      SCOPED_TRACE(name(layout, seed));
      std::mt19937 rng(seed);
      expect_reuse_changes_nothing(level_of(layout, planes_in_runs(rng, layout.n)), 2);
    }
}

// build_hierarchy hands the coarse planes galerkin wrote as copies of the plane before to the next
// level's plane comparison, which takes them without comparing: its levels are those of coarsen
// level by level, to the bit, on levels whose planes repeat in runs (so that coarse planes are
// copied in runs and the level below starts from them), at 1, 2 and 3 threads.
TEST(HierarchyWindows, KnownCopiedPlanesGiveTheLevelsOfComparingEveryPlane) {
  const int threads_before = omp_get_max_threads();
  for (const Layout layout :
       {Layout{{33, 30, 61}, false, false, false}, Layout{{31, 30, 59}, true, false, false}})
    for (unsigned seed = 21; seed <= 23; ++seed)
      for (const int threads : {1, 2, 3}) {
        SCOPED_TRACE(name(layout, seed) + ", " + std::to_string(threads) + " threads");
        omp_set_num_threads(threads);
        std::mt19937 rng(seed);
        const LevelOperator finest = level_of(layout, planes_in_runs(rng, layout.n));
        const std::vector<LevelOperator> built = build_hierarchy(finest, 64);
        ASSERT_GE(built.size(), 3u);
        LevelOperator level = finest;
        for (std::size_t l = 1; l < built.size(); ++l) {
          SCOPED_TRACE("level " + std::to_string(l));
          LevelOperator c = coarsen(level);
          ASSERT_EQ(built[l].n, c.n);
          EXPECT_EQ(built[l].fixed, c.fixed);
          EXPECT_TRUE(same_bits(built[l].prolongation, c.prolongation));
          EXPECT_TRUE(same_bits(built[l].stencil, c.stencil));
          level = std::move(c);
        }
      }
  omp_set_num_threads(threads_before);
}

}  // namespace
}  // namespace heatsim::solver::multigrid
