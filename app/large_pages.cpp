// The executable's large arrays on transparent huge pages.
//
// A run's set-up is dominated by arrays of hundreds of megabytes that are written once, from
// every core (the multigrid hierarchy, the heat-flow operator, the field and its staging). Each
// 4 KiB page of them costs a fault when first touched, and on many cores the faults contend in
// the kernel: at 256^3 they were a quarter of the hierarchy's set-up. Where the kernel hands out
// transparent huge pages on request only (/sys/kernel/mm/transparent_hugepage/enabled is
// `madvise`, as on most distributions), these arrays ask for them: 2 MiB pages, 512 times fewer
// faults (docs/performance.md, "Huge pages for the set-up's arrays"). Where the setting is
// `always` this changes nothing, and where it is `never` the request is ignored.
//
// The replacement of the global operator new covers every std::vector of the executable; the
// libraries' own malloc calls (HDF5, CUDA) are theirs. Small blocks take malloc's usual path.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this a block is left to malloc: the huge page's alignment would waste more than it saves.
constexpr std::size_t kLargeBlock = std::size_t{8} << 20;

void* allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (bytes >= kLargeBlock) {
    if (posix_memalign(&p, kHugePage, bytes) != 0) p = nullptr;
    // Advice only, on the block's whole huge pages: a kernel without transparent huge pages
    // refuses it, and the block stays good.
    if (p) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  } else {
    p = std::malloc(bytes);
  }
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

// Every unaligned form, the nothrow ones too (std::get_temporary_buffer's), so that each block
// is freed by the family that made it also where a sanitizer's runtime supplies the forms not
// defined here. The aligned forms (std::align_val_t) stay the library's, new and delete alike.
void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return allocate(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
