#include "decomposed_implicit.hpp"

#include <utility>

#include "comm.hpp"

namespace heatsim::solver::parallel {

DecomposedImplicitBackend::DecomposedImplicitBackend(std::unique_ptr<kernels::Backend> implicit,
                                                     const DecomposedLevelOps& ops)
    : implicit_(std::move(implicit)), ops_(ops) {}

void DecomposedImplicitBackend::download_owned(std::vector<double>& values) {
  std::vector<double> field;
  implicit_->download(field);
  values = extract_box(field, decomposition().global_n(), decomposition().owned());
}

void DecomposedImplicitBackend::upload_owned(const std::vector<double>& values) {
  const Decomposition& d = decomposition();
  std::vector<std::int64_t> counts;
  std::vector<Box> boxes;
  for (int r = 0; r < d.ranks(); ++r) {
    boxes.push_back(d.owned(r));
    counts.push_back(boxes.back().points());
  }
  const std::array<std::int64_t, 3>& n = d.global_n();
  std::vector<double> field(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  insert_boxes(field, n, boxes, gather_all(values, counts));
  implicit_->upload(field);
}

std::string DecomposedImplicitBackend::describe() const {
  const Decomposition& d = decomposition();
  const auto& p = d.procs();
  const int split = ops_.split_levels();
  const std::string ranks = std::to_string(d.ranks()) + " ranks as " + std::to_string(p[0]) +
                            " x " + std::to_string(p[1]) + " x " + std::to_string(p[2]);
  if (ops_.gathered_whole())
    return ranks + ": the multigrid whole on rank 0, on " + implicit_->name() +
           "'s level operations (the other ranks wait)";
  return ranks + ": the multigrid's " +
         (split == 1 ? std::string("finest level") : std::to_string(split) + " finest levels") +
         " split (one layer exchanged), the levels below on rank 0, on the CPU";
}

}  // namespace heatsim::solver::parallel
