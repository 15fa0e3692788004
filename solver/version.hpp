#pragma once

namespace heatsim {

const char* version();

}  // namespace heatsim
