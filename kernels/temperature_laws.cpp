// The laws of temperature_laws.hpp.
#include "temperature_laws.hpp"

#include <algorithm>
#include <cmath>

namespace heatsim::kernels {

double piecewise_linear(const std::vector<std::array<double, 2>>& table, double x) {
  if (x <= table.front()[0]) return table.front()[1];
  if (x >= table.back()[0]) return table.back()[1];
  // First pair with x' > x; the one before it has x' <= x.
  std::size_t i = 1;
  while (table[i][0] <= x) ++i;
  const auto& a = table[i - 1];
  const auto& b = table[i];
  return a[1] + (b[1] - a[1]) * ((x - a[0]) / (b[0] - a[0]));
}

namespace {
double table_or_one(const std::vector<std::array<double, 2>>& table, double x) {
  return table.empty() ? 1.0 : piecewise_linear(table, x);
}
}  // namespace

double TemperatureLaw::conductivity_ratio(double T) const {
  return table_or_one(conductivity, T);
}

double TemperatureLaw::capacity_ratio(double T) const {
  double c = table_or_one(capacity, T);
  if (latent > 0.0 && T > solidus && T < liquidus) c += latent / (liquidus - solidus);
  return c;
}

double TemperatureLaw::liquid_fraction(double T) const {
  if (latent <= 0.0 || T <= solidus) return 0.0;
  if (T >= liquidus) return 1.0;
  return (T - solidus) / (liquidus - solidus);
}

void TemperatureLaw::prepare() {
  std::vector<double> at;
  for (const auto& p : capacity) at.push_back(p[0]);
  if (latent > 0.0) {
    at.push_back(solidus);
    at.push_back(liquidus);
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  pieces.clear();
  if (at.empty()) {
    // One capacity everywhere: h = c T.
    const double c = table_or_one(capacity, 0.0);
    pieces.push_back({0.0, 0.0, c, 0.0});
    return;
  }
  // Below the first break point the capacity is the table's first value (the melting range
  // starts at or above it): h = c T there.
  double h = table_or_one(capacity, at.front()) * at.front();
  for (std::size_t k = 0; k < at.size(); ++k) {
    EnthalpyPiece p;
    p.t = at[k];
    p.h = h;
    if (k + 1 < at.size()) {
      const double d = at[k + 1] - at[k];
      // The melting range's extra capacity is constant over a piece (its ends are break points).
      const double mid = 0.5 * (at[k] + at[k + 1]);
      p.c = table_or_one(capacity, at[k]) + (capacity_ratio(mid) - table_or_one(capacity, mid));
      p.slope = (table_or_one(capacity, at[k + 1]) - table_or_one(capacity, at[k])) / d;
      h += p.c * d + 0.5 * p.slope * d * d;
    } else {
      p.c = table_or_one(capacity, at[k]);  // beyond the last break point: constant
      p.slope = 0.0;
    }
    pieces.push_back(p);
  }
}

double TemperatureLaw::enthalpy(double T) const {
  const EnthalpyPiece& first = pieces.front();
  if (pieces.size() == 1 && first.slope == 0.0 && first.h == first.c * first.t)
    return first.c * T;
  if (T <= first.t) return table_or_one(capacity, first.t) * T;
  std::size_t k = pieces.size() - 1;
  while (pieces[k].t > T) --k;
  const EnthalpyPiece& p = pieces[k];
  const double d = T - p.t;
  return p.h + p.c * d + 0.5 * p.slope * d * d;
}

double TemperatureLaw::temperature(double h) const {
  const EnthalpyPiece& first = pieces.front();
  if (pieces.size() == 1 && first.slope == 0.0 && first.h == first.c * first.t)
    return h / first.c;
  if (h <= first.h) return h / table_or_one(capacity, first.t);
  std::size_t k = pieces.size() - 1;
  while (pieces[k].h > h) --k;
  const EnthalpyPiece& p = pieces[k];
  const double dh = h - p.h;
  if (p.slope == 0.0) return p.t + dh / p.c;
  // The root of slope/2 d^2 + c d - dh = 0 near 0, in the form without cancellation.
  const double disc = std::max(p.c * p.c + 2.0 * p.slope * dh, 0.0);
  return p.t + 2.0 * dh / (p.c + std::sqrt(disc));
}

std::array<double, 2> TemperatureLaw::largest_conductivity() const {
  if (conductivity.empty()) return {0.0, 1.0};
  std::array<double, 2> best = conductivity.front();
  for (const auto& p : conductivity)
    if (p[1] > best[1]) best = p;
  return best;
}

std::array<double, 2> TemperatureLaw::smallest_capacity() const {
  if (capacity.empty()) return {0.0, 1.0};
  std::array<double, 2> best = capacity.front();
  for (const auto& p : capacity)
    if (p[1] < best[1]) best = p;
  return best;
}

}  // namespace heatsim::kernels
