#include "probes_csv.hpp"

#include <filesystem>

namespace heatsim::io {

std::string probes_csv_path(const solver::Case& c) {
  return (std::filesystem::path(c.output.directory) / "probes.csv").string();
}

std::string probes_csv_header(const std::vector<std::string>& names, bool steady) {
  return step_csv_header(names, steady);
}

}  // namespace heatsim::io
