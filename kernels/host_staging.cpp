#include "host_staging.hpp"

#include <cstdlib>
#include <new>

#ifdef HEATSIM_HAVE_CUDA
#include "cuda/host_staging.hpp"
#endif

namespace heatsim::kernels {

namespace {

void release_plain(double* p) { std::free(p); }

}  // namespace

HostStaging allocate_host_staging(std::size_t values, bool pinned) {
  if (values == 0) return HostStaging();
#ifdef HEATSIM_HAVE_CUDA
  if (pinned) return cuda::allocate_pinned_staging(values);
#else
  (void)pinned;
#endif
  // malloc, not a vector: the pages are touched first by whoever fills them, on their threads.
  auto* p = static_cast<double*>(std::malloc(values * sizeof(double)));
  if (!p) throw std::bad_alloc();
  return HostStaging(p, values, release_plain);
}

}  // namespace heatsim::kernels
