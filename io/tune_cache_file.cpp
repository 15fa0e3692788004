#include "tune_cache_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace heatsim::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "heatsim-tune-cache";
constexpr int kVersion = 1;
constexpr std::uintmax_t kMaxBytes = 16u << 20;  // far above any real cache

// Shortest text that reads back to the same double.
std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

// Reads one field of a map; throws std::runtime_error with the field's name when it is
// missing or of the wrong type.
template <typename T>
T field(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  if (!v || !v.IsScalar()) throw std::runtime_error(std::string("'") + key + "' missing");
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(std::string("'") + key + "' has the wrong type");
  }
}

solver::TuneEntry read_entry(const YAML::Node& n) {
  if (!n.IsMap()) throw std::runtime_error("not a map");
  solver::TuneEntry e;
  e.shape = field<std::string>(n, "shape");
  e.dims = field<int>(n, "dims");
  const std::string stencil = field<std::string>(n, "stencil");
  e.radius = field<int>(n, "radius");
  const std::string precision = field<std::string>(n, "precision");
  e.backend = field<std::string>(n, "backend");
  e.fusion_depth = field<int>(n, "fusion");
  e.gstencils = field<double>(n, "gstencil_per_s");
  e.size = field<std::int64_t>(n, "size");
  e.date = field<std::string>(n, "date");
  if (e.dims < 1 || e.dims > 3) throw std::runtime_error("'dims' must be 1, 2 or 3");
  if (stencil != "star" && stencil != "box") throw std::runtime_error("'stencil' must be star or box");
  e.box = stencil == "box";
  if (e.radius < 1) throw std::runtime_error("'radius' must be >= 1");
  if (precision == "fp64")
    e.precision = kernels::Precision::fp64;
  else if (precision == "fp32")
    e.precision = kernels::Precision::fp32;
  else
    throw std::runtime_error("'precision' must be fp64 or fp32");
  if (e.backend.empty()) throw std::runtime_error("'backend' is empty");
  if (e.fusion_depth < 1) throw std::runtime_error("'fusion' must be >= 1");
  if (!std::isfinite(e.gstencils) || e.gstencils <= 0)
    throw std::runtime_error("'gstencil_per_s' must be a positive number");
  return e;
}

solver::TuneCache read_cache(const YAML::Node& root) {
  if (!root.IsMap()) throw std::runtime_error("not a JSON object");
  if (field<std::string>(root, "format") != kFormat)
    throw std::runtime_error(std::string("'format' is not ") + kFormat);
  if (field<int>(root, "version") != kVersion)
    throw std::runtime_error("'version' is not " + std::to_string(kVersion));
  solver::TuneCache c;
  c.device = field<std::string>(root, "device");
  c.compute_capability = field<std::string>(root, "compute_capability");
  c.bandwidth = field<double>(root, "copy_bandwidth_GBps") * 1e9;
  if (!std::isfinite(c.bandwidth) || c.bandwidth < 0)
    throw std::runtime_error("'copy_bandwidth_GBps' must be a number >= 0");
  const YAML::Node entries = root["entries"];
  if (!entries || !entries.IsSequence()) throw std::runtime_error("'entries' is not a list");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    try {
      c.entries.push_back(read_entry(entries[i]));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("entries[" + std::to_string(i) + "]: " + e.what());
    }
  }
  return c;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::strerror(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string sanitised_device_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

std::string tune_cache_path(const kernels::DeviceInfo& device) {
  if (const char* p = std::getenv("HEATSIM_TUNE_CACHE"); p && *p) return p;
  fs::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = fs::path(h) / ".cache";
  else
    throw std::runtime_error("no place for the tuning cache: set HEATSIM_TUNE_CACHE, "
                             "XDG_CACHE_HOME or HOME");
  return (dir / "heatsim" /
          ("tune-" + sanitised_device_name(device.name) + "-sm" + std::to_string(device.major) +
           std::to_string(device.minor) + ".json"))
      .string();
}

LoadedTuneCache load_tune_cache(const std::string& path) {
  LoadedTuneCache out;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) return out;  // no cache yet: normal
  const std::string ignored = "; ignored (rebuild it with `heatsim bench --tune`)";
  if (status.type() != fs::file_type::regular) {
    out.warning = "tuning cache " + path + ": not a regular file" + ignored;
    return out;
  }
  const auto bytes = fs::file_size(path, ec);
  if (ec || bytes > kMaxBytes) {
    out.warning = "tuning cache " + path + ": " +
                  (ec ? ec.message() : std::string("larger than 16 MiB")) + ignored;
    return out;
  }
  try {
    out.cache = read_cache(YAML::LoadFile(path));
  } catch (const YAML::BadFile&) {
    out.warning = "tuning cache " + path + ": cannot be opened" + ignored;
  } catch (const YAML::Exception& e) {
    out.warning = "tuning cache " + path + ": cannot be read as JSON (" + e.msg + ")" + ignored;
  } catch (const std::exception& e) {
    out.warning = "tuning cache " + path + ": " + e.what() + ignored;
  }
  return out;
}

std::string tune_cache_json(const solver::TuneCache& c) {
  std::string s = "{\n";
  s += "  \"format\": " + quoted(kFormat) + ",\n";
  s += "  \"version\": " + std::to_string(kVersion) + ",\n";
  s += "  \"device\": " + quoted(c.device) + ",\n";
  s += "  \"compute_capability\": " + quoted(c.compute_capability) + ",\n";
  s += "  \"copy_bandwidth_GBps\": " + number(c.bandwidth / 1e9) + ",\n";
  s += "  \"entries\": [";
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    const solver::TuneEntry& e = c.entries[i];
    s += i ? ",\n" : "\n";
    s += "    {\"shape\": " + quoted(e.shape) + ", \"dims\": " + std::to_string(e.dims) +
         ", \"stencil\": \"" + (e.box ? "box" : "star") + "\", \"radius\": " +
         std::to_string(e.radius) + ", \"precision\": \"" + kernels::to_string(e.precision) +
         "\", \"backend\": " + quoted(e.backend) + ", \"fusion\": " +
         std::to_string(e.fusion_depth) + ", \"gstencil_per_s\": " + number(e.gstencils) +
         ", \"size\": " + std::to_string(e.size) + ", \"date\": " + quoted(e.date) + "}";
  }
  s += c.entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return s;
}

void write_tune_cache(const std::string& path, const solver::TuneCache& cache) {
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  // Unique in the directory, so two tuning runs never share a temporary.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  try {
    write_all(fd, tune_cache_json(cache));
    if (::fsync(fd) != 0) throw std::runtime_error(std::strerror(errno));
  } catch (const std::runtime_error& e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp + ": " + e.what());
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
  }
  // The rename reaches the disk with the directory (some file systems refuse fsync there).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace heatsim::io
