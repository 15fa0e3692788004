// The memory the multigrid solver of implicit steps and steady states takes, in one place, so
// that `validate`'s estimate and `run`'s resource check follow the solver when it changes
// (solver/memory_estimate.hpp adds the rest of a run). The counts mirror what
// solver/multigrid/*.cpp and the level operations (kernels/cpu/cpu_level_ops.cpp,
// kernels/cuda/level_ops.cu) allocate; a change there that changes bytes per node belongs here.
#pragma once

#include <array>
#include <cstdint>

namespace heatsim::solver {

// Per node, what each level of the hierarchy holds, in doubles. The finest level: the diagonal
// (the node term folded in) and one conductance per axis, the symmetric half of a star of
// 2 dims + 1 points, and the smoother's copy (kernels/level_ops.hpp: a diagonal in fp64 and the
// conductances in fp32). Levels below it are Galerkin (R A P): a 3^dims-point stencil and as
// many prolongation weights per node (in fp32); the level operations keep the stencil as the
// smoother's operator only, on the device 3^dims fp32 entries and an fp64 centre, on the CPU the
// same but in 3D (whose Galerkin levels are symmetric to the last bit) the upper 13 entries alone.
struct MultigridLayout {
  int finest_operator_doubles = 0;  // diagonal + conductance per axis: 1 + dims
  double finest_smoother_doubles = 0.0;  // 1 + dims / 2
  double coarse_operator_doubles = 0.0;  // stencil and fp32 prolongation: 1.5 x 3^dims
  double device_coarse_operator_doubles = 0.0;  // 3^dims / 2 + 1 + 3^dims / 2
  // 3^dims / 2 + (3D: 13 / 2 + 1; else 3^dims / 2 + 1). While the CPU's level operations take the
  // hierarchy over, each level's fp64 stencil is there until it is rounded: at most 3^dims
  // doubles a coarse node, fewer bytes than the finest level's vectors, made after it.
  double cpu_coarse_operator_doubles = 0.0;
  int fixed_bytes = 1;              // the Dirichlet flag of every node
  // The CPU's level operations keep the level's node term beside the diagonal.
  int cpu_copy_extra_doubles = 1;
  // On the finest level they keep neither diagonal (the exact one, the smoother's): each
  // operation sums it from the node term and the conductances it reads anyway.
  int cpu_finest_diagonal_doubles = 2;
  // Work vectors of doubles: b, x, r per level; on the finest CG's z, p and r, and the free
  // nodes' indicator (CG's q is the finest level's r: it also holds the rounding floor's
  // magnitude and the V-cycle's residual); the bottom solve's three on the coarsest (counted
  // with the coarsest level). The CPU's level operations keep the finest level in host memory,
  // and the indicator is written into p's vector at each solve's start instead.
  int vectors_per_level = 3;
  int finest_extra_vectors = 4;
  int cpu_finest_shared_vectors = 1;
  // On a GPU, a 3D finest level without periodic axes (and of more than 8192 nodes) smooths
  // out of place into a second array of its own.
  int device_sweep_vectors = 1;
  int coarsest_extra_vectors = 3;
  // On the host whatever runs the levels: the heat-flow operator (its level: operator and
  // fixed flags; a steady run's finest level is the operator's own arrays, taken, so that
  // only its fixed flags stay; the node weights are computed where needed, not kept) and,
  // while the solver is set up, the hierarchy built there before the level operations take
  // it.
  int heat_flow_extra_doubles = 0;
  // The time stepper's own level-0 vectors where the levels run (solver/multigrid/
  // implicit_stepper.hpp): transient methods the weighted capacity and the field the step
  // started from, BDF2 also the field of the step before, and one per source field (a linear
  // steady solve writes its sources into a work vector when it assembles its load).
  int transient_vectors = 2;
  int bdf2_extra_vectors = 1;
  // A deflated solve (solver/multigrid/deflation.hpp: conductances spanning 100 and more):
  // where the levels run, the inverse diagonal and two work vectors on the finest level and a
  // piece number per node (4 bytes); on the host while it is set up, the pieces' search
  // (parents, sizes, numbers, pieces: 20 bytes a node) and the diagonal and its inverse.
  int deflation_vectors = 3;
  int deflation_piece_bytes = 4;
  int deflation_setup_bytes = 36;
  // While a coarse level is built, the Galerkin product's A P rows and staged prolongation
  // weights of the finer level (solver/multigrid/hierarchy.cpp, galerkin): below 3D for the
  // whole finer level, nine and four doubles a node; in 3D for a few planes a thread, not
  // counted.
  int galerkin_staging_doubles = 0;
};

// What the stepper keeps besides the hierarchy: its method and its number of source fields.
struct StepperVectors {
  bool transient = true;  // false: a steady solve
  bool bdf2 = false;
  int sources = 0;
  bool deflated = false;  // the materials' conductivities span kStrongRatio or more
  // Temperature laws or radiation: the operator is linearised anew each outer iteration, its
  // level taken (the heat-flow operator keeps its fixed flags alone), and the loads assembled
  // on the host (no source, capacity or start vectors with the levels).
  bool nonlinear = false;
  // The finest level's node term is +0 on every node (a steady solve with no convective face
  // or surface), which the CPU's level operations do not keep.
  bool zero_node_term = false;
};

MultigridLayout multigrid_layout(int dims);

struct MultigridBytes {
  std::int64_t levels = 0;      // how many
  std::int64_t level_ops = 0;   // where the level operations run (host for cpu, else device)
  std::int64_t host = 0;        // on the host for the whole run: the heat-flow operator
  std::int64_t host_setup = 0;  // on the host while the solver is set up (the hierarchy)
  std::int64_t deflation_setup = 0;  // on the host while the deflation is set up, any backend
  // On the host while the first coarse level is built, beside the hierarchy (host_setup):
  // the Galerkin product's staging of the finest level.
  std::int64_t galerkin_setup = 0;
  // What the CPU's level operations keep when they let the levels go before a new hierarchy is
  // built (LevelOps::release_levels, a nonlinear step's outer iterations): the level-0 vectors
  // (the deflation's among them), the finest level's fixed flags and the pieces.
  std::int64_t level0 = 0;
};

// The solver of a grid of n[axis] nodes (1 on unused axes), periodic per axis, coarsened as
// solver/multigrid/hierarchy.cpp does (build_hierarchy's rule, coarsest_points 64).
// `on_cpu`: the level operations run on the host (cpu backend), which copies every level.
MultigridBytes multigrid_bytes(int dims, const std::array<std::int64_t, 3>& n,
                               const std::array<bool, 3>& periodic, const StepperVectors& stepper,
                               bool on_cpu, const MultigridLayout& layout);

}  // namespace heatsim::solver
