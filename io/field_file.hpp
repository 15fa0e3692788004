// HDF5 field files: the one layout shared by output files and checkpoints, and the crash-safe
// replacement every writer in io/ goes through.
//
// Layout (docs/output.md): dataset `/u` of rank `dims`, dimensions listed z, y, x (x fastest),
// stored in the run's precision (fp64 -> IEEE double, fp32 -> IEEE float). The root group holds
// the attributes below; vectors (n, spacing, origin) are listed x, y, z with `dims` entries.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/case.hpp"

namespace heatsim::io {

// Name of the field dataset (and of the array ParaView shows).
inline constexpr const char* kFieldDataset = "u";
// A checkpoint of a bdf2 run also holds the field of the step before, always in fp64.
inline constexpr const char* kPreviousFieldDataset = "u_previous";

// What a field file says about itself (HDF5 attributes).
struct FieldMeta {
  std::int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;
  double alpha = 0.0;
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};  // x, y, z
  std::array<double, 3> spacing{1, 1, 1};
  std::array<double, 3> origin{0, 0, 0};
  std::string scheme;
  std::string backend;
  std::string precision;  // "fp64" | "fp32"
  std::string version;
  std::string case_yaml;
  // The run's lineage: case_digest() of the case text the run began from at step 0, carried
  // by every restart (whatever case it continues under), so that the files of one run share it
  // and another run's files tell themselves apart. Empty in files from before the attribute.
  std::string run_digest;
  int fusion = 0;  // time steps per pass of the run that wrote it; 0: not recorded
  // A steady state (time.method steady): no time stands for it; step, time and dt are 0.
  // Written as attribute `steady` = 1, absent otherwise.
  bool steady = false;
  // Output files only: the deflate level of the dataset (byte shuffle, then deflate, in chunks
  // of about 1 MiB), 0 for a plain contiguous dataset. Not an attribute: the dataset's filters
  // say it, and any HDF5 reader undoes them.
  int compression = 0;

  std::int64_t points() const { return n[0] * n[1] * n[2]; }
};

FieldMeta make_meta(const solver::Case& c, double dt, const std::string& backend,
                    std::int64_t step, double time);

// A case text's digest (FNV-1a, 64 bits, as 16 hex digits): the run lineage's value.
std::string case_digest(const std::string& case_text);
// The lineage of the run that wrote a file: its run_digest, or for a file from before that
// attribute the digest of its case text (the run's, where it began there).
std::string run_lineage(const FieldMeta& m);
// A run that continues another under a changed case (a face's value, a material: what
// case_changes lists) is a branch of it: from the restart step on its fields are not the
// other run's. Its lineage is a digest of its own, then its ancestors', each with the step the
// branch left it at: "d_branch;d_parent@50000;d_grandparent@20000". A lineage without ancestors
// is the digest alone, as every lineage was before branches.
std::string branch_lineage(const std::string& parent, std::int64_t step,
                           const std::string& case_text);
// Whether a file that a run of lineage `file` wrote at step `step` belongs to the history of
// the run of lineage `run`: the same run (its first digest), or an ancestor's file at or
// before the step the run's line left that ancestor.
bool in_run_history(const std::string& run, const std::string& file, std::int64_t step);
// The digest of the run a lineage branched from last (its first ancestor); empty for a run
// that is no branch.
std::string lineage_parent(const std::string& lineage);
// The step a branch left its parent at (the number after lineage_parent's "@"), as written;
// empty for a run that is no branch.
std::string lineage_branch_step(const std::string& lineage);
// A lineage's own digest (its first field).
std::string lineage_head(const std::string& lineage);

// Output files are plain contiguous datasets any HDF5 reader opens (chunked and compressed with
// shuffle + deflate when meta.compression > 0); checkpoints are chunked with the Fletcher32
// checksum filter on the data and carry `meta_checksum`, a checksum of their attributes. Both
// use the default (earliest) HDF5 file format.
enum class FieldFileKind { output, checkpoint };
const char* to_string(FieldFileKind kind);

// Writes the field ([z][y][x], x fastest; meta.points() values) stored in meta.precision, and
// for a checkpoint a non-empty `previous` (as many values) as kPreviousFieldDataset.
// Crash-safe: the file is built in memory, written to `path.tmp` in the same directory,
// fsynced and renamed over `path` (then the directory is fsynced); on any failure (a full
// disk included) the temporary is removed and a file already at `path` is left untouched.
// Throws std::runtime_error naming the file.
void write_field_file(const std::string& path, const FieldMeta& meta,
                      const std::vector<double>& field, FieldFileKind kind = FieldFileKind::output,
                      const std::vector<double>& previous = {});

// How far a file's write has got, read by a progress line on another thread: the file's size
// once its image is built, and the bytes of it on the disk so far.
struct WriteProgress {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> written{0};
  // Where the last file's time went, on the writing thread: building its bytes in memory,
  // write(2), and fsync (the data reaching the disk).
  double build_seconds = 0.0;
  double write_seconds = 0.0;
  double sync_seconds = 0.0;
};

// A field's values as a writer holds them: `count` doubles, or for an fp32 run `count` floats
// (its staging at half the bytes); one of the two pointers is set.
struct FieldValues {
  const double* doubles = nullptr;
  const float* floats = nullptr;
  std::size_t count = 0;
};

// A further node field of an output file (output.fields): `components` values per node (1, or
// 3 for a vector: x, y, z), node after node in memory order. Stored in the file's precision as
// dataset `name`, of rank dims listed z, y, x like /u, a vector's with one more extent last
// (its components), with /u's filters (none, or shuffle and deflate).
struct NodeField {
  std::string name;
  int components = 1;
  std::vector<double> values;
};

// The same from `field` (a writer's staging buffer), reporting progress. Floats go only into
// an fp32 file (meta.precision). An output file holds `extras` too.
void write_field_file(const std::string& path, const FieldMeta& meta, const FieldValues& field,
                      FieldFileKind kind, const std::vector<double>& previous = {},
                      WriteProgress* progress = nullptr, const std::vector<NodeField>& extras = {});

// The part of a field one process of a decomposed run holds: the box of grid nodes (lower
// corner and extent, x, y, z; 0 and 1 on unused axes) and its values, x fastest.
struct FieldPart {
  std::array<std::int64_t, 3> lo{0, 0, 0};
  std::array<std::int64_t, 3> extent{1, 1, 1};
  std::vector<double> values;
};

// True when this build writes field files collectively (parallel HDF5 under MPI); false with
// a serial HDF5, whose decomposed runs gather each file to rank 0.
bool collective_field_files();
// How this build's decomposed runs write their files, for `heatsim info`: "parallel HDF5,
// collective writes" or "serial HDF5, gathered to rank 0 in slabs".
std::string field_file_layout();
// Collective: every process of the run calls it with the same path, meta and kind, each with
// its own part (the parts tile the grid). The file is write_field_file's (the same dataset,
// chunking, filters and attributes; h5diff finds no difference), written
//   - with a parallel HDF5 (collective_field_files()), through MPI-IO by all processes at
//     once: each its hyperslab in one collective transfer;
//   - with a serial HDF5, by rank 0 alone: the dataset is cut into slabs along its slowest
//     axes (whole chunks, at most kSlabBytes each unless one chunk is larger), and for each
//     slab every process sends rank 0 the piece of its part inside (MPI point to point), so
//     that beside its part no process holds more than a slab and its pieces.
// An output file's further node fields (`extras`, output.fields) come whole from rank 0:
// every process lists them with the same names and components, rank 0 alone with their
// values (the others' empty); they are written as write_field_file writes them.
// Crash-safe: written to `path.tmp`, fsynced by rank 0 and renamed over `path` once complete.
// A process that fails prints why and ends the run (MPI_Abort, exit status 1) when there are
// several; alone, it throws std::runtime_error naming the file.
void write_field_file_collective(const std::string& path, const FieldMeta& meta,
                                 const FieldPart& part, FieldFileKind kind,
                                 const std::vector<NodeField>& extras = {});
// Collective, the reverse for a restart: every process calls it with the file's `meta` (its
// header, read_field_header) and the box of its part (part.lo, part.extent); rank 0 reads the
// field dataset slab by slab (checksums verified) and sends every process the piece of its box
// inside, so that each ends with its part.values. Throws std::runtime_error naming the file on
// rank 0 when the dataset cannot be read; the others are then left waiting (the caller ends
// the run, as app/main.cpp does for any rank failing alone).
void read_field_file_collective(const std::string& path, const FieldMeta& meta, FieldPart& part);
// The most bytes of field a slab of the two calls above holds (a single chunk may be larger).
inline constexpr std::size_t kSlabBytes = std::size_t{32} << 20;

struct FieldFile {
  FieldFileKind kind = FieldFileKind::output;
  FieldMeta meta;
  std::vector<double> field;  // converted to double exactly (fp32 files hold floats)
  bool checksummed = false;   // the dataset carries the Fletcher32 filter
  int deflate = 0;            // the dataset's deflate level; 0: not compressed
  std::uint64_t stored_bytes = 0;  // the dataset's bytes in the file (after its filters)
  std::vector<double> previous;  // a checkpoint's kPreviousFieldDataset; empty when it has none
};

// Reads a file written by write_field_file; the checksum (if any) is verified on read.
// Throws std::runtime_error naming the file when it is missing, truncated, corrupt or not a
// heatsim field file.
FieldFile read_field_file(const std::string& path);
// Attributes only, without reading the dataset.
FieldFile read_field_header(const std::string& path);

// A numeric dataset of any HDF5 file (not only heatsim's): its dimensions as stored, slowest
// first, and with `with_data` its values converted to double by HDF5. Throws
// std::runtime_error naming the file when it is missing or unreadable, and DatasetError
// (naming the file and the dataset) when the file opens but the dataset is missing, is not a
// dataset of integers or floating-point numbers, or cannot be read.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
struct Dataset {
  std::vector<std::int64_t> dims;
  std::vector<double> values;
  bool integer = false;  // stored as integers (a material map), else as floating point
};
Dataset read_dataset(const std::string& path, const std::string& name, bool with_data);

// Crash-safe replacement of a whole text file (used for the XDMF index): temporary + fsync +
// rename + fsync of the directory. Throws std::runtime_error naming the file.
void write_text_file_atomically(const std::string& path, const std::string& text);
// The same for a file that `write` creates at the temporary path it is given (an HDF5 file
// written in place): the temporary is fsynced before it takes the name; removed on failure.
void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& tmp)>& write);

// Suffix of the temporaries the writers above create beside their target.
inline constexpr const char* kTemporarySuffix = ".tmp";

}  // namespace heatsim::io
