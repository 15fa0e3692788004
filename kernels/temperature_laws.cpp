// The laws of temperature_laws.hpp.
#include "temperature_laws.hpp"

#include <algorithm>
#include <cmath>

namespace heatsim::kernels {

double piecewise_linear(const std::vector<std::array<double, 2>>& table, double x) {
  return table_at(table.front().data(), static_cast<int>(table.size()), x);
}

static_assert(sizeof(std::array<double, 2>) == 2 * sizeof(double),
              "a table's pairs are read as flat doubles");

namespace {
double table_or_one(const std::vector<std::array<double, 2>>& table, double x) {
  return table.empty() ? 1.0 : piecewise_linear(table, x);
}
}  // namespace

LawTables TemperatureLaw::tables() const {
  LawTables l;
  // std::array<double, 2> is two contiguous doubles: a vector of them is the flat pairs.
  l.conductivity = conductivity.empty() ? nullptr : conductivity.front().data();
  l.conductivity_pairs = static_cast<int>(conductivity.size());
  l.capacity = capacity.empty() ? nullptr : capacity.front().data();
  l.capacity_pairs = static_cast<int>(capacity.size());
  l.pieces = pieces.data();
  l.piece_count = static_cast<int>(pieces.size());
  l.solidus = solidus;
  l.liquidus = liquidus;
  l.latent = latent;
  return l;
}

double TemperatureLaw::conductivity_ratio(double T) const {
  return law_conductivity(tables(), T);
}

double TemperatureLaw::mean_conductivity_ratio(double Ti, double Tj) const {
  return law_mean_conductivity(tables(), Ti, Tj);
}

double TemperatureLaw::capacity_ratio(double T) const { return law_capacity(tables(), T); }

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

double TemperatureLaw::enthalpy(double T) const { return law_enthalpy(tables(), T); }

double TemperatureLaw::temperature(double h) const { return law_temperature(tables(), h); }

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
