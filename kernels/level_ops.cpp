#include "level_ops.hpp"

#include <algorithm>
#include <stdexcept>

namespace heatsim::kernels {

AxisTransfer axis_transfer(std::int64_t fine_n, bool periodic,
                           const std::vector<std::int64_t>& fine_index) {
  const std::int64_t nc = static_cast<std::int64_t>(fine_index.size());
  if (nc == 0 || fine_index[0] != 0 || (!periodic && fine_index[nc - 1] != fine_n - 1))
    throw std::invalid_argument(
        "level transfer: coarse nodes must start at 0 and, on a "
        "non-periodic axis, end on the last fine node");
  AxisTransfer t;
  t.from.resize(static_cast<std::size_t>(fine_n));
  for (std::int64_t I = 0; I < nc; ++I) {
    const std::int64_t at = fine_index[I];
    t.from[at][0] = {I, 0};
    // The next coarse node: one period on, past the last node of a periodic axis.
    const bool last = I + 1 == nc;
    if (last && !periodic) continue;
    const std::int64_t next = last ? fine_n : fine_index[I + 1];
    if (next <= at || next - at > 2)
      throw std::invalid_argument(
          "level transfer: coarse nodes must be one or two finer nodes apart");
    if (next - at == 2) {
      t.from[at + 1][0] = {I, +1};
      t.from[at + 1][1] = {last ? 0 : I + 1, -1};
    }
  }
  return t;
}

namespace {

// L y = x in place, from row `first` on (x is 0 above it, and so is y).
void forward_solve(const BottomFactor& F, std::int64_t first, double* x) {
  const std::int64_t m = F.rows(), band = F.band, w = band + 1;
  for (std::int64_t r = first; r < m; ++r) {
    const double* row = &F.lower[static_cast<std::size_t>(r * w)];
    double s = x[r];
    for (std::int64_t k = std::max(first, r - band); k < r; ++k) s -= row[band - (r - k)] * x[k];
    x[r] = s / row[band];
  }
}

// L^T z = y in place, from the last row up: z_r = (y_r - sum_{j > r} L(j, r) z_j) / L(r, r).
void back_solve(const BottomFactor& F, double* x) {
  const std::int64_t m = F.rows(), band = F.band, w = band + 1;
  for (std::int64_t r = m - 1; r >= 0; --r) {
    double s = x[r];
    for (std::int64_t j = r + 1; j <= std::min(m - 1, r + band); ++j)
      s -= F.lower[static_cast<std::size_t>(j * w + band - (j - r))] * x[j];
    x[r] = s / F.lower[static_cast<std::size_t>(r * w + band)];
  }
}

}  // namespace

void BottomFactor::solve_add(const double* rhs, double* x, double* work) const {
  const std::int64_t m = rows();
  for (std::int64_t r = 0; r < m; ++r) work[r] = rhs[node[static_cast<std::size_t>(r)]];
  forward_solve(*this, 0, work);
  back_solve(*this, work);
  for (std::int64_t r = 0; r < m; ++r) x[node[static_cast<std::size_t>(r)]] += work[r];
}

std::vector<double> BottomFactor::inverse() const {
  const std::int64_t m = rows();
  std::vector<double> a(static_cast<std::size_t>(m * m), 0.0);
  // Column c: A^-1 e_c, the forward solve from row c (e_c is 0 above it).
  for (std::int64_t c = 0; c < m; ++c) {
    double* x = &a[static_cast<std::size_t>(c * m)];
    x[c] = 1.0;
    forward_solve(*this, c, x);
    back_solve(*this, x);
  }
  // Symmetric to the bit, as A^-1 is (the columns' rounding differs).
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t c = r + 1; c < m; ++c) {
      double& upper = a[static_cast<std::size_t>(r * m + c)];
      double& low = a[static_cast<std::size_t>(c * m + r)];
      upper = low = 0.5 * (upper + low);
    }
  return a;
}

void LevelOps::bottom_solve(int, int, int, int, bool) {
  throw std::logic_error("level ops " + name() + ": no direct solve taken");
}

void LevelOps::smooth_from_zero(int level, int b, int x, int sweeps, bool reverse, double omega) {
  zero(x);
  smooth(level, b, x, sweeps, reverse, omega);
}

void LevelOps::smooth_colour(int, int, int, int, double) {
  throw std::logic_error("level ops " + name() + ": no smoothing by single colours");
}

void LevelOps::piece_sums(int, std::vector<double>&) {
  throw std::logic_error("level ops " + name() + ": no piece operations");
}

void LevelOps::piece_add(const std::vector<double>&, int) {
  throw std::logic_error("level ops " + name() + ": no piece operations");
}

double LevelOps::residual_norm(int level, int b, int x, int r) {
  residual(level, b, x, r);
  return dot(r, r);
}

double LevelOps::apply_dot(int level, int x, int y) {
  apply(level, x, y);
  return dot(x, y);
}

double LevelOps::update_apply_dot(int level, int z, double beta, int p, int q) {
  axpby(1.0, z, beta, p);
  return apply_dot(level, p, q);
}

double LevelOps::cg_update(double alpha, int p, int q, int x, int r) {
  axpby(alpha, p, 1.0, x);
  axpby(-alpha, q, 1.0, r);
  return dot(r, r);
}

void LevelOps::conjugate_gradients(int level, int b, int x, int r, int p, int q,
                                   double tolerance, std::int64_t limit) {
  double rr = residual_norm(level, b, x, r);
  if (rr == 0.0) return;
  const double stop = rr * tolerance * tolerance;
  axpby(1.0, r, 0.0, p);
  for (std::int64_t it = 0; it < limit && rr > stop; ++it) {
    const double pq = apply_dot(level, p, q);
    if (pq <= 0.0) break;
    const double alpha = rr / pq;
    const double rr_next = cg_update(alpha, p, q, x, r);
    axpby(1.0, r, rr_next / rr, p);
    rr = rr_next;
  }
}

}  // namespace heatsim::kernels
