// Stencil construction and stability: the discrete Laplacian of each scheme, the update
// operator S = I + alpha*dt*L_h, and the largest stable dt from the weights' symbol.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "case.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver {

using kernels::Stencil;

// Radius of the case's scheme (custom: as given).
int scheme_radius(const SchemeSpec& scheme);
// One-dimensional second-derivative weights times h^2 for order2/4/6, centre at index r.
std::vector<double> second_derivative_weights(SchemeKind kind);

// L_h for the case (weights already divided by h^2).
Stencil laplacian(const Case& c);
// S = I + alpha*dt*L.
Stencil update_operator(const Stencil& laplacian, double alpha_dt);
// S^k: the stencil convolved with itself k times (radius k*r), what k fused steps apply.
// Throws std::invalid_argument when k < 1.
Stencil stencil_power(const Stencil& s, int k);

// Symbol of a stencil at frequencies theta (radians per grid step, per axis):
// sum_w w * exp(i * offset . theta); returns the real and imaginary parts.
std::array<double, 2> symbol(const Stencil& s, const std::array<double, 3>& theta);
// max over frequencies of |symbol of S| (sampled on a grid that includes 0 and pi).
double max_symbol_magnitude(const Stencil& s);
// Largest dt with max |symbol of I + alpha*dt*L| <= 1; 0 when no positive dt is stable,
// +inf when every dt is (L == 0).
double max_stable_dt(const Stencil& laplacian, double alpha);

// dt and steps after resolving `dt: auto` and `end`.
struct TimePlan {
  double dt = 0.0;
  std::int64_t steps = 0;
  double dt_limit = 0.0;  // the stability limit
  bool dt_auto = false;
  // With coefficient fields: the memory-order index of the node that sets dt_limit
  // (solver::field_stability); -1 when the limit comes from the stencil's symbol.
  std::int64_t limit_node = -1;
};
// Throws std::invalid_argument when the case's dt is unstable (message names the limit, and
// with coefficient fields the node that sets it). With Case::has_fields() the limit is
// field_stability's; the overload takes fields already built by coefficient_fields(c).
TimePlan plan_time(const Case& c);
TimePlan plan_time(const Case& c, const kernels::CoefficientFields& fields);

// The backend's view of the case with time step dt. With Case::has_fields() it carries the
// coefficient fields (built here, or the ones given), source_increment 0 (physics.source is
// one of the fields' sources) and fusion depth 1; such a case needs scheme order2
// (std::invalid_argument otherwise).
kernels::StencilProblem make_problem(const Case& c, double dt);
kernels::StencilProblem make_problem(const Case& c, double dt,
                                     std::shared_ptr<const kernels::CoefficientFields> fields);

// Node coordinate along an axis (origin 0).
double coordinate(const Case& c, int axis, std::int64_t i);
// Initial field in memory order [z][y][x]; Dirichlet boundary nodes take g(0). Not for a
// `file` initial condition (io/initial_file.hpp reads it; this throws). Throws
// std::invalid_argument, naming `initial.value`, when an expression does not compile or is
// not finite at a node (Dirichlet nodes excepted: they take g(0)).
std::vector<double> initial_field(const Case& c);
// The same straight into `u` (the grid's points), on every thread with no zero fill first:
// doubles, or an fp32 run's floats (each the double rounded as an upload rounds it), so a
// run's field is built once in its precision (kernels::HostField, Backend::upload_from).
void fill_initial_field(const Case& c, double* u);
void fill_initial_field(const Case& c, float* u);
// Sets every node on a Dirichlet face to g(t) (g(0) by default), in a field of the case's grid
// ([z][y][x]); a node on several faces takes the last one's value in the order x-, x+, y-, y+,
// z-, z+.
void set_dirichlet_nodes(const Case& c, std::vector<double>& u, double t = 0.0);
// The first node, in memory order, whose value is not finite: "nan at node (1, 2): x = 0.1,
// y = 0.2"; "" when there is none.
std::string first_non_finite(const Case& c, const std::vector<double>& u);
// The variables of an expression initial condition: the coordinates of the active axes.
std::vector<std::string> expression_variables(int dims);
// Where an expression initial condition is not finite, among the nodes that are 0, n/2 or
// n-1 on every axis and on no Dirichlet face: "nan at x = 0, y = 0.5", or "" (validation's
// quick look; initial_field checks every node). Throws ExpressionError when it does not compile.
std::string expression_sample_problem(const Case& c);

// Bytes of host memory a run needs (field copies on the host).
std::int64_t host_bytes_needed(const Case& c);

}  // namespace heatsim::solver
