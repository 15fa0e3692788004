#include "decomposed_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "comm.hpp"

namespace heatsim::solver::parallel {

DecomposedBackend::DecomposedBackend(std::unique_ptr<kernels::Backend> local,
                                     DecomposedOptions options)
    : local_(std::move(local)), options_(options) {}

void DecomposedBackend::setup(const kernels::StencilProblem& problem) {
  global_ = problem;
  const int radius = std::max(1, problem.stencil.radius);
  // Steps per exchange: a multiple of the fusion depth the local backend runs at. That depth
  // is known after setup; when it differs from the request the overlap is set up again.
  int depth = std::max(1, problem.fusion_depth);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int want = std::max(options_.exchange_every, depth);
    exchange_every_ = (want + depth - 1) / depth * depth;
    decomposition_ =
        Decomposition(problem, size(), rank(), exchange_every_ * radius, options_.procs);
    local_->setup(local_problem(problem, decomposition_));
    const int got = std::max(1, local_->fusion_depth());
    if (exchange_every_ % got == 0) break;
    depth = got;
  }
  if (exchange_every_ % std::max(1, local_->fusion_depth()) != 0)
    throw std::runtime_error("decomposed run: the backend's fusion depth does not settle");
  // Every rank must run the same passes as the serial run: the same fusion depth everywhere.
  std::vector<std::int64_t> depths{local_->fusion_depth(), -local_->fusion_depth()};
  max_all(depths);
  if (depths[0] != -depths[1])
    throw std::runtime_error("decomposed run: the ranks' backends fuse " +
                             std::to_string(-depths[1]) + " to " + std::to_string(depths[0]) +
                             " steps per pass; a decomposed run needs one depth");

  // The exchange's four slabs (one out and one in per side), in staging the local backend
  // allocates (pinned on a GPU, so its copies need no staging of the driver's) and kept for
  // the run: a slab across axis a spans the local extent of the axes before a and the owned
  // extent of those after it.
  const Box owned = decomposition_.owned(), local = decomposition_.local();
  slab_points_ = 0;
  for (int a = 0; a < problem.dims; ++a) {
    if (decomposition_.procs()[a] == 1) continue;
    std::int64_t points = decomposition_.halo();
    for (int b = 0; b < 3; ++b)
      if (b != a) points *= b < a ? local.extent[b] : owned.extent[b];
    slab_points_ = std::max(slab_points_, static_cast<std::size_t>(points));
  }
  staging_ =
      local_->allocate_host_staging(std::max<std::size_t>(1, 4 * slab_points_) * sizeof(double));
  share_slabs();

  // The interior a pass may step while the halo travels: with one pass per exchange, an owned
  // node at least `halo` nodes from every side with a neighbour reads no overlap node.
  Box inner = owned;
  bool inner_left = true;
  for (int a = 0; a < problem.dims; ++a) {
    if (decomposition_.procs()[a] == 1) continue;
    for (int side = 0; side < 2; ++side) {
      if (decomposition_.neighbour(a, side) < 0) continue;
      if (side == 0) inner.lo[a] += decomposition_.halo();
      inner.extent[a] -= decomposition_.halo();
    }
    inner_left = inner_left && inner.extent[a] > 0;
  }
  const char* overlap_switch = std::getenv("HEATSIM_HALO_OVERLAP");
  split_ = options_.overlap_halo && inner_left && exchange_every_ == local_->fusion_depth() &&
           !(overlap_switch && std::string(overlap_switch) == "0");
  if (split_) inner_ = field_box(inner);
  overlaps_stale_ = false;

  // The owned nodes' weights in the total heat, as the serial backends weigh them (0 inside a
  // void, a node of capacity 0, which the statistics leave out), and the law of a node whose
  // capacity varies with temperature (its heat is C_ref h(u), temperature_laws.hpp).
  weights_.assign(static_cast<std::size_t>(owned.points()), 1.0);
  const double* capacity = problem.coefficients ? problem.coefficients->capacity.data() : nullptr;
  laws_ = problem.coefficients ? problem.coefficients->temperature : nullptr;
  bool varying_capacity = false;
  if (laws_)
    for (const kernels::TemperatureLaw& law : laws_->laws)
      varying_capacity = varying_capacity || law.varying_capacity();
  law_.clear();
  if (varying_capacity) law_.assign(static_cast<std::size_t>(owned.points()), -1);
  std::size_t k = 0;
  for (std::int64_t z = 0; z < owned.extent[2]; ++z)
    for (std::int64_t y = 0; y < owned.extent[1]; ++y)
      for (std::int64_t x = 0; x < owned.extent[0]; ++x, ++k) {
        const std::array<std::int64_t, 3> g{owned.lo[0] + x, owned.lo[1] + y, owned.lo[2] + z};
        double w = 1.0;
        for (int a = 0; a < problem.dims; ++a)
          if (!problem.periodic(a) && (g[a] == 0 || g[a] == problem.n[a] - 1)) w *= 0.5;
        const auto i = static_cast<std::size_t>((g[2] * problem.n[1] + g[1]) * problem.n[0] + g[0]);
        if (capacity) w *= capacity[i];
        weights_[k] = w;
        if (!law_.empty()) {
          const std::int32_t l = laws_->law[i];
          if (l >= 0 && laws_->laws[static_cast<std::size_t>(l)].varying_capacity()) law_[k] = l;
        }
      }
}

kernels::FieldBox DecomposedBackend::field_box(const Box& global_box) const {
  const Box local = decomposition_.local();
  kernels::FieldBox b;
  b.grid = local.extent;
  b.extent = global_box.extent;
  for (int a = 0; a < 3; ++a) b.lo[a] = global_box.lo[a] - local.lo[a];
  return b;
}

void DecomposedBackend::upload(const std::vector<double>& field) {
  if (field.size() != static_cast<std::size_t>(global_.points()))
    throw std::invalid_argument("decomposed run: field has " + std::to_string(field.size()) +
                                " values, the grid " + std::to_string(global_.points()));
  local_->upload(extract_box(field, global_.n, decomposition_.local()));
  decide_first_step_ = true;
  overlaps_stale_ = false;
}

void DecomposedBackend::upload_owned(const std::vector<double>& values) {
  const Box local = decomposition_.local(), owned = decomposition_.owned();
  if (values.size() != static_cast<std::size_t>(owned.points()))
    throw std::invalid_argument("decomposed run: owned part has " + std::to_string(values.size()) +
                                " values, the box " + std::to_string(owned.points()));
  // The overlaps hold zeros until the exchange brings the neighbours' nodes.
  std::vector<double> field(static_cast<std::size_t>(local.points()), 0.0);
  insert_box(field, local.extent, relative(owned, local), values);
  local_->upload(field);
  exchange();
  decide_first_step_ = true;
  overlaps_stale_ = false;
}

void DecomposedBackend::download_owned(std::vector<double>& values) {
  const double* mine = read_owned();
  values.assign(mine, mine + decomposition_.owned().points());
}

void DecomposedBackend::download(std::vector<double>& field) {
  const double* owned = read_owned();
  const std::vector<double> mine(owned, owned + decomposition_.owned().points());
  std::vector<Box> boxes;
  std::vector<std::int64_t> counts;
  for (int r = 0; r < decomposition_.ranks(); ++r) {
    boxes.push_back(decomposition_.owned(r));
    counts.push_back(boxes.back().points());
  }
  const std::vector<double> all = gather_to_root(mine, counts);
  field.clear();
  if (decomposition_.rank() != 0) return;
  field.resize(static_cast<std::size_t>(global_.points()));
  insert_boxes(field, global_.n, boxes, all);
}

void DecomposedBackend::advance(std::int64_t steps, std::int64_t step0) {
  if (steps <= 0) return;
  // The first step after an upload is a single one on every rank or on none, as the serial
  // run decides it over the whole grid: where any block's Dirichlet nodes do not hold g.
  if (decide_first_step_) {
    std::vector<std::int64_t> single{local_->first_step_single(step0) ? 1 : 0};
    max_all(single);
    local_->set_first_step_single(single[0] != 0);
    decide_first_step_ = false;
  }
  // Each piece after the first since the last exchange exchanges first. The local steps are
  // finished (synchronize) before that: the exchange reads what they wrote (on a device, on a
  // stream of its own while a split pass's interior runs), and its clock then counts only the
  // exchange. A pass that splits computes the interior while the halo travels.
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const std::function<void()> exchange_now = [this] {
    timed_exchange();
    ++beside_interior_;
  };
  const auto since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  const auto wait = [&] {
    const auto t = clock::now();
    local_->synchronize();
    wait_seconds_ += since(t);
  };
  for (const Piece& piece : exchange_pieces(steps, step0, exchange_every_)) {
    if (overlaps_stale_) {
      wait();
      const bool one_pass = piece.steps == exchange_every_ && piece.step0 % exchange_every_ == 0;
      const double exchanged = exchange_seconds_;
      const auto t = clock::now();
      const bool split = split_ && one_pass &&
                         local_->advance_around(piece.steps, piece.step0, inner_, exchange_now);
      pass_seconds_ += since(t) - (exchange_seconds_ - exchanged);
      if (!split) {
        timed_exchange();
        const auto t2 = clock::now();
        local_->advance(piece.steps, piece.step0);
        pass_seconds_ += since(t2);
      }
    } else {
      const auto t = clock::now();
      local_->advance(piece.steps, piece.step0);
      pass_seconds_ += since(t);
    }
    overlaps_stale_ = true;
  }
  wait();
  advance_seconds_ += since(start);
}

// Neighbours on this node take their slabs through memory the node's processes share: each
// rank's part holds, per split axis, side and exchange parity, the slab its neighbour on that
// side writes straight into it (read_box from the neighbour's field), and the message that
// follows carries nothing but the word that it is there. Two parities, so that a neighbour
// already in the next exchange writes the other one while this rank still reads (it can be one
// exchange ahead, not two: that needs this rank's word from the next exchange, sent after this
// one's reads). Every rank calls this together (the segment is collective), with the same size
// (the largest slab over the ranks) and the same answer to whether to share at all.
void DecomposedBackend::share_slabs() {
  split_axes_.fill(-1);
  int split = 0;
  for (int a = 0; a < global_.dims; ++a)
    if (decomposition_.procs()[a] > 1) split_axes_[static_cast<std::size_t>(a)] = split++;
  const char* shared_switch = std::getenv("HEATSIM_HALO_SHARED");
  std::vector<std::int64_t> want{static_cast<std::int64_t>(slab_points_),
                                 shared_switch && std::string(shared_switch) == "0" ? 1 : 0};
  max_all(want);
  shared_points_ = 0;
  if (want[1] != 0 || split == 0 || size() == 1) return;
  const std::size_t points = static_cast<std::size_t>(want[0]);
  const std::size_t bytes = static_cast<std::size_t>(4 * split) * points * sizeof(double);
  if (bytes > shared_bytes_) {  // the same decision on every rank: the sizes are common
    shared_pin_ = kernels::HostStaging();
    segment_ = allocate_node_shared(bytes);
    shared_bytes_ = bytes;
    shared_pin_note_.clear();
    if (segment_.base)
      shared_pin_ = kernels::pin_host_memory(segment_.base, segment_.bytes,
                                             local_->capabilities().gpu, shared_pin_note_);
  }
  shared_points_ = points;
}

// Where the slab for `owner`'s overlap on `side` of axis `a` goes at exchange parity `parity`,
// or null where `owner` is not on this node (or nothing is shared).
double* DecomposedBackend::shared_slab(int owner, int a, int side, int parity) const {
  if (shared_points_ == 0 || owner < 0) return nullptr;
  double* part = segment_.parts[static_cast<std::size_t>(owner)];
  if (!part) return nullptr;
  const int j = split_axes_[static_cast<std::size_t>(a)];
  return part + static_cast<std::size_t>((j * 2 + side) * 2 + parity) * shared_points_;
}

void DecomposedBackend::timed_exchange() {
  const auto before = std::chrono::steady_clock::now();
  exchange(part_seconds_);
  exchange_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  ++exchanges_;
}

std::string DecomposedBackend::exchange_summary() const {
  if (exchanges_ == 0 || !(advance_seconds_ > 0.0)) return {};
  char line[400];
  const double ms = 1e3 / static_cast<double>(exchanges_);
  std::snprintf(line, sizeof line,
                "halo exchanges %.3g s of %.3g s stepping (%.1f%%), %lld exchanges, %lld of "
                "them while the interior stepped; per exchange %.3g ms out, %.3g ms MPI, "
                "%.3g ms in; besides, per exchange %.3g ms in the passes and %.3g ms waiting for "
                "them to finish",
                exchange_seconds_, advance_seconds_, 100.0 * exchange_seconds_ / advance_seconds_,
                static_cast<long long>(exchanges_), static_cast<long long>(beside_interior_),
                part_seconds_[0] * ms, part_seconds_[1] * ms, part_seconds_[2] * ms,
                pass_seconds_ * ms, wait_seconds_ * ms);
  return line;
}

// Axis by axis: the owned layers next to each neighbour go into its overlap. Along axis a the
// boxes span the whole local extent of the axes before a (their overlaps are right already, so
// edges and corners travel on) and the owned range of the axes after it. Both directions of an
// axis travel at once (send_receive_all): one round trip per split axis. The backend copies
// just the boxes (read_box / write_box: on a GPU, packed on the device).
void DecomposedBackend::exchange(double* parts) {
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const Decomposition& d = decomposition_;
  const Box local = d.local(), owned = d.owned();
  const std::int64_t w = d.halo();
  for (int a = 0; a < global_.dims; ++a) {
    if (d.procs()[a] == 1) continue;
    Box slab;
    for (int b = 0; b < 3; ++b) {
      slab.lo[b] = b < a ? local.lo[b] : owned.lo[b];
      slab.extent[b] = b < a ? local.extent[b] : owned.extent[b];
    }
    slab.extent[a] = w;
    const int low = d.neighbour(a, 0), high = d.neighbour(a, 1);
    double* buffers = static_cast<double*>(staging_.data());
    std::array<Box, 2> recv_box{slab, slab};
    std::vector<Transfer> transfers(2);
    const std::size_t points = static_cast<std::size_t>(slab.points());
    const int parity = static_cast<int>(exchange_round_ & 1);
    std::array<double*, 2> here{nullptr, nullptr};  // received slabs in this rank's shared part
    const auto start = clock::now();
    for (int side = 0; side < 2; ++side) {
      // side 0: my first owned layers to the low neighbour, the high neighbour's into my high
      // overlap; side 1 the mirror image. The tag tells the two apart when both neighbours
      // are one rank (two ranks on a periodic axis).
      Box send = slab;
      send.lo[a] = side == 0 ? owned.lo[a] : owned.lo[a] + owned.extent[a] - w;
      recv_box[side].lo[a] = side == 0 ? owned.lo[a] + owned.extent[a] : owned.lo[a] - w;
      Transfer& t = transfers[static_cast<std::size_t>(side)];
      t.dest = side == 0 ? low : high;
      t.source = side == 0 ? high : low;
      t.tag = 2 * a + side;
      // A neighbour on this node: the slab straight into its shared part, and an empty
      // message to say so; likewise from one.
      double* there = shared_slab(t.dest, a, side, parity);
      double* out = there ? there : buffers + static_cast<std::size_t>(side) * slab_points_;
      t.send = out;
      t.send_count = there ? 0 : points;
      const bool from_node = shared_slab(t.source, a, side, parity) != nullptr;
      here[side] = from_node ? shared_slab(rank(), a, side, parity) : nullptr;
      t.recv =
          here[side] ? here[side] : buffers + static_cast<std::size_t>(2 + side) * slab_points_;
      t.recv_count = here[side] ? 0 : points;
      if (t.dest >= 0) local_->read_box(field_box(send), out);
    }
    const auto out_done = clock::now();
    if (shared_points_ > 0) sync_node_shared();  // the slabs written before the word goes
    send_receive_all(transfers);
    if (shared_points_ > 0) sync_node_shared();  // and read after it came
    const auto received = clock::now();
    for (int side = 0; side < 2; ++side) {
      const Transfer& t = transfers[static_cast<std::size_t>(side)];
      if (t.source >= 0)
        local_->write_box(field_box(recv_box[side]), here[side] ? here[side] : t.recv);
    }
    const auto written = clock::now();
    if (parts) {
      parts[0] += seconds(out_done - start);
      parts[1] += seconds(received - out_done);
      parts[2] += seconds(written - received);
    }
  }
  ++exchange_round_;
}

// This rank's owned nodes in staging kept for the run (pinned on a GPU: a whole block of a
// large field moves at the bus's speed, not through the driver's staging of fresh pages).
const double* DecomposedBackend::read_owned() {
  const std::size_t points = static_cast<std::size_t>(decomposition_.owned().points());
  if (owned_staging_.bytes() < points * sizeof(double))
    owned_staging_ =
        local_->allocate_host_staging(std::max<std::size_t>(1, points) * sizeof(double));
  double* values = static_cast<double*>(owned_staging_.data());
  local_->read_box(field_box(decomposition_.owned()), values);
  return values;
}

kernels::FieldStats DecomposedBackend::stats() {
  const double* mine = read_owned();
  const std::size_t count = static_cast<std::size_t>(decomposition_.owned().points());
  // Blocks of a fixed size on the rank's cores (a 512^3 field's half took 0.15 s on one), their
  // heat sums added in block order: the same total whatever the thread count.
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  const std::size_t blocks = (count + kBlock - 1) / kBlock;
  std::vector<double> block_min(blocks), block_max(blocks), block_heat(blocks), block_bad(blocks);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(blocks); ++b) {
    double mn = std::numeric_limits<double>::infinity(), mx = -mn, heat = 0.0, bad = 0.0;
    const std::size_t end = std::min(count, static_cast<std::size_t>(b + 1) * kBlock);
    for (std::size_t i = static_cast<std::size_t>(b) * kBlock; i < end; ++i) {
      const double v = mine[i];
      if (weights_[i] == 0.0) continue;  // inside a void: no part of the body
      if (!std::isfinite(v)) {
        bad += 1.0;
        continue;
      }
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      const std::int32_t l = law_.empty() ? -1 : law_[i];
      heat += weights_[i] * (l < 0 ? v : laws_->laws[static_cast<std::size_t>(l)].enthalpy(v));
    }
    const auto k = static_cast<std::size_t>(b);
    block_min[k] = mn;
    block_max[k] = mx;
    block_heat[k] = heat;
    block_bad[k] = bad;
  }
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, total = 0.0, bad = 0.0;
  for (std::size_t k = 0; k < blocks; ++k) {
    mn = std::min(mn, block_min[k]);
    mx = std::max(mx, block_max[k]);
    total += block_heat[k];
    bad += block_bad[k];
  }
  std::vector<double> lows{mn}, highs{mx}, counts{bad};
  min_all(lows);
  max_all(highs);
  sum_all(counts);
  // The partial sums in rank order: the same total on every rank and in every run.
  double heat = 0.0;
  for (double part : gather_all(total)) heat += part;
  kernels::FieldStats st;
  st.min = lows[0];
  st.max = highs[0];
  st.total_heat = heat;
  st.non_finite = static_cast<std::int64_t>(counts[0]);
  return st;
}

void DecomposedBackend::sample(const std::vector<std::int64_t>& nodes,
                               std::vector<double>& values) {
  const Box owned = decomposition_.owned();
  const double* mine = read_owned();
  const auto& n = global_.n;
  // -0.0 is the exact identity of addition (x + -0.0 == x for every x, -0.0 and NaN
  // included), so the sum over ranks hands every node its owner's value bit for bit.
  values.assign(nodes.size(), -0.0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::int64_t g = nodes[i];
    const std::array<std::int64_t, 3> c{g % n[0], (g / n[0]) % n[1], g / (n[0] * n[1])};
    bool inside = true;
    for (int a = 0; a < 3; ++a)
      inside = inside && c[a] >= owned.lo[a] && c[a] < owned.lo[a] + owned.extent[a];
    if (!inside) continue;
    const std::int64_t k =
        ((c[2] - owned.lo[2]) * owned.extent[1] + c[1] - owned.lo[1]) * owned.extent[0] + c[0] -
        owned.lo[0];
    values[i] = mine[static_cast<std::size_t>(k)];
  }
  sum_all(values);
}

std::string DecomposedBackend::describe() const {
  const auto& p = decomposition_.procs();
  std::string halos;
  if (shared_points_ > 0 && !segment_.why_not.empty())
    halos = ", halos as messages (no memory shared on this node: " + segment_.why_not + ")";
  else if (shared_points_ > 0)
    halos = ", halos of this node's neighbours through shared memory" +
            (shared_pin_note_.empty() ? std::string() : " (not pinned: " + shared_pin_note_ + ")");
  return std::to_string(decomposition_.ranks()) + " ranks as " + std::to_string(p[0]) + " x " +
         std::to_string(p[1]) + " x " + std::to_string(p[2]) + ", overlap " +
         std::to_string(decomposition_.halo()) + " layers, exchange every " +
         std::to_string(exchange_every_) + " steps" + halos;
}

}  // namespace heatsim::solver::parallel
