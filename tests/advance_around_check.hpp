// Backend::advance_around against between() then advance(): three backends of one kind on the
// same random field (never zeros). Backend A splits a pass around an inner box, its between()
// writing new random values at every node no node of the box reads in the pass (a decomposed
// run's halo exchange); backend B takes the same writes and then advance(); backend C takes no
// writes. A and B must agree bit for bit everywhere, and C must differ from them (so the writes
// reached nodes the pass computes after between()). A backend that does not split the pass
// returns false without calling between() and without stepping.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim_tests {

// Whether a pass that reads `reach` nodes along each axis (and across the period of a
// periodic one) takes node c into some node of `inner`.
inline bool reached_from(const heatsim::kernels::StencilProblem& p,
                         const heatsim::kernels::FieldBox& inner, std::int64_t reach,
                         const std::array<std::int64_t, 3>& c) {
  for (int a = 0; a < 3; ++a) {
    const std::int64_t lo = inner.lo[a], hi = inner.lo[a] + inner.extent[a] - 1;
    std::int64_t d = c[a] < lo ? lo - c[a] : c[a] > hi ? c[a] - hi : 0;
    if (a < p.dims && p.periodic(a) && d > 0) {  // the way round the period may be shorter
      const std::int64_t n = p.n[a];
      const std::int64_t around = c[a] < lo ? c[a] + n - hi : lo + n - c[a];
      d = std::min(d, around);
    }
    if (d > reach) return false;
  }
  return true;
}

// One split pass around `inner`: `make` gives a fresh backend of the kind under test. Returns
// whether the backend split the pass.
inline bool expect_split_pass_matches(
    const std::function<std::unique_ptr<heatsim::kernels::Backend>()>& make,
    const heatsim::kernels::StencilProblem& p, const heatsim::kernels::FieldBox& inner,
    std::int64_t step0, const std::string& label) {
  using namespace heatsim::kernels;
  std::mt19937_64 rng(20261128);
  std::uniform_real_distribution<double> value(0.5, 1.5);
  std::vector<double> field(static_cast<std::size_t>(p.points()));
  for (double& v : field) v = value(rng);
  std::unique_ptr<Backend> a = make(), b = make(), c = make();
  for (Backend* x : {a.get(), b.get(), c.get()}) {
    x->setup(p);
    x->upload(field);
    // A random field's Dirichlet nodes do not hold g, so a fused backend would take a single
    // step first; a decomposed run imposes the ranks' common answer, as here.
    x->set_first_step_single(false);
  }
  const std::int64_t steps = std::max(1, a->fusion_depth());
  const std::int64_t reach = steps * std::max(1, p.stencil.radius);
  // The writes: each node no node of `inner` reads in the pass, one box per run of such nodes
  // along x (whole rows where the run spans the grid: a GPU moves long rows beside a sweep by
  // its copy engines, box_transfer.cuh).
  std::vector<FieldBox> writes;
  std::vector<std::vector<double>> written;
  for (std::int64_t z = 0; z < p.n[2]; ++z)
    for (std::int64_t y = 0; y < p.n[1]; ++y)
      for (std::int64_t x = 0; x < p.n[0]; ++x) {
        if (reached_from(p, inner, reach, {x, y, z})) continue;
        FieldBox run;
        run.grid = p.n;
        run.lo = {x, y, z};
        while (x + 1 < p.n[0] && !reached_from(p, inner, reach, {x + 1, y, z})) ++x;
        run.extent[0] = x - run.lo[0] + 1;
        writes.push_back(run);
        written.emplace_back();
        for (std::int64_t i = 0; i < run.extent[0]; ++i) written.back().push_back(value(rng) + 1.0);
      }
  const auto write = [&](Backend& x) {
    for (std::size_t i = 0; i < writes.size(); ++i) x.write_box(writes[i], written[i].data());
  };
  // between() reads each box first, as an exchange reads its slabs: the field as the pass
  // found it (B's, uploaded alike and not yet stepped).
  std::vector<double> before;
  b->download(before);
  std::int64_t misread = 0;
  const auto read_back = [&](Backend& x) {
    std::vector<double> got;
    for (const FieldBox& box : writes) {
      got.assign(static_cast<std::size_t>(box.extent[0]), -1.0);
      x.read_box(box, got.data());
      const std::size_t at =
          static_cast<std::size_t>(box.lo[0] + p.n[0] * (box.lo[1] + p.n[1] * box.lo[2]));
      if (std::memcmp(got.data(), &before[at], got.size() * sizeof(double)) != 0) ++misread;
    }
  };
  int calls = 0;
  const bool split = a->advance_around(steps, step0, inner, [&] {
    ++calls;
    read_back(*a);
    write(*a);
  });
  if (!split) {
    EXPECT_EQ(calls, 0) << label << ": between() called by a pass that did not split";
    std::vector<double> after, fresh;
    a->download(after);
    b->download(fresh);  // uploaded alike (an fp32 backend rounds), never stepped
    EXPECT_EQ(after, fresh) << label << ": a pass that did not split changed the field";
    return false;
  }
  EXPECT_EQ(calls, 1) << label;
  EXPECT_EQ(misread, 0) << label
                        << ": boxes read in between() differ from the field before the pass";
  write(*b);
  b->advance(steps, step0);
  c->advance(steps, step0);
  std::vector<double> got, want, unwritten;
  a->download(got);
  b->download(want);
  c->download(unwritten);
  std::int64_t differ = 0, moved = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0 && ++differ <= 5)
      ADD_FAILURE() << label << ": node " << i << " split " << got[i] << ", whole " << want[i];
    if (got[i] != unwritten[i]) ++moved;
  }
  EXPECT_EQ(differ, 0) << label;
  EXPECT_GT(moved, 0) << label << ": the writes changed nothing the pass computed";
  return true;
}

// Inner boxes of the grid of `p` for a pass that reads `reach` nodes, each leaving nodes it
// does not reach (what between() writes) as a decomposed block leaves its overlaps: all but
// 2 reach nodes at both ends of axis 0 (a split along x), and one short of every face by
// reach + 1 nodes (reach + 2 on the high side) along each axis long enough, whole along the
// others.
inline std::vector<heatsim::kernels::FieldBox> inner_boxes(
    const heatsim::kernels::StencilProblem& p, std::int64_t reach) {
  using heatsim::kernels::FieldBox;
  std::vector<FieldBox> out;
  FieldBox along_x;
  along_x.grid = along_x.extent = p.n;
  along_x.lo[0] = 2 * reach;
  along_x.extent[0] = p.n[0] - 4 * reach;
  if (along_x.extent[0] > 0) out.push_back(along_x);
  FieldBox middle;
  middle.grid = middle.extent = p.n;
  bool inside = false;
  for (int a = 0; a < p.dims; ++a) {
    const std::int64_t extent = p.n[a] - 2 * (reach + 1) - 1;
    if (extent <= 0) continue;
    middle.lo[a] = reach + 1;
    middle.extent[a] = extent;
    inside = true;
  }
  if (inside) out.push_back(middle);
  return out;
}

}  // namespace heatsim_tests

namespace heatsim_tests {

// Every inner box of inner_boxes() at the fusion depth the backend takes, from step0 (a pass
// boundary); returns how many passes split.
inline int expect_split_passes_match(
    const std::function<std::unique_ptr<heatsim::kernels::Backend>()>& make,
    const heatsim::kernels::StencilProblem& p, std::int64_t step0, const std::string& label) {
  std::unique_ptr<heatsim::kernels::Backend> probe = make();
  probe->setup(p);
  const std::int64_t reach =
      std::max(1, probe->fusion_depth()) * std::max<std::int64_t>(1, p.stencil.radius);
  int split = 0;
  const std::vector<heatsim::kernels::FieldBox> boxes = inner_boxes(p, reach);
  EXPECT_FALSE(boxes.empty()) << label;
  for (std::size_t i = 0; i < boxes.size(); ++i)
    split += expect_split_pass_matches(make, p, boxes[i], step0,
                                       label + ", inner box " + std::to_string(i))
                 ? 1
                 : 0;
  return split;
}

}  // namespace heatsim_tests
