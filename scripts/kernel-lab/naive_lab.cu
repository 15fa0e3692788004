// The kernel lab's driver for one step of the radius-1 3D star (Heat-3D) between fixed
// Dirichlet faces, cuda-naive's form: a thread per column of LAB_C nodes along z, blocks of
// LAB_BX x LAB_BY threads, every neighbour read from global memory. Variants: LAB_STORE 1
// streams the stores (st.global.cs), LAB_LDG 1 reads through the read-only path, LAB_MINB the
// blocks per SM asked of ptxas (0: none), LAB_ZORDER 1 launches z-columns fastest after x (a
// block's z-neighbours run beside it). It checks one step against a plain one-node-per-thread
// kernel bit for bit (random field, output poisoned, an odd size), then times steps at N^3.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "lab_check.cuh"

#ifndef LAB_BX
#define LAB_BX 32
#endif
#ifndef LAB_BY
#define LAB_BY 8
#endif
#ifndef LAB_C
#define LAB_C 4
#endif
#ifndef LAB_STORE
#define LAB_STORE 0
#endif
#ifndef LAB_LDG
#define LAB_LDG 0
#endif
#ifndef LAB_MINB
#define LAB_MINB 0
#endif
#ifndef LAB_ZORDER
#define LAB_ZORDER 0
#endif
// LAB_PAD 1: the field's padded layout (a ghost layer on every side, rows padded to start on
// 128 bytes, as the backends lay a field), else dense n^3. LAB_STRIDE 1: the backend's loops
// (64-bit coordinates, blocks striding over y and z), else one column per thread.
#ifndef LAB_PAD
#define LAB_PAD 0
#endif
#ifndef LAB_STRIDE
#define LAB_STRIDE 0
#endif
// LAB_OP 1: the backend's operator form: seven weights from an array in the arguments and a
// source term added (zero), else four named weights.
#ifndef LAB_OP
#define LAB_OP 0
#endif
#ifndef LAB_T
#define LAB_T double
#endif
using T = LAB_T;


struct Grid {
  int n;
  std::int64_t py, pz, origin, total;
};
struct W {
  T c, x, y, z;
#if LAB_OP
  T w[7];
  T source;
#endif
};

__device__ __forceinline__ T load(const T* p) {
#if LAB_LDG
  return __ldg(p);
#else
  return *p;
#endif
}
__device__ __forceinline__ void store(T* p, T v) {
#if LAB_STORE
  __stcs(p, v);
#else
  *p = v;
#endif
}

// The reference: one node per thread, inner nodes only.
__global__ void reference(const T* in, T* out, Grid g, W w) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x > g.n - 2 || y < 1 || y > g.n - 2) return;
  for (int z = 1; z < g.n - 1; ++z) {
    const std::int64_t i = g.origin + x + y * g.py + z * g.pz;
    T acc = w.z * in[i - g.pz];
    acc += w.y * in[i - g.py];
    acc += w.x * in[i - 1];
    acc += w.c * in[i];
    acc += w.x * in[i + 1];
    acc += w.y * in[i + g.py];
    acc += w.z * in[i + g.pz];
    out[i] = acc;
  }
}

template <int C>
__device__ __forceinline__ T node(const T* in, std::int64_t i, const Grid& g, const W& w) {
#if LAB_OP
  T acc = T(0);
  acc += w.w[0] * load(in + i - g.pz);
  acc += w.w[1] * load(in + i - g.py);
  acc += w.w[2] * load(in + i - 1);
  acc += w.w[3] * load(in + i);
  acc += w.w[4] * load(in + i + 1);
  acc += w.w[5] * load(in + i + g.py);
  acc += w.w[6] * load(in + i + g.pz);
  return acc + w.source;
#else
  T acc = w.z * load(in + i - g.pz);
  acc += w.y * load(in + i - g.py);
  acc += w.x * load(in + i - 1);
  acc += w.c * load(in + i);
  acc += w.x * load(in + i + 1);
  acc += w.y * load(in + i + g.py);
  acc += w.z * load(in + i + g.pz);
  return acc;
#endif
}

__global__ void
#if LAB_MINB
__launch_bounds__(LAB_BX * LAB_BY, LAB_MINB)
#else
__launch_bounds__(LAB_BX * LAB_BY)
#endif
    lab(const T* __restrict__ in, T* __restrict__ out, Grid g, W w) {
  constexpr int C = LAB_C;
  const int x = blockIdx.x * LAB_BX + threadIdx.x;
  if (x < 1 || x > g.n - 2) return;  // whole rows along x, stores 1 .. n-2
#if LAB_STRIDE
  for (std::int64_t z0 = 1 + static_cast<std::int64_t>(blockIdx.z) * C; z0 < g.n - 1;
       z0 += static_cast<std::int64_t>(gridDim.z) * C)
    for (std::int64_t y = 1 + blockIdx.y * blockDim.y + threadIdx.y; y < g.n - 1;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
      {
#else
  {
#if LAB_ZORDER
    const int zb = blockIdx.y, yb = blockIdx.z;
#else
    const int yb = blockIdx.y, zb = blockIdx.z;
#endif
    const int y = 1 + yb * LAB_BY + threadIdx.y;
    if (y > g.n - 2) return;
    const int z0 = 1 + zb * C;
    {
#endif
      const std::int64_t first = g.origin + x + y * g.py + z0 * g.pz;
      if (z0 + C <= g.n - 1) {
        T v[C];
#pragma unroll
        for (int j = 0; j < C; ++j) v[j] = node<C>(in, first + j * g.pz, g, w);
#pragma unroll
        for (int j = 0; j < C; ++j) store(out + first + j * g.pz, v[j]);
      } else {
        for (int j = 0; z0 + j < g.n - 1; ++j)
          store(out + first + j * g.pz, node<C>(in, first + j * g.pz, g, w));
      }
    }
  }
}

static void run_lab(const T* in, T* out, const Grid& g, const W& w) {
  const int inner = g.n - 2;
  const unsigned bx = (g.n + LAB_BX - 1) / LAB_BX, by = (inner + LAB_BY - 1) / LAB_BY;
  const unsigned bz = LAB_STRIDE ? std::min(65535, (inner + LAB_C - 1) / LAB_C) : (inner + LAB_C - 1) / LAB_C;
#if LAB_ZORDER
  lab<<<dim3(bx, bz, by), dim3(LAB_BX, LAB_BY)>>>(in, out, g, w);
#else
  lab<<<dim3(bx, by, bz), dim3(LAB_BX, LAB_BY)>>>(in, out, g, w);
#endif
  CHECK(cudaGetLastError());
}


static Grid make_grid(int n) {
#if LAB_PAD
  const std::int64_t align = 128 / sizeof(T), x_offset = align;
  const std::int64_t py = (x_offset + n + 1 + align - 1) / align * align, pz = py * (n + 2);
  return Grid{n, py, pz, x_offset + py + pz, pz * (n + 2)};
#else
  const std::int64_t nn = n;
  return Grid{n, nn, nn * nn, 0, nn * nn * nn};
#endif
}

static bool check(int n, const W& w) {
  const Grid g = make_grid(n);
  const std::size_t count = g.total;
  std::vector<T> h(count);
  unsigned s = 12345;
  for (auto& v : h) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<T>(300.0 + (s >> 8) * (1.0 / 16777216.0));
  }
  T *in, *a, *b;
  CHECK(cudaMalloc(&in, count * sizeof(T)));
  CHECK(cudaMalloc(&a, count * sizeof(T)));
  CHECK(cudaMalloc(&b, count * sizeof(T)));
  CHECK(cudaMemcpy(in, h.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(a, 0xff, count * sizeof(T)));
  CHECK(cudaMemset(b, 0xff, count * sizeof(T)));
  reference<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(in, a, g, w);
  CHECK(cudaGetLastError());
  run_lab(in, b, g, w);
  CHECK(cudaDeviceSynchronize());
  std::vector<T> ha(count), hb(count);
  CHECK(cudaMemcpy(ha.data(), a, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hb.data(), b, count * sizeof(T), cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < count; ++i) bad += std::memcmp(&ha[i], &hb[i], sizeof(T)) != 0;
  CHECK(cudaFree(in));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  if (bad) std::printf("check n=%d: %zu nodes differ\n", n, bad);
  return bad == 0;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 40;
  W w{static_cast<T>(0.4), static_cast<T>(0.1), static_cast<T>(0.1), static_cast<T>(0.1)};
#if LAB_OP
  for (int k = 0; k < 7; ++k) w.w[k] = k == 3 ? w.c : w.x;
  w.source = T(0);
#endif
  const bool ok = check(203, w) && check(97, w) && check(n, w);
  const Grid g = make_grid(n);
  const std::size_t count = g.total, nodes = static_cast<std::size_t>(n) * n * n;
  T *a, *b;
  CHECK(cudaMalloc(&a, count * sizeof(T)));
  CHECK(cudaMalloc(&b, count * sizeof(T)));
  {  // random values (not zeros: the memory system is not handed a trivially compressible field)
    std::vector<T> h(count);
    unsigned s = 777;
    for (auto& v : h) {
      s = s * 1664525u + 1013904223u;
      v = static_cast<T>(300.0 + (s >> 8) * (1.0 / 16777216.0));
    }
    CHECK(cudaMemcpy(a, h.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, h.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  for (int i = 0; i < 4; ++i) run_lab(i % 2 ? b : a, i % 2 ? a : b, g, w);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < steps; ++i) run_lab(i % 2 ? b : a, i % 2 ? a : b, g, w);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  float copy_best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < steps; ++i) copy_kernel<<<132 * 16, 256>>>(i % 2 ? b : a, i % 2 ? a : b, nodes);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < copy_best) copy_best = ms;
  }
  const double bound = static_cast<double>(nodes) * steps / (copy_best * 1e-3) / 1e9;
  // Counted as the bench counts: every node of the grid per step.
  const double rate = static_cast<double>(nodes) * steps / (best * 1e-3) / 1e9;
  std::printf("%-40s %s %8.2f GStencil/s  (copy bound %.1f, %.1f%%)\n", argc > 3 ? argv[3] : "variant",
              ok ? "exact" : "WRONG", rate, bound, 100.0 * rate / bound);
  return ok ? 0 : 1;
}
