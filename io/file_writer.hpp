// A run's files written on a thread of their own while the run steps on (DESIGN.md "Output,
// the whole run"). A field is staged once in a host buffer (the backend's staging: pinned on a
// GPU) and written from there; there are at most `buffers` of them, so memory stays bounded
// (validate counts them) and the stepper waits only while every buffer still holds a field
// being written. Jobs run one at a time in the order they were submitted, so files and the
// XDMF index appear in the order a synchronous run writes them, each crash-safe as before
// (temporary + rename). The first job that fails stops the writing: the jobs after it are
// dropped (no file after a failed one), and its error is thrown to the run at its next
// stage(), submit() or finish().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "field_file.hpp"
#include "kernels/host_staging.hpp"

namespace heatsim::io {

// A field in a staging buffer: the values at `step` (doubles, or an fp32 run's floats). The
// buffer returns to the writer when the last holder (the run's cache, the jobs writing it)
// lets go.
struct StagedField {
  std::int64_t step = 0;
  FieldValues values;
};

// What the writer is doing now, for the progress line.
struct WriterActivity {
  bool busy = false;
  std::string file;         // the file being written
  double bytes = 0.0;       // its size, once the image is built (0 before)
  double bytes_done = 0.0;  // of it, on the disk so far
  double seconds = 0.0;     // since the job began
  int queued = 0;           // jobs waiting behind it
};

class FileWriter {
 public:
  enum class Kind { output, checkpoint };
  // Allocates one staging buffer of `bytes` (never zero-filled).
  using Allocate = std::function<kernels::HostStaging(std::size_t bytes)>;
  // Called every `wait_report_seconds` while the run waits for the writer, with what it does.
  using OnWait = std::function<void(const WriterActivity&)>;

  // `threads`: the OpenMP threads the writer builds its files on (0: as many as the run has).
  // A run stepping on the CPU gives it 1, so that the writer does not take the cores from the
  // stepping; a run on a GPU leaves it every core.
  // Staging buffers hold `values` values, floats when `floats` is set (an fp32 run's field),
  // else doubles.
  FileWriter(std::size_t values, bool floats, Allocate allocate, int buffers = 2,
             double wait_report_seconds = 2.0, OnWait on_wait = {}, int threads = 0);
  // Writes what is queued (unless a job failed), then ends the thread. Errors are not
  // thrown here: finish() reports them.
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // The field at `step` in a staging buffer: waits for a free one (allocated on first use),
  // then `fill` writes its values (floats or doubles, as constructed) on the calling thread
  // (the backend's download). Throws the error of a failed job.
  std::shared_ptr<const StagedField> stage(std::int64_t step,
                                           const std::function<void(void*)>& fill);
  // Queues `write` (on the writer thread, after every job before it). It returns the bytes it
  // wrote and reports its progress through the WriteProgress it is given. Throws the error of
  // a failed job.
  void submit(Kind kind, std::string file, std::function<double(WriteProgress&)> write);
  // Waits until every queued job has run; throws the first error.
  void finish();

  WriterActivity activity() const;

  struct Stats {
    double seconds[2] = {0.0, 0.0};  // writing, per Kind, on the writer thread
    double bytes[2] = {0.0, 0.0};
    double staging_seconds = 0.0;  // filling staging buffers, on the run's thread
    double waiting_seconds = 0.0;  // the run's thread waiting for the writer
    int buffers = 0;               // allocated so far
  };
  Stats stats() const;

 private:
  struct Job {
    Kind kind;
    std::string file;
    std::function<double(WriteProgress&)> write;
  };
  void run();
  void rethrow_error_locked() const;
  // Waits on `ready` (under lock), counting the wait and reporting it every
  // wait_report_seconds_.
  template <class Ready>
  void wait_for_writer(std::unique_lock<std::mutex>& lock, Ready ready);
  WriterActivity activity_locked() const;

  const std::size_t values_;
  const bool floats_;
  Allocate allocate_;
  const int max_buffers_;
  const double wait_report_seconds_;
  OnWait on_wait_;
  const int threads_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<kernels::HostStaging> buffers_;
  std::vector<bool> buffer_busy_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::string current_file_;
  std::chrono::steady_clock::time_point current_start_;
  WriteProgress progress_;
  Stats stats_;
  std::thread thread_;
};

}  // namespace heatsim::io
