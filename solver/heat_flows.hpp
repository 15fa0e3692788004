// Where the heat goes: the rate into the body through every outer face and every void surface
// with a condition, what each source puts in, and how fast the stored heat changes, all from the
// discrete operator the steps and solves use (multigrid/conductance.hpp). So the balance closes
// to rounding for explicit steps, and to the solve's tolerance for implicit steps and steady
// states. Rates are into the body, in W (3D), W per metre of depth (2D) or W per m^2 of
// cross-section (1D).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "case.hpp"
#include "kernels/backend.hpp"
#include "subgrid.hpp"

namespace heatsim::solver {

namespace multigrid {
class HeatFlowOperator;
}

struct HeatFlow {
  std::string what;  // "face x- (convective)", "void regions[2] (gap2)", "sources[0]"
  double rate = 0.0;
};

struct HeatFlowReport {
  std::vector<HeatFlow> flows;
  double imbalance = 0.0;  // the sum of the flows: 0 in an exact steady state
  double largest = 0.0;    // the largest |rate|, the imbalance's scale
  // The sum of the magnitudes of the terms the rates add (each conductance times the
  // temperatures it reads, each load): what their rounding, and a solve's tolerance on the
  // field, scale with. Flows far below tolerance * gross are rounding.
  double gross = 0.0;
};

// "W", "W/m" or "W/m^2": the unit of a heat rate on a grid of `dims` dimensions.
const char* heat_rate_unit(int dims);

class HeatFlowMeter {
 public:
  // For a case with coefficient fields (or the shorthand's, multigrid::uniform_fields), its
  // voids' surfaces, and the heat-flow operator of the run's implicit stepper when it has one:
  // its face loads, Dirichlet faces and fixed nodes are read here (also after its steady level
  // was taken), so no second operator is built; with `op` null one is built for the while.
  HeatFlowMeter(const Case& c, const kernels::StencilProblem& problem,
                std::shared_ptr<const kernels::CoefficientFields> fields,
                const VoidSurfaces& surfaces, const multigrid::HeatFlowOperator* op = nullptr);

  // One name per rate of flows(), in this order: every outer face that is not periodic ("face
  // x- (convective)", "face y+ (dirichlet)"), every void with a convective, radiating or
  // heat-flux surface ("void regions[2] (gap2)"), every source field ("sources[0]", "physics.source +
  // sources[1]": sources with the same schedule share a field, and a column).
  const std::vector<std::string>& names() const { return names_; }

  // The rates into the body at field u (memory order). Face values and sources' factors at t;
  // with dt > 0 the sources' factors (a convective surface's ambient among them) are their
  // means over [t, t + dt], as an explicit step from t takes them. Where properties vary with
  // temperature they are taken at u (the conductances of TemperatureDependence), and radiating
  // faces and surfaces add eps sigma (ambient(t)^4 - u^4) per unit area, as the steps do.
  // A Dirichlet face's rate is its nodes' reaction: what leaves each Dirichlet node's control
  // volume other than through the face, as the node's balance under the same operator counts
  // it: the conduction to its neighbours (free or fixed), less what its other faces (convective,
  // radiating, heat flux), the void surfaces at it and the sources put into it; the other rows
  // count their parts on the Dirichlet nodes, so the sum still closes. A node on several
  // Dirichlet faces (an edge or corner) splits its reaction between them in proportion to its
  // conductances along their axes (evenly where those are all 0). In a transient, HeatFlowRows
  // adds the Dirichlet nodes' storage rate (dirichlet_stored_change).
  // With `gross`, the sum of the magnitudes of the terms added (HeatFlowReport::gross).
  std::vector<double> flows(const std::vector<double>& u, double t, double dt = 0.0,
                            double* gross = nullptr) const;
  // flows(u, t) with the source fields (the sources, the void surfaces' convective ambients)
  // at the factors of the implicit step from `step` (multigrid::implicit_source_factor), as
  // that step applied them.
  std::vector<double> implicit_flows(const std::vector<double>& u, double t, std::int64_t step,
                                     double dt, bool bdf2, double* gross = nullptr) const;

  // How much the stored heat grew from field `before` to field `u`: the sum over the body's
  // nodes, the Dirichlet nodes included, of w_i C_i (u_i - before_i), times the cell volume
  // (J, J/m, J/m^2); a node whose capacity varies with temperature (or that melts) counts
  // C_ref (h(u_i) - h(before_i)), its enthalpy's change (kernels/temperature_laws.hpp). The
  // nodes' differences are exact in floating point where the fields are close, and the sum is
  // taken in fixed blocks: the same bits on any number of threads.
  double stored_change(const std::vector<double>& u, const std::vector<double>& before) const;
  // The scale of stored_change's terms: the sum over the body's nodes of w_i C_i (|u_i| +
  // |before_i|), what its rounding (and an implicit solve's tolerance on u) scale with.
  double stored_magnitude(const std::vector<double>& u, const std::vector<double>& before) const;
  // The Dirichlet nodes' part of stored_change, one value per rate of flows() (0 but on the
  // Dirichlet faces), split between faces as their reactions are: part of each Dirichlet
  // face's reaction in a transient.
  std::vector<double> dirichlet_stored_change(const std::vector<double>& u,
                                              const std::vector<double>& before) const;

  // flows(u, t) named, with their sum as the imbalance (the summary of a steady state).
  HeatFlowReport report(const std::vector<double>& u, double t) const;

 private:
  // Each load term below that falls on a Dirichlet node names the node (its index in
  // dirichlet_, `owner`; -1 on a free node): the reaction there leaves it out.
  struct FaceFlow {
    kernels::BoundaryFace boundary;
    // Neumann and convective faces: rate = sum of constant + ambient_weight (ambient(t) - u).
    std::vector<std::int64_t> nodes;
    std::vector<double> constant, ambient_weight;
    std::vector<std::int32_t> owner;
    // Radiating faces: rate = sum of radiating_weight (ambient(t)^4 - u^4) over their nodes,
    // the weight w_i 2 eps sigma / h_axis as the convective ghost takes it.
    std::vector<std::int64_t> radiating_nodes;
    std::vector<double> radiating_weight;
    // Where a void reaches the face (VoidSurfaces::faces): the face's law again, per unit area,
    // over w_i times the difference between the body's area and the ghost rule's, on the free
    // nodes (ambient and flux as a void's surface takes them).
    std::vector<std::int64_t> cut_nodes;
    std::vector<double> cut_weight;
    std::vector<std::int32_t> radiating_owner;
  };
  struct SurfaceFlow {
    const kernels::BoundaryFace* face = nullptr;
    std::vector<std::int64_t> nodes;  // body nodes
    std::vector<double> weighted;     // w_i times the area per volume
    std::vector<double> convective;   // w_i times the area per volume convection sees
    std::vector<std::int32_t> owner;
  };
  // A surface's law over nodes of weights w_i times area per volume, per cell volume: the
  // convective ambient `ambient` (the factor the step gives the surface's source field), a
  // radiating ambient at t. With `owner`, each node's term is added to into[owner[k]] as well
  // where owner[k] >= 0 (a Dirichlet node's, for its reaction). `convective` (when given):
  // the weights of the convection's term, `weighted` then those of the others.
  static double law_rate(const kernels::BoundaryFace& f, const std::vector<std::int64_t>& nodes,
                         const std::vector<double>& weighted, const std::vector<double>& u,
                         double t, double ambient, const std::vector<std::int32_t>* owner = nullptr,
                         std::vector<double>* into = nullptr,
                         const std::vector<double>* convective = nullptr, double* gross = nullptr);
  // flows() with the source fields' schedules scaled by factor(schedule); with `gross`, the
  // sum of the magnitudes of the terms added there (HeatFlowReport::gross).
  template <typename Factor>
  std::vector<double> flows_with(const std::vector<double>& u, double t, const Factor& factor,
                                 double* gross = nullptr) const;
  struct SourceFlow {
    const kernels::Schedule* schedule = nullptr;
    double total = 0.0;  // sum over the body's nodes of w_i q_i, less the surfaces' loads
    // The Dirichlet nodes' terms of `total`.
    std::vector<std::int32_t> owner;
    std::vector<double> weighted;
  };
  // The Dirichlet nodes of the body: their conductances, G (u_b - u_j) over pairs (b, j) at the
  // reference conductance, scaled at u along `axis` from node `lower` where properties vary;
  // and the Dirichlet faces (rows of flows()) their reactions go to, with their shares.
  struct DirichletNodes {
    std::vector<std::int64_t> node;
    std::vector<std::int32_t> pair_owner;
    std::vector<std::int64_t> pair_neighbour, pair_lower;
    std::vector<int> pair_axis;
    std::vector<double> pair_conductance;
    std::vector<std::size_t> share_begin;  // node k's shares: [share_begin[k], share_begin[k+1])
    std::vector<std::size_t> share_row;
    std::vector<double> share;
  };
  double scaled(std::int64_t b, std::size_t k, const std::vector<double>& u) const;
  // w_i C_i (u_i - before_i), or its enthalpy's change.
  double stored_at(std::int64_t i, const std::vector<double>& u,
                   const std::vector<double>& before) const;

  std::shared_ptr<const kernels::CoefficientFields> fields_;
  int dims_ = 1;
  std::array<std::int64_t, 3> n_{1, 1, 1};
  std::array<bool, 3> periodic_{false, false, false};
  double volume_ = 1.0;  // the cell volume
  std::vector<std::uint8_t> fixed_;
  std::vector<FaceFlow> faces_;
  std::vector<SurfaceFlow> surfaces_;
  std::vector<SourceFlow> sources_;
  DirichletNodes dirichlet_;
  std::vector<std::string> names_;

  double weight(std::int64_t i) const;
  // Whether coordinate c of axis a lies on a face that halves a node's weight (not periodic).
  bool halved(int a, std::int64_t c) const { return !periodic_[a] && (c == 0 || c == n_[a] - 1); }
};

// One row of heat_flows.csv: the balance of the step that ends at the row's step, as the run's
// time method takes it.
struct HeatFlowRow {
  std::vector<double> flows;  // as HeatFlowMeter::names()
  double storage = 0.0;       // the rate at which the stored heat grows
  double imbalance = 0.0;     // the flows' sum less the storage
  // The magnitudes the row's terms add (HeatFlowReport::gross), the storage's over the step.
  double gross = 0.0;
};

// Makes the rows from the fields of the steps a row needs. The row at step n (t_n = n dt):
//   storage = stored_change(u_n, u_n-1) / dt; bdf2: (3 that - the step before's) / 2 once the
//             stepper has two fields behind it (its first step is backward Euler);
//   flows   = explicit: at u_n-1, faces at t_n-1, sources' means over the step;
//             backward Euler and bdf2: at u_n and t_n; Crank-Nicolson: the mean of both ends;
//             the implicit methods' source fields at the factors their step applied
//             (multigrid::implicit_source_factor: the schedule's mean over the step);
// exactly the terms each method's step balances, so the imbalance is the step's rounding (the
// solve's residual for the implicit methods). The row at step 0 has no step behind it: its
// flows are at u_0 and t = 0, its storage their sum (the rate the operator gives), its
// imbalance 0. A steady state's one row: flows at the solution, storage 0, the imbalance the
// flows' sum.
class HeatFlowRows {
 public:
  HeatFlowRows(const HeatFlowMeter& meter, TimeMethod method, double dt);

  // How many steps before a row's step the row needs the field of: 1 (2 for bdf2; 0 steady).
  int lead() const { return lead(method_); }
  static int lead(TimeMethod method);

  // Takes the field of `step` (fields are given in step order: a row's lead steps, then the
  // row's own). Returns the row at `step` when `row` is set and it can be made: the field of
  // the step before was the last one given, or `step` is 0, or the run is steady.
  std::optional<HeatFlowRow> take(std::int64_t step, const std::vector<double>& u, bool row);

 private:
  const HeatFlowMeter& meter_;
  TimeMethod method_;
  double dt_;
  std::int64_t last_step_ = -1;
  std::vector<double> last_u_;
  bool have_last_ = false;
  // stored_change from the step before last_step_ to last_step_, when both were given, and
  // its Dirichlet nodes' part per row.
  double last_change_ = 0.0;
  std::vector<double> last_dirichlet_change_;
  bool have_last_change_ = false;
};

// The heat flux -k grad T at the nodes (output.fields: heat_flux), three components per node
// (x, y, z; 0 on the unused axes), node after node in memory order, in W/m^2. Along each axis
// a node takes the mean of the fluxes -K (u_j - u_i) / h through its two faces, K the face's
// conductance as the step uses it (CoefficientFields::face); at a boundary node, and beside a
// void (a face of conductance 0), the one face inside the body; nodes inside a void take 0.
// Exact for a field linear along the axis in one material. `fields` null: the shorthand's
// k = physics.alpha. Conductivities that vary with temperature are taken at u.
std::vector<double> node_heat_flux(const kernels::StencilProblem& problem,
                                   const kernels::CoefficientFields* fields, double alpha,
                                   const double* u);
std::vector<double> node_heat_flux(const kernels::StencilProblem& problem,
                                   const kernels::CoefficientFields* fields, double alpha,
                                   const float* u);

// The conductivity at the nodes at field u (output.fields: conductivity), W/(m K): the fields'
// per-node value times its material's k(T)/k_ref at u_i (kernels/temperature_laws.hpp).
std::vector<double> node_conductivity(const kernels::CoefficientFields& fields, const double* u);
std::vector<double> node_conductivity(const kernels::CoefficientFields& fields, const float* u);

// The liquid fraction at the nodes at field u (output.fields: liquid_fraction): 0 below a
// phase change's solidus, 1 above its liquidus, linear between; 0 where no material melts.
std::vector<double> node_liquid_fraction(const kernels::CoefficientFields& fields, const double* u);
std::vector<double> node_liquid_fraction(const kernels::CoefficientFields& fields, const float* u);

}  // namespace heatsim::solver
