#include "memory_estimate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "kernels/face_conductance.hpp"
#include "multigrid/deflation.hpp"
#include "multigrid_footprint.hpp"
#include "subgrid.hpp"

namespace heatsim::solver {

double MemoryEstimate::host_bytes() const {
  double sum = host_transient.bytes;
  for (const MemoryPart& p : host) sum += p.bytes;
  return sum;
}

double MemoryEstimate::device_bytes() const {
  double sum = 0.0;
  for (const MemoryPart& p : device) sum += p.bytes;
  return sum;
}

namespace {

// The faces' conductances come with the coefficient fields where sub-grid geometry, an
// anisotropic k, temperature laws or a contact resistance give them (solver/materials.cpp).
bool fields_give_faces(const Case& c) {
  bool given = c.has_fields() && samples_subgrid(c);
  for (const ContactSpec& contact : c.contacts) given = given || contact.resistance > 0.0;
  for (const MaterialSpec& m : c.materials)
    given = given || m.temperature_dependent() || m.anisotropic();
  return given;
}

// The case's coefficient fields and material ids on the host, and the faces' conductances
// where the fields give them (none without fields; temperature laws' own arrays apart).
std::vector<MemoryPart> coefficient_field_parts(const Case& c, int source_fields) {
  std::vector<MemoryPart> parts;
  if (!c.has_fields()) return parts;
  double points = 1.0;
  for (int a = 0; a < c.grid.dims; ++a) points *= static_cast<double>(c.grid.n[a]);
  parts.push_back({"coefficient fields (k, rho c_p, sources) and material ids",
                   (8.0 * (2.0 + source_fields) + 4.0) * points});
  if (fields_give_faces(c))
    parts.push_back({"faces' conductances (geometry below the grid, anisotropy or laws)",
                     8.0 * c.grid.dims * points});
  return parts;
}

// The materials' conductivities span kStrongRatio or more (along some axis): the faces then may.
bool materials_span_strong_ratio(const Case& c) {
  double k_lo = HUGE_VAL, k_hi = 0.0;
  for (const MaterialSpec& m : c.materials)
    for (int a = 0; a < c.grid.dims; ++a) {
      k_lo = std::min(k_lo, m.conductivity_along(a));
      k_hi = std::max(k_hi, m.conductivity_along(a));
    }
  return k_hi > 0.0 && k_hi >= multigrid::kStrongRatio * k_lo;
}

}  // namespace

bool forms_strong_pieces(const Case& c, const kernels::CoefficientFields& fields) {
  if (!materials_span_strong_ratio(c)) return false;  // no face spans more than they do
  const int dims = c.grid.dims;
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < dims; ++a) n[static_cast<std::size_t>(a)] = c.grid.n[a];
  const std::int64_t np = n[0] * n[1] * n[2];
  if (np >= (std::int64_t{1} << 32)) return false;  // find_deflation's limit
  const std::int64_t stride[3] = {1, n[0], n[0] * n[1]};
  // The faces' conductances: given, or the harmonic mean of the two nodes' k.
  const bool given = fields.has_faces();
  const double* const k = fields.conductivity.data();
  const auto face = [&](int a, std::int64_t i, std::int64_t j) {
    return given ? fields.faces[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)]
                 : kernels::face_conductance(k[i], k[j]);
  };
  // Each face once, row by row (no division per node): between node (x, y, z) and its
  // neighbour above along `a` (on a periodic axis the last node's face wraps to the first).
  // visit(a, i, j, K, [x, y, z] of i, the coordinate of j along a).
  const auto each_face_of_row = [&](int a, std::int64_t y, std::int64_t z, auto visit) {
    const bool periodic = c.boundary[2 * a].kind == BoundaryKind::periodic;
    const std::int64_t last = n[static_cast<std::size_t>(a)] - 1;
    const std::int64_t row = y * stride[1] + z * stride[2];
    for (std::int64_t x = 0; x < n[0]; ++x) {
      const std::int64_t at = a == 0 ? x : a == 1 ? y : z;
      if (at == last && (!periodic || last == 0)) continue;
      const std::int64_t i = row + x;
      const std::int64_t j = at < last ? i + stride[a] : i - last * stride[a];
      visit(a, i, j, face(a, i, j), x, at < last ? at + 1 : 0);
    }
  };
  // The largest and smallest positive face along each axis (rows on every thread: a minimum
  // and a maximum do not depend on the order).
  std::array<double, 3> largest{0.0, 0.0, 0.0}, smallest{HUGE_VAL, HUGE_VAL, HUGE_VAL};
  for (int a = 0; a < dims; ++a) {
    double lo = HUGE_VAL, hi = 0.0;
    const std::int64_t rows = n[1] * n[2];
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static) if (np >= 32768)
    for (std::int64_t r = 0; r < rows; ++r)
      each_face_of_row(a, r % n[1], r / n[1],
                       [&](int, std::int64_t, std::int64_t, double K, std::int64_t, std::int64_t) {
                         if (!(K > 0.0)) return;
                         hi = std::max(hi, K);
                         lo = std::min(lo, K);
                       });
    largest[static_cast<std::size_t>(a)] = hi;
    smallest[static_cast<std::size_t>(a)] = lo;
  }
  bool contrast = false;
  for (int a = 0; a < dims; ++a)
    contrast = contrast || (largest[static_cast<std::size_t>(a)] > 0.0 &&
                            largest[static_cast<std::size_t>(a)] >=
                                multigrid::kStrongRatio * smallest[static_cast<std::size_t>(a)]);
  if (!contrast) return false;
  // The nodes of Dirichlet faces are fixed: in no piece. fixed_on[a][coordinate along a].
  std::array<std::vector<char>, 3> fixed_on;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t m = n[static_cast<std::size_t>(a)];
    std::vector<char>& f = fixed_on[static_cast<std::size_t>(a)];
    f.assign(static_cast<std::size_t>(m), 0);
    if (a >= dims) continue;
    if (c.boundary[2 * a].kind == BoundaryKind::dirichlet) f[0] = 1;
    if (c.boundary[2 * a + 1].kind == BoundaryKind::dirichlet)
      f[static_cast<std::size_t>(m - 1)] = 1;
  }
  const auto fixed = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    return fixed_on[0][static_cast<std::size_t>(x)] || fixed_on[1][static_cast<std::size_t>(y)] ||
           fixed_on[2][static_cast<std::size_t>(z)];
  };
  // Union-find in one array: parent[i] >= 0 is node i's parent, < 0 marks a root and is minus
  // its piece's size (the fixed nodes stay roots of size 1, below kMinPieceNodes); 4 bytes a
  // node below 2^31 nodes.
  static_assert(multigrid::kMinPieceNodes > 1, "a fixed node alone must not count as a piece");
  const auto two_pieces = [&](auto index_type) {
    using Index = decltype(index_type);
    std::vector<Index> parent(static_cast<std::size_t>(np), -1);
    const auto root = [&](Index i) {
      while (parent[static_cast<std::size_t>(i)] >= 0) {
        const Index up = parent[static_cast<std::size_t>(i)];
        if (parent[static_cast<std::size_t>(up)] >= 0)
          parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(up)];
        i = up;
      }
      return i;
    };
    // The faces in the order of the nodes along each axis in turn, as one pass over them.
    for (int a = 0; a < dims; ++a) {
      const double strong = largest[static_cast<std::size_t>(a)];
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t y = 0; y < n[1]; ++y)
          each_face_of_row(
              a, y, z,
              [&](int, std::int64_t i, std::int64_t j, double K, std::int64_t x,
                  std::int64_t at_j) {
                if (K * multigrid::kStrongRatio < strong || fixed(x, y, z) ||
                    fixed(a == 0 ? at_j : x, a == 1 ? at_j : y, a == 2 ? at_j : z))
                  return;
                Index ri = root(static_cast<Index>(i));
                Index rj = root(static_cast<Index>(j));
                if (ri == rj) return;
                // The smaller piece under the larger: its size adds to the root's.
                if (parent[static_cast<std::size_t>(ri)] > parent[static_cast<std::size_t>(rj)])
                  std::swap(ri, rj);
                parent[static_cast<std::size_t>(ri)] += parent[static_cast<std::size_t>(rj)];
                parent[static_cast<std::size_t>(rj)] = ri;
              });
    }
    int pieces = 0;
    for (std::size_t i = 0; i < parent.size() && pieces < 2; ++i)
      if (-parent[i] >= multigrid::kMinPieceNodes) ++pieces;
    return pieces >= 2;
  };
  return np < (std::int64_t{1} << 31) ? two_pieces(std::int32_t{0}) : two_pieces(std::int64_t{0});
}

bool steady_releases_fields(const Case& c, int source_fields, bool on_gpu) {
  if (c.time.method != TimeMethod::steady || on_gpu || !c.temperature_dependence().empty())
    return false;
  if (!c.has_fields()) return true;
  // HEATSIM_RELEASE_FIELDS=1 / 0 makes the choice (a machine whose available memory misleads,
  // and the tests of both paths on small grids).
  if (const char* forced = std::getenv("HEATSIM_RELEASE_FIELDS")) {
    if (std::string(forced) == "1") return true;
    if (std::string(forced) == "0") return false;
  }
  double bytes = 0.0;
  for (const MemoryPart& p : coefficient_field_parts(c, source_fields)) bytes += p.bytes;
  if (bytes < kReleasedFieldsBytes) return false;
  const double have = host_memory_available();
  return have <= 0.0 || bytes * kKeptFieldsShare > have;
}

MemoryEstimate estimate_memory(const Case& c, int source_fields, bool on_gpu, int ghost,
                               bool strong_pieces) {
  const int dims = c.grid.dims;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};
  double points = 1.0;
  for (int a = 0; a < dims; ++a) {
    n[static_cast<std::size_t>(a)] = c.grid.n[a];
    periodic[static_cast<std::size_t>(a)] = c.boundary[2 * a].kind == BoundaryKind::periodic;
    points *= static_cast<double>(c.grid.n[a]);
  }
  // The backends' padded layout: `g` ghost nodes each side of every active axis.
  const auto padded = [&](int g) {
    double p = 1.0;
    for (int a = 0; a < dims; ++a) p *= static_cast<double>(c.grid.n[a] + 2 * g);
    return p;
  };
  const double value = c.precision == Precision::fp32 ? 4.0 : 8.0;
  const double coefficient_arrays = 2.0 + source_fields;  // k, rho c_p (or dt / rho c_p), q_s
  // The faces' conductances (one array per axis): on the CPU backend always (it forms them
  // from k once); on a device wherever the coefficient fields carry them
  // (kernels/cuda/coefficient_fields.cu): sub-grid geometry, and without it temperature laws
  // (which scale the faces), an anisotropic k (one per axis) or a contact between materials
  // (solver/materials.cpp).
  bool laws = false;
  for (const MaterialSpec& m : c.materials) laws = laws || m.temperature_dependent();
  const bool faces_given = fields_give_faces(c);
  const double face_arrays = on_gpu ? (faces_given ? dims : 0.0) : static_cast<double>(dims);
  const bool implicit = c.time.method != TimeMethod::explicit_euler;

  MemoryEstimate e;
  e.host.push_back({"executable and libraries", kProcessBytes});
  // What io/ reads from files into the case before the fields are built, kept with the case for
  // the whole run: a file region's material map (RegionSpec::map, 8 bytes a node) and a file
  // source's density (SourceSpec::density, 8 bytes a node).
  double file_inputs = 0.0;
  for (const RegionSpec& r : c.regions)
    if (r.shape.kind == ShapeKind::file) file_inputs += 8.0 * points;
  for (const SourceSpec& s : c.sources)
    if (s.shape.kind == ShapeKind::file) file_inputs += 8.0 * points;
  if (file_inputs > 0.0)
    e.host.push_back({"material maps and source densities read from files", file_inputs});
  const std::string backend = on_gpu ? "device" : "cpu backend";
  std::vector<MemoryPart>& runs_there = on_gpu ? e.device : e.host;
  // An implicit run's field is the multigrid's solution vector (counted with its vectors):
  // the explicit backend is not set up.
  if (!implicit)
    runs_there.push_back(
        {"field in the " + backend + " (two padded copies)", 2.0 * value * padded(ghost)});
  // A linear steady solve on one process releases the coefficient fields (and the material
  // ids) before its levels are built where they are large, keeping its sources' weighted
  // densities, and lays them again after the solve: on the CPU they count with the output's
  // phase (steady_releases_fields).
  const bool steady = c.time.method == TimeMethod::steady;
  const bool fields_released = steady_releases_fields(c, source_fields, on_gpu);
  std::vector<MemoryPart> fields = coefficient_field_parts(c, source_fields);
  if (c.has_fields()) {
    // kernels::TemperatureDependence: a law per node and each face's share (and its contact's
    // part where the case has contacts).
    bool contacts = false;
    for (const ContactSpec& contact : c.contacts) contacts = contacts || contact.resistance > 0.0;
    if (laws)
      fields.push_back({"temperature laws (a law per node, the faces' shares)",
                        (4.0 + 8.0 * dims * (contacts ? 2.0 : 1.0)) * points});
    // On a GPU also the compact form's bytes where it applies (kernels/node_classes.hpp): a
    // class per node and one per face of each axis given, counted always (an upper bound).
    if (!implicit)
      runs_there.push_back({"coefficient fields in the " + backend,
                            value * (coefficient_arrays + face_arrays) * padded(1) +
                                (on_gpu ? 8.0 * points + (1.0 + face_arrays) * padded(1) : 0.0)});
  } else if (implicit && !fields_released) {
    // The solver's own fields for the homogeneous shorthand: k, rho c_p, and q when nonzero.
    fields.push_back({"uniform coefficient fields of the solver",
                      8.0 * (2.0 + (c.physics.source != 0.0 ? 1.0 : 0.0)) * points});
  }
  if (!fields_released) {  // for the whole run
    for (MemoryPart& p : fields) e.host.push_back(std::move(p));
    fields.clear();
  }
  // The initial field, until the backend holds it; an implicit fp64 run on the CPU writes one
  // it computes into the solver's field in place.
  const bool initial_in_place =
      implicit && !on_gpu && c.precision == Precision::fp64 && c.initial.kind != InitialKind::file;
  double setup = initial_in_place ? 0.0 : 8.0 * points;
  double deflation_setup = 0.0;
  // Temperature laws or radiation: outer iterations around the solves, each building a new
  // hierarchy (ImplicitStepper::advance_nonlinear).
  const bool nonlinear = implicit && !c.temperature_dependence().empty();
  double step = 0.0;
  // A steady run on one process gives its levels back after its one solve and keeps the field
  // on the host (ImplicitStepper::release_levels): on the CPU the levels and the output are
  // two phases, never at once.
  std::vector<MemoryPart> solve_phase;
  if (implicit) {
    StepperVectors stepper;
    stepper.transient = c.time.method != TimeMethod::steady;
    stepper.bdf2 = c.time.method == TimeMethod::bdf2;
    stepper.nonlinear = nonlinear;
    stepper.zero_node_term = steady;
    for (int f = 0; f < 2 * dims; ++f)
      if (c.boundary[f].kind == BoundaryKind::convective) stepper.zero_node_term = false;
    for (const RegionSpec& r : c.regions)
      if (r.is_void && r.surface.kind == BoundaryKind::convective) stepper.zero_node_term = false;
    const int sources = c.has_fields() ? source_fields : (c.physics.source != 0.0 ? 1 : 0);
    // A linear steady solve on the CPU writes its sources into a work vector as it assembles
    // its load; elsewhere each source keeps a vector of the levels' (ImplicitStepper).
    // A nonlinear step assembles its load on the host at each outer iteration and keeps none.
    stepper.sources = !stepper.nonlinear && (stepper.transient || on_gpu) ? sources : 0;
    // Deflated where the materials' conductivities span the strong ratio and form two or more
    // strong pieces (whether a solve proves slow enough to deflate is known only as it runs:
    // the estimate takes the larger case).
    stepper.deflated = strong_pieces && materials_span_strong_ratio(c);
    const MultigridBytes mg =
        multigrid_bytes(dims, n, periodic, stepper, !on_gpu, multigrid_layout(dims));
    e.host.push_back({"multigrid heat-flow operator", static_cast<double>(mg.host)});
    if (implicit && fields_released && !stepper.nonlinear && sources > 0)
      e.host.push_back(
          {"the sources' weighted densities, kept for the steady solve", 8.0 * sources * points});
    MemoryPart levels{"multigrid levels (" + std::to_string(mg.levels) + ") and vectors",
                      static_cast<double>(mg.level_ops)};
    // The hierarchy being built on the host, and while its first coarse level is made the
    // Galerkin product's staging of the finest (below 3D the whole level); the CPU's level
    // operations take its arrays over after it. BDF2's start builds two more beside the level-0
    // vectors (letting the levels go before each).
    const double building = static_cast<double>(mg.host_setup + mg.galerkin_setup);
    if (!on_gpu && !nonlinear) {
      const double bytes = building + (stepper.bdf2 ? static_cast<double>(mg.level0) : 0.0);
      if (bytes > levels.bytes)
        levels = {std::string("the multigrid hierarchy being built") +
                      (stepper.bdf2 ? " beside the level-0 vectors" : "") +
                      " and the Galerkin product's staging of the finest level",
                  bytes};
    }
    // A nonlinear run's outer iteration builds its operator (linearize.hpp: a copy of the
    // coefficient fields with the radiation's node terms and source, and the operator's level)
    // and then the new hierarchy on the host: the CPU's level operations let the old levels go
    // first (keeping the level-0 vectors), a device keeps its own. Each phase passes before
    // the next: the largest counts, against the levels of the solve on the CPU.
    double rebuild = 0.0;
    if (nonlinear) {
      bool radiation = false, surfaces = false;
      for (int f = 0; f < 2 * dims; ++f) radiation = radiation || c.boundary[f].radiates();
      bool convective_face = false;
      for (int f = 0; f < 2 * dims; ++f)
        convective_face = convective_face || c.boundary[f].kind == BoundaryKind::convective;
      for (const RegionSpec& r : c.regions) {
        radiation = radiation || (r.is_void && r.surface.radiates());
        // A void's convective surface, or an outer convective face it may reach (FaceCut).
        surfaces = surfaces ||
                   (r.is_void && (r.surface.kind == BoundaryKind::convective || convective_face));
      }
      const double linearised =
          8.0 * points *
              (2.0 + sources + (radiation ? 1.0 : 0.0) + (faces_given ? dims : 0.0) +
               (radiation || surfaces ? 1.0 : 0.0) + (stepper.transient ? 1.0 : 0.0)) +
          (8.0 * (1.0 + dims) + 1.0) * points;
      rebuild = std::max(linearised, building);
      // The CPU's level operations take the new hierarchy over level by level, the finest
      // first: the smoother's conductances are made while every coarse level's fp64 stencil
      // is still there (the diagonals are not kept there: MultigridLayout).
      const MultigridLayout layout = multigrid_layout(dims);
      const double taking_over =
          static_cast<double>(mg.host_setup) +
          8.0 * (1.0 + layout.finest_smoother_doubles - layout.cpu_finest_diagonal_doubles) *
              points;
      const double cpu_rebuild =
          static_cast<double>(mg.level0) + std::max({linearised, building, taking_over});
      if (!on_gpu && cpu_rebuild > levels.bytes)
        levels = {
            "an outer iteration's rebuild: the level-0 vectors, the new hierarchy and the "
            "finest level's rounded conductances (or the linearised operator)",
            cpu_rebuild};
      // Later outer iterations keep the coarse levels and make the finest again
      // (ImplicitStepper: keep_coarse): the level operations without the finest level's
      // arrays, beside the linearised operator or the new finest level's arrays.
      const double finest_arrays =
          8.0 *
          (layout.finest_operator_doubles + layout.finest_smoother_doubles -
           layout.cpu_finest_diagonal_doubles) *
          points;
      const double kept_coarse =
          static_cast<double>(mg.level_ops) - finest_arrays + std::max(linearised, finest_arrays);
      if (!on_gpu && kept_coarse > levels.bytes)
        levels = {
            "an outer iteration that keeps the coarse levels: the level operations and the "
            "linearised operator",
            kept_coarse};
    }
    if (steady && !on_gpu)
      solve_phase.push_back(levels);
    else
      runs_there.push_back(levels);
    // The outer iterations' host vectors: the field the step started from, the iterate, and
    // the load (the solve's result in its place); the enthalpies of the start and of the
    // iterate where laws make the capacity vary in a transient step; BDF2's history; and the
    // fixed flags of the linearised operator.
    if (nonlinear) {
      const double vectors =
          3.0 + (laws && stepper.transient ? 2.0 : 0.0) + (stepper.bdf2 ? 1.0 : 0.0);
      const MemoryPart outer{"outer iterations: the field, its start and the load on the host",
                             (8.0 * vectors + 1.0) * points};
      if (steady && !on_gpu)
        solve_phase.push_back(outer);
      else
        e.host.push_back(outer);
    }
    // The stepper's parts on their way to the levels (the weighted capacity; on a GPU the
    // sources too, which the CPU's level operations take in place), and on a GPU the
    // hierarchy built on the host before the device takes it (the CPU's level operations take
    // the hierarchy's arrays over, so there it is counted once, with the levels).
    deflation_setup = static_cast<double>(mg.deflation_setup);
    setup +=
        (on_gpu ? building : 0.0) + deflation_setup +
        8.0 * points * ((stepper.transient && !nonlinear ? 1.0 : 0.0) + (on_gpu ? sources : 0));
    if (on_gpu) setup = std::max(setup, rebuild);
    // Statistics at a progress line download the field.
    step = 8.0 * points;
  }
  // Output and checkpoints: the writer thread's staging, two fields in the run's precision
  // (pinned on a GPU) kept from the first file on, and the file it builds in memory in the
  // run's precision (its buffer is kept for the next file). The writer runs beside everything
  // else, so both count for the whole run.
  // A steady run writes one field and no checkpoint: one staging buffer.
  const bool one_file = c.time.method == TimeMethod::steady;
  // A steady run on the CPU: its output is a phase after the solve, in which the writer thread
  // writes materials.h5 and then the output file, one after the other.
  const bool output_phase = !solve_phase.empty();
  // The output's parts: for the whole run, or a steady run's phase after its solve.
  std::vector<MemoryPart> output;
  if (steady) output.push_back({"the field on the host after the solve", 8.0 * points});
  const std::string staging =
      "writer thread: " + std::string(one_file ? "a staging buffer" : "two staging buffers") +
      std::string(on_gpu ? " (pinned)" : "");
  const double staging_bytes = (one_file ? 1.0 : 2.0) * value * points;
  if (output_phase)
    output.push_back({staging, staging_bytes});
  else
    output.push_back({staging + " and the file being built", staging_bytes + value * points});
  // output.heat_flows: the field of a row's step and of the step before it, and the nodes'
  // fixed flags; output.fields: per output file, the heat flux's three values and the
  // conductivity per node, and their place in the file being built (the writer's, beside the
  // staging). Both read the coefficient fields: the homogeneous shorthand's are made for them.
  if (c.output.heat_flows)
    output.push_back(
        {"heat flows: the fields of an output step and the step before", 17.0 * points});
  if (!c.has_fields() && (c.output.any_field() || c.output.heat_flows))
    output.push_back({"uniform coefficient fields for the output fields and heat flows",
                      8.0 * (2.0 + (c.physics.source != 0.0 ? 1.0 : 0.0)) * points});
  const double further = (c.output.heat_flux ? 3.0 : 0.0) + (c.output.conductivity ? 1.0 : 0.0) +
                         (c.output.liquid_fraction ? 1.0 : 0.0);
  // The file is built in memory: a compressed one in a buffer of its whole size at once; an
  // uncompressed one holds the further fields first and then grows to take the temperature's
  // storage (io/field_file.cpp), the buffer of the further fields beside the grown one while it
  // is copied (on the first file; the next ones take the kept buffer).
  const double image_growth = c.output.compression > 0 ? 0.0 : value * further * points;
  const MemoryPart further_part{
      "output fields (heat flux, conductivity, liquid fraction) and their place in the file" +
          std::string(image_growth > 0.0 ? " (twice while it grows)" : ""),
      (8.0 + value) * further * points + image_growth};
  if (further > 0.0 && !output_phase) output.push_back(further_part);
  // materials.h5: written in place (no image of it in memory), its datasets straight from the
  // material ids and the coefficient fields but the source density, the sources' sum
  // (io/material_output.cpp).
  const double materials = c.has_fields() ? 8.0 * points : 0.0;
  std::string setup_what = initial_in_place ? "" : "the initial field";
  const auto also = [&](const char* what) {
    setup_what += (setup_what.empty() ? "" : ", ") + std::string(what);
  };
  if (implicit) also("the multigrid hierarchy");
  if (deflation_setup > 0.0) also("the deflation's search");
  const MemoryPart setup_part{"set-up (" + setup_what + ")", setup};
  const MemoryPart materials_part{"materials.h5 being written", materials};
  const auto sum = [](const std::vector<MemoryPart>& parts) {
    double bytes = 0.0;
    for (const MemoryPart& p : parts) bytes += p.bytes;
    return bytes;
  };
  if (output_phase) {
    // The set-up and the solve, with the levels; then the output with the coefficient fields
    // laid again, and the writer's two files one after the other: the larger counts.
    if (setup_part.bytes > 0.0) solve_phase.push_back(setup_part);
    for (MemoryPart& p : fields) output.push_back(std::move(p));
    const double output_file = value * points + (further > 0.0 ? further_part.bytes : 0.0);
    if (materials > output_file)
      output.push_back({"materials.h5 being written (then the output file)", materials});
    else
      output.push_back({std::string("the output file being built") +
                            (further > 0.0 ? ", its further fields and their place in it" : "") +
                            (materials > 0.0 ? " (after materials.h5)" : ""),
                        output_file});
    const double solve_bytes = sum(solve_phase), output_bytes = sum(output);
    const bool solve_larger = solve_bytes >= output_bytes;
    e.host_transient = {
        solve_larger ? "the set-up and the steady solve" : "the output after the steady solve",
        solve_larger ? solve_bytes : output_bytes};
    e.host_transient_parts = solve_larger ? solve_phase : output;
    return e;
  }
  for (MemoryPart& p : output) e.host.push_back(std::move(p));
  const std::vector<MemoryPart> transients{
      setup_part, {"the field downloaded for statistics", step}, materials_part};
  e.host_transient =
      *std::max_element(transients.begin(), transients.end(),
                        [](const MemoryPart& a, const MemoryPart& b) { return a.bytes < b.bytes; });
  if (on_gpu) e.device.push_back({"reductions and scratch", 64.0 * 1024 * 1024});
  return e;
}

double host_memory_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return 0.0;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace heatsim::solver
