// CPU level operations for the multigrid solver (kernels/level_ops.hpp): OpenMP across z-y
// rows, fp64. Compact levels (the finest) sum a node's neighbours in the order x-, x+, y-, y+,
// z-, z+; stencil levels over the offsets in their numbering (x fastest); the CUDA level
// operations repeat both orders. Every result is independent of the thread count (the dot product
// sums per-row partial sums in row order), so an implicit run repeats itself bit for bit on a
// restart.
#include "cpu_level_ops.hpp"

#include "../threads.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace heatsim::kernels {
namespace {

// Values whose pages are first touched where they are first written (create_vector: by the
// threads that later sweep them) and not zeroed once more by the vector.
using Values = std::vector<double, UnsetAllocator<double>>;
using Floats = std::vector<float, UnsetAllocator<float>>;
// A symmetric 27-point level's entries toward its upper neighbours (offsets k > 13), 13 a node.
using HalfEntry = float;
using HalfEntries = std::vector<HalfEntry, UnsetAllocator<HalfEntry>>;
constexpr int kUpper = 13;

// Inside an OpenMP parallel region: this thread's block of planes [z0, z1) of nz (all of
// them without OpenMP), for sweeps whose threads each take a block of planes and meet at a
// barrier before the planes at their blocks' ends.
void thread_planes(std::int64_t nz, std::int64_t& z0, std::int64_t& z1) {
  std::int64_t threads = 1, t = 0;
#ifdef _OPENMP
  threads = omp_get_num_threads();
  t = omp_get_thread_num();
#endif
  z0 = nz * t / threads;
  z1 = nz * (t + 1) / threads;
}

// Whether every value is +0, bit for bit.
bool all_positive_zero(const LevelWeights& values) {
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  const double* v = values.data();
  bool zero = true;
#pragma omp parallel for schedule(static) reduction(&& : zero) if (worth_threads(n))
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, v + i, sizeof bits);
    zero = zero && bits == 0;
  }
  return zero;
}

class CpuLevelOps final : public LevelOps {
  struct Level;  // below

 public:
  std::string name() const override { return "cpu"; }

  void setup(const std::vector<LevelOperator>& levels) override { adopt(levels); }

  void adopt(std::vector<LevelOperator> levels) override {
    vectors_.clear();
    vector_level_.clear();
    released_ids_.clear();
    sparse_.clear();
    piece_.clear();
    pieces_ = 0;
    build(std::move(levels));
  }

  // build() moves each level into its Level and changes none of the finest level's arrays
  // (only the periodic flags of the axes beyond its dims; a node term of +0 everywhere is
  // dropped, which reads as the same).
  bool keeps_finest_level() const override { return true; }
  const LevelOperator* finest_level() const override {
    return levels_.empty() ? nullptr : &levels_[0].op;
  }

  void replace_hierarchy(const std::vector<LevelOperator>& levels) override {
    adopt_replacement(levels);
  }

  void adopt_replacement(std::vector<LevelOperator> levels) override {
    if (levels.empty() || levels_.empty() || levels[0].points() != levels_[0].op.points())
      throw std::invalid_argument("level ops: the new finest level has another number of points");
    release_coarse_vectors();
    build(std::move(levels));
  }

  // The coarse levels and their vectors go, and the finest level's operator arrays: the
  // finest level's shape, fixed flags and row plan stay for the level-0 vectors.
  void release_levels() override {
    if (levels_.empty()) return;
    release_coarse_vectors();
    levels_.resize(1);
    release_finest();
  }

  bool replaces_finest() const override { return true; }

  // The finest level's operator arrays go; its shape, fixed flags and row plan stay.
  void release_finest() override {
    if (levels_.empty()) return;
    if (bottom_level_ == 0) bottom_.reset();
    Level& L = levels_[0];
    LevelWeights().swap(L.op.node_term);
    for (int a = 0; a < kMaxDims; ++a) {
      LevelWeights().swap(L.op.conductance[a]);
      Floats().swap(L.conductance32[a]);
    }
    LevelWeights().swap(L.op.stencil);
    Floats().swap(L.stencil32);
    Values().swap(L.centre);
    HalfEntries().swap(L.upper);
  }

  void replace_finest(LevelOperator level) override {
    if (levels_.empty())
      throw std::logic_error("level ops: no hierarchy whose finest level to replace");
    const LevelOperator& old = levels_[0].op;
    if (level.dims != old.dims || level.n != old.n || level.stencil_form() ||
        level.fixed != old.fixed)
      throw std::invalid_argument(
          "level ops: the new finest level has another shape or other fixed nodes");
    for (int a = 0; a < level.dims; ++a)
      if (level.periodic[a] != old.periodic[a])
        throw std::invalid_argument("level ops: the new finest level is periodic elsewhere");
    release_finest();
    levels_[0] = make_level(0, std::move(level));
  }

  int create_sparse(const std::vector<std::int64_t>& nodes,
                    const std::vector<double>& values) override {
    const std::int64_t np = at(0).op.points();
    if (nodes.size() != values.size())
      throw std::invalid_argument("level ops: a sparse vector's nodes and values differ in number");
    for (std::int64_t i : nodes)
      if (i < 0 || i >= np) throw std::invalid_argument("level ops: a sparse node off the grid");
    sparse_.push_back({nodes, values});
    return static_cast<int>(sparse_.size()) - 1;
  }

  void scatter(double a, int s, int y, bool assign) override {
    const Sparse& sv = sparse_.at(static_cast<std::size_t>(s));
    double* yp = level0(y).data();
    for (std::size_t k = 0; k < sv.nodes.size(); ++k)
      yp[sv.nodes[k]] = assign ? a * sv.values[k] : yp[sv.nodes[k]] + a * sv.values[k];
  }

  bool set_pieces(const std::vector<std::int32_t>& piece, std::int64_t count) override {
    if (piece.size() != static_cast<std::size_t>(at(0).op.points()))
      throw std::invalid_argument("level ops: pieces for another number of points");
    for (std::int32_t g : piece)
      if (g < -1 || g >= count) throw std::invalid_argument("level ops: a piece out of range");
    piece_ = piece;
    pieces_ = count;
    return true;
  }

  // Row by row (PieceRowSums), one thread: a run's sums repeat to the bit, and a decomposed
  // run's are these.
  void piece_sums(int v, std::vector<double>& sums) override {
    const double* vp = level0(v).data();
    sums.assign(static_cast<std::size_t>(pieces_), 0.0);
    PieceRowSums row(pieces_);
    const std::size_t nx = static_cast<std::size_t>(at(0).op.n[0]);
    for (std::size_t i = 0; i < piece_.size(); ++i) {
      if (piece_[i] >= 0) row.add(piece_[i], vp[i]);
      if ((i + 1) % nx == 0)
        row.finish([&](std::int32_t g, double s) { sums[static_cast<std::size_t>(g)] += s; });
    }
  }

  void piece_add(const std::vector<double>& values, int v) override {
    if (values.size() != static_cast<std::size_t>(pieces_))
      throw std::invalid_argument("level ops: piece values for another number of pieces");
    double* vp = level0(v).data();
    const std::int64_t n = static_cast<std::int64_t>(piece_.size());
    const std::int32_t* g = piece_.data();
    for_each_index(0, n, worth_threads(n), [&](std::int64_t i) {
      if (g[i] >= 0) vp[i] += values[static_cast<std::size_t>(g[i])];
    });
  }

  void multiply_add(double a, int w, int x, double b, int y) override {
    const Values& wv = vec(w);
    const Values& xv = vec(x);
    Values& yv = vec(y);
    if (wv.size() != yv.size() || xv.size() != yv.size())
      throw std::invalid_argument("level ops: multiply_add of unequal sizes");
    const std::int64_t n = static_cast<std::int64_t>(yv.size());
    const double *wp = wv.data(), *xp = xv.data();
    double* yp = yv.data();
    for_each_index(0, n, worth_threads(n), [&](std::int64_t i) {
      yp[i] = b == 0.0 ? a * (wp[i] * xp[i]) : a * (wp[i] * xp[i]) + b * yp[i];
    });
  }

  void round_to_fp32(int v) override {
    for (double& value : vec(v)) value = static_cast<float>(value);
  }

 private:
  void release_coarse_vectors() {
    for (std::size_t v = 0; v < vectors_.size(); ++v)
      if (vector_level_[v] > 0) {
        vectors_[v] = Values();  // released; the id is no longer valid until given again
        vector_level_[v] = -1;
        released_ids_.push_back(static_cast<int>(v));
      }
  }

  // The levels of `levels`, checked, with their neighbour and transfer tables.
  void build(std::vector<LevelOperator> levels) {
    levels_.clear();
    bottom_.reset();
    for (std::size_t l = 0; l < levels.size(); ++l)
      levels_.push_back(make_level(l, std::move(levels[l])));
  }

  // Level l from its operator, checked (l > 0: below levels_[l - 1], which is in place).
  Level make_level(std::size_t l, LevelOperator op) {
    Level L;
    L.op = std::move(op);
    const std::int64_t np = L.op.points();
    const auto size_ok = [&](std::size_t s) { return s == static_cast<std::size_t>(np); };
    if (!size_ok(L.op.fixed.size()))
      throw std::invalid_argument("level " + std::to_string(l) + ": field sizes differ from " +
                                  "the grid's " + std::to_string(np) + " points");
    const std::size_t kp = static_cast<std::size_t>(stencil_points(L.op.dims));
    for (int a = 0; a < kMaxDims; ++a) {
      if (a < L.op.dims && !L.op.stencil_form() && !size_ok(L.op.conductance[a].size()))
        throw std::invalid_argument("level " + std::to_string(l) + ": conductance[" +
                                    std::to_string(a) + "] has the wrong size");
      if (a >= L.op.dims) L.op.periodic[a] = false;
    }
    if (L.op.stencil_form() ? L.op.stencil.size() != kp * np : !size_ok(L.op.node_term.size()))
      throw std::invalid_argument("level " + std::to_string(l) + ": the operator has the " +
                                  "wrong size");
    if (l > 0 && L.op.prolongation.size() != kp * np)
      throw std::invalid_argument("level " + std::to_string(l) + ": the prolongation has " +
                                  "the wrong size");
    L.stencil_form = L.op.stencil_form();
    L.parallel = worth_threads(np);
    // A periodic axis of odd length joins two nodes of the same colour; those colour sweeps
    // update from the old values (a Jacobi step within the colour) so that rows shared out to
    // threads never race.
    L.colour_conflict = false;
    for (int a = 0; a < L.op.dims; ++a)
      L.colour_conflict = L.colour_conflict || (L.op.periodic[a] && L.op.n[a] % 2 == 1);
    for (int a = 0; a < kMaxDims; ++a) {
      L.neighbour[a].assign(3 * static_cast<std::size_t>(L.op.n[a]), -1);
      for (std::int64_t c = 0; c < L.op.n[a]; ++c)
        for (int o = -1; o <= 1; ++o) L.neighbour[a][3 * c + o + 1] = step(L.op, a, c, o);
    }
    if (!L.stencil_form) {
      // The smoother's conductances rounded to fp32, row by row by the threads that sweep
      // the rows. The diagonals (the node term plus the node's conductances, exact or
      // rounded) are not kept: each operation sums them from the conductances it reads
      // anyway (diagonal_at), 16 bytes a node fewer to write here and to read at each sweep.
      for (int a = 0; a < L.op.dims; ++a) L.conductance32[a] = Floats(static_cast<std::size_t>(np));
      std::atomic<bool> finite{true};
      for_rows(L, [&](std::int64_t y, std::int64_t z) {
        const std::int64_t nx = L.op.n[0], row = index(L, 0, y, z);
        bool row_finite = true;
        for (int a = 0; a < L.op.dims; ++a) {
          const double* g = L.op.conductance[a].data() + row;
          float* g32 = L.conductance32[a].data() + row;
          // Not finite: the exponent's bits all set (a test that vectorises, where
          // std::isfinite's compare and flag did not).
          unsigned not_finite = 0;
#pragma omp simd reduction(| : not_finite)
          for (std::int64_t x = 0; x < nx; ++x) {
            const float r = static_cast<float>(g[x]);
            g32[x] = r;
            std::uint32_t bits;
            std::memcpy(&bits, &r, sizeof bits);
            not_finite |= static_cast<unsigned>((bits & 0x7f800000u) == 0x7f800000u);
          }
          row_finite = row_finite && not_finite == 0;
        }
        if (!row_finite) finite.store(false, std::memory_order_relaxed);
      });
      L.finite32 = finite.load();
      // A node term of +0 on every node (a steady level whose faces hold or insulate, with
      // no transfer inside) is read after this only by the deflation's search through
      // finest_level(), which takes an empty node term as +0 on every node: not kept.
      if (all_positive_zero(L.op.node_term)) LevelWeights().swap(L.op.node_term);
    } else {
      round_stencil(L);
    }
    if (l > 0) {
      const Level& F = levels_[l - 1];
      for (int a = 0; a < kMaxDims; ++a) {
        std::vector<std::int64_t> idx = L.op.fine_index[a];
        if (a >= L.op.dims) idx = {0};
        if (static_cast<std::int64_t>(idx.size()) != L.op.n[a])
          throw std::invalid_argument("level " + std::to_string(l) + ": fine_index[" +
                                      std::to_string(a) + "] has the wrong size");
        L.transfer[a] = axis_transfer(F.op.n[a], F.op.periodic[a], idx);
        // Restriction gathers, per coarse node, the finer nodes at offsets -1, 0, +1.
        L.gather[a].assign(3 * static_cast<std::size_t>(L.op.n[a]), -1);
        for (std::int64_t I = 0; I < L.op.n[a]; ++I)
          for (int o = -1; o <= 1; ++o) L.gather[a][3 * I + o + 1] = step(F.op, a, idx[I], o);
      }
      L.standard_x = !F.op.periodic[0] && F.op.n[0] == 2 * L.op.n[0] - 1;
      for (std::int64_t X = 0; X < L.op.n[0] && L.standard_x; ++X)
        L.standard_x = L.op.fine_index[0][X] == 2 * X;
    }
    return L;
  }

 public:
  int create_vector(int level) override {
    // Zeroed in parallel, row by row as the sweeps go, so each thread touches its rows first.
    // A released coarse vector's id is given again, so that the ids of a solver whose
    // hierarchy is replaced at every outer iteration stay as few as its vectors.
    const Level& L = at(level);
    int id = static_cast<int>(vectors_.size());
    if (released_ids_.empty()) {
      vectors_.emplace_back();
      vector_level_.push_back(-1);
    } else {
      id = released_ids_.back();
      released_ids_.pop_back();
    }
    Values& v = vectors_[static_cast<std::size_t>(id)];
    v = Values(static_cast<std::size_t>(L.op.points()));
    double* p = v.data();
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      std::fill_n(p + index(L, 0, y, z), L.op.n[0], 0.0);
    });
    vector_level_[static_cast<std::size_t>(id)] = level;
    return id;
  }

  void upload(int v, const std::vector<double>& values) override {
    upload_from(v, values.data(), values.size());
  }
  void upload_from(int v, const double* values, std::size_t count) override {
    Values& dst = vec(v);
    check_upload(count, dst.size());
    copy_rows(at(vector_level_[static_cast<std::size_t>(v)]), values, dst.data());
  }
  void download(int v, std::vector<double>& values) override {
    const Values& x = vec(v);
    values.assign(x.begin(), x.end());
  }
  void download_to(int v, double* values, std::size_t count) override {
    const Values& x = vec(v);
    check_download(x.size(), count);
    copy_rows(at(vector_level_[static_cast<std::size_t>(v)]), x.data(), values);
  }

  void residual(int level, int b, int x, int r) override { residual_with<false>(level, b, x, r); }

  // Each row's residual, then its squares while the row is in the caches.
  double residual_norm(int level, int b, int x, int r) override {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    const double* xp = vec(x).data();
    double* rp = vec(r).data();
    const std::int64_t nx = L.op.n[0], ny = L.op.n[1];
    return sum_by_rows(L, [&](std::int64_t row) {
      const std::int64_t y = row % ny, z = row / ny;
      residual_row<false>(L, bp, xp, rp, y, z);
      return row_dot(rp, rp, row * nx, nx);
    });
  }

  void cycle_residual(int level, int b, int x, int r) override {
    residual_with<true>(level, b, x, r);
  }

  void apply(int level, int x, int y_out) override {
    const Level& L = at(level);
    const double* xp = vec(x).data();
    double* yp = vec(y_out).data();
    for_rows(L, [&](std::int64_t y, std::int64_t z) { apply_row(L, xp, yp, y, z); });
  }

  // Each row's product, then its part of x . y while the row is in the caches.
  double apply_dot(int level, int x, int y_out) override {
    const Level& L = at(level);
    const double* xp = vec(x).data();
    double* yp = vec(y_out).data();
    const std::int64_t nx = L.op.n[0], ny = L.op.n[1];
    return sum_by_rows(L, [&](std::int64_t row) {
      apply_row(L, xp, yp, row % ny, row / ny);
      return row_dot(xp, yp, row * nx, nx);
    });
  }

  void magnitude(int level, int b, int x, int out) override {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    const double* xp = vec(x).data();
    double* mp = vec(out).data();
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      const std::int64_t nx = L.op.n[0];
      const auto node = [&](std::int64_t xi) {
        const std::int64_t i = index(L, xi, y, z);
        if (L.op.fixed[i]) {
          mp[i] = 0.0;
          return;
        }
        double s = std::abs(bp[i]);
        if (L.stencil_form) {
          visit_stencil(L, xi, y, z, i,
                        [&](int, std::int64_t j, double a) { s += std::abs(a * xp[j]); });
        } else {
          s += std::abs(diagonal_at<false>(L, xi, y, z, i) * xp[i]);
          visit_neighbours(L, xi, y, z, i,
                           [&](std::int64_t j, double g) { s += std::abs(g * xp[j]); });
        }
        mp[i] = s;
      };
      if (compact_inside(L, y, z) && nx > 2) {
        node(0);
        compact_magnitude_run(L, bp, xp, mp, index(L, 1, y, z), nx - 2);
        node(nx - 1);
        return;
      }
      for (std::int64_t xi = 0; xi < nx; ++xi) node(xi);
    });
  }

  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    double* xp = vec(x).data();
    const int colours = L.stencil_form ? 1 << L.op.dims : 2;
    // Stencil levels: colours 2m and 2m + 1 share their rows (the y and z parities), and a node
    // of one has no neighbour of the other outside its own row, so one pass over the rows can
    // run both, row by row: the same updates with each row's stencil read once, not twice.
    // Not where a colour updates from a copy (colour_conflict).
    const bool paired = L.stencil_form && !L.colour_conflict;
    if (!L.stencil_form && L.op.dims >= 2 && !L.colour_conflict) {
      for (int s = 0; s < sweeps; ++s) red_black_planes(L, bp, xp, reverse ? 1 : 0, omega);
      return;
    }
    if (paired && L.op.dims == 3) {
      for (int s = 0; s < sweeps; ++s) stencil_planes(L, bp, xp, reverse, omega);
      return;
    }
    for (int s = 0; s < sweeps; ++s)
      for (int c = 0; c < colours; c += paired ? 2 : 1) {
        const int colour = reverse ? colours - 1 - c : c;
        if (paired)
          colour_pair_sweep(L, bp, xp, colour / 2, reverse, omega);
        else
          colour_sweep(L, bp, xp, colour, omega);
      }
  }

  // A compact 2D or 3D level's first colour from +0 takes no neighbour's value: each of its
  // nodes' neighbour sums adds G (+0) for each neighbour, +0 for a finite G, so its value is
  // 0 + omega ((b_i + 0) / a_ii - 0), computed as that without the neighbours; the sweep writes
  // it over the plane, the other colour's nodes (and the held ones) +0, in place of zero()
  // (the same bits as zero() and smooth()).
  void smooth_from_zero(int level, int b, int x, int sweeps, bool reverse, double omega) override {
    const Level& L = at(level);
    if (sweeps < 1 || L.stencil_form || L.op.dims < 2 || L.colour_conflict || !L.finite32) {
      LevelOps::smooth_from_zero(level, b, x, sweeps, reverse, omega);
      return;
    }
    red_black_planes(L, vec(b).data(), vec(x).data(), reverse ? 1 : 0, omega, true);
    smooth(level, b, x, sweeps - 1, reverse, omega);
  }

  void smooth_colour(int level, int b, int x, int colour, double omega) override {
    const Level& L = at(level);
    const int colours = L.stencil_form ? 1 << L.op.dims : 2;
    if (colour < 0 || colour >= colours)
      throw std::invalid_argument("level ops: no colour " + std::to_string(colour));
    colour_sweep(L, vec(b).data(), vec(x).data(), colour, omega);
  }

  double* host_values(int v) override { return vec(v).data(); }

  void take_vector(int v, LevelWeights& values) override {
    values = std::move(vec(v));
    vectors_[static_cast<std::size_t>(v)] = Values();
    vector_level_[static_cast<std::size_t>(v)] = -1;  // the id is no longer valid
  }

  void restrict_residual(int fine_level, int r_fine, int b_coarse) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const double* rp = vec(r_fine).data();
    double* bp = vec(b_coarse).data();
    const std::int64_t nc = C.op.points();
    const int kp = stencil_points(C.op.dims);
    const int dims = C.op.dims;
    const float* P = C.op.prolongation.data();
    for_rows(C, [&](std::int64_t Y, std::int64_t Z) {
      // Where the finer rows at y and z offsets dy, dz (-1, 0, +1) start: entry 3 (dz + 1) +
      // dy + 1, so that offset k's row is k / 3 (one row in 1D, three in 2D).
      std::int64_t row[9];
      for (int dz = 0; dz < 3; ++dz)
        for (int dy = 0; dy < 3; ++dy) {
          const std::int64_t fy = dims > 1 ? C.gather[1][3 * Y + dy] : 0;
          const std::int64_t fz = dims > 2 ? C.gather[2][3 * Z + dz] : 0;
          row[3 * dz + dy] = (fz * F.op.n[1] + fy) * F.op.n[0];
        }
      // The coarse row's sums, one finer row (three offsets k) at a time in k order, each
      // node's sum kept in b between them: the sums of offsets 0, 1, ..., kp - 1 in that order,
      // as node by node, but reading three of P's arrays and one finer row at once rather than
      // 27 arrays (2 MB apart at 129^3) whose streams the caches cannot follow.
      const std::int64_t I0 = index(C, 0, Y, Z), nX = C.op.n[0];
      const std::uint8_t* fixed = C.op.fixed.data() + I0;
      double* out = bp + I0;
      std::fill_n(out, nX, 0.0);
      for (int r = 0; r < kp / 3; ++r) {
        const double* fine_row = rp + row[r];
        const float* w[3] = {P + 3 * r * nc + I0, P + (3 * r + 1) * nc + I0,
                             P + (3 * r + 2) * nc + I0};
        // The next coarse row's weights, which follow these in each of the 27 arrays: the
        // hardware prefetchers do not follow 27 streams at once (the restriction waited on
        // these loads).
        for (int d = 0; d < 3; ++d)
          for (std::int64_t X = nX; X < 2 * nX && I0 + X < nc; X += 16)
            __builtin_prefetch(w[d] + X);
        for (std::int64_t X = 0; X < nX; ++X) {
          if (fixed[X]) continue;
          const std::int64_t* fx = &C.gather[0][3 * X];
          double sum = out[X];
          for (int d = 0; d < 3; ++d)
            if (w[d][X] != 0.0f) sum += static_cast<double>(w[d][X]) * fine_row[fx[d]];
          out[X] = sum;
        }
      }
    });
  }

  // prolong_add's sums along a finer row (f, fixed) whose coarse nodes X are its nodes 2 X
  // (standard_x), from the coarse rows at start[p] with the offsets k_zy[p] of their y and z
  // terms, kPairs of them: a node 2 X takes the coarse node X (offset 0 along x), a node
  // 2 X + 1 the nodes X (offset +1) and X + 1 (offset -1), the terms in the same order as the
  // tables give them. Without a branch, two nodes at a time; a held node keeps its value.
  template <int kPairs>
  static void prolong_row(const float* P, std::int64_t nc, const std::int64_t* start,
                          const int* k_zy, const double* cp, const std::uint8_t* fixed, double* f,
                          std::int64_t nX) {
    const float *w0[kPairs], *w1[kPairs], *w2[kPairs];
    const double* c[kPairs];
    for (int p = 0; p < kPairs; ++p) {
      w0[p] = P + k_zy[p] * nc + start[p];
      w1[p] = P + (k_zy[p] + 1) * nc + start[p];
      w2[p] = P + (k_zy[p] + 2) * nc + start[p];
      c[p] = cp + start[p];
    }
    // f[i] + sum where node i is free, else f[i] as it is (a select the compiler vectorizes).
    const auto add = [](double* at, std::uint8_t held, double sum) {
      const double next = *at + sum;
      std::uint64_t a, b;
      std::memcpy(&a, &next, sizeof a);
      std::memcpy(&b, at, sizeof b);
      const std::uint64_t mask = 0 - static_cast<std::uint64_t>(held == 0);
      a = (a & mask) | (b & ~mask);
      std::memcpy(at, &a, sizeof a);
    };
#pragma omp simd
    for (std::int64_t X = 0; X < nX; ++X) {
      double sum = 0.0;
      for (int p = 0; p < kPairs; ++p) sum += static_cast<double>(w1[p][X]) * c[p][X];
      add(f + 2 * X, fixed[2 * X], sum);
    }
#pragma omp simd
    for (std::int64_t X = 0; X < nX - 1; ++X) {
      double sum = 0.0;
      for (int p = 0; p < kPairs; ++p) {
        sum += static_cast<double>(w2[p][X]) * c[p][X];
        sum += static_cast<double>(w0[p][X + 1]) * c[p][X + 1];
      }
      add(f + 2 * X + 1, fixed[2 * X + 1], sum);
    }
  }

  void prolong_add(int fine_level, int x_coarse, int x_fine) override {
    const Level& F = at(fine_level);
    const Level& C = at(fine_level + 1);
    const double* cp = vec(x_coarse).data();
    double* fp = vec(x_fine).data();
    const std::int64_t nc = C.op.points();
    const int dims = C.op.dims;
    for_rows(F, [&](std::int64_t y, std::int64_t z) {
      // The row's coarse (z, y) pairs, in the order of the terms: where each coarse row
      // starts, and the part of the stencil offset k its z and y offsets make.
      std::int64_t start[4];
      int k_zy[4], pairs = 0;
      for (const auto& a : C.transfer[2].from[z]) {
        if (a.coarse < 0) continue;
        for (const auto& b : C.transfer[1].from[y]) {
          if (b.coarse < 0) continue;
          start[pairs] = (a.coarse * C.op.n[1] + b.coarse) * C.op.n[0];
          k_zy[pairs++] = (dims > 2 ? 9 * (a.offset + 1) : 0) + (dims > 1 ? 3 * (b.offset + 1) : 0);
        }
      }
      if (C.standard_x && C.op.n[0] >= 2 && (pairs == 1 || pairs == 2 || pairs == 4)) {
        const std::int64_t i0 = index(F, 0, y, z);
        const float* P = C.op.prolongation.data();
        const std::uint8_t* fixed = F.op.fixed.data() + i0;
        if (pairs == 1) prolong_row<1>(P, nc, start, k_zy, cp, fixed, fp + i0, C.op.n[0]);
        if (pairs == 2) prolong_row<2>(P, nc, start, k_zy, cp, fixed, fp + i0, C.op.n[0]);
        if (pairs == 4) prolong_row<4>(P, nc, start, k_zy, cp, fixed, fp + i0, C.op.n[0]);
        return;
      }
      for (std::int64_t x = 0; x < F.op.n[0]; ++x) {
        const std::int64_t i = index(F, x, y, z);
        if (F.op.fixed[i]) continue;
        const auto& tx = C.transfer[0].from[x];
        double sum = 0.0;
        for (int p = 0; p < pairs; ++p)
          for (const auto& c : tx) {
            if (c.coarse < 0) continue;
            const int k = k_zy[p] + c.offset + 1;
            const std::int64_t J = start[p] + c.coarse;
            sum += static_cast<double>(C.op.prolongation[k * nc + J]) * cp[J];
          }
        fp[i] += sum;
      }
    });
  }

  void zero_free(int level, int v) override {
    const Level& L = at(level);
    Values& vv = vec(v);
    if (vv.size() != L.op.fixed.size())
      throw std::invalid_argument("level ops: vector not of level");
    for (std::size_t i = 0; i < vv.size(); ++i)
      if (!L.op.fixed[i]) vv[i] = 0.0;
  }

  bool set_bottom_factor(int level, BottomFactor factor) override {
    if (factor.points != at(level).op.points())
      throw std::invalid_argument("level ops: the factor is not of this level");
    bottom_level_ = level;
    bottom_work_.resize(static_cast<std::size_t>(factor.rows()));
    bottom_ = std::move(factor);
    return true;
  }

  void bottom_solve(int level, int b, int x, int r, bool from_zero) override {
    if (!bottom_ || level != bottom_level_)
      return LevelOps::bottom_solve(level, b, x, r, from_zero);
    if (from_zero)
      zero(x);
    else
      residual(level, b, x, r);
    bottom_->solve_add(vec(from_zero ? b : r).data(), vec(x).data(), bottom_work_.data());
  }

  void zero(int v) override {
    Values& vv = vec(v);
    const std::int64_t n = static_cast<std::int64_t>(vv.size());
    double* p = vv.data();
    for_each_index(0, n, worth_threads(n), [p](std::int64_t i) { p[i] = 0.0; });
  }

  double dot(int x, int y) override {
    const Level& L = at(vector_level_.at(static_cast<std::size_t>(x)));
    const double* xp = vec(x).data();
    const double* yp = vec(y).data();
    if (vec(x).size() != vec(y).size())
      throw std::invalid_argument("level ops: dot of unequal sizes");
    const std::int64_t nx = L.op.n[0];
    return sum_by_rows(L, [&](std::int64_t row) { return row_dot(xp, yp, row * nx, nx); });
  }

  // One pass over the planes (rows in 2D), each thread a block of them: p on a plane is
  // updated before the product of the plane below reads it, the blocks' end planes first
  // (before a barrier) since the neighbouring blocks' products read them too.
  double update_apply_dot(int level, int z, double beta, int p, int q) override {
    const Level& L = at(level);
    const std::size_t n = vec(p).size();
    if (vec(z).size() != n || vec(q).size() != n || L.op.fixed.size() != n)
      throw std::invalid_argument("level ops: update_apply_dot of unequal sizes");
    const double* zp = vec(z).data();
    double* pp = vec(p).data();
    double* qp = vec(q).data();
    const bool rows = L.op.dims < 3;
    const std::int64_t nx = L.op.n[0], ny = L.op.n[1];
    const std::int64_t planes = rows ? ny : L.op.n[2], plane_size = rows ? nx : nx * ny;
    std::vector<double> partial(static_cast<std::size_t>(L.op.n[1] * L.op.n[2]), 0.0);
    const auto update = [&](std::int64_t k) {
      axpby_span(1.0, zp, beta, pp, k * plane_size, plane_size);
    };
    const auto product = [&](std::int64_t k) {
      for (std::int64_t row = rows ? k : k * ny; row < (rows ? k + 1 : (k + 1) * ny); ++row) {
        apply_row(L, pp, qp, row % ny, row / ny);
        partial[row] = row_dot(pp, qp, row * nx, nx);
      }
    };
    in_team(L.parallel, [&] {
      std::int64_t k0, k1;
      thread_planes(planes, k0, k1);
      if (k1 > k0) update(k0);
      if (k1 - 1 > k0) update(k1 - 1);
#pragma omp barrier
      for (std::int64_t k = k0; k < k1; ++k) {
        if (k + 1 < k1 - 1) update(k + 1);
        product(k);
      }
    });
    double sum = 0.0;
    for (double part : partial) sum += part;
    return sum;
  }

  // One pass: each row's updates of x and r, then its squares of r.
  double cg_update(double alpha, int p, int q, int x, int r) override {
    const Level& L = at(vector_level_.at(static_cast<std::size_t>(r)));
    const std::size_t n = vec(r).size();
    if (vec(p).size() != n || vec(q).size() != n || vec(x).size() != n)
      throw std::invalid_argument("level ops: cg_update of unequal sizes");
    const double *pp = vec(p).data(), *qp = vec(q).data();
    double *xp = vec(x).data(), *rp = vec(r).data();
    const std::int64_t nx = L.op.n[0];
    return sum_by_rows(L, [&](std::int64_t row) {
      for (std::int64_t i = row * nx; i < (row + 1) * nx; ++i) {
        xp[i] = axpby_value(alpha, pp[i], 1.0, xp[i]);
        rp[i] = axpby_value(-alpha, qp[i], 1.0, rp[i]);
      }
      return row_dot(rp, rp, row * nx, nx);
    });
  }

  void axpby(double a, int x, double b, int y) override {
    const Values& xv = vec(x);
    Values& yv = vec(y);
    if (xv.size() != yv.size()) throw std::invalid_argument("level ops: axpby of unequal sizes");
    const std::int64_t n = static_cast<std::int64_t>(yv.size());
    const double* xp = xv.data();
    double* yp = yv.data();
    constexpr std::int64_t kChunk = 4096;
    if (!worth_threads(n)) {
      axpby_span(a, xp, b, yp, 0, n);
      return;
    }
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c)
      axpby_span(a, xp, b, yp, c * kChunk, std::min(kChunk, n - c * kChunk));
  }

 private:
  struct Level {
    LevelOperator op;
    // Compact form, the smoother's operator: the conductances rounded to fp32 (its diagonal
    // the node term plus these, diagonal_at<true>).
    std::array<Floats, kMaxDims> conductance32;
    bool finite32 = false;  // every rounded conductance finite (smooth_from_zero)
    // Per axis and coordinate c, the coordinates at offsets -1, 0, +1 ([3 c + o + 1]; -1: none).
    std::array<std::vector<std::int64_t>, kMaxDims> neighbour;
    // Levels > 0: the coarse nodes each finer node takes values from, and per coarse
    // coordinate the finer coordinates at offsets -1, 0, +1 (as `neighbour`).
    std::array<AxisTransfer, kMaxDims> transfer;
    std::array<std::vector<std::int64_t>, kMaxDims> gather;
    // Levels > 0: coarse node X at finer node 2 X along x, which is not periodic (a finer row
    // of 2 nX - 1 nodes): prolongation then takes a row without the tables (prolong_row).
    bool standard_x = false;
    // Stencil form (the operator's stencil, freed once rounded): the rounded entries, node by
    // node (round_stencil), and the centres.
    bool stencil_form = false;
    Floats stencil32;
    Values centre;
    // 3D stencil levels whose rounded entries between free nodes are symmetric to the last bit
    // (the hierarchy's Galerkin levels are, hierarchy.cpp): the upper half of each row only
    // (round_stencil), stencil32 empty.
    bool half = false;
    HalfEntries upper;
    bool parallel = false;
    bool colour_conflict = false;
  };

  const Level& at(int level) const {
    if (level < 0 || level >= static_cast<int>(levels_.size()))
      throw std::out_of_range("level ops: no level " + std::to_string(level));
    return levels_[static_cast<std::size_t>(level)];
  }
  Values& vec(int v) {
    if (v < 0 || v >= static_cast<int>(vectors_.size()) || vector_level_[v] < 0)
      throw std::out_of_range("level ops: no vector " + std::to_string(v));
    return vectors_[static_cast<std::size_t>(v)];
  }
  // axpby's element, y = a x + b y.
  static double axpby_value(double a, double x, double b, double y) { return a * x + b * y; }
  // axpby over the `count` elements from i0 (b == 0 assigns a x, whatever y held).
  static void axpby_span(double a, const double* x, double b, double* y, std::int64_t i0,
                         std::int64_t count) {
    if (b == 0.0) {
      for (std::int64_t i = i0; i < i0 + count; ++i) y[i] = a * x[i];
    } else {
      for (std::int64_t i = i0; i < i0 + count; ++i) y[i] = axpby_value(a, x[i], b, y[i]);
    }
  }

  // sum_i x_i y_i over the `count` nodes from i0, in memory order: a row's part of dot.
  static double row_dot(const double* x, const double* y, std::int64_t i0, std::int64_t count) {
    double s = 0.0;
    for (std::int64_t i = i0; i < i0 + count; ++i) s += x[i] * y[i];
    return s;
  }

  // The sum of row_sum(row) over a level's rows (row = z ny + y), one partial a row on the
  // threads, the partials added in row order: dot's sums, whatever pass forms them.
  template <typename F>
  static double sum_by_rows(const Level& L, F&& row_sum) {
    const std::int64_t rows = L.op.n[1] * L.op.n[2];
    double sum = 0.0;
    if (!L.parallel) {
      // The same sums in the same order, without a team or a buffer: a small level's CG (the
      // bottom solve, some hundred iterations a V-cycle) spent most of its time in those.
      for (std::int64_t row = 0; row < rows; ++row) sum += row_sum(row);
      return sum;
    }
    std::vector<double> partial(static_cast<std::size_t>(rows), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) partial[row] = row_sum(row);
    for (double p : partial) sum += p;
    return sum;
  }

  // r = b - A x on the free nodes, 0 on the fixed ones; kSmoother: the smoother's operator.
  template <bool kSmoother>
  void residual_with(int level, int b, int x, int r) {
    const Level& L = at(level);
    const double* bp = vec(b).data();
    const double* xp = vec(x).data();
    double* rp = vec(r).data();
    for_rows(L,
             [&](std::int64_t y, std::int64_t z) { residual_row<kSmoother>(L, bp, xp, rp, y, z); });
  }

  // apply's row (y, z).
  static void apply_row(const Level& L, const double* xp, double* yp, std::int64_t y,
                        std::int64_t z) {
    const std::int64_t nx = L.op.n[0];
    const auto node = [&](std::int64_t xi) {
      const std::int64_t i = index(L, xi, y, z);
      yp[i] = L.op.fixed[i] ? 0.0 : row_product(L, xp, xi, y, z, i);
    };
    if (compact_inside(L, y, z) && nx > 2) {
      node(0);
      compact_run<false, false>(L, nullptr, xp, yp, index(L, 1, y, z), nx - 2);
      node(nx - 1);
      return;
    }
    for (std::int64_t xi = 0; xi < nx; ++xi) node(xi);
  }

  // residual_with's row (y, z).
  template <bool kSmoother>
  static void residual_row(const Level& L, const double* bp, const double* xp, double* rp,
                           std::int64_t y, std::int64_t z) {
    const std::int64_t nx = L.op.n[0];
    // Away from the faces (a full 27-point row, or a compact row off the y and z faces): the
    // same products in the same order without the neighbour tables.
    const StencilRow r = L.stencil_form ? stencil_row(L, y, z) : StencilRow{};
    const bool inside = L.stencil_form ? r.rows == 9 : compact_inside(L, y, z);
    const auto node = [&](std::int64_t xi) {
      const std::int64_t i = index(L, xi, y, z);
      if (L.op.fixed[i])
        rp[i] = 0.0;
      else if (inside && xi > 0 && xi + 1 < nx && L.stencil_form)
        rp[i] = bp[i] - stencil_product_inside(L, r, xp, xi, i);
      else
        rp[i] = bp[i] - row_product<kSmoother>(L, xp, xi, y, z, i);
    };
    if (inside && !L.stencil_form && nx > 2) {
      node(0);
      compact_run<kSmoother, true>(L, bp, xp, rp, index(L, 1, y, z), nx - 2);
      node(nx - 1);
      return;
    }
    std::int64_t xi = 0;
    if (inside && L.stencil_form) {
      // Four nodes at a time, their sums interleaved (as gauss_seidel_many).
      node(xi++);
      for (; xi + 4 < nx; xi += 4) {
        const std::int64_t i = index(L, xi, y, z);
        double s[4];
        if (L.half)
          stencil_product_many<4, true>(L, r, xp, xi, i, s);
        else
          stencil_product_many<4, false>(L, r, xp, xi, i, s);
        for (int e = 0; e < 4; ++e) rp[i + e] = L.op.fixed[i + e] ? 0.0 : bp[i + e] - s[e];
      }
    }
    for (; xi < nx; ++xi) node(xi);
  }

  // magnitude at the `count` nodes from i0 of a compact 2D or 3D level's row away from its
  // faces, as compact_run: the same sums without a branch, two nodes at a time.
  static void compact_magnitude_run(const Level& L, const double* bp, const double* v, double* out,
                                    std::int64_t i0, std::int64_t count) {
    const std::uint8_t* fixed = L.op.fixed.data();
    with_inside_diagonal<false>(L, [&](const auto& diagonal) {
      const auto [gx, gy, gz, sy, sz] = diagonal.axes;
#pragma omp simd
      for (std::int64_t i = i0; i < i0 + count; ++i) {
        double s = std::abs(bp[i]);
        s += std::abs(diagonal(i) * v[i]);
        s += std::abs(gx[i - 1] * v[i - 1]);
        s += std::abs(gx[i] * v[i + 1]);
        s += std::abs(gy[i - sy] * v[i - sy]);
        s += std::abs(gy[i] * v[i + sy]);
        if constexpr (std::decay_t<decltype(diagonal)>::three) {
          s += std::abs(gz[i - sz] * v[i - sz]);
          s += std::abs(gz[i] * v[i + sz]);
        }
        out[i] = select(fixed[i] == 0, s, 0.0);
      }
    });
  }

  // keep ? a : b, bit for bit, in integer operations: GCC 12 does not vectorize a loop with a
  // conditional expression on doubles ("control flow in loop"), but does this.
  static double select(bool keep, double a, double b) {
    std::uint64_t x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    const std::uint64_t mask = 0 - static_cast<std::uint64_t>(keep);
    x = (x & mask) | (y & ~mask);
    double r;
    std::memcpy(&r, &x, sizeof r);
    return r;
  }

  // The diagonal of a compact 2D or 3D level's node i away from its faces (compact_inside,
  // 0 < x < nx - 1): the node term plus the node's conductances in visit_neighbours's order,
  // exact or (kSmoother) rounded to fp32, as diagonal_at sums them but without its branches,
  // so that a loop over a row's nodes takes two at a time (the same bits). kTerm: the level
  // keeps a node term (make_level drops one of +0 everywhere, and +0 plus the first
  // conductance is that conductance, as the sum from +0 here).
  template <bool kSmoother, bool kThree, bool kTerm>
  struct InsideDiagonal {
    using G = std::conditional_t<kSmoother, float, double>;
    static constexpr bool three = kThree;
    // The conductances along x, y and z (z's null in 2D) and the strides of y and z, which a
    // loop's neighbour sums beside the diagonal read too.
    struct Axes {
      const G *gx, *gy, *gz;
      std::int64_t sy, sz;
    };
    const double* term;
    Axes axes;
    double operator()(std::int64_t i) const {
      const auto& [gx, gy, gz, sy, sz] = axes;
      double d = 0.0;
      if constexpr (kTerm) d = term[i];
      d += static_cast<double>(gx[i - 1]);
      d += static_cast<double>(gx[i]);
      d += static_cast<double>(gy[i - sy]);
      d += static_cast<double>(gy[i]);
      if constexpr (kThree) {
        d += static_cast<double>(gz[i - sz]);
        d += static_cast<double>(gz[i]);
      }
      return d;
    }
  };

  // f(InsideDiagonal) of level L (compact, 2D or 3D).
  template <bool kSmoother, typename F>
  static void with_inside_diagonal(const Level& L, F&& f) {
    const auto* gx = conductances<kSmoother>(L, 0);
    const auto* gy = conductances<kSmoother>(L, 1);
    const auto* gz = L.op.dims == 3 ? conductances<kSmoother>(L, 2) : nullptr;
    const std::int64_t sy = L.op.n[0], sz = sy * L.op.n[1];
    const double* term = L.op.node_term.empty() ? nullptr : L.op.node_term.data();
    const auto call = [&](auto three, auto with_term) {
      f(InsideDiagonal<kSmoother, decltype(three)::value, decltype(with_term)::value>{
          term, {gx, gy, gz, sy, sz}});
    };
    if (L.op.dims == 3)
      term ? call(std::true_type{}, std::true_type{}) : call(std::true_type{}, std::false_type{});
    else
      term ? call(std::false_type{}, std::true_type{}) : call(std::false_type{}, std::false_type{});
  }

  // The diagonal of a compact level's node (x, y, z) = i: its node term plus its conductances
  // in visit_neighbours's order, exact or (kSmoother) rounded to fp32.
  template <bool kSmoother>
  static double diagonal_at(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z,
                            std::int64_t i) {
    double d = L.op.node_term.empty() ? 0.0 : L.op.node_term[i];
    visit_neighbours<kSmoother>(L, x, y, z, i, [&](std::int64_t, double g) { d += g; });
    return d;
  }

  // b - A x (kResidual) or A x at the `count` nodes from i0 of a compact 2D or 3D level's row
  // away from its faces (compact_inside, 0 < x < nx - 1), 0 at the held ones; kSmoother: with
  // the smoother's operator. The sums of row_product node by node (away from the faces, the
  // neighbours the next nodes along each axis, in visit_neighbours's order), but with no
  // branch in the loop, so that the compiler takes two nodes at a time in the vector
  // registers, each lane through the same operations in the same order: the same bits. Node by
  // node with the branches, these took as long as a Gauss-Seidel sweep (4 ns a node at 129^3,
  // one thread): bound by their instructions, not by their 44 bytes a node.
  template <bool kSmoother, bool kResidual>
  static void compact_run(const Level& L, const double* bp, const double* v, double* out,
                          std::int64_t i0, std::int64_t count) {
    const std::uint8_t* fixed = L.op.fixed.data();
    with_inside_diagonal<kSmoother>(L, [&](const auto& diagonal) {
      const auto [gx, gy, gz, sy, sz] = diagonal.axes;
#pragma omp simd
      for (std::int64_t i = i0; i < i0 + count; ++i) {
        double s = 0.0;
        s += static_cast<double>(gx[i - 1]) * v[i - 1];
        s += static_cast<double>(gx[i]) * v[i + 1];
        s += static_cast<double>(gy[i - sy]) * v[i - sy];
        s += static_cast<double>(gy[i]) * v[i + sy];
        if constexpr (std::decay_t<decltype(diagonal)>::three) {
          s += static_cast<double>(gz[i - sz]) * v[i - sz];
          s += static_cast<double>(gz[i]) * v[i + sz];
        }
        const double ax = diagonal(i) * v[i] - s;
        const double value = kResidual ? bp[i] - ax : ax;
        out[i] = select(fixed[i] == 0, value, 0.0);
      }
    });
  }

  // Vector v, which must be of level 0.
  Values& level0(int v) {
    Values& x = vec(v);
    if (vector_level_[v] != 0) throw std::invalid_argument("level ops: not a level-0 vector");
    return x;
  }

  static std::int64_t index(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z) {
    return (z * L.op.n[1] + y) * L.op.n[0] + x;
  }

  // to = from over a level's nodes, row by row on the threads that sweep them.
  static void copy_rows(const Level& L, const double* from, double* to) {
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      const std::int64_t row = index(L, 0, y, z);
      std::copy_n(from + row, L.op.n[0], to + row);
    });
  }

  template <typename F>
  static void for_rows(const Level& L, F&& f) {
    const std::int64_t ny = L.op.n[1], nz = L.op.n[2];
    if (!L.parallel) {  // no team for a small level (sum_by_rows)
      for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y) f(y, z);
      return;
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y) f(y, z);
  }

  // Calls f(j, G_ij) for each neighbour j of node i = (x, y, z), in the order x-, x+, y-, y+,
  // z-, z+.
  // kSmoother: the conductances rounded to fp32 (the smoother's operator).
  template <bool kSmoother = false, typename F>
  static void visit_neighbours(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z,
                               std::int64_t i, F&& f) {
    const std::int64_t c[3] = {x, y, z};
    std::int64_t stride = 1;
    for (int a = 0; a < L.op.dims; ++a) {
      const std::int64_t n = L.op.n[a];
      const auto* G = conductances<kSmoother>(L, a);
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

  template <bool kSmoother>
  static auto conductances(const Level& L, int a) {
    if constexpr (kSmoother)
      return L.conductance32[a].data();
    else
      return L.op.conductance[a].data();
  }

  template <bool kSmoother>
  static double neighbour_sum(const Level& L, const double* v, std::int64_t x, std::int64_t y,
                              std::int64_t z, std::int64_t i) {
    double s = 0.0;
    visit_neighbours<kSmoother>(L, x, y, z, i, [&](std::int64_t j, double g) { s += g * v[j]; });
    return s;
  }

  // Whether row (y, z) of a compact 2D or 3D level lies away from its y and z faces.
  static bool compact_inside(const Level& L, std::int64_t y, std::int64_t z) {
    if (L.stencil_form || L.op.dims < 2 || y == 0 || y + 1 == L.op.n[1]) return false;
    return L.op.dims == 2 || (z > 0 && z + 1 < L.op.n[2]);
  }

  // A stencil level as the V-cycle uses it (the only operator kept there): every entry off the
  // centre rounded to fp32 and the centre moved by what their rounding took from the row, so the
  // row sums stay (a rounded Galerkin operator stays positive definite wherever the exact one's
  // couplings are), summed in the offsets' order. Kept as the CUDA level operations keep them,
  // the rounded entries in fp32 (stencil32; the centre's slot unused) and the centres in fp64
  // (centre), but node by node (stencil32[i * 3^dims + k]), not offset by offset: a row's
  // sweep then reads its entries from one stream, not from 27 arrays whose streams the caches
  // cannot follow (2 MB apart at 129^3, 1.6x the finest level's sweep time). The fp64 stencil
  // is freed.
  //
  // A 3D level whose rounded entries A(i, j) and A(j, i) between free nodes are the same bits
  // keeps half of them (`half`): node j holds its entries toward its 13 upper neighbours
  // (offsets k > 13, upper[j * 13 + k - 14]), and a node reads an entry toward a lower
  // neighbour j (offset k < 13) from j's entry back (offset 26 - k, upper[j * 13 + 12 - k]):
  // the same bits, half the bytes (60 a node with the centre, not 116; level 1 of a 129^3 grid
  // then 16 MB, not 32, within the caches between its sweeps). A held node's row is never read,
  // so its slots hold the entries toward it of its free upper neighbours instead (which need
  // not mirror anything). Any other level keeps every entry. The pairs are compared here
  // unless the level was built symmetric (LevelOperator::symmetric).
  static void round_stencil(Level& L) {
    const std::int64_t np = L.op.points();
    const int kp = stencil_points(L.op.dims), centre = stencil_centre(L.op.dims);
    const double* S = L.op.stencil.data();
    L.centre = Values(static_cast<std::size_t>(np));
    if (L.op.dims == 3) {
      // The half entries written while the level is checked, in the same pass (the 27 arrays
      // read once, not twice); a level found not symmetric (symmetric_row) drops them and
      // keeps every entry below.
      L.upper = HalfEntries(static_cast<std::size_t>(kUpper * np));
      // Plane by plane, offset by offset within a plane (the 27 arrays read node by node, or
      // row by row, defeat the prefetchers; level by level, the centres are read and written
      // once an offset): each node's remainders summed in the centre in offset order, the same
      // additions as below, then the upper entries row by row, offset by offset within a row.
      const std::int64_t nx = L.op.n[0], ny = L.op.n[1], nz = L.op.n[2], plane = nx * ny;
      double* centre_values = L.centre.data();
      // A held node's slots hold its free upper neighbours' entries toward it, in the planes z
      // and z + 1: each plane's are written once this thread has read the plane after it (its
      // block's last plane after the loop), so that those entries come from the caches.
      const auto held_slots = [&](std::int64_t z) {
        for (std::int64_t y = 0; y < ny; ++y) {
          const std::int64_t row = index(L, 0, y, z);
          HalfEntry* u = L.upper.data() + row * kUpper;
          for (std::int64_t x = 0; x < nx; ++x) {
            if (!L.op.fixed[row + x]) continue;
            for (int k = centre + 1; k < kp; ++k) {
              const std::int64_t j = neighbour(L, x, y, z, k);
              const double a = j >= 0 && !L.op.fixed[j] ? S[(kp - 1 - k) * np + j] : 0.0;
              u[x * kUpper + k - centre - 1] = static_cast<float>(a);
            }
          }
        }
      };
      bool same = true;
#pragma omp parallel reduction(&& : same) if (L.parallel)
      {
        std::int64_t z0 = 0, z1 = nz;
        thread_planes(nz, z0, z1);
        for (std::int64_t z = z0; z < z1; ++z) {
          double* c = centre_values + z * plane;
          std::fill_n(c, plane, 0.0);
          for (int k = 0; k < kp; ++k) {
            if (k == centre) continue;
            const double* entries = S + k * np + z * plane;
            // The next array's part of the plane (the centres' after the last), one pass ahead:
            // 26 runs of 34 KB a plane at level 1 are short streams for the hardware prefetchers.
            const int next_k = k + 1 == centre ? k + 2 : k + 1;
            const double* next = S + (next_k < kp ? next_k : centre) * np + z * plane;
            for (std::int64_t m0 = 0; m0 < plane; m0 += 8) {
              __builtin_prefetch(next + m0);
              const std::int64_t m1 = std::min(m0 + 8, plane);
              for (std::int64_t m = m0; m < m1; ++m)
                c[m] += entries[m] - static_cast<double>(static_cast<float>(entries[m]));
            }
          }
          const double* centres = S + centre * np + z * plane;
          for (std::int64_t m = 0; m < plane; ++m) c[m] = centres[m] + c[m];
          for (std::int64_t y = 0; y < ny; ++y) {
            // A level built symmetric (LevelOperator::symmetric) is not compared again.
            assert(!L.op.symmetric || symmetric_row(L, y, z));
            same = same && (L.op.symmetric || symmetric_row(L, y, z));
            // Node by node, each node's 13 entries in a row (the plane's entries were just read);
            // the held nodes' slots are written over them later.
            const std::int64_t row = index(L, 0, y, z);
            HalfEntry* u = L.upper.data() + row * kUpper;
            for (std::int64_t x = 0; x < nx; ++x)
              for (int k = centre + 1; k < kp; ++k)
                u[x * kUpper + k - centre - 1] = static_cast<float>(S[k * np + row + x]);
          }
          if (z > z0) held_slots(z - 1);
        }
        if (z1 > z0) held_slots(z1 - 1);
      }
      L.half = same;
      if (L.half) {
        kernels::LevelWeights().swap(L.op.stencil);
        return;
      }
      HalfEntries().swap(L.upper);
    }
    L.stencil32 = Floats(static_cast<std::size_t>(kp * np));
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t x = 0; x < L.op.n[0]; ++x) {
        const std::int64_t i = index(L, x, y, z);
        double moved = 0.0;
        for (int k = 0; k < kp; ++k) {
          if (k == centre) {
            L.stencil32[i * kp + k] = 0.0f;
            continue;
          }
          const float rounded = static_cast<float>(S[k * np + i]);
          moved += S[k * np + i] - static_cast<double>(rounded);
          L.stencil32[i * kp + k] = rounded;
        }
        L.centre[i] = S[centre * np + i] + moved;
      }
    });
    kernels::LevelWeights().swap(L.op.stencil);
  }

  // Whether every free node of row (y, z) of a 3D level has each rounded entry toward a free
  // neighbour at the offsets k < 13 the same bits as the neighbour's entry back (L.op.stencil):
  // over every row, whether the level is symmetric. Offset by offset (node by node, 26 streams
  // 2 MB apart took 23 ms at level 1 of a 129^3 grid; round_stencil calls it on a plane whose
  // arrays it has just read).
  static bool symmetric_row(const Level& L, std::int64_t y, std::int64_t z) {
    const std::int64_t np = L.op.points(), nx = L.op.n[0], ny = L.op.n[1], nz = L.op.n[2];
    const double* S = L.op.stencil.data();
    const std::uint8_t* fixed = L.op.fixed.data();
    // Away from the faces (0 < x < nx - 1 of a row off the y and z faces) the neighbour lies at
    // one offset, and the row is compared without branches.
    const bool inside = y > 0 && y + 1 < ny && z > 0 && z + 1 < nz && nx > 2;
    for (int k = 0; k < 13; ++k) {
      const double *a = S + k * np, *b = S + (26 - k) * np;
      if (inside) {
        const std::int64_t i0 = index(L, 1, y, z), d = neighbour(L, 1, y, z, k) - i0;
        if (!same_rounded(a + i0, b + i0 + d, fixed + i0, fixed + i0 + d, nx - 2)) return false;
      }
      for (std::int64_t x = 0; x < nx; ++x) {
        if (inside && x == 1) x = nx - 1;
        const std::int64_t i = index(L, x, y, z);
        if (fixed[i]) continue;
        const std::int64_t j = neighbour(L, x, y, z, k);
        if (j < 0 || fixed[j]) continue;
        const float ai = static_cast<float>(a[i]), bj = static_cast<float>(b[j]);
        if (std::memcmp(&ai, &bj, sizeof ai) != 0) return false;
      }
    }
    return true;
  }

  // Whether a[e] and b[e] rounded to fp32 are the same bits for every e < count at which
  // neither node is held (fa[e], fb[e]).
  static bool same_rounded(const double* a, const double* b, const std::uint8_t* fa,
                           const std::uint8_t* fb, std::int64_t count) {
    unsigned differ = 0;
#pragma omp simd reduction(| : differ)
    for (std::int64_t e = 0; e < count; ++e) {
      const float ae = static_cast<float>(a[e]), be = static_cast<float>(b[e]);
      std::uint32_t ua, ub;
      std::memcpy(&ua, &ae, sizeof ua);
      std::memcpy(&ub, &be, sizeof ub);
      differ |= static_cast<unsigned>(ua != ub) & static_cast<unsigned>(fa[e] == 0) &
                static_cast<unsigned>(fb[e] == 0);
    }
    return differ == 0;
  }

  // The neighbour of node i = (x, y, z) at stencil offset k of a 3D level, or -1.
  static std::int64_t neighbour(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z,
                                int k) {
    const std::int64_t nx = L.neighbour[0][3 * x + k % 3], ny = L.neighbour[1][3 * y + k / 3 % 3],
                       nz = L.neighbour[2][3 * z + k / 9];
    return nx < 0 || ny < 0 || nz < 0 ? -1 : index(L, nx, ny, nz);
  }

  // Entry k (not the centre) of node i's row, toward its neighbour j.
  static double entry(const Level& L, std::int64_t i, int k, std::int64_t j) {
    if (!L.half) return L.stencil32[i * stencil_points(L.op.dims) + k];
    return k > 13 ? L.upper[i * kUpper + k - 14] : L.upper[j * kUpper + 12 - k];
  }

  // Calls f(k, j, A(i, j)) for each stencil offset k whose neighbour j exists, k increasing
  // (z, then y, then x offsets: the numbering's order).
  template <typename F>
  static void visit_stencil(const Level& L, std::int64_t x, std::int64_t y, std::int64_t z,
                            std::int64_t i, F&& f) {
    const std::int64_t* xn = &L.neighbour[0][3 * x];
    const int centre = stencil_centre(L.op.dims);
    const StencilRow r = stencil_row(L, y, z);
    for (int row = 0; row < r.rows; ++row) {
      const int k = r.first_k[row];
      for (int dx = 0; dx < 3; ++dx)
        if (xn[dx] >= 0) {
          const std::int64_t j = r.base[row] + xn[dx];
          f(k + dx, j, k + dx == centre ? L.centre[i] : entry(L, i, k + dx, j));
        }
    }
  }

  // (A v)_i; kSmoother: with the smoother's operator (compact levels: the rounded
  // conductances; stencil levels below the finest hold only that one).
  template <bool kSmoother = false>
  static double row_product(const Level& L, const double* v, std::int64_t x, std::int64_t y,
                            std::int64_t z, std::int64_t i) {
    if (!L.stencil_form)
      return diagonal_at<kSmoother>(L, x, y, z, i) * v[i] -
             neighbour_sum<kSmoother>(L, v, x, y, z, i);
    double s = 0.0;
    visit_stencil(L, x, y, z, i, [&](int, std::int64_t j, double a) { s += a * v[j]; });
    return s;
  }

  // The Gauss-Seidel value of node i from the values v of its neighbours, with the smoother's
  // operator.
  static double gauss_seidel(const Level& L, const double* bp, const double* v, std::int64_t x,
                             std::int64_t y, std::int64_t z, std::int64_t i) {
    if (!L.stencil_form)
      return (bp[i] + neighbour_sum<true>(L, v, x, y, z, i)) / diagonal_at<true>(L, x, y, z, i);
    const int centre = stencil_centre(L.op.dims);
    double s = 0.0;
    visit_stencil(L, x, y, z, i, [&](int k, std::int64_t j, double a) {
      if (k != centre) s += a * v[j];
    });
    return (bp[i] - s) / L.centre[i];
  }

  // A stencil level's row (y, z): where each of its neighbour rows starts and the stencil offset
  // of that row's first entry, in visit_stencil's order (missing rows left out).
  struct StencilRow {
    std::int64_t base[9];
    int first_k[9];
    int rows = 0;
  };
  static StencilRow stencil_row(const Level& L, std::int64_t y, std::int64_t z) {
    StencilRow r;
    const int dims = L.op.dims;
    const std::int64_t nx = L.op.n[0], ny = L.op.n[1];
    const std::int64_t* yn = &L.neighbour[1][3 * y];
    const std::int64_t* zn = &L.neighbour[2][3 * z];
    int k = 0;
    for (int dz = 0; dz < (dims > 2 ? 3 : 1); ++dz) {
      const std::int64_t zj = dims > 2 ? zn[dz] : 0;
      for (int dy = 0; dy < (dims > 1 ? 3 : 1); ++dy, k += 3) {
        const std::int64_t yj = dims > 1 ? yn[dy] : 0;
        if (zj < 0 || yj < 0) continue;
        r.base[r.rows] = (zj * ny + yj) * nx;
        r.first_k[r.rows++] = k;
      }
    }
    return r;
  }

  // gauss_seidel on a stencil level at a node x of row r with 0 < x < nx - 1 (its x
  // neighbours the row's next nodes, periodic or not): the same products summed in the same
  // order, so the same bits, without the neighbour tables and their branches.
  static double gauss_seidel_inside(const Level& L, const StencilRow& r, const double* bp,
                                    const double* v, std::int64_t x, std::int64_t i) {
    const int centre = stencil_centre(L.op.dims);
    double s = 0.0;
    if (r.rows == 9) {  // a full 3D row: the same order, unrolled
      double gs[1];
      gauss_seidel_many<1>(L, r, bp, v, x, i, gs);
      return gs[0];
    }
    for (int row = 0; row < r.rows; ++row) {
      const std::int64_t j = r.base[row] + x - 1;
      const int k = r.first_k[row];
      for (int dx = 0; dx < 3; ++dx)
        if (k + dx != centre) s += entry(L, i, k + dx, j + dx) * v[j + dx];
    }
    return (bp[i] - s) / L.centre[i];
  }

  // row_product at a node x of a stencil level's full row r (all nine neighbour rows, 3D),
  // 0 < x < nx - 1: the 27 products in visit_stencil's order, unrolled.
  static double stencil_product_inside(const Level& L, const StencilRow& r, const double* v,
                                       std::int64_t x, std::int64_t i) {
    return L.half ? stencil_product_inside<true>(L, r, v, x, i)
                  : stencil_product_inside<false>(L, r, v, x, i);
  }
  // stencil_product_inside at the N nodes x, x + 1, ... (0 < x, x + N < nx), their sums
  // interleaved, each in its own order as there.
  template <int N, bool kHalf>
  static void stencil_product_many(const Level& L, const StencilRow& r, const double* v,
                                   std::int64_t x, std::int64_t i, double s[N]) {
    const float* S = kHalf ? nullptr : L.stencil32.data() + i * 27;
    const HalfEntry* U = kHalf ? L.upper.data() : nullptr;
    for (int e = 0; e < N; ++e) s[e] = 0.0;
    for (int row = 0; row < 9; ++row) {
      const std::int64_t j = r.base[row] + x - 1;
      for (int dx = 0; dx < 3; ++dx) {
        const int k = 3 * row + dx;
        for (int e = 0; e < N; ++e) {
          const double a = k == 13  ? L.centre[i + e]
                           : !kHalf ? static_cast<double>(S[27 * e + k])
                           : k > 13 ? static_cast<double>(U[(i + e) * kUpper + k - 14])
                                    : static_cast<double>(U[(j + dx + e) * kUpper + 12 - k]);
          s[e] += a * v[j + dx + e];
        }
      }
    }
  }

  template <bool kHalf>
  static double stencil_product_inside(const Level& L, const StencilRow& r, const double* v,
                                       std::int64_t x, std::int64_t i) {
    const float* S = kHalf ? nullptr : L.stencil32.data() + i * 27;
    const HalfEntry* U = kHalf ? L.upper.data() : nullptr;
    double s = 0.0;
    for (int row = 0; row < 9; ++row) {
      const std::int64_t j = r.base[row] + x - 1;
      for (int dx = 0; dx < 3; ++dx) {
        const int k = 3 * row + dx;
        const double a = k == 13  ? L.centre[i]
                         : !kHalf ? static_cast<double>(S[k])
                         : k > 13 ? static_cast<double>(U[i * kUpper + k - 14])
                                  : static_cast<double>(U[(j + dx) * kUpper + 12 - k]);
        s += a * v[j + dx];
      }
    }
    return s;
  }

  // Compact levels: colour (x + y + z) % 2; stencil levels: colour x%2 + 2 (y%2) + 4 (z%2).
  void colour_sweep(const Level& L, const double* bp, double* xp, int colour, double omega) {
    const bool parities = L.stencil_form;
    const double* old = xp;
    if (L.colour_conflict) {
      // Update from a copy of the old values (see setup).
      scratch_.assign(xp, xp + L.op.points());
      old = scratch_.data();
    }
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      std::int64_t first = (colour + y + z) & 1;
      if (parities) {
        if (((colour >> 1) & 1) != (y & 1) || ((colour >> 2) & 1) != (z & 1)) return;
        first = colour & 1;
      }
      const std::int64_t nx = L.op.n[0];
      if (!parities) {
        for (std::int64_t x = first; x < nx; x += 2) {
          const std::int64_t i = index(L, x, y, z);
          if (L.op.fixed[i]) continue;
          const double xo = old[i];
          xp[i] = xo + omega * (gauss_seidel(L, bp, old, x, y, z, i) - xo);
        }
        return;
      }
      const StencilRow r = stencil_row(L, y, z);
      for (std::int64_t x = first; x < nx; x += 2) {
        const std::int64_t i = index(L, x, y, z);
        if (L.op.fixed[i]) continue;
        const double xo = old[i];
        const double gs = x > 0 && x + 1 < nx ? gauss_seidel_inside(L, r, bp, old, x, i)
                                              : gauss_seidel(L, bp, old, x, y, z, i);
        xp[i] = xo + omega * (gs - xo);
      }
    });
  }

  // Colour `colour` of a compact level's row (y, z), updating from xp itself.
  // Away from the grid's faces, the neighbours are the next nodes along each axis: the same
  // sums in the same order as gauss_seidel, without the neighbour tests.
  static void compact_colour_row(const Level& L, const double* bp, double* xp, int colour,
                                 std::int64_t y, std::int64_t z, double omega) {
    const std::int64_t nx = L.op.n[0];
    const bool inside = compact_inside(L, y, z);
    const std::uint8_t* fixed = L.op.fixed.data();
    const auto node = [&](std::int64_t x) {
      const std::int64_t i = index(L, x, y, z);
      if (fixed[i]) return;
      const double xo = xp[i];
      xp[i] = xo + omega * (gauss_seidel(L, bp, xp, x, y, z, i) - xo);
    };
    std::int64_t x = (colour + y + z) & 1;
    if (!inside || nx <= 2) {
      for (; x < nx; x += 2) node(x);
      return;
    }
    if (x == 0) node(0), x = 2;
    // The nodes x, x + 2, ... before the last: gauss_seidel's sums, without a branch, so
    // that the compiler takes two nodes at a time (as compact_run). No node of the colour is
    // another's neighbour, so they may (omp simd).
    const std::int64_t count = x < nx - 1 ? (nx - 2 - x) / 2 + 1 : 0;
    const std::int64_t i0 = index(L, x, y, z);
    with_inside_diagonal<true>(L, [&](const auto& diagonal) {
      const auto [gx, gy, gz, sy, sz] = diagonal.axes;
#pragma omp simd
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t i = i0 + 2 * k;
        double s = 0.0;
        s += static_cast<double>(gx[i - 1]) * xp[i - 1];
        s += static_cast<double>(gx[i]) * xp[i + 1];
        s += static_cast<double>(gy[i - sy]) * xp[i - sy];
        s += static_cast<double>(gy[i]) * xp[i + sy];
        if constexpr (std::decay_t<decltype(diagonal)>::three) {
          s += static_cast<double>(gz[i - sz]) * xp[i - sz];
          s += static_cast<double>(gz[i]) * xp[i + sz];
        }
        const double xo = xp[i];
        const double next = xo + omega * ((bp[i] + s) / diagonal(i) - xo);
        xp[i] = select(fixed[i] == 0, next, xo);
      }
    });
    if (x + 2 * count == nx - 1) node(nx - 1);
  }

  // Row (y, z) of a compact level from x = +0: colour `colour`'s free nodes take their first
  // Gauss-Seidel value (smooth_from_zero), every other node +0.
  static void first_colour_from_zero(const Level& L, const double* bp, double* xp, int colour,
                                     std::int64_t y, std::int64_t z, double omega) {
    const std::int64_t nx = L.op.n[0], i0 = index(L, 0, y, z);
    const std::int64_t first = (colour + y + z) & 1;
    const std::uint8_t* fixed = L.op.fixed.data();
    const auto value = [&](std::int64_t i, double diagonal) {
      return 0.0 + omega * ((bp[i] + 0.0) / diagonal - 0.0);
    };
    const auto node = [&](std::int64_t x) {
      const std::int64_t i = i0 + x;
      xp[i] = (x & 1) == first && !fixed[i] ? value(i, diagonal_at<true>(L, x, y, z, i)) : 0.0;
    };
    if (!compact_inside(L, y, z) || nx <= 2) {
      for (std::int64_t x = 0; x < nx; ++x) node(x);
      return;
    }
    node(0);
    with_inside_diagonal<true>(L, [&](const auto& diagonal) {
#pragma omp simd
      for (std::int64_t i = i0 + 1; i < i0 + nx - 1; ++i)
        xp[i] = select(((i - i0) & 1) == first && fixed[i] == 0, value(i, diagonal(i)), 0.0);
    });
    node(nx - 1);
  }

  // A compact 2D or 3D level's two colours (`first`, then the other) in one pass over the
  // planes (z; the rows, y, of a 2D level): a plane's second colour follows the first colour of
  // the plane after it, which is all that its nodes' neighbours need; so every node takes the
  // values it takes in two passes (the same bits), while a plane's arrays are still in the
  // caches for its second colour (two passes read the level's 28 bytes a node twice from
  // memory). Each thread takes a block of planes; the second colour of its first and last
  // planes, whose neighbours beyond are another thread's, waits for every thread's first
  // colour. Not where a colour updates from a copy (colour_conflict).
  // from_zero: from x = +0 (whatever xp holds), the first colour as smooth_from_zero says.
  void red_black_planes(const Level& L, const double* bp, double* xp, int first, double omega,
                        bool from_zero = false) {
    const bool rows = L.op.dims == 2;
    const std::int64_t ny = L.op.n[1], nz = rows ? ny : L.op.n[2];
    const int second = 1 - first;
    const auto plane = [&](int colour, std::int64_t z) {
      const auto row = [&](std::int64_t y, std::int64_t z) {
        if (from_zero && colour == first)
          first_colour_from_zero(L, bp, xp, colour, y, z, omega);
        else
          compact_colour_row(L, bp, xp, colour, y, z, omega);
      };
      if (rows) return row(z, 0);
      for (std::int64_t y = 0; y < ny; ++y) row(y, z);
    };
    in_team(L.parallel, [&] {
      std::int64_t z0, z1;
      thread_planes(nz, z0, z1);
      for (std::int64_t z = z0; z < z1; ++z) {
        plane(first, z);
        if (z - 1 > z0) plane(second, z - 1);
      }
#pragma omp barrier
      if (z1 > z0) plane(second, z0);
      if (z1 - 1 > z0) plane(second, z1 - 1);
    });
  }

  // Stencil levels: colours 2 pair and 2 pair + 1 (x even, then odd; `reverse`: odd, then
  // even) in one pass over their rows.
  void colour_pair_sweep(const Level& L, const double* bp, double* xp, int pair, bool reverse,
                         double omega) {
    for_rows(L, [&](std::int64_t y, std::int64_t z) {
      if ((pair & 1) != (y & 1) || ((pair >> 1) & 1) != (z & 1)) return;
      pair_row(L, bp, xp, y, z, reverse, omega);
    });
  }

  // Both colours of a stencil level's row (y, z) (x even, then odd; `reverse`: odd, then even).
  static void pair_row(const Level& L, const double* bp, double* xp, std::int64_t y, std::int64_t z,
                       bool reverse, double omega) {
    const StencilRow r = stencil_row(L, y, z);
    const std::int64_t nx = L.op.n[0];
    for (int half = 0; half < 2; ++half)
      for (std::int64_t x = reverse ? 1 - half : half; x < nx; x += 2) {
        const std::int64_t i = index(L, x, y, z);
        if (r.rows == 9 && x > 0 && x + 7 < nx && !L.op.fixed[i] && !L.op.fixed[i + 2] &&
            !L.op.fixed[i + 4] && !L.op.fixed[i + 6]) {
          // Nodes x, x + 2, x + 4 and x + 6 of one colour take nothing from each other: all
          // four at once.
          double gs[4];
          gauss_seidel_many<4>(L, r, bp, xp, x, i, gs);
          for (int e = 0; e < 4; ++e) xp[i + 2 * e] += omega * (gs[e] - xp[i + 2 * e]);
          x += 6;
          continue;
        }
        if (r.rows == 9 && x > 0 && x + 3 < nx && !L.op.fixed[i] && !L.op.fixed[i + 2]) {
          double gs[2];
          gauss_seidel_many<2>(L, r, bp, xp, x, i, gs);
          for (int e = 0; e < 2; ++e) xp[i + 2 * e] += omega * (gs[e] - xp[i + 2 * e]);
          x += 2;
          continue;
        }
        if (L.op.fixed[i]) continue;
        const double xo = xp[i];
        const double gs = x > 0 && x + 1 < nx ? gauss_seidel_inside(L, r, bp, xp, x, i)
                                              : gauss_seidel(L, bp, xp, x, y, z, i);
        xp[i] = xo + omega * (gs - xo);
      }
  }

  // A 3D stencil level's eight colours in one pass over the planes, as red_black_planes does
  // for a compact level's two. The colours x%2 + 2 (y%2) + 4 (z%2) run in the order of their
  // numbers (`reverse`: the opposite), so the planes of parity f (0; reverse: 1) take their
  // four colours before the other planes take theirs, and within a plane the rows of parity f
  // take their two before the other rows. A plane of the other parity therefore follows the
  // plane of parity f after it, and a row of the other parity the row after it: every node
  // reads its neighbours in the states the colour order gives them (the same bits). The four
  // colour-pair passes each read a quarter of the rows, every other row of every other plane,
  // in runs of one row (7 kB at 65^3) that the hardware prefetchers follow badly; this reads the
  // rows nearly in memory order, once. Each thread takes a block of planes; its end planes of
  // the other parity, whose neighbours beyond are another thread's, wait for every thread's
  // first planes. Not where a colour updates from a copy (colour_conflict).
  void stencil_planes(const Level& L, const double* bp, double* xp, bool reverse, double omega) {
    const std::int64_t ny = L.op.n[1], nz = L.op.n[2];
    const std::int64_t f = reverse ? 1 : 0;
    const auto plane = [&](std::int64_t z) {
      for (std::int64_t y = f; y < ny; y += 2) {
        pair_row(L, bp, xp, y, z, reverse, omega);
        if (y - 1 > 0) pair_row(L, bp, xp, y - 1, z, reverse, omega);
      }
      // The rows of the other parity without a row of parity f after them.
      if (f == 1) pair_row(L, bp, xp, 0, z, reverse, omega);
      if (ny - 1 > 0 && ((ny - 1) & 1) != f) pair_row(L, bp, xp, ny - 1, z, reverse, omega);
    };
    in_team(L.parallel, [&] {
      std::int64_t z0, z1;
      thread_planes(nz, z0, z1);
      for (std::int64_t z = z0; z < z1; ++z) {
        if ((z & 1) != f) continue;
        plane(z);
        if (z - 1 > z0) plane(z - 1);
      }
#pragma omp barrier
      if (z1 > z0 && (z0 & 1) != f) plane(z0);
      if (z1 - 1 > z0 && ((z1 - 1) & 1) != f) plane(z1 - 1);
    });
  }

  // gauss_seidel_inside of a full 3D row at the N nodes x, x + 2, ... (0 < x, x + 2 N - 1 < nx),
  // their sums interleaved: N independent chains of additions rather than one (a node's 26
  // dependent adds, not its loads, bound the 27-point sweep), each in its own order as before.
  template <int N>
  static void gauss_seidel_many(const Level& L, const StencilRow& r, const double* bp,
                                const double* v, std::int64_t x, std::int64_t i, double gs[N]) {
    if (L.half)
      gauss_seidel_many<N, true>(L, r, bp, v, x, i, gs);
    else
      gauss_seidel_many<N, false>(L, r, bp, v, x, i, gs);
  }
  template <int N, bool kHalf>
  static void gauss_seidel_many(const Level& L, const StencilRow& r, const double* bp,
                                const double* v, std::int64_t x, std::int64_t i, double gs[N]) {
    const float* S = kHalf ? nullptr : L.stencil32.data() + i * 27;
    const HalfEntry* U = kHalf ? L.upper.data() : nullptr;
    double s[N] = {};
    for (int row = 0; row < 9; ++row) {
      const std::int64_t j = r.base[row] + x - 1;
      for (int dx = 0; dx < 3; ++dx) {
        const int k = 3 * row + dx;
        if (k == 13) continue;
        for (int e = 0; e < N; ++e) {
          const double a = !kHalf   ? static_cast<double>(S[54 * e + k])
                           : k > 13 ? static_cast<double>(U[(i + 2 * e) * kUpper + k - 14])
                                    : static_cast<double>(U[(j + dx + 2 * e) * kUpper + 12 - k]);
          s[e] += a * v[j + dx + 2 * e];
        }
      }
    }
    for (int e = 0; e < N; ++e) gs[e] = (bp[i + 2 * e] - s[e]) / L.centre[i + 2 * e];
  }

  // Coordinate c + o on axis a of op's grid, or -1 beyond a non-periodic end (or an unused axis).
  static std::int64_t step(const LevelOperator& op, int a, std::int64_t c, int o) {
    const std::int64_t n = op.n[a];
    const bool periodic = a < op.dims && op.periodic[a];
    c += o;
    if (c < 0) return periodic ? c + n : -1;
    if (c >= n) return periodic ? c - n : -1;
    return c;
  }

  std::vector<Level> levels_;
  std::vector<Values> vectors_;
  struct Sparse {
    std::vector<std::int64_t> nodes;
    std::vector<double> values;
  };
  std::vector<Sparse> sparse_;
  std::vector<std::int32_t> piece_;  // set_pieces
  std::int64_t pieces_ = 0;
  std::vector<int> vector_level_;
  std::vector<int> released_ids_;  // coarse vectors' ids released, given again first
  std::vector<double> scratch_;
  std::optional<BottomFactor> bottom_;  // set_bottom_factor, for bottom_level_
  int bottom_level_ = -1;
  std::vector<double> bottom_work_;
};

}  // namespace

std::unique_ptr<LevelOps> make_cpu_level_ops() { return std::make_unique<CpuLevelOps>(); }

}  // namespace heatsim::kernels
