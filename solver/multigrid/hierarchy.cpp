#include "hierarchy.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/threads.hpp"

namespace heatsim::solver::multigrid {

using kernels::AxisTransfer;
using kernels::kMaxDims;
using kernels::stencil_centre;
using kernels::stencil_offset;
using kernels::stencil_points;

std::vector<std::int64_t> coarse_nodes(std::int64_t n, bool periodic,
                                       const std::vector<std::uint8_t>& strong, bool odd) {
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
  if (odd && !periodic) kept.push_back(i = 1);
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
// A free node leans into the plane across an axis when its own couplings within that plane
// outweigh those across it more than kLeanNode times (isotropic couplings: dims - 1 times). A
// 3D plane holding at least a line's worth of such nodes is strong too (strong_planes).
constexpr double kLeanNode = 8.0;
// A free node is at a saddle of the plane of two axes when the couplings in two opposite
// quadrants around it both exceed those in the other two kSaddleJump times: materials meeting
// there as a checkerboard's cubes meet along an edge. When such nodes lie on an axis's even
// planes kSaddleParity times more than on its odd ones (and at least an edge's worth),
// the coarse level keeps the odd planes (odd_planes).
constexpr double kSaddleJump = 16.0;
constexpr std::int64_t kSaddleParity = 3;
// Couplings this small beside the others of a row are none but rounding's.
constexpr double kDecoupled = 1e-12;
// A row whose sum (node term, couplings to held nodes) is above this fraction of its centre
// holds its node: its interpolation weights keep the row sum in their denominator.
constexpr double kHeldRow = 0.1;

// The coordinates and neighbours of a level's grid.
struct Grid {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};
  std::array<bool, kMaxDims> periodic{false, false, false};
  // Per axis and coordinate c, the coordinates at offsets -1, 0, +1 ([3 c + o + 1]; -1: none,
  // and 0 for offset 0 alone on an unused axis).
  std::array<std::vector<std::int64_t>, kMaxDims> steps;

  explicit Grid(const LevelOperator& op) : dims(op.dims), n(op.n) {
    for (int a = 0; a < dims; ++a) periodic[a] = op.periodic[a];
    for (int a = 0; a < kMaxDims; ++a) {
      steps[a].assign(3 * static_cast<std::size_t>(n[a]), -1);
      for (std::int64_t c = 0; c < n[a]; ++c)
        for (int o = -1; o <= 1; ++o)
          steps[a][3 * c + o + 1] = a < dims ? step(a, c, o) : (o == 0 ? c : -1);
    }
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

// Row i of a level's matrix over the free nodes, as its non-zero entries: A(i, i + offset_k)
// for the neighbours that exist and are not fixed, and the centre A(i, i) always (first).
// Seven entries at most on a compact level, so the Galerkin product and the prolongation,
// which visit every row once or twice, never scan the 27 offsets of a full stencil there.
struct Row {
  int count = 0;
  int k[kMaxStencil];
  double a[kMaxStencil];
  double centre() const { return a[0]; }
};

void free_row(const LevelOperator& op, const Grid& g, const std::int64_t c[3], std::int64_t i,
              Row& row) {
  const int centre = stencil_centre(op.dims);
  row.count = 1;
  row.k[0] = centre;
  if (op.stencil_form()) {
    const std::int64_t np = op.points(), nx = g.n[0], ny = g.n[1];
    // The entries two cache lines on in each of the 27 arrays (2 MB apart at 65^3), which the
    // callers' next rows along x read: the hardware prefetchers do not follow 27 streams at
    // once, and these loads were waited on.
    const std::int64_t ahead = std::min(i + 16, np - 1);
    for (int k = 0; k < stencil_points(op.dims); ++k)
      __builtin_prefetch(&op.stencil[k * np + ahead]);
    row.a[0] = op.stencil[centre * np + i];
    const std::int64_t* xn = &g.steps[0][3 * c[0]];
    const std::int64_t* yn = &g.steps[1][3 * c[1]];
    const std::int64_t* zn = &g.steps[2][3 * c[2]];
    // Offsets numbered k = dx + 3 dy + 9 dz over the used axes (an unused one keeps d = 0).
    const int hy = op.dims > 1 ? 3 : 1, hz = op.dims > 2 ? 3 : 1;
    for (int dz = 0; dz < hz; ++dz) {
      const std::int64_t zj = zn[hz == 3 ? dz : 1];
      if (zj < 0) continue;
      for (int dy = 0; dy < hy; ++dy) {
        const std::int64_t yj = yn[hy == 3 ? dy : 1];
        if (yj < 0) continue;
        const std::int64_t base = (zj * ny + yj) * nx;
        for (int dx = 0; dx < 3; ++dx) {
          const int k = dx + 3 * dy + 9 * dz;
          if (xn[dx] < 0 || k == centre || op.fixed[base + xn[dx]]) continue;
          const double v = op.stencil[k * np + i];
          if (v == 0.0) continue;
          row.k[row.count] = k;
          row.a[row.count++] = v;
        }
      }
    }
    return;
  }
  double diagonal = op.node_term[i];
  std::int64_t stride = 1;
  int place = 1;  // offset -1 or +1 along axis a alone is k = centre -+ 3^a
  for (int a = 0; a < op.dims; ++a, place *= 3) {
    const std::int64_t n = op.n[a];
    const double* G = op.conductance[a].data();
    if (c[a] > 0 || op.periodic[a]) {
      const std::int64_t j = c[a] > 0 ? i - stride : i + (n - 1) * stride;
      diagonal += G[j];
      if (!op.fixed[j] && G[j] != 0.0) {
        row.k[row.count] = centre - place;
        row.a[row.count++] = -G[j];
      }
    }
    if (c[a] < n - 1 || op.periodic[a]) {
      const std::int64_t j = c[a] < n - 1 ? i + stride : i - (n - 1) * stride;
      diagonal += G[i];
      if (!op.fixed[j] && G[i] != 0.0) {
        row.k[row.count] = centre + place;
        row.a[row.count++] = -G[i];
      }
    }
    stride *= n;
  }
  row.a[0] = diagonal;
}

// Per z plane of a 3D level: whether every value of it (fixed flags, and the node terms and
// conductances or the entries) is the same bits as the plane before's (plane 0: no; empty: not
// 3D). A pass over the level whose result for plane z reads the values of the planes within
// some reach of z alone gives, where those planes and the ones before each are the same bits,
// the result of the plane before (homogeneous blocks, the middle of an inclusion), and takes it
// from there rather than computing it again.
// `known`: per plane, 1 where whoever built the level knows it to be the same bits as the plane
// before (galerkin's copied planes), taken without comparing; empty: none known.
std::vector<std::uint8_t> planes_as_before(const LevelOperator& op,
                                           const std::vector<std::uint8_t>& known = {}) {
  std::vector<std::uint8_t> same;
  if (op.dims != 3) return same;
  const std::int64_t nz = op.n[2], plane = op.n[0] * op.n[1], np = op.points();
  same.assign(static_cast<std::size_t>(nz), 0);
  kernels::for_each_index(1, nz, np >= 4096, [&](std::int64_t z) {
    const auto plane_bits = [&](const auto& v, std::int64_t at) {
      return std::memcmp(&v[at + z * plane], &v[at + (z - 1) * plane], plane * sizeof(v[0])) == 0;
    };
    const auto compared = [&] {
      bool s = plane_bits(op.fixed, 0);
      if (op.stencil_form())
        for (int k = 0; k < stencil_points(3) && s; ++k) s = plane_bits(op.stencil, k * np);
      else
        s = s && plane_bits(op.node_term, 0) && plane_bits(op.conductance[0], 0) &&
            plane_bits(op.conductance[1], 0) && plane_bits(op.conductance[2], 0);
      return s;
    };
    const bool is_known = !known.empty() && known[z];
    assert(!is_known || compared());
    same[z] = is_known || compared();
  });
  return same;
}

// Per z plane: the plane whose result it takes, the first of its run (or itself), where every
// plane within `reach` of it is the same bits as the plane before (planes_as_before) and
// lies inside the grid. A result for plane z that reads the planes within `reach` of it is
// then the source plane's (shifted by z - source along z).
std::vector<std::int64_t> plane_sources(const std::vector<std::uint8_t>& as_before, std::int64_t nz,
                                        int reach) {
  std::vector<std::int64_t> source(static_cast<std::size_t>(nz));
  for (std::int64_t z = 0; z < nz; ++z) {
    source[z] = z;
    if (as_before.empty() || z - reach < 1 || z + reach >= nz) continue;
    bool all = true;
    for (std::int64_t q = z - reach; q <= z + reach && all; ++q) all = as_before[q];
    if (all) source[z] = source[z - 1];
  }
  return source;
}

// Where a 3D level repeats itself along x. A finer node is `same` as the node two before it
// along x when their own values are the same bits (fixed, and the compact form's node term and
// upper conductances or the stencil form's row) and the transfer along x, from either side of
// it, is that of the node two before moved by one coarse node; and every node within r of it
// (per axis) is same, `repeats(r)`. Everything the prolongation, A P and the Galerkin product
// compute at a node is a function of the values and transfers within a few nodes of it, so where
// that neighbourhood repeats, the result is the one computed two finer nodes (one coarse node)
// before, to the bit, and is copied rather than computed again (homogeneous blocks of a real
// case: the bulk of a cube of one metal, the epoxy around a ball). Along y the same holds for
// whole rows of nodes (`rows_repeat(r)`), whose results are those of the row two before.
class XRepeats {
 public:
  // How far, per axis, each result reads the level's values and transfers. A row (free_row: a
  // compact row's conductances of its lower neighbours, every row's neighbours' fixed flags;
  // nodes_beside_held's box) reads within 1. A weight of a node between coarse nodes along some
  // axes reads its row and the weights of neighbours moved along those axes only, each a coarse
  // coordinate along every axis it moved on, so that it moves along none of them again: along
  // any one axis the chain of weights moves one node at most, and a weight reads within 2 (within
  // 1 along an axis where its node is a coarse coordinate). A row of A P, its row times its
  // neighbours' weights, reads within 3, and within 2 along an axis where its node lies between
  // coarse nodes (its neighbours there are coarse coordinates). A coarse row reads its children's
  // weights and A P: along each axis a child on the coarse node's coordinate, reading within 3,
  // or one node from it between coarse nodes, reading within 2 of itself: within 3 as well.
  static constexpr int kWeightsReach = 2, kProductReach = 3, kRowsReach = 3;
  // as_before: planes_as_before(fine).
  XRepeats(const LevelOperator& fine, const AxisTransfer& tx, const AxisTransfer& ty,
           const AxisTransfer& tz, const std::vector<std::uint8_t>& as_before, bool use)
      : n_(fine.n) {
    // (A periodic axis's neighbourhoods wrap around, which the windows below do not follow.)
    if (!use || fine.dims != 3 || fine.periodic[0] || fine.periodic[1] || fine.periodic[2]) return;
    const std::int64_t nx = n_[0], np = fine.points();
    // Along x: the transfer at f is that at f - 2 moved up by one coarse node, away from the
    // ends (f - 2 and f + 1 exist).
    std::vector<std::uint8_t> moved(static_cast<std::size_t>(nx), 0);
    const auto shifted = [](const AxisTransfer::Term& a, const AxisTransfer::Term& b) {
      return a.offset == b.offset && (a.coarse < 0 ? b.coarse < 0 : b.coarse == a.coarse + 1);
    };
    for (std::int64_t f = 2; f + 1 < nx; ++f)
      moved[f] =
          shifted(tx.from[f - 2][0], tx.from[f][0]) && shifted(tx.from[f - 2][1], tx.from[f][1]);
    // Along y, whole rows: row (y, z) is `row_same` when every one of its own values is the same
    // bits as row (y - 2, z)'s, and the transfer along y at y is that at y - 2 moved up by one
    // coarse node (y - 2 and y + 1 exist). Its x and z transfers are the same rows' own.
    const std::int64_t ny = n_[1], nz = n_[2];
    std::vector<std::uint8_t> moved_y(static_cast<std::size_t>(ny), 0);
    for (std::int64_t f = 2; f + 1 < ny; ++f)
      moved_y[f] =
          shifted(ty.from[f - 2][0], ty.from[f][0]) && shifted(ty.from[f - 2][1], ty.from[f][1]);
    // Along z, whole planes: plane z is `plane_same` when it and plane z - 1 are each the same
    // bits as the plane before (so plane z is plane z - 2's), and the transfer along z at z is
    // that at z - 2 moved up by one coarse node (z - 2 and z + 1 exist).
    plane_same_.assign(static_cast<std::size_t>(nz), 0);
    for (std::int64_t f = 2; f + 1 < nz; ++f)
      plane_same_[f] = as_before[f] && as_before[f - 1] &&
                       shifted(tz.from[f - 2][0], tz.from[f][0]) &&
                       shifted(tz.from[f - 2][1], tz.from[f][1]);
    same_.assign(static_cast<std::size_t>(np), 0);
    row_same_.assign(static_cast<std::size_t>(ny * nz), 0);
    const int kp = stencil_points(3);
    // One pass over the values: each row is compared with the row two before it, whole, and a
    // node's flag along x reads its own row's values alone, so a row the same bits as the row
    // two before takes that row's flags (written before it on this thread: a plane's rows in
    // order); only the other rows (near the y and z faces, through an inclusion) are compared
    // node by node. A plane's flags read its own values alone: a plane the same bits as the
    // plane before takes the flags of the first plane of its run (plane_sources, reach 0).
    const std::vector<std::int64_t> source = plane_sources(as_before, nz, 0);
    window_source_ = plane_sources(as_before, nz, kMostReach);
    kernels::for_each_index(0, nz, np >= 32768, [&](std::int64_t z) {
      for (std::int64_t y = 0; y < ny && source[z] == z; ++y) {
        const std::int64_t line = z * ny + y, i0 = line * nx, j0 = i0 - 2 * nx;
        bool row_bits_same = y >= 2;
        if (row_bits_same) {
          const auto row_bits = [&](const auto& v, std::int64_t at) {
            return std::memcmp(&v[at + i0], &v[at + j0], nx * sizeof(v[0])) == 0;
          };
          row_bits_same = row_bits(fine.fixed, 0);
          if (fine.stencil_form())
            for (int k = 0; k < kp && row_bits_same; ++k)
              row_bits_same = row_bits(fine.stencil, k * np);
          else
            row_bits_same = row_bits_same && row_bits(fine.node_term, 0) &&
                            row_bits(fine.conductance[0], 0) && row_bits(fine.conductance[1], 0) &&
                            row_bits(fine.conductance[2], 0);
        }
        row_same_[line] = row_bits_same && moved_y[y];
        if (row_bits_same) {
          std::copy(&same_[j0], &same_[j0] + nx, &same_[i0]);
          continue;
        }
        for (std::int64_t x = 2; x < nx; ++x) {
          if (!moved[x]) continue;
          const std::int64_t i = i0 + x;
          bool same = fine.fixed[i] == fine.fixed[i - 2];
          const auto bits = [&](const auto& v, std::int64_t at) {
            return std::memcmp(&v[at], &v[at - 2], sizeof(double)) == 0;
          };
          if (fine.stencil_form())
            for (int k = 0; k < kp && same; ++k) same = bits(fine.stencil, k * np + i);
          else
            same = same && bits(fine.node_term, i) && bits(fine.conductance[0], i) &&
                   bits(fine.conductance[1], i) && bits(fine.conductance[2], i);
          same_[i] = same;
        }
      }
    });
    const std::int64_t plane = nx * ny;
    kernels::for_each_index(0, nz, np >= 32768, [&](std::int64_t z) {
      if (source[z] == z) return;
      std::copy_n(&same_[source[z] * plane], plane, &same_[z * plane]);
      std::copy_n(&row_same_[source[z] * ny], ny, &row_same_[z * ny]);
    });
  }
  // Per finer row (y, z): every row within r of it along y and z is row_same, so that every
  // node of the row repeats, to within r, the node two rows before along y (rows beyond the
  // grid along z hold nothing and are the same for both rows; along y the window lies inside).
  std::vector<std::uint8_t> rows_repeat(int r) const {
    if (row_same_.empty()) return {};
    const std::int64_t ny = n_[1], nz = n_[2];
    std::vector<std::uint8_t> out(row_same_.size(), 0), across(static_cast<std::size_t>(ny));
    // The box axis by axis: per plane, each row's AND over the planes within r, then the run of
    // such rows along y that ends at y + r, which holds 2r + 1 where the window is all same.
    for (std::int64_t z = 0; z < nz; ++z) {
      const std::int64_t z0 = std::max<std::int64_t>(z - r, 0), z1 = std::min(z + r, nz - 1);
      std::copy_n(&row_same_[z0 * ny], ny, across.begin());
      for (std::int64_t q = z0 + 1; q <= z1; ++q)
        for (std::int64_t p = 0; p < ny; ++p) across[p] &= row_same_[q * ny + p];
      std::int64_t run = 0;
      for (std::int64_t p = 0; p < ny; ++p) {
        run = across[p] ? run + 1 : 0;
        if (run >= 2 * r + 1) out[z * ny + p - r] = 1;
      }
    }
    return out;
  }
  // Per finer plane z: every plane within r of it along z is plane_same (the window inside the
  // grid), so that every node of the plane repeats, to within r, the node two planes before.
  std::vector<std::uint8_t> planes_repeat(int r) const {
    if (plane_same_.empty()) return {};
    const std::int64_t nz = n_[2];
    std::vector<std::uint8_t> out(plane_same_.size(), 0);
    for (std::int64_t z = r; z + r < nz; ++z) {
      bool all = true;
      for (std::int64_t q = z - r; q <= z + r && all; ++q) all = plane_same_[q];
      out[z] = all;
    }
    return out;
  }
  // Per finer node, a byte whose bit window(r), for r = kLeastReach ... kMostReach, is set when
  // every node within r of it is same (x beyond the grid is not; y and z beyond it hold
  // nothing and are the same for both nodes); empty where nothing repeats. A box's AND, taken
  // axis by axis: along z and y plane by plane (whole rows at a time), then along x by the
  // length of the run of same nodes ending at each node. The windows are nested, so all of them
  // are taken in one pass: the nodes at distance r along an axis clear bit window(r) and the
  // wider windows' ones, and the AND of the bytes over a box is each window's AND.
  static constexpr int kLeastReach = kWeightsReach, kMostReach = kRowsReach;
  static constexpr std::uint8_t window(int r) {
    return static_cast<std::uint8_t>(1 << (r - kLeastReach));
  }
  std::vector<std::uint8_t> repeats() const {
    constexpr int kWindows = kMostReach - kLeastReach + 1;
    constexpr std::uint8_t kAll = (1 << kWindows) - 1;
    if (same_.empty()) return {};
    const std::int64_t nx = n_[0], ny = n_[1], nz = n_[2], plane = nx * ny;
    // A plane's windows read the same flags of the planes within kMostReach of it, and those of
    // a plane the same bits as the plane before are the plane before's: where every plane
    // within that reach is (plane_sources), the plane's windows are its source plane's, copied.
    const std::vector<std::int64_t>& source = window_source_;
    // The box along z and y first, then (in place, row by row) the runs along x.
    std::vector<std::uint8_t> zy(same_.size());
    kernels::in_team(kernels::worth_threads(nx * ny * nz), [&] {
      std::vector<std::uint8_t> acc(static_cast<std::size_t>(plane));
#pragma omp for schedule(static)
      for (std::int64_t z = 0; z < nz; ++z) {
        if (source[z] != z) continue;
        const std::int64_t z0 = std::max<std::int64_t>(z - kLeastReach, 0),
                           z1 = std::min<std::int64_t>(z + kLeastReach, nz - 1);
        const std::uint8_t* first = same_.data() + z0 * plane;
        for (std::int64_t i = 0; i < plane; ++i) acc[i] = first[i];
        for (std::int64_t q = z0 + 1; q <= z1; ++q) {
          const std::uint8_t* in = same_.data() + q * plane;
          for (std::int64_t i = 0; i < plane; ++i) acc[i] &= in[i];
        }
        for (std::int64_t i = 0; i < plane; ++i) acc[i] = static_cast<std::uint8_t>(acc[i] * kAll);
        // The planes at distance r keep only the narrower windows' bits where not same.
        for (int r = kLeastReach + 1; r <= kMostReach; ++r) {
          const std::uint8_t narrower = static_cast<std::uint8_t>((1 << (r - kLeastReach)) - 1);
          for (const std::int64_t q : {z - r, z + r}) {
            if (q < 0 || q >= nz) continue;
            const std::uint8_t* in = same_.data() + q * plane;
            for (std::int64_t i = 0; i < plane; ++i)
              acc[i] &= static_cast<std::uint8_t>(in[i] ? kAll : narrower);
          }
        }
        for (std::int64_t y = 0; y < ny; ++y) {
          const std::int64_t y0 = std::max<std::int64_t>(y - kLeastReach, 0),
                             y1 = std::min<std::int64_t>(y + kLeastReach, ny - 1);
          std::uint8_t* o = zy.data() + z * plane + y * nx;
          std::copy(acc.begin() + y0 * nx, acc.begin() + (y0 + 1) * nx, o);
          for (std::int64_t q = y0 + 1; q <= y1; ++q) {
            const std::uint8_t* in = acc.data() + q * nx;
            for (std::int64_t x = 0; x < nx; ++x) o[x] &= in[x];
          }
          for (int r = kLeastReach + 1; r <= kMostReach; ++r) {
            const std::uint8_t narrower = static_cast<std::uint8_t>((1 << (r - kLeastReach)) - 1);
            for (const std::int64_t q : {y - r, y + r}) {
              if (q < 0 || q >= ny) continue;
              const std::uint8_t* in = acc.data() + q * nx;
              for (std::int64_t x = 0; x < nx; ++x) o[x] &= in[x] | narrower;
            }
          }
        }
      }
      std::vector<std::uint8_t> in(static_cast<std::size_t>(nx));
#pragma omp for schedule(static)
      for (std::int64_t line = 0; line < ny * nz; ++line) {
        if (source[line / ny] != line / ny) continue;
        std::uint8_t* o = zy.data() + line * nx;
        std::copy_n(o, nx, in.begin());
        std::fill_n(o, nx, 0);
        // Node x - r is inside and its window all same when the run ending at x holds 2r + 1.
        // A stretch [a, b) of equal bytes ends each window's run or lengthens it by b - a, the
        // run ending at x >= a then holding run + x - a + 1 (a line is three or four stretches).
        std::int64_t run[kWindows] = {};
        for (std::int64_t a = 0, b = 0; a < nx; a = b) {
          while (b < nx && in[b] == in[a]) ++b;
          for (int w = 0; w < kWindows; ++w) {
            const int r = kLeastReach + w;
            if (!((in[a] >> w) & 1)) {
              run[w] = 0;
              continue;
            }
            for (std::int64_t x = std::max(a, a + 2 * r - run[w]); x < b; ++x)
              o[x - r] |= window(r);
            run[w] += b - a;
          }
        }
      }
#pragma omp for schedule(static)
      for (std::int64_t z = 0; z < nz; ++z)
        if (source[z] != z) std::copy_n(&zy[source[z] * plane], plane, &zy[z * plane]);
    });
    return zy;
  }

 private:
  std::array<std::int64_t, kMaxDims> n_;
  std::vector<std::uint8_t> same_, row_same_, plane_same_;
  std::vector<std::int64_t> window_source_;  // plane_sources at reach kMostReach
};

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
kernels::LevelFloats prolongation(const LevelOperator& fine, const LevelOperator& c,
                                  const std::array<AxisTransfer, kMaxDims>& t,
                                  const std::vector<std::uint8_t>& repeats, std::uint8_t repeat_bit,
                                  const std::vector<std::uint8_t>& row_copies,
                                  const std::vector<std::uint8_t>& plane_copies) {
  const int dims = fine.dims, kp = stencil_points(dims), centre = stencil_centre(dims);
  const std::int64_t nc = c.points();
  const Grid fg(fine), cg(c);
  // Zeroed by the threads (kernels::UnsetAllocator), which then take its pages' first faults.
  // Each weight is stored rounded to fp32 (LevelOperator::prolongation), and the weights that
  // later ones are computed from are read back rounded.
  kernels::LevelFloats P(static_cast<std::size_t>(kp * nc));
  kernels::for_each_index(0, kp * nc, kp * nc >= 32768, [&](std::int64_t j) { P[j] = 0.0f; });
  for (std::int64_t I = 0; I < nc; ++I)
    if (!c.fixed[I]) P[centre * nc + I] = 1.0f;
  // Per offset k: the axes it moves along (bit a) and those it moves up along.
  int moves[kMaxStencil] = {}, up[kMaxStencil] = {};
  for (int k = 0; k < kp; ++k)
    for (int a = 0; a < dims; ++a) {
      moves[k] |= (stencil_offset(k, a) != 0) << a;
      up[k] |= (stencil_offset(k, a) > 0) << a;
    }
  const int power[3] = {1, 3, 9};
  // Per axis and finer coordinate of a compact 3D level: whether the node and its two
  // neighbours there follow standard coarsening (a coarse coordinate C between finer nodes
  // whose terms are C - 1 and C below it, C and C + 1 above it; a finer node between C and
  // C + 1 beside the coarse coordinates C and C + 1), away from the grid's ends. Nodes standard
  // on every axis take the short form below.
  std::array<std::vector<std::uint8_t>, kMaxDims> standard;
  for (int a = 0; a < kMaxDims; ++a) {
    const std::int64_t n = fine.n[a];
    standard[a].assign(static_cast<std::size_t>(n), 0);
    if (dims != 3 || fine.stencil_form()) continue;
    const auto& from = t[a].from;
    const auto is = [&](std::int64_t g, int term, std::int64_t coarse, int offset) {
      return from[g][term].coarse == coarse && from[g][term].offset == offset;
    };
    for (std::int64_t f = 1; f + 1 < n; ++f) {
      const std::int64_t C = from[f][0].coarse;
      if (from[f][1].coarse < 0)
        standard[a][f] = is(f, 0, C, 0) && is(f - 1, 0, C - 1, 1) && is(f - 1, 1, C, -1) &&
                         is(f + 1, 0, C, 1) && is(f + 1, 1, C + 1, -1);
      else
        standard[a][f] = is(f, 0, C, 1) && is(f, 1, C + 1, -1) && is(f - 1, 0, C, 0) &&
                         from[f - 1][1].coarse < 0 && is(f + 1, 0, C + 1, 0) &&
                         from[f + 1][1].coarse < 0;
    }
  }
  // The compact row's entries in numbering order (z-, y-, x-, x+, y+, z+): the order in which
  // the general form sums a corner's terms.
  constexpr int kSides[6] = {4, 10, 12, 14, 16, 22};
  const bool any_removed =
      std::find(fine.fixed.begin(), fine.fixed.end(), kernels::kRemovedNode) != fine.fixed.end();
  // Whose row sums stay in the denominators. A node beside a held (Dirichlet) node, or one
  // whose row sum (node term, couplings to held nodes) is a good part of its centre, is held:
  // a correction fades toward the held value, and its weights sum to less than 1. Elsewhere
  // the row sum is a floating body's small losses, or what Galerkin products left of them
  // and of rounding, which in a direction of weak couplings (an FR4 board across its layers,
  // a filler layer between metals) can outweigh the couplings the weights divide by and
  // scatter the sums of the weights between 0.4 and 1.8: a near-constant error (every face
  // convective, Biot numbers far below 1) then escapes the coarse levels, and V-cycles took
  // 0.4 % off it per cycle on a power module. There the weights are each side's pulls over
  // the sum of the pulls, and sum to 1.
  const bool any_held = std::find(fine.fixed.begin(), fine.fixed.end(), 1) != fine.fixed.end();
  const std::vector<std::uint8_t> beside_held =
      any_held ? nodes_beside_held(fine) : std::vector<std::uint8_t>(fine.fixed.size(), 0);
  const auto held_row = [&](const Row& row, std::int64_t i) {
    if (beside_held[i]) return true;
    double sum = 0.0;
    for (int e = 0; e < row.count; ++e) sum += row.a[e];
    return std::abs(sum) > kHeldRow * row.centre();
  };
  // Per axis and finer coordinate: whether it lies between two coarse ones.
  std::array<std::vector<std::uint8_t>, kMaxDims> on_between;
  for (int a = 0; a < kMaxDims; ++a) {
    on_between[a].assign(static_cast<std::size_t>(fine.n[a]), 0);
    for (std::int64_t f = 0; a < dims && f < fine.n[a]; ++f)
      on_between[a][f] = t[a].from[f][1].coarse >= 0;
  }
  const auto node = [&](const std::int64_t f[3], std::int64_t i) {
    int between = 0, count = 0;
    for (int a = 0; a < dims; ++a)
      if (t[a].from[f[a]][1].coarse >= 0) {
        between |= 1 << a;
        ++count;
      }
    if (fine.fixed[i]) return;  // (count is the pass's type)
    Row row;
    free_row(fine, fg, f, i, row);
    if (standard[0][f[0]] && standard[1][f[1]] && standard[2][f[2]]) {
      // The general form's sums in its order, a missing entry adding 0: the denominator
      // (a held row) the centre plus the entries along the other axes in row order, or
      // (any other) minus the entries along the between axes, and each corner's weight
      // from the neighbours toward it, one per between axis.
      double a[kMaxStencil];  // the compact offsets only, 0 where the row has no entry
      for (const int k : kSides) a[k] = 0.0;
      for (int e = 0; e < row.count; ++e) a[row.k[e]] = row.a[e];
      double denominator = row.centre();
      if (held_row(row, i)) {
        for (int e = 1; e < row.count; ++e) {
          const int k = row.k[e];
          const int axis = k == 12 || k == 14 ? 0 : k == 10 || k == 16 ? 1 : 2;
          if (!((between >> axis) & 1)) denominator += row.a[e];
        }
      } else {
        denominator = 0.0;
        for (const int k : kSides) {
          const int axis = k == 12 || k == 14 ? 0 : k == 10 || k == 16 ? 1 : 2;
          if ((between >> axis) & 1) denominator -= a[k];
        }
      }
      if (!(denominator > 1e-12 * row.centre())) return;
      for (int corner = 0; corner < 8; ++corner) {
        if (corner & ~between) continue;
        std::int64_t I = 0;
        int from_corner = 0, offset[3];
        for (int b = 2; b >= 0; --b) {
          const AxisTransfer::Term& term = t[b].from[f[b]][(corner >> b) & 1];
          I = I * c.n[b] + term.coarse;
          offset[b] = term.offset;
          from_corner += (term.offset + 1) * power[b];
        }
        if (c.fixed[I]) continue;
        double sum = 0.0;
        for (const int k : kSides) {
          const int axis = k == 12 || k == 14 ? 0 : k == 10 || k == 16 ? 1 : 2;
          const int toward = k > 13;  // the side's direction: 1 up
          if (!((between >> axis) & 1) || ((corner >> axis) & 1) != toward) continue;
          sum -= a[k] * P[(from_corner - offset[axis] * power[axis]) * nc + I];
        }
        P[from_corner * nc + I] = static_cast<float>(sum / denominator);
      }
      return;
    }
    // Summed over the offsets along the axes where the node is a coarse coordinate. Away
    // from held nodes, without the positive entries off the centre (a Galerkin level's
    // 27-point rows have many, some larger than the centre): they would push a neighbour's
    // error away rather than pull it, and with the row sum out of the denominator could
    // leave it near 0 or below; as AMG does, the weights come from the pulls alone, and
    // are then positive.
    const bool held = held_row(row, i);
    double collapsed[kMaxStencil] = {};
    for (int e = 0; e < row.count; ++e) {
      if (!held && e > 0 && row.a[e] > 0.0) continue;
      int to = centre;
      for (int a = 0; a < dims; ++a)
        if ((between >> a) & 1) to += stencil_offset(row.k[e], a) * power[a];
      collapsed[to] += row.a[e];
    }
    // A neighbour in line that is removed (inside a void) gathers the couplings of the
    // free nodes beside it, which are no coarse nodes: their error is taken as the node's
    // own (insulated, as at a void's surface), not as 0 (held, as at a Dirichlet node),
    // so that interpolation beside a void keeps constants.
    double denominator = collapsed[centre];
    if (any_removed)
      for (int k = 0; k < kp; ++k) {
        std::int64_t j[3];
        if (k == centre || collapsed[k] == 0.0 || !fg.neighbour(f, k, j)) continue;
        if (fine.fixed[fg.index(j)] != kernels::kRemovedNode) continue;
        denominator += collapsed[k];
        collapsed[k] = 0.0;
      }
    if (!held) {
      denominator = 0.0;
      for (int k = 0; k < kp; ++k)
        if (k != centre) denominator -= collapsed[k];
    }
    if (!(denominator > 1e-12 * row.centre())) return;  // no path along the axes: no value
    int nonzero[kMaxStencil], nnz = 0;
    for (int k = 0; k < kp; ++k)
      if (k != centre && collapsed[k] != 0.0) nonzero[nnz++] = k;
    // Each corner of the coarse cell around the node: bit a picks the lower (0) or upper (1)
    // coarse node on an axis where the node lies between two.
    for (int corner = 0; corner < (1 << dims); ++corner) {
      if (corner & ~between) continue;
      std::int64_t C[3] = {0, 0, 0};
      int offset[3] = {0, 0, 0}, from_corner = 0;
      for (int a = 0; a < dims; ++a) {
        const AxisTransfer::Term& term = t[a].from[f[a]][(corner >> a) & 1];
        C[a] = term.coarse;
        offset[a] = term.offset;
        from_corner += (term.offset + 1) * power[a];
      }
      const std::int64_t I = cg.index(C);
      if (c.fixed[I]) continue;
      double sum = 0.0;
      for (int e = 0; e < nnz; ++e) {
        const int k = nonzero[e];
        // The neighbour at offset k (non-zero only along `between` axes) is coarse along
        // each axis it moves on: it counts toward this corner only where it moves toward
        // it, and sits at the corner's coordinate there.
        if ((corner ^ up[k]) & moves[k]) continue;
        int at = from_corner;
        for (int a = 0; a < dims; ++a)
          if ((moves[k] >> a) & 1) at -= offset[a] * power[a];
        sum -= collapsed[k] * P[at * nc + I];
      }
      P[from_corner * nc + I] = static_cast<float>(sum / denominator);
    }
  };
  // Finer nodes between coarse ones along `type` axes, after those along fewer; each row in
  // x order on one thread (a weight copied from two nodes before is there already).
  const auto weights_row = [&](int type, std::int64_t z, std::int64_t y) {
    const int yz = on_between[1][y] + on_between[2][z];
    if (yz > type) return;
    // For the copies (repeats, on a 3D level only): per corner's y and z bits, the start of
    // its coarse row and its offsets' part of the weight's offset k, the same along the row,
    // so that a copied node looks up its x terms alone.
    std::int64_t corner_row[4] = {};
    int corner_offset[4] = {};
    for (int yz_bits = 0; yz_bits < 4 && !repeats.empty(); ++yz_bits) {
      const AxisTransfer::Term& ty = t[1].from[y][yz_bits & 1];
      const AxisTransfer::Term& tz = t[2].from[z][yz_bits >> 1];
      corner_row[yz_bits] = (tz.coarse * c.n[1] + ty.coarse) * c.n[0];
      corner_offset[yz_bits] = (tz.offset + 1) * power[2] + (ty.offset + 1) * power[1];
    }
    const int yz_between = on_between[1][y] << 1 | on_between[2][z] << 2;
    const bool copied_row = !row_copies.empty() && row_copies[z * fine.n[1] + y];
    if (copied_row) {
      // The row's weights are those of the coarse row before, run by run: a weight's offset k
      // names its finer node's row (y and z parts) and x part, and on a non-periodic axis a
      // node between two coarse ones is the one with offsets -1 and +1, so the weights of this
      // pass's nodes are the runs of the corners' coarse rows at the offsets of this pass's
      // type, whole (the coarse row before written before this row, on this thread). A run's
      // other values belong to no finer node, or to a held one (these rows' nodes are held as
      // the row two before's): +0 in both rows.
      for (int yz_bits = 0; yz_bits < 4; ++yz_bits) {
        if ((yz_bits << 1) & ~yz_between) continue;
        for (int ox = 0; ox < 3; ++ox) {
          if (yz + (ox != 1) != type) continue;
          float* run = &P[(corner_offset[yz_bits] + ox) * nc + corner_row[yz_bits]];
          std::copy(run - c.n[0], run, run);
        }
      }
      return;
    }
    // Node x's weights copied from those of the coarse nodes one before along x (a repeat).
    const auto copy_weights = [&](std::int64_t x, int yz_bits) {
      const int between = on_between[0][x] | yz_bits;
      for (int corner = 0; corner < 8; ++corner) {
        if (corner & ~between) continue;
        const AxisTransfer::Term& tx = t[0].from[x][corner & 1];
        const std::int64_t I = corner_row[corner >> 1] + tx.coarse;
        const int from_corner = corner_offset[corner >> 1] + tx.offset + 1;
        P[from_corner * nc + I] = P[from_corner * nc + I - 1];
      }
    };
    for (std::int64_t x = 0; x < fine.n[0]; ++x) {
      if (on_between[0][x] + yz != type) continue;
      const std::int64_t i = (z * fine.n[1] + y) * fine.n[0] + x;
      if (!repeats.empty() && (repeats[i] & repeat_bit) && !fine.fixed[i]) {
        // The weights of the node two before along x, toward the coarse nodes one before.
        copy_weights(x, yz_between);
        continue;
      }
      const std::int64_t f[3] = {x, y, z};
      node(f, i);
    }
  };
  // Per finer plane, the computed plane whose weights it takes where its neighbourhood repeats
  // the plane two before (plane_copies): the nearest plane of its parity back along the run of
  // copies that is computed, its weights moved up by (z - source) / 2 coarse planes.
  std::vector<std::int64_t> plane_source;
  if (!plane_copies.empty()) {
    plane_source.assign(static_cast<std::size_t>(fine.n[2]), -1);
    for (std::int64_t z = 2; z < fine.n[2]; ++z)
      if (plane_copies[z]) plane_source[z] = plane_copies[z - 2] ? plane_source[z - 2] : z - 2;
  }
  const std::int64_t coarse_plane = c.n[0] * c.n[1];
  // No team below 4096 nodes (kernels::in_team's reason).
  const bool threaded = fine.points() >= 4096;
  for (int type = 1; type <= dims; ++type) {
    if (row_copies.empty() && plane_source.empty()) {
      if (threaded) {
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
        for (std::int64_t z = 0; z < fine.n[2]; ++z)
          for (std::int64_t y = 0; y < fine.n[1]; ++y) weights_row(type, z, y);
      } else {
        for (std::int64_t z = 0; z < fine.n[2]; ++z)
          for (std::int64_t y = 0; y < fine.n[1]; ++y) weights_row(type, z, y);
      }
      continue;
    }
    // A copied row reads the row two before it: each plane's rows in order on one thread.
    const auto plane_rows = [&](std::int64_t z) {
      if (!plane_source.empty() && plane_source[z] >= 0) return;  // copied below
      for (std::int64_t y = 0; y < fine.n[1]; ++y) weights_row(type, z, y);
    };
    if (threaded) {
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t z = 0; z < fine.n[2]; ++z) plane_rows(z);
    } else {
      for (std::int64_t z = 0; z < fine.n[2]; ++z) plane_rows(z);
    }
    // A copied plane's weights of this pass, as a copied row's (above) but whole coarse planes:
    // the runs of the corners' coarse planes at the offsets of this pass's type, each the run
    // of the source's coarse plane (computed above), the same bits.
    if (plane_source.empty()) continue;
    kernels::for_each_index(0, fine.n[2], fine.points() >= 4096, [&](std::int64_t z) {
      const std::int64_t from = plane_source[z];
      if (from < 0) return;
      const int between_z = on_between[2][z];
      for (int zb = 0; zb <= between_z; ++zb) {
        const AxisTransfer::Term& tz = t[2].from[z][zb];
        const AxisTransfer::Term& tf = t[2].from[from][zb];
        for (int oy = 0; oy < 3; ++oy)
          for (int ox = 0; ox < 3; ++ox) {
            if (between_z + (oy != 1) + (ox != 1) != type) continue;
            const std::int64_t k = (tz.offset + 1) * power[2] + oy * power[1] + ox;
            const float* run = &P[k * nc + tf.coarse * coarse_plane];
            std::copy(run, run + coarse_plane, &P[k * nc + tz.coarse * coarse_plane]);
          }
      }
    });
  }
  return P;
}

// Standard coarsening seen from a finer node inside a 3D grid: per axis, a node on a coarse
// coordinate (C = 1 own term, slot 1) has neighbours between two coarse nodes (2 terms: slots
// 0, 1 below it, 1, 2 above), and a node between two (C = 2, slots 1, 2) has coarse
// neighbours (slot 1 below, 2 above). The counts and slots of a term of A P, by the axis's C
// and the row entry's offset o there.
constexpr int standard_count(int C, int o) { return o == 0 ? C : 3 - C; }
constexpr int standard_slot(int C, int o, int t) {
  return o == 0 ? 1 + t : o < 0 ? (C == 1 ? t : 1) : (C == 1 ? 1 + t : 2);
}

// A P's row of a finer node under standard coarsening on all three axes, own term counts CX,
// CY, CZ: the sums of the general loop (entries in row order, terms z, y, x), with every count
// and slot known, so that the loops unroll and the 27 sums stay in registers. a: the row's
// entries by offset (0 where there is none), w: each neighbour's eight staged weights.
template <int CX, int CY, int CZ, int K>
inline void standard_ap_entry(const double* a, const double* const* w, double* sum) {
  constexpr int ox = K % 3 - 1, oy = K / 3 % 3 - 1, oz = K / 9 - 1;
  const double ak = a[K];
  const double* wk = w[K];
  for (int tz = 0; tz < standard_count(CZ, oz); ++tz)
    for (int ty = 0; ty < standard_count(CY, oy); ++ty)
      for (int tx = 0; tx < standard_count(CX, ox); ++tx)
        sum[standard_slot(CX, ox, tx) + 3 * standard_slot(CY, oy, ty) +
            9 * standard_slot(CZ, oz, tz)] += ak * wk[tx + 2 * ty + 4 * tz];
}

template <int CX, int CY, int CZ, int... K>
inline void standard_ap_entries(const double* a, const double* const* w, double* out,
                                std::integer_sequence<int, K...>) {
  double sum[kMaxStencil] = {};
  (standard_ap_entry<CX, CY, CZ, K>(a, w, sum), ...);
  for (int s = 0; s < kMaxStencil; ++s) out[s] = sum[s];
}

// Row order: the centre, then (compact) x-, x+, y-, y+, z-, z+, or (stencil) every other
// offset in numbering order.
using CompactOrder = std::integer_sequence<int, 13, 12, 14, 10, 16, 4, 22>;
using StencilOrder = std::integer_sequence<int, 13, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14,
                                           15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26>;

template <int CX, int CY, int CZ, bool kStencil>
void standard_ap_row(const double* a, const double* const* w, double* out) {
  if constexpr (kStencil)
    standard_ap_entries<CX, CY, CZ>(a, w, out, StencilOrder{});
  else
    standard_ap_entries<CX, CY, CZ>(a, w, out, CompactOrder{});
}

template <bool kStencil>
void standard_ap_row(int cx, int cy, int cz, const double* a, const double* const* w, double* out) {
  switch ((cx - 1) + 2 * (cy - 1) + 4 * (cz - 1)) {
    case 0:
      return standard_ap_row<1, 1, 1, kStencil>(a, w, out);
    case 1:
      return standard_ap_row<2, 1, 1, kStencil>(a, w, out);
    case 2:
      return standard_ap_row<1, 2, 1, kStencil>(a, w, out);
    case 3:
      return standard_ap_row<2, 2, 1, kStencil>(a, w, out);
    case 4:
      return standard_ap_row<1, 1, 2, kStencil>(a, w, out);
    case 5:
      return standard_ap_row<2, 1, 2, kStencil>(a, w, out);
    case 6:
      return standard_ap_row<1, 2, 2, kStencil>(a, w, out);
    default:
      return standard_ap_row<2, 2, 2, kStencil>(a, w, out);
  }
}

// The coarse row of a coarse node whose children follow standard coarsening on all three axes
// (child d = o + 1 at fine offset o: base shift -1, 0, 0 and first slot 1, 0, 1), in gather
// form: each entry K sums, over the children that reach it in the general loop's order (z, y,
// x), weight times A P at the child's slot, so that each sum is one register and no
// accumulator array is read back. wf: the children's weights, ap: their rows of A P.
void standard_coarse_row(const double* wf, const double* const* ap, double* row) {
  // Per axis and K + 1: the children d reaching K and the slot there (K = shift + slot - 1).
  struct Reach {
    int count;
    int d[3], slot[3];
  };
  static constexpr Reach kReach[3] = {
      {2, {0, 1, 0}, {1, 0, 0}}, {3, {0, 1, 2}, {2, 1, 1}}, {2, {1, 2, 0}, {2, 2, 0}}};
  for (int kz = 0; kz < 3; ++kz)
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        const Reach &rz = kReach[kz], &ry = kReach[ky], &rx = kReach[kx];
        double sum = 0.0;
        for (int iz = 0; iz < rz.count; ++iz)
          for (int iy = 0; iy < ry.count; ++iy)
            for (int ix = 0; ix < rx.count; ++ix) {
              const int child = rx.d[ix] + 3 * ry.d[iy] + 9 * rz.d[iz];
              sum += wf[child] * ap[child][rx.slot[ix] + 3 * ry.slot[iy] + 9 * rz.slot[iz]];
            }
        row[kx + 3 * ky + 9 * kz] = sum;
      }
}

// The Galerkin stencil P^T A P of coarse level c (its prolongation set) over the free nodes,
// in two steps per coarse plane across z: the rows of A P on the finer planes around it (each
// finer node's row of A times the prolongation of its neighbours, over the at most 3 coarse
// nodes per axis they reach), then each coarse row as P^T times those. A finer plane's A P
// serves the two coarse planes beside it.
// `copied`, when given: per coarse plane, 1 where the plane is written whole as the plane before's
// (planes_as_before's `known` for the level below).
kernels::LevelWeights galerkin(const LevelOperator& fine, const LevelOperator& c,
                               const std::array<AxisTransfer, kMaxDims>& t, const XRepeats& repeats,
                               const std::vector<std::uint8_t>& windows,
                               std::vector<std::uint8_t>* copied) {
  const int dims = fine.dims, kp = stencil_points(dims);
  const std::int64_t nc = c.points();
  const Grid fg(fine), cg(c);
  const kernels::LevelFloats& P = c.prolongation;
  const int my = dims > 1 ? 3 : 0, mz = dims > 2 ? 9 : 0;  // offset numbering, used axes only
  // A slot sum this large marks a coupling beyond one coarse node.
  constexpr int kFar = 1000;
  // Per axis and finer coordinate f: its lowest coarse node (base) and, per offset o in -1..1,
  // the coarse nodes J of the finer node f + o, each premultiplied by its axis's place so that
  // a term of A P sums its three axes' parts: slot (J - base + 1) in A P's 3 x 3 x 3 layout
  // (kFar when J is beyond one coarse node), and weight, the index in P of the weight of J
  // at the finer node's offset from it.
  struct Term {
    int slot;
    std::int64_t weight;
  };
  // `whole`: one or two terms, none beyond one coarse node, a second term (weight 0 in the
  // staged weights) repeating the first's slot when there is one: A P can add all 2 x 2 x 2
  // products of a neighbour's terms without a test, the missing ones adding zeros.
  struct Near {
    int count = 0;
    Term term[2];
    bool whole = false;
  };
  std::array<std::vector<std::int64_t>, kMaxDims> base;
  std::array<std::vector<Near>, kMaxDims> near;
  for (int a = 0; a < kMaxDims; ++a) {
    const std::int64_t n = fine.n[a];
    base[a].assign(static_cast<std::size_t>(n), 0);
    near[a].assign(3 * static_cast<std::size_t>(n), Near{});
    for (std::int64_t f = 0; f < n; ++f) {
      if (a >= dims) {
        near[a][3 * f + 1] = Near{1, {{a == 1 ? 3 : 9, 0}, {0, 0}}};
        continue;
      }
      base[a][f] = t[a].from[f][0].coarse;
      for (int o = -1; o <= 1; ++o) {
        const std::int64_t g = fg.step(a, f, o);
        if (g < 0) continue;
        Near& e = near[a][3 * f + o + 1];
        for (const AxisTransfer::Term& term : t[a].from[g]) {
          if (term.coarse < 0) continue;
          std::int64_t slot = term.coarse - base[a][f];
          if (c.periodic[a]) {
            if (slot > 1) slot -= c.n[a];
            if (slot < -1) slot += c.n[a];
          }
          const int slot_place = a == 0 ? 1 : a == 1 ? 3 : 9;
          const std::int64_t og_place = a == 0 ? 1 : a == 1 ? my : mz;
          const std::int64_t place = a == 0 ? 1 : a == 1 ? c.n[0] : c.n[0] * c.n[1];
          e.term[e.count++] = {
              slot < -1 || slot > 1 ? kFar : static_cast<int>(slot + 1) * slot_place,
              (term.offset + 1) * og_place * nc + term.coarse * place};
        }
      }
    }
  }
  for (auto& axis : near)
    for (Near& e : axis) {
      e.whole = e.count >= 1 && e.term[0].slot < kFar && (e.count == 1 || e.term[1].slot < kFar);
      if (e.count == 1) e.term[1].slot = e.term[0].slot;
    }
  // Per axis and finer coordinate: whether the node and its two neighbours there follow
  // standard coarsening (standard_slot), in a 3D grid away from its ends; such nodes take
  // standard_ap_row.
  std::array<std::vector<std::uint8_t>, kMaxDims> standard;
  for (int a = 0; a < kMaxDims; ++a) {
    const std::int64_t n = fine.n[a];
    standard[a].assign(static_cast<std::size_t>(n), 0);
    if (dims != 3) continue;
    const int slot_place = a == 0 ? 1 : a == 1 ? 3 : 9;
    for (std::int64_t f = 1; f + 1 < n; ++f) {
      const int C = near[a][3 * f + 1].count;
      bool ok = C == 1 || C == 2;
      for (int o = -1; o <= 1 && ok; ++o) {
        const Near& e = near[a][3 * f + o + 1];
        ok = e.whole && e.count == standard_count(C, o);
        for (int t = 0; t < e.count && ok; ++t)
          ok = e.term[t].slot == standard_slot(C, o, t) * slot_place;
      }
      standard[a][f] = ok;
    }
  }
  const std::int64_t plane = fine.n[0] * fine.n[1];
  const float* Pw = P.data();
  // Where a finer node's A P row, and a coarse node's row (at its finer node), are those of the
  // node before along x (windows, XRepeats::repeats, of r = 3 for both: A P reads the weights of
  // the nodes around, each from two nodes around it; a coarse row the weights and A P of its
  // children: XRepeats::kProductReach and kRowsReach).
  // (By value: the byte stores of the loops that call them cannot then alias what they read.)
  const std::uint8_t* const window_bits = windows.data();
  const auto ap_repeats = [window_bits](std::int64_t i) {
    return (window_bits[i] & XRepeats::window(XRepeats::kProductReach)) != 0;
  };
  const auto row_repeats = [window_bits](std::int64_t i) {
    return (window_bits[i] & XRepeats::window(XRepeats::kRowsReach)) != 0;
  };
  // Where rows repeat, most of them are copied and read nothing, so most A P rows and staged
  // weights would be computed for no reader. Marked below, once the tables are built (empty:
  // every one is needed): per coarse node, whether its row is computed (neither fixed nor a
  // copy), the only rows that read their weights and their children's A P; per finer node,
  // whether its A P row is read (by such a row, or by a read A P row copied from it), and
  // whether its weights are staged (within one node, per axis, of an A P row computed rather
  // than copied). What is still read is computed by the same operations as before.
  std::vector<std::uint8_t> coarse_computed, ap_read, weights_read;
  // The prolongation's row of each finer node of plane z, its weights at [(y nx + x) 8 + tx +
  // 2 ty + 4 tz] (below 3D [(y nx + x) 4 + tx + 2 ty]) over its own terms per axis
  // (near[a][3 f + 1]), 0 for a term it lacks. A P reads a neighbour's weights there,
  // contiguous values, rather than gathering them from P's 27 arrays (59 MB at 129^3) once per
  // row entry.
  // Threads: a 3D level's coarse planes shared out in blocks, each thread computing the finer
  // planes its block needs (one plane twice where two blocks meet), so that a level takes one
  // parallel region and no barrier per plane; a 2D level's rows within its one plane.
  const bool by_planes = dims == 3 && c.n[2] >= 8 && fine.points() >= 32768;
  [[maybe_unused]] const bool by_rows = !by_planes && plane >= 4096;
  // By planes, whole coarse rows whose finer row's neighbourhood (three finer rows each way along
  // y and z) repeats the one two finer rows before along y (XRepeats::rows_repeat): such a row is
  // the coarse row before, which the same thread wrote just before it, and is taken from there.
  const std::vector<std::uint8_t> row_copies =
      by_planes ? repeats.rows_repeat(XRepeats::kRowsReach) : std::vector<std::uint8_t>{};
  // And whole coarse planes whose finer plane's neighbourhood (three finer planes each way along
  // z) repeats the one two finer planes before (XRepeats::planes_repeat): such a plane's rows are
  // the coarse plane before's, which the same thread wrote just before it (not a block's first).
  const std::vector<std::uint8_t> plane_copies =
      by_planes ? repeats.planes_repeat(XRepeats::kRowsReach) : std::vector<std::uint8_t>{};
  // Below 3D the one plane is the whole finer level, and every node has one term along z: its
  // staged weights are the four of tz = 0, and its A P row the nine slots of z offset 0
  // (9..17, all that such a row reaches), 13 doubles a finer node rather than 35 (280 bytes
  // a node held while the first coarse level is built).
  const int w_stride = dims > 2 ? 8 : 4, wz = dims > 2 ? 2 : 1;
  const int ap_stride = dims > 2 ? kMaxStencil : 9, ap_first = dims > 2 ? 0 : 9;
  auto weights_plane = [&](std::int64_t z, kernels::LevelWeights& pw) {
    pw.resize(static_cast<std::size_t>(plane * w_stride));
    const Near& ez = near[2][3 * z + 1];
    kernels::for_each_index(0, fine.n[1], by_rows, [&](std::int64_t y) {
      const Near& ey = near[1][3 * y + 1];
      const std::uint8_t* read =
          weights_read.empty() ? nullptr : &weights_read[(z * fine.n[1] + y) * fine.n[0]];
      for (std::int64_t x = 0; x < fine.n[0]; ++x) {
        if (read && !read[x]) continue;
        const Near& ex = near[0][3 * x + 1];
        double* out = &pw[static_cast<std::size_t>((y * fine.n[0] + x) * w_stride)];
        for (int tz = 0; tz < wz; ++tz)
          for (int ty = 0; ty < 2; ++ty)
            for (int tx = 0; tx < 2; ++tx)
              out[tx + 2 * ty + 4 * tz] =
                  tx < ex.count && ty < ey.count && tz < ez.count
                      ? Pw[ex.term[tx].weight + ey.term[ty].weight + ez.term[tz].weight]
                      : 0.0;
      }
    });
  };
  // A thread's finer planes in hand: the weights of four (a plane's A P needs those of z - 1,
  // z and z + 1) and A P of three (a coarse plane needs those around it). Neither is filled
  // first (kernels::UnsetAllocator): a value is read only where written, so where rows repeat
  // most of their pages are never touched.
  struct Planes {
    std::array<std::int64_t, 4> weights_z{-1, -1, -1, -1};
    std::array<kernels::LevelWeights, 4> weights;
    std::array<std::int64_t, 3> held{-1, -1, -1};
    std::array<kernels::LevelWeights, 3> ap;
  };
  // A P on finer plane z, into ap[(y nx + x) ap_stride + slot - ap_first] (every slot of a row
  // that is read written, so the three buffers are sized once and never cleared).
  auto compute_plane = [&](std::int64_t z, kernels::LevelWeights& ap, Planes& in_hand,
                           std::atomic<bool>& far) {
    std::array<std::int64_t, 4>& weights_z = in_hand.weights_z;
    ap.resize(static_cast<std::size_t>(plane * ap_stride));
    // The weights of planes z - 1, z, z + 1 (wrapped on a periodic axis; none beyond an end).
    std::array<std::int64_t, 3> around_z{-1, dims > 2 ? -1 : 0, -1};
    if (dims > 2)
      for (int o = -1; o <= 1; ++o) around_z[o + 1] = fg.step(2, z, o);
    std::array<const double*, 3> pw{nullptr, nullptr, nullptr};
    for (int o = 0; o < 3; ++o) {
      if (around_z[o] < 0) continue;
      int b = 0;
      while (b < 4 && weights_z[b] != around_z[o]) ++b;
      if (b == 4) {
        b = 0;  // a slot whose plane this one does not need (four slots, three needed)
        while (weights_z[b] >= 0 && (weights_z[b] == around_z[0] || weights_z[b] == around_z[1] ||
                                     weights_z[b] == around_z[2]))
          ++b;
        weights_plane(around_z[o], in_hand.weights[b]);
        weights_z[b] = around_z[o];
      }
      pw[o] = in_hand.weights[b].data();
    }
    kernels::for_each_index(0, fine.n[1], by_rows, [&](std::int64_t y) {
      // The last node of each parity along x whose row is at hand (a copy's source).
      std::int64_t last[2] = {-1, -1};
      for (std::int64_t x = 0; x < fine.n[0]; ++x) {
        const std::int64_t f[3] = {x, y, z}, i = fg.index(f);
        if (!ap_read.empty() && !ap_read[i]) continue;
        const std::int64_t from = last[x & 1];
        last[x & 1] = x;
        double* ap_row = &ap[static_cast<std::size_t>((y * fine.n[0] + x) * ap_stride)];
        if (!windows.empty() && ap_repeats(i)) {
          const double* source = &ap[static_cast<std::size_t>((y * fine.n[0] + from) * ap_stride)];
          std::copy(source, source + ap_stride, ap_row);
          continue;
        }
        if (!fine.fixed[i] && standard[0][x] && standard[1][y] && standard[2][z]) {
          Row row;
          free_row(fine, fg, f, i, row);
          // The row's entries by offset, 0 where it has none (a compact row: its seven only).
          double a[kMaxStencil];
          if (fine.stencil_form())
            std::fill_n(a, kMaxStencil, 0.0);
          else
            for (const int k : {4, 10, 12, 13, 14, 16, 22}) a[k] = 0.0;
          const double* w[kMaxStencil];
          for (int k = 0; k < kMaxStencil; ++k) {
            // Every neighbour exists away from the grid's ends; one without an entry adds 0.
            const int ox = k % 3, oy = k / 3 % 3, oz = k / 9;
            w[k] = pw[oz] + ((y + oy - 1) * fine.n[0] + x + ox - 1) * w_stride;
          }
          for (int e = 0; e < row.count; ++e) a[row.k[e]] = row.a[e];
          const int cx = near[0][3 * x + 1].count, cy = near[1][3 * y + 1].count,
                    cz = near[2][3 * z + 1].count;
          if (fine.stencil_form())
            standard_ap_row<true>(cx, cy, cz, a, w, ap_row);
          else
            standard_ap_row<false>(cx, cy, cz, a, w, ap_row);
          continue;
        }
        double out[kMaxStencil] = {};
        if (!fine.fixed[i]) {
          Row row;
          free_row(fine, fg, f, i, row);
          for (int e = 0; e < row.count; ++e) {
            const int k = row.k[e];
            const int ox = stencil_offset(k, 0) + 1, oy = (dims > 1 ? stencil_offset(k, 1) : 0) + 1,
                      oz = (dims > 2 ? stencil_offset(k, 2) : 0) + 1;
            const Near& ex = near[0][3 * x + ox];
            const Near& ey = near[1][3 * y + oy];
            const Near& ez = near[2][3 * z + oz];
            // The neighbour's weights (it exists: the row holds no entry toward none).
            const double* pj =
                pw[oz] + (fg.steps[1][3 * y + oy] * fine.n[0] + fg.steps[0][3 * x + ox]) * w_stride;
            const double a = row.a[e];
            if (ex.whole && ey.whole && ez.whole) {
              // The same sums in the same order as below, with zeros added where a term or
              // its weight is missing (which leaves every sum as it was).
              for (int tz = 0; tz < wz; ++tz)
                for (int ty = 0; ty < 2; ++ty) {
                  const int slot_zy = ey.term[ty].slot + ez.term[tz].slot;
                  const double* p_zy = pj + 2 * ty + 4 * tz;
                  out[slot_zy + ex.term[0].slot] += a * p_zy[0];
                  out[slot_zy + ex.term[1].slot] += a * p_zy[1];
                }
              continue;
            }
            for (int tz = 0; tz < ez.count; ++tz)
              for (int ty = 0; ty < ey.count; ++ty) {
                const int slot_zy = ey.term[ty].slot + ez.term[tz].slot;
                const double* p_zy = pj + 2 * ty + 4 * tz;
                for (int tx = 0; tx < ex.count; ++tx) {
                  const double w = p_zy[tx];
                  if (w == 0.0) continue;
                  const int slot = slot_zy + ex.term[tx].slot;
                  if (slot >= kFar) {
                    far = true;
                    continue;
                  }
                  out[slot] += row.a[e] * w;
                }
              }
          }
        }
        std::copy(out + ap_first, out + ap_first + ap_stride, ap_row);
      }
    });
  };
  // Per axis, coarse coordinate C and offset o ([3 C + o + 1]): the finer coordinate
  // fine_index(C) + o (-1: none, or a coarse node itself), its base minus C (-1 or 0), and its
  // first slot in A P: 1 for a finer node between two coarse ones (its row reaches base and
  // the next coarse node only), else 0.
  std::array<std::vector<std::int64_t>, kMaxDims> child;
  std::array<std::vector<int>, kMaxDims> shift, first;
  for (int a = 0; a < kMaxDims; ++a) {
    child[a].assign(3 * static_cast<std::size_t>(c.n[a]), -1);
    shift[a].assign(3 * static_cast<std::size_t>(c.n[a]), 0);
    first[a].assign(3 * static_cast<std::size_t>(c.n[a]), 0);
    for (std::int64_t C = 0; C < c.n[a]; ++C)
      for (int o = -1; o <= 1; ++o) {
        const std::int64_t f = a < dims ? fg.step(a, c.fine_index[a][C], o) : (o == 0 ? 0 : -1);
        if (f < 0) continue;
        std::int64_t d = base[a][f] - C;
        if (c.periodic[a] && d > 1) d -= c.n[a];
        if (c.periodic[a] && d < -1) d += c.n[a];
        if (d < -1 || d > 0) continue;  // another coarse node, which takes no weight from C
        child[a][3 * C + o + 1] = f;
        shift[a][3 * C + o + 1] = static_cast<int>(d);
        first[a][3 * C + o + 1] = a < dims && t[a].from[f][1].coarse >= 0 ? 1 : 0;
      }
  }
  // Per axis and coarse coordinate: whether its children are those of standard coarsening
  // (standard_coarse_row).
  std::array<std::vector<std::uint8_t>, kMaxDims> coarse_standard;
  for (int a = 0; a < kMaxDims; ++a) {
    coarse_standard[a].assign(static_cast<std::size_t>(c.n[a]), 0);
    if (dims != 3) continue;
    for (std::int64_t C = 0; C < c.n[a]; ++C) {
      bool ok = true;
      for (int o = -1; o <= 1 && ok; ++o) {
        const std::size_t at = 3 * static_cast<std::size_t>(C) + o + 1;
        ok = child[a][at] >= 0 && shift[a][at] == (o < 0 ? -1 : 0) && first[a][at] == (o != 0);
      }
      coarse_standard[a][C] = ok;
    }
  }
  if (!windows.empty()) {
    // (windows: a 3D level, no axis periodic, so no window below wraps.)
    coarse_computed.assign(static_cast<std::size_t>(nc), 0);
    kernels::for_each_index(0, c.n[2] * c.n[1], nc >= 32768, [&](std::int64_t ZY) {
      const std::int64_t Z = ZY / c.n[1], Y = ZY % c.n[1];
      const std::int64_t line = c.fine_index[2][Z] * fine.n[1] + c.fine_index[1][Y];
      const std::int64_t i0 = line * fine.n[0];
      const bool copied_row = !row_copies.empty() && row_copies[line];
      for (std::int64_t X = 0; X < c.n[0]; ++X)
        coarse_computed[ZY * c.n[0] + X] =
            !copied_row && !c.fixed[ZY * c.n[0] + X] && !row_repeats(i0 + c.fine_index[0][X]);
    });
    // A P is computed where it is read only if computing it elsewhere could change nothing but
    // itself: a term beyond one coarse node, which sets `far` (and throws) wherever it is met,
    // keeps every row computed.
    bool any_far = false;
    for (const auto& axis : near)
      for (const Near& e : axis)
        for (int k = 0; k < e.count; ++k) any_far = any_far || e.term[k].slot >= kFar;
    if (!any_far) {
      // Per axis and finer coordinate, the coarse coordinates whose children include it.
      std::array<std::vector<std::vector<std::int64_t>>, kMaxDims> parents;
      for (int a = 1; a < kMaxDims; ++a) {
        parents[a].resize(static_cast<std::size_t>(fine.n[a]));
        for (std::int64_t C = 0; C < c.n[a]; ++C)
          for (int o = 0; o < 3; ++o) {
            const std::int64_t f = child[a][3 * C + o];
            if (f >= 0) parents[a][f].push_back(C);
          }
      }
      const std::int64_t nx = fine.n[0], ny = fine.n[1], nz = fine.n[2];
      ap_read.assign(static_cast<std::size_t>(fine.points()), 0);
      weights_read.assign(static_cast<std::size_t>(fine.points()), 0);
      // Per finer row, whether any A P row of it is read (most rows, where rows repeat, have
      // none, and then neither pass below has anything to do around them).
      std::vector<std::uint8_t> row_read(static_cast<std::size_t>(nz * ny), 0);
      kernels::in_team(kernels::worth_threads(fine.points()), [&] {
#pragma omp for schedule(static)
        for (std::int64_t zy = 0; zy < nz * ny; ++zy) {
          std::uint8_t* read = &ap_read[zy * nx];
          bool any = false;
          for (const std::int64_t Z : parents[2][zy / ny])
            for (const std::int64_t Y : parents[1][zy % ny]) {
              const std::uint8_t* computed = &coarse_computed[(Z * c.n[1] + Y) * c.n[0]];
              for (std::int64_t X = 0; X < c.n[0]; ++X) {
                if (!computed[X]) continue;
                for (int o = 0; o < 3; ++o)
                  if (child[0][3 * X + o] >= 0) read[child[0][3 * X + o]] = 1;
                any = true;
              }
            }
          if (!any) continue;
          row_read[zy] = 1;
          // A copied row is that of the node two before, and so of every node back along the
          // run of copies: it is copied from the nearest one of them that is at hand, the first
          // read one or else the run's first node (computed), which is then needed.
          const auto copied = [&](std::int64_t x) { return ap_repeats(zy * nx + x); };
          for (std::int64_t x = nx - 1; x >= 2; --x) {
            if (!read[x] || !copied(x)) continue;
            std::int64_t j = x - 2;
            while (j >= 2 && copied(j) && !read[j]) j -= 2;
            read[j] = 1;
          }
        }
        // The weights around each A P row computed (not copied; a fixed node's reads none).
        std::vector<std::uint8_t> around(static_cast<std::size_t>(nx));
#pragma omp for schedule(static)
        for (std::int64_t zy = 0; zy < nz * ny; ++zy) {
          const std::int64_t z = zy / ny, y = zy % ny;
          std::uint8_t* near_read = around.data();
          std::fill_n(near_read, nx, 0);
          bool any = false;
          for (std::int64_t q = std::max<std::int64_t>(z - 1, 0); q <= std::min(z + 1, nz - 1); ++q)
            for (std::int64_t p = std::max<std::int64_t>(y - 1, 0); p <= std::min(y + 1, ny - 1);
                 ++p) {
              if (!row_read[q * ny + p]) continue;
              any = true;
              // (Through pointers of its own: byte stores may alias a vector's.)
              const std::int64_t i0 = (q * ny + p) * nx;
              const std::uint8_t *read = &ap_read[i0], *bits = window_bits + i0,
                                 *held = &fine.fixed[i0];
              for (std::int64_t x = 0; x < nx; ++x)
                near_read[x] |=
                    read[x] & !(bits[x] & XRepeats::window(XRepeats::kProductReach)) & !held[x];
            }
          if (!any) continue;  // staged weights: none (zeroed above)
          std::uint8_t* staged = &weights_read[zy * nx];
          for (std::int64_t x = 0; x < nx; ++x)
            staged[x] = around[x] | (x > 0 ? around[x - 1] : 0) | (x + 1 < nx ? around[x + 1] : 0);
        }
      });
    }
  }
  // The coarse offsets K of a row, accumulated at [(K_z + 2) 16 + (K_y + 2) 4 + K_x + 2]: a
  // child's A P lands at K = shift + slot - 1 in -2..1, so the sums need no bounds test, and
  // an entry at K = -2 (index 0 on some axis) is a coupling beyond one coarse node.
  const int hy = dims > 1 ? 3 : 1, hz = dims > 2 ? 3 : 1;  // offsets per axis, used axes only
  const int ly = dims > 1 ? 0 : 1, lz = dims > 2 ? 0 : 1;  // an unused axis keeps slot 1
  std::atomic<bool> far{false};
  // Every entry is written below, row by row (kernels::UnsetAllocator: no zero fill first).
  kernels::LevelWeights S(static_cast<std::size_t>(kp * nc));
  // S is symmetric to the last bit: each pair of entries takes their mean, an entry toward a
  // fixed node (whose row is empty) half its own value, and one toward no node +0.
  const int centre = stencil_centre(dims);
  // Away from the ends every neighbour exists, at a fixed step in the numbering.
  std::int64_t step_of[kMaxStencil];
  for (int k = 0; k < kp; ++k) {
    step_of[k] = 0;
    for (int a = dims - 1; a >= 0; --a) step_of[k] = step_of[k] * c.n[a] + stencil_offset(k, a);
  }
  // By planes, each thread writes its block of coarse planes row after row, so a pair of
  // entries whose rows lie in one block takes its mean as the later row is written: the
  // earlier row's entry is still its own value in S. That saves a pass over S. Only the pairs
  // across two blocks (between a block's first plane and the plane before it) are left to a
  // pass of their own, below. By rows, S is written as it is and a pass takes every mean.
  const bool mean_at_write = by_planes;
  // Block b of `team` holds the coarse planes [b nZ / team, (b + 1) nZ / team).
  std::int64_t team = 1;
  if (copied) copied->assign(static_cast<std::size_t>(c.n[2]), 0);
  kernels::in_team(by_planes, [&] {
    Planes in_hand;
    std::array<std::int64_t, 3>& held = in_hand.held;
    // By planes: two coarse planes' row entries, alternating, and per row of the plane before
    // and of this one ([Z % 2]) where its entries are (a copied row's or plane's: its source's).
    std::array<std::vector<double>, 2> plane_entries;
    std::array<std::vector<double*>, 2> rows_at;
    int before = -1;  // the buffer the plane before's rows lie in
    std::int64_t block = 0, nblocks = 1;
#ifdef _OPENMP
    block = omp_get_thread_num();
    nblocks = omp_get_num_threads();
#endif
    if (block == 0) team = nblocks;  // read after the region only
    const std::int64_t Zb = block * c.n[2] / nblocks, Ze = (block + 1) * c.n[2] / nblocks;
    for (std::int64_t Z = Zb; Z < Ze; ++Z) {
      const std::int64_t zf = c.fine_index[2][Z];
      const bool copied_plane = !plane_copies.empty() && Z > Zb && plane_copies[zf];
      int buffer = before;
      if (by_planes) {
        if (!copied_plane) {
          buffer = before == 0 ? 1 : 0;
          plane_entries[buffer].resize(static_cast<std::size_t>(c.n[1] * c.n[0] * kp));
        }
        rows_at[Z & 1].resize(static_cast<std::size_t>(c.n[1]));
        before = buffer;
      }
      // The finer planes around this coarse plane's (-1 where none), each computed once and
      // kept while a later coarse plane needs it (none for a copied plane).
      std::array<std::int64_t, 3> need{-1, -1, -1};
      for (int o = -1; o <= 1; ++o) need[o + 1] = dims > 2 ? fg.step(2, zf, o) : (o == 0 ? 0 : -1);
      const auto needed = [&](std::int64_t z) {
        return z >= 0 && (z == need[0] || z == need[1] || z == need[2]);
      };
      std::array<const double*, 3> around{nullptr, nullptr, nullptr};
      for (int o = 0; o < 3 && !copied_plane; ++o) {
        if (need[o] < 0) continue;
        int b = 0;
        while (b < 3 && held[b] != need[o]) ++b;
        if (b == 3) {
          b = 0;
          while (needed(held[b])) ++b;  // three buffers, at most three planes needed
          compute_plane(need[o], in_hand.ap[b], in_hand, far);
          held[b] = need[o];
        }
        around[o] = in_hand.ap[b].data();
      }
      // A copied plane whose plane before is one too, neither this block's first: its rows, the
      // plane before's and the one before that are the same bits (moved by a plane each), so the
      // write-back gives plane Z toward planes Z - 1 and Z what it gave plane Z - 1 toward Z - 2
      // and Z - 1, and plane Z - 1 toward Z (the means it takes there) what it gave plane Z - 2
      // toward Z - 1: all of them final already on this thread, and copied whole. Only plane
      // Z's entries toward Z + 1, which wait for that plane's rows, are written below, and not
      // even those where plane Z + 1 is such a plane on this thread too: it copies them whole
      // from plane Z - 1's, reading none of them.
      const bool sums_copied =
          mean_at_write && copied_plane && Z - 1 > Zb && plane_copies[c.fine_index[2][Z - 1]];
      const bool sums_left = sums_copied && Z + 1 < Ze && plane_copies[c.fine_index[2][Z + 1]];
      // Such a plane ends as plane Z - 1's bits in every array (its upward entries copied by
      // plane Z + 1 from plane Z - 1's final ones), with plane Z - 1's fixed flags.
      if (copied && sums_left) (*copied)[Z] = 1;
      if (sums_copied) {
        const std::int64_t coarse_plane = c.n[0] * c.n[1];
        for (int k = 0; k < kp; ++k) {
          double* Sk = &S[k * nc];
          if (stencil_offset(k, 2) > 0)
            std::copy_n(Sk + (Z - 2) * coarse_plane, coarse_plane, Sk + (Z - 1) * coarse_plane);
          else
            std::copy_n(Sk + (Z - 1) * coarse_plane, coarse_plane, Sk + Z * coarse_plane);
        }
      }
      kernels::for_each_index(
          0, c.n[1], !by_planes && c.n[0] * c.n[1] >= 1024, [&](std::int64_t Y) {
            // The row's weights and entries node by node ([X kp + k]), read from P and written to
            // S offset by offset, one row at a time: 27 runs of the row's length rather than 27
            // arrays 2 MB apart (at 129^3) per node, whose streams the caches cannot follow.
            const std::int64_t nX = c.n[0], I0 = (Z * c.n[1] + Y) * nX;
            const bool copied_row =
                !row_copies.empty() && Y > 0 && row_copies[zf * fine.n[1] + c.fine_index[1][Y]];
            const bool taken = copied_plane || copied_row;
            // Neither is filled first: a fixed node's entries are set to 0 below, and the weights
            // are read only where gathered (where the row is computed).
            std::unique_ptr<double[]> weights, own_entries;
            double* entries = nullptr;
            if (!by_planes) {
              own_entries.reset(new double[static_cast<std::size_t>(nX * kp)]);
              entries = own_entries.get();
            } else {
              if (copied_plane)
                entries = rows_at[(Z - 1) & 1][Y];  // the plane before's row, the same bits
              else if (copied_row)
                entries = rows_at[Z & 1][Y - 1];  // the row before's, the same bits
              else
                entries = &plane_entries[buffer][static_cast<std::size_t>(Y * nX * kp)];
              rows_at[Z & 1][Y] = entries;
            }
            if (!taken) {  // a copied row has nothing to compute
              weights.reset(new double[static_cast<std::size_t>(nX * kp)]);
              if (coarse_computed.empty()) {
                for (int k = 0; k < kp; ++k)
                  for (std::int64_t X = 0; X < nX; ++X) weights[X * kp + k] = P[k * nc + I0 + X];
              } else {
                // The row's computed nodes, which are few where the rows repeat.
                const std::uint8_t* computed = &coarse_computed[I0];
                const std::unique_ptr<std::int64_t[]> list(
                    new std::int64_t[static_cast<std::size_t>(nX)]);
                std::int64_t count = 0;
                for (std::int64_t X = 0; X < nX; ++X)
                  if (computed[X]) list[count++] = X;
                for (int k = 0; k < kp; ++k)
                  for (std::int64_t e = 0; e < count; ++e)
                    weights[list[e] * kp + k] = P[k * nc + I0 + list[e]];
              }
            }
            for (std::int64_t X = 0; X < nX && !taken; ++X) {
              const std::int64_t I = I0 + X;
              const double* w = &weights[X * kp];
              double* out = &entries[X * kp];
              if (c.fixed[I]) {
                std::fill_n(out, kp, 0.0);
                continue;
              }
              if (!windows.empty() &&
                  row_repeats((zf * fine.n[1] + c.fine_index[1][Y]) * fine.n[0] +
                              c.fine_index[0][X])) {
                std::copy(out - kp, out, out);
                continue;
              }
              if (coarse_standard[0][X] && coarse_standard[1][Y] && coarse_standard[2][Z]) {
                const double* apc[kMaxStencil];
                for (int kf = 0; kf < kMaxStencil; ++kf) {
                  const int dx = kf % 3, dy = kf / 3 % 3, dz = kf / 9;
                  apc[kf] = around[dz] +
                            (child[1][3 * Y + dy] * fine.n[0] + child[0][3 * X + dx]) * ap_stride;
                }
                standard_coarse_row(w, apc, out);
                continue;
              }
              double acc[64] = {};
              for (int dz = 0; dz < hz; ++dz)
                for (int dy = 0; dy < hy; ++dy)
                  for (int dx = 0; dx < 3; ++dx) {
                    const int kf = dx + 3 * dy + 9 * dz;
                    const double wf = w[kf];
                    if (wf == 0.0) continue;
                    const int ax = dx, ay = dy + ly, az = dz + lz;
                    const std::int64_t fx = child[0][3 * X + ax], fy = child[1][3 * Y + ay];
                    if (fx < 0 || fy < 0 || child[2][3 * Z + az] < 0) {
                      far = true;  // a weight toward a node that takes none
                      continue;
                    }
                    // (Its slots counted from ap_first: below 3D, sz is 1.)
                    const double* apf = around[az] + (fy * fine.n[0] + fx) * ap_stride;
                    double* a0 = acc + (shift[2][3 * Z + az] + 1) * 16 +
                                 (shift[1][3 * Y + ay] + 1) * 4 + shift[0][3 * X + ax] + 1;
                    const int sz0 = lz + first[2][3 * Z + az], sy0 = ly + first[1][3 * Y + ay];
                    for (int sz = sz0; sz < lz + hz; ++sz)
                      for (int sy = sy0; sy < ly + hy; ++sy)
                        for (int sx = first[0][3 * X + ax]; sx < 3; ++sx)
                          a0[16 * sz + 4 * sy + sx] += wf * apf[sx + 3 * sy + 9 * sz - ap_first];
                  }
              for (int s = 0; s < 64; ++s)
                if (acc[s] != 0.0 && (s % 4 == 0 || s / 4 % 4 == 0 || s / 16 == 0)) far = true;
              for (int dz = 0; dz < hz; ++dz)
                for (int dy = 0; dy < hy; ++dy)
                  for (int dx = 0; dx < 3; ++dx)
                    out[dx + 3 * dy + 9 * dz] =
                        acc[(dz + lz + 1) * 16 + (dy + ly + 1) * 4 + dx + 1];
            }
            if (!mean_at_write) {
              for (int k = 0; k < kp; ++k)
                for (std::int64_t X = 0; X < nX; ++X) S[k * nc + I0 + X] = entries[X * kp + k];
              return;
            }
            if (sums_left) return;  // written by the next plane's copies
            // Whether row (Yp, Zp) was written before this one in this block: its entries toward
            // this row are still their own values, and this row takes both means.
            const auto written = [&](std::int64_t Yp, std::int64_t Zp) {
              return (Zp >= Zb && Zp < Z) || (Zp == Z && Yp < Y);
            };
            const bool row_inside = Y > 0 && Y + 1 < c.n[1] && Z > 0 && Z + 1 < c.n[2];
            for (int k = 0; k < kp; ++k) {
              double* Sk = &S[k * nc];
              double* Sback = &S[(kp - 1 - k) * nc];
              const std::int64_t dy = stencil_offset(k, 1), dz = stencil_offset(k, 2);
              if (sums_copied && dz <= 0) continue;  // copied above
              const bool same_row = dy == 0 && dz == 0;
              const bool row_written = row_inside && written(Y + dy, Z + dz);
              const auto any_node = [&](std::int64_t X) {
                const std::int64_t I = I0 + X;
                const double v = entries[X * kp + k];
                if (k == centre || c.fixed[I]) {
                  Sk[I] = v;
                  return;
                }
                const std::int64_t C[3] = {X, Y, Z};
                std::int64_t J[3];
                if (!cg.neighbour(C, k, J)) {
                  Sk[I] = 0.0;
                  return;
                }
                const std::int64_t j = cg.index(J);
                if (c.fixed[j]) {
                  Sk[I] = v * 0.5;
                } else if (J[1] == Y && J[2] == Z) {
                  // Both values from this row's buffer; the pair's entry past the centre is
                  // written with the one before it.
                  if (k < centre) {
                    const double mean = 0.5 * (v + entries[J[0] * kp + kp - 1 - k]);
                    Sk[I] = mean;
                    Sback[j] = mean;
                  }
                } else if (written(J[1], J[2])) {
                  const double mean = k < centre ? 0.5 * (v + Sback[j]) : 0.5 * (Sback[j] + v);
                  Sk[I] = mean;
                  Sback[j] = mean;
                } else {
                  Sk[I] = v;  // its pair's row comes later, or in another block
                }
              };
              if (!row_inside || nX < 3 || k == centre) {
                for (std::int64_t X = 0; X < nX; ++X) any_node(X);
                continue;
              }
              // Away from the row's ends: the neighbour at a fixed step, in a row whose state
              // holds for the whole row; the same operations as any_node's.
              any_node(0);
              const std::int64_t step = step_of[k];
              const std::uint8_t* fixed = &c.fixed[0];
              if (same_row) {
                for (std::int64_t X = 1; X + 1 < nX; ++X) {
                  const std::int64_t I = I0 + X;
                  const double v = entries[X * kp + k];
                  if (fixed[I]) {
                    Sk[I] = v;
                  } else if (fixed[I + step]) {
                    Sk[I] = v * 0.5;
                  } else if (k < centre) {
                    const double mean = 0.5 * (v + entries[(X + step) * kp + kp - 1 - k]);
                    Sk[I] = mean;
                    Sback[I + step] = mean;
                  }
                }
              } else if (row_written) {
                for (std::int64_t X = 1; X + 1 < nX; ++X) {
                  const std::int64_t I = I0 + X, j = I + step;
                  const double v = entries[X * kp + k];
                  if (fixed[I]) {
                    Sk[I] = v;
                  } else if (fixed[j]) {
                    Sk[I] = v * 0.5;
                  } else {
                    const double mean = k < centre ? 0.5 * (v + Sback[j]) : 0.5 * (Sback[j] + v);
                    Sk[I] = mean;
                    Sback[j] = mean;
                  }
                }
              } else {
                for (std::int64_t X = 1; X + 1 < nX; ++X) {
                  const std::int64_t I = I0 + X;
                  const double v = entries[X * kp + k];
                  Sk[I] = !fixed[I] && fixed[I + step] ? v * 0.5 : v;
                }
              }
              any_node(nX - 1);
            }
          });
    }
  });
  if (far) throw std::logic_error("galerkin: a coupling beyond one coarse node");
  if (mean_at_write) {
    // The pairs across two blocks: a block's first plane's entries toward the plane before it
    // (offsets dz = -1, all before the centre), and their pairs.
    std::vector<std::int64_t> block_of(static_cast<std::size_t>(c.n[2]));
    for (std::int64_t b = 0; b < team; ++b)
      for (std::int64_t Z = b * c.n[2] / team; Z < (b + 1) * c.n[2] / team; ++Z) block_of[Z] = b;
    std::vector<std::int64_t> starts;
    for (std::int64_t Z = 0; Z < c.n[2]; ++Z) {
      const std::int64_t Zm = cg.step(2, Z, -1);
      if (Zm >= 0 && block_of[Zm] != block_of[Z]) starts.push_back(Z);
    }
    const std::int64_t nstarts = static_cast<std::int64_t>(starts.size());
#pragma omp parallel for collapse(2) schedule(static) if (nstarts * c.n[1] >= 64)
    for (std::int64_t s = 0; s < nstarts; ++s)
      for (std::int64_t Y = 0; Y < c.n[1]; ++Y) {
        const std::int64_t Z = starts[s], nX = c.n[0], I0 = (Z * c.n[1] + Y) * nX;
        for (int k = 0; k < kp; ++k) {
          if (stencil_offset(k, 2) != -1) continue;
          double* Sk = &S[k * nc];
          double* Sback = &S[(kp - 1 - k) * nc];
          for (std::int64_t X = 0; X < nX; ++X) {
            const std::int64_t I = I0 + X;
            if (c.fixed[I]) continue;
            const std::int64_t C[3] = {X, Y, Z};
            std::int64_t J[3];
            if (!cg.neighbour(C, k, J)) continue;  // set to +0 at the write
            const std::int64_t j = cg.index(J);
            if (c.fixed[j]) continue;  // halved at the write
            const double mean = 0.5 * (Sk[I] + Sback[j]);
            Sk[I] = mean;
            Sback[j] = mean;
          }
        }
      }
    return S;
  }
  // Each entry is written by one operation alone (its own node's, or for an entry toward a
  // free node at an offset past the centre, that node's pair), which reads no other entry: the
  // order of the operations changes no bit. So a row takes them offset by offset, two runs of
  // the row's length at a time, rather than node by node across 54 arrays.
#pragma omp parallel for collapse(2) schedule(static) if (nc >= 4096)
  for (std::int64_t Z = 0; Z < c.n[2]; ++Z)
    for (std::int64_t Y = 0; Y < c.n[1]; ++Y) {
      const std::int64_t nX = c.n[0], I0 = (Z * c.n[1] + Y) * nX;
      const bool row_inside =
          (dims < 2 || (Y > 0 && Y + 1 < c.n[1])) && (dims < 3 || (Z > 0 && Z + 1 < c.n[2]));
      for (int k = 0; k < kp; ++k) {
        if (k == centre) continue;  // toward the free node itself: nothing to do
        double* Sk = &S[k * nc];
        double* Sback = &S[(kp - 1 - k) * nc];
        for (std::int64_t X = 0; X < nX; ++X) {
          const std::int64_t I = I0 + X;
          if (c.fixed[I]) continue;
          std::int64_t j = I + step_of[k];
          if (!row_inside || X == 0 || X + 1 == nX) {
            const std::int64_t C[3] = {X, Y, Z};
            std::int64_t J[3];
            if (!cg.neighbour(C, k, J)) {
              Sk[I] = 0.0;
              continue;
            }
            j = cg.index(J);
          }
          if (c.fixed[j]) {
            Sk[I] *= 0.5;
          } else if (k < centre) {
            const double mean = 0.5 * (Sk[I] + Sback[j]);
            Sk[I] = mean;
            Sback[j] = mean;
          }
        }
      }
    }
  return S;
}

// The planes through a free node (x, y) that it marks as sheets: per axis, where its couplings
// within the axis's planes are some and those across them at most kDecoupled times as large
// (strong_planes' test without removed nodes beside it); and those it leans into (kLeanNode),
// counted in `lean`.
template <int D>
void mark_sheets(const double node_within[D], const double node_across[D], std::int64_t x,
                 std::int64_t y, std::uint8_t* const sheet[3], std::int32_t* const lean[3]) {
  for (int a = 0; a < D; ++a) {
    if (node_within[a] > 0.0 && node_across[a] <= kDecoupled * node_within[a])
      sheet[a][a == 0 ? x : a == 1 ? y : 0] = 1;
    if (node_within[a] > kLeanNode * node_across[a]) ++lean[a][a == 0 ? x : a == 1 ? y : 0];
  }
}

// strong_planes' sums and flags over z plane `z` of a compact level without removed nodes.
// A free node's row there is its faces to free neighbours with G != 0 (free_row), each of
// which counts as it is: they are read straight from the conductances, per axis the lower face
// and then the upper as the row orders them, and the sums of the node's row of planes (across
// y) and of its z plane are kept in registers along the row. Every sum takes the same terms in
// the same order as strong_planes' loop over the rows, so it is the same bits.
template <int D>
void compact_plane_sums(const LevelOperator& op, std::int64_t z, double* const within[3],
                        double* const across[3], std::uint8_t* const sheet[3],
                        std::int32_t* const lean[3]) {
  const std::int64_t nx = op.n[0], ny = op.n[1];
  const std::int64_t stride[3] = {1, nx, nx * ny};
  const std::uint8_t* fixed = op.fixed.data();
  const double* G[3] = {op.conductance[0].data(), op.conductance[1].data(),
                        op.conductance[2].data()};
  double z_within = 0.0, z_across = 0.0;  // within[2][0], across[2][0]
  if constexpr (D == 3) {
    z_within = within[2][0];
    z_across = across[2][0];
  }
  for (std::int64_t y = 0; y < ny; ++y) {
    double y_within = 0.0, y_across = 0.0;  // within[1][y], across[1][y]
    if constexpr (D >= 2) {
      y_within = within[1][y];
      y_across = across[1][y];
    }
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::int64_t c[3] = {x, y, z}, node = (z * ny + y) * nx + x;
      if (fixed[node]) continue;
      double node_within[D] = {}, node_across[D] = {}, faces[D];
      for (int b = 0; b < D; ++b) {
        const std::int64_t n = op.n[b], s = stride[b];
        const bool has_lower = c[b] > 0 || op.periodic[b],
                   has_upper = c[b] < n - 1 || op.periodic[b];
        const std::int64_t lower = c[b] > 0 ? node - s : node + (n - 1) * s;
        const std::int64_t upper = c[b] < n - 1 ? node + s : node - (n - 1) * s;
        const double g_lower = has_lower ? G[b][lower] : 0.0,
                     g_upper = has_upper ? G[b][node] : 0.0;
        // The row's entry -G, |-G| within the planes across the other axes, across b's.
        if (has_lower && !fixed[lower] && g_lower != 0.0)
          for (int a = 0; a < D; ++a) (a == b ? node_across : node_within)[a] += std::abs(g_lower);
        if (has_upper && !fixed[upper] && g_upper != 0.0)
          for (int a = 0; a < D; ++a) (a == b ? node_across : node_within)[a] += std::abs(g_upper);
        faces[b] = g_upper;
        if (has_lower) faces[b] += g_lower;
      }
      mark_sheets<D>(node_within, node_across, x, y, sheet, lean);
      for (int b = 0; b < D; ++b) (b == 0 ? across : within)[0][x] += faces[b];
      if constexpr (D >= 2)
        for (int b = 0; b < D; ++b) (b == 1 ? y_across : y_within) += faces[b];
      if constexpr (D == 3)
        for (int b = 0; b < D; ++b) (b == 2 ? z_across : z_within) += faces[b];
    }
    if constexpr (D >= 2) {
      within[1][y] = y_within;
      across[1][y] = y_across;
    }
  }
  if constexpr (D == 3) {
    within[2][0] = z_within;
    across[2][0] = z_across;
  }
}

// strong_planes' sums and flags over z plane `z` of a stencil-form level without removed
// nodes. A free node's row there is its entries toward free neighbours that exist, other than
// the centre (free_row, which also drops those that are 0: adding a +0 to these sums, all of
// them +0 or above, changes no bit, so here they are added). With the offsets k known at
// compile time, each entry goes to its sums with no lookup, and the sums of the node's row of
// planes (across y) and of its z plane are kept in registers along the row. Every sum takes
// the same terms in the same order (k over the row, then for each axis) as strong_planes' loop
// over the rows, so it is the same bits.
template <int D>
void stencil_plane_sums(const LevelOperator& op, const Grid& g, std::int64_t z,
                        double* const within[3], double* const across[3],
                        std::uint8_t* const sheet[3], std::int32_t* const lean[3]) {
  constexpr int kp = stencil_points(D), centre = stencil_centre(D);
  const std::int64_t nx = op.n[0], ny = op.n[1], np = op.points();
  const std::uint8_t* fixed = op.fixed.data();
  const double* S = op.stencil.data();
  // An unused axis's offset is 0: its coordinate is its steps' middle one.
  const std::int64_t* zn = &g.steps[2][3 * z];
  double z_within = 0.0, z_across = 0.0;  // within[2][0], across[2][0]
  if constexpr (D == 3) {
    z_within = within[2][0];
    z_across = across[2][0];
  }
  for (std::int64_t y = 0; y < ny; ++y) {
    const std::int64_t* yn = &g.steps[1][3 * y];
    // The start of each neighbouring row (offsets dy, dz), or -1 where there is none.
    std::int64_t row_start[3][3];
    for (int dz = 0; dz < 3; ++dz)
      for (int dy = 0; dy < 3; ++dy) {
        const std::int64_t zj = zn[D > 2 ? dz : 1], yj = yn[D > 1 ? dy : 1];
        row_start[dz][dy] = zj < 0 || yj < 0 ? -1 : (zj * ny + yj) * nx;
      }
    double y_within = 0.0, y_across = 0.0;  // within[1][y], across[1][y]
    if constexpr (D >= 2) {
      y_within = within[1][y];
      y_across = across[1][y];
    }
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::int64_t node = (z * ny + y) * nx + x;
      if (fixed[node]) continue;
      const std::int64_t* xn = &g.steps[0][3 * x];
      double node_within[D] = {}, node_across[D] = {};
      double x_within = within[0][x], x_across = across[0][x];
#pragma GCC unroll 27
      for (int k = 0; k < kp; ++k) {
        if (k == centre) continue;
        // Offsets numbered k = dx + 3 dy + 9 dz over the used axes, d - 1 the offset.
        const int dx = k % 3, dy = D > 1 ? k / 3 % 3 : 1, dz = D > 2 ? k / 9 : 1;
        const std::int64_t start = row_start[dz][dy], xj = xn[dx];
        if (start < 0 || xj < 0) continue;
        const double v = fixed[start + xj] ? 0.0 : std::abs(S[k * np + node]);
        (dx == 1 ? node_within : node_across)[0] += v;
        if constexpr (D >= 2) (dy == 1 ? node_within : node_across)[1] += v;
        if constexpr (D == 3) (dz == 1 ? node_within : node_across)[2] += v;
        (dx == 1 ? x_within : x_across) += v;
        if constexpr (D >= 2) (dy == 1 ? y_within : y_across) += v;
        if constexpr (D == 3) (dz == 1 ? z_within : z_across) += v;
      }
      within[0][x] = x_within;
      across[0][x] = x_across;
      mark_sheets<D>(node_within, node_across, x, y, sheet, lean);
    }
    if constexpr (D >= 2) {
      within[1][y] = y_within;
      across[1][y] = y_across;
    }
  }
  if constexpr (D == 3) {
    within[2][0] = z_within;
    across[2][0] = z_across;
  }
}

// strong_planes, given planes_as_before(op).
std::array<std::vector<std::uint8_t>, kMaxDims> strong_planes(
    const LevelOperator& op, NodeSums sums, const std::vector<std::uint8_t>& as_before) {
  const int dims = op.dims, centre = stencil_centre(dims);
  const Grid g(op);
  const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2];
  // Per plane across each axis: the couplings within it and those across it, summed in one
  // pass over the nodes. Each z plane sums into its own part (the planes across x and y get
  // nx and ny sums from it, the one across z one), and the parts are added in z order, so
  // the sums do not depend on the threads.
  const std::int64_t part = 2 * (nx + ny + 1);
  std::vector<double> parts(static_cast<std::size_t>(nz * part), 0.0);
  // Per z part as above, a flag per plane: it holds a node coupled across it by nothing
  // (to rounding), or a node beside a void across it whose own couplings within the plane
  // outweigh those across it as an anisotropic plane's do (`anisotropic` below). Plane sums
  // miss such nodes where the rest of the plane is ordinary: a sheet of body beside a void
  // (a void's face within half a spacing of a node plane leaves the nodes beyond it a sliver
  // of body, coupled within their plane and to nothing across it, since every segment across
  // crosses the void), a fin one coarse node wide between two voids, an FR4 board's top layer
  // under a void. Interpolation across the plane has next to no weight to give them, and a
  // point smoother does not smooth along them: their plane is kept. A coupling whose node in
  // line across is removed counts as none (the interpolation takes the error beyond a void's
  // surface as the node's own). Elsewhere the plane sums decide, with counts of leaning nodes
  // (below) in 3D: a node-by-node rule would keep most planes of a random medium whose
  // conductivities span decades.
  std::vector<std::uint8_t> sheet_parts(static_cast<std::size_t>(nz * (nx + ny + 1)), 0);
  // Per z part as above, per plane: its free nodes that lean into it (kLeanNode). A sheet of a
  // strong material a fraction of a spacing thick inside weak nodes' control volumes (a box's
  // face less than half a spacing past a node plane: the faces along it take the sliver in
  // parallel, f x 1e4 beside 1 across) is coupled along itself hundreds of times more than
  // across, over a patch that the plane sums dilute among the plane's isotropic nodes once
  // the Galerkin levels have halved the ratio a level or two; interpolated across then, its
  // own smooth modes (the sheet at one value, the body beside it at another) are what neither
  // the coarse levels nor a point smoother reach (PCG 13-18 iterations instead of 7).
  std::vector<std::int32_t> lean_parts(sheet_parts.size(), 0);
  const bool any_removed =
      std::find(op.fixed.begin(), op.fixed.end(), kernels::kRemovedNode) != op.fixed.end();
  const std::int64_t stride[3] = {1, nx, nx * ny};
  const bool from_conductances = sums == NodeSums::direct && !op.stencil_form() && !any_removed;
  const bool from_entries = sums == NodeSums::direct && op.stencil_form() && !any_removed;
  // Isotropic seven-point couplings give a ratio of dims - 1.
  const double anisotropic = kStrongPlane * 2.0 * (dims - 1);
  int offset[kMaxStencil][kMaxDims];  // stencil_offset(k, a), looked up per row entry
  for (int k = 0; k < kMaxStencil; ++k)
    for (int a = 0; a < kMaxDims; ++a) offset[k][a] = stencil_offset(k, a);
  // Summed directly, a z plane's part reads the values of planes z - 1, z and z + 1 alone (the
  // conductances or entries of its own nodes, and whether their neighbours are fixed): it is
  // taken from its source plane's (plane_sources, reach 1).
  const std::vector<std::int64_t> source = plane_sources(
      from_conductances || from_entries ? as_before : std::vector<std::uint8_t>{}, nz, 1);
  kernels::for_each_index(0, nz, op.points() >= 4096, [&](std::int64_t z) {
    if (source[z] != z) return;  // taken below
    double* within[3] = {&parts[z * part], &parts[z * part + nx], &parts[z * part + nx + ny]};
    double* across[3] = {within[2] + 1, within[2] + 1 + nx, within[2] + 1 + nx + ny};
    std::uint8_t* sheet[3] = {&sheet_parts[z * (nx + ny + 1)], &sheet_parts[z * (nx + ny + 1) + nx],
                              &sheet_parts[z * (nx + ny + 1) + nx + ny]};
    std::int32_t* lean[3] = {&lean_parts[z * (nx + ny + 1)], &lean_parts[z * (nx + ny + 1) + nx],
                             &lean_parts[z * (nx + ny + 1) + nx + ny]};
    if (from_conductances) {
      if (dims == 1) compact_plane_sums<1>(op, z, within, across, sheet, lean);
      if (dims == 2) compact_plane_sums<2>(op, z, within, across, sheet, lean);
      if (dims == 3) compact_plane_sums<3>(op, z, within, across, sheet, lean);
      return;
    }
    if (from_entries) {
      if (dims == 1) stencil_plane_sums<1>(op, g, z, within, across, sheet, lean);
      if (dims == 2) stencil_plane_sums<2>(op, g, z, within, across, sheet, lean);
      if (dims == 3) stencil_plane_sums<3>(op, g, z, within, across, sheet, lean);
      return;
    }
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::int64_t c[3] = {x, y, z}, node = (z * ny + y) * nx + x;
        if (op.fixed[node]) continue;
        const std::int64_t p[3] = {x, y, 0};  // the plane's slot per axis in the z part
        Row row;
        free_row(op, g, c, node, row);
        {
          double node_within[3] = {0.0, 0.0, 0.0}, node_across[3] = {0.0, 0.0, 0.0};
          for (int e = 1; e < row.count; ++e) {
            const double v = std::abs(row.a[e]);
            for (int a = 0; a < dims; ++a) {
              const int o = offset[row.k[e]][a];
              if (o == 0) {
                node_within[a] += v;
                continue;
              }
              if (any_removed) {
                const std::int64_t j = g.step(a, c[a], o);
                const std::int64_t in_line = node + (j - c[a]) * stride[a];
                if (op.fixed[in_line] == kernels::kRemovedNode) continue;
              }
              node_across[a] += v;
            }
          }
          for (int a = 0; a < dims; ++a) {
            bool beside_void = false;
            for (int o = -1; o <= 1 && any_removed; o += 2) {
              const std::int64_t j = g.step(a, c[a], o);
              beside_void = beside_void || (j >= 0 && op.fixed[node + (j - c[a]) * stride[a]] ==
                                                          kernels::kRemovedNode);
            }
            if (node_within[a] > 0.0 &&
                (node_across[a] <= kDecoupled * node_within[a] ||
                 (beside_void && node_across[a] * anisotropic < node_within[a])))
              sheet[a][p[a]] = 1;
            if (node_within[a] > kLeanNode * node_across[a]) ++lean[a][p[a]];
          }
        }
        if (!op.stencil_form()) {
          // Compact: the node's faces per axis (fixed neighbours count too; the ratio only
          // compares planes).
          double faces[3] = {0.0, 0.0, 0.0};
          std::int64_t stride = 1;
          for (int b = 0; b < dims; ++b) {
            const kernels::LevelWeights& G = op.conductance[b];
            faces[b] = c[b] < op.n[b] - 1 || op.periodic[b] ? G[node] : 0.0;
            if (c[b] > 0)
              faces[b] += G[node - stride];
            else if (op.periodic[b])
              faces[b] += G[node + (op.n[b] - 1) * stride];
            stride *= op.n[b];
          }
          for (int a = 0; a < dims; ++a)
            for (int b = 0; b < dims; ++b) (b == a ? across : within)[a][p[a]] += faces[b];
          continue;
        }
        for (int e = 0; e < row.count; ++e) {
          if (row.k[e] == centre) continue;
          const double v = std::abs(row.a[e]);
          for (int a = 0; a < dims; ++a) (offset[row.k[e]][a] == 0 ? within : across)[a][p[a]] += v;
        }
      }
  });
  for (std::int64_t z = 0; z < nz; ++z) {
    if (source[z] == z) continue;
    std::copy_n(&parts[source[z] * part], part, &parts[z * part]);
    std::copy_n(&sheet_parts[source[z] * (nx + ny + 1)], nx + ny + 1,
                &sheet_parts[z * (nx + ny + 1)]);
    std::copy_n(&lean_parts[source[z] * (nx + ny + 1)], nx + ny + 1,
                &lean_parts[z * (nx + ny + 1)]);
  }
  std::array<std::vector<std::uint8_t>, kMaxDims> strong;
  for (int a = 0; a < dims; ++a) {
    std::vector<double> within(static_cast<std::size_t>(op.n[a]), 0.0), across(within);
    const std::int64_t at = a == 0 ? 0 : a == 1 ? nx : nx + ny;
    for (std::int64_t z = 0; z < nz; ++z) {
      const double* w = &parts[z * part + at];
      const double* x = w + nx + ny + 1;
      if (a == 2) {
        within[z] += w[0];
        across[z] += x[0];
        continue;
      }
      for (std::int64_t q = 0; q < op.n[a]; ++q) {
        within[q] += w[q];
        across[q] += x[q];
      }
    }
    const auto ratio = [&](std::int64_t p) {
      return across[p] > 0.0 ? within[p] / across[p] : (within[p] > 0.0 ? 1e300 : 0.0);
    };
    std::vector<std::uint8_t> sheet(static_cast<std::size_t>(op.n[a]), 0);
    std::vector<std::int64_t> leaning(static_cast<std::size_t>(op.n[a]), 0);
    for (std::int64_t z = 0; z < nz; ++z) {
      const std::uint8_t* f = &sheet_parts[z * (nx + ny + 1) + at];
      const std::int32_t* l = &lean_parts[z * (nx + ny + 1) + at];
      if (a == 2) {
        sheet[z] = sheet[z] | f[0];
        leaning[z] += l[0];
      } else {
        for (std::int64_t q = 0; q < op.n[a]; ++q) {
          sheet[q] = sheet[q] | f[q];
          leaning[q] += l[q];
        }
      }
    }
    // A sheet: a line's worth of leaning nodes (3D), as many as a line across the plane holds
    // (a patch sqrt(n) nodes on a side), kStrongPlane times as many as either plane beside it
    // holds, where the leaning nodes of a random medium or a lattice of cubes are spread over
    // every plane alike (a 2D plane is a line: no rule).
    std::int64_t line = std::numeric_limits<std::int64_t>::max();
    if (dims == 3) {
      line = 0;
      for (int b = 0; b < dims; ++b)
        if (b != a) line = std::max(line, op.n[b]);
    }
    strong[a].assign(static_cast<std::size_t>(op.n[a]), 0);
    for (std::int64_t p = 1; p + 1 < op.n[a]; ++p)
      strong[a][p] = sheet[p] ||
                     (leaning[p] >= line &&
                      leaning[p] > kStrongPlane * std::max(leaning[p - 1], leaning[p + 1])) ||
                     ratio(p) > anisotropic ||
                     ratio(p) > kStrongPlane * std::max(ratio(p - 1), ratio(p + 1));
  }
  return strong;
}

// odd_planes, given planes_as_before(op).
std::array<bool, kMaxDims> odd_planes(const LevelOperator& op,
                                      const std::vector<std::uint8_t>& as_before) {
  const int dims = op.dims;
  const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2], np = op.points();
  const std::int64_t stride[3] = {1, nx, nx * ny};
  // A stencil-form level's entry at the offset of one step along axes a and b (signs sa, sb):
  // offset k lies sum_a o_a 3^a from the centre (kernels/level_ops.hpp).
  const int power[3] = {1, 3, 9};
  const auto diagonal = [&](std::int64_t i, int a, int sa, int b, int sb) {
    const int k = stencil_centre(dims) + sa * power[a] + sb * power[b];
    return std::abs(op.stencil[k * np + i]);
  };
  // The quadrants' couplings: a compact level's faces (two per quadrant), a stencil level's
  // entries one step along two axes (one per quadrant).
  std::vector<int> diagonals;
  for (int k = 0; op.stencil_form() && k < stencil_points(dims); ++k) {
    int steps = 0;
    for (int a = 0; a < dims; ++a) steps += stencil_offset(k, a) != 0;
    if (steps == 2) diagonals.push_back(k);
  }
  // Per row (y, z), the least and the largest positive coupling of its nodes: a node's
  // quadrants read couplings of its own row and the eight rows around it (one step along y, z
  // or both), so where those nine rows' couplings lie within a factor `spread` (kSaddleJump,
  // halved for the sums of two faces) no node of the row is at a saddle, and the row is not
  // visited node by node (rows of a homogeneous block, and those beside an inclusion, cost one
  // pass over their couplings).
  const std::int64_t rows = ny * nz;
  std::vector<double> least(static_cast<std::size_t>(rows), 0.0), largest(least);
  const double spread = op.stencil_form() ? kSaddleJump : 0.5 * kSaddleJump;
  // A plane's rows read its own values alone (plane_sources, reach 0); a plane's counts those
  // of the planes beside it too (reach 1), and the parities along z of the plane before's are
  // swapped (its even nodes are this plane's odd ones) when taken an odd number of planes on.
  const std::vector<std::int64_t> row_source = plane_sources(as_before, nz, 0),
                                  count_source = plane_sources(as_before, nz, 1);
  kernels::for_each_index(0, nz, np >= 4096, [&](std::int64_t z) {
    for (std::int64_t y = 0; y < ny && row_source[z] == z; ++y) {
      double lo = 1e300, hi = 0.0;
      const auto take = [&](double v) {
        v = std::abs(v);
        if (v > 0.0) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      };
      const std::int64_t first = (z * ny + y) * nx, last = first + nx;
      if (op.stencil_form()) {
        for (int k : diagonals)
          for (std::int64_t i = first; i < last; ++i) take(op.stencil[k * np + i]);
      } else {
        for (int a = 0; a < dims; ++a)
          for (std::int64_t i = first; i < last; ++i) take(op.conductance[a][i]);
      }
      least[z * ny + y] = lo;
      largest[z * ny + y] = hi;
    }
  });
  for (std::int64_t z = 0; z < nz; ++z)
    if (row_source[z] != z) {
      std::copy_n(&least[row_source[z] * ny], ny, &least[z * ny]);
      std::copy_n(&largest[row_source[z] * ny], ny, &largest[z * ny]);
    }
  // Per z plane, per axis and parity: the free nodes at a saddle (kept off the axes' ends).
  // Counts, so the sums do not depend on the threads.
  std::vector<std::int64_t> parts(static_cast<std::size_t>(nz) * 6, 0);
  kernels::for_each_index(0, nz, np >= 4096, [&](std::int64_t z) {
    if (count_source[z] != z) return;  // taken below
    std::int64_t* count = &parts[static_cast<std::size_t>(z) * 6];
    for (std::int64_t y = 0; y < ny; ++y) {
      double lo = 1e300, hi = 0.0;
      for (std::int64_t w = std::max<std::int64_t>(0, z - 1); w <= std::min(nz - 1, z + 1); ++w)
        for (std::int64_t v = std::max<std::int64_t>(0, y - 1); v <= std::min(ny - 1, y + 1); ++v) {
          lo = std::min(lo, least[w * ny + v]);
          hi = std::max(hi, largest[w * ny + v]);
        }
      if (hi <= spread * lo) continue;
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::int64_t i = (z * ny + y) * nx + x;
        if (op.fixed[i]) continue;
        const std::int64_t c[3] = {x, y, z};
        const auto inside = [&](int a) {
          return !op.periodic[a] && c[a] > 0 && c[a] < op.n[a] - 1;
        };
        for (int a = 0; a < dims; ++a)
          for (int b = a + 1; b < dims; ++b) {
            if (!inside(a) || !inside(b)) continue;
            // The quadrants around the node in the plane of axes a and b, each by a coupling
            // that lies within it: (+a, +b), (-a, -b), (+a, -b), (-a, +b).
            double q[4];
            if (op.stencil_form()) {
              q[0] = diagonal(i, a, 1, b, 1);
              q[1] = diagonal(i, a, -1, b, -1);
              q[2] = diagonal(i, a, 1, b, -1);
              q[3] = diagonal(i, a, -1, b, 1);
            } else {
              // A quadrant's two faces: along a one row into it along b, and along b.
              const kernels::LevelWeights& A = op.conductance[a];
              const kernels::LevelWeights& B = op.conductance[b];
              const std::int64_t sa = stride[a], sb = stride[b];
              q[0] = A[i + sb] + B[i + sa];
              q[1] = A[i - sa - sb] + B[i - sa - sb];
              q[2] = A[i - sb] + B[i + sa - sb];
              q[3] = A[i - sa + sb] + B[i - sa];
            }
            const double one_low = std::min(q[0], q[1]), one_high = std::max(q[0], q[1]);
            const double two_low = std::min(q[2], q[3]), two_high = std::max(q[2], q[3]);
            if (one_low <= 0.0 || two_low <= 0.0) continue;
            if (one_low > kSaddleJump * two_high || two_low > kSaddleJump * one_high) {
              ++count[2 * a + (c[a] & 1)];
              ++count[2 * b + (c[b] & 1)];
            }
          }
      }
    }
  });
  for (std::int64_t z = 0; z < nz; ++z) {
    const std::int64_t from = count_source[z];
    if (from == z) continue;
    std::int64_t* count = &parts[static_cast<std::size_t>(z) * 6];
    std::copy_n(&parts[static_cast<std::size_t>(from) * 6], 6, count);
    if ((z - from) % 2 != 0) std::swap(count[4], count[5]);
  }
  std::array<bool, kMaxDims> odd{false, false, false};
  for (int a = 0; a < dims; ++a) {
    std::int64_t even_nodes = 0, odd_nodes = 0;
    for (std::int64_t z = 0; z < nz; ++z) {
      even_nodes += parts[static_cast<std::size_t>(z) * 6 + 2 * a];
      odd_nodes += parts[static_cast<std::size_t>(z) * 6 + 2 * a + 1];
    }
    // At least an edge's worth: in 3D the saddles of a lattice of cubes lie along the cubes'
    // edges, lines across the grid; in 2D squares meet at single nodes.
    std::int64_t edge = 1;
    for (int b = 0; b < dims && dims == 3; ++b)
      if (b != a) edge = std::max(edge, op.n[b]);
    odd[a] = even_nodes > kSaddleParity * odd_nodes && even_nodes >= edge;
  }
  return odd;
}

}  // namespace

std::vector<std::uint8_t> nodes_beside_held(const LevelOperator& op) {
  // The box of offsets -1..1 around the held nodes (a neighbour's neighbour at the opposite
  // offset is the node itself), taken axis by axis with the grid's steps (none beyond a
  // non-periodic end, a wrap across a periodic one; an unused axis has offset 0 alone): per z
  // plane, the held flags of the planes around it dilated along x and ORed into a plane-sized
  // buffer, whose rows around each row are then ORed into the plane's.
  const Grid g(op);
  const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2], plane = nx * ny;
  const std::int64_t* xs = g.steps[0].data();
  std::vector<std::uint8_t> beside(op.fixed.size());
  kernels::in_team(op.points() >= 32768, [&] {
    std::vector<std::uint8_t> around(static_cast<std::size_t>(plane));
#pragma omp for schedule(static)
    for (std::int64_t z = 0; z < nz; ++z) {
      std::fill(around.begin(), around.end(), 0);
      for (int dz = 0; dz < 3; ++dz) {
        const std::int64_t q = g.steps[2][3 * z + dz];
        if (q < 0) continue;
        for (std::int64_t y = 0; y < ny; ++y) {
          const std::uint8_t* f = &op.fixed[(q * ny + y) * nx];
          std::uint8_t* o = &around[y * nx];
          for (std::int64_t x = 1; x + 1 < nx; ++x)
            o[x] |= (f[x - 1] == 1) | (f[x] == 1) | (f[x + 1] == 1);
          for (const std::int64_t x : {std::int64_t{0}, nx - 1})  // the ends, by their steps
            for (int dx = 0; dx < 3; ++dx)
              if (xs[3 * x + dx] >= 0) o[x] |= f[xs[3 * x + dx]] == 1;
        }
      }
      for (std::int64_t y = 0; y < ny; ++y) {
        std::uint8_t* o = &beside[(z * ny + y) * nx];
        for (int dy = 0; dy < 3; ++dy) {
          const std::int64_t p = g.steps[1][3 * y + dy];
          if (p < 0) continue;
          const std::uint8_t* r = &around[p * nx];
          for (std::int64_t x = 0; x < nx; ++x) o[x] |= r[x];
        }
      }
    }
  });
  return beside;
}

std::array<std::vector<std::uint8_t>, kMaxDims> strong_planes(const LevelOperator& op,
                                                              NodeSums sums) {
  return strong_planes(op, sums, planes_as_before(op));
}

std::array<bool, kMaxDims> odd_planes(const LevelOperator& op) {
  return odd_planes(op, planes_as_before(op));
}

namespace {

// The coarse level's nodes (c's dims, periodic, fine_index and n) and the transfer along each
// axis, given planes_as_before(fine).
std::array<AxisTransfer, kMaxDims> coarse_axes(const LevelOperator& fine,
                                               const std::vector<std::uint8_t>& as_before,
                                               LevelOperator& c) {
  c.dims = fine.dims;
  c.periodic = fine.periodic;
  std::array<AxisTransfer, kMaxDims> t;
  const auto strong = strong_planes(fine, NodeSums::direct, as_before);
  const auto odd = odd_planes(fine, as_before);
  for (int a = 0; a < kMaxDims; ++a) {
    const bool active = a < fine.dims;
    c.fine_index[a] = active ? coarse_nodes(fine.n[a], fine.periodic[a], strong[a], odd[a])
                             : std::vector<std::int64_t>{0};
    c.n[a] = static_cast<std::int64_t>(c.fine_index[a].size());
    t[a] = kernels::axis_transfer(fine.n[a], active && fine.periodic[a], c.fine_index[a]);
  }
  return t;
}

}  // namespace

RepeatWindows repeat_windows(const LevelOperator& fine) {
  const std::vector<std::uint8_t> as_before = planes_as_before(fine);
  LevelOperator c;
  const std::array<AxisTransfer, kMaxDims> t = coarse_axes(fine, as_before, c);
  const XRepeats repeats(fine, t[0], t[1], t[2], as_before, true);
  return {repeats.repeats(), repeats.rows_repeat(XRepeats::kWeightsReach),
          repeats.rows_repeat(XRepeats::kRowsReach), repeats.planes_repeat(XRepeats::kWeightsReach),
          repeats.planes_repeat(XRepeats::kRowsReach)};
}

namespace {

// coarsen, given the planes of `fine` known to be the same bits as the plane before (`known`),
// and giving those of the coarse level (`copied`, when not null).
LevelOperator coarsen_level(const LevelOperator& fine, Reuse reuse,
                            const std::vector<std::uint8_t>& known,
                            std::vector<std::uint8_t>* copied) {
  LevelOperator c;
  // Which planes repeat the one before, compared once for the passes below.
  const std::vector<std::uint8_t> as_before = planes_as_before(fine, known);
  const std::array<AxisTransfer, kMaxDims> t = coarse_axes(fine, as_before, c);
  const std::int64_t np = c.points();
  c.fixed.assign(static_cast<std::size_t>(np), 0);
  for_nodes(c.n, [&](const std::int64_t C[3], std::int64_t I) {
    const std::int64_t f[3] = {c.fine_index[0][C[0]], c.fine_index[1][C[1]], c.fine_index[2][C[2]]};
    c.fixed[I] = fine.fixed[(f[2] * fine.n[1] + f[1]) * fine.n[0] + f[0]];
  });
  const XRepeats repeats(fine, t[0], t[1], t[2], as_before, reuse == Reuse::along_x);
  // The windows of r = 2 (the prolongation) and 3 (A P and the Galerkin rows).
  const std::vector<std::uint8_t> windows = repeats.repeats();
  c.prolongation = prolongation(fine, c, t, windows, XRepeats::window(XRepeats::kWeightsReach),
                                repeats.rows_repeat(XRepeats::kWeightsReach),
                                repeats.planes_repeat(XRepeats::kWeightsReach));
  c.stencil = galerkin(fine, c, t, repeats, windows, copied);
  c.symmetric = true;  // galerkin writes each pair between free nodes as their mean
  return c;
}

}  // namespace

LevelOperator coarsen(const LevelOperator& fine, Reuse reuse) {
  return coarsen_level(fine, reuse, {}, nullptr);
}

std::vector<LevelOperator> build_hierarchy(LevelOperator finest, std::int64_t coarsest_points,
                                           std::vector<SetupTime>* times) {
  std::vector<LevelOperator> levels;
  levels.push_back(std::move(finest));
  // The planes of the last level that galerkin wrote as copies of the plane before.
  std::vector<std::uint8_t> known, copied;
  // Per axis, whether the last level that halved an axis halved it (keeps at most three
  // quarters of its nodes; every axis, before level 1).
  std::array<bool, kMaxDims> halved_before{true, true, true};
  const std::int64_t bottom =
      coarsest_points > 0
          ? coarsest_points
          : default_coarsest_points(levels.front().dims, levels.front().periodic[0]);
  while (levels.back().points() > bottom) {
    PhaseClock clock;
    LevelOperator c = coarsen_level(levels.back(), Reuse::along_x, known, &copied);
    known.swap(copied);
    if (times) times->push_back(clock.lap());
    // A level must keep at most three quarters of the nodes of the level before, and where it
    // halves axes, one of them must be an axis that the last level to halve any halved too.
    // Layers one node thick of k = 1 and 1e6 broke both: the coarse levels keep their z
    // planes, which conduct far better within than across, while x and y halve, and each
    // halving lowers the planes' ratio of within to across about 4 times. Once x and y are down
    // to 3 nodes the ratio is near the strong planes' bound: where a plane or two fall below it
    // (the plane beside a face), a level drops them, the next drops the next ones, and 332
    // planes on 64 x 64 nodes built some 170 levels of 3 x 3 x n_z nodes (the cube of 384^3,
    // 195); where all fall below it, z is halved by interpolating across planes that still
    // conduct several times better within than across, which a point smoother cannot smooth
    // (77 PCG iterations for 64 x 64 x 512 against 4). The level before is then the coarsest,
    // solved by conjugate gradients (there a column of 3 x 3 x n_z nodes).
    std::array<bool, kMaxDims> halved{false, false, false};
    bool halves = false, continues = false;
    for (int a = 0; a < c.dims; ++a) {
      halved[a] = 4 * c.n[a] <= 3 * levels.back().n[a];
      halves = halves || halved[a];
      continues = continues || (halved[a] && halved_before[a]);
    }
    if (4 * c.points() > 3 * levels.back().points() || (halves && !continues)) break;
    if (halves) halved_before = halved;
    levels.push_back(std::move(c));
  }
  return levels;
}

}  // namespace heatsim::solver::multigrid
