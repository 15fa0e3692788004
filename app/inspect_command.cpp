#include <iostream>

#include "commands.hpp"
#include "io/inspect.hpp"

namespace heatsim::app {

int inspect_file_command(const std::string& path) {
  io::inspect_file(path, std::cout);
  return kExitOk;
}

}  // namespace heatsim::app
