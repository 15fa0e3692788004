// Large host arrays on transparent huge pages (kernels/level_ops.hpp).
#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "kernels/level_ops.hpp"

namespace heatsim::kernels {

void* huge_allocate(std::size_t bytes) {
  constexpr std::size_t kPage = std::size_t{2} << 20;
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  void* p = std::aligned_alloc(kPage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Advice only: where the kernel has no transparent huge pages the array stays on small ones.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void huge_free(void* p) noexcept { std::free(p); }

}  // namespace heatsim::kernels
