// Checkpoints: round trip in the run's precision, checksum and truncation detection, and the
// checks against the case on restart.
#include "io/checkpoint.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "io/output.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;
using solver::Precision;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = heatsim_tests::make_scratch_dir("checkpoint");
    c_.grid.dims = 2;
    c_.grid.n = {12, 9, 1};
    c_.grid.length = {1.0, 2.0, 1.0};
    c_.physics.alpha = 0.25;
    c_.output.directory = dir_.string();
    c_.source_text = "grid: {n: [12, 9]}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<double> field(double value) const {
    return std::vector<double>(static_cast<std::size_t>(c_.grid.n[0] * c_.grid.n[1]), value);
  }
  std::string write(std::int64_t step, const std::vector<double>& values) {
    const std::string p = checkpoint_path(c_, step);
    write_checkpoint(p, make_meta(c_, dt_, "cpu", step, static_cast<double>(step) * dt_), values);
    return p;
  }

  fs::path dir_;
  solver::Case c_;
  double dt_ = 1e-3;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

// Flips `mask` in byte `byte` of the value `index` places after the first fp64 `marker` in the
// file (a field written with the marker everywhere); false when the marker is not there.
bool flip_bit(const std::string& path, double marker, std::size_t index, std::size_t byte,
              char mask) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  char pattern[8];
  std::memcpy(pattern, &marker, 8);
  const std::size_t at = bytes.find(std::string(pattern, 8));
  if (at == std::string::npos) return false;
  bytes[at + 8 * index + byte] ^= mask;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return true;
}

TEST_F(CheckpointTest, PathSortsByStep) {
  EXPECT_EQ(fs::path(checkpoint_path(c_, 500)).filename(), "checkpoint_00000500.h5");
  EXPECT_EQ(fs::path(checkpoint_path(c_, 500)).parent_path(), dir_);
}

TEST_F(CheckpointTest, RoundTripIsExactInBothPrecisions) {
  for (auto precision : {Precision::fp64, Precision::fp32}) {
    c_.precision = precision;
    std::vector<double> values = field(0.0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = 1.0 / (3.0 + static_cast<double>(i));
      if (precision == Precision::fp32) values[i] = static_cast<float>(values[i]);
    }
    const std::string p = write(40, values);
    const Checkpoint ck = read_checkpoint(p);
    EXPECT_EQ(ck.field, values);
    EXPECT_EQ(ck.meta.step, 40);
    EXPECT_EQ(ck.meta.dt, dt_);
    EXPECT_EQ(ck.meta.precision, kernels::to_string(precision));
    EXPECT_EQ(ck.meta.case_yaml, c_.source_text);
    EXPECT_EQ(checkpoint_mismatch(ck, c_, dt_), "");
    EXPECT_FALSE(fs::exists(p + ".tmp"));
  }
}

// A bdf2 checkpoint's field of the step before is stored in fp64 whatever the run's precision
// (the implicit stepper holds it so), checksummed as the field is; other checkpoints have none.
TEST_F(CheckpointTest, PreviousFieldRoundTripsInFp64AndFailsItsChecksumWhenCorrupt) {
  const double marker = 9876.54321012345;  // not a float: fp64 storage keeps every bit
  for (auto precision : {Precision::fp64, Precision::fp32}) {
    c_.precision = precision;
    const std::string p = checkpoint_path(c_, 6);
    write_checkpoint(p, make_meta(c_, dt_, "cpu", 6, 6 * dt_), field(0.5), field(marker));
    const Checkpoint ck = read_checkpoint(p);
    EXPECT_EQ(ck.field, field(0.5));
    EXPECT_EQ(ck.previous, field(marker));
    EXPECT_TRUE(read_checkpoint(write(7, field(0.5))).previous.empty());
  }
  const std::string p = checkpoint_path(c_, 6);
  ASSERT_TRUE(flip_bit(p, marker, 5, 2, 0x01));
  const std::string msg = message_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("u_previous"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
}

TEST_F(CheckpointTest, CorruptDataFailsTheChecksum) {
  // A value with a distinctive bit pattern, so the test finds the data bytes in the file.
  const double marker = 1234.5678901234;
  const std::string p = write(7, field(marker));
  ASSERT_TRUE(flip_bit(p, marker, 20, 3, 0x10));  // one bit of the 21st value
  const std::string msg = message_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
}

// Fletcher32 covers the data; a changed attribute (here the step) fails the checkpoint's own
// checksum over its attributes.
TEST_F(CheckpointTest, ChangedAttributeFailsTheChecksum) {
  const std::string p = write(7, field(1.0));
  const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t attr = H5Aopen(file, "step", H5P_DEFAULT);
  const std::int64_t step = 8;
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT64, &step), 0);
  H5Aclose(attr);
  H5Fclose(file);
  const std::string msg = message_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
}

// The fusion depth of the run that wrote a checkpoint travels with it (a restart under
// `fusion: auto` continues at it); a checkpoint without it reads as 0, and one whose depth
// was changed or removed fails the checksum.
TEST_F(CheckpointTest, FusionDepthRoundTripsUnderTheChecksum) {
  const std::string without = write(3, field(2.0));
  EXPECT_EQ(read_checkpoint(without).meta.fusion, 0);

  FieldMeta meta = make_meta(c_, dt_, "cpu", 4, 4 * dt_);
  meta.fusion = 5;
  const std::string p = checkpoint_path(c_, 4);
  write_checkpoint(p, meta, field(3.0));
  EXPECT_EQ(read_checkpoint(p).meta.fusion, 5);

  const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t attr = H5Aopen(file, "fusion", H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  const std::int64_t other = 2;
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT64, &other), 0);
  H5Aclose(attr);
  H5Fclose(file);
  EXPECT_NE(message_of([&] { read_checkpoint(p); }).find("checksum"), std::string::npos);

  write_checkpoint(p, meta, field(3.0));
  const hid_t again = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(again, 0);
  ASSERT_GE(H5Adelete(again, "fusion"), 0);
  H5Fclose(again);
  EXPECT_NE(message_of([&] { read_checkpoint(p); }).find("checksum"), std::string::npos);
}

TEST_F(CheckpointTest, TruncatedFileIsRefused) {
  const std::string p = write(7, field(1.0));
  for (double fraction : {0.5, 0.9, 0.02}) {
    const std::string q = (dir_ / "truncated.h5").string();
    fs::copy_file(p, q, fs::copy_options::overwrite_existing);
    fs::resize_file(q, static_cast<std::uintmax_t>(fs::file_size(p) * fraction));
    const std::string msg = message_of([&] { read_checkpoint(q); });
    EXPECT_NE(msg.find(q), std::string::npos) << msg;
  }
  fs::resize_file(p, 0);
  EXPECT_NE(message_of([&] { read_checkpoint(p); }).find(p), std::string::npos);
}

TEST_F(CheckpointTest, OutputFileIsNotACheckpoint) {
  OutputSeries series(c_, dt_, "cpu");
  series.write(3, 0.003, field(2.0));
  const std::string p = output_path(c_, 3);
  const std::string msg = message_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("not a checkpoint"), std::string::npos) << msg;
}

TEST_F(CheckpointTest, MismatchNamesWhatDiffers) {
  const Checkpoint ck = read_checkpoint(write(10, field(0.5)));
  solver::Case other = c_;
  other.grid.n = {24, 9, 1};
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_), "grid.n: checkpoint 12x9, case 24x9");
  other = c_;
  other.grid.dims = 3;
  other.grid.n = {12, 9, 5};
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_), "grid.dims: checkpoint 2, case 3");
  other = c_;
  other.grid.length = {2.0, 2.0, 1.0};
  EXPECT_NE(checkpoint_mismatch(ck, other, dt_).find("grid spacing"), std::string::npos);
  other = c_;
  other.scheme.kind = solver::SchemeKind::order4;
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_), "scheme: checkpoint order2, case order4");
  other = c_;
  other.precision = Precision::fp32;
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_), "precision: checkpoint fp64, case fp32");
  EXPECT_EQ(checkpoint_mismatch(ck, c_, 2e-3),
            "time.dt: checkpoint 0.001, case 0.002");
  other = c_;
  other.physics.alpha = 1.0;
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_), "physics.alpha: checkpoint 0.25, case 1");
  other.precision = Precision::fp32;
  EXPECT_EQ(checkpoint_mismatch(ck, other, dt_),
            "precision: checkpoint fp64, case fp32; physics.alpha: checkpoint 0.25, case 1");
}

// A restart may change the physics on purpose; what changed is named, settings in the order
// of the keys, numbers by value; how long, where and on what the run goes is no change.
TEST(CaseChanges, NameWhatChangedOfThePhysicsOnly) {
  const std::string written = R"(
grid: {dims: 2, n: [121, 31], length: [0.30, 0.075]}
materials:
  brick: {conductivity: 0.72, density: 1920, specific_heat: 835}
boundary:
  x-: {type: convective, h: 7.7, ambient: 293.15}
  x+: {type: dirichlet, value: 263.15}
time: {method: backward-euler, dt: 600, end: 86400}
output: {directory: out, every: 48}
)";
  // The same case written otherwise: block style, a comment, 7.2e-1 for 0.72.
  const std::string same = R"(# the wall again
grid:
  dims: 2
  n: [121, 31]
  length: [0.3, 0.075]
materials:
  brick: {conductivity: 7.2e-1, density: 1920, specific_heat: 835}
boundary:
  x-: {type: convective, h: 7.7, ambient: 293.15}
  x+: {type: dirichlet, value: 263.15}
time: {method: backward-euler, dt: 600, end: 86400}
output: {directory: out, every: 48}
)";
  EXPECT_TRUE(case_changes(written, same).empty());
  // Longer, elsewhere, with probes, checkpoints and a backend: no change of the physics.
  std::string longer = written;
  longer.replace(longer.find("end: 86400"), 10, "end: 172800");
  longer.replace(longer.find("directory: out"), 14, "directory: elsewhere");
  longer += "probes: {every: 10, points: {a: [0.1, 0.03]}}\ncheckpoint: {every: 24}\n"
            "backend: cpu\nfusion: 2\n";
  EXPECT_TRUE(case_changes(written, longer).empty());

  std::string warmer = written;
  warmer.replace(warmer.find("conductivity: 0.72"), 18, "conductivity: 0.9");
  warmer.replace(warmer.find("ambient: 293.15"), 15, "ambient: 295.15");
  EXPECT_EQ(case_changes(written, warmer),
            (std::vector<std::string>{"materials.brick.conductivity: 0.72 -> 0.9",
                                      "boundary.x-.ambient: 293.15 -> 295.15"}));

  std::string other_face = written;
  other_face.replace(other_face.find("{type: dirichlet, value: 263.15}"), 32,
                     "{type: convective, h: 25, ambient: 263.15}");
  EXPECT_EQ(case_changes(written, other_face),
            (std::vector<std::string>{"boundary.x+.type: dirichlet -> convective",
                                      "boundary.x+.value: removed (was 263.15)",
                                      "boundary.x+.h: added (25)",
                                      "boundary.x+.ambient: added (263.15)"}));

  std::string refined = written;
  refined.replace(refined.find("[121, 31]"), 9, "[241, 61]");
  refined += "sources:\n  - {box: {lower: [0, 0], upper: [0.1, 0.075]}, power: 5}\n";
  const std::vector<std::string> got = case_changes(written, refined);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "grid.n: [121, 31] -> [241, 61]");
  EXPECT_EQ(got[1].rfind("sources: added (", 0), 0u) << got[1];

  // Contacts written otherwise (names swapped, a conductance for its resistance, entries in
  // another order) are the same contacts; another resistance is a change.
  const std::string contacts = written +
                               "contacts:\n"
                               "  - {between: [brick, steel], resistance: 1.0e-3}\n"
                               "  - {between: [brick, foam], resistance: 2.0e-2}\n";
  const std::string rewritten = written +
                                "contacts:\n"
                                "  - {between: [foam, brick], conductance: 50}\n"
                                "  - {between: [steel, brick], conductance: 1000}\n";
  EXPECT_TRUE(case_changes(contacts, rewritten).empty());
  std::string firmer = contacts;
  firmer.replace(firmer.find("resistance: 1.0e-3"), 18, "resistance: 5.0e-4");
  EXPECT_EQ(case_changes(contacts, firmer),
            (std::vector<std::string>{"contacts[0].resistance: 1.0e-3 -> 5.0e-4"}));

  // Nothing to compare: a file written without its case text, or text that is not YAML.
  EXPECT_TRUE(case_changes("", written).empty());
  EXPECT_TRUE(case_changes(written, "grid: [unclosed").empty());
}

}  // namespace
}  // namespace heatsim::io
