#include "contacts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace heatsim::solver {

ContactTable::ContactTable(const Case& c) : count_(static_cast<std::int32_t>(c.materials.size())) {
  r_.assign(static_cast<std::size_t>(count_) * static_cast<std::size_t>(count_), 0.0);
  std::vector<char> given(r_.size(), 0);
  for (std::size_t k = 0; k < c.contacts.size(); ++k) {
    const ContactSpec& contact = c.contacts[k];
    const std::string key = "contacts[" + std::to_string(k) + "]";
    std::int32_t m[2] = {-1, -1};
    for (int s = 0; s < 2; ++s) {
      for (std::int32_t i = 0; i < count_; ++i)
        if (c.materials[static_cast<std::size_t>(i)].name == contact.between[s]) m[s] = i;
      if (m[s] < 0)
        throw std::invalid_argument(key + ".between[" + std::to_string(s) +
                                    "]: unknown material '" + contact.between[s] + "'");
    }
    if (m[0] == m[1])
      throw std::invalid_argument(key + ".between: a contact lies between two materials, not '" +
                                  contact.between[0] + "' and itself");
    if (!(contact.resistance >= 0.0) || std::isinf(contact.resistance))
      throw std::invalid_argument(key + ".resistance: must be finite and >= 0 (m^2 K/W)");
    const std::size_t ab = static_cast<std::size_t>(m[0]) * static_cast<std::size_t>(count_) +
                           static_cast<std::size_t>(m[1]);
    const std::size_t ba = static_cast<std::size_t>(m[1]) * static_cast<std::size_t>(count_) +
                           static_cast<std::size_t>(m[0]);
    if (given[ab])
      throw std::invalid_argument(key + ".between: the pair '" + contact.between[0] + "', '" +
                                  contact.between[1] + "' is given twice");
    given[ab] = given[ba] = 1;
    r_[ab] = r_[ba] = contact.resistance;
    any_ = any_ || contact.resistance > 0.0;
  }
}

double contact_share(const double* n, int dims, int axis) {
  double n2 = 0.0;
  for (int b = 0; b < dims; ++b) n2 += n[b] * n[b];
  if (!(n2 > 0.0) || std::isinf(n2)) return 1.0;
  return std::max(std::abs(n[axis]) / std::sqrt(n2), kLeastContactShare);
}

double ball_contact_share(const ShapeSpec& ball, int dims, const double* x, int axis) {
  double n[3] = {0, 0, 0};
  for (int b = 0; b < dims; ++b) n[b] = x[b] - ball.center[b];
  return contact_share(n, dims, axis);
}

double ball_crossing(const ShapeSpec& ball, int dims, const double* x, int axis, double h) {
  const double x0 = x[axis], mid = x0 + 0.5 * h;
  const double r2 = ball.radius * ball.radius;
  double off2 = 0.0;
  for (int b = 0; b < dims; ++b)
    if (b != axis) off2 += (x[b] - ball.center[b]) * (x[b] - ball.center[b]);
  // Tangent to within rounding: no crossing, as subgrid.cpp's add_ball_crossings.
  const double d2 = r2 - off2;
  if (!(d2 > 16.0 * std::numeric_limits<double>::epsilon() * (r2 + off2))) return mid;
  double best = mid, gap = 2.0 * h;
  for (double t : {ball.center[axis] - std::sqrt(d2), ball.center[axis] + std::sqrt(d2)})
    if (t >= x0 && t <= x0 + h && std::abs(t - mid) < gap) {
      best = t;
      gap = std::abs(t - mid);
    }
  return best;
}

}  // namespace heatsim::solver
