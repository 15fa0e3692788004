// The memory the multigrid solver of implicit steps and steady states takes, in one place, so
// that `validate`'s estimate and `run`'s resource check follow the solver when it changes
// (solver/memory_estimate.hpp adds the rest of a run). The counts mirror what
// solver/multigrid/*.cpp and the level operations (kernels/cpu/cpu_level_ops.cpp,
// kernels/cuda/level_ops.cu) allocate; a change there that changes bytes per node belongs here.
#pragma once

#include <array>
#include <cstdint>

namespace heatsim::solver {

// Per node, what each level of the hierarchy holds. The operator of a level is counted in
// doubles per node as the level operations keep it: the diagonal (the node term folded in) and
// one conductance per axis, the symmetric half of a star of 2 dims + 1 points. Levels below
// the finest keep the same today; once coarse levels are Galerkin (R A P) they hold an operator
// of 3^dims entries per node (27 in 3D, 9 in 2D, one double each): change
// `coarse_operator_doubles` then.
struct MultigridLayout {
  int finest_operator_doubles = 0;  // diagonal + conductance per axis: 1 + dims
  int coarse_operator_doubles = 0;  // today the same as the finest
  int fixed_bytes = 1;              // the Dirichlet flag of every node
  // The CPU's level operations copy the whole level (its node term too) beside the diagonal.
  int cpu_copy_extra_doubles = 1;
  // Work vectors of doubles: b, x, r per level; CG's z, p, q and the preconditioned residual
  // on the finest; the bottom solve's three on the coarsest (counted with the coarsest level).
  int vectors_per_level = 3;
  int finest_extra_vectors = 4;
  int coarsest_extra_vectors = 3;
  // On the host whatever runs the levels: the heat-flow operator (its level: operator and
  // fixed flags, plus the node weights and the weighted capacities) and, while the solver is
  // set up, the hierarchy built there before the level operations take it.
  int heat_flow_extra_doubles = 2;
  // The time stepper's own level-0 vectors where the levels run (solver/multigrid/
  // implicit_stepper.hpp): transient methods the weighted capacity and the field the step
  // started from, BDF2 also the field of the step before; every method one per source field.
  int transient_vectors = 2;
  int bdf2_extra_vectors = 1;
};

// What the stepper keeps besides the hierarchy: its method and its number of source fields.
struct StepperVectors {
  bool transient = true;  // false: a steady solve
  bool bdf2 = false;
  int sources = 0;
};

MultigridLayout multigrid_layout(int dims);

struct MultigridBytes {
  std::int64_t levels = 0;      // how many
  std::int64_t level_ops = 0;   // where the level operations run (host for cpu, else device)
  std::int64_t host = 0;        // on the host for the whole run: the heat-flow operator
  std::int64_t host_setup = 0;  // on the host while the solver is set up (the hierarchy)
};

// The solver of a grid of n[axis] nodes (1 on unused axes), periodic per axis, coarsened as
// solver/multigrid/hierarchy.cpp does (build_hierarchy's rule, coarsest_points 64).
// `on_cpu`: the level operations run on the host (cpu backend), which copies every level.
MultigridBytes multigrid_bytes(int dims, const std::array<std::int64_t, 3>& n,
                               const std::array<bool, 3>& periodic, const StepperVectors& stepper,
                               bool on_cpu, const MultigridLayout& layout);

}  // namespace heatsim::solver
