#include "hierarchy.hpp"

#include <stdexcept>

namespace heatsim::solver::multigrid {

using kernels::kMaxDims;

std::vector<std::int64_t> coarse_nodes(std::int64_t n, bool periodic) {
  std::vector<std::int64_t> kept;
  const bool coarsen = periodic ? n >= 4 : n > 3;
  for (std::int64_t i = 0; i < n; i += coarsen ? 2 : 1) kept.push_back(i);
  if (!periodic && kept.back() != n - 1) kept.push_back(n - 1);
  return kept;
}

namespace {

struct Share {
  std::int64_t fine;
  double weight;
};

// Per coarse node of one axis, the fine nodes of its dual cell with their restriction weights.
std::vector<std::vector<Share>> dual_cells(const kernels::AxisTransfer& t, std::int64_t coarse_n) {
  std::vector<std::vector<Share>> cells(static_cast<std::size_t>(coarse_n));
  for (std::size_t f = 0; f < t.from.size(); ++f)
    for (const auto& term : t.from[f])
      if (term.weight != 0.0)
        cells[term.coarse].push_back({static_cast<std::int64_t>(f), term.weight});
  return cells;
}

}  // namespace

LevelOperator coarsen(const LevelOperator& fine) {
  LevelOperator c;
  c.dims = fine.dims;
  c.periodic = fine.periodic;
  std::array<std::vector<std::vector<Share>>, kMaxDims> cells;
  for (int a = 0; a < kMaxDims; ++a) {
    const bool active = a < fine.dims;
    c.fine_index[a] =
        active ? coarse_nodes(fine.n[a], fine.periodic[a]) : std::vector<std::int64_t>{0};
    c.n[a] = static_cast<std::int64_t>(c.fine_index[a].size());
    const kernels::AxisTransfer t =
        kernels::axis_transfer(fine.n[a], active && fine.periodic[a], c.fine_index[a]);
    cells[a] = dual_cells(t, c.n[a]);
  }
  const std::int64_t np = c.points();
  const auto& fn = fine.n;
  auto fine_at = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    return (z * fn[1] + y) * fn[0] + x;
  };
  c.node_term.assign(static_cast<std::size_t>(np), 0.0);
  c.fixed.assign(static_cast<std::size_t>(np), 0);
  for (int a = 0; a < c.dims; ++a) c.conductance[a].assign(static_cast<std::size_t>(np), 0.0);

  for (std::int64_t Z = 0; Z < c.n[2]; ++Z)
    for (std::int64_t Y = 0; Y < c.n[1]; ++Y)
      for (std::int64_t X = 0; X < c.n[0]; ++X) {
        const std::int64_t I = (Z * c.n[1] + Y) * c.n[0] + X;
        const std::int64_t C[3] = {X, Y, Z};
        c.fixed[I] =
            fine.fixed[fine_at(c.fine_index[0][X], c.fine_index[1][Y], c.fine_index[2][Z])];
        double term = 0.0;
        for (const Share& sz : cells[2][Z])
          for (const Share& sy : cells[1][Y])
            for (const Share& sx : cells[0][X])
              term += sz.weight * sy.weight * sx.weight *
                      fine.node_term[fine_at(sx.fine, sy.fine, sz.fine)];
        c.node_term[I] = term;

        for (int a = 0; a < c.dims; ++a) {
          const std::int64_t last = c.n[a] - 1;
          if (C[a] == last && !c.periodic[a]) continue;  // no face beyond a boundary
          const std::int64_t from = c.fine_index[a][C[a]];
          const std::int64_t to = C[a] == last ? fn[a] : c.fine_index[a][C[a] + 1];
          // Across the face: the dual cell on the two other axes (a single node on axis a).
          std::array<std::vector<Share>, kMaxDims> across;
          for (int b = 0; b < kMaxDims; ++b)
            across[b] = b == a ? std::vector<Share>{{0, 1.0}} : cells[b][C[b]];
          double g = 0.0;
          for (const Share& sz : across[2])
            for (const Share& sy : across[1])
              for (const Share& sx : across[0]) {
                std::int64_t f[3] = {sx.fine, sy.fine, sz.fine};
                double resistance = 0.0;
                bool open = true;
                for (std::int64_t s = from; s < to; ++s) {
                  f[a] = s % fn[a];
                  const double gf = fine.conductance[a][fine_at(f[0], f[1], f[2])];
                  if (gf <= 0.0) {
                    open = false;
                    break;
                  }
                  resistance += 1.0 / gf;
                }
                if (open) g += sz.weight * sy.weight * sx.weight / resistance;
              }
          c.conductance[a][I] = g;
        }
      }
  return c;
}

std::vector<LevelOperator> build_hierarchy(LevelOperator finest, std::int64_t coarsest_points) {
  std::vector<LevelOperator> levels;
  levels.push_back(std::move(finest));
  while (levels.back().points() > coarsest_points) {
    const LevelOperator& f = levels.back();
    bool shrinks = false;
    for (int a = 0; a < f.dims; ++a)
      shrinks =
          shrinks || static_cast<std::int64_t>(coarse_nodes(f.n[a], f.periodic[a]).size()) < f.n[a];
    if (!shrinks) break;
    levels.push_back(coarsen(f));
  }
  return levels;
}

}  // namespace heatsim::solver::multigrid
