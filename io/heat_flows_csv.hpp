// <output.directory>/heat_flows.csv (output.heat_flows: true): a row of heat flows at every
// output, `step,time,<flows...>,storage,imbalance`, each column a heat rate with its unit in the
// header ("face x- (convective) [W/m]"): W for a 3D grid, W per metre of depth for 2D, W per m^2
// of cross-section for 1D. A StepCsv (step_csv.hpp): full precision, restart-safe byte for byte.
// A steady state's file has the header "state,..." and one row "steady,...".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solver/case.hpp"
#include "step_csv.hpp"

namespace heatsim::io {

// <dir>/heat_flows.csv
std::string heat_flows_csv_path(const solver::Case& c);

// The columns after step and time: each flow's name, then storage and imbalance, each with
// " [unit]" for a grid of `dims` dimensions: watts (per metre of depth in 2D, per m^2 of
// cross-section in 1D) for a case with materials; without them (k = physics.alpha, rho c_p =
// 1) u times a volume per unit time, u*L^3/t (u*L^2/t, u*L/t), not watts.
std::vector<std::string> heat_flows_columns(const std::vector<std::string>& flows, int dims,
                                            bool watts = true);

class HeatFlowsCsv : public StepCsv {
 public:
  // StepCsv's constructor with heat_flows_columns(flows, dims, watts) as columns.
  HeatFlowsCsv(std::string path, const std::vector<std::string>& flows, int dims,
               std::int64_t restart_step, bool steady = false, bool watts = true);
};

}  // namespace heatsim::io
