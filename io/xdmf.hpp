// The XDMF index over a run's field files: one temporal collection of uniform co-rectilinear
// grids, which ParaView (Xdmf3 and legacy XDMF readers) opens as a time series.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "field_file.hpp"

namespace heatsim::io {

// A further node field every field file holds (output.fields, io/field_file.hpp NodeField):
// listed as a Scalar attribute, or with 3 components as a Vector (ParaView draws it as arrows
// with the Glyph filter).
struct XdmfField {
  std::string name;
  int components = 1;
};

struct XdmfEntry {
  std::int64_t step = 0;
  double time = 0.0;
  std::string file;  // HDF5 file name, relative to the .xmf (same directory)
  // What this step's file holds where it differs from the document's (a file an earlier part
  // of the run wrote under other output settings, continued on a restart): its precision
  // ("fp32" | "fp64"; empty: the grid's) and its further node fields (unset: the document's).
  std::string precision;
  std::optional<std::vector<XdmfField>> fields;
};

// The document. Geometry: 3DCoRectMesh/ORIGIN_DXDYDZ for every dimension, with extent 1 on
// the unused axes (a 2D grid is an nx x ny x 1 image in the z = 0 plane, a 1D grid a line
// along x): ParaView 5.11 misplaces 2DCoRectMesh grids. Values are listed slowest axis first
// (z y x), as XDMF wants. File names are relative to the .xmf, so a run directory can move.
// With `materials_file` (an HDF5 file of io/material_output.hpp, relative to the .xmf) every
// step also lists its datasets material, conductivity, capacity and source_density as node
// attributes: they do not change in time, so each step points at the same file. `fields`
// (after u, in the field files' precision) are listed from each step's own file (an entry's own
// precision and fields, where it has them, in their place); one named like
// a dataset of the materials file (conductivity) takes that one's place. A steady state
// (grid.steady) is one grid named "steady state" with <Information Name="steady" Value="1"/>
// and Time 0. `finished` >= 0: the run reached its end at that step, with every file written
// (<Information Name="finished" Value="STEP"/> in the collection, which readers ignore);
// absent while the run goes on or where it stopped short.
std::string xdmf_document(const FieldMeta& grid, const std::vector<XdmfEntry>& entries,
                          const std::string& materials_file = "",
                          const std::vector<XdmfField>& fields = {}, std::int64_t finished = -1);

// Writes the document crash-safely (temporary + fsync + rename).
void write_xdmf(const std::string& path, const FieldMeta& grid,
                const std::vector<XdmfEntry>& entries, const std::string& materials_file = "",
                const std::vector<XdmfField>& fields = {}, std::int64_t finished = -1);

// The step at which the run of the index at `path` says it finished (xdmf_document's
// `finished`); -1 when the index says nothing of it (a run that goes on, stopped short, or was
// written before the record), is missing or cannot be read.
std::int64_t xdmf_finished_step(const std::string& path);

}  // namespace heatsim::io
