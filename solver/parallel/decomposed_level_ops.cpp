#include "decomposed_level_ops.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "comm.hpp"

namespace heatsim::solver::parallel {
namespace {

using kernels::LevelOperator;

const char* kAxis[] = {"x", "y", "z"};

// Calls f(x, y, z) for every node of `box` (global coordinates), x fastest.
template <typename F>
void for_box(const Box& box, F&& f) {
  for (std::int64_t z = box.lo[2]; z < box.lo[2] + box.extent[2]; ++z)
    for (std::int64_t y = box.lo[1]; y < box.lo[1] + box.extent[1]; ++y)
      for (std::int64_t x = box.lo[0]; x < box.lo[0] + box.extent[0]; ++x) f(x, y, z);
}

std::int64_t index_in(const Box& box, std::int64_t x, std::int64_t y, std::int64_t z) {
  return ((z - box.lo[2]) * box.extent[1] + (y - box.lo[1])) * box.extent[0] + (x - box.lo[0]);
}

std::int64_t index_of(const std::array<std::int64_t, 3>& n, std::int64_t x, std::int64_t y,
                      std::int64_t z) {
  return (z * n[1] + y) * n[0] + x;
}

}  // namespace

DecomposedLevelOps::DecomposedLevelOps(Decomposition decomposition,
                                       std::unique_ptr<kernels::LevelOps> local,
                                       std::unique_ptr<kernels::LevelOps> coarse)
    : decomposition_(std::move(decomposition)), local_(std::move(local)), coarse_(std::move(coarse)) {
  if (decomposition_.halo() != 1)
    throw std::invalid_argument("decomposed level operations: the overlap must be one layer");
  if (!local_) throw std::invalid_argument("decomposed level operations: no level operations");
  if (root() && !coarse_)
    throw std::invalid_argument("decomposed level operations: rank 0 needs the coarse levels'");
  if (!root()) coarse_.reset();
}

DecomposedLevelOps::Vector& DecomposedLevelOps::vector(int v) {
  if (v < 0 || v >= static_cast<int>(vectors_.size()) || vectors_[static_cast<std::size_t>(v)].level < 0)
    throw std::out_of_range("decomposed level ops: no vector " + std::to_string(v));
  return vectors_[static_cast<std::size_t>(v)];
}

int DecomposedLevelOps::coarse_id(int v) { return vector(v).id; }

std::int64_t DecomposedLevelOps::local_index(std::int64_t x, std::int64_t y, std::int64_t z) const {
  return index_in(local_box_, x, y, z);
}

LevelOperator DecomposedLevelOps::cut_finest(const LevelOperator& finest) {
  if (finest.stencil_form())
    throw std::invalid_argument("decomposed level operations: the finest level must be compact");
  dims_ = finest.dims;
  n_ = finest.n;
  if (n_ != decomposition_.global_n())
    throw std::invalid_argument("decomposed level operations: the hierarchy's grid is not the "
                                "decomposition's");
  for (int a = 0; a < 3; ++a) {
    periodic_[a] = a < dims_ && finest.periodic[a];
    if (periodic_[a] && decomposition_.procs()[a] > 1)
      throw std::invalid_argument(std::string("implicit and steady runs keep a periodic axis on "
                                              "one rank; the decomposition splits ") +
                                  kAxis[a] + " (set parallel.decomposition's " + kAxis[a] +
                                  " count to 1)");
  }
  owned_ = decomposition_.owned();
  local_box_ = decomposition_.local();
  origin_colour_ = static_cast<int>((local_box_.lo[0] + local_box_.lo[1] + local_box_.lo[2]) & 1);
  LevelOperator op;
  op.dims = dims_;
  op.n = local_box_.extent;
  op.periodic = periodic_;
  const std::size_t np = static_cast<std::size_t>(local_box_.points());
  op.node_term.resize(np);
  for (int a = 0; a < dims_; ++a) op.conductance[a].resize(np);
  op.fixed.resize(np);
  fixed_.resize(np);
  for_box(local_box_, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    const std::size_t i = static_cast<std::size_t>(local_index(x, y, z));
    const std::size_t g = static_cast<std::size_t>(index_of(n_, x, y, z));
    op.node_term[i] = finest.node_term[g];
    for (int a = 0; a < dims_; ++a) op.conductance[a][i] = finest.conductance[a][g];
    fixed_[i] = finest.fixed[g];
    const bool owned = x >= owned_.lo[0] && x < owned_.lo[0] + owned_.extent[0] &&
                       y >= owned_.lo[1] && y < owned_.lo[1] + owned_.extent[1] &&
                       z >= owned_.lo[2] && z < owned_.lo[2] + owned_.extent[2];
    // The neighbours' layer is fixed here: its values come from their owners.
    op.fixed[i] = owned ? fixed_[i] : std::uint8_t{1};
  });
  return op;
}

DecomposedLevelOps::CoarsePart DecomposedLevelOps::coarse_part(const Box& owned) const {
  CoarsePart p;
  for (int a = 0; a < 3; ++a) {
    const std::vector<std::int64_t>& fi = fine_index_[a];
    const std::int64_t lo = owned.lo[a], end = owned.lo[a] + owned.extent[a];
    const auto first = [&](std::int64_t v) {
      return static_cast<std::int64_t>(std::lower_bound(fi.begin(), fi.end(), v) - fi.begin());
    };
    p.owned.lo[a] = first(lo);
    p.owned.extent[a] = first(end) - p.owned.lo[a];
    // A finer node takes values from coarse nodes at most one finer node away.
    const std::int64_t w0 = first(lo - 1);
    const std::int64_t w1 =
        static_cast<std::int64_t>(std::upper_bound(fi.begin(), fi.end(), end) - fi.begin());
    p.window.lo[a] = w0;
    p.window.extent[a] = w1 - w0;
  }
  return p;
}

void DecomposedLevelOps::build_coarse(const std::vector<LevelOperator>& levels) {
  prolongation_.clear();
  coarse_fixed_.clear();
  parts_.clear();
  if (levels.size() < 2) return;
  const LevelOperator& C = levels[1];
  coarse_n_ = C.n;
  for (int a = 0; a < 3; ++a) {
    fine_index_[a] = a < dims_ ? C.fine_index[a] : std::vector<std::int64_t>{0};
    transfer_[a] = kernels::axis_transfer(n_[a], periodic_[a], fine_index_[a]);
  }
  for (int r = 0; r < decomposition_.ranks(); ++r) parts_.push_back(coarse_part(decomposition_.owned(r)));
  part_ = parts_[static_cast<std::size_t>(decomposition_.rank())];
  const int kp = kernels::stencil_points(dims_);
  const std::int64_t nw = part_.window.points(), nc = C.points();
  prolongation_.resize(static_cast<std::size_t>(kp * nw));
  for (int k = 0; k < kp; ++k)
    for_box(part_.window, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
      prolongation_[static_cast<std::size_t>(k * nw + index_in(part_.window, x, y, z))] =
          C.prolongation[static_cast<std::size_t>(k * nc + index_of(coarse_n_, x, y, z))];
    });
  coarse_fixed_.resize(static_cast<std::size_t>(part_.owned.points()));
  for_box(part_.owned, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    coarse_fixed_[static_cast<std::size_t>(index_in(part_.owned, x, y, z))] =
        C.fixed[static_cast<std::size_t>(index_of(coarse_n_, x, y, z))];
  });
  if (root()) coarse_->setup(std::vector<LevelOperator>(levels.begin() + 1, levels.end()));
}

void DecomposedLevelOps::setup(const std::vector<LevelOperator>& levels) {
  if (levels.empty()) throw std::invalid_argument("decomposed level operations: no levels");
  vectors_.clear();
  levels_ = static_cast<int>(levels.size());
  std::vector<LevelOperator> mine;
  mine.push_back(cut_finest(levels[0]));
  local_->adopt(std::move(mine));
  build_coarse(levels);
}

void DecomposedLevelOps::replace_hierarchy(const std::vector<LevelOperator>& levels) {
  if (levels.empty() || levels[0].n != n_)
    throw std::invalid_argument("level ops: the new finest level has another number of points");
  // The same box as before, so the level-0 vectors keep their layout and values.
  local_->replace_hierarchy({cut_finest(levels[0])});
  for (Vector& v : vectors_)
    if (v.level > 0) v = Vector{-1, -1, false};
  levels_ = static_cast<int>(levels.size());
  build_coarse(levels);
}

int DecomposedLevelOps::create_vector(int level) {
  Vector v;
  v.level = level;
  if (level == 0) {
    v.id = local_->create_vector(0);
    if (!local_->host_values(v.id))
      throw std::invalid_argument("decomposed level operations: the block's vectors must be in "
                                  "host memory");
  } else {
    if (level >= levels_) throw std::out_of_range("level ops: no level " + std::to_string(level));
    v.id = root() ? coarse_->create_vector(level - 1) : -1;
  }
  vectors_.push_back(v);
  return static_cast<int>(vectors_.size()) - 1;
}

void DecomposedLevelOps::upload(int v, const std::vector<double>& values) {
  Vector& V = vector(v);
  if (V.level > 0) {
    if (root()) coarse_->upload(V.id, values);
    return;
  }
  if (static_cast<std::int64_t>(values.size()) != n_[0] * n_[1] * n_[2])
    throw std::invalid_argument("level ops: upload of " + std::to_string(values.size()) +
                                " values into a field of " + std::to_string(n_[0] * n_[1] * n_[2]));
  local_->upload(V.id, extract_box(values, n_, local_box_));
  V.fresh = true;
}

void DecomposedLevelOps::download(int v, std::vector<double>& values) {
  Vector& V = vector(v);
  if (V.level > 0) {
    values.clear();
    if (root()) coarse_->download(V.id, values);
    return;
  }
  const double* p = local_->host_values(V.id);
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(owned_.points()));
  for_box(owned_, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    mine.push_back(p[local_index(x, y, z)]);
  });
  std::vector<std::int64_t> counts;
  for (int r = 0; r < decomposition_.ranks(); ++r) counts.push_back(decomposition_.owned(r).points());
  const std::vector<double> all = gather_all(mine, counts);
  values.assign(static_cast<std::size_t>(n_[0] * n_[1] * n_[2]), 0.0);
  std::size_t at = 0;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    const Box b = decomposition_.owned(r);
    insert_box(values, n_, b,
               std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(at),
                                   all.begin() + static_cast<std::ptrdiff_t>(at + b.points())));
    at += static_cast<std::size_t>(b.points());
  }
}

int DecomposedLevelOps::create_sparse(const std::vector<std::int64_t>& nodes,
                                      const std::vector<double>& values) {
  if (nodes.size() != values.size())
    throw std::invalid_argument("level ops: a sparse vector's nodes and values differ in number");
  std::vector<std::int64_t> mine;
  std::vector<double> mine_values;
  const Box& L = local_box_;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const std::int64_t g = nodes[k];
    const std::int64_t x = g % n_[0], y = g / n_[0] % n_[1], z = g / (n_[0] * n_[1]);
    if (x < L.lo[0] || x >= L.lo[0] + L.extent[0] || y < L.lo[1] || y >= L.lo[1] + L.extent[1] ||
        z < L.lo[2] || z >= L.lo[2] + L.extent[2])
      continue;
    mine.push_back(local_index(x, y, z));
    mine_values.push_back(values[k]);
  }
  return local_->create_sparse(mine, mine_values);
}

// Every rank that holds a node writes the same value there: the layer stays current if it was.
void DecomposedLevelOps::scatter(double a, int s, int y, bool assign) {
  local_->scatter(a, s, vector(y).id, assign);
}

void DecomposedLevelOps::exchange(double* values) {
  for (int a = 0; a < dims_; ++a) {
    const int lower = decomposition_.neighbour(a, 0), upper = decomposition_.neighbour(a, 1);
    if (lower < 0 && upper < 0) continue;
    // One layer across axis a: the local box's extent along the axes exchanged before (their
    // layers arrived already, so edges and corners travel on), the owned one along the later.
    const auto layer = [&](std::int64_t c) {
      Box b;
      for (int ax = 0; ax < 3; ++ax) {
        const Box& from = ax < a ? local_box_ : owned_;
        b.lo[ax] = ax == a ? c : from.lo[ax];
        b.extent[ax] = ax == a ? 1 : from.extent[ax];
      }
      return b;
    };
    const std::int64_t first = owned_.lo[a], last = owned_.lo[a] + owned_.extent[a] - 1;
    const auto pack = [&](const Box& b) {
      std::vector<double> out;
      out.reserve(static_cast<std::size_t>(b.points()));
      for_box(b, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        out.push_back(values[local_index(x, y, z)]);
      });
      return out;
    };
    std::vector<double> down, up, from_upper, from_lower;
    if (lower >= 0) {
      down = pack(layer(first));
      from_lower.resize(static_cast<std::size_t>(layer(first - 1).points()));
    }
    if (upper >= 0) {
      up = pack(layer(last));
      from_upper.resize(static_cast<std::size_t>(layer(last + 1).points()));
    }
    const int tag_down = 700 + 2 * a, tag_up = 701 + 2 * a;
    send_receive_all({{&down, lower, &from_upper, upper, tag_down},
                      {&up, upper, &from_lower, lower, tag_up}});
    const auto unpack = [&](const Box& b, const std::vector<double>& in) {
      std::size_t k = 0;
      for_box(b, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        values[local_index(x, y, z)] = in[k++];
      });
    };
    if (lower >= 0) unpack(layer(first - 1), from_lower);
    if (upper >= 0) unpack(layer(last + 1), from_upper);
  }
}

void DecomposedLevelOps::refresh(int v) {
  Vector& V = vector(v);
  if (V.level != 0 || V.fresh) return;
  exchange(local_->host_values(V.id));
  V.fresh = true;
}

void DecomposedLevelOps::residual(int level, int b, int x, int r) {
  if (level > 0) {
    if (root()) coarse_->residual(level - 1, coarse_id(b), coarse_id(x), coarse_id(r));
    return;
  }
  refresh(x);
  local_->residual(0, vector(b).id, vector(x).id, vector(r).id);
  vector(r).fresh = false;
}

void DecomposedLevelOps::cycle_residual(int level, int b, int x, int r) {
  if (level > 0) {
    if (root()) coarse_->cycle_residual(level - 1, coarse_id(b), coarse_id(x), coarse_id(r));
    return;
  }
  refresh(x);
  local_->cycle_residual(0, vector(b).id, vector(x).id, vector(r).id);
  vector(r).fresh = false;
}

void DecomposedLevelOps::apply(int level, int x, int y) {
  if (level > 0) {
    if (root()) coarse_->apply(level - 1, coarse_id(x), coarse_id(y));
    return;
  }
  refresh(x);
  local_->apply(0, vector(x).id, vector(y).id);
  vector(y).fresh = false;
}

void DecomposedLevelOps::magnitude(int level, int b, int x, int out) {
  if (level > 0) {
    if (root()) coarse_->magnitude(level - 1, coarse_id(b), coarse_id(x), coarse_id(out));
    return;
  }
  refresh(x);
  local_->magnitude(0, vector(b).id, vector(x).id, vector(out).id);
  vector(out).fresh = false;
}

// Red (x + y + z even) then black, as smooth() sweeps the whole grid; each colour reads the
// other's current values, the neighbours' included.
void DecomposedLevelOps::smooth(int level, int b, int x, int sweeps, bool reverse, double omega) {
  if (level > 0) {
    if (root()) coarse_->smooth(level - 1, coarse_id(b), coarse_id(x), sweeps, reverse, omega);
    return;
  }
  for (int s = 0; s < sweeps; ++s)
    for (int c = 0; c < 2; ++c) {
      const int colour = reverse ? 1 - c : c;
      refresh(x);
      local_->smooth_colour(0, vector(b).id, vector(x).id, colour ^ origin_colour_, omega);
      vector(x).fresh = false;
    }
}

void DecomposedLevelOps::restrict_residual(int fine_level, int r_fine, int b_coarse) {
  if (fine_level > 0) {
    if (root()) coarse_->restrict_residual(fine_level - 1, coarse_id(r_fine), coarse_id(b_coarse));
    return;
  }
  refresh(r_fine);
  const double* rp = local_->host_values(vector(r_fine).id);
  const int kp = kernels::stencil_points(dims_);
  const std::int64_t nw = part_.window.points();
  std::vector<double> mine(static_cast<std::size_t>(part_.owned.points()));
  // The finer coordinate at offset o of the coarse node's own (as the CPU's gather table).
  const auto finer = [&](int a, std::int64_t c, int o) -> std::int64_t {
    const bool periodic = periodic_[a];
    std::int64_t f = fine_index_[a][static_cast<std::size_t>(c)] + o;
    if (f < 0) return periodic ? f + n_[a] : -1;
    if (f >= n_[a]) return periodic ? f - n_[a] : -1;
    return f;
  };
  for_box(part_.owned, [&](std::int64_t X, std::int64_t Y, std::int64_t Z) {
    const std::size_t I = static_cast<std::size_t>(index_in(part_.owned, X, Y, Z));
    if (coarse_fixed_[I]) {
      mine[I] = 0.0;
      return;
    }
    const std::int64_t at[3] = {X, Y, Z};
    const std::int64_t J = index_in(part_.window, X, Y, Z);
    double sum = 0.0;
    for (int k = 0; k < kp; ++k) {
      const double w = prolongation_[static_cast<std::size_t>(k * nw + J)];
      if (w == 0.0) continue;
      std::int64_t f[3] = {0, 0, 0};
      for (int a = 0; a < dims_; ++a) f[a] = finer(a, at[a], kernels::stencil_offset(k, a));
      sum += w * rp[local_index(f[0], f[1], f[2])];
    }
    mine[I] = sum;
  });
  std::vector<std::int64_t> counts;
  for (const CoarsePart& p : parts_) counts.push_back(p.owned.points());
  const std::vector<double> all = gather_to_root(mine, counts);
  if (!root()) return;
  std::vector<double> b(static_cast<std::size_t>(coarse_n_[0] * coarse_n_[1] * coarse_n_[2]), 0.0);
  std::size_t at = 0;
  for (const CoarsePart& p : parts_) {
    const std::size_t count = static_cast<std::size_t>(p.owned.points());
    insert_box(b, coarse_n_, p.owned,
               std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(at),
                                   all.begin() + static_cast<std::ptrdiff_t>(at + count)));
    at += count;
  }
  coarse_->upload(coarse_id(b_coarse), b);
}

void DecomposedLevelOps::prolong_add(int fine_level, int x_coarse, int x_fine) {
  if (fine_level > 0) {
    if (root()) coarse_->prolong_add(fine_level - 1, coarse_id(x_coarse), coarse_id(x_fine));
    return;
  }
  std::vector<std::int64_t> counts;
  for (const CoarsePart& p : parts_) counts.push_back(p.window.points());
  std::vector<double> all;
  if (root()) {
    std::vector<double> xc;
    coarse_->download(coarse_id(x_coarse), xc);
    for (const CoarsePart& p : parts_) {
      const std::vector<double> part = extract_box(xc, coarse_n_, p.window);
      all.insert(all.end(), part.begin(), part.end());
    }
  }
  const std::vector<double> window = scatter_from_root(all, counts);
  double* xp = local_->host_values(vector(x_fine).id);
  const std::int64_t nw = part_.window.points();
  const Box& W = part_.window;
  for_box(owned_, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    const std::int64_t i = local_index(x, y, z);
    if (fixed_[static_cast<std::size_t>(i)]) return;
    const auto& tz = transfer_[2].from[static_cast<std::size_t>(z)];
    const auto& ty = transfer_[1].from[static_cast<std::size_t>(y)];
    const auto& tx = transfer_[0].from[static_cast<std::size_t>(x)];
    double sum = 0.0;
    for (const auto& a : tz) {
      if (a.coarse < 0) continue;
      for (const auto& b : ty) {
        if (b.coarse < 0) continue;
        for (const auto& c : tx) {
          if (c.coarse < 0) continue;
          const int o[3] = {c.offset, b.offset, a.offset};
          int k = 0;
          for (int ax = dims_ - 1; ax >= 0; --ax) k = 3 * k + o[ax] + 1;
          const std::int64_t J = index_in(W, c.coarse, b.coarse, a.coarse);
          sum += prolongation_[static_cast<std::size_t>(k * nw + J)] *
                 window[static_cast<std::size_t>(J)];
        }
      }
    }
    xp[i] += sum;
  });
  vector(x_fine).fresh = false;
}

void DecomposedLevelOps::conjugate_gradients(int level, int b, int x, int r, int p, int q,
                                             double tolerance, std::int64_t limit) {
  if (level == 0) {
    LevelOps::conjugate_gradients(level, b, x, r, p, q, tolerance, limit);
    return;
  }
  if (root())
    coarse_->conjugate_gradients(level - 1, coarse_id(b), coarse_id(x), coarse_id(r),
                                 coarse_id(p), coarse_id(q), tolerance, limit);
}

// The free nodes of the whole local box, the neighbours' layer too: what their owners do to
// them, so the layer stays current if it was.
void DecomposedLevelOps::zero_free(int level, int v) {
  Vector& V = vector(v);
  if (level > 0) {
    if (root()) coarse_->zero_free(level - 1, V.id);
    return;
  }
  double* p = local_->host_values(V.id);
  for (std::size_t i = 0; i < fixed_.size(); ++i)
    if (!fixed_[i]) p[i] = 0.0;
}

double DecomposedLevelOps::dot(int x, int y) {
  const Vector &X = vector(x), &Y = vector(y);
  if (X.level != 0 || Y.level != 0)
    throw std::logic_error("decomposed level operations: dot products of level-0 vectors only");
  const double* xp = local_->host_values(X.id);
  const double* yp = local_->host_values(Y.id);
  // This rank's part of each grid row it holds, summed as one process sums a row.
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(owned_.extent[1] * owned_.extent[2]));
  for (std::int64_t z = owned_.lo[2]; z < owned_.lo[2] + owned_.extent[2]; ++z)
    for (std::int64_t yy = owned_.lo[1]; yy < owned_.lo[1] + owned_.extent[1]; ++yy) {
      const std::int64_t i0 = local_index(owned_.lo[0], yy, z);
      double s = 0.0;
      for (std::int64_t i = i0; i < i0 + owned_.extent[0]; ++i) s += xp[i] * yp[i];
      mine.push_back(s);
    }
  std::vector<std::int64_t> counts;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    const Box b = decomposition_.owned(r);
    counts.push_back(b.extent[1] * b.extent[2]);
  }
  const std::vector<double> all = gather_all(mine, counts);
  // The rows in order, each row's parts in x order.
  const std::int64_t px = decomposition_.procs()[0], rows = n_[1] * n_[2];
  std::vector<double> parts(static_cast<std::size_t>(rows * px), 0.0);
  std::size_t at = 0;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    const Box b = decomposition_.owned(r);
    const std::int64_t cx = decomposition_.coords(r)[0];
    for (std::int64_t z = b.lo[2]; z < b.lo[2] + b.extent[2]; ++z)
      for (std::int64_t yy = b.lo[1]; yy < b.lo[1] + b.extent[1]; ++yy)
        parts[static_cast<std::size_t>((z * n_[1] + yy) * px + cx)] = all[at++];
  }
  double sum = 0.0;
  for (double p : parts) sum += p;
  return sum;
}

void DecomposedLevelOps::axpby(double a, int x, double b, int y) {
  Vector& Y = vector(y);
  if (Y.level > 0) {
    if (root()) coarse_->axpby(a, coarse_id(x), b, Y.id);
    return;
  }
  const bool fresh = vector(x).fresh && (b == 0.0 || Y.fresh);
  local_->axpby(a, vector(x).id, b, Y.id);
  Y.fresh = fresh;
}

void DecomposedLevelOps::multiply_add(double a, int w, int x, double b, int y) {
  Vector& Y = vector(y);
  if (Y.level > 0) {
    if (root()) coarse_->multiply_add(a, coarse_id(w), coarse_id(x), b, Y.id);
    return;
  }
  const bool fresh = vector(w).fresh && vector(x).fresh && (b == 0.0 || Y.fresh);
  local_->multiply_add(a, vector(w).id, vector(x).id, b, Y.id);
  Y.fresh = fresh;
}

void DecomposedLevelOps::round_to_fp32(int v) {
  Vector& V = vector(v);
  if (V.level > 0) {
    if (root()) coarse_->round_to_fp32(V.id);
    return;
  }
  local_->round_to_fp32(V.id);
}

}  // namespace heatsim::solver::parallel
