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
#include <cmath>
#include <cstdint>
#include <vector>

#include "face_conductance.hpp"  // HEATSIM_HOST_DEVICE

namespace heatsim::kernels {

// The piece [x_{i-1}, x_i) of a table of (x, y) pairs stored flat that holds x, for x strictly
// between the first and the last pair's x: i, the first pair with x_i > x.
HEATSIM_HOST_DEVICE inline int table_piece(const double* xy, double x) {
  int i = 1;
  while (xy[2 * i] <= x) ++i;
  return i;
}

// y(x) of `n` (x, y) pairs stored flat (x0, y0, x1, y1, ...) and sorted by x: linear between
// the pairs, constant beyond the ends; 1 when n is 0. One evaluation for host and device.
HEATSIM_HOST_DEVICE inline double table_at(const double* xy, int n, double x) {
  if (n == 0) return 1.0;
  if (x <= xy[0]) return xy[1];
  if (x >= xy[2 * (n - 1)]) return xy[2 * (n - 1) + 1];
  const int i = table_piece(xy, x);
  const double* a = xy + 2 * (i - 1);
  const double* b = xy + 2 * i;
  return a[1] + (b[1] - a[1]) * ((x - a[0]) / (b[0] - a[0]));
}

// The mean of table_at's y over [a, b] (either order): the integral of y between a and b over
// b - a, summed piece by piece between the two only (the ends' constants outside the table); y
// at the midpoint when b - a is within 1e-12 of their size (the limit). For a conductivity
// ratio r(T) this is the Kirchhoff mean (R(a) - R(b)) / (a - b), R the integral of r, with which
// a steady flow along a line of one material is exact at the nodes.
HEATSIM_HOST_DEVICE inline double table_mean(const double* xy, int n, double a, double b) {
  const double lo = a < b ? a : b, hi = a < b ? b : a;
  if (n < 2 || !(hi - lo > 1e-12 * (std::fabs(lo) + std::fabs(hi))))
    return table_at(xy, n, 0.5 * (lo + hi));
  const double first = xy[0], last = xy[2 * (n - 1)];
  double sum = 0.0;
  if (lo < first) sum += xy[1] * ((hi < first ? hi : first) - lo);
  if (hi > last) sum += xy[2 * (n - 1) + 1] * (hi - (lo > last ? lo : last));
  if (hi > first && lo < last)
    for (int i = lo > first ? table_piece(xy, lo) : 1; i < n && xy[2 * (i - 1)] < hi; ++i) {
      const double* p = xy + 2 * (i - 1);
      const double* q = xy + 2 * i;
      const double s = lo > p[0] ? lo : p[0], e = hi < q[0] ? hi : q[0];
      if (!(e > s)) continue;  // also a step (two pairs at one x)
      // The piece is linear: its integral is the width times y at the middle.
      const double mid = 0.5 * (s + e);
      sum += (e - s) * (p[1] + (q[1] - p[1]) * ((mid - p[0]) / (q[0] - p[0])));
    }
  return sum / (hi - lo);
}

// The same on a table of pairs, which must not be empty.
double piecewise_linear(const std::vector<std::array<double, 2>>& table, double x);

// The Stefan-Boltzmann constant sigma (W/(m^2 K^4)), CODATA 2018 (exact in SI since 2019).
constexpr double kStefanBoltzmann = 5.670374419e-8;

// One piece of a law's enthalpy, from temperature `t` up to the next piece's: the capacity
// ratio is c + slope (T - t) there and the enthalpy h + c (T - t) + slope (T - t)^2 / 2.
struct EnthalpyPiece {
  double t = 0.0, h = 0.0, c = 1.0, slope = 0.0;
};

// A law's tables as flat arrays (host or device pointers): what the evaluations below read, so
// that the CPU backend, the multigrid and the CUDA kernels evaluate a law alike.
struct LawTables {
  const double* conductivity = nullptr;  // (T, ratio) pairs, flat
  int conductivity_pairs = 0;
  const double* capacity = nullptr;
  int capacity_pairs = 0;
  const EnthalpyPiece* pieces = nullptr;
  int piece_count = 0;
  double solidus = 0.0, liquidus = 0.0, latent = 0.0;
};

HEATSIM_HOST_DEVICE inline double law_conductivity(const LawTables& l, double T) {
  return table_at(l.conductivity, l.conductivity_pairs, T);
}

// The Kirchhoff mean of the conductivity ratio between temperatures Ti and Tj (table_mean).
HEATSIM_HOST_DEVICE inline double law_mean_conductivity(const LawTables& l, double Ti, double Tj) {
  return table_mean(l.conductivity, l.conductivity_pairs, Ti, Tj);
}

HEATSIM_HOST_DEVICE inline double law_capacity(const LawTables& l, double T) {
  double c = table_at(l.capacity, l.capacity_pairs, T);
  if (l.latent > 0.0 && T > l.solidus && T < l.liquidus) c += l.latent / (l.liquidus - l.solidus);
  return c;
}

// h(T): below the first piece c T with c the capacity table's value there; in piece k
// h_k + c_k d + slope_k d^2 / 2, d = T - t_k.
HEATSIM_HOST_DEVICE inline double law_enthalpy(const LawTables& l, double T) {
  const EnthalpyPiece& first = l.pieces[0];
  if (T <= first.t) return table_at(l.capacity, l.capacity_pairs, first.t) * T;
  int k = l.piece_count - 1;
  while (l.pieces[k].t > T) --k;
  const EnthalpyPiece& p = l.pieces[k];
  const double d = T - p.t;
  return p.h + p.c * d + 0.5 * p.slope * d * d;
}

// The inverse of law_enthalpy (strictly increasing).
HEATSIM_HOST_DEVICE inline double law_temperature(const LawTables& l, double h) {
  const EnthalpyPiece& first = l.pieces[0];
  if (h <= first.h) return h / table_at(l.capacity, l.capacity_pairs, first.t);
  int k = l.piece_count - 1;
  while (l.pieces[k].h > h) --k;
  const EnthalpyPiece& p = l.pieces[k];
  const double dh = h - p.h;
  if (p.slope == 0.0) return p.t + dh / p.c;
  // The root of slope/2 d^2 + c d - dh = 0 near 0, in the form without cancellation.
  double disc = p.c * p.c + 2.0 * p.slope * dh;
  if (disc < 0.0) disc = 0.0;
  return p.t + 2.0 * dh / (p.c + std::sqrt(disc));
}

struct TemperatureLaw {
  std::vector<std::array<double, 2>> conductivity;  // (T, k(T)/k_ref); empty: 1
  std::vector<std::array<double, 2>> capacity;      // (T, C(T)/C_ref); empty: 1
  // Phase change: latent heat L/C_ref (K) released uniformly over [solidus, liquidus]; 0: none.
  double solidus = 0.0, liquidus = 0.0, latent = 0.0;
  // The enthalpy's pieces, sorted by t: built by prepare() from the tables above.
  std::vector<EnthalpyPiece> pieces;

  // Builds `pieces`; call after setting the tables (the evaluations below read them).
  void prepare();
  // The tables as flat arrays, pointing into this law (valid while it lives unchanged).
  LawTables tables() const;
  bool varying_conductivity() const { return conductivity.size() > 1; }
  bool varying_capacity() const { return capacity.size() > 1 || latent > 0.0; }

  double conductivity_ratio(double T) const;
  // The mean of conductivity_ratio between Ti and Tj (law_mean_conductivity).
  double mean_conductivity_ratio(double Ti, double Tj) const;
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

// K_ij = K_ref / (share / r_i + (1 - share - contact) / r_j + contact): the face's reference
// resistance split between the two nodes' materials, each part scaled by its material's ratio,
// and a contact resistance between them (solver/contacts.hpp) that stays as it is. Without a
// contact (0) the sum is the two materials' parts alone, bit for bit.
HEATSIM_HOST_DEVICE inline double scaled_face(double reference, double share, double ri, double rj,
                                              double contact = 0.0) {
  const double parts = share / ri + (1.0 - share - contact) / rj;
  return reference / (contact > 0.0 ? parts + contact : parts);
}

// The conductivity ratio of a law at T; 1 where there is none (null: constant properties).
HEATSIM_HOST_DEVICE inline double law_ratio(const LawTables* l, double T) {
  return l ? law_conductivity(*l, T) : 1.0;
}

// R(a) - R(b), R the integral of a law's conductivity ratio (the Kirchhoff transform); a - b
// where there is none.
HEATSIM_HOST_DEVICE inline double law_potential(const LawTables* l, double a, double b) {
  return l ? (a - b) * law_mean_conductivity(*l, a, b) : a - b;
}

// A law's Kirchhoff mean ratio between a and b; 1 where there is none.
HEATSIM_HOST_DEVICE inline double law_ratio_mean(const LawTables* l, double a, double b) {
  return l ? law_mean_conductivity(*l, a, b) : 1.0;
}

// K_ij of a face whose reference resistance 1/reference lies a part `share` in node i's
// material (law li; null: constant properties), a part `contact` in a contact resistance and
// the rest in node j's material (law lj), at the node temperatures ui and uj: the steady flow
// along a line through those parts in series, each part conducting by its own material's
// Kirchhoff transform between the temperatures at its ends, over ui - uj. The temperatures where
// the parts meet are solved for (Newton's method inside a bracket: the flow is monotone in
// them), so a layered wall of k(T) materials is exact at the nodes wherever its interfaces lie,
// as one material's Kirchhoff mean is. Where ui and uj agree to 1e-9 of their size, the limit:
// scaled_face at the nodes' ratios. A part of no length takes no part; with no contact and the
// whole face in one material, that material's Kirchhoff mean.
// Out of line in device code: its loop is taken on a material interface's faces alone, and
// inlined on each axis it held the faces' kernel to spilled registers.
#ifdef __CUDACC__
#define HEATSIM_SERIES_FACE_INLINE __noinline__
#else
#define HEATSIM_SERIES_FACE_INLINE
#endif
HEATSIM_HOST_DEVICE HEATSIM_SERIES_FACE_INLINE inline double series_face(
    double reference, double share, double contact, const LawTables* li, const LawTables* lj,
    double ui, double uj) {
  const double c = contact > 0.0 ? contact : 0.0;
  double s = share, t = 1.0 - share - c;
  if (!(std::fabs(ui - uj) > 1e-9 * (std::fabs(ui) + std::fabs(uj))))
    return scaled_face(reference, share, law_ratio(li, ui), law_ratio(lj, uj), contact);
  if (!(t > 0.0)) t = 0.0;
  if (s < t) {  // the same face seen from j (the flow reversed), so that s is the larger part
    const LawTables* l = li;
    li = lj;
    lj = l;
    const double u = ui;
    ui = uj;
    uj = u;
    const double part = s;
    s = t;
    t = part;
  }
  // A contact and parts of no length to rounding (a share of 3e-16 where a bound lies on a
  // node plane): the flow divided by s below would be noise.
  if (!(s > 1e-9)) return scaled_face(reference, s, law_ratio(li, ui), law_ratio(lj, uj), c);
  if (!(c > 0.0) && !(t > 1e-9)) return reference * law_ratio_mean(li, ui, uj);
  // Ta, the temperature at the end of i's part, decides the rest: the flow F (in kelvin, times
  // the reference resistance) s F = R_i(ui) - R_i(Ta), the contact's far side Tb = Ta - c F, and
  // g(Ta) = R_j(Tb) - R_j(uj) - t F, increasing in Ta, is 0 at the answer, which lies between ui
  // and uj. The start: every part at its node's ratio.
  double lo = ui < uj ? ui : uj, hi = ui < uj ? uj : ui;
  const double ri0 = law_ratio(li, ui), rj0 = law_ratio(lj, uj);
  double ta = ui - (ui - uj) * (s / ri0) / (s / ri0 + c + t / rj0);
  if (!(ta > lo && ta < hi)) ta = 0.5 * (lo + hi);
  const double tiny = 4e-16 * (std::fabs(ui) + std::fabs(uj));
  for (int k = 0; k < 100; ++k) {
    const double f = law_potential(li, ui, ta) / s;
    const double tb = ta - c * f;
    const double g = law_potential(lj, tb, uj) - t * f;
    if (g == 0.0) break;
    if (g < 0.0)
      lo = ta;
    else
      hi = ta;
    const double ri = law_ratio(li, ta) / s;  // -dF/dTa
    const double slope = law_ratio(lj, tb) * (1.0 + c * ri) + t * ri;
    double next = ta - g / slope;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const bool done = std::fabs(next - ta) <= tiny || hi - lo <= tiny;
    ta = next;
    if (done) break;
  }
  return reference * (law_potential(li, ui, ta) / s) / (ui - uj);
}

// The temperature-dependent part of a problem's coefficient fields (CoefficientFields::
// temperature). Each step, node i of law l = law[i] >= 0 has
//   r_i = laws[l].conductivity_ratio(u_i)                  (1 for a node of law -1),
// every face i -> j = i + e_a (or the periodic wrap) touching such a node conducts
//   K_ij = K_ref rbar_ij,   rbar_ij = laws[l].mean_conductivity_ratio(u_i, u_j)
// between two nodes of one law l (law[i] == law[j]: the Kirchhoff mean, exact at the nodes for
// a steady flow along a line) and otherwise series_face: the parts share_ij (node i's
// material), c_ij (a contact) and 1 - share_ij - c_ij (node j's) in series, each by its own
// Kirchhoff transform (at ui = uj K_ref / (share_ij / r_i + (1 - share_ij - c_ij) / r_j + c_ij)),
// K_ref the face's reference conductance (CoefficientFields::faces, which must be given),
// share_ij = share[a][i] the part of its reference resistance in node i's material and c_ij =
// contact[a][i] (0 where `contact` is empty) the part that is a contact resistance, and a node
// whose law has a varying capacity advances its enthalpy rather than its temperature:
//   u_i <- temperature(enthalpy(u_i) + dt/C_ref * (flow + sources)),
// which conserves C_ref h summed over the nodes to rounding (the flows between nodes cancel).
struct TemperatureDependence {
  std::vector<TemperatureLaw> laws;
  std::vector<std::int32_t> law;                    // per node; -1: constant properties
  std::array<std::vector<double>, 3> share;         // per axis and face, as `faces`
  // Per axis and face, as `share`: the part of the reference resistance that is a contact
  // between the two materials, constant in temperature; empty where the case has none.
  std::array<std::vector<double>, 3> contact;

  // r_i at temperature u (1 for a node of constant properties).
  double conductivity_ratio(std::int64_t node, double u) const {
    const std::int32_t l = law[static_cast<std::size_t>(node)];
    return l < 0 ? 1.0 : laws[static_cast<std::size_t>(l)].conductivity_ratio(u);
  }
  // K_ij of the face along `axis` from node i (its lower node) to j, of reference conductance
  // `reference`, at temperatures u_i and u_j: the reference itself between two nodes of
  // constant properties, the Kirchhoff mean between two of one law, else series_face.
  double face(int axis, std::int64_t i, std::int64_t j, double reference, double ui,
              double uj) const {
    const std::int32_t li = law[static_cast<std::size_t>(i)];
    const std::int32_t lj = law[static_cast<std::size_t>(j)];
    if (li < 0 && lj < 0) return reference;
    if (li == lj)
      return reference * laws[static_cast<std::size_t>(li)].mean_conductivity_ratio(ui, uj);
    const std::vector<double>& c = contact[static_cast<std::size_t>(axis)];
    const LawTables ti = li < 0 ? LawTables{} : laws[static_cast<std::size_t>(li)].tables();
    const LawTables tj = lj < 0 ? LawTables{} : laws[static_cast<std::size_t>(lj)].tables();
    return series_face(reference,
                       share[static_cast<std::size_t>(axis)][static_cast<std::size_t>(i)],
                       c.empty() ? 0.0 : c[static_cast<std::size_t>(i)], li < 0 ? nullptr : &ti,
                       lj < 0 ? nullptr : &tj, ui, uj);
  }
};

}  // namespace heatsim::kernels
