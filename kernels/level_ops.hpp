// The operations a multigrid solver runs on one grid level, declared once and implemented per
// backend (kernels/cpu/cpu_level_ops.cpp; a CUDA implementation can follow). The solver in
// solver/multigrid/ builds the levels and runs the cycles; it never knows which backend does
// the arithmetic.
//
// A level holds a symmetric seven-point (five in 2D, three in 1D) operator on a node grid:
//   (A x)_i = a_i x_i + sum_axis sum_{j = i-e, i+e} G_ij (x_i - x_j)
// with a node term a_i >= 0 and face conductances G_ij = G_ji > 0 between neighbours (faces
// beyond a non-periodic boundary do not exist; a periodic axis wraps). Nodes marked `fixed` hold
// given values (Dirichlet nodes): A acts on the free nodes only, a fixed neighbour's value enters
// the free node's row, and the residual, smoother and corrections leave fixed nodes alone (the
// residual is 0 there).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace heatsim::kernels {

struct LevelOperator {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};  // nodes per axis; 1 on unused axes
  std::array<bool, kMaxDims> periodic{false, false, false};
  std::vector<double> node_term;  // a_i, memory order [z][y][x]
  // conductance[axis][i]: G between node i and its upper neighbour along the axis (the node
  // one period away for the last node of a periodic axis; unused, 0, for the last node of a
  // non-periodic axis).
  std::array<std::vector<double>, kMaxDims> conductance;
  std::vector<std::uint8_t> fixed;  // 1: the node holds its value
  // Levels below the finest: fine_index[axis][I] is the index, in the next finer level, of this
  // level's node I (increasing, first 0; a non-periodic axis ends on the finer level's last
  // node). Prolongation is linear in the finer level's index between the two coarse nodes
  // around a fine node, restriction its transpose.
  std::array<std::vector<std::int64_t>, kMaxDims> fine_index;

  std::int64_t points() const { return n[0] * n[1] * n[2]; }
};

// The interpolation weights of one axis: for each fine index, the coarse nodes (one or two) it
// takes a value from and their weights. Shared by the backends and by the solver, which combines
// conductances over the same dual cells, so both follow the one rule of LevelOperator.
struct AxisTransfer {
  struct Term {
    std::int64_t coarse = 0;
    double weight = 0.0;
  };
  std::vector<std::array<Term, 2>> from;  // per fine node; weight 0 where unused
};
AxisTransfer axis_transfer(std::int64_t fine_n, bool periodic,
                           const std::vector<std::int64_t>& fine_index);

// Vectors live with the backend (host or device memory) and are named by the id create_vector
// returns. The arithmetic is fp64.
class LevelOps {
 public:
  virtual ~LevelOps() = default;
  virtual std::string name() const = 0;
  // Takes the hierarchy, finest first; drops the vectors of an earlier setup. Throws
  // std::invalid_argument on inconsistent sizes.
  virtual void setup(const std::vector<LevelOperator>& levels) = 0;
  // A zeroed vector on `level`; the id stays valid until the next setup.
  virtual int create_vector(int level) = 0;
  virtual void upload(int v, const std::vector<double>& values) = 0;
  virtual void download(int v, std::vector<double>& values) = 0;

  // r = b - A x on the free nodes, 0 on the fixed ones.
  virtual void residual(int level, int b, int x, int r) = 0;
  // y = A x on the free nodes, 0 on the fixed ones.
  virtual void apply(int level, int x, int y) = 0;
  // Red-black Gauss-Seidel on the free nodes, over-relaxed by omega (x_i += omega * (the
  // Gauss-Seidel value - x_i)): `sweeps` times red (x + y + z even) then black; `reverse` runs
  // black then red, the adjoint order, so that a cycle with the same number of sweeps before
  // (forward) and after (reverse) is a symmetric preconditioner (for 0 < omega < 2).
  virtual void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) = 0;
  // b_coarse = P^T r_fine on the free coarse nodes (0 on the fixed ones); coarse level = fine+1.
  virtual void restrict_residual(int fine_level, int r_fine, int b_coarse) = 0;
  // x_fine += P x_coarse on the free fine nodes.
  virtual void prolong_add(int fine_level, int x_coarse, int x_fine) = 0;

  // v = 0 on the free nodes of `level`; the fixed nodes keep their values.
  virtual void zero_free(int level, int v) = 0;
  virtual double dot(int x, int y) = 0;
  // y = a x + b y (b == 0 assigns, whatever y held).
  virtual void axpby(double a, int x, double b, int y) = 0;
};

}  // namespace heatsim::kernels
