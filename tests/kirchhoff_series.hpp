// An independent reference for a face of k(T) parts in series (kernels::series_face): the
// steady flow along a line through a part of length a whose conductivity is k0 + slope (T - T0),
// a contact resistance R'' and a part of length b of constant conductivity kb, between the
// temperatures ui (the first part's end) and uj, found by bisection on the temperature at the
// first part's far end. Returns the face's conductivity in the operator's sense: the flux
// times the whole length (a + b) over ui - uj.
#pragma once

#include <cmath>

namespace heatsim_tests {

inline double series_face_reference(double a, double k0, double slope, double T0, double R,
                                    double b, double kb, double ui, double uj) {
  const auto phi = [&](double T) { return k0 * (T - T0) + 0.5 * slope * (T - T0) * (T - T0); };
  double lo = std::fmin(ui, uj), hi = std::fmax(ui, uj);
  double q = 0.0;
  for (int k = 0; k < 200; ++k) {
    const double ta = 0.5 * (lo + hi);
    q = (phi(ui) - phi(ta)) / a;  // through the first part
    const double tb = ta - q * R;
    const double qb = kb * (tb - uj) / b;  // through the second
    // q falls and qb rises with ta: the root where they meet.
    (qb - q > 0.0 ? hi : lo) = ta;
  }
  return q * (a + b) / (ui - uj);
}

}  // namespace heatsim_tests
