// docs/case-format.md against what the reader and a run do: the sections its table lists are
// the ones the reader knows.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "io/case_loader.hpp"
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

}  // namespace
