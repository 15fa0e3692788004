// Nodes grouped by their coefficients (node_classes.hpp).
#include "node_classes.hpp"

#include <algorithm>
#include <cstring>

namespace heatsim::kernels {
namespace {

// A node's coefficients as one key, compared bit for bit (so -0 and +0 differ, which only
// splits a class in two).
struct Key {
  double v[2 + kMaxSourceFields] = {};
  bool operator==(const Key& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};

}  // namespace

std::optional<NodeClasses> find_node_classes(const CoefficientFields& c, std::int64_t points,
                                             int max_classes) {
  const std::size_t n = static_cast<std::size_t>(points);
  max_classes = std::min(max_classes, 256);
  if (!c.transfer.empty() || !c.radiation.empty() || c.temperature ||
      c.conductivity.size() != n || c.capacity.size() != n ||
      c.sources.size() > static_cast<std::size_t>(kMaxSourceFields))
    return std::nullopt;
  for (const auto& s : c.sources)
    if (s.density.size() != n) return std::nullopt;

  const int sources = static_cast<int>(c.sources.size());
  const auto key_of = [&](std::size_t i) {
    Key k;
    k.v[0] = c.conductivity[i];
    k.v[1] = c.capacity[i];
    for (int s = 0; s < sources; ++s) k.v[2 + s] = c.sources[static_cast<std::size_t>(s)].density[i];
    return k;
  };
  NodeClasses out;
  out.id.resize(n);
  std::vector<Key> keys;
  int last = -1;  // the previous node's class: neighbours along x nearly always share one
  for (std::size_t i = 0; i < n; ++i) {
    const Key k = key_of(i);
    if (last < 0 || !(keys[static_cast<std::size_t>(last)] == k)) {
      last = -1;
      for (std::size_t j = 0; j < keys.size(); ++j)
        if (keys[j] == k) {
          last = static_cast<int>(j);
          break;
        }
      if (last < 0) {
        if (static_cast<int>(keys.size()) == max_classes) return std::nullopt;
        keys.push_back(k);
        last = static_cast<int>(keys.size()) - 1;
      }
    }
    out.id[i] = static_cast<std::uint8_t>(last);
  }
  for (const Key& k : keys) {
    out.conductivity.push_back(k.v[0]);
    out.capacity.push_back(k.v[1]);
    std::array<double, kMaxSourceFields> q{};
    for (int s = 0; s < sources; ++s) q[static_cast<std::size_t>(s)] = k.v[2 + s];
    out.source.push_back(q);
  }
  return out;
}

}  // namespace heatsim::kernels
