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

// The face conductance K with a contact R'' in series over a segment of length h: h / (h / K
// + R''); K itself, bit for bit, when R'' is 0.
inline double with_contact(double K, double h, double R) {
  if (R == 0.0) return K;
  if (!(K > 0.0)) return K;  // a face through a void conducts nothing either way
  return h / (h / K + R);
}

}  // namespace heatsim::solver
