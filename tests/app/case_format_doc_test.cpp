// docs/case-format.md against what the reader and a run do: the sections its table lists are
// the ones the reader knows, and what it says `output.every: 0` writes is what a run writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "io/case_loader.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::lines;
using heatsim_tests::read_text;
using heatsim_tests::ScratchTest;

std::string case_format() {
  return read_text(fs::path(HEATSIM_SOURCE_DIR) / "docs" / "case-format.md");
}

// The first column of the table under `heading` ("## Sections"): "| `grid` | ..." -> grid.
std::set<std::string> table_keys(const std::string& heading) {
  std::set<std::string> keys;
  bool below = false;
  const std::regex row(R"(^\| `([^`]+)` \|)");
  for (const std::string& line : lines(case_format())) {
    if (!below) {
      below = line == heading;
      continue;
    }
    if (line.rfind("## ", 0) == 0) break;
    std::smatch m;
    if (std::regex_search(line, m, row)) keys.insert(m[1]);
  }
  return keys;
}

// The row of the table whose first column is `key`; "" if none.
std::string table_row(const std::string& key) {
  for (const std::string& line : lines(case_format()))
    if (line.rfind("| `" + key + "` |", 0) == 0) return line;
  return "";
}

const std::string kCase =
    "grid: {dims: 1, n: [11]}\n"
    "physics: {alpha: 1.0}\n"
    "boundary: {all: {type: dirichlet, value: 0}}\n"
    "initial: {type: constant, value: 1}\n"
    "time: {steps: 3}\n";

class CaseFormatDoc : public ScratchTest {};

// "Any other key is an error": every section the reader takes has its row (the unknown key's
// message lists the sections the reader knows).
TEST_F(CaseFormatDoc, TheSectionTableListsEverySectionTheReaderTakes) {
  const heatsim::io::LoadResult r = heatsim::io::load_case_text(kCase + "zzz: 1\n");
  ASSERT_EQ(r.errors.size(), 1u);
  const std::string& message = r.errors[0].message;
  const std::string marker = "known keys: ";
  const std::size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  std::string known = message.substr(at + marker.size());
  known = std::regex_replace(known, std::regex(" or "), ", ");
  const std::set<std::string> documented = table_keys("## Sections");
  ASSERT_GE(documented.size(), 10u);
  int count = 0;
  const std::regex name("[a-z_]+");
  for (std::sregex_iterator it(known.begin(), known.end(), name), end; it != end; ++it, ++count)
    EXPECT_TRUE(documented.count(it->str())) << it->str() << " has no row in ## Sections";
  EXPECT_EQ(count, static_cast<int>(documented.size()));
}

// A run with `output.every: 0` writes the field at step 0 and at its last step; the table's
// row says so.
TEST_F(CaseFormatDoc, OutputEveryZeroWritesTheFirstAndTheLastStep) {
  const std::string c = write_file(
      "c.yaml", kCase + "output: {every: 0, directory: " + (dir_ / "out").string() + "}\n");
  const heatsim_tests::ProcessResult r = heatsim_tests::run_heatsim("run -q " + c);
  ASSERT_EQ(r.code, 0) << r.output;
  std::set<std::string> written;
  for (const auto& entry : fs::directory_iterator(dir_ / "out"))
    if (entry.path().filename().string().rfind("field_", 0) == 0)
      written.insert(entry.path().filename().string());
  EXPECT_EQ(written, (std::set<std::string>{"field_00000000.h5", "field_00000003.h5"}));
  const std::string row = table_row("output.every");
  ASSERT_FALSE(row.empty());
  EXPECT_NE(row.find("0 writes step 0 and the last step only"), std::string::npos) << row;
}

}  // namespace
