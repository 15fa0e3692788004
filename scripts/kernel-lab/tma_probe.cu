// A probe of the tensor memory accelerator: one 3D (or 2D) tensor copy of a plane tile into
// shared memory, and a one-dimensional bulk copy, checked against the array (docs/performance.md,
// "Planes by asynchronous copies, and by the tensor memory accelerator").
//   nvcc -std=c++17 -O3 -arch=sm_90 tma_probe.cu -o tma_probe && ./tma_probe FLAGS [u64]
// FLAGS: 1 the map alone as a parameter, 2 the class bytes too, 4 a proxy fence for the barrier
// init, 16 the map read from global memory, 32 a 1D bulk copy instead, 128 without .tile, 256 2D.
// Probe: a 3D tensor copy of a plane tile into shared memory, checked against the array.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cstdlib>

struct Maps { CUtensorMap u, k; };

__device__ unsigned sa(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__global__ void probe(const __grid_constant__ Maps maps, const __grid_constant__ CUtensorMap solo,
                      const CUtensorMap* gmap, const double* gsrc, double* out, unsigned char* kout, int x, int y, int z, int flags) {
  const int VARIANT = flags & 3;
  __shared__ alignas(128) double tile[18][34];
  __shared__ alignas(128) unsigned char keys[18][48];
  __shared__ alignas(8) std::uint64_t bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)) : "memory");
    if (flags & 4) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    else asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const CUtensorMap* m = (flags & 16) ? gmap : VARIANT == 1 ? &solo : &maps.u;
    unsigned bytes = sizeof(tile) + (VARIANT == 2 ? sizeof(keys) : 0);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar)), "r"(bytes) : "memory");
    if (flags & 32) asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(sa(&tile[0][0])), "l"(gsrc), "r"(bytes), "r"(sa(&bar)) : "memory");
    else if (flags & 128) asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(sa(&tile[0][0])), "l"(reinterpret_cast<std::uint64_t>(m)), "r"(x), "r"(y), "r"(z), "r"(sa(&bar)) : "memory");
    else if (flags & 256) asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(sa(&tile[0][0])), "l"(reinterpret_cast<std::uint64_t>(m)), "r"(x), "r"(y), "r"(sa(&bar)) : "memory");
    else asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(sa(&tile[0][0])), "l"(reinterpret_cast<std::uint64_t>(m)), "r"(x), "r"(y), "r"(z), "r"(sa(&bar)) : "memory");
    if (VARIANT == 2)
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                   ::"r"(sa(&keys[0][0])), "l"(reinterpret_cast<std::uint64_t>(&maps.k)), "r"(x), "r"(y), "r"(z), "r"(sa(&bar)) : "memory");
  }
  unsigned done = 0;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(sa(&bar)), "r"(0u) : "memory");
  } while (!done);
  for (int i = threadIdx.x; i < 18 * 34; i += blockDim.x) out[i] = (&tile[0][0])[i];
  for (int i = threadIdx.x; i < 18 * 48; i += blockDim.x) kout[i] = (&keys[0][0])[i];
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main(int argc, char** argv) {
  void* fn = nullptr; cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  const int px = 64, py = 20, pz = 6;  // pitch in elements
  std::vector<double> h(px * py * pz);
  std::vector<unsigned char> hk(px * py * pz);
  for (size_t i = 0; i < h.size(); ++i) { h[i] = double(i); hk[i] = (unsigned char)(i * 7); }
  double* d; unsigned char* dk; double* o; unsigned char* ok;
  CK(cudaMalloc(&d, h.size() * 8)); CK(cudaMalloc(&dk, hk.size())); CK(cudaMalloc(&o, 18 * 34 * 8)); CK(cudaMalloc(&ok, 18 * 48));
  CK(cudaMemcpy(d, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, hk.data(), hk.size(), cudaMemcpyHostToDevice));
  Maps maps{};
  const int dimx = 50, dimy = 19, dimz = 6;
  cuuint64_t dim[3] = {dimx, dimy, dimz}, st[2] = {px * 8, px * py * 8}, stk[2] = {px, px * py};
  cuuint32_t box[3] = {34, 18, 1}, boxk[3] = {48, 18, 1}, es[3] = {1, 1, 1};
  CUresult r = ((PFN_cuTensorMapEncodeTiled_v12000)encode)(&maps.u, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3, d, dim, st, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  printf("encode u: %d\n", (int)r);
  if (argc > 1 && (atoi(argv[1]) & 256)) {
    cuuint64_t dim2[2] = {dimx, dimy}; cuuint32_t box2[2] = {34, 18};
    r = encode(&maps.u, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, d, dim2, st, box2, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("encode 2d: %d\n", (int)r);
  }
  if (argc > 2) { r = encode(&maps.u, CU_TENSOR_MAP_DATA_TYPE_UINT64, 3, d, dim, st, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); printf("u as uint64: %d\n", (int)r); }
  r = encode(&maps.k, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, dk, dim, stk, boxk, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  printf("encode k: %d\n", (int)r);
  const int flags = argc > 1 ? atoi(argv[1]) : 0;
  CUtensorMap* gm; CK(cudaMalloc(&gm, sizeof(CUtensorMap)));
  CK(cudaMemcpy(gm, &maps.u, sizeof(CUtensorMap), cudaMemcpyHostToDevice));
  for (int v = flags & 3; v == (flags & 3); ++v) {
    const int x = 15 + 8 * v, y = v == 2 ? -1 : 2, z = 1 + v;
    probe<<<1, 128>>>(maps, maps.u, gm, d + 16, o, ok, x, y, z, flags);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("variant %d: %s\n", v, cudaGetErrorString(e)); return 1; }
    std::vector<double> got(18 * 34); std::vector<unsigned char> gk(18 * 48);
    CK(cudaMemcpy(got.data(), o, got.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gk.data(), ok, gk.size(), cudaMemcpyDeviceToHost));
    int bad = 0, badk = 0;
    for (int j = 0; j < 18; ++j) for (int i = 0; i < 34; ++i) {
      int gx = x + i, gy = y + j;
      double want = (gx < dimx && gy >= 0 && gy < dimy) ? h[z * px * py + gy * px + gx] : 0.0;
      if (got[j * 34 + i] != want) ++bad;
    }
    if (v == 2) for (int j = 0; j < 18; ++j) for (int i = 0; i < 48; ++i) {
      int gx = x + i, gy = y + j;
      unsigned char want = (gx < dimx && gy >= 0 && gy < dimy) ? hk[z * px * py + gy * px + gx] : 0;
      if (gk[j * 48 + i] != want) ++badk;
    }
    printf("variant %d: %d wrong u, %d wrong keys\n", v, bad, badk);
  }
  return 0;
}
