#include "material_output.hpp"

#include <hdf5.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "solver/version.hpp"

namespace heatsim::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "heatsim materials";
constexpr std::int64_t kFormatVersion = 1;

// Owns an HDF5 identifier.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id(hid_t id, Closer closer, const std::string& what) : id_(id), closer_(closer) {
    if (id_ < 0) throw std::runtime_error(what);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}
  ~Id() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  herr_t close() { return id_ >= 0 ? closer_(std::exchange(id_, -1)) : 0; }

 private:
  hid_t id_;
  Closer closer_;
};

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error(what);
}

void quiet() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

void attribute(hid_t loc, const char* name, hid_t type, hid_t mem, const void* data,
               hsize_t count) {
  Id space(count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose,
           "dataspace");
  Id attr(H5Acreate2(loc, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
          std::string("attribute ") + name);
  check(H5Awrite(attr.get(), mem, data), std::string("attribute ") + name);
}

Id string_type() {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
  return type;
}

// Variable-length UTF-8 strings: one (count 0, scalar) or an array.
void strings(hid_t loc, const char* name, const std::vector<std::string>& values, bool scalar) {
  Id type = string_type();
  std::vector<const char*> p;
  for (const std::string& s : values) p.push_back(s.c_str());
  attribute(loc, name, type.get(), type.get(), p.data(), scalar ? 0 : p.size());
}

template <class T>
void dataset(hid_t file, const char* name, const std::vector<hsize_t>& dims, hid_t file_type,
             hid_t mem_type, const std::vector<T>& values) {
  Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
           "dataspace");
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  check(H5Pset_obj_track_times(dcpl.get(), false), "dataset properties");
  Id dset(H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
          H5Dclose, std::string("dataset ") + name);
  check(H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        std::string("dataset ") + name);
  check(dset.close(), std::string("dataset ") + name);
}

// Reading: an attribute's raw values and a string list.
template <class T>
std::vector<T> read_values(hid_t loc, const char* name, hid_t mem_type) {
  if (H5Aexists(loc, name) <= 0)
    throw std::runtime_error(std::string("attribute '") + name + "' is missing");
  Id attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  Id space(H5Aget_space(attr.get()), H5Sclose, name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  std::vector<T> v(static_cast<std::size_t>(std::max<hssize_t>(count, 0)));
  check(H5Aread(attr.get(), mem_type, v.data()), std::string("attribute ") + name);
  return v;
}

std::vector<std::string> read_strings(hid_t loc, const char* name) {
  if (H5Aexists(loc, name) <= 0)
    throw std::runtime_error(std::string("attribute '") + name + "' is missing");
  Id attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  Id type = string_type();
  Id file_type(H5Aget_type(attr.get()), H5Tclose, name);
  if (H5Tget_class(file_type.get()) != H5T_STRING || H5Tis_variable_str(file_type.get()) <= 0)
    throw std::runtime_error(std::string("attribute '") + name + "' is not a string list");
  Id space(H5Aget_space(attr.get()), H5Sclose, name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  std::vector<char*> p(static_cast<std::size_t>(std::max<hssize_t>(count, 0)), nullptr);
  check(H5Aread(attr.get(), type.get(), p.data()), std::string("attribute ") + name);
  std::vector<std::string> out;
  for (char* s : p) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return out;
}

template <class T>
std::vector<T> read_grid_dataset(hid_t file, const char* name, hid_t mem_type,
                                 const std::vector<hsize_t>& dims) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
    throw std::runtime_error(std::string("dataset /") + name + " is missing");
  Id dset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, std::string("dataset ") + name);
  Id space(H5Dget_space(dset.get()), H5Sclose, name);
  std::vector<hsize_t> actual(3);
  const int rank = H5Sget_simple_extent_dims(space.get(), actual.data(), nullptr);
  actual.resize(static_cast<std::size_t>(std::max(rank, 0)));
  if (actual != dims)
    throw std::runtime_error(std::string("dataset /") + name + " does not have the grid's shape");
  std::size_t count = 1;
  for (hsize_t d : dims) count *= static_cast<std::size_t>(d);
  std::vector<T> v(count);
  check(H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
        std::string("dataset ") + name);
  return v;
}

std::vector<hsize_t> grid_dims(const FieldMeta& m) {
  std::vector<hsize_t> d;
  for (int a = m.dims - 1; a >= 0; --a) d.push_back(static_cast<hsize_t>(m.n[a]));
  return d;
}

}  // namespace

std::string material_file_path(const solver::Case& c) {
  return (fs::path(c.output.directory) / kMaterialFileName).string();
}

std::vector<std::string> material_names(const solver::Case& c) {
  if (c.materials.empty()) return {"physics"};
  std::vector<std::string> names;
  for (const solver::MaterialSpec& m : c.materials) names.push_back(m.name);
  return names;
}

namespace {

// The sum of the source fields at schedule factor 1 (void surfaces' exchanges left out).
std::vector<double> source_density(const kernels::CoefficientFields& fields, std::size_t points) {
  std::vector<double> density(points, 0.0);
  for (const auto& s : fields.sources) {
    if (s.surface) continue;  // a void surface's exchange, not a source
    if (s.density.size() != points)
      throw std::runtime_error("a source field does not have the grid's points");
    for (std::size_t i = 0; i < points; ++i) density[i] += s.density[i];
  }
  return density;
}

// Each material's conductivity and capacity (the attributes), in material_names' order.
std::pair<std::vector<double>, std::vector<double>> material_coefficients(const solver::Case& c) {
  std::vector<double> k, cap;
  if (c.materials.empty()) return {{c.physics.alpha}, {1.0}};
  for (const solver::MaterialSpec& m : c.materials) {
    k.push_back(m.conductivity);
    cap.push_back(m.capacity());
  }
  return {k, cap};
}

}  // namespace

bool material_file_matches(const std::string& path, const solver::Case& c,
                           const std::vector<std::int32_t>& ids,
                           const kernels::CoefficientFields& fields) {
  try {
    const MaterialFile f = read_material_file(path);
    const FieldMeta meta = make_meta(c, 0.0, "", 0, 0.0);
    const std::size_t points = static_cast<std::size_t>(meta.points());
    if (f.grid.dims != meta.dims) return false;
    for (int a = 0; a < meta.dims; ++a)
      if (f.grid.n[a] != meta.n[a] || f.grid.spacing[a] != meta.spacing[a] ||
          f.grid.origin[a] != meta.origin[a])
        return false;
    const auto [k, cap] = material_coefficients(c);
    return f.names == material_names(c) && f.material_conductivity == k &&
           f.material_capacity == cap && f.material == ids &&
           f.conductivity == fields.conductivity && f.capacity == fields.capacity &&
           f.source_density == source_density(fields, points);
  } catch (const std::exception&) {
    return false;
  }
}

void write_material_file(const std::string& path, const solver::Case& c,
                         const std::vector<std::int32_t>& ids,
                         const kernels::CoefficientFields& fields) {
  quiet();
  const FieldMeta meta = make_meta(c, 0.0, "", 0, 0.0);
  const std::size_t points = static_cast<std::size_t>(meta.points());
  try {
    if (ids.size() != points || fields.conductivity.size() != points ||
        fields.capacity.size() != points)
      throw std::runtime_error("the fields do not have the grid's " + std::to_string(points) +
                               " points");
    const std::vector<double> density = source_density(fields, points);
    std::vector<std::string> names = material_names(c);
    const auto [k, cap] = material_coefficients(c);

    // Written in place into the temporary that then takes the name (write_file_atomically):
    // no image of the whole file in memory (32 bytes a node, and as much again to copy it out).
    write_file_atomically(path, [&](const std::string& tmp) {
      Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
      check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
      Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
              "cannot create the file");
      const std::vector<hsize_t> dims = grid_dims(meta);
      dataset(file.get(), "material", dims, H5T_STD_I32LE, H5T_NATIVE_INT32, ids);
      dataset(file.get(), "conductivity", dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
              fields.conductivity);
      dataset(file.get(), "capacity", dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, fields.capacity);
      dataset(file.get(), "source_density", dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, density);

      const hid_t root = file.get();
      const std::int64_t version = kFormatVersion, dims_attr = meta.dims;
      strings(root, "format", {kFormat}, true);
      attribute(root, "format_version", H5T_STD_I64LE, H5T_NATIVE_INT64, &version, 0);
      attribute(root, "dims", H5T_STD_I64LE, H5T_NATIVE_INT64, &dims_attr, 0);
      const auto count = static_cast<hsize_t>(meta.dims);
      attribute(root, "n", H5T_STD_I64LE, H5T_NATIVE_INT64, meta.n.data(), count);
      attribute(root, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, meta.spacing.data(), count);
      attribute(root, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, meta.origin.data(), count);
      strings(root, "materials", names, false);
      attribute(root, "material_conductivity", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, k.data(),
                k.size());
      attribute(root, "material_capacity", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, cap.data(),
                cap.size());
      strings(root, "heatsim_version", {meta.version}, true);
      strings(root, "case_yaml", {meta.case_yaml}, true);
      check(file.close(), "cannot close the file");
    });
  } catch (const std::exception& e) {
    H5Eclear2(H5E_DEFAULT);
    const std::string what = e.what();
    // write_file_atomically names the file already.
    throw std::runtime_error(
        what.rfind("cannot write ", 0) == 0 ? what : "cannot write " + path + ": " + what);
  }
}

MaterialFile read_material_file(const std::string& path) {
  quiet();
  try {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw std::runtime_error("no such file");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw std::runtime_error("not an HDF5 file");
    Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
    check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
    Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose,
            "cannot open: the file is truncated or damaged");
    const hid_t root = file.get();
    const auto format = read_strings(root, "format");
    if (format.size() != 1 || format[0] != kFormat)
      throw std::runtime_error("not a heatsim materials file");
    const auto version = read_values<std::int64_t>(root, "format_version", H5T_NATIVE_INT64);
    if (version.size() != 1 || version[0] != kFormatVersion)
      throw std::runtime_error("unsupported materials file version");

    MaterialFile out;
    FieldMeta& m = out.grid;
    const auto dims = read_values<std::int64_t>(root, "dims", H5T_NATIVE_INT64);
    if (dims.size() != 1 || dims[0] < 1 || dims[0] > 3) throw std::runtime_error("invalid dims");
    m.dims = static_cast<int>(dims[0]);
    const auto n = read_values<std::int64_t>(root, "n", H5T_NATIVE_INT64);
    const auto spacing = read_values<double>(root, "spacing", H5T_NATIVE_DOUBLE);
    const auto origin = read_values<double>(root, "origin", H5T_NATIVE_DOUBLE);
    const auto d = static_cast<std::size_t>(m.dims);
    if (n.size() != d || spacing.size() != d || origin.size() != d)
      throw std::runtime_error("attributes n, spacing, origin must have dims entries");
    for (std::size_t a = 0; a < d; ++a) {
      if (n[a] < 1) throw std::runtime_error("invalid grid size");
      m.n[a] = n[a];
      m.spacing[a] = spacing[a];
      m.origin[a] = origin[a];
    }
    m.version = read_strings(root, "heatsim_version").at(0);
    m.case_yaml = read_strings(root, "case_yaml").at(0);
    out.names = read_strings(root, "materials");
    out.material_conductivity =
        read_values<double>(root, "material_conductivity", H5T_NATIVE_DOUBLE);
    out.material_capacity = read_values<double>(root, "material_capacity", H5T_NATIVE_DOUBLE);
    if (out.material_conductivity.size() != out.names.size() ||
        out.material_capacity.size() != out.names.size())
      throw std::runtime_error("material attributes do not have one value per material");
    const std::vector<hsize_t> shape = grid_dims(m);
    out.material = read_grid_dataset<std::int32_t>(root, "material", H5T_NATIVE_INT32, shape);
    out.conductivity = read_grid_dataset<double>(root, "conductivity", H5T_NATIVE_DOUBLE, shape);
    out.capacity = read_grid_dataset<double>(root, "capacity", H5T_NATIVE_DOUBLE, shape);
    out.source_density =
        read_grid_dataset<double>(root, "source_density", H5T_NATIVE_DOUBLE, shape);
    check(file.close(), "cannot close the file");
    return out;
  } catch (const std::exception& e) {
    H5Eclear2(H5E_DEFAULT);
    throw std::runtime_error(path + ": " + e.what());
  }
}

bool is_material_file(const std::string& path) {
  quiet();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  try {
    Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open");
    if (H5Aexists(file.get(), "format") <= 0) return false;
    const auto format = read_strings(file.get(), "format");
    return format.size() == 1 && format[0] == kFormat;
  } catch (const std::exception&) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
}

}  // namespace heatsim::io
