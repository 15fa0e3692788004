// The multigrid level operations of an implicit or steady run over the ranks of an MPI run
// (kernels/level_ops.hpp), for the driver in solver/multigrid/ to run unchanged on every rank.
//
// The finest level is split with the grid: each rank holds its owned block of every level-0
// vector plus one layer of the neighbour ranks' nodes (the decomposition's local box with an
// overlap of 1), on level operations of its own (the CPU's) whose operator is the global one
// cut to that box, the neighbours' layer marked fixed. A fixed node's value enters its free
// neighbours' rows and is never changed, so an operation that reads neighbours (residual,
// apply, magnitude, a colour of the smoother) computes every owned node exactly as one process
// would once that layer holds the neighbours' current values: the layer is exchanged before
// each such operation (only when something changed it since), and the red-black smoother
// exchanges between its colours. Restriction and prolongation are done here with the
// operator-dependent weights of level 1 cut to each rank's part, in the order the CPU's level
// operations sum them.
//
// The levels below the finest (an eighth of the nodes and less) are gathered to rank 0, which
// runs them on level operations of its own: restriction sends each rank's coarse nodes there,
// prolongation sends each rank the coarse values its block interpolates from. The other ranks
// skip those operations; the driver's control flow does not depend on their values (its
// decisions come from level-0 dot products, which every rank computes alike).
//
// Dot products: each rank sums its owned part of every grid row (x fastest) as one process
// sums a row; every rank receives all the rows' sums and adds them in the order of the rows.
// With x whole on every rank (the decomposition an implicit run takes by default) these are one
// process's sums, so the solve's every number is one process's, bit for bit: the same
// iterations, the same field. With x split, a row's parts are added in x order: deterministic
// (the same on every rank and every run), equal to one process's to rounding.
//
// Not yet (docs/parallel.md): every rank still builds the whole hierarchy before taking its
// part (the set-up neither divides its time nor its peak memory), the coarse levels do not
// scale past rank 0, a periodic axis must not be split, and the level operations run on the
// CPU whatever the backend.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "kernels/level_ops.hpp"

namespace heatsim::solver::parallel {

class DecomposedLevelOps final : public kernels::LevelOps {
 public:
  // `decomposition`: this rank's place in the grid, its overlap 1. `local`: the level
  // operations of the rank's block (host memory: host_values must answer); `coarse`: rank 0's
  // for the levels below the finest (ignored on other ranks). Throws std::invalid_argument
  // for a decomposition with an overlap other than 1, a split periodic axis, or `local`
  // without host memory.
  DecomposedLevelOps(Decomposition decomposition, std::unique_ptr<kernels::LevelOps> local,
                     std::unique_ptr<kernels::LevelOps> coarse);

  std::string name() const override { return local_->name(); }
  const Decomposition& decomposition() const { return decomposition_; }

  // `levels` are the global hierarchy (every rank gives the same); each rank keeps its part.
  void setup(const std::vector<kernels::LevelOperator>& levels) override;
  void adopt(std::vector<kernels::LevelOperator> levels) override { setup(levels); }
  void replace_hierarchy(const std::vector<kernels::LevelOperator>& levels) override;

  int create_vector(int level) override;
  // Level-0 vectors hold global fields: upload takes the whole field on every rank (each
  // keeps its box), download gives the whole field to every rank.
  void upload(int v, const std::vector<double>& values) override;
  void download(int v, std::vector<double>& values) override;
  int create_sparse(const std::vector<std::int64_t>& nodes,
                    const std::vector<double>& values) override;
  void scatter(double a, int s, int y, bool assign) override;

  void residual(int level, int b, int x, int r) override;
  void cycle_residual(int level, int b, int x, int r) override;
  void apply(int level, int x, int y) override;
  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override;
  void restrict_residual(int fine_level, int r_fine, int b_coarse) override;
  void prolong_add(int fine_level, int x_coarse, int x_fine) override;
  void magnitude(int level, int b, int x, int out) override;
  void conjugate_gradients(int level, int b, int x, int r, int p, int q, double tolerance,
                           std::int64_t limit) override;
  void zero_free(int level, int v) override;
  double dot(int x, int y) override;
  void axpby(double a, int x, double b, int y) override;
  void multiply_add(double a, int w, int x, double b, int y) override;
  void round_to_fp32(int v) override;

 private:
  struct Vector {
    int level = 0;
    int id = -1;         // in local_ (level 0) or coarse_ (rank 0, level - 1); -1: none here
    bool fresh = true;   // level 0: the neighbours' layer holds their current values
  };
  // The parts of level 1 this rank needs, and rank 0's map of every rank's.
  struct CoarsePart {
    Box owned;   // the coarse nodes whose finer node this rank owns
    Box window;  // the coarse nodes its owned finer nodes interpolate from
  };

  Vector& vector(int v);
  int coarse_id(int v);  // the vector's id in coarse_ (rank 0), -1 elsewhere
  // The global finest level cut to this rank's local box, the neighbours' layer fixed; sets the
  // grid, the boxes and the fixed marks.
  kernels::LevelOperator cut_finest(const kernels::LevelOperator& finest);
  void build_coarse(const std::vector<kernels::LevelOperator>& levels);
  // Brings the neighbours' layer of level-0 vector v up to date (collective).
  void refresh(int v);
  void exchange(double* values);
  std::int64_t local_index(std::int64_t x, std::int64_t y, std::int64_t z) const;
  CoarsePart coarse_part(const Box& owned) const;
  bool root() const { return decomposition_.rank() == 0; }

  Decomposition decomposition_;
  std::unique_ptr<kernels::LevelOps> local_, coarse_;
  Box owned_, local_box_;
  int dims_ = 1;
  std::array<std::int64_t, 3> n_{1, 1, 1};
  std::array<bool, 3> periodic_{false, false, false};
  int origin_colour_ = 0;             // the colour (x + y + z) % 2 of the local box's corner
  std::vector<std::uint8_t> fixed_;   // the global operator's fixed marks on the local box
  std::vector<Vector> vectors_;
  int levels_ = 0;
  // Level 1 (with more than one level): its grid, the finer nodes of its nodes, the
  // prolongation on this rank's window, the per-axis transfer terms of the finer grid and the
  // coarse fixed marks on the owned coarse box; on rank 0 every rank's parts.
  std::array<std::int64_t, 3> coarse_n_{1, 1, 1};
  std::array<std::vector<std::int64_t>, 3> fine_index_;
  std::vector<double> prolongation_;  // [k * window points + window index]
  std::array<kernels::AxisTransfer, 3> transfer_;
  std::vector<std::uint8_t> coarse_fixed_;  // on the owned coarse box
  CoarsePart part_;
  std::vector<CoarsePart> parts_;  // rank 0: every rank's, in rank order
};

}  // namespace heatsim::solver::parallel
