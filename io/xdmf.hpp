// The XDMF index over a run's field files: one temporal collection of uniform co-rectilinear
// grids, which ParaView (Xdmf3 and legacy XDMF readers) opens as a time series.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "field_file.hpp"

namespace heatsim::io {

struct XdmfEntry {
  std::int64_t step = 0;
  double time = 0.0;
  std::string file;  // HDF5 file name, relative to the .xmf (same directory)
};

// The document. Geometry: 3DCoRectMesh/ORIGIN_DXDYDZ (3D), 2DCoRectMesh/ORIGIN_DXDY (2D and
// 1D; a 1D grid is a 1 x n image). Values are listed slowest axis first, as XDMF wants.
std::string xdmf_document(const FieldMeta& grid, const std::vector<XdmfEntry>& entries);

// Writes the document crash-safely (temporary + fsync + rename).
void write_xdmf(const std::string& path, const FieldMeta& grid,
                const std::vector<XdmfEntry>& entries);

}  // namespace heatsim::io
