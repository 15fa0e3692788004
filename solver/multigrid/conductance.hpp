// The heat-flow operator of a case, D u = C L u (kernels/backend.hpp, StencilProblem::
// coefficients: harmonic face conductances, the ghost rules of every face), written as the
// symmetric system implicit steps and steady states solve. Rows are weighted by the trapezoid
// node weights w_i (1/2 per non-periodic boundary axis), which turns the ghost's mirror doubling
// into a symmetric matrix:
//   w_i (D u)_i = -(A u)_i + load_i(t),
//   (A u)_i = transfer_i u_i + sum_j G_ij (u_i - u_j),
//   G_ij = K_ij / h_axis^2 * (product of the weights of i on the other axes),
//   transfer_i = w_i * 2 h_c / h_axis per convective face of node i (h_c its coefficient),
//   load_i(t) = w_i * (2 K_bm value / h_axis, or 2 value / h_axis for heat_flux) per Neumann
//               face + w_i * 2 h_c ambient(t) / h_axis per convective face,
// Dirichlet nodes fixed at g(t) (a node on several faces takes the last one's value in the
// order x-, x+, y-, y+, z-, z+, as the backends reset them). Sources add w_i q_i(t).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/level_ops.hpp"

namespace heatsim::solver::multigrid {

// The factor an implicit step from t0 = step * dt to t1 = t0 + dt applies to a source field on
// schedule s (the case's sources, the void surfaces' ambient loads): the schedule's mean over
// the step, so that backward Euler and Crank-Nicolson steps add exactly its integral, a pulse
// that starts and ends between two step times included, as explicit steps do. A BDF2 step from
// two fields (bdf2) takes 3/2 of it less 1/2 of the step before's: q(t1) to second order, and
// summed over the run the integral as BDF2's stored heat counts it. A constant schedule gives
// its value.
double implicit_source_factor(const kernels::Schedule& s, std::int64_t step, double dt, bool bdf2);

class HeatFlowOperator {
 public:
  // Throws std::invalid_argument when the fields do not match the grid (the nodes' k may be
  // left out where the faces are given), or a face kind is not one of the four.
  HeatFlowOperator(const kernels::StencilProblem& problem,
                   std::shared_ptr<const kernels::CoefficientFields> fields);

  std::int64_t points() const { return base_.points(); }
  // The level operator alpha * w C + beta * A (node term alpha*w_i*C_i + beta*transfer_i,
  // conductances beta*G): implicit steps use alpha = 1/dt, beta = 1 (backward Euler) or 1/2
  // (Crank-Nicolson); steady states alpha = 0, beta = 1.
  kernels::LevelOperator level(double alpha, double beta) const;
  // The steady state's level (alpha = 0, beta = 1: level(0, 1) to the bit), its node terms and
  // conductances moved out of the operator rather than copied (hundreds of MB of new pages on
  // a large grid): for a solver that builds its levels once. level() and take_steady_level()
  // throw std::logic_error afterwards; the loads, fixed nodes and faces stay.
  kernels::LevelOperator take_steady_level();
  // level(alpha, beta) to the bit, computed in the operator's own arrays and moved out: for a
  // solver that asks for one level of this operator (a nonlinear step's outer iteration, whose
  // next operator is linearised anew). Afterwards as take_steady_level.
  kernels::LevelOperator take_level(double alpha, double beta);
  // A linear steady solve's operator once its level is taken: keeps each source's weighted
  // density (weighted_source's values) and schedule and lets the coefficient fields go, so
  // that a caller may release them while it solves (at 129^3 they are a seventh of the
  // solve's resident set). level(), weighted_capacity(), add_load() and net_inflow() throw
  // std::logic_error afterwards; std::logic_error before the level is taken.
  void release_fields();
  // w_i C_i, computed on each call (an implicit stepper's set-up alone asks for it).
  std::vector<double> weighted_capacity() const;
  const std::vector<std::uint8_t>& fixed() const { return base_.fixed; }
  // True when A alone is singular: no Dirichlet node and no convective face, so temperatures
  // are fixed only up to a constant.
  bool floating() const;

  // out_i += load_i(t) + w_i * sum_s factor_s q_s,i on the free nodes, the sources' factors
  // at(t), or with `step` >= 0 those of the implicit step from `step` (implicit_source_factor
  // with dt and bdf2).
  void add_load(double t, std::vector<double>& out, std::int64_t step = -1, double dt = 0.0,
                bool bdf2 = false) const;
  // The same for a backward-Euler step from t0 to t1 (a part of a step): the faces at t1, the
  // sources at their mean over [t0, t1] (a constant one at t1).
  void add_load_between(double t0, double t1, std::vector<double>& out) const;
  // u_i = g(t) on the Dirichlet nodes.
  void set_fixed(double t, std::vector<double>& u) const;

  // The parts of add_load and set_fixed, for assembling them where the field lives
  // (ImplicitStepper, on the level operations' device): load_i(t) = sum over the sources of
  // factor_s(t) * weighted_s,i + sum over the faces of (constant_i + ambient_weight_i *
  // ambient(t)); the Dirichlet faces' nodes take g(t), face after face in the order x-, x+, y-,
  // y+, z-, z+ (a node on several faces keeps the last one's).
  struct FacePart {
    int face = 0;
    std::vector<std::int64_t> nodes;  // the face's free nodes (and Dirichlet nodes: see below)
    std::vector<double> constant, ambient_weight;
  };
  // Source s's part: its weighted density w_i q_i on the free nodes, 0 on the fixed ones,
  // written into `out` (points() values; straight into a level operations' vector where it
  // lives in host memory), and its schedule.
  std::size_t sources() const { return fields_ ? fields_->sources.size() : schedules_.size(); }
  void weighted_source(std::size_t s, double* out) const;
  const kernels::Schedule& source_schedule(std::size_t s) const {
    return fields_ ? fields_->sources.at(s).schedule : schedules_.at(s);
  }
  // With `dirichlet_nodes` the parts also hold the face loads of the Dirichlet nodes (a
  // convective face's corner node fixed by a Dirichlet face across the edge), which no step
  // uses but the heat-flow meter counts (heat_flows.hpp: a Dirichlet face's reaction).
  std::vector<FacePart> face_parts(bool dirichlet_nodes = false) const;
  // Per Dirichlet face, in the order above: the face and its nodes.
  std::vector<std::pair<int, std::vector<std::int64_t>>> dirichlet_faces() const;
  const kernels::BoundaryFace& face(int f) const { return problem_.faces[f]; }
  // The total heat the sources put in at time t (per unit cell volume, weighed as the total
  // heat weighs nodes), and what the Neumann faces let in: a steady state of a floating
  // problem needs this to be 0.
  double net_inflow(double t) const;

 private:
  // add_load's body, the sources' factors from `source_factor`.
  void add_load_with(double t, std::vector<double>& out,
                     const std::function<double(const kernels::Schedule&)>& source_factor) const;
  kernels::StencilProblem problem_;
  std::shared_ptr<const kernels::CoefficientFields> fields_;
  // node term: transfer; conductances G; fixed: Dirichlet (1) and removed (kRemovedNode)
  kernels::LevelOperator base_;
  bool level_taken_ = false;
  bool floating_ = false;  // floating(), found when the operator is built
  // After release_fields(): the sources' weighted densities and schedules.
  std::vector<kernels::LevelWeights> weighted_sources_;
  std::vector<kernels::Schedule> schedules_;
  // Per boundary node and face: the constant Neumann load, and the convective weight
  // w_i * 2 h_c / h_axis that multiplies ambient(t).
  struct FaceLoad {
    std::int64_t node;
    int face;
    double constant;
    double ambient_weight;
  };
  std::vector<FaceLoad> face_loads_;

  // level()'s values in op, whose node terms and conductances are base_'s on entry: node term
  // alpha w C + beta * transfer, conductances beta G (take_level: op is base_ itself).
  void scale_level(kernels::LevelOperator& op, double alpha, double beta) const;

  // The node's share of its cell, 1/2 per non-periodic boundary axis it lies on: the product
  // of its axes' shares, x's first. Computed where it is needed, not kept (8 bytes a node for
  // the whole run).
  double weight(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return axis_weight(0, x) * axis_weight(1, y) * axis_weight(2, z);
  }
  // f(i, w) for every node i with its weight w, row by row on the threads (the weight from
  // the node's coordinates, not divided out of its index).
  template <typename F>
  void for_weighted_nodes(F&& f) const;
  double axis_weight(int a, std::int64_t c) const {
    if (a >= base_.dims || base_.periodic[a]) return 1.0;
    return (c == 0 || c == base_.n[a] - 1) ? 0.5 : 1.0;
  }
};

}  // namespace heatsim::solver::multigrid
