#include <spdlog/spdlog.h>

#include <iostream>
#include <stdexcept>

#include "commands.hpp"
#include "io/inspect.hpp"

namespace heatsim::app {

// A file inspect cannot read (missing, not HDF5, not a heatsim file, a failed checksum) is a
// bad input, as a broken --restart checkpoint is: exit code 2, not a runtime failure.
int inspect_file_command(const std::string& path) {
  try {
    io::inspect_file(path, std::cout);
  } catch (const std::runtime_error& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace heatsim::app
