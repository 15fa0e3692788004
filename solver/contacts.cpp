#include "contacts.hpp"

#include <cmath>

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

}  // namespace heatsim::solver
