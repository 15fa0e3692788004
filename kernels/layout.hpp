// The padded field layout every backend uses: each active axis carries `ghost` extra nodes on
// both sides, filled from the boundary conditions before each step, so the stencil itself
// never branches on boundaries. Memory order [z][y][x], x fastest.
#pragma once

#include <array>
#include <cstdint>

#include "backend.hpp"

namespace heatsim::kernels {

struct PaddedLayout {
  int dims = 1;
  int ghost = 0;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};    // interior points per axis
  std::array<std::int64_t, kMaxDims> ext{1, 1, 1};  // padded extent per axis

  PaddedLayout() = default;
  PaddedLayout(const StencilProblem& p, int ghost_width) : dims(p.dims), ghost(ghost_width), n(p.n) {
    for (int a = 0; a < kMaxDims; ++a) ext[a] = a < dims ? n[a] + 2 * ghost : 1;
  }
  int pad(int axis) const { return axis < dims ? ghost : 0; }
  std::int64_t stride_y() const { return ext[0]; }
  std::int64_t stride_z() const { return ext[0] * ext[1]; }
  std::int64_t total() const { return ext[0] * ext[1] * ext[2]; }
  // Index of interior node (x, y, z); ghosts are at negative or >= n coordinates.
  std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return ((z + pad(2)) * ext[1] + (y + pad(1))) * ext[0] + (x + pad(0));
  }
  std::int64_t stride(int axis) const {
    return axis == 0 ? 1 : axis == 1 ? stride_y() : stride_z();
  }
};

// The ghost layers take the constant-weight rules of boundary_rules.hpp. Axes are filled in
// order x, y, z, each over the full padded extent of the earlier axes, so corner ghosts of box
// stencils compose the reflections consistently.

}  // namespace heatsim::kernels
