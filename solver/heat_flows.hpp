// Where the heat goes in a steady state: the rate through every outer face and every void
// surface with a condition, what the sources put in, and the imbalance, all from the discrete
// operator the solve used (multigrid/conductance.hpp), so a converged solve closes the balance
// to its tolerance. Rates are into the body, in W (3D), W per metre of depth (2D) or W/m^2
// (1D).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver {

struct HeatFlow {
  std::string what;  // "face x- (convective)", "void regions[2] (gap2)", "sources"
  double rate = 0.0;
};

struct HeatFlowReport {
  std::vector<HeatFlow> flows;
  double imbalance = 0.0;  // the sum of the flows: 0 in an exact steady state
  double largest = 0.0;    // the largest |rate|, the imbalance's scale
};

// The flows of the field u (memory order, problem.points() values) at time t, for a case with
// coefficient fields (`ids` its material ids). A Dirichlet face's rate is what its nodes pass
// to their free neighbours; a node on two Dirichlet faces counts with the first (x-, x+, y-,
// ...).
HeatFlowReport heat_flows(const Case& c, const kernels::StencilProblem& problem,
                          std::shared_ptr<const kernels::CoefficientFields> fields,
                          const std::vector<std::int32_t>& ids, const std::vector<double>& u,
                          double t);

}  // namespace heatsim::solver
