#include "bench_suite.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "kernels/face_conductance.hpp"
#include "solver/stencil.hpp"
#ifdef HEATSIM_HAVE_CUDA
#include "kernels/cuda/timing.hpp"
#endif

namespace heatsim::app {
namespace {

using kernels::Stencil;

Stencil zero_stencil(int dims, int radius) {
  Stencil s;
  s.dims = dims;
  s.radius = radius;
  s.weights.assign(s.size(), 0.0);
  return s;
}

// Star Laplacian from 1D second-derivative weights (centre at index r), on every axis.
Stencil star_laplacian(int dims, const std::vector<double>& d) {
  const int r = static_cast<int>(d.size() / 2);
  Stencil s = zero_stencil(dims, r);
  for (int a = 0; a < dims; ++a)
    for (int o = -r; o <= r; ++o) {
      int off[3] = {0, 0, 0};
      off[a] = o;
      s.at(off[0], off[1], off[2]) += d[static_cast<std::size_t>(o + r)];
    }
  return s;
}

// The isotropic 2D nine-point Laplacian [1 4 1; 4 -20 4; 1 4 1] / 6.
Stencil box2d9() {
  Stencil s = zero_stencil(2, 1);
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      s.at(dx, dy) = (dx == 0 && dy == 0) ? -20.0 / 6 : (dx == 0 || dy == 0) ? 4.0 / 6 : 1.0 / 6;
  return s;
}

// The isotropic 3D 27-point Laplacian: corners 1/30, edges 1/10, faces 7/15, centre -64/15.
Stencil box3d27() {
  Stencil s = zero_stencil(3, 1);
  const double w[4] = {-64.0 / 15, 7.0 / 15, 1.0 / 10, 1.0 / 30};
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) s.at(dx, dy, dz) = w[std::abs(dx) + std::abs(dy) + std::abs(dz)];
  return s;
}

// A dense 7x7 box: the nine-point Laplacian smoothed by the 5x5 binomial filter
// ([1 4 6 4 1]/16 on each axis). Every weight is nonzero and they sum to zero.
Stencil box2d49() {
  const Stencil lap = box2d9();
  const double b[5] = {1.0 / 16, 4.0 / 16, 6.0 / 16, 4.0 / 16, 1.0 / 16};
  Stencil s = zero_stencil(2, 3);
  for (int ly = -1; ly <= 1; ++ly)
    for (int lx = -1; lx <= 1; ++lx)
      for (int by = -2; by <= 2; ++by)
        for (int bx = -2; bx <= 2; ++bx) s.at(lx + bx, ly + by) += lap.at(lx, ly) * b[bx + 2] * b[by + 2];
  return s;
}

// The material rows' two materials: x < n_x / 2 and the rest.
constexpr double kConductivity[2] = {1.0, 10.0};
constexpr double kCapacity[2] = {1.0, 2.0};

// Coefficient fields for a material row (h = 1, no sources), and dt = 0.9 of the Gershgorin
// limit min_i C_i / sum_j K_ij. The map varies along x only, so one line along x holds every
// node's sum; the faces' ghosts repeat the mirror node's coefficients, so a boundary node
// sums like an interior one.
void add_materials(kernels::StencilProblem& p, bool faces, bool temperature) {
  auto fields = std::make_shared<kernels::CoefficientFields>();
  const std::int64_t nx = p.n[0], split = nx / 2;
  auto material = [&](std::int64_t x) { return x < split ? 0 : 1; };
  const std::size_t points = static_cast<std::size_t>(p.points());
  fields->conductivity.resize(points);
  fields->capacity.resize(points);
  for (std::size_t i = 0; i < points; ++i) {
    const int m = material(static_cast<std::int64_t>(i) % nx);
    fields->conductivity[i] = kConductivity[m];
    fields->capacity[i] = kCapacity[m];
  }
  auto k = [&](std::int64_t x) { return kConductivity[material(x)]; };
  double rate = 0.0;  // max_i sum_j K_ij / C_i
  for (std::int64_t x = 0; x < nx; ++x) {
    const double ki = k(x);
    double sum = 2.0 * (p.dims - 1) * ki;  // the other axes: same material
    for (std::int64_t j : {x - 1, x + 1}) {
      const double kj = k(j < 0 ? 1 : j >= nx ? nx - 2 : j);
      sum += kernels::face_conductance(ki, kj);
    }
    rate = std::max(rate, sum / kCapacity[material(x)]);
  }
  p.dt = 0.9 / rate;
  // Faces along y and z lie inside one material; along x, between x and x + 1 (the last
  // node's entry is unused).
  if (faces)
    for (int a = 0; a < p.dims; ++a) {
      std::vector<double>& K = fields->faces[static_cast<std::size_t>(a)];
      K.resize(points);
      for (std::size_t i = 0; i < points; ++i) {
        const std::int64_t x = static_cast<std::int64_t>(i) % nx;
        K[i] = a == 0 && x + 1 < nx ? kernels::face_conductance(k(x), k(x + 1)) : k(x);
      }
    }
  if (temperature) {
    // The field lies in [0.5, 1.5] (random_field): k doubles across it, C_ref grows by half,
    // and a latent heat of 0.2 C_ref K is taken up between 0.9 and 1.1.
    auto laws = std::make_shared<kernels::TemperatureDependence>();
    kernels::TemperatureLaw law;
    law.conductivity = {{0.5, 1.0}, {1.5, 2.0}};
    law.capacity = {{0.5, 1.0}, {1.5, 1.5}};
    law.solidus = 0.9;
    law.liquidus = 1.1;
    law.latent = 0.2;
    law.prepare();
    laws->laws = {law};
    laws->law.assign(points, 0);
    for (int a = 0; a < p.dims; ++a) {
      std::vector<double>& share = laws->share[static_cast<std::size_t>(a)];
      share.resize(points);
      for (std::size_t i = 0; i < points; ++i) {
        const std::int64_t x = static_cast<std::int64_t>(i) % nx;
        // The series split of the harmonic mean: k_j / (k_i + k_j) of the resistance in i.
        share[i] = a == 0 && x + 1 < nx ? k(x + 1) / (k(x) + k(x + 1)) : 0.5;
      }
    }
    fields->temperature = laws;
    p.dt /= 2.0;  // the largest conductivity ratio; capacity ratios are >= 1
  }
  p.coefficients = fields;
}

}  // namespace

std::vector<BenchShape> suite() {
  const std::vector<double> o2{1.0, -2.0, 1.0};
  const std::vector<double> o4{-1.0 / 12, 4.0 / 3, -5.0 / 2, 4.0 / 3, -1.0 / 12};
  const std::vector<double> o6{1.0 / 90, -3.0 / 20, 3.0 / 2, -49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90};
  return {{"Heat-1D", 1, star_laplacian(1, o2)},   {"1D5P", 1, star_laplacian(1, o4)},
          {"Heat-2D", 2, star_laplacian(2, o2)},   {"Box-2D9P", 2, box2d9()},
          {"Star-2D13P", 2, star_laplacian(2, o6)}, {"Box-2D49P", 2, box2d49()},
          {"Heat-3D", 3, star_laplacian(3, o2)},   {"Box-3D27P", 3, box3d27()}};
}

std::vector<BenchShape> material_suite() {
  BenchShape heat3d{"Heat-3D-mat", 3, star_laplacian(3, {1.0, -2.0, 1.0})};
  heat3d.materials = true;
  BenchShape given = heat3d;
  given.name = "Heat-3D-faces";
  given.faces = true;
  BenchShape laws = given;
  laws.name = "Heat-3D-kT";
  laws.temperature = true;
  return {heat3d, given, laws};
}

bool select_shapes(const std::vector<std::string>& names, std::vector<BenchShape>& shapes,
                   std::string& error, bool materials) {
  std::vector<BenchShape> all = suite();
  if (materials)
    for (BenchShape& s : material_suite()) all.push_back(s);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  shapes.clear();
  for (const auto& want : names) {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const BenchShape& s) { return lower(s.name) == lower(want); });
    if (it == all.end()) {
      std::string known;
      for (const auto& s : all) known += (known.empty() ? "" : ", ") + s.name;
      error = "unknown shape '" + want + "' (suite: " + known + ")";
      return false;
    }
    shapes.push_back(*it);
  }
  if (shapes.empty()) shapes = all;
  return true;
}

std::size_t bytes_per_point(const BenchShape& shape, kernels::Precision precision) {
  const std::size_t value = precision == kernels::Precision::fp64 ? 8 : 4;
  // u in and out, then the CUDA sweeps' compact form (kernels/node_classes.hpp): a byte per
  // node naming its material and, with the faces given, a byte per face of each axis naming its
  // conductance. What register-tiling moves; shared-tiling and the CPU read k and dt/C, or dt/C
  // and a face array per axis, and cuda-naive the face arrays.
  // Temperature-dependent materials keep the fields: dt/C and the faces' arrays.
  const std::size_t dims = static_cast<std::size_t>(shape.dims);
  if (!shape.materials) return 2 * value;
  if (!shape.temperature) return 2 * value + 1 + (shape.faces ? dims : 0);
  const std::size_t sweep = (3 + dims) * value;
  // The faces' update (u, the law's index, a share and a reference conductance per axis in
  // double, the faces written) and the enthalpy step (u, the sweep's result read and written,
  // the law's index): what the design moves today, not the least a fused step would.
  return sweep + (value + 4 + 16 * dims + dims * value) + (3 * value + 4);
}

std::int64_t default_size(int dims) { return dims == 1 ? (std::int64_t{1} << 26) : dims == 2 ? 8192 : 512; }

std::array<std::int64_t, 3> bench_grid(const BenchShape& shape, std::int64_t size) {
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < shape.dims; ++a)
    n[static_cast<std::size_t>(a)] = std::max<std::int64_t>(size, 2 * shape.laplacian.radius + 1);
  return n;
}

std::string grid_label(int dims, const std::array<std::int64_t, 3>& n) {
  std::string label = std::to_string(n[0]);
  for (int a = 1; a < dims; ++a) label += "x" + std::to_string(n[static_cast<std::size_t>(a)]);
  return label;
}

std::array<std::int64_t, 3> check_size(int dims) {
  if (dims == 1) return {4099, 1, 1};
  if (dims == 2) return {131, 97, 1};
  return {37, 29, 23};
}

kernels::StencilProblem make_bench_problem(const BenchShape& shape, const std::array<std::int64_t, 3>& n,
                                  kernels::Precision precision) {
  kernels::StencilProblem p;
  p.dims = shape.dims;
  p.n = n;
  p.h = {1.0, 1.0, 1.0};
  const double dt = 0.9 * solver::max_stable_dt(shape.laplacian, 1.0);
  p.stencil = solver::update_operator(shape.laplacian, dt);
  p.dt = dt;
  for (auto& f : p.faces) {
    f.kind = kernels::BoundaryKind::dirichlet;
    f.value = 0.0;
  }
  p.precision = precision;
  if (shape.materials) add_materials(p, shape.faces, shape.temperature);
  return p;
}

std::vector<double> random_field(std::int64_t points, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> f(static_cast<std::size_t>(points));
  for (double& v : f) v = u(rng);
  return f;
}

double time_advance_ms(kernels::Backend& b, std::int64_t steps, std::int64_t step0) {
#ifdef HEATSIM_HAVE_CUDA
  if (b.capabilities().gpu) {
    const double ms = kernels::cuda::time_advance_ms(b, steps, step0);
    b.synchronize();
    return ms;
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  b.advance(steps, step0);
  b.synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace heatsim::app
