#include "hierarchy.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <stdexcept>

namespace heatsim::solver::multigrid {

using kernels::AxisTransfer;
using kernels::kMaxDims;
using kernels::stencil_centre;
using kernels::stencil_offset;
using kernels::stencil_points;

std::vector<std::int64_t> coarse_nodes(std::int64_t n, bool periodic,
                                       const std::vector<std::uint8_t>& strong) {
  std::vector<std::int64_t> kept{0};
  if (periodic ? n < 6 : n <= 3) {
    for (std::int64_t i = 1; i < n; ++i) kept.push_back(i);
    return kept;
  }
  const auto is_strong = [&](std::int64_t i) {
    return i < static_cast<std::int64_t>(strong.size()) && strong[i];
  };
  // The end node: the last one, or node 0 again one period on.
  const std::int64_t end = periodic ? n : n - 1;
  std::int64_t i = 0;
  while (i + 1 < end) {
    if (is_strong(i + 1) || i + 2 > end) {
      kept.push_back(++i);
      continue;
    }
    if (i + 2 == end) break;
    i += 2;
    kept.push_back(i);
  }
  if (!periodic && kept.back() != n - 1) kept.push_back(n - 1);
  return kept;
}

namespace {

constexpr int kMaxStencil = 27;
// A plane is strong, and stays on the coarse level, when its couplings within it outweigh those
// across it kStrongPlane times more than in the planes beside it, or 2 kStrongPlane times more
// than isotropic couplings do.
constexpr double kStrongPlane = 8.0;

// The coordinates and neighbours of a level's grid.
struct Grid {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};
  std::array<bool, kMaxDims> periodic{false, false, false};

  explicit Grid(const LevelOperator& op) : dims(op.dims), n(op.n) {
    for (int a = 0; a < dims; ++a) periodic[a] = op.periodic[a];
  }
  std::int64_t index(const std::int64_t c[3]) const { return (c[2] * n[1] + c[1]) * n[0] + c[0]; }
  // Coordinate c + o on axis a, or -1 beyond a non-periodic end.
  std::int64_t step(int a, std::int64_t c, int o) const {
    c += o;
    if (c < 0) return periodic[a] ? c + n[a] : -1;
    if (c >= n[a]) return periodic[a] ? c - n[a] : -1;
    return c;
  }
  // The neighbour of c at stencil offset k; false when it does not exist.
  bool neighbour(const std::int64_t c[3], int k, std::int64_t out[3]) const {
    out[0] = out[1] = out[2] = 0;
    for (int a = 0; a < dims; ++a) {
      out[a] = step(a, c[a], stencil_offset(k, a));
      if (out[a] < 0) return false;
    }
    return true;
  }
};

int offset_index(const int o[3], int dims) {
  int k = 0;
  for (int a = dims - 1; a >= 0; --a) k = 3 * k + (o[a] + 1);
  return k;
}

// Row i of a level's matrix over the free nodes: row[k] = A(i, i + offset_k), 0 where the
// neighbour does not exist or is fixed (the centre always kept).
void free_row(const LevelOperator& op, const Grid& g, const std::int64_t c[3], std::int64_t i,
              double row[kMaxStencil]) {
  const int kp = stencil_points(op.dims), centre = stencil_centre(op.dims);
  const std::int64_t np = op.points();
  for (int k = 0; k < kp; ++k) row[k] = 0.0;
  if (op.stencil_form()) {
    std::int64_t j[3];
    for (int k = 0; k < kp; ++k)
      if (k == centre || (g.neighbour(c, k, j) && !op.fixed[g.index(j)]))
        row[k] = op.stencil[k * np + i];
    return;
  }
  double diagonal = op.node_term[i];
  std::int64_t stride = 1;
  for (int a = 0; a < op.dims; ++a) {
    const std::int64_t n = op.n[a];
    const double* G = op.conductance[a].data();
    int o[3] = {0, 0, 0};
    if (c[a] > 0 || op.periodic[a]) {
      const std::int64_t j = c[a] > 0 ? i - stride : i + (n - 1) * stride;
      diagonal += G[j];
      o[a] = -1;
      if (!op.fixed[j]) row[offset_index(o, op.dims)] = -G[j];
    }
    if (c[a] < n - 1 || op.periodic[a]) {
      const std::int64_t j = c[a] < n - 1 ? i + stride : i - (n - 1) * stride;
      diagonal += G[i];
      o[a] = +1;
      if (!op.fixed[j]) row[offset_index(o, op.dims)] = -G[i];
    }
    stride *= n;
  }
  row[centre] = diagonal;
}

template <typename F>
void for_nodes(const std::array<std::int64_t, kMaxDims>& n, F&& f) {
#pragma omp parallel for collapse(2) schedule(dynamic, 4) if (n[0] * n[1] * n[2] >= 4096)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        const std::int64_t c[3] = {x, y, z};
        f(c, (z * n[1] + y) * n[0] + x);
      }
}

// The prolongation weights P (kernels/level_ops.hpp's layout) from coarse level c to `fine`.
std::vector<double> prolongation(const LevelOperator& fine, const LevelOperator& c,
                                 const std::array<AxisTransfer, kMaxDims>& t) {
  const int dims = fine.dims, kp = stencil_points(dims), centre = stencil_centre(dims);
  const std::int64_t nc = c.points();
  const Grid fg(fine), cg(c);
  std::vector<double> P(static_cast<std::size_t>(kp * nc), 0.0);
  for (std::int64_t I = 0; I < nc; ++I)
    if (!c.fixed[I]) P[centre * nc + I] = 1.0;
  // Finer nodes between coarse ones along `type` axes, after those along fewer.
  for (int type = 1; type <= dims; ++type)
    for_nodes(fine.n, [&](const std::int64_t f[3], std::int64_t i) {
      int between[3] = {0, 0, 0}, count = 0;
      for (int a = 0; a < dims; ++a) count += between[a] = t[a].from[f[a]][1].coarse >= 0;
      if (count != type || fine.fixed[i]) return;
      double row[kMaxStencil];
      free_row(fine, fg, f, i, row);
      // Summed over the offsets along the axes where the node is a coarse coordinate.
      double collapsed[kMaxStencil] = {};
      for (int k = 0; k < kp; ++k) {
        int o[3] = {0, 0, 0};
        for (int a = 0; a < dims; ++a) o[a] = between[a] ? stencil_offset(k, a) : 0;
        collapsed[offset_index(o, dims)] += row[k];
      }
      const double denominator = collapsed[centre];
      if (!(denominator > 1e-12 * row[centre])) return;  // no path along the axes: no value
      // Each corner of the coarse cell around the node: bit a picks the lower (0) or upper (1)
      // coarse node on an axis where the node lies between two.
      for (int corner = 0; corner < (1 << dims); ++corner) {
        bool used = true;
        std::int64_t C[3] = {0, 0, 0};
        int offset_from_corner[3] = {0, 0, 0};
        for (int a = 0; a < dims; ++a) {
          const int bit = (corner >> a) & 1;
          if (!between[a] && bit) used = false;
          const AxisTransfer::Term& term = t[a].from[f[a]][between[a] ? bit : 0];
          C[a] = term.coarse;
          offset_from_corner[a] = term.offset;
        }
        if (!used) continue;
        const std::int64_t I = cg.index(C);
        if (c.fixed[I]) continue;
        double sum = 0.0;
        for (int k = 0; k < kp; ++k) {
          if (k == centre || collapsed[k] == 0.0) continue;
          // The neighbour at offset k (non-zero only along `between` axes) is coarse along
          // each axis it moves on: it counts toward this corner only where it moves toward it.
          int o_neighbour[3] = {0, 0, 0};
          bool toward = true;
          for (int a = 0; a < dims; ++a) {
            const int o = stencil_offset(k, a);
            if (o != 0 && (o < 0) != (((corner >> a) & 1) == 0)) toward = false;
            o_neighbour[a] = o != 0 ? 0 : offset_from_corner[a];
          }
          if (!toward) continue;
          sum -= collapsed[k] * P[offset_index(o_neighbour, dims) * nc + I];
        }
        P[offset_index(offset_from_corner, dims) * nc + I] = sum / denominator;
      }
    });
  return P;
}

// The Galerkin stencil P^T A P of coarse level c (its prolongation set) over the free nodes:
// row I gathers P(f, I) A(f, g) P(g, J) over the finer nodes f around I's (offsets -1..1) and
// their neighbours g (offsets -2..2 from I's), whose coarse nodes J lie within one of I.
std::vector<double> galerkin(const LevelOperator& fine, const LevelOperator& c,
                             const std::array<AxisTransfer, kMaxDims>& t) {
  const int dims = fine.dims, kp = stencil_points(dims);
  const std::int64_t nc = c.points();
  const Grid fg(fine), cg(c);
  const std::vector<double>& P = c.prolongation;
  // Per axis, coarse coordinate and finer offset d in -2..2 from it: the finer coordinate
  // (or -1), and the coarse nodes it takes values from as (J, K = J - I wrapped, offset).
  constexpr int kFar = 99;
  struct Term {
    std::int64_t J;
    int K, offset;
  };
  struct Near {
    std::int64_t fine = -1;
    int count = 0;
    Term term[2];
  };
  std::array<std::vector<Near>, kMaxDims> near;
  for (int a = 0; a < kMaxDims; ++a) {
    near[a].assign(5 * static_cast<std::size_t>(c.n[a]), Near{});
    for (std::int64_t I = 0; I < c.n[a]; ++I)
      for (int d = -2; d <= 2; ++d) {
        Near& e = near[a][5 * I + d + 2];
        if (a >= dims) {
          if (d == 0) e = Near{0, 1, {{0, 0, 0}, {0, 0, 0}}};
          continue;
        }
        e.fine = fg.step(a, c.fine_index[a][I], d);
        if (e.fine < 0) continue;
        for (const AxisTransfer::Term& term : t[a].from[e.fine]) {
          if (term.coarse < 0) continue;
          std::int64_t K = term.coarse - I;
          if (c.periodic[a]) {
            if (K > 1) K -= c.n[a];
            if (K < -1) K += c.n[a];
          }
          // Farther coarse nodes are reached only through a zero weight (a finer node is
          // interpolated only from the coarse nodes around it): marked, and checked below.
          e.term[e.count++] = {term.coarse, K < -1 || K > 1 ? kFar : static_cast<int>(K),
                               term.offset};
        }
      }
  }
  std::atomic<bool> beyond{false};
  // Offset numbering (x fastest) over the used axes only.
  const int my = dims > 1 ? 3 : 0, mz = dims > 2 ? 9 : 0;
  std::vector<double> S(static_cast<std::size_t>(kp * nc), 0.0);
  for_nodes(c.n, [&](const std::int64_t C[3], std::int64_t I) {
    if (c.fixed[I]) return;
    double acc[kMaxStencil] = {};
    for (int kf = 0; kf < kp; ++kf) {
      const double wf = P[kf * nc + I];
      if (wf == 0.0) continue;
      int of[3] = {0, 0, 0};
      std::int64_t f[3] = {0, 0, 0};
      for (int a = 0; a < dims; ++a) {
        of[a] = stencil_offset(kf, a);
        f[a] = near[a][5 * C[a] + of[a] + 2].fine;
      }
      double row[kMaxStencil];
      free_row(fine, fg, f, fg.index(f), row);
      for (int k = 0; k < kp; ++k) {
        if (row[k] == 0.0) continue;
        const double a = wf * row[k];
        const Near* e[3];
        for (int ax = 0; ax < 3; ++ax)
          e[ax] = &near[ax][5 * C[ax] + (ax < dims ? of[ax] + stencil_offset(k, ax) : 0) + 2];
        for (int tz = 0; tz < e[2]->count; ++tz) {
          const Term& z = e[2]->term[tz];
          for (int ty = 0; ty < e[1]->count; ++ty) {
            const Term& y = e[1]->term[ty];
            const std::int64_t row_zy = (z.J * c.n[1] + y.J) * c.n[0];
            for (int tx = 0; tx < e[0]->count; ++tx) {
              const Term& x = e[0]->term[tx];
              const int og = (x.offset + 1) + my * (y.offset + 1) + mz * (z.offset + 1);
              const int K = (x.K + 1) + my * (y.K + 1) + mz * (z.K + 1);
              const double wg = P[og * nc + row_zy + x.J];
              if (wg == 0.0) continue;
              if (x.K == kFar || y.K == kFar || z.K == kFar) {
                beyond = true;
                continue;
              }
              acc[K] += a * wg;
            }
          }
        }
      }
    }
    for (int k = 0; k < kp; ++k) S[k * nc + I] = acc[k];
  });
  if (beyond) throw std::logic_error("galerkin: a coupling beyond one coarse node");
  // Symmetric to the last bit: each pair of entries takes their mean.
  std::vector<double> sym(S.size(), 0.0);
  for_nodes(c.n, [&](const std::int64_t C[3], std::int64_t I) {
    if (c.fixed[I]) return;
    for (int k = 0; k < kp; ++k) {
      std::int64_t J[3];
      if (!cg.neighbour(C, k, J)) continue;
      const double mirror = S[(kp - 1 - k) * nc + cg.index(J)];
      sym[k * nc + I] = 0.5 * (S[k * nc + I] + mirror);
    }
  });
  return sym;
}

}  // namespace

std::array<std::vector<std::uint8_t>, kMaxDims> strong_planes(const LevelOperator& op) {
  const int dims = op.dims, kp = stencil_points(dims), centre = stencil_centre(dims);
  const Grid g(op);
  std::array<std::vector<std::uint8_t>, kMaxDims> strong;
  for (int a = 0; a < dims; ++a) {
    // Per plane across axis a: the couplings within it and those across it, summed.
    std::vector<double> within(static_cast<std::size_t>(op.n[a]), 0.0), across(within);
    const int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;  // the plane's axes
#pragma omp parallel for schedule(dynamic) if (op.points() >= 4096)
    for (std::int64_t p = 0; p < op.n[a]; ++p) {
      for (std::int64_t j = 0; j < op.n[v]; ++j)
        for (std::int64_t i = 0; i < op.n[u]; ++i) {
          std::int64_t c[3];
          c[a] = p;
          c[u] = i;
          c[v] = j;
          const std::int64_t node = g.index(c);
          if (op.fixed[node]) continue;
          if (!op.stencil_form()) {
            // Compact: the node's faces per axis (fixed neighbours count too; the ratio only
            // compares planes).
            std::int64_t stride = 1;
            for (int b = 0; b < dims; ++b) {
              const std::vector<double>& G = op.conductance[b];
              double faces = c[b] < op.n[b] - 1 || op.periodic[b] ? G[node] : 0.0;
              if (c[b] > 0) faces += G[node - stride];
              else if (op.periodic[b]) faces += G[node + (op.n[b] - 1) * stride];
              (b == a ? across : within)[p] += faces;
              stride *= op.n[b];
            }
            continue;
          }
          double row[kMaxStencil];
          free_row(op, g, c, node, row);
          for (int k = 0; k < kp; ++k)
            if (k != centre) (stencil_offset(k, a) == 0 ? within : across)[p] += std::abs(row[k]);
        }
    }
    const auto ratio = [&](std::int64_t p) {
      return across[p] > 0.0 ? within[p] / across[p] : (within[p] > 0.0 ? 1e300 : 0.0);
    };
    strong[a].assign(static_cast<std::size_t>(op.n[a]), 0);
    // Isotropic seven-point couplings give a ratio of dims - 1.
    const double anisotropic = kStrongPlane * 2.0 * (dims - 1);
    for (std::int64_t p = 1; p + 1 < op.n[a]; ++p)
      strong[a][p] = ratio(p) > anisotropic ||
                     ratio(p) > kStrongPlane * std::max(ratio(p - 1), ratio(p + 1));
  }
  return strong;
}

LevelOperator coarsen(const LevelOperator& fine) {
  LevelOperator c;
  c.dims = fine.dims;
  c.periodic = fine.periodic;
  std::array<AxisTransfer, kMaxDims> t;
  const auto strong = strong_planes(fine);
  for (int a = 0; a < kMaxDims; ++a) {
    const bool active = a < fine.dims;
    c.fine_index[a] = active ? coarse_nodes(fine.n[a], fine.periodic[a], strong[a])
                             : std::vector<std::int64_t>{0};
    c.n[a] = static_cast<std::int64_t>(c.fine_index[a].size());
    t[a] = kernels::axis_transfer(fine.n[a], active && fine.periodic[a], c.fine_index[a]);
  }
  const std::int64_t np = c.points();
  c.fixed.assign(static_cast<std::size_t>(np), 0);
  for_nodes(c.n, [&](const std::int64_t C[3], std::int64_t I) {
    const std::int64_t f[3] = {c.fine_index[0][C[0]], c.fine_index[1][C[1]],
                               c.fine_index[2][C[2]]};
    c.fixed[I] = fine.fixed[(f[2] * fine.n[1] + f[1]) * fine.n[0] + f[0]];
  });
  c.prolongation = prolongation(fine, c, t);
  c.stencil = galerkin(fine, c, t);
  return c;
}

std::vector<LevelOperator> build_hierarchy(LevelOperator finest, std::int64_t coarsest_points) {
  std::vector<LevelOperator> levels;
  levels.push_back(std::move(finest));
  while (levels.back().points() > coarsest_points) {
    LevelOperator c = coarsen(levels.back());
    if (c.points() == levels.back().points()) break;  // no axis can be halved
    levels.push_back(std::move(c));
  }
  return levels;
}

}  // namespace heatsim::solver::multigrid
