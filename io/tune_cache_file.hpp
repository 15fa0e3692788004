// The tuning cache on disk: one JSON file per device, written by `heatsim bench --tune` and
// read at the start of a run that lets `auto` choose (solver/tune_cache.hpp holds the data).
//
//   $HEATSIM_TUNE_CACHE, when set, else
//   ${XDG_CACHE_HOME:-$HOME/.cache}/heatsim/tune-<device name>-sm<major><minor>.json
//
// with the device name reduced to [A-Za-z0-9._-] ("NVIDIA-H100-80GB-HBM3"). Written by hand as
// JSON and read with yaml-cpp (JSON is YAML). A missing file is normal; a file that cannot be
// read or parsed, or does not have the expected fields, is reported and ignored. Writes go to
// a temporary file in the same directory that is renamed over the cache, so a crash leaves the
// old file or the new one, never half of one.
#pragma once

#include <optional>
#include <string>

#include "kernels/registry.hpp"
#include "solver/tune_cache.hpp"

namespace heatsim::io {

// Where the cache of `device` lives (see above). Throws std::runtime_error when neither
// HEATSIM_TUNE_CACHE, XDG_CACHE_HOME nor HOME is set.
std::string tune_cache_path(const kernels::DeviceInfo& device);

// "NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3".
std::string sanitised_device_name(const std::string& name);

struct LoadedTuneCache {
  std::optional<solver::TuneCache> cache;  // empty: missing or unusable
  std::string warning;  // why an existing file was ignored, naming it; empty otherwise
};

LoadedTuneCache load_tune_cache(const std::string& path);

// The JSON text of a cache (one entry per line).
std::string tune_cache_json(const solver::TuneCache& cache);

// Writes the cache crash-safely (temporary file, fsync, rename), creating the directory.
// Throws std::runtime_error naming the file on failure.
void write_tune_cache(const std::string& path, const solver::TuneCache& cache);

}  // namespace heatsim::io
