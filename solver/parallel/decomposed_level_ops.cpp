#include "decomposed_level_ops.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "comm.hpp"

namespace heatsim::solver::parallel {
namespace {

using kernels::LevelOperator;

const char* kAxis[] = {"x", "y", "z"};

// A level below the finest is split only where it has this many nodes per rank or more:
// below that the layers' messages cost more than the sweeps they divide.
// HEATSIM_MULTIGRID_SPLIT_POINTS overrides it (the tests split small levels with it).
std::int64_t split_points_per_rank() {
  if (const char* v = std::getenv("HEATSIM_MULTIGRID_SPLIT_POINTS")) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return n;
  }
  return 16384;
}

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

bool inside(const Box& b, std::int64_t x, std::int64_t y, std::int64_t z) {
  return x >= b.lo[0] && x < b.lo[0] + b.extent[0] && y >= b.lo[1] && y < b.lo[1] + b.extent[1] &&
         z >= b.lo[2] && z < b.lo[2] + b.extent[2];
}

}  // namespace

std::int64_t DecomposedLevelOps::Part::index(std::int64_t x, std::int64_t y, std::int64_t z) const {
  return index_in(local, x, y, z);
}

DecomposedLevelOps::DecomposedLevelOps(Decomposition decomposition, Factory make_ops,
                                       Factory gather_whole)
    : decomposition_(std::move(decomposition)),
      make_ops_(std::move(make_ops)),
      gather_whole_(std::move(gather_whole)) {
  if (decomposition_.halo() != 1)
    throw std::invalid_argument("decomposed level operations: the overlap must be one layer");
  if (!make_ops_) throw std::invalid_argument("decomposed level operations: no level operations");
}

DecomposedLevelOps::Vector& DecomposedLevelOps::vector(int v) {
  if (v < 0 || v >= static_cast<int>(vectors_.size()) ||
      vectors_[static_cast<std::size_t>(v)].level < 0)
    throw std::out_of_range("decomposed level ops: no vector " + std::to_string(v));
  return vectors_[static_cast<std::size_t>(v)];
}

Box DecomposedLevelOps::local_box(const Box& owned) const {
  Box b = owned;
  for (int a = 0; a < 3; ++a) {
    if (decomposition_.neighbour(a, 0) >= 0) {
      b.lo[a] -= 1;
      b.extent[a] += 1;
    }
    if (decomposition_.neighbour(a, 1) >= 0) b.extent[a] += 1;
  }
  return b;
}

LevelOperator DecomposedLevelOps::cut(const LevelOperator& level, Part& part) const {
  part.n = level.n;
  part.stencil = level.stencil_form();
  const Box& L = part.local;
  // The colours the CPU's level operations number by local coordinates' parities.
  part.colour_flip = part.stencil
                         ? static_cast<int>((L.lo[0] & 1) | (L.lo[1] & 1) << 1 | (L.lo[2] & 1) << 2)
                         : static_cast<int>((L.lo[0] + L.lo[1] + L.lo[2]) & 1);
  LevelOperator op;
  op.dims = dims_;
  op.n = L.extent;
  op.periodic = periodic_;
  const std::size_t np = static_cast<std::size_t>(L.points());
  const int kp = kernels::stencil_points(dims_);
  const std::int64_t ng = level.points();
  if (part.stencil) {
    op.stencil.resize(static_cast<std::size_t>(kp) * np);
  } else {
    op.node_term.resize(np);
    for (int a = 0; a < dims_; ++a) op.conductance[a].resize(np);
  }
  op.fixed.resize(np);
  part.fixed.resize(np);
  for_box(L, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    const std::size_t i = static_cast<std::size_t>(index_in(L, x, y, z));
    const std::int64_t g = index_of(level.n, x, y, z);
    if (part.stencil) {
      for (int k = 0; k < kp; ++k)
        op.stencil[static_cast<std::size_t>(k) * np + i] =
            level.stencil[static_cast<std::size_t>(k * ng + g)];
    } else {
      op.node_term[i] = level.node_term[static_cast<std::size_t>(g)];
      for (int a = 0; a < dims_; ++a)
        op.conductance[a][i] = level.conductance[a][static_cast<std::size_t>(g)];
    }
    part.fixed[i] = level.fixed[static_cast<std::size_t>(g)];
    // The neighbours' layer is fixed here: its values come from their owners.
    op.fixed[i] = inside(part.owned, x, y, z) ? part.fixed[i] : std::uint8_t{1};
  });
  return op;
}

DecomposedLevelOps::CoarseBoxes DecomposedLevelOps::coarse_boxes(const Box& owned,
                                                                 const Transfer& t) const {
  CoarseBoxes c;
  for (int a = 0; a < 3; ++a) {
    const std::vector<std::int64_t>& fi = t.fine_index[a];
    const auto first = [&](std::int64_t v) {
      return static_cast<std::int64_t>(std::lower_bound(fi.begin(), fi.end(), v) - fi.begin());
    };
    const std::int64_t lo = owned.lo[a], end = owned.lo[a] + owned.extent[a];
    c.owned.lo[a] = first(lo);
    c.owned.extent[a] = first(end) - c.owned.lo[a];
    // A finer node takes values from coarse nodes at most one finer node away.
    c.window.lo[a] = first(lo - 1);
    c.window.extent[a] =
        static_cast<std::int64_t>(std::upper_bound(fi.begin(), fi.end(), end) - fi.begin()) -
        c.window.lo[a];
  }
  return c;
}

void DecomposedLevelOps::add_part(const LevelOperator& level, const Box& owned) {
  Part p;
  p.owned = owned;
  p.local = local_box(owned);
  p.ops = make_ops_();
  std::vector<LevelOperator> mine;
  mine.push_back(cut(level, p));
  p.ops->adopt(std::move(mine));
  parts_.push_back(std::move(p));
}

void DecomposedLevelOps::check_levels(const std::vector<LevelOperator>& levels) const {
  if (levels.empty()) throw std::invalid_argument("decomposed level operations: no levels");
  if (levels[0].n != decomposition_.global_n())
    throw std::invalid_argument(
        "decomposed level operations: the hierarchy's grid is not the "
        "decomposition's");
}

void DecomposedLevelOps::build(const std::vector<LevelOperator>& levels, bool keep_finest) {
  check_levels(levels);
  const LevelOperator& finest = levels[0];
  if (finest.stencil_form())
    throw std::invalid_argument("decomposed level operations: the finest level must be compact");
  dims_ = finest.dims;
  levels_ = static_cast<int>(levels.size());
  for (int a = 0; a < 3; ++a) {
    periodic_[a] = a < dims_ && finest.periodic[a];
    if (periodic_[a] && decomposition_.procs()[a] > 1)
      throw DecompositionError(std::string("implicit and steady runs keep a periodic axis on "
                                              "one rank; the decomposition splits ") +
                                  kAxis[a] + " (set parallel.decomposition's " + kAxis[a] +
                                  " count to 1)");
  }
  coarse_.reset();
  split_bottom_.reset();
  transfers_.clear();
  if (keep_finest) {
    parts_.resize(1);
    parts_[0].ops->replace_hierarchy({cut(finest, parts_[0])});
  } else {
    parts_.clear();
    add_part(finest, decomposition_.owned());
  }
  const int ranks = decomposition_.ranks(), rank = decomposition_.rank();
  std::vector<Box> owned(static_cast<std::size_t>(ranks));  // every rank's, on level l - 1
  for (int r = 0; r < ranks; ++r) owned[static_cast<std::size_t>(r)] = decomposition_.owned(r);
  for (int l = 1; l < levels_; ++l) {
    const LevelOperator& C = levels[static_cast<std::size_t>(l)];
    Transfer t;
    t.n = C.n;
    for (int a = 0; a < 3; ++a) {
      t.fine_index[a] = a < dims_ ? C.fine_index[a] : std::vector<std::int64_t>{0};
      t.from[a] = kernels::axis_transfer(levels[static_cast<std::size_t>(l - 1)].n[a], periodic_[a],
                                         t.fine_index[a]);
    }
    std::vector<CoarseBoxes> boxes;
    for (int r = 0; r < ranks; ++r)
      boxes.push_back(coarse_boxes(owned[static_cast<std::size_t>(r)], t));
    t.mine = boxes[static_cast<std::size_t>(rank)];
    const int kp = kernels::stencil_points(dims_);
    const std::int64_t nw = t.mine.window.points(), nc = C.points();
    t.prolongation.resize(static_cast<std::size_t>(kp * nw));
    for (int k = 0; k < kp; ++k)
      for_box(t.mine.window, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        t.prolongation[static_cast<std::size_t>(k * nw + index_in(t.mine.window, x, y, z))] =
            C.prolongation[static_cast<std::size_t>(k * nc + index_of(C.n, x, y, z))];
      });
    t.fixed.resize(static_cast<std::size_t>(t.mine.owned.points()));
    for_box(t.mine.owned, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
      t.fixed[static_cast<std::size_t>(index_in(t.mine.owned, x, y, z))] =
          C.fixed[static_cast<std::size_t>(index_of(C.n, x, y, z))];
    });
    // Split this level too? Not the coarsest (the bottom solve's dot products are rank 0's),
    // not a small one, and only where every rank keeps two nodes or more along each split
    // axis, so that the layer beside its box is its neighbour's.
    bool splits = l < levels_ - 1 && nc >= split_points_per_rank() * ranks;
    for (const CoarseBoxes& b : boxes)
      for (int a = 0; a < dims_; ++a)
        if (decomposition_.procs()[a] > 1 && b.owned.extent[a] < 2) splits = false;
    if (splits) {
      add_part(C, t.mine.owned);
      transfers_.push_back(std::move(t));
      for (int r = 0; r < ranks; ++r)
        owned[static_cast<std::size_t>(r)] = boxes[static_cast<std::size_t>(r)].owned;
      continue;
    }
    t.all = std::move(boxes);
    transfers_.push_back(std::move(t));
    if (root()) {
      coarse_ = make_ops_();
      coarse_->setup(std::vector<LevelOperator>(levels.begin() + l, levels.end()));
    }
    break;
  }
}

void DecomposedLevelOps::gather(std::vector<LevelOperator> levels) {
  check_levels(levels);
  dims_ = levels[0].dims;
  for (int a = 0; a < 3; ++a) periodic_[a] = a < dims_ && levels[0].periodic[a];
  levels_ = static_cast<int>(levels.size());
  parts_.clear();
  transfers_.clear();
  coarse_.reset();
  split_bottom_.reset();
  if (root()) {
    coarse_ = gather_whole_();
    coarse_->adopt(std::move(levels));
  }
  gathered_replaces_finest_ =
      gather_all(root() && coarse_->replaces_finest() ? 1.0 : 0.0)[0] != 0.0;
}

void DecomposedLevelOps::setup(const std::vector<LevelOperator>& levels) {
  if (gathered_whole()) {
    adopt(levels);
    return;
  }
  vectors_.clear();
  local_piece_.clear();
  pieces_ = 0;
  build(levels, false);
}

void DecomposedLevelOps::adopt(std::vector<LevelOperator> levels) {
  if (!gathered_whole()) {
    setup(levels);  // each rank cuts its parts from the levels, which it does not keep
    return;
  }
  vectors_.clear();
  sparse_ids_.clear();
  pieces_ = 0;
  gather(std::move(levels));
}

void DecomposedLevelOps::replace_hierarchy(const std::vector<LevelOperator>& levels) {
  if (gathered_whole()) {
    if (levels.empty() || levels[0].n != decomposition_.global_n())
      throw std::invalid_argument("level ops: the new finest level has another number of points");
    for (Vector& v : vectors_)
      if (v.level > 0) v = Vector{-1, -1, false};
    levels_ = static_cast<int>(levels.size());
    if (root()) coarse_->replace_hierarchy(levels);
    return;
  }
  if (levels.empty() || parts_.empty() || levels[0].n != parts_[0].n)
    throw std::invalid_argument("level ops: the new finest level has another number of points");
  // The finest part keeps its box, so its vectors keep their layout and values.
  for (Vector& v : vectors_)
    if (v.level > 0) v = Vector{-1, -1, false};
  build(levels, true);
}

void DecomposedLevelOps::release_finest() {
  if (gathered_whole()) {
    if (root() && coarse_) coarse_->release_finest();
  } else if (!parts_.empty()) {
    parts_[0].ops->release_finest();
  }
}

void DecomposedLevelOps::replace_finest(LevelOperator level) {
  if (!replaces_finest())
    throw std::logic_error("level ops: rank 0's level operations replace whole hierarchies");
  if (level.n != decomposition_.global_n() || level.stencil_form())
    throw std::invalid_argument("level ops: the new finest level has another shape");
  if (gathered_whole()) {
    if (root()) coarse_->replace_finest(std::move(level));
    return;
  }
  // The finest part keeps its box, so its vectors keep their layout and values.
  parts_[0].ops->replace_hierarchy({cut(level, parts_[0])});
}

int DecomposedLevelOps::create_vector(int level) {
  if (level < 0 || level >= levels_)
    throw std::out_of_range("level ops: no level " + std::to_string(level));
  Vector v;
  v.level = level;
  if (split(level)) {
    kernels::LevelOps& ops = *parts_[static_cast<std::size_t>(level)].ops;
    v.id = ops.create_vector(0);
    if (!ops.host_values(v.id))
      throw std::invalid_argument(
          "decomposed level operations: a part's vectors must be in "
          "host memory");
  } else {
    v.id = root() ? coarse_->create_vector(level - split_levels()) : -1;
  }
  // A released coarse vector's id is given again (as the CPU's level operations do), so that
  // a solver replacing its hierarchy at every outer iteration keeps as few ids as vectors.
  for (std::size_t id = 0; id < vectors_.size(); ++id)
    if (vectors_[id].level < 0) {
      vectors_[id] = v;
      return static_cast<int>(id);
    }
  vectors_.push_back(v);
  return static_cast<int>(vectors_.size()) - 1;
}

void DecomposedLevelOps::upload(int v, const std::vector<double>& values) {
  Vector& V = vector(v);
  if (V.level != 0)
    throw std::logic_error("decomposed level operations: uploads of level-0 vectors only");
  if (gathered_whole()) {
    if (root()) coarse_->upload(V.id, values);
    return;
  }
  const Part& P = parts_[0];
  if (static_cast<std::int64_t>(values.size()) != P.n[0] * P.n[1] * P.n[2])
    throw std::invalid_argument("level ops: upload of " + std::to_string(values.size()) +
                                " values into a field of " +
                                std::to_string(P.n[0] * P.n[1] * P.n[2]));
  P.ops->upload(V.id, extract_box(values, P.n, P.local));
  V.fresh = true;
}

void DecomposedLevelOps::download(int v, std::vector<double>& values) {
  Vector& V = vector(v);
  if (V.level != 0)
    throw std::logic_error("decomposed level operations: downloads of level-0 vectors only");
  if (gathered_whole()) {
    const std::array<std::int64_t, 3>& n = decomposition_.global_n();
    if (root()) coarse_->download(V.id, values);
    values = from_root(values, static_cast<std::size_t>(n[0] * n[1] * n[2]));
    return;
  }
  const Part& P = parts_[0];
  const double* p = P.ops->host_values(V.id);
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(P.owned.points()));
  for_box(P.owned, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    mine.push_back(p[P.index(x, y, z)]);
  });
  std::vector<std::int64_t> counts;
  std::vector<Box> boxes;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    boxes.push_back(decomposition_.owned(r));
    counts.push_back(boxes.back().points());
  }
  values.assign(static_cast<std::size_t>(P.n[0] * P.n[1] * P.n[2]), 0.0);
  insert_boxes(values, P.n, boxes, gather_all(mine, counts));
}

int DecomposedLevelOps::create_sparse(const std::vector<std::int64_t>& nodes,
                                      const std::vector<double>& values) {
  if (nodes.size() != values.size())
    throw std::invalid_argument("level ops: a sparse vector's nodes and values differ in number");
  if (gathered_whole()) {
    sparse_ids_.push_back(root() ? coarse_->create_sparse(nodes, values) : -1);
    return static_cast<int>(sparse_ids_.size()) - 1;
  }
  const Part& P = parts_.at(0);
  std::vector<std::int64_t> mine;
  std::vector<double> mine_values;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const std::int64_t g = nodes[k];
    const std::int64_t x = g % P.n[0], y = g / P.n[0] % P.n[1], z = g / (P.n[0] * P.n[1]);
    if (!inside(P.local, x, y, z)) continue;
    mine.push_back(P.index(x, y, z));
    mine_values.push_back(values[k]);
  }
  return P.ops->create_sparse(mine, mine_values);
}

// Every rank that holds a node writes the same value there: the layer stays current if it was.
void DecomposedLevelOps::scatter(double a, int s, int y, bool assign) {
  if (gathered_whole()) {
    if (root()) coarse_->scatter(a, sparse_ids_.at(static_cast<std::size_t>(s)), id(y), assign);
    return;
  }
  parts_.at(0).ops->scatter(a, s, id(y), assign);
}

bool DecomposedLevelOps::set_pieces(const std::vector<std::int32_t>& piece, std::int64_t count) {
  if (gathered_whole()) {
    const bool taken =
        gather_all(root() && coarse_->set_pieces(piece, count) ? 1.0 : 0.0)[0] != 0.0;
    if (taken) pieces_ = count;
    return taken;
  }
  Part& P = parts_.at(0);
  if (piece.size() != static_cast<std::size_t>(P.n[0] * P.n[1] * P.n[2]))
    throw std::invalid_argument("level ops: pieces for another number of points");
  std::vector<std::int32_t> local(static_cast<std::size_t>(P.local.points()), -1);
  const Box& O = P.owned;
  for (std::int64_t z = O.lo[2]; z < O.lo[2] + O.extent[2]; ++z)
    for (std::int64_t y = O.lo[1]; y < O.lo[1] + O.extent[1]; ++y)
      for (std::int64_t x = O.lo[0]; x < O.lo[0] + O.extent[0]; ++x)
        local[static_cast<std::size_t>(P.index(x, y, z))] =
            piece[static_cast<std::size_t>(index_of(P.n, x, y, z))];
  if (!P.ops->set_pieces(local, count)) return false;
  local_piece_ = std::move(local);
  pieces_ = count;
  return true;
}

void DecomposedLevelOps::piece_sums(int v, std::vector<double>& sums) {
  const Vector& V = vector(v);
  if (V.level != 0 || pieces_ == 0)
    throw std::logic_error("decomposed level operations: piece sums of a level-0 vector, with pieces");
  if (gathered_whole()) {
    if (root()) coarse_->piece_sums(V.id, sums);
    sums = from_root(sums, static_cast<std::size_t>(pieces_));
    return;
  }
  const Part& P = parts_[0];
  const double* vp = P.ops->host_values(V.id);
  // Each owned row's partials as PieceRowSums forms them, continued from the rank before along
  // x: per row, the count of pieces met, then (piece, partial) pairs.
  const Box& O = P.owned;
  const int before = decomposition_.neighbour(0, 0), after = decomposition_.neighbour(0, 1);
  std::vector<double> carried, none;
  if (before >= 0) {
    std::vector<double> size(1, 0.0);
    send_receive(none, -1, size, before, 810);
    carried.resize(static_cast<std::size_t>(size[0]));
    send_receive(none, -1, carried, before, 811);
  }
  kernels::PieceRowSums row(pieces_);
  std::vector<double> rows, met;
  std::size_t at = 0;
  for (std::int64_t z = O.lo[2]; z < O.lo[2] + O.extent[2]; ++z)
    for (std::int64_t y = O.lo[1]; y < O.lo[1] + O.extent[1]; ++y) {
      if (before >= 0) {
        const std::size_t k = static_cast<std::size_t>(carried.at(at++));
        for (std::size_t j = 0; j < k; ++j, at += 2)
          row.carry(static_cast<std::int32_t>(carried.at(at)), carried.at(at + 1));
      }
      for (std::int64_t x = O.lo[0]; x < O.lo[0] + O.extent[0]; ++x) {
        const std::size_t i = static_cast<std::size_t>(P.index(x, y, z));
        if (local_piece_[i] >= 0) row.add(local_piece_[i], vp[i]);
      }
      met.clear();
      row.finish([&](std::int32_t g, double partial) {
        met.push_back(static_cast<double>(g));
        met.push_back(partial);
      });
      rows.push_back(static_cast<double>(met.size() / 2));
      rows.insert(rows.end(), met.begin(), met.end());
    }
  if (after >= 0) {
    send_receive({static_cast<double>(rows.size())}, after, none, -1, 810);
    send_receive(rows, after, none, -1, 811);
    rows.clear();  // the last rank along x gives the rows' partials
  }
  const std::vector<double> sizes = gather_all(static_cast<double>(rows.size()));
  std::vector<std::int64_t> counts;
  for (double n : sizes) counts.push_back(static_cast<std::int64_t>(n));
  const std::vector<double> all = gather_all(rows, counts);
  // Where each grid row's partials start in `all`, then the rows in order, as one process adds
  // them.
  std::vector<std::size_t> start(static_cast<std::size_t>(P.n[1] * P.n[2]), all.size());
  std::size_t k = 0;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    if (counts[static_cast<std::size_t>(r)] == 0) continue;
    const Box b = decomposition_.owned(r);
    for (std::int64_t z = b.lo[2]; z < b.lo[2] + b.extent[2]; ++z)
      for (std::int64_t y = b.lo[1]; y < b.lo[1] + b.extent[1]; ++y) {
        start[static_cast<std::size_t>(z * P.n[1] + y)] = k;
        k += 1 + 2 * static_cast<std::size_t>(all.at(k));
      }
  }
  sums.assign(static_cast<std::size_t>(pieces_), 0.0);
  for (std::size_t s : start) {
    if (s >= all.size()) continue;  // a row of no rank's (not possible) or with nothing
    const std::size_t n = static_cast<std::size_t>(all[s]);
    for (std::size_t j = 0; j < n; ++j)
      sums.at(static_cast<std::size_t>(all[s + 1 + 2 * j])) += all[s + 2 + 2 * j];
  }
}

void DecomposedLevelOps::piece_add(const std::vector<double>& values, int v) {
  Vector& V = vector(v);
  if (V.level != 0) throw std::logic_error("decomposed level operations: piece_add on level 0 only");
  if (gathered_whole()) {
    if (root()) coarse_->piece_add(values, V.id);
    return;
  }
  parts_[0].ops->piece_add(values, V.id);
  V.fresh = false;  // the neighbours' layer (in no piece here) holds their values from before
}

void DecomposedLevelOps::exchange(const Part& part, double* values) {
  const Box &owned = part.owned, &local = part.local;
  for (int a = 0; a < dims_; ++a) {
    const int lower = decomposition_.neighbour(a, 0), upper = decomposition_.neighbour(a, 1);
    if (lower < 0 && upper < 0) continue;
    // One layer across axis a: the local box's extent along the axes exchanged before (their
    // layers arrived already, so edges and corners travel on), the owned one along the later.
    const auto layer = [&](std::int64_t c) {
      Box b;
      for (int ax = 0; ax < 3; ++ax) {
        const Box& from = ax < a ? local : owned;
        b.lo[ax] = ax == a ? c : from.lo[ax];
        b.extent[ax] = ax == a ? 1 : from.extent[ax];
      }
      return b;
    };
    const std::int64_t first = owned.lo[a], last = owned.lo[a] + owned.extent[a] - 1;
    const auto pack = [&](const Box& b) {
      std::vector<double> out;
      out.reserve(static_cast<std::size_t>(b.points()));
      for_box(b, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        out.push_back(values[part.index(x, y, z)]);
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
    send_receive_all({{down.data(), down.size(), lower, from_upper.data(), from_upper.size(), upper,
                       tag_down},
                      {up.data(), up.size(), upper, from_lower.data(), from_lower.size(), lower,
                       tag_up}});
    const auto unpack = [&](const Box& b, const std::vector<double>& in) {
      std::size_t k = 0;
      for_box(b, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
        values[part.index(x, y, z)] = in[k++];
      });
    };
    if (lower >= 0) unpack(layer(first - 1), from_lower);
    if (upper >= 0) unpack(layer(last + 1), from_upper);
  }
}

void DecomposedLevelOps::refresh(int v) {
  Vector& V = vector(v);
  if (!split(V.level) || V.fresh) return;
  const Part& P = parts_[static_cast<std::size_t>(V.level)];
  exchange(P, P.ops->host_values(V.id));
  V.fresh = true;
}

template <typename Op>
void DecomposedLevelOps::reading_neighbours(int level, int x, int out, Op&& op) {
  if (!split(level)) {
    if (root()) op(*coarse_, level - split_levels());
    return;
  }
  refresh(x);
  op(*parts_[static_cast<std::size_t>(level)].ops, 0);
  vector(out).fresh = false;
}

void DecomposedLevelOps::residual(int level, int b, int x, int r) {
  reading_neighbours(level, x, r,
                     [&](kernels::LevelOps& ops, int l) { ops.residual(l, id(b), id(x), id(r)); });
}

void DecomposedLevelOps::cycle_residual(int level, int b, int x, int r) {
  reading_neighbours(level, x, r, [&](kernels::LevelOps& ops, int l) {
    ops.cycle_residual(l, id(b), id(x), id(r));
  });
}

void DecomposedLevelOps::apply(int level, int x, int y) {
  reading_neighbours(level, x, y,
                     [&](kernels::LevelOps& ops, int l) { ops.apply(l, id(x), id(y)); });
}

void DecomposedLevelOps::magnitude(int level, int b, int x, int out) {
  reading_neighbours(level, x, out, [&](kernels::LevelOps& ops, int l) {
    ops.magnitude(l, id(b), id(x), id(out));
  });
}

// The colours in the order smooth() takes them over the whole grid (red then black on the
// finest level; the 2^dims parity colours below it), each reading the others' current values,
// the neighbours' included.
void DecomposedLevelOps::smooth(int level, int b, int x, int sweeps, bool reverse, double omega) {
  if (!split(level)) {
    if (root()) coarse_->smooth(level - split_levels(), id(b), id(x), sweeps, reverse, omega);
    return;
  }
  const Part& P = parts_[static_cast<std::size_t>(level)];
  const int colours = P.stencil ? 1 << dims_ : 2;
  for (int s = 0; s < sweeps; ++s)
    for (int c = 0; c < colours; ++c) {
      const int colour = reverse ? colours - 1 - c : c;
      refresh(x);
      P.ops->smooth_colour(0, id(b), id(x), colour ^ P.colour_flip, omega);
      vector(x).fresh = false;
    }
}

void DecomposedLevelOps::restrict_residual(int fine_level, int r_fine, int b_coarse) {
  if (!split(fine_level)) {
    if (root()) coarse_->restrict_residual(fine_level - split_levels(), id(r_fine), id(b_coarse));
    return;
  }
  refresh(r_fine);
  const Part& F = parts_[static_cast<std::size_t>(fine_level)];
  const Transfer& t = transfers_[static_cast<std::size_t>(fine_level)];
  const double* rp = F.ops->host_values(id(r_fine));
  const int kp = kernels::stencil_points(dims_);
  const std::int64_t nw = t.mine.window.points();
  // The finer coordinate at offset o of a coarse node's own (as the CPU's gather table).
  const auto finer = [&](int a, std::int64_t c, int o) -> std::int64_t {
    const std::int64_t f = t.fine_index[a][static_cast<std::size_t>(c)] + o, n = F.n[a];
    if (f < 0) return periodic_[a] ? f + n : -1;
    if (f >= n) return periodic_[a] ? f - n : -1;
    return f;
  };
  std::vector<double> mine(static_cast<std::size_t>(t.mine.owned.points()));
  for_box(t.mine.owned, [&](std::int64_t X, std::int64_t Y, std::int64_t Z) {
    const std::size_t I = static_cast<std::size_t>(index_in(t.mine.owned, X, Y, Z));
    if (t.fixed[I]) {
      mine[I] = 0.0;
      return;
    }
    const std::int64_t at[3] = {X, Y, Z};
    const std::int64_t J = index_in(t.mine.window, X, Y, Z);
    double sum = 0.0;
    for (int k = 0; k < kp; ++k) {
      const double w = static_cast<double>(t.prolongation[static_cast<std::size_t>(k * nw + J)]);
      if (w == 0.0) continue;
      std::int64_t f[3] = {0, 0, 0};
      for (int a = 0; a < dims_; ++a) f[a] = finer(a, at[a], kernels::stencil_offset(k, a));
      sum += w * rp[F.index(f[0], f[1], f[2])];
    }
    mine[I] = sum;
  });
  if (split(fine_level + 1)) {
    const Part& C = parts_[static_cast<std::size_t>(fine_level + 1)];
    double* bp = C.ops->host_values(id(b_coarse));
    std::size_t k = 0;
    for_box(t.mine.owned, [&](std::int64_t X, std::int64_t Y, std::int64_t Z) {
      bp[C.index(X, Y, Z)] = mine[k++];
    });
    vector(b_coarse).fresh = false;
    return;
  }
  std::vector<std::int64_t> counts;
  std::vector<Box> boxes;
  for (const CoarseBoxes& c : t.all) {
    boxes.push_back(c.owned);
    counts.push_back(c.owned.points());
  }
  const std::vector<double> all = gather_to_root(mine, counts);
  if (!root()) return;
  std::vector<double> b(static_cast<std::size_t>(t.n[0] * t.n[1] * t.n[2]), 0.0);
  insert_boxes(b, t.n, boxes, all);
  coarse_->upload(id(b_coarse), b);
}

void DecomposedLevelOps::prolong_add(int fine_level, int x_coarse, int x_fine) {
  if (!split(fine_level)) {
    if (root()) coarse_->prolong_add(fine_level - split_levels(), id(x_coarse), id(x_fine));
    return;
  }
  const Part& F = parts_[static_cast<std::size_t>(fine_level)];
  const Transfer& t = transfers_[static_cast<std::size_t>(fine_level)];
  const Box& W = t.mine.window;
  std::vector<double> window;
  if (split(fine_level + 1)) {
    // The window lies in the coarse part's box, its neighbours' layer included.
    refresh(x_coarse);
    const Part& C = parts_[static_cast<std::size_t>(fine_level + 1)];
    const double* cp = C.ops->host_values(id(x_coarse));
    window.reserve(static_cast<std::size_t>(W.points()));
    for_box(W, [&](std::int64_t X, std::int64_t Y, std::int64_t Z) {
      window.push_back(cp[C.index(X, Y, Z)]);
    });
  } else {
    std::vector<std::int64_t> counts;
    for (const CoarseBoxes& c : t.all) counts.push_back(c.window.points());
    std::vector<double> all;
    if (root()) {
      std::vector<double> xc;
      coarse_->download(id(x_coarse), xc);
      for (const CoarseBoxes& c : t.all) {
        const std::vector<double> part = extract_box(xc, t.n, c.window);
        all.insert(all.end(), part.begin(), part.end());
      }
    }
    window = scatter_from_root(all, counts);
  }
  double* xp = F.ops->host_values(id(x_fine));
  const std::int64_t nw = W.points();
  for_box(F.owned, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    const std::int64_t i = F.index(x, y, z);
    if (F.fixed[static_cast<std::size_t>(i)]) return;
    const auto& tz = t.from[2].from[static_cast<std::size_t>(z)];
    const auto& ty = t.from[1].from[static_cast<std::size_t>(y)];
    const auto& tx = t.from[0].from[static_cast<std::size_t>(x)];
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
          sum += static_cast<double>(t.prolongation[static_cast<std::size_t>(k * nw + J)]) *
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
  if (split(level)) {
    LevelOps::conjugate_gradients(level, b, x, r, p, q, tolerance, limit);
    return;
  }
  if (root())
    coarse_->conjugate_gradients(level - split_levels(), id(b), id(x), id(r), id(p), id(q),
                                 tolerance, limit);
}

bool DecomposedLevelOps::set_bottom_factor(int level, kernels::BottomFactor factor) {
  if (split(level)) {
    if (level != 0 || levels_ != 1) return false;
    split_bottom_work_.assign(static_cast<std::size_t>(factor.rows()), 0.0);
    split_bottom_ = std::move(factor);
    return true;
  }
  const bool taken =
      root() && coarse_->set_bottom_factor(level - split_levels(), std::move(factor));
  return gather_all(taken ? 1.0 : 0.0)[0] != 0.0;
}

void DecomposedLevelOps::bottom_solve(int level, int b, int x, int r, bool from_zero) {
  if (split(level)) {
    if (!split_bottom_ || level != 0) return LevelOps::bottom_solve(level, b, x, r, from_zero);
    // The whole level on every rank: x from zero (upload writes all of it) or as it stands.
    if (!from_zero) residual(level, b, x, r);
    std::vector<double> rhs, whole;
    download(from_zero ? b : r, rhs);
    if (from_zero)
      whole.assign(rhs.size(), 0.0);
    else
      download(x, whole);
    split_bottom_->solve_add(rhs.data(), whole.data(), split_bottom_work_.data());
    upload(x, whole);
    return;
  }
  if (root()) coarse_->bottom_solve(level - split_levels(), id(b), id(x), id(r), from_zero);
}

// The free nodes of the whole local box, the neighbours' layer too: what their owners do to
// them, so the layer stays current if it was.
void DecomposedLevelOps::zero_free(int level, int v) {
  if (!split(level)) {
    if (root()) coarse_->zero_free(level - split_levels(), id(v));
    return;
  }
  const Part& P = parts_[static_cast<std::size_t>(level)];
  double* p = P.ops->host_values(id(v));
  for (std::size_t i = 0; i < P.fixed.size(); ++i)
    if (!P.fixed[i]) p[i] = 0.0;
}

double DecomposedLevelOps::dot(int x, int y) {
  const Vector &X = vector(x), &Y = vector(y);
  if (X.level != 0 || Y.level != 0)
    throw std::logic_error("decomposed level operations: dot products of level-0 vectors only");
  if (gathered_whole()) return gather_all(root() ? coarse_->dot(X.id, Y.id) : 0.0)[0];
  const Part& P = parts_[0];
  const double* xp = P.ops->host_values(X.id);
  const double* yp = P.ops->host_values(Y.id);
  // Each grid row summed as one process sums it, x after x: where x is split, a rank starts
  // from the sums the rank before it along x reached on the same rows and hands its own on,
  // so the last rank along x holds the whole rows' sums (px - 1 messages in a chain).
  const Box& O = P.owned;
  const std::size_t rows_here = static_cast<std::size_t>(O.extent[1] * O.extent[2]);
  const int before = decomposition_.neighbour(0, 0), after = decomposition_.neighbour(0, 1);
  std::vector<double> sums(rows_here, 0.0), none;
  if (before >= 0) send_receive(none, -1, sums, before, 800);
  std::size_t row = 0;
  for (std::int64_t z = O.lo[2]; z < O.lo[2] + O.extent[2]; ++z)
    for (std::int64_t yy = O.lo[1]; yy < O.lo[1] + O.extent[1]; ++yy, ++row) {
      const std::int64_t i0 = P.index(O.lo[0], yy, z);
      double s = sums[row];
      for (std::int64_t i = i0; i < i0 + O.extent[0]; ++i) s += xp[i] * yp[i];
      sums[row] = s;
    }
  if (after >= 0) {
    send_receive(sums, after, none, -1, 800);
    sums.clear();  // the last rank along x gives the rows' sums
  }
  std::vector<std::int64_t> counts;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    const Box b = decomposition_.owned(r);
    counts.push_back(decomposition_.neighbour(0, 1, r) >= 0 ? 0 : b.extent[1] * b.extent[2]);
  }
  const std::vector<double> all = gather_all(sums, counts);
  // The rows in order, as one process adds them.
  std::vector<double> rows(static_cast<std::size_t>(P.n[1] * P.n[2]), 0.0);
  std::size_t at = 0;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    if (counts[static_cast<std::size_t>(r)] == 0) continue;
    const Box b = decomposition_.owned(r);
    for (std::int64_t z = b.lo[2]; z < b.lo[2] + b.extent[2]; ++z)
      for (std::int64_t yy = b.lo[1]; yy < b.lo[1] + b.extent[1]; ++yy)
        rows[static_cast<std::size_t>(z * P.n[1] + yy)] = all[at++];
  }
  double sum = 0.0;
  for (double p : rows) sum += p;
  return sum;
}

void DecomposedLevelOps::axpby(double a, int x, double b, int y) {
  Vector& Y = vector(y);
  if (!split(Y.level)) {
    if (root()) coarse_->axpby(a, id(x), b, Y.id);
    return;
  }
  const bool fresh = vector(x).fresh && (b == 0.0 || Y.fresh);
  parts_[static_cast<std::size_t>(Y.level)].ops->axpby(a, id(x), b, Y.id);
  Y.fresh = fresh;
}

void DecomposedLevelOps::zero(int v) {
  Vector& V = vector(v);
  if (!split(V.level)) {
    if (root()) coarse_->zero(V.id);
    return;
  }
  parts_[static_cast<std::size_t>(V.level)].ops->zero(V.id);
  V.fresh = true;  // the ghost layer too
}

void DecomposedLevelOps::multiply_add(double a, int w, int x, double b, int y) {
  Vector& Y = vector(y);
  if (!split(Y.level)) {
    if (root()) coarse_->multiply_add(a, id(w), id(x), b, Y.id);
    return;
  }
  const bool fresh = vector(w).fresh && vector(x).fresh && (b == 0.0 || Y.fresh);
  parts_[static_cast<std::size_t>(Y.level)].ops->multiply_add(a, id(w), id(x), b, Y.id);
  Y.fresh = fresh;
}

void DecomposedLevelOps::round_to_fp32(int v) {
  Vector& V = vector(v);
  if (!split(V.level)) {
    if (root()) coarse_->round_to_fp32(V.id);
    return;
  }
  parts_[static_cast<std::size_t>(V.level)].ops->round_to_fp32(V.id);
}

std::vector<double> DecomposedLevelOps::from_root(const std::vector<double>& values,
                                                  std::size_t count) const {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(decomposition_.ranks()), 0);
  counts[0] = static_cast<std::int64_t>(count);
  if (root() && values.size() != count)
    throw std::logic_error("decomposed level operations: rank 0 holds " +
                           std::to_string(values.size()) + " values, not " + std::to_string(count));
  return gather_all(root() ? values : std::vector<double>(), counts);
}

}  // namespace heatsim::solver::parallel
