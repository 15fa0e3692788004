// CPU level operations for the multigrid solver (kernels/level_ops.hpp): OpenMP across z-y
// rows, fp64. Every result is independent of the thread count (the dot product sums per-row
// partial sums in row order), so an implicit run repeats itself bit for bit on a restart.
#include "cpu_level_ops.hpp"

#include <stdexcept>

namespace heatsim::kernels {
namespace {

class CpuLevelOps final : public LevelOps {
 public:
  std::string name() const override { return "cpu"; }

  void setup(const std::vector<LevelOperator>& levels) override {
    levels_.clear();
    vectors_.clear();
    vector_level_.clear();
    for (std::size_t l = 0; l < levels.size(); ++l) {
      Level L;
      L.op = levels[l];
      const std::int64_t np = L.op.points();
      const auto size_ok = [&](std::size_t s) { return s == static_cast<std::size_t>(np); };
      if (!size_ok(L.op.node_term.size()) || !size_ok(L.op.fixed.size()))
        throw std::invalid_argument("level " + std::to_string(l) + ": field sizes differ from " +
                                    "the grid's " + std::to_string(np) + " points");
      for (int a = 0; a < kMaxDims; ++a) {
        if (a < L.op.dims && !size_ok(L.op.conductance[a].size()))
          throw std::invalid_argument("level " + std::to_string(l) + ": conductance[" +
                                      std::to_string(a) + "] has the wrong size");
        if (a >= L.op.dims) L.op.periodic[a] = false;
      }
      L.parallel = np >= 32768;
      // A periodic axis of odd length joins two nodes of the same colour; those colour sweeps
      // update from the old values (a Jacobi step within the colour) so that rows shared out to
      // threads never race.
      L.colour_conflict = false;
      for (int a = 0; a < L.op.dims; ++a)
        L.colour_conflict = L.colour_conflict || (L.op.periodic[a] && L.op.n[a] % 2 == 1);
      L.diagonal.assign(static_cast<std::size_t>(np), 0.0);
      for_rows(L, [&](std::int64_t y, std::int64_t z) {
        for (std::int64_t x = 0; x < L.op.n[0]; ++x) {
          const std::int64_t i = index(L, x, y, z);
          double d = L.op.node_term[i];
          visit_neighbours(L, x, y, z, i, [&](std::int64_t, double g) { d += g; });
          L.diagonal[i] = d;
        }
      });
      if (l > 0) {
        const Level& F = levels_[l - 1];
        for (int a = 0; a < kMaxDims; ++a) {
          std::vector<std::int64_t> idx = L.op.fine_index[a];
          if (a >= L.op.dims) idx = {0};
          if (static_cast<std::int64_t>(idx.size()) != L.op.n[a])
            throw std::invalid_argument("level " + std::to_string(l) + ": fine_index[" +
                                        std::to_string(a) + "] has the wrong size");
          L.transfer[a] = axis_transfer(F.op.n[a], F.op.periodic[a], idx);
          // Restriction gathers, per coarse node, the fine nodes that interpolate from it.
          L.gather[a].assign(static_cast<std::size_t>(L.op.n[a]), {});
          for (std::int64_t f = 0; f < F.op.n[a]; ++f)
            for (const AxisTransfer::Term& t : L.transfer[a].from[f])
              if (t.weight != 0.0) L.gather[a][t.coarse].push_back({f, t.weight});
        }
      }
      levels_.push_back(std::move(L));
    }
  }

  int create_vector(int level) override {
    vectors_.emplace_back(static_cast<std::size_t>(at(level).op.points()), 0.0);
    vector_level_.push_back(level);
    return static_cast<int>(vectors_.size()) - 1;
  }

  void upload(int v, const std::vector<double>& values) override {
    std::vector<double>& dst = vec(v);
    if (values.size() != dst.size())
      throw std::invalid_argument("level ops: upload of " + std::to_string(values.size()) +
                                  " values into a vector of " + std::to_string(dst.size()));
    dst = values;
  }
  void download(int v, std::vector<double>& values) override { values = vec(v); }

  void residual(int level, int b, int x, int r) override {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    const double* xp = vec(x).data();
    double* rp = vec(r).data();
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t xi = 0; xi < L.op.n[0]; ++xi) {
        const std::int64_t i = index(L, xi, y, z);
        rp[i] = L.op.fixed[i] ? 0.0
                              : bp[i] - (L.diagonal[i] * xp[i] - neighbour_sum(L, xp, xi, y, z, i));
      }
    });
  }

  void apply(int level, int x, int y_out) override {
    const Level& L = at(level);
    const double* xp = vec(x).data();
    double* yp = vec(y_out).data();
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t xi = 0; xi < L.op.n[0]; ++xi) {
        const std::int64_t i = index(L, xi, y, z);
        yp[i] = L.op.fixed[i] ? 0.0 : L.diagonal[i] * xp[i] - neighbour_sum(L, xp, xi, y, z, i);
      }
    });
  }

  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    double* xp = vec(x).data();
    for (int s = 0; s < sweeps; ++s)
      for (int c = 0; c < 2; ++c) colour_sweep(L, bp, xp, reverse ? 1 - c : c, omega);
  }

  void restrict_residual(int fine_level, int r_fine, int b_coarse) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const double* rp = vec(r_fine).data();
    double* bp = vec(b_coarse).data();
    for_rows(C, [&](std::int64_t Y, std::int64_t Z) {
      for (std::int64_t X = 0; X < C.op.n[0]; ++X) {
        const std::int64_t I = index(C, X, Y, Z);
        if (C.op.fixed[I]) {
          bp[I] = 0.0;
          continue;
        }
        double sum = 0.0;
        for (const Gather& gz : C.gather[2][Z])
          for (const Gather& gy : C.gather[1][Y]) {
            const double wzy = gz.weight * gy.weight;
            const double* row = rp + (gz.fine * F.op.n[1] + gy.fine) * F.op.n[0];
            for (const Gather& gx : C.gather[0][X]) sum += wzy * gx.weight * row[gx.fine];
          }
        bp[I] = sum;
      }
    });
  }

  void prolong_add(int fine_level, int x_coarse, int x_fine) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const double* cp = vec(x_coarse).data();
    double* fp = vec(x_fine).data();
    for_rows(F, [&](std::int64_t y, std::int64_t z) {
      const auto& tz = C.transfer[2].from[z];
      const auto& ty = C.transfer[1].from[y];
      for (std::int64_t x = 0; x < F.op.n[0]; ++x) {
        const std::int64_t i = index(F, x, y, z);
        if (F.op.fixed[i]) continue;
        const auto& tx = C.transfer[0].from[x];
        double sum = 0.0;
        for (const auto& a : tz) {
          if (a.weight == 0.0) continue;
          for (const auto& b : ty) {
            if (b.weight == 0.0) continue;
            const double* row = cp + (a.coarse * C.op.n[1] + b.coarse) * C.op.n[0];
            for (const auto& c : tx)
              if (c.weight != 0.0) sum += a.weight * b.weight * c.weight * row[c.coarse];
          }
        }
        fp[i] += sum;
      }
    });
  }

  void zero_free(int level, int v) override {
    const Level& L = at(level);
    std::vector<double>& vv = vec(v);
    if (vv.size() != L.op.fixed.size())
      throw std::invalid_argument("level ops: vector not of level");
    for (std::size_t i = 0; i < vv.size(); ++i)
      if (!L.op.fixed[i]) vv[i] = 0.0;
  }

  double dot(int x, int y) override {
    const Level& L = at(vector_level_.at(static_cast<std::size_t>(x)));
    const double* xp = vec(x).data();
    const double* yp = vec(y).data();
    if (vec(x).size() != vec(y).size())
      throw std::invalid_argument("level ops: dot of unequal sizes");
    const std::int64_t rows = L.op.n[1] * L.op.n[2], nx = L.op.n[0];
    std::vector<double> partial(static_cast<std::size_t>(rows), 0.0);
#pragma omp parallel for schedule(static) if (L.parallel)
    for (std::int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (std::int64_t i = r * nx; i < (r + 1) * nx; ++i) s += xp[i] * yp[i];
      partial[r] = s;
    }
    double sum = 0.0;
    for (double p : partial) sum += p;
    return sum;
  }

  void axpby(double a, int x, double b, int y) override {
    const std::vector<double>& xv = vec(x);
    std::vector<double>& yv = vec(y);
    if (xv.size() != yv.size()) throw std::invalid_argument("level ops: axpby of unequal sizes");
    const std::int64_t n = static_cast<std::int64_t>(yv.size());
    const double* xp = xv.data();
    double* yp = yv.data();
    if (b == 0.0) {
#pragma omp parallel for schedule(static) if (n >= 32768)
      for (std::int64_t i = 0; i < n; ++i) yp[i] = a * xp[i];
    } else {
#pragma omp parallel for schedule(static) if (n >= 32768)
      for (std::int64_t i = 0; i < n; ++i) yp[i] = a * xp[i] + b * yp[i];
    }
  }

 private:
  struct Gather {
    std::int64_t fine;
    double weight;
  };
  struct Level {
    LevelOperator op;
    std::vector<double> diagonal;                 // a_i + sum of the node's conductances
    std::array<AxisTransfer, kMaxDims> transfer;  // from the next finer level (levels > 0)
    std::array<std::vector<std::vector<Gather>>, kMaxDims> gather;
    bool parallel = false;
    bool colour_conflict = false;
  };

  const Level& at(int level) const {
    if (level < 0 || level >= static_cast<int>(levels_.size()))
      throw std::out_of_range("level ops: no level " + std::to_string(level));
    return levels_[static_cast<std::size_t>(level)];
  }
  std::vector<double>& vec(int v) { return vectors_.at(static_cast<std::size_t>(v)); }

  static std::int64_t index(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z) {
    return (z * L.op.n[1] + y) * L.op.n[0] + x;
  }

  template <typename F>
  static void for_rows(const Level& L, F&& f) {
    const std::int64_t ny = L.op.n[1], nz = L.op.n[2];
#pragma omp parallel for collapse(2) schedule(static) if (L.parallel)
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y) f(y, z);
  }

  // Calls f(j, G_ij) for each neighbour j of node i = (x, y, z), in the order x-, x+, y-, y+,
  // z-, z+.
  template <typename F>
  static void visit_neighbours(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z,
                               std::int64_t i, F&& f) {
    const std::int64_t c[3] = {x, y, z};
    std::int64_t stride = 1;
    for (int a = 0; a < L.op.dims; ++a) {
      const std::int64_t n = L.op.n[a];
      const double* G = L.op.conductance[a].data();
      if (c[a] > 0)
        f(i - stride, G[i - stride]);
      else if (L.op.periodic[a])
        f(i + (n - 1) * stride, G[i + (n - 1) * stride]);
      if (c[a] < n - 1)
        f(i + stride, G[i]);
      else if (L.op.periodic[a])
        f(i - (n - 1) * stride, G[i]);
      stride *= n;
    }
  }

  static double neighbour_sum(const Level& L, const double* v, std::int64_t x, std::int64_t y,
                              std::int64_t z, std::int64_t i) {
    double s = 0.0;
    visit_neighbours(L, x, y, z, i, [&](std::int64_t j, double g) { s += g * v[j]; });
    return s;
  }

  void colour_sweep(const Level& L, const double* bp, double* xp, int colour, double omega) {
    if (L.colour_conflict) {
      // Update from a copy of the old values (see setup).
      scratch_.assign(xp, xp + L.op.points());
      const double* old = scratch_.data();
      for_rows(L, [&](std::int64_t y, std::int64_t z) {
        for (std::int64_t x = (colour + y + z) & 1; x < L.op.n[0]; x += 2) {
          const std::int64_t i = index(L, x, y, z);
          if (L.op.fixed[i]) continue;
          const double gs = (bp[i] + neighbour_sum(L, old, x, y, z, i)) / L.diagonal[i];
          xp[i] = old[i] + omega * (gs - old[i]);
        }
      });
      return;
    }
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t x = (colour + y + z) & 1; x < L.op.n[0]; x += 2) {
        const std::int64_t i = index(L, x, y, z);
        if (L.op.fixed[i]) continue;
        const double gs = (bp[i] + neighbour_sum(L, xp, x, y, z, i)) / L.diagonal[i];
        xp[i] += omega * (gs - xp[i]);
      }
    });
  }

  std::vector<Level> levels_;
  std::vector<std::vector<double>> vectors_;
  std::vector<int> vector_level_;
  std::vector<double> scratch_;
};

}  // namespace

std::unique_ptr<LevelOps> make_cpu_level_ops() { return std::make_unique<CpuLevelOps>(); }

}  // namespace heatsim::kernels
