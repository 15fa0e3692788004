// The executable's idle OpenMP threads sleep unless the user says otherwise (app/thread_waits.cpp):
// the backend line says how they wait, GCC's runtime reports the spin count it took
// (OMP_DISPLAY_ENV=verbose; 0 when waits sleep at once), and a user's OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is kept.
#include <gtest/gtest.h>

#include <string>

#include "tests/heatsim_process.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using Result = heatsim_tests::ProcessResult;
using ThreadWaits = heatsim_tests::ScratchTest;

// The value of the runtime's last "GOMP_SPINCOUNT = '...'" line in `output` (a process that
// runs itself again prints its settings twice); empty where the runtime printed none.
std::string last_spin_count(const std::string& output) {
  const std::string key = "GOMP_SPINCOUNT = '";
  const std::size_t at = output.rfind(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return output.substr(begin, output.find('\'', begin) - begin);
}

class ThreadWaitsRun : public ThreadWaits {
 protected:
  Result run(const std::string& environment) {
    const std::string c = write_file("c.yaml",
                                     "grid: {dims: 2, n: [16, 16], length: [1, 1]}\n"
                                     "physics: {alpha: 1.0}\n"
                                     "boundary: {all: {type: dirichlet, value: 0}}\n"
                                     "initial: {type: constant, value: 1}\n"
                                     "time: {dt: auto, steps: 2}\n"
                                     "output: {directory: " +
                                         (dir_ / "out").string() + "}\n");
    // The variables that choose a policy are removed first: only `environment` sets one.
    return heatsim_tests::run_heatsim_with(
        "-u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose " + environment,
        "run --backend cpu --overwrite " + c);
  }
};

TEST_F(ThreadWaitsRun, TwoThreadsSleepWhenNothingIsSet) {
  const Result r = run("OMP_NUM_THREADS=2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("2 threads (OMP_NUM_THREADS), waiting threads sleep "
                          "(OMP_WAIT_POLICY=passive)"),
            std::string::npos)
      << r.output;
  const std::string spins = last_spin_count(r.output);
  if (!spins.empty()) {
    EXPECT_EQ(spins, "0") << r.output;
  }
}

TEST_F(ThreadWaitsRun, TheUsersWaitPolicyIsKept) {
  const Result r = run("OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("2 threads (OMP_NUM_THREADS), waiting threads spin"), std::string::npos)
      << r.output;
  const std::string spins = last_spin_count(r.output);
  if (!spins.empty()) {
    EXPECT_NE(spins, "0") << r.output;
  }
}

TEST_F(ThreadWaitsRun, TheUsersSpinCountIsKept) {
  const Result r = run("OMP_NUM_THREADS=2 GOMP_SPINCOUNT=1234");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("waiting threads spin"), std::string::npos) << r.output;
  const std::string spins = last_spin_count(r.output);
  if (!spins.empty()) {
    EXPECT_EQ(spins, "1234") << r.output;
  }
}

// One thread waits for no other: the process is not run again, the line names no policy.
TEST_F(ThreadWaitsRun, OneThreadIsLeftAsItIs) {
  const Result r = run("OMP_NUM_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("1 thread (OMP_NUM_THREADS)\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("OMP_WAIT_POLICY=passive"), std::string::npos) << r.output;
  // The runtime's settings printed once: by the one process image.
  const std::string key = "GOMP_SPINCOUNT = '";
  const std::size_t first = r.output.find(key);
  if (first != std::string::npos) {
    EXPECT_EQ(r.output.find(key, first + 1), std::string::npos) << r.output;
  }
}

}  // namespace
