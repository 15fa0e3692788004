#include "decomposition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace heatsim::solver::parallel {
namespace {

const char* kAxis[] = {"x", "y", "z"};

std::int64_t wrap(std::int64_t i, std::int64_t n) { return ((i % n) + n) % n; }

// Prime factors of n, largest first.
std::vector<int> prime_factors(int n) {
  std::vector<int> f;
  for (int p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n > 1) f.push_back(n);
  std::sort(f.rbegin(), f.rend());
  return f;
}

}  // namespace

Decomposition::Decomposition(const kernels::StencilProblem& global, int ranks, int rank, int halo,
                             std::array<int, 3> procs)
    : dims_(global.dims), ranks_(ranks), rank_(rank), halo_(halo), n_(global.n) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw DecompositionError("rank " + std::to_string(rank) + " of " + std::to_string(ranks));
  for (int a = 0; a < 3; ++a) periodic_[a] = a < dims_ && global.periodic(a);
  int fixed = 1;
  for (int a = 0; a < 3; ++a) {
    if (procs[a] < 0) throw DecompositionError("parallel.decomposition: negative count");
    if (a >= dims_ && procs[a] > 1)
      throw DecompositionError(std::string("parallel.decomposition: the grid has no ") +
                                  kAxis[a] + " axis to split");
    if (a >= dims_) procs[a] = 1;
    if (procs[a] > 0) fixed *= procs[a];
  }
  if (ranks % fixed != 0)
    throw DecompositionError("parallel.decomposition: " + std::to_string(fixed) +
                                " blocks for " + std::to_string(ranks) + " ranks");
  // The free axes share the remaining factor: each prime, largest first, goes to the free axis
  // whose blocks are longest (the slower axis on a tie), like MPI_Dims_create but grid-aware.
  std::array<int, 3> p = procs;
  bool any_free = false;
  for (int a = 0; a < 3; ++a)
    if (p[a] == 0) {
      p[a] = 1;
      any_free = true;
    }
  if (any_free) {
    for (int f : prime_factors(ranks / fixed)) {
      int best = -1;
      for (int a = dims_ - 1; a >= 0; --a)
        if (procs[a] == 0 && (best < 0 || n_[a] / p[a] > n_[best] / p[best])) best = a;
      p[best] *= f;
    }
  } else if (fixed != ranks) {
    throw DecompositionError("parallel.decomposition: " + std::to_string(fixed) +
                                " blocks for " + std::to_string(ranks) + " ranks");
  }
  procs_ = p;
  for (int a = 0; a < dims_; ++a) {
    if (procs_[a] == 1) continue;
    const std::int64_t thinnest = n_[a] / procs_[a];
    if (thinnest < halo_)
      throw DecompositionError(
          std::string("grid.n along ") + kAxis[a] + " (" + std::to_string(n_[a]) + ") split over " +
          std::to_string(procs_[a]) + " ranks gives blocks of " + std::to_string(thinnest) +
          " nodes, thinner than the overlap of " + std::to_string(halo_) +
          " layers (steps per exchange x stencil radius): use fewer "
          "ranks along this axis");
  }
}

std::array<int, 3> Decomposition::coords(int r) const {
  return {r % procs_[0], (r / procs_[0]) % procs_[1], r / (procs_[0] * procs_[1])};
}

int Decomposition::rank_at(std::array<int, 3> c) const {
  return c[0] + procs_[0] * (c[1] + procs_[1] * c[2]);
}

int Decomposition::neighbour(int axis, int side, int r) const {
  if (procs_[axis] == 1) return -1;
  std::array<int, 3> c = coords(r);
  c[axis] += side == 0 ? -1 : 1;
  if (c[axis] < 0 || c[axis] >= procs_[axis]) {
    if (!periodic_[axis]) return -1;
    c[axis] = (c[axis] + procs_[axis]) % procs_[axis];
  }
  return rank_at(c);
}

std::array<std::int64_t, 3> Decomposition::owned_range(int axis, int c) const {
  const std::int64_t p = procs_[axis];
  return {n_[axis] * c / p, n_[axis] * (c + 1) / p, 0};
}

Box Decomposition::owned(int r) const {
  Box b;
  const std::array<int, 3> c = coords(r);
  for (int a = 0; a < 3; ++a) {
    const auto range = owned_range(a, c[a]);
    b.lo[a] = range[0];
    b.extent[a] = range[1] - range[0];
  }
  return b;
}

Box Decomposition::local(int r) const {
  Box b = owned(r);
  for (int a = 0; a < 3; ++a) {
    const std::int64_t below = neighbour(a, 0, r) >= 0 ? halo_ : 0;
    const std::int64_t above = neighbour(a, 1, r) >= 0 ? halo_ : 0;
    b.lo[a] -= below;
    b.extent[a] += below + above;
  }
  return b;
}

std::int64_t Decomposition::overlap(int axis, int side) const {
  return neighbour(axis, side) >= 0 ? halo_ : 0;
}

std::vector<Piece> exchange_pieces(std::int64_t steps, std::int64_t step0, int every) {
  if (every < 1) throw DecompositionError("exchange_pieces: every must be at least 1");
  std::vector<Piece> pieces;
  for (std::int64_t done = 0; done < steps;) {
    const std::int64_t at = step0 + done;
    const std::int64_t next = (at / every + 1) * every;
    const std::int64_t m = std::min(next - at, steps - done);
    pieces.push_back({m, at});
    done += m;
  }
  return pieces;
}

kernels::StencilProblem local_problem(const kernels::StencilProblem& global,
                                      const Decomposition& d) {
  kernels::StencilProblem p = global;
  const Box box = d.local();
  p.n = box.extent;
  for (int a = 0; a < global.dims; ++a)
    for (int side = 0; side < 2; ++side)
      if (d.neighbour(a, side) >= 0) {
        // The placeholder: any face would do, its wrong values stay in the overlap.
        kernels::BoundaryFace placeholder;
        placeholder.kind = kernels::BoundaryKind::dirichlet;
        placeholder.value = 0.0;
        p.faces[2 * a + side] = placeholder;
        p.placeholder[2 * a + side] = true;
      }
  // A split periodic axis has neighbours on both sides: both faces are placeholders now.
  if (global.coefficients) {
    const kernels::CoefficientFields& g = *global.coefficients;
    auto fields = std::make_shared<kernels::CoefficientFields>();
    fields->conductivity = extract_box(g.conductivity, global.n, box);
    fields->capacity = extract_box(g.capacity, global.n, box);
    for (const auto& s : g.sources)
      fields->sources.push_back({extract_box(s.density, global.n, box), s.schedule, s.surface});
    // A face's entry sits at its lower node, so the box's faces are the box's entries; the
    // last node's toward a neighbour's box lies in the overlap, whose values are discarded.
    if (!g.transfer.empty()) fields->transfer = extract_box(g.transfer, global.n, box);
    if (g.has_faces())
      for (int a = 0; a < global.dims; ++a)
        fields->faces[static_cast<std::size_t>(a)] =
            extract_box(g.faces[static_cast<std::size_t>(a)], global.n, box);
    for (const auto& r : g.radiation)
      fields->radiation.push_back({extract_box(r.coefficient, global.n, box), r.ambient});
    if (g.temperature) {
      const kernels::TemperatureDependence& laws = *g.temperature;
      auto part = std::make_shared<kernels::TemperatureDependence>();
      part->laws = laws.laws;
      // The laws' indices through a double box and back (small integers, exact).
      const std::vector<double> law =
          extract_box(std::vector<double>(laws.law.begin(), laws.law.end()), global.n, box);
      part->law.assign(law.begin(), law.end());
      for (int a = 0; a < global.dims; ++a) {
        part->share[static_cast<std::size_t>(a)] =
            extract_box(laws.share[static_cast<std::size_t>(a)], global.n, box);
        if (!laws.contact[static_cast<std::size_t>(a)].empty())
          part->contact[static_cast<std::size_t>(a)] =
              extract_box(laws.contact[static_cast<std::size_t>(a)], global.n, box);
      }
      fields->temperature = part;
    }
    p.coefficients = fields;
  }
  return p;
}

std::vector<double> extract_box(const std::vector<double>& field,
                                const std::array<std::int64_t, 3>& n, const Box& box) {
  std::vector<double> out(static_cast<std::size_t>(box.points()));
  const bool whole_rows = box.lo[0] >= 0 && box.lo[0] + box.extent[0] <= n[0];  // none wraps
  std::size_t k = 0;
  for (std::int64_t z = 0; z < box.extent[2]; ++z)
    for (std::int64_t y = 0; y < box.extent[1]; ++y) {
      const std::int64_t gz = wrap(box.lo[2] + z, n[2]), gy = wrap(box.lo[1] + y, n[1]);
      const std::int64_t row = (gz * n[1] + gy) * n[0];
      if (whole_rows) {
        std::copy_n(field.begin() + static_cast<std::ptrdiff_t>(row + box.lo[0]), box.extent[0],
                    out.begin() + static_cast<std::ptrdiff_t>(k));
        k += static_cast<std::size_t>(box.extent[0]);
        continue;
      }
      for (std::int64_t x = 0; x < box.extent[0]; ++x)
        out[k++] = field[static_cast<std::size_t>(row + wrap(box.lo[0] + x, n[0]))];
    }
  return out;
}

void insert_box(std::vector<double>& field, const std::array<std::int64_t, 3>& n, const Box& box,
                const std::vector<double>& values) {
  const bool whole_rows = box.lo[0] >= 0 && box.lo[0] + box.extent[0] <= n[0];  // none wraps
  std::size_t k = 0;
  for (std::int64_t z = 0; z < box.extent[2]; ++z)
    for (std::int64_t y = 0; y < box.extent[1]; ++y) {
      const std::int64_t gz = wrap(box.lo[2] + z, n[2]), gy = wrap(box.lo[1] + y, n[1]);
      const std::int64_t row = (gz * n[1] + gy) * n[0];
      if (whole_rows) {
        std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(k), box.extent[0],
                    field.begin() + static_cast<std::ptrdiff_t>(row + box.lo[0]));
        k += static_cast<std::size_t>(box.extent[0]);
        continue;
      }
      for (std::int64_t x = 0; x < box.extent[0]; ++x)
        field[static_cast<std::size_t>(row + wrap(box.lo[0] + x, n[0]))] = values[k++];
    }
}

void insert_boxes(std::vector<double>& field, const std::array<std::int64_t, 3>& n,
                  const std::vector<Box>& boxes, const std::vector<double>& values) {
  std::size_t at = 0;
  for (const Box& b : boxes) {
    const std::size_t count = static_cast<std::size_t>(b.points());
    insert_box(field, n, b,
               std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(at),
                                   values.begin() + static_cast<std::ptrdiff_t>(at + count)));
    at += count;
  }
}

Box relative(const Box& box, const Box& origin) {
  Box b = box;
  for (int a = 0; a < 3; ++a) b.lo[a] -= origin.lo[a];
  return b;
}

}  // namespace heatsim::solver::parallel
