// CPU reference backend: every dimension, shape, boundary condition and precision, OpenMP
// across z-y rows. Every other backend is tested against this one, so it favours plainness:
// ghost fill from the boundary conditions, then one sweep of the nonzero stencil taps, each
// node summing them in one fixed order (the sweep's loops are arranged to vectorise, the
// arithmetic per node is the plain loop's).
#include "cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "../layout.hpp"

namespace heatsim::kernels {
namespace {

struct Tap {
  std::int64_t offset;
  double weight;
};

template <typename T>
class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.max_radius = 16;
    return c;
  }

  void setup(const StencilProblem& problem) override {
    const std::string why = unsupported_reason(problem);
    if (!why.empty()) throw std::runtime_error("cpu backend: " + why);
    p_ = problem;
    // Threads only pay off beyond a few thousand points; small grids run many cheap steps.
    parallel_ = problem.points() >= 32768;
    layout_ = PaddedLayout(problem, problem.stencil.radius);
    cur_.assign(static_cast<std::size_t>(layout_.total()), T(0));
    next_.assign(cur_.size(), T(0));
    taps_.clear();
    const int r = problem.stencil.radius;
    const int ry = problem.dims > 1 ? r : 0, rz = problem.dims > 2 ? r : 0;
    for (int dz = -rz; dz <= rz; ++dz)
      for (int dy = -ry; dy <= ry; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const double w = problem.stencil.at(dx, dy, dz);
          if (w != 0.0) taps_.push_back({dz * layout_.stride_z() + dy * layout_.stride_y() + dx, w});
        }
  }

  void upload(const std::vector<double>& field) override {
    check_size(field.size());
    for_each_node([&](std::int64_t i, std::int64_t k) { cur_[k] = static_cast<T>(field[i]); });
  }

  void download(std::vector<double>& field) override {
    field.resize(static_cast<std::size_t>(p_.points()));
    for_each_node([&](std::int64_t i, std::int64_t k) { field[i] = static_cast<double>(cur_[k]); });
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    std::vector<T> w(taps_.size());
    for (std::size_t t = 0; t < taps_.size(); ++t) w[t] = static_cast<T>(taps_[t].weight);
    const T src = static_cast<T>(p_.source_increment);
    for (std::int64_t s = 0; s < steps; ++s) {
      const double t_now = static_cast<double>(step0 + s) * p_.dt;
      fill_ghosts(t_now);
      sweep(w, src);
      std::swap(cur_, next_);
      set_dirichlet_nodes(static_cast<double>(step0 + s + 1) * p_.dt);
    }
  }

  FieldStats stats() override {
    double mn = std::numeric_limits<double>::infinity(), mx = -mn, total = 0.0;
    std::int64_t bad = 0;
    const auto& n = p_.n;
#pragma omp parallel for collapse(2) reduction(min : mn) reduction(max : mx) reduction(+ : total, bad) if (parallel_)
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y) {
        const double wzy = weight(2, z) * weight(1, y);
        const T* row = &cur_[layout_.index(0, y, z)];
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const double v = static_cast<double>(row[x]);
          if (!std::isfinite(v)) {
            ++bad;
            continue;
          }
          mn = std::min(mn, v);
          mx = std::max(mx, v);
          total += wzy * weight(0, x) * v;
        }
      }
    FieldStats st;
    st.min = mn;
    st.max = mx;
    st.total_heat = total;
    st.non_finite = bad;
    return st;
  }

 private:
  void check_size(std::size_t size) const {
    if (size != static_cast<std::size_t>(p_.points()))
      throw std::invalid_argument("cpu backend: field has " + std::to_string(size) +
                                  " values, the grid " + std::to_string(p_.points()));
  }

  template <typename F>
  void for_each_node(F&& f) const {
    const auto& n = p_.n;
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) f((z * n[1] + y) * n[0] + x, layout_.index(x, y, z));
  }

  // Trapezoidal weight of node i on an axis (1 on periodic and inactive axes).
  double weight(int axis, std::int64_t i) const {
    if (axis >= p_.dims || p_.periodic(axis)) return 1.0;
    return (i == 0 || i == p_.n[axis] - 1) ? 0.5 : 1.0;
  }

  // See layout.hpp for the rules. Lines along `axis` cover the padded extent of earlier axes
  // and the interior of later ones.
  void fill_ghosts(double t) {
    const int g = layout_.ghost;
    for (int axis = 0; axis < p_.dims; ++axis) {
      const std::int64_t n = p_.n[axis];
      const std::int64_t st = layout_.stride(axis);
      const BoundaryFace& lo = p_.faces[2 * axis];
      const BoundaryFace& hi = p_.faces[2 * axis + 1];
      const double glo = lo.at(t), ghi = hi.at(t);
      const double h = p_.h[axis];
      // The two other axes: (a, b) ranges.
      int oa = (axis + 1) % 3, ob = (axis + 2) % 3;
      auto range = [&](int other) -> std::pair<std::int64_t, std::int64_t> {
        if (other >= p_.dims) return {0, 1};
        if (other < axis) return {-g, p_.n[other] + g};
        return {0, p_.n[other]};
      };
      const auto [a0, a1] = range(oa);
      const auto [b0, b1] = range(ob);
#pragma omp parallel for collapse(2) if (parallel_)
      for (std::int64_t b = b0; b < b1; ++b)
        for (std::int64_t a = a0; a < a1; ++a) {
          std::array<std::int64_t, 3> c{0, 0, 0};
          c[oa] = a;
          c[ob] = b;
          c[axis] = 0;
          T* base = &cur_[layout_.index(c[0], c[1], c[2])];  // node 0 on this line
          for (int k = 1; k <= g; ++k) {
            T* left = base - k * st;
            T* right = base + (n - 1 + k) * st;
            switch (lo.kind) {
              case BoundaryKind::periodic: *left = base[(n - k) * st]; break;
              case BoundaryKind::dirichlet: *left = static_cast<T>(2.0 * glo) - base[k * st]; break;
              case BoundaryKind::neumann:
                *left = base[k * st] + static_cast<T>(2.0 * k * h * glo);
                break;
            }
            switch (hi.kind) {
              case BoundaryKind::periodic: *right = base[(k - 1) * st]; break;
              case BoundaryKind::dirichlet:
                *right = static_cast<T>(2.0 * ghi) - base[(n - 1 - k) * st];
                break;
              case BoundaryKind::neumann:
                *right = base[(n - 1 - k) * st] + static_cast<T>(2.0 * k * h * ghi);
                break;
            }
          }
        }
    }
  }

  // Rows in pieces of kChunk nodes: a few taps at a time over the whole piece (accumulate), so
  // the inner loop is a contiguous multiply-add the compiler vectorises. Every node still
  // starts from zero and adds its taps in taps_ order, then the source: the rounding of one
  // node at a time. Threads share out the rows, or a 1D grid's one row by pieces.
  static constexpr std::int64_t kChunk = 256;

  // acc[x] += w[0] * s[0][x] + ... + w[K-1] * s[K-1][x], added one tap after the other.
  template <int K>
  static void accumulate(T* acc, const T* base, const Tap* taps, const T* w, std::int64_t len) {
    const T* s[K];
    T wk[K];
    for (int k = 0; k < K; ++k) {
      s[k] = base + taps[k].offset;
      wk[k] = w[k];
    }
    for (std::int64_t x = 0; x < len; ++x) {
      T a = acc[x];
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) a += wk[k] * s[k][x];
      acc[x] = a;
    }
  }

  // Output nodes at..at+len-1 of one row (at: their first node's index in the layout).
  void sweep_piece(const T* w, T src, std::int64_t at, std::int64_t len) {
    const T* base = cur_.data() + at;
    const Tap* taps = taps_.data();
    const std::int64_t ntaps = static_cast<std::int64_t>(taps_.size());
    T acc[kChunk];
    for (std::int64_t x = 0; x < len; ++x) acc[x] = T(0);
    std::int64_t t = 0;
    for (; t + 4 <= ntaps; t += 4) accumulate<4>(acc, base, taps + t, w + t, len);
    switch (ntaps - t) {
      case 3:
        accumulate<3>(acc, base, taps + t, w + t, len);
        break;
      case 2:
        accumulate<2>(acc, base, taps + t, w + t, len);
        break;
      case 1:
        accumulate<1>(acc, base, taps + t, w + t, len);
        break;
      default:
        break;
    }
    T* dst = next_.data() + at;
    for (std::int64_t x = 0; x < len; ++x) dst[x] = acc[x] + src;
  }

  void sweep(const std::vector<T>& w, T src) {
    const auto& n = p_.n;
    const std::int64_t pieces = (n[0] + kChunk - 1) / kChunk;
    if (n[1] * n[2] == 1) {
#pragma omp parallel for schedule(static) if (parallel_)
      for (std::int64_t c = 0; c < pieces; ++c)
        sweep_piece(w.data(), src, layout_.index(c * kChunk, 0, 0),
                    std::min(kChunk, n[0] - c * kChunk));
      return;
    }
#pragma omp parallel for collapse(2) schedule(static) if (parallel_)
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t c = 0; c < pieces; ++c)
          sweep_piece(w.data(), src, layout_.index(c * kChunk, y, z),
                      std::min(kChunk, n[0] - c * kChunk));
  }

  void set_dirichlet_nodes(double t) {
    for (int axis = 0; axis < p_.dims; ++axis)
      for (int side = 0; side < 2; ++side) {
        const BoundaryFace& f = p_.faces[2 * axis + side];
        if (f.kind != BoundaryKind::dirichlet) continue;
        const T g = static_cast<T>(f.at(t));
        const int oa = (axis + 1) % 3, ob = (axis + 2) % 3;
        std::array<std::int64_t, 3> c{0, 0, 0};
        c[axis] = side == 0 ? 0 : p_.n[axis] - 1;
        for (std::int64_t b = 0; b < p_.n[ob]; ++b)
          for (std::int64_t a = 0; a < p_.n[oa]; ++a) {
            c[oa] = a;
            c[ob] = b;
            cur_[layout_.index(c[0], c[1], c[2])] = g;
          }
      }
  }

  StencilProblem p_;
  PaddedLayout layout_;
  std::vector<T> cur_, next_;
  std::vector<Tap> taps_;
  bool parallel_ = true;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(Precision precision) {
  if (precision == Precision::fp32) return std::make_unique<CpuBackend<float>>();
  return std::make_unique<CpuBackend<double>>();
}

}  // namespace heatsim::kernels
