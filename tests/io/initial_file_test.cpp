// The `file` initial condition (io/initial_file.hpp): a heatsim field file or any HDF5 file with
// a numeric dataset of the grid's dimensions; the problems validation reports, per key.
#include "io/initial_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

#include "io/field_file.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;
using solver::BoundaryKind;

class InitialFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("initial_file"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A 2D case of nx x ny nodes, Neumann on every face, reading `file`.
  solver::Case file_case(std::int64_t nx, std::int64_t ny, const std::string& file) const {
    solver::Case c;
    c.grid.dims = 2;
    c.grid.n = {nx, ny, 1};
    c.grid.length = {1.0, 1.0, 1.0};
    for (int f = 0; f < 4; ++f) c.boundary[f] = {BoundaryKind::neumann, 0.0, 0.0, 0.0, {}};
    c.initial.kind = solver::InitialKind::file;
    c.initial.path = file;
    return c;
  }

  // A plain HDF5 file with one dataset of the given dimensions and file type.
  void write_plain(const std::string& file, const char* name, std::vector<hsize_t> dims,
                   hid_t file_type, const std::vector<double>& values) const {
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    const hid_t group = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t d =
        H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Gclose(group);
    H5Fclose(f);
  }

  fs::path dir_;
};

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

TEST_F(InitialFileTest, AHeatsimFieldFileIsTheFieldAndDirichletNodesTakeG) {
  FieldMeta m;
  m.dims = 2;
  m.n = {7, 5, 1};
  m.precision = "fp64";
  m.scheme = "order2";
  m.backend = "cpu";
  const std::vector<double> field = random_values(35, 3);
  write_field_file(path("f.h5"), m, field);

  solver::Case c = file_case(7, 5, path("f.h5"));
  EXPECT_TRUE(initial_file_problem(c).message.empty()) << initial_file_problem(c).message;
  EXPECT_EQ(read_initial_field(c), field);

  c.boundary[1] = {BoundaryKind::dirichlet, 2.5, 0.0, 0.0, {}};  // x+
  const std::vector<double> u = read_initial_field(c);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x)
      EXPECT_EQ(u[static_cast<std::size_t>(y * 7 + x)],
                x == 6 ? 2.5 : field[static_cast<std::size_t>(y * 7 + x)]);
}

TEST_F(InitialFileTest, AnyNumericDatasetOfTheGridsDimensionsConverted) {
  // [1][5][7] floats for a 7 x 5 grid: the leading 1 is dropped, floats become doubles.
  std::vector<double> values = random_values(35, 4);
  write_plain(path("p.h5"), "t", {1, 5, 7}, H5T_IEEE_F32LE, values);
  solver::Case c = file_case(7, 5, path("p.h5"));
  c.initial.dataset = "fields/t";
  const std::vector<double> u = read_initial_field(c);
  ASSERT_EQ(u.size(), 35u);
  for (std::size_t i = 0; i < u.size(); ++i)
    EXPECT_EQ(u[i], static_cast<double>(static_cast<float>(values[i])));
  // Integers too.
  for (double& v : values) v = std::round(10 * v);
  write_plain(path("i.h5"), "t", {5, 7}, H5T_STD_I32LE, values);
  c.initial.path = path("i.h5");
  EXPECT_EQ(read_initial_field(c), values);
}

TEST_F(InitialFileTest, ProblemsNameTheKeyAndWhatIsWrong) {
  write_plain(path("p.h5"), "t", {5, 7}, H5T_IEEE_F64LE, random_values(35, 5));
  solver::Case c = file_case(7, 5, path("p.h5"));
  c.initial.dataset = "fields/t";

  c.initial.path = path("missing.h5");
  InitialFileProblem p = initial_file_problem(c);
  EXPECT_EQ(p.key, "initial.path");
  EXPECT_NE(p.message.find("no such file"), std::string::npos) << p.message;

  std::ofstream(path("text.h5")) << "not hdf5\n";
  c.initial.path = path("text.h5");
  p = initial_file_problem(c);
  EXPECT_EQ(p.key, "initial.path");
  EXPECT_NE(p.message.find("not an HDF5 file"), std::string::npos) << p.message;
  EXPECT_THROW(read_initial_field(c), std::invalid_argument);

  c.initial.path = path("p.h5");
  c.initial.dataset = "fields/nothing";
  p = initial_file_problem(c);
  EXPECT_EQ(p.key, "initial.dataset");
  EXPECT_NE(p.message.find("no dataset 'fields/nothing'"), std::string::npos) << p.message;
  c.initial.dataset = "nowhere/t";
  EXPECT_EQ(initial_file_problem(c).key, "initial.dataset");
  c.initial.dataset = "fields";
  p = initial_file_problem(c);
  EXPECT_EQ(p.key, "initial.dataset");
  EXPECT_NE(p.message.find("not a dataset"), std::string::npos) << p.message;

  c.initial.dataset = "fields/t";
  c.grid.n = {5, 7, 1};  // transposed
  p = initial_file_problem(c);
  EXPECT_EQ(p.key, "initial.dataset");
  EXPECT_NE(p.message.find("has dimensions [5, 7]; the grid needs [7, 5] (y, x)"),
            std::string::npos)
      << p.message;
  EXPECT_THROW(read_initial_field(c), std::invalid_argument);
}

TEST_F(InitialFileTest, AValueThatIsNotFiniteIsRefusedUnlessADirichletNodeHidesIt) {
  std::vector<double> values = random_values(35, 6);
  values[2 * 7 + 6] = std::numeric_limits<double>::quiet_NaN();  // node (6, 2), on x+
  write_plain(path("p.h5"), "t", {5, 7}, H5T_IEEE_F64LE, values);
  solver::Case c = file_case(7, 5, path("p.h5"));
  c.initial.dataset = "fields/t";
  EXPECT_TRUE(initial_file_problem(c).message.empty());  // values are read when the run starts
  try {
    read_initial_field(c);
    FAIL() << "accepted a NaN";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is nan at node (6, 2)"), std::string::npos) << e.what();
  }
  c.boundary[1] = {BoundaryKind::dirichlet, 0.0, 0.0, 0.0, {}};
  EXPECT_EQ(read_initial_field(c)[2 * 7 + 6], 0.0);
}

}  // namespace
}  // namespace heatsim::io
