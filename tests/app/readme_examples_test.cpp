// The numbers README.md prints for its examples are what the examples give: the chip package's
// summary lines, the wax store's probe table and the power module's heat flows and nonlinear
// iterations, each read from README.md itself and compared with a run of the case in inputs/
// at the digits README.md shows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::lines;
using heatsim_tests::read_text;
using heatsim_tests::ScratchTest;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string readme() { return read_text(fs::path(HEATSIM_SOURCE_DIR) / "README.md"); }

std::string input(const std::string& name) {
  return (fs::path(HEATSIM_SOURCE_DIR) / "inputs" / name).string();
}

// The first README line that begins with `prefix` (after leading blanks) below the first line
// holding `after`; "" if none.
std::string readme_line(const std::string& prefix, const std::string& after) {
  bool below = false;
  for (const std::string& line : lines(readme())) {
    if (!below) {
      below = line.find(after) != std::string::npos;
      continue;
    }
    if (trim(line).rfind(prefix, 0) == 0) return trim(line);
  }
  return "";
}

// `value` rounded to `digits` significant digits, as %g prints it, read back.
double significant(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return std::stod(buf);
}

// Significant digits of a number as written ("0.00113" 3, "1.5e-6" 2, "-1.80603" 6).
int digits_of(const std::string& written) {
  int n = 0;
  bool leading = true;
  for (char c : written) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

using ReadmeExamples = ScratchTest;

// "material ...: N nodes, min .. max .. mean .." and "probes at t = 0.3: ..." of the chip
// example: each line README.md shows is a line the run prints.
TEST_F(ReadmeExamples, ChipPackageSummaryLinesAreTheRunsLines) {
  const auto out = dir_ / "chip";
  const auto r = heatsim_tests::run_heatsim("run " + input("chip_cooling_3d.yaml") +
                                            " --backend cpu -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.output;
  std::vector<std::string> shown;
  for (const std::string& line : lines(readme()))
    if (line.rfind("material silicon: ", 0) == 0 || line.rfind("material copper: ", 0) == 0 ||
        line.rfind("material mold: ", 0) == 0 || line.rfind("probes at t = 0.3: core", 0) == 0)
      shown.push_back(line);
  ASSERT_EQ(shown.size(), 4u);
  for (const std::string& line : shown)
    EXPECT_NE(r.output.find(line + "\n"), std::string::npos)
        << "README.md shows\n  " << line << "\nthe run printed\n"
        << r.output;
}

// The wax store's probe table: every value README.md prints is the run's probe at that time,
// rounded to the two decimals shown.
TEST_F(ReadmeExamples, WaxStoreProbeTableIsTheRunsProbes) {
  const auto out = dir_ / "wax";
  const auto r =
      heatsim_tests::run_heatsim("run -q " + input("wax_storage_1d.yaml") + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.output;
  std::map<double, std::vector<double>> run;  // time -> probe values
  const std::vector<std::string> csv = lines(read_text(out / "probes.csv"));
  ASSERT_GT(csv.size(), 1u);
  for (std::size_t i = 1; i < csv.size(); ++i) {
    const std::vector<std::string> f = split(csv[i], ',');
    std::vector<double> v;
    for (std::size_t j = 2; j < f.size(); ++j) v.push_back(std::stod(f[j]));
    run[std::stod(f[1])] = v;
  }
  int rows = 0;
  bool in_table = false;
  for (const std::string& line : lines(readme())) {
    if (line.rfind("| t (s) | plate | wax 5 mm in", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| ", 0) != 0) break;
    std::vector<std::string> cells = split(line, '|');
    std::vector<std::string> c;
    for (const std::string& cell : cells)
      if (!trim(cell).empty()) c.push_back(trim(cell));
    ASSERT_EQ(c.size(), 6u) << line;
    const double t = std::stod(c[0]);
    ASSERT_EQ(run.count(t), 1u) << "no probe row at t = " << t;
    for (std::size_t j = 1; j < c.size(); ++j) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", run[t][j - 1]);
      EXPECT_EQ(c[j], buf) << "t = " << c[0] << ", column " << j << " (" << run[t][j - 1] << ")";
    }
    ++rows;
  }
  EXPECT_EQ(rows, 5);
}

// The power module: its heat flows to the six digits printed and each nonlinear iteration's
// largest change to the digits README.md gives it.
TEST_F(ReadmeExamples, PowerModuleFlowsAndIterationsAreTheRuns) {
  const auto out = dir_ / "module";
  const auto r = heatsim_tests::run_heatsim("run " + input("power_module_3d.yaml") +
                                            " --backend cpu -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.output;

  // The flows: README.md shows the report as the run prints it, a line per face, void and
  // source (the imbalance, which moves with the rounding, aside).
  const std::string section = "`inputs/power_module_3d.yaml` puts the rest together";
  std::vector<std::string> expected;
  for (const char* what :
       {"face x- (convective): ", "face x+ (convective): ", "face y- (convective): ",
        "face y+ (convective): ", "face z- (convective, radiating): ",
        "face z+ (convective, radiating): ", "void regions[9] (gap1): ",
        "void regions[10] (gap2): ", "void regions[11] (gap3): ", "void regions[12] (gap4): ",
        "sources[0]: "}) {
    const std::string line = readme_line(what, section);
    ASSERT_FALSE(line.empty()) << what;
    expected.push_back(line);
  }
  for (const std::string& line : expected)
    EXPECT_NE(r.output.find("  " + line + "\n"), std::string::npos)
        << "README.md shows\n  " << line << "\nthe run printed\n"
        << r.output;

  // "largest changes a, b, c, d, e K": the run's "nonlinear iteration i: largest change x K".
  const std::string text = readme();
  const auto at = text.find("nonlinear iterations (largest changes ");
  ASSERT_NE(at, std::string::npos);
  const auto from = at + std::string("nonlinear iterations (largest changes ").size();
  const std::vector<std::string> written =
      split(text.substr(from, text.find(" K;", from) - from), ',');
  std::vector<double> logged;
  for (const std::string& line : lines(r.output)) {
    const auto p = line.find("largest change ");
    if (line.find("nonlinear iteration ") == std::string::npos || p == std::string::npos) continue;
    logged.push_back(std::stod(line.substr(p + std::string("largest change ").size())));
  }
  ASSERT_EQ(written.size(), logged.size()) << r.output;
  for (std::size_t i = 0; i < logged.size(); ++i) {
    const std::string w = trim(written[i]);
    EXPECT_EQ(significant(logged[i], digits_of(w)), std::stod(w))
        << "iteration " << i + 1 << ": README.md " << w << ", the run " << logged[i];
  }
}

}  // namespace
