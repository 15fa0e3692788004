// The CUDA backends' registry entries.
//
// `auto` runs the available backend that supports the problem with the highest expected
// GStencil/s, looked up in the backend's table (its folder's entry.cu): `heatsim bench` on an
// H100, fp64, default sizes (docs/backends.md, docs/convstencil.md). A problem outside the suite
// takes the suite row of the same dimension and shape (star/box) with the nearest radius, the
// larger on a tie. The table ranks; fp32 runs use the same ranking (convstencil is fp64 only). cpu,
// appended by the registry, has no row and is the fallback. Registry order is the tie-break.
#include "backend_entry.hpp"
#include "cuda_backends.hpp"

namespace heatsim::kernels {

// Each backend's folder declares its entry (its entry.cu); here only their order, the order
// `auto` prefers them on a tie.
std::vector<BackendEntry> cuda_backend_entries() {
  return {temporal_blocking_entry(), register_tiling_entry(), shared_tiling_entry(),
          cuda_naive_entry(), convstencil_entry()};
}

}  // namespace heatsim::kernels
