// CPU reference backend: every dimension, shape, boundary condition and precision, OpenMP
// across z-y rows. Every other backend is tested against this one, so it favours plainness:
// ghost fill from the boundary conditions, then one sweep of the nonzero stencil taps, each
// node summing them in one fixed order (the sweep's loops are arranged to vectorise, the
// arithmetic per node is the plain loop's).
//
// With StencilProblem::coefficients (materials, source fields, convective and heat-flux faces)
// the backend runs the conservative varying-coefficient update instead, one step per pass; see
// sweep_fields() for the exact arithmetic per node, which the CUDA backends follow.
#include "cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "../boundary_rules.hpp"
#include "../face_conductance.hpp"
#include "../layout.hpp"
#include "../threads.hpp"

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
    c.temperature_dependence = true;
    return c;
  }

  std::string unsupported_reason(const StencilProblem& problem) const override {
    std::string why = check_capabilities(capabilities(), problem);
    if (!why.empty()) return why;
    if (problem.coefficients) return fields_unsupported_reason(problem);
    for (const BoundaryFace& f : problem.faces)
      if (needs_coefficients(f)) return "a convective or heat-flux face needs coefficient fields";
    return "";
  }

  void setup(const StencilProblem& problem) override {
    const std::string why = unsupported_reason(problem);
    if (!why.empty()) throw std::runtime_error("cpu backend: " + why);
    p_ = problem;
    // Threads only pay off beyond a few thousand points; small grids run many cheap steps.
    parallel_ = worth_threads(problem.points());
    layout_ = PaddedLayout(problem, problem.stencil.radius);
    cur_.assign(static_cast<std::size_t>(layout_.total()), T(0));
    next_.assign(cur_.size(), T(0));
    taps_.clear();
    if (problem.coefficients) return setup_fields(*problem.coefficients);
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
    upload_values(field.data());
  }

  void upload_from(const HostField& field) override {
    check_size(field.size());
    if (field.floats())
      upload_values(field.floats());
    else
      upload_values(field.doubles());
  }

  template <typename V>
  void upload_values(const V* field) {
    for_each_row_piece([&](std::int64_t compact, std::int64_t padded, std::int64_t count) {
      const V* from = field + compact;
      T* to = cur_.data() + padded;
      for (std::int64_t x = 0; x < count; ++x) to[x] = static_cast<T>(from[x]);
    });
  }

  void download(std::vector<double>& field) override {
    field.resize(static_cast<std::size_t>(p_.points()));
    download_to(field.data());
  }

  void download_to(double* out) override { copy_interior_to(out); }
  void download_to(float* out) override { copy_interior_to(out); }

  template <typename Out>
  void copy_interior_to(Out* out) {
    for_each_row_piece([&](std::int64_t compact, std::int64_t padded, std::int64_t count) {
      const T* from = cur_.data() + padded;
      Out* to = out + compact;
      for (std::int64_t x = 0; x < count; ++x) to[x] = static_cast<Out>(from[x]);
    });
  }

  // f(compact index, padded index, count) over the interior's rows on every thread; a row
  // longer than 2^20 nodes (a large 1D grid is one row) in pieces of that many, so that no
  // thread copies alone.
  template <typename F>
  void for_each_row_piece(F&& f) const {
    const auto& n = p_.n;
    const std::int64_t piece = std::min<std::int64_t>(n[0], std::int64_t{1} << 20);
    const std::int64_t per_row = (n[0] + piece - 1) / piece;
    const std::int64_t work = n[1] * n[2] * per_row;
#pragma omp parallel for schedule(static) if (parallel_)
    for (std::int64_t w = 0; w < work; ++w) {
      const std::int64_t row = w / per_row, x0 = w % per_row * piece;
      const std::int64_t y = row % n[1], z = row / n[1];
      const std::int64_t x1 = std::min(n[0], x0 + piece);
      f((z * n[1] + y) * n[0] + x0, layout_.index(x0, y, z), x1 - x0);
    }
  }

  // Just the box's rows, straight from the padded field (a decomposed run's halo exchange).
  void read_box(const FieldBox& box, double* values) override {
    check_box(box);
    for_box_row(box, [&](std::int64_t at, std::size_t k) {
      for (std::int64_t x = 0; x < box.extent[0]; ++x)
        values[k + static_cast<std::size_t>(x)] = static_cast<double>(cur_[at + x]);
    });
  }

  void write_box(const FieldBox& box, const double* values) override {
    check_box(box);
    for_box_row(box, [&](std::int64_t at, std::size_t k) {
      for (std::int64_t x = 0; x < box.extent[0]; ++x)
        cur_[at + x] = static_cast<T>(values[k + static_cast<std::size_t>(x)]);
    });
  }

  void advance(std::int64_t steps, std::int64_t step0) override {
    for (std::int64_t s = 0; s < steps; ++s) step(step0 + s, nullptr, nullptr);
  }

  // One step per pass: the nodes of `inner`, between(), then the ghosts filled again (they
  // may be formed from nodes between() wrote) and the other nodes.
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    if (steps != 1) return false;
    check_box(inner);
    step(step0, &inner, &between);
    return true;
  }

  FieldStats stats() override {
    double mn = std::numeric_limits<double>::infinity(), mx = -mn, total = 0.0;
    std::int64_t bad = 0;
    const auto& n = p_.n;
    const double* capacity = p_.coefficients ? p_.coefficients->capacity.data() : nullptr;
#pragma omp parallel for collapse(2) reduction(min : mn) reduction(max : mx) reduction(+ : total, bad) if (parallel_)
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y) {
        const double wzy = weight(2, z) * weight(1, y);
        const T* row = &cur_[layout_.index(0, y, z)];
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const double v = static_cast<double>(row[x]);
          // With fields, the heat content: each node also weighs by its rho*c_p; a node of
          // capacity 0 lies inside a void and is no part of the body.
          const std::int64_t i = (z * n[1] + y) * n[0] + x;
          const double c = capacity ? capacity[i] : 1.0;
          if (c == 0.0) continue;
          if (!std::isfinite(v)) {
            ++bad;
            continue;
          }
          mn = std::min(mn, v);
          mx = std::max(mx, v);
          // A law of varying capacity holds C_ref h(u) (temperature_laws.hpp).
          const TemperatureLaw* law = law_of(i);
          total += wzy * weight(0, x) * c * (law ? law->enthalpy(v) : v);
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

  void check_box(const FieldBox& box) const {
    for (int a = 0; a < kMaxDims; ++a)
      if (box.grid[a] != p_.n[a] || box.lo[a] < 0 || box.extent[a] < 0 ||
          box.lo[a] + box.extent[a] > p_.n[a])
        throw std::invalid_argument("cpu backend: box outside the field along axis " +
                                    std::to_string(a));
  }

  // Calls f(layout index of the row's first node, index of that node in the box) per x row.
  template <typename F>
  void for_box_row(const FieldBox& box, F&& f) const {
    std::size_t k = 0;
    for (std::int64_t z = 0; z < box.extent[2]; ++z)
      for (std::int64_t y = 0; y < box.extent[1]; ++y, k += static_cast<std::size_t>(box.extent[0]))
        f(layout_.index(box.lo[0], box.lo[1] + y, box.lo[2] + z), k);
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

  // The constant-weight rules (boundary_rules.hpp). Lines along `axis` cover the padded extent
  // of earlier axes and the interior of later ones.
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
      // Plain variables, not structured bindings: an OpenMP region may not capture those
      // (clang, C++17).
      const std::pair<std::int64_t, std::int64_t> ra = range(oa), rb = range(ob);
      const std::int64_t a0 = ra.first, a1 = ra.second, b0 = rb.first, b1 = rb.second;
#pragma omp parallel for collapse(2) if (parallel_)
      for (std::int64_t b = b0; b < b1; ++b)
        for (std::int64_t a = a0; a < a1; ++a) {
          std::array<std::int64_t, 3> c{0, 0, 0};
          c[oa] = a;
          c[ob] = b;
          c[axis] = 0;
          T* base = &cur_[layout_.index(c[0], c[1], c[2])];  // node 0 on this line
          for (int k = 1; k <= g; ++k) {
            // The low ghost first: on short lines the high one's source may be it.
            const T* from_lo = base + ghost_source(lo.kind, 0, k, n) * st;
            base[-k * st] = constant_ghost<T>(lo.kind, glo, k, h, *from_lo);
            const T* from_hi = base + ghost_source(hi.kind, 1, k, n) * st;
            base[(n - 1 + k) * st] = constant_ghost<T>(hi.kind, ghi, k, h, *from_hi);
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

  // The nodes of `box` (whole_grid(): every node).
  void sweep(const std::vector<T>& w, T src, const FieldBox& box) {
    const std::int64_t x0 = box.lo[0], nx = box.extent[0];
    const std::int64_t pieces = (nx + kChunk - 1) / kChunk;
    if (box.extent[1] * box.extent[2] == 1) {
#pragma omp parallel for schedule(static) if (parallel_)
      for (std::int64_t c = 0; c < pieces; ++c)
        sweep_piece(w.data(), src, layout_.index(x0 + c * kChunk, box.lo[1], box.lo[2]),
                    std::min(kChunk, nx - c * kChunk));
      return;
    }
#pragma omp parallel for collapse(2) schedule(static) if (parallel_)
    for (std::int64_t z = box.lo[2]; z < box.lo[2] + box.extent[2]; ++z)
      for (std::int64_t y = box.lo[1]; y < box.lo[1] + box.extent[1]; ++y)
        for (std::int64_t c = 0; c < pieces; ++c)
          sweep_piece(w.data(), src, layout_.index(x0 + c * kChunk, y, z),
                      std::min(kChunk, nx - c * kChunk));
  }

  FieldBox whole_grid() const {
    FieldBox b;
    b.grid = p_.n;
    b.extent = p_.n;
    return b;
  }

  // One step from step0: every node, or (inner and between given) the nodes of `inner`,
  // between(), then the rest (advance_around).
  void step(std::int64_t step0, const FieldBox* inner, const std::function<void()>* between) {
    const double t_now = static_cast<double>(step0) * p_.dt;
    const FieldBox first = inner ? *inner : whole_grid();
    if (p_.coefficients) {
      // The mean factor over the step: the source adds exactly the scheduled integral.
      const auto& sources = p_.coefficients->sources;
      std::array<T, kMaxSourceFields> factor{};
      for (std::size_t j = 0; j < sources.size(); ++j)
        factor[j] = static_cast<T>(sources[j].schedule.mean(t_now, t_now + p_.dt));
      const auto& radiation = p_.coefficients->radiation;
      std::vector<T> ambient4(radiation.size());
      for (std::size_t g = 0; g < radiation.size(); ++g) {
        const double a = radiation[g].ambient.at(t_now);
        ambient4[g] = static_cast<T>(a * a * a * a);
      }
      const auto prepare = [&] {
        if (varying_k_) update_faces();
        fill_ghosts_fields(t_now);
      };
      prepare();
      sweep_fields(factor, ambient4, first);
      if (inner) {
        (*between)();
        prepare();
        for (const FieldBox& b : boxes_around(*inner)) sweep_fields(factor, ambient4, b);
      }
    } else {
      std::vector<T> w(taps_.size());
      for (std::size_t t = 0; t < taps_.size(); ++t) w[t] = static_cast<T>(taps_[t].weight);
      const T src = static_cast<T>(p_.source_increment);
      fill_ghosts(t_now);
      sweep(w, src, first);
      if (inner) {
        (*between)();
        fill_ghosts(t_now);
        for (const FieldBox& b : boxes_around(*inner)) sweep(w, src, b);
      }
    }
    std::swap(cur_, next_);
    set_dirichlet_nodes(static_cast<double>(step0 + 1) * p_.dt);
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

  // ---- Varying coefficients ------------------------------------------------------------

  std::string fields_unsupported_reason(const StencilProblem& problem) const {
    const CoefficientFields& f = *problem.coefficients;
    const std::size_t points = static_cast<std::size_t>(problem.points());
    if (problem.stencil.radius != 1) return "coefficient fields need a radius-1 (order2) stencil";
    if (f.conductivity.size() != points || f.capacity.size() != points)
      return "coefficient fields do not match the grid";
    if (f.has_faces())
      for (int a = 0; a < problem.dims; ++a)
        if (f.faces[a].size() != points) return "face conductances do not match the grid";
    if (f.sources.size() > static_cast<std::size_t>(kMaxSourceFields))
      return "more than " + std::to_string(kMaxSourceFields) + " source fields";
    for (const auto& r : f.radiation)
      if (r.coefficient.size() != points) return "a radiating surface does not match the grid";
    if (f.temperature) {
      if (!f.has_faces()) return "temperature-dependent materials need the face conductances";
      if (f.temperature->law.size() != points) return "the material laws do not match the grid";
      for (int a = 0; a < problem.dims; ++a)
        if (f.temperature->share[a].size() != points)
          return "the faces' material shares do not match the grid";
      for (std::int32_t l : f.temperature->law)
        if (l >= static_cast<std::int32_t>(f.temperature->laws.size()))
          return "a node names a material law that does not exist";
    }
    for (const auto& src : f.sources)
      if (src.density.size() != points) return "a source field does not match the grid";
    for (int a = 0; a < problem.dims; ++a)
      if (problem.n[a] < 2) return "coefficient fields need at least 2 nodes per axis";
    return "";
  }

  // k, rho*c_p and the source densities in the padded layout, as T. The ghosts of k hold the
  // mirror node's value (periodic axes: the node one period away), so the conductance toward
  // a ghost equals the boundary node's first interior one; they never change. The faces'
  // conductances K(i, i + e) go to kf_[axis][i] (the given ones rounded to T, else the
  // harmonic mean of the two nodes' k in T), with the face toward each ghost the mirror face
  // (periodic: the wrap face), so the step and the ghost rules read one array either way.
  void setup_fields(const CoefficientFields& f) {
    auto padded = [&](const std::vector<double>& field) {
      std::vector<T> out(cur_.size(), T(0));
      for_each_node([&](std::int64_t i, std::int64_t k) { out[k] = static_cast<T>(field[i]); });
      return out;
    };
    k_ = padded(f.conductivity);
    // dt / C in T as the step forms it (T(dt) / T(C)); 0 inside a void (C = 0): not stepped.
    dtc_ = padded(f.capacity);
    for (T& v : dtc_)
      if (v != T(0)) v = static_cast<T>(p_.dt) / v;
    transfer_.clear();
    if (!f.transfer.empty()) transfer_ = padded(f.transfer);
    q_.clear();
    for (const auto& src : f.sources) q_.push_back(padded(src.density));
    radiation_.clear();
    for (const auto& r : f.radiation) radiation_.push_back(padded(r.coefficient));
    for (int axis = 0; axis < p_.dims; ++axis) {
      const std::int64_t n = p_.n[axis], st = layout_.stride(axis);
      const bool periodic = p_.periodic(axis);
      for_each_line(axis, [&](T* /*u*/, std::int64_t at) {
        T* k = &k_[at];
        k[-st] = periodic ? k[(n - 1) * st] : k[st];
        k[n * st] = periodic ? k[0] : k[(n - 2) * st];
      });
    }
    for (int axis = 0; axis < p_.dims; ++axis) {
      const std::int64_t st = layout_.stride(axis);
      std::vector<T>& kf = kf_[axis];
      if (f.has_faces()) {
        kf = padded(f.faces[axis]);
      } else {
        kf.assign(cur_.size(), T(0));
        for_each_node([&](std::int64_t, std::int64_t i) {
          kf[i] = face_conductance(k_[i], k_[i + st]);  // the last node's: toward its ghost
        });
      }
      mirror_faces(axis);
    }
    setup_laws(f);
  }

  // The faces toward the ghosts of `axis`: the mirror face (periodic: the wrap face). Where
  // the mirror face conducts nothing (a void beside the boundary node b), b's own k: the ghost
  // then carries the face's condition alone (boundary_rules.hpp, fill_ghost_faces); 0 when
  // b is in the void itself.
  void mirror_faces(int axis) {
    const std::int64_t n = p_.n[axis], st = layout_.stride(axis);
    const bool periodic = p_.periodic(axis);
    std::vector<T>& kf = kf_[axis];
    for_each_line(axis, [&](T* /*u*/, std::int64_t at) {
      fill_ghost_faces(&kf[at], &k_[at], n, st, periodic);
    });
  }

  // ---- Temperature-dependent materials (temperature_laws.hpp) -----------------------------

  void setup_laws(const CoefficientFields& f) {
    laws_ = f.temperature;
    law_.clear();
    varying_k_ = false;
    if (!laws_) return;
    law_.assign(cur_.size(), -1);
    for_each_node([&](std::int64_t i, std::int64_t k) {
      law_[static_cast<std::size_t>(k)] = laws_->law[static_cast<std::size_t>(i)];
    });
    for (const TemperatureLaw& l : laws_->laws) varying_k_ = varying_k_ || l.varying_conductivity();
    if (!varying_k_) return;
    for (int a = 0; a < p_.dims; ++a) {
      kref_[a].assign(cur_.size(), 0.0);
      share_[a].assign(cur_.size(), 0.5);
      contact_[a].assign(laws_->contact[a].empty() ? 0 : cur_.size(), 0.0);
      for_each_node([&](std::int64_t i, std::int64_t k) {
        kref_[a][k] = f.faces[a][i];
        share_[a][k] = laws_->share[a][i];
        if (!contact_[a].empty()) contact_[a][k] = laws_->contact[a][i];
      });
    }
    tables_.clear();
    for (const TemperatureLaw& law : laws_->laws) tables_.push_back(law.tables());
  }

  // The law of node `i` (memory order) when its capacity varies, else null.
  const TemperatureLaw* law_of(std::int64_t i) const {
    if (!laws_) return nullptr;
    const std::int32_t l = laws_->law[static_cast<std::size_t>(i)];
    if (l < 0) return nullptr;
    const TemperatureLaw& law = laws_->laws[static_cast<std::size_t>(l)];
    return law.varying_capacity() ? &law : nullptr;
  }

  // K_ij from the field at the step's start (TemperatureDependence: K_ref times the Kirchhoff
  // mean ratio between two nodes of one law, else series_face), in double, rounded to T once;
  // then the mirror faces.
  void update_faces() {
    const auto& n = p_.n;
    const std::int32_t* law = law_.data();
    const LawTables* tables = tables_.data();
    for (int a = 0; a < p_.dims; ++a) {
      const std::int64_t st = layout_.stride(a), last = p_.n[a] - 1;
      const bool periodic = p_.periodic(a);
      const double* kref = kref_[a].data();
      const double* share = share_[a].data();
      const double* contact = contact_[a].empty() ? nullptr : contact_[a].data();
      T* K = kf_[a].data();
#pragma omp parallel for collapse(2) schedule(static) if (parallel_)
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t y = 0; y < n[1]; ++y) {
          const std::int64_t row = layout_.index(0, y, z);
          const std::int64_t c[3] = {0, y, z};
          for (std::int64_t x = 0; x < n[0]; ++x) {
            const std::int64_t i = row + x;
            const std::int64_t ia = a == 0 ? x : c[a];
            std::int64_t j = i + st;
            if (ia == last) {
              if (!periodic) continue;  // the mirror face, below
              j = i - last * st;
            }
            if (law[i] < 0 && law[j] < 0) continue;
            const double ui = static_cast<double>(cur_[i]), uj = static_cast<double>(cur_[j]);
            K[i] = static_cast<T>(
                law[i] == law[j]
                    ? kref[i] * laws_->laws[static_cast<std::size_t>(law[i])]
                                    .mean_conductivity_ratio(ui, uj)
                    : series_face(kref[i], share[i], contact ? contact[i] : 0.0,
                                  law[i] < 0 ? nullptr : &tables[static_cast<std::size_t>(law[i])],
                                  law[j] < 0 ? nullptr : &tables[static_cast<std::size_t>(law[j])],
                                  ui, uj));
          }
        }
      mirror_faces(a);
    }
  }

  // Calls f(u, at) for every grid line along `axis` (the other axes over their interior), u
  // pointing at the line's node 0 in cur_ and `at` its layout index.
  template <typename F>
  void for_each_line(int axis, F&& f) {
    const int oa = (axis + 1) % 3, ob = (axis + 2) % 3;
#pragma omp parallel for collapse(2) if (parallel_)
    for (std::int64_t b = 0; b < p_.n[ob]; ++b)
      for (std::int64_t a = 0; a < p_.n[oa]; ++a) {
        std::array<std::int64_t, 3> c{0, 0, 0};
        c[oa] = a;
        c[ob] = b;
        const std::int64_t at = layout_.index(c[0], c[1], c[2]);
        f(&cur_[at], at);
      }
  }

  // One face's condition at time t for its ghost rule (boundary_rules.hpp).
  static CoefficientGhostRule ghost_rule(const BoundaryFace& f, double h, double t) {
    const double a = f.at(t);
    return coefficient_ghost_rule(f.kind, f.heat_flux, a, f.transfer, h,
                                  radiation_coefficient(f, h), f.radiates() ? a * a * a * a : 0.0);
  }

  void fill_ghosts_fields(double t) {
    for (int axis = 0; axis < p_.dims; ++axis) {
      const std::int64_t n = p_.n[axis], st = layout_.stride(axis);
      if (p_.periodic(axis)) {
        for_each_line(axis, [&](T* u, std::int64_t) {
          u[-st] = u[(n - 1) * st];
          u[n * st] = u[0];
        });
        continue;
      }
      const CoefficientGhostRule lo = ghost_rule(p_.faces[2 * axis], p_.h[axis], t);
      const CoefficientGhostRule hi = ghost_rule(p_.faces[2 * axis + 1], p_.h[axis], t);
      for_each_line(axis, [&](T* u, std::int64_t at) {
        const T* K = &kf_[axis][at];
        u[-st] = coefficient_ghost(lo, u[0], u[st], K[0], K[-st]);
        const std::int64_t b = (n - 1) * st, m = (n - 2) * st;
        u[n * st] = coefficient_ghost(hi, u[b], u[m], K[m], K[b]);
      });
    }
  }

  // One step of the conservative form (StencilProblem::coefficients), per node i, in T:
  //   flow = 0
  //   for axis = x, y, z (active ones):
  //     flow += inv_h2[axis] * (K(i, i-e) * (u[i-e] - u_i) + K(i, i+e) * (u[i+e] - u_i))
  //   src = 0
  //   for s in sources order: src += factor_s * q_s[i]
  //   u_i <- u_i + (dt / C_i) * (flow + src)           ((flow + src) - H_i u_i with surfaces)
  // with K the face's kf_ entry (face_conductance(k_i, k_j) unless the faces are given),
  // inv_h2[axis] = T(1 / h^2) and
  // factor_s = T(schedule_s.mean(t, t + dt)), dt = T(dt). Dirichlet nodes are overwritten by
  // g(t + dt) afterwards.
  // ambient4[g]: the g-th radiating surface group's ambient(t)^4 (in double, rounded to T).
  void sweep_fields(const std::array<T, kMaxSourceFields>& factor, const std::vector<T>& ambient4,
                    const FieldBox& box) {
    const int dims = p_.dims;
    const int sources = static_cast<int>(q_.size());
    std::array<T, kMaxDims> inv_h2{};
    std::array<std::int64_t, kMaxDims> st{};
    for (int a = 0; a < dims; ++a) {
      inv_h2[a] = static_cast<T>(1.0 / (p_.h[a] * p_.h[a]));
      st[a] = layout_.stride(a);
    }
    const T* u = cur_.data();
    std::array<const T*, kMaxDims> kf{};
    for (int a = 0; a < dims; ++a) kf[a] = kf_[a].data();
    const T* dtc = dtc_.data();
    const T* H = transfer_.empty() ? nullptr : transfer_.data();
    const std::int32_t* law = law_.empty() ? nullptr : law_.data();
    const int groups = static_cast<int>(radiation_.size());
    std::vector<const T*> R(radiation_.size());
    for (int g = 0; g < groups; ++g) R[static_cast<std::size_t>(g)] = radiation_[static_cast<std::size_t>(g)].data();
    std::array<const T*, kMaxSourceFields> q{};
    for (int s = 0; s < sources; ++s) q[s] = q_[s].data();
    T* out = next_.data();
    // The common case, without temperature laws or radiating surfaces: the same arithmetic in
    // a loop without per-node branches or inner loops of run-time length, which the compiler
    // unrolls and vectorises (the chip example's steps 2.4 times as fast on 2 cores).
    if (!law && groups == 0) {
      const Plain plain{u, kf, dtc, H, q, factor, inv_h2, st, out};
      if (dims == 3) return sweep_plain<3>(plain, box, sources);
      if (dims == 2) return sweep_plain<2>(plain, box, sources);
      return sweep_plain<1>(plain, box, sources);
    }
#pragma omp parallel for collapse(2) schedule(static) if (parallel_)
    for (std::int64_t z = box.lo[2]; z < box.lo[2] + box.extent[2]; ++z)
      for (std::int64_t y = box.lo[1]; y < box.lo[1] + box.extent[1]; ++y) {
        const std::int64_t row = layout_.index(box.lo[0], y, z);
        for (std::int64_t i = row; i < row + box.extent[0]; ++i) {
          const T ui = u[i];
          T flow = T(0);
          for (int a = 0; a < dims; ++a) {
            const std::int64_t lo = i - st[a], hi = i + st[a];
            flow += inv_h2[a] * (kf[a][lo] * (u[lo] - ui) + kf[a][i] * (u[hi] - ui));
          }
          T src = T(0);
          for (int s = 0; s < sources; ++s) src += factor[s] * q[s][i];
          T gain = H ? (flow + src) - H[i] * ui : flow + src;
          if (groups > 0) {
            // Radiating surfaces inside the body: - R (u^4 - ambient^4) per group.
            const T u2 = ui * ui;
            for (int g = 0; g < groups; ++g)
              gain -= R[static_cast<std::size_t>(g)][i] * (u2 * u2 - ambient4[static_cast<std::size_t>(g)]);
          }
          if (law && law[i] >= 0) {
            // A varying capacity: the enthalpy advances (temperature_laws.hpp), in double.
            const TemperatureLaw& l = laws_->laws[static_cast<std::size_t>(law[i])];
            if (l.varying_capacity()) {
              out[i] = static_cast<T>(l.temperature(l.enthalpy(static_cast<double>(ui)) +
                                                    static_cast<double>(dtc[i] * gain)));
              continue;
            }
          }
          out[i] = ui + dtc[i] * gain;
        }
      }
  }

  // sweep_fields' arrays for its common case.
  struct Plain {
    const T* u;
    std::array<const T*, kMaxDims> kf;
    const T* dtc;
    const T* H;  // nullptr: no surfaces inside the body
    std::array<const T*, kMaxSourceFields> q;
    std::array<T, kMaxSourceFields> factor;
    std::array<T, kMaxDims> inv_h2;
    std::array<std::int64_t, kMaxDims> st;
    T* out;
  };

  // sweep_fields for a D-dimensional problem without laws or radiation, with S source fields,
  // and with surfaces inside the body or not (kSurfaces: H is not nullptr): per node the same
  // operations in the same order (flow from 0 over the axes x, y, z; src from 0 over the
  // sources; the surfaces' loss; the update), so the same bits.
  template <int D>
  void sweep_plain(const Plain& a, const FieldBox& box, int sources) {
    if (a.H)
      sweep_plain_sources<D, true>(a, box, sources);
    else
      sweep_plain_sources<D, false>(a, box, sources);
  }

  template <int D, bool kSurfaces>
  void sweep_plain_sources(const Plain& a, const FieldBox& box, int sources) {
    static_assert(kMaxSourceFields == 4, "one case per number of source fields");
    switch (sources) {
      case 0:
        return sweep_plain_rows<D, 0, kSurfaces>(a, box);
      case 1:
        return sweep_plain_rows<D, 1, kSurfaces>(a, box);
      case 2:
        return sweep_plain_rows<D, 2, kSurfaces>(a, box);
      case 3:
        return sweep_plain_rows<D, 3, kSurfaces>(a, box);
      default:
        return sweep_plain_rows<D, 4, kSurfaces>(a, box);
    }
  }

  template <int D, int S, bool kSurfaces>
  void sweep_plain_rows(const Plain& a, const FieldBox& box) {
#pragma omp parallel for collapse(2) schedule(static) if (parallel_)
    for (std::int64_t z = box.lo[2]; z < box.lo[2] + box.extent[2]; ++z)
      for (std::int64_t y = box.lo[1]; y < box.lo[1] + box.extent[1]; ++y) {
        const std::int64_t row = layout_.index(box.lo[0], y, z), end = row + box.extent[0];
        const T* u = a.u;
        const T *kx = a.kf[0], *ky = a.kf[1], *kz = a.kf[2];
        const T* dtc = a.dtc;
        const T* H = a.H;
        T* out = a.out;
        const std::int64_t sy = a.st[1], sz = a.st[2];
        const T hx = a.inv_h2[0], hy = a.inv_h2[1], hz = a.inv_h2[2];
        // out and the arrays read never overlap.
#pragma GCC ivdep
        for (std::int64_t i = row; i < end; ++i) {
          const T ui = u[i];
          T flow = T(0);
          flow += hx * (kx[i - 1] * (u[i - 1] - ui) + kx[i] * (u[i + 1] - ui));
          if constexpr (D > 1)
            flow += hy * (ky[i - sy] * (u[i - sy] - ui) + ky[i] * (u[i + sy] - ui));
          if constexpr (D > 2)
            flow += hz * (kz[i - sz] * (u[i - sz] - ui) + kz[i] * (u[i + sz] - ui));
          T src = T(0);
          for (int s = 0; s < S; ++s) src += a.factor[s] * a.q[s][i];
          if constexpr (kSurfaces)
            out[i] = ui + dtc[i] * ((flow + src) - H[i] * ui);
          else
            out[i] = ui + dtc[i] * (flow + src);
        }
      }
  }

  StencilProblem p_;
  PaddedLayout layout_;
  std::vector<T> cur_, next_;
  std::vector<Tap> taps_;
  std::vector<T> k_, dtc_;   // k and dt / rho c_p (0 in a void), padded like the field
  std::vector<T> transfer_;  // H of surfaces inside the body, padded; empty: none
  std::array<std::vector<T>, kMaxDims> kf_;  // face conductances K(i, i + e_axis), padded
  std::vector<std::vector<T>> q_;            // source densities at factor 1, padded
  std::vector<std::vector<T>> radiation_;    // radiating surfaces' R per group, padded
  // Temperature-dependent materials: the laws, each node's law (padded, -1 outside and for
  // constant properties), and with a varying conductivity the faces' reference conductances
  // and shares and the nodes' conductivity ratios at the step's start.
  std::shared_ptr<const TemperatureDependence> laws_;
  std::vector<std::int32_t> law_;
  bool varying_k_ = false;
  std::array<std::vector<double>, kMaxDims> kref_, share_, contact_;
  std::vector<LawTables> tables_;  // laws_'s tables, law by law
  bool parallel_ = true;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(Precision precision) {
  if (precision == Precision::fp32) return std::make_unique<CpuBackend<float>>();
  return std::make_unique<CpuBackend<double>>();
}

}  // namespace heatsim::kernels
