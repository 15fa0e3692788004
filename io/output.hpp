// The run's output directory: field files every N steps and at the end, an XDMF index kept
// current during the run, and checkpoints. Directory rules are checked before the run starts.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "field_file.hpp"
#include "solver/case.hpp"
#include "xdmf.hpp"

namespace heatsim::io {

// Written into the output directory by a run that stopped with an error after it had begun
// writing there (exit code 1 or 3): the exit code and the message. It marks the directory's
// run files as a failed run's, which the next run into the directory replaces without
// --overwrite (a restart from one of its checkpoints continues it and removes the mark).
inline constexpr const char* kFailedRunFile = "failed_run.txt";
// failed_run.txt's last line: this, then the failed run's lineage (run_lineage).
inline constexpr const char* kFailedLineagePrefix = "run lineage: ";

// The files a run leaves in its output directory: <name>_<step>.h5, <name>.xmf,
// checkpoint_<step>.h5, and temporaries of these left by a crash. The run-wide files
// materials.h5, probes.csv and heat_flows.csv count as the index does (kind index);
// failed_run.txt is kind failed.
struct RunFile {
  std::string path;
  enum class Kind { field, index, checkpoint, temporary, failed } kind;
  std::int64_t step = -1;  // field and checkpoint files
};
std::vector<RunFile> find_run_files(const solver::Case& c);

// The lock a live run holds on its output directory, <dir>/.heatsim.lock: an advisory lock
// (fcntl, on the open file) that the kernel drops when the run ends in any way (a crash,
// SIGKILL), so a lock file left behind blocks nothing. The file holds the holder's pid and
// command line, for the message that refuses another run. It is not a run file: no run lists,
// counts or removes it. Move-only; releasing removes the file.
inline constexpr const char* kLockFile = ".heatsim.lock";
class DirectoryLock {
 public:
  DirectoryLock() = default;
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock() { release(); }
  bool held() const { return fd_ >= 0; }
  void release();

 private:
  friend DirectoryLock lock_output_directory(const std::string& dir, const std::string& case_path);
  int fd_ = -1;
  std::string path_;
};
// Takes `dir`'s lock (the directory must exist), recording `case_path` (the case file, where
// there is one) beside the pid and command line. Throws std::runtime_error, naming the holder
// (its pid and command line) and what to do, where a live run holds it, this process's other
// runs included.
DirectoryLock lock_output_directory(const std::string& dir, const std::string& case_path = "");
// Throws as lock_output_directory does where a live run holds `dir`'s lock; changes nothing.
void check_output_directory_unlocked(const std::string& dir);

// How a run uses its output directory. `restarting`: it continues, in this directory, the run
// whose files are there (the directory holds the checkpoint it restarts from); a restart into
// another directory is a new run there as far as the directory is concerned.
struct DirectoryUse {
  bool overwrite = false;
  bool restarting = false;
  std::int64_t restart_step = -1;
  // When restarting: the checkpoint's path and its run's lineage (run_lineage). The
  // directory's field files and checkpoints must be that run's: a checkpoint copied into
  // another run's directory does not make that run's files its own.
  std::string checkpoint;
  std::string lineage;
  // The restart begins a branch of the checkpoint's run at restart_step (the case changed):
  // that run's outputs after the step, here, are the ones the branch replaces. Without it,
  // another run's files past the step its line left them are never removed.
  bool branching = false;
  // The digest of a failed run whose mark the directory holds (its files are removed with it);
  // set by the directory's plan, not by callers.
  std::string failed_run;
};

// Throws std::runtime_error, with advice, where the directory cannot be made or written,
// judged without writing: a path that is not a directory, a parent that is a file, a read-only
// file system, one that keeps no files (/proc, /sys), no permission. Changes nothing. A
// restart's directory is the checkpoint's, whatever output.directory says: its advice is -o.
void check_output_directory_usable(const std::string& dir, bool restarting = false);
// Throws std::runtime_error, with advice, where output.name makes file names longer than a
// file system takes (kNameMax).
void check_output_name(const solver::Case& c);
// The longest file name (one path part) the run makes or writes: 255 bytes on Linux's file systems.
inline constexpr std::size_t kNameMax = 255;

// Throws std::runtime_error with what prepare_output_directory would refuse (what
// check_output_directory_usable refuses; a directory a live run holds (DirectoryLock); another
// run's files without --overwrite), changing
// nothing: the run checks this before its setup's long work and before it writes anything.
void check_output_directory(const solver::Case& c, const DirectoryUse& use);

// The run files prepare_output_directory removes for `use` before the run writes (an
// earlier run's with --overwrite or after a failed run, a restart's later files, temporaries);
// empty where it would refuse the directory or there is nothing to remove. Changes nothing.
std::vector<RunFile> files_removed_first(const solver::Case& c, const DirectoryUse& use);

// Makes the output directory ready for the first file. Throws std::runtime_error with a clear
// message when it cannot be created or written, or when it already holds a run's files and
// neither `overwrite` nor `restarting` is set, unless they are a failed run's (failed_run.txt
// among them): those are replaced; or when restarting and some field file or checkpoint there
// is another run's (its lineage is not `use.lineage`), with or without `overwrite`; or when
// restarting without `overwrite` and the run there went on past `restart_step` (it finished
// later, as its index records, or wrote a later checkpoint; a failed run's files excepted):
// its files after the step are its results, not a killed run's partial outputs. With
// `overwrite` the old run's files are removed. When restarting, temporaries and the failed mark are
// removed, and when `restart_step` >= 0 so are field files and checkpoints after that step (they
// belong to the run being replaced); everything up to it is kept. Before it removes or writes
// anything it takes the directory's lock (refused, with or without `overwrite`, where a live run
// holds it) and returns it: the run holds it while it writes there.
DirectoryLock prepare_output_directory(const solver::Case& c, const DirectoryUse& use);
DirectoryLock prepare_output_directory(const solver::Case& c, bool overwrite, bool restarting,
                                       std::int64_t restart_step = -1);

// Writes <dir>/failed_run.txt (exit code, message) for a run that stopped with an error after
// writing into its directory. Never throws. On a full disk it writes into the reserve
// reserve_failed_run_mark set aside (the message cut to its size) and renames it; without
// one the file may stay empty there, and its name alone is the mark.
void mark_failed_run(const solver::Case& c, int exit_code, const std::string& message);

// Sets aside kFailedRunReserve bytes for failed_run.txt, written under a temporary name
// (failed_run.txt.tmp, a crash's leftover to the directory rules), when a run begins writing
// into its directory, so that the mark gets its message even once the disk is full. Never
// throws (without a reserve the mark is written as it can be).
// release_failed_run_mark removes the reserve of a run that did not fail.
inline constexpr std::size_t kFailedRunReserve = 4096;
void reserve_failed_run_mark(const solver::Case& c);
void release_failed_run_mark(const solver::Case& c);

// <dir>/<name>_<step, 8 digits>.h5
std::string output_path(const solver::Case& c, std::int64_t step);

// The fields the output files hold besides u (output.fields): heat_flux (3 components), then
// conductivity, as the case asks.
std::vector<XdmfField> output_fields(const solver::Case& c);

// An output file's meta: make_meta's, stored in output.precision where the case gives one
// (fp32 for an fp64 run) and compressed at output.compression.
FieldMeta output_meta(const solver::Case& c, double dt, const std::string& backend,
                      std::int64_t step, double time);

class OutputSeries {
 public:
  // Adopts field files already in the directory (a restarted run's earlier outputs) so the
  // index covers the whole run.
  OutputSeries(const solver::Case& c, double dt, std::string backend_name);
  ~OutputSeries();
  OutputSeries(const OutputSeries&) = delete;
  OutputSeries& operator=(const OutputSeries&) = delete;
  // Writes <dir>/<name>_<step>.h5 and rewrites <dir>/<name>.xmf (both crash-safe).
  void write(std::int64_t step, double time, const std::vector<double>& field);
  // The same from `field` (a writer's staging), reporting progress, with the further fields
  // the case asks for (output.fields: output_fields(), in that order).
  void write(std::int64_t step, double time, const FieldValues& field,
             WriteProgress* progress = nullptr, const std::vector<NodeField>& extras = {});
  // Lists <dir>/<name>_<step>.h5, a file already written (collectively:
  // write_field_file_collective at output_path(step) with meta(step, time)), in the index. The
  // index is a whole document, rewritten: a run of thousands of outputs rewrote megabytes at
  // each (2001 outputs of 11 nodes wrote 1.4 GB for 18 MB of files, the time growing with the
  // square of the count). So it is rewritten when the time since the last rewrite is at least
  // kIndexSpacing times that rewrite's own (the index costs at most about 1 / kIndexSpacing of
  // the run), and whenever flush_index() asks; a run ends and stops with it.
  void add_to_index(std::int64_t step, double time);
  static constexpr double kIndexSpacing = 10.0;
  // Rewrites the index if an output is not in it yet.
  void flush_index();
  // Rewrites the index recording that the run reached its end at `step` with every file on the
  // disk (xdmf_document's `finished`): a restart from an earlier checkpoint there would discard
  // finished results, which it does only when asked (prepare_output_directory). Nothing
  // without an output in the index.
  void mark_finished(std::int64_t step);
  FieldMeta meta(std::int64_t step, double time) const;
  std::string xdmf_path() const;
  const std::vector<XdmfEntry>& entries() const { return entries_; }
  // The run's materials file (io/material_output.hpp), relative to the index: every step of
  // the index lists its datasets from the next write on.
  void set_materials_file(std::string file) { materials_file_ = std::move(file); }

 private:
  const solver::Case& case_;
  double dt_;
  std::string backend_;
  std::vector<XdmfEntry> entries_;  // sorted by step
  std::string materials_file_;
  std::int64_t finished_ = -1;
  // Writers' threads add to the index while a stop flushes it.
  std::mutex index_mutex_;
  bool index_behind_ = false;  // an output not in the index on the disk yet
  std::chrono::steady_clock::time_point last_index_{};
  double last_index_seconds_ = 0.0;
  void write_index();  // with index_mutex_ held
};

}  // namespace heatsim::io
