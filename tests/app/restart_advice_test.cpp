// A restart under a case whose grid, scheme or precision differs from the checkpoint's is
// refused (exit code 2, nothing in the directory changed), and the message says what to do:
// give the case its settings again, or run the changed case without --restart, from the
// checkpoint's field where the grid is the same.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using heatsim_tests::ScratchTest;

std::string rod(const fs::path& out, int n, const std::string& precision) {
  return "grid: {dims: 1, n: [" + std::to_string(n) +
         "], length: [1.0]}\n"
         "physics: {alpha: 1.0}\n"
         "precision: " +
         precision +
         "\n"
         "boundary: {x-: {type: dirichlet, value: 1}, x+: {type: dirichlet, value: 0}}\n"
         "initial: {type: constant, value: 0}\n"
         "time: {dt: 0.0001, steps: 40}\n"
         "output: {directory: " +
         out.string() +
         ", every: 10}\n"
         "checkpoint: {every: 20}\n";
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string() + ":" + std::to_string(fs::file_size(e.path())));
  return names;
}

using RestartAdvice = ScratchTest;

TEST_F(RestartAdvice, AnotherGridSaysToRunItWithoutRestart) {
  const fs::path out = dir_ / "out";
  ASSERT_EQ(heatsim_tests::run_heatsim("run -q " + write_file("a.yaml", rod(out, 21, "fp64"))).code,
            0);
  const std::string ckpt = (out / "checkpoint_00000020.h5").string();
  ASSERT_TRUE(fs::exists(ckpt));
  const auto before = listing(out);
  const auto r = heatsim_tests::run_heatsim("run " + write_file("b.yaml", rod(out, 41, "fp64")) +
                                            " --restart " + ckpt);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("does not match the case: grid.n: checkpoint 21, case 41"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("give the case its settings again to continue that run, or run the "
                          "changed case without --restart)"),
            std::string::npos)
      << r.output;
  // Another grid cannot start from the checkpoint's field: no initial file is proposed.
  EXPECT_EQ(r.output.find("initial: {type: file"), std::string::npos) << r.output;
  EXPECT_EQ(listing(out), before);
}

TEST_F(RestartAdvice, AnotherPrecisionSaysToStartFromTheField) {
  const fs::path out = dir_ / "out";
  ASSERT_EQ(heatsim_tests::run_heatsim("run -q " + write_file("a.yaml", rod(out, 21, "fp64"))).code,
            0);
  const std::string ckpt = (out / "checkpoint_00000020.h5").string();
  const auto before = listing(out);
  const auto r = heatsim_tests::run_heatsim("run " + write_file("b.yaml", rod(out, 21, "fp32")) +
                                            " --restart " + ckpt);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("precision: checkpoint fp64, case fp32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("or run the changed case without --restart, from this field with "
                          "initial: {type: file, path: " +
                          ckpt + "})"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(listing(out), before);

  // The advice works: the changed case from the checkpoint's field starts at t = 0 from it.
  const fs::path other = dir_ / "other";
  std::string text = rod(other, 21, "fp32");
  text.replace(text.find("initial: {type: constant, value: 0}"),
               std::string("initial: {type: constant, value: 0}").size(),
               "initial: {type: file, path: " + ckpt + "}");
  const auto s = heatsim_tests::run_heatsim("run -q " + write_file("c.yaml", text));
  EXPECT_EQ(s.code, 0) << s.output;
  EXPECT_TRUE(fs::exists(other / "field_00000040.h5"));
}

}  // namespace
