#include "output.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace heatsim::io {

namespace fs = std::filesystem;

namespace {

// "<prefix><digits><suffix>" -> digits as a step, or -1.
std::int64_t step_in_name(const std::string& name, const std::string& prefix,
                          const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size()) return -1;
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

std::string describe(const std::vector<RunFile>& files) {
  std::string list;
  const std::size_t shown = std::min<std::size_t>(files.size(), 3);
  for (std::size_t i = 0; i < shown; ++i)
    list += (i ? ", " : "") + fs::path(files[i].path).filename().string();
  if (files.size() > shown) list += ", ... (" + std::to_string(files.size()) + " files)";
  return list;
}

void remove_files(const std::vector<RunFile>& files) {
  for (const RunFile& f : files) {
    std::error_code ec;
    fs::remove(f.path, ec);
    if (ec) throw std::runtime_error("cannot remove " + f.path + ": " + ec.message());
  }
}

void check_writable(const std::string& dir) {
  // access(2) says yes to root on a read-only mount; creating a file is the real test.
  std::string probe = (fs::path(dir) / ".heatsim-write-test-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw std::runtime_error("output directory '" + dir +
                             "' is not writable: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

std::vector<RunFile> find_run_files(const solver::Case& c) {
  std::vector<RunFile> files;
  std::error_code ec;
  const fs::path dir(c.output.directory);
  if (!fs::is_directory(dir, ec)) return files;
  const std::string field_prefix = c.output.name + "_";
  const std::string index_name = c.output.name + ".xmf";
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    bool temporary = false;
    const std::string tmp = kTemporarySuffix;
    if (name.size() > tmp.size() && name.compare(name.size() - tmp.size(), tmp.size(), tmp) == 0) {
      temporary = true;
      name.resize(name.size() - tmp.size());
    }
    RunFile f{entry.path().string(), RunFile::Kind::field, -1};
    if ((f.step = step_in_name(name, field_prefix, ".h5")) >= 0) {
      f.kind = RunFile::Kind::field;
    } else if ((f.step = step_in_name(name, "checkpoint_", ".h5")) >= 0) {
      f.kind = RunFile::Kind::checkpoint;
    } else if (name == index_name || name == "materials.h5" || name == "probes.csv") {
      f.kind = RunFile::Kind::index;
    } else {
      continue;
    }
    if (temporary) f.kind = RunFile::Kind::temporary;
    files.push_back(f);
  }
  std::sort(files.begin(), files.end(),
            [](const RunFile& a, const RunFile& b) { return a.path < b.path; });
  return files;
}

void prepare_output_directory(const solver::Case& c, bool overwrite, bool restarting,
                              std::int64_t restart_step) {
  const std::string& dir = c.output.directory;
  if (dir.empty()) throw std::runtime_error("output.directory is empty");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw std::runtime_error("output directory '" + dir + "' exists and is not a directory");
  } else {
    fs::create_directories(dir, ec);
    if (ec)
      throw std::runtime_error("output directory '" + dir + "' cannot be created: " +
                               ec.message());
  }
  check_writable(dir);

  const std::vector<RunFile> files = find_run_files(c);
  if (files.empty()) return;
  if (restarting) {
    std::vector<RunFile> stale;
    for (const RunFile& f : files) {
      const bool later = restart_step >= 0 && f.step > restart_step &&
                         (f.kind == RunFile::Kind::field || f.kind == RunFile::Kind::checkpoint);
      if (f.kind == RunFile::Kind::temporary || later) stale.push_back(f);
    }
    if (!stale.empty())
      spdlog::info("{}: removing {} file(s) after the restart step {} or left by a crash: {}", dir,
                   stale.size(), restart_step, describe(stale));
    remove_files(stale);
    return;
  }
  if (!overwrite)
    throw std::runtime_error("output directory '" + dir + "' already holds a run's files (" +
                             describe(files) +
                             "); pass --overwrite to replace them, --restart CHECKPOINT to "
                             "continue that run, or choose another output directory");
  spdlog::info("{}: removing {} file(s) of an earlier run (--overwrite)", dir, files.size());
  remove_files(files);
}

std::string output_path(const solver::Case& c, std::int64_t step) {
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "_%08lld.h5", static_cast<long long>(step));
  return (fs::path(c.output.directory) / (c.output.name + suffix)).string();
}

OutputSeries::OutputSeries(const solver::Case& c, double dt, std::string backend_name)
    : case_(c), dt_(dt), backend_(std::move(backend_name)) {
  for (const RunFile& f : find_run_files(c)) {
    if (f.kind != RunFile::Kind::field) continue;
    try {
      const FieldFile header = read_field_header(f.path);
      entries_.push_back({f.step, header.meta.time, fs::path(f.path).filename().string()});
    } catch (const std::exception& e) {
      spdlog::warn("not indexing {}", e.what());
    }
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const XdmfEntry& a, const XdmfEntry& b) { return a.step < b.step; });
}

FieldMeta OutputSeries::meta(std::int64_t step, double time) const {
  return make_meta(case_, dt_, backend_, step, time);
}

void OutputSeries::write(std::int64_t step, double time, const std::vector<double>& field) {
  write_field_file(output_path(case_, step), meta(step, time), field, FieldFileKind::output);
  add_to_index(step, time);
}

void OutputSeries::add_to_index(std::int64_t step, double time) {
  const std::string path = output_path(case_, step);
  const XdmfEntry entry{step, time, fs::path(path).filename().string()};
  auto it = std::lower_bound(entries_.begin(), entries_.end(), step,
                             [](const XdmfEntry& e, std::int64_t s) { return e.step < s; });
  if (it != entries_.end() && it->step == step)
    *it = entry;
  else
    entries_.insert(it, entry);
  write_xdmf(xdmf_path(), meta(step, time), entries_, materials_file_);
}

std::string OutputSeries::xdmf_path() const {
  return (fs::path(case_.output.directory) / (case_.output.name + ".xmf")).string();
}

}  // namespace heatsim::io
