// The kernel lab's driver for the multigrid's fused red-black sweep (kernels/cuda/fused_sweep.cuh):
// one tile (LAB_PAIRS x LAB_ROWS threads, LAB_PLANES planes per block) per build. It checks the
// sweep against red-black Gauss-Seidel written here on the host in the level operations'
// arithmetic (bit for bit: both colour orders, from x and from zero, the output poisoned, a size
// that is no tile multiple, Dirichlet nodes), then times sweeps at N^3 beside a launch per colour
// (colour_kernel's form, written here) on the same level. Built and run by
// scripts/kernel-lab/mg-sweep.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/fused_sweep.cuh"

using namespace heatsim::kernels::cuda;

#ifndef LAB_PAIRS
#define LAB_PAIRS 32
#endif
#ifndef LAB_ROWS
#define LAB_ROWS 16
#endif
#ifndef LAB_PLANES
#define LAB_PLANES 32
#endif
using Tile = SweepTile<LAB_PAIRS, LAB_ROWS, LAB_PLANES>;

namespace {

constexpr double kOmega = 1.27;

// A random compact level on the host: fp32 conductances in [0.5, 50], node terms in [0, 2], the
// x- face and 2% of the other nodes fixed.
struct HostLevel {
  long long n[3];
  std::vector<float> g[3];
  std::vector<double> diagonal;
  std::vector<std::uint8_t> fixed;
  long long points() const { return n[0] * n[1] * n[2]; }
};

HostLevel random_level(long long nx, long long ny, long long nz, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  HostLevel L{{nx, ny, nz}, {}, {}, {}};
  const long long np = L.points();
  for (auto& g : L.g) g.resize(static_cast<std::size_t>(np));
  L.diagonal.resize(static_cast<std::size_t>(np));
  L.fixed.resize(static_cast<std::size_t>(np));
  for (long long i = 0; i < np; ++i)
    for (auto& g : L.g) g[i] = static_cast<float>(0.5 + 49.5 * u(rng));
  const long long stride[3] = {1, nx, nx * ny};
  for (long long i = 0; i < np; ++i) {
    const long long c[3] = {i % nx, i / nx % ny, i / (nx * ny)};
    double d = 2.0 * u(rng);
    for (int a = 0; a < 3; ++a) {
      if (c[a] > 0) d += static_cast<double>(L.g[a][i - stride[a]]);
      if (c[a] + 1 < L.n[a]) d += static_cast<double>(L.g[a][i]);
    }
    L.diagonal[i] = d;
    L.fixed[i] = c[0] == 0 || u(rng) < 0.02;
  }
  return L;
}

std::vector<double> random_values(long long np, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(1.0, 3.0);
  std::vector<double> v(static_cast<std::size_t>(np));
  for (double& x : v) x = u(rng) * (u(rng) < 2.0 ? -1.0 : 1.0);
  return v;
}

// One sweep on the host: colour `first`, then the other, each node from the values as they are
// (the level operations' order: neighbours x-, x+, y-, y+, z-, z+, each product rounded).
void host_sweep(const HostLevel& L, const std::vector<double>& b, std::vector<double>& x,
                int first) {
  const long long nx = L.n[0], ny = L.n[1], nz = L.n[2], st[3] = {1, nx, nx * ny};
  for (int pass = 0; pass < 2; ++pass) {
    const int colour = pass == 0 ? first : 1 - first;
    for (long long i = 0; i < L.points(); ++i) {
      const long long c[3] = {i % nx, i / nx % ny, i / (nx * ny)};
      if ((c[0] + c[1] + c[2]) % 2 != colour || L.fixed[i]) continue;
      double s = 0.0;
      for (int a = 0; a < 3; ++a) {
        if (c[a] > 0) s += static_cast<double>(L.g[a][i - st[a]]) * x[i - st[a]];
        if (c[a] + 1 < L.n[a]) s += static_cast<double>(L.g[a][i]) * x[i + st[a]];
      }
      const double xo = x[i];
      x[i] = xo + kOmega * ((b[i] + s) / L.diagonal[i] - xo);
    }
  }
  (void)nz;
}

// A level's arrays on the device.
struct DeviceLevel {
  SweepLevel view;
  void* arrays[5] = {};
  explicit DeviceLevel(const HostLevel& L) {
    const std::size_t np = static_cast<std::size_t>(L.points());
    for (int a = 0; a < 3; ++a) {
      HEATSIM_CUDA_CHECK(cudaMalloc(&arrays[a], np * sizeof(float)));
      HEATSIM_CUDA_CHECK(
          cudaMemcpy(arrays[a], L.g[a].data(), np * sizeof(float), cudaMemcpyHostToDevice));
      view.conductance32[a] = static_cast<const float*>(arrays[a]);
      view.n[a] = L.n[a];
    }
    HEATSIM_CUDA_CHECK(cudaMalloc(&arrays[3], np * sizeof(double)));
    HEATSIM_CUDA_CHECK(
        cudaMemcpy(arrays[3], L.diagonal.data(), np * sizeof(double), cudaMemcpyHostToDevice));
    HEATSIM_CUDA_CHECK(cudaMalloc(&arrays[4], np));
    HEATSIM_CUDA_CHECK(cudaMemcpy(arrays[4], L.fixed.data(), np, cudaMemcpyHostToDevice));
    view.diagonal32 = static_cast<const double*>(arrays[3]);
    view.fixed = static_cast<const std::uint8_t*>(arrays[4]);
  }
  ~DeviceLevel() {
    for (void* p : arrays) cudaFree(p);
  }
};

double* device_copy(const std::vector<double>& v) {
  double* d = nullptr;
  HEATSIM_CUDA_CHECK(cudaMalloc(&d, v.size() * sizeof(double)));
  HEATSIM_CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice));
  return d;
}

// One colour of the sweep in colour_kernel's form: a thread per node of the colour, every
// second x of each row, in place.
__global__ void __launch_bounds__(128, 16)
    colour_launch(SweepLevel L, const double* __restrict__ b, double* x, int colour, double omega) {
  const long long nx = L.n[0], ny = L.n[1], nz = L.n[2], plane = nx * ny;
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  for (long long r = blockIdx.y; r < ny * nz; r += gridDim.y) {
    const long long y = r % ny, z = r / ny;
    const long long xi = 2 * t + ((colour + y + z) & 1);
    if (xi >= nx) continue;
    const long long i = r * nx + xi;
    if (L.fixed[i]) continue;
    double s = 0.0;
    if (xi > 0)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[0][i - 1]), x[i - 1]));
    if (xi < nx - 1)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[0][i]), x[i + 1]));
    if (y > 0)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[1][i - nx]), x[i - nx]));
    if (y < ny - 1)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[1][i]), x[i + nx]));
    if (z > 0)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[2][i - plane]), x[i - plane]));
    if (z < nz - 1)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(L.conductance32[2][i]), x[i + plane]));
    const double xo = x[i];
    const double gs = __ddiv_rn(__dadd_rn(b[i], s), L.diagonal32[i]);
    x[i] = __dadd_rn(xo, __dmul_rn(omega, __dsub_rn(gs, xo)));
  }
}

void fused(const SweepLevel& L, const double* b, const double* in, double* out, int first,
           bool from_zero) {
  const dim3 grid = Tile::grid(L), block(Tile::pairs, Tile::rows);
  if (from_zero)
    fused_sweep_kernel<true, Tile><<<grid, block>>>(L, b, in, out, first, kOmega);
  else
    fused_sweep_kernel<false, Tile><<<grid, block>>>(L, b, in, out, first, kOmega);
  HEATSIM_CUDA_CHECK_LAUNCH();
}

// The fused sweep against the host's at an odd size; the number of nodes that differ.
long long check(long long nx, long long ny, long long nz) {
  std::mt19937_64 rng(20261129);
  const HostLevel L = random_level(nx, ny, nz, rng);
  const DeviceLevel D(L);
  const std::vector<double> b = random_values(L.points(), rng);
  double* db = device_copy(b);
  long long differ = 0;
  for (int first = 0; first < 2; ++first)
    for (const bool from_zero : {false, true}) {
      std::vector<double> x =
          from_zero ? std::vector<double>(b.size(), 0.0) : random_values(L.points(), rng);
      double* din = device_copy(from_zero ? std::vector<double>(b.size(), std::nan("")) : x);
      double* dout = device_copy(std::vector<double>(b.size(), std::nan("")));
      fused(D.view, db, din, dout, first, from_zero);
      std::vector<double> got(b.size());
      HEATSIM_CUDA_CHECK(
          cudaMemcpy(got.data(), dout, got.size() * sizeof(double), cudaMemcpyDeviceToHost));
      host_sweep(L, b, x, first);
      for (std::size_t i = 0; i < got.size(); ++i)
        differ += std::memcmp(&got[i], &x[i], sizeof(double)) != 0;
      cudaFree(din);
      cudaFree(dout);
    }
  cudaFree(db);
  return differ;
}

}  // namespace

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 256;
  const long long differ = check(67, 45, 41) + check(23, 19, 21);
  std::printf("check %s (%lld nodes differ); ", differ == 0 ? "ok" : "FAILED", differ);

  std::mt19937_64 rng(7);
  const HostLevel L = random_level(n, n, n, rng);
  const DeviceLevel D(L);
  const std::vector<double> b = random_values(L.points(), rng);
  double* db = device_copy(b);
  double* dx = device_copy(random_values(L.points(), rng));
  double* dy = device_copy(std::vector<double>(b.size(), 0.0));
  cudaEvent_t start, stop;
  HEATSIM_CUDA_CHECK(cudaEventCreate(&start));
  HEATSIM_CUDA_CHECK(cudaEventCreate(&stop));
  const auto time = [&](auto&& sweep) {
    constexpr int kRepeats = 20;
    sweep();  // warm-up
    HEATSIM_CUDA_CHECK(cudaEventRecord(start));
    for (int r = 0; r < kRepeats; ++r) sweep();
    HEATSIM_CUDA_CHECK(cudaEventRecord(stop));
    HEATSIM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    HEATSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return 1e3 * ms / kRepeats;  // us per sweep
  };
  const dim3 cgrid(static_cast<unsigned>((n / 2 + 127) / 128),
                   static_cast<unsigned>(std::min<long long>(n * n, 65535)));
  const double launches = time([&] {
    colour_launch<<<cgrid, 128>>>(D.view, db, dx, 0, kOmega);
    colour_launch<<<cgrid, 128>>>(D.view, db, dx, 1, kOmega);
    HEATSIM_CUDA_CHECK_LAUNCH();
  });
  int parity = 0;
  const double one = time([&] {
    fused(D.view, db, parity ? dy : dx, parity ? dx : dy, 0, false);
    parity ^= 1;
  });
  const double from_zero = time([&] { fused(D.view, db, dx, dy, 0, true); });
  // Bytes a sweep must move: x in and out, b and the diagonal (8 B each), the flag, three fp32
  // conductances.
  const double bytes = 45.0 * static_cast<double>(L.points());
  std::printf(
      "%lld^3: a launch per colour %.1f us a sweep, fused %.1f us (%.0f GB/s), from zero "
      "%.1f us\n",
      n, launches, one, bytes / one * 1e-3, from_zero);
  cudaFree(db);
  cudaFree(dx);
  cudaFree(dy);
  return differ == 0 ? 0 : 1;
}
