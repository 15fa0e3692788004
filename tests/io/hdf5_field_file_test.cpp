// HDF5 field files: layout, attributes, precision, crash-safe replacement, error messages.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/field_file.hpp"
#include "io/xdmf.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

class FieldFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("field_file"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

FieldMeta meta_for(int dims, std::array<std::int64_t, 3> n, const std::string& precision) {
  FieldMeta m;
  m.step = 200;
  m.time = 0.125;
  m.dt = 6.25e-4;
  m.alpha = 0.5;
  m.dims = dims;
  m.n = n;
  m.spacing = {0.1, 0.2, 0.3};
  m.origin = {0.0, 0.0, 0.0};
  for (int a = dims; a < 3; ++a) m.spacing[a] = 1.0;
  m.scheme = "order2";
  m.backend = "cpu";
  m.precision = precision;
  m.version = "0.1.0";
  m.case_yaml = "grid:\n  n: [4, 3, 2]\n# provenance\n";
  return m;
}

std::vector<double> random_field(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

TEST_F(FieldFileTest, RoundTripKeepsEveryAttributeAndValue) {
  const FieldMeta m = meta_for(3, {4, 3, 2}, "fp64");
  const std::vector<double> field = random_field(24, 1);
  write_field_file(path("f.h5"), m, field);
  const FieldFile f = read_field_file(path("f.h5"));
  EXPECT_EQ(f.kind, FieldFileKind::output);
  EXPECT_FALSE(f.checksummed);
  EXPECT_EQ(f.meta.step, 200);
  EXPECT_EQ(f.meta.time, 0.125);
  EXPECT_EQ(f.meta.dt, 6.25e-4);
  EXPECT_EQ(f.meta.alpha, 0.5);
  EXPECT_EQ(f.meta.dims, 3);
  EXPECT_EQ(f.meta.n, m.n);
  EXPECT_EQ(f.meta.spacing, m.spacing);
  EXPECT_EQ(f.meta.origin, m.origin);
  EXPECT_EQ(f.meta.scheme, "order2");
  EXPECT_EQ(f.meta.backend, "cpu");
  EXPECT_EQ(f.meta.precision, "fp64");
  EXPECT_EQ(f.meta.version, "0.1.0");
  EXPECT_EQ(f.meta.case_yaml, m.case_yaml);
  EXPECT_EQ(f.field, field);
  EXPECT_FALSE(fs::exists(path("f.h5.tmp")));
}

// The dataset has rank dims and lists its dimensions z, y, x, so x varies fastest.
TEST_F(FieldFileTest, DatasetIsZYXWithRankDims) {
  for (int dims = 1; dims <= 3; ++dims) {
    std::array<std::int64_t, 3> n{5, dims >= 2 ? 4 : 1, dims >= 3 ? 3 : 1};
    const FieldMeta m = meta_for(dims, n, "fp64");
    std::vector<double> field(static_cast<std::size_t>(m.points()));
    for (std::size_t i = 0; i < field.size(); ++i) field[i] = static_cast<double>(i);
    const std::string p = path("d" + std::to_string(dims) + ".h5");
    write_field_file(p, m, field);

    const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t dset = H5Dopen2(file, "/u", H5P_DEFAULT);
    ASSERT_GE(dset, 0);
    const hid_t space = H5Dget_space(dset);
    hsize_t d[3] = {0, 0, 0};
    ASSERT_EQ(H5Sget_simple_extent_dims(space, d, nullptr), dims);
    for (int i = 0; i < dims; ++i) EXPECT_EQ(d[i], static_cast<hsize_t>(n[dims - 1 - i]));
    std::vector<double> back(field.size());
    ASSERT_GE(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    EXPECT_EQ(back, field);  // memory order preserved: x fastest
    // Scalar attributes on the root group, readable by any HDF5 tool.
    double time = 0;
    const hid_t attr = H5Aopen(file, "time", H5P_DEFAULT);
    ASSERT_GE(attr, 0);
    ASSERT_GE(H5Aread(attr, H5T_NATIVE_DOUBLE, &time), 0);
    EXPECT_EQ(time, 0.125);
    for (const char* name : {"step", "dt", "alpha", "spacing", "origin", "scheme", "backend",
                             "precision", "heatsim_version", "case_yaml"})
      EXPECT_GT(H5Aexists(file, name), 0) << name;
    H5Aclose(attr);
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
  }
}

TEST_F(FieldFileTest, Fp32IsStoredAsFloatAndReadBackExactly) {
  const FieldMeta m = meta_for(2, {7, 5, 1}, "fp32");
  std::vector<double> field = random_field(35, 2);
  for (double& v : field) v = static_cast<float>(v);  // what an fp32 backend hands out
  write_field_file(path("f32.h5"), m, field);

  const hid_t file = H5Fopen(path("f32.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dset = H5Dopen2(file, "/u", H5P_DEFAULT);
  const hid_t type = H5Dget_type(dset);
  EXPECT_EQ(H5Tget_class(type), H5T_FLOAT);
  EXPECT_EQ(H5Tget_size(type), 4u);
  H5Tclose(type);
  H5Dclose(dset);
  H5Fclose(file);

  EXPECT_EQ(read_field_file(path("f32.h5")).field, field);
}

TEST_F(FieldFileTest, LongCaseTextIsKept) {
  FieldMeta m = meta_for(1, {3, 1, 1}, "fp64");
  m.case_yaml = std::string(200000, 'x');  // beyond the 64 KiB object-header limit
  write_field_file(path("long.h5"), m, {1, 2, 3});
  EXPECT_EQ(read_field_header(path("long.h5")).meta.case_yaml, m.case_yaml);
}

TEST_F(FieldFileTest, WrongFieldSizeIsRefusedAndLeavesNothing) {
  const FieldMeta m = meta_for(1, {3, 1, 1}, "fp64");
  try {
    write_field_file(path("bad.h5"), m, {1, 2});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path("bad.h5")), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("bad.h5")));
  EXPECT_FALSE(fs::exists(path("bad.h5.tmp")));
}

TEST_F(FieldFileTest, UnwritableTargetGivesAClearError) {
  const FieldMeta m = meta_for(1, {3, 1, 1}, "fp64");
  const std::string p = path("missing_dir/f.h5");
  try {
    write_field_file(p, m, {1, 2, 3});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// A write that fails part way (here: the file-size limit, as a full disk would) leaves the
// previous file under the real name intact and no temporary behind.
TEST_F(FieldFileTest, FailedWriteKeepsThePreviousFile) {
  const FieldMeta small = meta_for(1, {16, 1, 1}, "fp64");
  const std::vector<double> first = random_field(16, 3);
  write_field_file(path("f.h5"), small, first);

  const FieldMeta big = meta_for(1, {1 << 18, 1, 1}, "fp64");  // 2 MiB of data
  const std::vector<double> second = random_field(1 << 18, 4);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = old;
  limited.rlim_cur = 256 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  bool threw = false;
  std::string message;
  try {
    write_field_file(path("f.h5"), big, second);
  } catch (const std::runtime_error& e) {
    threw = true;
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_TRUE(threw);
  EXPECT_NE(message.find(path("f.h5")), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path("f.h5.tmp")));
  const FieldFile f = read_field_file(path("f.h5"));
  EXPECT_EQ(f.field, first);
}

TEST_F(FieldFileTest, ReadErrorsNameTheFile) {
  const std::string missing = path("nope.h5");
  EXPECT_THROW(
      {
        try {
          read_field_file(missing);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
          throw;
        }
      },
      std::runtime_error);

  const std::string text = path("text.h5");
  std::ofstream(text) << "not hdf5";
  try {
    read_field_file(text);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not an HDF5 file"), std::string::npos) << e.what();
  }

  // An HDF5 file that heatsim did not write.
  const std::string foreign = path("foreign.h5");
  H5Fclose(H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  try {
    read_field_file(foreign);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a heatsim field file"), std::string::npos)
        << e.what();
  }
}

TEST(Xdmf, GeometryPerDimension) {
  FieldMeta m = meta_for(3, {4, 3, 2}, "fp64");
  std::string doc = xdmf_document(m, {{0, 0.0, "field_00000000.h5"}, {10, 0.5, "field_00000010.h5"}});
  EXPECT_NE(doc.find("CollectionType=\"Temporal\""), std::string::npos);
  EXPECT_NE(doc.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"2 3 4\""), std::string::npos);
  EXPECT_NE(doc.find("GeometryType=\"ORIGIN_DXDYDZ\""), std::string::npos);
  EXPECT_NE(doc.find(">0.29999999999999999 0.20000000000000001 0.10000000000000001<"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("<Time Value=\"0.5\"/>"), std::string::npos);
  EXPECT_NE(doc.find(">field_00000010.h5:/u<"), std::string::npos);
  EXPECT_NE(doc.find("Precision=\"8\" Format=\"HDF\""), std::string::npos);

  m = meta_for(2, {4, 3, 1}, "fp32");
  doc = xdmf_document(m, {{0, 0.0, "a.h5"}});
  EXPECT_NE(doc.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"1 3 4\""), std::string::npos);
  EXPECT_NE(doc.find(">1 0.20000000000000001 0.10000000000000001<"), std::string::npos) << doc;
  EXPECT_NE(doc.find("Precision=\"4\" Format=\"HDF\""), std::string::npos);

  m = meta_for(1, {4, 1, 1}, "fp64");
  doc = xdmf_document(m, {{0, 0.0, "a.h5"}});
  EXPECT_NE(doc.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"1 1 4\""), std::string::npos);
  EXPECT_NE(doc.find("<DataItem Dimensions=\"1 1 4\""), std::string::npos);
}

// output.fields: a vector listed as a Vector attribute with its components last, a scalar as a
// Scalar, both from the step's own file in its precision; the materials file's conductivity
// gives way to the step's own.
TEST(Xdmf, FurtherFieldsAreListedFromEachStepsFile) {
  const FieldMeta m = meta_for(2, {4, 3, 1}, "fp32");
  const std::string doc = xdmf_document(m, {{0, 0.0, "a.h5"}, {5, 0.5, "b.h5"}}, "materials.h5",
                                        {{"heat_flux", 3}, {"conductivity", 1}});
  EXPECT_NE(doc.find("<Attribute Name=\"heat_flux\" AttributeType=\"Vector\" Center=\"Node\">\n"
                     "          <DataItem Dimensions=\"1 3 4 3\" NumberType=\"Float\" "
                     "Precision=\"4\" Format=\"HDF\">b.h5:/heat_flux</DataItem>"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("<Attribute Name=\"conductivity\" AttributeType=\"Scalar\" Center=\"Node\">\n"
                     "          <DataItem Dimensions=\"1 3 4\" NumberType=\"Float\" "
                     "Precision=\"4\" Format=\"HDF\">a.h5:/conductivity</DataItem>"),
            std::string::npos)
      << doc;
  EXPECT_EQ(doc.find("materials.h5:/conductivity"), std::string::npos) << doc;
  EXPECT_NE(doc.find("materials.h5:/capacity"), std::string::npos) << doc;
}

// Further node fields go into an output file in its precision and filters: a vector of rank
// dims + 1 (components last), a scalar of rank dims; the field reads back as before.
TEST(FieldFile, OutputsHoldFurtherNodeFields) {
  const std::string dir = heatsim_tests::make_scratch_dir("node_fields").string();
  for (int compression : {0, 4}) {
    FieldMeta m = meta_for(3, {4, 3, 2}, "fp32");
    m.compression = compression;
    const std::vector<double> u(24, 1.5);
    NodeField q{"heat_flux", 3, std::vector<double>(72)};
    for (std::size_t i = 0; i < q.values.size(); ++i) q.values[i] = 0.25 * static_cast<double>(i);
    const NodeField k{"conductivity", 1, std::vector<double>(24, 45.0)};
    const std::string file = dir + "/f" + std::to_string(compression) + ".h5";
    write_field_file(file, m, FieldValues{u.data(), nullptr, u.size()}, FieldFileKind::output, {},
                     nullptr, {q, k});
    const Dataset back = read_dataset(file, "heat_flux", true);
    EXPECT_EQ(back.dims, (std::vector<std::int64_t>{2, 3, 4, 3}));
    EXPECT_EQ(back.values, q.values);  // quarters are exact in fp32
    EXPECT_EQ(read_dataset(file, "conductivity", true).dims, (std::vector<std::int64_t>{2, 3, 4}));
    EXPECT_EQ(read_field_file(file).field, u);
    // The wrong number of values is refused, naming the dataset.
    NodeField short_field = k;
    short_field.values.pop_back();
    EXPECT_THROW(write_field_file(file, m, FieldValues{u.data(), nullptr, u.size()},
                                  FieldFileKind::output, {}, nullptr, {short_field}),
                 std::runtime_error);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heatsim::io
