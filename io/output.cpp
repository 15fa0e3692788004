#include "output.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

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

// The first three names of `files` (a crash's temporaries after the run's own files) and
// their count.
std::string describe(const std::vector<RunFile>& files) {
  std::vector<const RunFile*> order;
  for (const RunFile& f : files)
    if (f.kind != RunFile::Kind::temporary) order.push_back(&f);
  for (const RunFile& f : files)
    if (f.kind == RunFile::Kind::temporary) order.push_back(&f);
  std::string list;
  const std::size_t shown = std::min<std::size_t>(order.size(), 3);
  for (std::size_t i = 0; i < shown; ++i)
    list += (i ? ", " : "") + fs::path(order[i]->path).filename().string();
  if (files.size() > shown) list += ", ... (" + std::to_string(files.size()) + " files)";
  return list;
}

// A file name without the temporary suffix a crash leaves (kTemporarySuffix), and whether it
// had it.
std::pair<std::string, bool> without_temporary_suffix(const std::string& name) {
  const std::string tmp = kTemporarySuffix;
  if (name.size() > tmp.size() && name.compare(name.size() - tmp.size(), tmp.size(), tmp) == 0)
    return {name.substr(0, name.size() - tmp.size()), true};
  return {name, false};
}

// All of `files` or none: each is first moved into a directory of its own beside it (a rename,
// which needs what removing it needs), and only when every one has moved are they removed; a
// file that cannot move (immutable, another user's in a sticky directory) puts the others back
// and the run is refused with nothing removed.
void remove_files(const std::vector<RunFile>& files) {
  if (files.empty()) return;
  std::error_code ec;
  const fs::path dir = fs::path(files.front().path).parent_path();
  std::string staging =
      ((dir.empty() ? fs::path(".") : dir) / ".heatsim-removing-XXXXXX").string();
  if (::mkdtemp(staging.data()) == nullptr) {
    // No room for the directory (a full disk): one file at a time, as before.
    for (const RunFile& f : files) {
      fs::remove(f.path, ec);
      if (ec) throw std::runtime_error("cannot remove " + f.path + ": " + ec.message());
    }
    return;
  }
  std::vector<std::pair<fs::path, fs::path>> moved;  // from, to
  for (std::size_t k = 0; k < files.size(); ++k) {
    const fs::path to = fs::path(staging) / std::to_string(k);
    fs::rename(files[k].path, to, ec);
    if (!ec) {
      moved.emplace_back(files[k].path, to);
      continue;
    }
    const std::string why = ec.message();
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) fs::rename(it->second, it->first, ec);
    fs::remove(staging, ec);
    throw std::runtime_error("cannot remove " + files[k].path + ": " + why +
                             "; nothing was removed");
  }
  fs::remove_all(staging, ec);
  if (ec) throw std::runtime_error("cannot remove " + staging + ": " + ec.message());
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
    // Files only: a directory of such a name is no run's (nor removed with one).
    std::error_code type_ec;
    if (!entry.is_regular_file(type_ec)) continue;
    const auto [name, temporary] = without_temporary_suffix(entry.path().filename().string());
    RunFile f{entry.path().string(), RunFile::Kind::field, -1};
    if ((f.step = step_in_name(name, field_prefix, ".h5")) >= 0) {
      f.kind = RunFile::Kind::field;
    } else if ((f.step = step_in_name(name, "checkpoint_", ".h5")) >= 0) {
      f.kind = RunFile::Kind::checkpoint;
    } else if (name == index_name || name == "materials.h5" || name == "probes.csv" ||
               name == "heat_flows.csv") {
      f.kind = RunFile::Kind::index;
    } else if (name == kFailedRunFile) {
      f.kind = RunFile::Kind::failed;
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

namespace {

// Throws std::runtime_error when a field file or checkpoint in `files` (the restart's
// directory) was written by another run than the checkpoint's: continuing there would remove
// that run's later files and splice the two into one series. Every such file is read (its
// attributes only), so that none is removed or adopted unread.
void refuse_other_runs(const std::string& dir, const std::vector<RunFile>& files,
                       const DirectoryUse& use) {
  std::error_code ec;
  std::vector<RunFile> others;
  // Whether every other file is of a branch of the checkpoint's run (a changed case continued
  // from it), and from which step: the reason then said as it is.
  bool branches = true;
  std::string branch_step;
  for (const RunFile& f : files) {
    if (f.kind != RunFile::Kind::field && f.kind != RunFile::Kind::checkpoint) continue;
    if (!use.checkpoint.empty() && fs::equivalent(f.path, use.checkpoint, ec)) continue;
    std::string lineage;
    try {
      lineage = run_lineage(read_field_header(f.path).meta);
    } catch (const std::exception&) {
      continue;  // not a readable field file: the run's own rules for it apply
    }
    // This run's files, and those of the runs it continues up to the step its line left
    // them. Past that step an ancestor's files are another run's, but for the parent a branch
    // begun here leaves at the restart step: its later files are the ones the branch replaces.
    const bool later = use.restart_step >= 0 && f.step > use.restart_step;
    if (in_run_history(use.lineage, lineage, f.step)) continue;
    if (!use.failed_run.empty() && lineage_head(lineage) == use.failed_run) continue;  // removed
    if (later && use.branching && lineage_head(lineage) == lineage_parent(use.lineage)) continue;
    others.push_back(f);
    const std::string parent = lineage_parent(lineage);
    const std::string step = lineage_branch_step(lineage);
    if (parent.empty() || parent != lineage_head(use.lineage) ||
        (!branch_step.empty() && step != branch_step))
      branches = false;
    branch_step = step;
  }
  if (others.empty()) return;
  const std::string why =
      branches && !branch_step.empty()
          ? "it is a branch of that run, continued under a changed case from its step " +
                branch_step
          : "it began from another case, or continued under a changed case from another step";
  throw std::runtime_error(
      "output directory '" + dir + "' holds another run's files (" + describe(others) +
      ": that run is not the history of " +
      (use.checkpoint.empty() ? std::string("the checkpoint") : use.checkpoint) + ": " + why +
      "); a restart there would remove or adopt them. Restart into another directory with -o "
      "DIR, or keep the checkpoint with its own run's files");
}

// The run files `use` removes from the directory, with the log line that says why; throws
// std::runtime_error when the directory holds another run's files the run may not remove.
struct DirectoryPlan {
  std::vector<RunFile> remove;
  std::string note;
};

// The failed run's mark's first line without its "heatsim run failed with " words, cut to 300
// characters: what it said when it stopped.
std::string failed_message(const std::vector<RunFile>& files) {
  for (const RunFile& f : files) {
    if (f.kind != RunFile::Kind::failed) continue;
    std::ifstream in(f.path);
    std::string line;
    std::getline(in, line);
    const std::string prefix = "heatsim run failed with ";
    if (line.compare(0, prefix.size(), prefix) == 0) line = line.substr(prefix.size());
    // The checkpoint it names the refusal names again.
    if (const std::size_t at = line.find("; its newest checkpoint, "); at != std::string::npos)
      line.resize(at);
    if (line.size() > 300) line = line.substr(0, 297) + "...";
    return line;
  }
  return "";
}

// The lineage a failed run's mark names (its first line), or empty: no mark, or a mark of a
// version that wrote none.
std::string failed_lineage(const std::vector<RunFile>& files) {
  for (const RunFile& f : files) {
    if (f.kind != RunFile::Kind::failed) continue;
    std::FILE* in = std::fopen(f.path.c_str(), "r");
    if (!in) return "";
    // Its last line that begins with the prefix.
    const std::string prefix = kFailedLineagePrefix;
    std::string found;
    char line[4096] = {};
    while (std::fgets(line, sizeof line, in) != nullptr) {
      std::string text = line;
      if (text.compare(0, prefix.size(), prefix) != 0) continue;
      text = text.substr(prefix.size());
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      found = text;
    }
    std::fclose(in);
    return found;
  }
  return "";
}

// The lineage of a field file or checkpoint, empty where it cannot be read.
std::string file_lineage(const RunFile& f) {
  try {
    return run_lineage(read_field_header(f.path).meta);
  } catch (const std::exception&) {
    return "";
  }
}

// Its own digest.
std::string file_lineage_head(const RunFile& f) { return lineage_head(file_lineage(f)); }

// The outputs of runs under another `output.name` in the directory: each `<stem>.xmf` beside
// which some `<stem>_<step>.h5` reads as a field file, with those field files (and their
// temporaries). They share the directory's checkpoints, materials.h5 and the CSV files with
// this run's names, so a run that replaces those replaces that run: its series and index go
// with them, rather than stay behind naming the new run's files. Files that do not read as
// field files are not a run's and stay.
std::vector<RunFile> other_named_outputs(const solver::Case& c) {
  std::vector<RunFile> found;
  std::error_code ec;
  const fs::path dir(c.output.directory);
  if (!fs::is_directory(dir, ec)) return found;
  std::vector<std::string> stems, names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    names.push_back(name);
    if (entry.path().extension() == ".xmf" && entry.path().stem().string() != c.output.name)
      stems.push_back(entry.path().stem().string());
  }
  for (const std::string& stem : stems) {
    std::vector<RunFile> series;
    bool reads = false;
    for (const std::string& name : names) {
      const auto [base, temporary] = without_temporary_suffix(name);
      const std::int64_t step = step_in_name(base, stem + "_", ".h5");
      if (step < 0) continue;
      RunFile f{(dir / name).string(), temporary ? RunFile::Kind::temporary : RunFile::Kind::field,
                step};
      if (!temporary) {
        try {
          read_field_header(f.path);
          reads = true;
        } catch (const std::exception&) {
          continue;  // not a field file: not a run's
        }
      }
      series.push_back(f);
    }
    if (!reads) continue;
    found.push_back({(dir / (stem + ".xmf")).string(), RunFile::Kind::index, -1});
    found.insert(found.end(), series.begin(), series.end());
  }
  std::sort(found.begin(), found.end(),
            [](const RunFile& a, const RunFile& b) { return a.path < b.path; });
  return found;
}

// Throws std::runtime_error when a restart at use.restart_step would remove field files and
// checkpoints that the run there wrote after that step although that run went on past it:
// it finished (its index records its end, xdmf_finished_step, at a later step whose output is
// there) or it wrote a later checkpoint. Those are results, not the partial outputs a run
// killed after its newest checkpoint leaves (which the restart from that checkpoint recomputes
// identically): the restart discards them only with --overwrite. A failed run's files
// (`failed`: its mark; `of_failed_run`: its own files, all of them where its mark names no
// lineage) are not kept: the next run replaces them, as it always did.
template <typename OfFailedRun>
void refuse_discarding_results(const solver::Case& c, const std::vector<RunFile>& files,
                               const DirectoryUse& use, const std::string& failed_run, bool failed,
                               OfFailedRun of_failed_run) {
  std::vector<RunFile> later;
  const RunFile* newest = nullptr;
  bool end_output = false;
  const std::int64_t end =
      xdmf_finished_step((fs::path(c.output.directory) / (c.output.name + ".xmf")).string());
  for (const RunFile& f : files) {
    if ((f.kind != RunFile::Kind::field && f.kind != RunFile::Kind::checkpoint) ||
        f.step <= use.restart_step)
      continue;
    if (failed && (failed_run.empty() || of_failed_run(f))) continue;
    later.push_back(f);
    if (f.kind == RunFile::Kind::checkpoint && (!newest || f.step > newest->step)) newest = &f;
    if (f.kind == RunFile::Kind::field && f.step == end) end_output = true;
  }
  // The record counts while the output of its step is there: a restart that discarded it
  // (--overwrite) and was killed before its first output left the index's record behind.
  const bool finished = end > use.restart_step && end_output;
  if (later.empty() || (!finished && !newest)) return;
  const std::string step = std::to_string(use.restart_step);
  std::string went_on;
  if (finished) went_on = "it finished at step " + std::to_string(end);
  if (newest)
    went_on += (finished ? ", its newest checkpoint at step " : "its newest checkpoint at step ") +
               std::to_string(newest->step);
  throw std::runtime_error(
      "output directory '" + c.output.directory + "': the run there went on past step " + step +
      " (" + went_on + "): a restart from step " + step + " would remove the " +
      std::to_string(later.size()) + " file(s) it wrote after that step (" + describe(later) +
      "). " +
      (newest
           ? "Restart from its newest checkpoint to go on from where it stopped (--restart " +
                 newest->path + (finished ? ", with a later time.end or --steps" : "") + "), pass"
           : std::string("Pass")) +
      " --overwrite to discard those files and run again from step " + step +
      ", or restart into another directory with -o DIR to keep them");
}

// Throws std::runtime_error where a file the plan removes is one the case reads (its initial
// field, a region's map, a source's density): a case that starts from an earlier run's field
// in the same directory would otherwise lose that field to the run it starts, and a second run
// of it would start from another.
void refuse_removing_inputs(const solver::Case& c, const std::vector<RunFile>& remove) {
  std::vector<std::pair<std::string, std::string>> inputs;  // key, path
  if (c.initial.kind == solver::InitialKind::file)
    inputs.emplace_back("initial.path", c.initial.path);
  for (std::size_t r = 0; r < c.regions.size(); ++r)
    if (c.regions[r].shape.kind == solver::ShapeKind::file)
      inputs.emplace_back("regions[" + std::to_string(r) + "].file", c.regions[r].shape.path);
  for (std::size_t s = 0; s < c.sources.size(); ++s)
    if (c.sources[s].shape.kind == solver::ShapeKind::file)
      inputs.emplace_back("sources[" + std::to_string(s) + "].file", c.sources[s].shape.path);
  for (const auto& [key, path] : inputs)
    for (const RunFile& f : remove) {
      std::error_code ec;
      if (!fs::equivalent(path, f.path, ec) || ec) continue;
      throw std::runtime_error(
          "output directory '" + c.output.directory + "': the run would remove " + f.path +
          ", which the case reads (" + key + "): copy it out of the directory (or write this "
          "run to another with -o DIR) first");
    }
}

DirectoryPlan plan_directory(const solver::Case& c, const DirectoryUse& use) {
  const std::string& dir = c.output.directory;
  std::vector<RunFile> files = find_run_files(c);
  DirectoryPlan plan;
  if (files.empty()) return plan;
  const bool failed = std::any_of(files.begin(), files.end(),
                                  [](const RunFile& f) { return f.kind == RunFile::Kind::failed; });
  // The failed run's own digest: its field files and checkpoints are removed with its mark.
  const std::string failed_run = failed ? lineage_head(failed_lineage(files)) : "";
  const auto of_failed_run = [&](const RunFile& f) {
    return !failed_run.empty() &&
           (f.kind == RunFile::Kind::field || f.kind == RunFile::Kind::checkpoint) &&
           file_lineage_head(f) == failed_run;
  };
  if (use.restarting) {
    if (!use.lineage.empty()) {
      DirectoryUse others = use;
      others.failed_run = lineage_head(use.lineage) == failed_run ? "" : failed_run;
      refuse_other_runs(dir, files, others);
    }
    // A branch begun here replaces its parent's files after the branch step: results of the
    // case the parent ran, which no later run gives back. Only when asked, or where the parent
    // is the run that failed here (its files go with its mark as a new run's would).
    if (use.branching && !use.overwrite && lineage_parent(use.lineage) != failed_run) {
      std::vector<RunFile> replaced;
      for (const RunFile& f : files) {
        if ((f.kind != RunFile::Kind::field && f.kind != RunFile::Kind::checkpoint) ||
            f.step <= use.restart_step)
          continue;
        std::string lineage;
        try {
          lineage = run_lineage(read_field_header(f.path).meta);
        } catch (const std::exception&) {
          continue;
        }
        if (lineage_head(lineage) == lineage_parent(use.lineage)) replaced.push_back(f);
      }
      if (!replaced.empty())
        throw std::runtime_error(
            "output directory '" + dir + "': a restart under a changed case from step " +
            std::to_string(use.restart_step) + " would replace the " +
            std::to_string(replaced.size()) + " file(s) its run wrote after that step (" +
            describe(replaced) +
            "), results of the case that run began with. Restart into another directory with -o "
            "DIR to keep both, or pass --overwrite to replace them");
    }
    if (!use.overwrite && use.restart_step >= 0)
      refuse_discarding_results(c, files, use, failed_run, failed, of_failed_run);
    for (const RunFile& f : files) {
      // The checkpoint the restart reads is never removed, nor are the files of its history
      // (the runs it continues, up to the step its line left them): a branch of a failed run,
      // begun from that run's checkpoint here, keeps that run's files up to the restart step.
      std::error_code ec;
      if (!use.checkpoint.empty() && fs::equivalent(f.path, use.checkpoint, ec)) continue;
      const bool later = use.restart_step >= 0 && f.step > use.restart_step &&
                         (f.kind == RunFile::Kind::field || f.kind == RunFile::Kind::checkpoint);
      const bool failed_branch =
          !use.lineage.empty() && lineage_head(use.lineage) != failed_run && of_failed_run(f) &&
          !in_run_history(use.lineage, file_lineage(f), f.step);
      if (f.kind == RunFile::Kind::temporary || f.kind == RunFile::Kind::failed || later ||
          failed_branch)
        plan.remove.push_back(f);
    }
    refuse_removing_inputs(c, plan.remove);
    if (!plan.remove.empty())
      plan.note = dir + ": removing " + std::to_string(plan.remove.size()) +
                  " file(s) after the restart step " + std::to_string(use.restart_step) +
                  " or left by a crash or a failed run: " + describe(plan.remove);
    return plan;
  }
  // A new run replaces the directory's run: under another output.name, its series too.
  if (std::any_of(files.begin(), files.end(), [](const RunFile& f) {
        return f.kind == RunFile::Kind::checkpoint || f.kind == RunFile::Kind::index ||
               f.kind == RunFile::Kind::failed;
      })) {
    const std::vector<RunFile> others = other_named_outputs(c);
    files.insert(files.end(), others.begin(), others.end());
  }
  if (!use.overwrite && !failed) {
    // The checkpoint that continues that run: its newest (a run killed outright says nothing
    // of it); none for a run that left no checkpoint (a steady state).
    const RunFile* newest = nullptr;
    for (const RunFile& f : files)
      if (f.kind == RunFile::Kind::checkpoint && (!newest || f.step > newest->step)) newest = &f;
    // Its checkpoint continues that run under that run's output.name only, and on its grid:
    // a case on another grid is told so rather than sent to a restart that refuses it.
    const std::vector<RunFile> others_named = other_named_outputs(c);
    const bool ours = others_named.empty();
    std::string continues;
    if (newest && ours) {
      continues = "--restart " + newest->path +
                  " to continue that run from its newest checkpoint (with a later time.end or "
                  "--steps where it reached its end), ";
      try {
        const FieldMeta there = read_field_header(newest->path).meta;
        const FieldMeta here = make_meta(c, 0.0, "", 0, 0.0);
        const auto extent = [](const FieldMeta& m) {
          std::string text;
          for (int a = 0; a < m.dims; ++a) text += (a ? "x" : "") + std::to_string(m.n[a]);
          return text;
        };
        if (extent(there) != extent(here))
          continues = "--restart " + newest->path + " with that run's case to continue it (its " +
                      "grid is " + extent(there) + ", this case's " + extent(here) + "), ";
      } catch (const std::exception&) {
        // unreadable: the suggestion stands, and the restart says what is wrong with it
      }
    }
    throw std::runtime_error("output directory '" + dir + "' already holds a run's files (" +
                             describe(files) + "); pass --overwrite to replace them, " +
                             continues + "or choose another output directory");
  }
  if (!use.overwrite && failed) {
    // A failed run's checkpoint past its start holds what it computed up to there (a long run
    // stopped by a full disk or a lost device): the next run does not discard it unasked.
    const RunFile* newest = nullptr;
    for (const RunFile& f : files)
      if (f.kind == RunFile::Kind::checkpoint && f.step > 0 &&
          (failed_run.empty() || of_failed_run(f)) && (!newest || f.step > newest->step))
        newest = &f;
    if (newest)
      throw std::runtime_error(
          "output directory '" + dir + "' holds a run that failed (" + kFailedRunFile + ": " +
          failed_message(files) + ") after it wrote a checkpoint at step " +
          std::to_string(newest->step) + ": --restart " + newest->path +
          " continues it from there; pass --overwrite to discard its files and run afresh, or "
          "choose another output directory");
  }
  if (!use.overwrite && !failed_run.empty()) {
    // A failed run's files go with its mark; another run's beside them (the parent of a branch
    // that failed in its directory) are kept: the new run may not remove them unasked.
    std::vector<RunFile> kept;
    for (const RunFile& f : files)
      if ((f.kind == RunFile::Kind::field || f.kind == RunFile::Kind::checkpoint) &&
          !of_failed_run(f))
        kept.push_back(f);
    if (!kept.empty())
      throw std::runtime_error(
          "output directory '" + dir + "' holds a failed run's files (" + kFailedRunFile +
          ") beside another run's (" + describe(kept) +
          "): a new run here would remove both. Pass --overwrite to replace them all, "
          "--restart CHECKPOINT to continue one of the runs, or choose another output directory");
  }
  refuse_removing_inputs(c, files);
  plan.remove = files;
  plan.note = dir + ": removing " + std::to_string(files.size()) + " file(s) of an earlier run" +
              (use.overwrite ? std::string(" (--overwrite)")
                             : std::string(" that failed (") + kFailedRunFile + ")");
  return plan;
}

// "pid N: COMMAND" of the run that holds a directory's lock, from its lock file (open as fd).
std::string lock_holder(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::string pid, command, case_path;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    if (line.rfind("pid ", 0) == 0) pid = line.substr(4);
    if (line.rfind("command ", 0) == 0) command = line.substr(8);
    if (line.rfind("case ", 0) == 0) case_path = line.substr(5);
    at = end + 1;
  }
  if (pid.empty()) return "a run that has not yet said which";
  std::string holder = "pid " + pid;
  if (pid == std::to_string(::getpid())) holder += ", this process";
  if (!command.empty()) holder += ": " + command;
  if (!case_path.empty()) holder += " (case " + case_path + ")";
  return holder;
}

std::runtime_error directory_in_use(const std::string& dir, int fd) {
  return std::runtime_error(
      "output directory '" + dir + "' is in use: another run is writing there now (" +
      lock_holder(fd) +
      "). Wait for it to end, or choose another output directory (-o DIR); --overwrite does "
      "not replace the files of a run that is still writing them");
}

// This process's command line, its arguments joined by spaces (cut to 1000 characters).
std::string own_command_line() {
  std::FILE* in = std::fopen("/proc/self/cmdline", "rb");
  if (!in) return "";
  std::string line(1000, '\0');
  line.resize(std::fread(line.data(), 1, line.size(), in));
  std::fclose(in);
  while (!line.empty() && line.back() == '\0') line.pop_back();
  std::replace(line.begin(), line.end(), '\0', ' ');
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

struct flock whole_file_lock(short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = 0;
  l.l_len = 0;
  return l;
}

}  // namespace

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void DirectoryLock::release() {
  if (fd_ < 0) return;
  // Removed while still held: a run that opened the file meanwhile finds it gone once it has
  // the lock, and takes a new one (lock_output_directory).
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

DirectoryLock lock_output_directory(const std::string& dir, const std::string& case_path) {
  const std::string path = (fs::path(dir) / kLockFile).string();
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error("output directory '" + dir + "': cannot create its lock file " +
                               kLockFile + ": " + std::strerror(errno));
    // An open file description's lock (not the process's): another run in this process, a
    // second Python simulation say, is kept out as well, and closing some other descriptor of
    // the file does not drop it.
    struct flock l = whole_file_lock(F_WRLCK);
    if (::fcntl(fd, F_OFD_SETLK, &l) != 0) {
      const int e = errno;
      if (e == EAGAIN || e == EACCES) {
        const std::runtime_error refused = directory_in_use(dir, fd);
        ::close(fd);
        throw refused;
      }
      ::close(fd);
      spdlog::warn(
          "{}: its file system takes no locks ({}): nothing keeps another run from "
          "writing there at the same time",
          dir, std::strerror(e));
      return DirectoryLock();
    }
    // The file may have been removed by the run that held it between open and lock: then the
    // lock is on a file no other run finds, and is taken again on the new one.
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0 ||
        held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    std::string text = "pid " + std::to_string(::getpid()) + "\n";
    const std::string command = own_command_line();
    if (!command.empty()) text += "command " + command + "\n";
    if (!case_path.empty()) text += "case " + case_path + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0)
      spdlog::debug("{}: could not record the run in {}: {}", dir, kLockFile, std::strerror(errno));
    DirectoryLock lock;
    lock.fd_ = fd;
    lock.path_ = path;
    return lock;
  }
  throw std::runtime_error("output directory '" + dir + "': its lock file " + kLockFile +
                           " keeps changing; is another run starting there?");
}

void check_output_directory_unlocked(const std::string& dir) {
  const std::string path = (fs::path(dir) / kLockFile).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // no lock file: no run holds the directory
  struct flock l = whole_file_lock(F_WRLCK);
  const bool held = ::fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
  if (held) {
    const std::runtime_error refused = directory_in_use(dir, fd);
    ::close(fd);
    throw refused;
  }
  ::close(fd);
}

namespace {

void require_directory_or_nothing(const std::string& dir) {
  if (dir.empty()) throw std::runtime_error("output.directory is empty");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw std::runtime_error("output directory '" + dir + "' exists and is not a directory");
}

}  // namespace

void check_output_directory_usable(const std::string& dir, bool restarting) {
  require_directory_or_nothing(dir);
  // The directory itself, or the nearest of its parents that exists, where it would be made.
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec);
  if (ec) return;
  const std::string advice =
      restarting ? "; a restart continues in its checkpoint's directory, whatever "
                   "output.directory says: restart into another with -o DIR"
                 : "; choose another output.directory (or -o DIR)";
  for (const fs::path& part : fs::path(dir))
    if (part.native().size() > kNameMax)
      throw std::runtime_error("output directory '" + dir + "' cannot be created: its part '" +
                               part.string().substr(0, 40) + "...' is longer than the " +
                               std::to_string(kNameMax) + " characters a file name may have" +
                               advice);
  while (!fs::exists(existing, ec) && existing.has_relative_path()) {
    // A link whose target is missing: creating the directory there fails ("File exists").
    if (fs::is_symlink(fs::symlink_status(existing, ec)))
      throw std::runtime_error("output directory '" + dir + "' cannot be created: '" +
                               existing.string() + "' is a symbolic link to '" +
                               fs::read_symlink(existing, ec).string() + "', which does not exist" +
                               advice);
    existing = existing.parent_path();
  }
  const bool made = existing != fs::absolute(dir, ec);
  const std::string refused = "output directory '" + dir + "' " +
                              (made ? "cannot be created" : "is not writable") + ": '" +
                              existing.string() + "' ";
  if (!fs::is_directory(existing, ec))
    throw std::runtime_error(refused + "is not a directory" + advice);
  struct statvfs s {};
  if (::statvfs(existing.c_str(), &s) == 0) {
    if (s.f_flag & ST_RDONLY)
      throw std::runtime_error(refused + "is on a read-only file system" + advice);
    // proc and sysfs report no blocks: they keep no files of ours.
    if (s.f_blocks == 0)
      throw std::runtime_error(
          refused + "is on a file system that keeps no files (such as /proc or /sys)" + advice);
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error(refused + "cannot be written: " + std::strerror(errno) + advice);
}

void check_output_name(const solver::Case& c) {
  // The longest name the run may write: an output file at a step of 16 digits (steps are at
  // most 1e15).
  const std::size_t longest = c.output.name.size() + std::string("_").size() + 16 + 3;
  if (longest > kNameMax)
    throw std::runtime_error(
        "the output files' names (output.name, '_', the step, '.h5') "
        "would pass the " +
        std::to_string(kNameMax) + " characters a file name may have: output.name has " +
        std::to_string(c.output.name.size()) + "; give a name of at most " +
        std::to_string(kNameMax - 20) + " characters");
}

void check_output_directory(const solver::Case& c, const DirectoryUse& use) {
  check_output_name(c);
  check_output_directory_usable(c.output.directory, use.restarting);
  check_output_directory_unlocked(c.output.directory);
  plan_directory(c, use);
}

std::vector<RunFile> files_removed_first(const solver::Case& c, const DirectoryUse& use) {
  try {
    check_output_directory_unlocked(c.output.directory);
    return plan_directory(c, use).remove;
  } catch (const std::runtime_error&) {
    return {};  // refused: check_output_directory says why
  }
}

DirectoryLock prepare_output_directory(const solver::Case& c, const DirectoryUse& use) {
  const std::string& dir = c.output.directory;
  require_directory_or_nothing(dir);
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      throw std::runtime_error("output directory '" + dir + "' cannot be created: " + ec.message());
  }
  check_writable(dir);
  // Held before anything is removed: a live run's files are never another run's to replace.
  DirectoryLock lock = lock_output_directory(dir, c.source_path);
  const DirectoryPlan plan = plan_directory(c, use);
  if (!plan.note.empty()) spdlog::info("{}", plan.note);
  remove_files(plan.remove);
  return lock;
}

DirectoryLock prepare_output_directory(const solver::Case& c, bool overwrite, bool restarting,
                                       std::int64_t restart_step) {
  DirectoryUse use;
  use.overwrite = overwrite;
  use.restarting = restarting;
  use.restart_step = restart_step;
  return prepare_output_directory(c, use);
}

namespace {

std::string failed_run_reserve_path(const solver::Case& c) {
  return (fs::path(c.output.directory) / kFailedRunFile).string() + kTemporarySuffix;
}

}  // namespace

void reserve_failed_run_mark(const solver::Case& c) {
  // Written out (not a hole from ftruncate), so that the file system has allocated its blocks
  // and writing over them later needs no more.
  std::FILE* f = std::fopen(failed_run_reserve_path(c).c_str(), "wb");
  if (!f) return;
  const std::string blank(kFailedRunReserve, ' ');
  const bool written = std::fwrite(blank.data(), 1, blank.size(), f) == blank.size();
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  std::fclose(f);
  if (!written || !flushed) release_failed_run_mark(c);
}

void release_failed_run_mark(const solver::Case& c) {
  std::error_code ec;
  fs::remove(failed_run_reserve_path(c), ec);
}

void mark_failed_run(const solver::Case& c, int exit_code, const std::string& message) {
  const std::string path = (fs::path(c.output.directory) / kFailedRunFile).string();
  // The run's lineage on the last line, so that the next run in the directory removes this
  // run's files and no other's (a branch begun here leaves its parent's outputs beside them).
  const std::string lineage = c.run_digest.empty() ? case_digest(c.source_text) : c.run_digest;
  const std::string last = std::string(kFailedLineagePrefix) + lineage + "\n";
  std::string text =
      "heatsim run failed with exit code " + std::to_string(exit_code) + ": " + message + "\n";
  // Into the reserve's blocks in place (no new space), cut to the reserve, then renamed.
  const std::string reserve = failed_run_reserve_path(c);
  const int fd = ::open(reserve.c_str(), O_WRONLY);
  if (fd >= 0) {
    if (text.size() + last.size() > kFailedRunReserve)
      text = text.substr(0, kFailedRunReserve - last.size() - 4) + "...\n";
    text += last;
    const bool ok =
        ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
        ::ftruncate(fd, static_cast<off_t>(text.size())) == 0;
    ::close(fd);
    if (ok && std::rename(reserve.c_str(), path.c_str()) == 0) return;
    std::remove(reserve.c_str());
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  std::fputs((text + last).c_str(), f);
  std::fclose(f);
}

std::string output_path(const solver::Case& c, std::int64_t step) {
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "_%08lld.h5", static_cast<long long>(step));
  return (fs::path(c.output.directory) / (c.output.name + suffix)).string();
}

std::vector<XdmfField> output_fields(const solver::Case& c) {
  std::vector<XdmfField> fields;
  if (c.output.heat_flux) fields.push_back({"heat_flux", 3});
  if (c.output.conductivity) fields.push_back({"conductivity", 1});
  if (c.output.liquid_fraction) fields.push_back({"liquid_fraction", 1});
  return fields;
}

OutputSeries::OutputSeries(const solver::Case& c, double dt, std::string backend_name)
    : case_(c), dt_(dt), backend_(std::move(backend_name)) {
  // The files already there (a restart's) are indexed as they are: each in its own precision,
  // with the further node fields it holds, whatever this run's output settings.
  solver::Case every_field = c;
  every_field.output.heat_flux = every_field.output.conductivity =
      every_field.output.liquid_fraction = true;
  const std::vector<XdmfField> candidates = output_fields(every_field);
  for (const RunFile& f : find_run_files(c)) {
    if (f.kind != RunFile::Kind::field) continue;
    try {
      const FieldFile header = read_field_header(f.path);
      XdmfEntry entry{f.step, header.meta.time, fs::path(f.path).filename().string(),
                      header.meta.precision, std::vector<XdmfField>()};
      for (const XdmfField& field : candidates) {
        try {
          read_dataset(f.path, field.name, false);
          entry.fields->push_back(field);
        } catch (const DatasetError&) {
          // not in this file
        }
      }
      entries_.push_back(entry);
    } catch (const std::exception& e) {
      spdlog::warn("not indexing {}", e.what());
    }
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const XdmfEntry& a, const XdmfEntry& b) { return a.step < b.step; });
}

FieldMeta output_meta(const solver::Case& c, double dt, const std::string& backend,
                      std::int64_t step, double time) {
  FieldMeta m = make_meta(c, dt, backend, step, time);
  if (c.output.precision) m.precision = kernels::to_string(*c.output.precision);
  m.compression = c.output.compression;
  return m;
}

FieldMeta OutputSeries::meta(std::int64_t step, double time) const {
  return output_meta(case_, dt_, backend_, step, time);
}

void OutputSeries::write(std::int64_t step, double time, const std::vector<double>& field) {
  write(step, time, FieldValues{field.data(), nullptr, field.size()});
}

void OutputSeries::write(std::int64_t step, double time, const FieldValues& field,
                         WriteProgress* progress, const std::vector<NodeField>& extras) {
  write_field_file(output_path(case_, step), meta(step, time), field, FieldFileKind::output, {},
                   progress, extras);
  add_to_index(step, time);
}

void OutputSeries::add_to_index(std::int64_t step, double time) {
  const std::lock_guard<std::mutex> lock(index_mutex_);
  const std::string path = output_path(case_, step);
  const XdmfEntry entry{step, time, fs::path(path).filename().string(), "", std::nullopt};
  auto it = std::lower_bound(entries_.begin(), entries_.end(), step,
                             [](const XdmfEntry& e, std::int64_t s) { return e.step < s; });
  if (it != entries_.end() && it->step == step)
    *it = entry;
  else
    entries_.insert(it, entry);
  index_behind_ = true;
  const double since =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - last_index_).count();
  if (since >= kIndexSpacing * last_index_seconds_) write_index();
}

void OutputSeries::flush_index() {
  const std::lock_guard<std::mutex> lock(index_mutex_);
  if (index_behind_) write_index();
}

OutputSeries::~OutputSeries() {
  try {
    flush_index();
  } catch (const std::exception& e) {
    spdlog::warn("{}: the index could not be brought up to date: {}", xdmf_path(), e.what());
  }
}

void OutputSeries::write_index() {
  const auto start = std::chrono::steady_clock::now();
  const XdmfEntry& last = entries_.back();
  write_xdmf(xdmf_path(), meta(last.step, last.time), entries_, materials_file_,
             output_fields(case_), finished_);
  last_index_ = std::chrono::steady_clock::now();
  last_index_seconds_ = std::chrono::duration<double>(last_index_ - start).count();
  index_behind_ = false;
}

void OutputSeries::mark_finished(std::int64_t step) {
  const std::lock_guard<std::mutex> lock(index_mutex_);
  if (entries_.empty()) return;
  finished_ = step;
  write_index();
}

std::string OutputSeries::xdmf_path() const {
  return (fs::path(case_.output.directory) / (case_.output.name + ".xmf")).string();
}

}  // namespace heatsim::io
