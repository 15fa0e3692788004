// Freed large blocks kept for the process's next large blocks, their pages in place (the
// executable's operator new: app/block_cache.hpp), so that the kernel need not clear new
// pages for them. Kept only between keep_freed_blocks(true) and keep_freed_blocks(false): the
// set-up's phases that free large blocks (the coefficient fields, a level's fp64 stencil) and
// make others (the coarse levels where they are built after the fields' release, the level
// operations' arrays and vectors). Kept longer, they would sit beside
// memory that is not the executable's own (HDF5's file images) and raise the resident set. A
// no-op where nothing keeps blocks (the tests, a library user).
#pragma once

namespace heatsim::kernels {

// Registered once by whoever keeps the blocks.
void set_freed_blocks_control(void (*control)(bool keep));
// false also gives back the blocks kept.
void keep_freed_blocks(bool keep);

// Keeps freed blocks from its making to its end (or an earlier keep_freed_blocks(false)).
class KeepFreedBlocks {
 public:
  KeepFreedBlocks() { keep_freed_blocks(true); }
  ~KeepFreedBlocks() { keep_freed_blocks(false); }
  KeepFreedBlocks(const KeepFreedBlocks&) = delete;
  KeepFreedBlocks& operator=(const KeepFreedBlocks&) = delete;
};

}  // namespace heatsim::kernels
