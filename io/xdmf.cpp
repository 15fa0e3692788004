#include "xdmf.hpp"

#include <cstdio>
#include <sstream>

namespace heatsim::io {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// XML attribute/text escaping for file names (output.name comes from the case).
std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace

std::string xdmf_document(const FieldMeta& grid, const std::vector<XdmfEntry>& entries) {
  // XDMF lists every per-axis value slowest axis first (z y x). A 1D grid becomes a 1 x n
  // 2D image: ParaView draws it as a line along x.
  const int mesh_dims = grid.dims == 3 ? 3 : 2;
  std::string dims, origin, spacing;
  for (int a = mesh_dims - 1; a >= 0; --a) {
    const bool active = a < grid.dims;
    const char* sep = a == mesh_dims - 1 ? "" : " ";
    dims += sep + std::to_string(active ? grid.n[a] : 1);
    origin += sep + number(active ? grid.origin[a] : 0.0);
    spacing += sep + number(active ? grid.spacing[a] : 1.0);
  }
  const char* topology = mesh_dims == 3 ? "3DCoRectMesh" : "2DCoRectMesh";
  const char* geometry = mesh_dims == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY";
  const char* precision = grid.precision == "fp32" ? "4" : "8";

  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    << "<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    << "  <Domain>\n"
    << "    <Grid Name=\"heatsim\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfEntry& e : entries) {
    x << "      <Grid Name=\"step " << e.step << "\" GridType=\"Uniform\">\n"
      << "        <Time Value=\"" << number(e.time) << "\"/>\n"
      << "        <Topology TopologyType=\"" << topology << "\" Dimensions=\"" << dims
      << "\"/>\n"
      << "        <Geometry GeometryType=\"" << geometry << "\">\n"
      << "          <DataItem Name=\"Origin\" Dimensions=\"" << mesh_dims
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" << origin << "</DataItem>\n"
      << "          <DataItem Name=\"Spacing\" Dimensions=\"" << mesh_dims
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" << spacing << "</DataItem>\n"
      << "        </Geometry>\n"
      << "        <Attribute Name=\"" << kFieldDataset
      << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
      << "          <DataItem Dimensions=\"" << dims << "\" NumberType=\"Float\" Precision=\""
      << precision << "\" Format=\"HDF\">" << escape(e.file) << ":/" << kFieldDataset
      << "</DataItem>\n"
      << "        </Attribute>\n"
      << "      </Grid>\n";
  }
  x << "    </Grid>\n"
    << "  </Domain>\n"
    << "</Xdmf>\n";
  return x.str();
}

void write_xdmf(const std::string& path, const FieldMeta& grid,
                const std::vector<XdmfEntry>& entries) {
  write_text_file_atomically(path, xdmf_document(grid, entries));
}

}  // namespace heatsim::io
