#include "level_ops.hpp"

#include <stdexcept>

namespace heatsim::kernels {

AxisTransfer axis_transfer(std::int64_t fine_n, bool periodic,
                           const std::vector<std::int64_t>& fine_index) {
  const std::int64_t nc = static_cast<std::int64_t>(fine_index.size());
  if (nc == 0 || fine_index[0] != 0 || (!periodic && fine_index[nc - 1] != fine_n - 1))
    throw std::invalid_argument(
        "level transfer: coarse nodes must start at 0 and, on a "
        "non-periodic axis, end on the last fine node");
  AxisTransfer t;
  t.from.resize(static_cast<std::size_t>(fine_n));
  for (std::int64_t I = 0; I < nc; ++I) {
    const std::int64_t at = fine_index[I];
    t.from[at][0] = {I, 0};
    // The next coarse node: one period on, past the last node of a periodic axis.
    const bool last = I + 1 == nc;
    if (last && !periodic) continue;
    const std::int64_t next = last ? fine_n : fine_index[I + 1];
    if (next <= at || next - at > 2)
      throw std::invalid_argument(
          "level transfer: coarse nodes must be one or two finer nodes apart");
    if (next - at == 2) {
      t.from[at + 1][0] = {I, +1};
      t.from[at + 1][1] = {last ? 0 : I + 1, -1};
    }
  }
  return t;
}

}  // namespace heatsim::kernels
