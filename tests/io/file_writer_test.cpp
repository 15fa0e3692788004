// The writer thread: jobs run in the order they were queued, the run waits for a staging buffer
// only while every one is held by a job still being written, at most that many are allocated,
// and the first failure stops the writing (the jobs after it are dropped, their buffers freed)
// and is thrown to the run.
#include "io/file_writer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace heatsim::io {
namespace {

using namespace std::chrono_literals;

kernels::HostStaging plain(std::size_t values) {
  return kernels::allocate_host_staging(values, false);
}

// A gate the test opens to let a job finish.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
};

TEST(FileWriter, JobsRunInOrderFromTheirOwnStagedValues) {
  FileWriter writer(4, false, plain);
  std::mutex m;
  std::vector<std::int64_t> seen;
  for (std::int64_t step = 0; step < 6; ++step) {
    auto f = writer.stage(step, [&](void* data) {
      auto* out = static_cast<double*>(data);
      for (int i = 0; i < 4; ++i) out[i] = static_cast<double>(10 * step + i);
    });
    writer.submit(FileWriter::Kind::output, "f" + std::to_string(step),
                  [&, f](WriteProgress& p) {
                    std::this_thread::sleep_for(2ms);
                    std::lock_guard<std::mutex> lock(m);
                    EXPECT_EQ(f->values.doubles[3], static_cast<double>(10 * f->step + 3));
                    seen.push_back(f->step);
                    p.bytes = 100;
                    return 100.0;
                  });
  }
  writer.finish();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  const FileWriter::Stats s = writer.stats();
  EXPECT_EQ(s.bytes[0], 600.0);
  EXPECT_LE(s.buffers, 2);
  EXPECT_GT(s.seconds[0], 0.0);
}

// An fp32 run stages floats: half the bytes.
TEST(FileWriter, Fp32FieldsAreStagedAsFloats) {
  std::size_t bytes = 0;
  FileWriter writer(5, true, [&](std::size_t b) {
    bytes = b;
    return plain(b);
  });
  auto f = writer.stage(3, [](void* out) { static_cast<float*>(out)[4] = 2.5f; });
  EXPECT_EQ(bytes, 5 * sizeof(float));
  ASSERT_NE(f->values.floats, nullptr);
  EXPECT_EQ(f->values.doubles, nullptr);
  EXPECT_EQ(f->values.count, 5u);
  EXPECT_EQ(f->values.floats[4], 2.5f);
}

TEST(FileWriter, TheRunWaitsOnlyWhenBothBuffersAreBusy) {
  std::atomic<int> allocated{0};
  FileWriter writer(8, false, [&](std::size_t v) {
    ++allocated;
    return plain(v);
  });
  Gate gate;
  const auto fill = [](void* out) { static_cast<double*>(out)[0] = 1.0; };
  // Two files held back by the gate: each holds its buffer.
  for (int step = 0; step < 2; ++step)
    writer.submit(FileWriter::Kind::output, "held", [f = writer.stage(step, fill), &gate](WriteProgress&) {
      gate.opened.wait();
      return 1.0;
    });
  EXPECT_EQ(allocated.load(), 2);
  // A third field finds no free buffer until the first file is done.
  auto third = std::async(std::launch::async, [&] { return writer.stage(2, fill); });
  EXPECT_EQ(third.wait_for(100ms), std::future_status::timeout);
  gate.open.set_value();
  ASSERT_EQ(third.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(third.get()->step, 2);
  writer.finish();
  EXPECT_EQ(allocated.load(), 2) << "no more than two staging buffers";
  EXPECT_GT(writer.stats().waiting_seconds, 0.05);
}

TEST(FileWriter, AFailedJobStopsTheWritingAndIsThrownToTheRun) {
  FileWriter writer(8, false, plain);
  std::atomic<int> written{0};
  const auto fill = [](void* out) { static_cast<double*>(out)[0] = 1.0; };
  Gate gate;
  writer.submit(FileWriter::Kind::checkpoint, "a", [&, f = writer.stage(0, fill)](WriteProgress&) {
    gate.opened.wait();
    throw std::runtime_error("cannot write a: No space left on device");
    return 0.0;
  });
  writer.submit(FileWriter::Kind::output, "b", [&, f = writer.stage(1, fill)](WriteProgress&) {
    ++written;
    return 1.0;
  });
  gate.open.set_value();
  try {
    writer.finish();
    FAIL() << "finish() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot write a: No space left on device");
  }
  EXPECT_EQ(written.load(), 0) << "the job after the failed one was not dropped";
  // The run learns of it at its next file too, and every buffer came back.
  EXPECT_THROW(writer.stage(2, fill), std::runtime_error);
  EXPECT_THROW(writer.submit(FileWriter::Kind::output, "c", [](WriteProgress&) { return 0.0; }),
               std::runtime_error);
}

TEST(FileWriter, AStagedFieldIsSharedUntilItsLastJobIsDone) {
  FileWriter writer(4, false, plain);
  std::atomic<int> fills{0};
  auto f = writer.stage(7, [&](void* out) {
    ++fills;
    static_cast<double*>(out)[0] = 7.0;
  });
  std::weak_ptr<const StagedField> cache = f;
  for (auto kind : {FileWriter::Kind::output, FileWriter::Kind::checkpoint})
    writer.submit(kind, "x", [f](WriteProgress&) {
      std::this_thread::sleep_for(5ms);
      return f->values.doubles[0];
    });
  f.reset();
  writer.finish();
  EXPECT_TRUE(cache.expired()) << "the buffer went back once both jobs were done";
  EXPECT_EQ(fills.load(), 1);
  const FileWriter::Stats s = writer.stats();
  EXPECT_EQ(s.bytes[0], 7.0);
  EXPECT_EQ(s.bytes[1], 7.0);
}

TEST(FileWriter, WaitsAreReportedWithWhatTheWriterDoes) {
  std::mutex m;
  std::vector<WriterActivity> reports;
  FileWriter writer(4, false, plain, 2, 0.02, [&](const WriterActivity& a) {
    std::lock_guard<std::mutex> lock(m);
    reports.push_back(a);
  });
  writer.submit(FileWriter::Kind::output, "/dir/big.h5", [](WriteProgress& p) {
    p.bytes = 1000;
    p.written = 500;
    std::this_thread::sleep_for(150ms);
    return 1000.0;
  });
  writer.finish();
  std::lock_guard<std::mutex> lock(m);
  ASSERT_FALSE(reports.empty());
  EXPECT_TRUE(reports.back().busy);
  EXPECT_EQ(reports.back().file, "/dir/big.h5");
  EXPECT_EQ(reports.back().bytes, 1000.0);
  EXPECT_EQ(reports.back().bytes_done, 500.0);
}

}  // namespace
}  // namespace heatsim::io
