#include "heat_flows_csv.hpp"

#include <filesystem>
#include <utility>

#include "solver/heat_flows.hpp"

namespace heatsim::io {

std::string heat_flows_csv_path(const solver::Case& c) {
  return (std::filesystem::path(c.output.directory) / "heat_flows.csv").string();
}

std::vector<std::string> heat_flows_columns(const std::vector<std::string>& flows, int dims,
                                            bool watts) {
  const char* shorthand = dims == 3 ? "u*L^3/t" : dims == 2 ? "u*L^2/t" : "u*L/t";
  const std::string unit =
      std::string(" [") + (watts ? solver::heat_rate_unit(dims) : shorthand) + "]";
  std::vector<std::string> columns;
  for (const std::string& f : flows) columns.push_back(f + unit);
  columns.push_back("storage" + unit);
  columns.push_back("imbalance" + unit);
  return columns;
}

HeatFlowsCsv::HeatFlowsCsv(std::string path, const std::vector<std::string>& flows, int dims,
                           std::int64_t restart_step, bool steady, bool watts)
    : StepCsv(std::move(path), heat_flows_columns(flows, dims, watts), restart_step, steady,
              "heat flows") {}

}  // namespace heatsim::io
