// The case model: plain structs filled from YAML by io/ and validated there. Defaults live
// here, beside the fields. Nothing in here knows YAML.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim::solver {

using kernels::BoundaryFace;
using kernels::BoundaryKind;
using kernels::Precision;

struct GridSpec {
  int dims = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};  // points per axis (x, y, z); 1 on unused axes
  std::array<double, 3> length{1.0, 1.0, 1.0};
};

struct PhysicsSpec {
  double alpha = 1.0;
  double source = 0.0;  // constant f in u_t = alpha*lap(u) + f
};

enum class SchemeKind { order2, order4, order6, isotropic, custom };

struct SchemeSpec {
  SchemeKind kind = SchemeKind::order2;
  // custom: the Laplacian's weights times h^2 (equal spacing on every axis), dense
  // (2*radius+1)^dims, ordered [z][y][x] with x fastest.
  int radius = 1;
  std::vector<double> weights;
};

enum class InitialKind { constant, gaussian, modes, box, expression, file };

// One term of a modes initial condition: amplitude * prod_axis f_a(pi * k_a * x_a / L_a),
// f_a = sin or cos.
struct ModeTerm {
  double amplitude = 1.0;
  std::array<int, 3> k{1, 1, 1};
  std::array<bool, 3> cosine{false, false, false};
};

struct InitialSpec {
  InitialKind kind = InitialKind::constant;
  double value = 0.0;       // constant; box inside value
  double background = 0.0;  // gaussian and box outside value
  double amplitude = 1.0;   // gaussian peak
  std::array<double, 3> center{0.5, 0.5, 0.5};  // gaussian centre (absolute coordinates)
  double width = 0.1;                            // gaussian standard deviation
  std::array<double, 3> lower{0, 0, 0}, upper{0, 0, 0};  // box corners
  std::vector<ModeTerm> modes;
  std::string expression;     // u(x[, y[, z]]) at t = 0 (solver/expression.hpp)
  std::string path;           // file: an HDF5 file (relative to the working directory)
  std::string dataset = "u";  // file: the dataset in it, dimensions z, y, x
};

struct TimeSpec {
  std::optional<double> dt;        // empty: auto (0.9 of the stability limit)
  std::optional<std::int64_t> steps;
  std::optional<double> end_time;  // exactly one of steps / end_time
};

struct OutputSpec {
  std::string directory = "out";
  std::int64_t every = 0;  // 0: only the final state
  std::string name = "field";
};

struct CheckpointSpec {
  std::int64_t every = 0;  // 0: only at the end and on a signal
};

struct Case {
  GridSpec grid;
  PhysicsSpec physics;
  SchemeSpec scheme;
  std::array<BoundaryFace, 6> boundary{};  // x-, x+, y-, y+, z-, z+
  InitialSpec initial;
  TimeSpec time;
  Precision precision = Precision::fp64;
  std::string backend = "auto";
  // Time steps applied per pass (temporal fusion, exact at boundaries); 0 = auto (the
  // backend picks from its measured table). Backends without fusion step one at a time.
  int fusion = 1;
  OutputSpec output;
  CheckpointSpec checkpoint;
  std::string source_text;  // the YAML as given, for provenance
  std::string source_path;
};

const char* to_string(SchemeKind k);
// One line on the initial condition, for `heatsim validate`: "gaussian, amplitude 1 at (0.5,
// 0.5), width 0.05, background 0", "expression sin(pi*x)", "file out/u.h5, dataset u".
std::string describe_initial(const Case& c);
std::optional<SchemeKind> scheme_from_string(const std::string& s);

// Node-centred spacing: L/(n-1), or L/n on periodic axes.
double spacing(const Case& c, int axis);

}  // namespace heatsim::solver
