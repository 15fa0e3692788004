// The benchmark suite that `heatsim bench` and `heatsim bench --tune` share: the eight
// shapes, the problem made of each (random data, Dirichlet-zero faces, S = I + 0.9 dt_max L)
// and the timer; and the varying-coefficient rows that `heatsim bench` adds (two materials,
// dt = 0.9 of the Gershgorin limit), which tuning leaves out: their rate is not a constant
// stencil's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim::app {

struct BenchShape {
  std::string name;
  int dims;
  kernels::Stencil laplacian;  // h = 1
  // Varying coefficients: two materials split at x = n_x / 2 (kMaterials), the conservative
  // form of StencilProblem::coefficients instead of the constant stencil.
  bool materials = false;
  // With `materials`: the faces' conductances given per face (CoefficientFields::faces, as
  // geometry below the grid gives them), the same values as the harmonic mean's.
  bool faces = false;
  // With `faces`: every node of one temperature law (kernels/temperature_laws.hpp) whose
  // conductivity doubles over the field's range and which melts over part of it, so each step
  // also re-evaluates the faces and advances the enthalpy.
  bool temperature = false;
};

// Heat-1D, 1D5P, Heat-2D, Box-2D9P, Star-2D13P, Box-2D49P, Heat-3D, Box-3D27P.
std::vector<BenchShape> suite();
// The varying-coefficient rows: Heat-3D-mat (Heat-3D's grid and star, two materials) and
// Heat-3D-faces (the same with the faces' conductances given).
std::vector<BenchShape> material_suite();

// The shapes named (case-insensitive), or the whole suite when `names` is empty; with
// `materials` the material rows are part of the suite too. Returns false and names the unknown
// one in `error`.
bool select_shapes(const std::vector<std::string>& names, std::vector<BenchShape>& shapes,
                   std::string& error, bool materials = false);

// Bytes a step moves per point at one step per pass: u read and written (2 values), and for a
// material row also k and dt/C read (4 values).
std::size_t bytes_per_point(const BenchShape& shape, kernels::Precision precision);

// Points per axis of `heatsim bench`: 1D 2^26, 2D 8192, 3D 512.
std::int64_t default_size(int dims);
// Points per axis of a shape's grid at `size` per axis (at least the stencil's width), 1 on the
// inactive axes.
std::array<std::int64_t, 3> bench_grid(const BenchShape& shape, std::int64_t size);
// "8192x8192": the active axes' points.
std::string grid_label(int dims, const std::array<std::int64_t, 3>& n);
// The correctness check's grid: small, not a multiple of any tile.
std::array<std::int64_t, 3> check_size(int dims);

kernels::StencilProblem make_bench_problem(const BenchShape& shape,
                                           const std::array<std::int64_t, 3>& n,
                                           kernels::Precision precision);

std::vector<double> random_field(std::int64_t points, std::uint64_t seed);

// Milliseconds for backend.advance(steps, step0): CUDA events for GPU backends, the host
// clock around advance + synchronize otherwise.
double time_advance_ms(kernels::Backend& b, std::int64_t steps, std::int64_t step0);

}  // namespace heatsim::app
