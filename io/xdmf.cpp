#include "xdmf.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "material_output.hpp"

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

// The record of a finished run: its end step.
constexpr const char* kFinishedPrefix = "<Information Name=\"finished\" Value=\"";
std::string finished_information(std::int64_t step) {
  return kFinishedPrefix + std::to_string(step) + "\"/>";
}

}  // namespace

std::string xdmf_document(const FieldMeta& grid, const std::vector<XdmfEntry>& entries,
                          const std::string& materials_file,
                          const std::vector<XdmfField>& document_fields, std::int64_t finished) {
  // XDMF lists every per-axis value slowest axis first (z y x). Every grid is a 3D
  // co-rectilinear mesh, with extent 1 on unused axes: ParaView 5.11 (both XDMF readers) puts
  // a 2DCoRectMesh in the y-z plane, with the data's x along y, which is wrong for 2D and 1D.
  // The HDF5 dataset keeps rank `dims`; the readers need only the element count to agree.
  std::string dims, origin, spacing;
  for (int a = 2; a >= 0; --a) {
    const bool active = a < grid.dims;
    const char* sep = a == 2 ? "" : " ";
    dims += sep + std::to_string(active ? grid.n[a] : 1);
    origin += sep + number(active ? grid.origin[a] : 0.0);
    spacing += sep + number(active ? grid.spacing[a] : 1.0);
  }
  const std::string& grid_precision = grid.precision;

  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    << "<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    << "  <Domain>\n"
    << "    <Grid Name=\"heatsim\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  if (finished >= 0) x << "      " << finished_information(finished) << "\n";
  for (const XdmfEntry& e : entries) {
    const std::string& stored = e.precision.empty() ? grid_precision : e.precision;
    const char* precision = stored == "fp32" ? "4" : "8";
    const std::vector<XdmfField>& fields = e.fields ? *e.fields : document_fields;
    // A steady state has no time: its one grid says so by name and in an Information element,
    // with Time 0 for the readers that want one.
    if (grid.steady)
      x << "      <Grid Name=\"steady state\" GridType=\"Uniform\">\n"
        << "        <Information Name=\"steady\" Value=\"1\"/>\n";
    else
      x << "      <Grid Name=\"step " << e.step << "\" GridType=\"Uniform\">\n";
    x << "        <Time Value=\"" << number(e.time) << "\"/>\n"
      << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
      << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << "          <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" "
         "Precision=\"8\" Format=\"XML\">"
      << origin << "</DataItem>\n"
      << "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" "
         "Precision=\"8\" Format=\"XML\">"
      << spacing << "</DataItem>\n"
      << "        </Geometry>\n"
      << "        <Attribute Name=\"" << kFieldDataset
      << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
      << "          <DataItem Dimensions=\"" << dims << "\" NumberType=\"Float\" Precision=\""
      << precision << "\" Format=\"HDF\">" << escape(e.file) << ":/" << kFieldDataset
      << "</DataItem>\n"
      << "        </Attribute>\n";
    for (const XdmfField& f : fields) {
      const bool vector = f.components == 3;
      x << "        <Attribute Name=\"" << escape(f.name) << "\" AttributeType=\""
        << (vector ? "Vector" : "Scalar") << "\" Center=\"Node\">\n"
        << "          <DataItem Dimensions=\"" << dims
        << (f.components > 1 ? " " + std::to_string(f.components) : std::string())
        << "\" NumberType=\"Float\" Precision=\"" << precision << "\" Format=\"HDF\">"
        << escape(e.file) << ":/" << escape(f.name) << "</DataItem>\n"
        << "        </Attribute>\n";
    }
    if (!materials_file.empty()) {
      // The material id is an integer (ParaView thresholds it by id); the coefficients are
      // stored as doubles whatever the run's precision.
      for (const char* name : kMaterialDatasets) {
        const bool listed = std::any_of(fields.begin(), fields.end(),
                                        [&](const XdmfField& f) { return f.name == name; });
        if (listed) continue;  // the step's own file has it
        const bool id = std::string(name) == "material";
        x << "        <Attribute Name=\"" << name
          << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
          << "          <DataItem Dimensions=\"" << dims << "\" NumberType=\""
          << (id ? "Int" : "Float") << "\" Precision=\"" << (id ? "4" : "8")
          << "\" Format=\"HDF\">" << escape(materials_file) << ":/" << name << "</DataItem>\n"
          << "        </Attribute>\n";
      }
    }
    x << "      </Grid>\n";
  }
  x << "    </Grid>\n"
    << "  </Domain>\n"
    << "</Xdmf>\n";
  return x.str();
}

void write_xdmf(const std::string& path, const FieldMeta& grid,
                const std::vector<XdmfEntry>& entries, const std::string& materials_file,
                const std::vector<XdmfField>& fields, std::int64_t finished) {
  write_text_file_atomically(path, xdmf_document(grid, entries, materials_file, fields, finished));
}

std::int64_t xdmf_finished_step(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return -1;
  // The record comes before the first step's grid: the head of the document is enough.
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string prefix = kFinishedPrefix;
  const std::size_t at = head.find(prefix);
  if (at == std::string::npos) return -1;
  const std::size_t first = at + prefix.size();
  const std::size_t quote = head.find('"', first);
  if (quote == std::string::npos) return -1;
  std::int64_t step = -1;
  const auto [end, error] = std::from_chars(head.data() + first, head.data() + quote, step);
  return error == std::errc() && end == head.data() + quote && step >= 0 ? step : -1;
}

}  // namespace heatsim::io
