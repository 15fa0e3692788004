// The field files' fast write path lays out the dataset's bytes itself (an output file's
// contiguous values, a checkpoint's Fletcher32-checksummed chunks) on every thread. Its files
// must be the ones HDF5's own H5Dwrite makes, and the same for any number of threads.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "io/field_file.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Shape {
  int dims;
  std::array<std::int64_t, 3> n;
  const char* precision;
};

void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.dims << "D " << s.n[0] << "x" << s.n[1] << "x" << s.n[2] << " " << s.precision;
}

FieldMeta meta_of(const Shape& s) {
  FieldMeta m;
  m.dims = s.dims;
  m.n = s.n;
  m.precision = s.precision;
  m.step = 7;
  m.time = 0.125;
  m.dt = 1.0 / 56;
  m.scheme = "order2";
  m.backend = "cpu";
  m.version = "test";
  m.case_yaml = "grid: {}\n";
  return m;
}

// Values that use every bit of a float (an fp32 run's values are floats).
std::vector<double> values_of(const FieldMeta& m) {
  std::vector<double> u(static_cast<std::size_t>(m.points()));
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double v = std::sin(0.001 * static_cast<double>(i)) * 300.0 + 1e-3 * (i % 97);
    u[i] = m.precision == "fp32" ? static_cast<double>(static_cast<float>(v)) : v;
  }
  return u;
}

// Rewrites the file's dataset through HDF5's own H5Dwrite (type conversion, chunking and the
// Fletcher32 filter done by the library) in place; a file whose bytes were already HDF5's
// stays the same.
void rewrite_with_hdf5(const fs::path& path, const std::vector<double>& u) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dset = H5Dopen2(file, kFieldDataset, H5P_DEFAULT);
  ASSERT_GE(dset, 0);
  EXPECT_GE(H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, u.data()), 0);
  H5Dclose(dset);
  H5Fclose(file);
}

class FieldWrite : public ::testing::TestWithParam<Shape> {};

TEST_P(FieldWrite, FilesAreHdf5sOwnAndAlikeOnAnyNumberOfThreads) {
  const fs::path dir = heatsim_tests::make_scratch_dir("field_write");
  const FieldMeta m = meta_of(GetParam());
  const std::vector<double> u = values_of(m);
  for (FieldFileKind kind : {FieldFileKind::output, FieldFileKind::checkpoint}) {
    SCOPED_TRACE(to_string(kind));
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    write_field_file((dir / "one.h5").string(), m, u, kind);
    omp_set_num_threads(3);
    write_field_file((dir / "three.h5").string(), m, u, kind);
    omp_set_num_threads(before);
    const std::string one = file_bytes(dir / "one.h5");
    ASSERT_GT(one.size(), static_cast<std::size_t>(m.points()) * (m.precision == "fp32" ? 4 : 8));
    EXPECT_TRUE(one == file_bytes(dir / "three.h5"));

    // Read back (checkpoints: the Fletcher32 sums verified by HDF5): the values exactly.
    const FieldFile back = read_field_file((dir / "one.h5").string());
    EXPECT_EQ(back.checksummed, kind == FieldFileKind::checkpoint);
    EXPECT_TRUE(back.field == u);

    fs::copy_file(dir / "one.h5", dir / "hdf5.h5", fs::copy_options::overwrite_existing);
    rewrite_with_hdf5(dir / "hdf5.h5", u);
    EXPECT_TRUE(one == file_bytes(dir / "hdf5.h5"));
  }
  fs::remove_all(dir);
}

// A compressed output (shuffle + deflate, chunks of about 1 MiB built and compressed on the
// threads) is the file HDF5's own filters make, reads back exactly, and is smaller.
TEST_P(FieldWrite, CompressedOutputsAreHdf5sOwnAndAlikeOnAnyNumberOfThreads) {
  const fs::path dir = heatsim_tests::make_scratch_dir("field_write_deflate");
  FieldMeta m = meta_of(GetParam());
  m.compression = 3;
  const std::vector<double> u = values_of(m);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  write_field_file((dir / "one.h5").string(), m, u, FieldFileKind::output);
  omp_set_num_threads(3);
  write_field_file((dir / "three.h5").string(), m, u, FieldFileKind::output);
  omp_set_num_threads(before);
  const std::string one = file_bytes(dir / "one.h5");
  EXPECT_TRUE(one == file_bytes(dir / "three.h5"));
  const FieldFile back = read_field_file((dir / "one.h5").string());
  EXPECT_EQ(back.deflate, 3);
  EXPECT_EQ(back.meta.compression, 3);
  EXPECT_FALSE(back.checksummed);
  EXPECT_TRUE(back.field == u);
  const double raw = static_cast<double>(m.points()) * (m.precision == std::string("fp32") ? 4 : 8);
  EXPECT_LT(static_cast<double>(back.stored_bytes), raw);
  fs::copy_file(dir / "one.h5", dir / "hdf5.h5", fs::copy_options::overwrite_existing);
  rewrite_with_hdf5(dir / "hdf5.h5", u);
  EXPECT_TRUE(one == file_bytes(dir / "hdf5.h5"));
  fs::remove_all(dir);
}

// An fp32 run's staging holds floats: its files are byte for byte those written from the same
// values as doubles (output, compressed output, checkpoint).
TEST(FieldWriteFromFloats, SameFilesAsFromDoubles) {
  const fs::path dir = heatsim_tests::make_scratch_dir("field_write_floats");
  FieldMeta m = meta_of(Shape{3, {211, 97, 130}, "fp32"});
  const std::vector<double> u = values_of(m);
  const std::vector<float> f(u.begin(), u.end());
  for (const auto& [kind, level] : {std::pair{FieldFileKind::output, 0},
                                    std::pair{FieldFileKind::output, 2},
                                    std::pair{FieldFileKind::checkpoint, 0}}) {
    SCOPED_TRACE(std::string(to_string(kind)) + " level " + std::to_string(level));
    m.compression = level;
    write_field_file((dir / "d.h5").string(), m, u, kind);
    write_field_file((dir / "f.h5").string(), m, FieldValues{nullptr, f.data(), f.size()}, kind);
    EXPECT_TRUE(file_bytes(dir / "d.h5") == file_bytes(dir / "f.h5"));
  }
  m.precision = "fp64";
  m.compression = 0;
  EXPECT_THROW(write_field_file((dir / "x.h5").string(), m,
                                FieldValues{nullptr, f.data(), f.size()}, FieldFileKind::output),
               std::runtime_error);
  fs::remove_all(dir);
}

// An fp64 field stored as fp32 (output.precision: fp32): every value rounded to the nearest
// float, as HDF5's conversion rounds it. The uncompressed file is written in pieces of 2^24 floats, each narrowed before it is
// written: the second, larger shape takes two pieces and part of a third.
TEST(FieldWriteNarrowed, Fp64FieldStoredAsFloats) {
  const fs::path dir = heatsim_tests::make_scratch_dir("field_write_fp32");
  for (const Shape& shape :
       {Shape{2, {301, 203, 1}, "fp64"}, Shape{1, {33554432 + 4099, 1, 1}, "fp64"}}) {
    FieldMeta m = meta_of(shape);
    const std::vector<double> u = values_of(m);
    m.precision = "fp32";
    const bool large = m.points() > 1000000;
    for (int level : large ? std::vector<int>{0} : std::vector<int>{0, 5}) {
      m.compression = level;
      write_field_file((dir / "f.h5").string(), m, u, FieldFileKind::output);
      const FieldFile back = read_field_file((dir / "f.h5").string());
      EXPECT_EQ(back.meta.precision, "fp32");
      ASSERT_EQ(back.field.size(), u.size());
      for (std::size_t i = 0; i < u.size(); ++i)
        ASSERT_EQ(back.field[i], static_cast<double>(static_cast<float>(u[i]))) << i;
      const std::string ours = file_bytes(dir / "f.h5");
      rewrite_with_hdf5(dir / "f.h5", u);
      EXPECT_TRUE(ours == file_bytes(dir / "f.h5")) << "level " << level;
    }
  }
  fs::remove_all(dir);
}

// Checkpoint chunks stay below 16 MiB: the larger shapes have several, the last ones cut by
// the grid's edge (1D: along x; 2D and 3D: along the slowest axis, then the next).
INSTANTIATE_TEST_SUITE_P(
    Shapes, FieldWrite,
    ::testing::Values(Shape{1, {4194311, 1, 1}, "fp32"}, Shape{1, {2097157, 1, 1}, "fp64"},
                      Shape{2, {37, 29, 1}, "fp32"}, Shape{2, {2053, 1031, 1}, "fp64"},
                      Shape{3, {211, 97, 130}, "fp32"}, Shape{3, {2100, 300, 9}, "fp64"}),
    [](const ::testing::TestParamInfo<Shape>& info) {
      return std::to_string(info.param.dims) + "D_" + std::to_string(info.param.n[0]) + "_" +
             info.param.precision;
    });

}  // namespace
}  // namespace heatsim::io
