// A fresh directory for one test under the system's temporary directory, named after the
// process and the running test, so that tests run in parallel never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace heatsim_tests {

// temp/heatsim_<prefix>_<pid>_<test name>, emptied if it exists. The caller removes it.
inline std::filesystem::path make_scratch_dir(const std::string& prefix) {
  std::string name = "heatsim_" + prefix + "_" + std::to_string(::getpid());
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info())
    name += std::string("_") + info->name();
  std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests: "Name/3"
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A test with its own scratch directory dir_ (removed after), and files written into it.
class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_scratch_dir("app"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to dir_/name; its path.
  std::string write_file(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
};

}  // namespace heatsim_tests
