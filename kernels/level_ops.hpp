// The operations a multigrid solver runs on one grid level, declared once and implemented per
// backend (kernels/cpu/cpu_level_ops.cpp, kernels/cuda/level_ops.cu). The solver in
// solver/multigrid/ builds the levels and runs the cycles; it never knows which backend does
// the arithmetic.
//
// The finest level holds a symmetric seven-point (five in 2D, three in 1D) operator on a node
// grid, in compact form:
//   (A x)_i = a_i x_i + sum_axis sum_{j = i-e, i+e} G_ij (x_i - x_j)
// with a node term a_i >= 0 and face conductances G_ij = G_ji > 0 between neighbours (faces
// beyond a non-periodic boundary do not exist; a periodic axis wraps). The levels below it are
// Galerkin products R A P (solver/multigrid/hierarchy.hpp) and hold a general 3^dims-point
// stencil (27 points in 3D) instead. Nodes marked `fixed` hold given values (Dirichlet nodes): A
// acts on the free nodes only, a fixed neighbour's value enters the free node's row, and the
// residual, smoother and corrections leave fixed nodes alone (the residual is 0 there).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend.hpp"

namespace heatsim::kernels {

// The 3^dims neighbour offsets of a stencil-form level, numbered k = sum_a (o_a + 1) 3^a (x
// fastest), o_a in {-1, 0, +1} on the first `dims` axes; k = stencil_centre(dims) is (0, 0, 0).
constexpr int stencil_points(int dims) { return dims == 1 ? 3 : dims == 2 ? 9 : 27; }
constexpr int stencil_centre(int dims) { return stencil_points(dims) / 2; }
inline int stencil_offset(int k, int axis) {
  return (axis == 0 ? k : axis == 1 ? k / 3 : k / 9) % 3 - 1;
}

constexpr std::uint8_t kRemovedNode = 2;

// An allocator whose sized construction and resize leave values unset (default-initialised)
// where std::allocator sets them to 0: for arrays that parallel loops write in full, whose pages
// are then first touched by the threads that write them (the hierarchy's 27-entries-per-node
// arrays, the CPU level operations' vectors). std::vector's zero fill ran on one thread, taking
// the page faults of hundreds of megabytes with it: a quarter of the finest coarsening's time
// and the part that did not shrink with threads (docs/performance.md).
template <typename T>
struct UnsetAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <typename U>
  UnsetAllocator(const UnsetAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
// A level's operator (compact conductances and node term, or stencil).
using LevelWeights = std::vector<double, UnsetAllocator<double>>;
// A level's prolongation weights.
using LevelFloats = std::vector<float, UnsetAllocator<float>>;

struct LevelOperator {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};  // nodes per axis; 1 on unused axes
  std::array<bool, kMaxDims> periodic{false, false, false};
  // Compact form (the finest level): a_i, memory order [z][y][x], and conductance[axis][i]: G
  // between node i and its upper neighbour along the axis (the node one period away for the
  // last node of a periodic axis; unused, 0, for the last node of a non-periodic axis).
  LevelWeights node_term;
  std::array<LevelWeights, kMaxDims> conductance;
  // Stencil form (levels below the finest), used when not empty: stencil[k * points() + i] is the
  // matrix entry A(i, i + offset_k) (stencil_offset), 0 where the offset leaves a non-periodic
  // axis; (A x)_i = sum_k stencil[k][i] x[i + offset_k]. node_term and conductance are unused.
  LevelWeights stencil;
  // Stencil form: every pair of entries between two free nodes, A(i, j) and A(j, i), is the same
  // bits, as whoever built the stencil guarantees (the hierarchy's Galerkin levels take each
  // pair's mean); level operations that keep half of a symmetric stencil then need not compare
  // the pairs. False: not known, and compared where it matters.
  bool symmetric = false;
  // Non-zero: the node holds its value (1: a Dirichlet node; kRemovedNode: a node inside a void,
  // no part of the body, which the operations treat alike and only the hierarchy's
  // interpolation tells apart).
  std::vector<std::uint8_t> fixed;
  // Levels below the finest: fine_index[axis][I] is the index, in the next finer level, of this
  // level's node I (increasing, first 0; a non-periodic axis ends on the finer level's last
  // node; neighbouring coarse nodes are one or two finer nodes apart).
  std::array<std::vector<std::int64_t>, kMaxDims> fine_index;
  // Levels below the finest: the prolongation to the next finer level, operator-dependent
  // (solver/multigrid/hierarchy.hpp): prolongation[k * points() + I] is the weight with which
  // the finer node at fine_index(I) + offset_k takes this node's value (0 where there is none).
  // Restriction is its transpose. In fp32: the weights lie in [0, 1] and interpolate
  // corrections that the V-cycle smooths in fp32 anyway, and the Galerkin product takes the
  // rounded weights, so the coarse operator is exactly P^T A P of the P the V-cycle uses (its
  // 27 weights a coarse node were half a level's set-up bytes and the transfers' largest
  // stream; docs/performance.md).
  LevelFloats prolongation;

  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  bool stencil_form() const { return !stencil.empty(); }
};

// A small level's operator factored for a direct solve (solver/multigrid/bottom_factor.hpp makes
// it with the hierarchy, for the coarsest level): A = L L^T over the level's free nodes, numbered
// so that L is banded (the level's longest axis outermost). The fixed nodes take no part: a
// direct solve leaves them as they are.
struct BottomFactor {
  std::int64_t points = 0;         // the level's nodes, fixed ones included
  std::vector<std::int64_t> node;  // row r of L is the level's node node[r]
  std::int64_t band = 0;           // L(r, c) = 0 where r - c > band
  // lower[r * (band + 1) + band - (r - c)] = L(r, c) for max(0, r - band) <= c <= r.
  std::vector<double> lower;

  std::int64_t rows() const { return static_cast<std::int64_t>(node.size()); }
  // x[node[r]] += (A^-1 rhs)_r, rhs read at the nodes node[r], by the two triangular solves;
  // `work` holds rows() values.
  void solve_add(const double* rhs, double* x, double* work) const;
  // A^-1 over the same rows, row by row (rows() x rows()), symmetric to the bit: for level
  // operations that take one product in place of two triangular solves, which run a row at a
  // time (a device's). About 2 rows^2 band multiplications; worth it up to kInverseRows rows
  // and kInverseWork (rows^2 band) multiplications (inverse_affordable).
  std::vector<double> inverse() const;
  static constexpr std::int64_t kInverseRows = 2048;
  static constexpr double kInverseWork = 1e8;
  bool inverse_affordable() const {
    const double m = static_cast<double>(rows());
    return rows() <= kInverseRows && m * m * static_cast<double>(band) <= kInverseWork;
  }
};

// The nodes of one axis of a finer level and the coarse nodes each takes a value from: one
// (a coarse node itself, offset 0) or two (between coarse nodes: offset +1 from the lower, -1
// from the upper, across the wrap on a periodic axis). Shared by the backends and by the solver,
// so both read the prolongation weights the same way.
struct AxisTransfer {
  struct Term {
    std::int64_t coarse = -1;  // -1: unused
    int offset = 0;            // the finer node's index minus the coarse node's, wrapped
  };
  std::vector<std::array<Term, 2>> from;  // per finer node
};
AxisTransfer axis_transfer(std::int64_t fine_n, bool periodic,
                           const std::vector<std::int64_t>& fine_index);

// Piece sums as one process forms them on the host, row by row: within a grid row (x from 0)
// each piece's nodes are added in x order from 0 (add), and each row's partials are then added
// to the pieces' totals in row order (finish), as dot products sum their rows. A decomposed run
// (solver/parallel) forms the same partials rank by rank, continuing a row's along x where x is
// split (carry), and adds them in the same order: its sums are one process's to the bit.
class PieceRowSums {
 public:
  explicit PieceRowSums(std::int64_t pieces)
      : sum_(static_cast<std::size_t>(pieces), 0.0), seen_(static_cast<std::size_t>(pieces), 0) {}
  // Node value v of piece g (>= 0), the next in the row.
  void add(std::int32_t g, double v) {
    const std::size_t k = static_cast<std::size_t>(g);
    if (!seen_[k]) {
      seen_[k] = 1;
      met_.push_back(g);
    }
    sum_[k] += v;
  }
  // The row's partial for piece g carried from an earlier part of the row (a rank before along
  // x): the same as the adds that formed it.
  void carry(std::int32_t g, double partial) { add(g, partial); }
  // Ends the row: f(g, partial) for each piece met, in the order met; then starts afresh.
  template <typename F>
  void finish(F&& f) {
    for (std::int32_t g : met_) {
      const std::size_t k = static_cast<std::size_t>(g);
      f(g, sum_[k]);
      sum_[k] = 0.0;
      seen_[k] = 0;
    }
    met_.clear();
  }

 private:
  std::vector<double> sum_;
  std::vector<std::uint8_t> seen_;
  std::vector<std::int32_t> met_;
};

// Vectors live with the backend (host or device memory) and are named by the id create_vector
// returns. The arithmetic is fp64.
//
// The V-cycle runs on the smoother's operator, the coefficients rounded to fp32 (a
// mixed-precision preconditioner inside fp64 CG: it halves the bytes the cycle reads, and CG
// corrects for it): on a compact finest level the conductances rounded and the diagonal summed
// from them; on stencil levels the entries off the centre rounded and the centre moved by what
// their rounding took from the row, so that row sums, and with them positive definiteness, stay.
// smooth and cycle_residual use it on every level. residual, apply and magnitude use the exact
// operator on a compact level and the smoother's on stencil levels below the finest (the only
// one kept there), so that the coarse levels' operations are one fixed symmetric operator.
class LevelOps {
 public:
  virtual ~LevelOps() = default;
  virtual std::string name() const = 0;
  // Takes the hierarchy, finest first; drops the vectors of an earlier setup. Throws
  // std::invalid_argument on inconsistent sizes.
  virtual void setup(const std::vector<LevelOperator>& levels) = 0;
  // As setup, but the vectors of level 0 stay, ids and values (a time stepper's field and
  // loads across a change of the operator, BDF2's start); the sparse vectors stay too. The
  // finest level must keep its number of points (std::invalid_argument otherwise).
  virtual void replace_hierarchy(const std::vector<LevelOperator>& levels) = 0;
  // setup() from levels the caller gives up: a backend that keeps them in host memory takes
  // their arrays instead of copying them (at 257^3 the copy is 1.6 GB of new pages); the
  // others copy them to the device as setup() does.
  virtual void adopt(std::vector<LevelOperator> levels) { setup(levels); }
  // replace_hierarchy from levels the caller gives up, as adopt is setup's.
  virtual void adopt_replacement(std::vector<LevelOperator> levels) { replace_hierarchy(levels); }
  // Before a replace_hierarchy (or adopt_replacement): the levels' arrays may go now, so that
  // the caller builds the next hierarchy without this one beside it (a nonlinear solve's outer
  // iterations: each a new hierarchy of the same shape). The vectors of level 0, the sparse
  // vectors and the pieces stay, and so does what upload, download and create_vector(0) need;
  // nothing else may run until the levels are replaced. The default keeps everything (a
  // device's levels are not in the host memory the next hierarchy is built in).
  virtual void release_levels() {}
  // Whether replace_finest is offered (the CPU's); the others replace the whole hierarchy.
  virtual bool replaces_finest() const { return false; }
  // Lets the finest level's operator go (release_levels' part for level 0) and then takes
  // `level` in its place, keeping the coarse levels, their transfers and every vector: a
  // hierarchy built for a nearby operator, as a preconditioner (a nonlinear solve's later outer
  // iterations). The caller passes the new level after release_finest(), which lets the old
  // one's arrays go first; `level` has the old one's shape and fixed flags
  // (std::invalid_argument otherwise).
  virtual void release_finest() {}
  virtual void replace_finest(LevelOperator /*level*/) {
    throw std::logic_error("level ops: " + name() + " does not replace the finest level alone");
  }
  // Whether these operations keep the finest level on the host as they were given it (setup,
  // adopt, replace_hierarchy), so that finest_level() returns it later (the CPU's do): the
  // solver then derives what it needs from it only when it needs it.
  virtual bool keeps_finest_level() const { return false; }
  // The finest level as given, where keeps_finest_level(); nullptr otherwise and before setup.
  // Its node term may be empty where it was +0 on every node (the CPU's drop it): read it so.
  virtual const LevelOperator* finest_level() const { return nullptr; }
  // A zeroed vector on `level`; the id stays valid until the next setup.
  virtual int create_vector(int level) = 0;
  virtual void upload(int v, const std::vector<double>& values) = 0;
  virtual void download(int v, std::vector<double>& values) = 0;
  // The same from and into the caller's memory (the vector's size of values): through a
  // vector by default; a device's level operations copy straight, at the bus's speed where
  // the memory is pinned, without a vector's fresh pages.
  virtual void upload_from(int v, const double* values, std::size_t count) {
    upload(v, std::vector<double>(values, values + count));
  }
  virtual void download_to(int v, double* values, std::size_t count) {
    std::vector<double> all;
    download(v, all);
    check_download(all.size(), count);
    std::copy(all.begin(), all.end(), values);
  }
  // Vector v's values, given up: for a caller that keeps them past the level operations (a
  // steady run's field once its levels go). Through a download by default; the CPU's hand
  // their array over (no copy beside the levels at the run's peak), and v is no longer valid.
  virtual void take_vector(int v, LevelWeights& values) {
    std::vector<double> all;
    download(v, all);
    values.assign(all.begin(), all.end());
  }
  // std::invalid_argument unless `count` values go into (come out of) a vector of `size`.
  static void check_upload(std::size_t count, std::size_t size) {
    if (count != size)
      throw std::invalid_argument("level ops: upload of " + std::to_string(count) +
                                  " values into a vector of " + std::to_string(size));
  }
  static void check_download(std::size_t size, std::size_t count) {
    if (count != size)
      throw std::invalid_argument("level ops: download of a vector of " + std::to_string(size) +
                                  " values into " + std::to_string(count));
  }
  // A sparse vector of level 0: `values` at the distinct node indices `nodes` (memory order),
  // kept until the next setup (replace_hierarchy keeps it). Its id is its own: scatter takes it.
  virtual int create_sparse(const std::vector<std::int64_t>& nodes,
                            const std::vector<double>& values) = 0;
  // y[node] = a * value (assign) or y[node] += a * value, over the sparse vector s's entries; y
  // a level-0 vector.
  virtual void scatter(double a, int s, int y, bool assign) = 0;

  // Pieces of level 0 (solver/multigrid/deflation.hpp): piece[i] in [0, count), or -1 for a
  // node in none. Replaces the pieces of an earlier call; replace_hierarchy keeps them, setup
  // drops them. Returns false where the backend has no piece operations (the default), and the
  // caller goes without.
  virtual bool set_pieces(const std::vector<std::int32_t>& piece, std::int64_t count) {
    (void)piece;
    (void)count;
    return false;
  }
  // sums[g] = the sum of level-0 vector v over piece g's nodes (in a fixed order, so that a
  // run repeats to the bit: on the host, PieceRowSums's); sums is resized to the count. The
  // default throws.
  virtual void piece_sums(int v, std::vector<double>& sums);
  // v[i] += values[piece[i]] on the nodes in a piece. The default throws.
  virtual void piece_add(const std::vector<double>& values, int v);

  // r = b - A x on the free nodes, 0 on the fixed ones.
  virtual void residual(int level, int b, int x, int r) = 0;
  // residual(), then returns r . r (as dot(r, r)): a backend may sum each part as it writes it.
  // The default makes the two calls.
  virtual double residual_norm(int level, int b, int x, int r);
  // r = b - A~ x with the smoother's operator A~ (the V-cycle's residual).
  virtual void cycle_residual(int level, int b, int x, int r) = 0;
  // y = A x on the free nodes, 0 on the fixed ones.
  virtual void apply(int level, int x, int y) = 0;
  // apply(), then returns x . y (as dot(x, y)): CG's product and its p . A p. The default
  // makes the two calls.
  virtual double apply_dot(int level, int x, int y);
  // CG's next direction and its product: p = z + beta p (as axpby(1, z, beta, p): beta == 0
  // assigns), then apply_dot(level, p, q). The default makes the calls; a backend may form p
  // inside the product's pass.
  virtual double update_apply_dot(int level, int z, double beta, int p, int q);
  // Multicolour Gauss-Seidel on the free nodes, over-relaxed by omega (x_i += omega * (the
  // Gauss-Seidel value - x_i)). Compact levels: red (x + y + z even) then black; stencil levels:
  // the 2^dims colours of the coordinates' parities (x fastest), which no 27-point stencil
  // joins. `sweeps` times; `reverse` runs the colours in the opposite order, the adjoint, so
  // that a cycle with the same number of sweeps before (forward) and after (reverse) is a
  // symmetric preconditioner (for 0 < omega < 2).
  virtual void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) = 0;
  // x = +0 on every node, then smooth(): a V-cycle's first smoothing of a correction. The
  // default is zero() and smooth(); a backend may instead start its first sweep from zeros it
  // does not read, with the same values.
  virtual void smooth_from_zero(int level, int b, int x, int sweeps, bool reverse, double omega);
  // One colour of smooth() on the free nodes of `colour` (numbered as smooth() numbers them),
  // once, over-relaxed by omega: for a caller that holds a block of a larger grid and refreshes
  // the values beside it between colours (solver/parallel/decomposed_level_ops.hpp), so that
  // the block's nodes take exactly the whole grid's updates. The default throws.
  virtual void smooth_colour(int level, int b, int x, int colour, double omega);
  // The values of vector v where they live in host memory (the CPU's level operations), for a
  // caller that packs and reads them itself; nullptr where they do not (a device's).
  virtual double* host_values(int v) {
    (void)v;
    return nullptr;
  }
  // b_coarse = P^T r_fine on the free coarse nodes (0 on the fixed ones); coarse level = fine+1.
  virtual void restrict_residual(int fine_level, int r_fine, int b_coarse) = 0;
  // x_fine += P x_coarse on the free fine nodes.
  virtual void prolong_add(int fine_level, int x_coarse, int x_fine) = 0;

  // out_i = |b_i| + sum_j |A_ij x_j| on the free nodes (0 on the fixed ones), j over the
  // node's row with i itself: the size of the terms whose rounding the residual b - A x
  // carries. Its norm sets the attainable floor of a solve (solver/multigrid/multigrid.hpp).
  virtual void magnitude(int level, int b, int x, int out) = 0;

  // Conjugate gradients on `level` (its operator as apply() uses it): x += A^-1 (b - A x),
  // iterating while ||r||^2 > tolerance^2 ||r0||^2, at most `limit` iterations, stopping where
  // p.Ap <= 0; r, p and q are work vectors of the level. The default runs on the operations
  // above (a host round trip per dot product on a device); a backend may run it whole.
  virtual void conjugate_gradients(int level, int b, int x, int r, int p, int q,
                                   double tolerance, std::int64_t limit);

  // A direct solve of `level` (the coarsest) in place of conjugate_gradients: whether these
  // operations take `factor`, its operator's (BottomFactor). Taken, bottom_solve runs on that
  // level until the next setup, adopt, replacement of the hierarchy or of a one-level
  // hierarchy's finest level, or set_bottom_factor. The default takes none.
  virtual bool set_bottom_factor(int level, BottomFactor factor) {
    (void)level;
    (void)factor;
    return false;
  }
  // x += A^-1 (b - A x) by the factor set_bottom_factor took for `level`, r a work vector of
  // the level; from_zero: x = A^-1 b, x's values not read. The fixed nodes keep their values.
  // The default throws (no factor taken).
  virtual void bottom_solve(int level, int b, int x, int r, bool from_zero);

  // v = 0 on the free nodes of `level`; the fixed nodes keep their values.
  virtual void zero_free(int level, int v) = 0;
  virtual double dot(int x, int y) = 0;
  // v = +0 on every node (where axpby(0, v, 0, v) leaves -0 for negative values).
  virtual void zero(int v) = 0;
  // y = a x + b y (b == 0 assigns, whatever y held).
  virtual void axpby(double a, int x, double b, int y) = 0;
  // Conjugate gradients' update, x += alpha p and r -= alpha q (as axpby), then returns r . r
  // (as dot(r, r)): a backend may take the three in one pass. The default makes the calls.
  virtual double cg_update(double alpha, int p, int q, int x, int r);
  // y = a (w x) + b y, the product taken node by node (b == 0 assigns).
  virtual void multiply_add(double a, int w, int x, double b, int y) = 0;
  // v = v rounded to fp32 and back: the field of an fp32 run as its backend would hold it.
  virtual void round_to_fp32(int v) = 0;
};

}  // namespace heatsim::kernels
