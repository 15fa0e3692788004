// Every file in tests/io/malformed/ is a broken case. Each must be refused with at least one
// error, every message non-empty and clear, and the error text must contain the substring the
// file names on its first line ("# expect: ...") or in expectations.txt (binary files). A case
// the loader takes is refused when its body is laid on the grid (resolve_body, as `validate`
// and `run` do next).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "io/case_loader.hpp"
#include "io/field_inputs.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(HEATSIM_SOURCE_DIR) / "tests" / "io" / "malformed";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> sidecar_expectations() {
  std::map<std::string, std::string> out;
  std::ifstream in(kCorpus / "expectations.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

std::string expectation(const std::string& text, const std::string& name,
                        const std::map<std::string, std::string>& sidecar) {
  const std::string marker = "# expect: ";
  if (text.rfind(marker, 0) == 0) {
    const std::size_t eol = text.find('\n');
    return text.substr(marker.size(), eol == std::string::npos ? std::string::npos
                                                               : eol - marker.size());
  }
  const auto it = sidecar.find(name);
  return it == sidecar.end() ? std::string() : it->second;
}

TEST(MalformedCases, EveryFileIsRefusedWithTheExpectedError) {
  const auto sidecar = sidecar_expectations();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const std::string expected = expectation(read_bytes(entry.path()), name, sidecar);
    EXPECT_FALSE(expected.empty()) << "no '# expect:' line and no entry in expectations.txt";
    if (expected.empty()) continue;

    const auto start = std::chrono::steady_clock::now();
    const LoadResult r = load_case_file(entry.path().string());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 5.0) << "loading took too long";

    std::vector<CaseError> errors = r.errors;
    if (r.ok()) {
      solver::Case c = *r.value;
      ASSERT_TRUE(c.has_fields()) << "loaded, and has no body to check";
      read_field_inputs(c);
      errors = resolve_body(c, r.lines).errors;
    }
    EXPECT_FALSE(errors.empty());
    for (const CaseError& e : errors) {
      EXPECT_FALSE(e.message.empty());
      EXPECT_GE(e.line, 0);
      // Library text may follow a sentence of ours, never stand alone.
      EXPECT_EQ(e.message.rfind("yaml-cpp", 0), std::string::npos) << e.message;
    }
    const std::string text = format_errors(errors);
    EXPECT_NE(text.find(expected), std::string::npos)
        << "expected '" << expected << "' in:\n" << text;
  }
  EXPECT_GE(files, 100);
  for (const auto& [name, expected] : sidecar)
    EXPECT_TRUE(fs::exists(kCorpus / name)) << name << " is listed in expectations.txt";
}

TEST(MalformedCases, OversizedTextIsRefusedBeforeParsing) {
  const std::string big = "grid:\n  dims: 2\n#" + std::string(kMaxCaseBytes, 'x') + "\n";
  const LoadResult r = load_case_text(big);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("1 MiB"), std::string::npos) << r.errors[0].message;

  const fs::path file = fs::temp_directory_path() / "heatsim_oversized_case.yaml";
  {
    std::ofstream out(file, std::ios::binary);
    out << big;
  }
  const LoadResult from_file = load_case_file(file.string());
  fs::remove(file);
  ASSERT_EQ(from_file.errors.size(), 1u);
  EXPECT_NE(from_file.errors[0].message.find("1 MiB"), std::string::npos);
}

TEST(MalformedCases, TruncatedValidCasesNeverCrash) {
  // Every prefix of a valid case either loads or fails with messages; none throws.
  const std::string text = read_bytes(fs::path(HEATSIM_SOURCE_DIR) / "inputs" / "heat2d.yaml");
  ASSERT_FALSE(text.empty());
  for (std::size_t n = 0; n < text.size(); n += 7) {
    const LoadResult r = load_case_text(text.substr(0, n));
    if (!r.ok()) {
      ASSERT_FALSE(r.errors.empty()) << n;
      for (const CaseError& e : r.errors) EXPECT_FALSE(e.message.empty()) << n;
    }
  }
}

TEST(MalformedCases, TruncatedRealCasesNeverCrash) {
  // The same for a case with materials, regions, convective faces and probes.
  const std::string text =
      read_bytes(fs::path(HEATSIM_SOURCE_DIR) / "inputs" / "composite_wall_1d.yaml");
  ASSERT_FALSE(text.empty());
  int loaded = 0;
  for (std::size_t n = 0; n <= text.size(); n += 5) {
    const LoadResult r = load_case_text(text.substr(0, n));
    if (r.ok()) {
      ++loaded;
    } else {
      ASSERT_FALSE(r.errors.empty()) << n;
      for (const CaseError& e : r.errors) EXPECT_FALSE(e.message.empty()) << n;
    }
  }
  EXPECT_TRUE(load_case_text(text).ok());
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace heatsim::io
