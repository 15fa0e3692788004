#include "bottom_factor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace heatsim::solver::multigrid {

namespace {

using kernels::BottomFactor;
using kernels::LevelOperator;

// The level's nodes as coordinates and back: i = (z n_y + y) n_x + x.
struct Grid {
  std::array<std::int64_t, kernels::kMaxDims> n;
  std::int64_t index(const std::array<std::int64_t, kernels::kMaxDims>& c) const {
    return (c[2] * n[1] + c[1]) * n[0] + c[0];
  }
  std::array<std::int64_t, kernels::kMaxDims> coords(std::int64_t i) const {
    return {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
  }
};

// Calls f(j, weight) for each entry A(i, j), j a free node (i's own entry included), of free
// node i: the stencil's non-zero entries, or a compact level's -G to each free neighbour and
// its diagonal a_i + sum G.
template <typename F>
void for_row(const LevelOperator& level, const Grid& g, std::int64_t i, F&& f) {
  const auto c = g.coords(i);
  const auto held = [&](std::int64_t j) { return level.fixed[static_cast<std::size_t>(j)] != 0; };
  if (level.stencil_form()) {
    const std::int64_t np = level.points();
    for (int k = 0; k < kernels::stencil_points(level.dims); ++k) {
      const double w = level.stencil[static_cast<std::size_t>(k * np + i)];
      if (w == 0.0) continue;
      auto d = c;
      bool inside = true;
      for (int a = 0; a < level.dims; ++a) {
        d[a] += kernels::stencil_offset(k, a);
        inside = inside && d[a] >= 0 && d[a] < g.n[a];
      }
      if (!inside) continue;
      const std::int64_t j = g.index(d);
      if (!held(j)) f(j, w);
    }
    return;
  }
  double diagonal = level.node_term.empty() ? 0.0 : level.node_term[static_cast<std::size_t>(i)];
  for (int a = 0; a < level.dims; ++a) {
    const std::int64_t stride = a == 0 ? 1 : a == 1 ? g.n[0] : g.n[0] * g.n[1];
    if (c[a] + 1 < g.n[a]) {  // the face to the upper neighbour, stored at i
      const double G = level.conductance[a][static_cast<std::size_t>(i)];
      diagonal += G;
      if (!held(i + stride)) f(i + stride, -G);
    }
    if (c[a] > 0) {  // the face to the lower neighbour, stored there
      const double G = level.conductance[a][static_cast<std::size_t>(i - stride)];
      diagonal += G;
      if (!held(i - stride)) f(i - stride, -G);
    }
  }
  f(i, diagonal);
}

}  // namespace

std::optional<BottomFactor> factor_bottom(const LevelOperator& level) {
  for (int a = 0; a < level.dims; ++a)
    if (level.periodic[a]) return std::nullopt;
  const Grid g{level.n};
  const std::int64_t np = level.points();
  // The rows: the free nodes with the longest axis outermost and the shortest innermost.
  std::array<int, kernels::kMaxDims> axis{0, 1, 2};
  std::stable_sort(axis.begin(), axis.end(), [&](int a, int b) { return g.n[a] < g.n[b]; });
  BottomFactor F;
  F.points = np;
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(np), -1);
  std::array<std::int64_t, kernels::kMaxDims> c{0, 0, 0};
  for (c[axis[2]] = 0; c[axis[2]] < g.n[axis[2]]; ++c[axis[2]])
    for (c[axis[1]] = 0; c[axis[1]] < g.n[axis[1]]; ++c[axis[1]])
      for (c[axis[0]] = 0; c[axis[0]] < g.n[axis[0]]; ++c[axis[0]]) {
        const std::int64_t i = g.index(c);
        if (level.fixed[static_cast<std::size_t>(i)]) continue;
        row_of[static_cast<std::size_t>(i)] = F.rows();
        F.node.push_back(i);
      }
  const std::int64_t m = F.rows();
  if (m == 0) return std::nullopt;
  for (std::int64_t r = 0; r < m; ++r)
    for_row(level, g, F.node[static_cast<std::size_t>(r)], [&](std::int64_t j, double) {
      F.band = std::max(F.band, std::abs(r - row_of[static_cast<std::size_t>(j)]));
    });
  const double band = static_cast<double>(F.band), rows = static_cast<double>(m);
  if (rows * band * band > kBottomFactorWork || m * (F.band + 1) > kBottomFactorValues)
    return std::nullopt;

  // A's lower triangle in the band, then L in its place, row by row.
  const std::int64_t w = F.band + 1;
  F.lower.assign(static_cast<std::size_t>(m * w), 0.0);
  for (std::int64_t r = 0; r < m; ++r)
    for_row(level, g, F.node[static_cast<std::size_t>(r)], [&](std::int64_t j, double a) {
      const std::int64_t col = row_of[static_cast<std::size_t>(j)];
      if (col <= r) F.lower[static_cast<std::size_t>(r * w + F.band - (r - col))] += a;
    });
  for (std::int64_t r = 0; r < m; ++r) {
    double* row = &F.lower[static_cast<std::size_t>(r * w)];
    const double diagonal = row[F.band];
    if (!(diagonal > 0.0) || !std::isfinite(diagonal)) return std::nullopt;
    const std::int64_t first = std::max<std::int64_t>(0, r - F.band);
    for (std::int64_t col = first; col <= r; ++col) {
      const double* upper = &F.lower[static_cast<std::size_t>(col * w)];
      double s = row[F.band - (r - col)];
      for (std::int64_t k = first; k < col; ++k)
        s -= row[F.band - (r - k)] * upper[F.band - (col - k)];
      if (col < r) {
        row[F.band - (r - col)] = s / upper[F.band];
      } else {
        if (!(s > kBottomPivotFloor * diagonal) || !std::isfinite(s)) return std::nullopt;
        row[F.band] = std::sqrt(s);
      }
    }
  }
  return F;
}

}  // namespace heatsim::solver::multigrid
