#include "field_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "solver/case.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/version.hpp"

namespace heatsim::io {

namespace fs = std::filesystem;

namespace {

// ---- HDF5 handles and errors -----------------------------------------------------------

// HDF5 prints its error stack to stderr by default; we turn failures into exceptions instead.
void silence_hdf5_errors() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

// The most specific message on HDF5's error stack (e.g. "data error detected by Fletcher32
// checksum"), then clears the stack.
std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        auto* out = static_cast<std::string*>(data);
        if (out->empty() && err->desc && *err->desc) *out = err->desc;
        return 0;
      },
      &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail;
}

[[noreturn]] void throw_hdf5(const std::string& what) {
  const std::string detail = hdf5_error_detail();
  throw std::runtime_error(detail.empty() ? what : what + " (HDF5: " + detail + ")");
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw_hdf5(what);
}

// Owns an HDF5 identifier; close() reports the closing status (H5Fclose is where buffered
// data reaches the file, so its failure matters).
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  herr_t close() { return id_ >= 0 ? closer_(std::exchange(id_, -1)) : 0; }

 private:
  hid_t id_;
  Closer closer_;
};

Handle check_id(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw_hdf5(what);
  return Handle(id, closer);
}

constexpr const char* kFormat = "heatsim field";
constexpr std::int64_t kFormatVersion = 1;
// Chunks of checkpoints stay below this size (HDF5 caps a chunk at 4 GiB; smaller chunks
// keep the checksum granularity and the read buffers reasonable).
constexpr std::size_t kMaxChunkBytes = std::size_t{16} << 20;
// Chunks of compressed output files: large enough for deflate to find what repeats, small
// enough that every thread has chunks to compress and a reader inflates little it does not need.
constexpr std::size_t kCompressedChunkBytes = std::size_t{1} << 20;

// ---- attributes ------------------------------------------------------------------------

void write_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                     const void* data, hsize_t count) {
  Handle space = count == 0 ? check_id(H5Screate(H5S_SCALAR), H5Sclose, "dataspace")
                            : check_id(H5Screate_simple(1, &count, nullptr), H5Sclose,
                                       "dataspace");
  Handle attr = check_id(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                         H5Aclose, std::string("attribute ") + name);
  check(H5Awrite(attr.get(), mem_type, data), std::string("attribute ") + name);
}

void write_double(hid_t loc, const char* name, double v) {
  write_attribute(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 0);
}
void write_int64(hid_t loc, const char* name, std::int64_t v) {
  write_attribute(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v, 0);
}
void write_doubles(hid_t loc, const char* name, const double* v, int count) {
  write_attribute(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, static_cast<hsize_t>(count));
}
void write_int64s(hid_t loc, const char* name, const std::int64_t* v, int count) {
  write_attribute(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v, static_cast<hsize_t>(count));
}
// Variable-length UTF-8 strings: no size limit in the object header (the case text can be long).
void write_string(hid_t loc, const char* name, const std::string& s) {
  Handle type = check_id(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
  const char* p = s.c_str();
  write_attribute(loc, name, type.get(), type.get(), &p, 0);
}

Handle open_attribute(hid_t loc, const char* name) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists <= 0)
    throw std::runtime_error(std::string("not a heatsim field file (attribute '") + name +
                             "' is missing)");
  return check_id(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
}

std::vector<double> read_doubles(hid_t loc, const char* name) {
  Handle attr = open_attribute(loc, name);
  Handle space = check_id(H5Aget_space(attr.get()), H5Sclose, name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 1 || count > 3)
    throw std::runtime_error(std::string("attribute '") + name + "' has " +
                             std::to_string(count) + " values");
  std::vector<double> v(static_cast<std::size_t>(count));
  check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, v.data()), std::string("attribute ") + name);
  return v;
}
std::vector<std::int64_t> read_int64s(hid_t loc, const char* name) {
  Handle attr = open_attribute(loc, name);
  Handle space = check_id(H5Aget_space(attr.get()), H5Sclose, name);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 1 || count > 3)
    throw std::runtime_error(std::string("attribute '") + name + "' has " +
                             std::to_string(count) + " values");
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()), std::string("attribute ") + name);
  return v;
}
double read_double(hid_t loc, const char* name) { return read_doubles(loc, name).at(0); }
std::int64_t read_int64(hid_t loc, const char* name) { return read_int64s(loc, name).at(0); }

std::string read_string(hid_t loc, const char* name) {
  Handle attr = open_attribute(loc, name);
  Handle type = check_id(H5Aget_type(attr.get()), H5Tclose, name);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw std::runtime_error(std::string("attribute '") + name + "' is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {
    // Read with the file's own string type: HDF5 converts no character sets.
    char* p = nullptr;
    check(H5Aread(attr.get(), type.get(), &p), std::string("attribute ") + name);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string s(size, '\0');
  check(H5Aread(attr.get(), type.get(), s.data()), std::string("attribute ") + name);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// ---- files -----------------------------------------------------------------------------

// Dataset dimensions, slowest first (z, y, x for 3D).
std::vector<hsize_t> dataset_dims(const FieldMeta& m) {
  std::vector<hsize_t> d;
  for (int a = m.dims - 1; a >= 0; --a) d.push_back(static_cast<hsize_t>(m.n[a]));
  return d;
}

std::vector<hsize_t> chunk_dims(std::vector<hsize_t> d, std::size_t element_bytes,
                                std::size_t max_bytes = kMaxChunkBytes) {
  auto bytes = [&] {
    std::size_t b = element_bytes;
    for (hsize_t v : d) b *= static_cast<std::size_t>(v);
    return b;
  };
  // Halve the slowest axis that still can be halved until the chunk fits.
  while (bytes() > max_bytes) {
    auto it = std::find_if(d.begin(), d.end(), [](hsize_t v) { return v > 1; });
    if (it == d.end()) break;
    *it = (*it + 1) / 2;
  }
  return d;
}

void validate_meta(const FieldMeta& m, std::size_t values) {
  if (m.dims < 1 || m.dims > 3) throw std::runtime_error("dims must be 1, 2 or 3");
  if (m.precision != "fp64" && m.precision != "fp32")
    throw std::runtime_error("precision must be fp64 or fp32, not '" + m.precision + "'");
  for (int a = 0; a < 3; ++a)
    if (m.n[a] < 1 || (a >= m.dims && m.n[a] != 1))
      throw std::runtime_error("invalid grid size on axis " + std::to_string(a));
  if (static_cast<std::int64_t>(values) != m.points())
    throw std::runtime_error("field holds " + std::to_string(values) + " values, grid has " +
                             std::to_string(m.points()));
  if (m.compression < 0 || m.compression > 9)
    throw std::runtime_error("compression must be a deflate level 0-9, not " +
                             std::to_string(m.compression));
}

// FNV-1a (64 bit): `h` (the offset basis to begin) folded with n bytes at p.
constexpr std::uint64_t kFnvBasis = 14695981039346656037ull;
std::uint64_t fnv1a(std::uint64_t h, const void* p, std::size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

// FNV-1a over the attributes in a fixed order: Fletcher32 guards only the data, and a
// checkpoint's step, time and dt matter as much as its field.
std::uint64_t meta_checksum(const FieldMeta& m, FieldFileKind kind) {
  std::uint64_t h = kFnvBasis;
  auto bytes = [&h](const void* p, std::size_t n) { h = fnv1a(h, p, n); };
  auto text = [&](const std::string& s) {
    const std::uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  };
  const std::int64_t dims = m.dims;
  text(to_string(kind));
  bytes(&m.step, sizeof m.step);
  bytes(&m.time, sizeof m.time);
  bytes(&m.dt, sizeof m.dt);
  bytes(&m.alpha, sizeof m.alpha);
  bytes(&dims, sizeof dims);
  for (int a = 0; a < m.dims; ++a) {
    bytes(&m.n[a], sizeof m.n[a]);
    bytes(&m.spacing[a], sizeof m.spacing[a]);
    bytes(&m.origin[a], sizeof m.origin[a]);
  }
  for (const std::string* s : {&m.scheme, &m.backend, &m.precision, &m.version, &m.case_yaml})
    text(*s);
  if (m.fusion > 0) {  // files from before the attribute keep their checksum
    const std::int64_t fusion = m.fusion;
    bytes(&fusion, sizeof fusion);
  }
  if (!m.run_digest.empty()) text(m.run_digest);  // likewise
  return h;
}

bool compressed(const FieldMeta& m, FieldFileKind kind) {
  return kind == FieldFileKind::output && m.compression > 0;
}

// The field dataset's chunk (slowest axis first); empty for a contiguous dataset.
std::vector<hsize_t> field_chunk(const FieldMeta& m, FieldFileKind kind) {
  const std::size_t value_bytes = m.precision == "fp32" ? 4 : 8;
  if (kind == FieldFileKind::checkpoint) return chunk_dims(dataset_dims(m), value_bytes);
  if (compressed(m, kind)) return chunk_dims(dataset_dims(m), value_bytes, kCompressedChunkBytes);
  return {};
}

// The dataset's creation properties: no modification times in the object header (the same
// state gives the same bytes); checkpoints chunked with the Fletcher32 checksum filter;
// compressed outputs chunked with shuffle (the values' bytes grouped by significance, which
// deflate finds far more repetition in) and deflate.
Handle field_dataset_properties(const FieldMeta& m, FieldFileKind kind) {
  Handle dcpl = check_id(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  check(H5Pset_obj_track_times(dcpl.get(), false), "dataset properties");
  const std::vector<hsize_t> chunk = field_chunk(m, kind);
  if (!chunk.empty())
    check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "chunking");
  if (kind == FieldFileKind::checkpoint) {
    check(H5Pset_fletcher32(dcpl.get()), "checksum filter");
  } else if (compressed(m, kind)) {
    check(H5Pset_shuffle(dcpl.get()), "shuffle filter");
    check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(m.compression)), "deflate filter");
  }
  return dcpl;
}

// The root group's attributes, in the order every writer uses.
void write_field_attributes(hid_t root, const FieldMeta& m, FieldFileKind kind) {
  write_string(root, "format", kFormat);
  write_int64(root, "format_version", kFormatVersion);
  write_string(root, "kind", to_string(kind));
  write_int64(root, "step", m.step);
  write_double(root, "time", m.time);
  write_double(root, "dt", m.dt);
  write_double(root, "alpha", m.alpha);
  write_int64(root, "dims", m.dims);
  write_int64s(root, "n", m.n.data(), m.dims);
  write_doubles(root, "spacing", m.spacing.data(), m.dims);
  write_doubles(root, "origin", m.origin.data(), m.dims);
  write_string(root, "scheme", m.scheme);
  write_string(root, "backend", m.backend);
  write_string(root, "precision", m.precision);
  write_string(root, "heatsim_version", m.version);
  write_string(root, "case_yaml", m.case_yaml);
  if (m.fusion > 0) write_int64(root, "fusion", m.fusion);
  if (!m.run_digest.empty()) write_string(root, "run_digest", m.run_digest);
  if (m.steady) write_int64(root, "steady", 1);
  if (kind == FieldFileKind::checkpoint) {
    const std::uint64_t sum = meta_checksum(m, kind);
    write_attribute(root, "meta_checksum", H5T_STD_U64LE, H5T_NATIVE_UINT64, &sum, 0);
  }
}

// Starts the disk writing `size` bytes at `offset` of `fd` now, without waiting (Linux's
// sync_file_range): written pieces go to the disk while the next ones are still being copied
// into the page cache. Otherwise the kernel starts only when the dirty pages pass a share of
// the memory (more than a whole 8.6 GB file on a 128 GB machine), so the copy and the disk
// took turns and the closing fsync did all of the disk's work. Durability still comes from
// the fsync; a file system without it (EINVAL, ESPIPE) just leaves it to the fsync.
void start_writeback(int fd, std::size_t offset, std::size_t size) {
#ifdef __linux__
  (void)::sync_file_range(fd, static_cast<off64_t>(offset), static_cast<off64_t>(size),
                          SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
  (void)offset;
  (void)size;
#endif
}

// Writes all bytes to a new file and fsyncs it; errors carry strerror (e.g. "No space left
// on device").
// With `progress`, its counts follow the write (in pieces of 64 MiB, so a progress line on
// another thread sees the bytes move), and it is told the seconds of write(2) and fsync.
void write_bytes(const std::string& path, const char* data, std::size_t size,
                 WriteProgress* progress = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  if (progress) progress->bytes = size;
  constexpr std::size_t kPiece = std::size_t{64} << 20;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, std::min(kPiece, size - done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw std::runtime_error(std::strerror(err));
    }
    start_writeback(fd, done, static_cast<std::size_t>(n));
    done += static_cast<std::size_t>(n);
    if (progress) progress->written = done;
  }
  const auto written = std::chrono::steady_clock::now();
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(std::strerror(err));
  }
  if (::close(fd) != 0) throw std::runtime_error(std::strerror(errno));
  if (progress) {
    using Seconds = std::chrono::duration<double>;
    progress->write_seconds = Seconds(written - start).count();
    progress->sync_seconds = Seconds(std::chrono::steady_clock::now() - written).count();
  }
}

// A new file written at offsets (pwrite), from several threads at once if need be, then
// fsynced: a contiguous output's values go out while HDF5 is still building its metadata.
// Errors carry strerror.
class OutFile {
 public:
  explicit OutFile(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error(std::strerror(errno));
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  ~OutFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // `size` bytes at `offset`, in pieces of 64 MiB, each counted in `done` (if given).
  void write_at(std::size_t offset, const char* data, std::size_t size,
                std::atomic<std::uint64_t>* done) {
    constexpr std::size_t kPiece = std::size_t{64} << 20;
    std::size_t at = 0;
    while (at < size) {
      const ssize_t n = ::pwrite(fd_, data + at, std::min(kPiece, size - at),
                                 static_cast<off_t>(offset + at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(std::strerror(n < 0 ? errno : EIO));
      start_writeback(fd_, offset + at, static_cast<std::size_t>(n));
      at += static_cast<std::size_t>(n);
      if (done) done->fetch_add(static_cast<std::uint64_t>(n));
    }
  }

  // fsync, then close.
  void finish() {
    if (::fsync(fd_) != 0) throw std::runtime_error(std::strerror(errno));
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw std::runtime_error(std::strerror(errno));
  }

 private:
  int fd_;
};

// ---- the field's bytes -----------------------------------------------------------------

// The files store little-endian IEEE values (H5T_IEEE_F32LE / F64LE); the fast paths below
// lay out the file's bytes themselves, which is a plain copy only on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "field files are written as little-endian bytes");

// `count` values from `in` in the file's type (float when fp32), at `out` (any alignment).
template <typename In>
void store_from(const In* in, std::size_t count, bool fp32, unsigned char* out) {
  if (fp32 && std::is_same_v<In, float>) {
    std::memcpy(out, in, 4 * count);
  } else if (!fp32 && std::is_same_v<In, double>) {
    std::memcpy(out, in, 8 * count);
  } else if (fp32) {
    for (std::size_t i = 0; i < count; ++i) {
      const float v = static_cast<float>(in[i]);
      std::memcpy(out + 4 * i, &v, 4);
    }
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      const double v = static_cast<double>(in[i]);
      std::memcpy(out + 8 * i, &v, 8);
    }
  }
}

// Values [first, first + count) of the field in the file's type, at `out` (any alignment).
// An fp32 run's values are floats, whether held as floats or widened to double: the
// narrowing is exact.
void store_values(const FieldValues& field, std::size_t first, std::size_t count, bool fp32,
                  unsigned char* out) {
  if (field.floats)
    store_from(field.floats + first, count, fp32, out);
  else
    store_from(field.doubles + first, count, fp32, out);
}

// The same over the whole field on every thread, in pieces of 1 MiB or so: each value is
// converted on its own, so the bytes are those of one thread.
void store_field(const FieldValues& field, std::size_t count, bool fp32, unsigned char* out) {
  const std::int64_t piece = 1 << 17;
  const std::int64_t values = static_cast<std::int64_t>(count);
  const std::size_t size = fp32 ? 4 : 8;
#pragma omp parallel for schedule(static)
  for (std::int64_t first = 0; first < values; first += piece)
    store_values(field, static_cast<std::size_t>(first),
                 static_cast<std::size_t>(std::min(piece, values - first)), fp32,
                 out + static_cast<std::size_t>(first) * size);
}

// HDF5's Fletcher32 (H5_checksum_fletcher32, the filter H5Pset_fletcher32 adds): 16-bit
// words taken big-end first, sums folded every 360 words; stored after the chunk's bytes,
// little-endian. Computed here so that chunks are checksummed on every thread.
std::uint32_t fletcher32(const unsigned char* data, std::size_t bytes) {
  std::size_t words = bytes / 2;
  std::uint32_t sum1 = 0, sum2 = 0;
  while (words > 0) {
    std::size_t run = std::min<std::size_t>(words, 360);
    words -= run;
    for (; run > 0; --run, data += 2) {
      sum1 += (static_cast<std::uint32_t>(data[0]) << 8) | data[1];
      sum2 += sum1;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2) {
    sum1 += static_cast<std::uint32_t>(*data) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

// HDF5's shuffle filter (H5Z_FILTER_SHUFFLE): byte j of value i goes to j * values + i, so
// the values' sign and exponent bytes lie together.
void shuffle_bytes(const unsigned char* in, std::size_t bytes, std::size_t value_bytes,
                   unsigned char* out) {
  const std::size_t values = bytes / value_bytes;
  for (std::size_t j = 0; j < value_bytes; ++j) {
    unsigned char* to = out + j * values;
    const unsigned char* from = in + j;
    for (std::size_t i = 0; i < values; ++i) to[i] = from[i * value_bytes];
  }
  std::memcpy(out + values * value_bytes, in + values * value_bytes, bytes % value_bytes);
}

// How a dataset's chunks are filtered, as its pipeline (field_dataset_properties) would:
// a checkpoint's with the Fletcher32 sum, a compressed output's by shuffle then deflate.
struct ChunkFilters {
  bool fletcher32 = false;
  int deflate = 0;  // level; 0: no shuffle, no deflate
};

// A dataset's chunks, filtered as HDF5 would (the chunk's values in C order, zeros beyond the
// grid's edge as in a chunk HDF5 fills, then the filters), handed to H5Dwrite_chunk in the
// order H5Dwrite takes them (chunk index ascending), so the file is the one H5Dwrite makes;
// but a batch of chunks is built, checksummed or compressed on every thread, where H5Dwrite
// filters one chunk after another on one. Deflate is zlib's compress2 at the level, as
// HDF5's filter calls it.
// `window` (a decomposed file's slab, gathered on rank 0): `field` holds just the box of the
// dataset with this lower corner and extent (x, y, z, as parallel::Box), whose chunks, whole
// ones or those the dataset's edge cuts, are the ones written; none: the whole dataset.
void write_chunks(hid_t dset, const FieldMeta& m, const FieldValues& field,
                  const std::vector<hsize_t>& chunk, ChunkFilters filters,
                  const solver::parallel::Box* window = nullptr) {
  const bool fp32 = m.precision == "fp32";
  const std::size_t value_bytes = fp32 ? 4 : 8;
  // Dataset and chunk extents as z, y, x (1 on unused axes); the window's corner and extent,
  // and the range of chunk indices it covers.
  std::array<std::int64_t, 3> n{1, 1, 1}, c{1, 1, 1}, count{1, 1, 1};
  const std::size_t rank = chunk.size();
  for (std::size_t a = 0; a < rank; ++a) {
    n[3 - rank + a] = m.n[rank - 1 - a];
    c[3 - rank + a] = static_cast<std::int64_t>(chunk[a]);
  }
  std::array<std::int64_t, 3> lo{0, 0, 0}, extent = n, first_chunk{0, 0, 0};
  if (window)
    for (int a = 0; a < 3; ++a) {
      lo[a] = window->lo[2 - a];
      extent[a] = window->extent[2 - a];
      if (lo[a] % c[a] != 0 || (lo[a] + extent[a] != n[a] && extent[a] % c[a] != 0))
        throw std::logic_error("write_chunks: a window that cuts chunks");
    }
  for (int a = 0; a < 3; ++a) {
    first_chunk[a] = lo[a] / c[a];
    count[a] = (extent[a] + c[a] - 1) / c[a];
  }
  const std::int64_t chunks = count[0] * count[1] * count[2];
  const std::size_t data_bytes = static_cast<std::size_t>(c[0] * c[1] * c[2]) * value_bytes;
  const bool deflate = filters.deflate > 0;
  // Room for one filtered chunk: the values and the checksum, or deflate's worst case.
  const std::size_t chunk_bytes =
      deflate ? static_cast<std::size_t>(compressBound(static_cast<uLong>(data_bytes)))
              : data_bytes + (filters.fletcher32 ? 4 : 0);
#ifdef _OPENMP
  const int threads = std::max(1, omp_get_max_threads());
#else
  const int threads = 1;  // a build without OpenMP (the case fuzzer's)
#endif
  const std::int64_t batch = std::min<std::int64_t>(chunks, 2 * threads);
  // Not zero-filled: every byte a chunk hands to HDF5 is written first (2 x threads x 16 MiB
  // for a checkpoint, which a vector would clear on one thread).
  const std::unique_ptr<unsigned char[]> buffers(
      new unsigned char[static_cast<std::size_t>(batch) * chunk_bytes]);
  std::vector<std::size_t> filtered_bytes(static_cast<std::size_t>(batch), chunk_bytes);
  for (std::int64_t first = 0; first < chunks; first += batch) {
    const std::int64_t in_batch = std::min(batch, chunks - first);
    bool deflate_failed = false;
#pragma omp parallel
    {
      // A compressed chunk is laid out and shuffled here, then deflated into the batch.
      const std::size_t scratch = deflate ? data_bytes : 0;
      const std::unique_ptr<unsigned char[]> raw(new unsigned char[scratch]),
          shuffled(new unsigned char[scratch]);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < in_batch; ++b) {
        const std::int64_t k = first + b;
        const std::array<std::int64_t, 3> at{
            (first_chunk[0] + k / (count[1] * count[2])) * c[0],
            (first_chunk[1] + k / count[2] % count[1]) * c[1],
            (first_chunk[2] + k % count[2]) * c[2]};
        unsigned char* slot = buffers.get() + static_cast<std::size_t>(b) * chunk_bytes;
        unsigned char* out = deflate ? raw.get() : slot;
        const std::int64_t rows_z = std::min(c[0], n[0] - at[0]);
        const std::int64_t rows_y = std::min(c[1], n[1] - at[1]);
        const std::int64_t row = std::min(c[2], n[2] - at[2]);
        // Only an edge chunk has bytes no value lands on.
        if (rows_z < c[0] || rows_y < c[1] || row < c[2]) std::memset(out, 0, data_bytes);
        for (std::int64_t z = 0; z < rows_z; ++z)
          for (std::int64_t y = 0; y < rows_y; ++y) {
            const std::int64_t from =
                ((at[0] - lo[0] + z) * extent[1] + at[1] - lo[1] + y) * extent[2] + at[2] - lo[2];
            const std::int64_t to = (z * c[1] + y) * c[2];
            store_values(field, static_cast<std::size_t>(from), static_cast<std::size_t>(row),
                         fp32, out + static_cast<std::size_t>(to) * value_bytes);
          }
        if (deflate) {
          shuffle_bytes(raw.get(), data_bytes, value_bytes, shuffled.get());
          uLongf size = static_cast<uLongf>(chunk_bytes);
          if (compress2(slot, &size, shuffled.get(), static_cast<uLong>(data_bytes),
                        filters.deflate) != Z_OK) {
#pragma omp atomic write
            deflate_failed = true;
          }
          filtered_bytes[static_cast<std::size_t>(b)] = size;
        } else if (filters.fletcher32) {
          const std::uint32_t sum = fletcher32(out, data_bytes);
          for (int i = 0; i < 4; ++i) out[data_bytes + i] = static_cast<unsigned char>(sum >> 8 * i);
        }
      }
    }
    if (deflate_failed) throw std::runtime_error("cannot compress the field (zlib)");
    for (std::int64_t b = 0; b < in_batch; ++b) {
      const std::int64_t k = first + b;
      const std::array<std::int64_t, 3> at{(first_chunk[0] + k / (count[1] * count[2])) * c[0],
                                           (first_chunk[1] + k / count[2] % count[1]) * c[1],
                                           (first_chunk[2] + k % count[2]) * c[2]};
      std::vector<hsize_t> offset(rank);
      for (std::size_t a = 0; a < rank; ++a) offset[a] = static_cast<hsize_t>(at[3 - rank + a]);
      check(H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset.data(),
                           filtered_bytes[static_cast<std::size_t>(b)],
                           buffers.get() + static_cast<std::size_t>(b) * chunk_bytes),
            "cannot write the field");
    }
  }
}

// A chunked dataset `name` ([z][y][x] in m.precision; a checkpoint's with the Fletcher32
// filter, a compressed output's with shuffle and deflate), its chunks built by write_chunks.
void write_chunked_dataset(hid_t file, const char* name, const FieldMeta& m, FieldFileKind kind,
                           hid_t space, const FieldValues& values) {
  Handle dcpl = field_dataset_properties(m, kind);
  Handle dset =
      check_id(H5Dcreate2(file, name, m.precision == "fp32" ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                          space, H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
               H5Dclose, "cannot create the dataset");
  std::vector<hsize_t> chunk(dataset_dims(m).size());
  check(H5Pget_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "chunking");
  ChunkFilters filters;
  filters.fletcher32 = kind == FieldFileKind::checkpoint;
  filters.deflate = compressed(m, kind) ? m.compression : 0;
  write_chunks(dset.get(), m, values, chunk, filters);
  check(dset.close(), "cannot write the field");
}

// The in-memory file's buffer. HDF5's core driver grows it by realloc and clears what it adds
// on one thread; a fresh buffer of a large file's size then costs a page fault per 4 KiB on
// that thread (with write(2)'s copy, most of an output's time in perf on the development VM).
// HDF5's file image callbacks hand it the buffer of the last file instead, kept here, so a
// run touches its pages once; a new buffer has its pages touched on every thread first.
class ImageBuffers {
 public:
  static ImageBuffers& instance() {
    static ImageBuffers pool;
    return pool;
  }
  ImageBuffers(const ImageBuffers&) = delete;
  ImageBuffers& operator=(const ImageBuffers&) = delete;
  ~ImageBuffers() { std::free(kept_); }

  // realloc's contract (null: a new buffer), with the kept buffer taken when it is large enough.
  void* resize(void* ptr, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ptr) {
      const auto it = in_use_.find(ptr);
      if (it != in_use_.end() && it->second >= size) return ptr;
      // Grown as realloc would, into the kept buffer or a new one touched on every thread
      // (HDF5 then clears the added bytes on one thread: on untouched pages that is a page
      // fault per 4 KiB, 7 s for 8.6 GB).
      const std::size_t had = it != in_use_.end() ? it->second : 0;
      void* grown = take(size);
      if (!grown) return nullptr;  // realloc's contract: `ptr` stays valid
      std::memcpy(grown, ptr, std::min(had, size));
      if (it != in_use_.end()) in_use_.erase(it);
      std::free(ptr);
      return grown;
    }
    return take(size);
  }

  // Keeps the larger of `ptr` and the kept buffer, frees the other.
  void release(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = in_use_.find(ptr);
    const std::size_t size = it != in_use_.end() ? it->second : 0;
    if (it != in_use_.end()) in_use_.erase(it);
    if (size > kept_size_) {
      std::free(kept_);
      kept_ = ptr;
      kept_size_ = size;
    } else {
      std::free(ptr);
    }
  }

 private:
  ImageBuffers() = default;
  // A buffer of at least `size` bytes, now in use: the kept one when it is large enough, else
  // a new one with its pages touched on every thread. Null when there is no memory.
  void* take(std::size_t size) {
    if (kept_ && kept_size_ >= size) {
      void* p = std::exchange(kept_, nullptr);
      in_use_[p] = std::exchange(kept_size_, 0);
      return p;
    }
    auto* p = static_cast<unsigned char*>(std::malloc(size));
    if (!p) return nullptr;
    const std::int64_t pages = static_cast<std::int64_t>(size / 4096);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < pages; ++i) p[i * 4096] = 0;
    in_use_[p] = size;
    return p;
  }
  std::mutex mutex_;
  std::map<void*, std::size_t> in_use_;  // each buffer HDF5 holds, with its capacity
  void* kept_ = nullptr;
  std::size_t kept_size_ = 0;
};

void set_image_buffers(hid_t fapl) {
  H5FD_file_image_callbacks_t callbacks{};
  callbacks.image_malloc = [](std::size_t size, H5FD_file_image_op_t, void*) {
    return ImageBuffers::instance().resize(nullptr, size);
  };
  callbacks.image_memcpy = [](void* to, const void* from, std::size_t size, H5FD_file_image_op_t,
                              void*) { return std::memcpy(to, from, size); };
  callbacks.image_realloc = [](void* ptr, std::size_t size, H5FD_file_image_op_t, void*) {
    return ImageBuffers::instance().resize(ptr, size);
  };
  callbacks.image_free = [](void* ptr, H5FD_file_image_op_t, void*) -> herr_t {
    if (ptr) ImageBuffers::instance().release(ptr);
    return 0;
  };
  check(H5Pset_file_image_callbacks(fapl, &callbacks), "in-memory file");
}

// Builds the whole file in memory (HDF5's core driver, no backing store) and writes its bytes
// to `path` with write(2). HDF5 1.10 does not survive a failed write to disk (a file whose
// flush or close failed crashes the library at exit), so HDF5 never touches the disk here: a
// full disk is an ordinary write(2) error that we report and recover from.
// The field's bytes go into the image on every thread: an output file's contiguous dataset is
// allocated by writing its first value through HDF5 and then filled in place, at the offset
// HDF5 gives it (H5Dget_offset), in the core driver's own buffer (H5Fget_vfd_handle); a
// checkpoint's chunks are built by write_chunks. HDF5's own H5Dwrite converts and checksums
// on one thread, through temporaries. The bytes are those H5Dwrite writes (tests/io compare).
// An output file's further node field (NodeField), written through HDF5 (converted on one
// thread: these are written only when a case asks for them).
// The dataset of a further node field, created in `file` (collectively, where it was opened
// through MPI-IO: every process with the same name and components).
Handle create_node_dataset(hid_t file, const FieldMeta& m, FieldFileKind kind, const NodeField& f) {
  const bool fp32 = m.precision == "fp32";
  std::vector<hsize_t> dims = dataset_dims(m);
  if (f.components > 1) dims.push_back(static_cast<hsize_t>(f.components));
  Handle space = check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                          H5Sclose, "dataspace");
  Handle dcpl = check_id(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  check(H5Pset_obj_track_times(dcpl.get(), false), "dataset properties");
  if (compressed(m, kind)) {
    const std::vector<hsize_t> chunk = chunk_dims(dims, fp32 ? 4 : 8, kCompressedChunkBytes);
    check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "chunking");
    check(H5Pset_shuffle(dcpl.get()), "shuffle filter");
    check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(m.compression)), "deflate filter");
  }
  return check_id(H5Dcreate2(file, f.name.c_str(), fp32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                             space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                  H5Dclose, "cannot create the dataset /" + f.name);
}

void check_node_field(const FieldMeta& m, const NodeField& f) {
  if (f.components < 1 || f.values.size() != static_cast<std::size_t>(m.points() * f.components))
    throw std::runtime_error("dataset /" + f.name + " holds " + std::to_string(f.values.size()) +
                             " values for " + std::to_string(m.points()) + " nodes of " +
                             std::to_string(f.components) + " components");
}

void write_node_field(hid_t file, const FieldMeta& m, FieldFileKind kind, const NodeField& f) {
  check_node_field(m, f);
  Handle dset = create_node_dataset(file, m, kind, f);
  check(H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.values.data()),
        "cannot write the dataset /" + f.name);
  check(dset.close(), "cannot write the dataset /" + f.name);
}

// The in-memory file's bytes after a flush: its first `size` bytes (its end of allocation)
// are the file, held by the core driver in `bytes` as far as HDF5 wrote them; nothing
// changes them until the file is closed. The superblock's "open for writing" flags
// are cleared, as in the image of a closed file that H5Fget_file_image hands out.
struct FileImage {
  unsigned char* bytes = nullptr;
  std::size_t size = 0;
};

FileImage file_image(hid_t file) {
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size <= 0) throw_hdf5("cannot build the file image");
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file, H5P_DEFAULT, &handle), "the in-memory file");
  unsigned char* image = handle ? *static_cast<unsigned char**>(handle) : nullptr;
  if (!image) throw std::runtime_error("the in-memory file has no buffer");
  // Superblock versions 0 and 1 (the earliest format, ours) keep the flags in bytes 20-23,
  // later ones in byte 11.
  if (size < 24) throw std::runtime_error("the file image is too short");
  if (image[8] <= 1)
    std::memset(image + 20, 0, 4);
  else
    image[11] = 0;
  return {image, static_cast<std::size_t>(size)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void write_file_image(const std::string& path, const FieldMeta& m, const FieldValues& field,
                      FieldFileKind kind, const std::vector<double>& previous,
                      WriteProgress* progress, const std::vector<NodeField>& extras) {
  const auto start = std::chrono::steady_clock::now();
  const bool fp32 = m.precision == "fp32";
  const std::size_t data_bytes = static_cast<std::size_t>(m.points()) * (fp32 ? 4 : 8);
  std::size_t extra_bytes = 0;
  for (const NodeField& f : extras) extra_bytes += f.values.size() * (fp32 ? 4 : 8);
  Handle fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
  // A chunked file is built whole in memory: one allocation for data plus metadata
  // (attributes, the case text, chunk index). A contiguous output's values are not: they go
  // from `field` straight to the file, so the image holds the metadata (and further node
  // fields) only, its dataset's storage allocated last, at the end of the file; the image grows
  // in steps of 1 MiB, and HDF5 clears no bytes the values will fill.
  const bool chunked = kind == FieldFileKind::checkpoint || compressed(m, kind);
  const std::size_t increment =
      chunked ? data_bytes + extra_bytes + previous.size() * 8 + m.case_yaml.size() +
                    (std::size_t{1} << 16)
              : std::size_t{1} << 20;
  check(H5Pset_fapl_core(fapl.get(), increment, false), "in-memory file");
  set_image_buffers(fapl.get());
  // The earliest file format (the default): HDF5 1.10's file image of the newer formats (with
  // metadata checksums) does not open again. Checkpoints checksum their attributes themselves
  // (attribute `meta_checksum`) and their data with Fletcher32.
  Handle file = check_id(H5Fcreate("heatsim-field-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                         H5Fclose, "cannot create the file");

  const std::vector<hsize_t> dims = dataset_dims(m);
  Handle space = check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                          H5Sclose, "dataspace");
  if (chunked) {
    write_chunked_dataset(file.get(), kFieldDataset, m, kind, space.get(), field);
    if (!previous.empty()) {
      // Always fp64: within a call of several implicit steps the field of step - 1 is never
      // rounded to the run's precision, and a restart must see it as the run did.
      FieldMeta exact = m;
      exact.precision = "fp64";
      write_chunked_dataset(file.get(), kPreviousFieldDataset, exact, kind, space.get(),
                            FieldValues{previous.data(), nullptr, previous.size()});
    }
    for (const NodeField& f : extras) write_node_field(file.get(), m, kind, f);
    write_field_attributes(file.get(), m, kind);
    check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush the file");
    const FileImage image = file_image(file.get());
    if (progress) progress->build_seconds = seconds_since(start);
    write_bytes(path, reinterpret_cast<const char*>(image.bytes), image.size, progress);
    check(file.close(), "cannot close the in-memory file");
    return;
  }
  // A contiguous output: the dataset, the further fields and the attributes first, then the
  // dataset's storage, allocated by its first value written through HDF5 as a whole write
  // would (H5Dwrite of every value gives the same file: tests/io).
  Handle dcpl = field_dataset_properties(m, kind);
  Handle dset =
      check_id(H5Dcreate2(file.get(), kFieldDataset, fp32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                          space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
               H5Dclose, "cannot create the dataset");
  for (const NodeField& f : extras) write_node_field(file.get(), m, kind, f);
  write_field_attributes(file.get(), m, kind);
  const hsize_t one = 1;
  const std::vector<hsize_t> origin(dims.size(), 0), ones(dims.size(), 1);
  Handle memory = check_id(H5Screate_simple(1, &one, nullptr), H5Sclose, "dataspace");
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, origin.data(), nullptr, ones.data(),
                            nullptr),
        "hyperslab");
  check(field.floats ? H5Dwrite(dset.get(), H5T_NATIVE_FLOAT, memory.get(), space.get(),
                                H5P_DEFAULT, field.floats)
                     : H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(),
                                H5P_DEFAULT, field.doubles),
        "cannot write the field");
  const haddr_t data_offset = H5Dget_offset(dset.get());
  if (data_offset == HADDR_UNDEF) throw_hdf5("the dataset has no storage");
  check(dset.close(), "cannot write the field");
  // The values go to the file at their offset on a thread of their own from here, while HDF5
  // flushes its metadata into the image (clearing, on one thread, the bytes the image adds for
  // the storage: about 1 s for 8.6 GB) and the image's own bytes follow. Where the run's
  // precision is the file's they are the staged values themselves; else each 64 MiB piece is
  // converted on every thread into one buffer, reused, and written before the next.
  OutFile out(path);
  if (progress) progress->bytes = data_bytes;
  const auto writing = std::chrono::steady_clock::now();
  std::exception_ptr values_failure;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();  // the writer's (one on a CPU run)
#endif
  std::thread values_thread([&] {
    try {
#ifdef _OPENMP
      omp_set_num_threads(threads);
#endif
      std::atomic<std::uint64_t>* done = progress ? &progress->written : nullptr;
      const std::size_t at = static_cast<std::size_t>(data_offset);
      if ((field.floats != nullptr) == fp32) {
        const char* values = field.floats ? reinterpret_cast<const char*>(field.floats)
                                          : reinterpret_cast<const char*>(field.doubles);
        out.write_at(at, values, data_bytes, done);
        return;
      }
      const std::size_t value_bytes = fp32 ? 4 : 8;
      const std::size_t piece = (std::size_t{64} << 20) / value_bytes;  // values per piece
      const std::size_t count = static_cast<std::size_t>(m.points());
      const std::unique_ptr<unsigned char[]> converted(
          new unsigned char[std::min(count, piece) * value_bytes]);
      for (std::size_t first = 0; first < count; first += piece) {
        const std::size_t n = std::min(piece, count - first);
        const FieldValues part{field.doubles ? field.doubles + first : nullptr,
                               field.floats ? field.floats + first : nullptr, n};
        store_field(part, n, fp32, converted.get());
        out.write_at(at + first * value_bytes, reinterpret_cast<const char*>(converted.get()),
                     n * value_bytes, done);
      }
    } catch (...) {
      values_failure = std::current_exception();
    }
  });
  struct Joiner {
    std::thread& thread;
    ~Joiner() {
      if (thread.joinable()) thread.join();
    }
  } joiner{values_thread};
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush the file");
  const FileImage image = file_image(file.get());
  const std::size_t data_end = static_cast<std::size_t>(data_offset) + data_bytes;
  if (data_end > image.size) throw std::runtime_error("the dataset lies outside the file image");
  // What HDF5 placed after the storage, if anything (the storage is allocated last, so
  // normally nothing): taken from a copy of the whole file image, which reads as zeros where
  // HDF5 allocated bytes it never wrote (the core driver's buffer need not hold them).
  std::vector<unsigned char> whole;
  const unsigned char* tail = nullptr;
  if (data_end < image.size) {
    whole.resize(image.size);
    if (H5Fget_file_image(file.get(), whole.data(), whole.size()) !=
        static_cast<ssize_t>(whole.size()))
      throw_hdf5("cannot build the file image");
    tail = whole.data() + data_end;
  }
  if (progress) {
    progress->build_seconds = seconds_since(start);
    progress->bytes = image.size;
  }
  std::atomic<std::uint64_t>* done = progress ? &progress->written : nullptr;
  out.write_at(0, reinterpret_cast<const char*>(image.bytes),
               static_cast<std::size_t>(data_offset), done);
  out.write_at(data_end, reinterpret_cast<const char*>(tail), image.size - data_end, done);
  values_thread.join();
  if (values_failure) std::rethrow_exception(values_failure);
  const auto written = std::chrono::steady_clock::now();
  out.finish();
  if (progress) {
    using Seconds = std::chrono::duration<double>;
    progress->write_seconds = Seconds(written - writing).count();
    progress->sync_seconds = seconds_since(written);
  }
  check(file.close(), "cannot close the in-memory file");
}

void fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + dir + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems do not support fsync on directories (EINVAL); the rename still happened.
  if (rc != 0 && err != EINVAL && err != EBADF)
    throw std::runtime_error("fsync of " + dir + " failed: " + std::strerror(err));
}

std::string parent_directory(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// A file written by someone else (HDF5, other processes) reaches the disk.
void fsync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::strerror(err));
  }
  ::close(fd);
}

// Moves a finished (already fsynced) temporary over the target; the rename reaches the disk
// before we return.
void commit_temporary(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
  fsync_directory(parent_directory(path));
}

template <class Write>
void replace_atomically(const std::string& path, Write&& write) {
  const std::string tmp = path + kTemporarySuffix;
  try {
    write(tmp);
    commit_temporary(tmp, path);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write " + path + ": " + e.what());
  }
}

// Silences HDF5's own error printing and refuses a path that is not a regular file, naming it.
void require_regular_file(const std::string& path) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw std::runtime_error(path + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw std::runtime_error(path + ": not a regular file");
}

// Opens an HDF5 file read-only (closed strongly: no object outlives it). The messages do not
// name the file; the callers prefix them with it.
Handle open_read_only(const std::string& path) {
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw std::runtime_error("not an HDF5 file (or its header is damaged)");
  }
  Handle fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
  return check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose,
                  "cannot open: the file is truncated or damaged");
}

// How a field dataset is stored: its filters and its size in the file.
struct DatasetStorage {
  bool checksummed = false;  // the Fletcher32 filter (verified on read)
  int deflate = 0;           // the deflate filter's level; 0: none
  std::uint64_t bytes = 0;   // H5Dget_storage_size
};

// Checks the dataset `name` against the grid of m and the precision it is stored in, and reads
// it into `values` when not null.
DatasetStorage read_field_dataset(hid_t root, const char* name, const FieldMeta& m,
                                  const std::string& precision, std::vector<double>* values) {
  const std::string what = std::string("dataset /") + name;
  Handle dset = check_id(H5Dopen2(root, name, H5P_DEFAULT), H5Dclose, "cannot open the " + what);
  Handle space = check_id(H5Dget_space(dset.get()), H5Sclose, "dataset space");
  std::vector<hsize_t> actual(3);
  const int rank = H5Sget_simple_extent_dims(space.get(), actual.data(), nullptr);
  actual.resize(static_cast<std::size_t>(std::max(rank, 0)));
  if (actual != dataset_dims(m))
    throw std::runtime_error(what + ": shape does not match the grid attributes");
  Handle type = check_id(H5Dget_type(dset.get()), H5Tclose, "dataset type");
  const std::size_t bytes = precision == "fp32" ? 4 : 8;
  if (H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_size(type.get()) != bytes)
    throw std::runtime_error(what + ": type does not match precision " + precision);
  Handle dcpl = check_id(H5Dget_create_plist(dset.get()), H5Pclose, "dataset properties");
  DatasetStorage storage;
  const int filters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    unsigned values_of_filter[1] = {0};
    std::size_t nelem = 1;
    unsigned config = 0;
    const H5Z_filter_t filter = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags,
                                               &nelem, values_of_filter, 0, nullptr, &config);
    if (filter == H5Z_FILTER_FLETCHER32) storage.checksummed = true;
    if (filter == H5Z_FILTER_DEFLATE) storage.deflate = nelem > 0 ? int(values_of_filter[0]) : 1;
  }
  storage.bytes = H5Dget_storage_size(dset.get());
  if (values) {
    values->resize(static_cast<std::size_t>(m.points()));
    check(H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()),
          what + " fails its checksum or cannot be read; the file is corrupt");
  }
  check(dset.close(), "cannot close the " + what);
  return storage;
}

FieldFile read_file(const std::string& path, bool with_data) {
  require_regular_file(path);
  try {
    Handle file = open_read_only(path);
    const hid_t root = file.get();
    if (read_string(root, "format") != kFormat)
      throw std::runtime_error("not a heatsim field file (unknown format)");
    const std::int64_t version = read_int64(root, "format_version");
    if (version != kFormatVersion)
      throw std::runtime_error("unsupported heatsim file format version " +
                               std::to_string(version));

    FieldFile out;
    const std::string kind = read_string(root, "kind");
    if (kind == to_string(FieldFileKind::output))
      out.kind = FieldFileKind::output;
    else if (kind == to_string(FieldFileKind::checkpoint))
      out.kind = FieldFileKind::checkpoint;
    else
      throw std::runtime_error("unknown file kind '" + kind + "'");

    FieldMeta& m = out.meta;
    m.step = read_int64(root, "step");
    m.time = read_double(root, "time");
    m.dt = read_double(root, "dt");
    m.alpha = read_double(root, "alpha");
    m.dims = static_cast<int>(read_int64(root, "dims"));
    if (m.dims < 1 || m.dims > 3) throw std::runtime_error("invalid dims " + std::to_string(m.dims));
    const auto n = read_int64s(root, "n");
    const auto spacing = read_doubles(root, "spacing");
    const auto origin = read_doubles(root, "origin");
    const std::size_t dims = static_cast<std::size_t>(m.dims);
    if (n.size() != dims || spacing.size() != dims || origin.size() != dims)
      throw std::runtime_error("attributes n, spacing, origin must have dims entries");
    for (std::size_t a = 0; a < dims; ++a) {
      m.n[a] = n[a];
      m.spacing[a] = spacing[a];
      m.origin[a] = origin[a];
    }
    m.scheme = read_string(root, "scheme");
    m.backend = read_string(root, "backend");
    m.precision = read_string(root, "precision");
    m.version = read_string(root, "heatsim_version");
    m.case_yaml = read_string(root, "case_yaml");
    if (H5Aexists(root, "run_digest") > 0) m.run_digest = read_string(root, "run_digest");
    if (H5Aexists(root, "fusion") > 0) {
      const std::int64_t fusion = read_int64(root, "fusion");
      if (fusion < 1 || fusion > 1024)
        throw std::runtime_error("invalid fusion " + std::to_string(fusion));
      m.fusion = static_cast<int>(fusion);
    }
    m.steady = H5Aexists(root, "steady") > 0 && read_int64(root, "steady") != 0;
    if (out.kind == FieldFileKind::checkpoint) {
      Handle attr = open_attribute(root, "meta_checksum");
      std::uint64_t sum = 0;
      check(H5Aread(attr.get(), H5T_NATIVE_UINT64, &sum), "attribute meta_checksum");
      if (sum != meta_checksum(m, out.kind))
        throw std::runtime_error("the attributes fail their checksum; the file is corrupt");
    }
    if (m.precision != "fp64" && m.precision != "fp32")
      throw std::runtime_error("unknown precision '" + m.precision + "'");

    if (H5Lexists(root, kFieldDataset, H5P_DEFAULT) <= 0)
      throw std::runtime_error(std::string("dataset /") + kFieldDataset + " is missing");
    const DatasetStorage storage =
        read_field_dataset(root, kFieldDataset, m, m.precision, with_data ? &out.field : nullptr);
    out.checksummed = storage.checksummed;
    out.deflate = storage.deflate;
    out.stored_bytes = storage.bytes;
    if (out.kind == FieldFileKind::output) m.compression = storage.deflate;
    if (out.kind == FieldFileKind::checkpoint &&
        H5Lexists(root, kPreviousFieldDataset, H5P_DEFAULT) > 0 &&
        !read_field_dataset(root, kPreviousFieldDataset, m, "fp64",
                            with_data ? &out.previous : nullptr)
             .checksummed)
      throw std::runtime_error(std::string("dataset /") + kPreviousFieldDataset +
                               " has no checksum");
    check(file.close(), "cannot close the file");
    return out;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace

Dataset read_dataset(const std::string& path, const std::string& name, bool with_data) {
  require_regular_file(path);
  try {
    Handle file = open_read_only(path);
    // H5Lexists fails (rather than says no) when a group on the way is missing.
    if (name.empty() || H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      throw DatasetError("no dataset '" + name + "'");
    }
    const hid_t id = H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT);
    if (id < 0) {
      H5Eclear2(H5E_DEFAULT);
      throw DatasetError("'" + name + "' is not a dataset (a group?)");
    }
    Handle dset(id, H5Dclose);
    Handle type = check_id(H5Dget_type(dset.get()), H5Tclose, "dataset type");
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
      throw DatasetError("dataset '" + name +
                         "' holds neither integers nor floating-point numbers");
    Handle space = check_id(H5Dget_space(dset.get()), H5Sclose, "dataset space");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) throw_hdf5("dataset space");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
      throw_hdf5("dataset space");
    Dataset out;
    out.integer = cls == H5T_INTEGER;
    std::size_t count = 1;
    for (hsize_t d : dims) {
      out.dims.push_back(static_cast<std::int64_t>(d));
      count *= static_cast<std::size_t>(d);
    }
    if (with_data) {
      out.values.resize(count);
      if (count > 0 && H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               out.values.data()) < 0) {
        const std::string detail = hdf5_error_detail();
        throw DatasetError("dataset '" + name + "' cannot be read" +
                           (detail.empty() ? "" : " (HDF5: " + detail + ")"));
      }
    }
    check(dset.close(), "cannot close the dataset");
    check(file.close(), "cannot close the file");
    return out;
  } catch (const DatasetError& e) {
    throw DatasetError(path + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

const char* to_string(FieldFileKind kind) {
  return kind == FieldFileKind::checkpoint ? "checkpoint" : "output";
}

FieldMeta make_meta(const solver::Case& c, double dt, const std::string& backend,
                    std::int64_t step, double time) {
  FieldMeta m;
  m.step = step;
  m.time = time;
  m.dt = dt;
  m.alpha = c.physics.alpha;
  m.dims = c.grid.dims;
  for (int a = 0; a < 3; ++a) {
    const bool active = a < c.grid.dims;
    m.n[a] = active ? c.grid.n[a] : 1;
    m.spacing[a] = active ? solver::spacing(c, a) : 1.0;
    m.origin[a] = 0.0;  // node i sits at i*h (solver::coordinate)
  }
  m.scheme = solver::to_string(c.scheme.kind);
  m.backend = backend;
  m.precision = kernels::to_string(c.precision);
  m.version = heatsim::version();
  m.case_yaml = c.source_text;
  m.run_digest = c.run_digest.empty() ? case_digest(c.source_text) : c.run_digest;
  m.steady = c.time.method == solver::TimeMethod::steady;
  return m;
}

std::string case_digest(const std::string& case_text) {
  const std::uint64_t h = fnv1a(kFnvBasis, case_text.data(), case_text.size());
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(h));
  return digits;
}

std::string run_lineage(const FieldMeta& m) {
  return m.run_digest.empty() ? case_digest(m.case_yaml) : m.run_digest;
}

std::string lineage_head(const std::string& lineage) {
  return lineage.substr(0, lineage.find(';'));
}

std::string lineage_parent(const std::string& lineage) {
  const std::size_t at = lineage.find(';');
  if (at == std::string::npos) return "";
  const std::size_t sign = lineage.find('@', at);
  return sign == std::string::npos ? "" : lineage.substr(at + 1, sign - at - 1);
}

std::string lineage_branch_step(const std::string& lineage) {
  const std::size_t at = lineage.find(';');
  if (at == std::string::npos) return "";
  const std::size_t sign = lineage.find('@', at);
  if (sign == std::string::npos) return "";
  const std::size_t end = lineage.find(';', sign);
  return lineage.substr(sign + 1, end == std::string::npos ? std::string::npos : end - sign - 1);
}

std::string branch_lineage(const std::string& parent, std::int64_t step,
                           const std::string& case_text) {
  const std::string head = lineage_head(parent);
  const std::string from = head + "@" + std::to_string(step);
  const std::string rest = parent.size() > head.size() ? parent.substr(head.size()) : "";
  return case_digest(from + "\n" + case_text) + ";" + from + rest;
}

bool in_run_history(const std::string& run, const std::string& file, std::int64_t step) {
  const std::string head = lineage_head(file);
  if (head == lineage_head(run)) return true;
  // The ancestors, newest first: "d@step" after each ';'. A digest met twice (a line that left
  // an ancestor twice) counts at its latest branch step, the first met.
  std::size_t at = run.find(';');
  while (at != std::string::npos) {
    const std::size_t next = run.find(';', at + 1);
    const std::string entry =
        run.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const std::size_t sign = entry.rfind('@');
    if (sign != std::string::npos && entry.compare(0, sign, head) == 0 && sign == head.size()) {
      try {
        return step <= std::stoll(entry.substr(sign + 1));
      } catch (const std::exception&) {
        return false;
      }
    }
    at = next;
  }
  return false;
}

void write_field_file(const std::string& path, const FieldMeta& meta,
                      const std::vector<double>& field, FieldFileKind kind,
                      const std::vector<double>& previous) {
  write_field_file(path, meta, FieldValues{field.data(), nullptr, field.size()}, kind, previous);
}

void write_field_file(const std::string& path, const FieldMeta& meta, const FieldValues& field,
                      FieldFileKind kind, const std::vector<double>& previous,
                      WriteProgress* progress, const std::vector<NodeField>& extras) {
  silence_hdf5_errors();
  replace_atomically(path, [&](const std::string& tmp) {
    validate_meta(meta, field.count);
    if (field.floats && meta.precision != "fp32")
      throw std::runtime_error("an fp32 field's floats go only into an fp32 file");
    if (!previous.empty() && (kind != FieldFileKind::checkpoint || previous.size() != field.count))
      throw std::runtime_error("a previous field goes only into a checkpoint, one value a point");
    if (!extras.empty() && kind != FieldFileKind::output)
      throw std::runtime_error("further node fields go only into an output file");
    write_file_image(tmp, meta, field, kind, previous, progress, extras);
  });
}

// ---- files of a decomposed run ---------------------------------------------------------

// A parallel HDF5 under MPI writes them collectively; a serial one gathers them to rank 0.
#if defined(HEATSIM_HAVE_MPI) && defined(H5_HAVE_PARALLEL)
#define HEATSIM_COLLECTIVE_FILES 1
#endif

namespace {

namespace parallel = solver::parallel;

// Message tags of the slabs' pieces (the halo exchange uses 0-5).
constexpr int kGatherTag = 64;
constexpr int kScatterTag = 65;

parallel::Box box_of(const FieldPart& part) {
  parallel::Box b;
  b.lo = part.lo;
  b.extent = part.extent;
  return b;
}

// The nodes two boxes share (extent 0 along some axis when none).
parallel::Box intersection(const parallel::Box& a, const parallel::Box& b) {
  parallel::Box out;
  for (int k = 0; k < 3; ++k) {
    out.lo[k] = std::max(a.lo[k], b.lo[k]);
    const std::int64_t end = std::min(a.lo[k] + a.extent[k], b.lo[k] + b.extent[k]);
    out.extent[k] = std::max<std::int64_t>(0, end - out.lo[k]);
  }
  return out;
}

// The values of `box` (inside `from`) out of values laid over `from`, x fastest.
std::vector<double> take(const std::vector<double>& values, const parallel::Box& from,
                         const parallel::Box& box) {
  return parallel::extract_box(values, from.extent, parallel::relative(box, from));
}

// The same into values laid over `into`.
void put(std::vector<double>& values, const parallel::Box& into, const parallel::Box& box,
         const std::vector<double>& piece) {
  parallel::insert_box(values, into.extent, parallel::relative(box, into), piece);
}

// Every process's box, in rank order, on rank 0 (the others get none).
std::vector<parallel::Box> gather_boxes(const parallel::Box& mine) {
  if (parallel::size() == 1) return {mine};
  std::vector<double> corners;
  for (int k = 0; k < 3; ++k) corners.push_back(static_cast<double>(mine.lo[k]));
  for (int k = 0; k < 3; ++k) corners.push_back(static_cast<double>(mine.extent[k]));
  const std::vector<double> all = parallel::gather_to_root(
      corners, std::vector<std::int64_t>(static_cast<std::size_t>(parallel::size()), 6));
  std::vector<parallel::Box> boxes(all.size() / 6);
  for (std::size_t r = 0; r < boxes.size(); ++r)
    for (int k = 0; k < 3; ++k) {
      boxes[r].lo[k] = static_cast<std::int64_t>(all[6 * r + k]);
      boxes[r].extent[k] = static_cast<std::int64_t>(all[6 * r + 3 + k]);
    }
  return boxes;
}

// kSlabBytes, or HEATSIM_FILE_SLAB_BYTES when set (tests cut small files into many slabs).
std::size_t slab_bytes() {
  static const std::size_t bytes = [] {
    const char* v = std::getenv("HEATSIM_FILE_SLAB_BYTES");
    const long long n = v ? std::atoll(v) : 0;
    return n > 0 ? static_cast<std::size_t>(n) : kSlabBytes;
  }();
  return bytes;
}

// The slabs a decomposed file moves in, in the order of the dataset (x, y, z boxes): whole
// chunks along the slowest axes (for a contiguous dataset, any nodes), so that each chunk is
// filtered once. The dataset is cut along its slowest axis into pieces of as many chunk
// layers as slab_bytes() holds; where one layer is more than that, each layer along the next
// axis, and so on; a single chunk is never cut.
std::vector<parallel::Box> field_slabs(const FieldMeta& m, FieldFileKind kind) {
  const std::size_t value_bytes = m.precision == "fp32" ? 4 : 8;
  const std::vector<hsize_t> chunked = field_chunk(m, kind);
  // Axes slowest first (index 0 is the dataset's slowest), their extents and chunk extents.
  std::vector<int> axis;
  for (int a = m.dims - 1; a >= 0; --a) axis.push_back(a);
  const std::size_t rank = axis.size();
  std::vector<std::int64_t> n(rank), c(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    n[i] = m.n[axis[i]];
    if (!chunked.empty()) c[i] = static_cast<std::int64_t>(chunked[i]);
  }
  // The axis cut into runs of several units: the first whose unit (chunk layers of the axes
  // before it, the whole extent of those after) fits; the last axis when none does.
  std::size_t cut = 0;
  double unit = 0.0;
  for (;; ++cut) {
    unit = static_cast<double>(value_bytes);
    for (std::size_t i = 0; i < rank; ++i)
      unit *= static_cast<double>(i <= cut ? std::min(c[i], n[i]) : n[i]);
    if (unit <= static_cast<double>(slab_bytes()) || cut + 1 == rank) break;
  }
  std::vector<std::int64_t> step(rank);
  for (std::size_t i = 0; i < rank; ++i) step[i] = i < cut ? c[i] : n[i];
  step[cut] = c[cut] * std::max<std::int64_t>(
                           1, static_cast<std::int64_t>(static_cast<double>(slab_bytes()) / unit));
  std::vector<parallel::Box> slabs;
  std::vector<std::int64_t> at(rank, 0);
  for (;;) {
    parallel::Box b;
    for (std::size_t i = 0; i < rank; ++i) {
      b.lo[axis[i]] = at[i];
      b.extent[axis[i]] = std::min(step[i], n[i] - at[i]);
    }
    slabs.push_back(b);
    // The next slab: the fastest axis that is cut moves on first.
    std::size_t i = cut + 1;
    while (i > 0) {
      --i;
      at[i] += step[i];
      if (at[i] < n[i]) break;
      at[i] = 0;
      if (i == 0) return slabs;
    }
  }
}

// The hyperslab of `box` (x, y, z) in the dataset's order, slowest axis first.
void select_box(hid_t file_space, const FieldMeta& m, const parallel::Box& box) {
  std::vector<hsize_t> start, count;
  for (int a = m.dims - 1; a >= 0; --a) {
    start.push_back(static_cast<hsize_t>(box.lo[a]));
    count.push_back(static_cast<hsize_t>(box.extent[a]));
  }
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        "hyperslab");
}

Handle memory_space(const parallel::Box& box) {
  const hsize_t count = static_cast<hsize_t>(box.points());
  return check_id(H5Screate_simple(1, &count, nullptr), H5Sclose, "dataspace");
}

// Values into the file's type: an fp32 file's are floats (exactly: the run held floats).
herr_t write_values(hid_t dset, const FieldMeta& m, hid_t memory, hid_t file_space, hid_t dxpl,
                    const std::vector<double>& values) {
  if (m.precision != "fp32")
    return H5Dwrite(dset, H5T_NATIVE_DOUBLE, memory, file_space, dxpl, values.data());
  const std::vector<float> f(values.begin(), values.end());
  return H5Dwrite(dset, H5T_NATIVE_FLOAT, memory, file_space, dxpl, f.data());
}

void check_part(const FieldMeta& meta, const FieldPart& part) {
  validate_meta(meta, static_cast<std::size_t>(meta.points()));
  for (int a = 0; a < 3; ++a)
    if (part.lo[a] < 0 || part.extent[a] < 0 || part.lo[a] + part.extent[a] > meta.n[a])
      throw std::runtime_error("part outside the grid along axis " + std::to_string(a));
  if (part.values.size() != static_cast<std::size_t>(box_of(part).points()))
    throw std::runtime_error("part holds " + std::to_string(part.values.size()) +
                             " values, its box " + std::to_string(box_of(part).points()));
}

// Rank 0, once every process is done with it: the finished temporary reaches the disk and
// takes the real name.
void commit_part_file(const std::string& tmp, const std::string& path) {
  fsync_file(tmp);
  commit_temporary(tmp, path);
}

// A process that failed to write its part: one of several prints why and ends every process
// (the others may wait for it); alone it removes the temporary and throws.
[[noreturn]] void part_file_failed(const std::string& path, const std::exception& e) {
  const std::string what = "cannot write " + path + ": " + e.what();
  if (parallel::size() > 1) {
    // The temporary stays; a restart removes it (prepare_output_directory).
    std::fprintf(stderr, "error (rank %d): %s\n", parallel::rank(), what.c_str());
    parallel::abort_all(1);
  }
  std::error_code ignored;
  fs::remove(path + kTemporarySuffix, ignored);
  throw std::runtime_error(what);
}

#ifndef HEATSIM_COLLECTIVE_FILES
// A serial HDF5: rank 0 creates the file and writes it slab by slab, each slab's pieces sent
// by the processes whose parts it crosses (the slabs are in the same order on every process).
void write_gathered(const std::string& path, const FieldMeta& meta, const FieldPart& part,
                    FieldFileKind kind, const std::vector<NodeField>& extras) {
  const std::string tmp = path + kTemporarySuffix;
  const bool root = parallel::rank() == 0;
  const parallel::Box mine = box_of(part);
  const std::vector<parallel::Box> boxes = gather_boxes(mine);
  std::optional<Handle> file, dset, file_space;
  if (root) {
    Handle fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
    check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
    file.emplace(check_id(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                          H5Fclose, "cannot create the file"));
    const std::vector<hsize_t> dims = dataset_dims(meta);
    Handle space = check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                            H5Sclose, "dataspace");
    Handle dcpl = field_dataset_properties(meta, kind);
    // Every value is written below: no fill pass over the file first.
    check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "dataset properties");
    dset.emplace(check_id(H5Dcreate2(file->get(), kFieldDataset,
                                     meta.precision == "fp32" ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                                     space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                          H5Dclose, "cannot create the dataset"));
    file_space.emplace(check_id(H5Dget_space(dset->get()), H5Sclose, "dataspace"));
  }
  // A chunked dataset (a checkpoint's, a compressed output's): the slab's chunks filtered on
  // every core and handed to H5Dwrite_chunk, as one process writes them (write_chunks); the
  // slabs are whole chunks. H5Dwrite filtered them one after another on one core, and a 512^3
  // checkpoint on two ranks went at 0.08 GB/s. The buffers live across the slabs.
  const std::vector<hsize_t> chunk = field_chunk(meta, kind);
  ChunkFilters filters;
  filters.fletcher32 = kind == FieldFileKind::checkpoint;
  filters.deflate = compressed(meta, kind) ? meta.compression : 0;
  std::vector<double> values;
  std::vector<std::vector<double>> pieces(root ? boxes.size() : 1);
  for (const parallel::Box& slab : field_slabs(meta, kind)) {
    std::vector<parallel::Transfer> transfers;
    for (std::vector<double>& piece : pieces) piece.clear();
    if (root) {
      for (std::size_t r = 1; r < boxes.size(); ++r) {
        const parallel::Box in = intersection(boxes[r], slab);
        if (in.points() == 0) continue;
        pieces[r].resize(static_cast<std::size_t>(in.points()));
        transfers.push_back(parallel::receiving(pieces[r], static_cast<int>(r), kGatherTag));
      }
    } else {
      const parallel::Box in = intersection(mine, slab);
      if (in.points() > 0) {
        pieces[0] = take(part.values, mine, in);
        transfers.push_back(parallel::sending(pieces[0], 0, kGatherTag));
      }
    }
    if (!transfers.empty()) parallel::send_receive_all(transfers);
    if (!root) continue;
    values.resize(static_cast<std::size_t>(slab.points()));
    const parallel::Box own = intersection(mine, slab);
    if (own.points() > 0) put(values, slab, own, take(part.values, mine, own));
    for (std::size_t r = 1; r < boxes.size(); ++r)
      if (!pieces[r].empty()) put(values, slab, intersection(boxes[r], slab), pieces[r]);
    if (!chunk.empty()) {
      FieldValues field;
      field.doubles = values.data();
      field.count = values.size();
      write_chunks(dset->get(), meta, field, chunk, filters, &slab);
      continue;
    }
    select_box(file_space->get(), meta, slab);
    Handle memory = memory_space(slab);
    check(write_values(dset->get(), meta, memory.get(), file_space->get(), H5P_DEFAULT, values),
          "cannot write the field");
  }
  if (!root) return;
  check(dset->close(), "cannot write the field");
  for (const NodeField& f : extras) write_node_field(file->get(), meta, kind, f);
  write_field_attributes(file->get(), meta, kind);
  check(file->close(), "cannot close the file");
  commit_part_file(tmp, path);
}
#endif

}  // namespace

#ifdef HEATSIM_COLLECTIVE_FILES

bool collective_field_files() { return true; }

namespace {

// A parallel HDF5: every process opens `path.tmp` through MPI-IO, writes its part into its
// hyperslab in one collective transfer (HDF5 1.10 needs it collective for the checkpoints'
// filtered chunks), and closes the file with the others; metadata (the dataset, the
// attributes) is created by all with the same values, as parallel HDF5 requires. Then rank 0,
// after a barrier (every process has closed the file), fsyncs the temporary and renames it.
void write_collectively(const std::string& path, const FieldMeta& meta, const FieldPart& part,
                        FieldFileKind kind, const std::vector<NodeField>& extras) {
  const std::string tmp = path + kTemporarySuffix;
  // Declared outside the try: a process that fails must not close the file (a collective
  // call) on its way out while the others wait in another collective call.
  std::optional<Handle> fapl, file, space, dcpl, dset, file_space, memory, dxpl;
  try {
    fapl.emplace(check_id(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties"));
    check(H5Pset_fapl_mpio(fapl->get(), MPI_COMM_WORLD, MPI_INFO_NULL), "MPI-IO file access");
    file.emplace(check_id(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl->get()),
                          H5Fclose, "cannot create the file"));
    const std::vector<hsize_t> dims = dataset_dims(meta);
    space.emplace(check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                           H5Sclose, "dataspace"));
    dcpl.emplace(field_dataset_properties(meta, kind));
    // Every value is written below: no fill pass over the file first.
    check(H5Pset_fill_time(dcpl->get(), H5D_FILL_TIME_NEVER), "dataset properties");
    dset.emplace(check_id(H5Dcreate2(file->get(), kFieldDataset,
                                     meta.precision == "fp32" ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                                     space->get(), H5P_DEFAULT, dcpl->get(), H5P_DEFAULT),
                          H5Dclose, "cannot create the dataset"));
    const parallel::Box mine = box_of(part);
    file_space.emplace(check_id(H5Dget_space(dset->get()), H5Sclose, "dataspace"));
    memory.emplace(memory_space(mine));
    if (mine.points() > 0) {
      select_box(file_space->get(), meta, mine);
    } else {
      check(H5Sselect_none(file_space->get()), "hyperslab");
      check(H5Sselect_none(memory->get()), "hyperslab");
    }
    dxpl.emplace(check_id(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "transfer properties"));
    check(H5Pset_dxpl_mpio(dxpl->get(), H5FD_MPIO_COLLECTIVE), "collective transfer");
    check(write_values(dset->get(), meta, memory->get(), file_space->get(), dxpl->get(),
                       part.values),
          "cannot write the field");
    check(dset->close(), "cannot write the field");
    // The further node fields, whole on rank 0: created by every process, written by rank 0
    // in a collective transfer the others join with nothing selected (filtered datasets are
    // written collectively or not at all).
    const bool root = parallel::rank() == 0;
    for (const NodeField& f : extras) {
      if (root) check_node_field(meta, f);
      Handle extra = create_node_dataset(file->get(), meta, kind, f);
      Handle whole = check_id(H5Dget_space(extra.get()), H5Sclose, "dataspace");
      Handle values = check_id(H5Scopy(whole.get()), H5Sclose, "dataspace");
      if (!root) {
        check(H5Sselect_none(whole.get()), "hyperslab");
        check(H5Sselect_none(values.get()), "hyperslab");
      }
      // In the file's type: a conversion on the way would make HDF5 write independently.
      const bool fp32 = meta.precision == "fp32";
      std::vector<float> narrow;
      if (root && fp32) narrow.assign(f.values.begin(), f.values.end());
      const void* data = !root ? nullptr
                         : fp32 ? static_cast<const void*>(narrow.data())
                                : static_cast<const void*>(f.values.data());
      check(H5Dwrite(extra.get(), fp32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, values.get(),
                     whole.get(), dxpl->get(), data),
            "cannot write the dataset /" + f.name);
      check(extra.close(), "cannot write the dataset /" + f.name);
    }
    write_field_attributes(file->get(), meta, kind);
    check(file->close(), "cannot close the file");
    parallel::barrier();
    if (parallel::rank() == 0) commit_part_file(tmp, path);
  } catch (const std::exception& e) {
    part_file_failed(path, e);
  }
}

}  // namespace

std::string field_file_layout() { return "parallel HDF5, collective writes"; }

#else

bool collective_field_files() { return false; }

std::string field_file_layout() { return "serial HDF5, gathered to rank 0 in slabs"; }

#endif

void write_field_file_collective(const std::string& path, const FieldMeta& meta,
                                 const FieldPart& part, FieldFileKind kind,
                                 const std::vector<NodeField>& extras) {
  silence_hdf5_errors();
  try {
    check_part(meta, part);
  } catch (const std::exception& e) {
    part_file_failed(path, e);
  }
#ifdef HEATSIM_COLLECTIVE_FILES
  write_collectively(path, meta, part, kind, extras);
#else
  try {
    write_gathered(path, meta, part, kind, extras);
  } catch (const std::exception& e) {
    part_file_failed(path, e);
  }
#endif
}

// Rank 0 reads each slab, the slabs in the same order on every process, and sends every
// process the piece of its box inside.
void read_field_file_collective(const std::string& path, const FieldMeta& meta, FieldPart& part) {
  const bool root = parallel::rank() == 0;
  const parallel::Box mine = box_of(part);
  part.values.assign(static_cast<std::size_t>(mine.points()), 0.0);
  const std::vector<parallel::Box> boxes = gather_boxes(mine);
  std::optional<Handle> file, dset, file_space;
  if (root) {
    require_regular_file(path);
    try {
      file.emplace(open_read_only(path));
      read_field_dataset(file->get(), kFieldDataset, meta, meta.precision, nullptr);
      dset.emplace(check_id(H5Dopen2(file->get(), kFieldDataset, H5P_DEFAULT), H5Dclose,
                            "cannot open the field dataset"));
      file_space.emplace(check_id(H5Dget_space(dset->get()), H5Sclose, "dataspace"));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  for (const parallel::Box& slab : field_slabs(meta, FieldFileKind::checkpoint)) {
    std::vector<double> values;
    std::vector<std::vector<double>> pieces(root ? boxes.size() : 1);
    std::vector<parallel::Transfer> transfers;
    if (root) {
      values.resize(static_cast<std::size_t>(slab.points()));
      select_box(file_space->get(), meta, slab);
      Handle memory = memory_space(slab);
      if (H5Dread(dset->get(), H5T_NATIVE_DOUBLE, memory.get(), file_space->get(), H5P_DEFAULT,
                  values.data()) < 0) {
        const std::string detail = hdf5_error_detail();
        throw std::runtime_error(path + ": dataset /" + kFieldDataset +
                                 " fails its checksum or cannot be read; the file is corrupt" +
                                 (detail.empty() ? "" : " (HDF5: " + detail + ")"));
      }
      for (std::size_t r = 1; r < boxes.size(); ++r) {
        const parallel::Box in = intersection(boxes[r], slab);
        if (in.points() == 0) continue;
        pieces[r] = take(values, slab, in);
        transfers.push_back(parallel::sending(pieces[r], static_cast<int>(r), kScatterTag));
      }
    } else {
      const parallel::Box in = intersection(mine, slab);
      if (in.points() > 0) {
        pieces[0].resize(static_cast<std::size_t>(in.points()));
        transfers.push_back(parallel::receiving(pieces[0], 0, kScatterTag));
      }
    }
    if (!transfers.empty()) parallel::send_receive_all(transfers);
    const parallel::Box own = intersection(mine, slab);
    if (own.points() == 0) continue;
    put(part.values, mine, own, root ? take(values, slab, own) : pieces[0]);
  }
}

FieldFile read_field_file(const std::string& path) { return read_file(path, true); }
FieldFile read_field_header(const std::string& path) { return read_file(path, false); }

void write_text_file_atomically(const std::string& path, const std::string& text) {
  replace_atomically(
      path, [&](const std::string& tmp) { write_bytes(tmp, text.data(), text.size()); });
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& tmp)>& write) {
  replace_atomically(path, [&](const std::string& tmp) {
    write(tmp);
    fsync_file(tmp);
  });
}

}  // namespace heatsim::io
