#include "deflation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "kernels/threads.hpp"

namespace heatsim::solver::multigrid {

namespace {

using kernels::LevelOperator;

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// The grid's links: node i to its upper neighbour along an axis (wrapping on a periodic one).
struct Links {
  const LevelOperator& op;
  std::array<std::int64_t, 3> stride;

  explicit Links(const LevelOperator& level)
      : op(level), stride{1, level.n[0], level.n[0] * level.n[1]} {}
  std::int64_t coordinate(std::int64_t i, int a) const { return (i / stride[a]) % op.n[a]; }
  // The upper neighbour of node i along axis a, or -1 where the axis ends.
  std::int64_t upper(std::int64_t i, int a) const {
    const std::int64_t c = coordinate(i, a);
    if (c + 1 < op.n[a]) return i + stride[a];
    return op.periodic[a] && op.n[a] > 1 ? i - c * stride[a] : -1;
  }
  // f(i, j, G, axis) for every link with a positive conductance, axis by axis, i ascending.
  template <class F>
  void each(F&& f) const {
    for (int a = 0; a < op.dims; ++a)
      for (std::int64_t i = 0; i < op.points(); ++i) {
        const double G = op.conductance[a][at(i)];
        if (!(G > 0.0)) continue;
        const std::int64_t j = upper(i, a);
        if (j >= 0) f(i, j, G, a);
      }
  }
};

std::uint32_t root(std::vector<std::uint32_t>& parent, std::uint32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

// A box of the grid around one piece, on which Z's column of that piece and A times it are
// computed densely: every vector met has its support inside the box, so values beyond it are
// zeros.
struct Box {
  std::array<std::int64_t, 3> lo{0, 0, 0}, n{1, 1, 1};
  std::array<bool, 3> whole{true, true, true};  // the axis's full extent (wrapping if periodic)
  std::int64_t points() const { return n[0] * n[1] * n[2]; }
};

// y = A v on the box's free nodes (A's row: D_i v_i - sum_j G_ij v_j over free neighbours).
void box_apply(const LevelOperator& op, const Box& box,
               const std::vector<double>& diag, const std::vector<std::int64_t>& node,
               const std::vector<double>& v, std::vector<double>& y) {
  const std::int64_t bs[3] = {1, box.n[0], box.n[0] * box.n[1]};
  for (std::int64_t k = 0; k < box.points(); ++k) {
    const std::int64_t i = node[at(k)];
    if (op.fixed[at(i)]) {
      y[at(k)] = 0.0;
      continue;
    }
    double sum = diag[at(i)] * v[at(k)];
    for (int a = 0; a < op.dims; ++a) {
      const std::int64_t c = (k / bs[a]) % box.n[a];
      // Down: the link stored at the lower neighbour; up: at this node.
      for (int o = -1; o <= 1; o += 2) {
        std::int64_t cn = c + o, kn = k + o * bs[a];
        if (cn < 0 || cn >= box.n[a]) {
          if (!(box.whole[a] && op.periodic[a] && box.n[a] > 1)) continue;
          cn = cn < 0 ? box.n[a] - 1 : 0;
          kn = k + (cn - c) * bs[a];
        }
        const std::int64_t j = node[at(kn)];
        if (op.fixed[at(j)]) continue;
        const double G = op.conductance[a][at(o < 0 ? j : i)];
        sum -= G * v[at(kn)];
      }
    }
    y[at(k)] = sum;
  }
}

}  // namespace

void Deflation::solve(std::vector<double>& s) const {
  const std::size_t m = static_cast<std::size_t>(pieces);
  for (std::size_t i = 0; i < m; ++i) {  // L y = s
    double v = s[i];
    for (std::size_t k = 0; k < i; ++k) v -= factor[i * m + k] * s[k];
    s[i] = v / factor[i * m + i];
  }
  for (std::size_t i = m; i-- > 0;) {  // L^T c = y
    double v = s[i];
    for (std::size_t k = i + 1; k < m; ++k) v -= factor[k * m + i] * s[k];
    s[i] = v / factor[i * m + i];
  }
}

Deflation find_deflation(const LevelOperator& level) {
  if (level.stencil_form() || level.points() >= (std::int64_t{1} << 32)) return {};
  const std::int64_t np = level.points();
  const int dims = level.dims;
  const Links links(level);

  std::array<double, 3> largest{0.0, 0.0, 0.0};
  bool contrast = false;
  for (int a = 0; a < dims; ++a) {
    double hi = 0.0, lo = HUGE_VAL;
    const double* G = level.conductance[a].data();
    const std::int64_t count = static_cast<std::int64_t>(level.conductance[a].size());
    // Largest and smallest are the same in any order: the threads share the scan.
#pragma omp parallel for reduction(max : hi) reduction(min : lo) if (kernels::worth_threads(count))
    for (std::int64_t i = 0; i < count; ++i)
      if (G[i] > 0.0) {
        hi = std::max(hi, G[i]);
        lo = std::min(lo, G[i]);
      }
    largest[a] = hi;
    contrast = contrast || (hi > 0.0 && hi >= kStrongRatio * lo);
  }
  if (!contrast) return {};

  // The pieces: components of the strong links between free nodes, each named by its smallest
  // node.
  std::vector<std::uint32_t> parent(at(np));
  std::iota(parent.begin(), parent.end(), 0u);
  links.each([&](std::int64_t i, std::int64_t j, double G, int a) {
    if (G * kStrongRatio < largest[a] || level.fixed[at(i)] || level.fixed[at(j)]) return;
    const std::uint32_t ri = root(parent, static_cast<std::uint32_t>(i));
    const std::uint32_t rj = root(parent, static_cast<std::uint32_t>(j));
    if (ri != rj) parent[std::max(ri, rj)] = std::min(ri, rj);
  });
  std::vector<std::int64_t> size(at(np), 0);
  for (std::int64_t i = 0; i < np; ++i)
    if (!level.fixed[at(i)]) ++size[root(parent, static_cast<std::uint32_t>(i))];
  std::vector<std::int64_t> roots;
  for (std::int64_t i = 0; i < np; ++i)
    if (size[at(i)] >= kMinPieceNodes) roots.push_back(i);
  if (static_cast<std::int64_t>(roots.size()) > kMaxPieces) {
    std::stable_sort(roots.begin(), roots.end(),
                     [&](std::int64_t a, std::int64_t b) { return size[at(a)] > size[at(b)]; });
    roots.resize(at(kMaxPieces));
    std::sort(roots.begin(), roots.end());
  }
  if (roots.size() < 2) return {};
  std::vector<std::int32_t> number(at(np), -1);
  for (std::size_t k = 0; k < roots.size(); ++k)
    number[at(roots[k])] = static_cast<std::int32_t>(k);

  Deflation d;
  d.pieces = static_cast<std::int64_t>(roots.size());
  d.piece.assign(at(np), -1);
  const std::size_t m = roots.size();
  // Each piece's bounding box.
  std::vector<std::array<std::int64_t, 6>> bounds(m, {np, np, np, -1, -1, -1});
  for (std::int64_t i = 0; i < np; ++i) {
    if (level.fixed[at(i)]) continue;
    const std::int32_t g = number[root(parent, static_cast<std::uint32_t>(i))];
    d.piece[at(i)] = g;
    if (g < 0) continue;
    for (int a = 0; a < dims; ++a) {
      const std::int64_t c = links.coordinate(i, a);
      bounds[static_cast<std::size_t>(g)][a] = std::min(bounds[static_cast<std::size_t>(g)][a], c);
      bounds[static_cast<std::size_t>(g)][a + 3] = std::max(bounds[static_cast<std::size_t>(g)][a + 3], c);
    }
  }
  parent = {};
  size = {};

  std::vector<double> diag(at(np), 0.0);
  if (!level.node_term.empty()) diag.assign(level.node_term.begin(), level.node_term.end());
  links.each([&](std::int64_t i, std::int64_t j, double G, int) {
    diag[at(i)] += G;
    diag[at(j)] += G;
  });
  d.inverse_diagonal.assign(at(np), 0.0);
  for (std::int64_t i = 0; i < np; ++i)
    if (!level.fixed[at(i)] && diag[at(i)] > 0.0) d.inverse_diagonal[at(i)] = 1.0 / diag[at(i)];

  // E's column b: Z0^T (S^T)^steps A S^steps Z0 e_b, on piece b's box grown by the reach of
  // those 2 steps + 1 operator applications.
  const std::int64_t reach = 2 * kDeflationSteps + 1;
  std::vector<double> E(m * m, 0.0);
  const double omega = kDeflationOmega;
#pragma omp parallel for schedule(dynamic, 1) if (m >= 4 && kernels::worth_threads(np))
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(m); ++b) {
    const auto& bb = bounds[at(b)];
    Box box;
    for (int a = 0; a < dims; ++a) {
      const std::int64_t lo = bb[a] - reach, hi = bb[a + 3] + reach;
      box.whole[a] = lo <= 0 && hi >= level.n[a] - 1;
      if (level.periodic[a] && (lo < 0 || hi > level.n[a] - 1)) box.whole[a] = true;
      box.lo[a] = box.whole[a] ? 0 : std::max<std::int64_t>(lo, 0);
      box.n[a] = box.whole[a] ? level.n[a] : std::min(hi, level.n[a] - 1) - box.lo[a] + 1;
    }
    const std::int64_t bp = box.points();
    std::vector<std::int64_t> node(at(bp));
    for (std::int64_t k = 0; k < bp; ++k) {
      const std::int64_t x = k % box.n[0], y = (k / box.n[0]) % box.n[1], z = k / (box.n[0] * box.n[1]);
      node[at(k)] = ((box.lo[2] + z) * level.n[1] + box.lo[1] + y) * level.n[0] + box.lo[0] + x;
    }
    std::vector<double> v(at(bp)), w(at(bp)), u(at(bp));
    for (std::int64_t k = 0; k < bp; ++k) v[at(k)] = d.piece[at(node[at(k)])] == b ? 1.0 : 0.0;
    for (int s = 0; s < kDeflationSteps; ++s) {  // v = S v
      box_apply(level, box, diag, node, v, w);
      for (std::int64_t k = 0; k < bp; ++k)
        v[at(k)] -= omega * d.inverse_diagonal[at(node[at(k)])] * w[at(k)];
    }
    box_apply(level, box, diag, node, v, w);  // w = A v
    for (int s = 0; s < kDeflationSteps; ++s) {      // w = S^T w
      for (std::int64_t k = 0; k < bp; ++k) u[at(k)] = d.inverse_diagonal[at(node[at(k)])] * w[at(k)];
      box_apply(level, box, diag, node, u, v);
      for (std::int64_t k = 0; k < bp; ++k) w[at(k)] -= omega * v[at(k)];
    }
    for (std::int64_t k = 0; k < bp; ++k) {
      const std::int32_t a = d.piece[at(node[at(k)])];
      if (a >= 0) E[static_cast<std::size_t>(a) * m + at(b)] += w[at(k)];
    }
  }
  // Symmetric to rounding; the mean of the two halves, then Cholesky in place.
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < i; ++j) E[i * m + j] = E[j * m + i] = 0.5 * (E[i * m + j] + E[j * m + i]);
  for (std::size_t j = 0; j < m; ++j) {
    double v = E[j * m + j];
    for (std::size_t k = 0; k < j; ++k) v -= E[j * m + k] * E[j * m + k];
    if (!(v > 1e-14 * E[j * m + j])) return {};
    const double pivot = std::sqrt(v);
    E[j * m + j] = pivot;
    for (std::size_t i = j + 1; i < m; ++i) {
      double w = E[i * m + j];
      for (std::size_t k = 0; k < j; ++k) w -= E[i * m + k] * E[j * m + k];
      E[i * m + j] = w / pivot;
    }
  }
  d.factor = std::move(E);
  return d;
}

}  // namespace heatsim::solver::multigrid
