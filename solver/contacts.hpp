// Thermal contact resistances between materials (Case::contacts) as the faces' conductances
// take them. A face's conductance K (W/(m K)) makes the flow per unit area K (u_i - u_j) / h
// over the segment of length h between its nodes, so its resistance per unit area is h / K;
// a contact R'' on the way adds in series: h / K' = h / K + R''. It enters where a face's
// conductance is formed from the materials (the nodes' harmonic mean in materials.cpp, the
// lines below the grid in subgrid.cpp), so that every step, solve and report that reads the
// faces sees it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "case.hpp"

namespace heatsim::solver {

// R'' between every two materials, by material index (Case::materials); 0 where no contact
// is given, for a material with itself, and for a void or an unknown id.
class ContactTable {
 public:
  ContactTable() = default;
  // Throws std::invalid_argument ("contacts[1].between[0]: unknown material 'cu'") for a name
  // not among the materials, a material paired with itself, a pair given twice or a
  // resistance that is negative or not a number: what io/ reports with lines beforehand.
  explicit ContactTable(const Case& c);

  // Whether some pair has R'' > 0 (a contact of 0 changes nothing and is not applied).
  bool any() const { return any_; }
  double resistance(std::int32_t a, std::int32_t b) const {
    if (a < 0 || b < 0 || a >= count_ || b >= count_) return 0.0;
    return r_[static_cast<std::size_t>(a) * static_cast<std::size_t>(count_) +
              static_cast<std::size_t>(b)];
  }

 private:
  std::int32_t count_ = 0;
  std::vector<double> r_;
  bool any_ = false;
};

// A contact on a curved interface (a ball's surface, a `where` shape's): across an interface
// of unit normal n the temperature jumps by q_n R'' for the normal flux q_n, while a link along
// axis a carries q_n |n_a| per unit area of its face and sees the whole jump, so on that link
// the contact is R'' / |n_a|, a share |n_a| of its conductance. Summed over the staircase of
// faces the surface crosses (of projected areas |n_a| dS per axis) the conductance is
// sum_a n_a^2 dS / R'' = dS / R'': the surface's own. An interface along the axes (a box's
// bound, a map's node faces) has share 1, the contact whole, bit for bit.
// The least share taken (a surface almost along the link: it then conducts next to nothing
// across the contact, but stays finite and positive).
constexpr double kLeastContactShare = 1e-3;

// The share of a link along `axis` through an interface of normal `n` (any length, `dims`
// components): |n_axis| / |n|, at least kLeastContactShare; 1 where n is 0.
double contact_share(const double* n, int dims, int axis);

// A ball's share at point x (its surface there): the normal radial from the centre.
double ball_contact_share(const ShapeSpec& ball, int dims, const double* x, int axis);

// Where the segment from x along `axis` over length h crosses the ball's surface: the crossing
// nearest the segment's middle, or the middle where the segment's line misses the surface or
// crosses it only outside the segment.
double ball_crossing(const ShapeSpec& ball, int dims, const double* x, int axis, double h);

// The share at the surface of a shape known only by its indicator (a `where` formula:
// inside(x) for a point x of 3 coordinates), crossed by the line through x along `axis` between
// coordinates `from` and `to`, one side inside and the other not: the crossing is found by
// bisection, and the normal there is the indicator's first moment over a ball of radius
// `radius` around it (the offsets of the points inside, summed over a lattice of radius / 8,
// point outward the other way). Exact for a plane along the axes, radial for a circle or
// sphere by symmetry; 1 where the moment vanishes (a feature thinner than the ball).
template <typename Inside>
double indicator_contact_share(Inside&& inside, int dims, const double* x, int axis, double from,
                               double to, double radius) {
  double y[3] = {x[0], x[1], x[2]};
  y[axis] = from;
  const bool in_from = inside(y);
  double lo = from, hi = to;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    y[axis] = mid;
    (inside(y) == in_from ? lo : hi) = mid;
  }
  y[axis] = 0.5 * (lo + hi);
  constexpr int kSteps = 8;
  const double step = radius / kSteps;
  double moment[3] = {0, 0, 0};
  const int reach[3] = {kSteps, dims > 1 ? kSteps : 0, dims > 2 ? kSteps : 0};
  for (int k2 = -reach[2]; k2 <= reach[2]; ++k2)
    for (int k1 = -reach[1]; k1 <= reach[1]; ++k1)
      for (int k0 = -reach[0]; k0 <= reach[0]; ++k0) {
        if (k0 * k0 + k1 * k1 + k2 * k2 > kSteps * kSteps) continue;
        const double d[3] = {k0 * step, k1 * step, k2 * step};
        const double p[3] = {y[0] + d[0], y[1] + d[1], y[2] + d[2]};
        if (!inside(p)) continue;
        for (int b = 0; b < 3; ++b) moment[b] += d[b];
      }
  return contact_share(moment, dims, axis);
}

// The face conductance K with a contact R'' in series over a segment of length h: h / (h / K
// + R''); K itself, bit for bit, when R'' is 0.
inline double with_contact(double K, double h, double R) {
  if (R == 0.0) return K;
  if (!(K > 0.0)) return K;  // a face through a void conducts nothing either way
  return h / (h / K + R);
}

}  // namespace heatsim::solver
