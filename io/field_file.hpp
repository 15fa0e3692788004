// HDF5 field files (output and checkpoints) and the XDMF index that ParaView opens.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "solver/case.hpp"

namespace heatsim::io {

// What a field file says about itself (HDF5 attributes).
struct FieldMeta {
  std::int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;
  double alpha = 0.0;
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};  // x, y, z
  std::array<double, 3> spacing{1, 1, 1};
  std::array<double, 3> origin{0, 0, 0};
  std::string scheme;
  std::string backend;
  std::string precision;  // "fp64" | "fp32"
  std::string version;
  std::string case_yaml;
};

FieldMeta make_meta(const solver::Case& c, double dt, const std::string& backend,
                    std::int64_t step, double time);

// Writes the field ([z][y][x], x fastest) stored in the case's precision. Crash-safe: writes
// `path.tmp` in the same directory and renames. Throws std::runtime_error naming the file.
void write_field_file(const std::string& path, const FieldMeta& meta,
                      const std::vector<double>& field);

}  // namespace heatsim::io
