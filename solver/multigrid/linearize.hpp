// The linear problem a nonlinear one is near at a temperature field: what each outer iteration
// of an implicit step or a steady solve hands the multigrid (implicit_stepper.hpp) when the
// materials' properties vary with temperature (kernels/temperature_laws.hpp) or faces radiate.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.hpp"

namespace heatsim::solver::multigrid {

// Whether the problem needs outer iterations: temperature laws or a radiating face.
bool is_nonlinear(const kernels::StencilProblem& problem, const kernels::CoefficientFields& fields);

// Whether some face of the domain or some void's surface radiates (fields may be null).
bool radiates(const kernels::StencilProblem& problem, const kernels::CoefficientFields* fields);

// The fields at temperature u (memory order) and time t, with no temperature laws left and no
// nodes' conductivities where the faces are given (the heat-flow operator reads the faces):
//   faces: K_ij of TemperatureDependence at u (Picard);
//   capacity: C_ref times the apparent capacity ratio dh/dT at u;
//   radiating faces, per boundary node b: the loss eps sigma (u_b^4 - a^4), a the ambient at
//     t, linearised about u (Newton): 4 eps sigma u^3 joins the node's transfer and
//     eps sigma (3 u^4 + a^4) a constant source, both times 2 / h_axis, as the convective
//     ghost turns a face's coefficient into its node's (conductance.hpp).
std::shared_ptr<const kernels::CoefficientFields> linearize(const kernels::StencilProblem& problem,
                                                            const kernels::CoefficientFields& base,
                                                            const std::vector<double>& u, double t);

// h(u) per node in kelvin (kernels::TemperatureLaw::enthalpy; u itself for a node of constant
// capacity): the heat content per unit volume is C_ref h.
std::vector<double> enthalpies(const kernels::CoefficientFields& fields, const std::vector<double>& u);

}  // namespace heatsim::solver::multigrid
