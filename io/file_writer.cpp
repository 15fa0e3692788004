#include "file_writer.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

namespace heatsim::io {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

FileWriter::FileWriter(std::size_t values, bool floats, Allocate allocate, int buffers,
                       double wait_report_seconds, OnWait on_wait, int threads)
    : values_(values),
      floats_(floats),
      allocate_(std::move(allocate)),
      max_buffers_(std::max(1, buffers)),
      wait_report_seconds_(wait_report_seconds > 0 ? wait_report_seconds : 2.0),
      on_wait_(std::move(on_wait)),
      threads_(threads) {
  thread_ = std::thread([this] { run(); });
}

FileWriter::~FileWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void FileWriter::rethrow_error_locked() const {
  if (error_) std::rethrow_exception(error_);
}

WriterActivity FileWriter::activity_locked() const {
  WriterActivity a;
  a.busy = busy_;
  a.queued = static_cast<int>(queue_.size());
  if (busy_) {
    a.file = current_file_;
    a.bytes = static_cast<double>(progress_.bytes.load());
    a.bytes_done = static_cast<double>(progress_.written.load());
    a.seconds = seconds_since(current_start_);
  }
  return a;
}

WriterActivity FileWriter::activity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return activity_locked();
}

FileWriter::Stats FileWriter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

template <class Ready>
void FileWriter::wait_for_writer(std::unique_lock<std::mutex>& lock, Ready ready) {
  if (ready()) return;
  const Clock::time_point t0 = Clock::now();
  const auto period = std::chrono::duration<double>(wait_report_seconds_);
  while (!changed_.wait_for(lock, period, ready)) {
    if (on_wait_) {
      const WriterActivity a = activity_locked();
      lock.unlock();
      on_wait_(a);
      lock.lock();
    }
  }
  stats_.waiting_seconds += seconds_since(t0);
}

std::shared_ptr<const StagedField> FileWriter::stage(std::int64_t step,
                                                     const std::function<void(void*)>& fill) {
  std::size_t slot = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    rethrow_error_locked();
    const auto free_slot = [&] {
      for (std::size_t i = 0; i < buffer_busy_.size(); ++i)
        if (!buffer_busy_[i]) return static_cast<int>(i);
      return -1;
    };
    if (free_slot() < 0 && static_cast<int>(buffers_.size()) < max_buffers_) {
      // A new buffer: allocated outside the lock (pinned memory takes a while), its slot
      // reserved first.
      buffers_.emplace_back();
      buffer_busy_.push_back(true);
      slot = buffers_.size() - 1;
      lock.unlock();
      kernels::HostStaging buffer = allocate_(values_ * (floats_ ? sizeof(float) : sizeof(double)));
      lock.lock();
      buffers_[slot] = std::move(buffer);
      ++stats_.buffers;
    } else {
      wait_for_writer(lock, [&] { return free_slot() >= 0 || error_; });
      rethrow_error_locked();
      slot = static_cast<std::size_t>(free_slot());
      buffer_busy_[slot] = true;
    }
  }
  void* data = buffers_[slot].data();
  // The slot is free again when the last holder lets go, on whichever thread that is.
  const auto release = [this, slot](StagedField* f) {
    delete f;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      buffer_busy_[slot] = false;
    }
    changed_.notify_all();
  };
  std::shared_ptr<const StagedField> staged;
  try {
    const Clock::time_point t0 = Clock::now();
    fill(data);
    const double took = seconds_since(t0);
    FieldValues values;
    values.count = values_;
    if (floats_)
      values.floats = static_cast<const float*>(data);
    else
      values.doubles = static_cast<const double*>(data);
    staged = std::shared_ptr<const StagedField>(new StagedField{step, values}, release);
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.staging_seconds += took;
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    buffer_busy_[slot] = false;
    throw;
  }
  return staged;
}

void FileWriter::submit(Kind kind, std::string file, std::function<double(WriteProgress&)> write) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rethrow_error_locked();
    queue_.push_back(Job{kind, std::move(file), std::move(write)});
  }
  changed_.notify_all();
}

void FileWriter::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  wait_for_writer(lock, [&] { return (queue_.empty() && !busy_) || error_; });
  rethrow_error_locked();
}

void FileWriter::run() {
#ifdef _OPENMP
  // The thread count is this thread's own setting: the run's thread keeps its own.
  if (threads_ > 0) omp_set_num_threads(threads_);
#endif
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    if (error_) {
      // A job after a failed one is not written: its staged field goes back now.
      lock.unlock();
      job = Job{};
      lock.lock();
      changed_.notify_all();
      continue;
    }
    busy_ = true;
    current_file_ = job.file;
    current_start_ = Clock::now();
    progress_.bytes = 0;
    progress_.written = 0;
    progress_.build_seconds = progress_.write_seconds = progress_.sync_seconds = 0.0;
    lock.unlock();
    double bytes = 0.0;
    std::exception_ptr failure;
    try {
      bytes = job.write(progress_);
    } catch (...) {
      failure = std::current_exception();
    }
    const double took = seconds_since(current_start_);
    if (!failure)
      spdlog::debug("wrote {}: {:.3f} GB in {:.3f} s (built in memory {:.3f} s, write(2) {:.3f} s, "
                    "fsync {:.3f} s)",
                    job.file, bytes / 1e9, took, progress_.build_seconds, progress_.write_seconds,
                    progress_.sync_seconds);
    const int kind = job.kind == Kind::checkpoint ? 1 : 0;
    job = Job{};  // lets go of the staged field before the writer says it is idle
    lock.lock();
    busy_ = false;
    stats_.seconds[kind] += took;
    stats_.bytes[kind] += bytes;
    if (failure && !error_) error_ = failure;
    changed_.notify_all();
  }
}

}  // namespace heatsim::io
