#include "host_staging.hpp"

#include <cstdlib>
#include <new>

#ifdef HEATSIM_HAVE_CUDA
#include "cuda/host_staging.hpp"
#endif

namespace heatsim::kernels {

namespace {

void release_plain(void* p) { std::free(p); }

}  // namespace

HostStaging allocate_host_staging(std::size_t bytes, bool pinned) {
  if (bytes == 0) return HostStaging();
#ifdef HEATSIM_HAVE_CUDA
  if (pinned) return cuda::allocate_pinned_staging(bytes);
#else
  (void)pinned;
#endif
  // malloc, not a vector: the pages are touched first by whoever fills them, on their threads.
  void* p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return HostStaging(p, bytes, release_plain);
}

HostStaging pin_host_memory(void* p, std::size_t bytes, bool pinned, std::string& why_not) {
  if (!p || bytes == 0) return HostStaging();
#ifdef HEATSIM_HAVE_CUDA
  if (pinned) return cuda::pin_host_memory(p, bytes, why_not);
#else
  (void)pinned;
  (void)why_not;
#endif
  return HostStaging();
}

}  // namespace heatsim::kernels
