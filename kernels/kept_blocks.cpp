#include "kept_blocks.hpp"

#include <atomic>

namespace heatsim::kernels {
namespace {

std::atomic<void (*)(bool)> freed_blocks_control{nullptr};

}  // namespace

void set_freed_blocks_control(void (*control)(bool keep)) { freed_blocks_control.store(control); }

void keep_freed_blocks(bool keep) {
  if (void (*control)(bool) = freed_blocks_control.load()) control(keep);
}

}  // namespace heatsim::kernels
