// The run API (run/session.hpp) as a library user drives it: cases from text and from memory,
// stepping in pieces, a run that writes nothing, and refusals as exceptions.
#include "run/session.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/case_loader.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using heatsim::run::CaseSource;
using heatsim::run::Session;
using heatsim::run::SessionOptions;

const char* kCase = R"(grid: {dims: 2, n: [33, 17], length: [1.0, 0.5]}
physics: {alpha: 1.0}
boundary:
  all: {type: dirichlet, value: 0}
  x+: {type: neumann, flux: 0.5}
initial: {type: gaussian, center: [0.5, 0.25], width: 0.1, amplitude: 1.0}
time: {dt: auto, steps: 200}
probes: {every: 25, points: {middle: [0.5, 0.25]}}
output: {directory: unused, every: 50}
)";

SessionOptions in_memory(CaseSource source) {
  SessionOptions o;
  o.source = std::move(source);
  o.overrides.backend = "cpu";
  o.write_files = false;
  o.keep_rows = true;
  return o;
}

std::vector<double> field(const Session& s) {
  std::vector<double> u(static_cast<std::size_t>(s.shape()[0] * s.shape()[1]));
  s.field(u.data());
  return u;
}

TEST(Session, SteppingInPiecesEqualsOneRunAndAnInMemoryCaseEqualsItsText) {
  Session whole(in_memory(CaseSource::yaml(kCase)));
  whole.run();
  ASSERT_TRUE(whole.finished());
  EXPECT_EQ(whole.step(), 200);
  EXPECT_FALSE(whole.summary().lines.empty());

  const heatsim::io::LoadResult loaded = heatsim::io::load_case_text(kCase);
  ASSERT_TRUE(loaded.ok());
  Session pieces(in_memory(CaseSource::in_memory(*loaded.value)));
  EXPECT_EQ((pieces.shape()), (std::vector<std::int64_t>{17, 33}));
  pieces.advance(13);
  pieces.advance_to_step(100);
  EXPECT_FALSE(pieces.finished());
  pieces.advance_to_time(pieces.plan().dt * 200);
  ASSERT_TRUE(pieces.finished());
  EXPECT_EQ(field(pieces), field(whole));  // bit for bit
  // Probe rows at 0, every 25 steps and the last, as probes.csv holds them.
  EXPECT_EQ(pieces.probe_rows().steps,
            (std::vector<std::int64_t>{0, 25, 50, 75, 100, 125, 150, 175, 200}));
  EXPECT_EQ(pieces.probe_rows().values, whole.probe_rows().values);
  EXPECT_THROW(pieces.advance(-1), std::invalid_argument);
}

TEST(Session, APastStepIsRefusedAndWritingNothingLeavesNoFile) {
  const auto dir = heatsim_tests::make_scratch_dir("session");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  {
    Session s(in_memory(CaseSource::yaml(kCase)));
    EXPECT_THROW(s.advance_to_step(201), std::invalid_argument);
    s.run();
  }
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// Before the end the field may be replaced; after it (the end's files and summary made from
// the field then) set_field is refused and the field stays the end's.
TEST(Session, SetFieldAfterTheEndIsRefused) {
  Session s(in_memory(CaseSource::yaml(kCase)));
  const std::vector<double> zeros(field(s).size(), 0.0);
  s.advance(10);
  s.set_field(zeros);
  EXPECT_EQ(field(s), zeros);
  s.run();
  const std::vector<double> end = field(s);
  try {
    s.set_field(std::vector<double>(end.size(), 1.0));
    FAIL() << "set_field after the end was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the run has ended, at step 200: its field can no longer be set");
  }
  EXPECT_EQ(field(s), end);
}

TEST(Session, AnUnstableInMemoryCaseIsRefusedWithItsKeyPath) {
  heatsim::io::LoadResult loaded = heatsim::io::load_case_text(kCase);
  ASSERT_TRUE(loaded.ok());
  heatsim::solver::Case c = *loaded.value;
  c.time.dt = 1.0;  // far past the explicit limit; a case made in memory is checked here
  try {
    Session s(in_memory(CaseSource::in_memory(c)));
    FAIL() << "an unstable case ran";
  } catch (const heatsim::run::InvalidCase& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0].path.rfind("time.dt", 0), 0u) << e.what();
    EXPECT_EQ(e.failure(), heatsim::run::Failure::invalid);
  }
}

TEST(Session, AnUnknownBackendIsARefusal) {
  SessionOptions o = in_memory(CaseSource::yaml(kCase));
  o.overrides.backend = "no-such-backend";
  try {
    Session s(std::move(o));
    FAIL() << "an unknown backend ran";
  } catch (const heatsim::run::RunError& e) {
    EXPECT_EQ(e.failure(), heatsim::run::Failure::invalid);
    EXPECT_EQ(heatsim::run::exit_code(e.failure()), 2);
    EXPECT_NE(std::string(e.what()).find("no-such-backend"), std::string::npos) << e.what();
  }
}

}  // namespace
