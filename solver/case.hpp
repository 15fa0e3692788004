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

// How time advances: forward Euler steps (the default), one multigrid solve per step
// (backward Euler, Crank-Nicolson, BDF2: any dt), or the steady state in one solve
// (solver/multigrid/implicit_stepper.hpp).
enum class TimeMethod { explicit_euler, backward_euler, crank_nicolson, bdf2, steady };

struct TimeSpec {
  std::optional<double> dt;        // empty: auto (0.9 of the stability limit)
  std::optional<std::int64_t> steps;
  std::optional<double> end_time;  // exactly one of steps / end_time
  // `--steps N`: run N steps at the dt the case gives (an `end` still sets an auto dt), so
  // that the run is the first N steps of the case's own and its checkpoints continue it.
  std::optional<std::int64_t> steps_override;
  TimeMethod method = TimeMethod::explicit_euler;
  double tolerance = 1e-10;  // implicit solves: relative residual at which a solve stops
};

struct OutputSpec {
  std::string directory = "out";
  std::int64_t every = 0;  // 0: only the final state
  std::string name = "field";
  // What the output files store the field in: the run's precision when empty; fp32 halves an
  // fp64 run's files (checkpoints keep the run's precision, so restarts stay bit-exact).
  std::optional<Precision> precision;
  // HDF5 deflate level 1-9 of the output files (byte shuffle, then deflate, chunked); 0: off.
  int compression = 0;
  // heat_flows.csv: a row of heat flows (solver/heat_flows.hpp) at every output.
  bool heat_flows = false;
  // output.fields besides the temperature (always written): the heat-flux vector -k grad T,
  // the nodes' conductivity (at their temperature where it varies) and, for materials with a
  // phase change, the liquid fraction, as datasets of every output file.
  bool heat_flux = false;
  bool conductivity = false;
  bool liquid_fraction = false;
  bool any_field() const { return heat_flux || conductivity || liquid_fraction; }
};

struct CheckpointSpec {
  std::int64_t every = 0;  // 0: only at the end and on a signal
  // The newest checkpoints of this run kept on disk; older ones this run wrote are removed once
  // a newer one is complete. 0: every one is kept.
  std::int64_t keep = 0;
};

// A material: conductivity k (W/(m K)) and heat capacity rho * c_p (J/(m^3 K)). `diffusivity:
// a` alone in the case means k = a and rho = c_p = 1.
// Properties may vary (kernels/temperature_laws.hpp): `conductivity_table` and
// `specific_heat_table` are (T in K, value) pairs, sorted, piecewise linear and constant beyond
// their ends, and then `conductivity` and `specific_heat` hold their first values (the
// reference the static fields are built with); `axes` gives an anisotropic conductivity
// (kx, ky, kz; `conductivity` is kx); `phase_change` adds the latent heat (J/kg) over
// [solidus, liquidus].
struct PhaseChangeSpec {
  double solidus = 0.0, liquidus = 0.0;
  double latent_heat = 0.0;
};
struct MaterialSpec {
  std::string name;
  double conductivity = 1.0;
  double density = 1.0;
  double specific_heat = 1.0;
  std::vector<std::array<double, 2>> conductivity_table, specific_heat_table;
  std::array<double, 3> axes{0.0, 0.0, 0.0};  // anisotropic: all given > 0
  std::optional<PhaseChangeSpec> phase_change;

  double capacity() const { return density * specific_heat; }
  bool anisotropic() const { return axes[0] > 0.0; }
  // k along `axis` at the reference temperature.
  double conductivity_along(int axis) const {
    return anisotropic() ? axes[static_cast<std::size_t>(axis)] : conductivity;
  }
  bool temperature_dependent() const {
    return conductivity_table.size() > 1 || specific_heat_table.size() > 1 ||
           phase_change.has_value();
  }
};

// A thermal contact (interface) resistance between two materials: every face between them,
// wherever the geometry puts it, adds `resistance` (R'', m^2 K/W, >= 0) in series with the
// two materials' parts of the face (solver/contacts.hpp). The case may give it as a
// conductance 1/R''.
struct ContactSpec {
  std::array<std::string, 2> between;
  double resistance = 0.0;
};

// Where a region or a source applies. A node is inside when its coordinates satisfy the shape:
// box bounds inclusive on the active axes, ball distance <= radius, `where` formula nonzero.
enum class ShapeKind { everywhere, box, ball, where, file };

struct ShapeSpec {
  ShapeKind kind = ShapeKind::everywhere;
  std::array<double, 3> lower{0, 0, 0}, upper{0, 0, 0};  // box
  std::array<double, 3> center{0, 0, 0};                 // ball
  double radius = 0.0;                                   // ball
  std::string where;    // formula of the active axes' coordinates (solver/expression.hpp)
  std::string path;     // file: an HDF5 file (relative to the working directory)
  std::string dataset;  // file: dataset of the grid's shape (z, y, x; leading 1s ignored)
};

// Regions are applied in order; a later one wins where they overlap. A `file` region is an
// integer map: `ids` names the material of every id the map holds (validation refuses an id
// without a name, so a file region assigns every node).
// A void region (`is_void`) removes its shape from the body instead of giving it a material:
// the surfaces between the body and the void take `surface` (convective: transfer h and
// `ambient` as the face's schedule; neumann with heat_flux: W/m^2 into the body; insulated, the
// default: neumann with no flux), named `name` in reports.
struct RegionSpec {
  static BoundaryFace insulated() {
    BoundaryFace f;
    f.kind = BoundaryKind::neumann;
    return f;
  }
  std::string material;  // not for file or void regions
  ShapeSpec shape;
  bool is_void = false;
  BoundaryFace surface = insulated();
  std::string name;
  std::vector<std::pair<std::int64_t, std::string>> ids;  // file: id -> material name
  // file: the map's values in memory order, read by io/ before the fields are built.
  std::vector<std::int64_t> map;
};

// A heat source: `power_density` q (W/m^3) on the shape's nodes, or `power` (W) spread
// uniformly over them (q = power / the shape's volume as the total heat weighs nodes); a file
// shape gives q per node (W/m^3) and takes neither. Times `schedule` (factor 1 when absent).
struct SourceSpec {
  ShapeSpec shape;
  std::optional<double> power;
  std::optional<double> power_density;
  kernels::Schedule schedule{1.0, 0.0, 0.0, {}};
  std::vector<double> density;  // file: q per node, read by io/ before the fields are built
};

// Values at named points (multilinear interpolation of the surrounding nodes), every `every`
// steps and at the end, into <output.directory>/probes.csv.
struct ProbeSpec {
  std::int64_t every = 0;  // 0: at the end only
  std::vector<std::pair<std::string, std::array<double, 3>>> points;
};

// A run under mpirun (solver/parallel): ranks per axis (0: balanced over the free axes) and
// the steps between overlap exchanges (0: the fusion depth). Ignored on one rank.
struct ParallelSpec {
  std::array<int, 3> decomposition{0, 0, 0};
  int exchange_every = 0;
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
  // Real problems (solver/materials.hpp). Empty materials: the homogeneous shorthand
  // `physics` (k = alpha, rho*c_p = 1, q = source) on every node.
  std::vector<MaterialSpec> materials;
  std::vector<RegionSpec> regions;
  std::vector<SourceSpec> sources;
  std::vector<ContactSpec> contacts;  // between materials; none: perfect contact
  ProbeSpec probes;
  ParallelSpec parallel;
  // True when the run needs per-node coefficient fields (kernels::CoefficientFields):
  // materials, sources, or a convective or heat-flux face.
  bool has_fields() const;
  // What makes the properties depend on the temperature, so that implicit steps and steady
  // states iterate on them, every one, joined by commas: a material with a law
  // ("materials.steel depends on temperature"), a radiating face ("boundary.x+ radiates"), a
  // radiating void surface ("regions[2].surface radiates"); empty when nothing does.
  std::string temperature_dependence() const;
  std::string source_text;  // the YAML as given, for provenance
  // The digest of the case text the run began from (io::case_digest), set by a restart from
  // its checkpoint; empty: the run begins here, from source_text.
  std::string run_digest;
  std::string source_path;
};

const char* to_string(SchemeKind k);
// One line on the initial condition, for `heatsim validate`: "gaussian, amplitude 1 at (0.5,
// 0.5), width 0.05, background 0", "expression sin(pi*x)", "file out/u.h5, dataset u".
std::string describe_initial(const Case& c);
std::optional<SchemeKind> scheme_from_string(const std::string& s);

// Node-centred spacing: L/(n-1), or L/n on periodic axes.
double spacing(const Case& c, int axis);

// Box bounds (regions' and sources') written at a non-periodic axis's far face, within 1e-9 of
// a spacing of (n - 1) h, moved onto (n - 1) h itself: the last node's coordinate, which L /
// (n - 1) times n - 1 can miss by a rounding. A void written to reach the face then holds the
// nodes on it whatever the grid (without this, a box ending at L could leave the last node's
// control volume a sliver of body past it, 1e-18 m thick). Axes with fewer than 2 nodes or a
// length that is not positive are left alone (the checks refuse those).
void snap_bounds_to_far_faces(Case& c);

}  // namespace heatsim::solver
