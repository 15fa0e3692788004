// Checkpoints: everything a restart needs, crash-safe (temporary name + rename), checksummed
// (HDF5 Fletcher32 on the field, a checksum of the attributes), and checked against the case on
// restart. The field is stored in the run's precision, so a restart is bit-for-bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "field_file.hpp"
#include "solver/case.hpp"

namespace heatsim::io {

struct Checkpoint {
  FieldMeta meta;
  std::vector<double> field;  // values exactly as the backend held them
  // bdf2: the field of step - 1 exactly as the implicit stepper held it (fp64); empty for the
  // other methods and for a checkpoint at step 0.
  std::vector<double> previous;
};

// <dir>/checkpoint_<step, 8 digits>.h5
std::string checkpoint_path(const solver::Case& c, std::int64_t step);
void write_checkpoint(const std::string& path, const FieldMeta& meta,
                      const std::vector<double>& field, const std::vector<double>& previous = {});
// The same from `field` (a writer's staging), reporting progress.
void write_checkpoint(const std::string& path, const FieldMeta& meta, const FieldValues& field,
                      const std::vector<double>& previous = {}, WriteProgress* progress = nullptr);
// Throws std::runtime_error naming the file when it is missing, truncated, fails its checksum
// or is not a heatsim checkpoint. Without `with_field`, the attributes only (field and
// previous empty): a decomposed restart reads its parts with read_field_file_collective.
Checkpoint read_checkpoint(const std::string& path, bool with_field = true);
// Empty when the checkpoint fits the case (dims, grid, spacing, scheme, precision, alpha, dt);
// otherwise what does not match, e.g. "grid.n: checkpoint 64x64, case 128x64", several joined
// by "; ".
std::string checkpoint_mismatch(const Checkpoint& ckpt, const solver::Case& c, double dt);
// What a case changes of the case text a checkpoint (or field file) was written with, beyond
// what checkpoint_mismatch refuses: each changed setting as "key.path: before -> after" (or
// "added", "removed"), in the order of the keys, numbers compared by value. What only says
// how long, where or on what the run goes (time.end, time.steps, time.dt, output, probes,
// checkpoint, backend, fusion, parallel) is not a change of the physics and is not listed
// (a restart's dt is the checkpoint's: checkpoint_mismatch refuses another). Empty when
// either text is empty or not YAML (nothing to compare).
std::vector<std::string> case_changes(const std::string& written, const std::string& now);
// The probes both case texts name whose points differ, each as "name: [x, y] -> [x', y']"
// (coordinates compared by value), in the order `now` writes them: a restart writing on into
// probes.csv would join two points' readings in one column. Empty when either text is empty
// or not YAML.
std::vector<std::string> moved_probes(const std::string& written, const std::string& now);
// The checkpoint.keep of a case text as written (0, every checkpoint kept, where the case gives
// none or the text is empty, not YAML or not a number).
std::int64_t case_checkpoint_keep(const std::string& case_text);
// The output.name of a case text as written (its default, "field", where the case gives none);
// empty when the text is empty or not YAML.
std::string case_output_name(const std::string& case_text);

}  // namespace heatsim::io
