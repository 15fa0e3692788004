// What running and validating a case share: the case loaded from where it comes from,
// overridden and checked; the time plan; the resource checks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/case_loader.hpp"
#include "io/output.hpp"
#include "run/errors.hpp"
#include "solver/backend_choice.hpp"
#include "solver/case.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::run {

// Overrides of case keys: the command line's options, the Python module's keywords.
struct Overrides {
  std::optional<std::string> backend;
  std::optional<std::int64_t> steps;
  std::optional<std::string> output_dir;
  std::optional<std::string> precision;
};

// Where a case comes from: a YAML file, YAML text, or a case already filled in memory.
struct CaseSource {
  enum class Kind { file, text, value };
  Kind kind = Kind::file;
  std::string path;                           // file: the path; text: the name messages give it
  std::string text;                           // text: the YAML
  std::shared_ptr<const solver::Case> value;  // value: the case

  static CaseSource file(std::string path);
  static CaseSource yaml(std::string text, std::string origin = "<text>");
  static CaseSource in_memory(solver::Case c, std::string origin = "<case>");
  // How messages name the case: the file's path, or the origin given.
  const std::string& name() const { return path; }
};

struct PreparedRun {
  solver::Case case_;
  solver::TimePlan plan;
  // Real problems (Case::has_fields()): the material index of every node and the coefficient
  // fields, built once here and shared by the time plan, the backend and the outputs; empty
  // and null for a case without fields.
  std::vector<std::int32_t> material_ids;
  // The surfaces of the box and ball voids, found once (the fields, `validate` and the
  // heat-flow reports read them).
  solver::VoidSurfaces surfaces;
  std::shared_ptr<const kernels::CoefficientFields> fields;
  // The case's key paths and their lines (io::LoadResult::lines; output.directory's left out
  // where --output-dir gave it).
  std::map<std::string, int> lines;
};

// While one lives, the warnings prepare_run says in this thread (logged as ever) are kept in
// `into` too, each with its key path, line and message (the Python module's validate).
class CollectWarnings {
 public:
  explicit CollectWarnings(std::vector<io::CaseError>& into);
  ~CollectWarnings();
  CollectWarnings(const CollectWarnings&) = delete;
  CollectWarnings& operator=(const CollectWarnings&) = delete;

 private:
  std::vector<io::CaseError>* previous_;
};

// Loads the case, applies the overrides and checks everything (the files regions and sources
// name are read here); warnings go to the log. Throws InvalidCase with every problem when the
// case cannot run.
PreparedRun prepare_run(const CaseSource& source, const Overrides& overrides);

// What the run needs in memory on the backend `backend_name` (solver/memory_estimate.hpp), with
// the backend's ghost width `ghost` (0: the scheme's radius).
solver::MemoryEstimate estimate_run_memory(const PreparedRun& run, const std::string& backend_name,
                                           int ghost = 0);

// Whether the host has the memory the run needs whatever backend it runs on (the larger of
// the CPU's and a GPU's estimates; true where the memory available is unknown): a run may then
// build its host-side set-up before its backend is chosen.
bool host_memory_suffices(const PreparedRun& run);

// The files a run leaves in output.directory at most at once: every output file, and the
// checkpoints (one per checkpoint.every steps and one at the end; with checkpoint.keep the
// newest `keep` and the next one written beside them before the oldest goes).
struct FilesEstimate {
  std::int64_t outputs = 0, checkpoints = 0;
  double output_bytes = 0.0, checkpoint_bytes = 0.0;  // each file's (outputs: output.fields too)
  double materials_bytes = 0.0;  // materials.h5, written once (cases with materials)
  double bytes() const {
    return static_cast<double>(outputs) * output_bytes +
           static_cast<double>(checkpoints) * checkpoint_bytes + materials_bytes;
  }
};
// From `first_step` on (a restart's step: the outputs and checkpoints after it; those up to it
// are on the disk already).
FilesEstimate estimate_files(const PreparedRun& run, std::int64_t first_step = 0);

// What the output directory means for the disk check: the step the run starts from, and the
// bytes of the files the run removes before it writes (io::files_removed_first: an earlier
// run's with --overwrite or after it failed, a restart's files after its step), free once
// they are gone.
struct DiskUse {
  std::int64_t first_step = 0;
  double removed_bytes = 0.0;
};
DiskUse disk_use(const solver::Case& c, const io::DirectoryUse& use);

// Host memory, device memory and (with `files`) output disk space needed vs available (`disk`:
// the files still to be written, against the free space and what the run removes first): what
// is short, with the numbers, one message each; empty when everything fits. `device_share`:
// the part of the whole run's device memory this process's GPU holds (device_share()).
// `host_ranks`: the processes of the run on this host, each of which builds the whole case in
// its memory (a run under mpirun), so that the host must hold that many times the case.
std::vector<std::string> check_resources(const PreparedRun& run,
                                         const solver::BackendChoice& choice, int ghost,
                                         bool files = true, double device_share = 1.0,
                                         int host_ranks = 1, const DiskUse& disk = {});

// What a run refuses in its surroundings before it starts, as errors of the case, by the rules
// the run applies: the output directory (io::check_output_directory_usable, at
// output.directory and its line) and the resources (check_resources on the backend
// `backend_name`, one GPU, the run's files replacing a run's files in the directory as with
// --overwrite). `validate` lists them; changes nothing.
std::vector<io::CaseError> check_surroundings(const PreparedRun& run,
                                              const std::string& backend_name);

// The part of a run's device memory one GPU holds in an explicit run over `ranks` ranks
// (decomposed with overlap `halo` and the case's parallel.decomposition `procs`): the largest
// rank's block, overlaps included, over the grid's nodes, times the ranks that share a GPU
// (`node_ranks` ranks on a node of `gpus` GPUs, handed out round robin), at most 1. 1 for one
// rank, and where the grid cannot be decomposed so (the run refuses that later, saying why).
double device_share(const kernels::StencilProblem& problem, int ranks, int halo,
                    const std::array<int, 3>& procs, int node_ranks, int gpus);

std::string format_bytes(double bytes);

}  // namespace heatsim::run
