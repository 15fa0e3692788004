// The multigrid level operations of an implicit or steady run over the ranks of an MPI run
// (kernels/level_ops.hpp), for the driver in solver/multigrid/ to run unchanged on every rank.
//
// The finest levels are split with the grid. On level l each rank owns a box of nodes: on the
// finest its block of the decomposition, below it the coarse nodes whose finer node it owns on
// level l - 1 (so every level's boxes tile it). It holds its owned box of every vector of the
// level plus one layer of the neighbour ranks' nodes, on level operations of its own (the
// CPU's, one level each) whose operator is the global level cut to that box, the neighbours'
// layer marked fixed. A fixed node's value enters its free neighbours' rows and is never
// changed, so an operation that reads neighbours (residual, apply, magnitude, one colour of
// the smoother) computes every owned node exactly as one process would, once that layer holds
// the neighbours' current values: the layer is exchanged before each such operation (only when
// something changed the vector since), and the smoother exchanges between its colours (two on
// the finest level, 2^dims on the Galerkin levels below). Restriction and prolongation between
// split levels read the operator-dependent weights cut to each rank's part, in the order the
// CPU's level operations sum them; no values travel but the layers.
//
// The levels below the split ones (from the first level too small to be worth splitting, or
// thinner than two nodes per rank along a split axis) are gathered to rank 0, which runs them
// and the bottom solve on level operations of its own: restriction sends each rank's coarse
// nodes there, prolongation sends each rank the coarse values its nodes interpolate from. The
// other ranks skip those operations; the driver's control flow does not depend on their values.
//
// Dot products: every grid row of the finest level is summed as one process sums it (x
// fastest, from 0): where x is split, each rank carries on from the sums the rank before it
// along x reached on the same rows; every rank then receives all the rows' sums and adds them
// in the order of the rows. These are one process's sums, so every number of the solve is one
// process's, bit for bit: the same iterations, the same field, for any decomposition. (Keeping
// x whole, as an implicit run does by default, saves the chain of messages along x.)
// The strong pieces' sums (deflation) travel the same way: each row's partial per piece,
// continued along x, then every row's in row order on every rank (kernels::PieceRowSums).
//
// Gathered whole (a second factory given: a GPU run whose hierarchy fits rank 0's GPU): no
// level is split, rank 0 runs every level on the level operations that factory makes (its
// GPU's), the other ranks skip every operation, and the numbers the driver's control flow
// reads (dot products, the pieces' sums, whether the pieces were taken) and level-0 downloads
// go from rank 0 to every rank. Every number of the solve is then one process's on those level
// operations, bit for bit.
//
// Not yet (docs/parallel.md): every rank still builds the whole hierarchy before taking its
// part (the set-up divides neither its time nor its peak memory), a periodic axis must not be
// split, and split levels run on the CPU's level operations whatever the backend.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "kernels/level_ops.hpp"

namespace heatsim::solver::parallel {

class DecomposedLevelOps final : public kernels::LevelOps {
 public:
  // Makes the level operations of one rank's part of a level (host memory: host_values must
  // answer), and rank 0's of the gathered levels.
  using Factory = std::function<std::unique_ptr<kernels::LevelOps>()>;

  // `decomposition`: this rank's place in the grid, its overlap 1. `gather_whole`, where
  // given: every level gathered to rank 0 on the level operations it makes (see above).
  // Throws std::invalid_argument for an overlap other than 1.
  DecomposedLevelOps(Decomposition decomposition, Factory make_ops, Factory gather_whole = {});

  std::string name() const override { return gathered_whole() ? "gathered to rank 0" : "cpu"; }
  // Every level on rank 0 (a second factory given).
  bool gathered_whole() const { return static_cast<bool>(gather_whole_); }
  const Decomposition& decomposition() const { return decomposition_; }
  // How many levels are split (the rest are on rank 0); 0 before setup.
  int split_levels() const { return static_cast<int>(parts_.size()); }

  // `levels` are the global hierarchy (every rank gives the same); each rank keeps its part.
  // Throws std::invalid_argument for a split periodic axis or levels the parts cannot take.
  void setup(const std::vector<kernels::LevelOperator>& levels) override;
  void adopt(std::vector<kernels::LevelOperator> levels) override;
  void replace_hierarchy(const std::vector<kernels::LevelOperator>& levels) override;
  // Split levels: the finest part takes its cut of the new finest level, the coarse levels and
  // their transfers stay, as one process's CPU level operations do. Gathered whole: where rank
  // 0's level operations replace their finest level alone (the CPU's; every rank learns it at
  // setup), they do.
  bool replaces_finest() const override {
    return gathered_whole() ? gathered_replaces_finest_ : true;
  }
  void release_finest() override;
  void replace_finest(kernels::LevelOperator level) override;

  int create_vector(int level) override;
  // Level-0 vectors hold global fields: upload takes the whole field on every rank (each
  // keeps its box), download gives the whole field to every rank.
  void upload(int v, const std::vector<double>& values) override;
  void download(int v, std::vector<double>& values) override;
  int create_sparse(const std::vector<std::int64_t>& nodes,
                    const std::vector<double>& values) override;
  void scatter(double a, int s, int y, bool assign) override;
  // The pieces (solver/multigrid/deflation.hpp) of the global finest level, the same on every
  // rank; each keeps its owned nodes'. The sums are one process's to the bit (PieceRowSums:
  // each rank's rows, continued along x where x is split, then every row in order on every
  // rank), so a deflated solve repeats one process's too.
  bool set_pieces(const std::vector<std::int32_t>& piece, std::int64_t count) override;
  void piece_sums(int v, std::vector<double>& sums) override;
  void piece_add(const std::vector<double>& values, int v) override;

  void residual(int level, int b, int x, int r) override;
  void cycle_residual(int level, int b, int x, int r) override;
  void apply(int level, int x, int y) override;
  void smooth(int level, int b, int x, int sweeps, bool reverse, double omega) override;
  void restrict_residual(int fine_level, int r_fine, int b_coarse) override;
  void prolong_add(int fine_level, int x_coarse, int x_fine) override;
  void magnitude(int level, int b, int x, int out) override;
  void conjugate_gradients(int level, int b, int x, int r, int p, int q, double tolerance,
                           std::int64_t limit) override;
  // A gathered coarsest level: rank 0's level operations take the factor, and every rank says
  // what they did. A split one (the only level of a one-level hierarchy): every rank keeps the
  // factor and solves the whole level as one process does, on the right-hand side and the
  // field gathered from every rank, then keeps its own part of the answer (such a level is at
  // most the default coarsest size, so the gathers are small).
  bool set_bottom_factor(int level, kernels::BottomFactor factor) override;
  void bottom_solve(int level, int b, int x, int r, bool from_zero) override;
  void zero_free(int level, int v) override;
  double dot(int x, int y) override;
  void axpby(double a, int x, double b, int y) override;
  void zero(int v) override;
  void multiply_add(double a, int w, int x, double b, int y) override;
  void round_to_fp32(int v) override;

 private:
  struct Vector {
    int level = 0;
    int id = -1;        // in the level's part (split levels) or coarse_ (rank 0); -1: none here
    bool fresh = true;  // split levels: the neighbours' layer holds their current values
  };
  // One split level on this rank.
  struct Part {
    std::array<std::int64_t, 3> n{1, 1, 1};  // the global level's grid
    Box owned, local;                        // global coordinates of the level
    int colour_flip = 0;  // the local numbering's colours to the global ones' (XOR)
    bool stencil = false;
    std::vector<std::uint8_t> fixed;  // the global level's fixed marks on the local box
    std::unique_ptr<kernels::LevelOps> ops;
    std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z) const;
  };
  // The coarse nodes of one rank on a level below a split one.
  struct CoarseBoxes {
    Box owned;   // those whose finer node the rank owns
    Box window;  // those its owned finer nodes interpolate from
  };
  // From split level l - 1 to level l (split or gathered): level l's grid, its finer nodes,
  // this rank's prolongation window and its owned nodes' fixed marks, the finer grid's transfer
  // terms; where level l is gathered, every rank's boxes (rank order).
  struct Transfer {
    std::array<std::int64_t, 3> n{1, 1, 1};
    std::array<std::vector<std::int64_t>, 3> fine_index;
    std::array<kernels::AxisTransfer, 3> from;
    CoarseBoxes mine;
    std::vector<float> prolongation;  // [k * window points + window index], fp32 as the level's
    std::vector<std::uint8_t> fixed;   // on mine.owned
    std::vector<CoarseBoxes> all;      // gathered level: every rank's
  };

  // The finest part's pieces (owned nodes; -1 in the neighbours' layer) and their count.
  std::vector<std::int32_t> local_piece_;
  std::int64_t pieces_ = 0;

  Vector& vector(int v);
  int id(int v) { return vector(v).id; }
  bool split(int level) const { return level < static_cast<int>(parts_.size()); }
  bool root() const { return decomposition_.rank() == 0; }
  // The global level cut to a rank's part, the neighbours' layer fixed.
  kernels::LevelOperator cut(const kernels::LevelOperator& level, Part& part) const;
  // A split level's part on this rank: its owned box, the layer beside it, its level
  // operations set up with the cut.
  void add_part(const kernels::LevelOperator& level, const Box& owned);
  // The parts and transfers of `levels`; level 0's part is kept when `keep_finest`.
  void build(const std::vector<kernels::LevelOperator>& levels, bool keep_finest);
  // Throws std::invalid_argument for no levels or a finest grid other than the decomposition's.
  void check_levels(const std::vector<kernels::LevelOperator>& levels) const;
  // Gathered whole: the hierarchy to rank 0's level operations (the others keep nothing).
  void gather(std::vector<kernels::LevelOperator> levels);
  Box local_box(const Box& owned) const;
  // A rank's coarse nodes below its owned box `owned` of the finer level.
  CoarseBoxes coarse_boxes(const Box& owned, const Transfer& t) const;
  // An operation that reads vector x's neighbours and writes `out`: op(ops, level) on rank 0's
  // level operations for a gathered level, else on the part's after x's layer is brought up
  // to date (out's is then stale).
  template <typename Op>
  void reading_neighbours(int level, int x, int out, Op&& op);
  // Brings the neighbours' layer of split-level vector v up to date (collective).
  void refresh(int v);
  void exchange(const Part& part, double* values);

  Decomposition decomposition_;
  Factory make_ops_;
  Factory gather_whole_;
  // Gathered whole: the sparse vectors' ids on rank 0, by the id every rank returned.
  std::vector<int> sparse_ids_;
  // Rank 0's values (level-0 downloads, the pieces' sums) on every rank.
  std::vector<double> from_root(const std::vector<double>& values, std::size_t count) const;
  int dims_ = 1;
  std::array<bool, 3> periodic_{false, false, false};
  int levels_ = 0;
  std::vector<Part> parts_;
  std::vector<Transfer> transfers_;  // [l - 1]: from level l - 1 to l, l = 1 .. split levels
  std::unique_ptr<kernels::LevelOps> coarse_;  // rank 0: the gathered levels
  bool gathered_replaces_finest_ = false;      // gathered whole: coarse_->replaces_finest()
  std::optional<kernels::BottomFactor> split_bottom_;  // a split coarsest level's factor
  std::vector<double> split_bottom_work_;
  std::vector<Vector> vectors_;
};

}  // namespace heatsim::solver::parallel
