// The tuning cache file (io/tune_cache_file.hpp): where it lives, a write/read round trip,
// crash-safe writes, and files that are ignored with a warning instead of failing a run.
#include "io/tune_cache_file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/scratch_dir.hpp"

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class TuneCacheFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("tune"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

kernels::DeviceInfo h100() {
  kernels::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.major = 9;
  d.minor = 0;
  return d;
}

solver::TuneCache sample() {
  solver::TuneCache c;
  c.device = "NVIDIA \"quoted\" H100\\";
  c.compute_capability = "9.0";
  c.bandwidth = 2988.123456789e9;
  solver::TuneEntry e;
  e.shape = "Heat-2D";
  e.dims = 2;
  e.box = false;
  e.radius = 1;
  e.precision = kernels::Precision::fp64;
  e.backend = "register-tiling";
  e.fusion_depth = 3;
  e.gstencils = 461.23456789012345;
  e.size = 4096;
  e.date = "2026-11-23";
  c.entries.push_back(e);
  e.shape = "Box-3D27P";
  e.dims = 3;
  e.box = true;
  e.precision = kernels::Precision::fp32;
  e.backend = "convstencil";
  e.fusion_depth = 1;
  e.gstencils = 84.3;
  e.size = 256;
  c.entries.push_back(e);
  return c;
}

TEST_F(TuneCacheFile, PathFromTheEnvironment) {
  EXPECT_EQ(sanitised_device_name("NVIDIA H100 80GB HBM3"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(sanitised_device_name("  A100/PCIe (40 GB) "), "A100-PCIe-40-GB");
  EXPECT_EQ(sanitised_device_name("///"), "gpu");
  {
    ScopedEnv cache("HEATSIM_TUNE_CACHE", "/somewhere/tune.json");
    EXPECT_EQ(tune_cache_path(h100()), "/somewhere/tune.json");
  }
  ScopedEnv cache("HEATSIM_TUNE_CACHE", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(tune_cache_path(h100()), "/xdg/heatsim/tune-NVIDIA-H100-80GB-HBM3-sm90.json");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(tune_cache_path(h100()), "/home/u/.cache/heatsim/tune-NVIDIA-H100-80GB-HBM3-sm90.json");
  }
  ScopedEnv home("HOME", nullptr);
  EXPECT_THROW(tune_cache_path(h100()), std::runtime_error);
}

TEST_F(TuneCacheFile, WriteThenReadGivesTheSameCache) {
  const std::string path = (dir_ / "new" / "dir" / "tune.json").string();
  ScopedEnv env("HEATSIM_TUNE_CACHE", path.c_str());
  ASSERT_EQ(tune_cache_path(h100()), path);
  const solver::TuneCache c = sample();
  write_tune_cache(path, c);
  // Nothing but the cache is left in the directory (the temporary was renamed).
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(e.path().filename(), "tune.json");
    ++files;
  }
  EXPECT_EQ(files, 1);

  const LoadedTuneCache loaded = load_tune_cache(path);
  EXPECT_EQ(loaded.warning, "");
  ASSERT_TRUE(loaded.cache.has_value());
  const solver::TuneCache& r = *loaded.cache;
  EXPECT_EQ(r.device, c.device);
  EXPECT_EQ(r.compute_capability, "9.0");
  EXPECT_EQ(r.bandwidth, c.bandwidth);
  ASSERT_EQ(r.entries.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const solver::TuneEntry &a = c.entries[i], &b = r.entries[i];
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.box, a.box);
    EXPECT_EQ(b.radius, a.radius);
    EXPECT_EQ(b.precision, a.precision);
    EXPECT_EQ(b.backend, a.backend);
    EXPECT_EQ(b.fusion_depth, a.fusion_depth);
    EXPECT_EQ(b.gstencils, a.gstencils);  // shortest round-trip text: exact
    EXPECT_EQ(b.size, a.size);
    EXPECT_EQ(b.date, a.date);
  }

  // Writing again replaces the file whole.
  solver::TuneCache smaller = c;
  smaller.entries.pop_back();
  write_tune_cache(path, smaller);
  ASSERT_TRUE(load_tune_cache(path).cache.has_value());
  EXPECT_EQ(load_tune_cache(path).cache->entries.size(), 1u);
}

TEST_F(TuneCacheFile, MissingIsNormal) {
  const LoadedTuneCache loaded = load_tune_cache((dir_ / "none.json").string());
  EXPECT_FALSE(loaded.cache.has_value());
  EXPECT_EQ(loaded.warning, "");
}

TEST_F(TuneCacheFile, CorruptFilesAreIgnoredWithAWarningNamingThem) {
  const std::string good = tune_cache_json(sample());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"garbage", std::string("\x00\x01\xff{{{", 6)},
      {"empty", ""},
      {"list", "[1, 2, 3]"},
      {"no_format", "{\"version\": 1, \"entries\": []}"},
      {"bad_entry", [&] {
         std::string s = good;
         s.replace(s.find("\"dims\": 2"), 9, "\"dims\": \"two\"");
         return s;
       }()},
      {"bad_stencil", [&] {
         std::string s = good;
         s.replace(s.find("\"star\""), 6, "\"ring\"");
         return s;
       }()},
      {"negative_rate", [&] {
         std::string s = good;
         s.replace(s.find("\"gstencil_per_s\": 84.3"), 22, "\"gstencil_per_s\": -1");
         return s;
       }()},
  };
  for (const auto& [name, text] : cases) {
    const std::string path = (dir_ / (name + ".json")).string();
    std::ofstream(path, std::ios::binary) << text;
    const LoadedTuneCache loaded = load_tune_cache(path);
    EXPECT_FALSE(loaded.cache.has_value()) << name;
    EXPECT_NE(loaded.warning.find(path), std::string::npos) << name << ": " << loaded.warning;
    EXPECT_NE(loaded.warning.find("ignored"), std::string::npos) << name << ": " << loaded.warning;
  }
  // A directory where the file should be.
  fs::create_directories(dir_ / "dir.json");
  EXPECT_NE(load_tune_cache((dir_ / "dir.json").string()).warning.find("not a regular file"),
            std::string::npos);
}

TEST_F(TuneCacheFile, UnwritablePlaceThrowsNamingTheFile) {
  std::ofstream(dir_ / "file") << "x";
  const std::string path = (dir_ / "file" / "tune.json").string();  // parent is a file
  try {
    write_tune_cache(path, sample());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "file").string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heatsim::io
