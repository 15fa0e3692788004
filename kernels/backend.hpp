// The stencil engine's one interface. A backend owns a copy of the field (on the host or a
// device) and advances it by whole time steps u <- S u (+ dt*f), applying the boundary
// conditions each step. Backends know nothing of YAML, HDF5 or the time loop.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host_field.hpp"
#include "host_staging.hpp"
#include "temperature_laws.hpp"

namespace heatsim::kernels {

enum class Precision { fp64, fp32 };
enum class BoundaryKind { dirichlet, neumann, periodic, convective };

const char* to_string(Precision p);
const char* to_string(BoundaryKind k);

// Faces in the order x-, x+, y-, y+, z-, z+ (face = 2*axis + side).
constexpr int kMaxDims = 3;
constexpr int kFaces = 2 * kMaxDims;

// A factor that varies in time: a piecewise-linear table of (time, value) pairs, sorted by
// time and constant beyond its ends, when `table` is not empty; else
//   value + amplitude * sin(2*pi*frequency*t).
struct Schedule {
  double value = 0.0;
  double amplitude = 0.0;
  double frequency = 0.0;
  std::vector<std::array<double, 2>> table;

  double at(double t) const;
  // The mean of at() over [t0, t1], exact for both forms (the integral of the linear pieces,
  // or of the sine); at(t0) when t1 <= t0. A source scaled by mean(t, t + dt) in the step
  // from t adds exactly the integral of the scheduled power over the run.
  double mean(double t0, double t1) const;
  bool constant() const { return table.size() <= 1 && amplitude == 0.0; }
};

// One face's condition. Dirichlet: the boundary nodes hold g(t) = schedule.at(t).
// Neumann: `value` is the outward normal derivative du/dn (constant in time); with
// `heat_flux` set it is instead the heat flux into the body Q = k du/dn (W/m^2), k the face
// conductance of the boundary node's first face (so exactly Q enters per unit area).
// Convective: -k du/dn = transfer * (u - ambient(t)), ambient(t) = at(t) (table or sine
// form), k the face conductance of the boundary node's first face (a ghost node, second
// order, exact for linear profiles, and the heat leaving is exactly transfer*(u - ambient)).
// Periodic: both faces of the axis are periodic; value is unused.
struct BoundaryFace {
  BoundaryKind kind = BoundaryKind::dirichlet;
  double value = 0.0;
  double amplitude = 0.0;
  double frequency = 0.0;
  std::vector<std::array<double, 2>> table;  // (time, value) pairs: overrides the sine form
  double transfer = 0.0;                     // convective: heat transfer coefficient h
  // convective: the grey-body emissivity eps of a face that also radiates to the ambient:
  // -k du/dn = transfer (u - ambient) + eps sigma (u^4 - ambient^4), temperatures in kelvin;
  // 0: none. A radiative face is a convective one with transfer 0.
  double emissivity = 0.0;
  bool heat_flux = false;                    // neumann: value is W/m^2 into the body
  // g(t) for Dirichlet, ambient(t) for convective, value otherwise.
  double at(double t) const;
  // The value's schedule (table or sine form).
  Schedule schedule() const;
  bool radiates() const { return kind == BoundaryKind::convective && emissivity > 0.0; }
  // Whether the face's value is a temperature (g(t), or the ambient's), with its schedule.
  bool names_temperature() const {
    return kind == BoundaryKind::dirichlet || kind == BoundaryKind::convective;
  }
  bool time_dependent() const {
    return names_temperature() && (amplitude != 0.0 || table.size() > 1);
  }
};

// The update operator S = I + alpha*dt*L_h as a dense (2r+1)^dims weight array, ordered
// [dz][dy][dx] with dx fastest (offset -r..r on each active axis). Unused axes have extent 1.
struct Stencil {
  int dims = 1;
  int radius = 1;
  std::vector<double> weights;

  int extent() const { return 2 * radius + 1; }
  std::size_t size() const;
  // Weight at offset (dx, dy, dz); offsets of inactive axes must be 0.
  double at(int dx, int dy = 0, int dz = 0) const;
  double& at(int dx, int dy = 0, int dz = 0);
  // Star: every nonzero weight lies on an axis. Box otherwise.
  bool is_star() const;
  // Symmetric under reflection of each axis (x -> -x etc.): what the reflection-based
  // boundary conditions require to be exact.
  bool is_mirror_symmetric() const;
  std::size_t nonzeros() const;
};

// Per-node coefficient fields in memory order [z][y][x], points() values each. Ghost nodes
// outside a face take the coefficients of their mirror node (periodic axes: of the node one
// period away), so a boundary node's face conductance toward the ghost equals that of its first
// interior face.
constexpr int kMaxSourceFields = 4;
struct CoefficientFields {
  std::vector<double> conductivity;  // k (W/(m K)), > 0
  std::vector<double> capacity;      // rho * c_p (J/(m^3 K)), > 0
  struct Source {
    std::vector<double> density;  // q (W/m^3) per node at factor 1
    Schedule schedule;            // factor over time
    // The heat a void's surface exchanges (h ambient(t) A / V, or a heat flux's q A / V), kept
    // apart from the case's sources (the materials file's source density, the reports); also
    // what an outer face's ghost rule counts beyond the body where a void reaches the face
    // (the same with A the void's part of the face, negative).
    bool surface = false;
  };
  std::vector<Source> sources;  // at most kMaxSourceFields
  // Sub-grid geometry (solver/materials.hpp): per active axis a, the conductance K (W/(m K)) of
  // the face between node i and node i + e_a, at index i; on a periodic axis the last node's
  // entry is the face to node 0 one period on, on a non-periodic one it is unused (a boundary
  // node's face toward its ghost is the mirror face, as with k). Empty: every face takes the
  // harmonic mean of its two nodes' k (face_conductance.hpp), which is what these hold where
  // an interface lies halfway between nodes or nowhere near. `conductivity` stays the nodes'
  // own k (output, summaries); the step reads only the faces when they are given.
  std::array<std::vector<double>, kMaxDims> faces;
  // Surfaces inside the body (void regions with a convective surface): per node H (W/(m^3 K)),
  // the node loses H u_i per unit volume (the H ambient(t) it gains is one of `sources`).
  // Negative at a boundary node whose face a void partly holds: the part of the face's ghost
  // transfer beyond the body taken back (the node's net loss stays >= 0). Empty: none. A node of capacity 0 lies inside a void: it is not stepped (its value stays)
  // and not counted in the field's statistics.
  std::vector<double> transfer;
  // Surfaces inside the body that radiate (void regions with an emissivity), grouped by their
  // ambient's schedule: per node R = eps sigma A / V (W/(m^3 K^4)); the node loses
  // R (u^4 - ambient(t)^4) per unit volume, u at the step's start (negative R: a radiating outer
  // face's part beyond the body, as with `transfer`). Empty: none.
  struct Radiation {
    std::vector<double> coefficient;
    Schedule ambient;
  };
  std::vector<Radiation> radiation;
  // Materials whose conductivity or capacity varies with temperature (temperature_laws.hpp):
  // the faces must then be given (they are the reference conductances); null: none.
  std::shared_ptr<const TemperatureDependence> temperature;

  bool has_faces() const { return !faces[0].empty(); }
  // K between node i and its neighbour j = i + e_axis (or the periodic wrap; `i` the lower
  // node in that sense), from the faces or the harmonic mean.
  double face(int axis, std::int64_t i, std::int64_t j) const;
};

// Everything a backend needs to advance the field. Points per axis n[0]=x, n[1]=y, n[2]=z;
// unused axes have n = 1. Fields are passed in memory order [z][y][x], x fastest.
struct StencilProblem {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> n{1, 1, 1};
  std::array<double, kMaxDims> h{1.0, 1.0, 1.0};  // spacing, for Neumann ghost values
  Stencil stencil;
  std::array<BoundaryFace, kFaces> faces{};
  double dt = 0.0;                // for time-dependent Dirichlet values
  double source_increment = 0.0;  // dt * f, added to every updated node each step
  Precision precision = Precision::fp64;
  // Steps a backend may fuse into one pass (u <- S^k u, see DESIGN.md "Temporal fusion").
  // A request: backends without fusion (Capabilities::max_fusion_depth == 1) step one at a
  // time, and a fusing backend may fuse fewer where its limits require; results agree to
  // rounding either way. advance(steps) takes any number of steps.
  int fusion_depth = 1;
  // Varying coefficients (materials, source fields, convective and heat-flux faces); null for
  // the constant-weight operator `stencil`. When set, the update is the conservative
  // second-order form of DESIGN.md "Materials" and `stencil` only gives dims and radius 1:
  //   u_i <- u_i + dt/C_i * ( sum_axis inv_h2[axis] * sum_{j = i-e, i+e} K_ij (u_j - u_i)
  //                           + sum_s factor_s * q_s,i )
  // with K_ij = 2 k_i k_j / (k_i + k_j), the neighbours summed in the order x-, x+, y-, y+, z-,
  // z+, inv_h2 = 1 / h^2, and factor_s = sources[s].schedule.mean(t, t + dt) for the step
  // from t. The neighbour beyond a face is a ghost node (radius 1) holding, for the mirror
  // node m one inside the boundary node b and K_bm the conductance between them:
  //   dirichlet: 2 g(t) - u_m (b itself is reset to g(t + dt) after the step);
  //   neumann:   u_m + 2 h value, or with heat_flux u_m + 2 h value / K_bm;
  //   convective: u_m - 2 h (transfer (u_b - ambient(t)) + eps sigma (u_b^4 - ambient(t)^4)) / K_bm;
  //   periodic:  the node one period away.
  std::shared_ptr<const CoefficientFields> coefficients;
  // Faces that are not the grid's: a decomposed run's block has them toward its neighbours'
  // blocks (solver/parallel/decomposition.hpp), placeholders whose nodes hold a neighbour's
  // values, which the overlap's exchange replaces. A backend treats them as any face of their
  // kind, except that it need not make them exact (no band for them) and reads nothing about
  // the run from their nodes (whether the Dirichlet nodes hold g).
  std::array<bool, kFaces> placeholder{};

  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  bool periodic(int axis) const { return faces[2 * axis].kind == BoundaryKind::periodic; }
};

// Reductions over the field. total_heat weighs every node by the trapezoidal rule on
// non-periodic axes (half weight on the two boundary nodes) and 1 on periodic axes; multiply
// by the cell volume to get the integral; with coefficient fields each node also weighs by its
// capacity rho*c_p (the heat content). non_finite counts NaN and Inf values.
struct FieldStats {
  double min = 0.0;
  double max = 0.0;
  double total_heat = 0.0;
  std::int64_t non_finite = 0;
};

struct Capabilities {
  int min_dims = 1;
  int max_dims = 3;
  int max_radius = 3;
  bool star = true;
  bool box = true;
  bool fp64 = true;
  bool fp32 = true;
  bool gpu = false;
  int max_fusion_depth = 1;  // largest StencilProblem::fusion_depth honoured
  bool fuses_coefficients = false;  // takes fusion_depth > 1 with coefficient fields too
  bool face_conductances = true;    // steps with CoefficientFields::faces (sub-grid geometry)
  // Re-evaluates CoefficientFields::temperature each step and radiates from faces with an
  // emissivity.
  bool temperature_dependence = false;
  // Multiplies on tensor cores: its compute bound is the tensor-core peak, not the CUDA cores'.
  bool tensor_cores = false;
  // Reads a material map in its compact form (a material per node, a byte, and the materials'
  // table; node_classes.hpp) instead of the fields, and with the faces given, their
  // conductances as a byte per face too (compact_faces). The device holds the forms it reads.
  bool compact_materials = false;
  bool compact_faces = false;
  // Takes the surfaces' transfer (CoefficientFields::transfer) into the compact form too, as a
  // value per class (transfer classes in node_classes.hpp); without it a problem with surfaces
  // inside the body keeps its fields.
  bool compact_transfer = false;
};

// A box of nodes in the backend's field: lower corner `lo` and `extent` per axis (x, y, z;
// 0 and 1 on unused axes), and `grid`, the whole field's points per axis (the problem's n).
struct FieldBox {
  std::array<std::int64_t, kMaxDims> grid{1, 1, 1};
  std::array<std::int64_t, kMaxDims> lo{0, 0, 0};
  std::array<std::int64_t, kMaxDims> extent{1, 1, 1};
  std::int64_t points() const { return extent[0] * extent[1] * extent[2]; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // Empty when the problem is supported, else the reason.
  virtual std::string unsupported_reason(const StencilProblem& problem) const;
  // Allocates for `problem`; must be called before anything else. Throws on failure.
  virtual void setup(const StencilProblem& problem) = 0;
  // Field in memory order, problem.points() values. fp32 backends round on upload.
  virtual void upload(const std::vector<double>& field) = 0;
  // The same from a HostField (doubles, or an fp32 run's floats: the values upload() gives
  // the device after rounding, so either way the field is the same to the bit). The default
  // widens it into a vector for upload(); device backends copy it through pinned staging on
  // every core, with no host copy of the whole field.
  virtual void upload_from(const HostField& field);
  virtual void download(std::vector<double>& field) = 0;
  // The field into `out`, problem.points() values, as download() gives them: what a writer
  // stages. The default downloads into a vector and copies; the CPU backend copies on every
  // thread and device backends copy straight from the device into `out`.
  virtual void download_to(double* out);
  // The same as floats, for an fp32 field (exact: its values are floats), staged at half the
  // bytes; device fp32 backends copy straight into `out`, nothing widened or narrowed.
  virtual void download_to(float* out);
  // Staging of `bytes` on the host for this backend's field (host_staging.hpp): pinned on a
  // GPU backend (capabilities().gpu), plain memory otherwise.
  virtual HostStaging allocate_host_staging(std::size_t bytes) {
    return kernels::allocate_host_staging(bytes, capabilities().gpu);
  }
  // Advances `steps` steps starting at time t0 = step0 * dt; Dirichlet nodes take
  // g(t0 + (s+1)*dt) after step s.
  virtual void advance(std::int64_t steps, std::int64_t step0) = 0;
  virtual FieldStats stats() = 0;
  // The values at the given nodes (indices in memory order [z][y][x]); the default downloads
  // the whole field, device backends gather on the device.
  virtual void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values);
  // The same sample without waiting for the device: the values the nodes hold once the steps
  // queued so far are done, read by collect_samples(), which waits for them (the run's probes
  // sample this way, so that a small grid's steps are not stopped for every row). The default
  // samples at once.
  virtual void sample_later(const std::vector<std::int64_t>& nodes);
  // The samples taken by sample_later() since the last collect, in the order taken; the queue
  // is emptied.
  virtual void collect_samples(std::vector<std::vector<double>>& samples);
  // Whether sample_later() returns before its values exist (a device backend), so that a loop
  // gains by not waiting for the device where it only samples. False: taken at once.
  virtual bool queues_samples() const { return false; }
  // A sub-box of the field (FieldBox), values in the box's own memory order (x fastest): what
  // a decomposed run exchanges between ranks (solver/parallel). `values` holds box.points()
  // doubles; a decomposed run passes staging of allocate_host_staging(), which a device
  // backend's copies reach at the bus's speed (pinned). The defaults download (and upload)
  // the whole field; a device backend copies just the box. Both return when `values` is
  // complete (read) or may be reused (write).
  virtual void read_box(const FieldBox& box, double* values);
  virtual void write_box(const FieldBox& box, const double* values);
  // The same through vectors: `values` resized to the box (read); of the box's size (write,
  // else std::invalid_argument).
  void read_box(const FieldBox& box, std::vector<double>& values);
  void write_box(const FieldBox& box, const std::vector<double>& values);
  // Waits for queued work (device backends); no-op on the host.
  virtual void synchronize() {}
  // Steps per pass that advance() uses after setup(): the requested fusion depth as the
  // backend could honour it (1 for backends without fusion).
  virtual int fusion_depth() const { return 1; }
  // A backend with fused passes (fusion_depth() > 1) reflects about g at Dirichlet faces, which
  // reproduces single steps only where the Dirichlet nodes hold g: after an upload whose nodes
  // do not (an initial condition) its first step is a single one. A decomposed run takes that
  // choice for the whole grid: first_step_single(step0) answers for this block's Dirichlet
  // faces (placeholders aside) before its next advance(steps, step0), and
  // set_first_step_single() imposes the answer of all blocks on that advance. Backends
  // without fused passes: false, and nothing to impose.
  virtual bool first_step_single(std::int64_t step0) {
    (void)step0;
    return false;
  }
  virtual void set_first_step_single(bool single) { (void)single; }
  // One pass of `steps` steps from step0 (a fused pass, or one step where the backend takes
  // one per pass) computed in two parts: the nodes inside `inner` (box.grid the field's n),
  // then between() is called while they are being computed (on a device: queued, running),
  // then the other nodes. The same as between(); advance(steps, step0), bit for bit, provided
  // between() writes only nodes that no node of `inner` reads in the pass (a decomposed run's
  // halo exchange writing its overlaps: the interior steps while the halo is in flight).
  // False, with nothing done and between() not called, where this backend cannot split the
  // pass (steps not one pass from a pass boundary, a first single step pending, a kernel that
  // cannot sweep a part of the grid); the caller then calls between() and advance() itself.
  virtual bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                              const std::function<void()>& between) {
    (void)steps, (void)step0, (void)inner, (void)between;
    return false;
  }
  // Bytes a step reads and writes per node after setup(), where the backend's layout differs
  // from the run's model (the compact form of a material map); 0: the model's count.
  virtual double bytes_per_point_step() const { return 0.0; }

 private:
  std::vector<std::vector<double>> later_;  // sample_later's default: the samples taken
};

// The nodes of the grid box.grid outside `inner` as at most six disjoint boxes (below and
// above it along z over the whole x-y plane, then along y over its z range, then along x over
// its y and z ranges), empty ones left out: what advance_around() computes after between().
std::vector<FieldBox> boxes_around(const FieldBox& inner);

// Shared helper: checks a problem against capabilities; empty string when it fits.
std::string check_capabilities(const Capabilities& caps, const StencilProblem& problem);

}  // namespace heatsim::kernels
