// Materials whose properties vary with temperature: conductivity and heat capacity as
// piecewise-linear tables of T, and latent heat released over a melting range. The backends
// re-evaluate them from the field each step (CoefficientFields::temperature); the multigrid
// solver iterates on them (solver/multigrid/nonlinear.hpp).
//
// A law is written relative to the reference values the node's static coefficient fields
// hold (k_ref, C_ref): the tables are ratios k(T)/k_ref and C(T)/C_ref, and the latent heat is
// L/C_ref (kelvin). So a node near an interface, whose capacity is a volume average of several
// materials, scales its own material's curve, and a face between two materials combines the
// two nodes' ratios in series with the weights its reference conductance had.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace heatsim::kernels {

// y(x) of a table of (x, y) pairs sorted by x: linear between the pairs, constant beyond the
// ends. The table must not be empty.
double piecewise_linear(const std::vector<std::array<double, 2>>& table, double x);

// The Stefan-Boltzmann constant sigma (W/(m^2 K^4)), CODATA 2018 (exact in SI since 2019).
constexpr double kStefanBoltzmann = 5.670374419e-8;

// One piece of a law's enthalpy, from temperature `t` up to the next piece's: the capacity
// ratio is c + slope (T - t) there and the enthalpy h + c (T - t) + slope (T - t)^2 / 2.
struct EnthalpyPiece {
  double t = 0.0, h = 0.0, c = 1.0, slope = 0.0;
};

struct TemperatureLaw {
  std::vector<std::array<double, 2>> conductivity;  // (T, k(T)/k_ref); empty: 1
  std::vector<std::array<double, 2>> capacity;      // (T, C(T)/C_ref); empty: 1
  // Phase change: latent heat L/C_ref (K) released uniformly over [solidus, liquidus]; 0: none.
  double solidus = 0.0, liquidus = 0.0, latent = 0.0;
  // The enthalpy's pieces, sorted by t: built by prepare() from the tables above.
  std::vector<EnthalpyPiece> pieces;

  // Builds `pieces`; call after setting the tables (the evaluations below read them).
  void prepare();
  bool varying_conductivity() const { return conductivity.size() > 1; }
  bool varying_capacity() const { return capacity.size() > 1 || latent > 0.0; }

  double conductivity_ratio(double T) const;
  // The apparent capacity dh/dT: the table's value plus latent/(liquidus - solidus) inside the
  // melting range.
  double capacity_ratio(double T) const;
  // h(T) in kelvin (the heat per unit volume over C_ref): the integral of capacity_ratio, equal
  // to c T below the first break point (c the capacity ratio there), so that a constant law
  // gives h = T and the heat content C_ref h(T) = C T of a constant material.
  double enthalpy(double T) const;
  // The inverse of enthalpy(): strictly increasing, so one T for every h.
  double temperature(double h) const;
  // 0 below the solidus, 1 above the liquidus, linear between; 0 without a phase change.
  double liquid_fraction(double T) const;
  // The largest conductivity ratio and the smallest capacity ratio over all temperatures (the
  // explicit stability limit's worst case), and the temperatures where they occur.
  std::array<double, 2> largest_conductivity() const;  // (T, ratio)
  std::array<double, 2> smallest_capacity() const;     // (T, ratio)
};

// The temperature-dependent part of a problem's coefficient fields (CoefficientFields::
// temperature). Each step, node i of law l = law[i] >= 0 has
//   r_i = laws[l].conductivity_ratio(u_i)                  (1 for a node of law -1),
// every face i -> j = i + e_a (or the periodic wrap) touching such a node conducts
//   K_ij = K_ref / (share_ij / r_i + (1 - share_ij) / r_j),
// K_ref the face's reference conductance (CoefficientFields::faces, which must be given) and
// share_ij = share[a][i] the part of its reference resistance in node i's material, and a node
// whose law has a varying capacity advances its enthalpy rather than its temperature:
//   u_i <- temperature(enthalpy(u_i) + dt/C_ref * (flow + sources)),
// which conserves C_ref h summed over the nodes to rounding (the flows between nodes cancel).
struct TemperatureDependence {
  std::vector<TemperatureLaw> laws;
  std::vector<std::int32_t> law;                    // per node; -1: constant properties
  std::array<std::vector<double>, 3> share;         // per axis and face, as `faces`

  // r_i at temperature u (1 for a node of constant properties).
  double conductivity_ratio(std::int64_t node, double u) const {
    const std::int32_t l = law[static_cast<std::size_t>(node)];
    return l < 0 ? 1.0 : laws[static_cast<std::size_t>(l)].conductivity_ratio(u);
  }
};

// K_ij = K_ref / (share / r_i + (1 - share) / r_j): the face's reference resistance split
// between the two nodes' materials, each part scaled by its material's ratio.
inline double scaled_face(double reference, double share, double ri, double rj) {
  return reference / (share / ri + (1.0 - share) / rj);
}

}  // namespace heatsim::kernels
