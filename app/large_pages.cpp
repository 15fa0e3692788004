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
// They ask only where the process may run on 8 cores or more. With few cores the faults do not
// contend, and a huge page can cost far more than the 512 small ones it replaces: the kernel
// finds it among its free 2 MiB blocks, which a virtual machine's host may have taken back
// (free page reporting), or compacts memory for it while the fault waits. On a 2-core virtual
// machine a 257^3 steady case's set-up took 13.6-14.3 s with the advice and 6.0-6.2 s without
// (docs/performance.md, "Huge pages on few cores"). HEATSIM_HUGE_PAGES=1 or 0 asks or not
// whatever the cores.
//
// Where they do not ask, each large block's pages are faulted in by the kernel in one call as the
// block is allocated (MADV_POPULATE_WRITE, Linux 5.14 and later; older kernels refuse it and the
// pages fault as they are first written): one system call rather than a fault per 4 KiB page.
// On the 2-core virtual machine a fault there cost some 7-13 us, most of it the trap itself, and
// a 257^3 steady run took 1.1M of them, and a 1 GB block took 3.5 s written page by page
// against 0.25 s populated and 1.7 s written after (docs/performance.md, "Pages faulted in by
// the block"). The pages are then placed by the allocating thread rather than by the threads
// that first write them, which few cores do not mind. HEATSIM_PREFAULT=1 or 0 populates or not
// whatever the cores (never together with the huge pages' advice).
//
// The replacement of the global operator new covers every std::vector of the executable; the
// libraries' own malloc calls (HDF5, CUDA) are theirs. Small blocks take malloc's usual path.
//
// The largest (32 MiB and more) are mapped by app/block_cache.hpp, which keeps them once freed
// in the set-up, their pages in place, for the next: memory the kernel need not clear again.
#include <dirent.h>
#include <sched.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "block_cache.hpp"
#include "kernels/kept_blocks.hpp"

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this a block is left to malloc: the huge page's alignment would waste more than it saves.
constexpr std::size_t kLargeBlock = std::size_t{8} << 20;
// The cores from which the advice pays (above).
constexpr int kHugePageCores = 8;
// MADV_POPULATE_WRITE, which older C libraries' headers do not name.
#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;
#endif

// -1 where the environment variable `name` is not "0" or "1".
int forced(const char* name) {
  const char* value = std::getenv(name);
  if (value && (value[0] == '0' || value[0] == '1') && value[1] == '\0') return value[0] - '0';
  return -1;
}

// Decided once, on the first large block. Nothing here allocates: this runs inside operator new.
bool advise_huge_pages() {
  static const bool advise = [] {
    if (forced("HEATSIM_HUGE_PAGES") >= 0) return forced("HEATSIM_HUGE_PAGES") == 1;
    cpu_set_t cores;
    CPU_ZERO(&cores);
    if (sched_getaffinity(0, sizeof cores, &cores) != 0) return false;
    return CPU_COUNT(&cores) >= kHugePageCores;
  }();
  return advise;
}

bool populate_pages() {
  static const bool populate = !advise_huge_pages() && forced("HEATSIM_PREFAULT") != 0;
  return populate;
}

// A large block's pages as above: the huge pages' advice, or populated. Advice both: a kernel
// that refuses it leaves the block as it was.
void prepare_pages(void* p, std::size_t bytes) {
  if (advise_huge_pages()) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  if (populate_pages()) madvise(p, bytes, kPopulateWrite);
}

// From this size on, blocks are the cache's (app/block_cache.hpp): glibc maps blocks above 32
// MiB afresh every time and unmaps them when freed, while it keeps smaller ones in its heap
// once such blocks have been freed, and reuses them itself. Smaller large blocks are taken
// from the cache's kept stretches where one fits, from malloc otherwise.
constexpr std::size_t kCachedBlock = std::size_t{32} << 20;

// Whether the machine has one memory node (Linux's /sys/devices/system/node/node*; one where
// that cannot be read): only there are freed blocks kept (app/block_cache.hpp). On several, a
// kept block's pages stay on the node of the threads that first touched them, and its next
// owner's threads may run on another.
bool one_memory_node() {
  DIR* nodes = opendir("/sys/devices/system/node");
  if (!nodes) return true;
  int count = 0;
  while (const dirent* entry = readdir(nodes))
    if (std::strncmp(entry->d_name, "node", 4) == 0 && entry->d_name[4] >= '0' &&
        entry->d_name[4] <= '9')
      ++count;
  closedir(nodes);
  return count <= 1;
}

// Made at the first large block and never destroyed: blocks freed after the static objects'
// destructors (other static objects') still come back to it.
heatsim::app::BlockCache& cache() {
  alignas(heatsim::app::BlockCache) static unsigned char storage[sizeof(heatsim::app::BlockCache)];
  static heatsim::app::BlockCache* const blocks = [] {
    heatsim::app::BlockCache* made =
        new (storage) heatsim::app::BlockCache(/*keep=*/false, prepare_pages);
    heatsim::kernels::set_freed_blocks_control([](bool keep) {
      static const bool one_node = one_memory_node();
      cache().set_keep(keep && one_node);
    });
    return made;
  }();
  return *blocks;
}

void* allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes >= kCachedBlock) return cache().take(bytes);
  void* p = nullptr;
  if (bytes >= kLargeBlock) {
    if (void* kept = cache().take(bytes, /*map=*/false)) return kept;
    if (posix_memalign(&p, kHugePage, bytes) != 0) p = nullptr;
    if (p) prepare_pages(p, bytes);
  } else {
    p = std::malloc(bytes);
  }
  if (!p) throw std::bad_alloc();
  return p;
}

// The cache's blocks are 2 MiB aligned, which it checks before it looks further; malloc's
// (posix_memalign's among them) are not its own.
void release(void* p) noexcept {
  if (p && cache().give(p)) return;
  std::free(p);
}

void release(void* p, std::size_t bytes) noexcept {
  if (bytes >= kLargeBlock) {
    release(p);
    return;
  }
  std::free(p);
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
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t bytes) noexcept { release(p, bytes); }
void operator delete[](void* p, std::size_t bytes) noexcept { release(p, bytes); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
