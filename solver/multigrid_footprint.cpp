#include "multigrid_footprint.hpp"

#include "multigrid/hierarchy.hpp"

namespace heatsim::solver {

MultigridLayout multigrid_layout(int dims) {
  MultigridLayout m;
  m.finest_operator_doubles = 1 + dims;
  // Galerkin coarse levels: a 3^dims-point stencil and as many prolongation weights per node
  // (fp32).
  int points = 1;
  for (int a = 0; a < dims; ++a) points *= 3;
  m.coarse_operator_doubles = 1.5 * points;
  m.finest_smoother_doubles = 1.0 + 0.5 * dims;
  m.device_coarse_operator_doubles = 0.5 * points + 1.0 + 0.5 * points;
  m.cpu_coarse_operator_doubles = 0.5 * points + (dims == 3 ? 0.5 * 13 : 0.5 * points) + 1.0;
  m.galerkin_staging_doubles = dims == 3 ? 0 : 9 + 4;
  return m;
}

MultigridBytes multigrid_bytes(int dims, const std::array<std::int64_t, 3>& n,
                               const std::array<bool, 3>& periodic, const StepperVectors& stepper,
                               bool on_cpu, const MultigridLayout& layout) {
  constexpr std::int64_t kDouble = 8;
  // Nodes per level, as build_hierarchy coarsens.
  std::array<std::int64_t, 3> m = n;
  std::int64_t finest = m[0] * m[1] * m[2], coarse = 0, coarsest = finest;
  MultigridBytes b;
  b.levels = 1;
  const std::int64_t bottom = multigrid::default_coarsest_points(dims, periodic[0]);
  while (m[0] * m[1] * m[2] > bottom) {
    std::array<std::int64_t, 3> next = m;
    bool shrinks = false;
    for (int a = 0; a < dims; ++a) {
      next[a] = static_cast<std::int64_t>(multigrid::coarse_nodes(m[a], periodic[a]).size());
      shrinks = shrinks || next[a] < m[a];
    }
    if (!shrinks) break;
    m = next;
    coarsest = m[0] * m[1] * m[2];
    coarse += coarsest;
    ++b.levels;
  }
  const std::int64_t run_copy = on_cpu ? layout.cpu_copy_extra_doubles : 0;
  const auto level_bytes = [&](double operator_doubles) {
    return static_cast<std::int64_t>(
               (operator_doubles + static_cast<double>(run_copy + layout.vectors_per_level)) *
               kDouble) +
           layout.fixed_bytes;
  };
  // A nonlinear stepper keeps neither the weighted capacity nor the field of the step's start
  // in the level operations (it assembles its loads on the host).
  const int stepper_vectors =
      stepper.sources + (stepper.transient && !stepper.nonlinear ? layout.transient_vectors : 0) +
      (stepper.bdf2 ? layout.bdf2_extra_vectors : 0) +
      (stepper.deflated ? layout.deflation_vectors : 0);
  const bool fused_sweeps =
      !on_cpu && dims == 3 && !periodic[0] && !periodic[1] && !periodic[2] && finest > 8192;
  const std::int64_t dropped =
      (on_cpu && stepper.zero_node_term ? layout.cpu_copy_extra_doubles : 0) +
      (on_cpu ? layout.cpu_finest_diagonal_doubles : 0);
  // The finest level's vectors beyond a level's own, and the deflation's pieces: kept both with
  // the levels and after they are let go (level0).
  const int finest_extra_vectors =
      layout.finest_extra_vectors - (on_cpu ? layout.cpu_finest_shared_vectors : 0) +
      stepper_vectors + (fused_sweeps ? layout.device_sweep_vectors : 0);
  const std::int64_t pieces = stepper.deflated ? finest * layout.deflation_piece_bytes : 0;
  b.level0 =
      finest * ((layout.vectors_per_level + finest_extra_vectors) * kDouble + layout.fixed_bytes) +
      pieces;
  b.level_ops =
      finest * (level_bytes(layout.finest_operator_doubles + layout.finest_smoother_doubles) -
                dropped * kDouble + finest_extra_vectors * kDouble) +
      coarse * level_bytes(on_cpu ? layout.cpu_coarse_operator_doubles
                                  : layout.device_coarse_operator_doubles) +
      coarsest * layout.coarsest_extra_vectors * kDouble + pieces;
  // A linear transient run keeps the operator's level (BDF2's start builds another from it); a
  // steady or nonlinear run takes it at the set-up, leaving the fixed flags.
  const int kept_operator_doubles =
      stepper.transient && !stepper.nonlinear
          ? layout.finest_operator_doubles + layout.heat_flow_extra_doubles
          : 0;
  b.host = finest * (kept_operator_doubles * kDouble + layout.fixed_bytes);
  b.host_setup = finest * (layout.finest_operator_doubles * kDouble + layout.fixed_bytes) +
                 static_cast<std::int64_t>(static_cast<double>(coarse) *
                                           (layout.coarse_operator_doubles * kDouble +
                                            static_cast<double>(layout.fixed_bytes)));
  b.deflation_setup = stepper.deflated ? finest * layout.deflation_setup_bytes : 0;
  b.galerkin_setup = b.levels > 1 ? finest * layout.galerkin_staging_doubles * kDouble : 0;
  return b;
}

}  // namespace heatsim::solver
