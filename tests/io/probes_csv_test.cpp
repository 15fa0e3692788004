// probes.csv: full-precision rows, and a restart that keeps exactly the rows up to its step, so
// the restarted file is the uninterrupted one byte for byte.
#include "io/probes_csv.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim::io::ProbesCsv;
using heatsim_tests::read_text;

// Values that need all 17 digits, different at every step.
std::vector<double> values_at(std::int64_t step) {
  const double s = static_cast<double>(step);
  return {std::sin(s) / 3.0, 300.0 + std::exp(-s / 7.0), -1e-300 * s};
}

class ProbesCsvTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("probes_csv"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Rows every `every` steps from `from` (exclusive unless 0) to `to`, plus `to` itself.
  static void write_rows(ProbesCsv& csv, std::int64_t from, std::int64_t to, std::int64_t every) {
    for (std::int64_t s = from; s <= to; ++s)
      if (s % every == 0 || s == to) csv.write(s, 0.125 * static_cast<double>(s), values_at(s));
  }

  const std::vector<std::string> names_{"die_center", "spreader corner", "a,b"};
  fs::path dir_;
};

TEST_F(ProbesCsvTest, RowsHoldTheValuesAtFullPrecision) {
  const fs::path path = dir_ / "probes.csv";
  {
    ProbesCsv csv(path.string(), names_, -1);
    write_rows(csv, 0, 25, 10);
    csv.flush();
    EXPECT_EQ(csv.last_step(), 25);
  }
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step,time,die_center,spreader corner,\"a,b\"");
  std::vector<std::int64_t> steps;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string field;
    std::getline(row, field, ',');
    const std::int64_t step = std::stoll(field);
    steps.push_back(step);
    std::getline(row, field, ',');
    EXPECT_EQ(std::strtod(field.c_str(), nullptr), 0.125 * static_cast<double>(step));
    const std::vector<double> expected = values_at(step);
    for (double v : expected) {
      ASSERT_TRUE(std::getline(row, field, ','));
      EXPECT_EQ(std::strtod(field.c_str(), nullptr), v) << line;  // the same double, bit for bit
    }
  }
  EXPECT_EQ(steps, (std::vector<std::int64_t>{0, 10, 20, 25}));
}

// A steady state's file: no step or time, the header "state" and one row "steady".
TEST_F(ProbesCsvTest, ASteadyStateHasAStateColumnAndOneRow) {
  const fs::path path = dir_ / "probes.csv";
  {
    ProbesCsv csv(path.string(), names_, -1, true);
    csv.write(0, 0.0, {1.5, 2.5, 3.5});
  }
  EXPECT_EQ(read_text(path), "state,die_center,spreader corner,\"a,b\"\nsteady,1.5,2.5,3.5\n");
}

TEST_F(ProbesCsvTest, RestartKeepsTheRowsUpToItsStepAndContinuesExactly) {
  const fs::path whole = dir_ / "whole.csv";
  {
    ProbesCsv csv(whole.string(), names_, -1);
    write_rows(csv, 0, 95, 10);
  }
  const fs::path path = dir_ / "probes.csv";
  {
    // The first run checkpointed at 40, went on past it and died in the middle of a row.
    ProbesCsv csv(path.string(), names_, -1);
    write_rows(csv, 0, 70, 10);
  }
  std::ofstream(path, std::ios::app) << "80,10,0.12345";  // cut short: no line break
  std::int64_t kept = 0;
  {
    ProbesCsv csv(path.string(), names_, 45);  // the checkpoint's step
    kept = csv.kept_rows();
    EXPECT_EQ(csv.last_step(), 40);
    write_rows(csv, 46, 95, 10);
  }
  EXPECT_EQ(kept, 5);  // 0, 10, 20, 30, 40
  EXPECT_EQ(read_text(path), read_text(whole));
}

TEST_F(ProbesCsvTest, RestartAtTheLastStepDoesNotRepeatTheLastRow) {
  const fs::path path = dir_ / "probes.csv";
  {
    ProbesCsv csv(path.string(), names_, -1);
    write_rows(csv, 0, 30, 10);
  }
  const std::string before = read_text(path);
  {
    ProbesCsv csv(path.string(), names_, 30);
    csv.write(30, 3.75, values_at(30));  // the final output fires again
  }
  EXPECT_EQ(read_text(path), before);
}

TEST_F(ProbesCsvTest, RestartWithOtherProbesIsRefusedAndTheFileKept) {
  const fs::path path = dir_ / "probes.csv";
  {
    ProbesCsv csv(path.string(), names_, -1);
    write_rows(csv, 0, 20, 10);
  }
  const std::string before = read_text(path);
  try {
    ProbesCsv csv(path.string(), {"other"}, 10);
    FAIL() << "a file with other probes was continued";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("probes changed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(path), before);
}

TEST_F(ProbesCsvTest, RestartWithoutAFileStartsOne) {
  const fs::path path = dir_ / "probes.csv";
  {
    ProbesCsv csv(path.string(), names_, 50);
    EXPECT_EQ(csv.kept_rows(), 0);
    csv.write(60, 7.5, values_at(60));
  }
  const std::string text = read_text(path);
  EXPECT_EQ(text.substr(0, text.find('\n')), heatsim::io::probes_csv_header(names_));
  EXPECT_EQ(text.substr(text.find('\n') + 1, 3), "60,");
}

}  // namespace
