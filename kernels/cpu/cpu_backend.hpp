#pragma once

#include <memory>

#include "../backend.hpp"

namespace heatsim::kernels {

std::unique_ptr<Backend> make_cpu_backend(Precision precision);

}  // namespace heatsim::kernels
