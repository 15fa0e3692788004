// Decomposed runs under mpirun against one process's: starting them with a bound on their time,
// and comparing every field file, its attributes and probes.csv bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "io/field_file.hpp"
#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace heatsim_tests::decomposed {

namespace fs = std::filesystem;
namespace io = heatsim::io;

// A case of the decomposed suites: its name and its YAML without the output section.
struct Case {
  const char* name;
  std::string yaml;
};

// The decomposed suites' fixture: a scratch directory of the test's own (removed after it),
// and cases written into it. The parameter, where a suite takes one, is the rank count.
class DecomposedFixture : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { dir_ = heatsim_tests::make_scratch_dir("mpi"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_case(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
};

// An mpirun's session directory of its own (Open MPI's orte_tmpdir_base), removed with this:
// two mpiruns started at once (ctest -j) raced to create the shared /tmp/ompi.HOST.UID and one
// failed in orte_init ("mkdir ... File exists"). `prefix()`: the variable to put before mpirun.
class MpiSessionDir {
 public:
  MpiSessionDir() {
    char name[] = "/tmp/heatsim_ompi.XXXXXX";
    if (mkdtemp(name)) path_ = name;
  }
  ~MpiSessionDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  MpiSessionDir(const MpiSessionDir&) = delete;
  MpiSessionDir& operator=(const MpiSessionDir&) = delete;
  std::string prefix() const {
    return path_.empty() ? std::string() : "env OMPI_MCA_orte_tmpdir_base=" + path_ + " ";
  }

 private:
  std::string path_;
};

// Whether the launcher itself crashed: a signal's backtrace with mpiexec's own frames (Open
// MPI 4.1's launcher has segfaulted in its PMIx server's finalize after a rank's MPI_Abort,
// exit code 139 where the ranks had asked for 2). A rank's crash shows the rank's frames and
// mpiexec's note that a process exited on a signal, not this.
inline bool launcher_crashed(const std::string& output) {
  return output.find("Process received signal") != std::string::npos &&
         output.find("/mpiexec(") != std::string::npos;
}

// Every rank run is bounded, so a hang fails the test instead of blocking the suite.
// `variable`: NAME=VALUE set for every rank, or empty. A run whose launcher crashed (not the
// ranks: launcher_crashed) is made once more.
inline heatsim_tests::ProcessResult run_ranks(int ranks, const std::string& args,
                                              const std::string& variable = {}) {
  heatsim_tests::ProcessResult r;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const MpiSessionDir session;
    const std::string name = variable.substr(0, variable.find('='));
    const std::string cmd =
        session.prefix() + (variable.empty() ? std::string() : "env " + variable + " ") +
        "timeout 120 " + HEATSIM_MPIEXEC + (variable.empty() ? std::string() : " -x " + name) +
        " --oversubscribe --allow-run-as-root -np " + std::to_string(ranks) + " " +
        HEATSIM_BINARY + " " + args + " 2>&1";
    r = heatsim_tests::ProcessResult{};
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return r;
    char buf[4096];
    while (fgets(buf, sizeof buf, pipe)) r.output += buf;
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (!launcher_crashed(r.output)) break;
  }
  return r;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The field outputs and checkpoints of a run directory, by name.
inline std::vector<std::string> h5_files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".h5" && name != "materials.h5") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Every attribute the file carries (collective writes produce today's files).
inline void expect_same_meta(const io::FieldFile& a, const io::FieldFile& b,
                             const std::string& what) {
  EXPECT_EQ(a.kind, b.kind) << what;
  EXPECT_EQ(a.checksummed, b.checksummed) << what;
  EXPECT_EQ(a.meta.step, b.meta.step) << what;
  EXPECT_EQ(a.meta.time, b.meta.time) << what;
  EXPECT_EQ(a.meta.dt, b.meta.dt) << what;
  EXPECT_EQ(a.meta.alpha, b.meta.alpha) << what;
  EXPECT_EQ(a.meta.dims, b.meta.dims) << what;
  EXPECT_EQ(a.meta.n, b.meta.n) << what;
  EXPECT_EQ(a.meta.spacing, b.meta.spacing) << what;
  EXPECT_EQ(a.meta.origin, b.meta.origin) << what;
  EXPECT_EQ(a.meta.scheme, b.meta.scheme) << what;
  EXPECT_EQ(a.meta.backend, b.meta.backend) << what;
  EXPECT_EQ(a.meta.precision, b.meta.precision) << what;
  EXPECT_EQ(a.meta.version, b.meta.version) << what;
  EXPECT_EQ(a.meta.case_yaml, b.meta.case_yaml) << what;
  EXPECT_EQ(a.meta.fusion, b.meta.fusion) << what;
}

// Where two fields of the same grid differ: how many nodes, the largest difference and the
// first node that differs ("3 nodes, at most 1.1e-16; first at (12, 3, 0)").
inline std::string describe_difference(const io::FieldFile& a, const std::vector<double>& b) {
  if (a.field.size() != b.size()) return "sizes " + std::to_string(a.field.size()) + " and " +
                                         std::to_string(b.size());
  std::int64_t count = 0, first = -1;
  double largest = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (std::memcmp(&a.field[i], &b[i], sizeof(double)) == 0) continue;
    ++count;
    if (first < 0) first = static_cast<std::int64_t>(i);
    largest = std::max(largest, std::abs(a.field[i] - b[i]));
  }
  const auto& n = a.meta.n;
  std::ostringstream s;
  s << count << " nodes, at most " << largest;
  if (first >= 0)
    s << "; first at (" << first % n[0] << ", " << first / n[0] % n[1] << ", "
      << first / (n[0] * n[1]) << ")";
  return s.str();
}

// Every .h5 of `got` equals the one of the same name in `want`, and so does probes.csv.
inline void expect_same_run(const fs::path& want, const fs::path& got, const std::string& what) {
  const std::vector<std::string> names = h5_files(want);
  ASSERT_FALSE(names.empty()) << what;
  EXPECT_EQ(names, h5_files(got)) << what;
  for (const std::string& name : names) {
    const io::FieldFile a = io::read_field_file((want / name).string());
    const io::FieldFile b = io::read_field_file((got / name).string());
    EXPECT_TRUE(same_bits(a.field, b.field))
        << what << ": " << name << " differs: " << describe_difference(a, b.field);
    expect_same_meta(a, b, what + ": " + name);
  }
  if (fs::exists(want / "probes.csv")) {
    EXPECT_EQ(read_text(want / "probes.csv"), read_text(got / "probes.csv")) << what;
  }
}

// A steady copper ball in epoxy on `n` nodes ("[23, 21, 19]"), convective faces and one
// Dirichlet face: the decomposed solves' 3D case.
inline std::string steady_ball_yaml(const std::string& n) {
  return "grid: {dims: 3, n: " + n + ", length: [0.05, 0.05, 0.05]}\n"
         "materials:\n  epoxy: {conductivity: 0.2, density: 1200, specific_heat: 1100}\n"
         "  copper: {conductivity: 390, density: 8960, specific_heat: 385}\n"
         "regions:\n  - {material: epoxy}\n"
         "  - {material: copper, ball: {center: [0.025, 0.025, 0.025], radius: 0.015}}\n"
         "sources:\n  - {ball: {center: [0.025, 0.025, 0.025], radius: 0.015}, power: 5.0}\n"
         "boundary:\n  all: {type: convective, h: 25, ambient: 300}\n"
         "  z-: {type: dirichlet, value: 310}\n"
         "initial: {type: constant, value: 300}\ntime: {method: steady}\n";
}

// The multigrid iterations of every solve the log reports ("converged in 7 iterations"), in
// order.
inline std::vector<int> iterations(const std::string& log) {
  std::vector<int> counts;
  static const std::regex pattern("converged in ([0-9]+) iteration");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern);
       it != std::sregex_iterator(); ++it)
    counts.push_back(std::stoi((*it)[1]));
  return counts;
}

}  // namespace heatsim_tests::decomposed
